// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sample pipeline: records are copied into a FIFO as they arrive and decoded
 * a little later (decode_delay_ns), so the code map of a JVM has recorded the
 * compiled code a sample hit before the sample is decoded against it. A
 * process is looked at the first time one of its samples arrives (its maps
 * are cached then, so samples of a process that exits soon after still
 * symbolize).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jvm/attach.h"
#include "capture/capture.h"
#include "jvm/codemap.h"
#include "decode/decode.h"
#include "profile/filter.h"
#include "jvm/jvm_discover.h"
#include "symbols/maps.h"
#include "profile/pipeline.h"
#include "profile/profile.h"
#include "output/raw.h"
#include "capture/sample.h"
#include "util/strtab.h"
#include "symbols/symbolize.h"
#include "trace.h"
#include "util/u64map.h"

#define DEFAULT_DELAY_NS	(400ull * 1000 * 1000)
#define CODEMAP_RETRY_NS	(1000ull * 1000 * 1000)
#define ATTACH_HOLD_NS		(12ull * 1000 * 1000 * 1000)
#define UPDATE_EVERY_NS		(50ull * 1000 * 1000)

struct raw_tap_ctx;
struct jt_sync;

struct proc_state {
	pid_t pid;
	bool used;
	bool is_jvm;
	bool map_failed;	/* reported once, Java decoding off */
	bool agent_off_said;	/* "the agent is off" said once */
	const char *comm;	/* process comm, interned */
	struct codemap *cm;
	struct raw_tap_ctx *tap;	/* raw recordings only */
	struct jt_sync *jts;		/* JavaThreads pushed to the kernel */
	uint64_t jvm_from_seq;		/* see proc_became_jvm() */
	bool attach_tried;
	pid_t attach_child;		/* > 0 while an attach runs */
	uint64_t attach_start_ns;
	uint64_t cm_next_try_ns;
};

struct queued {
	struct queued *next;
	uint64_t arrival_ns;
	size_t len;
	uint64_t data[];	/* 8-aligned record copy */
};

