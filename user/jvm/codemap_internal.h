/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal to the code map reader (user/jvm/codemap*.c): its state, shared
 * by the file reading, blob index and queries (codemap.c), the record
 * parsers (codemap_records.c) and what is kept of strings, classes and
 * methods (codemap_store.c). codemap.c reads and checks the file, hands
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
	uint32_t depth;			/* records of its tid, it included */
};

/*
 * A method, compact (codemap_store.c): 40 bytes in slabs, strings and
 * classes as numbers, its line table in the line arena (varint deltas).
 * What only a few methods have lives in side tables keyed by its index:
 * the time it died, an earlier method at the same Method*, a far
 * ConstMethod*, and its view (the struct codemap_method handed out, made
 * at its first lookup and kept until the method is freed).
 */
struct cm_meth {
	uint64_t method;		/* Method* */
	uint64_t load_ns;		/* its record's time */
	int32_t cdelta;			/* ConstMethod* - Method*, or CM_CFAR */
	uint32_t klass : 30;		/* class number */
	uint32_t native : 1;		/* CM_METHOD_NATIVE */
	uint32_t seen : 1;		/* in the generation read now */
	uint32_t name, sig;		/* string numbers */
	uint32_t modifiers;
	uint32_t lines;			/* offset of its table in the arena */
};

#define CM_CFAR			INT32_MIN	/* ConstMethod* in cm->cfar */
#define CM_SLAB_SHIFT		12		/* methods per slab: 4096 */
#define CM_VIEW_RING		16		/* codemap__method_at() views */

/* open addressing over numbers (value + 1; 0 empty), keys kept elsewhere */
struct cm_ix {
	uint32_t *slot;
	size_t cap, n;
};

/* version 3 ids -> numbers: key, value pairs (key 0 empty) */
struct cm_idmap {
	uint32_t (*kv)[2];
	size_t cap, n;
};

struct cm_view {
	struct codemap_method m;	/* first: handed out as is */
	size_t size;			/* bytes asked for */
	struct cm_line lines[];
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

	/* interned strings: text in chunks that never move, numbered */
	char **schunks;
	size_t nschunks, capschunks, schunk_used, schunk_cap, sbytes;
	const char **strs;		/* number -> text */
	size_t nstrs, capstrs;
	struct cm_ix str_ix;
	/* classes: number -> (name, source) string numbers */
	uint32_t (*classes)[2];
	size_t nclasses, capclasses;
	struct cm_ix class_ix;
	bool have_vm;
	bool have_cont;
	struct cm_cont cont;		/* valid when have_cont */
	uint32_t jdk_major;
	struct cm_vm_consts vm;
	const char *vm_version;

	struct cm_meth **mslabs;	/* methods, record order */
	size_t nmethods, nmslabs;
	struct cm_ix mix;		/* Method* -> newest method */
	struct u64map mdead;		/* index -> dead time (UINT64_MAX: alive) */
	struct u64map molder;		/* index -> earlier method's index + 1 */
	struct u64map mviews;		/* index -> struct cm_view */
	struct u64map cfar;		/* index -> ConstMethod* not near */
	struct cm_view *ring[CM_VIEW_RING];
	unsigned int ring_next;
	/* cm_method_get's last answers by Method*, good while mgen stays:
	 * moved by every change to the methods (cm_next_mgen) */
	struct cm_mmemo *mmemo;
	uint64_t mgen;
	uint8_t *arena;			/* line tables */
	size_t arena_used, arena_cap;
	uint8_t *lenc;			/* a line table being encoded */
	size_t lenccap;

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
	struct codemap_limits lim;	/* budgets */
	size_t nlive;			/* threads alive (end_ns UINT64_MAX) */
	char capmsg[160];		/* the first cap hit; "" none */
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
 * A record dropped past a cap: counted; the first names the cap (fmt,
 * as "65536 live threads").
 */
__attribute__((format(printf, 2, 3)))
void cm_capped(struct codemap *cm, const char *fmt, ...);

/*
 * Check one whole record of len bytes at file offset at and apply it.
 * 0, or -errno with the map failed.
 */
int cm_parse_record(struct codemap *cm, const uint8_t *p, uint32_t len,
		    uint64_t at);
/* forget the ids of a file left for its next generation */
void cm_ids_reset(struct codemap *cm);
size_t cm_ids_bytes(const struct codemap *cm);

/* ---- codemap_store.c: strings, classes, methods ---- */
/* interned text (lives as long as the map), NULL when out of memory */
const char *cm_intern(struct codemap *cm, const char *s, size_t n);
/* its number; 0 or -ENOMEM */
int cm_str_num(struct codemap *cm, const char *s, size_t n, uint32_t *num);
const char *cm_str(const struct codemap *cm, uint32_t num);
/* the number of class (name, source) (string numbers); 0 or -ENOMEM */
int cm_class_num(struct codemap *cm, uint32_t name, uint32_t src,
		 uint32_t *num);

/* a checked method to add: strings and class as numbers */
struct cm_mdesc {
	uint64_t method, const_method;
	uint32_t klass, name, sig, modifiers, flags, n_lines;
};
/* apply it (lines: n_lines entries in any order, sorted here); 0, or
 * -errno with the map failed */
int cm_method_add(struct codemap *cm, const struct cm_mdesc *in,
		  struct cm_line *lines, uint64_t t);
/* a hand-over: no method is seen in the new generation yet */
void cm_methods_unseen(struct codemap *cm);
/* methods the snapshot did not have died at t */
void cm_methods_reconcile(struct codemap *cm, uint64_t t);
/* free the methods dead before before; how many, or -ENOMEM (failed) */
long cm_methods_prune(struct codemap *cm, uint64_t before);
/* *timeless (may be NULL): the answer is the same at any at_ns */
const struct codemap_method *cm_method_get(const struct codemap *cm,
					   uint64_t method, uint64_t at_ns,
					   bool *timeless);
/* a new stamp for cm->mgen: no two maps' stamps are ever the same */
uint64_t cm_next_mgen(void);
const struct codemap_method *cm_method_at(const struct codemap *cm,
					  size_t i);
void cm_store_free(struct codemap *cm);
size_t cm_store_bytes(const struct codemap *cm);
/* an allocation of n bytes as the allocator holds it */
size_t cm_alloc_bytes(size_t n);

#endif /* ASGST_CODEMAP_INTERNAL_H */
