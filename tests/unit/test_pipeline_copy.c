// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The copy a record waits in (pipeline.c: record_copy): only the bytes its
 * counts cover, and for a sample with a window without the sampler's gap
 * between the stacks and the window; the stacks, the window and a
 * virtual thread's frozen frames stay byte for byte, as sample__parse
 * reads them. Checked on what the pipeline hands on: the records of a raw
 * recording, read back; the raw file's writer cuts a record held in the
 * ring buffer (handed to the sink as the sampler wrote it) the same way.
 */
#include <setjmp.h>
#include <stdarg.h>
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
#include "profile/pipeline.h"
#include "profile/profile.h"
#include "recorder/raw_sink.h"

#define GAP_FRAMES	(64 + 127)	/* what the sampler reserves */
#define WIN_LEN		200
#define CHUNK_LEN	64

/* a sample as the sampler lays it out: header, 2 kernel and 1 user pcs,
 * the window at window_off after the room for the deepest stacks, and
 * (chunk) frozen frames after the window; its length in *len */
static uint64_t *make_record(bool window, bool chunk, size_t *len)
{
	size_t hdr = sizeof(struct asgst_sample_hdr);
	size_t woff = hdr + 8 * GAP_FRAMES;
	size_t coff = woff + ((WIN_LEN + 7) & ~7u);
	size_t n = (coff + CHUNK_LEN + 7) / 8 + 4;
	uint64_t *rec = calloc(n, 8);
	struct asgst_sample_hdr *h = (struct asgst_sample_hdr *)rec;
	uint8_t *p = (uint8_t *)rec;

	assert_non_null(rec);
	h->magic = ASGST_SAMPLE_MAGIC;
	h->version = ASGST_SAMPLE_VERSION;
	h->hdr_size = (uint16_t)hdr;
	h->event = ASGST_EV_CPU;
	h->pid = h->tid = h->ns_pid = h->ns_tid = 4242;
	h->kstack_n = 2;
	h->ustack_n = 1;
	memcpy(h->comm, "copytest", 9);
	((uint64_t *)(p + hdr))[0] = 0xffffffff81000010ull;
	((uint64_t *)(p + hdr))[1] = 0xffffffff81000020ull;
	((uint64_t *)(p + hdr))[2] = 0x401000;
	/* the gap holds stale bytes the copy must not need */
	memset(p + hdr + 24, 0xee, woff - hdr - 24);
	if (!window) {
		h->window_off = (uint32_t)(hdr + 24);
		*len = woff;	/* a fixed-size reservation */
		return rec;
	}
	h->window_off = (uint32_t)woff;
	h->window_len = WIN_LEN;
	h->sp = 0x7ffd0000;
	for (size_t i = 0; i < WIN_LEN; i++)
		p[woff + i] = (uint8_t)(i * 7 + 1);
	*len = woff + WIN_LEN;
	if (chunk) {
		h->chunk_off = (uint32_t)coff;
		h->chunk_len = CHUNK_LEN;
		h->chunk_addr = 0x10000;
		h->chunk_sp = 0x10010;
		h->chunk_end = 0x10100;
		for (size_t i = 0; i < CHUNK_LEN; i++)
			p[coff + i] = (uint8_t)(0xa0 + i);
		*len = coff + CHUNK_LEN + 16;	/* slack after it too */
	}
	return rec;
}

/* push rec through an offline pipeline that writes a raw file (ring: as
 * a live pipeline hands the sink a record held in the ring buffer, as the
 * sampler wrote it), read the record back into out (8-aligned), its
 * length the return */
