// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The recording engine (recorder/) over a fake kernel side: the lifecycle
 * and the order of its end (stop -> side-band pumped -> ring drained ->
 * counters read -> outputs written), what ends a run (the stop flag, the
 * duration, the command's or the -p processes' exit), the fork/exec
 * handshake, --switch-output periods, and a raw recording replayed through
 * the same engine.
 *
 * The fake sampler behaves like a busy kernel: until it is stopped, every
 * call into it writes more records into its ring (counted at once), so an
 * engine that read the counters before stopping and draining would count
 * records it never decoded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/types.h>
#include "capture/sample.h"
#include "output/raw.h"
#include "profile/profile.h"
#include "recorder/recorder.h"
#include "util/clock.h"

#define MAX_CALLS	4096

struct fake {
	const char *calls[MAX_CALLS];	/* the engine's calls, in order */
	size_t ncalls;
	bool opened, started, stopped, closed;
	uint64_t written;	/* records the "kernel" wrote: its counter */
	uint64_t pending;	/* written, not handed on yet */
	uint64_t delivered;	/* handed to the engine */
	unsigned polls;
	unsigned stop_after;	/* polls; then *stop is set (0: never) */
	volatile sig_atomic_t *stop;
	struct capture_opts co;	/* as open got it */
	pid_t co_pid0;
	/* -- COMMAND: at start, the child still the test's fork */
	bool child_held_at_start;
};

static struct fake F;

static void note(const char *call)
{
	if (F.ncalls < MAX_CALLS)
		F.calls[F.ncalls++] = call;
}

/* the index of the last call named so, -1 if none */
static long last_call(const char *call)
{
	for (size_t i = F.ncalls; i-- > 0;)
		if (!strcmp(F.calls[i], call))
			return (long)i;
	return -1;
}

static long first_call(const char *call)
{
	for (size_t i = 0; i < F.ncalls; i++)
		if (!strcmp(F.calls[i], call))
			return (long)i;
	return -1;
}

/* sampling on: the kernel writes n records while the engine does this */
static void kernel_writes(unsigned n)
{
	if (F.started && !F.stopped) {
		F.written += n;
		F.pending += n;
	}
}

/* a cpu sample of this process: one kernel and one user pc, no window */
static int deliver(capture_sample_fn fn, void *ctx)
{
	uint64_t rec[(sizeof(struct asgst_sample_hdr) + 16) / 8 + 1];
	struct asgst_sample_hdr *h = (struct asgst_sample_hdr *)rec;
	uint64_t *pcs = (uint64_t *)((char *)rec + sizeof(*h));
	int n = 0;

	for (; F.pending; F.pending--, F.delivered++, n++) {
		memset(rec, 0, sizeof(rec));
		h->magic = ASGST_SAMPLE_MAGIC;
		h->version = ASGST_SAMPLE_VERSION;
		h->hdr_size = sizeof(*h);
		h->event = ASGST_EV_CPU;
		h->pid = h->tid = h->ns_pid = h->ns_tid = (uint32_t)getpid();
		h->ktime_ns = clock__mono_ns();
		h->kstack_n = 1;
		h->ustack_n = 1;
		h->window_off = sizeof(*h) + 16;
		memcpy(h->comm, "rectest", 8);
		pcs[0] = 0xffffffff81000010ull;
		/* a few distinct stacks */
		pcs[1] = 0x401000 + 0x10 * (F.delivered % 3);
		fn(rec, sizeof(*h) + 16, ctx);
	}
	return n;
}

static bool same_exe(pid_t pid)
{
	char a[64], pa[4096], pb[4096];
	ssize_t na, nb;

	snprintf(a, sizeof(a), "/proc/%d/exe", (int)pid);
	na = readlink(a, pa, sizeof(pa) - 1);
	nb = readlink("/proc/self/exe", pb, sizeof(pb) - 1);
	return na > 0 && na == nb && !memcmp(pa, pb, (size_t)na);
}

static int fake_open(void **cap, const struct capture_opts *o, char *err,
		     size_t errlen)
{
	(void)err;
	(void)errlen;
	note("open");
	F.opened = true;
	F.co = *o;
	F.co_pid0 = o->npids ? o->pids[0] : 0;
	*cap = &F;
	return 0;
}

