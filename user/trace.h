/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A decoded, symbolized stack: what the decoder/symbolizer produces and the
 * aggregator and writers consume. Frames are callee first (ASGST order),
 * kernel frames first. All strings are owned elsewhere (a struct strtab, see
 * strtab.h, or the code map); writers only read them.
 */
#ifndef ASGST_TRACE_H
#define ASGST_TRACE_H

#include <stdbool.h>
#include <stddef.h>
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
	FRAME_CLASS = 6,	/* alloc, lock: the allocated object's or the
				   monitor's class (klass), the leaf */
	FRAME_PYTHON = 7,	/* a CPython frame: method (co_qualname),
				   source (co_filename), line; pc the code
				   object's address */
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
	int32_t line;		/* Java, native (DWARF), Python: -1 unknown */
	uint64_t pc;		/* native/kernel/unknown: the pc */
	uint64_t code_pc;	/* compiled Java: the pc of its PcDesc in
				   the nmethod (stable per call site and
				   bci); 0 otherwise */
	uint64_t offset;	/* native: pc - module load bias (file offset) */
	const char *symbol;	/* native/kernel symbol, NULL when unknown */
	const char *module;	/* native: module path, NULL when unknown */
	const char *klass;	/* Java: dotted binary class name */
	const char *method;	/* Java: method name; Python: qualified name */
	const char *signature;	/* Java: JVM signature "(I)V" */
	const char *source;	/* Java: source file; native: the DWARF line
				   table's file path; Python: co_filename;
				   NULL when unknown */
	const char *reason;	/* unknown: why the walk stopped */
};

/* frame.flags */
#define FRAME_F_JVM_CPP		(1u << 0)	/* native frame inside libjvm */
#define FRAME_F_STUB		(1u << 1)	/* a JVM stub / runtime blob */
/* how Java called out (on the JAVA_NATIVE barrier frame) ... */
#define FRAME_F_DOWNCALL_JNI	(1u << 2)	/* JNI native-method wrapper */
#define FRAME_F_DOWNCALL_FFM	(1u << 3)	/* FFM nep_invoker_blob */
#define FRAME_F_DOWNCALL_CRIT	(1u << 4)	/* FFM, Linker.Option.critical */
/* ... and how C called back in (call_stub / upcall_stub frame) */
#define FRAME_F_UPCALL_JNI	(1u << 5)	/* JavaCalls via the call stub */
#define FRAME_F_UPCALL_FFM	(1u << 6)	/* FFM upcall_stub */
/* Continuation.enterSpecial: a virtual thread's frames end here */
#define FRAME_F_VTHREAD_ENTRY	(1u << 7)
/* cont_returnBarrier: the virtual thread's older frames are frozen in a
 * heap stack chunk, not on the carrier's stack */
#define FRAME_F_FROZEN_GAP	(1u << 8)
/* a virtual thread's frame decoded from its heap stack chunk */
#define FRAME_F_FROZEN		(1u << 9)
/* the FRAME_CLASS leaf of a lock event: the monitor's class (else the
 * allocated object's) */
#define FRAME_F_MONITOR		(1u << 10)
/* a native function the compiler inlined into the next frame (from the
 * module's DWARF): it has no pc of its own; pc and offset are those of
 * the frame it is inlined into */
#define FRAME_F_INLINED		(1u << 11)
#define FRAME_F_DOWNCALL_MASK	(FRAME_F_DOWNCALL_JNI | FRAME_F_DOWNCALL_FFM | \
				 FRAME_F_DOWNCALL_CRIT)
#define FRAME_F_UPCALL_MASK	(FRAME_F_UPCALL_JNI | FRAME_F_UPCALL_FFM)

/* JSON "state" of a Java thread at the sample (JavaThreadState folded) */
enum trace_state {
	TRACE_STATE_UNKNOWN = 0,	/* not a Java trace, or not read */
	TRACE_STATE_IN_JAVA,
	TRACE_STATE_IN_NATIVE,
	TRACE_STATE_IN_VM,
	TRACE_STATE_BLOCKED,
};

/* what a stack was recorded for */
enum trace_event {
	TRACE_EV_CPU = 0,	/* cpu-clock sample: weight = count */
	TRACE_EV_OFFCPU = 1,	/* left the CPU: weight = offcpu_ns */
	TRACE_EV_ALLOC = 2,	/* a JVM's sampled allocation: alloc_bytes,
				   alloc_objects */
	TRACE_EV_LOCK = 3,	/* a contended monitor entered: lock_ns */
};

/* trace.flags */
#define TRACE_F_VTHREAD		(1u << 0)	/* a virtual thread was mounted */
#define TRACE_F_PINNED		(1u << 1)	/* off-CPU with a virtual thread
						   mounted: its carrier blocked */
#define TRACE_F_PREEMPTED	(1u << 2)	/* off-CPU: preempted, runnable */

struct trace {
	pid_t pid;		/* host pid */
	pid_t tid;		/* host tid */
	const char *comm;
	const char *thread;	/* Java thread name, else comm */
	uint8_t kind;		/* enum trace_kind */
	int32_t error;		/* 0 = none; else ASGST code (<0) */
	const char *error_name;	/* NULL when error == 0 */
	uint8_t state;		/* enum trace_state */
	uint8_t event;		/* enum trace_event */
	uint16_t flags;		/* TRACE_F_* */
	int32_t jvmti_state;	/* ASGST trace state bits, -1 non-Java */
	/* the process's container (64 hex) and Kubernetes pod uid, from its
	 * cgroup path (profile/container.h); NULL when it names none */
	const char *container_id;
	const char *pod_uid;
	/* what a fleet's store calls the process (profile/service.h) and
	 * its executable's name; NULL when not known (a replay) */
	const char *service;
	const char *process;
	/* alloc: the allocated class, lock: the monitor's (dotted, as the
	 * FRAME_CLASS leaf names it); NULL for cpu and off-CPU */
	const char *ev_class;
	uint32_t nframes;
	struct frame *frames;	/* nframes entries, callee first */
};

const char *frame_type__name(enum frame_type t);	/* JSON "type" */
const char *trace_kind__name(enum trace_kind k);	/* JSON "kind" */
const char *trace_state__name(enum trace_state s);	/* JSON "state" */
/* "jni", "ffm", "ffm_critical" / "jni", "ffm"; NULL when none */
const char *frame_downcall__name(uint16_t flags);
const char *frame_upcall__name(uint16_t flags);

/*
 * The name a frame has in the collapsed output (docs/formats.md), written
 * NUL-terminated into buf (truncated to size - 1). suffix adds the _[k],
 * _[j], _[i] type suffixes. Characters that break the collapsed format are
 * replaced. Returns the length written.
 */
size_t frame__display_name(const struct frame *f, char *buf, size_t size,
			   bool suffix);
/* the same for the root element of a collapsed line: the process name
 * (comm, else the thread name); size must not be 0 */
size_t trace__display_comm(const struct trace *t, char *buf, size_t size);

#endif /* ASGST_TRACE_H */
