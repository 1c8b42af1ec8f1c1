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
#include <stdlib.h>
#include <string.h>

#include "jvm/codemap.h"
#include "decode/decode.h"
#include "symbols/symbolize.h"
#include "trace.h"
#include "util/strtab.h"

static void frame_init(struct frame *f, uint8_t type)
{
	/* stores, not a memset call: this runs for every frame */
	*f = (struct frame){ .type = type, .comp_level = -1, .bci = -1,
			     .line = -1 };
}

/*
 * A Java frame's name: the same (method, bci, kind, level) come back
 * sample after sample, each time a look-up of the method, a search of its
 * line table and the frame filled in. Kept by the code map's stamp of its
 * methods, for methods that are the same at any decode time; a new stamp
 * (methods added, pruned, another map) misses.
 */
#define RESOLVE_MEMO_SLOTS	1024

struct resolve_memo_ent {
	uint64_t stamp, method;
	int32_t bci;
	uint8_t type;
	int8_t level;
	bool interned;		/* f's strings are the strtab's own */
	struct frame f;
};

struct resolve_memo {
	struct resolve_memo_ent e[RESOLVE_MEMO_SLOTS];
};

struct resolve_memo *resolve_memo__new(void)
{
	return calloc(1, sizeof(struct resolve_memo));
}

void resolve_memo__free(struct resolve_memo *rm)
{
	free(rm);
}

/* f's strings as st's own: true, or false with f as it was */
static bool intern_java(struct strtab *st, struct frame *f)
{
	const char *k, *m, *g, *src = NULL;

	if (!st)
		return false;
	k = f->klass ? strtab__intern(st, f->klass) : NULL;
	m = f->method ? strtab__intern(st, f->method) : NULL;
	g = f->signature ? strtab__intern(st, f->signature) : NULL;
	if (f->source)
		src = strtab__intern(st, f->source);
	if ((f->klass && !k) || (f->method && !m) || (f->signature && !g) ||
	    (f->source && !src))
		return false;
	f->klass = k;
	f->method = m;
	f->signature = g;
	f->source = src;
	return true;
}

/* a Java frame named; true when its strings are st's own */
static bool resolve_java(const struct codemap *cm, const ASGST_JavaFrame *jf,
			 struct frame *f, struct resolve_memo *rm,
			 struct strtab *st)
{
	const struct codemap_method *m = NULL;
	struct resolve_memo_ent *e = NULL;
	uint64_t stamp = rm && cm ? codemap__methods_stamp(cm) : 0;
	bool timeless = false, interned;

	if (stamp) {
		uint64_t h = (jf->method ^ stamp << 40 ^
			      (uint64_t)(uint32_t)jf->bci << 3 ^
			      (uint64_t)jf->type << 1 ^
			      (uint64_t)(uint8_t)jf->comp_level << 20) *
			     0x9e3779b97f4a7c15ull;

		e = &rm->e[(h >> 40) & (RESOLVE_MEMO_SLOTS - 1)];
		if (e->stamp == stamp && e->method == jf->method &&
		    e->bci == jf->bci && e->type == jf->type &&
		    e->level == jf->comp_level) {
			*f = e->f;
			return e->interned;
		}
	}
	if (cm)
		m = codemap__method_timeless(cm, jf->method, &timeless);
	frame_init(f, jf->type);
	f->comp_level = jf->comp_level;
	f->bci = jf->bci == ASGST_BCI_UNKNOWN ? -1 : jf->bci;
	f->pc = jf->method;	/* the Method*, for frames the map lacks */
	if (!m)
		return st != NULL;	/* no strings */
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
	interned = intern_java(st, f);
	/* the stamp read again: looking the method up may have set it */
	if (e && timeless && stamp == codemap__methods_stamp(cm)) {
		e->stamp = stamp;
		e->method = jf->method;
		e->bci = jf->bci;
		e->type = jf->type;
		e->level = jf->comp_level;
		e->interned = interned;
		e->f = *f;
	}
	return interned;
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

/* call: pc is a return address, not where the thread was */
static void resolve_native(struct symbolizer *sz, const struct codemap *cm,
			   pid_t pid, uint64_t pc, bool call, struct frame *f)
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
	if (!sz)
		return;
	/*
	 * A return address is named by its call, the byte before it: a call
	 * of a function that does not return (exit's of
	 * __run_exit_handlers) can be its caller's last instruction, and
	 * the return address then lies past the caller's end.
	 */
	symbolizer__native(sz, pid, call ? pc - 1 : pc, f);
	/* the frame's own offset, where the lookup gave one (in a mapping,
	 * or a JIT map's pc); 0 is none */
	if (call && (f->offset || f->module || f->symbol))
		f->offset++;
}

uint32_t asgst_resolve(struct symbolizer *sz, const struct codemap *cm,
		       pid_t pid, const ASGST_CallFrame *in,
		       const uint16_t *in_flags, uint32_t n,
		       struct frame *out, uint32_t max,
		       struct resolve_memo *rm, struct strtab *st,
		       uint8_t *interned)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n && k < max; i++) {
		uint16_t ff = in_flags ? in_flags[i] : 0;
		bool own = false;

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
			own = resolve_java(cm, &in[i].java_frame, &out[k], rm,
					   st);
			break;
		case ASGST_FRAME_NON_JAVA:
			resolve_native(sz, cm, pid,
				       (uint64_t)(uintptr_t)in[i].non_java_frame.pc,
				       i > 0, &out[k]);
			break;
		default:
			continue;
		}
		if (interned)
			interned[k] = own;
		out[k++].flags |= crossing_flags(ff);
	}
	return k;
}
