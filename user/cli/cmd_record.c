// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * asgst-bpf record: its options and its closing summary. The recording
 * itself (targets, sampler, pipeline, periods, outputs) is the engine's,
 * recorder/recorder.h.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "output/evfamily.h"
#include "output/output.h"
#include "profile/filter.h"
#include "recorder/recorder.h"
#include "util/mounts.h"

#define MAX_FREQ	100000
#define MAX_OUTPUTS	RECORDER_MAX_OUTPUTS
#define MAX_LABELS	32
#define MAX_SWITCH_S	(366ull * 24 * 3600)

static volatile sig_atomic_t stop_requested;

struct record_args {
	uint32_t filter_mode;
	bool have_target;
	pid_t *pids;
	size_t npids;
	const char *cgroup;
	const char *container;	/* --container ID */
	uint32_t freq;
	uint32_t events;	/* ASGST_EVMASK_* */
	uint64_t alloc_interval;	/* --alloc-interval, 0: default */
	double duration;	/* <= 0: until stopped */
	const char *outputs[MAX_OUTPUTS];	/* -o, repeatable */
	enum output_format formats[MAX_OUTPUTS];
	size_t nout;
	const char *format;	/* -f */
	uint32_t window;
	uint32_t ringbuf_mb;	/* --ring-buffer; 0: the default */
	uint32_t offcpu_every;	/* --offcpu-sample; 0: auto */
	bool window_all;
	bool unwind_fp;		/* --unwind fp: no window for non-JVMs */
	bool no_attach;
	bool inlines;		/* --inline */
	const char *debuginfod;	/* --debuginfod URLS */
	bool no_debuginfod;	/* --no-debuginfod */
	uint32_t debuginfod_timeout_s;	/* --debuginfod-timeout */
	bool python_native;	/* --python-native */
	bool quiet;
	bool stats;
	uint64_t switch_ns;	/* --switch-output: a period; 0: one file */
	uint32_t switch_max;	/* --switch-max-files; 0: keep them all */
	struct filter filter;
	char **cmd;		/* -- COMMAND */
	/* --push URL, --label (repeatable), --push-auth, --push-queue,
	 * --push-timeout */
	const char *push_url;
	const char *labels[MAX_LABELS];
	size_t nlabels;
	const char *push_auth;
	uint64_t push_queue;
	uint32_t push_timeout_s;
};

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out,
		     bool allow_k)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (allow_k && (*end == 'k' || *end == 'K')) {
		v *= 1024;
		end++;
	}
	if (*end || v < min || v > max)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}

/* N, Nk, Nm or Ng (powers of 1024) */
static int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || v > (UINT64_MAX >> 30))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

static int set_target(const struct cli_command *cmd, struct record_args *a,
		      uint32_t mode, const char *what)
{
	if (a->have_target && a->filter_mode != mode)
		return options__error(cmd, "choose one target: %s conflicts "
				      "with an earlier -a, -p, --cgroup, "
				      "--container or --",
				      what);
	a->have_target = true;
	a->filter_mode = mode;
	return CLI_OK;
}

static int opt_all(const struct cli_call *c, const char *arg)
{
	(void)arg;
	return set_target(c->cmd, c->args, ASGST_FILTER_ALL, "-a");
}

static int opt_pids(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;
	char *copy, *tok, *save = NULL;
	int rc = CLI_BAD;

	if (set_target(c->cmd, a, ASGST_FILTER_PIDS, "-p"))
		return CLI_BAD;
	copy = strdup(arg);
	if (!copy)
		return options__error(c->cmd, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint32_t v;
		char path[64];
		pid_t *np;

		if (parse_u32(tok, 1, INT_MAX, &v, false)) {
			options__error(c->cmd, "-p: '%s' is not a process id "
				       "(a positive number)", tok);
			goto cleanup;
		}
		snprintf(path, sizeof(path), "/proc/%u", v);
		if (access(path, F_OK)) {
			options__error(c->cmd, "-p: no process %s (check the "
				       "pid with ps)", tok);
			goto cleanup;
		}
		np = realloc(a->pids, (a->npids + 1) * sizeof(*np));
		if (!np)
			goto cleanup;
		a->pids = np;
		a->pids[a->npids++] = (pid_t)v;
	}
	rc = CLI_OK;
	if (!a->npids)
		rc = options__error(c->cmd, "-p: no pid given in '%s'", arg);
cleanup:
	free(copy);
	return rc;
}