struct pipeline {
	struct profile *prof;
	struct capture *cap;
	struct pipeline_opts opts;
	struct strtab *st;	/* the profile's */
	struct symbolizer *sz;
	struct decoder *dec;
	struct proc_state *procs;	/* open addressing by pid */
	size_t procs_cap;
	size_t procs_n;
	struct queued *head, *tail;
	struct frame *frames;
	uint64_t decode_seq;		/* samples decoded so far: their index */
	uint64_t last_update_ns;	/* code maps last caught up */
	/* off-CPU records waiting for their END: tid -> struct queued *
	 * (1: none) */
	struct u64map offcpu_pending;
	uint64_t last_ktime;		/* newest record time seen */
	struct pipeline_stats stats;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void proc_try_codemap(struct pipeline *pl, struct proc_state *ps,
			     uint64_t now);
static void reap_attaches(struct pipeline *pl, bool block);

/*
 * The kernel sampler reads thread state, anchor and continuation entry
 * from a thread's JavaThread: tell it where each thread's is, as the code
 * map's THREAD records come in, and forget ended threads.
 */
struct jt_sync {
	struct capture *cap;
	pid_t pid;
	struct u64map pushed;	/* tid -> JavaThread* pushed */
	const struct codemap *cm;
	bool failed;		/* map full or gone: said nothing, stop */
	bool cont_pushed;	/* the JVM's virtual-thread layout */
};

/* the virtual-thread layout, once the code map has it */
static void jt_sync_cont(struct jt_sync *j)
{
	const struct cm_cont *c = codemap__cont(j->cm);
	struct asgst_jvm_cont v;

	if (j->cont_pushed || !c)
		return;
	memset(&v, 0, sizeof(v));
	v.entry_cont = c->entry_cont;
	v.cont_tail = c->cont_tail;
	v.chunk_size = c->chunk_size;
	v.chunk_sp = c->chunk_sp;
	v.chunk_argsize = c->chunk_argsize;
	v.chunk_bottom = c->chunk_bottom;
	v.chunk_stack = c->chunk_stack;
	v.oop_size = c->oop_size;
	v.oop_base = c->oop_base;
	v.oop_shift = c->oop_shift;
	v.chunk_parent = c->chunk_parent;
	j->cont_pushed = !capture__set_jvm_cont(j->cap, j->pid, &v);
}

static void jt_sync__free(struct jt_sync *j)
{
	if (!j)
		return;
	u64map__free(&j->pushed);
	free(j);
}

/* a field of a struct inside the JavaThread; -1 (CM_ABSENT) if either is */
static int32_t jt_off(int32_t base, int32_t field)
{
	return base < 0 || field < 0 ? -1 : base + field;
}

static void jt_on_thread(void *ctx, const struct codemap_thread *th,
			 bool alive)
{
	struct jt_sync *j = ctx;
	const struct cm_vm_consts *vm = codemap__vm(j->cm);
	struct asgst_jthread v;

	if (j->failed || !vm || !th->java_thread || !th->tid)
		return;
	if (!alive) {
		if (u64map__get(&j->pushed, th->tid) != th->java_thread)
			return;	/* its tid went to a newer thread */
		u64map__put(&j->pushed, th->tid, 1);	/* 1: none */
		capture__set_jthread(j->cap, j->pid, th->tid, NULL);
		return;
	}
	memset(&v, 0, sizeof(v));
	v.java_thread = th->java_thread;
	/* CM_ABSENT is -1, which the sampler reads as absent too */
	v.off_state = vm->jt_thread_state;
	v.off_last_sp = jt_off(vm->jt_anchor, vm->anchor_last_sp);
	v.off_last_pc = jt_off(vm->jt_anchor, vm->anchor_last_pc);
	v.off_last_fp = jt_off(vm->jt_anchor, vm->anchor_last_fp);
	v.off_cont_entry = vm->jt_cont_entry;
	if (capture__set_jthread(j->cap, j->pid, th->tid, &v) ||
	    u64map__put(&j->pushed, th->tid, th->java_thread))
		j->failed = true;
}

static void proc_sync_threads(struct pipeline *pl, struct proc_state *ps)
{
	if (!pl->cap || ps->jts || !ps->cm)
		return;
	ps->jts = calloc(1, sizeof(*ps->jts));
	if (!ps->jts)
		return;
	ps->jts->cap = pl->cap;
	ps->jts->pid = ps->pid;
	ps->jts->cm = ps->cm;
	codemap__set_thread_cb(ps->cm, jt_on_thread, ps->jts);
	jt_sync_cont(ps->jts);
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
	pl->procs_cap = 256;
	pl->procs = calloc(pl->procs_cap, sizeof(*pl->procs));
	pl->frames = calloc(TRACE_MAX_FRAMES, sizeof(*pl->frames));
	if (!pl->sz || !pl->dec || !pl->procs || !pl->frames) {
		pipeline__free(pl);
		return NULL;
	}
	return pl;
}

void pipeline__free(struct pipeline *pl)
{
	struct queued *q, *n;

	if (!pl)
		return;
	for (q = pl->head; q; q = n) {
		n = q->next;
		free(q);
	}
	for (size_t i = 0; i < pl->offcpu_pending.cap; i++)
		if (pl->offcpu_pending.vals[i] > 1)
			free((void *)(uintptr_t)pl->offcpu_pending.vals[i]);
	u64map__free(&pl->offcpu_pending);
	if (pl->procs)
		reap_attaches(pl, true);
	for (size_t i = 0; pl->procs && i < pl->procs_cap; i++) {
		codemap__free(pl->procs[i].cm);
		free(pl->procs[i].tap);
		jt_sync__free(pl->procs[i].jts);
	}
	free(pl->procs);
	free(pl->frames);
	decoder__free(pl->dec);
	symbolizer__free(pl->sz);
	free(pl);
}

static struct proc_state *proc_slot(struct proc_state *tab, size_t cap,
				    pid_t pid)
{
	size_t i = ((size_t)pid * 2654435761u) & (cap - 1);

	while (tab[i].used && tab[i].pid != pid)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int procs_grow(struct pipeline *pl)
{
	size_t ncap = pl->procs_cap * 2;
	struct proc_state *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < pl->procs_cap; i++)
		if (pl->procs[i].used)
			*proc_slot(nt, ncap, pl->procs[i].pid) = pl->procs[i];
	free(pl->procs);
	pl->procs = nt;
	pl->procs_cap = ncap;
	return 0;
}

static const char *read_comm(struct strtab *st, pid_t pid)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return strtab__intern(st, buf);
}


