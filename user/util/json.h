/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* JSON strings: RFC 8259 escaping, and the UTF-8 check it rests on. */
#ifndef ASGST_JSON_H
#define ASGST_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* length of the valid UTF-8 sequence at s (n > 0 bytes left); 0 when the
 * bytes there are not valid UTF-8 (overlong, surrogate, > U+10FFFF) */
size_t utf8__seq_len(const unsigned char *s, size_t n);
/* s as a JSON string literal (NULL -> null); bad UTF-8 -> U+FFFD;
 * html_safe also escapes < > & so it can sit inside a <script> */
void json__put_string(FILE *f, const char *s, bool html_safe);

#endif /* ASGST_JSON_H */
