// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The raw file's stored stacks and meta (output/raw.c): a profile with
 * cpu, alloc and lock stacks written and read back is the same profile,
 * its writers' outputs byte for byte (JSON aside: jvmti_state is not
 * stored); a version-1 file (stacks without
 * the JVM events' fields, a shorter meta) still reads.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/types.h>
#include "sampler.h"
#include "output/raw.h"
#include "output/writers.h"
#include "profile/profile.h"
#include "unit/writers_fixture.h"

/* the file's stacks and meta into a new profile */
static struct profile *read_back(const char *path)
{
	struct profile *p = profile__new();
	struct raw_reader *r = NULL;
	const void *pay;
	uint64_t len;
	uint32_t type;
	char err[256];
	int rc;

	assert_non_null(p);
	assert_int_equal(raw_reader__open(&r, path, err, sizeof(err)), 0);
	while ((rc = raw_reader__next(r, &type, &pay, &len, err,
				      sizeof(err))) == 1) {
		if (type == RAW_STACKS)
			assert_int_equal(raw__load_stacks(p, pay, len), 0);
		if (type == RAW_META)
			assert_int_equal(raw__load_meta(p, pay, len, err,
							sizeof(err)), 0);
	}
	assert_int_equal(rc, 0);
	raw_reader__close(r);
	return p;
}

static char *output_of(int (*w)(const struct profile *, FILE *),
		       const struct profile *p, size_t *len)
{
	FILE *f = tmpfile();
	char *buf;

	assert_non_null(f);
	assert_int_equal(w(p, f), 0);
	buf = fx_slurp(f, len);
	assert_non_null(buf);
	fclose(f);
	return buf;
}

static void test_round_trip(void **state)
{
	static int (*const writers[])(const struct profile *, FILE *) = {
		write_pprof, write_collapsed, write_top, write_html,
	};
	struct profile *p = fx_jvm_profile(ASGST_EVMASK_CPU |
					   ASGST_EVMASK_ALLOC |
					   ASGST_EVMASK_LOCK);
	char path[] = "/tmp/test_write_raw.XXXXXX", err[256];
	struct raw_writer *w = NULL;
	const struct profile_meta *a, *b;
	struct profile *q;
	int fd;

	(void)state;
	assert_non_null(p);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(raw_writer__open(&w, path, err, sizeof(err)), 0);
	assert_int_equal(raw_writer__stacks(w, p), 0);
	assert_int_equal(raw_writer__close(w, p, err, sizeof(err)), 0);
	q = read_back(path);
	unlink(path);

	a = profile__meta_const(p);
	b = profile__meta_const(q);
	assert_int_equal(b->events, a->events);
	assert_int_equal(b->alloc_events, 5);
	assert_int_equal(b->lock_events, 4);
	assert_int_equal(b->jvm_ev_lost, 1);
	assert_int_equal(b->jvm_ev_throttled, 4);
	assert_int_equal(b->alloc_interval, 524288);
	assert_int_equal(profile__nstacks(q), profile__nstacks(p));
	for (size_t i = 0; i < profile__nstacks(p); i++) {
		const struct profile_stack *x = profile__stack(p, i);
		const struct profile_stack *y = profile__stack(q, i);

		assert_int_equal(y->trace.event, x->trace.event);
		assert_int_equal(y->count, x->count);
		assert_int_equal(y->weight_ns, x->weight_ns);
		assert_int_equal(y->alloc_bytes, x->alloc_bytes);
		assert_int_equal(y->alloc_objects, x->alloc_objects);
		if (x->trace.ev_class)
			assert_string_equal(y->trace.ev_class,
					    x->trace.ev_class);
		else
			assert_null(y->trace.ev_class);
		assert_int_equal(y->trace.nframes, x->trace.nframes);
		assert_int_equal(y->trace.frames[0].type,
				 x->trace.frames[0].type);
	}
	/*
	 * What report writes from it is what the recording wrote (JSON
	 * aside: the file keeps a Java stack's state, not its JVMTI bits)
	 */
	for (size_t i = 0; i < NELEM(writers); i++) {
		size_t nx, ny;
		char *x = output_of(writers[i], p, &nx);
		char *y = output_of(writers[i], q, &ny);

		assert_int_equal(ny, nx);
		assert_memory_equal(y, x, nx);
		free(x);
		free(y);
	}
	profile__free(q);
	profile__free(p);
}

/* bytes of a version-1 file: header, one stack, a version-1 meta */
struct buf {
	unsigned char b[1024];
	size_t n;
};

static void put(struct buf *b, const void *v, size_t n)
{
	assert_true(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, v, n);
	b->n += n;
}

static void put_u8(struct buf *b, uint8_t v) { put(b, &v, 1); }
static void put_u16(struct buf *b, uint16_t v) { put(b, &v, 2); }
static void put_u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(struct buf *b, uint64_t v) { put(b, &v, 8); }

static void put_s(struct buf *b, const char *s)
{
	if (!s) {
		put_u16(b, 0xffff);
		return;
	}
	put_u16(b, (uint16_t)strlen(s));
	put(b, s, strlen(s));
}

static void put_chunk(struct buf *f, uint32_t type, const struct buf *pay)
{
	static const unsigned char zeros[8];

	put_u32(f, type);
	put_u32(f, 0);
	put_u64(f, pay->n);
	put(f, pay->b, pay->n);
	put(f, zeros, (8 - (pay->n & 7)) & 7);
}

static void test_version1_file(void **state)
{
	char path[] = "/tmp/test_write_raw.XXXXXX";
	struct buf f = { .n = 0 }, s = { .n = 0 }, m = { .n = 0 };
	const struct profile_stack *ps;
	struct profile *p;
	FILE *fp;
	int fd;

	(void)state;
	put(&f, RAW_MAGIC, 8);
	put_u32(&f, 1);
	put_u32(&f, 16);
	/* struct raw_stack of version 1: no tag, no JVM fields */
	put_u32(&s, 10);
	put_u32(&s, 11);
	put_u8(&s, TRACE_KIND_NATIVE);
	put_u8(&s, 0);
	put_u8(&s, TRACE_EV_OFFCPU);
	put_u8(&s, 0);
	put_u32(&s, 0);
	put_u64(&s, 3);
	put_u64(&s, 4000);
	put_u32(&s, 1);
	put_s(&s, "old");
	put_s(&s, "old");
	put_s(&s, NULL);
	put_u8(&s, FRAME_NON_JAVA);
	put_u8(&s, 0xff);
	put_u16(&s, 0);
	put_u32(&s, 0xffffffff);
	put_u32(&s, 0xffffffff);
	put_u64(&s, 0x401000);
	put_u64(&s, 0x1000);
	put_s(&s, "main");
	put_s(&s, "/bin/old");
	for (int i = 0; i < 5; i++)
		put_s(&s, NULL);
	put_chunk(&f, RAW_STACKS, &s);
	/* meta of version 1 files: up to offcpu_capture_ns */
	put_u32(&m, 99);
	put_u32(&m, ASGST_EVMASK_OFFCPU);
	for (int i = 0; i < 7; i++)
		put_u64(&m, i + 1);
	put_chunk(&f, RAW_META, &m);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(f.b, 1, f.n, fp), f.n);
	fclose(fp);
	p = read_back(path);
	unlink(path);
	assert_int_equal(profile__nstacks(p), 1);
	ps = profile__stack(p, 0);
	assert_int_equal(ps->trace.event, TRACE_EV_OFFCPU);
	assert_int_equal(ps->count, 3);
	assert_int_equal(ps->weight_ns, 4000);
	assert_int_equal(ps->alloc_bytes + ps->alloc_objects, 0);
	assert_null(ps->trace.ev_class);
	assert_string_equal(ps->trace.frames[0].symbol, "main");
	assert_int_equal(profile__meta_const(p)->offcpu_capture_ns, 7);
	assert_int_equal(profile__meta_const(p)->alloc_events, 0);
	assert_int_equal(profile__meta_const(p)->alloc_interval, 0);
	profile__free(p);
}

/* a class frame or a JVM event in a version-1 stacks chunk is bad */
static void test_version1_rejects_jvm(void **state)
{
	struct profile *p = profile__new();
	struct buf s = { .n = 0 };

	(void)state;
	assert_non_null(p);
	put_u32(&s, 10);
	put_u32(&s, 11);
	put_u8(&s, TRACE_KIND_JAVA);
	put_u8(&s, 0);
	put_u8(&s, TRACE_EV_ALLOC);
	put_u8(&s, 0);
	put_u32(&s, 0);
	put_u64(&s, 1);
	put_u64(&s, 0);
	put_u32(&s, 0);
	put_s(&s, "x");
	put_s(&s, "x");
	put_s(&s, NULL);
	assert_int_equal(raw__load_stacks(p, s.b, s.n), -EINVAL);
	assert_int_equal(profile__nstacks(p), 0);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_version1_file),
		cmocka_unit_test(test_version1_rejects_jvm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
