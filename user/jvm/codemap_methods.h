/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The method store of the code map reader (codemap_methods.c): what is
 * kept of strings, classes and methods, compactly, and the method lookups
 * of the decoder. It knows nothing of the file or of records: the tables
 * (codemap_tables.c) hand it checked methods, strings and classes.
 *
 * Errors: a function that fails returns -errno with why set to what
 * failed; the caller fails the map with it. A cap hit drops the method
 * and counts it in the budget it was lent.
 *
 * Only codemap_methods.c writes a struct cm_store; the other parts read
 * added and why, and call the functions below.
 */
#ifndef ASGST_CODEMAP_METHODS_H
#define ASGST_CODEMAP_METHODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jvm/codemap_budget.h"

#define CM_VIEW_RING		16		/* codemap__method_at() views */

/* open addressing over numbers (value + 1; 0 empty), keys kept elsewhere */
struct cm_ix {
	uint32_t *slot;
	size_t cap, n;
};

struct cm_meth;
struct cm_view;
struct cm_mmemo;

struct cm_store {
	struct cm_budget *budget;	/* lent: caps, steps */
	const char *why;		/* what the last failure was */
	size_t mem;			/* bytes of views and the memo */
	uint64_t added;			/* methods added (stats.methods) */

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

	struct cm_meth **mslabs;	/* methods, record order */
	size_t nmethods, nmslabs;
	struct cm_ix mix;		/* Method* -> newest method */
	struct u64map mdead;		/* index -> dead time (UINT64_MAX: alive) */
	struct u64map molder;		/* index -> earlier method's index + 1 */
	struct u64map mviews;		/* index -> struct cm_view */
	struct u64map cfar;		/* index -> ConstMethod* not near */
	struct cm_view *ring[CM_VIEW_RING];
	unsigned int ring_next;
	/* the last answers of cm_store__get by Method*, good while mgen
	 * stays: moved by every change to the methods */
	struct cm_mmemo *mmemo;
	uint64_t mgen;
	uint8_t *arena;			/* line tables */
	size_t arena_used, arena_cap;
	uint8_t *lenc;			/* a line table being encoded */
	size_t lenccap;
};

/* an empty store counting into budget */
void cm_store__init(struct cm_store *st, struct cm_budget *budget);
void cm_store__free(struct cm_store *st);
/* the bytes it holds, as the allocator holds them */
size_t cm_store__bytes(const struct cm_store *st);

/* ---- strings and classes ---- */
/* the number of text s (n bytes, up to a NUL it may hold); 0 or -ENOMEM */
int cm_store__str_num(struct cm_store *st, const char *s, size_t n,
		      uint32_t *num);
/* interned text (lives as long as the store), NULL when out of memory */
const char *cm_store__intern(struct cm_store *st, const char *s, size_t n);
/* the text of a number, NULL when there is none */
const char *cm_store__str(const struct cm_store *st, uint32_t num);
/* the number of class (name, source) (string numbers); 0 or -ENOMEM */
int cm_store__class_num(struct cm_store *st, uint32_t name, uint32_t src,
			uint32_t *num);

/* ---- methods ---- */
/* a checked method to add: strings and class as numbers */
struct cm_mdesc {
	uint64_t method, const_method;
	uint32_t klass, name, sig, modifiers, flags, n_lines;
};
/* add it, loaded at t (lines: n_lines entries in any order, sorted
 * here); 0, or -errno */
int cm_store__add(struct cm_store *st, const struct cm_mdesc *in,
		  struct cm_line *lines, uint64_t t);
/* a hand-over: no method is seen in the new generation yet */
void cm_store__unseen(struct cm_store *st);
/* methods the snapshot did not have died at t; 0 or -ENOMEM */
int cm_store__reconcile(struct cm_store *st, uint64_t t);
/* free the methods dead before before; how many, or -ENOMEM (then the
 * store is to be failed with it) */
long cm_store__prune(struct cm_store *st, uint64_t before);
/*
 * The method at Method* mp at at_ns (0: the newest), NULL when none or
 * out of memory; *timeless (may be NULL): the answer is the same at any
 * at_ns. On the per-frame path.
 */
const struct codemap_method *cm_store__get(const struct cm_store *st,
					   uint64_t mp, uint64_t at_ns,
					   bool *timeless);
/* method i in record order, in a view of a ring of CM_VIEW_RING unless
 * it was looked up */
const struct codemap_method *cm_store__at(const struct cm_store *st,
					  size_t i);
static inline size_t cm_store__count(const struct cm_store *st)
{
	return st->nmethods;
}

/* a stamp of the methods as they are: no two stores share one */
static inline uint64_t cm_store__stamp(const struct cm_store *st)
{
	return st->mgen;
}

#endif /* ASGST_CODEMAP_METHODS_H */
