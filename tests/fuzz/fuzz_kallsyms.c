// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer: /proc/kallsyms parsing and lookup. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbols/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kallsyms *ks = kallsyms__parse((const char *)data, size);
	const char *mod;
	uint64_t off, pc = 0;

	if (!ks)
		return 0;
	if (size >= 8)
		memcpy(&pc, data + size - 8, 8);
	kallsyms__lookup(ks, pc, &off, &mod);
	kallsyms__lookup(ks, 0, &off, &mod);
	kallsyms__lookup(ks, UINT64_MAX, &off, &mod);
	kallsyms__count(ks);
	kallsyms__restricted(ks);
	kallsyms__free(ks);
	return 0;
}
