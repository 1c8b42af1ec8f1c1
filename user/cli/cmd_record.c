// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * asgst-bpf record: choose targets, start the kernel sampler, feed records
 * through the pipeline until the duration ends, the command exits or the
 * user presses Ctrl-C, then write the profile.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jvm/attach.h"
#include "capture/capture.h"
#include "cli/commands.h"
#include "profile/filter.h"
#include "output/output.h"
#include "profile/pipeline.h"
#include "profile/profile.h"
#include "output/raw.h"
#include "output/writers.h"

#define MAX_FREQ	100000
#define MAX_OUTPUTS	8

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static const char record_usage[] =
"Usage: asgst-bpf record [TARGET] [OPTIONS]\n"
"       asgst-bpf record [OPTIONS] -- COMMAND [ARGS...]\n"
"\n"
"Sample stacks (kernel, native and Java) of the target processes: on the\n"
"CPU, and with -e offcpu as they leave it.\n"
"\n"
"Targets (one of):\n"
"  -a, --all               every process on the host\n"
"  -p, --pid PID[,PID...]  these processes (all their threads)\n"
"      --cgroup PATH       tasks in this cgroup v2 (path, or relative to\n"
"                          /sys/fs/cgroup)\n"
"  -- COMMAND ARGS...      start COMMAND and profile it and its descendants;\n"
"                          the recording ends when it exits\n"
"\n"
"Options:\n"
"  -e, --event EV[,EV]     cpu: sample on-CPU stacks -F times a second\n"
"                          (default); offcpu: a thread's stack each time it\n"
"                          leaves the CPU, weighed by the time until it runs\n"
"                          again; cpu,offcpu: both, with separate values\n"
"  -F, --freq HZ           samples per second per CPU (default 99)\n"
"  -d, --duration SECONDS  stop after this long (default: until Ctrl-C)\n"
"  -o, --output FILE       write here (default: stdout: top on a terminal,\n"
"                          else collapsed); repeat -o for several formats\n"
"                          from one recording (up to 8)\n"
"  -f, --format FORMAT     collapsed, json, pprof, html, top, raw (default:\n"
"                          from -o's extension: .collapsed .folded .txt\n"
"                          .json .pb.gz .pprof .html .asgst)\n"
"      --stack-window BYTES  copy up to this many user-stack bytes per sample\n"
"                          for every process, less where the thread's\n"
"                          frames end (JVMs always get one; default\n"
"                          16384, at most 65536; suffix k allowed; 0: no\n"
"                          window at all, JVM samples then fail to decode\n"
"                          with ASGST_NO_WINDOW)\n"
"      --no-attach         do not inject the agent into JVMs without one\n"
"      --stats             print the sampler's in-kernel cost per sample,\n"
"                          decode cost, peak memory and window bytes per\n"
"                          sample at the end\n"
"  -q, --quiet             no status line or notices\n"
"\n"
"Filters (on the decoded stacks):\n"
FILTER_USAGE
"  -h, --help              this help\n";

struct record_args {
	uint32_t filter_mode;
	bool have_target;
	pid_t *pids;
	size_t npids;
	const char *cgroup;
	uint32_t freq;
	uint32_t events;	/* ASGST_EVMASK_* */
	double duration;	/* <= 0: until stopped */
	const char *outputs[MAX_OUTPUTS];	/* -o, repeatable */
	enum output_format formats[MAX_OUTPUTS];
	size_t nout;
	uint32_t window;
	bool window_all;
	bool no_attach;
	bool quiet;
	bool stats;
	struct filter filter;
	char **cmd;		/* -- COMMAND */
};

static int err_line(const char *fmt, const char *a)
{
	fprintf(stderr, "asgst-bpf record: ");
	fprintf(stderr, fmt, a);
	fputc('\n', stderr);
	return 2;
}

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