static int opt_cgroup(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;

	if (set_target(c->cmd, a, ASGST_FILTER_CGROUP, "--cgroup"))
		return CLI_BAD;
	a->cgroup = arg;
	return CLI_OK;
}

/* --container: a target of its own, resolved to a filter when recording */
#define TARGET_CONTAINER	0x100

static int opt_container(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;
	char err[256];

	if (set_target(c->cmd, a, TARGET_CONTAINER, "--container"))
		return CLI_BAD;
	if (filter__option(&a->filter, "container", arg, err, sizeof(err)))
		return options__error(c->cmd, "%s", err);
	a->container = arg;
	return CLI_OK;
}

/* a number from min to max into *out, else "OPT: 'ARG' is not WHAT" */
static int set_u32(const struct cli_call *c, const char *arg, uint32_t min,
		   uint32_t max, bool allow_k, uint32_t *out, const char *opt,
		   const char *what)
{
	if (parse_u32(arg, min, max, out, allow_k))
		return options__error(c->cmd, "%s: '%s' is not %s", opt, arg,
				      what);
	return CLI_OK;
}

static int opt_freq(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;

	return set_u32(c, arg, 1, MAX_FREQ, false, &a->freq, "-F",
		       "a frequency (1 to 100000 Hz)");
}

static int opt_events(const struct cli_call *c, const char *arg)
{
	/* bit i = ASGST_EVMASK_* */
	static const char *const evs[] = { "cpu", "offcpu", "alloc", "lock" };
	struct record_args *a = c->args;
	unsigned m = 0;
	char err[256];

	if (filter__name_mask(arg, evs, 4, &m, "-e", "event", err,
			      sizeof(err)))
		return options__error(c->cmd, "%s", err);
	a->events = m;
	return CLI_OK;
}

static int opt_alloc_interval(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;
	uint32_t v;

	/* the JVM's own bound is an int; below 1 KiB the JVM samples
	 * nearly every object */
	if (set_u32(c, arg, 1024, 1u << 30, true, &v, "--alloc-interval",
		    "a size from 1k to 1048576k bytes"))
		return CLI_BAD;
	a->alloc_interval = v;
	return CLI_OK;
}

static int opt_offcpu_sample(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;

	if (!strcmp(arg, "auto")) {
		a->offcpu_every = 0;
		return CLI_OK;
	}
	if (set_u32(c, arg, 1, ASGST_SF_EVERY_MAX, false, &a->offcpu_every,
		    "--offcpu-sample", "auto or a number from 1 to 65535"))
		return CLI_BAD;
	return CLI_OK;
}

static int opt_duration(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;
	char *end;

	errno = 0;
	a->duration = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(a->duration) ||
	    a->duration <= 0)
		return options__error(c->cmd, "-d: '%s' is not a duration "
				      "(a positive number of seconds)", arg);
	return CLI_OK;
}

static int opt_output(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;

	if (a->nout == MAX_OUTPUTS)
		return options__error(c->cmd, "-o: at most %d outputs",
				      MAX_OUTPUTS);
	a->outputs[a->nout++] = arg;
	return CLI_OK;
}

static int opt_label(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;
	char err[256];

	if (a->nlabels == MAX_LABELS)
		return options__error(c->cmd, "--label: at most %d labels",
				      MAX_LABELS);
	if (recorder__check_label(arg, err, sizeof(err)))
		return options__error(c->cmd, "%s", err);
	a->labels[a->nlabels++] = arg;
	return CLI_OK;
}

static int opt_push(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;
	char err[256];

	if (push_url__check(arg, err, sizeof(err)))
		return options__error(c->cmd, "%s", err);
	a->push_url = arg;
	return CLI_OK;
}

static int opt_push_queue(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;
	uint64_t v;

	if (parse_size(arg, &v) || v < (4u << 10) || v > (4ull << 30))
		return options__error(c->cmd, "--push-queue: '%s' is not a "
				      "size from 4k to 4g", arg);
	a->push_queue = v;
	return CLI_OK;
}

static int opt_push_timeout(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;

	return set_u32(c, arg, 1, 600, false, &a->push_timeout_s,
		       "--push-timeout", "a number of seconds from 1 to 600");
}

static int opt_debuginfod_timeout(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;

	return set_u32(c, arg, 1, 600, false, &a->debuginfod_timeout_s,
		       "--debuginfod-timeout",
		       "a number of seconds from 1 to 600");
}

