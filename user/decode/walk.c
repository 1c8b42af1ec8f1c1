// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The decoder's walk primitives: what every frame stepper (decode_*.c)
 * builds on. Pushing ASGST frames, classifying a pc, telling a return pc,
 * and the sender searches more than one frame kind shares (a frame of
 * uncertain shape, a stub's frame, leaving an entry frame, resuming at an
 * anchor, an interpreted bcp's bci).
 *
 * The bottom layer of the decoder: it calls nothing in the steppers or
 * decode.c (scripts/check-decoder-layers.sh checks it).
 */
#include <linux/types.h>

#include "decode/walk.h"

/* ---- frames ---------------------------------------------------------------- */

bool walk_push_java(struct walk *w, uint8_t type, int8_t comp_level,
		    int32_t bci, uint64_t method)
{
	ASGST_JavaFrame *jf;

	if (!walk_room(w))
		return false;
	if (w->flags)
		w->flags[w->n] = 0;
	jf = &w->frames[w->n++].java_frame;
	jf->type = type;
	jf->comp_level = comp_level;
	jf->bci = bci < 0 || bci >= ASGST_BCI_UNKNOWN ? ASGST_BCI_UNKNOWN :
							(uint16_t)bci;
	jf->method = method;
	w->java_frames++;
	return true;
}

bool walk_push_native(struct walk *w, uint64_t pc)
{
	ASGST_NonJavaFrame *nf;

	if (!(w->options & ASGST_INCLUDE_NON_JAVA_FRAMES))
		return true;
	if (!walk_room(w))
		return false;
	if (w->flags)
		w->flags[w->n] = 0;
	nf = &w->frames[w->n++].non_java_frame;
	nf->type = ASGST_FRAME_NON_JAVA;
	nf->pc = (void *)(uintptr_t)pc;
	return true;
}

/* ---- classification -------------------------------------------------------- */

static enum pc_class classify(const struct walk *w, uint64_t pc,
			      const struct codemap_blob **blob);

enum pc_class walk_classify(const struct walk *w, uint64_t pc,
			    const struct codemap_blob **blob)
{
	struct walk *mw = (struct walk *)w;	/* the memo only */

	if (pc && pc == w->memo_pc) {
		*blob = w->memo_blob;
		return w->memo_class;
	}
	mw->memo_class = classify(w, pc, blob);
	mw->memo_pc = pc;
	mw->memo_blob = *blob;
	return w->memo_class;
}

static enum pc_class classify(const struct walk *w, uint64_t pc,
			      const struct codemap_blob **blob)
{
	const struct cm_vm_consts *vm = w->vm;
	const struct codemap_blob *b;

	*blob = NULL;
	if (!pc)
		return PC_NULL;
	if (vm->call_stub_return && pc == vm->call_stub_return)
		return PC_CALL_STUB;
	if (vm->cont_return_barrier && pc == vm->cont_return_barrier)
		return PC_CONT_BARRIER;
	if (vm->interp_begin && pc >= vm->interp_begin && pc < vm->interp_end)
		return PC_INTERP;
	/* outside the code cache nothing of the JVM's code can be there */
	if (vm->code_low && vm->code_high &&
	    (pc < vm->code_low || pc >= vm->code_high))
		return PC_NATIVE;
	b = codemap__find(w->cm, pc, w->t);
	if (b) {
		*blob = b;
		if (b->type == CODEMAP_BLOB_CODE)
			return b->kind == CM_CODE_NATIVE ? PC_NATIVE_WRAPPER :
							    PC_NMETHOD;
		switch (b->kind) {
		case CM_STUB_INTERPRETER:
			return PC_INTERP;
		case CM_STUB_CALL_STUB:
			return PC_CALL_STUB;
		case CM_STUB_NEP_INVOKER:
			return PC_DOWNCALL_STUB;
		case CM_STUB_UPCALL:
			return PC_UPCALL_STUB;
		default:
			return PC_STUB;
		}
	}
	if (vm->code_low && vm->code_high)
		return PC_CODE_UNKNOWN;
	return PC_NATIVE;
}

bool walk_is_return_pc(const struct walk *w, uint64_t pc)
{
	const struct codemap_blob *b;
	const struct codemap_pcdesc *pd;

	switch (walk_classify(w, pc, &b)) {
	case PC_NMETHOD:
		/* a call's return address always has its own PcDesc */
		if (pc <= b->start)
			return false;
		if (!b->n_pcs)
			return true;
		pd = codemap_blob__pcdesc(b, pc);
		/*
		 * After every PcDesc: the stub section. A frame the JVM is
		 * deoptimizing lazily has its return address patched to its
		 * nmethod's deopt handler there; the frame is still whole
		 * (same size), only its bci is not known.
		 */
		return !pd || b->start + pd->pc_off == pc;
	case PC_NATIVE_WRAPPER:
	case PC_STUB:
	case PC_DOWNCALL_STUB:
	case PC_UPCALL_STUB:
		return b && pc > b->start;
	case PC_CONT_BARRIER:
		return true;	/* returned into by a thawed frame */
	case PC_INTERP:
	case PC_CALL_STUB:
		return true;
	default:
		return false;
	}
}

/* ---- senders shared by frame kinds ----------------------------------------- */

/*
 * try: whole frame built; rbp pushed only; nothing pushed. strict: the
 * frame's code has not touched rbp yet (a prologue), so a saved rbp must
 * equal the live one.
 */
bool walk_guess_sender(struct walk *w, struct wframe *f, int32_t frame_size,
		       bool try_full, bool strict)
{
	uint64_t ret, saved;

	if (try_full && frame_size >= 2 &&
	    walk_read(w, f->sp + (uint64_t)(frame_size - 1) * 8, &ret) &&
	    walk_read(w, f->sp + (uint64_t)(frame_size - 2) * 8, &saved) &&
	    (!strict || saved == f->fp) && walk_is_return_pc(w, ret)) {
		f->sp += (uint64_t)frame_size * 8;
		f->fp = saved;
		f->pc = ret;
		return true;
	}
	/* after push rbp: sp[0] is the caller's rbp */
	if (walk_read(w, f->sp, &saved) && walk_read(w, f->sp + 8, &ret) &&
	    (!strict || saved == f->fp) && walk_is_return_pc(w, ret)) {
		f->sp += 16;
		f->fp = saved;
		f->pc = ret;
		return true;
	}
	/* at the entry, or after pop rbp / at ret: sp[0] is the return pc */
	if (walk_read(w, f->sp, &ret) && walk_is_return_pc(w, ret)) {
		f->sp += 8;
		f->pc = ret;
		return true;
	}
	return false;
}

bool walk_stub_sender(struct walk *w, struct wframe *f)
{
	const struct codemap_blob *b = f->blob;
	int32_t fs = b->frame_size;
	uint64_t ret, saved;
	bool complete = !f->top || b->frame_complete < 0 ||
			f->pc >= b->start + (uint64_t)b->frame_complete;

	if (fs > 0 && complete) {
		if (walk_guess_sender(w, f, fs, true, false))
			return true;
	}
	/* stubs that keep rbp as a frame pointer (enter/leave) */
	if (f->fp > f->sp && walk_read(w, f->fp, &saved) &&
	    walk_read(w, f->fp + 8, &ret) && walk_is_return_pc(w, ret)) {
		f->sp = f->fp + 16;
		f->fp = saved;
		f->pc = ret;
		return true;
	}
	if (f->top && walk_guess_sender(w, f, fs, fs > 0, true))
		return true;
	return walk_fail(w, ASGST_NOT_WALKABLE, f->pc,
			 "stub frame: no return address found");
}

bool walk_resume_anchor(struct walk *w, struct wframe *f)
{
	uint64_t pc = w->resume_pc;

	if (!w->resume || w->resume_sp < f->sp)
		return false;
	if (!pc && !walk_read(w, w->resume_sp - 8, &pc))
		return false;
	w->resume = false;
	/* the native frames in between could not be walked: say so */
	if (!walk_push_native(w, 0))
		return false;
	f->pc = pc;
	f->sp = w->resume_sp;
	f->fp = w->resume_fp;
	f->top = false;
	return true;
}

bool walk_leave_entry(struct walk *w, struct wframe *f, uint64_t fp,
		      bool native_only, const char *reason)
{
	uint64_t ret, saved;

	if (w->bottom && !(w->options & ASGST_INCLUDE_NON_JAVA_FRAMES)) {
		w->done = true;
		return true;
	}
	/* rbp-based: continue into the C code that called it */
	if (fp >= f->sp && walk_read(w, fp, &saved) &&
	    walk_read(w, fp + 8, &ret) && ret) {
		const struct codemap_blob *b;
		enum pc_class c = walk_classify(w, ret, &b);

		if (native_only ? c == PC_NATIVE :
				  c != PC_CODE_UNKNOWN && c != PC_NULL) {
			f->pc = ret;
			f->sp = fp + 16;
			f->fp = saved;
			f->top = false;
			return true;
		}
	}
	if (walk_resume_anchor(w, f))
		return true;
	if (w->bottom) {
		w->done = true;
		return true;
	}
	return walk_fail(w, ASGST_WINDOW_SHORT, f->pc, reason);
}

/* ---- interpreted frames ---------------------------------------------------- */

/* bci of bcp in method m, -1 when implausible */
int32_t walk_bcp_to_bci(const struct walk *w, const struct codemap_method *m,
			uint64_t bcp)
{
	uint64_t base;

	if (!m || !m->const_method || w->vm->sizeof_const_method <= 0)
		return -1;
	base = m->const_method + (uint64_t)w->vm->sizeof_const_method;
	if (bcp < base || bcp - base >= ASGST_BCI_UNKNOWN)
		return -1;
	return (int32_t)(bcp - base);
}
