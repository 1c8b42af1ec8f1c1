// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Code-map reader: maps built here by a small writer that appends records
 * in the exact format of agent/codemap_format.h, plus the real maps the
 * agent wrote (tests/data/codemaps/NAME.map).
 *
 * `test_codemap --write-seeds DIR` writes the fuzz seeds instead, and
 * `--write-gen-seeds DIR` those of fuzz_codemap_gen.
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "jvm/codemap.h"
#include "cli/commands.h"

#include "codemap_mapw.h"

/* ---- files --------------------------------------------------------------- */

static char tmpdir[] = "/tmp/test_codemap.XXXXXX";

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

/* a map with everything: methods with lines, inlined code, stubs, threads */
#define M_RUN		0x10000ull
#define M_FOO		0x10100ull
#define M_BAR		0x10200ull
#define M_NATIVE	0x10300ull

static void build_full(struct mapw *w, uint32_t pid)
{
	static const struct cm_line run_lines[] = { { 0, 10 }, { 5, 11 },
						    { 12, 14 } };
	/* deliberately unsorted: the reader sorts */
	static const struct cm_line foo_lines[] = { { 8, 21 }, { 0, 20 } };
	static const struct cm_line bar_lines[] = { { 0, 30 } };
	const uint64_t pool[] = { M_RUN, M_FOO, M_BAR };
	const struct tpc pcs[] = {
		{ 0x10, 1, { { 0, 0 } } },
		{ 0x1c, 2, { { 2, 12 }, { 1, 3 } } },
		{ 0x40, 3, { { 2, 1 }, { 1, 8 }, { 0, 5 } } },
	};

	w_init(w, pid);
	add_vm(w, 10, 17, "17.0.15+6-test");
	add_stub(w, 11, 0x7000000, 0x7000800, CM_STUB_INTERPRETER, -1,
		 "Interpreter");
	add_stub(w, 12, 0x7000800, 0x7000900, CM_STUB_CALL_STUB, 0,
		 "call_stub");
	add_method(w, 20, M_RUN, "java.lang.Thread", "run", "()V",
		   "Thread.java", 3, run_lines);
	add_method(w, 21, M_FOO, "com.example.Foo", "foo", "(I)I", "Foo.java",
		   2, foo_lines);
	add_method(w, 22, M_BAR, "com.example.Bar", "bar", "()J", "", 1,
		   bar_lines);
	add_code(w, 30, 0x7400000, 0x7400100, M_RUN, 4, 6, 3, pool, 3, pcs);
	add_thread(w, 40, 1234, 0xabc000, 0, "main");
	add_thread(w, 41, 1235, 0xabd000, CM_THREAD_DAEMON, "C2 CompilerThread0");
}

static void test_full_map(void **state)
{
	const struct codemap_method *m;
	const struct codemap_blob *b;
	const struct codemap_pcdesc *d;
	const struct codemap_thread *t;
	struct codemap_stats st;
	struct codemap *cm;
	struct mapw w;
	char err[600] = "";

	(void)state;
	build_full(&w, 77);
	assert_int_equal(open_buf(&cm, &w, "full.map", err, sizeof(err)), 0);
	assert_true(codemap__ok(cm));
	assert_null(codemap__error(cm));
	assert_int_equal(codemap__writer_pid(cm), 77);
	assert_int_equal(codemap__jdk_major(cm), 17);
	assert_string_equal(codemap__vm_version(cm), "17.0.15+6-test");
	assert_int_equal(codemap__vm(cm)->if_bcp, -8);
	assert_int_equal(codemap__vm(cm)->call_stub_return, 0x7000100);

	m = codemap__method(cm, M_RUN);
	assert_non_null(m);
	assert_string_equal(m->klass, "java.lang.Thread");
	assert_string_equal(m->name, "run");
	assert_string_equal(m->signature, "()V");
	assert_string_equal(m->source, "Thread.java");
	assert_int_equal(codemap_method__line(m, 0), 10);
	assert_int_equal(codemap_method__line(m, 4), 10);
	assert_int_equal(codemap_method__line(m, 5), 11);
	assert_int_equal(codemap_method__line(m, 11), 11);
	assert_int_equal(codemap_method__line(m, 12), 14);
	assert_int_equal(codemap_method__line(m, 1000), 14);
	assert_int_equal(codemap_method__line(m, -1), -1);
	m = codemap__method(cm, M_FOO);
	assert_int_equal(m->lines[0].bci, 0);	/* sorted */
	assert_int_equal(codemap_method__line(m, 7), 20);
	assert_int_equal(codemap_method__line(m, 8), 21);
	assert_string_equal(codemap__method(cm, M_BAR)->source, "");
	assert_null(codemap__method(cm, 0x999));

	b = codemap__find(cm, 0x7400050, 0);
	assert_non_null(b);
	assert_int_equal(b->type, CODEMAP_BLOB_CODE);
	assert_int_equal(b->method, M_RUN);
	assert_int_equal(b->comp_level, 4);
	assert_int_equal(b->frame_size, 6);
	assert_int_equal(b->frame_complete, 0x14);
	assert_int_equal(b->load_ns, 30);
	assert_true(b->unload_ns == UINT64_MAX);
	assert_ptr_equal(codemap__find(cm, 0x7400000, 31), b);
	assert_ptr_equal(codemap__find(cm, 0x74000ff, 0), b);
	assert_null(codemap__find(cm, 0x7400100, 0));
	assert_null(codemap__find(cm, 0x73fffff, 0));

	/* nearest pc descriptor at or after pc */
	d = codemap_blob__pcdesc(b, 0x7400000);
	assert_int_equal(d->pc_off, 0x10);
	d = codemap_blob__pcdesc(b, 0x7400010);
	assert_int_equal(d->pc_off, 0x10);
	d = codemap_blob__pcdesc(b, 0x7400011);
	assert_int_equal(d->pc_off, 0x1c);
	assert_int_equal(d->depth, 2);
	assert_int_equal(b->method_pool[d->frames[0].method_idx], M_BAR);
	assert_int_equal(d->frames[0].bci, 12);
	assert_int_equal(b->method_pool[d->frames[1].method_idx], M_FOO);
	d = codemap_blob__pcdesc(b, 0x7400030);
	assert_int_equal(d->pc_off, 0x40);
	assert_int_equal(d->depth, 3);
	assert_int_equal(b->method_pool[d->frames[2].method_idx], M_RUN);
	assert_null(codemap_blob__pcdesc(b, 0x7400041));
	assert_null(codemap_blob__pcdesc(b, 0x73fffff));

	b = codemap__find(cm, 0x7000880, 0);
	assert_non_null(b);
	assert_int_equal(b->type, CODEMAP_BLOB_STUB);
	assert_int_equal(b->kind, CM_STUB_CALL_STUB);
	assert_string_equal(b->name, "call_stub");
	b = codemap__find(cm, 0x7000100, 5);	/* before its record: later */
	assert_string_equal(b->name, "Interpreter");

	t = codemap__thread(cm, 1234, 0);
	assert_non_null(t);
	assert_string_equal(t->name, "main");
	assert_int_equal(t->java_thread, 0xabc000);
	t = codemap__thread(cm, 1235, 100);
	assert_string_equal(t->name, "C2 CompilerThread0");
	assert_int_equal(t->flags, CM_THREAD_DAEMON);
	assert_null(codemap__thread(cm, 9, 0));

	codemap__stats(cm, &st);
	assert_int_equal(st.records, 9);
	assert_int_equal(st.methods, 3);
	assert_int_equal(st.blobs, 1);
	assert_int_equal(st.stubs, 2);
	assert_int_equal(st.threads, 2);
	assert_int_equal(st.bytes, w.len);
	assert_int_equal(st.last_record_ns, 41);
	assert_int_equal(st.file_flags, CM_F_READY);
	assert_int_equal(codemap__nblobs(cm), 3);
	assert_int_equal(codemap__blob_at(cm, 0)->kind, CM_STUB_INTERPRETER);
	assert_int_equal(codemap__nmethods(cm), 3);
	assert_int_equal(codemap__nthreads(cm), 2);
	assert_null(codemap__blob_at(cm, 3));
	codemap__free(cm);
	free(w.buf);
}

/* the file grows while we read: only up to write_pos counts */
static void test_incremental(void **state)
{
	const uint64_t pool[] = { M_FOO };
	const struct tpc pcs[] = { { 0, 1, { { 0, 1 } } } };
	struct codemap_stats st;
	struct codemap *cm;
	struct mapw w;
	char err[600];
	size_t half;
	int fd;

	(void)state;
	build_full(&w, 5);
	half = w.len;
	for (int i = 0; i < 2000; i++)
		add_code(&w, 100 + i, 0x7500000 + i * 0x100,
			 0x7500000 + i * 0x100 + 0x80, M_FOO, 1, 4, 1, pool, 1,
			 pcs);
	/* the writer has written more than it published */
	w_hdr(&w)->write_pos = half;
	assert_int_equal(open_buf(&cm, &w, "incr.map", err, sizeof(err)), 0);
	codemap__stats(cm, &st);
	assert_int_equal(st.blobs, 1);
	assert_int_equal(st.bytes, half);
	assert_null(codemap__find(cm, 0x7500000, 0));

	/* publish, in two steps, the second ending mid-chunk */
	fd = open(tpath("incr.map"), O_WRONLY);
	assert_true(fd >= 0);
	/* a record boundary: all these records have the same size */
	size_t rl = (w.len - half) / 2000;
	uint64_t mid = half + rl * 777;
	assert_int_equal(pwrite(fd, &mid, 8,
				offsetof(struct cm_file_header, write_pos)), 8);
	assert_int_equal(codemap__update(cm), 0);
	codemap__stats(cm, &st);
	assert_int_equal(st.blobs, 1 + 777);
	assert_non_null(codemap__find(cm, 0x7500000 + 776 * 0x100, 0));
	assert_null(codemap__find(cm, 0x7500000 + 777 * 0x100, 0));
	assert_int_equal(codemap__update(cm), 0);	/* nothing new */
	codemap__stats(cm, &st);
	assert_int_equal(st.blobs, 1 + 777);

	/* grow the file past what we have (more records appended) */
	add_unload(&w, 5000, 0x7500000, M_FOO);
	add_thread(&w, 5001, 1234, 0xabc000, CM_THREAD_END, "main");
	assert_int_equal(pwrite(fd, w.buf + half, w.len - half, half),
			 (ssize_t)(w.len - half));
	assert_int_equal(pwrite(fd, &w_hdr(&w)->write_pos, 8,
				offsetof(struct cm_file_header, write_pos)), 8);
	assert_int_equal(codemap__update(cm), 0);
	codemap__stats(cm, &st);
	assert_int_equal(st.blobs, 2001);
	assert_int_equal(st.unloads, 1);
	assert_int_equal(st.bytes, w.len);
	assert_null(codemap__find(cm, 0x7500010, 0));	/* unloaded */
	assert_non_null(codemap__find(cm, 0x7500010, 4999));
	assert_non_null(codemap__find(cm, 0x7500000 + 1999 * 0x100 + 0x7f, 0));
	assert_null(codemap__thread(cm, 1234, 0));	/* ended */
	assert_string_equal(codemap__thread(cm, 1234, 4000)->name, "main");
	assert_int_equal(codemap__thread(cm, 1234, 4000)->end_ns, 5001);

	/* an appended bad record disables the map, with its offset */
	{
		struct cm_rec_hdr bad = { CM_REC_STUB, 3, 6000 };
		uint64_t wp = w.len + 16;
		char want[64];

		assert_int_equal(pwrite(fd, &bad, 16, w.len), 16);
		assert_int_equal(pwrite(fd, &wp, 8,
					offsetof(struct cm_file_header, write_pos)), 8);
		assert_int_equal(codemap__update(cm), -EINVAL);
		assert_false(codemap__ok(cm));
		snprintf(want, sizeof(want), "record at offset %zu has length 3",
			 w.len);
		assert_non_null(strstr(codemap__error(cm), want));
		assert_non_null(strstr(codemap__error(cm), "not a multiple of 8"));
		assert_null(strchr(codemap__error(cm), '\n'));
		assert_null(codemap__find(cm, 0x7400050, 0));
		assert_int_equal(codemap__update(cm), -EINVAL);	/* stays off */
	}
	close(fd);
	codemap__free(cm);
	free(w.buf);
}

