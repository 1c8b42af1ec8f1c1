/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal to the decoder (user/decode/): the state of one stack walk, the
 * primitives every frame kind uses (walk.c) and the frame steppers
 * (decode_*.c). Everything read from the stack goes through walk_read(),
 * which only reads inside the sample's window.
 *
 * Layers, each calling only the ones below it:
 *   decode.c    the walk loop, per-kind dispatch, entry points
 *   decode_*.c  the frame steppers; decode_cont.c steps frozen compiled
 *               frames with walk_compiled(), no other stepper calls another
 *   walk.c      the primitives below (and the inline helpers here)
 * resolve.c names the finished frames: a leaf only decode.c calls.
 */
#ifndef ASGST_DECODE_WALK_H
#define ASGST_DECODE_WALK_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>

#include "decode/asgst.h"
#include "jvm/codemap.h"
#include "capture/sample.h"

/* most frames a walk steps over, whatever the depth (never loop) */
#define WALK_MAX_STEPS		2048

/* most stack words a scan for a Java frame below C code looks at */
#define WALK_SCAN_WORDS		2048

/* what a pc is */
enum pc_class {
	PC_NATIVE = 0,		/* outside the code cache: a native module */
	PC_NMETHOD,		/* compiled Java method (also OSR) */
	PC_NATIVE_WRAPPER,	/* JNI native-method wrapper */
	PC_INTERP,		/* template interpreter */
	PC_CALL_STUB,		/* StubRoutines call stub: entry frame */
	PC_DOWNCALL_STUB,	/* FFM nep_invoker_blob: Java -> C */
	PC_UPCALL_STUB,		/* FFM upcall_stub: C -> Java */
	PC_CONT_BARRIER,	/* StubRoutines::cont_returnBarrier */
	PC_STUB,		/* any other stub / runtime blob */
	PC_CODE_UNKNOWN,	/* in the code cache, no code known there */
	PC_NULL,		/* 0: end of the stack */
};

struct walk {
	const struct sample *s;
	const struct codemap *cm;
	const struct cm_vm_consts *vm;	/* never NULL during a walk */
	bool (*is_text)(void *arg, uint64_t pc);
	void *text_arg;
	int (*cfi)(void *arg, uint64_t pc, struct cfi_row *row);
	uint64_t t;			/* sample time, for code-map lookups */
	uint64_t lo, hi;		/* window [lo, hi) */
	const uint8_t *win;
	uint32_t options;
	ASGST_CallFrame *frames;
	int32_t depth;
	int32_t n;
	/* outcome */
	int32_t error;
	const char *reason;
	uint64_t stop_pc;
	uint32_t steps;
	uint32_t java_frames;
	bool done;			/* reached the thread's first frame */
	bool bottom;			/* passed the thread's first entry frame */
	/* where Java frames resume below the native frames being walked
	 * (an entry frame's JavaCallWrapper anchor, or the thread's) */
	bool resume;
	uint64_t resume_sp, resume_fp, resume_pc;
	bool used_thread_anchor;
	uint64_t max_read;		/* highest window address read + 8 */
	/* last classification: a sender pc is classified when checked and
	 * again when stepped over */
	uint64_t memo_pc;
	enum pc_class memo_class;
	const struct codemap_blob *memo_blob;
	/* Java <-> C crossings (decode_ffm.c, decode_native.c) */
	uint16_t *flags;		/* NULL, or ASGST_FF_* per frame */
	uint64_t *pcs;			/* NULL, or each frame's code address */
	uint64_t java_pc;		/* ... for the Java frames pushed now */
	uint32_t upcalls;		/* upcalls (call/upcall stubs) walked */
	/* below a deoptimization blob unpacking frames: the interpreted
	 * frames it pushed may not have their Method* yet */
	bool deopt_frames;
	/* the native frames below an entry into Java (walk_tail_*) */
	struct walk_tails *tails;	/* NULL: none kept */
	const uint64_t *tail_stamp;	/* 3 words */
	uint64_t tail_horizon;
	bool tail_rec;			/* walked from tail_pc, sp, fp */
	int32_t tail_n0;
	uint32_t tail_steps0;
	uint64_t tail_pc, tail_sp, tail_fp;
	uint64_t min_read;		/* lowest window address read */
};

/* the register state of the frame being stepped over */
struct wframe {
	uint64_t pc;
	uint64_t sp;		/* the frame's sp (frame sizes count from it) */
	uint64_t fp;		/* rbp as the frame sees it */
	bool top;		/* the interrupted frame: registers are live */
	const struct codemap_blob *blob;	/* classify() result */
};

static inline bool walk_in(const struct walk *w, uint64_t addr, uint64_t len)
{
	return addr >= w->lo && addr <= w->hi && len <= w->hi - addr;
}

/* read the stack word at addr; false if outside the window */
static inline bool walk_read(const struct walk *w, uint64_t addr,
			     uint64_t *out)
{
	if (!walk_in(w, addr, 8))
		return false;
	memcpy(out, w->win + (addr - w->lo), 8);
	if (addr + 8 > w->max_read)	/* diagnostics: how much was needed */
		((struct walk *)w)->max_read = addr + 8;
	if (addr < w->min_read)		/* what a kept tail hangs on */
		((struct walk *)w)->min_read = addr;
	return true;
}

/* stop the walk with an error; returns false for "return walk_fail()" */
static inline bool walk_fail(struct walk *w, int32_t err, uint64_t pc,
			     const char *reason)
{
	if (!w->error) {
		w->error = err;
		w->stop_pc = pc;
		w->reason = reason;
	}
	return false;
}

/* room for one more frame; sets ASGST_DEPTH when full */
static inline bool walk_room(struct walk *w)
{
	if (w->n < w->depth)
		return true;
	walk_fail(w, ASGST_DEPTH, 0, "more frames than the trace depth");
	return false;
}

