// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The decoder: the ASGST walk loop (asgst_decode), which dispatches each
 * frame to its stepper by the class of its pc, and decoder__trace(), which
 * turns one sample into a struct trace (kernel frames, then the user
 * frames: an ASGST walk for JVMs with a code map, the kernel's
 * frame-pointer user stack otherwise).
 *
 * The top layer of the decoder (walk.h): the frame kinds are stepped over
 * in decode_compiled.c, decode_interp.c, decode_native.c, decode_ffm.c and
 * decode_cont.c on the primitives of walk.c; resolve.c names the frames.
 * Nothing below calls back into this file.
 */
#include <linux/types.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/asgst.h"
#include "jvm/codemap.h"
#include "jvm/jvm_discover.h"
#include "decode/decode.h"
#include "decode/walk.h"
#include "capture/sample.h"
#include "util/strtab.h"
#include "symbols/cfi.h"
#include "symbols/symbolize.h"
#include "trace.h"

/* ---- the walk -------------------------------------------------------------- */

const char *asgst_error_name(int32_t code)
{
	switch (code) {
	case ASGST_NO_JAVA_FRAME: return "ASGST_NO_JAVA_FRAME";
	case ASGST_THREAD_EXIT: return "ASGST_THREAD_EXIT";
	case ASGST_NO_THREAD: return "ASGST_NO_THREAD";
	case ASGST_WRONG_STATE: return "ASGST_WRONG_STATE";
	case ASGST_WRONG_KIND: return "ASGST_WRONG_KIND";
	case ASGST_NO_CODEMAP: return "ASGST_NO_CODEMAP";
	case ASGST_UNKNOWN_CODE: return "ASGST_UNKNOWN_CODE";
	case ASGST_NOT_WALKABLE: return "ASGST_NOT_WALKABLE";
	case ASGST_WINDOW_SHORT: return "ASGST_WINDOW_SHORT";
	case ASGST_NO_WINDOW: return "ASGST_NO_WINDOW";
	case ASGST_BAD_SENDER: return "ASGST_BAD_SENDER";
	case ASGST_DEPTH: return "ASGST_DEPTH";
	case ASGST_UNKNOWN_METHOD: return "ASGST_UNKNOWN_METHOD";
	case ASGST_NATIVE_LOST: return "ASGST_NATIVE_LOST";
	case ASGST_CONT_FROZEN: return "ASGST_CONT_FROZEN";
	}
	return "ASGST_UNKNOWN_ERROR";
}

void asgst_ctx__init(struct asgst_ctx *ctx, const struct codemap *cm)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->cm = cm;
	ctx->vm = cm && codemap__ok(cm) ? codemap__vm(cm) : NULL;
}

/*
 * HotSpot's JavaThreadState at the sample, transition states (base + 1:
 * _thread_in_native_trans ...) folded into their base state.
 */
static enum trace_state java_state(const struct cm_vm_consts *vm,
				   const struct asgst_sample_hdr *h)
{
	int64_t st;

	if (!vm || !(h->flags & ASGST_SF_THREAD_INFO))
		return TRACE_STATE_UNKNOWN;
	st = (int64_t)(uint32_t)h->jt_state;
	for (int fold = 0; fold < 2; fold++, st--) {
		if (st == vm->thread_state_in_java)
			return TRACE_STATE_IN_JAVA;
		if (st == vm->thread_state_in_native)
			return TRACE_STATE_IN_NATIVE;
		if (st == vm->thread_state_in_vm)
			return TRACE_STATE_IN_VM;
		if (st == vm->thread_state_blocked)
			return TRACE_STATE_BLOCKED;
	}
	return TRACE_STATE_UNKNOWN;
}

/* JavaThreadState -> JVMTI-style state bits */
static int32_t thread_state(const struct cm_vm_consts *vm,
			    const struct asgst_sample_hdr *h)
{
	int32_t st = ASGST_STATE_ALIVE | ASGST_STATE_RUNNABLE;

	switch (java_state(vm, h)) {
	case TRACE_STATE_IN_NATIVE:
		return st | ASGST_STATE_IN_NATIVE;
	case TRACE_STATE_BLOCKED:
		return ASGST_STATE_ALIVE | ASGST_STATE_BLOCKED;
	default:
		return st;
	}
}

