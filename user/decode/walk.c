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

#include <stdlib.h>
#include <string.h>

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
	if (w->pcs)
		w->pcs[w->n] = w->java_pc;
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
	if (w->pcs)
		w->pcs[w->n] = 0;
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
	if (!w->cm)
		return PC_NATIVE;	/* not a JVM: native code only */
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

bool walk_is_leaf_return_pc(const struct walk *w, uint64_t pc)
{
	const struct codemap_blob *b;

	if (walk_is_return_pc(w, pc))
		return true;
	/* a leaf call (no safepoint, no debug info) returns anywhere */
	return walk_classify(w, pc, &b) == PC_NMETHOD && pc > b->start &&
	       pc < b->end;
}

/* ---- senders shared by frame kinds ----------------------------------------- */

static bool is_ret(const struct walk *w, uint64_t pc, bool leaf)
{
	return leaf ? walk_is_leaf_return_pc(w, pc) : walk_is_return_pc(w, pc);
}

/* frames a candidate sender's chain is checked over */
#define GUESS_CHECK_DEPTH	3
/* ... and when two shapes check out that far */
#define GUESS_TIE_DEPTH		6

/*
 * How far a candidate sender (pc ret at sp nsp, rbp fp) checks out, in
 * frames up to left: a compiled caller's own return pc is where its size
 * says, and so on; an interpreted caller's frame is at fp, up the stack,
 * with a Method* the map knows (then as good as any depth). Other callers
 * (stubs, C) add nothing, but with entry_ends the call stub (Java's entry
 * from C) ends the check as an interpreted frame does: a compiled method
 * called by Thread.run from the call stub then checks out in two frames.
 */
static int sender_depth(struct walk *w, uint64_t ret, uint64_t nsp,
			uint64_t fp, int left, bool entry_ends)
{
	const struct codemap_blob *b;
	int32_t off = w->vm->if_method == CM_ABSENT ? -3 : w->vm->if_method;
	uint64_t m, ret2, saved;

	if (left <= 0)
		return 0;
	switch (walk_classify(w, ret, &b)) {
	case PC_NMETHOD:
		if (!b || b->frame_size <= 0 ||
		    !walk_read(w, nsp + (uint64_t)(b->frame_size - 1) * 8, &ret2) ||
		    !walk_read(w, nsp + (uint64_t)(b->frame_size - 2) * 8, &saved) ||
		    !walk_is_return_pc(w, ret2))
			return 0;
		return 1 + sender_depth(w, ret2, nsp + (uint64_t)b->frame_size * 8,
					saved, left - 1, entry_ends);
	case PC_CALL_STUB:
		return entry_ends ? left : 0;
	case PC_INTERP:
		return fp >= nsp &&
		       walk_read(w, fp + (uint64_t)((int64_t)off * 8), &m) &&
		       codemap__method(w->cm, m) ? left : 0;
	default:
		return 0;
	}
}

/*
 * try: whole frame built; rbp pushed only; nothing pushed. strict: the
 * frame's code has not touched rbp yet (a prologue), so a saved rbp must
 * equal the live one. leaf: the frame may have been called by a leaf call.
 * Of the shapes whose slot holds a return pc the one whose sender checks
 * out furthest wins, the first on a tie: an epilogue after "add rsp"
 * leaves the frame's old return slot below sp, where a stale return pc of
 * an earlier, deeper frame may still lie.
 */
