// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's code-map writer (agent/cmwriter.c, compiled in here) against
 * the reader (user/jvm/codemap.c): methods go in as version 3 records
 * (interned strings and classes, compact methods), the reader names them
 * as given; a compaction re-emits exactly the strings and classes of the
 * methods it keeps, under the same ids, and the reader follows it; a full
 * map drops whole batches, never a method without its strings.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmwriter.c"
#include "jvm/codemap.h"

/* agent/log.c's, quiet */
int agent_log_level;

void agent_log(int level, const char *fmt, ...)
{
	(void)level;
	(void)fmt;
}

static char tmpdir[] = "/tmp/test_cmwriter.XXXXXX";

static int u64_cmp_for_test(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}
static char path[PATH_MAX];

/* the writer's state is process-wide: a fresh one for each test */
static void w_open(uint64_t max)
{
	if (cur.base)
		gen_drop(&cur);
	live_free(&live);
	memset(&live, 0, sizeof(live));
	dropped_at_gen = 0;
	base_end = 0;
	state = 0;
	snprintf(path, sizeof(path), "%s/w.map", tmpdir);
	assert_int_equal(cmw__open(path, max), 0);
}

/* a class's methods: Method* base + 0x60 * i, names from names[] */
static void put_class(const char *klass, const char *src, uint64_t base,
		      size_t n, const char *const *names, const char *sig,
		      int force)
{
	static const struct cm_line lines[] = { { 0, 40 }, { 7, 41 },
						{ 3, 39 } };
	struct cmw_method ms[16];

	assert_true(n <= 16);
	for (size_t i = 0; i < n; i++) {
		ms[i] = (struct cmw_method){
			.method = base + 0x60 * i,
			.const_method = base + 0x60 * i - 0x1000,
			.modifiers = 9,
			.flags = i == 2 ? CM_METHOD_NATIVE : 0,
			.klass = klass, .source = src,
			.name = names[i], .sig = sig,
			.lines = i == 2 ? NULL : lines,
			.n_lines = i == 2 ? 0 : 3,
		};
	}
	cmw__append_methods(ms, n, force);
}

static void expect_method(const struct codemap *cm, uint64_t mp,
			  const char *klass, const char *name, const char *src)
{
	const struct codemap_method *m = codemap__method(cm, mp);

	assert_non_null(m);
	assert_string_equal(m->klass, klass);
	assert_string_equal(m->name, name);
	assert_string_equal(m->signature, "(I)I");
	assert_string_equal(m->source, src);
	assert_int_equal(m->const_method, mp - 0x1000);
	if (m->flags & CM_METHOD_NATIVE) {
		assert_int_equal(m->n_lines, 0);
	} else {
		assert_int_equal(m->n_lines, 3);
		assert_int_equal(codemap_method__line(m, 4), 39);
		assert_int_equal(codemap_method__line(m, 9), 41);
	}
}

static const char *const na[] = { "getName", "setName", "run", "opA" };
static const char *const nb[] = { "getName", "opB" };
static const char *const nd[] = { "opD" };

#define A	0x7f0000010000ull
#define B	0x7f0000020000ull
#define C	0x7f0000030000ull
#define D	0x7f0000040000ull

