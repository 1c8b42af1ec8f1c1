// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * asgst-bpf report: decode a raw recording (.asgst) again, after the
 * processes are gone, into any output format, with the same filters as
 * record. The replay is the recording engine's (recorder/replay.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "output/output.h"
#include "profile/filter.h"
#include "profile/profile.h"
#include "recorder/recorder.h"
#include "util/outfile.h"
#include "util/err.h"

struct report_args {
	const char *in;
	const char *out;
	const char *format;
	bool quiet;
	bool pinned;
	bool inlines;
	const char *debuginfod;
	bool no_debuginfod;
	bool python_native;
	struct filter filter;
};

static const struct cli_option report_opts[] = {
	CLI_STRING("input", 'i', "FILE", "the raw recording",
		   struct report_args, in),
	CLI_STRING("output", 'o', "FILE", "write here (default: stdout)",
		   struct report_args, out),
	CLI_STRING("format", 'f', "FORMAT",
		   "collapsed, json, pprof, html, top (default: from\n"
		   "-o's extension; top on a terminal, else collapsed)",
		   struct report_args, format),
	CLI_FLAG("pinned", 0,
		 "instead of a profile: the off-CPU time of carriers\n"
		 "blocked with a virtual thread mounted, by the\n"
		 "frame that pinned it (record -e offcpu), as\n"
		 "lines PINNED_NS<TAB>COUNT<TAB>FRAME",
		 struct report_args, pinned),
	CLI_FLAG("inline", 0,
		 "native frames get their inlined functions and\n"
		 "source lines from DWARF, as record --inline",
		 struct report_args, inlines),
	CLI_STRING("debuginfod", 0, "URLS",
		   "ask these debuginfod servers (else --inline uses\n"
		   "DEBUGINFOD_URLS) for missing debug files; implies\n"
		   "--inline",
		   struct report_args, debuginfod),
	CLI_FLAG("no-debuginfod", 0,
		 "never ask debuginfod servers",
		 struct report_args, no_debuginfod),
	CLI_FLAG("python-native", 0,
		 "keep CPython's own C frames, as record\n"
		 "--python-native",
		 struct report_args, python_native),
	CLI_FLAG("quiet", 'q', "no notices", struct report_args, quiet),
	CLI_TEXT("\nFilters:"),
	CLI_FILTER("pid", "PID[,PID...]", "only these processes",
		   struct report_args, filter),
	CLI_FILTERS(struct report_args, filter),
	CLI_HELP_OPT(NULL),	/* not listed */
};

static const struct cli_command report_cmd = {
	.name = "report",
	.usage =
"Usage: asgst-bpf report -i FILE.asgst [-f FORMAT] [-o FILE] [FILTERS]\n"
"\n"
"Decode a raw recording (record -o FILE.asgst) again, on the same host,\n"
"also after the recorded processes have exited.\n"
"\n",
	.opts = report_opts,
	.nopts = CLI_NOPTS(report_opts),
};

/* the output format: -f, else -o's extension, else by who reads stdout */
static int pick_format(const struct report_args *a, enum output_format *out)
{
	enum output_format f = OUT_NONE;

	if (a->format)
		f = output_format__from_name(a->format);
	else if (a->out)
		f = output_format__from_path(a->out);
	else
		f = isatty(STDOUT_FILENO) ? OUT_TOP : OUT_COLLAPSED;
	if (f == OUT_NONE && !a->format)
		f = OUT_COLLAPSED;
	if (f == OUT_NONE || f == OUT_RAW || !output__supported(f))
		return options__error(&report_cmd, "cannot write format '%s' "
				      "(collapsed, json, pprof, html or top)",
				      a->format ? a->format : a->out);
	*out = f;
	return 0;
}

/* --pinned's lines, written beside their path and renamed as every
 * output; 0 or -errno (said) */
static int write_pinned_report(const struct report_args *a,
			       const struct profile *prof)
{
	struct outfile of;
	char err[512];
	int rc;

	if (!a->out) {
		rc = write_pinned(prof, stdout);
		if (!rc && fflush(stdout))
			rc = -errno;
		if (rc)
			fprintf(stderr, "asgst-bpf report: writing stdout: "
				"%s\n", strerror(-rc));
		return rc;
	}
	rc = outfile__create(&of, a->out, err, sizeof(err));
	if (rc)
		goto cleanup;
	rc = write_pinned(prof, of.f);
	if (rc) {
		snprintf(err, sizeof(err), "writing %s: %s", a->out,
			 strerror(-rc));
		outfile__abort(&of);
		goto cleanup;
	}
	rc = outfile__commit(&of, err, sizeof(err));
cleanup:
	if (rc)
		err__say("report", "%s", err);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = { 0 };
	struct recorder_opts o = { 0 };
	struct recorder *rec = NULL;
	const struct profile_meta *m;
	enum output_format f = OUT_NONE;
	int rc, ret = 2;

	rc = options__parse(&report_cmd, argc, argv, &a);
	if (rc) {
		ret = rc == CLI_HELP ? 0 : 2;
		goto cleanup;
	}
	if (!a.in) {
		options__error(&report_cmd, "give the recording with -i "
			       "FILE.asgst");
		goto cleanup;
	}
	if (pick_format(&a, &f))
		goto cleanup;
	ret = 1;
	o.replay = a.in;
	o.quiet = a.quiet;
	o.inlines = a.inlines || a.debuginfod;
	if (a.inlines)
		o.debuginfod_urls = cli_debuginfod(a.debuginfod,
						   a.no_debuginfod, a.quiet);
	o.python_native = a.python_native;
	o.filter = &a.filter;
	/* --pinned is no profile format: written here from the profile */
	o.nout = a.pinned ? 0 : 1;
	o.outputs[0] = a.out;
	o.formats[0] = f;
	if (recorder__open_replay(&rec, &o) ||
	    recorder__run(rec) != RECORDER_REPLAYED || recorder__finish(rec) ||
	    (a.pinned && write_pinned_report(&a, recorder__profile(rec))))
		goto cleanup;
	m = profile__meta_const(recorder__profile(rec));
	if (!a.quiet)
		fprintf(stderr, "asgst-bpf: %llu samples, %llu lost, %zu stacks "
			"-> %s\n", (unsigned long long)m->samples,
			(unsigned long long)m->lost,
			profile__nstacks(recorder__profile(rec)),
			a.out ? a.out : "stdout");
	ret = 0;
cleanup:
	recorder__close(rec);
	filter__free(&a.filter);
	return ret;
}
