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
#include <linux/types.h>
#include <string.h>

#include "decode/walk.h"

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

/* the native chain ended at last_pc (frame pointer fp) */
static bool native_end(struct walk *w, struct wframe *f, uint64_t last_pc,
		       bool broken, int32_t n_top)
{
	const struct asgst_sample_hdr *h = w->s->hdr;

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

bool walk_native(struct walk *w, struct wframe *f)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	uint64_t pc = f->pc, fp = f->fp, nfp, ret;
	const struct codemap_blob *b;
	int32_t n_top = -1;	/* frames to keep if the top is frameless */

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
		/* frames only get older: a frame below sp is not a frame */
		if (fp < f->sp && !f->top)
			return native_end(w, f, pc, true, n_top);
		if (!walk_read(w, fp, &nfp) || !walk_read(w, fp + 8, &ret))
			return native_end(w, f, pc, false, n_top);
		if (!ret) {
			w->done = true;
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
			if (w->used_thread_anchor && w->resume &&
			    w->resume_sp < fp + 16 && walk_resume_anchor(w, f))
				return true;
			/* back into the code cache: the caller's sp is just
			 * above the return address */
			w->resume = false;
			f->pc = ret;
			f->sp = fp + 16;
			f->fp = nfp;
			f->top = false;
			return true;
		}
		if (nfp <= fp ||
		    (w->is_text && !w->is_text(w->text_arg, ret)))
			return native_end(w, f, pc, true, n_top);
		pc = ret;
		fp = nfp;
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
