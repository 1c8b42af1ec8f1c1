// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The real kernel sampler (needs root and BPF; a skip elsewhere, a failure
 * under CI=true): busy children, a capture filtered on one of them, the
 * records checked against what the child knows about its own stack.
 */
#include <errno.h>
#include <linux/types.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture/capture.h"
#include "capture/sample.h"

#define PAT_LEN		1024
#define USER_MAX	0x0000800000000000ull
#define NOASAN		__attribute__((noinline, no_sanitize_address))

static volatile unsigned long sink;
static char skip_reason[512];

static uint8_t pat_byte(size_t i)
{
	return (uint8_t)(i * 7 + 13) ^ 0x5a;
}

NOASAN static void tick(void)
{
	sink = sink * 3 + 1;
}

/*
 * The call makes the compiler set up the frame before the loop (a leaf
 * loop gets none, shrink-wrapped, which hides its caller from a
 * frame-pointer walk).
 */
NOASAN static void spin_leaf(void)
{
	for (long i = 0; i < 100000000; i++)
		tick();
}

NOASAN static void spin_forever(void)
{
	for (;;)
		spin_leaf();
}

/* a known pattern in a local array, its address sent to the parent */
NOASAN static void pattern_holder(int wfd)
{
	volatile uint8_t pat[PAT_LEN];
	uintptr_t addr = (uintptr_t)pat;

	for (size_t i = 0; i < PAT_LEN; i++)
		pat[i] = pat_byte(i);
	if (write(wfd, &addr, sizeof(addr)) != sizeof(addr))
		_exit(1);
	for (;;) {
		spin_leaf();
		sink += pat[0];
	}
}

static pid_t start_child(bool with_pattern, uintptr_t *pat_addr)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		alarm(20);	/* never outlive the test */
		if (with_pattern)
			pattern_holder(p[1]);
		close(p[1]);
		spin_forever();
	}
	close(p[1]);
	if (with_pattern)
		assert_int_equal(read(p[0], pat_addr, sizeof(*pat_addr)),
				 sizeof(*pat_addr));
	close(p[0]);
	return pid;
}

static void stop_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct seen {
	pid_t target, other;
	uintptr_t pat_addr;
	bool want_window;
	int total, bad_parse, wrong_pid, other_pid;
	int user_mode, ip_in_leaf, ret_in_holder, nonempty_ustack;
	int bad_regs, windows, window_flag_wrong, pat_covered, pat_equal;
	int win_too_long;
};

static int on_sample(const void *data, size_t len, void *ctx)
{
	struct seen *s = ctx;
	const struct asgst_sample_hdr *h;
	const char *why;
	struct sample smp;

	s->total++;
	if (sample__parse(data, len, &smp, &why)) {
		s->bad_parse++;
		return 0;
	}
	h = smp.hdr;
	if (h->pid == (uint32_t)s->other)
		s->other_pid++;
	if (h->pid != (uint32_t)s->target || h->tid != (uint32_t)s->target ||
	    h->ns_pid != (uint32_t)s->target || h->ns_tid != h->ns_pid) {
		s->wrong_pid++;
		return 0;
	}
	if (!h->sp || h->sp >= USER_MAX || h->sp & 7 || !h->ip ||
	    h->ip >= USER_MAX || h->sp >= s->pat_addr ||
	    (h->flags & ASGST_SF_NO_USER))
		s->bad_regs++;
	if (h->ustack_n) {
		s->nonempty_ustack++;
		for (uint32_t i = 1; i < h->ustack_n; i++)
			if (smp.ustack[i] >= (uintptr_t)pattern_holder &&
			    smp.ustack[i] < (uintptr_t)pattern_holder + 512) {
				s->ret_in_holder++;
				break;
			}
	}
	if (!(h->flags & ASGST_SF_KERNEL_MODE)) {
		s->user_mode++;
		if (((h->ip >= (uintptr_t)spin_leaf &&
		      h->ip < (uintptr_t)spin_leaf + 256) ||
		     (h->ip >= (uintptr_t)tick &&
		      h->ip < (uintptr_t)tick + 64)) &&
		    h->ustack_n && smp.ustack[0] == h->ip)
			s->ip_in_leaf++;
	}
	if (!!(h->flags & ASGST_SF_WINDOW_WANTED) != s->want_window ||
	    (!s->want_window && h->window_len))
		s->window_flag_wrong++;
	if (h->window_len > ASGST_DEFAULT_WINDOW)
		s->win_too_long++;
	if (h->window_len) {
		uint64_t off = s->pat_addr - h->sp;

		s->windows++;
		if (off + PAT_LEN <= h->window_len) {
			bool eq = true;

			s->pat_covered++;
			for (size_t i = 0; i < PAT_LEN; i++)
				eq &= smp.window[off + i] == pat_byte(i);
			s->pat_equal += eq;
		}
	}
	return 0;
}

