// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The processes the pipeline has seen, by pid: what each is (comm, JVM or
 * not), and for a JVM its code map, found as soon as its agent writes one,
 * with the agent injected when it has none. A process is looked at the
 * first time one of its samples arrives (its maps are cached then, so
 * samples of a process that exits soon after still symbolize).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"
#include "capture/sample.h"
#include "jvm/codemap.h"
#include "jvm/inject.h"
#include "jvm/jthreads.h"
#include "profile/container.h"
#include "profile/filter.h"
#include "profile/jvm_events.h"
#include "profile/pipeline_int.h"
#include "profile/service.h"
#include "python/py_proc.h"
#include "symbols/maps.h"
#include "symbols/symbolize.h"
#include "util/strtab.h"

#define CODEMAP_RETRY_NS	(1000ull * 1000 * 1000)
#define PROCS_INIT_CAP		256
/* attach helpers running at once (each bounded by the attach timeouts) */
#define ATTACH_MAX_RUNNING	4
/* a JVM put off for a helper is looked at again within this */
#define ATTACH_WAITING_NS	(500ull * 1000 * 1000)

/* pruning, below */
static void proc_note_start(struct proc_state *ps);
static struct proc_state *procs_retired(struct pipeline *pl, pid_t pid);

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

int procs__init(struct pipeline *pl)
{
	pl->procs_cap = PROCS_INIT_CAP;
	pl->procs = calloc(pl->procs_cap, sizeof(*pl->procs));
	return pl->procs ? 0 : -ENOMEM;
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

/*
 * The container and pod the process runs in, from its cgroup path: read
 * once, when the process is first seen. With record --container, another
 * container's process is foreign: never decoded, its JVM never attached.
 */
static void proc_read_container(struct pipeline *pl, struct proc_state *ps)
{
	struct container_ids ci;

	if (!container__read_pid(ps->pid, &ci)) {
		if (ci.id[0])
			ps->container_id = strtab__intern(pl->st, ci.id);
		if (ci.pod_uid[0])
			ps->pod_uid = strtab__intern(pl->st, ci.pod_uid);
	}
	ps->foreign = pl->opts.filter &&
		      !filter__container_ok(pl->opts.filter, ps->container_id);
	/* a cgroup another user named after the container is not it */
	if (!ps->foreign && pl->opts.filter &&
	    pl->opts.filter->container[0] &&
	    pl->opts.filter->container_owner_known) {
		uid_t o;

		if (!container__scope_owner(ps->pid, &o) &&
		    o != pl->opts.filter->container_owner)
			ps->foreign = true;
	}
}

/* the name ps's container's runtime gave it, else its short id */
static const char *container_service(struct pipeline *pl,
				     const struct proc_state *ps)
{
	char name[SERVICE_NAME_MAX + 1];
	const char *s;
	unsigned i;

	for (i = 0; i < 16; i++)
		if (pl->svc_cache[i].id == ps->container_id)
			return pl->svc_cache[i].name;
	if (service__container_name(ps->container_id, name, sizeof(name)))
		snprintf(name, sizeof(name), "%.12s", ps->container_id);
	s = strtab__intern(pl->st, name);
	i = pl->svc_next++ % 16;
	pl->svc_cache[i].id = ps->container_id;
	pl->svc_cache[i].name = s;
	return s;
}

/*
 * What a fleet's store calls the process (service.h): its container's
 * name, else a JVM's main class, else its executable's; and the
 * executable's name. Looked up when the process is first seen and again
 * when it turns out to be a JVM.
 */
static void proc_name_service(struct pipeline *pl, struct proc_state *ps)
{
	char name[SERVICE_NAME_MAX + 1];

	if (!ps->process) {
		if (service__exe_name(ps->pid, name, sizeof(name)))
			snprintf(name, sizeof(name), "%s",
				 ps->comm ? ps->comm : "");
		service__sanitize(name);
		ps->process = strtab__intern(pl->st, name);
	}
	if (ps->container_id)
		ps->service = container_service(pl, ps);
	else if (ps->is_jvm &&
		 !service__jvm_main_pid(ps->pid, name, sizeof(name)))
		ps->service = strtab__intern(pl->st, name);
	else
		ps->service = ps->process;
}

/* a sink keeps each code map's bytes as the reader consumed them */
struct sink_tap {
	const struct pipeline_sink *sink;
	pid_t pid;
};

static void sink_tap(void *ctx, uint64_t off, const void *buf, size_t len)
{
	const struct sink_tap *t = ctx;

	t->sink->codemap(t->sink->ctx, t->pid, off, buf, len);
}

/* a JVM without an agent: inject one (once), unless told not to */
static void proc_start_attach(struct pipeline *pl, struct proc_state *ps)
{
	pid_t c;

	if (ps->attach_tried || pl->opts.no_attach || !pl->opts.agent_path ||
	    pl->opts.offline)
		return;
	/* a flood of processes that look like JVMs gets a few helpers at a
	 * time; the others are tried again at their next code map look */
	if (pl->attaching >= ATTACH_MAX_RUNNING) {
		pl->stats.attach_deferred++;
		pl->attach_deferred_ns = clock__mono_ns();
		ps->cm_next_try_ns = 0;	/* again at the next look */
		return;
	}
	ps->attach_tried = true;
	c = inject__start(ps->pid, pl->opts.agent_path, pl->opts.quiet);
	if (c > 0) {
		ps->attach_child = c;
		ps->attach_start_ns = clock__mono_ns();
		pl->attaching++;
	}
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

/* the JVM's code map lost records: said when it starts, then as it grows */
static void proc_say_map_loss(struct pipeline *pl, struct proc_state *ps)
{
	uint64_t n;

	if (codemap__loss_news(ps->cm, &n) && !pl->opts.quiet)
		fprintf(stderr, "asgst-bpf: the code map of JVM %d lost %llu "
			"records (it was full, or a generation was missed): "
			"code they named decodes as unknown\n", (int)ps->pid,
			(unsigned long long)n);
}

/* once per JVM: its code map went past a budget (codemap.h) or its
 * threads past its share of the sampler's JavaThread map (jthreads.c) */
static void proc_say_budgets(struct pipeline *pl, struct proc_state *ps)
{
	struct codemap_stats cs;
	struct jthreads_stats js;
	const char *cap;

	codemap__stats(ps->cm, &cs);
	pl->stats.codemap_capped += cs.capped - ps->cm_capped;
	ps->cm_capped = cs.capped;
	if (!ps->cap_said && (cap = codemap__capped(ps->cm))) {
		ps->cap_said = true;
		if (!pl->opts.quiet)
			fprintf(stderr, "asgst-bpf: the code map of JVM %d "
				"exceeds %s: the records past it are dropped "
				"(codemap_capped in --stats) and what they "
				"named decodes as unknown\n", (int)ps->pid, cap);
	}
	if (ps->jt_said || !ps->jts)
		return;
	jthreads__stats(ps->jts, &js);
	if (!js.refused && !js.reclaimed)
		return;
	ps->jt_said = true;
	if (!pl->opts.quiet)
		fprintf(stderr, "asgst-bpf: JVM %d has more threads than its "
			"share of the sampler's JavaThread map (%zu): the "
			"others are not pushed (jthreads_refused, "
			"jthreads_reclaimed in --stats) and their Java frames "
			"may not be decoded\n", (int)ps->pid, js.share);
}

/* -e alloc/lock: once its agent is ready */
static void proc_ask_events(struct pipeline *pl, struct proc_state *ps)
{
	if (pl->opts.jvm_events && !ps->ev_done && !ps->map_failed)
		ps->ev_done = jvm_events__add(pl->opts.jvm_events, ps->pid,
					      ps->cm) != 0;
}

static void proc_sync_threads(struct pipeline *pl, struct proc_state *ps)
{
	if (!pl->cap || ps->jts || !ps->cm)
		return;
	ps->jts = jthreads__new(pl->cap, ps->pid, ps->cm);
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
	/* dead code is freed once no pending sample can need it */
	codemap__set_retention(ps->cm, CODEMAP_RETAIN_NS);
	proc_say_agent_off(pl, ps);
	proc_sync_threads(pl, ps);
	proc_ask_events(pl, ps);
	if (pl->opts.sink && (ps->tap = malloc(sizeof(*ps->tap)))) {
		ps->tap->sink = pl->opts.sink;
		ps->tap->pid = ps->pid;
		codemap__set_tap(ps->cm, sink_tap, ps->tap);
	}
}

void procs__reap_attaches(struct pipeline *pl, bool block)
{
	/* called every batch: the table is walked only while one runs */
	for (size_t i = 0; pl->attaching && i < pl->procs_cap; i++) {
		struct proc_state *ps = &pl->procs[i];
		int rc;

		if (!ps->used || ps->attach_child <= 0)
			continue;
		rc = inject__reap(ps->attach_child, block);
		if (rc < 0)
			continue;
		ps->attach_child = 0;
		pl->attaching--;
		if (rc) {
			pl->stats.attached++;
			if (!pl->opts.quiet)
				fprintf(stderr, "asgst-bpf: attached the agent "
					"to JVM %d\n", (int)ps->pid);
			ps->cm_next_try_ns = 0;
			proc_try_codemap(pl, ps, clock__mono_ns());
		}
	}
}

/* an attach runs, or one waits for a free helper (put off moments ago:
 * those waiting are put off again at every look) */
bool procs__attach_pending(const struct pipeline *pl)
{
	return pl->attaching > 0 ||
	       (pl->attach_deferred_ns &&
		clock__mono_ns() < pl->attach_deferred_ns + ATTACH_WAITING_NS);
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
	if (!pl->opts.offline) {
		ps->process = NULL;	/* an exec'd java was something else */
		proc_name_service(pl, ps);
	}
	if (pl->cap)
		capture__set_window(pl->cap, ps->pid, true);
	proc_try_codemap(pl, ps, clock__mono_ns());
}

/*
 * Is it a CPython process whose layout we know: then the sampler walks
 * its threads' Python frames (and takes a stack window, where they go).
 * Looked at when the process is first seen and again when its comm
 * changes (an exec: `record -- python3 x.py` is first seen as the
 * recorder's own child). A version not verified is said once.
 */
#define PY_RETRY_NS	(100ull * 1000 * 1000)

/* a code object read: into the raw file (report names frames by it) */
static void py_code_read(void *ctx, pid_t pid, const struct py_code_view *v)
{
	struct pipeline *pl = ctx;
	struct py_code_view rel = *v;

	if (!pl->opts.sink || !pl->opts.sink->pycode)
		return;
	rel.poison_until = v->poison_until > pl->sink_seq0 ?
			   v->poison_until - pl->sink_seq0 : 0;
	pl->opts.sink->pycode(pl->opts.sink->ctx, pid, &rel);
}

/* --switch-output: every code object known, into the new period's file */
static void py_codes_to_sink(struct pipeline *pl, struct proc_state *ps)
{
	if (ps->py)
		py_proc__each_code(ps->py, py_code_read, pl);
}

static void proc_try_python(struct pipeline *pl, struct proc_state *ps,
			    const char *comm)
{
	struct asgst_py_proc v;
	char why[512];
	uint64_t now;
	int ret;

	if (ps->py || pl->opts.offline || ps->gone_ns)
		return;
	if (ps->py_tried &&
	    (!strncmp(ps->py_comm, comm, sizeof(ps->py_comm)) ||
	     ps->py_tries >= 4))
		return;
	now = clock__mono_ns();
	if (ps->py_tried && now < ps->py_next_ns)
		return;
	/* threads of their own names change the comm too: a few tries,
	 * then the side-band's mmap of an interpreter says it
	 * (pipeline__python_mapped) */
	if (ps->py_tried)
		ps->py_tries++;
	ps->py_tried = true;
	ps->py_next_ns = now + PY_RETRY_NS;
	memset(ps->py_comm, 0, sizeof(ps->py_comm));
	memcpy(ps->py_comm, comm, strnlen(comm, sizeof(ps->py_comm)));
	ret = py_proc__probe(ps->pid, &ps->py, &v, why, sizeof(why));
	if (ret < 0 && why[0] && !ps->py_said) {
		ps->py_said = true;
		if (!pl->opts.quiet)
			fprintf(stderr, "asgst-bpf: process %d: %s\n",
				(int)ps->pid, why);
	}
	if (ret != 1)
		return;
	pl->stats.py_procs++;
	py_proc__set_hook(ps->py, py_code_read, pl);
	if (pl->cap) {
		capture__set_window(pl->cap, ps->pid, true);
		capture__set_py_proc(pl->cap, ps->pid, &v);
	}
}


/* a mapping of a libjvm.so in maps text */
static bool maps_text_jvm(const char *text, size_t len)
{
	return memmem(text, len, "/libjvm.so\n", 11) != NULL;
}

/* the same of pid's /proc/PID/maps; false when it cannot be read */
static bool maps_name_jvm(pid_t pid)
{
	char path[64], *text = NULL;
	size_t len = 0;
	bool jvm = false;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (!maps__slurp(fd, &text, &len))
		jvm = maps_text_jvm(text, len);
	free(text);
	close(fd);
	return jvm;
}

/* a new slot for pid (the table grown if need be); NULL: no memory */
static struct proc_state *proc_add(struct pipeline *pl, pid_t pid)
{
	struct proc_state *ps;

	if ((pl->procs_n + 1) * 2 > pl->procs_cap && procs_grow(pl))
		return NULL;
	ps = proc_slot(pl->procs, pl->procs_cap, pid);
	memset(ps, 0, sizeof(*ps));
	ps->used = true;
	ps->pid = pid;
	pl->procs_n++;
	pl->stats.processes++;
	return ps;
}

struct proc_state *procs__get(struct pipeline *pl, pid_t pid,
			      const char *thread_comm)
{
	struct proc_state *ps;

	/* an exited process whose samples are still being decoded */
	if (pl->retired_n && (ps = procs_retired(pl, pid)))
		return ps;
	ps = proc_slot(pl->procs, pl->procs_cap, pid);
	if (ps->used)
		return ps;
	ps = proc_add(pl, pid);
	if (!ps)
		return NULL;
	if (pl->opts.offline) {
		/* not recorded as a process: native frames, as far as they go */
		ps->comm = strtab__intern_n(pl->st, thread_comm,
					    ASGST_COMM_LEN);
		return ps;
	}
	proc_note_start(ps);
	ps->comm = read_comm(pl->st, pid);
	if (!ps->comm)
		ps->comm = strtab__intern_n(pl->st, thread_comm,
					    ASGST_COMM_LEN);
	proc_read_container(pl, ps);
	if (ps->foreign)
		return ps;
	proc_name_service(pl, ps);
	/*
	 * The sample that brought us here is the next to be queued. Before
	 * sampling starts, the maps' text tells a JVM: the symbolizer's read
	 * opens every module (libjvm's symbols and CFI, some 20 ms), which
	 * the first decode does as well, after the first samples came.
	 */
	if (pl->priming ? maps_name_jvm(pid) : symbolizer__is_jvm(pl->sz, pid))
		proc_became_jvm(pl, ps, pl->decode_seq + pl->queue.n);
	else
		proc_try_python(pl, ps, thread_comm);
	return ps;
}

void procs__on_sample(struct pipeline *pl, struct proc_state *ps,
		      uint64_t now, const char *comm)
{
	if (ps->foreign)
		return;
	/* exited: its pid may name another process by now, leave it be */
	if (ps->gone_ns)
		return;
	if (ps->is_jvm)
		proc_try_codemap(pl, ps, now);
	else if (!pl->opts.offline && symbolizer__is_jvm(pl->sz, ps->pid))
		proc_became_jvm(pl, ps, pl->decode_seq);	/* exec'd java */
	else
		proc_try_python(pl, ps, comm);
}

void procs__update_codemaps(struct pipeline *pl, uint64_t now)
{
	uint64_t pruned = 0;

	pl->last_update_ns = now;
	for (size_t i = 0; i < pl->procs_cap; i++) {
		struct proc_state *ps = &pl->procs[i];

		if (ps->used && ps->jts)
			jthreads__sync_cont(ps->jts);
		if (ps->used && ps->cm && codemap__update(ps->cm) &&
		    !ps->map_failed) {
			ps->map_failed = true;
			if (!pl->opts.quiet)
				fprintf(stderr, "asgst-bpf: %s\n",
					codemap__error(ps->cm));
		}
		if (ps->used && ps->cm)
			proc_say_agent_off(pl, ps);
		if (ps->used && ps->cm)
			proc_ask_events(pl, ps);
		if (ps->used && ps->cm)
			proc_say_map_loss(pl, ps);
		if (ps->used && ps->cm)
			proc_say_budgets(pl, ps);
		if (ps->used && ps->cm) {
			struct codemap_stats cs;

			/* what the update dropped may have held names */
			codemap__stats(ps->cm, &cs);
			pruned += cs.pruned + cs.handovers;
		}
	}
	if (pruned != pl->cm_pruned) {
		pl->cm_pruned = pruned;
		pl->cm_epoch++;
	}
	procs__prune(pl, now);
}

void procs__free(struct pipeline *pl)
{
	u64map__free(&pl->exits);
	if (!pl->procs)
		return;
	procs__reap_attaches(pl, true);
	for (size_t i = 0; i < pl->procs_cap; i++) {
		codemap__free(pl->procs[i].cm);
		free(pl->procs[i].tap);
		jthreads__free(pl->procs[i].jts);
	}
	free(pl->procs);
	for (size_t i = 0; i < pl->retired_n; i++) {
		jthreads__free(pl->retired[i].jts);
		codemap__free(pl->retired[i].cm);
		free(pl->retired[i].tap);
	}
	free(pl->retired);
}

/* what a sink needs of ps besides its samples: its code map's header
 * (with write_pos where we stopped), then its comm and maps text */
static int proc_sink_out(struct pipeline *pl, struct proc_state *ps)
{
	const struct pipeline_sink *s = pl->opts.sink;
	struct pipeline_proc_rec p = {
		.pid = ps->pid,
		.is_jvm = ps->is_jvm,
		/* the sink's samples count from its first */
		.jvm_from_seq = ps->jvm_from_seq > pl->sink_seq0 ?
				ps->jvm_from_seq - pl->sink_seq0 : 0,
		.comm = ps->comm,
		.container_id = ps->container_id,
		.pod_uid = ps->pod_uid,
		.service = ps->service,
		.process = ps->process,
	};

	if (ps->cm) {
		static uint8_t hdr[CM_HEADER_SIZE];
		struct cm_file_header h = *codemap__header(ps->cm);

		h.write_pos = codemap__pos(ps->cm);
		memset(hdr, 0, sizeof(hdr));
		memcpy(hdr, &h, sizeof(h));
		s->codemap(s->ctx, ps->pid, 0, hdr, sizeof(hdr));
	}
	symbolizer__maps_text(pl->sz, ps->pid, &p.maps, &p.maps_len);
	return s->proc(s->ctx, &p);
}

int pipeline__finish_sink(struct pipeline *pl)
{
	int rc = 0;

	if (!pl->opts.sink)
		return 0;
	for (size_t i = 0; i < pl->procs_cap && !rc; i++)
		if (pl->procs[i].used)
			rc = proc_sink_out(pl, &pl->procs[i]);
	/* exited, samples in this period: their maps too */
	for (size_t i = 0; i < pl->retired_n && !rc; i++)
		rc = proc_sink_out(pl, &pl->retired[i]);
	return rc;
}

/*
 * Memory bounded by what is alive. A process that has exited, or whose
 * pid now names another process (its start time differs), is retired: out
 * of the table, so the pid starts afresh (name, JVM or not, code map,
 * attach), and out of the sampler's maps, but kept aside until the samples
 * queued before are decoded (until_seq); then it is dropped with its maps
 * in the symbolizer. A raw recording gets what it needs of the process
 * first, as pipeline__finish_sink would have handed it at the end.
 */
#define PRUNE_EVERY_NS		(1000ull * 1000 * 1000)
#define PRUNE_TARGETS_EVERY	10	/* sweeps */

/*
 * /proc/PID/stat: field 22, the start time (clock ticks since boot), and
 * whether the process is a zombie. 0, or -errno (-ENOENT: gone).
 */
static int read_start_time(pid_t pid, uint64_t *start, bool *zombie)
{
	char path[64], buf[1024], *p, *end;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ENOENT;
	buf[n] = '\0';
	/* the comm may hold spaces and parentheses: after the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -EINVAL;
	p += 2;
	*zombie = *p == 'Z' || *p == 'X';
	for (field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
		/* a leader that exited before its threads is a zombie too */
		if (p && field + 1 == 20 && strtol(p, NULL, 10) > 1)
			*zombie = false;
	}
	if (!p)
		return -EINVAL;
	*start = strtoull(p, &end, 10);
	return end == p ? -EINVAL : 0;
}

/* first sight of a live process: who it is, for telling a reused pid */
static void proc_note_start(struct proc_state *ps)
{
	uint64_t t = clock__mono_ns();
	bool zombie = false;

	if (read_start_time(ps->pid, &ps->start_time, &zombie))
		ps->start_time = 0;
	ps->checked_ns = t;
	ps->life_ns = ps->start_time && !zombie ? t : 0;
}

/*
 * Reading /proc/PID/stat costs tens of microseconds for a process of many
 * threads (the kernel sums them), and a process with samples is looked at
 * every batch. With the exit records complete, a pid none of whose threads
 * exited since its start time was last read (life_ns) still belongs to
 * that process; /proc is read again at least every PROC_RECHECK_NS all
 * the same. Exits are stamped when read, never before they happened.
 */
#define PROC_RECHECK_NS		(5ull * 1000 * 1000 * 1000)

static bool proc_may_have_changed(const struct pipeline *pl,
				  const struct proc_state *ps, uint64_t now)
{
	uint64_t ex;

	if (!pl->exit_feed || !ps->start_time || !ps->life_ns ||
	    now > ps->life_ns + PROC_RECHECK_NS)
		return true;
	ex = u64map__get(&pl->exits, (uint64_t)(uint32_t)ps->pid);
	return ex && ex >= ps->life_ns;
}

void pipeline__exit_feed(struct pipeline *pl, bool complete)
{
	pl->exit_feed = complete;
}

void pipeline__note_exit(struct pipeline *pl, pid_t pid)
{
	/* no room: /proc is read instead, from now on */
	if (pl->exit_feed &&
	    u64map__put(&pl->exits, (uint64_t)(uint32_t)pid, clock__mono_ns()))
		pl->exit_feed = false;
}

/* forget exits older than any life_ns that can still skip a look */
static void exits_trim(struct pipeline *pl, uint64_t now)
{
	struct u64map keep = { 0 };

	if (!pl->exits.n)
		return;
	for (size_t i = 0; i < pl->exits.cap; i++) {
		uint64_t v = pl->exits.vals[i];

		if (v && v + 2 * PROC_RECHECK_NS >= now &&
		    u64map__put(&keep, pl->exits.keys[i], v)) {
			u64map__free(&keep);
			pl->exit_feed = false;
			break;
		}
	}
	u64map__free(&pl->exits);
	pl->exits = keep;
}

enum proc_life { PROC_ALIVE, PROC_EXITED, PROC_REUSED };

/* *start: the start time the pid has now */
static enum proc_life proc_life(struct pipeline *pl, struct proc_state *ps,
				uint64_t *startp)
{
	uint64_t start = 0, t = clock__mono_ns();
	bool zombie = false;
	int rc = read_start_time(ps->pid, &start, &zombie);

	*startp = start;
	if (rc == -ENOENT || rc == -ESRCH || (!rc && zombie))
		return PROC_EXITED;
	if (rc)
		return PROC_ALIVE;	/* cannot tell: keep it */
	if (!ps->start_time) {
		ps->start_time = start;	/* first look failed: this is it */
		ps->life_ns = t;
		return PROC_ALIVE;
	}
	if (start == ps->start_time) {
		ps->life_ns = t;
		return PROC_ALIVE;
	}
	pl->stats.pid_reuses++;
	return PROC_REUSED;
}

/* remove ps from the open-addressing table, moving back the entries of
 * its probe chain (no tombstones: lookups stay short for days) */
static void proc_slot_clear(struct pipeline *pl, struct proc_state *ps)
{
	size_t mask = pl->procs_cap - 1, i = (size_t)(ps - pl->procs), j = i;

	for (;;) {
		size_t k;

		j = (j + 1) & mask;
		if (!pl->procs[j].used)
			break;
		k = ((size_t)pl->procs[j].pid * 2654435761u) & mask;
		/* j stays if its home slot k lies cyclically in (i, j] */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		pl->procs[i] = pl->procs[j];
		i = j;
	}
	memset(&pl->procs[i], 0, sizeof(pl->procs[i]));
}

/* a process's samples are all decoded: free what it holds */
static void proc_release(struct pipeline *pl, struct proc_state *ps)
{
	bool big = ps->cm;

	if (pl->opts.sink)
		proc_sink_out(pl, ps);
	jthreads__free(ps->jts);	/* it follows the code map: first */
	py_proc__free(ps->py);
	codemap__free(ps->cm);
	pl->cm_epoch++;		/* its names are gone */
	free(ps->tap);
	symbolizer__forget(pl->sz, ps->pid);
	pl->stats.procs_dropped++;
	/* a JVM's code map and modules are megabytes: give the pages back,
	 * so the RSS follows what is alive (a JVM exits rarely) */
	if (big)
		malloc_trim(0);
}

static void retired_drop(struct pipeline *pl, size_t i)
{
	proc_release(pl, &pl->retired[i]);
	pl->retired[i] = pl->retired[--pl->retired_n];
}

/* the retired process pid whose samples are being decoded, if any; one
 * whose samples are all decoded is dropped on the way */
static struct proc_state *procs_retired(struct pipeline *pl, pid_t pid)
{
	for (size_t i = 0; i < pl->retired_n; i++) {
		if (pl->retired[i].pid != pid)
			continue;
		if (pl->decode_seq < pl->retired[i].until_seq)
			return &pl->retired[i];
		retired_drop(pl, i);
		return NULL;
	}
	return NULL;
}

/* a /proc start time (clock ticks of CLOCK_BOOTTIME) on the sampler's
 * clock (CLOCK_MONOTONIC) */
static uint64_t start_to_mono_ns(uint64_t ticks)
{
	struct timespec b, m;
	long hz = sysconf(_SC_CLK_TCK);
	int64_t off;
	uint64_t ns;

	if (hz <= 0 || clock_gettime(CLOCK_MONOTONIC, &m) ||
	    clock_gettime(CLOCK_BOOTTIME, &b))
		return 0;
	ns = ticks * (1000000000ull / (uint64_t)hz);
	/* the time suspended; never below 0 (two reads, not one) */
	off = ((int64_t)b.tv_sec - (int64_t)m.tv_sec) * 1000000000ll +
	      (b.tv_nsec - m.tv_nsec);
	if (off < 0)
		off = 0;
	return ns > (uint64_t)off ? ns - (uint64_t)off : 0;
}

/*
 * The decode index up to which pid's queued samples are the retired
 * process's: all queued now, or, when the pid already names a process
 * started at new_start, those taken before it started.
 */
static uint64_t retire_until(struct pipeline *pl, pid_t pid,
			     uint64_t new_start)
{
	uint64_t seq = pl->decode_seq, from = new_start ?
		start_to_mono_ns(new_start) : 0;

	if (!from)
		return seq + pl->queue.n;
	for (const struct queued *q = pl->queue.head; q; q = q->next, seq++) {
		const struct asgst_sample_hdr *h = q->rec;

		if (q->len >= SAMPLE_HDR_MIN && h->magic == ASGST_SAMPLE_MAGIC &&
		    (pid_t)h->pid == pid && h->ktime_ns >= from)
			return seq;
	}
	return seq;
}

static void proc_retire(struct pipeline *pl, struct proc_state *ps,
			uint64_t new_start)
{
	struct proc_state r = *ps;

	r.gone_ns = r.gone_ns ? r.gone_ns : clock__mono_ns();
	/* the code it wrote before it ended, for its last samples */
	if (r.cm) {
		codemap__update(r.cm);
		pl->cm_epoch++;	/* not followed by the sum in update */
	}
	if (pl->cap)
		capture__forget(pl->cap, r.pid, r.is_jvm);
	jthreads__forget(r.jts);	/* its entries went with it */
	proc_slot_clear(pl, ps);
	pl->procs_n--;
	r.until_seq = retire_until(pl, r.pid, new_start);
	if (pl->retired_n == pl->retired_cap) {
		size_t nc = pl->retired_cap ? pl->retired_cap * 2 : 16;
		struct proc_state *n = realloc(pl->retired, nc * sizeof(*n));

		if (!n) {
			proc_release(pl, &r);	/* no memory: at once */
			return;
		}
		pl->retired = n;
		pl->retired_cap = nc;
	}
	pl->retired[pl->retired_n++] = r;
}

/*
 * The queue grows while an agent is attached (samples held up to 12 s) or
 * decoding falls behind; once it has drained, its pages go back to the
 * system, or the RSS would stay at the highest it ever was.
 */
#define QUEUE_TRIM_MIN		4096	/* records */

static void procs_trim_queue(struct pipeline *pl)
{
	if (pl->queue.n > pl->queue_peak)
		pl->queue_peak = pl->queue.n;
	if (pl->queue_peak < QUEUE_TRIM_MIN ||
	    pl->queue.n > pl->queue_peak / 8)
		return;
	pl->queue_peak = pl->queue.n;
	malloc_trim(0);
}

/* each batch: counters only (symbolizer__stats walks every module) */
static void procs_fill_stats(struct pipeline *pl)
{
	pl->stats.procs_live = pl->procs_n + pl->retired_n;
	pl->stats.sym_procs = symbolizer__nprocs(pl->sz);
	pl->stats.sym_modules = symbolizer__nmodules(pl->sz);
	pl->stats.map_errors = capture__map_errors(pl->cap);
	pl->stats.strtab_bytes = strtab__bytes(pl->st);
}

/*
 * Before a batch is decoded: a process with a sample that arrived after
 * its start time was last compared is looked at again, so that a pid
 * taken over by a new process is seen before the new one's first sample
 * is decoded (the sweep below comes once a second only). By the
 * process's last arrival (pipeline__push), not by a walk of the queue:
 * that would bring every record of the batch into the cache twice.
 */
static void procs_check_due(struct pipeline *pl, uint64_t now)
{
	for (size_t i = 0; i < pl->procs_cap; i++) {
		struct proc_state *ps = &pl->procs[i];
		uint64_t start;

		/* an exited one too: its pid may have been taken since */
		if (!ps->used || ps->attach_child > 0 ||
		    ps->checked_ns >= ps->arrival_ns)
			continue;
		ps->checked_ns = now;
		if (!proc_may_have_changed(pl, ps, now))
			continue;
		switch (proc_life(pl, ps, &start)) {
		case PROC_REUSED:
			/* entries move in the table: look again from the start
			 * (those looked at are checked_ns = now) */
			proc_retire(pl, ps, start);
			i = (size_t)-1;
			break;
		case PROC_EXITED:
			ps->gone_ns = ps->gone_ns ? ps->gone_ns : now;
			break;
		default:
			break;
		}
	}
}

void procs__prune(struct pipeline *pl, uint64_t now)
{
	pid_t retire[256];
	uint64_t starts[256];
	size_t n;

	if (pl->opts.offline)
		return;
	procs_check_due(pl, now);
	procs_trim_queue(pl);
	if (now < pl->last_prune_ns + PRUNE_EVERY_NS)
		goto stats;
	pl->last_prune_ns = now;
	/*
	 * Exited: retired once seen so in an earlier call (the ring buffer
	 * was drained since: its last records are queued). Reused: at once,
	 * the new process's samples are coming. Collected, then retired:
	 * that moves entries in the table.
	 */
	do {
		n = 0;
		for (size_t i = 0; i < pl->procs_cap && n < 256; i++) {
			struct proc_state *ps = &pl->procs[i];
			enum proc_life l;
			uint64_t start = 0;
			bool was_gone = ps->gone_ns && ps->gone_ns < now;

			if (!ps->used || ps->attach_child > 0)
				continue;
			l = proc_may_have_changed(pl, ps, now) ?
			    proc_life(pl, ps, &start) : PROC_ALIVE;
			if (l == PROC_REUSED || (l != PROC_ALIVE && was_gone)) {
				starts[n] = l == PROC_REUSED ? start : 0;
				retire[n++] = ps->pid;
			} else if (l == PROC_EXITED) {
				ps->gone_ns = now;
			}
		}
		for (size_t i = 0; i < n; i++)
			proc_retire(pl, proc_slot(pl->procs, pl->procs_cap,
						  retire[i]), starts[i]);
	} while (n == 256);
	for (size_t i = 0; i < pl->retired_n;)
		if (pl->decode_seq >= pl->retired[i].until_seq)
			retired_drop(pl, i);
		else
			i++;
	exits_trim(pl, now);
	if (pl->cap && ++pl->prune_sweeps % PRUNE_TARGETS_EVERY == 0)
		capture__prune_targets(pl->cap);
stats:
	procs_fill_stats(pl);
}

/* ps's code map read into sink from now on (NULL: no more) */
static int proc_set_tap(struct proc_state *ps,
			const struct pipeline_sink *sink)
{
	if (!ps->cm)
		return 0;
	if (!sink) {
		codemap__set_tap(ps->cm, NULL, NULL);
		return 0;
	}
	if (!ps->tap && !(ps->tap = malloc(sizeof(*ps->tap))))
		return -ENOMEM;
	ps->tap->sink = sink;
	ps->tap->pid = ps->pid;
	/* the map as read so far, then what is read next */
	return codemap__set_tap(ps->cm, sink_tap, ps->tap);
}

int pipeline__set_sink(struct pipeline *pl, const struct pipeline_sink *sink)
{
	int rc = 0;

	pl->opts.sink = sink;
	pl->sink_seq0 = pl->decode_seq;
	for (size_t i = 0; i < pl->procs_cap; i++) {
		if (!pl->procs[i].used)
			continue;
		rc = proc_set_tap(&pl->procs[i], sink) ?: rc;
		py_codes_to_sink(pl, &pl->procs[i]);
	}
	/* exited processes whose last samples go to the new period */
	for (size_t i = 0; i < pl->retired_n; i++) {
		rc = proc_set_tap(&pl->retired[i], sink) ?: rc;
		py_codes_to_sink(pl, &pl->retired[i]);
	}
	return rc;
}

int procs__names(struct pipeline *pl, pid_t pid, const char **service,
		 const char **process)
{
	struct proc_state *ps = proc_slot(pl->procs, pl->procs_cap, pid);

	if (!ps->used)
		ps = pl->retired_n ? procs_retired(pl, pid) : NULL;
	if (!ps || (!ps->service && !ps->process))
		return -ENOENT;
	*service = ps->service;
	*process = ps->process;
	return 0;
}

static const char *offline_name(struct pipeline *pl, const char *s)
{
	return s && *s ? strtab__intern(pl->st, s) : NULL;
}

int pipeline__add_offline(struct pipeline *pl, pid_t pid, const char *comm,
			  bool is_jvm, uint64_t jvm_from_seq, const char *maps,
			  size_t maps_len, struct codemap *cm,
			  const struct pipeline_offline_names *nm)
{
	struct proc_state *ps;
	int rc;

	ps = proc_slot(pl->procs, pl->procs_cap, pid);
	if (!ps->used) {
		ps = proc_add(pl, pid);
		if (!ps) {
			codemap__free(cm);
			return -ENOMEM;
		}
		if (is_jvm)
			pl->stats.jvms++;
	}
	ps->comm = strtab__intern(pl->st, comm ? comm : "");
	ps->container_id = offline_name(pl, nm->container_id);
	ps->pod_uid = offline_name(pl, nm->pod_uid);
	ps->service = offline_name(pl, nm->service);
	ps->process = offline_name(pl, nm->process);
	ps->is_jvm = is_jvm;
	ps->jvm_from_seq = jvm_from_seq;
	if (cm) {
		codemap__free(ps->cm);
		pl->cm_epoch++;	/* the old map's names are gone */
		ps->cm = cm;
		pl->stats.jvms_decoded++;
	}
	rc = maps_len ? symbolizer__add_offline(pl->sz, pid, maps, maps_len) : 0;
	return rc;
}

void pipeline__python_mapped(struct pipeline *pl, pid_t pid, bool may_add)
{
	struct proc_state *ps;

	if (pl->opts.offline)
		return;
	ps = proc_slot(pl->procs, pl->procs_cap, pid);
	if (!ps->used) {
		if (may_add)
			procs__get(pl, pid, "");
		return;
	}
	if (ps->py || ps->is_jvm || ps->foreign || ps->gone_ns)
		return;
	ps->py_tried = false;
	ps->py_tries = 0;
	proc_try_python(pl, ps, "");
}

void pipeline__jvm_mapped(struct pipeline *pl, pid_t pid, bool may_add)
{
	struct proc_state *ps;

	if (pl->opts.offline)
		return;
	ps = proc_slot(pl->procs, pl->procs_cap, pid);
	if (!ps->used) {
		if (may_add)
			procs__get(pl, pid, "");
		return;
	}
	if (ps->is_jvm || ps->foreign || ps->gone_ns)
		return;
	/* what the symbolizer read may be the image before the exec */
	symbolizer__refresh(pl->sz, pid);
	if (symbolizer__is_jvm(pl->sz, pid))
		proc_became_jvm(pl, ps, pl->decode_seq + pl->queue.n);
}

int pipeline__prime(struct pipeline *pl, pid_t pid)
{
	struct proc_state *ps;

	pl->priming = true;
	ps = procs__get(pl, pid, "");
	pl->priming = false;
	return ps ? 0 : -ENOMEM;
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
		/* a cheap look first: only JVMs are primed, and
		 * processes that may be CPython (their frames are walked
		 * from their first sample on) */
		if (!maps__slurp(fd, &text, &len) &&
		    (maps_text_jvm(text, len) ||
		     memmem(text, len, "/python3", 8) ||
		     memmem(text, len, "/libpython3", 11))) {
			pipeline__prime(pl, (pid_t)pid);
			n++;
		}
		free(text);
		close(fd);
	}
	closedir(d);
	return n;
}
