// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * FFM (Panama, java.lang.foreign) crossings, x86_64 HotSpot layouts:
 *
 *  - the downcall stub (RuntimeStub "nep_invoker_blob", one per downcall
 *    shape) is Java's callee and the C function's caller. It is the
 *    JAVA_NATIVE barrier frame of an FFM downcall (ASGST_FF_DOWNCALL_FFM,
 *    method = the stub's pc: there is no Java method). Its frame is
 *    "enter; sub rsp, N" with a known frame size, so the sender comes by
 *    size or by rbp like any stub. A plain downcall sets the thread's
 *    anchor (last_Java_sp = the stub's sp) and switches the thread to
 *    _thread_in_native before it calls C; a Linker.Option.critical one
 *    does neither: the thread stays _thread_in_Java and its anchor empty;
 *  - the upcall stub (UpcallStub "upcall_stub") is called by C and calls
 *    Java. It is rbp-based ("enter; sub rsp, N", no frame size published)
 *    and keeps an UpcallStub::FrameData near its rbp whose jfa is the
 *    thread's anchor from before the upcall, i.e. the downcall stub or
 *    native wrapper that called the C code. The walk goes on into the C
 *    caller by rbp, and resumes at that anchor if the C frames cannot be
 *    walked (as frame::sender_for_upcall_stub_frame does), so
 *    Java -> FFM downcall -> C -> upcall -> Java comes out as one stack.
 */
#include <linux/types.h>
#include "decode/walk.h"

/*
 * A critical downcall stub has no thread-state transition, safepoint
 * poll or slow paths: with one int argument it is 24 bytes, a plain one
 * 248. Without the thread's state this tells them apart; a critical stub
 * that captures errno or takes many arguments is larger and is then taken
 * for a plain one, the default.
 */
#define FFM_CRITICAL_MAX_BYTES	128

/* UpcallStub::FrameData: JavaFrameAnchor jfa, then JavaThread *thread,
 * JNIHandleBlock *old_handles, *new_handles (JDK 21-25) */
#define FD_WORDS_AFTER_JFA	3
/* how far below rbp the FrameData may start (a return buffer can sit
 * between it and rbp) */
#define FD_MAX_BELOW_FP		512

/* jt_state folded (the _trans states are base + 1): in Java / in native */
static bool jt_state_is(const struct walk *w, int32_t base)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	int64_t st = (int64_t)(uint32_t)h->jt_state;

	if (!(h->flags & ASGST_SF_THREAD_INFO) || base < 0)
		return false;
	return st == base || st == (int64_t)base + 1;
}

static bool downcall_critical(const struct walk *w, const struct wframe *f)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	const struct codemap_blob *b = f->blob;

	/* below an upcall: the thread was in native code when C called
	 * back, which a critical downcall does not allow */
	if (w->upcalls)
		return false;
	if (h->flags & ASGST_SF_THREAD_INFO) {
		/* the anchor this stub set before its transition */
		if (h->jt_last_sp && h->jt_last_sp == f->sp)
			return false;
		if (jt_state_is(w, w->vm->thread_state_in_native))
			return false;
		/* in its C callee and still in Java state */
		if (!f->top && jt_state_is(w, w->vm->thread_state_in_java))
			return true;
	}
	/* in the stub itself, or no thread state: by the stub's code */
	return b->end > b->start &&
	       b->end - b->start < FFM_CRITICAL_MAX_BYTES;
}

bool walk_downcall_stub(struct walk *w, struct wframe *f)
{
	int32_t i = w->n;
	uint16_t fl = ASGST_FF_DOWNCALL_FFM;

	if (downcall_critical(w, f))
		fl |= ASGST_FF_DOWNCALL_CRIT;
	if (!walk_push_java(w, ASGST_FRAME_JAVA_NATIVE, -1, -1, f->pc))
		return false;
	walk_flag(w, i, fl);
	return walk_stub_sender(w, f);
}

/* a saved anchor below the upcall stub's frame at fp: plausible? */
static bool anchor_ok(const struct walk *w, uint64_t fp, uint64_t sp,
		      uint64_t pc)
{
	const struct codemap_blob *b;

	if (!sp)
		return true;	/* none: the thread's first Java frame */
	if (sp <= fp || (sp & 7))
		return false;
	if (!pc)
		return true;
	switch (walk_classify(w, pc, &b)) {
	case PC_NATIVE:
	case PC_CODE_UNKNOWN:
	case PC_NULL:
		return false;
	default:
		return true;
	}
}