static int fake_start(void *cap, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	assert_ptr_equal(cap, &F);
	note("start");
	F.started = true;
	if (F.co.follow_children && F.co_pid0 > 0)
		F.child_held_at_start = same_exe(F.co_pid0);
	return 0;
}

static void fake_stop(void *cap)
{
	(void)cap;
	note("stop");
	F.stopped = true;
}

static int fake_poll(void *cap, int timeout_ms, capture_sample_fn fn,
		     void *ctx)
{
	int n;

	(void)cap;
	note("poll");
	kernel_writes(2);
	usleep((useconds_t)timeout_ms * 100);	/* a tenth of the wait */
	n = deliver(fn, ctx);
	if (F.stop_after && ++F.polls >= F.stop_after && F.stop)
		*F.stop = 1;
	else if (!F.stop_after)
		F.polls++;
	return n;
}

static int fake_drain(void *cap, capture_sample_fn fn, void *ctx)
{
	(void)cap;
	note("drain");
	kernel_writes(3);
	return deliver(fn, ctx);
}

static int fake_stats(void *cap, uint64_t out[ASGST_STAT_MAX])
{
	(void)cap;
	note("stats");
	kernel_writes(3);
	memset(out, 0, sizeof(uint64_t) * ASGST_STAT_MAX);
	out[ASGST_STAT_SAMPLES] = F.written;
	/* the JVM events' counters: figures of their own */
	out[ASGST_STAT_ALLOC] = 2 * F.written;
	out[ASGST_STAT_LOCK] = 3 * F.written;
	out[ASGST_STAT_JVM_EV_LOST] = 5;
	out[ASGST_STAT_JVM_EV_THROTTLED] = 7;
	return 0;
}

static void fake_close(void *cap)
{
	(void)cap;
	note("close");
	F.closed = true;
}

static struct capture *fake_capture(void *cap)
{
	(void)cap;
	return NULL;	/* every record copied out of the "ring" */
}

static int fake_sb_open(void **sb, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	*sb = &F;
	return 0;
}

static int fake_sb_read(void *sb, sideband_fn fn, void *ctx)
{
	(void)sb;
	(void)fn;
	(void)ctx;
	note("pump");
	return 0;
}

static void fake_sb_stats(void *sb, struct sideband_stats *st)
{
	(void)sb;
	memset(st, 0, sizeof(*st));
}

static void fake_sb_close(void *sb)
{
	(void)sb;
}

static const struct recorder_ops fake_ops = {
	.open = fake_open,
	.start = fake_start,
	.stop = fake_stop,
	.poll = fake_poll,
	.drain = fake_drain,
	.stats = fake_stats,
	.close = fake_close,
	.capture = fake_capture,
	.sideband_open = fake_sb_open,
	.sideband_read = fake_sb_read,
	.sideband_stats = fake_sb_stats,
	.sideband_close = fake_sb_close,
};

static char dir[64];
static pid_t self_pid[1];
static volatile sig_atomic_t stop_flag;

static int setup(void **state)
{
	(void)state;
	memset(&F, 0, sizeof(F));
	stop_flag = 0;
	F.stop = &stop_flag;
	snprintf(dir, sizeof(dir), "/tmp/test_recorder.XXXXXX");
	assert_non_null(mkdtemp(dir));
	self_pid[0] = getpid();
	return 0;
}

static int teardown(void **state)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[512];

	(void)state;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(dir);
	return 0;
}

/* -p this process, quiet, no agent, the fake kernel */
static void base_opts(struct recorder_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->filter_mode = ASGST_FILTER_PIDS;
	o->pids = self_pid;
	o->npids = 1;
	o->freq_hz = 99;
	o->no_attach = true;
	o->quiet = true;
	o->ops = &fake_ops;
	o->stop = &stop_flag;
}

static const char *in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* a raw file's sample chunks and its meta's samples */
static void read_raw(const char *path, uint64_t *samples, uint64_t *meta)
{
	struct raw_reader *r = NULL;
	struct raw_meta m;
	const void *pay;
	uint64_t len;
	uint32_t type;
	char err[256];
	bool have_meta = false;

	*samples = *meta = 0;
	assert_int_equal(raw_reader__open(&r, path, err, sizeof(err)), 0);
	while (raw_reader__next(r, &type, &pay, &len, err, sizeof(err)) == 1) {
		if (type == RAW_SAMPLE)
			(*samples)++;
		if (type == RAW_META) {
			assert_int_equal(raw__parse_meta(pay, len, &m, err,
							 sizeof(err)), 0);
			*meta = m.samples;
			have_meta = true;
		}
	}
	raw_reader__close(r);
	assert_true(have_meta);
}

