// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * asgst-bpf record: choose targets, start the kernel sampler, feed records
 * through the pipeline until the duration ends, the command exits or the
 * user presses Ctrl-C, then write the profile.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "jvm/attach.h"
#include "jvm/jthreads.h"
#include "capture/capture.h"
#include "capture/sideband.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "profile/container.h"
#include "profile/filter.h"
#include "output/output.h"
#include "profile/pipeline.h"
#include "symbols/maplog.h"
#include "symbols/maps.h"
#include "symbols/symbolize.h"
#include "profile/profile.h"
#include "output/raw.h"
#include "output/switch_name.h"
#include "output/writers.h"
#include "util/mounts.h"

#define MAX_FREQ	100000
#define MAX_OUTPUTS	8
#define MAX_SWITCH_S	(366ull * 24 * 3600)

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

struct record_args {
	uint32_t filter_mode;
	bool have_target;
	pid_t *pids;
	size_t npids;
	const char *cgroup;
	const char *container;	/* --container ID */
	uint32_t freq;
	uint32_t events;	/* ASGST_EVMASK_* */
	double duration;	/* <= 0: until stopped */
	const char *outputs[MAX_OUTPUTS];	/* -o, repeatable */
	enum output_format formats[MAX_OUTPUTS];
	size_t nout;
	const char *format;	/* -f */
	uint32_t window;
	uint32_t ringbuf_mb;	/* --ring-buffer; 0: the default */
	bool window_all;
	bool unwind_fp;		/* --unwind fp: no window for non-JVMs */
	bool no_attach;
	bool quiet;
	bool stats;
	uint64_t switch_ns;	/* --switch-output: a period; 0: one file */
	uint32_t switch_max;	/* --switch-max-files; 0: keep them all */
	struct filter filter;
	char **cmd;		/* -- COMMAND */
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
	static const char *const evs[] = { "cpu", "offcpu" };
	struct record_args *a = c->args;
	unsigned m = 0;
	char err[256];

	if (filter__name_mask(arg, evs, 2, &m, "-e", "event", err,
			      sizeof(err)))
		return options__error(c->cmd, "%s", err);
	a->events = m;
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
		"again; cpu,offcpu: both, with separate values", opt_events),
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
"CPU, and with -e offcpu as they leave it.\n"
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