/* raw recordings keep each code map's bytes as the reader consumed them */
struct raw_tap_ctx {
	struct raw_writer *raw;
	pid_t pid;
};

static void raw_tap(void *ctx, uint64_t off, const void *buf, size_t len)
{
	const struct raw_tap_ctx *t = ctx;
	struct raw_codemap rc = { .pid = (uint32_t)t->pid, .offset = off };

	raw_writer__chunk(t->raw, RAW_CODEMAP, &rc, sizeof(rc), buf, len);
}

/*
 * Inject the agent into a JVM that has none, in a child process so the
 * recording goes on meanwhile (an attach can take a second or more).
 */
static void proc_start_attach(struct pipeline *pl, struct proc_state *ps)
{
	pid_t c;

	if (ps->attach_tried || pl->opts.no_attach || !pl->opts.agent_path ||
	    pl->opts.offline)
		return;
	ps->attach_tried = true;
	if (jvm_discover__agent_loaded(ps->pid) > 0)
		return;		/* loaded, but no map: it turned itself off */
	if (jvm_discover__attach_disabled(ps->pid)) {
		if (!pl->opts.quiet)
			fprintf(stderr, "asgst-bpf: JVM %d runs with "
				"-XX:+DisableAttachMechanism: its Java frames "
				"will not be decoded (start it with -agentpath)\n",
				(int)ps->pid);
		return;
	}
	fflush(stderr);
	c = fork();
	if (c == 0) {
		char out[512], err[512];
		int rc = attach__load_agent(ps->pid, pl->opts.agent_path, NULL,
					    out, sizeof(out), err, sizeof(err));

		if (rc && !pl->opts.quiet)
			fprintf(stderr, "asgst-bpf: cannot attach to JVM %d: %s "
				"(its Java frames will not be decoded)\n",
				(int)ps->pid, err);
		_exit(rc ? 1 : 0);
	}
	if (c > 0) {
		ps->attach_child = c;
		ps->attach_start_ns = mono_ns();
	}
}

/* reap finished attaches (all of them, waiting, when block) */
static void reap_attaches(struct pipeline *pl, bool block)
{
	for (size_t i = 0; i < pl->procs_cap; i++) {
		struct proc_state *ps = &pl->procs[i];
		int status;

		if (!ps->used || ps->attach_child <= 0)
			continue;
		if (waitpid(ps->attach_child, &status, block ? 0 : WNOHANG) !=
		    ps->attach_child)
			continue;
		ps->attach_child = 0;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			pl->stats.attached++;
			if (!pl->opts.quiet)
				fprintf(stderr, "asgst-bpf: attached the agent "
					"to JVM %d\n", (int)ps->pid);
			ps->cm_next_try_ns = 0;
			proc_try_codemap(pl, ps, mono_ns());
		}
	}
}

static bool attach_pending(const struct pipeline *pl)
{
	for (size_t i = 0; i < pl->procs_cap; i++)
		if (pl->procs[i].used && pl->procs[i].attach_child > 0)
			return true;
	return false;
}

/* once per JVM: its agent refused it or turned itself off */
static void proc_say_agent_off(struct pipeline *pl, struct proc_state *ps)
{
	const struct cm_file_header *h = codemap__header(ps->cm);

	if (ps->agent_off_said || !h || !(h->flags & CM_F_DISABLED))
		return;
	ps->agent_off_said = true;
	if (!pl->opts.quiet)
		fprintf(stderr, "asgst-bpf: the agent in JVM %d is off (%s): its "
			"Java frames will not be decoded\n", (int)ps->pid,
			h->disabled_reason);
}

static void proc_try_codemap(struct pipeline *pl, struct proc_state *ps,
			     uint64_t now)
{
	char err[512];
	int rc;

	if (ps->cm || ps->map_failed || now < ps->cm_next_try_ns ||
	    pl->opts.offline)
		return;
	ps->cm_next_try_ns = now + CODEMAP_RETRY_NS;
	rc = codemap__open_pid(&ps->cm, ps->pid, err, sizeof(err));
	if (rc == -ENOENT)
		proc_start_attach(pl, ps);
	if (rc == -ENOENT || rc == -EAGAIN)
		return;		/* no agent (yet), or still starting: retry */
	if (rc) {
		ps->map_failed = true;
		if (!pl->opts.quiet)
			fprintf(stderr, "asgst-bpf: %s\n", err);
		return;
	}
	pl->stats.jvms_decoded++;
	proc_say_agent_off(pl, ps);
	proc_sync_threads(pl, ps);
	if (pl->opts.raw && (ps->tap = malloc(sizeof(*ps->tap)))) {
		ps->tap->raw = pl->opts.raw;
		ps->tap->pid = ps->pid;
		codemap__set_tap(ps->cm, raw_tap, ps->tap);
	}
}

