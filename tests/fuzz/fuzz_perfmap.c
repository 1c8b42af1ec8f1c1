// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer: JIT symbols, perf map text and jitdump records, and lookup. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbols/perfmap.h"

static void probe(struct perfmap *pm, const uint8_t *data, size_t size)
{
	uint64_t pc = 0;
	const char *file;

	for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
		memcpy(&pc, data + i, 8);
		perfmap__find(pm, pc, &file);
		perfmap__find(pm, pc - 1, &file);
	}
	perfmap__find(pm, 0, NULL);
	perfmap__find(pm, UINT64_MAX, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *pm = perfmap__new(0);
	struct perfmap_stats st;
	size_t cut = size ? data[0] * size / 256 : 0;

	if (!pm)
		return 0;
	/* as text, in two reads with a lookup between (two paintings) */
	perfmap__add_text(pm, (const char *)data, cut);
	probe(pm, data, size);
	perfmap__add_text(pm, (const char *)data + cut, size - cut);
	probe(pm, data, size);
	/* and as a jitdump painted over it */
	perfmap__add_jitdump(pm, data, size);
	probe(pm, data, size);
	perfmap__stats(pm, &st);
	perfmap__free(pm);
	return 0;
}
