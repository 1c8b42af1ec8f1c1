// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Compiled Java frames (nmethods, C1 and C2, OSR too) and other code-cache
 * blobs with a fixed frame (runtime stubs, adapters).
 *
 * A compiled frame does not use rbp as a frame pointer: its size in words
 * (CodeBlob::_frame_size, including the return pc) gives the sender:
 * sender_sp = sp + frame_size words, return pc = sender_sp[-1], the
 * caller's rbp = sender_sp[-2]. Only the interrupted (top) frame can be
 * half built: before frame_complete the prologue has pushed nothing, rbp,
 * or the whole frame; after it an epilogue may already have popped it. We
 * cannot see the instructions, so each shape is tried and the one whose
 * return-address slot holds a return pc into known code (for compiled code:
 * exactly a call site, which always has a PcDesc) wins.
 *
 * Inlined frames come from the blob's pc -> inline-chain table: for the
 * sampled pc the nearest descriptor at or after it; for callers the
 * descriptor at the return pc, which is the call's own, so each caller's
 * bci is its call site's.
 */
#include <linux/types.h>
#include <string.h>

#include "decode/walk.h"

/*
 * sender of a frame of known size: 1; 0 when its return slot holds no
 * return pc (nothing set), -1 with the error set
 */
static int sender_by_size(struct walk *w, struct wframe *f,
			  int32_t frame_size)
{
	uint64_t sender_sp, ret, saved;

	sender_sp = f->sp + (uint64_t)frame_size * 8;
	if (!walk_read(w, sender_sp - 8, &ret) ||
	    !walk_read(w, sender_sp - 16, &saved)) {
		walk_fail(w, ASGST_WINDOW_SHORT, f->pc,
			  "compiled frame extends beyond the stack window");
		return -1;
	}
	if (!walk_is_return_pc(w, ret))
		return 0;
	f->sp = sender_sp;
	f->fp = saved;
	f->pc = ret;
	return 1;
}

/* emit the method's frames at pc: inlined callees first */
static bool push_scopes(struct walk *w, const struct codemap_blob *b,
			uint64_t pc, bool prologue)
{
	const struct codemap_pcdesc *pd = NULL;
	int8_t level = (int8_t)(b->comp_level >= -1 && b->comp_level <= 4 ?
				b->comp_level : -1);

	bool ok = true;

	if (!prologue)
		pd = codemap_blob__pcdesc(b, pc);
	/* the address pprof and JSON show: the PcDesc's, or the entry's */
	w->java_pc = pd ? b->start + pd->pc_off : prologue ? b->start : 0;
	if (!pd || !pd->depth || !pd->frames) {
		ok = walk_push_java(w, ASGST_FRAME_JAVA, level,
				    prologue ? 0 : -1, b->method);
		w->java_pc = 0;
		return ok;
	}
	for (uint32_t i = 0; i < pd->depth && ok; i++) {
		const struct cm_frame *cf = &pd->frames[i];
		bool outer = i + 1 == pd->depth;
		uint64_t m = 0;

		if (cf->method_idx < b->n_methods)
			m = b->method_pool[cf->method_idx];
		/* MethodHandle intrinsics: the blob knows its own method */
		if (outer && b->method)
			m = b->method;
		ok = walk_push_java(w, outer ? ASGST_FRAME_JAVA :
					       ASGST_FRAME_JAVA_INLINED,
				    level, cf->bci, m);
	}
	w->java_pc = 0;
	return ok;
}

/*
 * A frame being deoptimized lazily returns into its nmethod's deopt
 * handler (in the stub section, after every PcDesc); the JVM keeps the
 * original return pc in the frame itself (nmethod::_orig_pc_offset, per
 * nmethod, not in the map): the one word of the frame that is a call site
 * of this nmethod. Its scopes (bci, inlined frames) come from there.
 */
static uint64_t deopt_orig_pc(const struct walk *w, const struct wframe *f,
			      const struct codemap_blob *b)
{
	const struct codemap_pcdesc *pd;
	uint64_t v, found = 0;

	if (!b->n_pcs || (pd = codemap_blob__pcdesc(b, f->pc)) != NULL)
		return f->pc;	/* a call site, or a map without PcDescs */
	for (int32_t i = 0; i + 2 < b->frame_size; i++) {
		if (!walk_read(w, f->sp + (uint64_t)i * 8, &v) ||
		    v <= b->start || v >= b->end)
			continue;
		pd = codemap_blob__pcdesc(b, v);
		if (!pd || b->start + pd->pc_off != v)
			continue;
		if (found && found != v)
			return f->pc;	/* two candidates: trust neither */
		found = v;
	}
	return found ? found : f->pc;
}

/*
 * Some compiled code pushes a word or two inside the frame's body and pops
 * them before it calls anything (seen in C2 code under load): the return
 * pc is then that many words above where the frame size puts it. Only an
 * exact call site counts.
 */
static bool pushed_words(struct walk *w, struct wframe *f, int32_t fs)
{
	uint64_t ret, saved;

	for (int32_t k = 1; k <= 4; k++) {
		uint64_t slot = f->sp + (uint64_t)(fs - 1 + k) * 8;

		if (!walk_read(w, slot, &ret) || !walk_read(w, slot - 8, &saved))
			return false;
		if (!walk_is_return_pc(w, ret))
			continue;
		f->sp = slot + 8;
		f->fp = saved;
		f->pc = ret;
		return true;
	}
	return false;
}

