// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sample pipeline: records join a FIFO as they arrive (live samples left in
 * the ring buffer, others copied) and are decoded a little later
 * (decode_delay_ns), so the code map of a JVM has recorded the compiled
 * code a sample hit before the sample is decoded against it.
 * Off-CPU stacks join the FIFO once their weight is known (offcpu.c); what
 * is known of each process is kept by procs.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "capture/sample.h"
#include "decode/decode.h"
#include "jvm/codemap.h"
#include "profile/filter.h"
#include "profile/pipeline_int.h"
#include "profile/profile.h"
#include "symbols/debug_loader.h"
#include "python/py_merge.h"
#include "python/py_proc.h"
#include "symbols/symbolize.h"
#include "trace.h"
#include "util/clock.h"
#include "util/strtab.h"

#define DEFAULT_DELAY_NS	(400ull * 1000 * 1000)
#define ATTACH_HOLD_NS		(12ull * 1000 * 1000 * 1000)
/*
 * What the hold may keep: past it, samples decode without waiting for the
 * attaches (counted, attach_unheld), so that processes that keep looking
 * like JVMs being attached cannot make the recorder hold everyone's
 * samples, in the ring and copied out of it, without bound.
 */
#define ATTACH_HOLD_BYTES	(128ull << 20)
#define UPDATE_EVERY_NS		(50ull * 1000 * 1000)
/*
 * A batch starts once its oldest record has waited the decode delay and
 * BATCH_NS more, or BATCH_RECORDS are queued: then every record past the
 * delay decodes. What a batch costs beyond its samples (the decoder's
 * tables back in the cache, the code maps caught up) is paid a few times
 * a second, not at every poll; the count bounds what waits on a busy host.
 */
#define BATCH_NS		(200ull * 1000 * 1000)
/*
 * What the queue may hold before its oldest records decode ahead of their
 * delay (decoded_early): every switch's stack at a quarter of a million
 * switches a second is 400 MB/s, and the delay's worth of it would be a
 * quarter of a GiB.
 */
#define QUEUE_BYTES_MAX		(64ull << 20)
/* the end's wait for debug info still under way (pipeline_opts) */
#define DEFAULT_SETTLE_NS	(5ull * 1000 * 1000 * 1000)
/* stacks held for their modules' debug info take at most this */
#define HOLD_BYTES_MAX		(64u << 20)

/*
 * A stack held while its modules' DWARF is read (or fetched) on the
 * debug loader's thread: a copy of the decoded trace, its strings the
 * profile's, and for each frame the module it waits for (refs[i].mod
 * NULL: none). The ring buffer's record is let go as for any other.
 */
struct held_trace {
	struct held_trace *next;
	struct trace t;			/* t.frames: after refs */
	struct profile_values v;
	size_t bytes;
	struct sym_ref refs[];
};

#define BATCH_RECORDS		4096

static bool memo_off(void)
{
	const char *e = getenv("ASGST_STACK_MEMO");

	return e && !strcmp(e, "0");
}

/* decoder__set_memo's question, with the sample's stamps (decode_one) */
static bool memo_probe(void *arg, const struct decode_key *k)
{
	struct pipeline *pl = arg;

	return pl->mcur.on &&
	       stack_memo__find(pl->memo, k, &pl->mcur.st, pl->mcur.t,
				pl->mcur.horizon, &pl->mcur.stack,
				&pl->mcur.error);
}

struct pipeline *pipeline__new(struct profile *p, struct capture *c,
			       const struct pipeline_opts *o)
{
	struct pipeline *pl = calloc(1, sizeof(*pl));

	if (!pl)
		return NULL;
	pl->prof = p;
	pl->cap = c;
	if (o)
		pl->opts = *o;
	if (!pl->opts.decode_delay_ns)
		pl->opts.decode_delay_ns = DEFAULT_DELAY_NS;
	pl->st = profile__strtab(p);
	pl->sz = symbolizer__new(pl->st);
	pl->dec = pl->sz ? decoder__new(pl->sz, pl->st) : NULL;
	pl->frames = calloc(TRACE_MAX_FRAMES, sizeof(*pl->frames));
	pl->xframes = calloc(TRACE_MAX_FRAMES, sizeof(*pl->xframes));
	pl->xsrc = calloc(TRACE_MAX_FRAMES, sizeof(*pl->xsrc));
	pl->pyframes = calloc(TRACE_MAX_FRAMES, sizeof(*pl->pyframes));
	pl->pybuild = calloc(ASGST_PY_MAX_FRAMES, sizeof(*pl->pybuild));
	if (!pl->sz || !pl->dec || procs__init(pl) || !pl->frames ||
	    !pl->xframes || !pl->xsrc || !pl->pyframes || !pl->pybuild) {
		pipeline__free(pl);
		return NULL;
	}
	symbolizer__set_inlines(pl->sz, pl->opts.inlines);
	/* with inlined frames a trace also hangs on the modules' debug
	 * info, and a filter drops traces: neither is in the memo's stamps.
	 * ASGST_STACK_MEMO=0 turns it and the walk's native tails off: the
	 * tests' reference decode. */
	pl->memo_off = memo_off();
	if (!pl->opts.inlines && !pl->opts.filter && !pl->memo_off &&
	    (pl->memo = stack_memo__new()))
		decoder__set_memo(pl->dec, memo_probe, pl);
	pl->held_tail = &pl->held;
	if (pl->opts.inlines && pl->opts.debug_thread) {
		struct debug_loader_opts lo = {
			.urls = pl->opts.debuginfod_urls,
			.fetch_timeout_s = pl->opts.debuginfod_timeout_s,
		};

		pl->loader = debug_loader__new(&lo);
		if (!pl->loader) {
			pipeline__free(pl);
			return NULL;
		}
		symbolizer__set_debug_loader(pl->sz, pl->loader);
	}
	if (!pl->opts.settle_ns)
		pl->opts.settle_ns = DEFAULT_SETTLE_NS;
	return pl;
}

