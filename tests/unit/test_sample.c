// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sample__parse on real records captured from the kernel sampler
 * (tests/data/samples/, format in its README) and on bad records derived
 * from them.
 */
#include <errno.h>
#include <linux/types.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "capture/sample.h"

/* the window size records.bin was captured with (its README) */
#define RECORDS_WINDOW	(16 * 1024)

#define MAX_RECS	64
#define KERNEL_MIN	0xffff800000000000ull
#define USER_MAX	0x0000800000000000ull

struct rec {
	uint64_t *buf;		/* 8-byte aligned copy */
	size_t len;
};

static struct rec recs[MAX_RECS];
static int nrecs;

static const char *data_path(void)
{
	const char *dir = getenv("ASGST_SRCDIR");
	static char path[4096];

	snprintf(path, sizeof(path), "%s/tests/data/samples/records.bin",
		 dir ? dir : ".");
	return path;
}

static int load_records(void **state)
{
	FILE *f = fopen(data_path(), "rb");
	uint32_t len;

	(void)state;
	if (!f) {
		fprintf(stderr, "cannot open %s (run from the source tree or set ASGST_SRCDIR)\n",
			data_path());
		return -1;
	}
	while (nrecs < MAX_RECS && fread(&len, 4, 1, f) == 1) {
		struct rec *r = &recs[nrecs];

		if (len > 1024 * 1024)
			break;
		r->buf = aligned_alloc(8, (len + 7) & ~7u);
		if (!r->buf || fread(r->buf, 1, len, f) != len)
			break;
		r->len = len;
		nrecs++;
	}
	fclose(f);
	return nrecs >= 5 ? 0 : -1;
}

static int free_records(void **state)
{
	(void)state;
	for (int i = 0; i < nrecs; i++)
		free(recs[i].buf);
	return 0;
}

/* a writable aligned copy of record i, with extra bytes of room */
static uint64_t *copy_rec(int i, size_t extra)
{
	uint64_t *b = aligned_alloc(8, (recs[i].len + extra + 7) & ~(size_t)7);

	assert_non_null(b);
	memcpy(b, recs[i].buf, recs[i].len);
	return b;
}

/* the smallest header of h's version (version 1 had no window_off) */
static size_t hdr_min(const struct asgst_sample_hdr *h)
{
	return h->version == 1 ? offsetof(struct asgst_sample_hdr, window_off) :
				 sizeof(*h);
}

static size_t needed(const struct asgst_sample_hdr *h)
{
	if (h->version >= 2)
		return (size_t)h->window_off + h->window_len;
	return h->hdr_size + (size_t)h->kstack_n * 8 + (size_t)h->ustack_n * 8 +
	       h->window_len;
}

/* longest run of one byte value in buf */
static size_t longest_run(const uint8_t *b, size_t n, uint8_t *val)
{
	size_t best = 0, cur = 0;

	for (size_t i = 0; i < n; i++) {
		cur = (i && b[i] == b[i - 1]) ? cur + 1 : 1;
		if (cur > best) {
			best = cur;
			*val = b[i];
		}
	}
	return best;
}