static bool guess_sender(struct walk *w, struct wframe *f, int32_t frame_size,
			 bool try_full, bool strict, bool leaf)
{
	uint64_t ret[3], saved[3], nsp[3];
	int best = -1, best_depth = -1;

	nsp[0] = f->sp + (uint64_t)frame_size * 8;
	nsp[1] = f->sp + 16;
	nsp[2] = f->sp + 8;
	for (int i = 0; i < 3; i++) {
		int d;

		if (i == 0 && (!try_full || frame_size < 2))
			continue;
		if (!walk_read(w, nsp[i] - 8, &ret[i]))
			continue;
		if (i == 2)
			saved[i] = f->fp;
		else if (!walk_read(w, nsp[i] - 16, &saved[i]) ||
			 (strict && saved[i] != f->fp))
			continue;
		if (!is_ret(w, ret[i], leaf))
			continue;
		if (best_depth >= GUESS_CHECK_DEPTH) {
			/*
			 * a shape checks out as far as looked already: another
			 * matters only when it returns into the same code (the
			 * same caller at two offsets, one an earlier call's
			 * stale return pc); then the one that checks out
			 * further wins, on a tie the first
			 */
			const struct codemap_blob *bi, *bb;

			walk_classify(w, ret[i], &bi);
			walk_classify(w, ret[best], &bb);
			if (!bi || bi != bb)
				continue;
			if (sender_depth(w, ret[i], nsp[i], saved[i],
					 GUESS_TIE_DEPTH, false) >
			    sender_depth(w, ret[best], nsp[best], saved[best],
					 GUESS_TIE_DEPTH, false))
				best = i;
			continue;
		}
		d = sender_depth(w, ret[i], nsp[i], saved[i],
				 GUESS_CHECK_DEPTH, false);
		if (d > best_depth) {
			best = i;
			best_depth = d;
		}
	}
	if (best < 0)
		return false;
	f->sp = nsp[best];
	f->fp = saved[best];
	f->pc = ret[best];
	return true;
}

bool walk_guess_sender(struct walk *w, struct wframe *f, int32_t frame_size,
		       bool try_full, bool strict)
{
	return guess_sender(w, f, frame_size, try_full, strict, false);
}

bool walk_spill_sender(struct walk *w, struct wframe *f, int32_t frame_size)
{
	uint64_t ret, saved, nsp;

	if (frame_size < 2)
		return false;
	for (uint32_t x = 8; x <= WALK_SPILL_MAX; x += 8) {
		nsp = f->sp + x + (uint64_t)frame_size * 8;
		if (!walk_read(w, nsp - 8, &ret) ||
		    !walk_read(w, nsp - 16, &saved))
			return false;
		if (!walk_is_return_pc(w, ret) ||
		    sender_depth(w, ret, nsp, saved, GUESS_CHECK_DEPTH, true) <
		    GUESS_CHECK_DEPTH)
			continue;
		f->sp = nsp;
		f->fp = saved;
		f->pc = ret;
		return true;
	}
	return false;
}

/*
 * sp[0] holds the return pc: a frameless stub at its entry or at ret. A
 * C1 caller may have pushed up to two stack arguments for the stub (the
 * Runtime1 stubs' calling convention): its frame starts after them, where
 * it checks out furthest.
 */
static bool ret_at_sp(struct walk *w, struct wframe *f)
{
	const struct codemap_blob *b;
	uint64_t ret, nsp;
	int best = 0, best_depth = -1;

	if (!walk_read(w, f->sp, &ret) || !walk_is_leaf_return_pc(w, ret))
		return false;
	nsp = f->sp + 8;
	if (walk_classify(w, ret, &b) == PC_NMETHOD) {
		for (int k = 0; k <= 2; k++) {
			int d = sender_depth(w, ret, nsp + (uint64_t)k * 8,
					     f->fp, GUESS_CHECK_DEPTH, false);

			if (d > best_depth) {
				best = k;
				best_depth = d;
			}
			if (d >= GUESS_CHECK_DEPTH)
				break;
		}
	}
	f->sp = nsp + (uint64_t)best * 8;
	f->pc = ret;
	return true;
}

/* words over a saved CPU state: 17 general registers, the FPU/SSE area
 * (512 bytes), AVX-512's vector registers (2 KiB) and the alignment */
#define ADAPTER_SCAN_WORDS	512
/* registers a StubRoutine or Runtime1 stub without a frame pushes over
 * its return pc, and stack arguments its caller pushed */
#define STUB_PUSHED_WORDS	8
/* ... and all 16 general registers, spill slots and a saved rbp */
#define STUB_SCAN_WORDS		32

bool walk_compiled_at(struct walk *w, uint64_t pc, uint64_t sp)
{
	const struct codemap_blob *b;
	uint64_t ret;

	if (walk_classify(w, pc, &b) != PC_NMETHOD || !b || b->frame_size <= 0)
		return false;
	return walk_read(w, sp + (uint64_t)(b->frame_size - 1) * 8, &ret) &&
	       walk_is_return_pc(w, ret);
}