void pipeline__free(struct pipeline *pl)
{
	if (!pl)
		return;
	/* what the ring buffer still holds for us goes back to the kernel */
	for (struct queued *q = pl->queue.head; q; q = q->next)
		if (queued__in_ring(q))
			capture__release(pl->cap, q->rec);
	queue__free(&pl->queue);
	offcpu__free(&pl->offcpu);
	procs__free(pl);
	while (pl->held) {
		struct held_trace *h = pl->held;

		pl->held = h->next;
		for (uint32_t i = 0; i < h->t.nframes; i++)
			symbolizer__unref(pl->sz, &h->refs[i]);
		free(h);
	}
	free(pl->str_cache);
	free(pl->frames);
	free(pl->xframes);
	free(pl->xsrc);
	free(pl->pyframes);
	free(pl->pybuild);
	stack_memo__free(pl->memo);
	decoder__free(pl->dec);
	symbolizer__free(pl->sz);
	free(pl);
}

/* the reservation is of fixed size: keep only the part the counts cover */
static size_t record_used_len(const void *data, size_t len)
{
	struct sample s;
	const char *why;
	size_t used;

	if (((uintptr_t)data & 7) || sample__parse(data, len, &s, &why))
		return len;
	used = sample__used_len(&s);
	return used < len ? used : len;
}

/*
 * A sink keeps the records in the order they are decoded, which
 * report replays: an off-CPU stack is followed by the END that weighed it,
 * so a file cut between two periods holds both or neither.
 */
static void sink_record(struct pipeline *pl, const struct queued *q)
{
	const struct pipeline_sink *s = pl->opts.sink;

	s->sample(s->ctx, q->rec, record_used_len(q->rec, q->len));
	if (q->end)
		s->sample(s->ctx, q->end->data,
			  record_used_len(q->end->data, q->end->len));
}

/* an END: with its stack (q), else at once (report counts it stray too) */
static void sink_keep_end(struct pipeline *pl, struct queued *q,
			  const void *data, size_t len)
{
	struct queued *e = queued__new(data, len);

	if (q && e) {
		q->end = e;
		return;
	}
	if (e)
		pl->opts.sink->sample(pl->opts.sink->ctx, e->data,
				      record_used_len(e->data, e->len));
	free(e);
}

/*
 * The copy a record waits in: the bytes its counts cover (a sample without
 * a window is a fixed-size reservation), and for one with a window without
 * the gap the sampler leaves between the stacks it took and the window
 * (the room for the deepest stacks, a quarter of a JVM sample): the
 * window moves down, window_off and chunk_off with it, as the format
 * allows. Fewer bytes to copy from the ring, to keep for the delay and to
 * bring back into the cache when the sample is decoded.
 */
static struct queued *record_copy(const void *data, size_t len)
{
	const struct asgst_sample_hdr *h = data;
	struct asgst_sample_hdr *nh;
	struct queued *q;
	struct sample s;
	size_t used, head, gap;

	if (((uintptr_t)data & 7) || sample__parse(data, len, &s, NULL))
		return queued__new(data, len);
	used = sample__used_len(&s);
	if (used > len)
		used = len;
	head = (size_t)((const uint8_t *)(s.ustack + h->ustack_n) -
			(const uint8_t *)data);
	if (h->version < 2 || h->window_off <= head || h->window_off > used)
		return queued__new(data, used);
	gap = h->window_off - head;
	q = queued__new2(data, head, (const uint8_t *)data + h->window_off,
			 used - h->window_off);
	if (!q)
		return NULL;
	nh = (struct asgst_sample_hdr *)q->data;
	nh->window_off = (uint32_t)head;
	if (nh->chunk_len)
		nh->chunk_off -= (uint32_t)gap;
	if (nh->version >= 4 && nh->py_n)
		nh->py_off -= (uint32_t)gap;
	return q;
}

/*
 * Records held in the ring buffer take room the kernel could write to:
 * past a quarter of it, the oldest are copied out (as every record was
 * before), down to an eighth. The walk goes on from where the last one
 * stopped: the queue can hold a hundred thousand copied off-CPU stacks
 * between the held samples, and walking them all again at every relief
 * took most of the recorder's time.
 */
static void ring_relieve(struct pipeline *pl)
{
	size_t ring = capture__ring_bytes(pl->cap);
	struct queued *q, *prev = pl->relieved, *c;

	if (capture__held_bytes(pl->cap) <= ring / 4)
		return;
	for (q = prev ? prev->next : pl->queue.head;
	     q && capture__held_bytes(pl->cap) > ring / 8;
	     prev = q, q = q->next) {
		pl->stats.ring_walked++;
		if (!queued__in_ring(q))
			continue;
		c = record_copy(q->rec, q->len);
		if (!c)
			return;	/* held on: the ring fills, samples are lost */
		c->next = q->next;
		c->arrival_ns = q->arrival_ns;
		if (prev)
			prev->next = c;
		else
			pl->queue.head = c;
		if (pl->queue.tail == q)
			pl->queue.tail = c;
		capture__release(pl->cap, q->rec);
		queued__free(q);
		pl->stats.ring_copied++;
		q = c;
	}
	pl->relieved = prev;
}

