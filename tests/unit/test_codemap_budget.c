// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Code-map budgets against forged maps, as a local user may write one for
 * a fake JVM (the recorder runs as root and reads every JVM's map on one
 * thread): the reader's work stays linear in the records (a count of the
 * chain links it walks, codemap_stats.steps), its memory under its cap
 * (codemap__mem_bytes), and one JVM's flood of threads does not take the
 * sampler's JavaThread entries of another (jthreads.c, against a fake
 * sampler map that evicts as an LRU would if it were ever overfilled).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "jvm/codemap.h"

#include "codemap_mapw.h"
/* ---- files --------------------------------------------------------------- */

static char tmpdir[] = "/tmp/test_codemap_budget.XXXXXX";

static void write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	close(fd);
}

static char *tpath(const char *name)
{
	static char buf[8][PATH_MAX];
	static int k;
	char *p = buf[k++ % 8];

	snprintf(p, PATH_MAX, "%s/%s", tmpdir, name);
	return p;
}

static int open_buf(struct codemap **cm, const struct mapw *w,
		    const char *name, char *err, size_t errlen)
{
	write_file(tpath(name), w->buf, w->len);
	return codemap__open(cm, "/", tpath(name), err, errlen);
}

#include "jvm/jthreads.h"
#include "capture/capture.h"
#include "util/u64map.h"

#define FLOOD		200000u

static const struct cm_line line = { 0, 1 };

static struct codemap *open_map(struct mapw *w, const char *name)
{
	struct codemap *cm = NULL;
	char err[600];

	assert_int_equal(open_buf(&cm, w, name, err, sizeof(err)), 0);
	return cm;
}

static void stats(const struct codemap *cm, struct codemap_stats *s)
{
	codemap__stats(cm, s);
}

/* how many records the reader keeps for tid */
static size_t records_of(const struct codemap *cm, uint32_t tid)
{
	size_t n = 0;

	for (size_t i = 0; i < codemap__nthreads(cm); i++)
		n += codemap__thread_at(cm, i)->tid == tid;
	return n;
}

/*
 * One tid: FLOOD threads that never end (each another JavaThread*), then
 * FLOOD ends of JavaThreads it never had, and FLOOD ends without a start
 * of another tid. Without a cap each end walks every record of its tid:
 * 4e10 steps.
 */
static void test_thread_chain(void **state)
{
	struct codemap_stats s;
	struct codemap *cm;
	struct mapw w;
	uint64_t t = 1000;

	(void)state;
	w_init(&w, 1);
	for (uint32_t i = 0; i < FLOOD; i++)
		add_thread(&w, t++, 77, 0x100000 + 8ull * i, 0, "a");
	for (uint32_t i = 0; i < FLOOD; i++)
		add_thread(&w, t++, 77, 0x900000000ull + 8ull * i,
			   CM_THREAD_END, "a");
	for (uint32_t i = 0; i < FLOOD; i++)
		add_thread(&w, t++, 78, 0x900000000ull + 8ull * i,
			   CM_THREAD_END, "b");
	/* a real thread beside them is still found */
	add_thread(&w, t++, 79, 0x5000, 0, "main");
	cm = open_map(&w, "chain.map");
	assert_true(codemap__ok(cm));
	stats(cm, &s);
	print_message("thread chain: %u records, %" PRIu64 " steps, %"
		      PRIu64 " capped: %s\n", 3 * FLOOD + 1, s.steps, s.capped,
		      codemap__capped(cm));
	assert_true(s.steps <= (uint64_t)3 * FLOOD * CODEMAP_MAX_TID_RECORDS);
	assert_int_equal(records_of(cm, 77), CODEMAP_MAX_TID_RECORDS);
	assert_int_equal(records_of(cm, 78), CODEMAP_MAX_TID_RECORDS);
	assert_int_equal(s.capped, 3 * FLOOD - 2 * CODEMAP_MAX_TID_RECORDS);
	assert_non_null(strstr(codemap__capped(cm), "thread records for one"));
	/* the per-sample lookup walks at most the cap */
	assert_non_null(codemap__thread(cm, 77, 0));
	assert_non_null(codemap__thread(cm, 77, 1));	/* the next started */
	assert_string_equal(codemap__thread(cm, 79, 0)->name, "main");
	codemap__free(cm);
	free(w.buf);
}