static size_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (size_t)st.st_size;
}

/* a whole recording: open, run for its duration, stop, finish */
static void test_lifecycle_end_order(void **state)
{
	struct recorder_opts o;
	struct recorder *r = NULL;
	struct recorder_stats rs;
	char raw[256], col[256];
	uint64_t samples, meta;

	(void)state;
	base_opts(&o);
	o.duration_s = 0.3;
	o.outputs[0] = in_dir(raw, sizeof(raw), "x.asgst");
	o.formats[0] = OUT_RAW;
	o.outputs[1] = in_dir(col, sizeof(col), "x.collapsed");
	o.formats[1] = OUT_COLLAPSED;
	o.nout = 2;
	assert_int_equal(recorder__open(&r, &o), 0);
	/* loaded, then started; -p's pids given to the sampler */
	assert_true(first_call("open") >= 0);
	assert_true(first_call("open") < first_call("start"));
	assert_int_equal(F.co.filter_mode, ASGST_FILTER_PIDS);
	assert_int_equal(F.co.npids, 1);
	assert_int_equal(F.co_pid0, getpid());
	assert_int_equal(F.co.events, ASGST_EVMASK_CPU);
	assert_true(F.co.defer_start);

	assert_int_equal(recorder__run(r), RECORDER_DURATION);
	assert_true(F.polls > 0);
	assert_false(F.stopped);
	/* nothing is in place before the end */
	assert_false(exists(raw));
	assert_false(exists(col));

	recorder__stop(r);
	assert_true(F.stopped);
	assert_int_equal(recorder__finish(r), 0);
	/* stop -> pump -> drain -> counters, each after the one before */
	assert_true(last_call("stop") < last_call("pump"));
	assert_true(last_call("pump") < last_call("drain"));
	assert_true(last_call("drain") < last_call("stats"));
	assert_int_equal(first_call("stop"), last_call("stop"));
	assert_true(last_call("drain") > last_call("poll"));

	/* written after the counters: the file counts what it holds, and
	 * holds every record the kernel wrote */
	read_raw(raw, &samples, &meta);
	assert_true(F.written > 0);
	assert_int_equal(F.delivered, F.written);
	assert_int_equal(samples, F.written);
	assert_int_equal(meta, F.written);
	recorder__stats(r, &rs);
	assert_int_equal(rs.counters[ASGST_STAT_SAMPLES], F.written);
	assert_int_equal(rs.pl.decoded, F.written);
	assert_int_equal(rs.stacks, 3);
	assert_int_equal(profile__meta(recorder__profile(r))->samples,
			 F.written);
	assert_true(file_size(col) > 0);
	assert_false(F.closed);
	recorder__close(r);
	assert_true(F.closed);
}

/* -e cpu,alloc,lock: the JVM events' counters and the allocation
 * interval in the profile's meta, and in a raw file's */
