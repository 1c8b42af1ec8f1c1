// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The code map's tables alone (jvm/codemap_tables.h), with no file: the
 * records of an in-memory map applied one at a time, as codemap.c hands
 * them over, into blobs (their index and live table), stubs and threads,
 * and what a new generation's snapshot, the retention and a bad record
 * do to them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jvm/codemap_tables.h"

#include "codemap_mapw.h"

struct fx {
	struct cm_budget budget;
	struct cm_tables tb;
	struct mapw w;
	size_t applied;		/* offset in w of the next record to apply */
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	codemap__limits_default(&fx->budget.lim);
	cm_tables__init(&fx->tb, &fx->budget);
	w_init(&fx->w, 1);
	fx->applied = CM_HEADER_SIZE;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	cm_tables__free(&fx->tb);
	free(fx->w.buf);
	free(fx);
	return 0;
}

/* apply the records written since the last call; the first error */
static int apply(struct fx *fx)
{
	while (fx->applied < fx->w.len) {
		struct cm_rec_hdr h;
		int err;

		memcpy(&h, fx->w.buf + fx->applied, sizeof(h));
		err = cm_tables__apply(&fx->tb, fx->w.buf + fx->applied, h.len,
				       fx->applied);
		fx->applied += h.len;
		if (err)
			return err;
	}
	return cm_tables__index(&fx->tb);
}

static void code(struct fx *fx, uint64_t t, uint64_t start, uint64_t mp)
{
	static const uint64_t pool[1] = { 0x1000 };
	static const struct tpc pcs[2] = {
		{ 0x10, 1, { { 0, 5 } } },
		{ 0x30, 1, { { 0, 9 } } },
	};

	add_code(&fx->w, t, start, start + 0x100, mp, 4, 6, 1, pool, 2, pcs);
}

static void test_code(void **state)
{
	struct fx *fx = *state;
	struct cm_tables *tb = &fx->tb;
	const struct codemap_blob *b;
	const struct codemap_pcdesc *d;

	code(fx, 100, 0x7000000, 0x1000);
	/* the same nmethod reported twice is one blob */
	code(fx, 110, 0x7000000, 0x1000);
	assert_int_equal(apply(fx), 0);
	assert_int_equal(tb->nblobs, 1);
	assert_int_equal(tb->n.blobs, 1);

	b = cm_tables__find(tb, 0x7000050, 150);
	assert_non_null(b);
	assert_int_equal(b->type, CODEMAP_BLOB_CODE);
	assert_int_equal(b->method, 0x1000);
	assert_int_equal(b->load_ns, 100);
	assert_int_equal(b->unload_ns, UINT64_MAX);
	/* before its load: the earliest loaded after (loads come late) */
	assert_ptr_equal(cm_tables__find(tb, 0x7000050, 50), b);
	assert_ptr_equal(cm_tables__find(tb, 0x7000050, 0), b);
	assert_null(cm_tables__find(tb, 0x7000100, 150));
	d = codemap_blob__pcdesc(b, 0x7000011);
	assert_non_null(d);
	assert_int_equal(d->pc_off, 0x30);
	assert_int_equal(d->frames[0].bci, 9);

	/* unloaded at 200, its address reused at 300 */
	add_unload(&fx->w, 200, 0x7000000, 0x1000);
	code(fx, 300, 0x7000000, 0x2000);
	assert_int_equal(apply(fx), 0);
	assert_int_equal(tb->n.unloads, 1);
	assert_int_equal(tb->nblobs, 2);
	assert_int_equal(b->unload_ns, 200);
	assert_ptr_equal(cm_tables__find(tb, 0x7000050, 150), b);
	assert_int_equal(cm_tables__find(tb, 0x7000050, 350)->method, 0x2000);
	assert_int_equal(cm_tables__find(tb, 0x7000050, 0)->method, 0x2000);
	/* between the two: the later one (its load came late) */
	assert_int_equal(cm_tables__find(tb, 0x7000050, 250)->method, 0x2000);

	/* the retention frees the unloaded one; a time before what was
	 * freed finds nothing rather than a stranger */
	assert_int_equal(cm_tables__prune(tb, 250), 1);
	assert_int_equal(tb->nblobs, 1);
	assert_null(cm_tables__find(tb, 0x7000050, 150));
	assert_int_equal(cm_tables__find(tb, 0x7000050, 350)->method, 0x2000);
}