/* FLOOD threads of distinct tids that never end: at most the live cap */
static void test_live_threads(void **state)
{
	struct codemap_stats s;
	struct codemap *cm;
	struct mapw w;

	(void)state;
	w_init(&w, 1);
	for (uint32_t i = 0; i < FLOOD; i++)
		add_thread(&w, 1000 + i, 1000 + i, 0x100000 + 8ull * i, 0, "t");
	/* ends free room for as many again */
	for (uint32_t i = 0; i < 10; i++)
		add_thread(&w, 500000 + i, 1000 + i, 0x100000 + 8ull * i,
			   CM_THREAD_END, "t");
	for (uint32_t i = 0; i < 20; i++)
		add_thread(&w, 600000 + i, 900000 + i, 0x7000000 + 8ull * i, 0,
			   "late");
	cm = open_map(&w, "live.map");
	assert_true(codemap__ok(cm));
	stats(cm, &s);
	print_message("live threads: %u records, %zu kept, %" PRIu64
		      " capped, %zu bytes\n", FLOOD + 30, codemap__nthreads(cm),
		      s.capped, codemap__mem_bytes(cm));
	assert_int_equal(codemap__nthreads(cm), CODEMAP_MAX_LIVE_THREADS + 10);
	assert_int_equal(s.capped, FLOOD - CODEMAP_MAX_LIVE_THREADS + 10);
	assert_non_null(strstr(codemap__capped(cm), "65536 live threads"));
	assert_non_null(codemap__thread(cm, 900000, 0));
	assert_null(codemap__thread(cm, 900019, 0));
	codemap__free(cm);
	free(w.buf);
}

/*
 * Code: FLOOD blobs at one start (each another method, none unloaded),
 * then FLOOD unloads of a method none of them is, and FLOOD unloads of
 * addresses never loaded. Without a cap each unload walks every blob.
 */
static void test_unload_chain(void **state)
{
	static const struct tpc pc = { 0x10, 1, { { 0, 3 } } };
	struct codemap_stats s;
	struct codemap *cm;
	struct mapw w;
	uint64_t t = 1000;

	(void)state;
	w_init(&w, 1);
	add_vm(&w, 1, 21, "21");
	for (uint32_t i = 0; i < FLOOD; i++) {
		uint64_t mp = 0x200000 + 8ull * i;

		add_code(&w, t++, 0x7100000, 0x7100400, mp, 4, 8, 1, &mp, 1,
			 &pc);
	}
	for (uint32_t i = 0; i < FLOOD; i++)
		add_unload(&w, t++, 0x7100000, 0x1);
	for (uint32_t i = 0; i < FLOOD; i++)
		add_unload(&w, t++, 0x7200000 + 16ull * i, 0x1);
	cm = open_map(&w, "unload.map");
	assert_true(codemap__ok(cm));
	stats(cm, &s);
	print_message("unload chain: %u records, %" PRIu64 " steps, %"
		      PRIu64 " capped\n", 3 * FLOOD + 1, s.steps, s.capped);
	assert_int_equal(codemap__nblobs(cm), CODEMAP_MAX_BLOBS_AT_START);
	assert_int_equal(s.capped, FLOOD - CODEMAP_MAX_BLOBS_AT_START);
	assert_true(s.steps <= (uint64_t)3 * FLOOD * CODEMAP_MAX_BLOBS_AT_START);
	assert_non_null(strstr(codemap__capped(cm), "loaded code blobs"));
	assert_non_null(codemap__find(cm, 0x7100010, 0));
	codemap__free(cm);
	free(w.buf);
}

/*
 * Blobs piled over one pc: FLOOD/10 code blobs at distinct starts, each
 * reaching past the same pc. A lookup there would look at them all, at
 * every sample: it gives up past its budget (counted) and the pc is
 * unknown code, while a pc under few of them is still found.
 */