/*
 * The i2c/c2i adapters at the top. A c2i adapter (compiled code calling a
 * method that runs interpreted) pops the return pc, keeps the caller's sp
 * in r13 (the interpreter's sender sp), extends the stack for the
 * interpreter's arguments and stores the return pc at the new sp[0]: the
 * compiled caller's frame then starts at r13, not above sp[0]. At the
 * adapter's entry r13 is anything: each candidate is taken only when the
 * caller's own frame checks out.
 */
static bool adapter_sender(struct walk *w, struct wframe *f)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	uint64_t ret;

	if (!walk_read(w, f->sp, &ret) || !walk_is_return_pc(w, ret))
		return false;
	if (h->r13 > f->sp + 8 && walk_in(w, h->r13, 8) &&
	    walk_compiled_at(w, ret, h->r13)) {
		f->sp = h->r13;
		f->pc = ret;
		return true;
	}
	if (walk_compiled_at(w, ret, f->sp + 8)) {
		f->sp += 8;
		f->pc = ret;
		return true;
	}
	return false;
}

/*
 * A stub's frame. Stubs are called by leaf calls (from compiled code
 * without debug info at the call), so their return pc may be anywhere in
 * compiled code. Runtime stubs (Runtime1, OptoRuntime, the shared runtime
 * blobs, adapters with a frame) have a frame size; StubRoutines have none
 * and are either frameless (the return pc at sp[0], or above what they
 * pushed) or keep rbp as a frame pointer (enter ... leave).
 */
bool walk_stub_sender(struct walk *w, struct wframe *f)
{
	const struct codemap_blob *b = f->blob, *cb;
	int32_t fs = b->frame_size;
	uint64_t ret, saved;
	bool complete = !f->top || b->frame_complete < 0 ||
			f->pc >= b->start + (uint64_t)b->frame_complete;

	if (fs > 0 && complete &&
	    guess_sender(w, f, fs, true, false, true))
		return true;
	/* register save areas of runtime stubs are large (zmm registers) */
	if (fs > 0 && complete && !f->top &&
	    !walk_in(w, f->sp + (uint64_t)(fs - 1) * 8, 8))
		return walk_fail(w, ASGST_WINDOW_SHORT, f->pc,
				 "stub frame extends beyond the stack window");
	/* stubs called from C (the JNI fast field getters, the icache
	 * flush stubs), at their entry or ret: a native return pc at sp[0]
	 * (without the process's mappings only the getters, by name) */
	if (f->top && fs <= 0 && walk_read(w, f->sp, &ret) && ret &&
	    walk_classify(w, ret, &cb) == PC_NATIVE &&
	    (w->is_text ? w->is_text(w->text_arg, ret) :
			  b->name && !strncmp(b->name, "jni_fast_", 9))) {
		f->sp += 8;
		f->pc = ret;
		return true;
	}
	if (f->top && b->kind == CM_STUB_ADAPTER && adapter_sender(w, f))
		return true;
	/* interrupted at its entry or its ret: nothing of it on the stack */
	if (f->top && fs <= 0 && ret_at_sp(w, f))
		return true;
	/*
	 * a few registers pushed over the return pc (C1's
	 * slow_subtype_check): found by a short scan, taken before rbp
	 * when it ends below rbp, which then is a frame pointer of an older
	 * frame (compiled code keeps rbp as it found it)
	 */
	if (fs <= 0) {
		struct wframe g = *f;

		if (walk_scan_sender(w, &g, f->sp, STUB_PUSHED_WORDS) &&
		    (f->fp <= f->sp || g.sp <= f->fp)) {
			*f = g;
			return true;
		}
	}
	/* stubs that keep rbp as a frame pointer (enter/leave), called
	 * from compiled code or from C */
	if (f->fp > f->sp && walk_read(w, f->fp, &saved) &&
	    walk_read(w, f->fp + 8, &ret) &&
	    (walk_is_leaf_return_pc(w, ret) ||
	     (fs <= 0 && walk_classify(w, ret, &cb) == PC_NATIVE &&
	      w->is_text && w->is_text(w->text_arg, ret)))) {
		f->sp = f->fp + 16;
		f->fp = saved;
		f->pc = ret;
		return true;
	}
	/*
	 * the nmethod entry barrier stub pushes a cookie word (-1, where a
	 * deoptimization writes the new sp) before enter: the return pc is
	 * one word above the frame pointer's usual slot
	 */
	if (f->fp > f->sp && walk_read(w, f->fp, &saved) &&
	    walk_read(w, f->fp + 8, &ret) && ret == UINT64_MAX &&
	    walk_read(w, f->fp + 16, &ret) && walk_is_leaf_return_pc(w, ret)) {
		f->sp = f->fp + 24;
		f->fp = saved;
		f->pc = ret;
		return true;
	}
	/* a frameless stub that called C code: its return pc at sp[0] */
	if (!f->top && fs <= 0 && ret_at_sp(w, f))
		return true;
	if (f->top && guess_sender(w, f, fs, fs > 0, true, true))
		return true;
	/*
	 * a c2i adapter fixing its caller's call site saves the whole CPU
	 * state (general and vector registers) on the stack before it calls
	 * the VM, and so does a GC's load barrier in its entry barrier
	 * (Shenandoah's, on the method holder's class loader), also when
	 * interrupted there: its compiled caller's return pc lies above
	 * all of that
	 */
	if (b->kind == CM_STUB_ADAPTER &&
	    walk_scan_sender(w, f, f->sp, ADAPTER_SCAN_WORDS))
		return true;
	/* registers pushed (Runtime1 stubs without a runtime call; a GC
	 * barrier's pusha in an arraycopy stub calling C, when the C frames
	 * did not leave its rbp) */
	if (walk_scan_sender(w, f, f->sp, STUB_SCAN_WORDS))
		return true;
	return walk_fail(w, ASGST_NOT_WALKABLE, f->pc,
			 "stub frame: no return address found");
}

