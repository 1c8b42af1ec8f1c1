// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Off-CPU sampling: a stack taken 1 in N switch-outs stands for N switches
 * and N times its time (offcpu__weigh), through the pipeline with its END
 * and without one (weighed up to the recording's end); each thread's
 * stacks scaled to the exact sums its ENDs carry (offcpu__calibrate, at
 * pipeline__annotate), shares kept, other threads left; and the estimator
 * itself: switch-outs of known stacks and durations, a stack taken with
 * probability 1/N by a seeded generator as the sampler does, weighed by
 * offcpu__weigh, give every stack of >= 1 % of the time its share within
 * 5 % (relative) of what every switch gives, and each thread's total
 * within 1 %, at N = 10 and at N changing every few thousand switches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <linux/types.h>
#include "capture/sample.h"
#include "profile/offcpu.h"
#include "profile/pipeline.h"
#include "profile/profile.h"

static void hdr_init(struct asgst_sample_hdr *h, uint16_t version,
		     uint32_t every, uint64_t weight_ns)
{
	memset(h, 0, sizeof(*h));
	h->magic = ASGST_SAMPLE_MAGIC;
	h->version = version;
	h->hdr_size = sizeof(*h);
	h->event = ASGST_EV_OFFCPU;
	h->flags = ASGST_SF_PREEMPTED | every << ASGST_SF_EVERY_SHIFT;
	h->weight_ns = weight_ns;
}

static void test_weigh(void **state)
{
	struct asgst_sample_hdr h;
	uint64_t n, ns;

	(void)state;
	/* version 4, N = 7: 7 switches, 7 times the time */
	hdr_init(&h, ASGST_SAMPLE_VERSION, 7, 1000);
	offcpu__weigh(&h, &n, &ns);
	assert_int_equal(n, 7);
	assert_int_equal(ns, 7000);
	/* N = 0 (every switch, as --offcpu-sample 1 writes 1) */
	hdr_init(&h, ASGST_SAMPLE_VERSION, 0, 1000);
	offcpu__weigh(&h, &n, &ns);
	assert_int_equal(n, 1);
	assert_int_equal(ns, 1000);
	hdr_init(&h, ASGST_SAMPLE_VERSION, ASGST_SF_EVERY_MAX, 1000);
	offcpu__weigh(&h, &n, &ns);
	assert_int_equal(n, ASGST_SF_EVERY_MAX);
	assert_int_equal(ns, 1000ull * ASGST_SF_EVERY_MAX);
	/* before version 4 the top bits of flags meant nothing: 1 */
	hdr_init(&h, 3, 7, 1000);
	offcpu__weigh(&h, &n, &ns);
	assert_int_equal(n, 1);
	assert_int_equal(ns, 1000);
	/* saturates, never wraps */
	hdr_init(&h, ASGST_SAMPLE_VERSION, 3, UINT64_MAX / 2);
	offcpu__weigh(&h, &n, &ns);
	assert_int_equal(n, 3);
	assert_true(ns == UINT64_MAX);
}

/* an off-CPU record of thread tid (one user pc) taken 1 in every, at t */
static void push_off(struct pipeline *pl, uint32_t tid, uint32_t every,
		     uint64_t t)
{
	uint64_t rec[(sizeof(struct asgst_sample_hdr) + 8) / 8 + 1];
	struct asgst_sample_hdr *h = (struct asgst_sample_hdr *)rec;
	uint64_t *pcs = (uint64_t *)((char *)rec + sizeof(*h));

	memset(rec, 0, sizeof(rec));
	hdr_init(h, ASGST_SAMPLE_VERSION, every, 0);
	h->flags = every << ASGST_SF_EVERY_SHIFT;
	h->pid = h->ns_pid = 4400;
	h->tid = h->ns_tid = tid;
	h->ktime_ns = t;
	h->ustack_n = 1;
	h->window_off = sizeof(*h) + 8;
	memcpy(h->comm, "offtest", 8);
	pcs[0] = 0x402000 + tid;
	assert_true(pipeline__push(pl, rec, sizeof(*h) + 8) >= 0);
}

static void push_end_exact(struct pipeline *pl, uint32_t tid, uint64_t t,
			   uint64_t weight_ns, uint64_t all_ns, uint64_t all_n)
{
	struct asgst_sample_hdr h;

	memset(&h, 0, sizeof(h));
	h.magic = ASGST_SAMPLE_MAGIC;
	h.version = ASGST_SAMPLE_VERSION;
	h.hdr_size = sizeof(h);
	h.event = ASGST_EV_OFFCPU_END;
	h.flags = ASGST_SF_NO_USER;
	h.window_off = sizeof(h);
	h.pid = 4400;
	h.tid = tid;
	h.ktime_ns = t;
	h.weight_ns = weight_ns;
	h.ev_weight = all_ns;
	h.ev_size = all_n;
	assert_true(pipeline__push(pl, &h, sizeof(h)) >= 0);
}

/* an END that says nothing of the other switch-outs (none in between) */
static void push_end(struct pipeline *pl, uint32_t tid, uint64_t t,
		     uint64_t weight_ns)
{
	push_end_exact(pl, tid, t, weight_ns, 0, 0);
}

static const struct profile_stack *stack_of(const struct profile *p,
					    pid_t tid)
{
	for (size_t i = 0; i < profile__nstacks(p); i++)
		if (profile__stack(p, i)->trace.tid == tid)
			return profile__stack(p, i);
	fail_msg("no stack of tid %d", (int)tid);
	return NULL;
}

/* an off-CPU record of tid with its own pc (two stacks of one thread) */
static void push_off_pc(struct pipeline *pl, uint32_t tid, uint64_t pc,
			uint32_t every, uint64_t t)
{
	uint64_t rec[(sizeof(struct asgst_sample_hdr) + 8) / 8 + 1];
	struct asgst_sample_hdr *h = (struct asgst_sample_hdr *)rec;
	uint64_t *pcs = (uint64_t *)((char *)rec + sizeof(*h));

	memset(rec, 0, sizeof(rec));
	hdr_init(h, ASGST_SAMPLE_VERSION, every, 0);
	h->flags = every << ASGST_SF_EVERY_SHIFT;
	h->pid = h->ns_pid = 4400;
	h->tid = h->ns_tid = tid;
	h->ktime_ns = t;
	h->ustack_n = 1;
	h->window_off = sizeof(*h) + 8;
	memcpy(h->comm, "offtest", 8);
	pcs[0] = pc;
	assert_true(pipeline__push(pl, rec, sizeof(*h) + 8) >= 0);
}

static const struct profile_stack *stack_pc(const struct profile *p,
					    pid_t tid, uint64_t pc)
{
	for (size_t i = 0; i < profile__nstacks(p); i++) {
		const struct profile_stack *ps = profile__stack(p, i);

		if (ps->trace.tid != tid)
			continue;
		for (uint32_t j = 0; j < ps->trace.nframes; j++)
			if (ps->trace.frames[j].pc == pc)
				return ps;
	}
	fail_msg("no stack of tid %d at %#llx", (int)tid,
		 (unsigned long long)pc);
	return NULL;
}

static void test_calibrate(void **state)
{
	struct pipeline_opts o = { .offline = true, .quiet = true };
	struct profile *p = profile__new();
	const struct profile_stack *a, *b;
	struct pipeline *pl;

	(void)state;
	assert_non_null(p);
	pl = pipeline__new(p, NULL, &o);
	assert_non_null(pl);
	/*
	 * tid 7, N = 10: stack A 100 ns and stack B 300 ns sampled (HT: 1000
	 * and 3000 ns, 10 switches each); every switch-out summed 6000 ns
	 * over 25 of them (2500 + 3500 ns, 12 + 13)
	 */
	push_off_pc(pl, 7, 0x403000, 10, 1000000);
	push_end_exact(pl, 7, 1000000, 100, 2500, 12);
	push_off_pc(pl, 7, 0x404000, 10, 2000000);
	push_end_exact(pl, 7, 2000000, 300, 3500, 13);
	/* tid 8 took every stack: its sums are its stacks' own */
	push_off_pc(pl, 8, 0x405000, 1, 1500000);
	push_end_exact(pl, 8, 1500000, 700, 700, 1);
	pipeline__finish(pl, 3000000);

	a = stack_pc(p, 7, 0x403000);
	b = stack_pc(p, 7, 0x404000);
	assert_int_equal(a->weight_ns, 1000);
	assert_int_equal(b->weight_ns, 3000);
	pipeline__annotate(pl, p);
	/* the thread's total and count exact, A:B still 1:3 */
	assert_int_equal(a->weight_ns, 1500);
	assert_int_equal(b->weight_ns, 4500);
	assert_int_equal(a->count + b->count, 25);
	assert_true(a->count >= 12 && b->count >= 12);
	a = stack_pc(p, 8, 0x405000);
	assert_int_equal(a->weight_ns, 700);
	assert_int_equal(a->count, 1);
	/* once: the sums start again */
	pipeline__annotate(pl, p);
	b = stack_pc(p, 7, 0x404000);
	assert_int_equal(b->weight_ns, 4500);
	pipeline__free(pl);
	profile__free(p);
}

static void test_pipeline_weights(void **state)
{
	struct pipeline_opts o = { .offline = true, .quiet = true };
	struct profile *p = profile__new();
	const struct profile_stack *ps;
	struct pipeline *pl;

	(void)state;
	assert_non_null(p);
	pl = pipeline__new(p, NULL, &o);
	assert_non_null(pl);
	/* tid 1: two stacks of N = 5 and 20, 1000 and 300 ns off */
	push_off(pl, 1, 5, 1000000);
	push_end(pl, 1, 1000000, 1000);
	push_off(pl, 1, 20, 2000000);
	push_end(pl, 1, 2000000, 300);
	/* tid 2: every switch (N = 1), 700 ns */
	push_off(pl, 2, 1, 1500000);
	push_end(pl, 2, 1500000, 700);
	/* tid 3: still off at the end (3,000,000): 1,000,000 ns, N = 4 */
	push_off(pl, 3, 4, 2000000);
	pipeline__finish(pl, 3000000);

	ps = stack_of(p, 1);
	assert_int_equal(ps->count, 25);
	assert_int_equal(ps->weight_ns, 5 * 1000 + 20 * 300);
	ps = stack_of(p, 2);
	assert_int_equal(ps->count, 1);
	assert_int_equal(ps->weight_ns, 700);
	ps = stack_of(p, 3);
	assert_int_equal(ps->count, 4);
	assert_int_equal(ps->weight_ns, 4 * 1000000);
	pipeline__free(pl);
	profile__free(p);
}

/* xorshift64*: the same switches and coin tosses every run */
static uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/*
 * A thread's kinds of switch-out: how often it leaves the CPU that way
 * and how long it stays off (uniform from 0.5 to 1.5 times the mean:
 * durations vary within a stack as they do for real).
 */
struct kind {
	uint32_t tid;
	uint32_t per_mille;	/* of the switch-outs */
	uint64_t mean_ns;
};

static const struct kind kinds[] = {
	{ 1, 500, 2000 },	/* ping's read: most switches */
	{ 1, 300, 1000 },	/* ping's write, preempted */
	{ 2, 150, 3000 },
	{ 2, 40, 6000 },
	{ 2, 9, 20000 },	/* rare, long: about 10 % of the time */
	{ 3, 1, 40000 },	/* 1 in 1000, about 2 % of the time */
};
#define NKINDS	(sizeof(kinds) / sizeof(kinds[0]))
#define NSWITCH	2000000

/* every switch, and the estimate from 1 in N of them (N from every_of) */
static void simulate(uint32_t (*every_of)(uint64_t i), uint64_t *truth,
		     uint64_t *est, uint64_t *stacks)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;

	memset(truth, 0, NKINDS * sizeof(*truth));
	memset(est, 0, NKINDS * sizeof(*est));
	*stacks = 0;
	for (uint64_t i = 0; i < NSWITCH; i++) {
		uint32_t r = (uint32_t)(rnd_next(&s) % 1000), k = 0, acc = 0;
		uint32_t every = every_of(i);
		struct asgst_sample_hdr h;
		uint64_t d, n, w;

		for (k = 0; k < NKINDS - 1; k++) {
			acc += kinds[k].per_mille;
			if (r < acc)
				break;
		}
		d = kinds[k].mean_ns / 2 +
		    rnd_next(&s) % (kinds[k].mean_ns + 1);
		truth[k] += d;
		/* the sampler's coin: prandom % N == 0 */
		if (every > 1 && (uint32_t)rnd_next(&s) % every)
			continue;
		hdr_init(&h, ASGST_SAMPLE_VERSION, every, d);
		offcpu__weigh(&h, &n, &w);
		assert_int_equal(n, every);
		est[k] += w;
		(*stacks)++;
	}
}

