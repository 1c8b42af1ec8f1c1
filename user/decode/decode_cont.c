// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Virtual threads. A mounted virtual thread's frames sit on its carrier's
 * stack above the Continuation.enterSpecial frame, which holds the
 * ContinuationEntry (at the entry frame's sp; JavaThread::_cont_entry
 * points at it). After a yield the frames are thawed back lazily: the
 * oldest thawed frame returns into StubRoutines::cont_returnBarrier while
 * the rest stay frozen in a heap stack chunk.
 *
 * There the walk goes on in the chunk when the sampler copied it (its
 * youngest ASGST_CHUNK_BYTES, bpf/sampler.h), with the chunk copy as the
 * window: frozen compiled frames keep their layout (frame size, return pc
 * at sender_sp - 1); interpreted frames are relativized (what points into
 * the frame is stored as a word offset from where it is kept: the frame's
 * rbp in the link slot right below its sp, the sender sp at rbp[-1]),
 * while Method* and bcp stay absolute. Where a frame cannot be read (the
 * copy ended, an unknown shape) the walk stops in the chunk and the
 * barrier frame marks the gap. Either way it then jumps to the
 * continuation entry, so enterSpecial and the carrier's frames come out.
 */
#include <linux/types.h>
#include "decode/walk.h"

/* ContinuationEntry::size() when the map has no CONT record: 64 on JDK
 * 21-25; the enterSpecial frame's rbp slot sits right above it */
#define CONT_ENTRY_SIZE		64
#define CHUNK_MAX_FRAMES	256
#define CHUNK_ARGS_MAX		(16 * 8)

/* a frozen interpreted frame at f->sp; false to stop in the chunk */
static bool chunk_interpreted(struct walk *w, struct wframe *f)
{
	const struct cm_vm_consts *vm = w->vm;
	const struct codemap_method *m;
	const struct codemap_blob *b;
	int32_t om = vm->if_method == CM_ABSENT ? -3 : vm->if_method;
	int32_t ob = vm->if_bcp == CM_ABSENT ? -8 : vm->if_bcp;
	int32_t os = vm->if_sender_sp == CM_ABSENT ? -1 : vm->if_sender_sp;
	uint64_t rel = 0, fp, mp = 0, bcp, ret = 0, ssp = 0;
	int32_t bci = -1;

	if (!walk_read(w, f->sp - 16, &rel) || (int64_t)rel <= 0 ||
	    (int64_t)rel > 4096)
		return false;
	fp = f->sp - 16 + rel * 8;
	if (!walk_read(w, fp + (uint64_t)((int64_t)om * 8), &mp) ||
	    !(m = codemap__method(w->cm, mp)))
		return false;
	if (walk_read(w, fp + (uint64_t)((int64_t)ob * 8), &bcp))
		bci = walk_bcp_to_bci(w, m, bcp);
	if (!walk_push_java(w, ASGST_FRAME_JAVA, 0, bci, mp))
		return false;
	if (fp + 16 >= w->s->hdr->chunk_end) {
		/* the oldest frozen frame: its caller is enterSpecial */
		f->pc = vm->cont_return_pc;
		f->sp = w->s->hdr->chunk_end;
		return true;
	}
	if (!walk_read(w, fp + 8, &ret) || !walk_is_return_pc(w, ret) ||
	    !walk_read(w, fp + (uint64_t)((int64_t)os * 8), &ssp) ||
	    (int64_t)ssp < 2 || (int64_t)ssp > 4096)
		return false;
	f->pc = ret;
	f->sp = walk_classify(w, ret, &b) == PC_INTERP ? fp + 16 : fp + ssp * 8;
	f->fp = 0;
	return true;
}

/* the frozen frames in the sample's chunk copy; true when all of them */
static bool walk_chunk(struct walk *w)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	uint64_t lo = w->lo, hi = w->hi, max_read = w->max_read;
	const uint8_t *win = w->win;
	struct wframe cf = { 0 };
	int32_t n0 = w->n;
	bool all = false;

	w->lo = h->chunk_addr;
	w->hi = h->chunk_addr + h->chunk_len;
	w->win = w->s->chunk;
	cf.sp = h->chunk_sp;
	if (!walk_read(w, cf.sp - 8, &cf.pc) || !walk_read(w, cf.sp - 16, &cf.fp))
		goto out;
	for (int i = 0; i < CHUNK_MAX_FRAMES && !w->error; i++) {
		uint64_t sender_sp;

		/* the oldest frozen frame returns into enterSpecial */
		if (cf.sp >= h->chunk_end || cf.pc == w->vm->cont_return_pc) {
			all = true;
			break;
		}
		switch (walk_classify(w, cf.pc, &cf.blob)) {
		case PC_INTERP:
			if (chunk_interpreted(w, &cf))
				continue;
			/* past the oldest frame only its stack arguments
			 * (a few words) are left before the chunk's end */
			all = i > 0 && cf.sp < h->chunk_end &&
			      h->chunk_end - cf.sp <= CHUNK_ARGS_MAX;
			goto out;
		case PC_NMETHOD:
			if (cf.blob->frame_size > 0)
				break;
			goto out;
		default:
			goto out;	/* no other frame freezes */
		}
		sender_sp = cf.sp + (uint64_t)cf.blob->frame_size * 8;
		if (!walk_compiled(w, &cf)) {
			/* the oldest frame's return pc is the entry's, which
			 * need not read as a call site: its frames are out */
			all = !w->error || ((w->error == ASGST_BAD_SENDER ||
					     w->error == ASGST_WINDOW_SHORT) &&
					    sender_sp >= h->chunk_end);
			break;
		}
	}
out:
	/* older frames in the chunk's parent: shown as the gap */
	if (h->flags & ASGST_SF_CHUNK_MORE)
		all = false;
	/* what failed in the chunk is a gap, not the end of the walk */
	if (w->error && w->error != ASGST_DEPTH) {
		w->error = 0;
		w->reason = NULL;
		w->stop_pc = 0;
	}
	for (int32_t k = n0; k < w->n; k++)
		walk_flag(w, k, ASGST_FF_FROZEN);
	w->lo = lo;
	w->hi = hi;
	w->win = win;
	w->max_read = max_read;
	w->memo_pc = 0;
	return all;
}

bool walk_cont_barrier(struct walk *w, struct wframe *f)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	uint64_t entry;

	if (w->s->chunk && walk_chunk(w)) {
		if (w->error)
			return false;
	} else {
		if (w->error)
			return false;
		/* the barrier as a frame: frozen frames not shown (below
		 * any the chunk gave) */
		if (!walk_push_native(w, f->pc))
			return false;
	}
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
	f->fp = entry + (codemap__cont(w->cm) ?
			 (uint64_t)codemap__cont(w->cm)->entry_size :
			 CONT_ENTRY_SIZE);
	f->top = false;
	return true;
}