static void test_find_pileup(void **state)
{
	static const struct tpc pc = { 0x10, 1, { { 0, 3 } } };
	const uint32_t n = FLOOD / 10;
	const uint64_t base = 0x7100000, top = base + 16ull * n;
	struct codemap_stats s;
	struct codemap *cm;
	struct mapw w;

	(void)state;
	w_init(&w, 1);
	add_vm(&w, 1, 21, "21");
	for (uint32_t i = 0; i < n; i++) {
		uint64_t mp = 0x200000 + 8ull * i;

		add_code(&w, 1000 + i, base + 16ull * i, top + 0x100, mp, 4, 8,
			 1, &mp, 1, &pc);
	}
	cm = open_map(&w, "pileup.map");
	assert_true(codemap__ok(cm));
	for (int k = 0; k < 1000; k++)
		assert_null(codemap__find(cm, top, 0));
	assert_non_null(codemap__find(cm, base + 16 * 10, 0));
	assert_int_equal(codemap__find(cm, base + 16 * 10, 0)->start,
			 base + 16 * 10);
	stats(cm, &s);
	print_message("pile-up: %u blobs over one pc, %" PRIu64
		      " lookups cut\n", n, s.find_cut);
	assert_int_equal(s.find_cut, 1000);
	codemap__free(cm);
	free(w.buf);
}

/* methods at one Method*: FLOOD versions, each another name */
static void test_method_versions(void **state)
{
	struct codemap_stats s;
	struct codemap *cm;
	struct mapw w;
	char name[32];

	(void)state;
	w_init(&w, 1);
	for (uint32_t i = 0; i < FLOOD / 4; i++) {
		snprintf(name, sizeof(name), "m%u", i);
		add_method(&w, 1000 + i, 0x300000, "C", name, "()V", "", 1,
			   &line);
	}
	cm = open_map(&w, "versions.map");
	assert_true(codemap__ok(cm));
	stats(cm, &s);
	print_message("method versions: %u records, %" PRIu64 " steps, %"
		      PRIu64 " capped\n", FLOOD / 4, s.steps, s.capped);
	assert_int_equal(codemap__nmethods(cm), CODEMAP_MAX_METHOD_VERSIONS);
	assert_true(s.steps <= (uint64_t)FLOOD / 4 * CODEMAP_MAX_METHOD_VERSIONS);
	codemap__set_decode_time(cm, 1);
	assert_non_null(codemap__method(cm, 0x300000));
	codemap__free(cm);
	free(w.buf);
}

/*
 * Memory: methods of long distinct names, past a cap of 8 MiB (the
 * default's 256 MiB works the same): the map is refused once the reader
 * would hold more, never long after.
 */
static void test_memory_cap(void **state)
{
	struct codemap_limits lim;
	struct codemap *cm;
	struct mapw w;
	char name[2048];
	size_t peak = 0;

	(void)state;
	w_init(&w, 1);
	cm = open_map(&w, "mem.map");
	codemap__limits_default(&lim);
	lim.mem = 8u << 20;
	codemap__set_limits(cm, &lim);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	/* 64k methods, 2 KiB of its own name each: 128 MiB unbounded */
	for (uint32_t i = 0; i < 65536; i++) {
		snprintf(name, 16, "%015u", i);
		name[15] = 'x';
		add_method(&w, 1000 + i, 0x400000 + 64ull * i, "C", name,
			   "()V", "", 1, &line);
		if (i % 4096 == 4095) {
			write_file(tpath("mem.map"), w.buf, w.len);
			codemap__update(cm);
			if (codemap__mem_bytes(cm) > peak)
				peak = codemap__mem_bytes(cm);
		}
	}
	print_message("memory cap %zu: peak %zu bytes held, %s\n", lim.mem,
		      peak, codemap__error(cm) ? codemap__error(cm) : "ok");
	assert_false(codemap__ok(cm));
	assert_non_null(strstr(codemap__error(cm), "exceeds 8 MiB"));
	/* at most one record past the cap */
	assert_true(peak <= lim.mem + 64 * 1024);
	codemap__free(cm);
	free(w.buf);
}

/* ---- the sampler's JavaThread map, shared between JVMs ------------------ */

/*
 * A fake sampler map of FAKE_ENTRIES entries: when full it evicts the
 * least recently updated entry, as the LRU hash it once was would; the
 * budget's user-space accounting must never get it there.
 */
#define FAKE_ENTRIES	4096u

static struct {
	struct u64map m;	/* tgid << 32 | tid -> seq */
	uint64_t seq;
	uint64_t evicted, updates, deletes;
} fake;

