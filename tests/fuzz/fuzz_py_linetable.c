// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: a CPython 3.11 location table as read from a process
 * (python/py_parse.c): the input is firstlineno (4 bytes), an
 * instruction index (4 bytes) and the table; the line of that index and
 * of a few others.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "python/py_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int32_t first, idx;

	if (size < 8)
		return 0;
	memcpy(&first, data, 4);
	memcpy(&idx, data + 4, 4);
	py_linetable__line(data + 8, size - 8, first, idx);
	py_linetable__line(data + 8, size - 8, first, -1);
	py_linetable__line(data + 8, size - 8, first, 0);
	py_linetable__line(data + 8, size - 8, first, INT64_MAX);
	return 0;
}
