// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The raw file's sample chunks (output/raw.c): what raw_writer__sample
 * writes reads back as the same record, part for part and byte for byte
 * (without the sampler's gap), whether it went whole or as a
 * RAW_SAMPLE_REF whose window's top comes from its thread's last sample:
 * over many threads (more than the slots, so threads share them), stacks
 * that move and change, samples without a window, with frozen frames and
 * Python frames after the window, and records the writer cannot parse. A
 * file whose references do not hold is a one-line error.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/types.h>
#include "capture/sample.h"
#include "output/raw.h"

/* what the sampler reserves between the stacks and the window */
#define GAP		(8 * (64 + 127))
#define STACK_TOP	0x7ffd00010000ull
#define MAX_REC		(sizeof(struct asgst_sample_hdr) + GAP + \
			 ASGST_MAX_WINDOW + ASGST_CHUNK_BYTES + \
			 ASGST_PY_BYTES + 64)

/* a thread's stack: its bytes from STACK_TOP - sizeof(stack) up */
struct thread {
	uint32_t tid;
	uint8_t stack[8192];
};

/*
 * A version-4 record of t: window from sp to the stack's top, (gap) the
 * sampler's room between the stacks and the window, (chunk) frozen
 * frames and (py) Python frames after it, slack after all.
 */
static size_t make_record(uint64_t *buf, const struct thread *t, uint32_t wl,
			  bool gap, bool chunk, bool py)
{
	struct asgst_sample_hdr *h = (struct asgst_sample_hdr *)buf;
	uint8_t *p = (uint8_t *)buf;
	size_t hdr = sizeof(*h), off;

	memset(buf, 0x5a, MAX_REC);
	memset(h, 0, hdr);
	h->magic = ASGST_SAMPLE_MAGIC;
	h->version = ASGST_SAMPLE_VERSION;
	h->hdr_size = (uint16_t)hdr;
	h->event = ASGST_EV_CPU;
	h->pid = 4000;
	h->tid = t->tid;
	h->kstack_n = 1;
	h->ustack_n = 2;
	((uint64_t *)(p + hdr))[0] = 0xffffffff81000010ull;
	((uint64_t *)(p + hdr))[1] = 0x401000 + t->tid;
	((uint64_t *)(p + hdr))[2] = 0x402000;
	off = hdr + 24 + (gap ? GAP : 0);
	h->window_off = (uint32_t)off;
	h->window_len = wl;
	h->sp = STACK_TOP - wl;
	memcpy(p + off, t->stack + sizeof(t->stack) - wl, wl);
	off = (off + wl + 7) & ~(size_t)7;
	if (chunk) {
		h->chunk_off = (uint32_t)off;
		h->chunk_len = 128;
		h->chunk_addr = 0x10000;
		h->chunk_sp = 0x10010;
		h->chunk_end = 0x10100;
		for (size_t i = 0; i < 128; i++)
			p[off + i] = (uint8_t)(i ^ t->tid);
		off += 128;
	}
	if (py) {
		h->py_off = (uint32_t)off;
		h->py_n = 3;
		for (size_t i = 0; i < 3 * sizeof(struct asgst_py_frame); i++)
			p[off + i] = (uint8_t)(i * 3 + t->tid);
		off += 3 * sizeof(struct asgst_py_frame);
	}
	return off + 40;	/* the reservation's slack */
}

/* a's and b's parts (records of the same sample) are the same */
static void check_same(const void *a, size_t alen, const void *b, size_t blen)
{
	struct asgst_sample_hdr ha, hb;
	struct sample sa, sb;
	const char *why = NULL;

	assert_int_equal(sample__parse(a, alen, &sa, &why), 0);
	assert_int_equal(sample__parse(b, blen, &sb, &why), 0);
	/* the header alike but where the parts are */
	ha = *sa.hdr;
	hb = *sb.hdr;
	ha.window_off = hb.window_off = 0;
	ha.chunk_off = hb.chunk_off = 0;
	ha.py_off = hb.py_off = 0;
	assert_memory_equal(&ha, &hb, sizeof(ha));
	assert_memory_equal(sa.kstack, sb.kstack,
			    8 * (sa.hdr->kstack_n + sa.hdr->ustack_n));
	if (sa.hdr->window_len)
		assert_memory_equal(sa.window, sb.window, sa.hdr->window_len);
	assert_true((sa.chunk == NULL) == (sb.chunk == NULL));
	if (sa.chunk)
		assert_memory_equal(sa.chunk, sb.chunk, sa.hdr->chunk_len);
	assert_true((sa.py == NULL) == (sb.py == NULL));
	if (sa.py)
		assert_memory_equal(sa.py, sb.py,
				    sa.hdr->py_n * sizeof(*sa.py));
	/* nothing but the parts: no gap, no slack */
	assert_int_equal(blen, sample__used_len(&sb));
	assert_int_equal(sb.hdr->window_off,
			 sb.hdr->hdr_size + 8 * (sb.hdr->kstack_n +
						 sb.hdr->ustack_n));
}