static int opt_window(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;

	if (set_u32(c, arg, 0, ASGST_MAX_WINDOW, true, &a->window,
		    "--stack-window", "a size from 0 to 65536 bytes"))
		return CLI_BAD;
	a->window_all = a->window > 0;
	return CLI_OK;
}

static int opt_ringbuf(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;

	if (set_u32(c, arg, 1, 1024, false, &a->ringbuf_mb, "--ring-buffer",
		    "a size from 1 to 1024 (MiB)"))
		return CLI_BAD;
	return CLI_OK;
}

static int opt_trust_fs(const struct cli_call *c, const char *arg)
{
	(void)c;
	if (mounts__trust(arg)) {
		fprintf(stderr, "asgst-bpf record: --trust-fs: a list of at "
			"most 255 characters (e.g. nfs4,fuse.fuse-overlayfs)\n");
		return CLI_BAD;
	}
	return CLI_OK;
}

static int opt_unwind(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;

	if (!strcmp(arg, "cfi"))
		a->unwind_fp = false;
	else if (!strcmp(arg, "fp"))
		a->unwind_fp = true;
	else
		return options__error(c->cmd, "--unwind %s: not a mode; use "
				      "cfi (the default) or fp", arg);
	return CLI_OK;
}

/* TIME: whole seconds, or with a unit: 30s, 5m, 1h, 1d */
static int opt_switch_output(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;
	unsigned long long v;
	uint64_t unit = 1;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*end && !end[1]) {
		switch (*end) {
		case 's': unit = 1; end++; break;
		case 'm': unit = 60; end++; break;
		case 'h': unit = 3600; end++; break;
		case 'd': unit = 24 * 3600; end++; break;
		}
	}
	if (errno || end == arg || *end || !isdigit((unsigned char)*arg) ||
	    !v || v > MAX_SWITCH_S / unit)
		return options__error(c->cmd, "--switch-output: '%s' is not a "
				      "time (a whole number of s, m, h or d, "
				      "at least 1s: 30s, 5m, 1h)", arg);
	a->switch_ns = v * unit * 1000000000ull;
	return CLI_OK;
}

static int opt_switch_max(const struct cli_call *c, const char *arg)
{
	struct record_args *a = c->args;

	return set_u32(c, arg, 1, 1000000, false, &a->switch_max,
		       "--switch-max-files", "a number of files (at least 1)");
}

