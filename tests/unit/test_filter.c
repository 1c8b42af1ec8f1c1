// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Stack filters (user/profile/filter.c) on the writers' realistic fixture traces. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/filter.h"
#include "profile/profile.h"
#include "trace.h"
#include "output/writers.h"
#include "unit/writers_fixture.h"

/* apply f to a private copy of every fixture; bit i set when i was kept */
static unsigned kept_mask(struct filter *f)
{
	unsigned m = 0;

	for (size_t i = 0; i < FX_NTRACES; i++) {
		struct trace t = fx_traces[i].t;
		struct frame *fr = malloc(t.nframes * sizeof(*fr));

		assert_non_null(fr);
		memcpy(fr, t.frames, t.nframes * sizeof(*fr));
		t.frames = fr;
		if (filter__apply(f, &t))
			m |= 1u << i;
		free(fr);
	}
	return m;
}

static void opt(struct filter *f, const char *name, const char *arg)
{
	char err[256];

	assert_int_equal(filter__option(f, name, arg, err, sizeof(err)), 0);
}

static void test_ids_and_kind(void **state)
{
	struct filter f = { 0 };

	(void)state;
	assert_false(filter__active(&f));
	assert_int_equal(kept_mask(&f), (1u << FX_NTRACES) - 1);
	opt(&f, "pid", "9001");
	assert_true(filter__active(&f));
	assert_int_equal(kept_mask(&f), 1u << 4);
	filter__free(&f);

	opt(&f, "tid", "4251,4253");
	assert_int_equal(kept_mask(&f), (1u << 0) | (1u << 3) | (1u << 5));
	filter__free(&f);

	opt(&f, "kind", "jvm");
	assert_int_equal(kept_mask(&f), 1u << 2);
	opt(&f, "kind", "native");	/* adds to the accepted kinds */
	assert_int_equal(kept_mask(&f), (1u << 2) | (1u << 4) | (1u << 6));
	filter__free(&f);
}

static void test_regexes(void **state)
{
	struct filter f = { 0 };

	(void)state;
	opt(&f, "thread", "^worker-");
	assert_int_equal(kept_mask(&f), 1u << 1);
	filter__free(&f);

	/* names as collapsed shows them: Java as pkg/Class.method */
	opt(&f, "include", "java/util/HashMap\\.put");
	assert_int_equal(kept_mask(&f), (1u << 0) | (1u << 5));
	opt(&f, "exclude", "clear_page_erms");
	assert_int_equal(kept_mask(&f), 0);
	filter__free(&f);

	/* names without the _[k] style suffixes */
	opt(&f, "exclude", "^asm_exc_page_fault$");
	assert_int_equal(kept_mask(&f) & ((1u << 0) | (1u << 5)), 0);
	assert_int_equal(kept_mask(&f) & ((1u << 1) | (1u << 4)),
			 (1u << 1) | (1u << 4));
	filter__free(&f);
}

static void test_java_only_and_reverse(void **state)
{
	struct filter f = { 0 };
	struct trace t = fx_traces[1].t;	/* JNI: kernel, C, Java, JVM */
	struct frame fr[64];

	(void)state;
	memcpy(fr, t.frames, t.nframes * sizeof(*fr));
	t.frames = fr;
	opt(&f, "java-only", NULL);
	assert_true(filter__apply(&f, &t));
	assert_int_equal(t.nframes, 3);
	assert_int_equal(t.frames[0].type, FRAME_JAVA_NATIVE);
	assert_string_equal(t.frames[2].klass, "java.lang.Thread");
	/* a stack without Java frames is not a Java stack: dropped */
	assert_int_equal(kept_mask(&f) & (1u << 4), 0);
	filter__free(&f);

	t = fx_traces[4].t;
	memcpy(fr, t.frames, t.nframes * sizeof(*fr));
	t.frames = fr;
	opt(&f, "reverse", NULL);
	assert_true(filter__apply(&f, &t));
	assert_int_equal(t.nframes, fx_traces[4].t.nframes);
	for (uint32_t i = 0; i < t.nframes; i++)
		assert_int_equal(t.frames[i].pc,
				 fx_traces[4].t.frames[t.nframes - 1 - i].pc);
	filter__free(&f);
}

/* --state and --vthreads on a carrier's stack with a virtual thread */
static void test_state_and_vthreads(void **state)
{
	struct frame base[5] = {
		{ .type = FRAME_KERNEL, .symbol = "schedule" },
		{ .type = FRAME_JAVA, .klass = "App", .method = "leaf" },
		{ .type = FRAME_JAVA_NATIVE, .klass = "jdk.internal.vm.Continuation",
		  .method = "enterSpecial", .flags = FRAME_F_VTHREAD_ENTRY },
		{ .type = FRAME_JAVA, .klass = "java.lang.VirtualThread",
		  .method = "runContinuation" },
		{ .type = FRAME_JAVA, .klass = "java.util.concurrent.ForkJoinWorkerThread",
		  .method = "run" },
	};
	struct frame fr[5];
	struct trace t = { .kind = TRACE_KIND_JAVA, .state = TRACE_STATE_IN_NATIVE,
			   .flags = TRACE_F_VTHREAD, .frames = fr };
	struct filter f = { 0 };
	char err[256];

	(void)state;
	opt(&f, "state", "in_java,blocked");
	memcpy(fr, base, sizeof(fr));
	t.nframes = 5;
	assert_false(filter__apply(&f, &t));
	filter__free(&f);
	opt(&f, "state", "in_native");
	assert_true(filter__apply(&f, &t));
	assert_int_equal(t.nframes, 5);	/* merged: the stack as decoded */
	filter__free(&f);

	opt(&f, "vthreads", "virtual");
	assert_true(filter__apply(&f, &t));
	assert_int_equal(t.nframes, 3);	/* down to enterSpecial */
	assert_string_equal(t.frames[2].method, "enterSpecial");
	memcpy(fr, base, sizeof(fr));
	t.nframes = 5;
	opt(&f, "vthreads", "carrier");
	assert_true(filter__apply(&f, &t));
	assert_int_equal(t.nframes, 3);	/* from enterSpecial down */
	assert_string_equal(t.frames[0].method, "enterSpecial");
	assert_string_equal(t.frames[2].method, "run");
	/* a platform thread's stack is left alone */
	memcpy(fr, base, sizeof(fr));
	t.nframes = 5;
	t.flags = 0;
	assert_true(filter__apply(&f, &t));
	assert_int_equal(t.nframes, 5);
	filter__free(&f);

	assert_int_equal(filter__option(&f, "state", "running", err,
					sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--state: unknown state 'running'"));
	assert_int_equal(filter__option(&f, "vthreads", "both", err,
					sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--vthreads"));
	filter__free(&f);
}

static void test_bad_options(void **state)
{
	struct filter f = { 0 };
	char err[256];

	(void)state;
	assert_int_equal(filter__option(&f, "thread", "[x", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "bad regular expression"));
	assert_int_equal(filter__option(&f, "pid", "12,abc", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "abc"));
	assert_int_equal(filter__option(&f, "kind", "gc", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "unknown kind"));
	filter__free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_and_kind),
		cmocka_unit_test(test_regexes),
		cmocka_unit_test(test_java_only_and_reverse),
		cmocka_unit_test(test_state_and_vthreads),
		cmocka_unit_test(test_bad_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
