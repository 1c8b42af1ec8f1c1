// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The top writer on the fixture profile: its table parsed back, self and
 * total recomputed independently from the fixture traces.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/profile.h"
#include "trace.h"
#include "output/writers.h"
#include "unit/writers_fixture.h"

/* independent count: self for the innermost frame, total once per stack */
static void expect_counts(const char *name, uint64_t *self, uint64_t *total)
{
	char buf[512];

	*self = *total = 0;
	for (size_t i = 0; i < FX_NTRACES; i++) {
		const struct trace *t = &fx_traces[i].t;
		int found = 0;

		for (uint32_t j = 0; j < t->nframes; j++) {
			frame__display_name(&t->frames[j], buf, sizeof(buf), true);
			if (strcmp(buf, name))
				continue;
			if (j == 0)
				*self += fx_traces[i].count;
			found = 1;
		}
		if (found)
			*total += fx_traces[i].count;
	}
}

static void test_top_table(void **state)
{
	struct profile *p = fx_profile();
	FILE *f = tmpfile();
	char *text, *line, *save = NULL;
	uint64_t total_samples = 0, sum_self = 0, prev_self = UINT64_MAX;
	unsigned rows = 0;
	size_t len;

	(void)state;
	assert_non_null(p);
	assert_non_null(f);
	for (size_t i = 0; i < FX_NTRACES; i++)
		total_samples += fx_traces[i].count;
	assert_int_equal(write_top(p, f), 0);
	text = fx_slurp(f, &len);
	assert_non_null(text);
	assert_non_null(strstr(text, "# asgst-bpf top: "));
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		double sp, tp;
		unsigned long long self, total;
		int off = 0;
		uint64_t es, et;

		if (line[0] == '#')
			continue;
		assert_int_equal(sscanf(line, "%lf%% %llu %lf%% %llu %n", &sp,
					&self, &tp, &total, &off), 4);
		assert_true(off > 0);
		expect_counts(line + off, &es, &et);
		assert_int_equal(self, es);
		assert_int_equal(total, et);
		assert_true(self <= prev_self);		/* sorted by self */
		assert_true(self <= total);
		prev_self = self;
		sum_self += self;
		rows++;
	}
	/* every sample has one innermost frame: the self column adds up */
	assert_int_equal(sum_self, total_samples);
	assert_true(rows >= 5);
	free(text);
	fclose(f);
	profile__free(p);
}

static void test_top_write_error(void **state)
{
	struct profile *p = fx_profile();
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	assert_non_null(p);
	if (!f)
		skip();
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_not_equal(write_top(p, f), 0);
	fclose(f);
	profile__free(p);
}

/* a table per event family, each in its own unit */
static void test_top_jvm_sections(void **state)
{
	struct profile *p = fx_jvm_profile(1 | 4 | 8);
	FILE *f = tmpfile();
	char *text, *alloc, *lock;

	(void)state;
	assert_non_null(p);
	assert_non_null(f);
	assert_int_equal(write_top(p, f), 0);
	text = fx_slurp(f, NULL);
	assert_non_null(text);
	/* the cpu table as without JVM events: samples of cpu stacks */
	assert_non_null(strstr(text, "# asgst-bpf top: 72 samples in 7 stacks"));
	alloc = strstr(text, "\n\n# asgst-bpf top alloc: 2621440 bytes in 5 "
			     "events, 2 stacks");
	lock = strstr(text, "\n\n# asgst-bpf top lock: 7500000 ns in 4 "
			    "events, 1 stacks");
	assert_non_null(alloc);
	assert_non_null(lock);
	assert_true(alloc < lock);
	assert_non_null(strstr(alloc, "60.00%  1572864  60.00%  1572864  "
				      "byte[]_[a]\n"));
	assert_non_null(strstr(lock, "100.00%  7500000 100.00%  7500000  "
				     "java.lang.Object_[l]\n"));
	/* never a class frame in the cpu table */
	*alloc = '\0';
	assert_null(strstr(text, "_[a]"));
	free(text);
	fclose(f);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top_table),
		cmocka_unit_test(test_top_write_error),
		cmocka_unit_test(test_top_jvm_sections),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