static void test_jvm_event_meta(void **state)
{
	struct recorder_opts o;
	struct recorder *r = NULL;
	const struct profile_meta *m;
	struct raw_reader *rd = NULL;
	struct raw_meta rm = { 0 };
	const void *pay;
	uint64_t len;
	uint32_t type;
	char raw[256], err[256], exe[4096], agent[4200];
	ssize_t n;

	(void)state;
	/* the JVM events need the agent library: the build's, beside the
	 * tests' folder */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(agent, sizeof(agent), "%s/../libasgst-agent.so", exe);
	assert_int_equal(access(agent, R_OK), 0);
	setenv("ASGST_AGENT", agent, 1);
	base_opts(&o);
	o.duration_s = 0.2;
	o.events = ASGST_EVMASK_CPU | ASGST_EVMASK_ALLOC | ASGST_EVMASK_LOCK;
	o.alloc_interval = 262144;
	o.outputs[0] = in_dir(raw, sizeof(raw), "j.asgst");
	o.formats[0] = OUT_RAW;
	o.nout = 1;
	assert_int_equal(recorder__open(&r, &o), 0);
	assert_int_equal(recorder__run(r), RECORDER_DURATION);
	recorder__stop(r);
	assert_int_equal(recorder__finish(r), 0);
	m = profile__meta(recorder__profile(r));
	assert_true(F.written > 0);
	assert_int_equal(m->events, o.events);
	assert_int_equal(m->alloc_events, 2 * F.written);
	assert_int_equal(m->lock_events, 3 * F.written);
	assert_int_equal(m->jvm_ev_lost, 5);
	assert_int_equal(m->jvm_ev_throttled, 7);
	assert_int_equal(m->alloc_interval, 262144);
	recorder__close(r);

	assert_int_equal(raw_reader__open(&rd, raw, err, sizeof(err)), 0);
	while (raw_reader__next(rd, &type, &pay, &len, err, sizeof(err)) == 1)
		if (type == RAW_META)
			assert_int_equal(raw__parse_meta(pay, len, &rm, err,
							 sizeof(err)), 0);
	raw_reader__close(rd);
	assert_int_equal(rm.alloc_events, 2 * F.written);
	assert_int_equal(rm.lock_events, 3 * F.written);
	assert_int_equal(rm.jvm_ev_lost, 5);
	assert_int_equal(rm.jvm_ev_throttled, 7);
	assert_int_equal(rm.alloc_interval, 262144);
}

/* finish without a stop before it stops the sampler itself, first */
static void test_finish_stops_first(void **state)
{
	struct recorder_opts o;
	struct recorder *r = NULL;
	char raw[256];
	uint64_t samples, meta;

	(void)state;
	base_opts(&o);
	o.duration_s = 0.2;
	o.outputs[0] = in_dir(raw, sizeof(raw), "f.asgst");
	o.formats[0] = OUT_RAW;
	o.nout = 1;
	assert_int_equal(recorder__open(&r, &o), 0);
	assert_int_equal(recorder__run(r), RECORDER_DURATION);
	assert_int_equal(last_call("stop"), -1);
	assert_int_equal(recorder__finish(r), 0);
	assert_true(last_call("stop") >= 0);
	assert_true(last_call("stop") < last_call("pump"));
	assert_true(last_call("pump") < last_call("drain"));
	assert_true(last_call("drain") < last_call("stats"));
	/* a busy kernel wrote up to the stop: all of it decoded, counted */
	read_raw(raw, &samples, &meta);
	assert_int_equal(F.delivered, F.written);
	assert_int_equal(samples, F.written);
	assert_int_equal(meta, F.written);
	recorder__close(r);
}

/* *stop ends the run at once, whatever else there is to wait for */
static void test_stop_flag(void **state)
{
	struct recorder_opts o;
	struct recorder *r = NULL;

	(void)state;
	base_opts(&o);
	o.duration_s = 60;
	F.stop_after = 3;
	o.outputs[0] = NULL;	/* stdout, never written here */
	o.formats[0] = OUT_COLLAPSED;
	o.nout = 1;
	assert_int_equal(recorder__open(&r, &o), 0);
	assert_int_equal(recorder__run(r), RECORDER_STOPPED);
	assert_int_equal(F.polls, 3);
	recorder__stop(r);
	recorder__close(r);
	assert_true(F.closed);
}

/* an output that cannot be opened fails before the sampler is loaded */
static void test_bad_output_first(void **state)
{
	struct recorder_opts o;
	struct recorder *r = NULL;

	(void)state;
	base_opts(&o);
	o.outputs[0] = "/nonexistent-dir/x.json";
	o.formats[0] = OUT_JSON;
	o.nout = 1;
	assert_int_equal(recorder__open(&r, &o), 1);
	assert_false(F.opened);
	recorder__close(r);
	assert_false(F.closed);
}

/* -- COMMAND: held until sampling is on, then exec'd; its exit ends the
 * recording */
static void test_command(void **state)
{
	char *cmd[] = { "sh", "-c", "exit 0", NULL };
	struct recorder_opts o;
	struct recorder *r = NULL;
	uint64_t t0;

	(void)state;
	base_opts(&o);
	o.pids = NULL;
	o.npids = 0;
	o.cmd = cmd;
	o.duration_s = 10;
	assert_int_equal(recorder__open(&r, &o), 0);
	assert_true(F.co.follow_children);
	assert_int_equal(F.co.npids, 1);
	assert_true(F.co_pid0 > 0);
	/* at start it was still our fork, waiting */
	assert_true(F.child_held_at_start);
	t0 = clock__mono_ns();
	assert_int_equal(recorder__run(r), RECORDER_TARGETS_GONE);
	assert_true(clock__mono_ns() - t0 < 5000000000ull);
	recorder__stop(r);
	assert_int_equal(recorder__finish(r), 0);
	recorder__close(r);
	/* reaped by the engine */
	assert_int_equal(waitpid(F.co_pid0, NULL, WNOHANG), -1);
}

