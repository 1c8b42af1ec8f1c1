/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the parts of the code map reader share, header only (no functions
 * of their own, so no calls between the parts): the budgets one map has
 * (struct codemap_limits) with what hitting them cost, and how bytes are
 * counted against the memory budget.
 *
 * codemap.c owns the budget of a map (its limits, codemap__capped());
 * the tables (codemap_tables.c) and the method store (codemap_methods.c)
 * are lent it to check their caps and count into it.
 */
#ifndef ASGST_CODEMAP_BUDGET_H
#define ASGST_CODEMAP_BUDGET_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jvm/codemap.h"
#include "util/u64map.h"

struct cm_budget {
	struct codemap_limits lim;
	uint64_t capped;		/* records dropped past a cap */
	uint64_t steps;			/* chain links walked applying records */
	char msg[160];			/* the first cap hit; "" none */
};

/*
 * A record dropped past a cap: counted; the first names the cap (fmt,
 * as "65536 live threads").
 */
__attribute__((format(printf, 2, 3)))
static inline void cm_budget__capped(struct cm_budget *b, const char *fmt, ...)
{
	va_list ap;

	b->capped++;
	if (b->msg[0])
		return;
	va_start(ap, fmt);
	vsnprintf(b->msg, sizeof(b->msg), fmt, ap);
	va_end(ap);
}

/* an allocation of n bytes as the allocator holds it */
static inline size_t cm_alloc_bytes(size_t n)
{
	/* glibc: an 8-byte header, 16-byte granules, 32 bytes at least */
	size_t b = (n + 8 + 15) & ~(size_t)15;

	return b < 32 ? 32 : b;
}

/* an array of cap elements of elem bytes, as the allocator holds it */
static inline size_t cm_arr_bytes(size_t cap, size_t elem)
{
	return cap ? cm_alloc_bytes(cap * elem) : 0;
}

static inline size_t cm_map_bytes(const struct u64map *m)
{
	return m->cap ? 2 * cm_alloc_bytes(m->cap * sizeof(uint64_t)) : 0;
}

/* u64 -> pointer maps over the shared u64map */
static inline void *u64map_get(const struct u64map *m, uint64_t k)
{
	return (void *)(uintptr_t)u64map__get(m, k);
}

static inline int u64map_put(struct u64map *m, uint64_t k, void *v)
{
	return u64map__put(m, k, (uint64_t)(uintptr_t)v);
}

#endif /* ASGST_CODEMAP_BUDGET_H */