static void test_real_records_parse(void **state)
{
	int full_windows = 0, kthreads = 0, kernel_user = 0, cuts = 0;

	(void)state;
	for (int i = 0; i < nrecs; i++) {
		const uint8_t *base = (const uint8_t *)recs[i].buf;
		const struct asgst_sample_hdr *h;
		const char *why = "unset";
		struct sample s;

		assert_int_equal(sample__parse(recs[i].buf, recs[i].len, &s,
					       &why), 0);
		assert_null(why);
		h = s.hdr;
		assert_ptr_equal(h, base);
		assert_int_equal(h->hdr_size, hdr_min(h));
		assert_true(needed(h) <= recs[i].len);
		assert_ptr_equal(s.kstack, base + h->hdr_size);
		assert_ptr_equal(s.ustack, s.kstack + h->kstack_n);
		assert_ptr_equal(s.window, (const uint8_t *)(s.ustack + h->ustack_n));
		assert_true(h->pid != 0 && h->tid != 0);
		assert_true(h->comm[0] != '\0');
		assert_true(memchr(h->comm, '\0', sizeof(h->comm)) != NULL);
		assert_int_equal(h->event, ASGST_EV_CPU);
		for (uint32_t k = 0; k < h->kstack_n; k++)
			assert_true(s.kstack[k] >= KERNEL_MIN);
		if (h->kstack_n)
			assert_true(h->flags & ASGST_SF_KERNEL_MODE);

		if (h->flags & ASGST_SF_NO_USER) {
			assert_int_equal(h->ustack_n, 0);
			assert_int_equal(h->window_len, 0);
			assert_int_equal(h->sp, 0);
			kthreads++;
			continue;
		}
		assert_true(h->sp != 0 && h->sp < USER_MAX);
		assert_true(h->ip != 0 && h->ip < USER_MAX);
		for (uint32_t u = 0; u < h->ustack_n; u++)
			assert_true(s.ustack[u] < USER_MAX);
		/* in user mode the innermost user pc is the interrupted ip */
		if (!(h->flags & ASGST_SF_KERNEL_MODE) && h->ustack_n)
			assert_true(s.ustack[0] == h->ip);
		if (h->kstack_n && h->ustack_n)
			kernel_user++;
		if (h->window_len)
			assert_true(h->flags & ASGST_SF_WINDOW_WANTED);
		if (h->flags & ASGST_SF_WINDOW_CUT) {
			assert_true(h->window_len > 0);
			assert_true(h->window_len < RECORDS_WINDOW);
			/* cut at the end of the mapping: page aligned */
			assert_int_equal((h->sp + h->window_len) & 4095, 0);
			cuts++;
		}
		if (h->window_len == RECORDS_WINDOW) {
			uint8_t v = 0;

			/*
			 * The deep thread's 512-byte frames are memset to
			 * their depth (0..40): the window holds such runs.
			 */
			assert_true(longest_run(s.window, h->window_len, &v) >= 500);
			assert_true(v <= 40);
			/* and its frame-pointer stack is as deep */
			assert_true(h->ustack_n >= 41);
			full_windows++;
		}
	}
	assert_true(full_windows >= 1);
	assert_true(kthreads >= 1);
	assert_true(kernel_user >= 1);
	assert_true(cuts >= 1);
}

static void test_truncated(void **state)
{
	(void)state;
	for (int i = 0; i < nrecs; i++) {
		const struct asgst_sample_hdr *h = (void *)recs[i].buf;
		size_t need = needed(h);
		const char *why = NULL;
		struct sample s;

		assert_int_equal(sample__parse(recs[i].buf, need, &s, &why), 0);
		assert_int_equal(sample__parse(recs[i].buf, 0, &s, &why), -EINVAL);
		assert_string_equal(why, "truncated header");
		assert_int_equal(sample__parse(recs[i].buf, hdr_min(h) - 1, &s,
					       &why), -EINVAL);
		assert_string_equal(why, "truncated header");
		if (need > hdr_min(h)) {
			assert_int_equal(sample__parse(recs[i].buf, need - 1,
						       &s, &why), -EINVAL);
			assert_string_equal(why, "truncated tail");
			assert_int_equal(sample__parse(recs[i].buf, hdr_min(h),
						       &s, &why), -EINVAL);
			assert_string_equal(why, "truncated tail");
		}
	}
}

static void expect_bad(uint64_t *b, size_t len, const char *reason);

/*
 * Version 2 puts the window at window_off, after a gap (the sampler copies
 * it to a fixed offset before the user stack is known): the real records,
 * laid out that way, parse to the same parts; bad offsets are rejected.
 */
