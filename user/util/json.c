// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JSON string literals. Strings are escaped per RFC 8259; bytes that are
 * not valid UTF-8 become U+FFFD so the output always parses.
 */
#include <stdint.h>
#include <string.h>

#include "util/json.h"

/* length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid */
size_t utf8__seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

void json__put_string(FILE *f, const char *s, bool html_safe)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n;

	if (!s) {
		fputs("null", f);
		return;
	}
	n = strlen(s);
	putc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		size_t l;

		switch (c) {
		case '"':  fputs("\\\"", f); i++; continue;
		case '\\': fputs("\\\\", f); i++; continue;
		case '\b': fputs("\\b", f); i++; continue;
		case '\f': fputs("\\f", f); i++; continue;
		case '\n': fputs("\\n", f); i++; continue;
		case '\r': fputs("\\r", f); i++; continue;
		case '\t': fputs("\\t", f); i++; continue;
		}
		if (c < 0x20 || (html_safe && (c == '<' || c == '>' || c == '&'))) {
			fprintf(f, "\\u%04x", c);
			i++;
			continue;
		}
		l = utf8__seq_len(u + i, n - i);
		if (!l) {
			fputs("\xef\xbf\xbd", f);	/* U+FFFD */
			i++;
			continue;
		}
		fwrite(u + i, 1, l, f);
		i += l;
	}
	putc('"', f);
}
