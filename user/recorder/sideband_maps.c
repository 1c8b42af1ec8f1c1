// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The side-band into the map log and the symbolizer: the kernel's mmap,
 * exec, fork and exit records keep the maps of processes that end before
 * /proc/PID/maps is read (a few milliseconds of life), and tell the
 * pipeline which processes exited.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/recorder_int.h"
#include "symbols/maplog.h"
#include "symbols/maps.h"
#include "symbols/symbolize.h"
#include "util/clock.h"

/* exited processes stay seconds in the map log: a look a second is enough */
#define PRUNE_EVERY_NS	1000000000ull

/*
 * A fork by a process the records never saw start (it ran before the
 * recording): its maps from /proc first, so the child's image (until it
 * execs, and kept past the exec for the samples taken before) is whole.
 */
static int on_sideband(const struct sideband_rec *s, void *ctx)
{
	struct recorder *r = ctx;
	char path[64], *text = NULL;
	const char *p;
	size_t len = 0;
	int fd, ret;

	if (s->type == SIDEBAND_FORK && s->pid != s->ppid &&
	    !maplog__whole(r->ml, s->ppid)) {
		snprintf(path, sizeof(path), "/proc/%u/maps", s->ppid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !maps__slurp(fd, &text, &len) && len)
			maplog__seed(r->ml, s->ppid, s->time_ns, text, len);
		if (fd >= 0)
			close(fd);
		free(text);
	}
	if (s->type == SIDEBAND_EXIT)
		pipeline__note_exit(r->pl, (pid_t)s->pid);
	ret = maplog__apply(s, r->ml);
	/* a JVM starting: its agent asked without waiting for a sample */
	if (r->jev && s->type == SIDEBAND_MMAP && s->path &&
	    (p = strrchr(s->path, '/')) && !strcmp(p, "/libjvm.so"))
		pipeline__jvm_mapped(r->pl, (pid_t)s->pid,
				     r->o.filter_mode == ASGST_FILTER_ALL ||
				     (pid_t)s->pid == r->tg.child);
	/* CPython: its frames walked from its first sample on */
	if (s->type == SIDEBAND_MMAP && s->path && !s->pgoff &&
	    (p = strrchr(s->path, '/')) &&
	    (!strncmp(p, "/python3.", 9) || !strncmp(p, "/libpython3.", 12)))
		pipeline__python_mapped(r->pl, (pid_t)s->pid,
					r->o.filter_mode == ASGST_FILTER_ALL ||
					(pid_t)s->pid == r->tg.child);
	return ret;
}

/* what the kernel said processes mapped, exec'd, forked, ended, to now */
void recorder_sideband_pump(struct recorder *r, uint64_t now)
{
	struct sideband_stats st;

	if (!r->sb)
		return;
	r->ops->sideband_read(r->sb, on_sideband, r);
	/* an exit may be among what was lost: pid reuse is looked for in
	 * /proc again, for every process */
	r->ops->sideband_stats(r->sb, &st);
	if (st.lost || st.bad)
		pipeline__exit_feed(r->pl, false);
	if (now - r->ml_pruned >= PRUNE_EVERY_NS) {
		maplog__prune(r->ml, now);
		r->ml_pruned = now;
	}
}

/* the symbolizer's source for processes /proc no longer has */
static int sideband_maps(void *ctx, pid_t pid, char **text, size_t *len,
			 pid_t *root_pid)
{
	struct recorder *r = ctx;
	uint32_t ppid;

	recorder_sideband_pump(r, clock__mono_ns());
	if (maplog__text(r->ml, (uint32_t)pid, text, len))
		return -ENOENT;
	/* its parent's root holds the same files, while it lives */
	ppid = maplog__parent(r->ml, (uint32_t)pid);
	*root_pid = ppid && kill((pid_t)ppid, 0) == 0 ? (pid_t)ppid : 0;
	return 0;
}

/*
 * Without side-band records (an old kernel) the frames of processes that
 * end before /proc is read stay addresses.
 */
void recorder_sideband_open(struct recorder *r)
{
	char err[256] = "";

	if (!r->ops->sideband_open)
		return;
	r->ml = maplog__new(NULL);
	if (!r->ml || r->ops->sideband_open(&r->sb, err, sizeof(err))) {
		if (!r->o.quiet && r->ml)
			recorder_say(r, "%s; processes that end within a few "
				     "ms keep unnamed frames", err);
		maplog__free(r->ml);
		r->ml = NULL;
		r->sb = NULL;
		return;
	}
	symbolizer__set_maps_fallback(pipeline__symbolizer(r->pl),
				      sideband_maps, r);
	pipeline__exit_feed(r->pl, true);
}

void recorder_sideband_close(struct recorder *r)
{
	if (r->sb)
		r->ops->sideband_close(r->sb);
	r->sb = NULL;
	maplog__free(r->ml);
	r->ml = NULL;
}