static const struct cli_option record_opts[] = {
	CLI_TEXT("Targets (one of):"),
	CLI_OPT("all", 'a', NULL, "every process on the host", opt_all),
	CLI_OPT("pid", 'p', "PID[,PID...]",
		"these processes (all their threads)", opt_pids),
	CLI_OPT("cgroup", 0, "PATH",
		"tasks in this cgroup v2 (path, or relative to\n"
		"/sys/fs/cgroup)", opt_cgroup),
	CLI_OPT("container", 0, "ID",
		"the processes of this container (its id or a\n"
		"unique prefix of 12+ hex digits, as podman,\n"
		"docker, crictl show it), also those it starts\n"
		"later", opt_container),
	CLI_ROW("-- COMMAND ARGS...",
		"start COMMAND and profile it and its descendants;\n"
		"the recording ends when it exits"),
	CLI_TEXT("\nOptions:"),
	CLI_OPT("event", 'e', "EV[,EV]",
		"cpu: sample on-CPU stacks -F times a second\n"
		"(default); offcpu: a thread's stack each time it\n"
		"leaves the CPU, weighed by the time until it runs\n"
		"again; alloc: JVMs' sampled allocations (bytes,\n"
		"objects, class); lock: time JVM threads wait to\n"
		"enter a contended monitor (and its class). Any\n"
		"of them with commas (cpu,alloc): separate values", opt_events),
	CLI_OPT("alloc-interval", 0, "BYTES",
		"-e alloc: one allocation sampled every BYTES\n"
		"allocated on average (default 512k, the JVM's)",
		opt_alloc_interval),
	CLI_OPT("offcpu-sample", 0, "N|auto",
		"-e offcpu: take the stack of one switch in N\n"
		"at random, weighed N times (1: every switch);\n"
		"auto (default): N adapted so that taking stacks\n"
		"costs about 1 % of each CPU",
		opt_offcpu_sample),
	CLI_OPT("freq", 'F', "HZ",
		"samples per second per CPU (default 99)", opt_freq),
	CLI_OPT("duration", 'd', "SECONDS",
		"stop after this long (default: until Ctrl-C)", opt_duration),
	CLI_OPT("output", 'o', "FILE",
		"write here (default: stdout: top on a terminal,\n"
		"else collapsed); repeat -o for several formats\n"
		"from one recording (up to 8)", opt_output),
	CLI_STRING("format", 'f', "FORMAT",
		   "collapsed, json, pprof, html, top, raw (default:\n"
		   "from -o's extension: .collapsed .folded .txt\n"
		   ".json .pb.gz .pprof .html .asgst)",
		   struct record_args, format),
	CLI_OPT("switch-output", 0, "TIME",
		"a new set of files every TIME (30s, 5m, 1h, 1d):\n"
		"each -o FILE is written per period, named with\n"
		"the UTC time the period began before the\n"
		"extension (x.20261203T112233Z.json) or at %t",
		opt_switch_output),
	CLI_OPT("switch-max-files", 0, "N",
		"with --switch-output: keep only the newest N\n"
		"files of each output (older ones of this\n"
		"recording are deleted)", opt_switch_max),
	CLI_OPT("push", 0, "URL",
		"send each period's profiles to Grafana Pyroscope\n"
		"(or Alloy's pyroscope.receive_http) at URL, one\n"
		"per service and event, labelled by host,\n"
		"container, pod and process; periods of 15s\n"
		"unless --switch-output says; -o is optional.\n"
		"Credentials from the environment or --push-auth:\n"
		"ASGST_PUSH_USER and ASGST_PUSH_PASSWORD (basic),\n"
		"ASGST_PUSH_TOKEN (bearer), ASGST_PUSH_TENANT\n"
		"(X-Scope-OrgID)", opt_push),
	CLI_OPT("label", 0, "KEY=VALUE",
		"--push: a label on every profile (env=prod);\n"
		"repeatable", opt_label),
	CLI_STRING("push-auth", 0, "FILE",
		   "--push: credentials as KEY=VALUE lines (the\n"
		   "variables above); not readable by group or others",
		   struct record_args, push_auth),
	CLI_OPT("push-queue", 0, "SIZE",
		"--push: unsent profiles kept up to SIZE bytes\n"
		"(default 64m) while the server is down or slow;\n"
		"past it the oldest are dropped and counted",
		opt_push_queue),
	CLI_OPT("push-timeout", 0, "SECONDS",
		"--push: one request's time limit, and how long\n"
		"the end waits for the queue (default 10)",
		opt_push_timeout),
	CLI_OPT("unwind", 0, "MODE",
		"how native frames are walked: cfi (default):\n"
		"by the binaries' call-frame information\n"
		"(.eh_frame, .debug_frame), frame pointers\n"
		"where there is none; every sample carries a\n"
		"stack window for it. fp: frame pointers in the\n"
		"kernel, windows only for JVMs", opt_unwind),
	CLI_OPT("stack-window", 0, "BYTES",
		"copy up to this many user-stack bytes per sample,\n"
		"less where the thread's frames end (default\n"
		"and at most 65536; suffix k allowed). With\n"
		"--unwind fp, giving it copies a window for\n"
		"every process, not only JVMs. 0: no window at\n"
		"all, JVM samples then fail to decode with\n"
		"ASGST_NO_WINDOW", opt_window),
	CLI_OPT("ring-buffer", 0, "MIB",
		"the sampler's ring buffer in MiB, rounded up to\n"
		"a power of two (default 32, at most 1024): more\n"
		"for many CPUs at high rates if samples are lost",
		opt_ringbuf),
	CLI_OPT("trust-fs", 0, "TYPES",
		"read the targets' files on these file system\n"
		"types too (comma list as /proc/self/mountinfo\n"
		"names them, e.g. nfs4,fuse.fuse-overlayfs): FUSE\n"
		"and network file systems are refused otherwise,\n"
		"since one that never answers would stall the\n"
		"recorder",
		opt_trust_fs),
	CLI_FLAG("inline", 0,
		 "native frames get the functions the compiler\n"
		 "inlined there and their source lines, from the\n"
		 "modules' DWARF or debug files (read on a thread\n"
		 "of their own; the stacks that wait for them are\n"
		 "held, decoded, and written once it is read)",
		 struct record_args, inlines),
	CLI_STRING("debuginfod", 0, "URLS",
		   "ask these debuginfod servers (space-separated,\n"
		   "as DEBUGINFOD_URLS, which --inline uses when this\n"
		   "is not given) for the debug files of modules\n"
		   "that have none here, in the background; implies\n"
		   "--inline",
		   struct record_args, debuginfod),
	CLI_FLAG("no-debuginfod", 0,
		 "never ask debuginfod servers, DEBUGINFOD_URLS or not",
		 struct record_args, no_debuginfod),
	CLI_OPT("debuginfod-timeout", 0, "SECONDS",
		"one debug file's fetch at most (default 10); the\n"
		"end of a recording waits at most 5 s for them",
		opt_debuginfod_timeout),
	CLI_FLAG("python-native", 0,
		 "CPython processes: keep the interpreter's own C\n"
		 "frames around their Python frames (by default\n"
		 "each Python frame stands for them; C that\n"
		 "Python code called stays either way)",
		 struct record_args, python_native),
	CLI_FLAG("no-attach", 0,
		 "do not inject the agent into JVMs without one",
		 struct record_args, no_attach),
	CLI_FLAG("stats", 0,
		 "print the sampler's in-kernel cost per sample,\n"
		 "decode cost, the recorder's own CPU per sample\n"
		 "(whole run and steady), peak memory and window\n"
		 "bytes per sample at the end, and the processes\n"
		 "kept, dropped and reused, and failed map updates",
		 struct record_args, stats),
	CLI_FLAG("quiet", 'q', "no status line or notices",
		 struct record_args, quiet),
	CLI_TEXT("\nFilters (on the decoded stacks):"),
	CLI_FILTERS(struct record_args, filter),
	CLI_HELP_OPT("this help"),
};

