// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: the raw recording reader and the parser of every chunk it
 * hands out: samples (RAW_SAMPLE_REF ones put together from their
 * threads' earlier windows by the reader: seeds/fuzz_raw/sample_refs.asgst
 * has them), processes, code maps, decoded stacks and the meta chunk.
 * fuzz_raw_report runs the whole of report over such a file.
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
	}
	profile__free(p);
	unlink(path);
	return 0;
}