/*
 * Find the FrameData of the upcall stub frame [sp, fp) and take its jfa
 * as where the Java frames resume. Its offset from sp depends on the
 * stub's signature (UpcallStub::_frame_data_offset, not in the code map),
 * but it ends at most 8 bytes below rbp unless a return buffer follows:
 * scan down from there for the word holding this thread's JavaThread*
 * with a plausible anchor in front of it.
 */
static void upcall_anchor(struct walk *w, uint64_t sp, uint64_t fp)
{
	const struct cm_vm_consts *vm = w->vm;
	const struct asgst_sample_hdr *h = w->s->hdr;
	const struct codemap_thread *th;
	uint64_t jt = 0, fd, lo, word, asp, apc = 0, afp = 0;
	int32_t jfa = vm->upcall_fd_jfa == CM_ABSENT ? 0 : vm->upcall_fd_jfa;
	int32_t jfa_size, thread_off, fd_size;

	if (vm->anchor_last_sp == CM_ABSENT)
		return;
	jfa_size = vm->anchor_last_sp;
	if (vm->anchor_last_pc > jfa_size)
		jfa_size = vm->anchor_last_pc;
	if (vm->anchor_last_fp > jfa_size)
		jfa_size = vm->anchor_last_fp;
	jfa_size += 8;
	thread_off = jfa + jfa_size;
	fd_size = thread_off + 8 * FD_WORDS_AFTER_JFA;
	th = codemap__thread(w->cm, h->ns_tid, h->ktime_ns);
	if (th)
		jt = th->java_thread;
	if (fp < sp + (uint64_t)fd_size)
		return;
	/* without the thread to match, only the two slots a stub without
	 * a return buffer can have */
	lo = jt ? (fp - sp > FD_MAX_BELOW_FP ? fp - FD_MAX_BELOW_FP : sp) :
		  fp - (uint64_t)fd_size - 8;
	for (fd = fp - (uint64_t)fd_size; fd >= lo && fd >= sp && fd >= 8;
	     fd -= 8) {
		if (!walk_read(w, fd + (uint64_t)thread_off, &word))
			continue;
		if (jt ? word != jt : !word || (word & 7))
			continue;
		if (!walk_read(w, fd + (uint64_t)(jfa + vm->anchor_last_sp),
			       &asp))
			continue;
		if (vm->anchor_last_pc != CM_ABSENT)
			walk_read(w, fd + (uint64_t)(jfa + vm->anchor_last_pc),
				  &apc);
		if (vm->anchor_last_fp != CM_ABSENT)
			walk_read(w, fd + (uint64_t)(jfa + vm->anchor_last_fp),
				  &afp);
		if (!anchor_ok(w, fp, asp, apc) || (!asp && !jt))
			continue;
		if (!asp) {
			/* a native thread calling in: no Java frames below */
			w->bottom = true;
			return;
		}
		w->resume = true;
		w->resume_sp = asp;
		w->resume_fp = afp;
		w->resume_pc = apc;
		return;
	}
}

bool walk_upcall_stub(struct walk *w, struct wframe *f)
{
	const struct codemap_blob *b = f->blob;
	uint64_t off = f->pc - b->start, fp = f->fp, ret;
	int32_t i = w->n;

	if (!walk_push_native(w, f->pc))
		return false;
	walk_flag(w, i, ASGST_FF_UPCALL_FFM);
	w->upcalls++;
	w->resume = false;
	/* interrupted in "push rbp; mov rbp, rsp" (4 bytes): no frame yet */
	if (f->top && off < 4) {
		uint64_t at = off ? f->sp + 8 : f->sp;

		if (!walk_read(w, at, &ret))
			return walk_fail(w, ASGST_WINDOW_SHORT, f->pc,
					 "upcall stub prologue: return address beyond the window");
		if (off)
			walk_read(w, f->sp, &fp);
		f->pc = ret;
		f->sp = at + 8;
		f->fp = off ? fp : f->fp;
		return true;
	}
	if (fp < f->sp)
		return walk_fail(w, ASGST_NOT_WALKABLE, f->pc,
				 "upcall stub: frame pointer below sp");
	upcall_anchor(w, f->sp, fp);
	return walk_leave_entry(w, f, fp, false,
				"upcall stub: caller not found in the stack window");
}
