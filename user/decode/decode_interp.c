// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Interpreted Java frames (the template interpreter).
 *
 * An interpreted frame is rbp-based (offsets in words from rbp, from the
 * VM constants of the code map): rbp[0] the caller's rbp, rbp[1] the return
 * pc, rbp[-1] the sender's sp as the caller left it (the "unextended" sp a
 * compiled caller's frame size counts from), rbp[-3] the Method*, rbp[-8]
 * the bcp (saved at calls). bci = bcp - (ConstMethod* + sizeof(ConstMethod)).
 *
 * The top frame's bcp is live in r13 (the slot is only written at calls),
 * and while a method is being entered (or an invoke is jumping to it) the
 * frame at rbp is still the caller's; rbx then holds the callee's Method*.
 */
#include <linux/types.h>
#include "decode/walk.h"

/* words over a compiled caller's frame a scan for its sender looks at */
#define INTERP_ENTRY_SCAN_WORDS	512

static int32_t slot(const struct walk *w, int32_t off, int32_t dflt)
{
	(void)w;
	return off == CM_ABSENT ? dflt : off;
}

/* read rbp[words] */
static bool fp_read(const struct walk *w, uint64_t fp, int32_t words,
		    uint64_t *out)
{
	return walk_read(w, fp + (uint64_t)((int64_t)words * 8), out);
}

/* the frame at fp looks like an interpreted frame: its Method* */
static const struct codemap_method *frame_method(const struct walk *w,
						 uint64_t fp, uint64_t *mp)
{
	uint64_t m;

	if (!fp_read(w, fp, slot(w, w->vm->if_method, -3), &m))
		return NULL;
	*mp = m;
	return codemap__method(w->cm, m);
}

/* move f to the sender of the interpreted frame at fp */
static bool interp_sender(struct walk *w, struct wframe *f, uint64_t fp,
			  uint64_t fallback_usp)
{
	uint64_t ret, saved, usp;
	const struct codemap_blob *b;
	enum pc_class c;

	if (!fp_read(w, fp, 0, &saved) || !fp_read(w, fp, 1, &ret))
		return walk_fail(w, ASGST_WINDOW_SHORT, f->pc,
				 "interpreted frame extends beyond the stack window");
	if (!walk_is_return_pc(w, ret))
		return walk_fail(w, ASGST_BAD_SENDER, f->pc,
				 "interpreted frame's return address is not code");
	c = walk_classify(w, ret, &b);
	if (c == PC_NMETHOD || c == PC_NATIVE_WRAPPER || c == PC_STUB) {
		/* a compiled caller's frame counts from its own sp */
		if (!fp_read(w, fp, slot(w, w->vm->if_sender_sp, -1), &usp))
			usp = fallback_usp;
		if (usp < fp + 16 || !walk_in(w, usp, 8)) {
			if (fallback_usp >= fp + 16 && walk_in(w, fallback_usp, 8))
				usp = fallback_usp;
			else
				return walk_fail(w, ASGST_BAD_SENDER, ret,
						 "interpreted frame's sender sp is implausible");
		}
	} else {
		usp = fp + 16;
	}
	if (saved <= fp && c == PC_INTERP)
		return walk_fail(w, ASGST_BAD_SENDER, ret,
				 "interpreted caller's rbp does not grow");
	f->pc = ret;
	f->fp = saved;
	f->sp = usp;
	return true;
}

/* the first candidate sp (at least min_sp) where a compiled frame of ret
 * checks out becomes the caller's */
static bool compiled_sender(struct walk *w, struct wframe *f, uint64_t ret,
			    const uint64_t *cand, int n, uint64_t min_sp)
{
	for (int i = 0; i < n; i++) {
		if (cand[i] < min_sp || !walk_in(w, cand[i], 8) ||
		    !walk_compiled_at(w, ret, cand[i]))
			continue;
		f->pc = ret;
		f->sp = cand[i];
		return true;
	}
	return false;
}

/*
 * remove_activation has popped the return pc into r13 (the return jumps
 * there) and set sp to the sender sp it read into rbx: the frame is gone,
 * its caller is the next frame (checked: a compiled caller's frame at rbx
 * or sp, an interpreted caller's frame at rbp).
 */
static bool interp_returning(struct walk *w, struct wframe *f)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	const struct codemap_blob *b;
	uint64_t ret = h->r13, cand[2] = { h->rbx, f->sp }, mp;

	if (!walk_is_return_pc(w, ret))
		return false;
	switch (walk_classify(w, ret, &b)) {
	case PC_NMETHOD:
		return compiled_sender(w, f, ret, cand, 2, f->sp);
	case PC_INTERP:
		if (f->fp <= f->sp || !frame_method(w, f->fp, &mp))
			return false;
		f->pc = ret;
		if (h->rbx > f->sp && h->rbx <= f->fp)
			f->sp = h->rbx;
		return true;
	default:
		return false;
	}
}

/*
 * The top frame is in the interpreter with rbp not (yet, or any more) at
 * a frame of its own: at a method's entry before enter (rbx not a known
 * Method*), or returning after leave, the return pc at sp[0] and the
 * sender sp in rbx (remove_activation) or r13 (the entry's sender sp).
 * Its method is not known here: the walk goes on at its caller, each
 * candidate sender sp taken only if the caller's frame checks out.
 */
