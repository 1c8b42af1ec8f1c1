// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * asgst-bpf report: decode a raw recording (.asgst) again, after the
 * processes are gone, into any output format, with the same filters as
 * record. The recorded code maps and /proc/PID/maps texts stand in for the
 * processes; native modules are read from their host paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codemap.h"
#include "commands.h"
#include "filter.h"
#include "output.h"
#include "pipeline.h"
#include "profile.h"
#include "raw.h"
#include "writers.h"

static const char report_usage[] =
"Usage: asgst-bpf report -i FILE.asgst [-f FORMAT] [-o FILE] [FILTERS]\n"
"\n"
"Decode a raw recording (record -o FILE.asgst) again, on the same host,\n"
"also after the recorded processes have exited.\n"
"\n"
"  -i, --input FILE        the raw recording\n"
"  -o, --output FILE       write here (default: stdout)\n"
"  -f, --format FORMAT     collapsed, json, pprof, html, top (default: from\n"
"                          -o's extension; top on a terminal, else collapsed)\n"
"  -q, --quiet             no notices\n"
"\n"
"Filters:\n"
"      --pid PID[,PID...]  only these processes\n"
FILTER_USAGE;

/* one recorded code map, rebuilt in a private file from its chunks */
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

/* pass 1: code maps, processes, metadata and stored stacks */
static int read_context(const char *in, struct report *r,
			struct pipeline *pl, struct profile *prof, bool quiet,
			char *err, size_t errlen)
{
	struct raw_reader *rd = NULL;
	const void *pay;
	uint64_t len;
	uint32_t type;
	int rc;

	rc = raw_reader__open(&rd, in, err, errlen);
	if (rc)
		return rc;
	while ((rc = raw_reader__next(rd, &type, &pay, &len, err,
				      errlen)) == 1) {
		if (type == RAW_CODEMAP) {
			const struct raw_codemap *c = pay;
			int fd;

			if (len < sizeof(*c) || c->offset > (1ull << 32)) {
				snprintf(err, errlen, "%s: bad code-map chunk",
					 in);
				rc = -EINVAL;
				break;
			}
			fd = cm_file_for(r, (pid_t)c->pid);
			if (fd < 0 || pwrite(fd, c + 1, len - sizeof(*c),
					     (off_t)c->offset) !=
					      (ssize_t)(len - sizeof(*c))) {
				snprintf(err, errlen, "cannot rebuild the code "
					 "map of pid %u: %s", c->pid,
					 strerror(fd < 0 ? -fd : errno));
				rc = -EIO;
				break;
			}
		} else if (type == RAW_META) {
			const struct raw_meta *m = pay;
			struct profile_meta *pm = profile__meta(prof);

			if (len < sizeof(*m)) {
				snprintf(err, errlen, "%s: bad meta chunk", in);
				rc = -EINVAL;
				break;
			}
			pm->frequency_hz = m->frequency_hz;
			pm->duration_ns = m->duration_ns;
			pm->samples = m->samples;
			pm->lost = m->lost;
		} else if (type == RAW_STACKS) {
			if (raw__load_stacks(prof, pay, len)) {
				snprintf(err, errlen, "%s: corrupt stacks chunk",
					 in);
				rc = -EINVAL;
				break;
			}
		}
	}
	raw_reader__close(rd);
	if (rc < 0)
		return rc;
	/* processes last: their code maps are complete by now */
	rc = raw_reader__open(&rd, in, err, errlen);
	if (rc)
		return rc;
	while ((rc = raw_reader__next(rd, &type, &pay, &len, err,
				      errlen)) == 1) {
		const struct raw_proc *p = pay;
		struct codemap *cm = NULL;
		char comm[64], path[128], cerr[512];
		const char *maps;

		if (type != RAW_PROC)
			continue;
		if (len < sizeof(*p) || p->comm_len >= sizeof(comm) ||
		    p->maps_len > len - sizeof(*p) - p->comm_len) {
			snprintf(err, errlen, "%s: bad process chunk", in);
			rc = -EINVAL;
			break;
		}
		memcpy(comm, p + 1, p->comm_len);
		comm[p->comm_len] = '\0';
		maps = (const char *)(p + 1) + p->comm_len;
		for (size_t i = 0; i < r->ncms; i++) {
			if (r->cms[i].pid != (pid_t)p->pid)
				continue;
			snprintf(path, sizeof(path), "%s/%d.map", r->dir,
				 (int)p->pid);
			if (codemap__open(&cm, "/", path, cerr, sizeof(cerr)) ||
			    codemap__update(cm)) {
				if (!quiet)
					fprintf(stderr, "asgst-bpf report: pid "
						"%u: %s\n", p->pid, cm ?
						codemap__error(cm) : cerr);
				codemap__free(cm);
				cm = NULL;
			}
		}
		rc = pipeline__add_offline(pl, (pid_t)p->pid, comm,
					   p->flags & RAW_PROC_JVM,
					   p->jvm_from_seq, maps,
					   p->maps_len, cm);
		if (rc) {
			snprintf(err, errlen, "pid %u: %s", p->pid,
				 strerror(-rc));
			break;
		}
	}
	raw_reader__close(rd);
	return rc < 0 ? rc : 0;
}

