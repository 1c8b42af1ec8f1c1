// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a decoded record adds to its stack, by event (pipeline.c:
 * sample_values): a cpu sample counts 1, an allocation its bytes (the
 * scaled ev_weight, at least the object's ev_size) and objects (bytes /
 * size, rounded, at least 1), a contended monitor its ns waited.
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
#include "profile/pipeline.h"
#include "profile/profile.h"

/* one record of event ev by thread tid (its own stack: one pc) */
static void push(struct pipeline *pl, uint32_t ev, uint32_t tid,
		 uint64_t size, uint64_t weight, const char *cls)
{
	uint64_t rec[(sizeof(struct asgst_sample_hdr) + 8) / 8 + 1];
	struct asgst_sample_hdr *h = (struct asgst_sample_hdr *)rec;
	uint64_t *pcs = (uint64_t *)((char *)rec + sizeof(*h));

	memset(rec, 0, sizeof(rec));
	h->magic = ASGST_SAMPLE_MAGIC;
	h->version = ASGST_SAMPLE_VERSION;
	h->hdr_size = sizeof(*h);
	h->event = ev;
	h->pid = h->ns_pid = 4300;
	h->tid = h->ns_tid = tid;
	h->ustack_n = 1;
	h->window_off = sizeof(*h) + 8;
	h->ev_size = size;
	h->ev_weight = weight;
	if (cls)
		strncpy(h->ev_class, cls, sizeof(h->ev_class) - 1);
	memcpy(h->comm, "evtest", 7);
	pcs[0] = 0x401000 + tid;
	assert_true(pipeline__push(pl, rec, sizeof(*h) + 8) >= 0);
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

static void test_values_by_event(void **state)
{
	struct pipeline_opts o = { .offline = true, .quiet = true };
	struct profile *p = profile__new();
	struct pipeline *pl;
	const struct profile_stack *ps;

	(void)state;
	assert_non_null(p);
	pl = pipeline__new(p, NULL, &o);
	assert_non_null(pl);
	push(pl, ASGST_EV_CPU, 1, 0, 0, NULL);
	push(pl, ASGST_EV_CPU, 1, 0, 0, NULL);
	/* 24-byte objects, one sampled per 512 KiB: 21845.3 of them */
	push(pl, ASGST_EV_ALLOC, 2, 24, 524288, "byte[]");
	push(pl, ASGST_EV_ALLOC, 2, 24, 524288, "byte[]");
	/* a big object weighs at least itself: one object */
	push(pl, ASGST_EV_ALLOC, 3, 1000000, 10, "long[]");
	/* no size told: one object, the weight's bytes */
	push(pl, ASGST_EV_ALLOC, 4, 0, 4096, "Foo");
	/* 36 / 24 = 1.5: rounds to 2 */
	push(pl, ASGST_EV_ALLOC, 5, 24, 36, "Bar");
	push(pl, ASGST_EV_LOCK, 6, 0, 12345, "java.lang.Object");
	push(pl, ASGST_EV_LOCK, 6, 0, 100, "java.lang.Object");
	pipeline__process(pl, 0, true);

	ps = stack_of(p, 1);
	assert_int_equal(ps->count, 2);
	assert_int_equal(ps->weight_ns + ps->alloc_bytes + ps->alloc_objects,
			 0);
	ps = stack_of(p, 2);
	assert_int_equal(ps->count, 2);
	assert_int_equal(ps->alloc_bytes, 2 * 524288);
	assert_int_equal(ps->alloc_objects, 2 * 21845);
	assert_int_equal(ps->weight_ns, 0);
	ps = stack_of(p, 3);
	assert_int_equal(ps->alloc_bytes, 1000000);
	assert_int_equal(ps->alloc_objects, 1);
	ps = stack_of(p, 4);
	assert_int_equal(ps->alloc_bytes, 4096);
	assert_int_equal(ps->alloc_objects, 1);
	ps = stack_of(p, 5);
	assert_int_equal(ps->alloc_bytes, 36);
	assert_int_equal(ps->alloc_objects, 2);
	ps = stack_of(p, 6);
	assert_int_equal(ps->count, 2);
	assert_int_equal(ps->weight_ns, 12445);
	assert_int_equal(ps->alloc_bytes + ps->alloc_objects, 0);
	pipeline__free(pl);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_by_event),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