/* the same addresses reused by several blobs over time */
static void test_reuse(void **state)
{
	const uint64_t pool[] = { M_FOO };
	const struct tpc pcs[] = { { 0x10, 1, { { 0, 2 } } } };
	const struct codemap_blob *b;
	struct codemap *cm;
	struct mapw w;
	char err[600];

	(void)state;
	w_init(&w, 1);
	add_vm(&w, 1, 25, "25");
	/* A [0x1000,0x1100) lives 100..200 */
	add_code(&w, 100, 0x1000, 0x1100, M_FOO, 3, 4, 1, pool, 1, pcs);
	/* D at another start, unrelated */
	add_code(&w, 110, 0x3000, 0x3100, M_BAR, 4, 5, 1, pool, 1, pcs);
	add_unload(&w, 200, 0x1000, M_FOO);
	/* B [0x1000,0x1080) and C [0x1080,0x1200) from 300 */
	add_code(&w, 300, 0x1000, 0x1080, M_BAR, 4, 8, 1, pool, 1, pcs);
	add_code(&w, 301, 0x1080, 0x1200, M_RUN, 4, 9, 1, pool, 1, pcs);
	/* two loaded at 0x2000 (an unload went missing); unload by method */
	add_code(&w, 400, 0x2000, 0x2100, M_FOO, 2, 3, 1, pool, 1, pcs);
	add_code(&w, 410, 0x2000, 0x2100, M_BAR, 4, 7, 1, pool, 1, pcs);
	add_unload(&w, 420, 0x2000, M_FOO);
	add_unload(&w, 430, 0x9000, 0);		/* never loaded: ignored */
	/* the same nmethod reported twice is one blob */
	add_code(&w, 500, 0x5000, 0x5100, M_FOO, 4, 3, 1, pool, 1, pcs);
	add_code(&w, 501, 0x5000, 0x5100, M_FOO, 4, 3, 1, pool, 1, pcs);
	add_unload(&w, 600, 0x5000, M_FOO);
	assert_int_equal(open_buf(&cm, &w, "reuse.map", err, sizeof(err)), 0);

	b = codemap__find(cm, 0x1050, 150);
	assert_int_equal(b->method, M_FOO);
	assert_int_equal(b->unload_ns, 200);
	assert_int_equal(codemap__find(cm, 0x10f0, 199)->method, M_FOO);
	/* between A's unload and B's load: the code loaded next */
	assert_int_equal(codemap__find(cm, 0x1050, 250)->method, M_BAR);
	assert_int_equal(codemap__find(cm, 0x1050, 0)->method, M_BAR);
	assert_int_equal(codemap__find(cm, 0x1050, 300)->method, M_BAR);
	assert_int_equal(codemap__find(cm, 0x10f0, 0)->method, M_RUN);
	assert_int_equal(codemap__find(cm, 0x10f0, 150)->method, M_FOO);
	assert_int_equal(codemap__find(cm, 0x11f0, 150)->method, M_RUN);
	assert_int_equal(codemap__find(cm, 0x10f0, 50)->method, M_FOO);
	assert_null(codemap__find(cm, 0x1200, 0));
	assert_int_equal(codemap__find(cm, 0x3050, 0)->method, M_BAR);

	assert_int_equal(codemap__nblobs(cm), 7);
	assert_null(codemap__find(cm, 0x5010, 0));
	assert_int_equal(codemap__find(cm, 0x5010, 550)->unload_ns, 600);
	b = codemap__find(cm, 0x2010, 0);
	assert_int_equal(b->method, M_BAR);
	assert_int_equal(codemap__find(cm, 0x2010, 405)->method, M_FOO);
	assert_int_equal(codemap__find(cm, 0x2010, 415)->method, M_BAR);
	assert_int_equal(codemap__find(cm, 0x2010, 425)->method, M_BAR);
	for (size_t i = 0; i < codemap__nblobs(cm); i++) {
		b = codemap__blob_at(cm, i);
		if (b->start == 0x2000 && b->method == M_FOO)
			assert_int_equal(b->unload_ns, 420);
		if (b->start == 0x2000 && b->method == M_BAR)
			assert_true(b->unload_ns == UINT64_MAX);
	}
	codemap__free(cm);
	free(w.buf);
}

static void test_threads(void **state)
{
	struct codemap *cm;
	struct mapw w;
	char err[600];

	(void)state;
	w_init(&w, 1);
	add_thread(&w, 100, 50, 0x1000, 0, "first");
	add_thread(&w, 200, 50, 0x1000, CM_THREAD_END, "first");
	add_thread(&w, 300, 50, 0x2000, CM_THREAD_CARRIER, "ForkJoinPool-1-worker-1");
	add_thread(&w, 50, 60, 0x3000, CM_THREAD_END, "attached-late");
	add_thread(&w, 10, 70, 0x4000, CM_THREAD_VIRTUAL, "");
	/* reported twice while alive: one thread, the latest name */
	add_thread(&w, 400, 80, 0x5000, 0, "Thread-0");
	add_thread(&w, 401, 80, 0x5000, 0, "renamed");
	assert_int_equal(open_buf(&cm, &w, "thr.map", err, sizeof(err)), 0);
	assert_null(codemap__vm(cm));
	assert_string_equal(codemap__thread(cm, 50, 150)->name, "first");
	assert_int_equal(codemap__thread(cm, 50, 150)->end_ns, 200);
	assert_string_equal(codemap__thread(cm, 50, 350)->name,
			    "ForkJoinPool-1-worker-1");
	assert_int_equal(codemap__thread(cm, 50, 0)->flags, CM_THREAD_CARRIER);
	/* between the two: the thread that started next */
	assert_string_equal(codemap__thread(cm, 50, 250)->name,
			    "ForkJoinPool-1-worker-1");
	assert_string_equal(codemap__thread(cm, 50, 50)->name, "first");
	assert_string_equal(codemap__thread(cm, 60, 40)->name, "attached-late");
	assert_null(codemap__thread(cm, 60, 0));
	assert_string_equal(codemap__thread(cm, 70, 0)->name, "");
	assert_string_equal(codemap__thread(cm, 80, 0)->name, "renamed");
	assert_int_equal(codemap__thread(cm, 80, 0)->start_ns, 400);
	assert_int_equal(codemap__nthreads(cm), 5);
	codemap__free(cm);
	free(w.buf);
}

/* a bigger map: memory stays within twice the map's size */
static void test_memory_bound(void **state)
{
	uint64_t pool[8];
	struct tpc pcs[16];
	struct codemap_stats st;
	struct codemap *cm;
	struct mapw w;
	char err[600], name[64], cls[64];
	size_t i;

	(void)state;
	w_init(&w, 1);
	add_vm(&w, 1, 17, "17");
	for (i = 0; i < 8; i++)
		pool[i] = 0x100000 + i * 0x40;
	for (i = 0; i < 16; i++) {
		pcs[i].off = (uint32_t)(i * 0x10);
		pcs[i].depth = 1 + i % 3;
		for (uint32_t j = 0; j < pcs[i].depth; j++)
			pcs[i].f[j] = (struct cm_frame){ (i + j) % 8, (int)i };
	}
	for (i = 0; i < 20000; i++) {
		struct cm_line l[4] = { { 0, 1 }, { 4, 2 }, { 9, 3 }, { 20, 4 } };

		snprintf(cls, sizeof(cls), "com.example.pkg%zu.Klass%zu", i % 50,
			 i / 7);
		snprintf(name, sizeof(name), "method%zu", i);
		add_method(&w, 2 + i, 0x200000 + i * 0x40, cls, name,
			   "(Ljava/lang/String;I)V", "Klass.java", 4, l);
		add_code(&w, 3 + i, 0x10000000 + i * 0x400,
			 0x10000000 + i * 0x400 + 0x300, 0x200000 + i * 0x40,
			 4, 6, 8, pool, 16, pcs);
		if (i % 3 == 0)
			add_unload(&w, 4 + i, 0x10000000 + i * 0x400, 0);
	}
	assert_int_equal(open_buf(&cm, &w, "big.map", err, sizeof(err)), 0);
	codemap__stats(cm, &st);
	assert_int_equal(st.blobs, 20000);
	assert_int_equal(st.methods, 20000);
	print_message("map %zu bytes, reader holds %zu bytes\n", w.len,
		      codemap__mem_bytes(cm));
	assert_true(codemap__mem_bytes(cm) <= 2 * w.len);
	for (i = 0; i < 20000; i += 97) {
		const struct codemap_blob *b =
			codemap__find(cm, 0x10000000 + i * 0x400 + 0x55, 0);

		if (i % 3 == 0) {
			assert_null(b);
			b = codemap__find(cm, 0x10000000 + i * 0x400 + 0x55,
					  3 + i);
		}
		assert_non_null(b);
		assert_int_equal(b->method, 0x200000 + i * 0x40);
		assert_int_equal(codemap_blob__pcdesc(b, b->start + 0x55)->pc_off,
				 0x60);
		assert_non_null(codemap__method(cm, b->method));
	}
	codemap__free(cm);
	free(w.buf);
}

/* ---- bad input ------------------------------------------------------------ */

static void expect_bad(const struct mapw *w, const char *name, int want_err,
		       const char *want_msg)
{
	struct codemap *cm = (void *)1;
	char err[600] = "";
	int ret = open_buf(&cm, w, name, err, sizeof(err));

	print_message("%s: %s\n", name, err);
	assert_int_equal(ret, want_err);
	assert_null(cm);
	assert_non_null(strstr(err, want_msg));
	assert_non_null(strstr(err, tpath(name)));
	assert_non_null(strstr(err, "will not be decoded"));
	assert_null(strchr(err, '\n'));
}

static void test_bad_header(void **state)
{
	struct mapw w;
	uint8_t garbage[8192];

	(void)state;
	for (size_t i = 0; i < sizeof(garbage); i++)
		garbage[i] = (uint8_t)(i * 131 + 7);
	w.buf = garbage;
	w.len = sizeof(garbage);
	expect_bad(&w, "garbage.map", -EINVAL, "bad magic");
	w.len = 100;
	expect_bad(&w, "short-garbage.map", -EINVAL, "bad magic");

	build_full(&w, 1);
	w_hdr(&w)->version = CM_VERSION + 1;
	expect_bad(&w, "version.map", -EPROTO, "format version 4");
	w_hdr(&w)->version = 0;
	expect_bad(&w, "version0.map", -EPROTO, "format version 0");
	w_hdr(&w)->version = CM_VERSION;
	w_hdr(&w)->header_size = 64;
	expect_bad(&w, "hsize.map", -EINVAL, "header_size 64");
	w_hdr(&w)->header_size = CM_HEADER_SIZE;
	w_hdr(&w)->flags = 0x100;
	expect_bad(&w, "flags.map", -EINVAL, "unknown header flags");
	w_hdr(&w)->flags = CM_F_READY;
	w_hdr(&w)->write_pos = 4097;
	expect_bad(&w, "wp.map", -EINVAL, "write_pos 4097");
	w_hdr(&w)->write_pos = w.len + 64;
	expect_bad(&w, "truncated.map", -EINVAL, "past the end");
	{
		/* truncated inside the header, magic intact: being created */
		struct mapw t = w;

		t.len = 40;
		expect_bad(&t, "created.map", -EAGAIN, "not initialised");
		t.len = 0;
		expect_bad(&t, "empty.map", -EAGAIN, "not initialised");
	}
	free(w.buf);
}

