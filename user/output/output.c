// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "output/output.h"
#include "profile/profile.h"

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
	if (rc) {
		snprintf(err, errlen, "writing %s failed: %s",
			 o->path ? o->path : "stdout", strerror(-rc));
		return rc;
	}
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
