// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ring buffer read in place (user/capture/ring.c) over a ring laid out
 * as the kernel maps it: the data area mapped twice in a row (a memfd),
 * records written as the kernel writes them (8-byte header, BUSY and
 * DISCARD bits, rounded to 8). Order, holds released in any order, the
 * consumer position the kernel sees, busy and discarded records, a record
 * that wraps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "capture/ring.h"

#define SIZE	4096u

struct fake {
	uint64_t cons, prod;
	uint8_t *data;		/* SIZE bytes mapped twice */
	void *map;
	struct ring *r;
};

static void fake_open(struct fake *f)
{
	int fd = memfd_create("ring", MFD_CLOEXEC);
	uint8_t *base;

	memset(f, 0, sizeof(*f));
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, SIZE), 0);
	base = mmap(NULL, 2 * SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	assert_true(base != MAP_FAILED);
	assert_true(mmap(base, SIZE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) == base);
	assert_true(mmap(base + SIZE, SIZE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) == base + SIZE);
	close(fd);
	f->map = base;
	f->data = base;
	f->r = ring__new(&f->cons, &f->prod, f->data, SIZE);
	assert_non_null(f->r);
}

static void fake_close(struct fake *f)
{
	ring__free(f->r);
	munmap(f->map, 2 * SIZE);
}

/* a record of len bytes filled with byte b at the producer position;
 * flags: BUSY and/or DISCARD; its position */
static uint64_t put(struct fake *f, uint32_t len, uint8_t b, uint32_t flags)
{
	uint64_t pos = f->prod;
	uint8_t *p = f->data + (pos & (SIZE - 1));
	uint32_t hdr = len | flags;

	/* the kernel's own check: never past the consumer position */
	assert_true(pos + ((len + 8 + 7) & ~7u) - f->cons <= SIZE);
	memcpy(p, &hdr, 4);
	memset(p + 8, b, len);
	f->prod += (len + 8 + 7) & ~7u;
	return pos;
}

static void set_len(struct fake *f, uint64_t pos, uint32_t v)
{
	memcpy(f->data + (pos & (SIZE - 1)), &v, 4);
}

struct got {
	int n;
	uint8_t first[32];
	uint32_t len[32];
	const void *ptr[32];
	int hold_from;		/* records from this index on are held */
	int stop_at;		/* stop (return -1) at this index, or -1 */
	int whole;		/* records whose every byte is its fill */
};

static int on_rec(const void *data, size_t len, void *ctx)
{
	struct got *g = ctx;
	const uint8_t *p = data;
	int i = g->n++;
	size_t k;

	g->first[i] = p[0];
	g->len[i] = (uint32_t)len;
	g->ptr[i] = data;
	for (k = 0; k < len && p[k] == p[0]; k++)
		;
	g->whole += k == len;
	if (i == g->stop_at)
		return -1;
	return i >= g->hold_from ? RING_HOLD : 0;
}

static void test_in_order_done(void **state)
{
	struct fake f;
	struct got g = { .hold_from = 99, .stop_at = -1 };

	(void)state;
	fake_open(&f);
	put(&f, 10, 0xa1, 0);
	put(&f, 100, 0xa2, 0);
	put(&f, 3, 0xa3, 0);
	assert_int_equal(ring__consume(f.r, on_rec, &g), 3);
	assert_int_equal(g.whole, 3);
	assert_int_equal(g.first[0], 0xa1);
	assert_int_equal(g.len[1], 100);
	assert_int_equal(g.first[2], 0xa3);
	/* nothing held: the kernel may write over all of it */
	assert_int_equal(f.cons, f.prod);
	assert_int_equal(ring__read_pos(f.r), f.prod);
	assert_int_equal(ring__held(f.r), 0);
	assert_int_equal(ring__held_bytes(f.r), 0);
	fake_close(&f);
}