/*
 * seq: the decode index from which the process's samples are decoded as a
 * JVM's (raw files keep it, so report decides sample by sample as the live
 * decode did).
 */
static void proc_became_jvm(struct pipeline *pl, struct proc_state *ps,
			    uint64_t seq)
{
	ps->is_jvm = true;
	ps->jvm_from_seq = seq;
	pl->stats.jvms++;
	if (pl->cap)
		capture__set_window(pl->cap, ps->pid, true);
	proc_try_codemap(pl, ps, mono_ns());
}

/* first sight of a process: cache what it is while it is still there */
static struct proc_state *proc_get(struct pipeline *pl, pid_t pid,
				   const char *thread_comm)
{
	struct proc_state *ps;

	ps = proc_slot(pl->procs, pl->procs_cap, pid);
	if (ps->used)
		return ps;
	if ((pl->procs_n + 1) * 2 > pl->procs_cap) {
		if (procs_grow(pl))
			return NULL;
		ps = proc_slot(pl->procs, pl->procs_cap, pid);
	}
	memset(ps, 0, sizeof(*ps));
	ps->used = true;
	ps->pid = pid;
	pl->procs_n++;
	pl->stats.processes++;
	if (pl->opts.offline) {
		/* not recorded as a process: native frames, as far as they go */
		ps->comm = strtab__intern_n(pl->st, thread_comm,
					    ASGST_COMM_LEN);
		return ps;
	}
	ps->comm = read_comm(pl->st, pid);
	if (!ps->comm)
		ps->comm = strtab__intern_n(pl->st, thread_comm,
					    ASGST_COMM_LEN);
	/* the sample that brought us here is the next to be queued */
	if (symbolizer__is_jvm(pl->sz, pid))
		proc_became_jvm(pl, ps, pl->decode_seq + pl->stats.queued);
	return ps;
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

static void enqueue(struct pipeline *pl, struct queued *q)
{
	q->next = NULL;
	q->arrival_ns = mono_ns();
	if (pl->tail)
		pl->tail->next = q;
	else
		pl->head = q;
	pl->tail = q;
	pl->stats.queued++;
}

static struct asgst_sample_hdr *queued_hdr(struct queued *q)
{
	return (struct asgst_sample_hdr *)q->data;
}

/*
 * Off-CPU: a thread's stack is recorded as it leaves the CPU, and its
 * weight (the time until it ran again) arrives later in an END record of
 * the same tid and time; the stack waits for it here. A thread still off
 * the CPU when the recording ends is weighed up to its end.
 */
static void offcpu_end(struct pipeline *pl, const struct asgst_sample_hdr *e)
{
	uint64_t v = u64map__get(&pl->offcpu_pending, e->tid);
	struct queued *q = (struct queued *)(uintptr_t)v;

	if (v <= 1 || queued_hdr(q)->ktime_ns != e->ktime_ns) {
		pl->stats.offcpu_stray_end++;	/* its stack was lost */
		return;
	}
	u64map__put(&pl->offcpu_pending, e->tid, 1);
	queued_hdr(q)->weight_ns = e->weight_ns;
	enqueue(pl, q);
}

static void offcpu_flush(struct pipeline *pl, uint64_t end_ns)
{
	struct u64map *m = &pl->offcpu_pending;
	uint64_t end = end_ns > pl->last_ktime ? end_ns : pl->last_ktime;

	for (size_t i = 0; i < m->cap; i++) {
		struct queued *q = (struct queued *)(uintptr_t)m->vals[i];
		struct asgst_sample_hdr *h;

		if (m->vals[i] <= 1)
			continue;
		m->vals[i] = 1;
		h = queued_hdr(q);
		h->weight_ns = end > h->ktime_ns ? end - h->ktime_ns : 0;
		enqueue(pl, q);
	}
}

int pipeline__push(struct pipeline *pl, const void *data, size_t len)
{
	const struct asgst_sample_hdr *h = data;
	bool hdr_ok = len >= sizeof(*h) && h->magic == ASGST_SAMPLE_MAGIC;
	struct queued *q;
	uint64_t old;

	pl->stats.records++;
	if (hdr_ok)
		proc_get(pl, (pid_t)h->pid, h->comm);
	if (pl->opts.raw)
		raw_writer__chunk(pl->opts.raw, RAW_SAMPLE, data,
				  record_used_len(data, len), NULL, 0);
	if (hdr_ok && h->ktime_ns > pl->last_ktime)
		pl->last_ktime = h->ktime_ns;
	if (hdr_ok && h->event == ASGST_EV_OFFCPU_END) {
		offcpu_end(pl, h);
		return 0;
	}
	q = malloc(sizeof(*q) + len);
	if (!q)
		return -ENOMEM;
	q->len = len;
	memcpy(q->data, data, len);
	if (hdr_ok && h->event == ASGST_EV_OFFCPU && h->tid &&
	    !((uintptr_t)q->data & 7)) {
		old = u64map__get(&pl->offcpu_pending, h->tid);
		if (u64map__put(&pl->offcpu_pending, h->tid,
				(uint64_t)(uintptr_t)q)) {
			free(q);
			return -ENOMEM;
		}
		if (old > 1) {	/* its END was lost: count it, no time */
			pl->stats.offcpu_no_end++;
			enqueue(pl, (struct queued *)(uintptr_t)old);
		}
		return 0;
	}
	enqueue(pl, q);
	return 0;
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

	if (sample__parse(q->data, q->len, &s, &why)) {
		pl->stats.bad_records++;
		return;
	}
	if (s.hdr->window_len) {
		pl->stats.windows++;
		pl->stats.window_bytes += s.hdr->window_len;
	}
	ps = proc_get(pl, (pid_t)s.hdr->pid, s.hdr->comm);
	if (!ps)
		return;
	if (ps->is_jvm)
		proc_try_codemap(pl, ps, now);
	else if (!pl->opts.offline && symbolizer__is_jvm(pl->sz, ps->pid))
		proc_became_jvm(pl, ps, pl->decode_seq);	/* exec'd java */
	memset(&t, 0, sizeof(t));
	/* a JVM's samples from the moment it was known to be one */
	jvm = ps->is_jvm && pl->decode_seq >= ps->jvm_from_seq;
	cm = jvm && ps->cm && codemap__ok(ps->cm) ? ps->cm : NULL;
	decoder__trace(pl->dec, &s, cm, jvm, &t, pl->frames, TRACE_MAX_FRAMES);
	t.comm = ps->comm;
	if (cm && (th = codemap__thread(cm, s.hdr->ns_tid,
					    s.hdr->ktime_ns)) && th->name)
		t.thread = th->name;
	if (!t.thread)
		t.thread = strtab__intern_n(pl->st, s.hdr->comm,
					    ASGST_COMM_LEN);
	if (t.error)
		pl->stats.decode_errors++;
	if (pl->opts.filter && !filter__apply(pl->opts.filter, &t)) {
		pl->stats.filtered++;
		return;
	}
	if (profile__add(pl->prof, &t, 1,
			 s.hdr->event == ASGST_EV_OFFCPU ? s.hdr->weight_ns : 0))
		return;
	pl->stats.decoded++;
}

/* catch the code maps up (new code, new threads for the kernel side) */
static void update_codemaps(struct pipeline *pl, uint64_t now)
{
	pl->last_update_ns = now;
	for (size_t i = 0; i < pl->procs_cap; i++) {
		struct proc_state *ps = &pl->procs[i];

		if (ps->used && ps->jts && !ps->jts->cont_pushed)
			jt_sync_cont(ps->jts);
		if (ps->used && ps->cm && codemap__update(ps->cm) &&
		    !ps->map_failed) {
			ps->map_failed = true;
			if (!pl->opts.quiet)
				fprintf(stderr, "asgst-bpf: %s\n",
					codemap__error(ps->cm));
		}
		if (ps->used && ps->cm)
			proc_say_agent_off(pl, ps);
	}
}

void pipeline__process(struct pipeline *pl, uint64_t now_ns, bool flush)
{
	struct queued *q;
	bool updated = false;

	reap_attaches(pl, flush);
	if (!now_ns)
		now_ns = mono_ns();
	/* new threads reach the sampler soon, samples or not */
	if (!pl->opts.offline && now_ns > pl->last_update_ns + UPDATE_EVERY_NS) {
		update_codemaps(pl, now_ns);
		updated = true;
	}
	if (!pl->head)
		return;
	/*
	 * While an agent is being attached, hold the queue (up to the attach
	 * timeout): the samples taken meanwhile decode once the map is there.
	 */
	if (!flush && attach_pending(pl) &&
	    pl->head->arrival_ns + ATTACH_HOLD_NS > now_ns)
		return;
	while ((q = pl->head)) {
		if (!flush && q->arrival_ns + pl->opts.decode_delay_ns > now_ns)
			break;
		if (!updated) {
			/* catch the code maps up once per batch */
			update_codemaps(pl, now_ns);
			updated = true;
		}
		pl->head = q->next;
		if (!pl->head)
			pl->tail = NULL;
		pl->stats.queued--;
		decode_one(pl, q, now_ns);
		pl->decode_seq++;
		free(q);
	}
}

void pipeline__finish(struct pipeline *pl, uint64_t end_ns)
{
	offcpu_flush(pl, end_ns);
	pipeline__process(pl, 0, true);
}

void pipeline__stats(const struct pipeline *pl, struct pipeline_stats *out)
{
	*out = pl->stats;
}

int pipeline__finish_raw(struct pipeline *pl)
{
	int rc = 0;

	if (!pl->opts.raw)
		return 0;
	for (size_t i = 0; i < pl->procs_cap; i++) {
		struct proc_state *ps = &pl->procs[i];
		const char *text = NULL;
		size_t len = 0;

		if (!ps->used)
			continue;
		if (ps->cm) {
			/* the header last, with write_pos where we stopped */
			static uint8_t hdr[CM_HEADER_SIZE];
			struct cm_file_header h = *codemap__header(ps->cm);
			struct raw_codemap rcm = { .pid = (uint32_t)ps->pid };

			h.write_pos = codemap__pos(ps->cm);
			memset(hdr, 0, sizeof(hdr));
			memcpy(hdr, &h, sizeof(h));
			raw_writer__chunk(pl->opts.raw, RAW_CODEMAP, &rcm,
					  sizeof(rcm), hdr, sizeof(hdr));
		}
		symbolizer__maps_text(pl->sz, ps->pid, &text, &len);
		rc = raw_writer__proc(pl->opts.raw, ps->pid, ps->is_jvm,
				      ps->jvm_from_seq, ps->comm, text, len);
		if (rc)
			break;
	}
	return rc;
}

int pipeline__add_offline(struct pipeline *pl, pid_t pid, const char *comm,
			  bool is_jvm, uint64_t jvm_from_seq, const char *maps,
			  size_t maps_len, struct codemap *cm)
{
	struct proc_state *ps;
	int rc;

	if ((pl->procs_n + 1) * 2 > pl->procs_cap && procs_grow(pl)) {
		codemap__free(cm);
		return -ENOMEM;
	}
	ps = proc_slot(pl->procs, pl->procs_cap, pid);
	if (!ps->used) {
		memset(ps, 0, sizeof(*ps));
		ps->used = true;
		ps->pid = pid;
		pl->procs_n++;
		pl->stats.processes++;
		if (is_jvm)
			pl->stats.jvms++;
	}
	ps->comm = strtab__intern(pl->st, comm ? comm : "");
	ps->is_jvm = is_jvm;
	ps->jvm_from_seq = jvm_from_seq;
	if (cm) {
		codemap__free(ps->cm);
		ps->cm = cm;
		pl->stats.jvms_decoded++;
	}
	rc = maps_len ? symbolizer__add_offline(pl->sz, pid, maps, maps_len) : 0;
	return rc;
}

int pipeline__prime(struct pipeline *pl, pid_t pid)
{
	return proc_get(pl, pid, "") ? 0 : -ENOMEM;
}

/* -a: JVMs already running get their stack window from the first sample */
int pipeline__prime_jvms(struct pipeline *pl)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char path[64], *text = NULL;
		size_t len = 0;
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		int fd;

		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* a cheap look first: only JVMs are read in full */
		if (!maps__slurp(fd, &text, &len) && memmem(text, len,
							   "/libjvm.so\n", 11)) {
			pipeline__prime(pl, (pid_t)pid);
			n++;
		}
		free(text);
		close(fd);
	}
	closedir(d);
	return n;
}
