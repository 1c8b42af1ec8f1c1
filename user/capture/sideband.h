/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's own account of what processes map, as perf takes it: a
 * dummy perf event per online CPU with mmap2, comm (exec) and task
 * (fork, exit) records, read from its ring. The recorder reads
 * /proc/PID/maps of a process at its samples, which a process that lives
 * a few milliseconds never waits for; these records say what it mapped,
 * in time order, whether or not it is still there (symbols/maplog.c).
 */
#ifndef ASGST_SIDEBAND_H
#define ASGST_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sideband_type {
	SIDEBAND_MMAP = 1,	/* an executable mapping */
	SIDEBAND_EXEC,		/* pid ran exec: a new image */
	SIDEBAND_FORK,		/* pid (tid) made by ppid */
	SIDEBAND_EXIT,		/* a thread ended; pid == tid: the process */
	SIDEBAND_LOST,		/* the kernel dropped n records */
};

#define SIDEBAND_PATH_MAX	4096

struct sideband_rec {
	uint32_t type;		/* enum sideband_type */
	uint32_t pid, tid;
	uint32_t ppid, ptid;	/* FORK, EXIT */
	uint64_t time_ns;	/* CLOCK_MONOTONIC, as the samples' */
	uint64_t start, len, pgoff;	/* MMAP */
	uint32_t maj, min;	/* MMAP: device of the file */
	uint64_t ino;
	uint32_t prot, flags;	/* MMAP: PROT_*, MAP_* */
	uint64_t lost;		/* LOST */
	const char *path;	/* MMAP: NUL-terminated, inside the record */
};

/*
 * One record as the kernel wrote it (perf_event_header first, a
 * sample_id of tid and time last). 1: parsed into *out (path points into
 * rec); 0: a record of a type not wanted; -EINVAL: malformed.
 */
int sideband__parse(const void *rec, size_t len, struct sideband_rec *out);

/*
 * The records in ring[tail, head) (size a power of two, positions taken
 * modulo size), each copied out whole into buf (bufsz >= 64 KiB: a
 * record's size is a u16) and handed to fn, until fn returns non-zero.
 * Returns the new tail; a record that cannot be (its size is below 8 or
 * beyond head) ends the read at head and counts in *bad.
 */
typedef int (*sideband_fn)(const struct sideband_rec *r, void *ctx);
uint64_t sideband__read_ring(const uint8_t *ring, uint64_t size,
			     uint64_t tail, uint64_t head, uint8_t *buf,
			     size_t bufsz, sideband_fn fn, void *ctx,
			     uint64_t *bad);

struct sideband;

/* 0 or -errno, err says why in one line (no such event, no memory) */
int sideband__open(struct sideband **out, size_t ring_kib_per_cpu, char *err,
		   size_t errlen);
/*
 * What every CPU's ring holds, sorted by time (records of one process on
 * two CPUs come in order), each handed to fn. Returns records read.
 */
int sideband__read(struct sideband *sb, sideband_fn fn, void *ctx);
struct sideband_stats {
	uint64_t records;	/* handed on */
	uint64_t lost;		/* dropped by the kernel (ring full) */
	uint64_t bad;		/* malformed, skipped */
};
void sideband__stats(const struct sideband *sb, struct sideband_stats *st);
void sideband__close(struct sideband *sb);

#endif /* ASGST_SIDEBAND_H */
