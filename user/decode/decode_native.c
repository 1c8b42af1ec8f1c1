// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Frames at the Java / C boundary and the C/C++ frames themselves:
 *  - native (C/C++) code: walked by frame pointers inside the window
 *    (rbp[0] the caller's rbp, rbp[1] the return pc); where the chain
 *    leaves the window the kernel's frame-pointer user stack continues it;
 *  - JNI native-method wrappers (a "native nmethod"): the JAVA_NATIVE
 *    barrier frame between Java callers and the C code above it
 *    (ASGST_FF_DOWNCALL_JNI);
 *  - entry frames (StubRoutines' call stub, where C calls Java): its
 *    JavaCallWrapper (rbp[-6]) holds the anchor of the last Java frame
 *    below the C code (last_Java_sp/fp/pc), or sp 0 for the thread's first
 *    entry; so Java -> C -> Java stacks come out whole even when the C part
 *    has no frame pointers (such a nested entry is ASGST_FF_UPCALL_JNI);
 *  - the thread's own anchor (JavaThread::_anchor, read by the sampler)
 *    for a thread interrupted in native code; without one (C code entered
 *    by a leaf call from compiled Java) a scan of the stack for the Java
 *    frame it returns to.
 */
#include <dwarf.h>
#include <errno.h>
#include <linux/types.h>
#include <string.h>

#include "decode/walk.h"
#include "symbols/cfi.h"

/*
 * The interrupted native function has no frame (yet): at its entry or
 * after push rbp its return address is at sp[0] or sp[1]; a return into
 * Java code there resumes the Java walk. Frames the rbp walk pushed after
 * the top one were garbage then and are dropped.
 */
static bool native_top_frameless(struct walk *w, struct wframe *f,
				 int32_t n_top)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	uint64_t ret, saved;

	for (int i = 0; i < 2; i++) {
		if (!walk_read(w, h->sp + (uint64_t)i * 8, &ret) ||
		    !walk_is_return_pc(w, ret))
			continue;
		saved = h->bp;
		if (i == 1 && !walk_read(w, h->sp, &saved))
			continue;
		w->n = n_top;
		f->pc = ret;
		f->sp = h->sp + (uint64_t)(i + 1) * 8;
		f->fp = saved;
		f->top = false;
		return true;
	}
	return false;
}

/*
 * C/C++ code entered from compiled Java by a leaf call (the JVM's
 * SharedRuntime leaf functions, a slow monitor exit, libc behind them, a
 * GC barrier called from a stub) runs in the Java state with no frame
 * anchor, and without frame pointers its frames cannot be walked: find the
 * Java frame it returns to in the stack (walk_scan_sender) and mark the C
 * frames skipped with a gap frame (pc 0). Java threads only.
 */
static bool native_top_scan(struct walk *w, struct wframe *f, int32_t n_top)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	struct wframe g = *f;

	if (w->resume || !w->cm ||
	    !codemap__thread(w->cm, h->ns_tid, h->ktime_ns))
		return false;
	if ((h->flags & ASGST_SF_THREAD_INFO) && h->jt_last_sp)
		return false;	/* the anchor says where Java is */
	if (!walk_scan_sender(w, &g, h->sp, WALK_SCAN_WORDS))
		return false;
	w->n = n_top;
	if (!walk_push_native(w, 0))
		return false;
	*f = g;
	f->top = false;
	return true;
}

/* CFI says the frame that return address ret is in has no caller */
static bool outermost(struct walk *w, uint64_t ret)
{
	struct cfi_row row;

	return ret && !w->cfi(w->text_arg, ret - 1, &row) &&
	       row.ra.rule == CFI_RULE_UNDEF;
}

/*
 * A process without Java frames: where CFI and frame pointers both fail,
 * the kernel's frame-pointer walk may still go on from the same frame;
 * else the stack ends here with an unknown frame saying why.
 */
