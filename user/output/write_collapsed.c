// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Collapsed ("folded") stacks, the input of FlameGraph's flamegraph.pl and
 * of most flame-graph viewers: one line per distinct stack,
 *   comm;root_frame;...;leaf_frame COUNT
 * Identical lines (stacks that differ only in fields the format does not
 * show: tid, pc, bci...) are merged. Names are in docs/formats.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "util/strtab.h"
#include "trace.h"
#include "output/writers.h"

struct sbuf {
	char *buf;
	size_t size;	/* capacity, including the NUL */
	size_t len;
};

static void sb_putc(struct sbuf *b, char c)
{
	if (b->len + 1 < b->size)
		b->buf[b->len++] = c;
}

/*
 * Append s, replacing what the format cannot carry: ';' separates frames,
 * a newline ends the record, other control bytes confuse viewers.
 */
static void sb_puts_clean(struct sbuf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == ';')
			c = ':';
		else if (c < 0x20 || c == 0x7f)
			c = '?';
		sb_putc(b, c);
	}
}

static void sb_printf_hex(struct sbuf *b, const char *prefix, uint64_t v)
{
	char tmp[40];

	snprintf(tmp, sizeof(tmp), "%s0x%" PRIx64, prefix, v);
	sb_puts_clean(b, tmp);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* how the stack crossed between Java and C at f, as a name tag */
static const char *crossing_tag(const struct frame *f)
{
	const char *d = frame_downcall__name(f->flags);
	const char *u = frame_upcall__name(f->flags);

	if (d)
		return !strcmp(d, "ffm_critical") ? " [ffm critical]" :
		       !strcmp(d, "ffm") ? " [ffm]" : " [jni]";
	if (u)
		return !strcmp(u, "ffm") ? " [upcall ffm]" : " [upcall jni]";
	return NULL;
}

size_t frame__display_name(const struct frame *f, char *buf, size_t size,
			   bool suffix)
{
	struct sbuf b = { buf, size, 0 };
	const char *sfx = NULL;
	size_t start;

	if (!size)
		return 0;
	switch (f->type) {
	case FRAME_KERNEL:
		if (f->symbol && *f->symbol)
			sb_puts_clean(&b, f->symbol);
		else
			sb_printf_hex(&b, "", f->pc);
		sfx = "_[k]";
		break;
	case FRAME_NON_JAVA:
		if (f->symbol && *f->symbol) {
			sb_puts_clean(&b, f->symbol);
		} else if (f->module && *f->module) {
			sb_puts_clean(&b, base_name(f->module));
			sb_printf_hex(&b, "+", f->offset);
		} else {
			sb_printf_hex(&b, "", f->pc);
		}
		break;
	case FRAME_JAVA:
	case FRAME_JAVA_INLINED:
	case FRAME_JAVA_NATIVE:
		/* pkg/Class.method, as async-profiler and FlameGraph's java
		 * palette expect */
		start = b.len;
		if (f->type == FRAME_JAVA_NATIVE && !f->klass && f->symbol &&
		    *f->symbol) {
			/* a stub as the barrier: FFM's nep_invoker_blob */
			sb_puts_clean(&b, f->symbol);
			break;
		}
		if (f->klass && *f->klass) {
			sb_puts_clean(&b, f->klass);
			for (size_t i = start; i < b.len; i++)
				if (b.buf[i] == '.')
					b.buf[i] = '/';
			sb_putc(&b, '.');
		}
		sb_puts_clean(&b, f->method && *f->method ? f->method : "[unknown]");
		if (f->type == FRAME_JAVA_INLINED)
			sfx = "_[i]";
		else if (f->type == FRAME_JAVA && f->comp_level >= 1)
			sfx = "_[j]";
		break;
	default:
		if (f->reason && *f->reason) {
			sb_puts_clean(&b, "[unknown: ");
			sb_puts_clean(&b, f->reason);
			sb_putc(&b, ']');
		} else {
			sb_puts_clean(&b, "[unknown]");
		}
		break;
	}
	/* trailing blanks would be eaten by parsers that split on spaces */
	while (b.len && (b.buf[b.len - 1] == ' '))
		b.len--;
	if (!b.len)
		sb_puts_clean(&b, "[unknown]");
	/* part of the name in every output, so filters can match it */
	if (crossing_tag(f))
		sb_puts_clean(&b, crossing_tag(f));
	if (suffix && sfx)
		sb_puts_clean(&b, sfx);
	b.buf[b.len] = '\0';
	return b.len;
}

/* the root element: the process name */
static size_t comm_name(const struct trace *t, char *buf, size_t size)
{
	struct sbuf b = { buf, size, 0 };
	const char *c = t->comm && *t->comm ? t->comm :
			t->thread && *t->thread ? t->thread : "[unknown]";

	sb_puts_clean(&b, c);
	while (b.len && b.buf[b.len - 1] == ' ')
		b.len--;
	if (!b.len)
		sb_puts_clean(&b, "[unknown]");
	b.buf[b.len] = '\0';
	return b.len;
}

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

int write_collapsed(const struct profile *p, FILE *f)
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

		len = comm_name(t, line, NAME_MAX_LEN + 1);
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
			len += frame__display_name(&t->frames[k], line + len,
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
