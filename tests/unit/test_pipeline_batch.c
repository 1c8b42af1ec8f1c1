// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * When the pipeline decodes (pipeline.c: process): a record waits the
 * decode delay (0.4 s), and a batch starts only once the oldest record has
 * waited 0.2 s more or 4096 records are queued; then every record past the
 * delay decodes, the younger ones wait. Past 64 MiB waiting the oldest
 * decode before their delay is over. A flush decodes everything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <linux/types.h>
#include "capture/sample.h"
#include "profile/pipeline.h"
#include "profile/profile.h"

#define MS	(1000ull * 1000)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* a sample of one kernel and one user pc, no window */
static void push_one(struct pipeline *pl)
{
	uint64_t rec[(sizeof(struct asgst_sample_hdr) + 16) / 8 + 1];
	struct asgst_sample_hdr *h = (struct asgst_sample_hdr *)rec;
	uint64_t *pcs = (uint64_t *)((char *)rec + sizeof(*h));

	memset(rec, 0, sizeof(rec));
	h->magic = ASGST_SAMPLE_MAGIC;
	h->version = ASGST_SAMPLE_VERSION;
	h->hdr_size = sizeof(*h);
	h->event = ASGST_EV_CPU;
	h->pid = h->tid = h->ns_pid = h->ns_tid = 4243;
	h->kstack_n = 1;
	h->ustack_n = 1;
	h->window_off = sizeof(*h) + 16;
	memcpy(h->comm, "batchtest", 10);
	pcs[0] = 0xffffffff81000010ull;
	pcs[1] = 0x401000;
	assert_true(pipeline__push(pl, rec, sizeof(*h) + 16) >= 0);
}

/* the same with a stack window of wlen bytes */
static void push_big(struct pipeline *pl, size_t wlen)
{
	size_t len = sizeof(struct asgst_sample_hdr) + 16 + wlen;
	uint64_t *rec = calloc(1, len + 8);
	struct asgst_sample_hdr *h = (struct asgst_sample_hdr *)rec;
	uint64_t *pcs = (uint64_t *)((char *)rec + sizeof(*h));

	assert_non_null(rec);
	h->magic = ASGST_SAMPLE_MAGIC;
	h->version = ASGST_SAMPLE_VERSION;
	h->hdr_size = sizeof(*h);
	h->event = ASGST_EV_CPU;
	h->flags = ASGST_SF_WINDOW_WANTED;
	h->pid = h->tid = h->ns_pid = h->ns_tid = 4243;
	h->kstack_n = 1;
	h->ustack_n = 1;
	h->window_off = sizeof(*h) + 16;
	h->window_len = (uint32_t)wlen;
	memcpy(h->comm, "batchtest", 10);
	pcs[0] = 0xffffffff81000010ull;
	pcs[1] = 0x401000;
	assert_true(pipeline__push(pl, rec, len) >= 0);
	free(rec);
}

static uint64_t decoded(const struct pipeline *pl)
{
	struct pipeline_stats st;

	pipeline__stats(pl, &st);
	return st.decoded;
}

struct fixture {
	struct profile *prof;
	struct pipeline *pl;
};

static int setup(void **state)
{
	struct pipeline_opts o = { .offline = true, .quiet = true };
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || !(f->prof = profile__new()) ||
	    !(f->pl = pipeline__new(f->prof, NULL, &o)))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	pipeline__free(f->pl);
	profile__free(f->prof);
	free(f);
	return 0;
}

/* past the delay alone is not a batch; 0.2 s more is, and takes all past
 * the delay but not the younger ones */
static void test_batch_by_age(void **state)
{
	struct fixture *f = *state;
	struct timespec pause = { 0, 250 * MS };
	uint64_t t0;

	push_one(f->pl);
	push_one(f->pl);
	t0 = now_ns();		/* both came at or before t0 */
	pipeline__process(f->pl, t0 + 300 * MS, false);
	assert_int_equal(decoded(f->pl), 0);
	nanosleep(&pause, NULL);
	push_one(f->pl);	/* came 0.25 s or more after t0 */
	pipeline__process(f->pl, t0 + 450 * MS, false);
	assert_int_equal(decoded(f->pl), 0);	/* past the delay, no batch */
	/* the oldest waited 0.6 s: both old ones, not the third (0.4 s after
	 * it is at least t0 + 0.65 s) */
	pipeline__process(f->pl, t0 + 610 * MS, false);
	assert_int_equal(decoded(f->pl), 2);
	pipeline__process(f->pl, 0, true);
	assert_int_equal(decoded(f->pl), 3);
}

/* 4096 waiting start a batch as soon as the oldest are past the delay */
static void test_batch_by_count(void **state)
{
	struct fixture *f = *state;
	uint64_t t0;

	for (int i = 0; i < 4095; i++)
		push_one(f->pl);
	t0 = now_ns();
	pipeline__process(f->pl, t0 + 450 * MS, false);
	assert_int_equal(decoded(f->pl), 0);	/* 4095: not yet */
	push_one(f->pl);
	t0 = now_ns();
	pipeline__process(f->pl, t0 + 300 * MS, false);
	assert_int_equal(decoded(f->pl), 0);	/* none past the delay */
	pipeline__process(f->pl, t0 + 410 * MS, false);
	assert_int_equal(decoded(f->pl), 4096);
}

/* past 64 MiB waiting, the oldest decode at once, down to 64 MiB */
static void test_batch_by_bytes(void **state)
{
	struct fixture *f = *state;
	struct pipeline_stats st;
	const size_t wlen = 60000, n = 1200;	/* 72 MB */
	uint64_t t0, early;

	for (size_t i = 0; i < n; i++)
		push_big(f->pl, wlen);
	t0 = now_ns();
	pipeline__process(f->pl, t0 + 100 * MS, false);
	pipeline__stats(f->pl, &st);
	/* those left, wlen bytes and more each, take at most 64 MiB */
	assert_true(st.decoded > 0);
	assert_true(st.decoded < n);
	assert_true((n - st.decoded) * wlen <= (64ull << 20));
	/* and not many more decoded: a record is its window and < 1 KiB */
	assert_true((n - st.decoded) * (wlen + 1024) > (64ull << 20));
	assert_int_equal(st.decoded_early, st.decoded);
	early = st.decoded_early;
	/* a flush is not early */
	pipeline__process(f->pl, 0, true);
	pipeline__stats(f->pl, &st);
	assert_int_equal(st.decoded, n);
	assert_int_equal(st.decoded_early, early);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_batch_by_age, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_by_count, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_by_bytes, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