/* the kernel's frame-pointer user stack as NON_JAVA frames */
static void push_ustack(struct walk *w, uint32_t from)
{
	const struct asgst_sample_hdr *h = w->s->hdr;

	for (uint32_t i = from; i < h->ustack_n; i++)
		if (!walk_push_native(w, w->s->ustack[i]))
			return;
}

/*
 * A window was asked for and none came: the stack could not be read (an
 * exec had replaced the memory under the sampled registers, say). The
 * kernel's frame-pointer walk stands in; it is whole only if CFI says its
 * last frame is a thread's first. (With --unwind fp no window is asked
 * for other processes: their frame-pointer stacks stand as they are.)
 */
static void native_unread(struct walk *w)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	uint64_t last = h->ustack_n ? w->s->ustack[h->ustack_n - 1] : h->ip;
	struct cfi_row row;

	if (!w->cfi || !(h->flags & ASGST_SF_WINDOW_WANTED))
		return;
	if (h->ustack_n > 1 && !w->cfi(w->text_arg, last - 1, &row) &&
	    row.ra.rule == CFI_RULE_UNDEF)
		return;
	walk_fail(w, ASGST_NOT_WALKABLE, last,
		  "the user stack could not be read (an exec under way, or its memory gone): frames by the kernel's frame-pointer walk");
}

/* the interrupted frame: the sample's registers */
static void top_frame(struct wframe *f, const struct asgst_sample_hdr *h)
{
	f->pc = h->ip;
	f->sp = h->sp;
	f->fp = h->bp;
	f->top = true;
	f->blob = NULL;
}

/* a walk of s into trace->frames against what ctx knows of the JVM */
static void walk_start(struct walk *w, const struct asgst_ctx *ctx,
		       const struct sample *s, ASGST_CallTrace *trace,
		       int32_t depth, uint32_t options)
{
	const struct asgst_sample_hdr *h = s->hdr;

	memset(w, 0, sizeof(*w));
	w->s = s;
	w->cm = ctx->cm;
	w->vm = ctx->vm;
	w->is_text = ctx->is_text;
	w->text_arg = ctx->text_arg;
	w->cfi = ctx->cfi;
	w->t = h->ktime_ns;
	w->lo = h->sp;
	w->hi = h->sp + h->window_len;
	if (w->hi < w->lo)		/* wraps: no window at all */
		w->hi = w->lo;
	w->win = s->window;
	w->options = options;
	w->frames = trace->frames;
	w->depth = depth;
	w->flags = ctx->frame_flags;
	w->pcs = ctx->frame_pcs;
	w->tails = ctx->tails;
	w->tail_stamp = ctx->tail_stamp;
	w->tail_horizon = ctx->tail_horizon;
}

static bool has_window(const struct sample *s)
{
	return s->window && s->hdr->window_len &&
	       !(s->hdr->flags & ASGST_SF_WINDOW_ERR);
}

/* not decodable as Java: the user stack by CFI, or the kernel's */
static void walk_unmapped(struct walk *w)
{
	/* a walk's vm is never NULL (walk.h): an empty one stands in */
	static const struct cm_vm_consts no_vm;
	struct wframe f;

	if (!w->cfi || !has_window(w->s)) {
		push_ustack(w, 0);
		native_unread(w);
		return;
	}
	/* by CFI (frame pointers where there is none) */
	w->cm = NULL;
	w->vm = &no_vm;
	top_frame(&f, w->s->hdr);
	walk_native(w, &f);
	w->vm = NULL;
}

/* step over frame f by its kind; false: the walk ends here */
static bool walk_step(struct walk *w, struct wframe *f)
{
	enum pc_class c = walk_classify(w, f->pc, &f->blob);

	if (c != PC_INTERP)
		w->deopt_frames = false;
	switch (c) {
	case PC_NMETHOD:
		return walk_compiled(w, f);
	case PC_NATIVE_WRAPPER:
		return walk_native_wrapper(w, f);
	case PC_INTERP:
		return walk_interpreted(w, f);
	case PC_CALL_STUB:
		return walk_entry(w, f);
	case PC_STUB:
		return walk_stub(w, f);
	case PC_DOWNCALL_STUB:
		return walk_downcall_stub(w, f);
	case PC_UPCALL_STUB:
		return walk_upcall_stub(w, f);
	case PC_CONT_BARRIER:
		return walk_cont_barrier(w, f);
	case PC_NATIVE:
		return walk_native(w, f);
	case PC_CODE_UNKNOWN:
		return walk_fail(w, ASGST_UNKNOWN_CODE, f->pc,
				 "no code known at this code-cache address");
	case PC_NULL:
		w->done = true;
		break;
	}
	return true;
}

