// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Virtual threads. A mounted virtual thread's frames sit on its carrier's
 * stack above the Continuation.enterSpecial frame, which holds the
 * ContinuationEntry (at the entry frame's sp; JavaThread::_cont_entry
 * points at it). After a yield the frames are thawed back lazily: the
 * oldest thawed frame returns into StubRoutines::cont_returnBarrier while
 * the rest stay frozen in a heap stack chunk. There the walk cannot go on
 * by the stack, so it jumps to the continuation entry the sampler read
 * from the JavaThread: the gap is marked by the barrier frame itself, and
 * enterSpecial and the carrier's frames still come out.
 */
#include <linux/types.h>
#include "decode_walk.h"

/* ContinuationEntry is 64 bytes on JDK 21-25 (sizeof, 16-aligned): the
 * enterSpecial frame's rbp slot sits right above it */
#define CONT_ENTRY_SIZE		64

bool walk_cont_barrier(struct walk *w, struct wframe *f)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	uint64_t entry;

	/* the barrier as a frame: the virtual thread's frozen frames */
	if (!walk_push_native(w, f->pc))
		return false;
	if (!(h->flags & ASGST_SF_THREAD_INFO) || !h->jt_cont_entry)
		return walk_fail(w, ASGST_CONT_FROZEN, f->pc,
				 "the virtual thread's older frames are frozen in the heap (no continuation entry known)");
	entry = h->jt_cont_entry;
	if (entry < f->sp || !w->vm->cont_return_pc)
		return walk_fail(w, ASGST_CONT_FROZEN, f->pc,
				 "the virtual thread's older frames are frozen in the heap (continuation entry not below)");
	/* as if the frozen frames had returned into enterSpecial */
	f->pc = w->vm->cont_return_pc;
	f->sp = entry;
	f->fp = entry + CONT_ENTRY_SIZE;
	f->top = false;
	return true;
}