static void poll_for(struct capture *c, double secs, struct seen *s)
{
	double end = now_s() + secs;

	while (now_s() < end)
		assert_true(capture__poll(c, 100, on_sample, s) >= 0);
	assert_true(capture__drain(c, on_sample, s) >= 0);
}

static void test_filtered_capture_with_window(void **state)
{
	struct capture_opts o = {
		.filter_mode = ASGST_FILTER_PIDS,
		.freq_hz = 499,
		.window_size = ASGST_DEFAULT_WINDOW,
	};
	struct seen s1 = {}, s2 = {};
	uint64_t st[ASGST_STAT_MAX], rt = 0, rc = 0;
	struct capture *c = NULL;
	char err[256] = "";
	uintptr_t pat = 0;
	pid_t target, other;
	int ret;

	(void)state;
	target = start_child(true, &pat);
	other = start_child(false, NULL);
	ret = capture__open(&c, &o, err, sizeof(err));
	if (ret) {
		stop_child(target);
		stop_child(other);
		fail_msg("capture__open: %s", err);
	}
	assert_true(capture__ncpus(c) >= 1);
	/* no initial pids: the target is added afterwards */
	assert_int_equal(capture__add_target(c, target), 0);

	s1.target = s2.target = target;
	s1.other = s2.other = other;
	s1.pat_addr = s2.pat_addr = pat;
	poll_for(c, 0.6, &s1);

	assert_int_equal(capture__set_window(c, target, true), 0);
	/* what was submitted before the switch may not have a window */
	assert_true(capture__drain(c, NULL, NULL) >= 0);
	s2.want_window = true;
	poll_for(c, 0.6, &s2);

	assert_int_equal(capture__stats(c, st), 0);
	assert_int_equal(capture__prog_stats(c, &rt, &rc), 0);
	capture__close(c);
	stop_child(target);
	stop_child(other);

	print_message("records %d + %d, samples %llu lost %llu filtered %llu idle %llu, %.0f ns/run\n",
		      s1.total, s2.total, (unsigned long long)st[ASGST_STAT_SAMPLES],
		      (unsigned long long)st[ASGST_STAT_LOST],
		      (unsigned long long)st[ASGST_STAT_FILTERED],
		      (unsigned long long)st[ASGST_STAT_IDLE],
		      rc ? (double)rt / rc : 0.0);
	print_message("window: %d of %d records, pattern covered %d equal %d\n",
		      s2.windows, s2.total, s2.pat_covered, s2.pat_equal);

	for (int i = 0; i < 2; i++) {
		struct seen *s = i ? &s2 : &s1;

		/* a busy child at 499 Hz: tens of samples in 0.6 s */
		assert_true(s->total >= 20);
		assert_int_equal(s->bad_parse, 0);
		assert_int_equal(s->wrong_pid, 0);
		assert_int_equal(s->other_pid, 0);
		assert_int_equal(s->bad_regs, 0);
		assert_int_equal(s->window_flag_wrong, 0);
		assert_int_equal(s->win_too_long, 0);
		assert_true(s->nonempty_ustack >= s->total * 9 / 10);
		assert_true(s->ret_in_holder >= s->total * 9 / 10);
		assert_true(s->ip_in_leaf >= s->user_mode * 9 / 10);
		assert_true(s->user_mode >= 1);
	}
	assert_int_equal(s1.windows, 0);
	assert_true(s2.windows >= s2.total * 9 / 10);
	assert_true(s2.pat_covered >= 1);
	assert_int_equal(s2.pat_equal, s2.pat_covered);
	/* the other busy child was seen and dropped in the kernel */
	assert_true(st[ASGST_STAT_FILTERED] > 0);
	assert_true(st[ASGST_STAT_SAMPLES] >= (uint64_t)(s1.total + s2.total));
	assert_true(rc > 0 && rt > 0);
}

struct fork_seen {
	pid_t parent;
	pid_t grandchild;
	int from_grandchild, from_parent, other;
};

static int on_fork_sample(const void *data, size_t len, void *ctx)
{
	struct fork_seen *f = ctx;
	const char *why;
	struct sample s;

	if (sample__parse(data, len, &s, &why))
		return 0;
	if (s.hdr->pid == (uint32_t)f->grandchild)
		f->from_grandchild++;
	else if (s.hdr->pid == (uint32_t)f->parent)
		f->from_parent++;
	else
		f->other++;
	return 0;
}