/* corrupt one field of the last record of a full map */
static void test_bad_records(void **state)
{
	struct mapw w;
	size_t at;
	struct cm_code *c;

	(void)state;
	/* length 3 */
	build_full(&w, 1);
	at = w.len;
	add_unload(&w, 9, 1, 1);
	((struct cm_rec_hdr *)(w.buf + at))->len = 3;
	expect_bad(&w, "len3.map", -EINVAL, "has length 3 (not a multiple of 8)");
	/* oversized length */
	((struct cm_rec_hdr *)(w.buf + at))->len = 1u << 30;
	expect_bad(&w, "lenbig.map", -EINVAL, "past write_pos");
	((struct cm_rec_hdr *)(w.buf + at))->len = 8;
	expect_bad(&w, "len8.map", -EINVAL, "shorter than 16");
	((struct cm_rec_hdr *)(w.buf + at))->len = 40;
	w_hdr(&w)->write_pos = w.len + 8;
	w_put(&w, "\0\0\0\0\0\0\0\0", 8);
	expect_bad(&w, "unload40.map", -EINVAL, "UNLOAD record has length 40");
	((struct cm_rec_hdr *)(w.buf + at))->len = 32;
	((struct cm_rec_hdr *)(w.buf + at))->type = 99;
	expect_bad(&w, "type.map", -EINVAL, "unknown record type 99");
	/* a record header cut by write_pos */
	((struct cm_rec_hdr *)(w.buf + at))->type = CM_REC_UNLOAD;
	w_hdr(&w)->write_pos = at + 8;
	expect_bad(&w, "cut.map", -EINVAL, "is cut by write_pos");
	free(w.buf);

	/* CODE record fields */
	build_full(&w, 1);
	for (at = CM_HEADER_SIZE; ((struct cm_rec_hdr *)(w.buf + at))->type !=
				  CM_REC_CODE;
	     at += ((struct cm_rec_hdr *)(w.buf + at))->len)
		;
	c = (struct cm_code *)(w.buf + at);
	c->n_pcs = 1000;
	expect_bad(&w, "npcs.map", -EINVAL, "n_pcs 1000");
	c->n_pcs = 3;
	c->n_methods = 0x20000000;
	expect_bad(&w, "nmeth.map", -EINVAL, "n_methods 536870912");
	c->n_methods = 3;
	{
		struct cm_frame *f = (struct cm_frame *)(w.buf + at +
							 sizeof(*c) + 24 + 8);

		f->method_idx = 3;
		expect_bad(&w, "midx.map", -EINVAL, "method_idx 3 of 3");
		f->method_idx = 0;
	}
	{
		struct cm_pcdesc *d = (struct cm_pcdesc *)(w.buf + at +
							    sizeof(*c) + 24);

		d->depth = 0;
		expect_bad(&w, "depth0.map", -EINVAL, "depth 0");
		d->depth = 50;
		expect_bad(&w, "depth50.map", -EINVAL, "overruns the record");
		d->depth = 1;
		d->pc_off = 0x1000;
		expect_bad(&w, "pcoff.map", -EINVAL, "past the code end");
		d->pc_off = 0x10;
	}
	c->end = c->start;
	expect_bad(&w, "range.map", -EINVAL, "has range");
	c->end = c->start + 0x100;
	c->comp_level = 9;
	expect_bad(&w, "level.map", -EINVAL, "comp_level 9");
	c->comp_level = 4;
	c->kind = 7;
	expect_bad(&w, "kind.map", -EINVAL, "kind 7");
	c->kind = CM_CODE_NMETHOD;
	c->frame_complete = 0x1000;
	expect_bad(&w, "fc.map", -EINVAL, "frame_complete");
	free(w.buf);

	/* strings overrunning records, unknown flags */
	w_init(&w, 1);
	at = w.len;
	add_stub(&w, 1, 0x100, 0x200, 0, 1, "x");
	*(uint16_t *)(w.buf + at + sizeof(struct cm_stub)) = 200;
	expect_bad(&w, "str.map", -EINVAL, "name overruns");
	free(w.buf);
	w_init(&w, 1);
	at = w.len;
	add_thread(&w, 1, 5, 0, 0x80, "t");
	expect_bad(&w, "tflags.map", -EINVAL, "unknown flags 0x80");
	free(w.buf);
	w_init(&w, 1);
	at = w.len;
	{
		struct cm_line l = { 0, 1 };

		add_method(&w, 1, 0x10, "K", "m", "()V", "K.java", 1, &l);
		((struct cm_method *)(w.buf + at))->n_lines = 400;
		expect_bad(&w, "nlines.map", -EINVAL, "n_lines 400");
		((struct cm_method *)(w.buf + at))->n_lines = 1;
		((struct cm_method *)(w.buf + at))->flags = 4;
		expect_bad(&w, "mflags.map", -EINVAL, "unknown flags 0x4");
	}
	free(w.buf);
	/* VM records: bad constants, a contradicting second one */
	w_init(&w, 1);
	at = w.len;
	add_vm(&w, 1, 17, "17");
	((struct cm_vm *)(w.buf + at))->c.jt_anchor = 1 << 20;
	expect_bad(&w, "vmconst.map", -EINVAL, "field offset out of range");
	free(w.buf);
}

static void test_second_vm(void **state)
{
	struct mapw w;
	struct codemap *cm;
	char err[600];
	size_t at;

	(void)state;
	w_init(&w, 1);
	add_vm(&w, 1, 17, "17");
	add_vm(&w, 2, 17, "17");	/* the same again: fine */
	assert_int_equal(open_buf(&cm, &w, "vmsame.map", err, sizeof(err)), 0);
	codemap__free(cm);
	at = w.len;
	add_vm(&w, 3, 17, "17");
	((struct cm_vm *)(w.buf + at))->c.jt_anchor = 600;
	expect_bad(&w, "vmdiff.map", -EINVAL, "second VM record differs");
	free(w.buf);
}

/* the JDK 25 layout the agent found on this machine (codemap PID prints it) */
static struct cm_cont cont_25(uint64_t t)
{
	struct cm_cont c = {
		.h = rh(CM_REC_CONT, t), .entry_cont = 16, .cont_tail = 32,
		.chunk_size = 12, .chunk_sp = 24, .chunk_argsize = -1,
		.chunk_bottom = 28, .chunk_stack = 48, .entry_size = 64,
		.oop_size = 4, .oop_shift = 3, .oop_base = 0, .chunk_parent = 40,
	};

	return c;
}

static void test_cont_record(void **state)
{
	struct cm_cont c = cont_25(5), bad;
	struct codemap *cm;
	struct mapw w;
	char err[600];
	size_t at;
	struct { const char *what; int32_t *field; int32_t v; } cases[] = {
		{ "tail out of the object", &bad.cont_tail, 4 },
		{ "neither bottom nor argsize", &bad.chunk_bottom, -1 },
		{ "both bottom and argsize", &bad.chunk_argsize, 20 },
		{ "stack offset misaligned", &bad.chunk_stack, 52 },
		{ "entry too small for _cont", &bad.entry_cont, 64 },
		{ "no parent field", &bad.chunk_parent, -1 },
	};

	(void)state;
	/* no CONT record: no layout (JDK 17, or the agent did not find it) */
	w_init(&w, 1);
	add_vm(&w, 1, 25, "25");
	assert_int_equal(open_buf(&cm, &w, "nocont.map", err, sizeof(err)), 0);
	assert_null(codemap__cont(cm));
	codemap__free(cm);
	w_begin(&w, &c, sizeof(c));
	w_end(&w);
	assert_int_equal(open_buf(&cm, &w, "cont.map", err, sizeof(err)), 0);
	assert_non_null(codemap__cont(cm));
	assert_int_equal(codemap__cont(cm)->entry_cont, 16);
	assert_int_equal(codemap__cont(cm)->chunk_bottom, 28);
	assert_int_equal(codemap__cont(cm)->oop_shift, 3);
	codemap__free(cm);
	/* the same again is fine; a different one is not */
	at = w.len;
	w_begin(&w, &c, sizeof(c));
	w_end(&w);
	assert_int_equal(open_buf(&cm, &w, "cont2.map", err, sizeof(err)), 0);
	codemap__free(cm);
	((struct cm_cont *)(w.buf + at))->chunk_sp = 20;
	expect_bad(&w, "contdiff.map", -EINVAL, "second CONT record differs");
	free(w.buf);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		w_init(&w, 1);
		add_vm(&w, 1, 25, "25");
		bad = c;
		at = w.len;
		w_begin(&w, &bad, sizeof(bad));
		w_end(&w);
		/* the same field in the copy inside the map */
		*(int32_t *)(w.buf + at + ((char *)cases[i].field -
					   (char *)&bad)) = cases[i].v;
		expect_bad(&w, "contbad.map", -EINVAL, "implausible layout");
		free(w.buf);
	}
}

static void test_oversized_file(void **state)
{
	struct mapw w;
	struct codemap *cm = NULL;
	char err[600];
	int fd;

	(void)state;
	build_full(&w, 1);
	write_file(tpath("huge.map"), w.buf, w.len);
	fd = open(tpath("huge.map"), O_WRONLY);
	assert_int_equal(ftruncate(fd, (off_t)(257ull << 20)), 0);	/* sparse */
	close(fd);
	assert_int_equal(codemap__open(&cm, "/", tpath("huge.map"), err,
				       sizeof(err)), -EFBIG);
	assert_null(cm);
	assert_non_null(strstr(err, "256 MiB limit"));
	unlink(tpath("huge.map"));
	free(w.buf);
}