/*
 * The frame of a code-cache pc found by a scan must have a sender too:
 * where its size says (a compiled caller may have pushed up to two stack
 * arguments for the callee after its frame: C1's calls of some Runtime1
 * stubs), or by its frame pointer (a stub without a size). Returns the
 * frame's sp, 0 when it has no sender.
 */
static uint64_t scan_check(struct walk *w, enum pc_class c,
			   const struct codemap_blob *b, uint64_t slot,
			   uint64_t *fp)
{
	uint64_t nsp = slot + 8, ret, v;
	int32_t fs = b->frame_size;

	*fp = 0;
	if (walk_read(w, slot - 8, &v) && v > slot && walk_in(w, v, 16))
		*fp = v;	/* a saved rbp, if it points up the stack */
	if (fs > 0) {
		for (int32_t k = 0; k <= (c == PC_NMETHOD ? 2 : 0); k++) {
			if (!walk_read(w, nsp + (uint64_t)(fs - 1 + k) * 8,
				       &ret))
				return 0;
			if (c == PC_NMETHOD ? walk_is_return_pc(w, ret) :
					      walk_is_leaf_return_pc(w, ret))
				return nsp + (uint64_t)k * 8;
		}
		return 0;
	}
	/* a stub without a frame size: a frame pointer up the stack */
	return c == PC_STUB && *fp && walk_read(w, *fp + 8, &ret) &&
	       walk_is_leaf_return_pc(w, ret) ? nsp : 0;
}

bool walk_scan_sender(struct walk *w, struct wframe *f, uint64_t from,
		      uint32_t words)
{
	const struct cm_vm_consts *vm = w->vm;

	for (uint32_t i = 0; i < words; i++) {
		uint64_t slot = from + (uint64_t)i * 8, ret, fp, sp;
		const struct codemap_blob *b;
		enum pc_class c;

		if (!walk_read(w, slot, &ret))
			return false;
		if (vm->code_low && vm->code_high &&
		    (ret < vm->code_low || ret >= vm->code_high))
			continue;
		c = walk_classify(w, ret, &b);
		if (!b || ret <= b->start || ret >= b->end)
			continue;
		if (c != PC_NMETHOD && c != PC_NATIVE_WRAPPER && c != PC_STUB)
			continue;
		sp = scan_check(w, c, b, slot, &fp);
		if (!sp)
			continue;
		f->sp = sp;
		f->fp = fp;
		f->pc = ret;
		return true;
	}
	return false;
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

/* ---- native tails (walk.h) ------------------------------------------------- */

#define TAIL_SLOTS	256		/* threads, direct-mapped by tid */
#define TAIL_FRAMES	32
#define TAIL_BYTES	4096		/* window bytes a tail hangs on */

struct tail_ent {
	bool used;
	uint32_t opts;			/* what the walk could use: tail_opts() */
	uint32_t pid, tid;
	uint32_t n, steps;
	uint64_t stamp[3];
	uint64_t t;			/* its sample's time */
	uint64_t pc, sp, fp;
	uint64_t lo, hi;		/* bytes[] are the window's [lo, hi) */
	uint64_t pcs[TAIL_FRAMES];
	uint8_t bytes[TAIL_BYTES];
};

struct walk_tails {
	struct tail_ent e[TAIL_SLOTS];
	uint64_t hits;
};

uint64_t walk_tails__hits(const struct walk_tails *t)
{
	return t ? t->hits : 0;
}

struct walk_tails *walk_tails__new(void)
{
	return calloc(1, sizeof(struct walk_tails));
}

void walk_tails__free(struct walk_tails *t)
{
	free(t);
}

static struct tail_ent *tail_slot(const struct walk *w)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	uint32_t k = (h->tid ^ h->pid << 16) * 2654435761u;

	return &w->tails->e[k >> 24];
}

