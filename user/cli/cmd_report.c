// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * asgst-bpf report: decode a raw recording (.asgst) again, after the
 * processes are gone, into any output format, with the same filters as
 * record. The recorded code maps and /proc/PID/maps texts stand in for the
 * processes; native modules are read from their host paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm/codemap.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "profile/filter.h"
#include "output/output.h"
#include "profile/pipeline.h"
#include "profile/profile.h"
#include "output/raw.h"
#include "output/writers.h"
#include "util/outfile.h"

struct report_args {
	const char *in;
	const char *out;
	const char *format;
	bool quiet;
	bool pinned;
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

/* one recorded code map, rebuilt in a private file from its chunks */
#define REPORT_MAX_CODEMAPS	4096	/* JVMs in one recording */
struct cm_file {
	pid_t pid;
	int fd;
};

struct report {
	struct cm_file *cms;
	size_t ncms;
	char dir[64];		/* private directory of the rebuilt maps */
	bool have_dir;
};

static int cm_file_for(struct report *r, pid_t pid)
{
	char path[128];
	struct cm_file *n;
	int fd;

	for (size_t i = 0; i < r->ncms; i++)
		if (r->cms[i].pid == pid)
			return r->cms[i].fd;
	/* one open file each: a crafted file must not exhaust them */
	if (r->ncms >= REPORT_MAX_CODEMAPS)
		return -EMFILE;
	if (!r->have_dir) {
		snprintf(r->dir, sizeof(r->dir), "/tmp/asgst-report.XXXXXX");
		if (!mkdtemp(r->dir))
			return -errno;
		r->have_dir = true;
	}
	snprintf(path, sizeof(path), "%s/%d.map", r->dir, (int)pid);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	n = realloc(r->cms, (r->ncms + 1) * sizeof(*n));
	if (!n) {
		close(fd);
		return -ENOMEM;
	}
	r->cms = n;
	r->cms[r->ncms].pid = pid;
	r->cms[r->ncms].fd = fd;
	r->ncms++;
	return fd;
}

static void report__cleanup(struct report *r)
{
	char path[128];

	for (size_t i = 0; i < r->ncms; i++) {
		close(r->cms[i].fd);
		snprintf(path, sizeof(path), "%s/%d.map", r->dir,
			 (int)r->cms[i].pid);
		unlink(path);
	}
	if (r->have_dir)
		rmdir(r->dir);
	free(r->cms);
}

/* what the passes over the raw file share */
struct pass {
	const char *in;
	struct report *r;
	struct pipeline *pl;
	struct profile *prof;
	bool quiet;
	unsigned samples;
};

typedef int (*chunk_fn)(struct pass *ps, uint32_t type, const void *pay,
			uint64_t len, char *err, size_t errlen);

/* one pass over the file: fn for every chunk; 0, or the first error */
static int raw_pass(struct pass *ps, chunk_fn fn, char *err, size_t errlen)
{
	struct raw_reader *rd = NULL;
	const void *pay;
	uint64_t len;
	uint32_t type;
	int rc;

	rc = raw_reader__open(&rd, ps->in, err, errlen);
	if (rc)
		return rc;
	while ((rc = raw_reader__next(rd, &type, &pay, &len, err,
				      errlen)) == 1 &&
	       !(rc = fn(ps, type, pay, len, err, errlen)))
		;
	raw_reader__close(rd);
	return rc < 0 ? rc : 0;
}

/* pass 1: code maps (rebuilt in private files), metadata, stored stacks */
static int on_context(struct pass *ps, uint32_t type, const void *pay,
		      uint64_t len, char *err, size_t errlen)
{
	if (type == RAW_CODEMAP) {
		struct raw_codemap_view c;
		char why[256];
		int fd;

		if (raw__parse_codemap(pay, len, &c, why, sizeof(why))) {
			snprintf(err, errlen, "%s: %s (not a recording this "
				 "asgst-bpf wrote, or damaged)", ps->in, why);
			return -EINVAL;
		}
		fd = cm_file_for(ps->r, c.pid);
		if (fd < 0 || pwrite(fd, c.bytes, c.len, (off_t)c.offset) !=
				      (ssize_t)c.len) {
			snprintf(err, errlen, "cannot rebuild the code map of "
				 "pid %d: %s", (int)c.pid,
				 strerror(fd < 0 ? -fd : errno));
			return -EIO;
		}
	} else if (type == RAW_META) {
		struct raw_meta m;
		struct profile_meta *pm = profile__meta(ps->prof);
		char why[256];

		if (raw__parse_meta(pay, len, &m, why, sizeof(why))) {
			snprintf(err, errlen, "%s: %s (not a recording this "
				 "asgst-bpf wrote, or damaged)", ps->in, why);
			return -EINVAL;
		}
		pm->frequency_hz = m.frequency_hz;
		pm->duration_ns = m.duration_ns;
		pm->samples = m.samples;
		pm->lost = m.lost;
		pm->events = m.events;
		pm->offcpu_events = m.offcpu_events;
		pm->offcpu_lost = m.offcpu_lost;
		pm->end_ns = m.end_ns;
		pm->offcpu_capture_ns = m.offcpu_capture_ns;
	} else if (type == RAW_STACKS) {
		if (raw__load_stacks(ps->prof, pay, len)) {
			snprintf(err, errlen, "%s: corrupt stacks chunk", ps->in);
			return -EINVAL;
		}
	}
	return 0;
}

/* the rebuilt code map of pid, NULL when none or unusable (said once) */
static struct codemap *open_rebuilt_map(struct pass *ps, uint32_t pid)
{
	struct codemap *cm = NULL;
	char path[128], cerr[512];

