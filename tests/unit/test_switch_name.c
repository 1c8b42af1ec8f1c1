// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * record --switch-output: the period files' names (user/output/switch_name.c),
 * --switch-max-files' rotation, and the profile's reset between periods.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "output/switch_name.h"
#include "profile/profile.h"
#include "trace.h"
#include "output/writers.h"
#include "unit/writers_fixture.h"

/* 2026-12-03 11:22:33 UTC */
#define T0	((time_t)1796296953)

static void name_is(const char *path, const char *want)
{
	char buf[256];

	assert_int_equal(switch_name__format(buf, sizeof(buf), path, T0), 0);
	assert_string_equal(buf, want);
}

static void test_before_extension(void **state)
{
	(void)state;
	name_is("app.json", "app.20261203T112233Z.json");
	name_is("/var/prof/app.collapsed",
		"/var/prof/app.20261203T112233Z.collapsed");
	name_is("a.b.c.html", "a.b.c.20261203T112233Z.html");
	/* both parts of a compressed extension stay together */
	name_is("out/app.pb.gz", "out/app.20261203T112233Z.pb.gz");
	name_is("app.PB.GZ", "app.20261203T112233Z.PB.GZ");
	name_is("x.gz", "x.20261203T112233Z.gz");
}

static void test_no_extension(void **state)
{
	(void)state;
	name_is("profile", "profile.20261203T112233Z");
	name_is("/tmp/profile", "/tmp/profile.20261203T112233Z");
	/* a leading dot is a hidden file's name, not an extension */
	name_is(".profile", ".profile.20261203T112233Z");
	name_is("d/.prof.json", "d/.prof.20261203T112233Z.json");
	/* a dot in a folder name is no extension of the file */
	name_is("/tmp/run.d/profile", "/tmp/run.d/profile.20261203T112233Z");
	name_is("run.d/app.json", "run.d/app.20261203T112233Z.json");
	name_is("./app", "./app.20261203T112233Z");
}

static void test_percent_t(void **state)
{
	(void)state;
	name_is("app-%t.json", "app-20261203T112233Z.json");
	name_is("/p/%t/app.json", "/p/20261203T112233Z/app.json");
	name_is("%t", "20261203T112233Z");
	/* every %t; other % sequences are left as they are */
	name_is("%t-%d-%t.json",
		"20261203T112233Z-%d-20261203T112233Z.json");
	name_is("100%.json", "100%.20261203T112233Z.json");
}

static void test_too_long(void **state)
{
	char buf[24];

	(void)state;
	/* "app.20261203T112233Z.json" is 25 bytes with its NUL */
	assert_int_equal(switch_name__format(buf, sizeof(buf), "app.json", T0),
			 -ENAMETOOLONG);
	assert_int_equal(switch_name__format(buf, 21, "%t%t", T0),
			 -ENAMETOOLONG);
	assert_int_equal(switch_name__format(buf, 17, "%t", T0), 0);
	assert_int_equal(switch_name__format(buf, 16, "%t", T0),
			 -ENAMETOOLONG);
}

static void test_max_files(void **state)
{
	char dir[] = "/tmp/asgst-switch-XXXXXX", path[5][64];
	struct switch_files f = { .max = 2 };
	struct switch_files all = { 0 };

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 5; i++) {
		FILE *fp;

		snprintf(path[i], sizeof(path[i]), "%s/p%d.json", dir, i);
		fp = fopen(path[i], "w");
		assert_non_null(fp);
		fclose(fp);
		assert_int_equal(switch_files__add(&f, path[i]), 0);
		/* without a limit nothing is kept or deleted */
		assert_int_equal(switch_files__add(&all, path[i]), 0);
	}
	assert_int_equal(f.n, 2);
	assert_int_equal(all.n, 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(access(path[i], F_OK) == 0, i >= 3);
	/* a file someone else removed is no error */
	unlink(path[3]);
	assert_int_equal(switch_files__add(&f, path[4]), 0);
	switch_files__free(&f);
	switch_files__free(&all);
	unlink(path[4]);
	assert_int_equal(rmdir(dir), 0);
}

static void test_profile_reset(void **state)
{
	struct profile *p = fx_profile();
	struct profile_meta *m;
	uint64_t sum = 0;

	(void)state;
	assert_non_null(p);
	m = profile__meta(p);
	m->events = 3;
	assert_int_equal(profile__nstacks(p), FX_NTRACES);
	profile__reset(p);
	assert_int_equal(profile__nstacks(p), 0);
	assert_null(profile__stack(p, 0));
	/* the recording's settings stay, the period's figures go */
	assert_int_equal(m->frequency_hz, 99);
	assert_int_equal(m->events, 3);
	assert_int_equal(m->samples, 0);
	assert_int_equal(m->lost, 0);
	assert_int_equal(m->duration_ns, 0);
	/* the next period counts from zero, strings still interned */
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < FX_NTRACES; i++)
			assert_int_equal(profile__add(p, &fx_traces[i].t,
						      fx_traces[i].count, 0),
					 0);
	for (size_t i = 0; i < profile__nstacks(p); i++)
		sum += profile__stack(p, i)->count;
	assert_int_equal(profile__nstacks(p), FX_NTRACES);
	assert_int_equal(sum, 2 * (17 + 5 + 3 + 2 + 40 + 4 + 1));
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_before_extension),
		cmocka_unit_test(test_no_extension),
		cmocka_unit_test(test_percent_t),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_max_files),
		cmocka_unit_test(test_profile_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