static const struct cli_command record_cmd = {
	.name = "record",
	.usage =
"Usage: asgst-bpf record [TARGET] [OPTIONS]\n"
"       asgst-bpf record [OPTIONS] -- COMMAND [ARGS...]\n"
"\n"
"Sample stacks (kernel, native and Java) of the target processes: on the\n"
"CPU, with -e offcpu as they leave it, and in JVMs with -e alloc and\n"
"-e lock where they allocate and wait for monitors.\n"
"\n",
	.opts = record_opts,
	.nopts = CLI_NOPTS(record_opts),
	/* "-- CMD -x": -x stays CMD's */
	.in_order = true,
};

/* --switch-output writes a file per period and output */
static int check_switch(const struct record_args *a)
{
	if (a->switch_max && !a->switch_ns)
		return options__error(&record_cmd, "--switch-max-files goes "
				      "with --switch-output");
	for (size_t i = 0; a->switch_ns && i < a->nout; i++)
		if (!a->outputs[i] || !strcmp(a->outputs[i], "-"))
			return options__error(&record_cmd, "--switch-output "
					      "writes files: give each output "
					      "with -o FILE");
	return CLI_OK;
}

/* --push goes in periods; its options without it are a mistake */
static int check_push(struct record_args *a)
{
	if (!a->push_url && (a->nlabels || a->push_auth || a->push_queue ||
			     a->push_timeout_s))
		return options__error(&record_cmd, "--label, --push-auth, "
				      "--push-queue and --push-timeout go "
				      "with --push URL");
	if (a->push_url && !a->switch_ns)
		a->switch_ns = 15 * 1000000000ull;
	return check_switch(a);
}

/* each output's format: -f, else its extension; stdout's by who reads it */
static int resolve_formats(struct record_args *a)
{
	const char *fmt = a->format;

	if (!a->nout && a->push_url)
		return check_push(a);
	if (!a->nout) {
		/* stdout: a person at a terminal gets a summary, a pipe data */
		a->outputs[0] = NULL;
		a->formats[0] = isatty(STDOUT_FILENO) ? OUT_TOP : OUT_COLLAPSED;
		a->nout = 1;
	}
	for (size_t i = 0; i < a->nout; i++) {
		enum output_format f;

		if (fmt && a->nout == 1) {
			f = output_format__from_name(fmt);
			if (f == OUT_NONE || !output__supported(f))
				return options__error(&record_cmd,
					"-f: unknown format '%s' (try "
					"collapsed, json, pprof, html, top or "
					"raw)", fmt);
		} else if (a->outputs[i]) {
			f = output_format__from_path(a->outputs[i]);
			if (f == OUT_NONE)
				f = OUT_COLLAPSED;
		} else {
			f = a->formats[i];
		}
		if (f == OUT_RAW && (!a->outputs[i] ||
				     !strcmp(a->outputs[i], "-")))
			return options__error(&record_cmd, "the raw format "
					      "needs -o FILE.asgst");
		a->formats[i] = f;
	}
	if (fmt && a->nout > 1)
		return options__error(&record_cmd, "-f goes with a single -o; "
				      "with several, each output's extension "
				      "gives its format");
	return check_switch(a) ?: check_push(a);
}

