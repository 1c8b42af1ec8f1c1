// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Collapsed ("folded") stacks, the input of FlameGraph's flamegraph.pl and
 * of most flame-graph viewers: one line per distinct stack,
 *   comm;root_frame;...;leaf_frame COUNT
 * Identical lines (stacks that differ only in fields the format does not
 * show: tid, pc, bci...) are merged. Names are in docs/formats.md. One
 * file holds one event family (output/evfamily.h): its weight in one unit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "util/strtab.h"
#include "trace.h"
#include "output/evfamily.h"
#include "output/writers.h"

struct line_count {
	const char *line;	/* interned in the writer's strtab */
	uint64_t count;
};

struct line_map {
	struct line_count *v;	/* first-seen order */
	size_t n, cap;
	uint32_t *slots;	/* index + 1 */
	size_t nslots;
};

static int line_map__add(struct line_map *m, const char *line, uint64_t count)
{
	size_t j;

	if ((m->n + 1) * 2 > m->nslots) {
		size_t ns = m->nslots ? m->nslots * 2 : 1024;
		uint32_t *s = calloc(ns, sizeof(*s));

		if (!s)
			return -ENOMEM;
		for (size_t i = 0; i < m->n; i++) {
			j = ((uintptr_t)m->v[i].line >> 4) * 0x9e3779b97f4a7c15ull >> 20 & (ns - 1);
			while (s[j])
				j = (j + 1) & (ns - 1);
			s[j] = i + 1;
		}
		free(m->slots);
		m->slots = s;
		m->nslots = ns;
	}
	j = ((uintptr_t)line >> 4) * 0x9e3779b97f4a7c15ull >> 20 & (m->nslots - 1);
	for (; m->slots[j]; j = (j + 1) & (m->nslots - 1)) {
		if (m->v[m->slots[j] - 1].line == line) {
			m->v[m->slots[j] - 1].count += count;
			return 0;
		}
	}
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 256;
		struct line_count *v = realloc(m->v, nc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->v = v;
		m->cap = nc;
	}
	m->v[m->n].line = line;
	m->v[m->n].count = count;
	m->slots[j] = ++m->n;
	return 0;
}

#define NAME_MAX_LEN 4096

int write_collapsed_family(const struct profile *p, FILE *f, unsigned family)
{
	struct strtab *lines = strtab__new();
	struct line_map map = { 0 };
	size_t cap = 64 * 1024, len;
	char *line = malloc(cap);
	int err = -ENOMEM;

	if (!lines || !line)
		goto cleanup;
	for (size_t i = 0; i < profile__nstacks(p); i++) {
		const struct profile_stack *ps = profile__stack(p, i);
		const struct trace *t = &ps->trace;
		const char *key;

		if (ev_family__of(t) != family)
			continue;
		len = trace__display_comm(t, line, NAME_MAX_LEN + 1);
		if (t->event == TRACE_EV_OFFCPU) {
			memcpy(line + len, ";" PROFILE_OFFCPU_FRAME,
			       sizeof(PROFILE_OFFCPU_FRAME));
			len += sizeof(PROFILE_OFFCPU_FRAME);
		}
		/* frames are callee first: print them backwards, root first */
		for (uint32_t k = t->nframes; k-- > 0;) {
			if (cap - len < NAME_MAX_LEN + 2) {
				char *n = realloc(line, cap * 2);

				if (!n)
					goto cleanup;
				line = n;
				cap *= 2;
			}
			line[len++] = ';';
			len += ev_frame_name(t, &t->frames[k], line + len,
					     NAME_MAX_LEN + 1, true);
		}
		key = strtab__intern_n(lines, line, len);
		if (!key || line_map__add(&map, key, profile__stack_value(p, ps)))
			goto cleanup;
	}
	errno = 0;
	for (size_t i = 0; i < map.n; i++)
		fprintf(f, "%s %" PRIu64 "\n", map.v[i].line, map.v[i].count);
	err = fflush(f) || ferror(f) ? -(errno ? errno : EIO) : 0;
cleanup:
	free(line);
	free(map.v);
	free(map.slots);
	strtab__free(lines);
	return err;
}

int write_collapsed(const struct profile *p, FILE *f)
{
	unsigned fams = ev_families(p);
	int rc = 0;

	if (!(fams & (fams - 1)))
		return write_collapsed_family(p, f, ev_families__main(fams));
	/* several families in one stream (stdout): one block each, after a
	 * comment line naming it; never one weight added to another */
	for (unsigned fam = 0; fam < EVF_N && !rc; fam++) {
		if (!(fams & EVF_BIT(fam)))
			continue;
		fprintf(f, "# event: %s\n", ev_family__name(fam));
		rc = write_collapsed_family(p, f, fam);
	}
	return rc;
}
