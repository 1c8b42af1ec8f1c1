// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* /proc/kallsyms parsing: one name buffer, one sorted array. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/kallsyms.h"

struct ksym {
	uint64_t addr;
	uint32_t name;		/* offset into names */
	uint32_t module;	/* offset into names, 0 = core kernel */
};

struct kallsyms {
	struct ksym *syms;
	size_t nsyms;
	char *names;		/* names[0] == '\0' */
	size_t names_len;
	bool restricted;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* stable-ish: keep the first name seen for an address */
	return x->name < y->name ? -1 : x->name > y->name;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/* append n bytes + NUL to names; offset or 0 on failure */
static uint32_t add_name(struct kallsyms *ks, size_t *cap, const char *s,
			 size_t n)
{
	size_t off = ks->names_len;

	if (off + n + 1 > UINT32_MAX)
		return 0;
	if (off + n + 1 > *cap) {
		size_t nc = *cap ? *cap * 2 : 1 << 16;
		char *p;

		while (nc < off + n + 1)
			nc *= 2;
		p = realloc(ks->names, nc);
		if (!p)
			return 0;
		ks->names = p;
		*cap = nc;
	}
	memcpy(ks->names + off, s, n);
	ks->names[off + n] = '\0';
	ks->names_len = off + n + 1;
	return off;
}

struct kallsyms *kallsyms__parse(const char *text, size_t len)
{
	struct kallsyms *ks;
	size_t cap_syms = 0, cap_names = 0, i = 0, nonzero = 0;
	uint32_t last_mod = 0;
	const char *last_mod_s = NULL;
	size_t last_mod_n = 0;

	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return NULL;
	if (!add_name(ks, &cap_names, "", 0) && ks->names_len == 0)
		goto fail;

	while (i < len) {
		const char *line = text + i, *eol, *p, *name, *mod = NULL;
		size_t llen, name_n, mod_n = 0;
		uint64_t addr = 0;
		char type;

		eol = memchr(line, '\n', len - i);
		llen = eol ? (size_t)(eol - line) : len - i;
		i += llen + 1;
		p = line;
		/* address */
		if (llen < 4)
			continue;
		while (p < line + llen && is_hex(*p)) {
			char c = *p++;

			if (p - line > 16)
				break;	/* not a 64-bit address */
			addr = addr * 16 + (c <= '9' ? c - '0' :
					    (c | 0x20) - 'a' + 10);
		}
		if (p == line || p - line > 16 || p + 3 > line + llen ||
		    *p != ' ' || p[2] != ' ')
			continue;
		type = p[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = p + 3;
		p = name;
		while (p < line + llen && *p != '\t' && *p != ' ')
			p++;
		name_n = p - name;
		if (name_n == 0)
			continue;
		while (p < line + llen && (*p == '\t' || *p == ' '))
			p++;
		if (p < line + llen && *p == '[') {
			const char *e = memchr(p, ']', line + llen - p);

			if (e) {
				mod = p + 1;
				mod_n = e - mod;
			}
		}
		if (addr)
			nonzero++;
		if (ks->nsyms == cap_syms) {
			size_t nc = cap_syms ? cap_syms * 2 : 4096;
			struct ksym *ns = realloc(ks->syms, nc * sizeof(*ns));

			if (!ns)
				goto fail;
			ks->syms = ns;
			cap_syms = nc;
		}
		ks->syms[ks->nsyms].addr = addr;
		ks->syms[ks->nsyms].name = add_name(ks, &cap_names, name, name_n);
		if (!ks->syms[ks->nsyms].name)
			goto fail;
		/* module names repeat on consecutive lines: share them */
		if (mod && mod_n) {
			if (!last_mod_s || last_mod_n != mod_n ||
			    memcmp(last_mod_s, mod, mod_n) != 0) {
				last_mod = add_name(ks, &cap_names, mod, mod_n);
				if (!last_mod)
					goto fail;
				last_mod_s = mod;
				last_mod_n = mod_n;
			}
			ks->syms[ks->nsyms].module = last_mod;
		} else {
			ks->syms[ks->nsyms].module = 0;
		}
		ks->nsyms++;
	}
	ks->restricted = ks->nsyms > 0 && nonzero == 0;
	if (ks->nsyms)
		qsort(ks->syms, ks->nsyms, sizeof(*ks->syms), ksym_cmp);
	return ks;
fail:
	kallsyms__free(ks);
	return NULL;
}

struct kallsyms *kallsyms__load(const char *path)
{
	struct kallsyms *ks = NULL;
	size_t len = 0, cap = 1 << 20;
	char *buf = NULL;
	int fd, err = 0;

	fd = open(path ? path : "/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	if (!buf) {
		err = ENOMEM;
		goto cleanup;
	}
	/* procfs files have no size: read until EOF */
	for (;;) {
		ssize_t r;

		if (len == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				err = ENOMEM;
				goto cleanup;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			goto cleanup;
		}
		if (r == 0)
			break;
		len += r;
	}
	ks = kallsyms__parse(buf, len);
	if (!ks)
		err = ENOMEM;
cleanup:
	free(buf);
	close(fd);
	if (err)
		errno = err;
	return ks;
}

void kallsyms__free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->names);
	free(ks);
}

size_t kallsyms__count(const struct kallsyms *ks)
{
	return ks ? ks->nsyms : 0;
}

int kallsyms__restricted(const struct kallsyms *ks)
{
	return ks && ks->restricted;
}

const char *kallsyms__lookup(const struct kallsyms *ks, uint64_t pc,
			     uint64_t *off, const char **module)
{
	size_t lo = 0, hi;
	const struct ksym *s;

	if (!ks || ks->restricted || ks->nsyms == 0 || pc < ks->syms[0].addr)
		return NULL;
	hi = ks->nsyms;
	/* last symbol with addr <= pc */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= pc)
			lo = mid;
		else
			hi = mid;
	}
	/* the first name of a run of aliases at one address */
	while (lo > 0 && ks->syms[lo - 1].addr == ks->syms[lo].addr)
		lo--;
	s = &ks->syms[lo];
	if (lo + 1 >= ks->nsyms && pc - s->addr > KALLSYMS_MAX_TAIL)
		return NULL;
	if (off)
		*off = pc - s->addr;
	if (module)
		*module = s->module ? ks->names + s->module : NULL;
	return ks->names + s->name;
}