/* a command that cannot run: said, exit 1, after sampling started */
static void test_command_not_found(void **state)
{
	char *cmd[] = { "/nonexistent/asgst-test-cmd", NULL };
	struct recorder_opts o;
	struct recorder *r = NULL;

	(void)state;
	base_opts(&o);
	o.pids = NULL;
	o.npids = 0;
	o.cmd = cmd;
	assert_int_equal(recorder__open(&r, &o), 1);
	assert_true(F.started);
	recorder__close(r);
	assert_int_equal(waitpid(F.co_pid0, NULL, WNOHANG), -1);
}

/* -p: the recording ends once every target process has exited */
static void test_pids_gone(void **state)
{
	struct recorder_opts o;
	struct recorder *r = NULL;
	pid_t kid[1];
	int status;
	uint64_t t0;

	(void)state;
	kid[0] = fork();
	assert_true(kid[0] >= 0);
	if (!kid[0]) {
		usleep(300000);
		_exit(0);
	}
	base_opts(&o);
	o.pids = kid;
	o.duration_s = 10;
	assert_int_equal(recorder__open(&r, &o), 0);
	t0 = clock__mono_ns();
	assert_int_equal(recorder__run(r), RECORDER_TARGETS_GONE);
	/* the child's 0.3 s and a look every 0.25 s */
	assert_true(clock__mono_ns() - t0 < 3000000000ull);
	assert_int_equal(waitpid(kid[0], &status, 0), kid[0]);
	recorder__stop(r);
	recorder__close(r);
}

