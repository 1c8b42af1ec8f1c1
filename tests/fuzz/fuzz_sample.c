// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer: the sample-record parser (records come from the kernel, but
 * raw files replay them from disk). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture/sample.h"

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sample s;
	const char *why = NULL;
	uint64_t *copy;
	uint64_t sum = 0;

	/* records are 8-aligned in the ring buffer: keep that */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (sample__parse(copy, size, &s, &why) == 0) {
		/* every part the parser hands out must be readable */
		for (uint32_t i = 0; i < s.hdr->kstack_n; i++)
			sum += s.kstack[i];
		for (uint32_t i = 0; i < s.hdr->ustack_n; i++)
			sum += s.ustack[i];
		for (uint32_t i = 0; i < s.hdr->window_len; i++)
			sum += s.window[i];
	}
	sink = sum;
	free(copy);
	return 0;
}