/* the ASGST walk: frame by frame from the interrupted one */
static void walk_frames(struct walk *w)
{
	struct wframe f;

	top_frame(&f, w->s->hdr);
	while (!w->done && !w->error) {
		if (++w->steps > WALK_MAX_STEPS) {
			walk_fail(w, ASGST_NOT_WALKABLE, f.pc,
				  "too many frames (a loop?)");
			break;
		}
		if (!walk_step(w, &f))
			break;
		f.top = false;
	}
}

/* a JVM with its code map; true when the map knows the thread */
static bool walk_java(struct walk *w, ASGST_CallTrace *trace)
{
	const struct asgst_sample_hdr *h = w->s->hdr;
	const struct codemap_thread *th;

	th = codemap__thread(w->cm, h->ns_tid, h->ktime_ns);
	if (th)
		trace->env_id = th->java_thread;
	if (has_window(w->s)) {
		walk_frames(w);
	} else {
		walk_fail(w, ASGST_NO_WINDOW, h->ip,
			  "the sample has no stack window");
		push_ustack(w, 0);
	}
	return th != NULL;
}

/* where and why the walk stopped, for the caller */
static void ctx_report(struct asgst_ctx *ctx, const struct walk *w,
		       bool java_thread)
{
	ctx->error = w->error;
	ctx->stop_pc = w->stop_pc;
	ctx->reason = w->reason;
	ctx->steps = w->steps;
	ctx->window_used = w->max_read > w->lo ?
			   (uint32_t)(w->max_read - w->lo) : 0;
	ctx->java_thread = java_thread;
	ctx->whole = w->done && !w->error;
}

/*
 * num_frames: the frames or the error, unless the trace's kind or state
 * is not the one asked for. Returns the frames walked, 0 when filtered.
 */
static int trace_filter(ASGST_CallTrace *trace, const struct walk *w,
			uint8_t want_kind, int32_t want_state)
{
	if (want_kind && !(want_kind & trace->kind)) {
		trace->num_frames = ASGST_WRONG_KIND;
		return 0;
	}
	if (want_state && trace->kind == ASGST_JAVA_TRACE &&
	    !(want_state & trace->state)) {
		trace->num_frames = ASGST_WRONG_STATE;
		return 0;
	}
	trace->num_frames = w->error ? w->error : w->n;
	return w->n;
}

int asgst_decode(struct asgst_ctx *ctx, const struct sample *s,
		 ASGST_CallTrace *trace, int32_t depth, uint32_t options)
{
	uint8_t want_kind;
	int32_t want_state;
	bool java_thread = false;
	struct walk w;

	if (!ctx || !s || !s->hdr || !trace || depth < 0 ||
	    (depth > 0 && !trace->frames))
		return -EINVAL;
	/* on entry, kind and state say which traces are wanted */
	want_kind = trace->kind;
	want_state = trace->state;
	trace->env_id = 0;
	trace->frame_info = NULL;
	trace->num_frames = 0;
	walk_start(&w, ctx, s, trace, depth, options);
	if (!w.cm || !w.vm) {
		trace->kind = ASGST_NATIVE_TRACE;
		trace->state = -1;
		/* filtered out before the walk: its kind is known */
		if (!want_kind || (want_kind & ASGST_NATIVE_TRACE))
			walk_unmapped(&w);
	} else {
		java_thread = walk_java(&w, trace);
		trace->kind = w.java_frames || java_thread ?
			      ASGST_JAVA_TRACE : ASGST_JVM_TRACE;
		trace->state = trace->kind == ASGST_JAVA_TRACE ?
			       thread_state(w.vm, s->hdr) : -1;
	}
	ctx_report(ctx, &w, java_thread);
	return trace_filter(trace, &w, want_kind, want_state);
}

