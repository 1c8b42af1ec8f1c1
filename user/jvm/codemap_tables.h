/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tables of the code map reader (codemap_tables.c): each whole record
 * the file part (codemap.c) read is checked completely here and applied
 * to the tables it owns: code blobs (with their index by address and the
 * live table, start -> loaded blob), stubs, threads, the VM's constants,
 * and the ids of version 3. Methods, strings and classes go to the
 * method store it holds (codemap_methods.h).
 *
 * It knows nothing of the file: no offsets but the one a record is at,
 * for messages. Errors: a function that fails returns -errno with why set
 * to the one line of what failed; the file part fails the map with it.
 *
 * Only codemap_tables.c writes a struct cm_tables; codemap.c reads its
 * counts, its VM constants and its blobs and threads by index (the
 * public getters and iteration), and calls the functions below.
 */
#ifndef ASGST_CODEMAP_TABLES_H
#define ASGST_CODEMAP_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jvm/codemap.h"
#include "jvm/codemap_budget.h"
#include "jvm/codemap_methods.h"
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
	uint32_t depth;			/* records of its tid, it included */
};

/* version 3 ids -> numbers: key, value pairs (key 0 empty) */
struct cm_idmap {
	uint32_t (*kv)[2];
	size_t cap, n;
};

/* what the tables counted, for struct codemap_stats */
struct cm_tables_stats {
	uint64_t blobs, stubs, threads, unloads;
	uint64_t reconciled;		/* found dead only by a snapshot */
	uint64_t strings, classes;	/* version 3 ids read */
	uint64_t find_cut;		/* lookups given up over one pc */
};

struct cm_tables {
	struct cm_store store;		/* methods, strings, classes */
	struct cm_budget *budget;	/* lent: caps, steps */
	char why[320];			/* what the last failure was */
	size_t mem;			/* bytes of blobs and threads */
	uint32_t epoch;			/* generations handed over */
	uint64_t seq;			/* records applied */
	/* changes: a new stamp (never another table's) at every change of
	 * what lookups answer; last_ev_ns: the latest time of a record */
	uint64_t stamp;
	uint64_t last_ev_ns;
	uint64_t pruned_before;		/* nothing dead before this is kept */
	struct cm_tables_stats n;

	bool have_vm;
	bool have_cont;
	struct cm_cont cont;		/* valid when have_cont */
	uint32_t jdk_major;
	struct cm_vm_consts vm;
	const char *vm_version;

	/* version 3: ids of strings and classes, of the file read now (a
	 * snapshot defines again what its records use): string id ->
	 * string number; class id -> class number */
	struct cm_idmap sids, cids;
	struct cm_line *lbuf;		/* a line table being decoded */
	size_t lbufcap;

	struct cm_blob **blobs;		/* record order */
	size_t nblobs, capb;
	struct cm_blob **sorted;	/* index over blobs[0..nsorted) */
	uint64_t *maxend;
	size_t nsorted;
	struct u64map live;		/* start -> newest loaded CODE blob */
	struct u64map stubs;		/* stub key -> newest live stub */

	struct cm_thr **threads;	/* record order */
	size_t nthreads, capt;
	struct u64map thash;		/* tid -> newest thread */
	size_t nlive;			/* threads alive (end_ns UINT64_MAX) */

	codemap_thread_fn thread_fn;	/* a thread started or ended */
	void *thread_ctx;
};

/* empty tables counting into budget */
void cm_tables__init(struct cm_tables *tb, struct cm_budget *budget);
void cm_tables__free(struct cm_tables *tb);
/* the bytes they hold (the store's included), as the allocator holds them */
size_t cm_tables__bytes(const struct cm_tables *tb);

/*
 * Check one whole record of len bytes (a multiple of 8, its header's len)
 * at file offset at and apply it. 0, or -errno.
 */
int cm_tables__apply(struct cm_tables *tb, const uint8_t *p, uint32_t len,
		     uint64_t at);
/* index the blobs added since the last call; 0 or -ENOMEM */
int cm_tables__index(struct cm_tables *tb);
/* the file is left for its next generation: its ids are forgotten,
 * nothing is seen in the new one yet */
void cm_tables__next_generation(struct cm_tables *tb);
/* the new generation's snapshot was read whole: what it did not have
 * died at t. 0 or -errno */
int cm_tables__reconcile(struct cm_tables *tb, uint64_t t);
/* free what died before before; how many, or -ENOMEM */
long cm_tables__prune(struct cm_tables *tb, uint64_t before);
/* the thread callback (codemap__set_thread_cb), told at once of the
 * threads read so far */
void cm_tables__set_thread_cb(struct cm_tables *tb, codemap_thread_fn fn,
			      void *ctx);

/* lookups on the per-sample path: codemap__find(), codemap__thread() */
/*
 * Lookups at times t1 and t2 (blobs, threads, methods) answer the same
 * while the stamp stays and both times are at or after the horizon (the
 * latest record's time, and the pruning's): 0 for the stamp when none
 * was ever made.
 */
uint64_t cm_tables__stamp(const struct cm_tables *tb, uint64_t *horizon);
const struct codemap_blob *cm_tables__find(const struct cm_tables *tb,
					   uint64_t pc, uint64_t t);
const struct codemap_thread *cm_tables__thread(const struct cm_tables *tb,
					       uint32_t tid, uint64_t t);

#endif /* ASGST_CODEMAP_TABLES_H */
