/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A decoded, symbolized stack: what the decoder/symbolizer produces and the
 * aggregator and writers consume. Frames are callee first (ASGST order),
 * kernel frames first. All strings are owned elsewhere (a struct strtab, see
 * strtab.h, or the code map); writers only read them.
 */
#ifndef ASGST_TRACE_H
#define ASGST_TRACE_H

#include <stdint.h>
#include <sys/types.h>

#define TRACE_MAX_FRAMES	1024

enum frame_type {
	FRAME_UNKNOWN = 0,	/* the walk stopped here: pc + reason */
	FRAME_JAVA = 1,		/* ASGST_FRAME_JAVA */
	FRAME_JAVA_INLINED = 2,	/* ASGST_FRAME_JAVA_INLINED */
	FRAME_JAVA_NATIVE = 3,	/* ASGST_FRAME_JAVA_NATIVE */
	FRAME_NON_JAVA = 4,	/* ASGST_FRAME_NON_JAVA: C/C++/stub */
	FRAME_KERNEL = 5,	/* kernel pc, symbolized from kallsyms */
};

/* JSON "kind" of a stack */
enum trace_kind {
	TRACE_KIND_NATIVE = 0,	/* not a JVM, or a JVM we cannot decode */
	TRACE_KIND_JAVA = 1,	/* a Java thread (ASGST_JAVA_TRACE) */
	TRACE_KIND_JVM = 2,	/* a JVM-internal thread (GC, compiler, VM) */
};

struct frame {
	uint8_t type;		/* enum frame_type */
	int8_t comp_level;	/* Java: 0 interp, 1-3 C1, 4 C2, -1 unknown */
	uint16_t flags;		/* FRAME_F_* */
	int32_t bci;		/* Java: -1 unknown */
	int32_t line;		/* Java: -1 unknown */
	uint64_t pc;		/* native/kernel/unknown: the pc */
	uint64_t offset;	/* native: pc - module load bias (file offset) */
	const char *symbol;	/* native/kernel symbol, NULL when unknown */
	const char *module;	/* native: module path, NULL when unknown */
	const char *klass;	/* Java: dotted binary class name */
	const char *method;	/* Java: method name */
	const char *signature;	/* Java: JVM signature "(I)V" */
	const char *source;	/* Java: source file, NULL when unknown */
	const char *reason;	/* unknown: why the walk stopped */
};

/* frame.flags */
#define FRAME_F_JVM_CPP		(1u << 0)	/* native frame inside libjvm */
#define FRAME_F_STUB		(1u << 1)	/* a JVM stub / runtime blob */

struct trace {
	pid_t pid;		/* host pid */
	pid_t tid;		/* host tid */
	const char *comm;
	const char *thread;	/* Java thread name, else comm */
	uint8_t kind;		/* enum trace_kind */
	int32_t error;		/* 0 = none; else ASGST code (<0) */
	const char *error_name;	/* NULL when error == 0 */
	uint32_t nframes;
	struct frame *frames;	/* nframes entries, callee first */
};

const char *frame_type__name(enum frame_type t);	/* JSON "type" */
const char *trace_kind__name(enum trace_kind k);	/* JSON "kind" */

#endif /* ASGST_TRACE_H */