static void test_links_and_types(void **state)
{
	struct codemap *cm = NULL;
	struct mapw w;
	char err[600], root[PATH_MAX], outside[PATH_MAX];
	int ret;

	(void)state;
	build_full(&w, 1);
	write_file(tpath("real.map"), w.buf, w.len);

	/* the final component a symlink: refused, even to a good map */
	assert_int_equal(symlink(tpath("real.map"), tpath("link.map")), 0);
	ret = codemap__open(&cm, "/", tpath("link.map"), err, sizeof(err));
	print_message("%s\n", err);
	assert_int_equal(ret, -ELOOP);
	assert_null(cm);
	assert_non_null(strstr(err, "symbolic link"));
	assert_null(strchr(err, '\n'));

	/* a root with dev/shm -> a directory outside it holding a good map */
	snprintf(root, sizeof(root), "%s/root", tmpdir);
	snprintf(outside, sizeof(outside), "%s/outside", tmpdir);
	assert_int_equal(mkdir(root, 0755), 0);
	assert_int_equal(mkdir(outside, 0755), 0);
	assert_int_equal(mkdir(tpath("root/dev"), 0755), 0);
	write_file(tpath("outside/asgst-1.map"), w.buf, w.len);
	assert_int_equal(symlink(outside, tpath("root/dev/shm")), 0);
	ret = codemap__open(&cm, root, "/dev/shm/asgst-1.map", err, sizeof(err));
	print_message("%s\n", err);
	assert_true(ret < 0);
	assert_null(cm);
	/* relative escape too */
	assert_int_equal(symlink("../../outside", tpath("root/dev/up")), 0);
	ret = codemap__open(&cm, root, "dev/up/asgst-1.map", err, sizeof(err));
	assert_true(ret < 0);
	assert_null(cm);
	ret = codemap__open(&cm, root, "../outside/asgst-1.map", err,
			    sizeof(err));
	assert_true(ret < 0);
	assert_null(cm);
	/* a symlink that stays inside the root is followed */
	assert_int_equal(mkdir(tpath("root/run"), 0755), 0);
	write_file(tpath("root/run/asgst-1.map"), w.buf, w.len);
	assert_int_equal(symlink("/run", tpath("root/dev/shm2")), 0);
	ret = codemap__open(&cm, root, "/dev/shm2/asgst-1.map", err, sizeof(err));
	assert_int_equal(ret, 0);
	assert_int_equal(codemap__nmethods(cm), 3);
	codemap__free(cm);
	cm = NULL;

	/* not regular files */
	assert_int_equal(mkfifo(tpath("fifo.map"), 0644), 0);
	ret = codemap__open(&cm, "/", tpath("fifo.map"), err, sizeof(err));
	assert_int_equal(ret, -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	ret = codemap__open(&cm, "/", tmpdir, err, sizeof(err));
	assert_int_equal(ret, -EINVAL);
	ret = codemap__open(&cm, "/", "/dev/null", err, sizeof(err));
	assert_int_equal(ret, -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	/* a hard link to something else */
	assert_int_equal(link(tpath("real.map"), tpath("hard.map")), 0);
	ret = codemap__open(&cm, "/", tpath("hard.map"), err, sizeof(err));
	assert_int_equal(ret, -EINVAL);
	assert_non_null(strstr(err, "hard links"));
	unlink(tpath("hard.map"));
	/* missing */
	ret = codemap__open(&cm, "/", tpath("nope.map"), err, sizeof(err));
	assert_int_equal(ret, -ENOENT);
	assert_non_null(strstr(err, "does not exist"));
	assert_null(cm);
	free(w.buf);
}

/* /proc/PID/root + NStgid, with our own pid */
static void test_open_pid(void **state)
{
	struct codemap *cm = NULL;
	struct mapw w;
	char err[600], path[96];
	struct stat ns;
	pid_t nspid;
	void *m;
	int ret, fd;

	(void)state;
	assert_int_equal(codemap__nspid(getpid(), &nspid), 0);
	assert_true(nspid > 0);
	assert_int_equal(stat("/proc/self/ns/pid", &ns), 0);
	snprintf(path, sizeof(path), CM_PATH_NS_FMT, (int)nspid,
		 (unsigned long long)ns.st_ino);
	if (access("/dev/shm", W_OK)) {
		skip();
		return;
	}
	build_full(&w, (uint32_t)nspid);
	write_file(path, w.buf, w.len);
	/* not mapped by the process (as the agent maps its map): not its
	 * map, or not yet; looked at again */
	ret = codemap__open_pid(&cm, getpid(), err, sizeof(err));
	print_message("%s\n", err);
	assert_int_equal(ret, -EAGAIN);
	assert_null(cm);
	assert_non_null(strstr(err, "not mapped by the JVM"));
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	close(fd);
	ret = codemap__open_pid(&cm, getpid(), err, sizeof(err));
	assert_int_equal(ret, 0);
	assert_int_equal(codemap__writer_pid(cm), nspid);
	assert_non_null(strstr(codemap__path(cm), "/proc/"));
	codemap__free(cm);
	cm = NULL;
	/* left by another (dead) process (the same inode rewritten) */
	w_hdr(&w)->writer_pid = (uint32_t)nspid + 100000;
	write_file(path, w.buf, w.len);
	ret = codemap__open_pid(&cm, getpid(), err, sizeof(err));
	print_message("%s\n", err);
	assert_int_equal(ret, -ESTALE);
	assert_null(cm);
	assert_non_null(strstr(err, "stale"));
	munmap(m, 4096);
	unlink(path);
	ret = codemap__open_pid(&cm, getpid(), err, sizeof(err));
	assert_int_equal(ret, -ENOENT);
	snprintf(path, sizeof(path), "pid %d", (int)getpid());
	assert_non_null(strstr(err, path));
	/* the older name, by the pid alone, is still read */
	snprintf(path, sizeof(path), CM_PATH_FMT, (int)nspid);
	w_hdr(&w)->writer_pid = (uint32_t)nspid;
	write_file(path, w.buf, w.len);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	close(fd);
	ret = codemap__open_pid(&cm, getpid(), err, sizeof(err));
	assert_int_equal(ret, 0);
	codemap__free(cm);
	cm = NULL;
	munmap(m, 4096);
	unlink(path);
	/* a pid that does not exist */
	ret = codemap__open_pid(&cm, 0x3ffffff0, err, sizeof(err));
	assert_int_equal(ret, -ESRCH);
	assert_non_null(strstr(err, "process gone"));
	free(w.buf);
}

/* ---- real maps written by the agent -------------------------------------- */

static void check_real(const char *path)
{
	struct codemap *cm = NULL;
	struct codemap_stats st;
	char err[600];
	size_t resolved = 0, frames = 0, lines = 0, code = 0, inlined = 0;
	struct stat sb;

	assert_int_equal(stat(path, &sb), 0);
	if (codemap__open(&cm, ".", path, err, sizeof(err)))
		fail_msg("%s", err);
	codemap__stats(cm, &st);
	print_message("%s: %" PRIu64 " records, %" PRIu64 " methods, %" PRIu64
		      " code, %" PRIu64 " stubs, %" PRIu64 " threads, jdk %u (%s), "
		      "reader %zu bytes for %" PRIu64 "\n", path, st.records,
		      st.methods, st.blobs, st.stubs, st.threads,
		      codemap__jdk_major(cm), codemap__vm_version(cm),
		      codemap__mem_bytes(cm), st.bytes);
	assert_non_null(codemap__vm(cm));
	assert_true(codemap__jdk_major(cm) >= 17);
	assert_true(st.methods > 0);
	assert_true(st.stubs > 0);
	assert_true(st.threads > 0);
	for (size_t i = 0; i < codemap__nblobs(cm); i++) {
		const struct codemap_blob *b = codemap__blob_at(cm, i), *f;

		f = codemap__find(cm, b->start, b->load_ns);
		assert_non_null(f);
		assert_true(f->start <= b->start && b->start < f->end);
		if (b->type != CODEMAP_BLOB_CODE)
			continue;
		code++;
		assert_true(b->comp_level >= -1 && b->comp_level <= 4);
		for (uint32_t j = 0; j < b->n_pcs; j++) {
			const struct codemap_pcdesc *d = &b->pcs[j];

			assert_ptr_equal(codemap_blob__pcdesc(b, b->start + d->pc_off)->pc_off,
					 d->pc_off);
			for (uint32_t k = 0; k < d->depth; k++) {
				const struct codemap_method *m = codemap__method(
					cm, b->method_pool[d->frames[k].method_idx]);

				frames++;
				/* the workload's call structure: inner inlined into middle */
				if (k == 0 && d->depth >= 2 && m &&
				    !strcmp(m->klass, "Loop") &&
				    !strcmp(m->name, "inner")) {
					const struct codemap_method *c = codemap__method(
						cm, b->method_pool[d->frames[1].method_idx]);

					if (c && !strcmp(c->name, "middle") &&
					    b->comp_level == 4 &&
					    codemap_method__line(c, d->frames[1].bci) > 0)
						inlined++;
				}
				if (m) {
					resolved++;
					if (codemap_method__line(m, d->frames[k].bci) > 0)
						lines++;
				}
			}
		}
	}
	print_message("  %zu code blobs; %zu inline frames, %zu with a method, %zu with a line; Loop.inner inlined in C2 Loop.middle at %zu pcs\n",
		      code, frames, resolved, lines, inlined);
	if (strstr(path, "-loop."))	/* tests/data/codemaps/README */
		assert_true(inlined > 0);
	assert_true(code > 0);
	assert_true(codemap__mem_bytes(cm) <= 2 * st.bytes + (256 << 10));
	if (frames)
		assert_true(resolved * 2 >= frames);
	codemap__free(cm);
}

static void test_real_maps(void **state)
{
	const char *dir = "tests/data/codemaps";
	struct dirent *e;
	DIR *d;
	int n = 0;

	(void)state;
	d = opendir(dir);
	if (!d) {
		print_message("no %s (run from the top directory)\n", dir);
		skip();
		return;
	}
	while ((e = readdir(d))) {
		char p[PATH_MAX];
		size_t l = strlen(e->d_name);

		if (l < 5 || strcmp(e->d_name + l - 4, ".map"))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		check_real(p);
		n++;
	}
	closedir(d);
	if (!n)
		skip();
}

/* ---- the codemap command ------------------------------------------------- */

static char *run_cmd(int *rc, const char *a1, const char *a2)
{
	char *argv[] = { "codemap", (char *)a1, (char *)a2, NULL };
	static char out[1 << 16];
	int fd, saved;
	ssize_t n;

	fflush(stdout);
	saved = dup(1);
	fd = open(tpath("cmd.out"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0 && saved >= 0);
	dup2(fd, 1);
	*rc = cmd_codemap(a2 ? 3 : 2, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	n = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	assert_true(n >= 0);
	out[n] = '\0';
	return out;
}

static void test_cmd_codemap(void **state)
{
	struct mapw w;
	char *out, want[256];
	int rc;

	(void)state;
	build_full(&w, 77);
	add_unload(&w, 50, 0x7400000, M_RUN);
	add_thread(&w, 51, 1234, 0xabc000, CM_THREAD_END, "main");
	add_thread(&w, 52, 99, 0, CM_THREAD_VIRTUAL, "a \"quoted\"\nname");
	write_file(tpath("cmd.map"), w.buf, w.len);
	out = run_cmd(&rc, tpath("cmd.map"), NULL);
	assert_int_equal(rc, 0);
	snprintf(want, sizeof(want), "codemap %s\n", tpath("cmd.map"));
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "\nheader version=3 header_size=4096 writer_pid=77 flags=0x1(ready) "));
	assert_non_null(strstr(out, "\nvm jdk=17 version=\"17.0.15+6-test\"\n"));
	assert_non_null(strstr(out, "\nconst if_bcp -8\n"));
	assert_non_null(strstr(out, "\nconst call_stub_return 0x7000100\n"));
	assert_non_null(strstr(out, "\nmethod 0x10000 java.lang.Thread run ()V Thread.java lines=3 "));
	assert_non_null(strstr(out, "\nmethod 0x10200 com.example.Bar bar ()J - lines=1 "));
	assert_non_null(strstr(out, "\ncode 0x7400000-0x7400100 level=4 frame=6 complete=0x14 method=0x10000 java.lang.Thread.run pcs=3 kind=nmethod "));
	assert_non_null(strstr(out, " load=30 unload=50\n"));
	assert_non_null(strstr(out, "\n  pc +0x1c: com.example.Bar.bar@12 <- com.example.Foo.foo@3\n"));
	assert_non_null(strstr(out, "\nstub 0x7000800-0x7000900 \"call_stub\" kind=call_stub frame=0 "));
	assert_non_null(strstr(out, "\nthread 1234 \"main\" jt=0xabc000 start=40 end=51 flags=platform\n"));
	/* a hostile name stays on its line */
	assert_non_null(strstr(out, "\nthread 99 \"a \\x22quoted\\x22\\x0aname\" jt=0x0 start=52 end=- flags=virtual\n"));
	assert_non_null(strstr(out, "\nsummary records=12 bytes="));
	assert_non_null(strstr(out, " status=ok\n"));

	out = run_cmd(&rc, tpath("cmd.map"), "--json");
	assert_int_equal(rc, 0);
	assert_true(out[0] == '{');
	assert_non_null(strstr(out, "\"class\":\"java.lang.Thread\""));
	assert_non_null(strstr(out, "\"frames\":[[2,12],[1,3]]"));
	/* escaped as the JSON writer does it (json__put_string) */
	assert_non_null(strstr(out, "\"name\":\"a \\\"quoted\\\"\\nname\""));
	assert_non_null(strstr(out, "\"status\":\"ok\"}}\n"));

	out = run_cmd(&rc, "/etc/hostname", NULL);
	assert_int_equal(rc, 1);
	out = run_cmd(&rc, "--bogus", NULL);
	assert_int_equal(rc, 2);
	free(w.buf);
}

/* ---- generations: compaction and hand-over ------------------------------ */

#define M_OLD		0x20000ull	/* its class unloads before gen 1 */
#define M_KEEP		0x20100ull
#define M_NEW		0x20200ull

static const struct cm_line no_lines[1];

/* the header of generation gen: its snapshot ends where w is now */
static void w_gen(struct mapw *w, uint64_t gen, uint64_t start_ns)
{
	w_hdr(w)->generation = gen;
	w_hdr(w)->gen_start_ns = start_ns;
	w_hdr(w)->snapshot_end = w->len;
}

/* generation 0: code X of M_OLD unloaded, Y of M_KEEP at the same start;
 * thread 2 ends; !complete: the UNLOAD of X and the end of thread 2 were
 * dropped by the writer */
static void build_gen0(struct mapw *w, bool complete)
{
	const uint64_t pool_old[] = { M_OLD }, pool_keep[] = { M_KEEP };
	const struct tpc pcs[] = { { 0x10, 1, { { 0, 3 } } } };

	w_init(w, 77);
	add_vm(w, 10, 17, "17.0.15+6-test");
	add_stub(w, 11, 0x7000000, 0x7000800, CM_STUB_INTERPRETER, -1,
		 "Interpreter");
	add_method(w, 20, M_OLD, "p.Old", "old", "()V", "Old.java", 0, no_lines);
	add_method(w, 21, M_KEEP, "p.Keep", "keep", "()V", "Keep.java", 0, no_lines);
	add_thread(w, 22, 1, 0xa000, 0, "main");
	add_thread(w, 23, 2, 0xb000, 0, "worker");
	add_code(w, 30, 0x7400000, 0x7400100, M_OLD, 4, 6, 1, pool_old, 1, pcs);
	if (complete) {
		add_unload(w, 50, 0x7400000, M_OLD);
		add_code(w, 60, 0x7400000, 0x7400080, M_KEEP, 4, 6, 1, pool_keep,
			 1, pcs);
		add_thread(w, 70, 2, 0xb000, CM_THREAD_END, "worker");
	}
}

/* the snapshot of generation gen at t=100 (the live set), then a log
 * record: code Z of M_NEW */
static void build_gen1(struct mapw *w, uint64_t gen, bool complete)
{
	const uint64_t pool_keep[] = { M_KEEP }, pool_new[] = { M_NEW };
	const struct tpc pcs[] = { { 0x10, 1, { { 0, 3 } } } };

	w_init(w, 77);
	add_vm(w, 10, 17, "17.0.15+6-test");
	add_method(w, 21, M_KEEP, "p.Keep", "keep", "()V", "Keep.java", 0, no_lines);
	add_stub(w, 11, 0x7000000, 0x7000800, CM_STUB_INTERPRETER, -1,
		 "Interpreter");
	if (complete)
		add_code(w, 60, 0x7400000, 0x7400080, M_KEEP, 4, 6, 1,
			 pool_keep, 1, pcs);
	add_thread(w, 22, 1, 0xa000, 0, "main");
	w_gen(w, gen, 100);
	add_method(w, 105, M_NEW, "p.New", "fresh", "()V", "New.java", 0, no_lines);
	add_code(w, 110, 0x7500000, 0x7500100, M_NEW, 4, 6, 1, pool_new, 1,
		 pcs);
}

struct tap_log {
	uint64_t next;		/* where the stream should go on */
	bool gap;
	size_t calls;
};

static void tap_fn(void *ctx, uint64_t off, const void *buf, size_t len)
{
	struct tap_log *t = ctx;

	(void)buf;
	if (t->calls++ && off != t->next)
		t->gap = true;
	t->next = off + len;
}

/*
 * Publish gen over path as the writer does: the new file renamed over the
 * path, then CM_F_SUPERSEDED set in the old one (through the fd that still
 * reaches it), after a last record appended to it.
 */
static void hand_over(const char *path, struct mapw *old, int old_fd,
		      const struct mapw *gen)
{
	char next[PATH_MAX];

	snprintf(next, sizeof(next), "%s.next", path);
	write_file(next, gen->buf, gen->len);
	assert_int_equal(rename(next, path), 0);
	w_hdr(old)->flags |= CM_F_SUPERSEDED;
	assert_int_equal(pwrite(old_fd, old->buf, old->len, 0),
			 (ssize_t)old->len);
}

static void test_handover(void **state)
{
	struct mapw g0, g1;
	struct codemap *cm = NULL;
	struct codemap_stats st;
	struct tap_log tl = { 0 };
	const struct codemap_blob *b;
	const struct codemap_method *m;
	const struct codemap_thread *th;
	char err[512];
	const char *path = tpath("gen.map");
	uint64_t pos0;
	size_t nb, nm;
	int fd;

	(void)state;
	build_gen0(&g0, true);
	write_file(path, g0.buf, g0.len);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(codemap__open(&cm, "/", path, err, sizeof(err)), 0);
	assert_int_equal(codemap__set_tap(cm, tap_fn, &tl), 0);
	codemap__stats(cm, &st);
	assert_int_equal(st.generation, 0);
	nb = codemap__nblobs(cm);
	nm = codemap__nmethods(cm);

	/* the old file gets one more record before the hand-over */
	add_thread(&g0, 90, 3, 0xc000, 0, "late");
	build_gen1(&g1, 1, true);
	hand_over(path, &g0, fd, &g1);
	close(fd);
	assert_int_equal(codemap__update(cm), 0);
	assert_true(codemap__ok(cm));
	codemap__stats(cm, &st);
	assert_int_equal(st.generation, 1);
	assert_int_equal(st.handovers, 1);
	assert_int_equal(st.gens_missed, 0);
	/* thread 3 is not in the snapshot: it ended before it, unseen */
	assert_int_equal(st.reconciled, 1);
	/* the old file was read to its end: thread 3 is known */
	th = codemap__thread(cm, 3, 95);
	assert_non_null(th);
	assert_string_equal(th->name, "late");
	/* thread 3 was not in the snapshot: it died by t=100 */
	assert_int_equal(th->end_ns, 100);
	assert_null(codemap__thread(cm, 2, 80));
	assert_non_null(codemap__thread(cm, 1, 0));
	/* the snapshot's copies are the same records: nothing doubled; the
	 * log's Z and M_NEW are new */
	assert_int_equal(codemap__nblobs(cm), nb + 1);
	assert_int_equal(codemap__nmethods(cm), nm + 1);
	/* code unloaded before the hand-over decodes with its old name */
	b = codemap__find(cm, 0x7400010, 40);
	assert_non_null(b);
	assert_int_equal(b->method, M_OLD);
	m = codemap__method(cm, b->method);
	assert_non_null(m);
	assert_string_equal(m->name, "old");
	b = codemap__find(cm, 0x7400010, 65);
	assert_non_null(b);
	assert_int_equal(b->method, M_KEEP);
	assert_int_equal(b->unload_ns, UINT64_MAX);
	b = codemap__find(cm, 0x7500010, 0);
	assert_non_null(b);
	assert_int_equal(b->method, M_NEW);
	/* the tap saw one stream: the new file's records right after the
	 * old one's, and codemap__pos() is its end */
	assert_false(tl.gap);
	assert_int_equal(tl.next, codemap__pos(cm));
	pos0 = g0.len + (g1.len - CM_HEADER_SIZE);
	assert_int_equal(codemap__pos(cm), pos0);

	/* pruning frees what died before t, and then never names a pc of
	 * that time after code loaded later */
	codemap__prune(cm, 101);
	codemap__stats(cm, &st);
	assert_int_equal(st.pruned, 4);	/* X, thread 2, thread 3, M_OLD */
	assert_null(codemap__find(cm, 0x7400090, 40));
	/* Y was loaded at 60: not a stand-in for what ran at 40 */
	assert_null(codemap__find(cm, 0x7400010, 40));
	assert_null(codemap__method(cm, M_OLD));
	assert_non_null(codemap__method(cm, M_KEEP));
	assert_null(codemap__thread(cm, 2, 80));
	b = codemap__find(cm, 0x7400010, 0);
	assert_non_null(b);
	assert_int_equal(b->method, M_KEEP);
	codemap__free(cm);
	free(g0.buf);
	free(g1.buf);
}

/* the request the agent sees on fd over [start, start + len): the lock's
 * offset, 0 when none */
static uint64_t request_at(int fd, uint64_t start, uint64_t len)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET,
		.l_start = (off_t)start, .l_len = (off_t)len,
	};

	assert_int_equal(fcntl(fd, F_OFD_GETLK, &fl), 0);
	return fl.l_type == F_UNLCK ? 0 : (uint64_t)fl.l_start;
}

