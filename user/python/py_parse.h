/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Parsers of CPython objects as read from a process (process_vm_readv):
 * a str's header and characters, a code object's 3.11 location table.
 * The bytes are hostile: every length is bounded, every read checked.
 */
#ifndef ASGST_PY_PARSE_H
#define ASGST_PY_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "python/py_layout.h"

/* the longest name or file name kept, in characters */
#define PY_STR_MAX_CHARS	512
/* the largest location table read */
#define PY_LINETABLE_MAX	(64 * 1024)

struct py_str_info {
	uint32_t kind;		/* bytes a character: 1, 2 or 4 */
	uint32_t length;	/* characters, at most PY_STR_MAX_CHARS */
	uint32_t data_off;	/* where they start in the object */
	uint32_t cut;		/* 1: the str was longer */
};

/*
 * The header of a compact str object (hdr: its first hlen bytes, at
 * least l->str_data). 0, or -EINVAL: not a compact, ready str.
 */
int py_str__header(const uint8_t *hdr, size_t hlen, const struct py_layout *l,
		   struct py_str_info *out);

/*
 * n characters of kind bytes each at data (n * kind bytes) as UTF-8
 * into out (NUL-ended, cut at a character boundary to fit cap); NUL
 * and surrogates become '?'. The bytes written.
 */
size_t py_str__utf8(const uint8_t *data, uint32_t n, uint32_t kind, char *out,
		    size_t cap);

/*
 * The line of the instruction at index idx (code units from the first,
 * -1 before it) from a 3.11 location table of len bytes: firstlineno
 * for idx < 0, -1 when the table says the instruction has no line or
 * does not cover it.
 */
int32_t py_linetable__line(const uint8_t *tab, size_t len,
			   int32_t firstlineno, int64_t idx);

#endif /* ASGST_PY_PARSE_H */
