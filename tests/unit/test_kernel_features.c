// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel feature probe: with fake probes, the first feature missing
 * is named with its Linux version in one line; features only some
 * recordings need (off-CPU, the fork hook, JVM events, a cgroup) count
 * only for those; a probe that cannot tell does not refuse the kernel;
 * the table is in version order. On this machine's kernel, nothing the
 * sampler needs is missing. A release string is compared by its first
 * two numbers (what packs the sampler's records: 5.19).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "capture/kernel_features.h"

/* what the fakes say is absent, and what they cannot tell */
static int absent_helper = -1, unknown_helper = -1, absent_map = -1;
static const char *absent_btf, *absent_file;

static int fake_map(int t)
{
	return t != absent_map;
}

static int fake_helper(int id)
{
	if (id == unknown_helper)
		return -EPERM;
	return id != absent_helper;
}

static int fake_btf(const char *name)
{
	return !absent_btf || strcmp(name, absent_btf);
}

static int fake_file(const char *path)
{
	return !absent_file || strcmp(path, absent_file);
}

static const struct kfeat_ops fake = {
	.map = fake_map,
	.helper = fake_helper,
	.btf = fake_btf,
	.file = fake_file,
};

static int reset(void **state)
{
	(void)state;
	absent_helper = unknown_helper = absent_map = -1;
	absent_btf = absent_file = NULL;
	return 0;
}

static void test_all_present(void **state)
{
	(void)state;
	assert_null(kernel_features__first_missing(&fake, ~0u));
}

static void test_helper_missing(void **state)
{
	const struct kfeat *f;
	char err[256];

	(void)state;
	absent_helper = BPF_FUNC_loop;
	f = kernel_features__first_missing(&fake, 0);
	assert_non_null(f);
	assert_string_equal(f->name, "bpf_loop");
	assert_string_equal(f->since, "5.17");
	assert_int_equal(kernel_features__describe(f, "5.15.0-1-amd64", err,
						   sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "5.15.0-1-amd64"));
	assert_non_null(strstr(err, "bpf_loop (Linux 5.17)"));
	assert_null(strchr(err, '\n'));
}

/* the oldest missing one is named: a 5.4 kernel lacks the ring buffer
 * before bpf_loop */
static void test_oldest_first(void **state)
{
	const struct kfeat *f;

	(void)state;
	absent_helper = BPF_FUNC_loop;
	absent_map = BPF_MAP_TYPE_RINGBUF;
	f = kernel_features__first_missing(&fake, 0);
	assert_non_null(f);
	assert_string_equal(f->since, "5.8");
}

static void test_only_who_needs_it(void **state)
{
	const struct kfeat *f;

	(void)state;
	absent_btf = "btf_trace_sched_switch";
	assert_null(kernel_features__first_missing(&fake, KFEAT_JVM));
	f = kernel_features__first_missing(&fake, KFEAT_OFFCPU);
	assert_non_null(f);
	assert_non_null(strstr(f->name, "tp_btf"));
	assert_non_null(kernel_features__first_missing(&fake, KFEAT_FOLLOW));
	reset(NULL);
	absent_file = "/sys/bus/event_source/devices/uprobe/type";
	assert_null(kernel_features__first_missing(&fake, KFEAT_OFFCPU));
	assert_non_null(kernel_features__first_missing(&fake, KFEAT_JVM));
	reset(NULL);
	absent_helper = BPF_FUNC_get_current_ancestor_cgroup_id;
	assert_null(kernel_features__first_missing(&fake, KFEAT_OFFCPU));
	assert_non_null(kernel_features__first_missing(&fake, KFEAT_CGROUP));
}

static void test_unknown_is_not_missing(void **state)
{
	(void)state;
	unknown_helper = BPF_FUNC_find_vma;
	assert_null(kernel_features__first_missing(&fake, ~0u));
}

static int major_minor(const char *v)
{
	int a = 0, b = 0;

	sscanf(v, "%d.%d", &a, &b);
	return a * 1000 + b;
}

static void test_table_order(void **state)
{
	const struct kfeat *t;
	size_t n;

	(void)state;
	t = kernel_features__table(&n);
	assert_true(n >= 10);
	for (size_t i = 1; i < n; i++)
		assert_true(major_minor(t[i - 1].since) <= major_minor(t[i].since));
}

/* the real probes: needs root (BPF) */
static void test_this_kernel(void **state)
{
	char err[256] = "";

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(kernel_features__check(~0u, err, sizeof(err)), 0);
	assert_string_equal(err, "");
}

static void test_release_at_least(void **state)
{
	(void)state;
	assert_true(kernel_features__release_at_least("5.19.0", 5, 19));
	assert_true(kernel_features__release_at_least("6.1.0-18-amd64", 5,
						      19));
	assert_true(kernel_features__release_at_least("6.18.44-fc-v1252", 5,
						      19));
	assert_true(kernel_features__release_at_least("10.0", 5, 19));
	/* 5.2 is older than 5.19: numbers, not strings */
	assert_false(kernel_features__release_at_least("5.2.0", 5, 19));
	assert_false(kernel_features__release_at_least("5.18.19", 5, 19));
	assert_false(kernel_features__release_at_least("4.19.0", 5, 19));
	assert_false(kernel_features__release_at_least("", 5, 19));
	assert_false(kernel_features__release_at_least("?", 5, 19));
	assert_false(kernel_features__release_at_least("6", 5, 19));
	assert_false(kernel_features__release_at_least(NULL, 5, 19));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_all_present, reset),
		cmocka_unit_test_setup(test_helper_missing, reset),
		cmocka_unit_test_setup(test_oldest_first, reset),
		cmocka_unit_test_setup(test_only_who_needs_it, reset),
		cmocka_unit_test_setup(test_unknown_is_not_missing, reset),
		cmocka_unit_test_setup(test_table_order, reset),
		cmocka_unit_test(test_this_kernel),
		cmocka_unit_test(test_release_at_least),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
