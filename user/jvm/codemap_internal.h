/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal to the code map reader (user/jvm/codemap*.c): its state, shared
 * by the file reading, blob index and queries (codemap.c) and the record
 * parsers (codemap_records.c). codemap.c reads and checks the file, hands
 * every whole record to cm_parse_record() and indexes the blobs it added.
 */
#ifndef ASGST_CODEMAP_INTERNAL_H
#define ASGST_CODEMAP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "jvm/codemap.h"
#include "util/u64map.h"

struct cm_blob {
	struct codemap_blob b;		/* first: handed out as is */
	struct cm_blob *shadow;		/* older loaded blob at the same start */
	uint64_t seq;			/* record order */
	size_t size;			/* bytes of this allocation */
	uint32_t epoch;			/* last generation that had it */
};

struct cm_thr {
	struct codemap_thread t;	/* first */
	struct cm_thr *older;		/* previous thread with this tid */
	uint32_t epoch;
};

/* a method and what the reader knows of its life */
struct cm_meth {
	struct codemap_method m;	/* first: handed out as is */
	struct cm_meth *older;		/* earlier method at this Method* */
	uint64_t load_ns;		/* its record's time */
	uint64_t dead_ns;		/* 0 while it may be in use */
	size_t size;
	uint32_t epoch;
};

struct codemap {
	int fd;
	pid_t pid;			/* host pid, for messages; 0 unknown */
	char *path;			/* for messages */
	bool failed;
	int errnum;
	char err[512];

	struct cm_file_header hdr;	/* last validated copy */
	uint64_t pos;			/* next record offset */

	/* generations (codemap_format.h): the path is opened again at a
	 * handover; epoch counts the handovers this reader made, vbase is
	 * where this file's records start in the tap's one stream */
	char *root;			/* NULL: not opened by path, no follow */
	char *rel;
	uint32_t epoch;
	uint64_t vbase;
	bool reconcile;			/* a snapshot read, not reconciled */
	uint64_t retain_ns;		/* 0: keep everything */
	uint64_t pruned_before;		/* nothing dead before this is kept */
	uint64_t last_prune_ns;
	struct u64map stubs;		/* CM_STUB_KEY -> newest live stub */
	uint64_t loss_told;		/* codemap__loss_news() */
	uint64_t at_ns;			/* codemap__set_decode_time() */

	struct strtab *strs;
	bool have_vm;
	bool have_cont;
	struct cm_cont cont;		/* valid when have_cont */
	uint32_t jdk_major;
	struct cm_vm_consts vm;
	const char *vm_version;

	struct codemap_method **methods;
	size_t nmethods, capm;
	struct u64map mhash;		/* Method* -> newest method */

	/* version 3: ids of strings and classes, of the file read now (a
	 * snapshot defines again what its records use): string id ->
	 * interned text; class id -> interned name, source ("" none) */
	struct u64map sids, cid_name, cid_src;
	struct cm_line *lbuf;		/* a line table being decoded */
	size_t lbufcap;

	struct cm_blob **blobs;		/* record order */
	size_t nblobs, capb;
	struct cm_blob **sorted;	/* index over blobs[0..nsorted) */
	uint64_t *maxend;
	size_t nsorted;
	struct u64map live;		/* start -> newest loaded CODE blob */

	struct cm_thr **threads;
	size_t nthreads, capt;
	struct u64map thash;		/* tid -> newest thread */

	uint8_t *buf;
	size_t bufcap;

	codemap_tap_fn tap;		/* raw recordings: bytes as consumed */
	void *tap_ctx;
	codemap_thread_fn thread_fn;	/* a thread started or ended */
	void *thread_ctx;

	struct codemap_stats stats;
	size_t mem;			/* bytes of our own records */
};

/* stubs are told apart by their range (several may share a start) */
#define CM_STUB_KEY(start, end)	((start) ^ ((end) * 0x9E3779B97F4A7C15ull))

/* u64 -> pointer maps over the shared u64map */
static inline void *u64map_get(const struct u64map *m, uint64_t k)
{
	return (void *)(uintptr_t)u64map__get(m, k);
}

static inline int u64map_put(struct u64map *m, uint64_t k, void *v)
{
	return u64map__put(m, k, (uint64_t)(uintptr_t)v);
}

/*
 * Disable the map: cm->err gets one line naming the file, what (fmt) and
 * what is lost. The first failure stays. Returns -errnum (-cm->errnum once
 * failed).
 */
__attribute__((format(printf, 3, 4)))
int cm_fail(struct codemap *cm, int errnum, const char *fmt, ...);

/*
 * Check one whole record of len bytes at file offset at and apply it.
 * 0, or -errno with the map failed.
 */
int cm_parse_record(struct codemap *cm, const uint8_t *p, uint32_t len,
		    uint64_t at);
/* forget the ids of a file left for its next generation */
void cm_ids_reset(struct codemap *cm);
size_t cm_ids_bytes(const struct codemap *cm);

#endif /* ASGST_CODEMAP_INTERNAL_H */
