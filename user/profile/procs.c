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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"
#include "jvm/codemap.h"
#include "jvm/inject.h"
#include "jvm/jthreads.h"
#include "output/raw.h"
#include "profile/pipeline_int.h"
#include "symbols/maps.h"
#include "symbols/symbolize.h"
#include "util/strtab.h"

#define CODEMAP_RETRY_NS	(1000ull * 1000 * 1000)
#define PROCS_INIT_CAP		256

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

/* a JVM without an agent: inject one (once), unless told not to */
static void proc_start_attach(struct pipeline *pl, struct proc_state *ps)
{
	pid_t c;

	if (ps->attach_tried || pl->opts.no_attach || !pl->opts.agent_path ||
	    pl->opts.offline)
		return;
	ps->attach_tried = true;
	c = inject__start(ps->pid, pl->opts.agent_path, pl->opts.quiet);
	if (c > 0) {
		ps->attach_child = c;
		ps->attach_start_ns = mono_ns();
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
	proc_say_agent_off(pl, ps);
	proc_sync_threads(pl, ps);
	if (pl->opts.raw && (ps->tap = malloc(sizeof(*ps->tap)))) {
		ps->tap->raw = pl->opts.raw;
		ps->tap->pid = ps->pid;
		codemap__set_tap(ps->cm, raw_tap, ps->tap);
	}
}

void procs__reap_attaches(struct pipeline *pl, bool block)
{
	for (size_t i = 0; i < pl->procs_cap; i++) {
		struct proc_state *ps = &pl->procs[i];
		int rc;

		if (!ps->used || ps->attach_child <= 0)
			continue;
		rc = inject__reap(ps->attach_child, block);
		if (rc < 0)
			continue;
		ps->attach_child = 0;
		if (rc) {
			pl->stats.attached++;
			if (!pl->opts.quiet)
				fprintf(stderr, "asgst-bpf: attached the agent "
					"to JVM %d\n", (int)ps->pid);
			ps->cm_next_try_ns = 0;
			proc_try_codemap(pl, ps, mono_ns());
		}
	}
}

bool procs__attach_pending(const struct pipeline *pl)
{
	for (size_t i = 0; i < pl->procs_cap; i++)
		if (pl->procs[i].used && pl->procs[i].attach_child > 0)
			return true;
	return false;
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
	ps->comm = read_comm(pl->st, pid);
	if (!ps->comm)
		ps->comm = strtab__intern_n(pl->st, thread_comm,
					    ASGST_COMM_LEN);
	/* the sample that brought us here is the next to be queued */
	if (symbolizer__is_jvm(pl->sz, pid))
		proc_became_jvm(pl, ps, pl->decode_seq + pl->queue.n);
	return ps;
}

void procs__on_sample(struct pipeline *pl, struct proc_state *ps,
		      uint64_t now)
{
	if (ps->is_jvm)
		proc_try_codemap(pl, ps, now);
	else if (!pl->opts.offline && symbolizer__is_jvm(pl->sz, ps->pid))
		proc_became_jvm(pl, ps, pl->decode_seq);	/* exec'd java */
}

void procs__update_codemaps(struct pipeline *pl, uint64_t now)
{
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
	}
}

void procs__free(struct pipeline *pl)
{
	if (!pl->procs)
		return;
	procs__reap_attaches(pl, true);
	for (size_t i = 0; i < pl->procs_cap; i++) {
		codemap__free(pl->procs[i].cm);
		free(pl->procs[i].tap);
		jthreads__free(pl->procs[i].jts);
	}
	free(pl->procs);
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
		/* the file's samples count from its first */
		rc = raw_writer__proc(pl->opts.raw, ps->pid, ps->is_jvm,
				      ps->jvm_from_seq > pl->raw_seq0 ?
				      ps->jvm_from_seq - pl->raw_seq0 : 0,
				      ps->comm, text, len);
		if (rc)
			break;
	}
	return rc;
}

int pipeline__set_raw(struct pipeline *pl, struct raw_writer *raw)
{
	int rc = 0;

	pl->opts.raw = raw;
	pl->raw_seq0 = pl->decode_seq;
	for (size_t i = 0; i < pl->procs_cap; i++) {
		struct proc_state *ps = &pl->procs[i];

		if (!ps->used || !ps->cm)
			continue;
		if (!raw) {
			codemap__set_tap(ps->cm, NULL, NULL);
			continue;
		}
		if (!ps->tap && !(ps->tap = malloc(sizeof(*ps->tap)))) {
			rc = -ENOMEM;
			continue;
		}
		ps->tap->raw = raw;
		ps->tap->pid = ps->pid;
		/* the map as read so far, then what is read next */
		rc = codemap__set_tap(ps->cm, raw_tap, ps->tap) ?: rc;
	}
	return rc;
}

int pipeline__add_offline(struct pipeline *pl, pid_t pid, const char *comm,
			  bool is_jvm, uint64_t jvm_from_seq, const char *maps,
			  size_t maps_len, struct codemap *cm)
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
	return procs__get(pl, pid, "") ? 0 : -ENOMEM;
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