/* ---- primitives (walk.c) ---- */

bool walk_push_java(struct walk *w, uint8_t type, int8_t comp_level,
		    int32_t bci, uint64_t method);
bool walk_push_native(struct walk *w, uint64_t pc);

/* add ASGST_FF_* bits to frame i (an index w->n had before its push) */
static inline void walk_flag(struct walk *w, int32_t i, uint16_t fl)
{
	if (w->flags && i >= 0 && i < w->n)
		w->flags[i] |= fl;
}

enum pc_class walk_classify(const struct walk *w, uint64_t pc,
			    const struct codemap_blob **blob);
/* pc is where a Java frame's callee returns to: known code, a call site */
bool walk_is_return_pc(const struct walk *w, uint64_t pc);

/* also where a leaf call returns: anywhere in compiled code */
bool walk_is_leaf_return_pc(const struct walk *w, uint64_t pc);

/*
 * Find the sender of a frame whose shape at pc is uncertain (prologue,
 * epilogue, frameless stub: the top compiled frame, a stub, a native
 * wrapper) by trying the candidate return-address slots and keeping the
 * one holding a return pc into known code whose sender checks out
 * furthest (compiled callers' return pcs where their sizes say).
 */
bool walk_guess_sender(struct walk *w, struct wframe *f, int32_t frame_size,
		       bool try_full, bool strict);
/*
 * The sender of a compiled frame whose code moved sp down (at most
 * WALK_SPILL_MAX bytes) before a call that has no PcDesc: the out-of-line
 * GC barrier stubs, which save the live registers below the frame (C2's,
 * a multiple of 16 bytes) or push a register and the arguments of a
 * runtime stub (C1's) before they call. The first word offset whose
 * return pc is where frame_size words above it say and whose sender
 * checks out as far as walk_guess_sender looks.
 */
#define WALK_SPILL_MAX		1536
bool walk_spill_sender(struct walk *w, struct wframe *f, int32_t frame_size);
/* a compiled frame at pc whose sp is sp has a return pc where its size
 * says (a candidate sender checked one frame further) */
bool walk_compiled_at(struct walk *w, uint64_t pc, uint64_t sp);
/* the sender of a stub's frame (walk_stub without its frame) */
bool walk_stub_sender(struct walk *w, struct wframe *f);
/*
 * The frame below code that cannot be unwound (C/C++ without frame
 * pointers, a stub that pushed registers): the first of the words
 * from[0..words) that is a return pc into a compiled method, native
 * wrapper or stub whose own frame in turn has a return pc where its size
 * (or frame pointer) says; f then is that frame. A heuristic: a return pc
 * left below sp by an earlier call can pass for one (both slots must
 * hold return pcs, which makes it rare); the caller marks the frames it
 * skipped.
 */
bool walk_scan_sender(struct walk *w, struct wframe *f, uint64_t from,
		      uint32_t words);
/* resume at the anchor saved in w->resume_* (an entry frame's, the
 * thread's), if any */
bool walk_resume_anchor(struct walk *w, struct wframe *f);
/*
 * Leave an rbp-based frame where C called Java (call stub, upcall stub;
 * rbp = fp): into its C caller by rbp (native_only: only a native pc),
 * else at the Java anchor below the C frames, else the thread's end.
 */
bool walk_leave_entry(struct walk *w, struct wframe *f, uint64_t fp,
		      bool native_only, const char *reason);
/* bytecode index of an interpreted frame's bcp, -1 if not in m */
int32_t walk_bcp_to_bci(const struct walk *w, const struct codemap_method *m,
			uint64_t bcp);

/*
 * A thread's native frames below its entry into Java (the VM's thread
 * start, JavaCalls): the same in every sample of a thread that runs in
 * Java, and a CFI look-up and step each. Kept per thread from a walk
 * that went from a non-top native frame to the stack's end within one
 * walk_native: its frames, steps, and the window bytes read on the way
 * (from the lowest address read to the highest). A later walk of the
 * thread entering walk_native at the same pc, sp and fp, with the same
 * bytes there and the caller's stamp, has the same frames: they are
 * pushed, and the walk is done. walk_tail_replay: true when it was;
 * walk_tail_start: note where a tail may start; walk_tail_keep: the walk
 * reached the end from there.
 */
struct walk_tails *walk_tails__new(void);
void walk_tails__free(struct walk_tails *t);
uint64_t walk_tails__hits(const struct walk_tails *t);	/* tails replayed */
bool walk_tail_replay(struct walk *w, const struct wframe *f);
void walk_tail_start(struct walk *w, const struct wframe *f);
void walk_tail_keep(struct walk *w);

/* ---- frame steppers (decode_*.c) ---- */

/*
 * Emit the frame(s) of f and move f to its sender. Return false when the
 * walk must stop (w->error set, or w->done for the end).
 */
bool walk_compiled(struct walk *w, struct wframe *f);		/* decode_compiled.c */
bool walk_stub(struct walk *w, struct wframe *f);		/* decode_compiled.c */
bool walk_interpreted(struct walk *w, struct wframe *f);	/* decode_interp.c */
bool walk_native_wrapper(struct walk *w, struct wframe *f);	/* decode_native.c */
bool walk_entry(struct walk *w, struct wframe *f);		/* decode_native.c */
bool walk_native(struct walk *w, struct wframe *f);		/* decode_native.c */
bool walk_downcall_stub(struct walk *w, struct wframe *f);	/* decode_ffm.c */
bool walk_upcall_stub(struct walk *w, struct wframe *f);	/* decode_ffm.c */
bool walk_cont_barrier(struct walk *w, struct wframe *f);	/* decode_cont.c */

#endif /* ASGST_DECODE_WALK_H */
