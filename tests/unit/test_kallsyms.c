// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* kallsyms parsing: a saved real table, its kptr_restrict form, the live one */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/kallsyms.h"
#include "util/strtab.h"
#include "symbols/symbolize.h"
#include "fixtures/fixture_path.h"

struct line {
	uint64_t addr;
	char type;
	char name[256];
	char mod[64];
};

/* an independent reading of the file, with sscanf */
static size_t read_lines(const char *path, struct line **out)
{
	char buf[1024];
	size_t n = 0, cap = 0;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	*out = NULL;
	while (fgets(buf, sizeof(buf), f)) {
		struct line l = { 0 };
		int k = sscanf(buf, "%" SCNx64 " %c %255s [%63[^]]", &l.addr,
			       &l.type, l.name, l.mod);

		if (k < 3)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			*out = realloc(*out, cap * sizeof(**out));
			assert_non_null(*out);
		}
		(*out)[n++] = l;
	}
	fclose(f);
	return n;
}

static int is_text(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

static void test_sample(void **state)
{
	char path[PATH_MAX];
	struct line *l;
	struct kallsyms *ks;
	size_t n, i, text = 0, checked = 0;

	(void)state;
	fixture_path(path, sizeof(path), "kallsyms.sample");
	n = read_lines(path, &l);
	ks = kallsyms__load(path);
	assert_non_null(ks);
	assert_false(kallsyms__restricted(ks));
	for (i = 0; i < n; i++)
		text += is_text(l[i].type);
	assert_int_equal(kallsyms__count(ks), text);
	for (i = 0; i < n; i++) {
		const char *name, *mod = NULL;
		uint64_t off = 99;

		if (!is_text(l[i].type))
			continue;
		name = kallsyms__lookup(ks, l[i].addr + 1, &off, &mod);
		assert_non_null(name);
		/* aliases share an address: any of them, off from that address */
		assert_int_equal(off, l[i].addr + 1 - l[i].addr);
		if (strcmp(l[i].name, "do_syscall_64") == 0 ||
		    strcmp(l[i].name, "vfs_read") == 0) {
			assert_string_equal(name, l[i].name);
			checked++;
		}
		if (l[i].mod[0]) {
			assert_non_null(mod);
			assert_string_equal(mod, l[i].mod);
			checked++;
		} else {
			assert_null(mod);
		}
	}
	assert_true(checked >= 3);
	/* before the first symbol: nothing */
	assert_null(kallsyms__lookup(ks, 0x1000, NULL, NULL));
	kallsyms__free(ks);
	free(l);
}

static void test_restricted(void **state)
{
	char path[PATH_MAX];
	struct kallsyms *ks;
	struct strtab *st;
	struct symbolizer *sz;
	struct frame fr = { 0 };

	(void)state;
	fixture_path(path, sizeof(path), "kallsyms.restricted");
	ks = kallsyms__load(path);
	assert_non_null(ks);
	assert_true(kallsyms__restricted(ks));
	assert_null(kallsyms__lookup(ks, 0xffffffff81000010ull, NULL, NULL));
	kallsyms__free(ks);
	/* through the symbolizer: -ENOENT (and one warning line on stderr) */
	st = strtab__new();
	sz = symbolizer__new(st);
	assert_int_equal(symbolizer__set_kallsyms_path(sz, path), 0);
	assert_int_equal(symbolizer__kernel(sz, 0xffffffff81000010ull, &fr),
			 -ENOENT);
	assert_int_equal(symbolizer__kernel(sz, 0xffffffff81000020ull, &fr),
			 -ENOENT);
	assert_null(fr.symbol);
	symbolizer__free(sz);
	strtab__free(st);
}

static void test_garbage(void **state)
{
	static const char text[] =
		"zzzz T nope\n"
		"ffffffff81000000\n"
		"ffffffff81000000 T\n"
		"ffffffff8100000000000000000 T too_long_addr_is_kept_hexwrapped\n"
		"ffffffff81000100 D data_sym\n"
		"ffffffff81000200 t real_one\t[mod1]\n"
		"ffffffff81000300 T unterminated [mod2";
	struct kallsyms *ks = kallsyms__parse(text, sizeof(text) - 1);
	const char *mod = NULL;
	uint64_t off;

	(void)state;
	assert_non_null(ks);
	assert_string_equal(kallsyms__lookup(ks, 0xffffffff81000204ull, &off, &mod),
			    "real_one");
	assert_int_equal(off, 4);
	assert_string_equal(mod, "mod1");
	assert_string_equal(kallsyms__lookup(ks, 0xffffffff81000300ull, &off, &mod),
			    "unterminated");
	assert_null(mod);
	kallsyms__free(ks);
}

static void test_live(void **state)
{
	struct line *l;
	struct kallsyms *ks;
	size_t n, i, found = 0;

	(void)state;
	if (geteuid() != 0)
		skip();
	ks = kallsyms__load(NULL);
	assert_non_null(ks);
	if (kallsyms__restricted(ks)) {
		kallsyms__free(ks);
		skip();
	}
	n = read_lines("/proc/kallsyms", &l);
	assert_true(kallsyms__count(ks) > 1000);
	for (i = 0; i < n; i++) {
		uint64_t off;
		const char *name;

		if (strcmp(l[i].name, "do_syscall_64") &&
		    strcmp(l[i].name, "schedule") && strcmp(l[i].name, "vfs_read"))
			continue;
		name = kallsyms__lookup(ks, l[i].addr + 2, &off, NULL);
		assert_non_null(name);
		assert_string_equal(name, l[i].name);
		assert_int_equal(off, 2);
		found++;
	}
	print_message("live kallsyms: %zu text symbols\n", kallsyms__count(ks));
	assert_int_equal(found, 3);
	free(l);
	kallsyms__free(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_restricted),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
