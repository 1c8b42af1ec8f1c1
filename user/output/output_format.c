// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Output format names and file extensions (see docs/formats.md). */
#include <string.h>
#include <strings.h>

#include "output/writers.h"

static const struct {
	const char *name;
	enum output_format fmt;
} format_names[] = {
	{ "collapsed", OUT_COLLAPSED },
	{ "folded", OUT_COLLAPSED },
	{ "json", OUT_JSON },
	{ "pprof", OUT_PPROF },
	{ "html", OUT_HTML },
	{ "raw", OUT_RAW },
	{ "top", OUT_TOP },
};

/* longest suffix first is not needed: no suffix here ends another */
static const struct {
	const char *ext;
	enum output_format fmt;
} format_exts[] = {
	{ ".collapsed", OUT_COLLAPSED },
	{ ".folded", OUT_COLLAPSED },
	{ ".txt", OUT_COLLAPSED },
	{ ".json", OUT_JSON },
	{ ".pb.gz", OUT_PPROF },
	{ ".pprof", OUT_PPROF },
	{ ".html", OUT_HTML },
	{ ".htm", OUT_HTML },
	{ ".asgst", OUT_RAW },
};

enum output_format output_format__from_name(const char *name)
{
	if (!name)
		return OUT_NONE;
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (strcasecmp(name, format_names[i].name) == 0)
			return format_names[i].fmt;
	return OUT_NONE;
}

enum output_format output_format__from_path(const char *path)
{
	size_t n;

	if (!path)
		return OUT_NONE;
	n = strlen(path);
	for (size_t i = 0; i < sizeof(format_exts) / sizeof(format_exts[0]); i++) {
		size_t e = strlen(format_exts[i].ext);

		/* "x.json" yes, ".json" alone (a hidden file, no stem) no */
		if (n > e && path[n - e - 1] != '/' &&
		    strcasecmp(path + n - e, format_exts[i].ext) == 0)
			return format_exts[i].fmt;
	}
	return OUT_NONE;
}

const char *output_format__name(enum output_format f)
{
	switch (f) {
	case OUT_COLLAPSED:
		return "collapsed";
	case OUT_JSON:
		return "json";
	case OUT_PPROF:
		return "pprof";
	case OUT_HTML:
		return "html";
	case OUT_RAW:
		return "raw";
	case OUT_TOP:
		return "top";
	case OUT_NONE:
		break;
	}
	return "none";
}
