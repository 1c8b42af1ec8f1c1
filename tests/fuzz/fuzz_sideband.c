// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: side-band records as a ring of any content (sideband__read_ring
 * and sideband__parse), and the maps kept from them: each parsed record
 * becomes a maplog event, and the text maplog gives back must parse.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture/sideband.h"
#include "symbols/maplog.h"
#include "symbols/maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct maplog_limits lim = { .max_procs = 8, .max_entries = 16,
				     .max_bytes = 1u << 16, .keep_ns = 100 };
	static uint8_t buf[65536];
	uint64_t ring = 1, bad = 0, tail;
	struct maplog *ml;

	if (size < 2)
		return 0;
	/* the ring: the largest power of two the input holds, read from an
	 * offset the first byte gives, so records wrap */
	while (ring * 2 <= size - 1)
		ring *= 2;
	ml = maplog__new(&lim);
	if (!ml)
		return 0;
	tail = data[0];
	sideband__read_ring(data + 1, ring, tail, tail + ring, buf,
			    sizeof(buf), maplog__apply, ml, &bad);
	for (uint32_t pid = 0; pid < 1024; pid++) {
		struct maps mp = { 0 };
		char *text;
		size_t len;

		if (maplog__text(ml, pid, &text, &len))
			continue;
		if (maps__parse(text, len, &mp) == 0)
			maps__free(&mp);
		free(text);
	}
	maplog__prune(ml, UINT64_MAX);
	maplog__free(ml);
	return 0;
}