/*
 * Event requests are locks the agent can see on the map file, at the
 * offsets codemap_format.h gives; they follow the reader to the next
 * generation and go with it.
 */
static void test_event_requests(void **state)
{
	struct mapw g0, g1;
	struct codemap *cm = NULL;
	char err[512];
	const char *path = tpath("req.map");
	int fd, fd1;

	(void)state;
	build_gen0(&g0, true);
	write_file(path, g0.buf, g0.len);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(codemap__open(&cm, "/", path, err, sizeof(err)), 0);
	assert_int_equal(request_at(fd, CM_CTL_ALLOC + 1, CM_CTL_ALLOC_MAX), 0);
	assert_int_equal(codemap__request_events(cm, CODEMAP_EV_ALLOC, 0),
			 -ERANGE);
	assert_int_equal(codemap__request_events(cm, 1u << 7, 1), -EINVAL);
	assert_int_equal(codemap__request_events(cm, CODEMAP_EV_ALLOC |
						 CODEMAP_EV_LOCK, 65536), 0);
	assert_int_equal(request_at(fd, CM_CTL_ALLOC + 1, CM_CTL_ALLOC_MAX),
			 CM_CTL_ALLOC + 65536);
	assert_int_equal(request_at(fd, CM_CTL_LOCK, 1), CM_CTL_LOCK);

	/* the next generation: held there, let go of on the old file */
	build_gen1(&g1, 1, true);
	hand_over(path, &g0, fd, &g1);
	fd1 = open(path, O_RDWR);
	assert_true(fd1 >= 0);
	assert_int_equal(request_at(fd1, CM_CTL_LOCK, 1), 0);
	assert_int_equal(codemap__update(cm), 0);
	assert_true(codemap__ok(cm));
	assert_int_equal(request_at(fd1, CM_CTL_ALLOC + 1, CM_CTL_ALLOC_MAX),
			 CM_CTL_ALLOC + 65536);
	assert_int_equal(request_at(fd1, CM_CTL_LOCK, 1), CM_CTL_LOCK);
	assert_int_equal(request_at(fd, CM_CTL_LOCK, 1), 0);
	assert_int_equal(request_at(fd, CM_CTL_ALLOC + 1, CM_CTL_ALLOC_MAX), 0);
	/* the reader gone, nothing is asked */
	codemap__free(cm);
	assert_int_equal(request_at(fd1, CM_CTL_LOCK, 1), 0);
	assert_int_equal(request_at(fd1, CM_CTL_ALLOC + 1, CM_CTL_ALLOC_MAX), 0);
	close(fd);
	close(fd1);
	free(g0.buf);
	free(g1.buf);
}

/* the writer dropped the UNLOAD of X and the end of thread 2, and the
 * reader missed generation 1: the snapshot of generation 2 says they are
 * gone */
static void test_handover_lost(void **state)
{
	struct mapw g0, g2;
	struct codemap *cm = NULL;
	struct codemap_stats st;
	const struct codemap_blob *b;
	const struct codemap_thread *th;
	char err[512];
	const char *path = tpath("lost.map");
	int fd;

	(void)state;
	build_gen0(&g0, false);
	w_hdr(&g0)->dropped = 2;
	w_hdr(&g0)->flags |= CM_F_FULL;
	write_file(path, g0.buf, g0.len);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(codemap__open(&cm, "/", path, err, sizeof(err)), 0);
	build_gen1(&g2, 2, false);
	w_hdr(&g2)->dropped = 2;
	hand_over(path, &g0, fd, &g2);
	close(fd);
	assert_int_equal(codemap__update(cm), 0);
	codemap__stats(cm, &st);
	assert_int_equal(st.generation, 2);
	assert_int_equal(st.gens_missed, 1);
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.reconciled, 2);	/* X and thread 2 */
	b = codemap__find(cm, 0x7400010, 40);
	assert_non_null(b);
	assert_int_equal(b->method, M_OLD);
	assert_int_equal(b->unload_ns, 100);
	/* after the snapshot's time X is not there: unknown, not M_OLD */
	assert_null(codemap__find(cm, 0x7400010, 150));
	th = codemap__thread(cm, 2, 50);
	assert_non_null(th);
	assert_int_equal(th->end_ns, 100);
	codemap__free(cm);
	free(g0.buf);
	free(g2.buf);
}