static void test_v2_layout(void **state)
{
	(void)state;
	for (int i = 0; i < nrecs; i++) {
		const struct asgst_sample_hdr *o = (void *)recs[i].buf;
		size_t stacks = 8ull * (o->kstack_n + o->ustack_n);
		size_t woff = sizeof(*o) + stacks + 256, len = woff + o->window_len;
		uint64_t *b = aligned_alloc(8, (len + 7) & ~(size_t)7);
		struct asgst_sample_hdr *h = (void *)b;
		const uint8_t *src = (const uint8_t *)o + o->hdr_size;
		const char *why = "unset";
		struct sample s;

		assert_non_null(b);
		memset(b, 0xee, len);
		memcpy(h, o, o->hdr_size);
		h->version = 2;
		h->hdr_size = sizeof(*h);
		h->window_off = (uint32_t)woff;
		h->pad = 0;
		h->chunk_len = h->chunk_off = 0;
		h->chunk_addr = h->chunk_sp = h->chunk_end = 0;
		memcpy((uint8_t *)b + sizeof(*h), src, stacks);
		memcpy((uint8_t *)b + woff, src + stacks, o->window_len);
		assert_int_equal(sample__parse(b, len, &s, &why), 0);
		assert_null(why);
		assert_ptr_equal(s.window, (uint8_t *)b + woff);
		assert_memory_equal(s.window, src + stacks, o->window_len);
		assert_memory_equal(s.kstack, src, stacks);
		assert_int_equal(sample__used_len(&s), len);
		if (o->window_len) {
			expect_bad(b, len - 1, "truncated tail");
		}
		h->window_off = (uint32_t)(sizeof(*h) + stacks - 8);
		if (stacks)
			expect_bad(b, len, "window overlaps the stacks");
		h->window_off = (uint32_t)woff + 4;
		expect_bad(b, len, "window overlaps the stacks");
		h->window_off = (uint32_t)len + 8;
		expect_bad(b, len, "truncated tail");
		h->window_off = UINT32_MAX - 7;
		expect_bad(b, len, "truncated tail");
		h->window_off = (uint32_t)woff;
		h->hdr_size = hdr_min(o);	/* a v1-sized header in v2 */
		expect_bad(b, len, "bad header size");
		free(b);
	}
}

/*
 * Version 2's frozen frames of a virtual thread: a chunk copy after the
 * window, described by its JVM addresses. Built on the real records.
 */
static void test_v2_chunk(void **state)
{
	(void)state;
	for (int i = 0; i < nrecs; i++) {
		const struct asgst_sample_hdr *o = (void *)recs[i].buf;
		size_t stacks = 8ull * (o->kstack_n + o->ustack_n);
		size_t woff = sizeof(*o) + stacks;
		size_t coff = (woff + o->window_len + 7) & ~(size_t)7;
		size_t clen = 256, len = coff + clen;
		uint64_t *b = aligned_alloc(8, len);
		struct asgst_sample_hdr *h = (void *)b;
		const uint8_t *src = (const uint8_t *)o + o->hdr_size;
		struct asgst_sample_hdr good;
		const char *why = "unset";
		struct sample s;

		assert_non_null(b);
		memset(b, 0x5a, len);
		memcpy(h, o, o->hdr_size);
		h->version = 2;
		h->hdr_size = sizeof(*h);
		h->window_off = (uint32_t)woff;
		h->pad = 0;
		memcpy((uint8_t *)b + sizeof(*h), src, stacks + o->window_len);
		h->chunk_off = (uint32_t)coff;
		h->chunk_len = (uint32_t)clen;
		h->chunk_addr = 0x69ed9b748ull;
		h->chunk_sp = h->chunk_addr + 16;
		h->chunk_end = h->chunk_addr + 784;
		good = *h;
		assert_int_equal(sample__parse(b, len, &s, &why), 0);
		assert_ptr_equal(s.chunk, (uint8_t *)b + coff);
		assert_int_equal(sample__used_len(&s), len);
		/* no chunk: none reported */
		h->chunk_len = 0;
		assert_int_equal(sample__parse(b, len, &s, &why), 0);
		assert_null(s.chunk);
		*h = good;
		expect_bad(b, len - 8, "bad frozen-frames chunk");
		h->chunk_off += 4;
		expect_bad(b, len, "bad frozen-frames chunk");
		*h = good;
		if (o->window_len >= 8) {
			h->chunk_off = (uint32_t)woff;	/* over the window */
			expect_bad(b, len, "bad frozen-frames chunk");
		}
		*h = good;
		h->chunk_len = ASGST_CHUNK_BYTES + 8;
		expect_bad(b, len, "bad frozen-frames chunk");
		*h = good;
		h->chunk_sp = h->chunk_addr + 24;	/* not the top frame's */
		expect_bad(b, len, "bad frozen-frames chunk");
		*h = good;
		h->chunk_end = h->chunk_sp;		/* no frames */
		expect_bad(b, len, "bad frozen-frames chunk");
		free(b);
	}
}