int capture__set_jthread(struct capture *c, pid_t tgid, uint32_t ns_tid,
			 const struct asgst_jthread *v)
{
	uint64_t k = (uint64_t)tgid << 32 | ns_tid;

	(void)c;
	if (!v) {
		fake.deletes += u64map__del(&fake.m, k);
		return 0;
	}
	if (!u64map__get(&fake.m, k) && fake.m.n >= FAKE_ENTRIES) {
		uint64_t ok = 0, os = UINT64_MAX;

		for (size_t i = 0; i < fake.m.cap; i++)
			if (fake.m.vals[i] && fake.m.vals[i] < os) {
				os = fake.m.vals[i];
				ok = fake.m.keys[i];
			}
		u64map__del(&fake.m, ok);
		fake.evicted++;
	}
	fake.updates++;
	return u64map__put(&fake.m, k, ++fake.seq);
}

int capture__set_jvm_cont(struct capture *c, pid_t tgid,
			  const struct asgst_jvm_cont *v)
{
	(void)c;
	(void)tgid;
	(void)v;
	return 0;
}

static size_t fake_held(pid_t tgid)
{
	size_t n = 0;

	for (size_t i = 0; i < fake.m.cap; i++)
		n += fake.m.vals[i] && fake.m.keys[i] >> 32 == (uint64_t)tgid;
	return n;
}

/* a JVM's map of n live threads, tids from tid0 */
static struct codemap *jvm_map(const char *name, uint32_t tid0, uint32_t n,
			       struct mapw *w)
{
	w_init(w, 1);
	add_vm(w, 1, 21, "21");
	for (uint32_t i = 0; i < n; i++)
		add_thread(w, 1000 + i, tid0 + i, 0x100000 + 8ull * i, 0, "t");
	return open_map(w, name);
}

static void test_jthreads_share(void **state)
{
	struct codemap *small, *flood, *late;
	struct jthreads *js, *jf, *jl;
	struct jthreads_stats st;
	struct mapw ws, wf, wl;

	(void)state;
	memset(&fake, 0, sizeof(fake));
	jthreads__set_entries(FAKE_ENTRIES);
	/* a real JVM of 300 threads, then one that reports FLOOD threads */
	small = jvm_map("small.map", 100, 300, &ws);
	js = jthreads__new(NULL, 1001, small);
	assert_int_equal(fake_held(1001), 300);
	flood = jvm_map("flood.map", 100, FLOOD, &wf);
	jf = jthreads__new(NULL, 1002, flood);
	print_message("jthreads: flood holds %zu, small %zu, evicted %" PRIu64
		      "\n", fake_held(1002), fake_held(1001), fake.evicted);
	/* the flood never takes the small JVM's threads */
	assert_int_equal(fake_held(1001), 300);
	assert_int_equal(fake.evicted, 0);
	assert_true(fake_held(1002) <= FAKE_ENTRIES / 2);
	jthreads__stats(jf, &st);
	assert_true(st.refused >= CODEMAP_MAX_LIVE_THREADS - FAKE_ENTRIES / 2);
	assert_int_equal(st.held, fake_held(1002));
	/* a JVM that comes later gets its share back from the flood */
	late = jvm_map("late.map", 100, 1200, &wl);
	jl = jthreads__new(NULL, 1003, late);
	print_message("jthreads: late holds %zu, flood %zu, small %zu\n",
		      fake_held(1003), fake_held(1002), fake_held(1001));
	assert_int_equal(fake_held(1003), 1200);
	assert_int_equal(fake_held(1001), 300);
	assert_int_equal(fake.evicted, 0);
	assert_true(fake.m.n <= FAKE_ENTRIES);
	/* freeing a JVM's deletes its entries */
	jthreads__free(jf);
	assert_int_equal(fake_held(1002), 0);
	/* one that left the sampler's maps (capture__forget) deletes
	 * nothing more: its pid may be another process's now */
	jthreads__forget(js);
	jthreads__stats(NULL, &st);
	assert_int_equal(st.held, 1200);
	assert_int_equal(fake_held(1001), 300);
	u64map__put(&fake.m, 1001ull << 32 | 100, ++fake.seq);
	jthreads__free(js);
	assert_int_equal(fake_held(1001), 300);
	for (uint32_t i = 0; i < 300; i++)
		capture__set_jthread(NULL, 1001, 100 + i, NULL);
	jthreads__free(jl);
	assert_int_equal(fake.m.n, 0);
	jthreads__stats(NULL, &st);
	assert_int_equal(st.held, 0);
	codemap__free(small);
	codemap__free(flood);
	codemap__free(late);
	free(ws.buf);
	free(wf.buf);
	free(wl.buf);
	u64map__free(&fake.m);
	jthreads__set_entries(0);
}