/*
 * A callee returns to a pc that is no call site and not for a
 * deoptimization, and the frame's size does not lead to a return pc:
 * the call of a GC barrier stub (ZGC's load and store barriers' slow
 * paths, out of line, among or after the method's call sites), made with
 * the live registers saved below the frame (C2) or a register and a
 * runtime stub's arguments pushed (C1): walk_spill_sender.
 */
static bool barrier_stub_sender(struct walk *w, struct wframe *f,
				const struct codemap_blob *b, uint64_t at)
{
	const struct codemap_pcdesc *pd;

	if (at != f->pc)
		return false;
	/* without PcDescs (a map that has none for the blob) any pc may be */
	pd = b->n_pcs ? codemap_blob__pcdesc(b, f->pc) : NULL;
	if (pd && b->start + pd->pc_off == f->pc)
		return false;	/* a call site: the frame is as its size says */
	return walk_spill_sender(w, f, b->frame_size);
}

/* the sender of a compiled frame that is not the top one */
static bool compiled_sender(struct walk *w, struct wframe *f,
			    const struct codemap_blob *b, uint64_t at)
{
	int r = sender_by_size(w, f, b->frame_size);

	if (r)
		return r > 0;
	if (barrier_stub_sender(w, f, b, at))
		return true;
	return walk_fail(w, ASGST_BAD_SENDER, f->pc,
			 "compiled frame's return address is not a call site");
}

bool walk_compiled(struct walk *w, struct wframe *f)
{
	const struct codemap_blob *b = f->blob;
	uint64_t at;
	bool prologue;

	if (b->frame_size <= 0)
		return walk_fail(w, ASGST_NOT_WALKABLE, f->pc,
				 "compiled code without a known frame size");
	prologue = f->top && b->frame_complete >= 0 &&
		   f->pc < b->start + (uint64_t)b->frame_complete;
	at = f->top ? f->pc : deopt_orig_pc(w, f, b);
	if (!push_scopes(w, b, at, prologue))
		return false;
	if (!f->top)
		return compiled_sender(w, f, b, at);
	if (prologue) {
		uint64_t live_fp = f->fp, sp = f->sp, v;

		if (walk_guess_sender(w, f, b->frame_size, true, true))
			return true;
		/* a prologue does not change rbp: the caller's is the live
		 * one, whatever the slot holds (C2 allocates the frame before
		 * it stores rbp); unless it already points into this frame,
		 * at the slot it saved the caller's in (-XX:+PreserveFramePointer
		 * sets rbp before frame_complete) */
		if (walk_guess_sender(w, f, b->frame_size, true, false)) {
			f->fp = live_fp >= sp && live_fp < f->sp &&
				walk_read(w, live_fp, &v) ? v : live_fp;
			return true;
		}
	} else {
		/* the frame is built; else an epilogue has removed it */
		if (walk_guess_sender(w, f, b->frame_size, true, false))
			return true;
		if (walk_guess_sender(w, f, 0, false, false))
			return true;
		if (pushed_words(w, f, b->frame_size))
			return true;
	}
	return walk_fail(w, ASGST_NOT_WALKABLE, f->pc,
			 "top compiled frame: no return address found (prologue/epilogue?)");
}

/*
 * The deoptimization and uncommon-trap blobs replace the deoptimized
 * compiled frame by skeletal interpreted frames (return pc, rbp link,
 * sender sp) and then call Deoptimization::unpack_frames, which fills in
 * each frame's Method*, bcp and locals: the interpreted frames right below
 * the blob may not have a Method* yet (decode_interp.c).
 */
static bool is_deopt_blob(const struct codemap_blob *b)
{
	return b->name && (!strncmp(b->name, "DeoptimizationBlob", 18) ||
			   !strncmp(b->name, "UncommonTrapBlob", 16));
}

/*
 * The safepoint poll handler blob at its first instruction: the signal
 * handler sends the thread there from a poll in compiled code;
 * the polled pc is kept in the thread (not in the sample) and the blob
 * has pushed nothing yet. The frame at sp is that compiled frame, which
 * one is not known: a gap frame stands for it and the walk goes on at
 * the first return pc above sp whose frame checks out (a stale return pc
 * at sp would otherwise pass for the poll's).
 */
static bool poll_blob_entry(struct walk *w, struct wframe *f)
{
	if (!walk_push_native(w, 0))
		return false;
	if (walk_scan_sender(w, f, f->sp, WALK_SCAN_WORDS))
		return true;
	return walk_fail(w, ASGST_NOT_WALKABLE, f->pc,
			 "safepoint poll blob at its entry: the polled frame is not known");
}

bool walk_stub(struct walk *w, struct wframe *f)
{
	bool deopt = is_deopt_blob(f->blob);

	if (!walk_push_native(w, f->pc))
		return false;
	/* at its entry also below the VM's signal handler, whose signal
	 * frame holds the pc it sent the thread to (never a return pc) */
	if (f->pc == f->blob->start && f->blob->name &&
	    !strncmp(f->blob->name, "SafepointBlob", 13))
		return poll_blob_entry(w, f);
	if (!walk_stub_sender(w, f))
		return false;
	w->deopt_frames = deopt;
	return true;
}
