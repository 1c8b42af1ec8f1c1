// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer: /proc/PID/maps text parsing and lookup. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct maps m = { 0 };
	struct maps_entry e;
	uint64_t probe = 0;

	if (maps__parse((const char *)data, size, &m) == 0) {
		/* lookups at and around every entry must stay in bounds */
		for (size_t i = 0; i < m.n; i++) {
			maps__find(&m, m.e[i].start);
			maps__find(&m, m.e[i].end - 1);
			maps__find(&m, m.e[i].end);
		}
		if (size >= 8)
			memcpy(&probe, data, 8);
		maps__find(&m, probe);
		maps__free(&m);
	}
	memset(&e, 0, sizeof(e));
	if (maps__parse_line((const char *)data, size, &e) == 0)
		free(e.path);
	return 0;
}
