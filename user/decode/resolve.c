// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ASGST frames -> struct frames. Java frames (Method* ids) get their class,
 * name, signature, source file and line from the code map; non-Java frames
 * in the code cache get the stub's name, the others a native symbol from
 * the symbolizer. Strings point into the code map or the symbolizer's
 * strtab, as trace.h allows. The walk's per-frame ASGST_FF_* crossing
 * kinds become FRAME_F_DOWNCALL_* / FRAME_F_UPCALL_*; an FFM downcall's
 * JAVA_NATIVE frame is its stub (the ASGST method field holds its pc).
 */
#include <linux/types.h>
#include <string.h>

#include "jvm/codemap.h"
#include "decode/decode.h"
#include "symbols/symbolize.h"
#include "trace.h"

static void frame_init(struct frame *f, uint8_t type)
{
	memset(f, 0, sizeof(*f));
	f->type = type;
	f->comp_level = -1;
	f->bci = -1;
	f->line = -1;
}

static void resolve_java(const struct codemap *cm, const ASGST_JavaFrame *jf,
			 struct frame *f)
{
	const struct codemap_method *m = cm ? codemap__method(cm, jf->method) :
					      NULL;

	frame_init(f, jf->type);
	f->comp_level = jf->comp_level;
	f->bci = jf->bci == ASGST_BCI_UNKNOWN ? -1 : jf->bci;
	f->pc = jf->method;	/* the Method*, for frames the map lacks */
	if (!m)
		return;
	f->klass = m->klass;
	f->method = m->name;
	f->signature = m->signature;
	f->source = m->source && *m->source ? m->source : NULL;
	if (f->bci >= 0)
		f->line = codemap_method__line(m, f->bci);
	/* the boundary between a virtual thread and its carrier */
	if (f->type == FRAME_JAVA_NATIVE && !strcmp(m->name, "enterSpecial") &&
	    !strcmp(m->klass, "jdk.internal.vm.Continuation"))
		f->flags |= FRAME_F_VTHREAD_ENTRY;
}

/* an FFM downcall: the nep_invoker_blob stub is the JAVA_NATIVE frame */
static void resolve_downcall_stub(const struct codemap *cm, uint64_t pc,
				  struct frame *f)
{
	const struct codemap_blob *b = cm ? codemap__find(cm, pc, 0) : NULL;

	frame_init(f, FRAME_JAVA_NATIVE);
	f->pc = pc;
	f->offset = pc;
	f->symbol = b && b->type == CODEMAP_BLOB_STUB && b->name ? b->name :
							       "nep_invoker_blob";
}

/* ASGST_FF_* -> FRAME_F_* */
static uint16_t crossing_flags(uint16_t ff)
{
	uint16_t fl = 0;

	if (ff & ASGST_FF_DOWNCALL_JNI)
		fl |= FRAME_F_DOWNCALL_JNI;
	if (ff & ASGST_FF_DOWNCALL_FFM)
		fl |= FRAME_F_DOWNCALL_FFM;
	if ((ff & ASGST_FF_DOWNCALL_FFM) && (ff & ASGST_FF_DOWNCALL_CRIT))
		fl |= FRAME_F_DOWNCALL_CRIT;
	if (ff & ASGST_FF_UPCALL_JNI)
		fl |= FRAME_F_UPCALL_JNI;
	if (ff & ASGST_FF_UPCALL_FFM)
		fl |= FRAME_F_UPCALL_FFM;
	if (ff & ASGST_FF_FROZEN)
		fl |= FRAME_F_FROZEN;
	return fl;
}

static void resolve_native(struct symbolizer *sz, const struct codemap *cm,
			   pid_t pid, uint64_t pc, struct frame *f)
{
	const struct cm_vm_consts *vm = cm ? codemap__vm(cm) : NULL;
	const struct codemap_blob *b;

	frame_init(f, FRAME_NON_JAVA);
	f->pc = pc;
	if (!pc) {
		f->symbol = "[native frames without frame pointers]";
		return;
	}
	if (vm && vm->cont_return_barrier && pc == vm->cont_return_barrier) {
		/* virtual-thread frames frozen in a heap chunk (decode_cont.c) */
		f->symbol = "cont_returnBarrier";
		f->flags |= FRAME_F_STUB | FRAME_F_FROZEN_GAP;
		f->offset = pc;
		return;
	}
	if (vm && vm->code_low && pc >= vm->code_low && pc < vm->code_high) {
		if (vm->interp_begin && pc >= vm->interp_begin &&
		    pc < vm->interp_end) {
			f->symbol = "Interpreter";
		} else if (pc == vm->call_stub_return) {
			f->symbol = "call_stub";
		} else if ((b = codemap__find(cm, pc, 0)) &&
			   b->type == CODEMAP_BLOB_STUB && b->name) {
			f->symbol = b->name;
		}
		if (f->symbol) {
			f->flags |= FRAME_F_STUB;
			f->offset = pc;
			return;
		}
	}
	if (sz)
		symbolizer__native(sz, pid, pc, f);
}

uint32_t asgst_resolve(struct symbolizer *sz, const struct codemap *cm,
		       pid_t pid, const ASGST_CallFrame *in,
		       const uint16_t *in_flags, uint32_t n,
		       struct frame *out, uint32_t max)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n && k < max; i++) {
		uint16_t ff = in_flags ? in_flags[i] : 0;

		switch (in[i].type) {
		case ASGST_FRAME_JAVA_NATIVE:
			if (ff & ASGST_FF_DOWNCALL_FFM) {
				/* method holds the stub's pc */
				resolve_downcall_stub(cm, in[i].java_frame.method,
						      &out[k]);
				break;
			}
			/* fall through */
		case ASGST_FRAME_JAVA:
		case ASGST_FRAME_JAVA_INLINED:
			resolve_java(cm, &in[i].java_frame, &out[k]);
			break;
		case ASGST_FRAME_NON_JAVA:
			resolve_native(sz, cm, pid,
				       (uint64_t)(uintptr_t)in[i].non_java_frame.pc,
				       &out[k]);
			break;
		default:
			continue;
		}
		out[k++].flags |= crossing_flags(ff);
	}
	return k;
}