/*
 * Version 4: a CPython thread's frames after the window, at py_off; bad
 * counts and offsets rejected. Built on the real records.
 */
static void test_v4_python(void **state)
{
	(void)state;
	for (int i = 0; i < nrecs; i++) {
		const struct asgst_sample_hdr *o = (void *)recs[i].buf;
		size_t stacks = 8ull * (o->kstack_n + o->ustack_n);
		size_t woff = sizeof(*o) + stacks;
		size_t poff = (woff + o->window_len + 7) & ~(size_t)7;
		size_t n = 5, len = poff + n * sizeof(struct asgst_py_frame);
		uint64_t *b = aligned_alloc(8, len);
		struct asgst_sample_hdr *h = (void *)b;
		const uint8_t *src = (const uint8_t *)o + o->hdr_size;
		struct asgst_py_frame *pf;
		struct asgst_sample_hdr good;
		const char *why = "unset";
		struct sample s;

		assert_non_null(b);
		memset(b, 0x33, len);
		memcpy(h, o, o->hdr_size);
		h->version = 4;
		h->hdr_size = sizeof(*h);
		h->window_off = (uint32_t)woff;
		h->pad = 0;
		h->chunk_len = h->chunk_off = 0;
		memcpy((uint8_t *)b + sizeof(*h), src, stacks + o->window_len);
		pf = (struct asgst_py_frame *)((uint8_t *)b + poff);
		for (size_t k = 0; k < n; k++)
			pf[k] = (struct asgst_py_frame){ 0x7f0000001000ull + k,
							 184 + 2 * k, k == 4 };
		h->flags = ASGST_SF_PY;
		h->py_n = (uint32_t)n;
		h->py_off = (uint32_t)poff;
		h->py_tstate = 0x55550000ull;
		good = *h;
		assert_int_equal(sample__parse(b, len, &s, &why), 0);
		assert_null(why);
		assert_ptr_equal(s.py, pf);
		assert_int_equal(s.py[4].flags, ASGST_PYF_ENTRY);
		assert_int_equal(sample__used_len(&s), len);
		/* none: none reported */
		h->py_n = 0;
		assert_int_equal(sample__parse(b, len, &s, &why), 0);
		assert_null(s.py);
		*h = good;
		expect_bad(b, len - 8, "bad Python frames");
		h->py_off += 4;
		expect_bad(b, len, "bad Python frames");
		*h = good;
		if (o->window_len >= 8) {
			h->py_off = (uint32_t)woff;	/* over the window */
			expect_bad(b, len, "bad Python frames");
		}
		*h = good;
		h->py_n = ASGST_PY_MAX_FRAMES + 1;
		expect_bad(b, len, "bad Python frames");
		*h = good;
		h->py_off = UINT32_MAX - 7;
		expect_bad(b, len, "bad Python frames");
		/* a version 3 header has no py_* fields: they are not read */
		*h = good;
		h->version = 3;
		h->hdr_size = offsetof(struct asgst_sample_hdr, py_n);
		assert_int_equal(sample__parse(b, len, &s, &why), 0);
		assert_null(s.py);
		free(b);
	}
}

/*
 * Version 3: the JVM events' fields; an allocation or lock event only in
 * a header that has them.
 */