static void test_roundtrip_compact(void **state)
{
	struct cmw_compact_stats cs;
	struct codemap_stats st;
	struct codemap *cm = NULL, *fresh = NULL;
	uint64_t live_ms[8], mark, wp;
	char err[512];
	size_t n = 0;

	(void)state;
	w_open(8u << 20);
	put_class("p.A", "A.java", A, 4, na, "(I)I", 0);
	put_class("p.B", "B.java", B, 2, nb, "(I)I", 0);
	/* p.A of another class loader: the same class id */
	put_class("p.A", "A.java", C, 4, na, "(I)I", 0);
	/* known already: not written again */
	wp = cmw__pos();
	put_class("p.A", "A.java", A, 4, na, "(I)I", 0);
	assert_int_equal(cmw__pos(), wp);
	assert_true(cmw__method_known(A + 0x60));

	assert_int_equal(codemap__open(&cm, "/", path, err, sizeof(err)), 0);
	expect_method(cm, A, "p.A", "getName", "A.java");
	expect_method(cm, A + 0x60 * 2, "p.A", "run", "A.java");
	expect_method(cm, B + 0x60, "p.B", "opB", "B.java");
	expect_method(cm, C + 0x60 * 3, "p.A", "opA", "A.java");
	codemap__stats(cm, &st);
	assert_int_equal(st.methods, 10);
	/* p.A A.java getName setName run opA (I)I p.B B.java opB */
	assert_int_equal(st.strings, 10);
	assert_int_equal(st.classes, 2);
	/* ten methods in far less than a METHOD record each */
	print_message("10 methods, 2 classes: %llu bytes\n",
		      (unsigned long long)(wp - CM_HEADER_SIZE));
	assert_true(wp - CM_HEADER_SIZE < 10 * 64);

	/* p.B unloaded; D recorded after the enumeration's mark */
	mark = cmw__pos();
	put_class("p.D", NULL, D, 1, nd, "(I)I", 0);
	for (size_t i = 0; i < 4; i++) {
		live_ms[n++] = A + 0x60 * i;
		live_ms[n++] = C + 0x60 * i;
	}
	qsort(live_ms, n, sizeof(*live_ms), u64_cmp_for_test);
	assert_int_equal(cmw__compact(live_ms, n, mark, &cs), 0);
	assert_int_equal(cs.methods_kept, 9);
	assert_int_equal(cs.methods_dropped, 2);
	/* p.A A.java getName setName run opA (I)I p.D opD: not B.java, opB */
	assert_int_equal(cs.strings, 9);
	assert_int_equal(cs.classes, 2);

	/* the reader follows; p.B's methods die by the snapshot's time */
	assert_int_equal(codemap__update(cm), 0);
	codemap__stats(cm, &st);
	assert_int_equal(st.handovers, 1);
	expect_method(cm, A + 0x60 * 3, "p.A", "opA", "A.java");
	expect_method(cm, D, "p.D", "opD", "");
	assert_non_null(codemap__method(cm, B));	/* until pruned */
	codemap__prune(cm, UINT64_MAX);
	assert_null(codemap__method(cm, B));
	expect_method(cm, C, "p.A", "getName", "A.java");

	/* new methods in the new generation: old ids and new ones */
	put_class("p.B", "B.java", B + 0x100000, 2, nb, "(I)I", 0);
	assert_int_equal(codemap__update(cm), 0);
	expect_method(cm, B + 0x100000 + 0x60, "p.B", "opB", "B.java");
	expect_method(cm, B + 0x100000, "p.B", "getName", "B.java");

	/* a reader of the new generation alone sees the same */
	assert_int_equal(codemap__open(&fresh, "/", path, err, sizeof(err)), 0);
	expect_method(fresh, A, "p.A", "getName", "A.java");
	expect_method(fresh, D, "p.D", "opD", "");
	expect_method(fresh, B + 0x100000 + 0x60, "p.B", "opB", "B.java");
	assert_null(codemap__method(fresh, B));
	codemap__free(fresh);
	fresh = NULL;

	/* compacting again: what is listed, and nothing recorded before */
	n = 0;
	for (size_t i = 0; i < 4; i++) {
		live_ms[n++] = A + 0x60 * i;
		live_ms[n++] = C + 0x60 * i;
	}
	qsort(live_ms, n, sizeof(*live_ms), u64_cmp_for_test);
	assert_int_equal(cmw__compact(live_ms, n, cmw__pos(), &cs), 0);
	assert_int_equal(cs.methods_kept, 8);	/* D and new B: not listed */
	assert_int_equal(codemap__update(cm), 0);
	assert_int_equal(codemap__open(&fresh, "/", path, err, sizeof(err)), 0);
	codemap__stats(fresh, &st);
	assert_int_equal(st.methods, 8);
	assert_int_equal(st.classes, 1);
	assert_int_equal(st.strings, 7);	/* p.A A.java 4 names (I)I */
	codemap__free(fresh);
	codemap__free(cm);
	cmw__close();
}

/* Method* reused by another class (force): the reader keeps both, by time */
static void test_force(void **state)
{
	static const char *const n2[] = { "other" };
	struct codemap *cm = NULL;
	char err[512];

	(void)state;
	w_open(8u << 20);
	put_class("p.A", "A.java", A, 1, na, "(I)I", 0);
	put_class("q.Z", "Z.java", A, 1, n2, "(I)I", 1);
	assert_int_equal(codemap__open(&cm, "/", path, err, sizeof(err)), 0);
	assert_string_equal(codemap__method(cm, A)->klass, "q.Z");
	assert_int_equal(codemap__nmethods(cm), 2);
	codemap__free(cm);
	cmw__close();
}

/* the map fills: batches are dropped whole, the reader stays consistent */
static void test_full(void **state)
{
	const struct cm_file_header *h;
	struct codemap *cm = NULL;
	char err[512], klass[64], name[64];
	const char *names[4] = { name, "b", "c", "d" };
	size_t i;

	(void)state;
	w_open(CM_HEADER_SIZE + CHUNK);
	for (i = 0; i < 40000; i++) {
		snprintf(klass, sizeof(klass), "p.Class%zu", i);
		snprintf(name, sizeof(name), "method%zu", i);
		put_class(klass, "X.java", A + i * 0x1000, 4, names, "(I)I", 0);
	}
	h = cur.hdr;
	assert_true(h->dropped > 0);
	assert_true(h->flags & CM_F_FULL);
	assert_int_equal(codemap__open(&cm, "/", path, err, sizeof(err)), 0);
	assert_true(codemap__ok(cm));
	print_message("full at %zu methods of %zu\n", codemap__nmethods(cm),
		      i * 4);
	assert_true(codemap__nmethods(cm) > 1000);
	for (size_t j = 0; j < codemap__nmethods(cm); j++) {
		const struct codemap_method *m = codemap__method_at(cm, j);

		assert_non_null(m->klass);
		assert_non_null(m->name);
		assert_int_equal(strncmp(m->klass, "p.Class", 7), 0);
	}
	codemap__free(cm);
	cmw__close();
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	if (cur.base)
		gen_drop(&cur);
	live_free(&live);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_compact),
		cmocka_unit_test(test_force),
		cmocka_unit_test(test_full),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
