// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "output/output.h"
#include "profile/profile.h"
#include "util/safe_open.h"

bool output__supported(enum output_format f)
{
	return f == OUT_COLLAPSED || f == OUT_JSON || f == OUT_PPROF ||
	       f == OUT_HTML || f == OUT_TOP || f == OUT_RAW;
}

int output__open(struct output *o, const char *path, enum output_format f,
		 char *err, size_t errlen)
{
	int fd;

	o->path = path;
	o->format = f;
	if (!path || strcmp(path, "-") == 0) {
		o->path = NULL;
		o->f = stdout;
		return 0;
	}
	/* 0600: a profile names the code of every process sampled */
	fd = safe_create(path);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		int e = fd < 0 ? -fd : errno;

		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "cannot write %s: %s (choose another -o)",
			 path, e == ELOOP ? "is a symbolic link (refused)" :
			 strerror(e));
		return -e;
	}
	return 0;
}

int output__write(struct output *o, const struct profile *p, char *err,
		  size_t errlen)
{
	int rc;

	switch (o->format) {
	case OUT_COLLAPSED:
		rc = write_collapsed(p, o->f);
		break;
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
	if (!rc && fflush(o->f))
		rc = -errno;
	if (rc)
		snprintf(err, errlen, "writing %s failed: %s",
			 o->path ? o->path : "stdout", strerror(-rc));
	return rc;
}

void output__close(struct output *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	o->f = NULL;
}
