// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz target of the decoder: the input is one raw sample record (seeds:
 * real records captured from JVMs, tests/fuzz/seeds/fuzz_decode/), decoded
 * against a real code map (tests/data/decode/, see its README). libFuzzer
 * mutates registers, counts and window bytes; on top of that the first
 * input byte picks a JEP-style mutation of the registers (sp/fp shifted by
 * a few words, fp/ip taken from the window) so corrupted-but-plausible
 * stacks are walked too. The decoder must never crash, read outside the
 * window or loop.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "jvm/codemap.h"
#include "decode/decode.h"
#include "util/strtab.h"
#include "unit/decode_data.h"

static struct dd_set maps[2];
static int nmaps;
static struct strtab *st;
static struct decoder *dec;
static struct frame frames[TRACE_MAX_FRAMES];
static uint64_t buf[(64 * 1024 + 8192) / 8];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *names[] = { "chain-17", "jni-17" };
	const char *dir = getenv("ASGST_DECODE_DATA");
	char err[256];

	(void)argc;
	(void)argv;
	if (!dir)
		dir = "tests/data/decode";
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[512];

		memset(&maps[nmaps], 0, sizeof(maps[nmaps]));
		snprintf(path, sizeof(path), "%s/%s.map.gz", dir, names[i]);
		if (!dd_open_map(&maps[nmaps], path, err, sizeof(err)))
			nmaps++;
	}
	st = strtab__new();
	dec = decoder__new(NULL, st);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct asgst_sample_hdr *h;
	struct sample s;
	struct trace t;
	const char *why;
	uint8_t mut = 0;

	if (size < 1 || size - 1 > sizeof(buf))
		return 0;
	mut = data[0];
	memcpy(buf, data + 1, size - 1);
	if (sample__parse(buf, size - 1, &s, &why))
		return 0;
	h = (struct asgst_sample_hdr *)buf;
	switch (mut & 7) {
	case 1:
		h->sp += 8 * ((mut >> 3) & 7);
		break;
	case 2:
		h->bp += 8 * ((mut >> 3) & 7) - 32;
		break;
	case 3:
		if (h->window_len >= 64)
			memcpy(&h->bp, s.window + 8 * ((mut >> 3) & 7), 8);
		break;
	case 4:
		if (h->window_len >= 64)
			memcpy(&h->ip, s.window + 8 * ((mut >> 3) & 7), 8);
		break;
	case 5:
		h->rbx = h->bp;
		h->r13 = h->sp;
		break;
	default:
		break;
	}
	decoder__trace(dec, &s, nmaps ? maps[(mut >> 6) % nmaps].cm : NULL,
		       true, &t, frames, TRACE_MAX_FRAMES);
	if (t.nframes > TRACE_MAX_FRAMES)
		abort();
	return 0;
}