static void test_stubs(void **state)
{
	struct fx *fx = *state;
	struct cm_tables *tb = &fx->tb;
	const struct codemap_blob *b, *c;

	add_stub(&fx->w, 10, 0x7000000, 0x7000800, CM_STUB_INTERPRETER, -1,
		 "Interpreter");
	/* the same stub again (a snapshot, an enumeration) */
	add_stub(&fx->w, 20, 0x7000000, 0x7000800, CM_STUB_INTERPRETER, -1,
		 "Interpreter");
	assert_int_equal(apply(fx), 0);
	assert_int_equal(tb->nblobs, 1);
	assert_int_equal(tb->n.stubs, 1);
	b = cm_tables__find(tb, 0x7000400, 30);
	assert_non_null(b);
	assert_int_equal(b->type, CODEMAP_BLOB_STUB);
	assert_string_equal(b->name, "Interpreter");

	/* another stub over the same range: the old one's code is gone */
	add_stub(&fx->w, 40, 0x7000000, 0x7000800, CM_STUB_RUNTIME, -1,
		 "other");
	assert_int_equal(apply(fx), 0);
	assert_int_equal(tb->nblobs, 2);
	assert_int_equal(b->unload_ns, 40);
	c = cm_tables__find(tb, 0x7000400, 50);
	assert_string_equal(c->name, "other");
	assert_ptr_equal(cm_tables__find(tb, 0x7000400, 30), b);
}

struct told {
	int alive, ended;
	char last[32];
};

static void on_thread(void *ctx, const struct codemap_thread *th, bool alive)
{
	struct told *t = ctx;

	if (alive)
		t->alive++;
	else
		t->ended++;
	snprintf(t->last, sizeof(t->last), "%s", th->name);
}

static void test_threads(void **state)
{
	struct fx *fx = *state;
	struct cm_tables *tb = &fx->tb;
	const struct codemap_thread *th;
	struct told told = { 0 };

	add_thread(&fx->w, 100, 7, 0xa000, 0, "main");
	assert_int_equal(apply(fx), 0);
	/* told at once of the threads read before */
	cm_tables__set_thread_cb(tb, on_thread, &told);
	assert_int_equal(told.alive, 1);

	/* reported again (enumerated, then its ThreadStart): one thread,
	 * its latest name */
	add_thread(&fx->w, 110, 7, 0xa000, 0, "main-2");
	add_thread(&fx->w, 120, 8, 0xb000, CM_THREAD_DAEMON, "gc");
	assert_int_equal(apply(fx), 0);
	assert_int_equal(tb->nthreads, 2);
	assert_int_equal(tb->nlive, 2);
	assert_int_equal(told.alive, 3);
	th = cm_tables__thread(tb, 7, 150);
	assert_non_null(th);
	assert_string_equal(th->name, "main-2");
	assert_int_equal(th->java_thread, 0xa000);

	add_thread(&fx->w, 200, 7, 0xa000, CM_THREAD_END, "main-2");
	assert_int_equal(apply(fx), 0);
	assert_int_equal(told.ended, 1);
	assert_int_equal(tb->nlive, 1);
	assert_ptr_equal(cm_tables__thread(tb, 7, 150), th);
	assert_int_equal(th->end_ns, 200);
	assert_null(cm_tables__thread(tb, 7, 250));
	assert_null(cm_tables__thread(tb, 7, 0));
	assert_non_null(cm_tables__thread(tb, 8, 0));
	/* before its start: the one started after (its start came late) */
	assert_ptr_equal(cm_tables__thread(tb, 7, 50), th);
	assert_null(cm_tables__thread(tb, 9, 150));

	assert_int_equal(cm_tables__prune(tb, 300), 1);
	assert_int_equal(tb->nthreads, 1);
	assert_null(cm_tables__thread(tb, 7, 150));
}

/* a new generation's snapshot: what it does not have died at its time */
static void test_generation(void **state)
{
	struct fx *fx = *state;
	struct cm_tables *tb = &fx->tb;
	static const struct cm_line line = { 0, 1 };
	struct told told = { 0 };
	const struct codemap_blob *kept, *gone;

	add_vm(&fx->w, 1, 17, "17.0.9+9");
	code(fx, 100, 0x7000000, 0x1000);
	code(fx, 100, 0x7100000, 0x2000);
	add_thread(&fx->w, 100, 7, 0xa000, 0, "main");
	add_thread(&fx->w, 100, 8, 0xb000, 0, "worker");
	add_method(&fx->w, 100, 0x1000, "a.A", "run", "()V", "A.java", 1,
		   &line);
	assert_int_equal(apply(fx), 0);
	assert_true(tb->have_vm);
	assert_int_equal(tb->jdk_major, 17);
	assert_string_equal(tb->vm_version, "17.0.9+9");
	assert_int_equal(cm_store__count(&tb->store), 1);
	assert_string_equal(cm_store__get(&tb->store, 0x1000, 0, NULL)->klass,
			    "a.A");
	cm_tables__set_thread_cb(tb, on_thread, &told);
	kept = cm_tables__find(tb, 0x7000010, 0);
	gone = cm_tables__find(tb, 0x7100010, 0);

	cm_tables__next_generation(tb);
	code(fx, 400, 0x7000000, 0x1000);
	add_thread(&fx->w, 400, 7, 0xa000, 0, "main");
	assert_int_equal(apply(fx), 0);
	assert_int_equal(tb->nblobs, 2);
	assert_int_equal(cm_tables__reconcile(tb, 500), 0);
	assert_int_equal(tb->n.reconciled, 2);
	assert_int_equal(kept->unload_ns, UINT64_MAX);
	assert_int_equal(gone->unload_ns, 500);
	assert_int_equal(told.ended, 1);
	assert_string_equal(told.last, "worker");
	assert_null(cm_tables__find(tb, 0x7100010, 0));
	assert_ptr_equal(cm_tables__find(tb, 0x7100010, 300), gone);
	/* the method the snapshot lacked dies too */
	assert_int_equal(cm_tables__prune(tb, 600), 3);
	assert_int_equal(cm_store__count(&tb->store), 0);
	assert_ptr_equal(cm_tables__find(tb, 0x7000010, 0), kept);
}

