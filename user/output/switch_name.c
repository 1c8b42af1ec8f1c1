// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Period file names and their rotation for --switch-output. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "output/output.h"
#include "output/switch_name.h"

/* where ".TIME" goes in path: before the extension, else at the end */
static size_t stamp_pos(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *dot, *prev;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	/* ".profile" is a name, not an extension */
	if (!dot || dot == base)
		return strlen(path);
	/* a compressed file keeps its two extensions: x.TIME.pb.gz */
	if (!strcasecmp(dot, ".gz")) {
		for (prev = dot - 1; prev > base && *prev != '.'; prev--)
			;
		if (prev > base)
			dot = prev;
	}
	return (size_t)(dot - path);
}

int switch_name__format(char *buf, size_t len, const char *path, time_t t)
{
	char stamp[SWITCH_STAMP_LEN];
	const char *p, *pct;
	struct tm tm;
	size_t n = 0, at;
	int w;

	if (!gmtime_r(&t, &tm) ||
	    !strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm))
		return -EINVAL;
	if (!strstr(path, "%t")) {
		at = stamp_pos(path);
		w = snprintf(buf, len, "%.*s.%s%s", (int)at, path, stamp,
			     path + at);
		return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
	}
	for (p = path; (pct = strstr(p, "%t")); p = pct + 2) {
		w = snprintf(buf + n, len - n, "%.*s%s", (int)(pct - p), p,
			     stamp);
		if (w < 0 || (size_t)w >= len - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	}
	w = snprintf(buf + n, len - n, "%s", p);
	return w < 0 || (size_t)w >= len - n ? -ENAMETOOLONG : 0;
}

/* the oldest file's alloc and lock siblings, when it may have any */
static int unlink_siblings(const struct switch_files *f, const char *name)
{
	static const char *const fams[] = { "alloc", "lock" };
	int rc = 0;

	for (size_t i = 0; f->siblings && i < 2; i++) {
		char *s = output__sibling(name, fams[i]);

		if (!s)
			return -ENOMEM;
		if (unlink(s) && errno != ENOENT && !rc)
			rc = -errno;
		free(s);
	}
	return rc;
}

int switch_files__add(struct switch_files *f, const char *name)
{
	char *copy;
	int rc = 0;

	if (!f->max)
		return 0;
	if (!f->names) {
		f->names = calloc(f->max, sizeof(*f->names));
		if (!f->names)
			return -ENOMEM;
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	if (f->n == f->max) {
		/* the oldest goes; a file removed by someone else is fine */
		if (unlink(f->names[0]) && errno != ENOENT)
			rc = -errno;
		if (!rc)
			rc = unlink_siblings(f, f->names[0]);
		free(f->names[0]);
		memmove(f->names, f->names + 1,
			(f->max - 1) * sizeof(*f->names));
		f->n--;
	}
	f->names[f->n++] = copy;
	return rc;
}

void switch_files__free(struct switch_files *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->names[i]);
	free(f->names);
	f->names = NULL;
	f->n = 0;
}