static uint32_t tail_opts(const struct walk *w)
{
	return (w->options & ASGST_INCLUDE_NON_JAVA_FRAMES ? 1u : 0) |
	       (w->cm ? 2u : 0) | (w->is_text ? 4u : 0) | (w->cfi ? 8u : 0);
}

bool walk_tail_replay(struct walk *w, const struct wframe *f)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	const struct tail_ent *e;

	if (!w->tails || f->top)
		return false;
	e = tail_slot(w);
	if (!e->used || e->pid != h->pid || e->tid != h->tid ||
	    e->pc != f->pc || e->sp != f->sp || e->fp != f->fp ||
	    e->opts != tail_opts(w) ||
	    memcmp(e->stamp, w->tail_stamp, sizeof(e->stamp)) ||
	    e->t < w->tail_horizon || w->t < w->tail_horizon ||
	    w->n + (int64_t)e->n > w->depth ||
	    w->steps + e->steps > WALK_MAX_STEPS)
		return false;
	if (e->hi > e->lo &&
	    (e->lo < w->lo || e->hi > w->hi ||
	     memcmp(e->bytes, w->win + (e->lo - w->lo), e->hi - e->lo)))
		return false;
	for (uint32_t i = 0; i < e->n; i++)
		walk_push_native(w, e->pcs[i]);
	w->steps += e->steps;
	if (e->hi > w->max_read)
		w->max_read = e->hi;
	w->done = true;
	w->tails->hits++;
	return true;
}

void walk_tail_start(struct walk *w, const struct wframe *f)
{
	w->tail_rec = w->tails && !f->top;
	if (!w->tail_rec)
		return;
	w->tail_n0 = w->n;
	w->tail_steps0 = w->steps;
	w->tail_pc = f->pc;
	w->tail_sp = f->sp;
	w->tail_fp = f->fp;
	w->min_read = UINT64_MAX;
}

void walk_tail_keep(struct walk *w)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	uint32_t n = (uint32_t)(w->n - w->tail_n0);
	uint64_t lo = w->min_read, hi = w->max_read;
	struct tail_ent *e;

	if (!w->tail_rec)
		return;
	w->tail_rec = false;
	if (lo == UINT64_MAX)
		lo = hi = 0;	/* read nothing */
	if (n > TAIL_FRAMES || hi - lo > TAIL_BYTES || w->t < w->tail_horizon ||
	    (hi > lo && (lo < w->lo || hi > w->hi)))
		return;
	e = tail_slot(w);
	e->used = true;
	e->opts = tail_opts(w);
	e->pid = h->pid;
	e->tid = h->tid;
	e->n = n;
	e->steps = w->steps - w->tail_steps0;
	memcpy(e->stamp, w->tail_stamp, sizeof(e->stamp));
	e->t = w->t;
	e->pc = w->tail_pc;
	e->sp = w->tail_sp;
	e->fp = w->tail_fp;
	e->lo = lo;
	e->hi = hi;
	for (uint32_t i = 0; i < n; i++)
		e->pcs[i] = (uint64_t)(uintptr_t)
			    w->frames[w->tail_n0 + i].non_java_frame.pc;
	if (hi > lo)
		memcpy(e->bytes, w->win + (lo - w->lo), hi - lo);
}