static void test_bad_records(void **state)
{
	struct fx *fx = *state;
	struct cm_tables *tb = &fx->tb;
	struct cm_rec_hdr h = rh(99, 1);
	size_t at;

	add_thread(&fx->w, 100, 7, 0xa000, 0, "main");
	assert_int_equal(apply(fx), 0);
	at = fx->w.len;
	w_begin(&fx->w, &h, sizeof(h));
	w_end(&fx->w);
	assert_int_equal(apply(fx), -EINVAL);
	assert_true(strstr(tb->why, "unknown record type 99") != NULL);
	{
		char want[64];

		snprintf(want, sizeof(want), "record at offset %zu: ", at);
		assert_int_equal(strncmp(tb->why, want, strlen(want)), 0);
	}
	add_thread(&fx->w, 100, 0, 0xa000, 0, "tid 0");
	assert_int_equal(apply(fx), -EINVAL);
	assert_true(strstr(tb->why, "THREAD record has tid 0") != NULL);
	/* nothing of a bad record is kept */
	assert_int_equal(tb->nthreads, 1);
}

static void test_caps(void **state)
{
	struct fx *fx = *state;
	struct cm_tables *tb = &fx->tb;

	fx->budget.lim.blobs_at_start = 2;
	fx->budget.lim.live_threads = 1;
	code(fx, 100, 0x7000000, 0x1000);
	code(fx, 110, 0x7000000, 0x2000);
	code(fx, 120, 0x7000000, 0x3000);
	add_thread(&fx->w, 100, 7, 0xa000, 0, "main");
	add_thread(&fx->w, 100, 8, 0xb000, 0, "dropped");
	assert_int_equal(apply(fx), 0);
	assert_int_equal(tb->nblobs, 2);
	assert_int_equal(tb->nthreads, 1);
	assert_int_equal(fx->budget.capped, 2);
	assert_string_equal(fx->budget.msg,
			    "2 loaded code blobs at one address (0x7000000)");
	assert_true(cm_tables__bytes(tb) > 0);
}

/*
 * The stamp a memo of answers keeps (cm_tables__stamp): a record, a
 * prune that freed something and a new generation each make a new one;
 * the horizon is the newest record's time or the pruning's, whichever
 * is later. Lookups at two times past the horizon answer the same.
 */
static void test_stamp(void **state)
{
	struct fx *fx = *state;
	struct cm_tables *tb = &fx->tb;
	uint64_t h, s0, s1, s2, s3;

	s0 = cm_tables__stamp(tb, &h);
	assert_int_equal(h, 0);
	code(fx, 100, 0x7000000, 0x1000);
	assert_int_equal(apply(fx), 0);
	s1 = cm_tables__stamp(tb, &h);
	assert_true(s1 != s0);
	assert_int_equal(h, 100);
	assert_ptr_equal(cm_tables__find(tb, 0x7000050, 150),
			 cm_tables__find(tb, 0x7000050, 900));
	/* a record older than the newest: a new stamp, the same horizon */
	add_unload(&fx->w, 90, 0x7000000, 0x1000);
	assert_int_equal(apply(fx), 0);
	s2 = cm_tables__stamp(tb, &h);
	assert_true(s2 != s1);
	assert_int_equal(h, 100);
	/* a prune that frees nothing keeps the stamp, moves the horizon */
	assert_int_equal(cm_tables__prune(tb, 50), 0);
	assert_int_equal(cm_tables__stamp(tb, &h), s2);
	assert_int_equal(h, 100);
	assert_int_equal(cm_tables__prune(tb, 150), 1);
	s3 = cm_tables__stamp(tb, &h);
	assert_true(s3 != s2);
	assert_int_equal(h, 150);
	assert_int_equal(cm_tables__prune(tb, 400), 0);
	assert_int_equal(cm_tables__stamp(tb, &h), s3);
	assert_int_equal(h, 400);
	cm_tables__next_generation(tb);
	assert_true(cm_tables__stamp(tb, &h) != s3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_code, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stubs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_generation, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_records, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_caps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stamp, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