/*
 * A CPython sample's code objects read as it arrives, not only when it
 * is decoded (a decode delay later): a process that exits meanwhile
 * would leave its last samples unnamed. The cache keeps them; an exited
 * process's cannot have been reused (py_proc__frame).
 */
static void warm_python(struct pipeline *pl, struct proc_state *ps,
			const void *data, size_t len)
{
	const struct asgst_sample_hdr *h = data;
	/* the index it will be decoded at (off-CPU stacks held for their
	 * END aside, which may come later) */
	uint64_t seq = pl->decode_seq + pl->queue.n;
	const char *func, *file;
	struct sample s;
	int32_t line;

	if (!ps->py || len < sizeof(*h) || h->version < 4 ||
	    !(h->flags & ASGST_SF_PY) || !h->py_n ||
	    ((uintptr_t)data & 7) || sample__parse(data, len, &s, NULL) ||
	    !s.py)
		return;
	for (uint32_t i = 0; i < s.hdr->py_n; i++)
		py_proc__frame(ps->py, pl->st, s.py[i].code, s.py[i].instr,
			       s.py[i].flags, pl->py_epoch, seq, seq, &func,
			       &file, &line);
}

int pipeline__push(struct pipeline *pl, const void *data, size_t len)
{
	const struct asgst_sample_hdr *h = data;
	bool hdr_ok = len >= SAMPLE_HDR_MIN && h->magic == ASGST_SAMPLE_MAGIC;
	uint64_t now = capture__consume_ns(pl->cap);
	struct proc_state *ps;
	struct queued *q;

	if (!now)
		now = clock__mono_ns();

	pl->stats.records++;
	pl->stats.record_bytes += len;
	if (hdr_ok && (ps = procs__get(pl, (pid_t)h->pid, h->comm))) {
		ps->arrival_ns = now;
		warm_python(pl, ps, data, len);
	}
	if (hdr_ok && h->ktime_ns > pl->last_ktime)
		pl->last_ktime = h->ktime_ns;
	if (hdr_ok && h->event == ASGST_EV_OFFCPU_END) {
		q = offcpu__end(&pl->offcpu, &pl->queue, h, now);
		if (pl->opts.sink)
			sink_keep_end(pl, q, data, len);
		return 0;
	}
	/*
	 * A sample live from the ring buffer waits there for its decode, no
	 * copy made (an off-CPU one is weighed first: copied, as is what
	 * report reads)
	 */
	if (hdr_ok && pl->cap && !pl->opts.offline &&
	    h->event != ASGST_EV_OFFCPU && !((uintptr_t)data & 7)) {
		q = queued__ref(data, len);
		if (q) {
			queue__push(&pl->queue, q, now);
			ring_relieve(pl);
			return PIPELINE_HELD;
		}
	}
	q = hdr_ok ? record_copy(data, len) : queued__new(data, len);
	if (!q)
		return -ENOMEM;
	if (hdr_ok && h->event == ASGST_EV_OFFCPU && h->tid &&
	    !((uintptr_t)q->data & 7)) {
		if (offcpu__hold(&pl->offcpu, &pl->queue, q, now)) {
			free(q);
			return -ENOMEM;
		}
		return 0;
	}
	queue__push(&pl->queue, q, now);
	return 0;
}

/*
 * The strings of a decoded trace as the profile's own (interned in pl->st,
 * which the profile shares), so profile__add_interned neither copies the
 * trace nor interns it again: a Java frame's class, method, signature and
 * source point into its code map, a stub's name too, and the profile would
 * otherwise look up every string of every frame, and compare those of the
 * code maps byte by byte (a freed name may share an address with a newer
 * one). Here a pointer maps to its interned copy, and a Java frame's four
 * at once, for as long as no code map may have freed a string
 * (pl->cm_epoch, moved by procs.c); the same few hundred come back sample
 * after sample. Direct-mapped, bounded.
 */
#define STR_CACHE_SLOTS		4096
#define JAVA_CACHE_SLOTS	1024

struct str_cache_ent {
	const char *src, *dst;
};

struct java_cache_ent {
	const char *src[4], *dst[4];	/* klass, method, signature, source */
};

struct str_cache {
	struct str_cache_ent s[STR_CACHE_SLOTS];
	struct java_cache_ent j[JAVA_CACHE_SLOTS];
};

