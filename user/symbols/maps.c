// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* /proc/PID/maps parsing; every field bounds-checked. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/maps.h"

static int parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0;

	while (s < end) {
		char c = *s;
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (n >= 16)
			return -EINVAL;
		x = x * 16 + d;
		n++;
		s++;
	}
	if (!n)
		return -EINVAL;
	*v = x;
	*p = s;
	return 0;
}

static int parse_dec(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0;

	while (s < end && *s >= '0' && *s <= '9') {
		if (n >= 19)
			return -EINVAL;
		x = x * 10 + (*s - '0');
		n++;
		s++;
	}
	if (!n)
		return -EINVAL;
	*v = x;
	*p = s;
	return 0;
}

static int expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

int maps__parse_line(const char *line, size_t len, struct maps_entry *out)
{
	const char *p = line, *end = line + len, *path;
	uint64_t maj, min, ino;
	size_t plen;
	static const char del[] = " (deleted)";

	memset(out, 0, sizeof(*out));
	while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	if (parse_hex(&p, end, &out->start) || expect(&p, end, '-') ||
	    parse_hex(&p, end, &out->end) || expect(&p, end, ' '))
		return -EINVAL;
	if (out->end <= out->start || end - p < 5)
		return -EINVAL;
	out->r = p[0] == 'r';
	out->w = p[1] == 'w';
	out->x = p[2] == 'x';
	out->shared = p[3] == 's';
	p += 4;
	if (expect(&p, end, ' ') || parse_hex(&p, end, &out->pgoff) ||
	    expect(&p, end, ' ') || parse_hex(&p, end, &maj) ||
	    expect(&p, end, ':') || parse_hex(&p, end, &min) ||
	    expect(&p, end, ' ') || parse_dec(&p, end, &ino))
		return -EINVAL;
	if (maj > UINT32_MAX || min > UINT32_MAX)
		return -EINVAL;
	out->dev_major = maj;
	out->dev_minor = min;
	out->inode = ino;
	while (p < end && *p == ' ')
		p++;
	path = p;
	plen = end - p;
	if (plen == 0) {
		out->kind = MAPS_ANON;
		return 0;
	}
	if (plen >= sizeof(del) - 1 &&
	    memcmp(path + plen - (sizeof(del) - 1), del, sizeof(del) - 1) == 0) {
		out->deleted = true;
		plen -= sizeof(del) - 1;
	}
	out->kind = path[0] == '[' ? MAPS_SPECIAL :
		    path[0] == '/' ? MAPS_FILE : MAPS_SPECIAL;
	out->path = strndup(path, plen);
	if (!out->path)
		return -ENOMEM;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct maps_entry *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int maps__parse(const char *text, size_t len, struct maps *out)
{
	size_t i = 0, cap = 0;
	int err;

	out->e = NULL;
	out->n = 0;
	while (i < len) {
		const char *line = text + i, *eol;
		size_t llen;
		struct maps_entry e;

		eol = memchr(line, '\n', len - i);
		llen = eol ? (size_t)(eol - line) : len - i;
		i += llen + 1;
		err = maps__parse_line(line, llen, &e);
		if (err == -ENOMEM)
			goto fail;
		if (err)
			continue;
		if (out->n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct maps_entry *ne = realloc(out->e, nc * sizeof(*ne));

			if (!ne) {
				free(e.path);
				err = -ENOMEM;
				goto fail;
			}
			out->e = ne;
			cap = nc;
		}
		out->e[out->n++] = e;
	}
	/* the kernel lists them sorted; a saved or hand-edited file may not */
	if (out->n > 1)
		qsort(out->e, out->n, sizeof(*out->e), entry_cmp);
	return 0;
fail:
	maps__free(out);
	return -ENOMEM;
}

int maps__slurp(int fd, char **bufp, size_t *lenp)
{
	size_t len = 0, cap = 16384;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (cap - len < 2) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			int err = -errno;

			if (errno == EINTR)
				continue;
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		len += r;
	}
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
}

int maps__read(pid_t pid, struct maps *out)
{
	char path[64], *buf = NULL;
	size_t len = 0;
	int fd, err;

	out->e = NULL;
	out->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = maps__slurp(fd, &buf, &len);
	close(fd);
	if (err)
		return err;
	/* a zombie has an empty maps file: treat it as gone */
	if (len == 0) {
		free(buf);
		return -ESRCH;
	}
	err = maps__parse(buf, len, out);
	free(buf);
	return err;
}

void maps__free(struct maps *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		free(m->e[i].path);
	free(m->e);
	m->e = NULL;
	m->n = 0;
}

const struct maps_entry *maps__find(const struct maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->e[mid].start)
			hi = mid;
		else if (addr >= m->e[mid].end)
			lo = mid + 1;
		else
			return &m->e[mid];
	}
	return NULL;
}