/* CLI_OK, CLI_HELP (said) or CLI_BAD (said) */
static int parse_args(int argc, char **argv, struct record_args *a)
{
	int rc;

	a->freq = 99;
	a->window = ASGST_DEFAULT_WINDOW;
	rc = options__parse(&record_cmd, argc, argv, a);
	if (rc)
		return rc;
	if (optind < argc) {
		/* getopt consumed "--" and left the command */
		if (strcmp(argv[optind - 1], "--") != 0)
			return options__error(&record_cmd, "unexpected "
					      "argument '%s'; a command to "
					      "profile goes after '--'",
					      argv[optind]);
		if (set_target(&record_cmd, a, ASGST_FILTER_PIDS, "--"))
			return CLI_BAD;
		a->cmd = &argv[optind];
	}
	if (!a->have_target)
		return options__error(&record_cmd, "say what to record: -a, -p "
				      "PID, --cgroup PATH, --container ID or "
				      "-- COMMAND (see "
				      "--help)");
	return resolve_formats(a);
}

/* the engine's options from the command line's */
static void engine_opts(struct record_args *a, struct recorder_opts *o)
{
	o->filter_mode = a->filter_mode;
	o->container = a->filter_mode == TARGET_CONTAINER;
	if (o->container)
		o->filter_mode = ASGST_FILTER_ALL;
	o->pids = a->pids;
	o->npids = a->npids;
	o->cgroup = a->cgroup;
	o->cmd = a->cmd;
	o->events = a->events;
	o->alloc_interval = a->alloc_interval;
	o->freq_hz = a->freq;
	o->window = a->window;
	o->window_all = a->window_all || !a->unwind_fp;
	o->time_samples = a->stats;
	o->ringbuf_mb = a->ringbuf_mb;
	o->offcpu_every = a->offcpu_every;
	memcpy(o->outputs, a->outputs, sizeof(o->outputs));
	memcpy(o->formats, a->formats, sizeof(o->formats));
	o->nout = a->nout;
	o->duration_s = a->duration;
	o->switch_ns = a->switch_ns;
	o->switch_max = a->switch_max;
	o->push_url = a->push_url;
	o->push_labels = a->labels;
	o->npush_labels = a->nlabels;
	o->push_auth_file = a->push_auth;
	o->push_queue_bytes = a->push_queue;
	o->push_timeout_ms = a->push_timeout_s * 1000u;
	o->filter = &a->filter;
	o->no_attach = a->no_attach;
	o->inlines = a->inlines;
	o->debuginfod_timeout_s = a->debuginfod_timeout_s;
	o->python_native = a->python_native;
	o->quiet = a->quiet;
	o->stop = &stop_requested;
	o->stop_on_signals = true;
}

/*
 * A collapsed file holds one event family: the others the profile holds
 * went to its siblings (output.h), named after it
 */
static void say_siblings(const char *path, unsigned fams)
{
	enum ev_family main_f = ev_families__main(fams);
	bool said = false;

	for (int f = 0; f < EVF_N; f++) {
		char *sib;

		if (f == (int)main_f || !(fams & EVF_BIT(f)))
			continue;
		sib = output__sibling(path, ev_family__name((enum ev_family)f));
		if (sib)
			fprintf(stderr, "%s%s", said ? ", " : " (+ ", sib);
		said = said || sib;
		free(sib);
	}
	if (said)
		fputc(')', stderr);
}

/* --push: what was sent, retried and dropped; they add up to what was
 * queued */