static bool native_only_end(struct walk *w, uint64_t last_pc, bool broken)
{
	const struct asgst_sample_hdr *h = w->s->hdr;

	for (uint32_t i = 0; i + 1 < h->ustack_n; i++) {
		uint64_t end = w->s->ustack[h->ustack_n - 1];

		if (w->s->ustack[i] != last_pc)
			continue;
		for (uint32_t j = i + 1; j < h->ustack_n; j++)
			if (!walk_push_native(w, w->s->ustack[j]))
				return false;
		/* whole only if CFI says its last frame is a thread's first */
		if (w->cfi && !outermost(w, end))
			return walk_fail(w, ASGST_NOT_WALKABLE, end,
					 "native frames by frame pointers: they end before the thread's first frame");
		w->done = true;
		return true;
	}
	if (broken)
		return walk_fail(w, ASGST_NOT_WALKABLE, last_pc,
				 "native frame: no caller found by CFI or frame pointer");
	if (!(h->flags & ASGST_SF_WINDOW_CUT))
		return walk_fail(w, ASGST_WINDOW_SHORT, last_pc,
				 "native frames beyond the stack window (raise --stack-window)");
	return walk_fail(w, ASGST_NOT_WALKABLE, last_pc,
			 "native frame: its caller is not in the thread's stack");
}

/* the native chain ended at last_pc (frame pointer fp) */
static bool native_end(struct walk *w, struct wframe *f, uint64_t last_pc,
		       bool broken, int32_t n_top)
{
	const struct asgst_sample_hdr *h = w->s->hdr;

	if (!w->cm)
		return native_only_end(w, last_pc, broken);
	if (walk_resume_anchor(w, f))
		return true;
	if (n_top >= 0 && !w->java_frames && native_top_frameless(w, f, n_top))
		return true;
	if (n_top >= 0 && !w->java_frames && native_top_scan(w, f, n_top))
		return true;
	/* continue with the kernel's frame-pointer walk, which is not
	 * bounded by the window, where it passed through the same frame */
	for (uint32_t i = 0; i < h->ustack_n; i++) {
		if (w->s->ustack[i] != last_pc)
			continue;
		for (uint32_t j = i + 1; j < h->ustack_n; j++)
			if (!walk_push_native(w, w->s->ustack[j]))
				return false;
		break;
	}
	if (broken && !w->java_frames && !w->bottom && w->cm &&
	    codemap__thread(w->cm, h->ns_tid, h->ktime_ns) &&
	    !((h->flags & ASGST_SF_THREAD_INFO) && !h->jt_last_sp))
		return walk_fail(w, ASGST_NATIVE_LOST, last_pc,
				 "native frames without frame pointers: Java frames below not found");
	w->done = true;
	return true;
}

/* the CFI expression evaluator's registers: what is known of a frame */
struct cfi_regs {
	uint64_t rsp, rbp, rip, rbx, r13;
	bool top;		/* rbx and r13 are the live registers */
};

static bool cfi_reg(const struct cfi_regs *r, unsigned int reg, uint64_t *v)
{
	switch (reg) {
	case CFI_REG_RSP:
		*v = r->rsp;
		return true;
	case CFI_REG_RBP:
		*v = r->rbp;
		return true;
	case CFI_REG_RIP:
		*v = r->rip;
		return true;
	case CFI_REG_RBX:
		*v = r->rbx;
		return r->top;
	case CFI_REG_R13:
		*v = r->r13;
		return r->top;
	default:
		return false;	/* never saved by the sampler */
	}
}

#define CFI_STACK	16