int ASGST_GetMethodInfo_cm(const struct codemap *cm, ASGST_Method method,
			   ASGST_MethodInfo *info)
{
	static char empty[1];
	const struct codemap_method *m;

	if (!info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->class_name = info->generic_class_name = empty;
	info->method_name = info->signature = info->generic_signature = empty;
	m = cm ? codemap__method(cm, method) : NULL;
	if (!m)
		return -ENOENT;
	info->class_name = (char *)m->klass;
	info->class_name_len = (int32_t)strlen(m->klass);
	info->method_name = (char *)m->name;
	info->method_name_len = (int32_t)strlen(m->name);
	info->signature = (char *)m->signature;
	info->signature_len = (int32_t)strlen(m->signature);
	info->modifiers = (int32_t)m->modifiers;
	return 0;
}

/* ---- decoder__trace ------------------------------------------------------------ */

struct decoder {
	struct symbolizer *sz;
	struct strtab *st;
	pid_t text_pid;
	uint64_t last_ip;	/* the sample's ip: known maps or not */
	struct decoder_stats stats;
	struct resolve_memo *rm;	/* NULL: out of memory, none kept */
	ASGST_CallFrame frames[TRACE_MAX_FRAMES];
	uint16_t frame_flags[TRACE_MAX_FRAMES];	/* ASGST_FF_* of frames[] */
	uint64_t frame_pcs[TRACE_MAX_FRAMES];	/* code address of frames[] */
	/* the last trace's frames [int_lo, int_lo + int_n) whose strings
	 * are st's own: interned[i - int_lo] */
	uint32_t int_lo, int_n;
	uint8_t interned[TRACE_MAX_FRAMES];
	/* decoder__set_memo */
	decoder_memo_fn memo_fn;
	void *memo_arg;
	struct decode_key key;
	bool key_ok;
	/* decoder__set_stamp: the walk's native tails (walk.h) */
	struct walk_tails *tails;	/* NULL: out of memory, none kept */
	bool stamp_on;
	uint64_t stamp[3];
	uint64_t horizon;
};

void decoder__set_stamp(struct decoder *d, const uint64_t *stamp,
			uint64_t horizon)
{
	d->stamp_on = stamp != NULL;
	if (stamp)
		memcpy(d->stamp, stamp, sizeof(d->stamp));
	d->horizon = horizon;
}

void decoder__set_memo(struct decoder *d, decoder_memo_fn fn, void *arg)
{
	d->memo_fn = fn;
	d->memo_arg = arg;
}

const struct decode_key *decoder__key(const struct decoder *d)
{
	return d->key_ok ? &d->key : NULL;
}

/* ---- the trace's key ------------------------------------------------------- */

/* one serial round a word of each lane: multiply, fold the top down */
static inline uint64_t kmix(uint64_t h, uint64_t v, uint64_t k)
{
	h = (h ^ v) * k;
	return h ^ (h >> 31);
}

#define KA	0x9e3779b97f4a7c15ull
#define KB	0xc2b2ae3d27d4eb4full

static inline void key_word(struct decode_key *k, uint64_t v)
{
	k->a = kmix(k->a, v, KA);
	k->b = kmix(k->b, v + 0x632be59bd9b4e019ull, KB);
}

/*
 * The key of a trace: everything its frames and its fields are made from
 * but the code map's and symbolizer's state (the caller's stamps): who
 * and which event, the header words the kind, state and thread name come
 * from, the kernel pcs, and the walk's frames with their crossing flags
 * and code addresses, depth and end. A frame's three words are folded by
 * independent multiplies before the one serial round a frame: two lanes,
 * 128 bits, as the profile's own stack hash trusts.
 */
static void trace_key(struct decoder *d, const struct sample *s,
		      uint32_t nk, bool is_jvm, const struct codemap *cm,
		      const struct asgst_ctx *ctx, const ASGST_CallTrace *ct,
		      int32_t n)
{
	const struct asgst_sample_hdr *h = s->hdr;
	struct decode_key k = { 0x243f6a8885a308d3ull, 0x13198a2e03707344ull };
	uint64_t comm[2];

	memcpy(comm, h->comm, sizeof(comm));
	key_word(&k, (uint64_t)h->pid << 32 | h->tid);
	key_word(&k, (uint64_t)h->ns_tid << 32 | h->event);
	key_word(&k, (uint64_t)h->flags << 32 | nk);
	key_word(&k, h->jt_state);
	key_word(&k, h->jt_cont_entry);
	key_word(&k, comm[0]);
	key_word(&k, comm[1]);
	for (uint32_t i = 0; i < nk; i++)
		key_word(&k, s->kstack[i]);
	if (ctx) {
		key_word(&k, (uint64_t)is_jvm | (uint64_t)!!cm << 1 |
			     (uint64_t)!!ctx->vm << 2 |
			     (uint64_t)ct->kind << 8 |
			     (uint64_t)(uint32_t)ct->state << 16 |
			     (uint64_t)(uint32_t)n << 48);
		key_word(&k, (uint64_t)(uint32_t)ctx->error);
		key_word(&k, ctx->stop_pc);
		key_word(&k, (uint64_t)(uintptr_t)ctx->reason);
		for (int32_t i = 0; i < n; i++) {
			const ASGST_CallFrame *f = &d->frames[i];
			uint64_t w0 = f->type | (uint64_t)d->frame_flags[i] << 32;
			uint64_t w1;

			if (f->type == ASGST_FRAME_NON_JAVA) {
				w1 = (uint64_t)(uintptr_t)f->non_java_frame.pc;
			} else {
				w0 |= (uint64_t)(uint8_t)f->java_frame.comp_level << 8 |
				      (uint64_t)f->java_frame.bci << 16;
				w1 = f->java_frame.method;
			}
			key_word(&k, w0 * 0xd6e8feb86659fd93ull +
				     w1 * 0xff51afd7ed558ccdull +
				     d->frame_pcs[i] * 0x87c37b91114253d5ull);
		}
	}
	d->key = k;
	d->key_ok = true;
}

/* the decoder's counts of a trace the memo had: as decoder__trace would */
static void count_memo(struct decoder *d, uint8_t kind, int32_t err)
{
	if (kind == ASGST_JAVA_TRACE)
		d->stats.java++;
	else if (kind == ASGST_JVM_TRACE)
		d->stats.jvm++;
	else
		d->stats.native++;
	if (err) {
		d->stats.errors++;
		if (err < 0 && -err < (int)(sizeof(d->stats.by_error) /
					    sizeof(d->stats.by_error[0])))
			d->stats.by_error[-err]++;
	}
}

bool decoder__frame_interned(const struct decoder *d, uint32_t i)
{
	return i >= d->int_lo && i - d->int_lo < d->int_n &&
	       d->interned[i - d->int_lo];
}

static bool is_text(void *arg, uint64_t pc)
{
	struct decoder *d = arg;
	const struct sym_map *m = symbolizer__find_map(d->sz, d->text_pid, pc);

	/* unknown process maps: cannot tell, do not cut the walk */
	return !m ? !symbolizer__find_map(d->sz, d->text_pid, d->last_ip) :
		    m->exec;
}

static int decoder_cfi(void *arg, uint64_t pc, struct cfi_row *row)
{
	struct decoder *d = arg;

	return symbolizer__cfi(d->sz, d->text_pid, pc, row);
}

struct decoder *decoder__new(struct symbolizer *sz, struct strtab *st)
{
	struct decoder *d;

	if (!st)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->sz = sz;
	d->st = st;
	d->rm = resolve_memo__new();
	d->tails = walk_tails__new();
	return d;
}

void decoder__free(struct decoder *d)
{
	if (d) {
		resolve_memo__free(d->rm);
		walk_tails__free(d->tails);
	}
	free(d);
}

void decoder__stats(const struct decoder *d, struct decoder_stats *out)
{
	if (d && out) {
		*out = d->stats;
		out->tail_hits = walk_tails__hits(d->tails);
	}
}

static void set_error(struct decoder *d, struct trace *t, int32_t code,
		      uint64_t pc, const char *reason, uint32_t max)
{
	struct frame *f;

	t->error = code;
	t->error_name = asgst_error_name(code);
	d->stats.errors++;
	if (code < 0 && -code < (int)(sizeof(d->stats.by_error) /
				      sizeof(d->stats.by_error[0])))
		d->stats.by_error[-code]++;
	if (t->nframes >= max)
		t->nframes = max - 1;	/* the reason is worth a frame */
	f = &t->frames[t->nframes++];
	memset(f, 0, sizeof(*f));
	f->type = FRAME_UNKNOWN;
	f->comp_level = -1;
	f->bci = -1;
	f->line = -1;
	f->pc = pc;
	f->reason = reason;
}

/* who and which event; no frames yet */
static void trace_start(struct trace *t, struct strtab *st,
			const struct asgst_sample_hdr *h, struct frame *buf)
{
	memset(t, 0, sizeof(*t));
	t->pid = (pid_t)h->pid;
	t->tid = (pid_t)h->tid;
	t->comm = strtab__intern_n(st, h->comm, strnlen(h->comm, ASGST_COMM_LEN));
	t->thread = t->comm;
	t->frames = buf;
	t->kind = TRACE_KIND_NATIVE;
	t->jvmti_state = -1;
	if (h->event == ASGST_EV_OFFCPU) {
		t->event = TRACE_EV_OFFCPU;
		if (h->flags & ASGST_SF_PREEMPTED)
			t->flags |= TRACE_F_PREEMPTED;
	} else if (h->event == ASGST_EV_ALLOC || h->event == ASGST_EV_LOCK) {
		t->event = h->event == ASGST_EV_ALLOC ? TRACE_EV_ALLOC :
							TRACE_EV_LOCK;
		t->ev_class = strtab__intern_n(st, h->ev_class,
					       strnlen(h->ev_class,
						       ASGST_EV_CLASS_LEN));
	}
}

static bool agent_module(const char *module)
{
	const char *b = module ? strrchr(module, '/') : NULL;

	return module && jvm_discover__is_agent_lib(b ? b + 1 : module);
}

/*
 * An allocation or a monitor's stack was taken in the agent's probe,
 * called from JVMTI in the VM's allocation or locking path: those frames
 * (the agent's, the VM's C++ and its stubs, on top) are the profiler's
 * and the VM's doing, not the program's; the class allocated or waited
 * for takes their place as the leaf, as async-profiler shows it. Native
 * code that allocated through JNI stays.
 */
static void jvm_event_frames(struct trace *t, uint32_t max)
{
	struct frame *buf = t->frames;
	uint32_t cut = 0;

	while (cut < t->nframes && buf[cut].type == FRAME_NON_JAVA &&
	       ((buf[cut].flags & (FRAME_F_JVM_CPP | FRAME_F_STUB)) ||
		agent_module(buf[cut].module)))
		cut++;
	/* a VM thread of its own (no Java, no other code): keep them */
	if (cut == t->nframes)
		cut = 0;
	if (cut) {
		memmove(buf, buf + cut, (t->nframes - cut) * sizeof(*buf));
		t->nframes -= cut;
	}
	if (t->nframes >= max)
		t->nframes = max - 1;
	memmove(buf + 1, buf, t->nframes * sizeof(*buf));
	t->nframes++;
	memset(buf, 0, sizeof(*buf));
	buf->type = FRAME_CLASS;
	buf->comp_level = -1;
	buf->bci = -1;
	buf->line = -1;
	buf->klass = t->ev_class;
	if (t->event == TRACE_EV_LOCK)
		buf->flags |= FRAME_F_MONITOR;
}

/* the kernel frames, symbolized; room is kept for user frames and a
 * reason. How many of the sample's were taken. */
static uint32_t push_kernel_frames(struct decoder *d, const struct sample *s,
				   struct trace *t, uint32_t max)
{
	uint32_t nk = s->hdr->kstack_n < max / 2 ? s->hdr->kstack_n : max / 2;

	for (uint32_t i = 0; i < nk; i++) {
		struct frame *f = &t->frames[t->nframes++];

		memset(f, 0, sizeof(*f));
		f->type = FRAME_KERNEL;
		f->comp_level = -1;
		f->bci = -1;
		f->line = -1;
		f->pc = s->kstack[i];
		if (d->sz)
			symbolizer__kernel(d->sz, f->pc, f);
	}
	return nk;
}

/*
 * Off-CPU stacks are taken in the sched_switch tracepoint: its own frames
 * (the BPF program, which has no symbol once it is unloaded, and
 * bpf_trace_run*) are not the thread's.
 */
static void cut_tracepoint_frames(struct trace *t)
{
	struct frame *buf = t->frames;
	uint32_t cut = 0;

	for (uint32_t i = 0; i < t->nframes && i < 4; i++) {
		const char *sym = buf[i].symbol;

		if (sym && (!strncmp(sym, "bpf_trace_run", 13) ||
			    !strncmp(sym, "__bpf_trace_", 12)))
			cut = i + 1;
	}
	if (cut) {
		memmove(buf, buf + cut, (t->nframes - cut) * sizeof(*buf));
		t->nframes -= cut;
	}
}

/* the walk's view of the JVM (cm: NULL for none) and of the process */
static void decoder_ctx(struct decoder *d, struct asgst_ctx *ctx,
			const struct codemap *cm, const struct trace *t,
			const struct asgst_sample_hdr *h)
{
	asgst_ctx__init(ctx, cm);
	if (d->sz) {
		ctx->is_text = is_text;
		ctx->cfi = decoder_cfi;
		d->text_pid = t->pid;
		d->last_ip = h->ip;
		ctx->text_arg = d;
	}
	ctx->frame_flags = d->frame_flags;
	ctx->frame_pcs = d->frame_pcs;
	if (d->stamp_on && d->tails && cm) {
		ctx->tails = d->tails;
		memcpy(ctx->tail_stamp, d->stamp, sizeof(ctx->tail_stamp));
		ctx->tail_horizon = d->horizon;
	}
}

/*
 * The user frames, walked and named, after t's frames; ctx and ct say
 * how the walk ended. 0, or asgst_decode()'s -errno.
 */
static int push_user_frames(struct decoder *d, const struct sample *s,
			    const struct codemap *cm, bool is_jvm,
			    uint32_t nk, struct trace *t, uint32_t max,
			    struct asgst_ctx *ctx, ASGST_CallTrace *ct)
{
	uint32_t room = max - t->nframes - 1;	/* one for an unknown frame */
	uint32_t k;
	int n;

	if (room > TRACE_MAX_FRAMES)
		room = TRACE_MAX_FRAMES;
	decoder_ctx(d, ctx, cm, t, s->hdr);
	memset(ct, 0, sizeof(*ct));
	ct->frames = d->frames;
	n = asgst_decode(ctx, s, ct, (int32_t)room,
			 ASGST_INCLUDE_NON_JAVA_FRAMES);
	if (n < 0)
		return n;
	if (d->memo_fn && t->event != TRACE_EV_ALLOC &&
	    t->event != TRACE_EV_LOCK) {
		trace_key(d, s, nk, is_jvm, cm, ctx, ct, n);
		if (d->memo_fn(d->memo_arg, &d->key)) {
			/* the error trace_set_error would set */
			count_memo(d, ct->kind, is_jvm && !ctx->vm &&
				   !ctx->whole ? ASGST_NO_CODEMAP : ctx->error);
			return 1;
		}
	}
	k = asgst_resolve(d->sz, ctx->vm ? cm : NULL, t->pid, d->frames,
			  d->frame_flags, (uint32_t)n, t->frames + t->nframes,
			  max - t->nframes, d->rm, d->st, d->interned);
	d->int_lo = t->nframes;
	d->int_n = k;
	/* resolve writes one frame per walked frame, in order */
	for (uint32_t i = 0; i < k; i++)
		t->frames[t->nframes + i].code_pc = d->frame_pcs[i];
	t->nframes += k;
	return 0;
}

/* the trace's kind, Java state and virtual-thread flags by the walk's */
static void trace_set_kind(struct decoder *d, struct trace *t,
			   const struct asgst_sample_hdr *h,
			   const struct cm_vm_consts *vm,
			   const ASGST_CallTrace *ct)
{
	t->jvmti_state = ct->state;
	switch (ct->kind) {
	case ASGST_JAVA_TRACE:
		t->kind = TRACE_KIND_JAVA;
		t->state = (uint8_t)java_state(vm, h);
		/* a continuation is mounted: a virtual thread runs */
		if ((h->flags & ASGST_SF_THREAD_INFO) && h->jt_cont_entry)
			t->flags |= TRACE_F_VTHREAD;
		/*
		 * or its entry frame says so: enterSpecial's own prologue and
		 * epilogue run with the thread's cont_entry not yet (or no
		 * longer) set, while the virtual thread's frames are above it
		 */
		for (uint32_t i = 0; i < t->nframes &&
		     !(t->flags & TRACE_F_VTHREAD); i++)
			if (t->frames[i].flags & FRAME_F_VTHREAD_ENTRY)
				t->flags |= TRACE_F_VTHREAD;
		/*
		 * A carrier that blocks with a virtual thread mounted: the
		 * virtual thread could not unmount (a native frame, a
		 * monitor, a class initializer...), so it pins the carrier.
		 */
		if (t->event == TRACE_EV_OFFCPU && (t->flags & TRACE_F_VTHREAD) &&
		    !(t->flags & TRACE_F_PREEMPTED))
			t->flags |= TRACE_F_PINNED;
		d->stats.java++;
		break;
	case ASGST_JVM_TRACE:
		t->kind = TRACE_KIND_JVM;
		d->stats.jvm++;
		break;
	default:
		t->kind = TRACE_KIND_NATIVE;
		d->stats.native++;
		break;
	}
}

/*
 * A JVM's thread walked without its code map to its first frame through
 * code in files alone (a compiler or GC thread): nothing of it is missing.
 */
static bool native_whole(const struct decoder *d, const struct trace *t,
			 const struct asgst_ctx *ctx)
{
	if (!ctx->whole || !d->int_n)
		return false;
	for (uint32_t i = d->int_lo; i < d->int_lo + d->int_n &&
	     i < t->nframes; i++)
		if (t->frames[i].type != FRAME_NON_JAVA || !t->frames[i].module)
			return false;
	return true;
}

/* why the frames end, as a last frame */
static void trace_set_error(struct decoder *d, struct trace *t,
			    const struct asgst_ctx *ctx,
			    const struct codemap *cm, bool is_jvm, uint32_t max)
{
	/* a JVM without its map: why its Java frames are missing comes
	 * first, not where the native walk ran into them */
	if (is_jvm && !ctx->vm && !native_whole(d, t, ctx))
		set_error(d, t, ASGST_NO_CODEMAP, ctx->error ? ctx->stop_pc : 0,
			  cm ? "the code map has no VM record yet" :
			       "no code map: Java frames not decoded (agent not loaded?)",
			  max);
	else if (ctx->error)
		set_error(d, t, ctx->error, ctx->stop_pc, ctx->reason, max);
}

int decoder__trace(struct decoder *d, const struct sample *s,
		   struct codemap *cm, bool is_jvm, struct trace *t,
		   struct frame *buf, uint32_t max)
{
	const struct asgst_sample_hdr *h;
	const struct codemap_thread *th;
	struct asgst_ctx ctx;
	ASGST_CallTrace ct;
	uint32_t nk;
	int ret;

	if (!d || !s || !s->hdr || !t || !buf || max < 2)
		return -EINVAL;
	h = s->hdr;
	d->int_n = 0;
	d->key_ok = false;
	d->stats.samples++;
	trace_start(t, d->st, h, buf);
	nk = push_kernel_frames(d, s, t, max);
	if (t->event == TRACE_EV_OFFCPU)
		cut_tracepoint_frames(t);
	if (h->flags & ASGST_SF_NO_USER) {
		d->stats.native++;
		if (d->memo_fn && t->event != TRACE_EV_ALLOC &&
		    t->event != TRACE_EV_LOCK) {
			trace_key(d, s, nk, is_jvm, NULL, NULL, NULL, 0);
			if (d->memo_fn(d->memo_arg, &d->key))
				return 1;
		}
		return 0;
	}
	ret = push_user_frames(d, s, is_jvm ? cm : NULL, is_jvm, nk, t, max,
			       &ctx, &ct);
	if (ret)
		return ret;
	trace_set_kind(d, t, h, ctx.vm, &ct);
	if (ctx.vm && (th = codemap__thread(cm, h->ns_tid, h->ktime_ns)) &&
	    th->name)
		t->thread = th->name;
	trace_set_error(d, t, &ctx, cm, is_jvm, max);
	if (t->event == TRACE_EV_ALLOC || t->event == TRACE_EV_LOCK)
		jvm_event_frames(t, max);
	return 0;
}