/* the flood first, alone: it may take the map, and gives back a share */
static void test_jthreads_flood_first(void **state)
{
	struct codemap *small, *flood;
	struct jthreads *js, *jf;
	struct jthreads_stats st;
	struct mapw ws, wf;

	(void)state;
	memset(&fake, 0, sizeof(fake));
	jthreads__set_entries(FAKE_ENTRIES);
	flood = jvm_map("flood1.map", 100, 20000, &wf);
	jf = jthreads__new(NULL, 2002, flood);
	assert_int_equal(fake_held(2002), FAKE_ENTRIES);
	small = jvm_map("small1.map", 100, 300, &ws);
	js = jthreads__new(NULL, 2001, small);
	assert_int_equal(fake_held(2001), 300);
	assert_int_equal(fake_held(2002), FAKE_ENTRIES - 300);
	assert_int_equal(fake.evicted, 0);
	jthreads__stats(jf, &st);
	assert_int_equal(st.reclaimed, 300);
	jthreads__free(js);
	jthreads__free(jf);
	assert_int_equal(fake.m.n, 0);
	codemap__free(small);
	codemap__free(flood);
	free(ws.buf);
	free(wf.buf);
	u64map__free(&fake.m);
	jthreads__set_entries(0);
}

/*
 * `test_codemap_budget --write-seeds DIR`: a seed of fuzz_codemap past the
 * per-key caps (records of one tid, blobs at one start, methods at one
 * Method*), small enough for a fuzzer.
 */
static int write_seeds(const char *dir)
{
	static const struct tpc pc = { 0x10, 1, { { 0, 3 } } };
	struct mapw w;
	char path[PATH_MAX], name[16];
	uint64_t t = 100;
	FILE *f;

	w_init(&w, 1);
	add_vm(&w, 1, 21, "21");
	for (uint32_t i = 0; i < CODEMAP_MAX_TID_RECORDS + 6; i++)
		add_thread(&w, t++, 7, 0x1000 + 8ull * i, 0, "");
	for (uint32_t i = 0; i < 4; i++)
		add_thread(&w, t++, 7, 0x9000, CM_THREAD_END, "");
	for (uint32_t i = 0; i < CODEMAP_MAX_BLOBS_AT_START + 3; i++) {
		uint64_t mp = 0x20000 + 8ull * i;

		add_code(&w, t++, 0x7100000, 0x7100040, mp, 4, 8, 1, &mp, 1,
			 &pc);
	}
	add_unload(&w, t++, 0x7100000, 0x1);
	add_unload(&w, t++, 0x7100000, 0x20000);
	for (uint32_t i = 0; i < CODEMAP_MAX_METHOD_VERSIONS + 4; i++) {
		snprintf(name, sizeof(name), "m%u", i);
		add_method(&w, t++, 0x30000, "C", name, "()V", "", 1, &line);
	}
	snprintf(path, sizeof(path), "%s/caps.map", dir);
	f = fopen(path, "wb");
	if (!f || fwrite(w.buf, 1, w.len, f) != w.len || fclose(f)) {
		perror(path);
		return 1;
	}
	free(w.buf);
	return 0;
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
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) ? -1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_chain),
		cmocka_unit_test(test_live_threads),
		cmocka_unit_test(test_unload_chain),
		cmocka_unit_test(test_find_pileup),
		cmocka_unit_test(test_method_versions),
		cmocka_unit_test(test_memory_cap),
		cmocka_unit_test(test_jthreads_share),
		cmocka_unit_test(test_jthreads_flood_first),
	};

	if (argc == 3 && !strcmp(argv[1], "--write-seeds"))
		return write_seeds(argv[2]);
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);	/* a test by name */
	return cmocka_run_group_tests(tests, setup, teardown);
}