/* record -- CMD: children forked by a target after the start are sampled */
static void test_follow_children(void **state)
{
	struct capture_opts o = {
		.filter_mode = ASGST_FILTER_PIDS,
		.follow_children = true,
		.freq_hz = 499,
	};
	struct fork_seen f = {};
	struct capture *c = NULL;
	int go[2], back[2];
	char err[256] = "";
	double end;
	pid_t p;

	(void)state;
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(back), 0);
	p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		char b;
		pid_t g;

		alarm(20);
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		g = fork();
		if (g == 0) {
			alarm(20);	/* alarms are not inherited */
			spin_forever();
		}
		if (write(back[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		waitpid(g, NULL, 0);
		_exit(0);
	}
	f.parent = p;
	o.pids = &p;
	o.npids = 1;
	if (capture__open(&c, &o, err, sizeof(err))) {
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
		fail_msg("capture__open: %s", err);
	}
	assert_int_equal(write(go[1], "x", 1), 1);
	assert_int_equal(read(back[0], &f.grandchild, sizeof(f.grandchild)),
			 sizeof(f.grandchild));
	end = now_s() + 0.5;
	while (now_s() < end)
		assert_true(capture__poll(c, 100, on_fork_sample, &f) >= 0);
	capture__drain(c, on_fork_sample, &f);
	capture__close(c);
	kill(f.grandchild, SIGKILL);
	waitpid(p, NULL, 0);
	close(go[0]);
	close(go[1]);
	close(back[0]);
	close(back[1]);

	print_message("grandchild %d records, parent %d, other %d\n",
		      f.from_grandchild, f.from_parent, f.other);
	assert_true(f.from_grandchild >= 20);
	assert_int_equal(f.other, 0);
}

static void test_bad_options(void **state)
{
	struct capture_opts o = { .freq_hz = 0 };
	struct capture *c = (void *)1;
	char err[256] = "";

	(void)state;
	assert_int_equal(capture__open(&c, &o, err, sizeof(err)), -EINVAL);
	assert_null(c);
	assert_non_null(strstr(err, "frequency"));
	o.freq_hz = 99;
	o.window_size = ASGST_MAX_WINDOW + 1;
	assert_int_equal(capture__open(&c, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "window"));
	o.window_size = 0;
	o.filter_mode = 7;
	assert_int_equal(capture__open(&c, &o, err, sizeof(err)), -EINVAL);
}

/* an unprivileged user gets the one-line "needs root" reason */
static void test_not_root(void **state)
{
	int p[2], st = 0;
	char msg[256] = "";
	ssize_t n;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct capture_opts o = { .freq_hz = 99 };
		struct capture *c;
		char err[256] = "";
		int ret;

		close(p[0]);
		if (setgid(65534) || setuid(65534))
			_exit(2);
		ret = capture__open(&c, &o, err, sizeof(err));
		if (write(p[1], err, strlen(err)) < 0)
			_exit(3);
		_exit(ret == -EPERM ? 0 : 1);
	}
	close(p[1]);
	n = read(p[0], msg, sizeof(msg) - 1);
	close(p[0]);
	assert_true(n > 0);
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_non_null(strstr(msg, "needs root"));
	assert_null(strchr(msg, '\n'));
}

static void test_skipped(void **state)
{
	(void)state;
	print_message("SKIP: %s\n", skip_reason);
	skip();
}

static bool can_capture(void)
{
	struct capture_opts o = { .freq_hz = 1 };
	struct capture *c;
	char err[256] = "";

	if (geteuid() != 0) {
		snprintf(skip_reason, sizeof(skip_reason), "needs root");
		return false;
	}
	if (capture__open(&c, &o, err, sizeof(err))) {
		snprintf(skip_reason, sizeof(skip_reason), "no BPF capture: %s",
			 err);
		return false;
	}
	capture__close(c);
	return true;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_not_root),
		cmocka_unit_test(test_filtered_capture_with_window),
		cmocka_unit_test(test_follow_children),
	};
	const struct CMUnitTest skipped[] = {
		cmocka_unit_test(test_skipped),
	};
	const char *ci = getenv("CI");

	if (!can_capture()) {
		if (ci && !strcmp(ci, "true")) {
			fprintf(stderr, "FAIL: %s (CI=true: root and BPF are required)\n",
				skip_reason);
			return 1;
		}
		cmocka_run_group_tests(skipped, NULL, NULL);
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