/* run e's ops (a DWARF expression) over the window; false: cannot */
static bool cfi_eval(const struct walk *w, const struct cfi_expr *e,
		     const struct cfi_regs *r, const uint64_t *cfa,
		     uint64_t *out)
{
	uint64_t st[CFI_STACK], a, b;
	int n = 0;

	for (unsigned int i = 0; i < e->nops; i++) {
		const struct cfi_op *op = &e->ops[i];
		uint8_t at = op->atom;

		if (n == CFI_STACK)
			return false;
		if (at >= DW_OP_breg0 && at <= DW_OP_breg31) {
			if (!cfi_reg(r, at - DW_OP_breg0, &a))
				return false;
			st[n++] = a + (uint64_t)op->n;
			continue;
		}
		if (at >= DW_OP_lit0 && at <= DW_OP_lit31) {
			st[n++] = at - DW_OP_lit0;
			continue;
		}
		switch (at) {
		case DW_OP_call_frame_cfa:
			if (!cfa)
				return false;
			st[n++] = *cfa;
			continue;
		case DW_OP_const1u: case DW_OP_const1s:
		case DW_OP_const2u: case DW_OP_const2s:
		case DW_OP_const4u: case DW_OP_const4s:
		case DW_OP_const8u: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts:
			st[n++] = (uint64_t)op->n;
			continue;
		case DW_OP_dup:
			if (n < 1)
				return false;
			st[n] = st[n - 1];
			n++;
			continue;
		case DW_OP_over:
			if (n < 2)
				return false;
			st[n] = st[n - 2];
			n++;
			continue;
		default:
			break;
		}
		/* unary */
		if (n < 1)
			return false;
		switch (at) {
		case DW_OP_plus_uconst:
			st[n - 1] += (uint64_t)op->n;
			continue;
		case DW_OP_neg:
			st[n - 1] = -st[n - 1];
			continue;
		case DW_OP_not:
			st[n - 1] = ~st[n - 1];
			continue;
		case DW_OP_deref:
			if (!walk_read(w, st[n - 1], &st[n - 1]))
				return false;
			continue;
		case DW_OP_drop:
			n--;
			continue;
		default:
			break;
		}
		/* binary: a (second) op b (top) */
		if (n < 2)
			return false;
		b = st[--n];
		a = st[n - 1];
		switch (at) {
		case DW_OP_swap:
			st[n - 1] = b;
			st[n++] = a;
			continue;
		case DW_OP_plus: a += b; break;
		case DW_OP_minus: a -= b; break;
		case DW_OP_mul: a *= b; break;
		case DW_OP_and: a &= b; break;
		case DW_OP_or: a |= b; break;
		case DW_OP_xor: a ^= b; break;
		case DW_OP_shl: a = b < 64 ? a << b : 0; break;
		case DW_OP_shr: a = b < 64 ? a >> b : 0; break;
		case DW_OP_shra:
			a = (uint64_t)((int64_t)a >> (b < 63 ? b : 63));
			break;
		case DW_OP_ge: a = (int64_t)a >= (int64_t)b; break;
		case DW_OP_gt: a = (int64_t)a > (int64_t)b; break;
		case DW_OP_le: a = (int64_t)a <= (int64_t)b; break;
		case DW_OP_lt: a = (int64_t)a < (int64_t)b; break;
		case DW_OP_eq: a = a == b; break;
		case DW_OP_ne: a = a != b; break;
		default:
			return false;
		}
		st[n - 1] = a;
	}
	if (n < 1)
		return false;
	*out = st[n - 1];
	return true;
}

/* a register's value in the caller by its rule; false: unknown */
static bool cfi_restore(const struct walk *w, const struct cfi_rule_of *e,
			const struct cfi_regs *r, uint64_t cfa, uint64_t same,
			uint64_t *out)
{
	uint64_t a;

	switch (e->rule) {
	case CFI_RULE_SAME:
		*out = same;
		return true;
	case CFI_RULE_AT:
		return walk_read(w, cfa + (uint64_t)(int64_t)e->off, out);
	case CFI_RULE_REG:
		if (!cfi_reg(r, e->reg, &a))
			return false;
		*out = a + (uint64_t)(int64_t)e->off;
		return true;
	case CFI_RULE_EXPR_AT:
		return cfi_eval(w, e->expr, r, &cfa, &a) && walk_read(w, a, out);
	case CFI_RULE_EXPR_VAL:
		return cfi_eval(w, e->expr, r, &cfa, out);
	default:
		return false;
	}
}