static inline uint64_t ptr_hash(const void *p)
{
	return (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
}

static bool intern_str(struct pipeline *pl, const char **s)
{
	const char *src = *s, *dst;
	struct str_cache_ent *e;

	if (!src)
		return true;
	e = &pl->str_cache->s[(ptr_hash(src) >> 40) & (STR_CACHE_SLOTS - 1)];
	if (e->src == src) {
		*s = e->dst;
		return true;
	}
	dst = strtab__intern(pl->st, src);
	if (!dst)
		return false;
	e->src = src;
	e->dst = dst;
	*s = dst;
	return true;
}

static bool intern_java(struct pipeline *pl, struct frame *f)
{
	const char **fs[4] = { &f->klass, &f->method, &f->signature,
			       &f->source };
	struct java_cache_ent *e;
	uint64_t h;
	int i;

	h = ptr_hash(f->klass) ^ (ptr_hash(f->method) >> 7) ^
	    (ptr_hash(f->signature) >> 13);
	e = &pl->str_cache->j[(h >> 40) & (JAVA_CACHE_SLOTS - 1)];
	if (e->src[0] == f->klass && e->src[1] == f->method &&
	    e->src[2] == f->signature && e->src[3] == f->source) {
		for (i = 0; i < 4; i++)
			*fs[i] = e->dst[i];
		return true;
	}
	for (i = 0; i < 4; i++) {
		e->src[i] = *fs[i];
		if (!intern_str(pl, fs[i])) {
			e->src[0] = NULL;
			return false;
		}
		e->dst[i] = *fs[i];
	}
	return true;
}

/* true when every string of t is now pl->st's own */
static bool intern_trace(struct pipeline *pl, struct trace *t)
{
	if (!pl->str_cache &&
	    !(pl->str_cache = calloc(1, sizeof(*pl->str_cache))))
		return false;
	if (pl->str_cache_epoch != pl->cm_epoch) {
		memset(pl->str_cache, 0, sizeof(*pl->str_cache));
		pl->str_cache_epoch = pl->cm_epoch;
	}
	if (!intern_str(pl, &t->comm) || !intern_str(pl, &t->thread) ||
	    !intern_str(pl, &t->error_name) ||
	    !intern_str(pl, &t->container_id) || !intern_str(pl, &t->pod_uid) ||
	    !intern_str(pl, &t->ev_class) || !intern_str(pl, &t->service) ||
	    !intern_str(pl, &t->process))
		return false;
	for (uint32_t i = 0; i < t->nframes; i++) {
		struct frame *f = &t->frames[i];

		/* named through the decoder's memo: the strings are ours */
		if (pl->expanded ? pl->xsrc[i] >= 0 &&
				   decoder__frame_interned(pl->dec,
							   (uint32_t)pl->xsrc[i]) :
				   decoder__frame_interned(pl->dec, i))
			continue;
		if (f->klass && !intern_java(pl, f))
			return false;
		if (!f->klass && (!intern_str(pl, &f->method) ||
				  !intern_str(pl, &f->signature) ||
				  !intern_str(pl, &f->source)))
			return false;
		if (!intern_str(pl, &f->symbol) || !intern_str(pl, &f->module) ||
		    !intern_str(pl, &f->reason))
			return false;
	}
	return true;
}

/*
 * What one record adds to its stack, by event. An allocation's ev_weight
 * is the bytes it stands for (the sampled object scaled by the sampling
 * interval, at least the object itself); the objects that makes is that
 * divided by the object's size. The ev_* fields exist in version-3
 * headers only, which sample__parse requires of ALLOC and LOCK.
 */
static void sample_values(const struct asgst_sample_hdr *h,
			  struct profile_values *v)
{
	uint64_t size, bytes;

	memset(v, 0, sizeof(*v));
	v->count = 1;
	switch (h->event) {
	case ASGST_EV_OFFCPU:
		offcpu__weigh(h, &v->count, &v->weight_ns);
		break;
	case ASGST_EV_ALLOC:
		size = h->ev_size;
		bytes = h->ev_weight > size ? h->ev_weight : size;
		v->alloc_bytes = bytes;
		/* rounded to the nearest; bytes >= size: at least 1 */
		v->alloc_objects = !size ? 1 : bytes / size +
				   (bytes % size >= size - bytes % size);
		break;
	case ASGST_EV_LOCK:
		v->weight_ns = h->ev_weight;
		break;
	default:
		break;
	}
}

/*
 * Native frames get the functions the compiler inlined at their pcs, and
 * their source lines, from their modules' DWARF (symbolizer__inlines):
 * each inlined function a frame of its own before the frame it is inlined
 * into. The first frame after the kernel's is where the thread was; every
 * later one is a return address. The trace moves to pl->xframes when a
 * frame was added; frames past TRACE_MAX_FRAMES are left out at the root.
 */
static void expand_inlines(struct pipeline *pl, struct trace *t, pid_t pid)
{
	uint32_t k = 0, added = 0;
	bool call = false, dec = !pl->expanded;

	if (!pl->opts.inlines)
		return;
	for (uint32_t i = 0; i < t->nframes && k < TRACE_MAX_FRAMES; i++) {
		struct frame *f = &t->frames[i];
		uint32_t n = 0;

		if (f->type == FRAME_NON_JAVA) {
			n = symbolizer__inlines(pl->sz, pid, f, call,
						pl->xframes + k,
						TRACE_MAX_FRAMES - k - 1);
			for (uint32_t j = 0; j < n; j++)
				pl->xsrc[k + j] = -1;
			k += n;
			added += n;
		}
		if (f->type != FRAME_KERNEL)
			call = true;
		/* the decoder's own frames are interned by their index there */
		pl->xsrc[k] = dec ? (int32_t)i : -1;
		pl->xframes[k++] = *f;
	}
	if (!added)
		return;
	t->frames = pl->xframes;
	t->nframes = k;
	pl->expanded = true;
}

/* a decoded trace (pl->expanded says whether it is in xframes) into the
 * profile, unless the filter drops it */
static void add_trace(struct pipeline *pl, struct trace *t,
		      const struct profile_values *v)
{
	if (pl->opts.filter && !filter__apply(pl->opts.filter, t)) {
		pl->stats.filtered++;
		return;
	}
	/* what intern_trace could not intern, profile__add does (or fails) */
	if (intern_trace(pl, t) ?
	    profile__add_values_interned(pl->prof, t, v) :
	    profile__add_values(pl->prof, t, v))
		return;
	pl->stats.decoded++;
}

/* h's inlined frames put in, as far as its modules' info came; h freed */
static void release_held(struct pipeline *pl, struct held_trace *h)
{
	struct trace t = h->t;
	bool unready = false;
	uint32_t k = 0;

	for (uint32_t i = 0; i < h->t.nframes && k < TRACE_MAX_FRAMES; i++) {
		struct frame f = h->t.frames[i];
		uint32_t n;

		if (h->refs[i].mod) {
			if (!symbolizer__ref_ready(&h->refs[i]))
				unready = true;
			n = symbolizer__ref_inlines(pl->sz, &h->refs[i], &f,
						    pl->xframes + k,
						    TRACE_MAX_FRAMES - k - 1);
			for (uint32_t j = 0; j < n; j++)
				pl->xsrc[k + j] = -1;
			k += n;
		}
		pl->xsrc[k] = -1;
		pl->xframes[k++] = f;
	}
	for (uint32_t i = 0; i < h->t.nframes; i++)
		symbolizer__unref(pl->sz, &h->refs[i]);
	if (unready)
		pl->stats.inline_unready++;
	t.frames = pl->xframes;
	t.nframes = k;
	pl->expanded = true;
	add_trace(pl, &t, &h->v);
	pl->held_bytes -= h->bytes;
	pl->held_n--;
	free(h);
}

static bool held_ready(const struct held_trace *h)
{
	for (uint32_t i = 0; i < h->t.nframes; i++)
		if (!symbolizer__ref_ready(&h->refs[i]))
			return false;
	return true;
}

/* the held stacks that are ready (all: every one) go to the profile */
static void release_ready(struct pipeline *pl, bool all)
{
	struct held_trace **pp = &pl->held;

	while (*pp) {
		struct held_trace *h = *pp;

		if (!all && !held_ready(h)) {
			pp = &h->next;
			continue;
		}
		*pp = h->next;
		if (!*pp)
			pl->held_tail = pp;
		release_held(pl, h);
	}
}

void pipeline__settle(struct pipeline *pl, uint64_t wait_ns, bool all)
{
	uint64_t end = clock__mono_ns() + wait_ns;

	if (!pl || !pl->loader)
		return;
	for (;;) {
		uint64_t now = clock__mono_ns(), slice;

		slice = now < end ? end - now : 0;
		if (slice > 100ull * 1000 * 1000)
			slice = 100ull * 1000 * 1000;
		if (symbolizer__poll_debug(pl->sz, slice) && pl->held)
			release_ready(pl, false);
		if (!symbolizer__debug_loading(pl->sz) ||
		    clock__mono_ns() >= end)
			break;
	}
	if (pl->held)
		release_ready(pl, all);
}

/*
 * t waits for a module whose debug info is under way: held (a copy)
 * rather than named without its inlined frames; true when held. Past
 * HOLD_BYTES_MAX the oldest go as they are (a report waits for the
 * loader first: it has no ring buffer to keep up with).
 */
static bool hold_trace(struct pipeline *pl, struct trace *t, pid_t pid,
		       const struct profile_values *v)
{
	struct held_trace *h;
	bool any = false, call = false;
	size_t bytes;

	bytes = sizeof(*h) + t->nframes * (sizeof(struct sym_ref) +
					   sizeof(struct frame));
	h = malloc(bytes);
	if (!h)
		return false;
	for (uint32_t i = 0; i < t->nframes; i++) {
		const struct frame *f = &t->frames[i];

		h->refs[i].mod = NULL;
		if (f->type == FRAME_NON_JAVA &&
		    symbolizer__inline_ref(pl->sz, pid, f, call, &h->refs[i]) &&
		    !symbolizer__ref_ready(&h->refs[i]))
			any = true;
		if (f->type != FRAME_KERNEL)
			call = true;
	}
	/* the strings must outlive the code maps they may come from (t as
	 * decoded, or merged with Python frames: pl->expanded says) */
	if (!any || !intern_trace(pl, t)) {
		for (uint32_t i = 0; i < t->nframes; i++)
			symbolizer__unref(pl->sz, &h->refs[i]);
		free(h);
		return false;
	}
	h->next = NULL;
	h->t = *t;
	h->t.frames = (struct frame *)&h->refs[t->nframes];
	memcpy(h->t.frames, t->frames, t->nframes * sizeof(struct frame));
	h->v = *v;
	h->bytes = bytes;
	if (pl->held_bytes + bytes > HOLD_BYTES_MAX) {
		if (pl->opts.offline)
			pipeline__settle(pl, pl->opts.settle_ns, false);
		while (pl->held && pl->held_bytes + bytes > HOLD_BYTES_MAX) {
			struct held_trace *o = pl->held;

			pl->held = o->next;
			if (!pl->held)
				pl->held_tail = &pl->held;
			release_held(pl, o);
		}
	}
	*pl->held_tail = h;
	pl->held_tail = &h->next;
	pl->held_n++;
	pl->held_bytes += bytes;
	pl->stats.inline_held++;
	if (pl->held_n > pl->stats.inline_held_peak)
		pl->stats.inline_held_peak = pl->held_n;
	return true;
}

/*
 * A CPython thread's frames (the sampler's list, innermost first) named
 * from its process and merged into the trace in place of the eval loop's
 * activations (python/py_merge.h). A frame whose code object cannot be
 * read is kept, unnamed: the chain stays whole. The trace moves to
 * pl->pyframes.
 */
static void merge_python(struct pipeline *pl, struct proc_state *ps,
			 const struct sample *s, struct trace *t)
{
	uint32_t n = 0;

	if (!ps->py || !s->py || !s->hdr->py_n)
		return;
	for (uint32_t i = 0; i < s->hdr->py_n && i < ASGST_PY_MAX_FRAMES; i++) {
		const struct asgst_py_frame *pf = &s->py[i];
		struct frame *f = &pl->pybuild[n];
		const char *func = NULL, *file = NULL;
		int32_t line = -1;

		memset(f, 0, sizeof(*f));
		f->type = FRAME_PYTHON;
		f->bci = -1;
		f->comp_level = -1;
		f->pc = pf->code;
		if (py_proc__frame(ps->py, pl->st, pf->code, pf->instr,
				   pf->flags, pl->py_epoch, pl->decode_seq,
				   pl->decode_seq + pl->queue.n + 1, &func,
				   &file, &line)) {
			f->method = func;
			f->source = file;
		} else {
			pl->stats.py_unnamed++;
		}
		f->line = line;
		pl->pyentry[n] = pf->flags & ASGST_PYF_ENTRY;
		n++;
	}
	t->nframes = py_merge(t->frames, t->nframes, pl->pybuild, pl->pyentry,
			      n, pl->opts.python_native, pl->pyframes,
			      TRACE_MAX_FRAMES);
	t->frames = pl->pyframes;
	/* the decoder's memo of interned frames is by its own index */
	for (uint32_t i = 0; i < t->nframes; i++)
		pl->xsrc[i] = -1;
	pl->expanded = true;
	pl->stats.py_samples++;
}

int pipeline__add_pycode(struct pipeline *pl, pid_t pid,
			 const struct py_code_view *v)
{
	struct proc_state *ps = procs__get(pl, pid, "");

	if (!ps)
		return -ENOMEM;
	if (!ps->py && !(ps->py = py_proc__new_offline(pid, v->version)))
		return -EINVAL;	/* a version this reader has no layout of */
	/* what came before it in the file was decoded with what was before */
	pipeline__process(pl, 0, true);
	return py_proc__add_code(ps->py, pl->st, v);
}

/*
 * The stamps a trace of ps's sample s hangs on beside its key
 * (stack_memo.h), and a JVM's walk beside its window (its native tails,
 * decode/walk.h); neither memo is asked for a CPython thread's sample
 * (its frames come from the process's code objects, read as they change).
 */
static void memo_stamp(struct pipeline *pl, const struct proc_state *ps,
		       const struct sample *s, const struct codemap *cm)
{
	struct stack_memo_stamp *st = &pl->mcur.st;
	uint64_t w[3];

	pl->mcur.on = false;
	decoder__set_stamp(pl->dec, NULL, 0);
	if (pl->memo_off || ps->py || s->py)
		return;
	st->prof_epoch = profile__epoch(pl->prof);
	st->cm_stamp = codemap__stamp(cm, &pl->mcur.horizon);
	st->names_gen = symbolizer__names_stamp(pl->sz, (pid_t)s->hdr->pid,
						&st->names_epoch);
	if (!st->names_gen)
		return;
	st->comm = ps->comm;
	st->container_id = ps->container_id;
	st->pod_uid = ps->pod_uid;
	pl->mcur.t = s->hdr->ktime_ns;
	pl->mcur.jit = symbolizer__jit_lookups(pl->sz);
	pl->mcur.on = pl->memo != NULL;
	w[0] = st->cm_stamp;
	w[1] = st->names_gen;
	w[2] = st->names_epoch;
	decoder__set_stamp(pl->dec, w, pl->mcur.horizon);
}

/*
 * t went to the profile: kept by its key, when nothing its names hang on
 * moved while it was decoded (the maps read again, a JIT map asked) and
 * the map answers the same at later times.
 */
static void memo_keep(struct pipeline *pl, const struct codemap *cm,
		      const struct trace *t)
{
	const struct decode_key *k = decoder__key(pl->dec);
	uint64_t epoch, horizon;

	if (!pl->mcur.on || !k || pl->expanded ||
	    symbolizer__jit_lookups(pl->sz) != pl->mcur.jit ||
	    symbolizer__names_stamp(pl->sz, t->pid, &epoch) !=
		    pl->mcur.st.names_gen ||
	    epoch != pl->mcur.st.names_epoch ||
	    codemap__stamp(cm, &horizon) != pl->mcur.st.cm_stamp ||
	    (pl->mcur.st.cm_stamp && pl->mcur.t < horizon) ||
	    profile__last_stack(pl->prof) == SIZE_MAX)
		return;
	stack_memo__keep(pl->memo, k, &pl->mcur.st, pl->mcur.t,
			 profile__last_stack(pl->prof), t->error != 0);
}

static void decode_one(struct pipeline *pl, const struct queued *q,
		       uint64_t now)
{
	struct sample s;
	struct trace t;
	struct proc_state *ps;
	struct codemap *cm;
	bool jvm;
	const struct codemap_thread *th;
	const char *why = NULL;
	struct profile_values v;
	uint64_t unready;
	struct frame *frames;
	uint32_t nframes;
	uint64_t decoded;
	bool merged;

	if (sample__parse(q->rec, q->len, &s, &why)) {
		pl->stats.bad_records++;
		return;
	}
	if (s.hdr->window_len) {
		pl->stats.windows++;
		pl->stats.window_bytes += s.hdr->window_len;
	}
	ps = procs__get(pl, (pid_t)s.hdr->pid, s.hdr->comm);
	if (!ps)
		return;
	if (ps->foreign) {
		pl->stats.filtered++;	/* record --container: not its */
		return;
	}
	procs__on_sample(pl, ps, now, s.hdr->comm);
	memset(&t, 0, sizeof(t));
	/* a JVM's samples from the moment it was known to be one */
	jvm = ps->is_jvm && pl->decode_seq >= ps->jvm_from_seq;
	cm = jvm && ps->cm && codemap__ok(ps->cm) ? ps->cm : NULL;
	/* methods named as they were when the sample was taken */
	codemap__set_decode_time(cm, s.hdr->ktime_ns);
	/*
	 * The window was written by the sampler on another CPU and has
	 * waited since: the walk's reads of it, a frame at a time, are its
	 * main cost. All of it asked for at once, the misses overlap (about
	 * a tenth off the decode, against one record ahead: no better).
	 */
	for (uint32_t o = 0; s.window && o < s.hdr->window_len; o += 64)
		__builtin_prefetch(s.window + o);
	memo_stamp(pl, ps, &s, cm);
	if (decoder__trace(pl->dec, &s, cm, jvm, &t, pl->frames,
			   TRACE_MAX_FRAMES) == 1) {
		/* the memo had it: the stack its key went to */
		sample_values(s.hdr, &v);
		if (!profile__add_to_stack(pl->prof, pl->mcur.stack, &v)) {
			pl->stats.decoded++;
			if (pl->mcur.error)
				pl->stats.decode_errors++;
		}
		return;
	}
	t.comm = ps->comm;
	t.container_id = ps->container_id;
	t.pod_uid = ps->pod_uid;
	t.service = ps->service;
	t.process = ps->process;
	if (cm && (th = codemap__thread(cm, s.hdr->ns_tid,
					    s.hdr->ktime_ns)) && th->name)
		t.thread = th->name;
	if (!t.thread)
		t.thread = strtab__intern_n(pl->st, s.hdr->comm,
					    ASGST_COMM_LEN);
	if (t.error)
		pl->stats.decode_errors++;
	sample_values(s.hdr, &v);
	/*
	 * Python frames first (they need the record, which is let go after
	 * this), then the native frames left get their inlined functions:
	 * the same order for a stack held for its modules' debug info.
	 */
	pl->expanded = false;
	merge_python(pl, ps, &s, &t);
	frames = t.frames;
	nframes = t.nframes;
	merged = pl->expanded;
	unready = symbolizer__inlines_unready(pl->sz);
	expand_inlines(pl, &t, (pid_t)s.hdr->pid);
	/* a module's debug info under way: the trace as decoded is held */
	if (pl->loader && symbolizer__inlines_unready(pl->sz) != unready) {
		t.frames = frames;
		t.nframes = nframes;
		pl->expanded = merged;
		if (hold_trace(pl, &t, (pid_t)s.hdr->pid, &v))
			return;
		expand_inlines(pl, &t, (pid_t)s.hdr->pid);
	}
	decoded = pl->stats.decoded;
	add_trace(pl, &t, &v);
	if (pl->stats.decoded != decoded)
		memo_keep(pl, cm, &t);
}

static void process(struct pipeline *pl, uint64_t now_ns, bool flush)
{
	struct queued *q;
	bool updated = false, cut = false;

	procs__reap_attaches(pl, flush);
	/* stacks whose modules' debug info came since go to the profile */
	pipeline__settle(pl, 0, false);
	pl->py_epoch++;
	if (!now_ns)
		now_ns = clock__mono_ns();
	/* new threads reach the sampler soon, samples or not */
	if (!pl->opts.offline && now_ns > pl->last_update_ns + UPDATE_EVERY_NS) {
		procs__update_codemaps(pl, now_ns);
		updated = true;
	}
	if (!pl->queue.head)
		return;
	/*
	 * While an agent is being attached, hold the queue (up to the attach
	 * timeout): the samples taken meanwhile decode once the map is there.
	 */
	if (!flush && procs__attach_pending(pl) &&
	    pl->queue.head->arrival_ns + ATTACH_HOLD_NS > now_ns) {
		if (pl->queue.bytes < ATTACH_HOLD_BYTES)
			return;
		cut = true;
	}
	if (!flush && pl->queue.n < BATCH_RECORDS &&
	    pl->queue.bytes <= QUEUE_BYTES_MAX &&
	    pl->queue.head->arrival_ns + pl->opts.decode_delay_ns + BATCH_NS >
		    now_ns)
		return;
	while ((q = pl->queue.head)) {
		if (!flush && q->arrival_ns + pl->opts.decode_delay_ns > now_ns) {
			if (pl->queue.bytes <= QUEUE_BYTES_MAX)
				break;
			pl->stats.decoded_early++;
		}
		if (!updated) {
			/* catch the code maps up once per batch */
			procs__update_codemaps(pl, now_ns);
			updated = true;
		}
		queue__pop(&pl->queue);
		if (q == pl->relieved)
			pl->relieved = NULL;
		if (cut && q->arrival_ns + ATTACH_HOLD_NS > now_ns)
			pl->stats.attach_unheld++;
		/* the next record has been out of the cache since it came (the
		 * decode delay): fetch its header while this one decodes (all
		 * of it measured slower: the prefetches queue up behind the
		 * misses of the decode) */
		if (pl->queue.head) {
			__builtin_prefetch(pl->queue.head);
			__builtin_prefetch((const char *)pl->queue.head->rec + 64);
		}
		if (pl->opts.sink)
			sink_record(pl, q);
		decode_one(pl, q, now_ns);
		pl->decode_seq++;
		if (queued__in_ring(q))
			capture__release(pl->cap, q->rec);
		queued__free(q);
	}
}

/*
 * What the live decode costs is CPU time, not wall time: on a busy host
 * the recorder waits for a CPU inside a batch as long as it works in it.
 * The process's CPU time is also noted once the first WARM_NS of decoding
 * are over (modules, kernel symbols and code maps read for the first
 * time), so --stats can tell the steady cost a sample from the start-up's.
 */
#define WARM_NS		(3ull * 1000 * 1000 * 1000)

void pipeline__process(struct pipeline *pl, uint64_t now_ns, bool flush)
{
	uint64_t t0 = clock__cpu_ns(CLOCK_THREAD_CPUTIME_ID), t1;
	uint64_t decoded = pl->stats.decoded;

	process(pl, now_ns, flush);
	t1 = clock__cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	pl->stats.decode_cpu_ns += t1 > t0 ? t1 - t0 : 0;
	if (pl->opts.offline || pl->stats.warm_cpu_ns)
		return;
	if (!now_ns)
		now_ns = clock__mono_ns();
	if (!pl->first_batch_ns) {
		if (pl->stats.decoded != decoded)
			pl->first_batch_ns = now_ns;
	} else if (now_ns >= pl->first_batch_ns + WARM_NS) {
		pl->stats.warm_cpu_ns = clock__cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
		pl->stats.warm_records = pl->stats.records;
		pl->stats.warm_decode_cpu_ns = pl->stats.decode_cpu_ns;
		pl->stats.warm_decoded = pl->stats.decoded;
	}
}

void pipeline__finish(struct pipeline *pl, uint64_t end_ns)
{
	uint64_t end = end_ns > pl->last_ktime ? end_ns : pl->last_ktime;

	offcpu__flush(&pl->offcpu, &pl->queue, end, clock__mono_ns());
	pipeline__process(pl, 0, true);
	pipeline__settle(pl, pl->opts.settle_ns, true);
	/* the steady state ends here: writing the outputs is not a sample's */
	pl->stats.finish_cpu_ns = clock__cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
}

void pipeline__symbolizer_stats(const struct pipeline *pl,
				struct symbolizer_stats *out)
{
	symbolizer__stats(pl->sz, out);
}

void pipeline__stats(const struct pipeline *pl, struct pipeline_stats *out)
{
	*out = pl->stats;
	out->queued = pl->queue.n;
	out->offcpu_no_end = pl->offcpu.no_end;
	out->offcpu_stray_end = pl->offcpu.stray_end;
	if (pl->dec) {
		struct decoder_stats ds;

		decoder__stats(pl->dec, &ds);
		out->tail_hits = ds.tail_hits;
	}
	if (pl->memo) {
		struct stack_memo_stats ms;

		stack_memo__stats(pl->memo, &ms);
		out->memo_hits = ms.hits;
		out->memo_kept = ms.kept;
	}
	if (pl->loader) {
		struct debug_loader_stats ls;

		debug_loader__stats(pl->loader, &ls);
		out->debuginfod_fetches = ls.fetches;
		out->debuginfod_fetched = ls.fetched;
		out->debuginfod_failed = ls.fetch_failed;
		out->debuginfod_capped = ls.fetch_capped;
		out->debuginfod_ns = ls.fetch_ns;
	}
}

struct symbolizer *pipeline__symbolizer(struct pipeline *pl)
{
	return pl ? pl->sz : NULL;
}

static void put_build_id(void *ctx, const char *module, const char *hex)
{
	profile__set_build_id(ctx, module, hex);
}

void pipeline__annotate(struct pipeline *pl, struct profile *p)
{
	if (!pl || !p)
		return;
	/* sampled off-CPU stacks to their threads' exact sums */
	offcpu__calibrate(&pl->offcpu, p);
	if (pl->sz)
		symbolizer__each_build_id(pl->sz, put_build_id, p);
	/* the names a process has now: a JVM found late (an exec'd java)
	 * had its launcher's before, and report knows only these */
	for (size_t i = 0; i < profile__nstacks(p); i++) {
		const struct trace *t = &profile__stack(p, i)->trace;
		const char *svc, *proc;

		if (!procs__names(pl, t->pid, &svc, &proc) &&
		    (svc != t->service || proc != t->process))
			profile__set_names(p, i, svc, proc);
	}
}
