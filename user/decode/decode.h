/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sample -> struct trace: the decoder the record pipeline calls per sample.
 * JVM samples with a code map are walked as ASGST call traces (asgst.h;
 * the walk is in decode*.c and walk.c) and resolved into frames
 * (resolve.c); other samples give kernel frames plus the frame-pointer
 * user stack.
 *
 * Where each frame kind is decoded, top layer first (each file calls only
 * the layers below it; scripts/check-decoder-layers.sh checks it):
 *   decode.c           the walk loop and its per-kind dispatch, entry points
 *   decode_compiled.c  compiled Java frames (nmethods), inlining, stubs
 *   decode_interp.c    interpreted Java frames
 *   decode_native.c    C/C++ frames, JNI native wrappers, entry frames
 *                      (call stub / JavaCallWrapper), thread anchors
 *   decode_ffm.c       FFM downcall (nep_invoker_blob) and upcall stubs
 *   decode_cont.c      virtual threads: cont_returnBarrier, frozen frames
 *   walk.c             the walk's primitives: pushing frames, classifying
 *                      pcs, return pcs, the senders shared by frame kinds
 *   resolve.c          ASGST frames -> struct frame (names, lines, symbols);
 *                      a leaf beside walk.c, called by decode.c only
 * walk.h is the decoder-internal header of the walk and the steppers.
 */
#ifndef ASGST_DECODE_H
#define ASGST_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "decode/asgst.h"
#include "capture/sample.h"
#include "trace.h"

struct codemap;
struct strtab;
struct symbolizer;
struct decoder;

struct decoder *decoder__new(struct symbolizer *sz, struct strtab *st);
void decoder__free(struct decoder *d);

/*
 * Decode one sample into t (t->frames points into buf, max entries);
 * cm is the process's code map or NULL (non-JVM, or no/bad map); is_jvm
 * says libjvm.so is mapped. Fills pid/tid/comm/thread/kind/error and the
 * frames: kernel frames first (symbolized), then the user frames callee
 * first. Never fails silently: on a walk failure the frames walked so far
 * plus a FRAME_UNKNOWN frame with the reason, and t->error/error_name set.
 * Returns 0 (also when the walk failed), 1 for a trace the memo had
 * (decoder__set_memo), -errno only on bad arguments.
 */
int decoder__trace(struct decoder *d, const struct sample *s,
		   struct codemap *cm, bool is_jvm, struct trace *t,
		   struct frame *buf, uint32_t max);

/*
 * A memo of traces the caller keeps (profile/stack_memo.h): after the
 * walk, before any frame is named, decoder__trace asks fn with the
 * trace's key, what the trace is made of but the code map's and the
 * symbolizer's state (for CPU and off-CPU samples: the pids, the event,
 * the header words the trace's kind, state and thread name come from,
 * the kernel pcs and the walk's frames, depth and end). When fn says it
 * has the trace, decoder__trace counts it as decoded and returns 1 with
 * t unfinished (no user frames, kind, state nor error). decoder__key is
 * the last call's key, NULL when it had none (another event, bad
 * arguments).
 */
struct decode_key {
	uint64_t a, b;
};
typedef bool (*decoder_memo_fn)(void *arg, const struct decode_key *k);
void decoder__set_memo(struct decoder *d, decoder_memo_fn fn, void *arg);
/*
 * For the next decoder__trace: what the process's walks hang on beside
 * the stack's bytes, 3 words of the caller's (the code map's stamp, the
 * symbolizer's maps load and epoch: codemap__stamp,
 * symbolizer__names_stamp) and the code map's horizon; a JVM's native
 * frames below its threads' entries into Java are then kept and replayed
 * by them (walk.h, walk_tail_*). NULL: none kept or used.
 */
void decoder__set_stamp(struct decoder *d, const uint64_t *stamp,
			uint64_t horizon);
const struct decode_key *decoder__key(const struct decoder *d);

/*
 * Frame i of the last trace decoder__trace() made has every string in the
 * decoder's strtab already (a Java frame named through the resolve memo):
 * a caller that interns the trace's strings there may skip it.
 */
bool decoder__frame_interned(const struct decoder *d, uint32_t i);

/* counters over the decoder's life, for summaries and benchmarks */
struct decoder_stats {
	uint64_t samples;
	uint64_t java;		/* ASGST_JAVA_TRACE */
	uint64_t jvm;		/* ASGST_JVM_TRACE */
	uint64_t native;	/* ASGST_NATIVE_TRACE */
	uint64_t errors;	/* walks that stopped with an error */
	uint64_t by_error[16];	/* index -code for codes -1..-15 */
	uint64_t tail_hits;	/* native tails replayed (decoder__set_stamp) */
};
void decoder__stats(const struct decoder *d, struct decoder_stats *out);

/*
 * Resolve ASGST frames into struct frames (resolve.c): Java frames get
 * class/method/signature/source/line from the code map, non-Java frames
 * their stub name or native symbol. in_flags (NULL, or n ASGST_FF_*
 * entries from asgst_ctx.frame_flags) become the FRAME_F_DOWNCALL_* /
 * _UPCALL_* flags. pid is the host pid (symbolizer). Returns the number
 * of frames written to out (<= max).
 */
struct resolve_memo;
uint32_t asgst_resolve(struct symbolizer *sz, const struct codemap *cm,
		       pid_t pid, const ASGST_CallFrame *in,
		       const uint16_t *in_flags, uint32_t n,
		       struct frame *out, uint32_t max,
		       struct resolve_memo *rm, struct strtab *st,
		       uint8_t *interned);
/* Java frames' names kept between calls (NULL: none kept) */
struct resolve_memo *resolve_memo__new(void);
void resolve_memo__free(struct resolve_memo *rm);

#endif /* ASGST_DECODE_H */