/* pass 2: the samples */
static int replay_samples(const char *in, struct pipeline *pl, char *err,
			  size_t errlen)
{
	struct raw_reader *rd = NULL;
	const void *pay;
	uint64_t len;
	uint32_t type;
	unsigned n = 0;
	int rc;

	rc = raw_reader__open(&rd, in, err, errlen);
	if (rc)
		return rc;
	while ((rc = raw_reader__next(rd, &type, &pay, &len, err,
				      errlen)) == 1) {
		if (type != RAW_SAMPLE)
			continue;
		rc = pipeline__push(pl, pay, len);
		if (rc)
			break;
		/* decode in batches: bounded memory, few code-map checks */
		if (++n % 1024 == 0)
			pipeline__process(pl, 0, true);
	}
	pipeline__process(pl, 0, true);
	raw_reader__close(rd);
	return rc < 0 ? rc : 0;
}

int cmd_report(int argc, char **argv)
{
	enum { OPT_FILTER = 256 };
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "pid", required_argument, NULL, OPT_FILTER },
		FILTER_LONGOPTS(OPT_FILTER),
		{ NULL, 0, NULL, 0 },
	};
	const char *in = NULL, *outp = NULL, *fmt = NULL;
	struct filter filt = { 0 };
	struct pipeline_opts po = { .offline = true };
	struct report r = { 0 };
	struct output out = { 0 };
	struct profile *prof = NULL;
	struct pipeline *pl = NULL;
	enum output_format f;
	char err[512];
	bool quiet = false;
	int c, li = -1, ret = 2;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:f:qh", longopts, &li)) != -1) {
		switch (c) {
		case 'i':
			in = optarg;
			break;
		case 'o':
			outp = optarg;
			break;
		case 'f':
			fmt = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(report_usage, stdout);
			ret = 0;
			goto cleanup;
		case OPT_FILTER:
			if (filter__option(&filt, longopts[li].name, optarg, err,
					   sizeof(err))) {
				fprintf(stderr, "asgst-bpf report: %s\n", err);
				goto cleanup;
			}
			break;
		default:
			fprintf(stderr, "asgst-bpf report: unknown or incomplete "
				"option '%s'; see 'asgst-bpf report --help'\n",
				argv[optind - 1]);
			goto cleanup;
		}
	}
	if (!in) {
		fprintf(stderr, "asgst-bpf report: give the recording with -i "
			"FILE.asgst\n");
		goto cleanup;
	}
	if (fmt)
		f = output_format__from_name(fmt);
	else if (outp)
		f = output_format__from_path(outp);
	else
		f = isatty(STDOUT_FILENO) ? OUT_TOP : OUT_COLLAPSED;
	if (f == OUT_NONE && !fmt)
		f = OUT_COLLAPSED;
	if (f == OUT_NONE || f == OUT_RAW || !output__supported(f)) {
		fprintf(stderr, "asgst-bpf report: cannot write format '%s' "
			"(collapsed, json, pprof, html or top)\n",
			fmt ? fmt : outp);
		goto cleanup;
	}
	ret = 1;
	prof = profile__new();
	po.quiet = quiet;
	po.filter = filter__active(&filt) ? &filt : NULL;
	pl = prof ? pipeline__new(prof, NULL, &po) : NULL;
	if (!pl) {
		fprintf(stderr, "asgst-bpf report: out of memory\n");
		goto cleanup;
	}
	if (read_context(in, &r, pl, prof, quiet, err, sizeof(err)) ||
	    replay_samples(in, pl, err, sizeof(err))) {
		fprintf(stderr, "asgst-bpf report: %s\n", err);
		goto cleanup;
	}
	if (output__open(&out, outp, f, err, sizeof(err)) ||
	    output__write(&out, prof, err, sizeof(err))) {
		fprintf(stderr, "asgst-bpf report: %s\n", err);
		goto cleanup;
	}
	if (!quiet)
		fprintf(stderr, "asgst-bpf: %llu samples, %llu lost, %zu stacks "
			"-> %s\n",
			(unsigned long long)profile__meta(prof)->samples,
			(unsigned long long)profile__meta(prof)->lost,
			profile__nstacks(prof), outp ? outp : "stdout");
	ret = 0;
cleanup:
	output__close(&out);
	pipeline__free(pl);
	profile__free(prof);
	filter__free(&filt);
	report__cleanup(&r);
	return ret;
}