static void check_estimate(const uint64_t *truth, const uint64_t *est)
{
	uint64_t tt = 0, te = 0, tid_t[4] = { 0 }, tid_e[4] = { 0 };

	for (size_t k = 0; k < NKINDS; k++) {
		tt += truth[k];
		te += est[k];
		tid_t[kinds[k].tid] += truth[k];
		tid_e[kinds[k].tid] += est[k];
	}
	for (size_t k = 0; k < NKINDS; k++) {
		double st = (double)truth[k] / (double)tt;
		double se = (double)est[k] / (double)te;

		assert_true(st >= 0.01);
		print_message("kind %zu: share %.4f, every switch %.4f\n", k,
			      se, st);
		if (se < st * 0.95 || se > st * 1.05)
			fail_msg("kind %zu: share %.4f, every switch %.4f", k,
				 se, st);
	}
	for (int t = 1; t <= 3; t++) {
		double r = (double)tid_e[t] / (double)tid_t[t];

		print_message("thread %d: %.4f of its time\n", t, r);

		/* about 4 standard errors: threads 1 and 2 have 1.6 M and
		 * 400 k switches, tens of thousands of stacks; thread 3's
		 * 2000 switches about 200 (at N = 10) */
		if (r < (t == 3 ? 0.8 : 0.97) || r > (t == 3 ? 1.2 : 1.03))
			fail_msg("thread %d: %.4f of its time", t, r);
	}
}

static uint32_t every_10(uint64_t i)
{
	(void)i;
	return 10;
}

/* N moving as the sampler's does, period by period */
static uint32_t every_moving(uint64_t i)
{
	static const uint32_t ns[] = { 1, 4, 16, 9, 30, 2, 12 };

	return ns[(i / 5000) % (sizeof(ns) / sizeof(ns[0]))];
}

static void test_estimator(void **state)
{
	uint64_t truth[NKINDS], est[NKINDS], stacks;

	(void)state;
	simulate(every_10, truth, est, &stacks);
	assert_true(stacks > NSWITCH / 11 && stacks < NSWITCH / 9);
	check_estimate(truth, est);
	simulate(every_moving, truth, est, &stacks);
	check_estimate(truth, est);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weigh),
		cmocka_unit_test(test_pipeline_weights),
		cmocka_unit_test(test_calibrate),
		cmocka_unit_test(test_estimator),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