static size_t through_pipeline(const uint64_t *rec, size_t len,
			       uint64_t *out, size_t cap, bool ring)
{
	char path[] = "/tmp/test_pipeline_copy.XXXXXX", err[256];
	struct pipeline_opts o = { .offline = true, .quiet = true };
	struct profile *prof = profile__new();
	struct raw_writer *w = NULL;
	struct raw_reader *r = NULL;
	struct pipeline_sink sink;
	struct pipeline *pl;
	const void *payload;
	uint64_t plen;
	uint32_t type;
	size_t got = 0;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_non_null(prof);
	assert_int_equal(raw_writer__open(&w, path, err, sizeof(err)), 0);
	raw_sink__init(&sink, &w);
	o.sink = &sink;
	pl = pipeline__new(prof, NULL, &o);
	assert_non_null(pl);
	if (ring) {
		assert_int_equal(sink.sample(sink.ctx, rec, len), 0);
	} else {
		assert_int_equal(pipeline__push(pl, rec, len), 0);
		pipeline__process(pl, 0, true);
	}
	assert_int_equal(raw_writer__close(w, prof, NULL, 0), 0);
	pipeline__free(pl);
	assert_int_equal(raw_reader__open(&r, path, err, sizeof(err)), 0);
	while (raw_reader__next(r, &type, &payload, &plen, err,
				sizeof(err)) == 1) {
		if (type != RAW_SAMPLE)
			continue;
		assert_int_equal(got, 0);	/* one record */
		assert_true(plen <= cap * 8);
		memcpy(out, payload, plen);
		got = plen;
	}
	raw_reader__close(r);
	profile__free(prof);
	unlink(path);
	assert_true(got > 0);
	return got;
}

static void check_same(const uint64_t *a, size_t alen, const uint64_t *b,
		       size_t blen)
{
	struct sample sa, sb;
	const char *why = NULL;

	assert_int_equal(sample__parse(a, alen, &sa, &why), 0);
	assert_int_equal(sample__parse(b, blen, &sb, &why), 0);
	assert_int_equal(sa.hdr->kstack_n, sb.hdr->kstack_n);
	assert_int_equal(sa.hdr->ustack_n, sb.hdr->ustack_n);
	assert_memory_equal(sa.kstack, sb.kstack,
			    8 * (sa.hdr->kstack_n + sa.hdr->ustack_n));
	assert_int_equal(sa.hdr->window_len, sb.hdr->window_len);
	if (sa.hdr->window_len)
		assert_memory_equal(sa.window, sb.window, sa.hdr->window_len);
	assert_int_equal(sa.hdr->chunk_len, sb.hdr->chunk_len);
	if (sa.hdr->chunk_len) {
		assert_non_null(sb.chunk);
		assert_memory_equal(sa.chunk, sb.chunk, sa.hdr->chunk_len);
		assert_int_equal(sa.hdr->chunk_sp, sb.hdr->chunk_sp);
	}
	assert_int_equal(sa.hdr->sp, sb.hdr->sp);
}

static void run(bool window, bool chunk, bool ring)
{
	static uint64_t back[8192];
	size_t len, n, hdr = sizeof(struct asgst_sample_hdr);
	uint64_t *rec = make_record(window, chunk, &len);
	const struct asgst_sample_hdr *h = (const void *)back;

	n = through_pipeline(rec, len, back, sizeof(back) / 8, ring);
	check_same(rec, len, back, n);
	/* the gap and the slack are gone: the stacks, then what follows */
	assert_int_equal(h->window_off, hdr + 24);
	if (!window)
		assert_int_equal(n, hdr + 24);
	else if (!chunk)
		assert_int_equal(n, hdr + 24 + WIN_LEN);
	else
		assert_int_equal(n, hdr + 24 + ((WIN_LEN + 7) & ~7u) +
				 CHUNK_LEN);
	free(rec);
}

static void test_no_window(void **state)
{
	(void)state;
	run(false, false, false);
	run(false, false, true);
}

static void test_window(void **state)
{
	(void)state;
	run(true, false, false);
	run(true, false, true);
}

static void test_window_chunk(void **state)
{
	(void)state;
	run(true, true, false);
	run(true, true, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_window),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_window_chunk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