/* what the path holds must be a newer generation of the same writer */
static void test_handover_refused(void **state)
{
	struct mapw g0, g1;
	struct codemap *cm = NULL;
	char err[512];
	const char *path = tpath("refused.map");
	int fd;

	(void)state;
	build_gen0(&g0, true);
	write_file(path, g0.buf, g0.len);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(codemap__open(&cm, "/", path, err, sizeof(err)), 0);
	/* not newer: the reader stays (a raw recording's rebuilt map) */
	build_gen1(&g1, 0, true);
	hand_over(path, &g0, fd, &g1);
	assert_int_equal(codemap__update(cm), 0);
	assert_true(codemap__ok(cm));
	/* another writer's file: refused in one line */
	free(g1.buf);
	build_gen1(&g1, 1, true);
	w_hdr(&g1)->writer_pid = 78;
	hand_over(path, &g0, fd, &g1);
	close(fd);
	assert_true(codemap__update(cm) < 0);
	assert_non_null(strstr(codemap__error(cm), "not of this writer"));
	codemap__free(cm);
	free(g0.buf);
	free(g1.buf);
}

static uint8_t *read_all(const char *path, size_t *n)
{
	struct stat st;
	uint8_t *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !(p = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return NULL;
	}
	*n = (size_t)read(fd, p, (size_t)st.st_size);
	close(fd);
	return p;
}

/* every live CODE blob of a is one of b with the same range and method */
static size_t live_code_in(const struct codemap *a, const struct codemap *b)
{
	size_t n = 0;

	for (size_t i = 0; i < codemap__nblobs(a); i++) {
		const struct codemap_blob *x = codemap__blob_at(a, i), *y;

		if (x->type != CODEMAP_BLOB_CODE || x->unload_ns != UINT64_MAX)
			continue;
		y = codemap__find(b, x->start, 0);
		assert_non_null(y);
		assert_int_equal(y->start, x->start);
		assert_int_equal(y->end, x->end);
		assert_int_equal(y->method, x->method);
		assert_int_equal(y->unload_ns, UINT64_MAX);
		n++;
	}
	return n;
}

/*
 * A real hand-over (tests/data/codemaps/README: churn.gen0 is the file the
 * agent superseded, churn.gen1 the generation that replaced it): the
 * reader that follows it holds the same live code and methods as one that
 * starts on the new generation, nothing is found lost, and code unloaded
 * before the snapshot still decodes at its time with its names.
 */
static void test_real_handover(void **state)
{
	struct codemap *cm = NULL, *fresh = NULL;
	struct codemap_stats st;
	const struct codemap_blob *b;
	const struct codemap_method *m;
	uint8_t *g0, *g1;
	size_t n0 = 0, n1 = 0, live_a, live_b, plugin = 0;
	uint64_t gen_start;
	char err[512];
	const char *path = tpath("churn.map"), *next = tpath("churn.map.next");

	(void)state;
	g0 = read_all("tests/data/codemaps/churn.gen0", &n0);
	g1 = read_all("tests/data/codemaps/churn.gen1", &n1);
	if (!g0 || !g1) {
		free(g0);
		free(g1);
		print_message("no tests/data/codemaps/churn.gen* (run from the top directory)\n");
		skip();
		return;
	}
	write_file(path, g0, n0);
	assert_int_equal(codemap__open(&cm, "/", path, err, sizeof(err)), 0);
	codemap__stats(cm, &st);
	assert_int_equal(st.generation, 0);
	assert_true(st.file_flags & CM_F_SUPERSEDED);
	assert_int_equal(st.handovers, 0);	/* nothing newer there yet */
	write_file(next, g1, n1);
	assert_int_equal(rename(next, path), 0);
	assert_int_equal(codemap__update(cm), 0);
	codemap__stats(cm, &st);
	assert_int_equal(st.generation, 1);
	assert_int_equal(st.handovers, 1);
	assert_int_equal(st.gens_missed, 0);
	assert_int_equal(st.reconciled, 0);
	assert_int_equal(st.dropped, 0);
	gen_start = codemap__header(cm)->gen_start_ns;
	assert_true(gen_start > 0);

	write_file(tpath("churn1.map"), g1, n1);
	assert_int_equal(codemap__open(&fresh, "/", tpath("churn1.map"), err,
				       sizeof(err)), 0);
	live_a = live_code_in(cm, fresh);
	live_b = live_code_in(fresh, cm);
	assert_int_equal(live_a, live_b);
	assert_true(live_a > 100);
	for (size_t i = 0; i < codemap__nmethods(fresh); i++) {
		const struct codemap_method *f = codemap__method_at(fresh, i);

		m = codemap__method(cm, f->method);
		assert_non_null(m);
		assert_string_equal(m->klass, f->klass);
		assert_string_equal(m->name, f->name);
	}
	/* the churned plugin's code, unloaded before the snapshot, named at
	 * its time */
	for (size_t i = 0; i < codemap__nblobs(cm); i++) {
		b = codemap__blob_at(cm, i);
		if (b->type != CODEMAP_BLOB_CODE || b->unload_ns >= gen_start)
			continue;
		m = codemap__method(cm, b->method);
		if (!m || strcmp(m->klass, "CodeChurn$Plugin"))
			continue;
		assert_ptr_equal(codemap__find(cm, b->start, b->load_ns), b);
		plugin++;
	}
	assert_true(plugin > 0);
	print_message("real hand-over: %zu live code blobs, %zu unloaded CodeChurn$Plugin blobs named at their time\n",
		      live_a, plugin);

	/* pruned: the unloaded code goes, the live view stays */
	codemap__prune(cm, gen_start);
	codemap__stats(cm, &st);
	assert_true(st.pruned >= plugin);
	assert_int_equal(live_code_in(cm, fresh), live_b);
	assert_int_equal(live_code_in(fresh, cm), live_b);
	codemap__free(fresh);
	codemap__free(cm);
	free(g0);
	free(g1);
}

/* a Method* freed with its class and reused by another method: named as
 * it was at the decode time */
static void test_method_reuse(void **state)
{
	struct mapw w;
	struct codemap *cm = NULL;
	const struct codemap_method *m;
	char err[512];

	(void)state;
	w_init(&w, 1);
	add_vm(&w, 1, 17, "17");
	add_method(&w, 20, M_OLD, "p.Gone", "before", "()V", "", 0, no_lines);
	add_method(&w, 200, M_OLD, "q.Came", "after", "()V", "", 0, no_lines);
	assert_int_equal(open_buf(&cm, &w, "mreuse.map", err, sizeof(err)), 0);
	assert_string_equal(codemap__method(cm, M_OLD)->name, "after");
	codemap__set_decode_time(cm, 100);
	assert_string_equal(codemap__method(cm, M_OLD)->name, "before");
	codemap__set_decode_time(cm, 300);
	assert_string_equal(codemap__method(cm, M_OLD)->name, "after");
	/* before its first record (a late attach): the first */
	codemap__set_decode_time(cm, 10);
	assert_string_equal(codemap__method(cm, M_OLD)->name, "before");
	/* the replaced one is freed with the rest of the dead */
	codemap__prune(cm, 250);
	codemap__set_decode_time(cm, 100);
	m = codemap__method(cm, M_OLD);
	assert_non_null(m);
	assert_string_equal(m->name, "after");
	assert_int_equal(codemap__nmethods(cm), 1);
	codemap__set_decode_time(cm, 0);
	codemap__free(cm);
	free(w.buf);
}

/* version 1 maps (no generations) still read */
static void test_version1(void **state)
{
	struct mapw w;
	struct codemap *cm = NULL;
	char err[512];

	(void)state;
	build_full(&w, 1);
	w_hdr(&w)->version = 1;
	assert_int_equal(open_buf(&cm, &w, "v1.map", err, sizeof(err)), 0);
	assert_true(codemap__ok(cm));
	assert_non_null(codemap__find(cm, 0x7400010, 0));
	codemap__free(cm);
	w_hdr(&w)->version = 2;
	assert_int_equal(open_buf(&cm, &w, "v2.map", err, sizeof(err)), 0);
	assert_non_null(codemap__method(cm, M_RUN));
	codemap__free(cm);
	w_hdr(&w)->version = 4;
	assert_true(open_buf(&cm, &w, "v4.map", err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "versions 1 to 3"));
	free(w.buf);
}

/* ---- version 3: strings, classes, compact methods ------------------------ */

static void w_varint(struct mapw *w, uint64_t v)
{
	uint8_t b[10];

	w_put(w, b, cm_varint_put(b, v));
}

/* STRINGS: ids[i] -> texts[i] */
static void add_strings(struct mapw *w, uint64_t t, uint32_t n,
			const uint32_t *ids, const char *const *texts)
{
	struct cm_strings r = { .h = rh(CM_REC_STRINGS, t), .count = n };

	w_begin(w, &r, sizeof(r));
	for (uint32_t i = 0; i < n; i++) {
		w_varint(w, ids[i]);
		w_varint(w, strlen(texts[i]));
		w_put(w, texts[i], strlen(texts[i]));
	}
	w_end(w);
}

/* CLASSES: each entry three ids (class, name string, source string) */
static void add_classes(struct mapw *w, uint64_t t, uint32_t n,
			const uint32_t (*e)[3])
{
	struct cm_classes r = { .h = rh(CM_REC_CLASSES, t), .count = n };

	w_begin(w, &r, sizeof(r));
	for (uint32_t i = 0; i < n; i++)
		for (int j = 0; j < 3; j++)
			w_varint(w, e[i][j]);
	w_end(w);
}

struct tm3 {
	uint64_t method, const_method;
	uint32_t cid, nid, gid, mods, flags, n_lines;
	const struct cm_line *lines;
};

static void add_methods(struct mapw *w, uint64_t t, uint64_t base,
			uint32_t n, const struct tm3 *m)
{
	struct cm_methods r = { .h = rh(CM_REC_METHODS, t), .base = base,
				.count = n };

	w_begin(w, &r, sizeof(r));
	for (uint32_t i = 0; i < n; i++) {
		int64_t pb = 0, pl = 0;

		w_varint(w, m[i].method - base);
		w_varint(w, cm_zigzag((int64_t)(m[i].const_method - m[i].method)));
		w_varint(w, m[i].cid);
		w_varint(w, m[i].nid);
		w_varint(w, m[i].gid);
		w_varint(w, m[i].mods);
		w_varint(w, m[i].flags);
		w_varint(w, m[i].n_lines);
		for (uint32_t j = 0; j < m[i].n_lines; j++) {
			w_varint(w, cm_zigzag((int64_t)m[i].lines[j].bci - pb));
			w_varint(w, cm_zigzag((int64_t)m[i].lines[j].line - pl));
			pb = m[i].lines[j].bci;
			pl = m[i].lines[j].line;
		}
	}
	w_end(w);
}

#define M3_A		0x7f0000001000ull
#define M3_B		0x7f0000001060ull
#define M3_N		0x7f00000010c0ull

/* a version 3 map: two classes (one without a source), three methods */
static void build_v3(struct mapw *w)
{
	static const uint32_t sid[] = { 1, 2, 3, 4, 5, 6, 7 };
	static const char *const txt[] = {
		"com.example.Big", "Big.java", "run", "(I)I", "com.example.Nat",
		"go", "",
	};
	static const uint32_t cls[][3] = { { 1, 1, 2 }, { 2, 5, 0 } };
	/* unsorted, with a line going back: deltas of both signs */
	static const struct cm_line la[] = { { 0, 100 }, { 9, 98 }, { 4, 99 } };
	static const struct cm_line lb[] = { { 0, 7 } };
	const struct tm3 ms[] = {
		{ M3_A, M3_A - 0x400, 1, 3, 4, 9, 0, 3, la },
		{ M3_B, M3_B + 0x28, 1, 6, 4, 1, 0, 1, lb },
		{ M3_N, M3_N + 8, 2, 3, 4, 0x109, CM_METHOD_NATIVE, 0, NULL },
	};

	w_init(w, 3);
	add_vm(w, 10, 17, "17.0.15+6-test");
	add_strings(w, 20, 7, sid, txt);
	add_classes(w, 21, 2, cls);
	add_methods(w, 22, M3_A, 3, ms);
}