static void test_v3_jvm_events(void **state)
{
	(void)state;
	for (int i = 0; i < nrecs; i++) {
		const struct asgst_sample_hdr *o = (void *)recs[i].buf;
		size_t stacks = 8ull * (o->kstack_n + o->ustack_n);
		size_t woff = sizeof(*o) + stacks, len = woff + o->window_len;
		uint64_t *b = aligned_alloc(8, (len + 7) & ~(size_t)7);
		struct asgst_sample_hdr *h = (void *)b;
		const uint8_t *src = (const uint8_t *)o + o->hdr_size;
		const char *why = "unset";
		struct sample s;

		assert_non_null(b);
		memset(b, 0, len);
		memcpy(h, o, o->hdr_size);
		h->version = 3;
		h->hdr_size = sizeof(*h);
		h->window_off = (uint32_t)woff;
		h->pad = 0;
		h->chunk_len = h->chunk_off = 0;
		h->chunk_addr = h->chunk_sp = h->chunk_end = 0;
		h->event = ASGST_EV_ALLOC;
		h->ev_size = 24;
		h->ev_weight = 524288;
		strcpy(h->ev_class, "java.lang.String");
		memcpy((uint8_t *)b + sizeof(*h), src, stacks);
		memcpy((uint8_t *)b + woff, src + stacks, o->window_len);
		assert_int_equal(sample__parse(b, len, &s, &why), 0);
		assert_null(why);
		assert_ptr_equal(s.window, (uint8_t *)b + woff);
		assert_memory_equal(s.window, src + stacks, o->window_len);
		assert_string_equal(s.hdr->ev_class, "java.lang.String");
		h->event = ASGST_EV_LOCK;
		assert_int_equal(sample__parse(b, len, &s, &why), 0);
		h->event = ASGST_EV_LOCK + 1;
		expect_bad(b, len, "unknown event");
		/* a version 2 header ends before the events' fields */
		h->event = ASGST_EV_ALLOC;
		h->version = 2;
		expect_bad(b, len, "unknown event");
		h->version = 3;
		h->hdr_size = offsetof(struct asgst_sample_hdr, ev_size);
		expect_bad(b, len, "bad header size");
		free(b);
	}
}

static void expect_bad(uint64_t *b, size_t len, const char *reason)
{
	const char *why = NULL;
	struct sample s;

	assert_int_equal(sample__parse(b, len, &s, &why), -EINVAL);
	assert_non_null(why);
	assert_string_equal(why, reason);
}

static void test_bad_magic_version_size(void **state)
{
	(void)state;
	for (int i = 0; i < nrecs; i++) {
		uint64_t *b = copy_rec(i, 0);
		struct asgst_sample_hdr *h = (void *)b;
		struct asgst_sample_hdr orig = *h;

		h->magic ^= 1;
		expect_bad(b, recs[i].len, "bad magic");
		*h = orig;
		h->version = ASGST_SAMPLE_VERSION + 1;
		expect_bad(b, recs[i].len, "unsupported version");
		h->version = 0;
		expect_bad(b, recs[i].len, "unsupported version");
		*h = orig;
		h->hdr_size = orig.hdr_size - 8;
		expect_bad(b, recs[i].len, "bad header size");
		h->hdr_size = orig.hdr_size + 4;
		expect_bad(b, recs[i].len, "bad header size");
		/* a longer header is allowed (later versions may add fields) */
		*h = orig;
		h->hdr_size = recs[i].len + 8;
		expect_bad(b, recs[i].len, "truncated header");
		free(b);
	}
}