/* the files of one output in dir: names beginning with prefix */
static size_t files_of(const char *prefix, const char *suffix,
		       char names[][512], size_t max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0, pl = strlen(prefix), sl = strlen(suffix);

	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (strncmp(e->d_name, prefix, pl) || l < sl ||
		    strcmp(e->d_name + l - sl, suffix))
			continue;
		if (n < max)
			snprintf(names[n], 512, "%s/%s", dir, e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/* --switch-output: a file per period and output; every record in exactly
 * one period's file, every period's count its own */
static void test_periods(void **state)
{
	struct recorder_opts o;
	struct recorder *r = NULL;
	struct recorder_stats rs;
	char raw[256], col[256], names[16][512];
	uint64_t samples, meta, sum_samples = 0, sum_meta = 0;
	size_t n;

	(void)state;
	base_opts(&o);
	o.duration_s = 1.0;
	o.switch_ns = 300000000ull;
	o.outputs[0] = in_dir(raw, sizeof(raw), "p.asgst");
	o.formats[0] = OUT_RAW;
	o.outputs[1] = in_dir(col, sizeof(col), "p.collapsed");
	o.formats[1] = OUT_COLLAPSED;
	o.nout = 2;
	assert_int_equal(recorder__open(&r, &o), 0);
	/* the first period's files are named and open */
	assert_int_equal(recorder__run(r), RECORDER_DURATION);
	recorder__stop(r);
	assert_int_equal(recorder__finish(r), 0);
	recorder__stats(r, &rs);
	assert_false(rs.period_failed);
	assert_true(rs.periods >= 2);
	recorder__close(r);

	/* neither path itself: each period's has its time in it */
	assert_false(exists(raw));
	assert_false(exists(col));
	n = files_of("p.", ".asgst", names, 16);
	assert_int_equal(n, rs.periods + 1);
	assert_int_equal(files_of("p.", ".collapsed", names + 0, 0),
			 rs.periods + 1);
	n = files_of("p.", ".asgst", names, 16);
	for (size_t i = 0; i < n; i++) {
		read_raw(names[i], &samples, &meta);
		sum_samples += samples;
		sum_meta += meta;
	}
	assert_true(F.written > 0);
	assert_int_equal(sum_samples, F.written);
	assert_int_equal(sum_meta, F.written);
}

/* --switch-max-files: only the newest files of each output stay */
static void test_periods_max(void **state)
{
	struct recorder_opts o;
	struct recorder *r = NULL;
	struct recorder_stats rs;
	char col[256], names[16][512];

	(void)state;
	base_opts(&o);
	o.duration_s = 1.0;
	o.switch_ns = 250000000ull;
	o.switch_max = 2;
	o.outputs[0] = in_dir(col, sizeof(col), "m.collapsed");
	o.formats[0] = OUT_COLLAPSED;
	o.nout = 1;
	assert_int_equal(recorder__open(&r, &o), 0);
	assert_int_equal(recorder__run(r), RECORDER_DURATION);
	recorder__stop(r);
	assert_int_equal(recorder__finish(r), 0);
	recorder__stats(r, &rs);
	recorder__close(r);
	assert_true(rs.periods + 1 > 2);
	assert_int_equal(files_of("m.", ".collapsed", names, 16), 2);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;

	assert_non_null(f);
	*len = file_size(path);
	buf = malloc(*len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, *len, f), *len);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* a raw recording replayed: the same profile as the recording's own */
static void test_replay(void **state)
{
	struct recorder_opts o;
	struct recorder *r = NULL;
	char raw[256], col[256], col2[256], *a, *b;
	size_t alen, blen, nstacks;
	uint64_t written;

	(void)state;
	base_opts(&o);
	o.duration_s = 0.3;
	o.outputs[0] = in_dir(raw, sizeof(raw), "r.asgst");
	o.formats[0] = OUT_RAW;
	o.outputs[1] = in_dir(col, sizeof(col), "r.collapsed");
	o.formats[1] = OUT_COLLAPSED;
	o.nout = 2;
	assert_int_equal(recorder__open(&r, &o), 0);
	assert_int_equal(recorder__run(r), RECORDER_DURATION);
	recorder__stop(r);
	assert_int_equal(recorder__finish(r), 0);
	nstacks = profile__nstacks(recorder__profile(r));
	written = F.written;
	recorder__close(r);

	memset(&o, 0, sizeof(o));
	o.replay = raw;
	o.quiet = true;
	o.outputs[0] = in_dir(col2, sizeof(col2), "r2.collapsed");
	o.formats[0] = OUT_COLLAPSED;
	o.nout = 1;
	F.ncalls = 0;
	assert_int_equal(recorder__open_replay(&r, &o), 0);
	assert_int_equal(recorder__run(r), RECORDER_REPLAYED);
	/* the output is opened once the file decoded */
	assert_false(exists(col2));
	assert_int_equal(recorder__finish(r), 0);
	assert_int_equal(profile__meta(recorder__profile(r))->samples, written);
	assert_int_equal(profile__nstacks(recorder__profile(r)), nstacks);
	recorder__close(r);
	/* no kernel side in a replay */
	assert_int_equal(F.ncalls, 0);

	a = slurp(col, &alen);
	b = slurp(col2, &blen);
	assert_true(alen > 0);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	free(a);
	free(b);
}

/* a file that is no recording: said, and nothing written */
static void test_replay_bad_file(void **state)
{
	struct recorder_opts o;
	struct recorder *r = NULL;
	char bad[256], out[256];
	FILE *f;

	(void)state;
	f = fopen(in_dir(bad, sizeof(bad), "bad.asgst"), "w");
	assert_non_null(f);
	fputs("not a recording at all, not even its header", f);
	fclose(f);
	memset(&o, 0, sizeof(o));
	o.replay = bad;
	o.quiet = true;
	o.outputs[0] = in_dir(out, sizeof(out), "bad.collapsed");
	o.formats[0] = OUT_COLLAPSED;
	o.nout = 1;
	assert_int_equal(recorder__open_replay(&r, &o), 0);
	assert_int_equal(recorder__run(r), RECORDER_REPLAY_ERROR);
	recorder__close(r);
	assert_false(exists(out));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lifecycle_end_order,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_finish_stops_first,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_flag, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_output_first, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_command, setup, teardown),
		cmocka_unit_test_setup_teardown(test_command_not_found, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pids_gone, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_periods, setup, teardown),
		cmocka_unit_test_setup_teardown(test_periods_max, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_jvm_event_meta, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replay_bad_file, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
