// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The code map's method store alone (jvm/codemap_methods.h), with no file
 * and no records: strings and classes numbered once, methods added as the
 * tables hand them over, their lookups by Method* at a time, the versions
 * at one Method*, what a snapshot's reconciling and the retention free,
 * and its caps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jvm/codemap_methods.h"

struct fx {
	struct cm_budget budget;
	struct cm_store st;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	codemap__limits_default(&fx->budget.lim);
	cm_store__init(&fx->st, &fx->budget);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	cm_store__free(&fx->st);
	free(fx);
	return 0;
}

static uint32_t num(struct cm_store *st, const char *s)
{
	uint32_t n = UINT32_MAX;

	assert_int_equal(cm_store__str_num(st, s, strlen(s), &n), 0);
	return n;
}

/* a method of class klass (source src), its name and signature */
static struct cm_mdesc desc(struct cm_store *st, uint64_t mp,
			    const char *klass, const char *src,
			    const char *name)
{
	struct cm_mdesc m = {
		.method = mp, .const_method = mp + 0x100,
		.name = num(st, name), .sig = num(st, "()V"),
		.modifiers = 9,
	};

	assert_int_equal(cm_store__class_num(st, num(st, klass), num(st, src),
					     &m.klass), 0);
	return m;
}

static void test_strings(void **state)
{
	struct fx *fx = *state;
	struct cm_store *st = &fx->st;
	const char *first, *again;
	uint32_t a, b, c, d;

	a = num(st, "java.lang.String");
	b = num(st, "hashCode");
	assert_int_not_equal(a, b);
	assert_int_equal(num(st, "java.lang.String"), a);
	assert_string_equal(cm_store__str(st, a), "java.lang.String");
	assert_null(cm_store__str(st, 1000000));
	/* what C sees: up to a NUL inside */
	assert_int_equal(cm_store__str_num(st, "hashCode\0x", 10, &c), 0);
	assert_int_equal(c, b);

	/* interned text never moves, however much is added after it */
	first = cm_store__intern(st, "main", 4);
	assert_non_null(first);
	for (int i = 0; i < 20000; i++) {
		char s[32];

		snprintf(s, sizeof(s), "name-%d", i);
		assert_non_null(cm_store__intern(st, s, strlen(s)));
	}
	again = cm_store__intern(st, "main", 4);
	assert_ptr_equal(first, again);
	assert_string_equal(first, "main");

	/* a class is its (name, source) */
	assert_int_equal(cm_store__class_num(st, a, b, &c), 0);
	assert_int_equal(cm_store__class_num(st, a, b, &d), 0);
	assert_int_equal(c, d);
	assert_int_equal(cm_store__class_num(st, b, a, &d), 0);
	assert_int_not_equal(c, d);
}

static void test_add_get(void **state)
{
	struct fx *fx = *state;
	struct cm_store *st = &fx->st;
	struct cm_line lines[] = { { 20, 12 }, { 0, 10 }, { 8, 11 } };
	struct cm_mdesc m = desc(st, 0x1000, "a.B", "B.java", "run");
	const struct codemap_method *v, *w;
	size_t bytes = cm_store__bytes(st);
	bool timeless = false;
	uint64_t stamp;

	m.n_lines = 3;
	m.flags = CM_METHOD_NATIVE;
	assert_int_equal(cm_store__add(st, &m, lines, 100), 0);
	assert_int_equal(cm_store__count(st), 1);
	assert_int_equal(st->added, 1);
	assert_true(cm_store__bytes(st) > bytes);
	stamp = cm_store__stamp(st);
	assert_int_not_equal(stamp, 0);

	v = cm_store__get(st, 0x1000, 0, &timeless);
	assert_non_null(v);
	assert_true(timeless);
	assert_int_equal(v->method, 0x1000);
	assert_int_equal(v->const_method, 0x1100);
	assert_string_equal(v->klass, "a.B");
	assert_string_equal(v->source, "B.java");
	assert_string_equal(v->name, "run");
	assert_string_equal(v->signature, "()V");
	assert_int_equal(v->modifiers, 9);
	assert_int_equal(v->flags, CM_METHOD_NATIVE);
	/* its lines sorted by bci */
	assert_int_equal(v->n_lines, 3);
	assert_int_equal(v->lines[0].bci, 0);
	assert_int_equal(v->lines[1].bci, 8);
	assert_int_equal(v->lines[2].bci, 20);
	assert_int_equal(codemap_method__line(v, 9), 11);
	assert_int_equal(codemap_method__line(v, 100), 12);
	/* the same method gives the same pointer, at any time */
	w = cm_store__get(st, 0x1000, 5, NULL);
	assert_ptr_equal(v, w);
	assert_ptr_equal(cm_store__at(st, 0), v);
	assert_null(cm_store__get(st, 0x2000, 0, &timeless));
	assert_false(timeless);

	/* a ConstMethod* far from its Method* is kept whole */
	m = desc(st, 0x7f0000000000ull, "a.B", "B.java", "far");
	m.const_method = 0x1000;
	assert_int_equal(cm_store__add(st, &m, NULL, 100), 0);
	v = cm_store__get(st, 0x7f0000000000ull, 0, NULL);
	assert_non_null(v);
	assert_int_equal(v->const_method, 0x1000);
	assert_int_equal(v->n_lines, 0);
	assert_null(v->lines);
	assert_int_equal(codemap_method__line(v, 0), -1);
	assert_true(cm_store__stamp(st) != stamp);
}

