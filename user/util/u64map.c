// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>

#include "util/u64map.h"

static size_t slot(uint64_t k, size_t cap)
{
	/* murmur3 finalizer: pointers and small ids spread alike */
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k & (cap - 1);
}

uint64_t u64map__get(const struct u64map *m, uint64_t k)
{
	if (!m->cap)
		return 0;
	for (size_t i = slot(k, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == k)
			return m->vals[i];
	return 0;
}

static void put_nogrow(struct u64map *m, uint64_t k, uint64_t v)
{
	size_t i;

	for (i = slot(k, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == k) {
			m->vals[i] = v;
			return;
		}
	m->keys[i] = k;
	m->vals[i] = v;
	m->n++;
}

int u64map__put(struct u64map *m, uint64_t k, uint64_t v)
{
	if (!v)
		return -EINVAL;
	if ((m->n + 1) * 10 > m->cap * 7) {
		struct u64map nm = { .cap = m->cap ? m->cap * 2 : 64 };

		nm.keys = calloc(nm.cap, sizeof(*nm.keys));
		nm.vals = calloc(nm.cap, sizeof(*nm.vals));
		if (!nm.keys || !nm.vals) {
			free(nm.keys);
			free(nm.vals);
			return -ENOMEM;
		}
		for (size_t j = 0; j < m->cap; j++)
			if (m->vals[j])
				put_nogrow(&nm, m->keys[j], m->vals[j]);
		free(m->keys);
		free(m->vals);
		*m = nm;
	}
	put_nogrow(m, k, v);
	return 0;
}

int u64map__del(struct u64map *m, uint64_t k)
{
	size_t mask = m->cap - 1, i, j;

	if (!m->cap)
		return 0;
	for (i = slot(k, m->cap); m->vals[i]; i = (i + 1) & mask)
		if (m->keys[i] == k)
			break;
	if (!m->vals[i])
		return 0;
	/* backward shift: an entry after the hole whose home is not in
	 * (hole, its slot] moves into the hole, so no probe stops early */
	for (j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
		size_t h = slot(m->keys[j], m->cap);

		if (((j - h) & mask) >= ((j - i) & mask)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->vals[i] = 0;
	m->n--;
	return 1;
}

void u64map__free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->n = 0;
}

size_t u64map__bytes(const struct u64map *m)
{
	return m->cap * (sizeof(*m->keys) + sizeof(*m->vals));
}