enum cfi_step {
	CFI_STEPPED,		/* *ret, *nsp, *nfp are the caller's */
	CFI_OUTERMOST,		/* the return address is undefined: the end */
	CFI_NONE,		/* no CFI for pc: try frame pointers */
	CFI_STUCK,		/* CFI, but the step needs what is not there */
};

/*
 * One frame up by the CFI row at pc. exact: pc is where the thread is
 * (the top frame, or below a signal frame), not a return address, whose
 * call instruction is at pc - 1 and may end its function.
 */
static enum cfi_step cfi_step(struct walk *w, struct cfi_regs *r, bool exact,
			      uint64_t *ret, uint64_t *nsp, uint64_t *nfp,
			      bool *signal)
{
	struct cfi_row row;
	uint64_t cfa;
	int rc;

	if (!w->cfi)
		return CFI_NONE;
	rc = w->cfi(w->text_arg, exact ? r->rip : r->rip - 1, &row);
	if (rc)
		return CFI_NONE;	/* none for this module or pc */
	*signal = row.signal;
	if (row.ra.rule == CFI_RULE_UNDEF)
		return CFI_OUTERMOST;
	switch (row.cfa.rule) {
	case CFI_RULE_REG:
		if (!cfi_reg(r, row.cfa.reg, &cfa))
			return CFI_STUCK;
		cfa += (uint64_t)(int64_t)row.cfa.off;
		break;
	case CFI_RULE_EXPR_VAL:
		if (!cfi_eval(w, row.cfa.expr, r, NULL, &cfa))
			return CFI_STUCK;
		break;
	default:
		return CFI_STUCK;
	}
	if (!cfi_restore(w, &row.ra, r, cfa, r->rip, ret))
		return CFI_STUCK;
	if (!cfi_restore(w, &row.rbp, r, cfa, r->rbp, nfp)) {
		/*
		 * Stopped in an epilogue after "pop %rbp": GCC moves the CFA
		 * but leaves the rule saying rbp is at CFA - 16, now below
		 * sp, where the window does not reach. The pop already put
		 * that value back in rbp.
		 */
		if (exact && row.rbp.rule == CFI_RULE_AT &&
		    cfa + (uint64_t)(int64_t)row.rbp.off < r->rsp)
			*nfp = r->rbp;
		else
			*nfp = 0;	/* not recoverable: only CFI can go on */
	}
	*nsp = cfa;
	return CFI_STEPPED;
}

