// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: the raw recording reader and the parser of every chunk it
 * hands out: samples (RAW_SAMPLE_REF ones put together from their
 * threads' earlier windows by the reader: seeds/fuzz_raw/sample_refs.asgst
 * has them), processes, code maps, decoded stacks and the meta chunk.
 * The samples it hands out are written again through raw_writer__sample
 * (which leaves out the sampler's gap and refers to the top of a thread's
 * last window) and read back: each the same record, part for part (or
 * byte for byte, one it could not parse). fuzz_raw_report runs the whole
 * of report over such a file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/sample.h"
#include "profile/profile.h"
#include "output/raw.h"

static volatile uint64_t sink;

/* the samples read, in order, for the round trip */
struct kept {
	uint64_t *rec;
	size_t len;
};
static struct kept kept[4096];
static size_t nkept;

static void keep(const void *pay, uint64_t len)
{
	if (nkept == sizeof(kept) / sizeof(kept[0]))
		return;
	kept[nkept].rec = malloc(len + 8);
	if (!kept[nkept].rec)
		abort();
	if (len)	/* an empty chunk's payload may be NULL */
		memcpy(kept[nkept].rec, pay, len);
	kept[nkept++].len = len;
}

/* a's parts and b's are the same, or (a not parsed) their bytes */
static void same(const struct kept *k, const void *b, uint64_t blen)
{
	struct sample sa, sb;

	if (sample__parse(k->rec, k->len, &sa, NULL)) {
		if (blen != k->len || (blen && memcmp(k->rec, b, blen)))
			abort();
		return;
	}
	if (sample__parse(b, blen, &sb, NULL) ||
	    sa.hdr->kstack_n != sb.hdr->kstack_n ||
	    sa.hdr->ustack_n != sb.hdr->ustack_n ||
	    sa.hdr->window_len != sb.hdr->window_len ||
	    sa.hdr->sp != sb.hdr->sp || sa.hdr->tid != sb.hdr->tid ||
	    memcmp(sa.kstack, sb.kstack,
		   8 * (sa.hdr->kstack_n + sa.hdr->ustack_n)) ||
	    memcmp(sa.window, sb.window, sa.hdr->window_len) ||
	    (!sa.chunk != !sb.chunk) ||
	    (sa.chunk && memcmp(sa.chunk, sb.chunk, sa.hdr->chunk_len)) ||
	    (!sa.py != !sb.py) ||
	    (sa.py && memcmp(sa.py, sb.py, sa.hdr->py_n * sizeof(*sa.py))))
		abort();
}

/* the kept samples written as a recording writes them, and read back */
static void round_trip(void)
{
	char path[] = "/tmp/fuzz_raw_rt.XXXXXX", err[256];
	struct raw_writer *w = NULL;
	struct raw_reader *r = NULL;
	const void *pay;
	uint64_t len;
	uint32_t type;
	size_t got = 0;
	int fd = mkstemp(path);

	if (fd < 0)
		return;
	close(fd);
	if (raw_writer__open(&w, path, err, sizeof(err)))
		goto cleanup;
	for (size_t i = 0; i < nkept; i++)
		raw_writer__sample(w, kept[i].rec, kept[i].len);
	if (raw_writer__close(w, NULL, err, sizeof(err)) ||
	    raw_reader__open(&r, path, err, sizeof(err)))
		goto cleanup;
	while (raw_reader__next(r, &type, &pay, &len, err, sizeof(err)) == 1) {
		if (type != RAW_SAMPLE || got == nkept)
			abort();
		same(&kept[got++], pay, len);
	}
	/* every one read back, none refused */
	if (got != nkept)
		abort();
cleanup:
	raw_reader__close(r);
	unlink(path);
}

/* every byte a parser hands out must be readable */
static uint64_t touch(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += b[i];
	return s;
}

static void chunk(struct profile *p, uint32_t type, const void *pay,
		  uint64_t len)
{
	char err[256];

	switch (type) {
	case RAW_SAMPLE: {
		struct sample s;
		const char *why;

		if (!sample__parse(pay, len, &s, &why))
			sink += touch(s.ustack, s.hdr->ustack_n * 8ull) +
				touch(s.window, s.hdr->window_len);
		keep(pay, len);
		break;
	}
	case RAW_PROC: {
		struct raw_proc_view v;

		if (!raw__parse_proc(pay, len, &v, err, sizeof(err)))
			sink += touch(v.maps, v.maps_len) + strlen(v.comm);
		break;
	}
	case RAW_CODEMAP: {
		struct raw_codemap_view v;

		if (!raw__parse_codemap(pay, len, &v, err, sizeof(err)))
			sink += touch(v.bytes, v.len) + v.offset;
		break;
	}
	case RAW_STACKS:
		raw__load_stacks(p, pay, len);
		break;
	case RAW_META: {
		struct raw_meta m;

		if (!raw__parse_meta(pay, len, &m, err, sizeof(err)))
			sink += m.samples;
		break;
	}
	case RAW_PYCODE: {
		static struct raw_pycode_view v;

		if (!raw__parse_pycode(pay, len, &v, err, sizeof(err)))
			sink += touch(v.v.lt, v.v.lt_len) + strlen(v.func) +
				strlen(v.file);
		break;
	}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/fuzz_raw.XXXXXX", err[256];
	struct raw_reader *r = NULL;
	struct profile *p;
	const void *pay;
	uint64_t len;
	uint32_t type;
	int fd = mkstemp(path);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	p = profile__new();
	if (p && raw_reader__open(&r, path, err, sizeof(err)) == 0) {
		while (raw_reader__next(r, &type, &pay, &len, err,
					sizeof(err)) == 1)
			chunk(p, type, pay, len);
		raw_reader__close(r);
		if (nkept)
			round_trip();
	}
	for (size_t i = 0; i < nkept; i++)
		free(kept[i].rec);
	nkept = 0;
	profile__free(p);
	unlink(path);
	return 0;
}
