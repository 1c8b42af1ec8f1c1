// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * top: the hottest frames as text, self and total, like `perf report
 * --stdio` without the call graph. Self counts a sample for its innermost
 * frame; total counts it once for every distinct frame in its stack.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "output/writers.h"

#define TOP_ROWS	40
#define NAME_MAX_LEN	512

struct top_row {
	const char *name;	/* interned */
	uint64_t self, total;
	uint64_t seen;		/* stack index + 1 that last counted total */
};

struct top_tab {
	struct top_row *rows;
	size_t n, cap;
	struct u64map ids;	/* name pointer -> row index + 1 */
};

static struct top_row *top_get(struct top_tab *t, const char *name)
{
	uint64_t id = u64map__get(&t->ids, (uintptr_t)name);

	if (id)
		return &t->rows[id - 1];
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 256;
		struct top_row *nr = realloc(t->rows, nc * sizeof(*nr));

		if (!nr)
			return NULL;
		t->rows = nr;
		t->cap = nc;
	}
	if (u64map__put(&t->ids, (uintptr_t)name, t->n + 1))
		return NULL;
	t->rows[t->n] = (struct top_row){ .name = name };
	return &t->rows[t->n++];
}

static int by_self(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

int write_top(const struct profile *p, FILE *f)
{
	const struct profile_meta *m = profile__meta_const(p);
	struct top_tab tab = { 0 };
	struct strtab *st = strtab__new();
	char name[NAME_MAX_LEN];
	uint64_t total = 0;
	size_t n = 0;
	int rc = 0;

	if (!st)
		return -ENOMEM;
	for (size_t i = 0; i < profile__nstacks(p); i++) {
		const struct profile_stack *s = profile__stack(p, i);

		total += s->count;
		for (uint32_t j = 0; j < s->trace.nframes; j++) {
			const char *key;
			struct top_row *r;

			frame__display_name(&s->trace.frames[j], name,
					    sizeof(name), true);
			key = strtab__intern(st, name);
			r = key ? top_get(&tab, key) : NULL;
			if (!r) {
				rc = -ENOMEM;
				goto cleanup;
			}
			if (j == 0)
				r->self += s->count;
			/* recursion: a frame counts once per stack in total */
			if (r->seen != i + 1) {
				r->seen = i + 1;
				r->total += s->count;
			}
		}
	}
	n = tab.n;
	if (n > 1)
		qsort(tab.rows, n, sizeof(*tab.rows), by_self);

	fprintf(f, "# asgst-bpf top: %llu samples in %zu stacks, %u Hz, "
		"%.1f s, %llu lost\n",
		(unsigned long long)total, profile__nstacks(p), m->frequency_hz,
		(double)m->duration_ns / 1e9, (unsigned long long)m->lost);
	fprintf(f, "#   self%%     self  total%%    total  frame\n");
	for (size_t i = 0; i < n && i < TOP_ROWS; i++) {
		const struct top_row *r = &tab.rows[i];

		if (!r->self)
			break;
		fprintf(f, "%7.2f%% %8llu %6.2f%% %8llu  %s\n",
			total ? 100.0 * (double)r->self / (double)total : 0.0,
			(unsigned long long)r->self,
			total ? 100.0 * (double)r->total / (double)total : 0.0,
			(unsigned long long)r->total, r->name);
	}
	if (ferror(f))
		rc = -EIO;
cleanup:
	free(tab.rows);
	u64map__free(&tab.ids);
	strtab__free(st);
	return rc;
}
