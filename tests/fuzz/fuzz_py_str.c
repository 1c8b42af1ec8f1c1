// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: a CPython str object as read from a process (python/
 * py_parse.c): its header, then its characters as UTF-8, the way
 * py_proc.c reads them (the characters where the header says, only as
 * many as it says and the input has).
 */
#include <stddef.h>
#include <stdint.h>

#include "python/py_layout.h"
#include "python/py_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct py_layout *l = py_layout__find(0x030b);
	char out[PY_STR_MAX_CHARS * 4 + 4];
	struct py_str_info si;
	size_t need;

	if (!l || py_str__header(data, size, l, &si))
		return 0;
	need = (size_t)si.length * si.kind;
	if (si.data_off > size || need > size - si.data_off)
		return 0;
	py_str__utf8(data + si.data_off, si.length, si.kind, out, sizeof(out));
	/* and cut short */
	py_str__utf8(data + si.data_off, si.length, si.kind, out, 5);
	return 0;
}