bool walk_native(struct walk *w, struct wframe *f)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	uint64_t pc = f->pc, fp = f->fp, sp = f->sp, nfp, nsp, ret;
	const struct codemap_blob *b;
	int32_t n_top = -1;	/* frames to keep if the top is frameless */
	struct cfi_regs r = {
		.rbx = h->rbx, .r13 = h->r13, .top = f->top,
	};
	bool exact = f->top, by_fp, signal = false;

	/* below an entry into Java: the thread's tail as last walked */
	if (walk_tail_replay(w, f))
		return true;
	walk_tail_start(w, f);
	if (f->top && (h->flags & ASGST_SF_THREAD_INFO) && h->jt_last_sp &&
	    !w->resume) {
		/* in native or VM code: the thread's last Java frame */
		w->resume = true;
		w->resume_sp = h->jt_last_sp;
		w->resume_fp = h->jt_last_fp;
		w->resume_pc = h->jt_last_pc;
		w->used_thread_anchor = true;
	}
	for (;;) {
		if (!walk_push_native(w, pc))
			return false;
		if (f->top && n_top < 0)
			n_top = w->n;
		if (++w->steps > WALK_MAX_STEPS)
			return walk_fail(w, ASGST_NOT_WALKABLE, pc,
					 "too many native frames");
		r.rsp = sp;
		r.rbp = fp;
		r.rip = pc;
		by_fp = false;
		switch (cfi_step(w, &r, exact, &ret, &nsp, &nfp, &signal)) {
		case CFI_OUTERMOST:
			w->done = true;
			walk_tail_keep(w);
			return true;
		case CFI_STUCK:
			return native_end(w, f, pc, false, n_top);
		case CFI_STEPPED:
			break;
		case CFI_NONE:
			/* frames only get older: a frame below sp is not one */
			if (fp < sp && !r.top)
				return native_end(w, f, pc, true, n_top);
			if (!walk_read(w, fp, &nfp) ||
			    !walk_read(w, fp + 8, &ret))
				return native_end(w, f, pc, false, n_top);
			nsp = fp + 16;
			signal = false;
			by_fp = true;
			break;
		}
		if (!ret) {
			/* a frame pointer's 0 is the end only when CFI says so
			 * (an outermost frame), else a guess at garbage; a 0
			 * where CFI puts the return address ends the stack
			 * (Go's goroutines end so, under runtime.goexit) */
			if (by_fp && !w->cm)
				return native_only_end(w, pc, true);
			w->done = true;
			walk_tail_keep(w);
			return true;
		}
		switch (walk_classify(w, ret, &b)) {
		case PC_NATIVE:
			break;
		case PC_CODE_UNKNOWN:
		case PC_NULL:
			return native_end(w, f, pc, true, n_top);
		default:
			/*
			 * C code without frame pointers leaves the Java
			 * caller's rbp alone, so the chain can jump straight
			 * past the frame that called out (the JNI wrapper):
			 * when it lands beyond the thread's anchor, resume
			 * there instead, and mark the frames not seen.
			 */
			if (by_fp && w->used_thread_anchor && w->resume &&
			    w->resume_sp < nsp && walk_resume_anchor(w, f))
				return true;
			/* back into the code cache: the caller's sp is just
			 * above the return address */
			w->resume = false;
			f->pc = ret;
			f->sp = nsp;
			f->fp = nfp;
			f->top = false;
			return true;
		}
		/*
		 * sp only grows. A frame-pointer step's caller may keep rbp
		 * as a general register (ld.so's _dl_fini below a library's
		 * __do_global_dtors_aux, which has no CFI): its CFI goes on
		 * from there, and a bad rbp ends a next step by frame pointer
		 * (fp < sp)
		 */
		if ((by_fp ? nsp <= sp && nfp <= fp : nsp <= sp) ||
		    (w->is_text && !w->is_text(w->text_arg, ret)))
			return native_end(w, f, pc, true, n_top);
		pc = ret;
		fp = nfp;
		sp = nsp;
		exact = signal;	/* below a signal frame: the exact pc */
		r.top = false;
	}
}

/*
 * A native wrapper is a JNI downcall unless it is one of the JVM's own
 * "native" intrinsics: the MethodHandle linkTo* / invokeBasic adapters and
 * Continuation.enterSpecial / doYield (the virtual-thread boundary: its
 * FRAME_F_VTHREAD_ENTRY is set by resolve.c, not here).
 */
static bool jni_wrapper(const struct walk *w, const struct codemap_blob *b)
{
	const struct codemap_method *m = codemap__method(w->cm, b->method);

	if (!m)
		return true;
	return strcmp(m->klass, "java.lang.invoke.MethodHandle") &&
	       strcmp(m->klass, "jdk.internal.vm.Continuation");
}