/* the chunk types of the file at path, counted */
static void count_chunks(const char *path, unsigned int *n, unsigned int max)
{
	FILE *f = fopen(path, "rb");
	struct raw_file_hdr fh;
	struct raw_chunk c;

	assert_non_null(f);
	memset(n, 0, max * sizeof(*n));
	assert_int_equal(fread(&fh, sizeof(fh), 1, f), 1);
	assert_int_equal(fh.version, RAW_VERSION);
	while (fread(&c, sizeof(c), 1, f) == 1) {
		assert_true(c.type < max);
		n[c.type]++;
		assert_int_equal(fseek(f, (long)((c.len + 7) & ~7ull),
				       SEEK_CUR), 0);
	}
	fclose(f);
}

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

#define NTHREADS	600	/* more than RAW_REF_SLOTS */
#define NSAMPLES	6000

/* samples as a recording might have them, the same from the same seed */
struct gen {
	uint64_t seed;
	size_t i;
	struct thread th[NTHREADS];
};

static void gen__init(struct gen *g)
{
	g->seed = 42;
	g->i = 0;
	for (uint32_t i = 0; i < NTHREADS; i++) {
		g->th[i].tid = 5000 + i;
		for (size_t j = 0; j < sizeof(g->th[i].stack); j++)
			g->th[i].stack[j] = (uint8_t)rnd(&g->seed);
	}
}

enum gen_kind { GEN_OK, GEN_MISALIGNED, GEN_BAD };

/* the next record into rec (at rec + 4 when misaligned), its length */
static size_t gen__next(struct gen *g, uint64_t *rec, enum gen_kind *kind)
{
	/* a few threads most of the time, all of them now and then */
	struct thread *t = &g->th[rnd(&g->seed) % (g->i++ % 7 ? 8 : NTHREADS)];
	uint32_t wl = 64 + rnd(&g->seed) % (sizeof(t->stack) - 64);
	uint32_t what = rnd(&g->seed) % 16;
	size_t len;

	/* the stack changed below some depth */
	for (uint32_t n = rnd(&g->seed) % 4; n; n--)
		t->stack[sizeof(t->stack) - 1 - rnd(&g->seed) % wl] ^= 0x81;
	if (what == 0)
		wl = 0;
	if (what == 1)	/* not a multiple of 8 */
		wl |= 3;
	len = make_record(rec, t, wl, what != 2, what == 3 || what == 5,
			  what == 4 || what == 5);
	*kind = GEN_OK;
	if (what == 6) {
		/* not parsed by the writer (misaligned), by the reader it
		 * is: both must still agree on the thread's window */
		memmove((uint8_t *)rec + 4, rec, len);
		*kind = GEN_MISALIGNED;
	} else if (what == 7) {
		((struct asgst_sample_hdr *)rec)->kstack_n = 999;
		*kind = GEN_BAD;
	}
	return len;
}

static void test_round_trip(void **state)
{
	char path[] = "/tmp/test_raw_samples.XXXXXX", err[256];
	static uint64_t rec[MAX_REC / 8 + 2];
	static struct gen g;
	struct raw_writer *w = NULL;
	struct raw_reader *r = NULL;
	unsigned int types[RAW_SAMPLE_REF + 1];
	enum gen_kind kind;
	const void *pay;
	uint64_t plen;
	uint32_t type;
	size_t got = 0, len;
	int fd = mkstemp(path), rc;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	gen__init(&g);
	assert_int_equal(raw_writer__open(&w, path, err, sizeof(err)), 0);
	for (size_t i = 0; i < NSAMPLES; i++) {
		len = gen__next(&g, rec, &kind);
		assert_int_equal(raw_writer__sample(w, (uint8_t *)rec +
			(kind == GEN_MISALIGNED ? 4 : 0), len), 0);
	}
	assert_int_equal(raw_writer__close(w, NULL, err, sizeof(err)), 0);

	count_chunks(path, types, RAW_SAMPLE_REF + 1);
	assert_int_equal(types[RAW_SAMPLE] + types[RAW_SAMPLE_REF], NSAMPLES);
	assert_true(types[RAW_SAMPLE_REF] > NSAMPLES / 2);

	gen__init(&g);
	assert_int_equal(raw_reader__open(&r, path, err, sizeof(err)), 0);
	while ((rc = raw_reader__next(r, &type, &pay, &plen, err,
				      sizeof(err))) == 1) {
		assert_true(got++ < NSAMPLES);
		len = gen__next(&g, rec, &kind);
		assert_int_equal(type, RAW_SAMPLE);
		if (kind == GEN_OK) {
			check_same(rec, len, pay, plen);
		} else {
			/* as it was written */
			assert_int_equal(plen, len);
			assert_memory_equal(pay, (uint8_t *)rec +
				(kind == GEN_MISALIGNED ? 4 : 0), len);
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(got, NSAMPLES);
	raw_reader__close(r);
	unlink(path);
}

/* a file of two samples of one thread, the second a RAW_SAMPLE_REF; the
 * offset of its struct raw_sample_ref in *ref_off */
static void two_samples(const char *path, long *ref_off)
{
	static struct thread t = { .tid = 77 };
	static uint64_t rec[MAX_REC / 8 + 1];
	unsigned int types[RAW_SAMPLE_REF + 1];
	struct raw_writer *w = NULL;
	struct raw_chunk c;
	char err[256];
	FILE *f;

	for (size_t j = 0; j < sizeof(t.stack); j++)
		t.stack[j] = (uint8_t)(j * 13);
	assert_int_equal(raw_writer__open(&w, path, err, sizeof(err)), 0);
	assert_int_equal(raw_writer__sample(w, rec, make_record(
				rec, &t, 4096, true, false, false)), 0);
	t.stack[sizeof(t.stack) - 2048] ^= 1;
	assert_int_equal(raw_writer__sample(w, rec, make_record(
				rec, &t, 3000, true, false, false)), 0);
	assert_int_equal(raw_writer__close(w, NULL, err, sizeof(err)), 0);
	count_chunks(path, types, RAW_SAMPLE_REF + 1);
	assert_int_equal(types[RAW_SAMPLE], 1);
	assert_int_equal(types[RAW_SAMPLE_REF], 1);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, sizeof(struct raw_file_hdr), SEEK_SET), 0);
	assert_int_equal(fread(&c, sizeof(c), 1, f), 1);
	*ref_off = (long)(sizeof(struct raw_file_hdr) + 2 * sizeof(c) +
			  ((c.len + 7) & ~7ull));
	fclose(f);
}

