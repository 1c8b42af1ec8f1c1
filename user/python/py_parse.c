// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Parsers of CPython str objects and 3.11 location tables (py_parse.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "python/py_parse.h"

static uint64_t rd(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	memcpy(&v, p, n);
	return v;
}

int py_str__header(const uint8_t *hdr, size_t hlen, const struct py_layout *l,
		   struct py_str_info *out)
{
	uint64_t length;
	uint32_t state, kind;

	if (!hdr || !l || !out || l->str_data < 0 ||
	    hlen < (size_t)l->str_data || l->str_length < 0 ||
	    l->str_state < 0 || (size_t)l->str_length + 8 > hlen ||
	    (size_t)l->str_state + 4 > hlen)
		return -EINVAL;
	length = rd(hdr + l->str_length, 8);
	state = (uint32_t)rd(hdr + l->str_state, 4);
	/* PEP 393 state bits: interned:2 kind:3 compact:1 ascii:1 ready:1 */
	kind = (state >> 2) & 7;
	if (!(state & (1u << 5)) || !(state & (1u << 7)) ||
	    (kind != 1 && kind != 2 && kind != 4) || length > (1ull << 40))
		return -EINVAL;
	out->kind = kind;
	out->cut = length > PY_STR_MAX_CHARS;
	out->length = out->cut ? PY_STR_MAX_CHARS : (uint32_t)length;
	if (state & (1u << 6)) {
		if (kind != 1)
			return -EINVAL;
		out->data_off = (uint32_t)l->str_ascii_data;
	} else {
		out->data_off = (uint32_t)l->str_data;
	}
	return 0;
}

size_t py_str__utf8(const uint8_t *data, uint32_t n, uint32_t kind, char *out,
		    size_t cap)
{
	size_t o = 0;

	if (!out || !cap)
		return 0;
	if (!data || (kind != 1 && kind != 2 && kind != 4))
		n = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t c = (uint32_t)rd(data + (size_t)i * kind, kind);
		char b[4];
		size_t k;

		if (!c || (c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
			c = '?';
		if (c < 0x80) {
			b[0] = (char)c;
			k = 1;
		} else if (c < 0x800) {
			b[0] = (char)(0xc0 | c >> 6);
			b[1] = (char)(0x80 | (c & 0x3f));
			k = 2;
		} else if (c < 0x10000) {
			b[0] = (char)(0xe0 | c >> 12);
			b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[2] = (char)(0x80 | (c & 0x3f));
			k = 3;
		} else {
			b[0] = (char)(0xf0 | c >> 18);
			b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
			b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[3] = (char)(0x80 | (c & 0x3f));
			k = 4;
		}
		if (o + k >= cap)
			break;
		memcpy(out + o, b, k);
		o += k;
	}
	out[o] = '\0';
	return o;
}

/* a 3.11 varint: 6-bit groups, least significant first, 0x40 = more */
static int varint(const uint8_t *tab, size_t len, size_t *p, uint64_t *v)
{
	unsigned shift = 0;
	uint64_t r = 0;
	uint8_t b;

	do {
		if (*p >= len || shift > 60)
			return -1;
		b = tab[(*p)++];
		r |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*v = r;
	return 0;
}

static int svarint(const uint8_t *tab, size_t len, size_t *p, int64_t *v)
{
	uint64_t u;

	if (varint(tab, len, p, &u))
		return -1;
	*v = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return 0;
}

int32_t py_linetable__line(const uint8_t *tab, size_t len,
			   int32_t firstlineno, int64_t idx)
{
	int64_t line = firstlineno, addr = 0;
	size_t p = 0;

	if (idx < 0)
		return firstlineno;
	if (!tab || len > PY_LINETABLE_MAX)
		return -1;
	/* every entry takes at least a byte: the walk ends */
	while (p < len) {
		uint8_t first = tab[p++];
		unsigned code = (first >> 3) & 15;
		int64_t units = (first & 7) + 1, delta = 0;
		uint64_t skip;
		bool has_line = true;

		if (!(first & 0x80))
			return -1;	/* not the start of an entry */
		if (code <= 9) {
			p += 1;			/* column byte */
		} else if (code <= 12) {
			delta = code - 10;
			p += 2;			/* start and end column */
		} else if (code == 13) {
			if (svarint(tab, len, &p, &delta))
				return -1;
		} else if (code == 14) {
			if (svarint(tab, len, &p, &delta) ||
			    varint(tab, len, &p, &skip) ||
			    varint(tab, len, &p, &skip) ||
			    varint(tab, len, &p, &skip))
				return -1;
		} else {
			has_line = false;	/* 15: no location */
		}
		/* a line stays within 32 bits: so must a step to it */
		if (p > len || delta < -(1ll << 32) || delta > (1ll << 32))
			return -1;
		line += delta;
		if (line < -(1ll << 31) || line > (1ll << 31) - 1)
			return -1;
		if (idx < addr + units)
			return has_line ? (int32_t)line : -1;
		addr += units;
	}
	return -1;
}