static void test_v3_records(void **state)
{
	const struct codemap_method *m;
	struct codemap_stats st;
	struct codemap *cm = NULL;
	char err[512];
	struct mapw w;
	size_t end;

	(void)state;
	build_v3(&w);
	assert_int_equal(open_buf(&cm, &w, "v3.map", err, sizeof(err)), 0);
	m = codemap__method(cm, M3_A);
	assert_non_null(m);
	assert_string_equal(m->klass, "com.example.Big");
	assert_string_equal(m->name, "run");
	assert_string_equal(m->signature, "(I)I");
	assert_string_equal(m->source, "Big.java");
	assert_int_equal(m->const_method, M3_A - 0x400);
	assert_int_equal(m->modifiers, 9);
	assert_int_equal(m->n_lines, 3);
	assert_int_equal(codemap_method__line(m, 0), 100);
	assert_int_equal(codemap_method__line(m, 5), 99);
	assert_int_equal(codemap_method__line(m, 20), 98);
	m = codemap__method(cm, M3_B);
	assert_non_null(m);
	assert_string_equal(m->name, "go");
	assert_int_equal(m->const_method, M3_B + 0x28);
	assert_int_equal(codemap_method__line(m, 3), 7);
	m = codemap__method(cm, M3_N);
	assert_non_null(m);
	assert_string_equal(m->klass, "com.example.Nat");
	assert_string_equal(m->source, "");
	assert_int_equal(m->flags, CM_METHOD_NATIVE);
	assert_int_equal(m->n_lines, 0);
	assert_int_equal(codemap_method__line(m, 0), -1);
	/* the class name string is shared, interned once */
	assert_ptr_equal(codemap__method(cm, M3_A)->klass,
			 codemap__method(cm, M3_B)->klass);
	codemap__stats(cm, &st);
	assert_int_equal(st.methods, 3);
	assert_int_equal(st.strings, 7);
	assert_int_equal(st.classes, 2);
	codemap__free(cm);

	/* a snapshot's definitions again, the same: one method each still */
	end = w.len;
	{
		static const uint32_t sid[] = { 3, 1 };
		static const char *const txt[] = { "run", "com.example.Big" };
		static const uint32_t cls[][3] = { { 1, 1, 2 } };
		static const struct cm_line la[] = { { 0, 100 }, { 9, 98 },
						     { 4, 99 } };
		const struct tm3 again = { M3_A, M3_A - 0x400, 1, 3, 4, 9, 0, 3,
					   la };

		add_strings(&w, 30, 2, sid, txt);
		add_classes(&w, 31, 1, cls);
		add_methods(&w, 32, M3_A - 16, 1, &again);
	}
	assert_int_equal(open_buf(&cm, &w, "v3again.map", err, sizeof(err)), 0);
	assert_int_equal(codemap__nmethods(cm), 3);
	codemap__free(cm);
	assert_true(end < w.len);

	/* the dump names them as for METHOD records */
	{
		int rc;
		char *out;

		write_file(tpath("v3cmd.map"), w.buf, w.len);
		out = run_cmd(&rc, tpath("v3cmd.map"), NULL);
		assert_int_equal(rc, 0);
		assert_non_null(strstr(out, "\nmethod 0x7f0000001000 com.example.Big run (I)I Big.java lines=3 modifiers=0x9 const=0x7f0000000c00\n"));
		assert_non_null(strstr(out, " com.example.Nat run (I)I - lines=0 modifiers=0x109 "));
		assert_non_null(strstr(out, " strings=7 classes=2 reader_bytes="));
	}
	free(w.buf);
}

/* version 3 across a hand-over: ids are the file's; the names stay */
static void test_v3_handover(void **state)
{
	static const uint32_t sid[] = { 1, 2, 3, 4 };
	static const char *const txt[] = {
		"com.example.Big", "Big.java", "run", "(I)I",
	};
	static const uint32_t cls[][3] = { { 1, 1, 2 } };
	static const struct cm_line la[] = { { 0, 100 }, { 4, 99 }, { 9, 98 } };
	const struct tm3 a = { M3_A, M3_A - 0x400, 1, 3, 4, 9, 0, 3, la };
	const struct tm3 n = { M3_N + 0x100, M3_N, 2, 3, 4, 0, 0, 0, NULL };
	const char *path = tpath("v3gen.map");
	const struct codemap_method *ma;
	struct mapw g0, g1;
	struct codemap *cm = NULL;
	char err[512];
	int fd;

	(void)state;
	build_v3(&g0);
	w_hdr(&g0)->writer_pid = 77;
	write_file(path, g0.buf, g0.len);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(codemap__open(&cm, "/", path, err, sizeof(err)), 0);
	ma = codemap__method(cm, M3_A);
	assert_non_null(ma);
	/* generation 1: M3_A's ids again; M3_B and M3_N not live */
	w_init(&g1, 77);
	add_vm(&g1, 10, 17, "17.0.15+6-test");
	add_strings(&g1, 22, 4, sid, txt);
	add_classes(&g1, 22, 1, cls);
	add_methods(&g1, 22, M3_A, 1, &a);
	w_gen(&g1, 1, 100);
	hand_over(path, &g0, fd, &g1);
	assert_int_equal(codemap__update(cm), 0);
	/* the same method, the same names: nothing freed, nothing new */
	assert_ptr_equal(codemap__method(cm, M3_A), ma);
	assert_string_equal(ma->klass, "com.example.Big");
	assert_non_null(codemap__method(cm, M3_N));	/* dead, kept a while */
	codemap__prune(cm, UINT64_MAX);
	assert_null(codemap__method(cm, M3_N));
	assert_string_equal(codemap__method(cm, M3_A)->name, "run");
	/* class id 2 was generation 0's only: a record naming it now is bad */
	g1.rec = g1.len;
	add_methods(&g1, 120, M3_N, 1, &n);
	write_file(path, g1.buf, g1.len);
	assert_true(codemap__update(cm) < 0);
	assert_non_null(strstr(codemap__error(cm), "names class id 2, not defined"));
	close(fd);
	codemap__free(cm);
	free(g0.buf);
	free(g1.buf);
}

/*
 * Many version 3 methods: the reader's memory for them stays compact
 * (reader_bytes a method bounded), a looked-up method's view is the same
 * pointer through growth, iteration and a prune of others, and every
 * line table, far ConstMethod* and reused Method* reads back right.
 */
#define MANY_CLASSES	1500u
#define MANY_PER	8u
#define MANY_M(i)	(0x7f1000000000ull + (uint64_t)(i) * 0x58)

static uint64_t many_const(uint32_t i)
{
	/* most near, a few far (delta past 32 bits) and one NULL */
	return i == 3 ? 0 : i % 97 == 5 ? MANY_M(i) + (1ull << 40) + i :
			MANY_M(i) - 0x40;
}

static void add_many(struct mapw *w, uint32_t c0, uint32_t c1, uint64_t t)
{
	static const char *const sig[] = { "()V" };
	uint32_t one = 1;
	static struct cm_line l[MANY_CLASSES * MANY_PER][5];

	if (c0 == 0) {
		static const char *const names[] = { "m0", "m1", "m2", "m3",
						     "m4", "m5", "m6", "m7" };
		uint32_t nid[MANY_PER];

		add_strings(w, t, 1, &one, sig);
		for (uint32_t j = 0; j < MANY_PER; j++)
			nid[j] = 2 + j;
		add_strings(w, t, MANY_PER, nid, names);
	}
	for (uint32_t c = c0; c < c1; c++) {
		char name[32];
		const char *np = name;
		uint32_t sid = 100 + c, cls[1][3] = { { 1 + c, 100 + c, 0 } };
		struct tm3 ms[MANY_PER];

		snprintf(name, sizeof(name), "big.G%u", c);
		add_strings(w, t, 1, &sid, &np);
		add_classes(w, t, 1, cls);
		for (uint32_t j = 0; j < MANY_PER; j++) {
			uint32_t i = c * MANY_PER + j;

			for (uint32_t k = 0; k < 5; k++) {
				l[i][k].bci = k * 7 + j;
				l[i][k].line = 10 + c + k * (j % 3 ? 1 : -1) + 5;
			}
			ms[j] = (struct tm3){ MANY_M(i), many_const(i), 1 + c,
					      2 + j, 1, 9, 0, i % 11 ? 5 : 0,
					      l[i] };
		}
		add_methods(w, t, MANY_M(c * MANY_PER), MANY_PER, ms);
	}
}

static void check_many(const struct codemap *cm, uint32_t i)
{
	const struct codemap_method *m = codemap__method(cm, MANY_M(i));
	char name[32];

	assert_non_null(m);
	snprintf(name, sizeof(name), "big.G%u", i / MANY_PER);
	assert_string_equal(m->klass, name);
	assert_string_equal(m->source, "");
	assert_string_equal(m->signature, "()V");
	assert_int_equal(m->name[1] - '0', i % MANY_PER);
	assert_true(m->const_method == many_const(i));
	assert_int_equal(m->n_lines, i % 11 ? 5 : 0);
	for (uint32_t k = 0; k < m->n_lines; k++) {
		int line = 10 + (int)(i / MANY_PER) +
			   (int)k * (i % MANY_PER % 3 ? 1 : -1) + 5;

		assert_int_equal(m->lines[k].bci, k * 7 + i % MANY_PER);
		assert_int_equal(codemap_method__line(m, (int)m->lines[k].bci),
				 line);
	}
}

static void test_v3_many(void **state)
{
	static const uint32_t sid[] = { 9999 };
	static const char *const txt[] = { "other" };
	const char *path = tpath("v3many.map");
	const struct codemap_method *first, *m;
	struct codemap *cm = NULL;
	struct tm3 re;
	struct mapw w;
	char err[512];
	size_t n, mem;

	(void)state;
	w_init(&w, 3);
	add_vm(&w, 10, 17, "17.0.15+6-test");
	add_many(&w, 0, 10, 20);
	write_file(path, w.buf, w.len);
	assert_int_equal(codemap__open(&cm, "/", path, err, sizeof(err)), 0);
	first = codemap__method(cm, MANY_M(3));
	assert_non_null(first);
	/* slabs, arena, indexes grow under it */
	add_many(&w, 10, MANY_CLASSES, 30);
	write_file(path, w.buf, w.len);
	assert_int_equal(codemap__update(cm), 0);
	n = codemap__nmethods(cm);
	assert_int_equal(n, MANY_CLASSES * MANY_PER);
	assert_ptr_equal(codemap__method(cm, MANY_M(3)), first);
	mem = codemap__mem_bytes(cm);
	print_message("%zu methods: reader holds %zu bytes, %zu a method\n",
		      n, mem, mem / n);
	assert_true(mem / n <= 100);
	/* iteration hands out views of its own: the kept one stays */
	for (size_t i = 0; i < n; i++) {
		m = codemap__method_at(cm, i);
		assert_non_null(m);
		assert_true(m->method == MANY_M(i));
	}
	assert_true(first->method == MANY_M(3) && !first->const_method);
	for (uint32_t i = 0; i < n; i += 7)
		check_many(cm, i);
	/* a Method* reused by another method: the old one dies, then goes */
	add_strings(&w, 40, 1, sid, txt);
	re = (struct tm3){ MANY_M(50), MANY_M(50) + 8, 1, 9999, 1, 1, 0, 0,
			   NULL };
	add_methods(&w, 40, MANY_M(50), 1, &re);
	write_file(path, w.buf, w.len);
	assert_int_equal(codemap__update(cm), 0);
	assert_string_equal(codemap__method(cm, MANY_M(50))->name, "other");
	codemap__set_decode_time(cm, 35);
	check_many(cm, 50);
	codemap__set_decode_time(cm, 0);
	codemap__prune(cm, 41);
	assert_int_equal(codemap__nmethods(cm), n);
	assert_string_equal(codemap__method(cm, MANY_M(50))->name, "other");
	/* the survivors' tables were moved: still right */
	assert_ptr_equal(codemap__method(cm, MANY_M(3)), first);
	for (uint32_t i = 1; i < n; i += 5)
		if (i != 50)
			check_many(cm, i);
	codemap__free(cm);
	free(w.buf);
}