static void patch(const char *path, long off, const void *v, size_t n)
{
	FILE *f = fopen(path, "r+b");

	assert_non_null(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	assert_int_equal(fwrite(v, n, 1, f), 1);
	fclose(f);
}

/* the reader's answer to the file's second chunk: rc, err in err */
static int second_chunk(const char *path, char *err, size_t errlen)
{
	struct raw_reader *r = NULL;
	const void *pay;
	uint64_t plen;
	uint32_t type;
	int rc;

	err[0] = 0;
	assert_int_equal(raw_reader__open(&r, path, err, errlen), 0);
	assert_int_equal(raw_reader__next(r, &type, &pay, &plen, err, errlen),
			 1);
	rc = raw_reader__next(r, &type, &pay, &plen, err, errlen);
	raw_reader__close(r);
	return rc;
}

static void bad_ref(size_t field, const void *v, size_t n, const char *says)
{
	char path[] = "/tmp/test_raw_samples.XXXXXX", err[256];
	int fd = mkstemp(path);
	long off;

	assert_true(fd >= 0);
	close(fd);
	two_samples(path, &off);
	assert_int_equal(second_chunk(path, err, sizeof(err)), 1);
	patch(path, off + (long)field, v, n);
	assert_int_equal(second_chunk(path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, says));
	assert_null(strchr(err, '\n'));
	unlink(path);
}

static void test_bad_refs(void **state)
{
	uint32_t u;
	uint64_t a;

	(void)state;
	u = 78;		/* another thread: it has no window yet */
	bad_ref(offsetof(struct raw_sample_ref, tid), &u, 4,
		"no earlier sample of thread 78");
	u = 1u << 20;	/* more than the window kept */
	bad_ref(offsetof(struct raw_sample_ref, omitted), &u, 4,
		"no earlier sample");
	u = 0;
	bad_ref(offsetof(struct raw_sample_ref, omitted), &u, 4,
		"no earlier sample");
	u = 1u << 30;	/* beyond the chunk */
	bad_ref(offsetof(struct raw_sample_ref, cut), &u, 4,
		"no earlier sample");
	u = 8;		/* inside the header: not the window's top */
	bad_ref(offsetof(struct raw_sample_ref, cut), &u, 4,
		"do not fit its record");
	a = STACK_TOP - 4096;	/* bytes the thread had, not the top's */
	bad_ref(offsetof(struct raw_sample_ref, addr), &a, 8,
		"do not fit its record");
	a = STACK_TOP;		/* past what the thread had */
	bad_ref(offsetof(struct raw_sample_ref, addr), &a, 8,
		"no earlier sample");
}

/* a RAW_SAMPLE_REF in a file of before version 4 is not one */
static void test_ref_in_old_file(void **state)
{
	char path[] = "/tmp/test_raw_samples.XXXXXX", err[256];
	uint32_t v = 3;
	int fd = mkstemp(path);
	long off;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	two_samples(path, &off);
	patch(path, offsetof(struct raw_file_hdr, version), &v, sizeof(v));
	assert_int_equal(second_chunk(path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown chunk type 7"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bad_refs),
		cmocka_unit_test(test_ref_in_old_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