	for (size_t i = 0; i < ps->r->ncms; i++) {
		if (ps->r->cms[i].pid != (pid_t)pid)
			continue;
		snprintf(path, sizeof(path), "%s/%u.map", ps->r->dir, pid);
		if (codemap__open(&cm, "/", path, cerr, sizeof(cerr)) ||
		    codemap__update(cm)) {
			if (!ps->quiet)
				fprintf(stderr, "asgst-bpf report: pid %u: %s\n",
					pid, cm ? codemap__error(cm) : cerr);
			codemap__free(cm);
			cm = NULL;
		}
		break;
	}
	return cm;
}

/* pass 2: processes, once their code maps are complete */
static int on_proc(struct pass *ps, uint32_t type, const void *pay,
		   uint64_t len, char *err, size_t errlen)
{
	struct raw_proc_view p;
	char why[256];
	int rc;

	if (type != RAW_PROC)
		return 0;
	if (raw__parse_proc(pay, len, &p, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s (not a recording this asgst-bpf "
			 "wrote, or damaged)", ps->in, why);
		return -EINVAL;
	}
	rc = pipeline__add_offline(ps->pl, p.pid, p.comm, p.is_jvm,
				   p.jvm_from_seq, p.maps, p.maps_len,
				   open_rebuilt_map(ps, (uint32_t)p.pid),
				   p.container_id, p.pod_uid);
	if (rc)
		snprintf(err, errlen, "pid %d: %s", (int)p.pid, strerror(-rc));
	return rc;
}

/* pass 3: the samples, in the order the live decode took them */
static int on_sample(struct pass *ps, uint32_t type, const void *pay,
		     uint64_t len, char *err, size_t errlen)
{
	int rc;

	if (type != RAW_SAMPLE)
		return 0;
	rc = pipeline__push(ps->pl, pay, len);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	/* decode in batches: bounded memory, few code-map checks */
	if (++ps->samples % 1024 == 0)
		pipeline__process(ps->pl, 0, true);
	return 0;
}

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

/* the passes over the raw file, then whatever is left decoded */
static int decode_recording(const struct report_args *a, struct report *r,
			    struct pipeline *pl, struct profile *prof)
{
	struct pass ps = { .in = a->in, .r = r, .pl = pl, .prof = prof,
			   .quiet = a->quiet };
	char err[512];
	int rc;

	rc = raw_pass(&ps, on_context, err, sizeof(err));
	if (!rc)
		rc = raw_pass(&ps, on_proc, err, sizeof(err));
	if (!rc)
		rc = raw_pass(&ps, on_sample, err, sizeof(err));
	pipeline__finish(pl, profile__meta(prof)->end_ns);
	if (rc)
		fprintf(stderr, "asgst-bpf report: %s\n", err);
	return rc;
}

/* --pinned's lines, or the profile in format f */
static int write_report(const struct report_args *a, enum output_format f,
			const struct profile *prof)
{
	struct output out = { 0 };
	char err[512];
	int rc;

	if (a->pinned) {
		/* written beside its path and renamed, as every output */
		struct outfile of;

		if (!a->out) {
			rc = write_pinned(prof, stdout);
			if (!rc && fflush(stdout))
				rc = -errno;
			if (rc)
				fprintf(stderr, "asgst-bpf report: writing "
					"stdout: %s\n", strerror(-rc));
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
		goto cleanup;
	}
	rc = output__open(&out, a->out, f, err, sizeof(err)) ||
	     output__write(&out, prof, err, sizeof(err));
	output__close(&out);
cleanup:
	if (rc)
		fprintf(stderr, "asgst-bpf report: %s\n", err);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = { 0 };
	struct pipeline_opts po = { .offline = true };
	struct report r = { 0 };
	struct profile *prof = NULL;
	struct pipeline *pl = NULL;
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
	prof = profile__new();
	po.quiet = a.quiet;
	po.filter = filter__active(&a.filter) ? &a.filter : NULL;
	pl = prof ? pipeline__new(prof, NULL, &po) : NULL;
	if (!pl) {
		fprintf(stderr, "asgst-bpf report: out of memory\n");
		goto cleanup;
	}
	if (decode_recording(&a, &r, pl, prof) ||
	    (pipeline__annotate(pl, prof), write_report(&a, f, prof)))
		goto cleanup;
	if (!a.quiet)
		fprintf(stderr, "asgst-bpf: %llu samples, %llu lost, %zu stacks "
			"-> %s\n",
			(unsigned long long)profile__meta(prof)->samples,
			(unsigned long long)profile__meta(prof)->lost,
			profile__nstacks(prof), a.out ? a.out : "stdout");
	ret = 0;
cleanup:
	pipeline__free(pl);
	profile__free(prof);
	filter__free(&a.filter);
	report__cleanup(&r);
	return ret;
}