static int parse_pids(const char *s, struct record_args *a)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint32_t v;
		char path[64];
		pid_t *np;

		if (parse_u32(tok, 1, INT_MAX, &v, false)) {
			err_line("-p: '%s' is not a process id (a positive number)",
				 tok);
			rc = -EINVAL;
			goto cleanup;
		}
		snprintf(path, sizeof(path), "/proc/%u", v);
		if (access(path, F_OK)) {
			err_line("-p: no process %s (check the pid with ps)", tok);
			rc = -ESRCH;
			goto cleanup;
		}
		np = realloc(a->pids, (a->npids + 1) * sizeof(*np));
		if (!np) {
			rc = -ENOMEM;
			goto cleanup;
		}
		a->pids = np;
		a->pids[a->npids++] = (pid_t)v;
	}
	if (!a->npids) {
		err_line("-p: no pid given in '%s'", s);
		rc = -EINVAL;
	}
cleanup:
	free(copy);
	return rc;
}

static int set_target(struct record_args *a, uint32_t mode, const char *what)
{
	if (a->have_target && a->filter_mode != mode)
		return err_line("choose one target: %s conflicts with an earlier "
				"-a, -p, --cgroup or --", what);
	a->have_target = true;
	a->filter_mode = mode;
	return 0;
}

static int parse_args(int argc, char **argv, struct record_args *a)
{
	enum { OPT_CGROUP = 256, OPT_WINDOW, OPT_NO_ATTACH, OPT_STATS,
	       OPT_FILTER };
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "freq", required_argument, NULL, 'F' },
		{ "event", required_argument, NULL, 'e' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "stack-window", required_argument, NULL, OPT_WINDOW },
		{ "no-attach", no_argument, NULL, OPT_NO_ATTACH },
		{ "stats", no_argument, NULL, OPT_STATS },
		FILTER_LONGOPTS(OPT_FILTER),
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *fmt = NULL;
	char ferr[256];
	int c, li = -1;

	a->freq = 99;
	a->window = ASGST_DEFAULT_WINDOW;
	opterr = 0;
	optind = 1;
	/* '+': stop at the first non-option so "-- CMD -x" stays CMD's */
	while ((c = getopt_long(argc, argv, "+ap:F:e:d:o:f:qh", longopts,
				&li)) != -1) {
		switch (c) {
		case 'a':
			if (set_target(a, ASGST_FILTER_ALL, "-a"))
				return 2;
			break;
		case 'p':
			if (set_target(a, ASGST_FILTER_PIDS, "-p"))
				return 2;
			if (parse_pids(optarg, a))
				return 2;
			break;
		case OPT_CGROUP:
			if (set_target(a, ASGST_FILTER_CGROUP, "--cgroup"))
				return 2;
			a->cgroup = optarg;
			break;
		case 'F':
			if (parse_u32(optarg, 1, MAX_FREQ, &a->freq, false))
				return err_line("-F: '%s' is not a frequency "
						"(1 to 100000 Hz)", optarg);
			break;
		case 'e': {
			/* bit i = ASGST_EVMASK_* */
			static const char *const evs[] = { "cpu", "offcpu" };
			unsigned m = 0;

			if (filter__name_mask(optarg, evs, 2, &m, "-e", "event",
					      ferr, sizeof(ferr)))
				return err_line("%s", ferr);
			a->events = m;
			break;
		}
		case 'd': {
			char *end;

			errno = 0;
			a->duration = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !isfinite(a->duration) || a->duration <= 0)
				return err_line("-d: '%s' is not a duration "
						"(a positive number of seconds)",
						optarg);
			break;
		}
		case 'o':
			if (a->nout == MAX_OUTPUTS)
				return err_line("-o: at most %s outputs", "8");
			a->outputs[a->nout++] = optarg;
			break;
		case 'f':
			fmt = optarg;
			break;
		case OPT_WINDOW:
			if (parse_u32(optarg, 0, ASGST_MAX_WINDOW, &a->window,
				      true))
				return err_line("--stack-window: '%s' is not a "
						"size from 0 to 65536 bytes",
						optarg);
			a->window_all = a->window > 0;
			break;
		case OPT_NO_ATTACH:
			a->no_attach = true;
			break;
		case OPT_STATS:
			a->stats = true;
			break;
		case OPT_FILTER:
			if (filter__option(&a->filter, longopts[li].name, optarg,
					   ferr, sizeof(ferr)))
				return err_line("%s", ferr);
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'h':
			fputs(record_usage, stdout);
			return 1;
		case '?':
		default:
			if (optopt && optopt < 256)
				fprintf(stderr, "asgst-bpf record: unknown or "
					"incomplete option '-%c'; see 'asgst-bpf "
					"record --help'\n", optopt);
			else
				fprintf(stderr, "asgst-bpf record: unknown or "
					"incomplete option '%s'; see 'asgst-bpf "
					"record --help'\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		/* getopt consumed "--" and left the command */
		if (strcmp(argv[optind - 1], "--") != 0)
			return err_line("unexpected argument '%s'; a command to "
					"profile goes after '--'", argv[optind]);
		if (set_target(a, ASGST_FILTER_PIDS, "--"))
			return 2;
		a->cmd = &argv[optind];
	}
	if (!a->have_target)
		return err_line("%s", "say what to record: -a, -p PID, "
				"--cgroup PATH or -- COMMAND (see --help)");
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
				return err_line("-f: unknown format '%s' (try "
						"collapsed, json, pprof, html, "
						"top or raw)", fmt);
		} else if (a->outputs[i]) {
			f = output_format__from_path(a->outputs[i]);
			if (f == OUT_NONE)
				f = OUT_COLLAPSED;
		} else {
			f = a->formats[i];
		}
		if (f == OUT_RAW && (!a->outputs[i] ||
				     !strcmp(a->outputs[i], "-")))
			return err_line("%s", "the raw format needs -o "
					"FILE.asgst");
		a->formats[i] = f;
	}
	if (fmt && a->nout > 1)
		return err_line("%s", "-f goes with a single -o; with several, "
				"each output's extension gives its format");
	return 0;
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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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