bool walk_native_wrapper(struct walk *w, struct wframe *f)
{
	const struct codemap_blob *b = f->blob;
	int32_t fs = b->frame_size;
	uint64_t ret, saved;
	int8_t level = (int8_t)(b->comp_level >= -1 && b->comp_level <= 4 ?
				b->comp_level : -1);
	int32_t i = w->n;

	if (!walk_push_java(w, ASGST_FRAME_JAVA_NATIVE, level, -1, b->method))
		return false;
	if (jni_wrapper(w, b))
		walk_flag(w, i, ASGST_FF_DOWNCALL_JNI);
	if (f->top && b->frame_complete >= 0 &&
	    f->pc < b->start + (uint64_t)b->frame_complete) {
		if (walk_guess_sender(w, f, fs, fs > 0, true) ||
		    walk_guess_sender(w, f, fs, fs > 0, false))
			return true;
		return walk_fail(w, ASGST_NOT_WALKABLE, f->pc,
				 "native wrapper prologue: no return address found");
	}
	/*
	 * The top frame may be in its body or past its epilogue's leave (the
	 * return pc at sp, rbp already the caller's): the shape whose sender
	 * checks out furthest.
	 */
	if (f->top && fs > 0 && walk_guess_sender(w, f, fs, true, false))
		return true;
	/* by frame size, from the sp it called out with */
	if (fs > 0) {
		uint64_t sender_sp = f->sp + (uint64_t)fs * 8;

		if (walk_read(w, sender_sp - 8, &ret) &&
		    walk_read(w, sender_sp - 16, &saved) &&
		    walk_is_return_pc(w, ret)) {
			f->sp = sender_sp;
			f->fp = saved;
			f->pc = ret;
			return true;
		}
	}
	/* the wrapper keeps rbp as a frame pointer (enter ... leave) */
	if (f->fp > f->sp && walk_read(w, f->fp, &saved) &&
	    walk_read(w, f->fp + 8, &ret) && walk_is_return_pc(w, ret)) {
		f->sp = f->fp + 16;
		f->fp = saved;
		f->pc = ret;
		return true;
	}
	if (f->top && walk_guess_sender(w, f, 0, false, false))
		return true;
	return walk_fail(w, ASGST_BAD_SENDER, f->pc,
			 "native wrapper's return address is not a call site");
}

/* JavaCallWrapper anchor of the entry frame at fp */
static void entry_anchor(struct walk *w, uint64_t fp)
{
	const struct cm_vm_consts *vm = w->vm;
	uint64_t jcw, a, sp = 0, afp = 0, pc = 0;
	int32_t off = vm->entry_frame_call_wrapper == CM_ABSENT ? -6 :
		      vm->entry_frame_call_wrapper;

	if (vm->jcw_anchor == CM_ABSENT || vm->anchor_last_sp == CM_ABSENT)
		return;
	if (!walk_read(w, fp + (uint64_t)((int64_t)off * 8), &jcw))
		return;
	a = jcw + (uint64_t)vm->jcw_anchor;
	if (!walk_read(w, a + (uint64_t)vm->anchor_last_sp, &sp))
		return;
	if (!sp) {
		w->bottom = true;	/* the thread's first entry into Java */
		return;
	}
	if (vm->anchor_last_fp != CM_ABSENT)
		walk_read(w, a + (uint64_t)vm->anchor_last_fp, &afp);
	if (vm->anchor_last_pc != CM_ABSENT)
		walk_read(w, a + (uint64_t)vm->anchor_last_pc, &pc);
	if (sp <= fp)
		return;		/* must be below (older than) this frame */
	w->resume = true;
	w->resume_sp = sp;
	w->resume_fp = afp;
	w->resume_pc = pc;
}

bool walk_entry(struct walk *w, struct wframe *f)
{
	uint64_t fp = f->fp;
	int32_t i = w->n;

	if (!walk_push_native(w, f->pc))
		return false;
	w->resume = false;
	entry_anchor(w, fp);
	/* Java frames below: C called back into Java (JNI Call*Method);
	 * the thread's first entry is its root, not a crossing */
	if (w->resume) {
		walk_flag(w, i, ASGST_FF_UPCALL_JNI);
		w->upcalls++;
	}
	return walk_leave_entry(w, f, fp, true,
				"entry frame: caller not found in the stack window");
}
