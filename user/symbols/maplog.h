/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What each process has mapped for execution, kept from the kernel's
 * side-band records (capture/sideband.c) as they come: exec starts a new
 * image, fork copies the parent's, mmap adds (and cuts what it covers),
 * exit starts a short grace period after which the process is forgotten.
 * When /proc/PID/maps cannot be read any more (the process is gone), the
 * symbolizer takes the maps from here, in /proc's own text form.
 *
 * Only images seen from their start (an exec, or a fork of such an image)
 * are given out: a process that was already running when the log began
 * has mappings the log never saw.
 */
#ifndef ASGST_MAPLOG_H
#define ASGST_MAPLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct maplog_limits {
	size_t max_procs;	/* processes kept (least recently changed go) */
	size_t max_entries;	/* mappings per process (more are counted) */
	size_t max_bytes;	/* all of it (least recently changed go) */
	uint64_t keep_ns;	/* how long an exited process stays */
};

struct maplog_stats {
	uint64_t procs;		/* kept now */
	uint64_t entries;
	uint64_t bytes;
	uint64_t evicted;	/* dropped for the limits, not by exit */
	uint64_t refused;	/* mappings over max_entries */
	uint64_t served;	/* maps texts given to the symbolizer */
};

struct maplog;

/* NULL limits: 8192 processes, 1024 mappings each, 16 MiB, 5 s */
struct maplog *maplog__new(const struct maplog_limits *lim);
void maplog__free(struct maplog *ml);

/* the events, each with its time (CLOCK_MONOTONIC); 0 or -ENOMEM. An
 * event older than the image it would change is ignored. */
int maplog__exec(struct maplog *ml, uint32_t pid, uint64_t t);
int maplog__fork(struct maplog *ml, uint32_t pid, uint32_t ppid, uint64_t t);
void maplog__exit(struct maplog *ml, uint32_t pid, uint64_t t);
struct maplog_map {
	uint64_t start, len, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	uint32_t prot, flags;	/* PROT_*, MAP_* */
	const char *path;	/* "//anon" for anonymous code */
};
int maplog__mmap(struct maplog *ml, uint32_t pid, uint64_t t,
		 const struct maplog_map *m);

/*
 * pid's mappings as /proc/PID/maps text (malloc'ed, *len bytes, sorted by
 * address): 0, or -ENOENT when the log does not hold the whole image.
 */
int maplog__text(struct maplog *ml, uint32_t pid, char **text, size_t *len);

/*
 * A process already running when the log began, its maps read from /proc
 * (text as /proc/PID/maps gives it) as of time t: it is whole from then on
 * (its later mappings come as records), so what it forks is too. 0, or
 * -ENOMEM; -EEXIST when the log already holds its whole image.
 */
int maplog__seed(struct maplog *ml, uint32_t pid, uint64_t t,
		 const char *text, size_t len);
/* does the log hold pid's whole image */
bool maplog__whole(struct maplog *ml, uint32_t pid);

/* the process that forked pid, as a fork record said (0: not known) */
uint32_t maplog__parent(struct maplog *ml, uint32_t pid);

/* one side-band record applied (the sideband_fn shape; ctx: the maplog) */
struct sideband_rec;
int maplog__apply(const struct sideband_rec *r, void *ctx);

/* forget processes that exited more than keep_ns before now */
void maplog__prune(struct maplog *ml, uint64_t now_ns);
void maplog__stats(const struct maplog *ml, struct maplog_stats *st);

#endif /* ASGST_MAPLOG_H */