static bool any_alive(const pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (is_alive(pids[i]))
			return true;
	return false;
}

static int on_record(const void *data, size_t len, void *ctx)
{
	pipeline__push(ctx, data, len);
	return 0;
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
	char path[4096], err[512];
	int rc;

	if (!dir || !*dir)
		dir = "/var/tmp";
	snprintf(path, sizeof(path), "%s/asgst-bpf-%d-%lld.asgst", dir,
		 (int)getpid(), (long long)time(NULL));
	rc = raw_writer__open(&w, path, err, sizeof(err));
	if (!rc) {
		rc = raw_writer__stacks(w, prof);
		rc = raw_writer__close(w, prof) ?: rc;
	}
	if (rc)
		fprintf(stderr, "asgst-bpf record: %s; keeping the recording "
			"in %s failed too: %s\n", why, path, strerror(-rc));
	else
		fprintf(stderr, "asgst-bpf record: %s; the recording is kept in "
			"%s (asgst-bpf report -i %s -o FILE)\n", why, path, path);
}

/* --stats: what the recording cost, for people and `make bench` */
static void print_stats(struct capture *c, const struct pipeline_stats *ps,
			uint64_t decode_ns)
{
	uint64_t run_ns = 0, run_cnt = 0;
	struct rusage ru;

	capture__prog_stats(c, &run_ns, &run_cnt);
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "stats: bpf_run_ns=%llu bpf_run_cnt=%llu "
		"bpf_ns_per_sample=%.0f decoded=%llu decode_ns_per_sample=%.0f "
		"decode_errors=%llu peak_rss_kib=%ld windows=%llu "
		"window_bytes_per_sample=%.0f\n",
		(unsigned long long)run_ns, (unsigned long long)run_cnt,
		run_cnt ? (double)run_ns / (double)run_cnt : 0.0,
		(unsigned long long)ps->decoded,
		ps->decoded ? (double)decode_ns / (double)ps->decoded : 0.0,
		(unsigned long long)ps->decode_errors, ru.ru_maxrss,
		(unsigned long long)ps->windows,
		ps->windows ? (double)ps->window_bytes /
			      (double)ps->windows : 0.0);
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