static void test_versions(void **state)
{
	struct fx *fx = *state;
	struct cm_store *st = &fx->st;
	struct cm_mdesc a = desc(st, 0x1000, "a.A", "", "first");
	struct cm_mdesc b = desc(st, 0x1000, "b.B", "", "second");
	const struct codemap_method *v;
	bool timeless = true;
	uint64_t stamp;

	assert_int_equal(cm_store__add(st, &a, NULL, 100), 0);
	assert_int_equal(cm_store__add(st, &b, NULL, 200), 0);
	assert_int_equal(cm_store__count(st), 2);
	v = cm_store__get(st, 0x1000, 150, &timeless);
	assert_string_equal(v->name, "first");
	assert_false(timeless);
	assert_string_equal(cm_store__get(st, 0x1000, 250, NULL)->name,
			    "second");
	assert_string_equal(cm_store__get(st, 0x1000, 0, NULL)->name,
			    "second");
	/* before either: the first (its record came after a late attach) */
	assert_string_equal(cm_store__get(st, 0x1000, 50, NULL)->name,
			    "first");

	/* the same method again is not another one */
	stamp = cm_store__stamp(st);
	assert_int_equal(cm_store__add(st, &b, NULL, 300), 0);
	assert_int_equal(cm_store__count(st), 2);
	assert_int_equal(st->added, 2);
	assert_true(cm_store__stamp(st) != stamp);
}

static void test_reconcile_prune(void **state)
{
	struct fx *fx = *state;
	struct cm_store *st = &fx->st;
	struct cm_mdesc a = desc(st, 0x1000, "a.A", "", "kept");
	struct cm_mdesc b = desc(st, 0x2000, "a.A", "", "gone");
	const struct codemap_method *va;
	uint64_t stamp;

	assert_int_equal(cm_store__add(st, &a, NULL, 100), 0);
	assert_int_equal(cm_store__add(st, &b, NULL, 100), 0);
	va = cm_store__get(st, 0x1000, 0, NULL);
	assert_non_null(cm_store__get(st, 0x2000, 0, NULL));

	/* a new generation whose snapshot has a only */
	cm_store__unseen(st);
	assert_int_equal(cm_store__add(st, &a, NULL, 400), 0);
	assert_int_equal(cm_store__reconcile(st, 500), 0);
	assert_int_equal(cm_store__count(st), 2);
	/* dead at 500: kept until the retention frees it */
	assert_int_equal(cm_store__prune(st, 500), 0);
	assert_non_null(cm_store__get(st, 0x2000, 0, NULL));
	stamp = cm_store__stamp(st);
	assert_int_equal(cm_store__prune(st, 501), 1);
	assert_true(cm_store__stamp(st) != stamp);
	assert_int_equal(cm_store__count(st), 1);
	assert_null(cm_store__get(st, 0x2000, 0, NULL));
	/* what is kept keeps its view */
	assert_ptr_equal(cm_store__get(st, 0x1000, 0, NULL), va);
	assert_string_equal(va->name, "kept");
	assert_int_equal(cm_store__prune(st, 10000), 0);
}

static void test_caps(void **state)
{
	struct fx *fx = *state;
	struct cm_store *st = &fx->st;
	char name[32];

	fx->budget.lim.method_versions = 2;
	fx->budget.lim.methods = 3;
	for (int i = 0; i < 3; i++) {
		struct cm_mdesc m;

		snprintf(name, sizeof(name), "v%d", i);
		m = desc(st, 0x1000, "a.A", "", name);
		assert_int_equal(cm_store__add(st, &m, NULL, 100 + i), 0);
	}
	assert_int_equal(cm_store__count(st), 2);
	assert_int_equal(fx->budget.capped, 1);
	assert_string_equal(fx->budget.msg,
			    "2 methods at one Method* (0x1000)");
	assert_true(fx->budget.steps >= 2);
	for (int i = 0; i < 3; i++) {
		struct cm_mdesc m;

		snprintf(name, sizeof(name), "m%d", i);
		m = desc(st, 0x2000 + 0x100 * (uint64_t)i, "a.A", "", name);
		assert_int_equal(cm_store__add(st, &m, NULL, 100), 0);
	}
	assert_int_equal(cm_store__count(st), 3);
	assert_int_equal(fx->budget.capped, 3);
	/* the first cap hit stays named */
	assert_string_equal(fx->budget.msg,
			    "2 methods at one Method* (0x1000)");
}

/* iteration hands out views of a ring to methods not looked up */
static void test_iteration(void **state)
{
	struct fx *fx = *state;
	struct cm_store *st = &fx->st;
	const struct codemap_method *looked, *v;
	char name[32];

	for (int i = 0; i < 40; i++) {
		struct cm_mdesc m;

		snprintf(name, sizeof(name), "m%d", i);
		m = desc(st, 0x1000 + 0x100 * (uint64_t)i, "a.A", "", name);
		assert_int_equal(cm_store__add(st, &m, NULL, 100), 0);
	}
	looked = cm_store__get(st, 0x1000 + 0x100 * 7, 0, NULL);
	for (size_t i = 0; i < cm_store__count(st); i++) {
		v = cm_store__at(st, i);
		assert_non_null(v);
		snprintf(name, sizeof(name), "m%zu", i);
		assert_string_equal(v->name, name);
		if (i == 7)
			assert_ptr_equal(v, looked);
	}
	assert_null(cm_store__get(st, 0x99, 0, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_strings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_get, setup, teardown),
		cmocka_unit_test_setup_teardown(test_versions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reconcile_prune, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_caps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_iteration, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
