// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* String interning: open-addressing hash set of NUL-terminated copies. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/strtab.h"

struct strtab {
	char **slots;
	size_t cap;	/* power of two */
	size_t count;
	size_t bytes;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
	/* FNV-1a: short strings, good enough spread, no dependency */
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

struct strtab *strtab__new(void)
{
	struct strtab *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->cap = 1024;
	st->slots = calloc(st->cap, sizeof(*st->slots));
	if (!st->slots) {
		free(st);
		return NULL;
	}
	return st;
}

void strtab__free(struct strtab *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->cap; i++)
		free(st->slots[i]);
	free(st->slots);
	free(st);
}

static int strtab__grow(struct strtab *st)
{
	size_t ncap = st->cap * 2;
	char **ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < st->cap; i++) {
		char *s = st->slots[i];
		size_t j;

		if (!s)
			continue;
		j = hash_bytes(s, strlen(s)) & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = s;
	}
	free(st->slots);
	st->slots = ns;
	st->cap = ncap;
	return 0;
}

const char *strtab__intern_n(struct strtab *st, const char *s, size_t n)
{
	size_t i;
	char *copy;

	if (!s)
		return NULL;
	/* a string never holds a NUL: cut there so lookups agree */
	n = strnlen(s, n);
	if ((st->count + 1) * 4 > st->cap * 3 && strtab__grow(st))
		return NULL;
	i = hash_bytes(s, n) & (st->cap - 1);
	while (st->slots[i]) {
		const char *t = st->slots[i];

		if (strncmp(t, s, n) == 0 && t[n] == '\0')
			return t;
		i = (i + 1) & (st->cap - 1);
	}
	copy = malloc(n + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, n);
	copy[n] = '\0';
	st->slots[i] = copy;
	st->count++;
	st->bytes += n + 1;
	return copy;
}

const char *strtab__intern(struct strtab *st, const char *s)
{
	return s ? strtab__intern_n(st, s, strlen(s)) : NULL;
}

size_t strtab__count(const struct strtab *st)
{
	return st->count;
}

size_t strtab__bytes(const struct strtab *st)
{
	return st->bytes + st->cap * sizeof(char *);
}