/* each output's format: -f, else its extension; stdout's by who reads it */
static int resolve_formats(struct record_args *a)
{
	const char *fmt = a->format;

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
	return check_switch(a);
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

static int cgroup_id_of(const char *path, uint64_t *id)
{
	char full[PATH_MAX];
	struct {
		struct file_handle fh;
		uint64_t cgid;
	} h;
	int mount_id;

	if (path[0] == '/')
		snprintf(full, sizeof(full), "%s", path);
	else
		snprintf(full, sizeof(full), "/sys/fs/cgroup/%s", path);
	h.fh.handle_bytes = sizeof(h.cgid);
	if (name_to_handle_at(AT_FDCWD, full, &h.fh, &mount_id, 0) < 0)
		return -errno;
	*id = h.cgid;
	return 0;
}

/*
 * Fork the command stopped on a pipe; it execs once the sampler is on. A
 * second, close-on-exec pipe tells the parent when the exec happened (EOF)
 * or why it failed (the errno).
 */
static pid_t spawn_stopped(char **cmd, int *go_fd, int *exec_fd)
{
	int p[2], e[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	if (pipe2(e, O_CLOEXEC)) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		close(e[0]);
		close(e[1]);
		return -errno;
	}
	if (pid == 0) {
		char c;
		int err;

		close(p[1]);
		close(e[0]);
		if (read(p[0], &c, 1) != 1)
			_exit(126);	/* the recorder went away */
		execvp(cmd[0], cmd);
		err = errno;
		if (write(e[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(p[0]);
	close(e[1]);
	*go_fd = p[1];
	*exec_fd = e[0];
	return pid;
}

/* let the command go; 0 once it exec'd, else the exec's -errno */
static int start_command(int go_fd, int exec_fd)
{
	int err = 0;
	ssize_t n;

	if (write(go_fd, "g", 1) != 1)
		return -errno;
	do
		n = read(exec_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(err) ? -err : 0;
}

/* a zombie (exited, not reaped by its parent yet) counts as gone */
static bool is_alive(pid_t pid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT && errno != ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the state follows "(comm)" */
	return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/*
 * A pidfd turns readable when its process has exited (a zombie too): one
 * poll instead of reading /proc/PID/stat, which the kernel makes by
 * summing every thread of the process (tens of us for a JVM), four times
 * a second. Opened at the first look, as /proc was read before: a pid
 * that went and came back before that passes for the target, as it did.
 */
static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

static bool any_alive(const pid_t *pids, size_t n, int **pidfds)
{
	if (!*pidfds && (*pidfds = malloc(n * sizeof(**pidfds))))
		for (size_t i = 0; i < n; i++)
			(*pidfds)[i] = is_alive(pids[i]) ? pidfd_of(pids[i]) : -1;
	for (size_t i = 0; i < n; i++) {
		struct pollfd pfd = { .fd = *pidfds ? (*pidfds)[i] : -1,
				      .events = POLLIN };

		if (pfd.fd >= 0 ? poll(&pfd, 1, 0) == 0 : is_alive(pids[i]))
			return true;
	}
	return false;
}

static int on_record(const void *data, size_t len, void *ctx)
{
	return pipeline__push(ctx, data, len) == PIPELINE_HELD ? CAPTURE_HOLD :
								 0;
}

static void status_line(const struct pipeline *pl, struct capture *c,
			uint64_t elapsed_ns)
{
	uint64_t st[ASGST_STAT_MAX] = { 0 };
	struct pipeline_stats ps;
	double secs = (double)elapsed_ns / 1e9;

	capture__stats(c, st);
	pipeline__stats(pl, &ps);
	fprintf(stderr, "\r\033[K%6.1fs  %llu samples (%.0f/s)  lost %llu  "
		"%llu processes  %llu JVMs (%llu decoded, %llu attached)",
		secs, (unsigned long long)st[ASGST_STAT_SAMPLES],
		secs > 0 ? (double)st[ASGST_STAT_SAMPLES] / secs : 0.0,
		(unsigned long long)st[ASGST_STAT_LOST],
		(unsigned long long)ps.processes, (unsigned long long)ps.jvms,
		(unsigned long long)ps.jvms_decoded,
		(unsigned long long)ps.attached);
}

/*
 * The output could not be written: nothing recorded is lost, the decoded
 * stacks go to a raw file in $TMPDIR (or /var/tmp) that report reads.
 */
static void keep_recording(const struct profile *prof, const char *why)
{
	const char *dir = getenv("TMPDIR");
	struct raw_writer *w = NULL;
	char path[4096], err[512] = "";
	int rc, fd;

	if (!dir || !*dir)
		dir = "/var/tmp";
	/*
	 * a name nobody can guess and create first: mkstemps makes it ours,
	 * 0600, and the writer then replaces it with the whole recording
	 */
	snprintf(path, sizeof(path), "%s/asgst-bpf-%d-XXXXXX.asgst", dir,
		 (int)getpid());
	fd = mkstemps(path, 6);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, sizeof(err), "%s", strerror(errno));
	} else {
		close(fd);
		rc = raw_writer__open(&w, path, err, sizeof(err));
	}
	if (!rc) {
		rc = raw_writer__stacks(w, prof);
		if (rc) {
			raw_writer__abort(w);
			snprintf(err, sizeof(err), "%s", strerror(-rc));
		} else {
			rc = raw_writer__close(w, prof, err, sizeof(err));
		}
	}
	if (rc && fd >= 0)
		unlink(path);
	if (rc)
		fprintf(stderr, "asgst-bpf record: %s; keeping the recording "
			"in %s failed too: %s\n", why, path, err);
	else
		fprintf(stderr, "asgst-bpf record: %s; the recording is kept in "
			"%s (asgst-bpf report -i %s -o FILE)\n", why, path, path);
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull +
	       (uint64_t)tv->tv_usec * 1000ull;
}

/*
 * --stats: the recorder's own CPU a sample (user + system, with the attach
 * helpers it ran), over the whole run and in the steady state (from the
 * end of the pipeline's warm-up), and the decode's CPU time a sample
 * (decode_ns_per_sample is wall time: on a busy host it also counts the
 * waits for a CPU).
 */
static void print_cpu_stats(const struct pipeline_stats *ps)
{
	struct rusage self, kids;
	struct timespec ts;
	uint64_t all, now, output = 0, n = ps->records;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	all = tv_ns(&self.ru_utime) + tv_ns(&self.ru_stime) +
	      tv_ns(&kids.ru_utime) + tv_ns(&kids.ru_stime);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	/* the steady state runs to the last decode, the outputs after it */
	if (ps->finish_cpu_ns && ps->finish_cpu_ns <= now) {
		output = now - ps->finish_cpu_ns;
		now = ps->finish_cpu_ns;
	}
	fprintf(stderr, "stats: records=%llu recorder_cpu_ns=%llu "
		"recorder_cpu_ns_per_sample=%.0f output_cpu_ns=%llu "
		"steady_records=%llu "
		"steady_cpu_ns_per_sample=%.0f decode_cpu_ns_per_sample=%.0f "
		"steady_decode_cpu_ns_per_sample=%.0f\n",
		(unsigned long long)n, (unsigned long long)all,
		n ? (double)all / (double)n : 0.0,
		(unsigned long long)output,
		ps->warm_cpu_ns ? (unsigned long long)(n - ps->warm_records) : 0,
		ps->warm_cpu_ns && n > ps->warm_records && now > ps->warm_cpu_ns ?
		(double)(now - ps->warm_cpu_ns) /
		(double)(n - ps->warm_records) : 0.0,
		ps->decoded ? (double)ps->decode_cpu_ns /
			      (double)ps->decoded : 0.0,
		ps->warm_cpu_ns && ps->decoded > ps->warm_decoded ?
		(double)(ps->decode_cpu_ns - ps->warm_decode_cpu_ns) /
		(double)(ps->decoded - ps->warm_decoded) : 0.0);
}

/* --stats: what the recording cost, for people and `make bench` */
static void print_stats(struct capture *c, const struct pipeline_stats *ps,
			uint64_t decode_ns)
{
	uint64_t run_ns = 0, run_cnt = 0;
	struct jthreads_stats jts;
	struct rusage ru;

	jthreads__stats(NULL, &jts);
	capture__prog_stats(c, &run_ns, &run_cnt);
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "stats: bpf_run_ns=%llu bpf_run_cnt=%llu "
		"bpf_ns_per_sample=%.0f decoded=%llu decode_ns_per_sample=%.0f "
		"decode_errors=%llu peak_rss_kib=%ld windows=%llu "
		"window_bytes_per_sample=%.0f ring_copied=%llu "
		"attach_unheld=%llu attach_deferred=%llu\n",
		(unsigned long long)run_ns, (unsigned long long)run_cnt,
		run_cnt ? (double)run_ns / (double)run_cnt : 0.0,
		(unsigned long long)ps->decoded,
		ps->decoded ? (double)decode_ns / (double)ps->decoded : 0.0,
		(unsigned long long)ps->decode_errors, ru.ru_maxrss,
		(unsigned long long)ps->windows,
		ps->windows ? (double)ps->window_bytes /
			      (double)ps->windows : 0.0,
		(unsigned long long)ps->ring_copied,
		(unsigned long long)ps->attach_unheld,
		(unsigned long long)ps->attach_deferred);
	print_cpu_stats(ps);
	/* memory bounded by what is alive (docs/architecture.md) */
	fprintf(stderr, "stats: procs_seen=%llu procs_live=%llu "
		"procs_dropped=%llu pid_reuses=%llu sym_procs=%llu "
		"sym_modules=%llu bpf_map_errors=%llu strtab_kib=%llu "
		"codemap_capped=%llu jthreads_refused=%llu "
		"jthreads_reclaimed=%llu\n",
		(unsigned long long)ps->processes,
		(unsigned long long)ps->procs_live,
		(unsigned long long)ps->procs_dropped,
		(unsigned long long)ps->pid_reuses,
		(unsigned long long)ps->sym_procs,
		(unsigned long long)ps->sym_modules,
		(unsigned long long)ps->map_errors,
		(unsigned long long)ps->strtab_bytes / 1024,
		(unsigned long long)ps->codemap_capped,
		(unsigned long long)jts.refused,
		(unsigned long long)jts.reclaimed);
	capture__offcpu_stats(c, &run_ns, &run_cnt);
	if (run_cnt) {
		uint64_t st[ASGST_STAT_MAX] = { 0 };

		capture__stats(c, st);
		fprintf(stderr, "stats: bpf_offcpu_run_ns=%llu "
			"bpf_offcpu_run_cnt=%llu bpf_ns_per_switch=%.0f "
			"offcpu_capture_ns=%llu offcpu_no_switch_in=%llu "
			"offcpu_no_end=%llu offcpu_stray_end=%llu\n",
			(unsigned long long)run_ns, (unsigned long long)run_cnt,
			(double)run_ns / (double)run_cnt,
			(unsigned long long)st[ASGST_STAT_OFFCPU_CAPTURE_NS],
			(unsigned long long)st[ASGST_STAT_OFFCPU_NO_SWITCH_IN],
			(unsigned long long)ps->offcpu_no_end,
			(unsigned long long)ps->offcpu_stray_end);
	}
}

/* one recording, from its options to its outputs */
struct recording {
	struct record_args a;
	struct capture_opts co;
	struct capture *cap;
	struct profile *prof;
	struct pipeline *pl;
	struct sideband *sb;	/* the kernel's mmap/exec/fork/exit records */
	struct maplog *ml;	/* ... the maps kept from them */
	uint64_t ml_pruned;	/* when the maplog was last pruned */
	struct output out[MAX_OUTPUTS];
	struct raw_writer *raw;
	size_t raw_idx;		/* the output the raw file is */
	struct container_target ct;	/* --container */
	char agent[4096];
	pid_t child;		/* -- COMMAND; <= 0: none */
	int go_fd, exec_fd;	/* see spawn_stopped() */
	bool child_done;	/* reaped */
	bool tty;		/* a status line on stderr */
	uint64_t t0;		/* sampling started */
	uint64_t decode_ns;	/* for --stats */
	uint64_t st[ASGST_STAT_MAX];	/* the sampler's, at the end */
	/* --switch-output: the period being recorded */
	uint64_t period_t0;	/* it began (CLOCK_MONOTONIC) */
	uint64_t next_switch;
	uint64_t st0[ASGST_STAT_MAX];	/* the sampler's, as it began */
	char names[MAX_OUTPUTS][PATH_MAX];	/* its files */
	struct switch_files kept[MAX_OUTPUTS];	/* --switch-max-files */
	time_t began;		/* its name's time */
	unsigned periods;	/* written before it */
	size_t stacks_before;	/* their stacks */
	bool period_failed;	/* a period's output failed: exit 1 */
	/* -p's processes as pidfds (-1: none, /proc is read), opened at the
	 * first look; NULL until then */
	int *pidfds;
};

/* --stats: what unwinding by CFI took in memory, and its row cache; the
 * maps of processes gone before /proc was read, from the side-band */
static void print_unwind_stats(const struct recording *r)
{
	struct symbolizer_stats ss;
	struct sideband_stats sbs;
	struct maplog_stats ms;

	pipeline__symbolizer_stats(r->pl, &ss);
	fprintf(stderr, "stats: modules=%zu cfi_modules=%zu cfi_kib=%zu "
		"cfi_rows_cached=%llu cfi_rows_looked_up=%llu module_kib=%zu "
		"modules_refused=%zu\n",
		ss.modules, ss.cfi_modules, ss.cfi_bytes / 1024,
		(unsigned long long)ss.cfi_hits,
		(unsigned long long)ss.cfi_misses, ss.module_bytes / 1024,
		ss.modules_refused);
	sideband__stats(r->sb, &sbs);
	maplog__stats(r->ml, &ms);
	fprintf(stderr, "stats: sideband=%s sideband_records=%llu "
		"sideband_lost=%llu sideband_bad=%llu maplog_procs=%llu "
		"maplog_kib=%llu maplog_evicted=%llu maps_from_sideband=%zu\n",
		r->sb ? "on" : "off", (unsigned long long)sbs.records,
		(unsigned long long)sbs.lost, (unsigned long long)sbs.bad,
		(unsigned long long)ms.procs,
		(unsigned long long)ms.bytes / 1024,
		(unsigned long long)ms.evicted, ss.maps_fallback);
}

/*
 * A fork by a process the records never saw start (it ran before the
 * recording): its maps from /proc first, so the child's image (until it
 * execs, and kept past the exec for the samples taken before) is whole.
 */
static int on_sideband(const struct sideband_rec *s, void *ctx)
{
	struct recording *r = ctx;
	char path[64], *text = NULL;
	size_t len = 0;
	int fd;

	if (s->type == SIDEBAND_FORK && s->pid != s->ppid &&
	    !maplog__whole(r->ml, s->ppid)) {
		snprintf(path, sizeof(path), "/proc/%u/maps", s->ppid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !maps__slurp(fd, &text, &len) && len)
			maplog__seed(r->ml, s->ppid, s->time_ns, text, len);
		if (fd >= 0)
			close(fd);
		free(text);
	}
	if (s->type == SIDEBAND_EXIT)
		pipeline__note_exit(r->pl, (pid_t)s->pid);
	return maplog__apply(s, r->ml);
}

/* what the kernel said processes mapped, exec'd, forked, ended, to now */
static void sideband_pump(struct recording *r, uint64_t now)
{
	struct sideband_stats st;

	if (!r->sb)
		return;
	sideband__read(r->sb, on_sideband, r);
	/* an exit may be among what was lost: pid reuse is looked for in
	 * /proc again, for every process */
	sideband__stats(r->sb, &st);
	if (st.lost || st.bad)
		pipeline__exit_feed(r->pl, false);
	/* exited processes stay seconds: a look a second is enough */
	if (now - r->ml_pruned >= 1000000000ull) {
		maplog__prune(r->ml, now);
		r->ml_pruned = now;
	}
}

/* the symbolizer's source for processes /proc no longer has */
static int sideband_maps(void *ctx, pid_t pid, char **text, size_t *len,
			 pid_t *root_pid)
{
	struct recording *r = ctx;
	uint32_t ppid;

	sideband_pump(r, clock__mono_ns());
	if (maplog__text(r->ml, (uint32_t)pid, text, len))
		return -ENOENT;
	/* its parent's root holds the same files, while it lives */
	ppid = maplog__parent(r->ml, (uint32_t)pid);
	*root_pid = ppid && kill((pid_t)ppid, 0) == 0 ? (pid_t)ppid : 0;
	return 0;
}

/*
 * Side-band records keep the maps of processes that end before /proc is
 * read (a few milliseconds of life); without them (an old kernel) those
 * frames stay addresses, as before.
 */
static void sideband_open(struct recording *r)
{
	char err[256];

	r->ml = maplog__new(NULL);
	if (!r->ml || sideband__open(&r->sb, 512, err, sizeof(err))) {
		if (!r->a.quiet && r->ml)
			fprintf(stderr, "asgst-bpf record: %s; processes that end "
				"within a few ms keep unnamed frames\n", err);
		maplog__free(r->ml);
		r->ml = NULL;
		r->sb = NULL;
		return;
	}
	symbolizer__set_maps_fallback(pipeline__symbolizer(r->pl),
				      sideband_maps, r);
	pipeline__exit_feed(r->pl, true);
}

/* a period's files: -o's paths with the time it began (CLOCK_REALTIME) */
static int open_period_outputs(struct recording *r, time_t began)
{
	char err[512];
	bool raw = false;
	int rc, ret = 0;

	/* a late switch can begin in its predecessor's second: a name of its
	 * own, never the file just written */
	if (r->began && began <= r->began)
		began = r->began + 1;
	r->began = began;
	for (size_t i = 0; i < r->a.nout; i++) {
		if (r->a.formats[i] == OUT_RAW && raw)
			continue;	/* one raw file is enough */
		rc = switch_name__format(r->names[i], sizeof(r->names[i]),
					 r->a.outputs[i], began);
		if (rc) {
			snprintf(err, sizeof(err), "cannot write %s: the "
				 "period's file name is too long",
				 r->a.outputs[i]);
		} else if (r->a.formats[i] == OUT_RAW) {
			raw = true;
			r->raw_idx = i;
			rc = raw_writer__open(&r->raw, r->names[i], err,
					      sizeof(err));
		} else {
			rc = output__open(&r->out[i], r->names[i],
					  r->a.formats[i], err, sizeof(err));
		}
		if (rc) {
			/* no file (out[i].f or raw NULL): at the period's
			 * end its profile goes to keep_recording() */
			fprintf(stderr, "asgst-bpf record: %s\n", err);
			ret = 1;
		}
	}
	return ret;
}

/* open the outputs now: a bad path fails before anything is recorded */
static int open_outputs(struct recording *r)
{
	char err[512];
	int rc;

	if (r->a.switch_ns) {
		for (size_t i = 0; i < r->a.nout; i++)
			r->kept[i].max = r->a.switch_max;
		return open_period_outputs(r, time(NULL));
	}
	for (size_t i = 0; i < r->a.nout; i++) {
		if (r->a.formats[i] == OUT_RAW) {
			if (r->raw)
				continue;	/* one raw file is enough */
			rc = raw_writer__open(&r->raw, r->a.outputs[i], err,
					      sizeof(err));
			r->raw_idx = i;
		} else {
			rc = output__open(&r->out[i], r->a.outputs[i],
					  r->a.formats[i], err, sizeof(err));
		}
		if (rc) {
			fprintf(stderr, "asgst-bpf record: %s\n", err);
			return 1;
		}
	}
	return 0;
}

/*
 * --container: its processes now, and the cgroup v2 that holds them; the
 * kernel records that cgroup's tasks (new ones too), the pipeline keeps
 * those whose cgroup path names the container. Without such a cgroup
 * (cgroup v1, or its processes spread over cgroups shared with others)
 * every process is sampled and the pipeline alone chooses.
 */
static int open_container(struct recording *r)
{
	struct container_target *t = &r->ct;
	char err[512];

	if (container__resolve(r->a.filter.container, t, err, sizeof(err))) {
		fprintf(stderr, "asgst-bpf record: %s\n", err);
		return 2;
	}
	/* the full id: a container started later with the same prefix is
	 * not this one */
	memcpy(r->a.filter.container, t->id, sizeof(t->id));
	/* processes that come later: the same owner's cgroups only */
	r->a.filter.container_owner_known = true;
	r->a.filter.container_owner = t->owner;
	r->co.filter_mode = t->have_cgroup ? ASGST_FILTER_CGROUP :
					     ASGST_FILTER_ALL;
	r->co.cgroup_id = t->cgroup_id;
	if (r->a.quiet)
		return 0;
	if (t->ignored)
		fprintf(stderr, "asgst-bpf: container %.12s: %zu processes "
			"left out: their cgroup names the container but is "
			"uid %u's, not the runtime's (uid %u)\n", t->id,
			t->ignored, (unsigned)t->ignored_owner,
			(unsigned)t->owner);
	if (t->have_cgroup)
		fprintf(stderr, "asgst-bpf: container %.12s: %zu processes, "
			"cgroup %s\n", t->id, t->npids, t->cgroup);
	else
		fprintf(stderr, "asgst-bpf: container %.12s: %zu processes, no "
			"cgroup v2 of its own: every process is sampled, the "
			"container's kept\n", t->id, t->npids);
	return 0;
}

/* the sampler loaded, not started; the command forked, waiting to exec */
static int open_capture(struct recording *r)
{
	struct capture_opts *co = &r->co;
	char err[512];
	int rc;

	co->filter_mode = r->a.filter_mode;
	co->pids = r->a.pids;
	co->npids = r->a.npids;
	co->freq_hz = r->a.freq;
	co->events = r->a.events ? r->a.events : ASGST_EVMASK_CPU;
	co->defer_start = true;
	co->window_size = r->a.window;
	co->ringbuf_mb = r->a.ringbuf_mb;
	co->window_all = r->a.window_all || !r->a.unwind_fp;
	if (r->a.cgroup) {
		rc = cgroup_id_of(r->a.cgroup, &co->cgroup_id);
		if (rc) {
			fprintf(stderr, "asgst-bpf record: --cgroup %s: %s "
				"(give a cgroup v2 directory)\n", r->a.cgroup,
				strerror(-rc));
			return 2;
		}
	}
	if (r->a.container && (rc = open_container(r)))
		return rc;
	if (r->a.cmd) {
		r->child = spawn_stopped(r->a.cmd, &r->go_fd, &r->exec_fd);
		if (r->child < 0) {
			fprintf(stderr, "asgst-bpf record: cannot start '%s': %s\n",
				r->a.cmd[0], strerror((int)-r->child));
			return 1;
		}
		co->pids = &r->child;
		co->npids = 1;
		co->follow_children = true;
	}
	rc = capture__open(&r->cap, co, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "asgst-bpf record: %s\n", err);
		return 1;
	}
	return 0;
}

/* the profile and the pipeline, the targets known before sampling starts */
static int open_pipeline(struct recording *r)
{
	struct pipeline_opts po = { 0 };
	char err[512];

	r->prof = profile__new();
	po.no_attach = r->a.no_attach;
	if (!r->a.no_attach) {
		if (attach__find_agent(r->agent, sizeof(r->agent), err,
				       sizeof(err)))
			fprintf(stderr, "asgst-bpf record: %s; JVMs without the "
				"agent show native frames only\n", err);
		else
			po.agent_path = r->agent;
	}
	po.raw = r->raw;
	po.filter = filter__active(&r->a.filter) ? &r->a.filter : NULL;
	po.quiet = r->a.quiet;
	r->pl = r->prof ? pipeline__new(r->prof, r->cap, &po) : NULL;
	if (!r->pl) {
		fprintf(stderr, "asgst-bpf record: out of memory\n");
		return 1;
	}
	profile__meta(r->prof)->frequency_hz = r->a.freq;
	sideband_open(r);
	/* JVMs among the targets get their stack window from the start */
	if (r->a.filter_mode == ASGST_FILTER_ALL)
		pipeline__prime_jvms(r->pl);
	for (size_t i = 0; i < r->a.npids; i++)
		pipeline__prime(r->pl, r->a.pids[i]);
	for (size_t i = 0; i < r->ct.npids; i++)
		pipeline__prime(r->pl, r->ct.pids[i]);
	/* the targets' threads are known to the kernel side: start sampling */
	pipeline__process(r->pl, 0, false);
	return 0;
}

/* start sampling, then let the command exec */
static int start(struct recording *r)
{
	struct sigaction sa = { 0 };
	char err[512];
	int rc;

	rc = capture__start(r->cap, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "asgst-bpf record: %s\n", err);
		return 1;
	}
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	r->tty = !r->a.quiet && isatty(STDERR_FILENO);
	r->t0 = clock__mono_ns();
	r->period_t0 = r->t0;
	r->next_switch = r->t0 + r->a.switch_ns;
	if (r->go_fd < 0)
		return 0;
	rc = start_command(r->go_fd, r->exec_fd);
	close(r->go_fd);
	close(r->exec_fd);
	r->go_fd = r->exec_fd = -1;
	if (rc) {
		fprintf(stderr, "asgst-bpf record: cannot run '%s': %s\n",
			r->a.cmd[0], strerror(-rc));
		waitpid(r->child, NULL, 0);
		r->child_done = true;
		return 1;
	}
	/* look at it now that it is the command, not our fork */
	pipeline__prime(r->pl, r->child);
	return 0;
}

/* the command exited, or (-p) every target has: so has the recording */
static bool targets_gone(struct recording *r, uint64_t now,
			 uint64_t *last_alive)
{
	int status;

	if (r->child > 0 && !r->child_done &&
	    waitpid(r->child, &status, WNOHANG) == r->child) {
		r->child_done = true;
		return true;
	}
	if (!r->a.npids || now - *last_alive < 250000000ull)
		return false;
	*last_alive = now;
	if (any_alive(r->a.pids, r->a.npids, &r->pidfds))
		return false;
	if (!r->a.quiet)
		fprintf(stderr, "asgst-bpf record: the target processes "
			"exited\n");
	return true;
}

/* the period's figures: the sampler's counters (r->st, just read) since
 * it began */
static void period_meta(struct recording *r, uint64_t end_ns)
{
	struct profile_meta *m = profile__meta(r->prof);
	const uint64_t *st = r->st, *st0 = r->st0;

	m->end_ns = end_ns;
	m->duration_ns = end_ns - r->period_t0;
	m->samples = st[ASGST_STAT_SAMPLES] - st0[ASGST_STAT_SAMPLES];
	m->lost = st[ASGST_STAT_LOST] - st0[ASGST_STAT_LOST];
	m->events = r->co.events;
	m->offcpu_events = st[ASGST_STAT_OFFCPU] - st0[ASGST_STAT_OFFCPU];
	m->offcpu_lost = st[ASGST_STAT_OFFCPU_LOST] -
			 st0[ASGST_STAT_OFFCPU_LOST];
	m->offcpu_capture_ns = st[ASGST_STAT_OFFCPU_CAPTURE_NS] -
			       st0[ASGST_STAT_OFFCPU_CAPTURE_NS];
}

static int write_outputs(struct recording *r);

/*
 * --switch-output: the period ends. Its profile holds the samples decoded
 * in it; those still in the delay queue (or off-CPU stacks waiting for
 * their thread to run again) are decoded into the next one. Only the
 * profile is dropped: processes, symbols and code maps stay.
 */
static void switch_period(struct recording *r, uint64_t now)
{
	capture__stats(r->cap, r->st);
	period_meta(r, now);
	if (write_outputs(r))
		r->period_failed = true;
	r->periods++;
	r->stacks_before += profile__nstacks(r->prof);
	profile__reset(r->prof);
	memcpy(r->st0, r->st, sizeof(r->st0));
	r->period_t0 = now;
	/* a period that ran late (a slow write): the next on the beat */
	while (r->next_switch <= now)
		r->next_switch += r->a.switch_ns;
	if (open_period_outputs(r, time(NULL)))
		r->period_failed = true;
	/* with no raw output the pipeline never had one */
	if (r->a.formats[r->raw_idx] == OUT_RAW &&
	    pipeline__set_raw(r->pl, r->raw)) {
		fprintf(stderr, "asgst-bpf record: %s: the code maps could "
			"not be copied\n", r->names[r->raw_idx]);
		r->period_failed = true;
	}
}

/* sample and decode until the duration ends, Ctrl-C or the targets exit */
static void run(struct recording *r)
{
	uint64_t t_end = 0, last_status = 0, last_alive = 0;
	int rc;

	if (r->a.duration > 0)
		t_end = r->t0 + (uint64_t)(r->a.duration * 1e9);
	while (!stop_requested) {
		uint64_t now;

		sideband_pump(r, clock__mono_ns());
		rc = capture__poll(r->cap, 100, on_record, r->pl);
		if (rc < 0) {
			fprintf(stderr, "asgst-bpf record: ring buffer: %s\n",
				strerror(-rc));
			break;
		}
		now = clock__mono_ns();
		pipeline__process(r->pl, now, false);
		r->decode_ns += clock__mono_ns() - now;
		if (t_end && now >= t_end)
			break;
		if (targets_gone(r, now, &last_alive))
			break;
		if (r->a.switch_ns && now >= r->next_switch)
			switch_period(r, now);
		if (r->tty && now - last_status >= 250000000ull) {
			status_line(r->pl, r->cap, now - r->t0);
			last_status = now;
		}
	}
}

/* the last records decoded, the profile's figures filled in */
static void finish(struct recording *r)
{
	uint64_t end_ns, t_dec;

	/*
	 * The sampler stopped first: a command still running, or a busy
	 * host, would otherwise put records in the ring buffer between the
	 * drain and the counters' read, counted and never decoded (hundreds
	 * at 100 k off-CPU switches a second). Then whatever is in the ring
	 * buffer still counts (the maps first).
	 */
	capture__stop(r->cap);
	sideband_pump(r, clock__mono_ns());
	capture__drain(r->cap, on_record, r->pl);
	capture__stats(r->cap, r->st);
	end_ns = clock__mono_ns();
	t_dec = clock__mono_ns();
	pipeline__finish(r->pl, end_ns);
	r->decode_ns += clock__mono_ns() - t_dec;
	if (r->tty)
		fputs("\r\033[K", stderr);
	/* the whole recording, or with --switch-output its last period */
	period_meta(r, end_ns);
}

/* --switch-max-files: output i's period file was written (rc 0) */
static void rotate(struct recording *r, size_t i, int rc)
{
	if (!rc)
		rc = switch_files__add(&r->kept[i], r->names[i]);
	else
		rc = 0;
	if (rc)
		fprintf(stderr, "asgst-bpf record: cannot delete an old file "
			"of %s: %s\n", r->a.outputs[i], strerror(-rc));
}

/*
 * write every output; one that fails keeps the recording (keep_recording);
 * a period's (--switch-output) files are all written and closed anyway
 */
static int write_outputs(struct recording *r)
{
	char err[512];
	int rc, ret = 0;

	pipeline__annotate(r->pl, r->prof);

	for (size_t i = 0; i < r->a.nout; i++) {
		if (r->a.formats[i] == OUT_RAW) {
			if (i != r->raw_idx)
				continue;
			/* no writer: a period's file whose open failed */
			rc = r->raw ? pipeline__finish_raw(r->pl) : -EBADF;
			if (rc)
				snprintf(err, sizeof(err), "writing %s failed: "
					 "%s", r->a.switch_ns ? r->names[i] :
					 r->a.outputs[i], strerror(-rc));
			/* what was written is put in place: the maps that
			 * failed are only some processes' */
			if (r->raw && raw_writer__close(r->raw, r->prof, err,
							sizeof(err)))
				rc = rc ?: -EIO;
			r->raw = NULL;
		} else if (!r->out[i].f) {
			/* its open failed, and said so */
			rc = -EBADF;
			snprintf(err, sizeof(err), "%s was not written",
				 r->names[i]);
		} else {
			rc = output__write(&r->out[i], r->prof, err,
					   sizeof(err));
		}
		if (r->a.switch_ns) {
			/* complete on disk before the next period's */
			output__close(&r->out[i]);
			rotate(r, i, rc);
		}
		if (rc && !ret)
			keep_recording(r->prof, err);
		if (rc)
			ret = 1;
		if (rc && !r->a.switch_ns)
			break;
	}
	return ret;
}

/* the closing lines on stderr */
static void summary(struct recording *r)
{
	const uint64_t *st = r->st;
	struct pipeline_stats ps;

	pipeline__stats(r->pl, &ps);
	if (r->co.events & ASGST_EVMASK_OFFCPU)
		fprintf(stderr, "asgst-bpf: %llu off-CPU stacks, %llu lost, "
			"%.1f us each to take\n",
			(unsigned long long)st[ASGST_STAT_OFFCPU],
			(unsigned long long)st[ASGST_STAT_OFFCPU_LOST],
			st[ASGST_STAT_OFFCPU] ?
			(double)st[ASGST_STAT_OFFCPU_CAPTURE_NS] / 1e3 /
			(double)st[ASGST_STAT_OFFCPU] : 0.0);
	fprintf(stderr, "asgst-bpf: %llu samples, %llu lost, %zu stacks, "
		"%llu processes (%llu JVMs) ->",
		(unsigned long long)st[ASGST_STAT_SAMPLES],
		(unsigned long long)st[ASGST_STAT_LOST],
		r->stacks_before + profile__nstacks(r->prof),
		(unsigned long long)ps.processes,
		(unsigned long long)ps.jvms);
	if (r->a.switch_ns)
		fprintf(stderr, " %u periods of", r->periods + 1);
	for (size_t i = 0; i < r->a.nout; i++)
		fprintf(stderr, " %s", r->a.outputs[i] ? r->a.outputs[i] :
			"stdout");
	fputc('\n', stderr);
	if (r->a.stats) {
		print_stats(r->cap, &ps, r->decode_ns);
		print_unwind_stats(r);
	}
}

static void recording__cleanup(struct recording *r)
{
	if (r->go_fd >= 0)
		close(r->go_fd);	/* the child sees EOF and exits */
	if (r->exec_fd >= 0)
		close(r->exec_fd);
	if (r->child > 0 && !r->child_done) {
		/* the recording is over (time, Ctrl-C or error): so is the command */
		kill(r->child, SIGTERM);
		waitpid(r->child, NULL, 0);
	}
	for (size_t i = 0; i < MAX_OUTPUTS; i++) {
		output__close(&r->out[i]);
		switch_files__free(&r->kept[i]);
	}
	/* an output not written by now (an error before the end): removed */
	raw_writer__abort(r->raw);
	pipeline__free(r->pl);
	sideband__close(r->sb);
	maplog__free(r->ml);
	profile__free(r->prof);
	capture__close(r->cap);
	for (size_t i = 0; r->pidfds && i < r->a.npids; i++)
		if (r->pidfds[i] >= 0)
			close(r->pidfds[i]);
	free(r->pidfds);
	free(r->a.pids);
	container_target__free(&r->ct);
	filter__free(&r->a.filter);
}

int cmd_record(int argc, char **argv)
{
	struct recording r = { .child = -1, .go_fd = -1, .exec_fd = -1 };
	int ret;

	ret = parse_args(argc, argv, &r.a);
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
	ret = open_outputs(&r) ?: open_capture(&r) ?: open_pipeline(&r) ?:
	      start(&r);
	if (ret)
		goto cleanup;
	run(&r);
	finish(&r);
	ret = write_outputs(&r);
	if (!ret)
		summary(&r);
	if (r.period_failed)
		ret = 1;
cleanup:
	recording__cleanup(&r);
	return ret;
}
