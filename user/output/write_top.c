// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * top: the hottest frames as text, self and total, like `perf report
 * --stdio` without the call graph. Self counts a sample for its innermost
 * frame; total counts it once for every distinct frame in its stack.
 * Allocations and contended monitors get tables of their own, in bytes
 * and ns.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "output/evfamily.h"
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

/* what a stack adds to its rows in its family's section */
static uint64_t top_weight(const struct profile_stack *s, enum ev_family fam)
{
	switch (fam) {
	case EVF_ALLOC:
		return s->alloc_bytes;
	case EVF_LOCK:
		return s->weight_ns;
	default:
		return s->count;
	}
}

static const char *const top_units[EVF_N] = { "samples", "bytes", "ns" };

/* the table of one event family: its stacks only, by its weight */
static int top_section(const struct profile *p, FILE *f, enum ev_family fam)
{
	const struct profile_meta *m = profile__meta_const(p);
	struct top_tab tab = { 0 };
	struct strtab *st = strtab__new();
	char name[NAME_MAX_LEN];
	uint64_t total = 0, events = 0;
	size_t n = 0, nstacks = 0;
	int rc = 0;

	if (!st)
		return -ENOMEM;
	for (size_t i = 0; i < profile__nstacks(p); i++) {
		const struct profile_stack *s = profile__stack(p, i);
		uint64_t w = top_weight(s, fam);

		if (ev_family__of(&s->trace) != fam)
			continue;
		nstacks++;
		events += s->count;
		total += w;
		for (uint32_t j = 0; j < s->trace.nframes; j++) {
			const char *key;
			struct top_row *r;

			ev_frame_name(&s->trace, &s->trace.frames[j], name,
				      sizeof(name), true);
			key = strtab__intern(st, name);
			r = key ? top_get(&tab, key) : NULL;
			if (!r) {
				rc = -ENOMEM;
				goto cleanup;
			}
			if (j == 0)
				r->self += w;
			/* recursion: a frame counts once per stack in total */
			if (r->seen != i + 1) {
				r->seen = i + 1;
				r->total += w;
			}
		}
	}
	n = tab.n;
	if (n > 1)
		qsort(tab.rows, n, sizeof(*tab.rows), by_self);

	if (fam == EVF_TIME)
		fprintf(f, "# asgst-bpf top: %llu samples in %zu stacks, "
			"%u Hz, %.1f s, %llu lost\n",
			(unsigned long long)total, nstacks, m->frequency_hz,
			(double)m->duration_ns / 1e9,
			(unsigned long long)m->lost);
	else
		fprintf(f, "# asgst-bpf top %s: %llu %s in %llu events, %zu "
			"stacks, %.1f s\n", ev_family__name(fam),
			(unsigned long long)total, top_units[fam],
			(unsigned long long)events, nstacks,
			(double)m->duration_ns / 1e9);
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

/*
 * One table per event family the profile holds, each weighed in its own
 * unit (samples, bytes, ns), a blank line between them.
 */
int write_top(const struct profile *p, FILE *f)
{
	unsigned fams = ev_families(p);
	bool first = true;
	int rc = 0;

	for (int fam = 0; fam < EVF_N && !rc; fam++) {
		if (!(fams & EVF_BIT(fam)))
			continue;
		if (!first)
			putc('\n', f);
		first = false;
		rc = top_section(p, f, (enum ev_family)fam);
	}
	return rc;
}