/* a version 3 map whose last record is replaced by the bytes of rec */
static void expect_bad_v3(const char *name, uint32_t type, uint64_t base,
			  const void *body, size_t n, const char *want)
{
	struct mapw w;

	build_v3(&w);
	if (type == CM_REC_METHODS) {
		struct cm_methods r = { .h = rh(type, 40), .base = base };

		w_begin(&w, &r, sizeof(r));
	} else {
		struct cm_strings r = { .h = rh(type, 40) };

		w_begin(&w, &r, sizeof(r));
	}
	/* count: the first byte of body says how many entries */
	memcpy(w.buf + w.rec + (type == CM_REC_METHODS ?
				offsetof(struct cm_methods, count) :
				offsetof(struct cm_strings, count)), body, 1);
	w_put(&w, (const uint8_t *)body + 1, n - 1);
	w_end(&w);
	expect_bad(&w, name, -EINVAL, want);
	free(w.buf);
}

#define BAD3(name, type, base, want, ...) do {				\
	static const uint8_t b_[] = { __VA_ARGS__ };			\
	expect_bad_v3(name, type, base, b_, sizeof(b_), want);		\
} while (0)

static void test_v3_malformed(void **state)
{
	struct mapw w;

	(void)state;
	/* STRINGS */
	BAD3("s-id0.map", CM_REC_STRINGS, 0, "entry 0 has id 0", 1, 0, 1, 'x');
	BAD3("s-over.map", CM_REC_STRINGS, 0, "entry 0 overruns", 1, 9, 200, 1,
	     'x');
	BAD3("s-count.map", CM_REC_STRINGS, 0, "entry 1 ", 2, 9, 1, 'x');
	BAD3("s-varint.map", CM_REC_STRINGS, 0, "entry 0 overruns", 1, 0x80,
	     0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1,
	     'x');
	BAD3("s-id-big.map", CM_REC_STRINGS, 0, "has id 4294967296", 1, 0x80,
	     0x80, 0x80, 0x80, 0x10, 1, 'x');
	BAD3("s-again.map", CM_REC_STRINGS, 0,
	     "defines string id 3 again with another text", 1, 3, 3, 'r', 'u',
	     'm');
	BAD3("s-tail.map", CM_REC_STRINGS, 0, "bytes after its 1 entries", 1,
	     9, 1, 'x', 0, 0, 0, 0, 0, 0, 0, 0, 0, 7);
	BAD3("s-pad.map", CM_REC_STRINGS, 0, "bytes after its 1 entries", 1,
	     9, 1, 'x', 5);
	/* CLASSES */
	BAD3("c-undef.map", CM_REC_CLASSES, 0,
	     "names string id 77, not defined or empty", 1, 3, 77, 0);
	BAD3("c-empty.map", CM_REC_CLASSES, 0,
	     "names string id 7, not defined or empty", 1, 3, 7, 0);
	BAD3("c-src.map", CM_REC_CLASSES, 0,
	     "names string id 99, not defined or empty", 1, 3, 1, 99);
	BAD3("c-again.map", CM_REC_CLASSES, 0,
	     "defines class id 1 again as another class", 1, 1, 1, 0);
	BAD3("c-id0.map", CM_REC_CLASSES, 0, "entry 0 has id 0", 1, 0, 1, 2);
	/* two ids in exactly 8 bytes (long varints): the third is past the end */
	BAD3("c-cut.map", CM_REC_CLASSES, 0, "entry 0 overruns", 1, 0x83, 0x80,
	     0x80, 0x80, 0x00, 0x81, 0x80, 0x00);
	/* METHODS: delta, const, class, name, sig, mods, flags, n_lines */
	BAD3("m-class.map", CM_REC_METHODS, 0x1000,
	     "names class id 9, not defined", 1, 0, 0, 9, 3, 4, 0, 0, 0);
	BAD3("m-name.map", CM_REC_METHODS, 0x1000, "a string id not defined",
	     1, 0, 0, 1, 30, 4, 0, 0, 0);
	BAD3("m-empty.map", CM_REC_METHODS, 0x1000, "a string id not defined",
	     1, 0, 0, 1, 7, 4, 0, 0, 0);
	BAD3("m-flags.map", CM_REC_METHODS, 0x1000, "unknown flags 0x4", 1, 0,
	     0, 1, 3, 4, 0, 4, 0);
	BAD3("m-mods.map", CM_REC_METHODS, 0x1000, "has modifiers", 1, 0, 0, 1,
	     3, 4, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0);
	BAD3("m-null.map", CM_REC_METHODS, 0, "Method* out of range", 1, 0, 0,
	     1, 3, 4, 0, 0, 0);
	BAD3("m-wrap.map", CM_REC_METHODS, 0xffffffffffffff00ull,
	     "Method* out of range", 1, 0x80, 0x02, 0, 1, 3, 4, 0, 0, 0);
	BAD3("m-lines.map", CM_REC_METHODS, 0x1000, "n_lines 100, more than fit",
	     1, 0, 0, 1, 3, 4, 0, 0, 100, 0, 2);
	BAD3("m-lines-max.map", CM_REC_METHODS, 0x1000, "more than fit", 1, 0,
	     0, 1, 3, 4, 0, 0, 0x81, 0x80, 0x04);
	BAD3("m-bci.map", CM_REC_METHODS, 0x1000, "line 0 is out of range", 1,
	     0, 0, 1, 3, 4, 0, 0, 1, 1, 2);
	BAD3("m-line-back.map", CM_REC_METHODS, 0x1000, "line 1 is out of range",
	     1, 0, 0, 1, 3, 4, 0, 0, 2, 0, 2, 0, 5);
	BAD3("m-cut.map", CM_REC_METHODS, 0x1000, "entry 0 overruns", 1, 0x80,
	     0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0);
	BAD3("m-count.map", CM_REC_METHODS, 0x1000, "entry 1 overruns", 2, 0, 0,
	     1, 3, 4, 0, 0, 0);
	BAD3("m-tail.map", CM_REC_METHODS, 0x1000, "bytes after its 1 entries",
	     1, 0, 0, 1, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);
	/* short records and a pad */
	build_v3(&w);
	{
		struct cm_rec_hdr h = rh(CM_REC_METHODS, 50);

		w_begin(&w, &h, sizeof(h));
		w_put(&w, "\0\0\0\0\0\0\0\0", 8);
		w_end(&w);
	}
	expect_bad(&w, "m-short.map", -EINVAL,
		   "METHODS record of 24 bytes is shorter than 32");
	free(w.buf);
	build_v3(&w);
	{
		struct cm_strings r = { .h = rh(CM_REC_STRINGS, 50), .pad = 1 };

		w_begin(&w, &r, sizeof(r));
		w_end(&w);
	}
	expect_bad(&w, "s-padfield.map", -EINVAL, "STRINGS record has pad 0x1");
	free(w.buf);
}

/* ---- seeds --------------------------------------------------------------- */

static int write_seeds(const char *dir)
{
	struct mapw w;
	char p[PATH_MAX];
	const uint64_t pool[] = { M_FOO, M_BAR };
	const struct tpc pcs[] = { { 0x8, 2, { { 1, 3 }, { 0, 7 } } } };

	build_full(&w, 1);
	snprintf(p, sizeof(p), "%s/full.map", dir);
	write_file(p, w.buf, w.len);
	free(w.buf);
	w_init(&w, 1);
	add_vm(&w, 1, 25, "25.0.3");
	add_code(&w, 100, 0x1000, 0x1100, M_FOO, 3, 4, 2, pool, 1, pcs);
	add_unload(&w, 200, 0x1000, M_FOO);
	add_code(&w, 300, 0x1000, 0x1080, M_BAR, 4, 8, 2, pool, 1, pcs);
	add_thread(&w, 5, 50, 0x1000, 0, "first");
	add_thread(&w, 6, 50, 0x1000, CM_THREAD_END, "first");
	snprintf(p, sizeof(p), "%s/reuse.map", dir);
	write_file(p, w.buf, w.len);
	free(w.buf);
	/* version 3: strings, classes, compact methods and code naming them */
	build_v3(&w);
	{
		const uint64_t pool3[] = { M3_A, M3_B };

		add_code(&w, 60, 0x1000, 0x1100, M3_A, 4, 6, 2, pool3, 1, pcs);
	}
	snprintf(p, sizeof(p), "%s/v3.map", dir);
	write_file(p, w.buf, w.len);
	free(w.buf);
	return 0;
}

/* fuzz_codemap_gen: a 4-byte length, the old generation, the new one */
static void write_gen_seed(const char *path, const struct mapw *a,
			   const struct mapw *b)
{
	uint32_t n = (uint32_t)a->len;
	struct mapw s = { 0 };

	w_put(&s, &n, 4);
	w_put(&s, a->buf, a->len);
	w_put(&s, b->buf, b->len);
	write_file(path, s.buf, s.len);
	free(s.buf);
}

static int write_gen_seeds(const char *dir)
{
	struct mapw g0, g1;
	char p[PATH_MAX];

	build_gen0(&g0, true);
	build_gen1(&g1, 1, true);
	snprintf(p, sizeof(p), "%s/handover.bin", dir);
	write_gen_seed(p, &g0, &g1);
	free(g0.buf);
	free(g1.buf);
	build_gen0(&g0, false);
	build_gen1(&g1, 3, false);
	snprintf(p, sizeof(p), "%s/lost.bin", dir);
	write_gen_seed(p, &g0, &g1);
	free(g0.buf);
	free(g1.buf);
	/* version 3: the snapshot defines again the ids M3_A uses */
	build_v3(&g0);
	w_init(&g1, 3);
	add_vm(&g1, 10, 17, "17.0.15+6-test");
	{
		static const uint32_t sid[] = { 1, 2, 3, 4 };
		static const char *const txt[] = {
			"com.example.Big", "Big.java", "run", "(I)I",
		};
		static const uint32_t cls[][3] = { { 1, 1, 2 } };
		static const struct cm_line la[] = { { 0, 100 }, { 4, 99 },
						     { 9, 98 } };
		const struct tm3 a = { M3_A, M3_A - 0x400, 1, 3, 4, 9, 0, 3,
				       la };

		add_strings(&g1, 22, 4, sid, txt);
		add_classes(&g1, 22, 1, cls);
		add_methods(&g1, 22, M3_A, 1, &a);
	}
	w_gen(&g1, 1, 100);
	snprintf(p, sizeof(p), "%s/v3.bin", dir);
	write_gen_seed(p, &g0, &g1);
	free(g0.buf);
	free(g1.buf);
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
		cmocka_unit_test(test_full_map),
		cmocka_unit_test(test_incremental),
		cmocka_unit_test(test_reuse),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_memory_bound),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_second_vm),
		cmocka_unit_test(test_cont_record),
		cmocka_unit_test(test_oversized_file),
		cmocka_unit_test(test_links_and_types),
		cmocka_unit_test(test_open_pid),
		cmocka_unit_test(test_real_maps),
		cmocka_unit_test(test_cmd_codemap),
		cmocka_unit_test(test_handover),
		cmocka_unit_test(test_event_requests),
		cmocka_unit_test(test_handover_lost),
		cmocka_unit_test(test_handover_refused),
		cmocka_unit_test(test_version1),
		cmocka_unit_test(test_real_handover),
		cmocka_unit_test(test_method_reuse),
		cmocka_unit_test(test_v3_records),
		cmocka_unit_test(test_v3_malformed),
		cmocka_unit_test(test_v3_handover),
		cmocka_unit_test(test_v3_many),
	};

	if (argc == 3 && !strcmp(argv[1], "--write-seeds"))
		return write_seeds(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--write-gen-seeds"))
		return write_gen_seeds(argv[2]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