int cmd_record(int argc, char **argv)
{
	struct record_args a = { 0 };
	struct capture_opts co = { 0 };
	struct capture *cap = NULL;
	struct profile *prof = NULL;
	struct pipeline *pl = NULL;
	struct pipeline_opts po = { 0 };
	struct output out[MAX_OUTPUTS] = { 0 };
	size_t raw_idx = 0;
	struct sigaction sa = { 0 };
	uint64_t st[ASGST_STAT_MAX] = { 0 };
	struct pipeline_stats ps;
	struct raw_writer *raw = NULL;
	char err[512], agent[4096];
	uint64_t t0, t_end = 0, last_status = 0, last_alive = 0, t_dec;
	uint64_t decode_ns = 0;
	pid_t child = -1;
	int go_fd = -1, exec_fd = -1, rc, ret = 1;
	bool child_done = false, tty;

	rc = parse_args(argc, argv, &a);
	if (rc) {
		ret = rc == 1 ? 0 : 2;
		goto cleanup;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "asgst-bpf record: needs root (CAP_BPF and "
			"CAP_PERFMON): run it with sudo\n");
		ret = 1;
		goto cleanup;
	}
	/* open the outputs now: a bad path fails before anything is recorded */
	for (size_t i = 0; i < a.nout; i++) {
		if (a.formats[i] == OUT_RAW) {
			if (raw)
				continue;	/* one raw file is enough */
			rc = raw_writer__open(&raw, a.outputs[i], err,
					      sizeof(err));
			raw_idx = i;
		} else {
			rc = output__open(&out[i], a.outputs[i], a.formats[i],
					  err, sizeof(err));
		}
		if (rc) {
			fprintf(stderr, "asgst-bpf record: %s\n", err);
			goto cleanup;
		}
	}
	co.filter_mode = a.filter_mode;
	co.pids = a.pids;
	co.npids = a.npids;
	co.freq_hz = a.freq;
	co.events = a.events ? a.events : ASGST_EVMASK_CPU;
	co.defer_start = true;
	co.window_size = a.window;
	co.window_all = a.window_all;
	if (a.cgroup) {
		rc = cgroup_id_of(a.cgroup, &co.cgroup_id);
		if (rc) {
			fprintf(stderr, "asgst-bpf record: --cgroup %s: %s "
				"(give a cgroup v2 directory)\n", a.cgroup,
				strerror(-rc));
			ret = 2;
			goto cleanup;
		}
	}
	if (a.cmd) {
		child = spawn_stopped(a.cmd, &go_fd, &exec_fd);
		if (child < 0) {
			fprintf(stderr, "asgst-bpf record: cannot start '%s': %s\n",
				a.cmd[0], strerror((int)-child));
			goto cleanup;
		}
		co.pids = &child;
		co.npids = 1;
		co.follow_children = true;
	}
	rc = capture__open(&cap, &co, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "asgst-bpf record: %s\n", err);
		goto cleanup;
	}
	prof = profile__new();
	po.no_attach = a.no_attach;
	if (!a.no_attach) {
		if (attach__find_agent(agent, sizeof(agent), err, sizeof(err)))
			fprintf(stderr, "asgst-bpf record: %s; JVMs without the "
				"agent show native frames only\n", err);
		else
			po.agent_path = agent;
	}
	po.raw = raw;
	po.filter = filter__active(&a.filter) ? &a.filter : NULL;
	po.quiet = a.quiet;
	pl = prof ? pipeline__new(prof, cap, &po) : NULL;
	if (!pl) {
		fprintf(stderr, "asgst-bpf record: out of memory\n");
		goto cleanup;
	}
	profile__meta(prof)->frequency_hz = a.freq;
	/* JVMs among the targets get their stack window from the start */
	if (a.filter_mode == ASGST_FILTER_ALL)
		pipeline__prime_jvms(pl);
	for (size_t i = 0; i < a.npids; i++)
		pipeline__prime(pl, a.pids[i]);
	/* the targets' threads are known to the kernel side: start sampling */
	pipeline__process(pl, 0, false);
	rc = capture__start(cap, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "asgst-bpf record: %s\n", err);
		goto cleanup;
	}

	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	tty = !a.quiet && isatty(STDERR_FILENO);
	t0 = mono_ns();
	if (a.duration > 0)
		t_end = t0 + (uint64_t)(a.duration * 1e9);
	if (go_fd >= 0) {
		rc = start_command(go_fd, exec_fd);
		close(go_fd);
		close(exec_fd);
		go_fd = exec_fd = -1;
		if (rc) {
			fprintf(stderr, "asgst-bpf record: cannot run '%s': %s\n",
				a.cmd[0], strerror(-rc));
			waitpid(child, NULL, 0);
			child_done = true;
			goto cleanup;
		}
		/* look at it now that it is the command, not our fork */
		pipeline__prime(pl, child);
	}

	while (!stop_requested) {
		uint64_t now;

		rc = capture__poll(cap, 100, on_record, pl);
		if (rc < 0) {
			fprintf(stderr, "asgst-bpf record: ring buffer: %s\n",
				strerror(-rc));
			break;
		}
		now = mono_ns();
		pipeline__process(pl, now, false);
		decode_ns += mono_ns() - now;
		if (t_end && now >= t_end)
			break;
		if (child > 0 && !child_done) {
			int status;

			if (waitpid(child, &status, WNOHANG) == child) {
				child_done = true;
				break;
			}
		}
		/* -p: when every target has exited, so has the recording */
		if (a.npids && now - last_alive >= 250000000ull) {
			last_alive = now;
			if (!any_alive(a.pids, a.npids)) {
				if (!a.quiet)
					fprintf(stderr, "asgst-bpf record: the "
						"target processes exited\n");
				break;
			}
		}
		if (tty && now - last_status >= 250000000ull) {
			status_line(pl, cap, now - t0);
			last_status = now;
		}
	}
	/* whatever is in the ring buffer still counts */
	capture__drain(cap, on_record, pl);
	profile__meta(prof)->end_ns = mono_ns();
	profile__meta(prof)->duration_ns = profile__meta(prof)->end_ns - t0;
	t_dec = mono_ns();
	pipeline__finish(pl, profile__meta(prof)->end_ns);
	decode_ns += mono_ns() - t_dec;
	if (tty)
		fputs("\r\033[K", stderr);

	capture__stats(cap, st);
	profile__meta(prof)->samples = st[ASGST_STAT_SAMPLES];
	profile__meta(prof)->lost = st[ASGST_STAT_LOST];
	profile__meta(prof)->events = co.events;
	profile__meta(prof)->offcpu_events = st[ASGST_STAT_OFFCPU];
	profile__meta(prof)->offcpu_lost = st[ASGST_STAT_OFFCPU_LOST];
	profile__meta(prof)->offcpu_capture_ns =
		st[ASGST_STAT_OFFCPU_CAPTURE_NS];
	pipeline__stats(pl, &ps);
	for (size_t i = 0; i < a.nout; i++) {
		if (a.formats[i] == OUT_RAW) {
			if (i != raw_idx)
				continue;
			rc = pipeline__finish_raw(pl);
			rc = raw_writer__close(raw, prof) ?: rc;
			raw = NULL;
			if (rc)
				snprintf(err, sizeof(err), "writing %s failed: "
					 "%s", a.outputs[i], strerror(-rc));
		} else {
			rc = output__write(&out[i], prof, err, sizeof(err));
		}
		if (rc) {
			keep_recording(prof, err);
			goto cleanup;
		}
	}
	if (co.events & ASGST_EVMASK_OFFCPU)
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
		profile__nstacks(prof), (unsigned long long)ps.processes,
		(unsigned long long)ps.jvms);
	for (size_t i = 0; i < a.nout; i++)
		fprintf(stderr, " %s", a.outputs[i] ? a.outputs[i] : "stdout");
	fputc('\n', stderr);
	if (a.stats)
		print_stats(cap, &ps, decode_ns);
	ret = 0;
cleanup:
	if (go_fd >= 0)
		close(go_fd);	/* the child sees EOF and exits */
	if (exec_fd >= 0)
		close(exec_fd);
	if (child > 0 && !child_done) {
		/* the recording is over (time, Ctrl-C or error): so is the command */
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	for (size_t i = 0; i < MAX_OUTPUTS; i++)
		output__close(&out[i]);
	raw_writer__close(raw, NULL);
	pipeline__free(pl);
	profile__free(prof);
	capture__close(cap);
	free(a.pids);
	filter__free(&a.filter);
	return ret;
}