static bool interp_left(struct walk *w, struct wframe *f)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	const struct codemap_blob *b;
	uint64_t ret, cand[3] = { h->rbx, h->r13, f->sp + 8 };

	if (!walk_read(w, f->sp, &ret) || !walk_is_return_pc(w, ret))
		return interp_returning(w, f);
	switch (walk_classify(w, ret, &b)) {
	case PC_NMETHOD:
		return compiled_sender(w, f, ret, cand, 3, f->sp + 8);
	case PC_INTERP:
	case PC_CALL_STUB:
		/* rbp is the caller's own: its frame walks by it */
		if (f->fp <= f->sp || !walk_in(w, f->fp, 16))
			return false;
		f->pc = ret;
		f->sp += 8;
		return true;
	default:
		return false;
	}
}

bool walk_interpreted(struct walk *w, struct wframe *f)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	const struct codemap_method *m = NULL, *rbx = NULL;
	const struct codemap_blob *cb;
	uint64_t fp = f->fp, mp = 0, bcp = 0, ret;
	int32_t bci = -1;
	bool framed;

	framed = fp >= f->sp && (m = frame_method(w, fp, &mp)) != NULL;
	if (f->top)
		rbx = codemap__method(w->cm, h->rbx);

	if (f->top && rbx && (!framed || mp != h->rbx)) {
		/* being entered: rbx's frame is not (fully) built yet */
		if (!walk_push_java(w, ASGST_FRAME_JAVA, 0, 0, h->rbx))
			return false;
		if (framed)
			goto frame;	/* rbp still holds the caller's frame */
		/*
		 * before enter, called by a c2i adapter: the return pc on top
		 * of the stack, the compiled caller's frame at r13. First: a
		 * compiled caller's rbp (-XX:+PreserveFramePointer) would
		 * pass for rbx's frame below.
		 */
		if (walk_read(w, f->sp, &ret) &&
		    walk_classify(w, ret, &cb) == PC_NMETHOD &&
		    walk_is_return_pc(w, ret) && h->r13 >= f->sp + 8 &&
		    walk_in(w, h->r13, 8) && walk_compiled_at(w, ret, h->r13)) {
			f->pc = ret;
			f->sp = h->r13;
			return true;
		}
		/* after enter, before the Method* slot: rbp is rbx's frame */
		if (fp > f->sp && walk_in(w, fp, 16) &&
		    fp_read(w, fp, 1, &ret) && walk_is_return_pc(w, ret))
			return interp_sender(w, f, fp, h->r13);
		/* before enter: the return pc on top of the stack */
		for (int i = 0; i < 2; i++) {
			if (walk_read(w, f->sp + (uint64_t)i * 8, &ret) &&
			    walk_is_return_pc(w, ret)) {
				uint64_t nsp = f->sp + (uint64_t)(i + 1) * 8;
				const struct codemap_blob *b;
				enum pc_class c = walk_classify(w, ret, &b);

				if ((c == PC_NMETHOD || c == PC_STUB ||
				     c == PC_NATIVE_WRAPPER) &&
				    h->r13 >= nsp && walk_in(w, h->r13, 8))
					nsp = h->r13;	/* sender sp */
				f->pc = ret;
				f->sp = nsp;
				return true;
			}
		}
		/*
		 * the entry has popped the return pc (into rax, not in the
		 * sample) and pushes the extra locals: the caller's frame
		 * starts at the sender sp in r13, its pc is not known; a gap
		 * frame stands for it and the walk goes on at the next frame
		 * up from there that checks out
		 */
		if (h->r13 >= f->sp && walk_in(w, h->r13, 8)) {
			if (!walk_push_native(w, 0))
				return false;
			if (walk_scan_sender(w, f, h->r13, INTERP_ENTRY_SCAN_WORDS))
				return true;
		}
		return walk_fail(w, ASGST_NOT_WALKABLE, f->pc,
				 "interpreter method entry: no return address found");
	}
	if (!framed && f->top && interp_left(w, f))
		return true;
	if (!framed && !f->top && w->deopt_frames && fp >= f->sp &&
	    walk_in(w, fp, 16)) {
		/* pushed by a deoptimization blob, not filled in yet: its
		 * method is not known, the frame links are */
		if (!walk_push_native(w, f->pc))
			return false;
		return interp_sender(w, f, fp, 0);
	}
	if (!framed) {
		if (!walk_in(w, fp, 8) || fp < f->sp)
			return walk_fail(w, ASGST_WINDOW_SHORT, f->pc,
					 "interpreted frame's rbp is outside the stack window");
		return walk_fail(w, ASGST_UNKNOWN_METHOD, f->pc,
				 "interpreted frame's Method* is not in the code map");
	}
	if (f->top)
		bci = walk_bcp_to_bci(w, m, h->r13);
	if (bci < 0 && fp_read(w, fp, slot(w, w->vm->if_bcp, -8), &bcp))
		bci = walk_bcp_to_bci(w, m, bcp);
	if (!walk_push_java(w, ASGST_FRAME_JAVA, 0, bci, mp))
		return false;
	return interp_sender(w, f, fp, 0);

frame:
	/* the caller's frame at rbp, its bcp saved at the invoke */
	if (fp_read(w, fp, slot(w, w->vm->if_bcp, -8), &bcp))
		bci = walk_bcp_to_bci(w, m, bcp);
	if (!walk_push_java(w, ASGST_FRAME_JAVA, 0, bci, mp))
		return false;
	return interp_sender(w, f, fp, 0);
}