static void test_oversized_counts(void **state)
{
	(void)state;
	for (int i = 0; i < nrecs; i++) {
		uint64_t *b = copy_rec(i, 0);
		struct asgst_sample_hdr *h = (void *)b;
		struct asgst_sample_hdr orig = *h;

		h->kstack_n = ASGST_MAX_KSTACK + 1;
		expect_bad(b, recs[i].len, "too many kernel frames");
		h->kstack_n = UINT32_MAX;
		expect_bad(b, recs[i].len, "too many kernel frames");
		*h = orig;
		h->ustack_n = ASGST_MAX_USTACK + 1;
		expect_bad(b, recs[i].len, "too many user frames");
		h->ustack_n = UINT32_MAX / 8 + 1;
		expect_bad(b, recs[i].len, "too many user frames");
		*h = orig;
		h->window_len = ASGST_MAX_WINDOW + 1;
		expect_bad(b, recs[i].len, "window too large");
		h->window_len = UINT32_MAX;
		expect_bad(b, recs[i].len, "window too large");
		/* within the maxima but not within the record */
		*h = orig;
		h->window_len = recs[i].len - h->hdr_size -
				8 * (h->kstack_n + h->ustack_n) + 1;
		if (h->window_len <= ASGST_MAX_WINDOW)
			expect_bad(b, recs[i].len, "truncated tail");
		*h = orig;
		h->kstack_n = ASGST_MAX_KSTACK;
		h->ustack_n = ASGST_MAX_USTACK;
		h->window_len = ASGST_MAX_WINDOW;
		expect_bad(b, recs[i].len, "truncated tail");
		free(b);
	}
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_garbage(void **state)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	size_t maxlen = 0;
	uint64_t *g;

	(void)state;
	for (int i = 0; i < nrecs; i++)
		if (recs[i].len > maxlen)
			maxlen = recs[i].len;
	g = aligned_alloc(8, (maxlen + 7) & ~(size_t)7);
	assert_non_null(g);

	/* pure noise: never a valid magic by chance with this seed */
	for (int round = 0; round < 2000; round++) {
		size_t len = xorshift(&seed) % (maxlen + 1);
		const char *why = NULL;
		struct sample s;

		for (size_t w = 0; w < (len + 7) / 8; w++)
			g[w] = xorshift(&seed);
		assert_int_equal(sample__parse(g, len, &s, &why), -EINVAL);
		assert_non_null(why);
	}

	/*
	 * Real records with random header words after the version: a parse
	 * that succeeds must describe parts that fit the record.
	 */
	for (int round = 0; round < 20000; round++) {
		int i = xorshift(&seed) % nrecs;
		struct asgst_sample_hdr *h = (void *)g;
		const char *why = NULL;
		struct sample s;
		uint32_t *words = (uint32_t *)g;
		size_t len = recs[i].len;
		int ret;

		memcpy(g, recs[i].buf, len);
		/* scramble one of hdr_size, flags..window_len, as bytes */
		switch (xorshift(&seed) % 4) {
		case 0:
			h->hdr_size = xorshift(&seed);
			break;
		case 1:
			h->kstack_n = xorshift(&seed) % (ASGST_MAX_KSTACK + 2);
			break;
		case 2:
			h->ustack_n = xorshift(&seed) % (ASGST_MAX_USTACK + 2);
			break;
		default:
			words[2 + xorshift(&seed) % 10] = xorshift(&seed);
			break;
		}
		if (xorshift(&seed) & 1)
			len = xorshift(&seed) % (len + 1);
		ret = sample__parse(g, len, &s, &why);
		if (ret == 0) {
			const uint8_t *end = (const uint8_t *)g + len;

			assert_null(why);
			assert_true(h->hdr_size >= hdr_min(h));
			assert_true((const uint8_t *)(s.ustack + h->ustack_n) <= end);
			assert_true(s.window + h->window_len <= end);
			assert_true(h->kstack_n <= ASGST_MAX_KSTACK);
			assert_true(h->ustack_n <= ASGST_MAX_USTACK);
		} else {
			assert_int_equal(ret, -EINVAL);
			assert_non_null(why);
		}
	}
	free(g);
}

static void test_misaligned_and_null(void **state)
{
	uint64_t *b = copy_rec(0, 8);
	const char *why = NULL;
	struct sample s;

	(void)state;
	memmove((uint8_t *)b + 4, b, recs[0].len);
	assert_int_equal(sample__parse((uint8_t *)b + 4, recs[0].len, &s, &why),
			 -EINVAL);
	assert_string_equal(why, "misaligned record");
	assert_int_equal(sample__parse(NULL, 100, &s, &why), -EINVAL);
	assert_non_null(why);
	assert_int_equal(sample__parse(recs[0].buf, recs[0].len, NULL, &why),
			 -EINVAL);
	/* why may be NULL */
	assert_int_equal(sample__parse(recs[0].buf, 3, &s, NULL), -EINVAL);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_records_parse),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_magic_version_size),
		cmocka_unit_test(test_oversized_counts),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_v2_layout),
		cmocka_unit_test(test_v2_chunk),
		cmocka_unit_test(test_v3_jvm_events),
		cmocka_unit_test(test_v4_python),
		cmocka_unit_test(test_misaligned_and_null),
	};

	return cmocka_run_group_tests(tests, load_records, free_records);
}