static void say_push(const struct recorder_stats *rs, const char *url)
{
	const struct push_stats *p = &rs->push;

	fprintf(stderr, "asgst-bpf: push: %llu profiles queued, %llu sent "
		"(%llu KiB), %llu retries, %llu dropped with the queue full, "
		"%llu unsent at the end, %llu rejected by %s\n",
		(unsigned long long)p->enqueued, (unsigned long long)p->sent,
		(unsigned long long)(p->bytes_sent >> 10),
		(unsigned long long)p->retried,
		(unsigned long long)p->dropped_full,
		(unsigned long long)p->dropped_end,
		(unsigned long long)p->rejected, url);
	if (rs->push_error[0] && p->sent < p->enqueued)
		fprintf(stderr, "asgst-bpf: push: last failure: %s\n",
			rs->push_error);
}

/* the closing lines on stderr */
static void summary(struct recorder *rec, const struct record_args *a)
{
	struct recorder_stats rs;
	const uint64_t *st = rs.counters;

	recorder__stats(rec, &rs);
	if (rs.events & ASGST_EVMASK_OFFCPU)
		fprintf(stderr, "asgst-bpf: %llu off-CPU stacks, %llu lost, "
			"%.1f us each to take\n",
			(unsigned long long)st[ASGST_STAT_OFFCPU],
			(unsigned long long)st[ASGST_STAT_OFFCPU_LOST],
			st[ASGST_STAT_OFFCPU] ?
			(double)st[ASGST_STAT_OFFCPU_CAPTURE_NS] / 1e3 /
			(double)st[ASGST_STAT_OFFCPU] : 0.0);
	if ((rs.events & ASGST_EVMASK_JVM) && !rs.jev.jvms)
		fprintf(stderr, "asgst-bpf: no JVM gave allocation or lock "
			"events (no JVM among the targets, or each said why "
			"above)\n");
	if (rs.events & ASGST_EVMASK_JVM)
		fprintf(stderr, "asgst-bpf: %llu allocation and %llu lock "
			"events, %llu lost, %llu over a JVM's budget\n",
			(unsigned long long)st[ASGST_STAT_ALLOC],
			(unsigned long long)st[ASGST_STAT_LOCK],
			(unsigned long long)st[ASGST_STAT_JVM_EV_LOST],
			(unsigned long long)st[ASGST_STAT_JVM_EV_THROTTLED]);
	fprintf(stderr, "asgst-bpf: %llu samples, %llu lost, %zu stacks, "
		"%llu processes (%llu JVMs) ->",
		(unsigned long long)st[ASGST_STAT_SAMPLES],
		(unsigned long long)st[ASGST_STAT_LOST], rs.stacks,
		(unsigned long long)rs.pl.processes,
		(unsigned long long)rs.pl.jvms);
	if (a->switch_ns)
		fprintf(stderr, " %u periods%s", rs.periods + 1,
			a->nout ? " of" : "");
	for (size_t i = 0; i < a->nout; i++) {
		fprintf(stderr, " %s", a->outputs[i] ? a->outputs[i] :
			"stdout");
		if (a->outputs[i] && a->formats[i] == OUT_COLLAPSED &&
		    !a->switch_ns)
			say_siblings(a->outputs[i],
				     ev_families(recorder__profile(rec)));
	}
	if (a->push_url)
		fprintf(stderr, "%s pushed to %s", a->nout ? "," : "",
			a->push_url);
	fputc('\n', stderr);
	if (rs.pushing)
		say_push(&rs, a->push_url);
	if (a->stats)
		recorder__print_stats(rec);
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { 0 };
	struct recorder_opts o = { 0 };
	struct recorder *rec = NULL;
	struct recorder_stats rs;
	int ret;

	ret = parse_args(argc, argv, &a);
	if (ret) {
		ret = ret == CLI_HELP ? 0 : 2;
		goto cleanup;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "asgst-bpf record: needs root (CAP_BPF and "
			"CAP_PERFMON): run it with sudo\n");
		ret = 1;
		goto cleanup;
	}
	/* servers to ask are for the inlined frames' debug info */
	if (a.debuginfod)
		a.inlines = true;
	engine_opts(&a, &o);
	if (a.inlines)
		o.debuginfod_urls = cli_debuginfod(a.debuginfod,
						   a.no_debuginfod, a.quiet);
	ret = recorder__open(&rec, &o);
	if (ret)
		goto cleanup;
	recorder__run(rec);
	recorder__stop(rec);
	ret = recorder__finish(rec);
	if (!ret)
		summary(rec, &a);
	recorder__stats(rec, &rs);
	if (rs.period_failed)
		ret = 1;
cleanup:
	recorder__close(rec);
	free(a.pids);
	filter__free(&a.filter);
	return ret;
}
