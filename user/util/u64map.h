/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A small open-addressing hash map from a 64-bit key (a number or a
 * pointer) to a nonzero 64-bit value (a number or a pointer); 0 means
 * absent. Zero-initialise a struct u64map to get an empty one.
 */
#ifndef ASGST_U64MAP_H
#define ASGST_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;
	uint64_t *vals;		/* 0: empty slot */
	size_t cap, n;
};

/* the value of k, 0 when absent */
uint64_t u64map__get(const struct u64map *m, uint64_t k);
/* insert or replace; v must not be 0. 0 or -ENOMEM */
int u64map__put(struct u64map *m, uint64_t k, uint64_t v);
/* remove k; 1 removed, 0 absent */
int u64map__del(struct u64map *m, uint64_t k);
void u64map__free(struct u64map *m);
/* bytes held, for memory accounting */
size_t u64map__bytes(const struct u64map *m);

#endif /* ASGST_U64MAP_H */
