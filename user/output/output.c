// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "output/evfamily.h"
#include "output/output.h"
#include "profile/profile.h"

/* the collapsed extensions a sibling's family name goes before */
static const char *const collapsed_exts[] = { ".collapsed", ".folded",
					      ".txt" };

char *output__sibling(const char *path, const char *family)
{
	const char *base = strrchr(path, '/');
	size_t n = strlen(path), cut = n;
	char *s;

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(collapsed_exts) / sizeof(*collapsed_exts);
	     i++) {
		size_t e = strlen(collapsed_exts[i]);

		if (n - (size_t)(base - path) > e &&
		    !strcasecmp(path + n - e, collapsed_exts[i])) {
			cut = n - e;
			break;
		}
	}
	s = malloc(n + strlen(family) + 2);
	if (s)
		sprintf(s, "%.*s.%s%s", (int)cut, path, family, path + cut);
	return s;
}

/*
 * Each JVM event family beside the main one in a sibling file, created as
 * the main one is (util/outfile.h): a collapsed file holds one weight.
 */
static int write_collapsed_siblings(struct output *o, const struct profile *p,
				    unsigned fams, char *err, size_t errlen)
{
	struct outfile sf;
	char *path;
	int rc = 0;

	for (unsigned fam = 0; fam < EVF_N && !rc; fam++) {
		if (!(fams & EVF_BIT(fam)))
			continue;
		path = output__sibling(o->path, ev_family__name(fam));
		if (!path) {
			snprintf(err, errlen, "writing %s failed: %s", o->path,
				 strerror(ENOMEM));
			return -ENOMEM;
		}
		rc = outfile__create(&sf, path, err, errlen);
		if (!rc) {
			rc = write_collapsed_family(p, sf.f, fam);
			if (rc) {
				outfile__abort(&sf);
				snprintf(err, errlen, "writing %s failed: %s",
					 path, strerror(-rc));
			} else {
				rc = outfile__commit(&sf, err, errlen);
			}
		}
		free(path);
	}
	return rc;
}

/*
 * A collapsed file: the first family the profile holds (time, alloc, lock)
 * at the path, each other one in a sibling. stdout gets them all, a block
 * each (write_collapsed).
 */
static int write_collapsed_out(struct output *o, const struct profile *p,
			       char *err, size_t errlen)
{
	unsigned fams = ev_families(p);
	enum ev_family first = ev_families__main(fams);
	int rc;

	rc = o->path ? write_collapsed_family(p, o->f, first) :
		       write_collapsed(p, o->f);
	if (rc) {
		snprintf(err, errlen, "writing %s failed: %s",
			 o->path ? o->path : "stdout", strerror(-rc));
		return rc;
	}
	if (!o->path)
		return 0;
	return write_collapsed_siblings(o, p, fams & ~EVF_BIT(first), err,
					errlen);
}

bool output__supported(enum output_format f)
{
	return f == OUT_COLLAPSED || f == OUT_JSON || f == OUT_PPROF ||
	       f == OUT_HTML || f == OUT_TOP || f == OUT_RAW;
}

int output__open(struct output *o, const char *path, enum output_format f,
		 char *err, size_t errlen)
{
	int rc;

	o->path = path;
	o->format = f;
	if (!path || strcmp(path, "-") == 0) {
		o->path = NULL;
		o->f = stdout;
		return 0;
	}
	/* 0600: a profile names the code of every process sampled */
	rc = outfile__create(&o->file, path, err, errlen);
	if (!rc)
		o->f = o->file.f;
	return rc;
}

int output__write(struct output *o, const struct profile *p, char *err,
		  size_t errlen)
{
	int rc;

	if (o->format == OUT_COLLAPSED) {
		rc = write_collapsed_out(o, p, err, errlen);
		if (rc)
			return rc;
		goto put;
	}
	switch (o->format) {
	case OUT_JSON:
		rc = write_json(p, o->f);
		break;
	case OUT_PPROF:
		rc = write_pprof(p, o->f);
		break;
	case OUT_HTML:
		rc = write_html(p, o->f);
		break;
	case OUT_TOP:
		rc = write_top(p, o->f);
		break;
	default:
		rc = -ENOTSUP;
		break;
	}
	if (rc) {
		snprintf(err, errlen, "writing %s failed: %s",
			 o->path ? o->path : "stdout", strerror(-rc));
		return rc;
	}
put:
	if (o->f == stdout) {
		rc = fflush(stdout) ? -errno : 0;
		if (rc)
			snprintf(err, errlen, "writing stdout failed: %s",
				 strerror(-rc));
	} else {
		rc = outfile__commit(&o->file, err, errlen);
	}
	o->f = NULL;
	return rc;
}

void output__close(struct output *o)
{
	if (o->f && o->f != stdout)
		outfile__abort(&o->file);
	o->f = NULL;
}