static void test_holds_any_order(void **state)
{
	struct fake f;
	struct got g = { .hold_from = 1, .stop_at = -1 };
	uint64_t p1;

	(void)state;
	fake_open(&f);
	put(&f, 16, 0xb0, 0);
	p1 = put(&f, 40, 0xb1, 0);
	put(&f, 24, 0xb2, 0);
	put(&f, 8, 0xb3, 0);
	assert_int_equal(ring__consume(f.r, on_rec, &g), 4);
	/* 0 done, 1..3 held: the kernel stops where 1 begins */
	assert_int_equal(ring__held(f.r), 3);
	assert_int_equal(f.cons, p1);
	assert_int_equal(ring__held_bytes(f.r), f.prod - p1);
	/* 2 released before 1: nothing moves */
	ring__release(f.r, g.ptr[2]);
	assert_int_equal(f.cons, p1);
	assert_int_equal(ring__held(f.r), 3);
	/* 1 released: past 1 and 2, to 3 */
	ring__release(f.r, g.ptr[1]);
	assert_int_equal(ring__held(f.r), 1);
	assert_true(f.cons > p1 && f.cons < f.prod);
	assert_int_equal(*(const uint8_t *)g.ptr[3], 0xb3);
	/* an unknown pointer and one released twice change nothing */
	ring__release(f.r, g.ptr[0]);
	ring__release(f.r, g.ptr[1]);
	assert_int_equal(ring__held(f.r), 1);
	ring__release(f.r, g.ptr[3]);
	assert_int_equal(ring__held(f.r), 0);
	assert_int_equal(f.cons, f.prod);
	fake_close(&f);
}

static void test_busy_discard_stop(void **state)
{
	struct fake f;
	struct got g = { .hold_from = 99, .stop_at = -1 };
	uint64_t busy;

	(void)state;
	fake_open(&f);
	put(&f, 8, 0xc0, BPF_RINGBUF_DISCARD_BIT);
	put(&f, 8, 0xc1, 0);
	busy = put(&f, 8, 0xc2, BPF_RINGBUF_BUSY_BIT);
	put(&f, 8, 0xc3, 0);
	/* the discarded one skipped, the busy one waited for */
	assert_int_equal(ring__consume(f.r, on_rec, &g), 1);
	assert_int_equal(g.first[0], 0xc1);
	assert_int_equal(f.cons, busy);
	set_len(&f, busy, 8);
	assert_int_equal(ring__consume(f.r, on_rec, &g), 2);
	assert_int_equal(g.first[1], 0xc2);
	assert_int_equal(g.first[2], 0xc3);
	/* a callback that stops: the records after it stay for next time */
	g.stop_at = 3;
	put(&f, 8, 0xd0, 0);
	put(&f, 8, 0xd1, 0);
	assert_int_equal(ring__consume(f.r, on_rec, &g), 1);
	assert_int_equal(ring__consume(f.r, on_rec, &g), 1);
	assert_int_equal(g.first[4], 0xd1);
	fake_close(&f);
}

static void test_wraps(void **state)
{
	struct fake f;
	struct got g = { .hold_from = 0, .stop_at = -1 };
	int rounds = 0;

	(void)state;
	fake_open(&f);
	/* records of 1000 bytes go round the 4 KiB ring several times,
	 * each held until the next one is read; every one reads whole */
	for (int i = 0; i < 20; i++) {
		put(&f, 1000, (uint8_t)(0x10 + i), 0);
		assert_int_equal(ring__consume(f.r, on_rec, &g), 1);
		if (i)
			ring__release(f.r, g.ptr[(i - 1) % 32]);
		rounds += (ring__read_pos(f.r) & (SIZE - 1)) < 1008;
		if (g.n == 32)
			break;
	}
	assert_int_equal(g.whole, g.n);
	assert_true(rounds >= 3);
	assert_int_equal(ring__held(f.r), 1);
	fake_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order_done),
		cmocka_unit_test(test_holds_any_order),
		cmocka_unit_test(test_busy_discard_stop),
		cmocka_unit_test(test_wraps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
