/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Output formats: each writer reads a struct profile and writes one file. */
#ifndef ASGST_WRITERS_H
#define ASGST_WRITERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct frame;
struct profile;

enum output_format {
	OUT_NONE = 0,
	OUT_COLLAPSED,
	OUT_JSON,
	OUT_PPROF,
	OUT_HTML,
	OUT_RAW,
	OUT_TOP,
};

/* "collapsed"/"folded", "json", ...; OUT_NONE when unknown */
enum output_format output_format__from_name(const char *name);
/* by extension: .collapsed .folded .txt .json .pb.gz .html .asgst */
enum output_format output_format__from_path(const char *path);
const char *output_format__name(enum output_format f);

/* 0 on success, -errno on write failure */
int write_collapsed(const struct profile *p, FILE *f);
int write_json(const struct profile *p, FILE *f);
int write_pprof(const struct profile *p, FILE *f);
int write_html(const struct profile *p, FILE *f);
int write_top(const struct profile *p, FILE *f);	/* write_top.c */
/* report --pinned: pinned off-CPU time by pinning frame (write_pinned.c) */
int write_pinned(const struct profile *p, FILE *f);

/*
 * The name a frame has in the collapsed output (docs/formats.md), written
 * NUL-terminated into buf (truncated to size - 1). suffix adds the _[k],
 * _[j], _[i] type suffixes. Characters that break the collapsed format are
 * replaced. Returns the length written.
 */
size_t frame__display_name(const struct frame *f, char *buf, size_t size,
			   bool suffix);

/* length of the valid UTF-8 sequence at s (n > 0 bytes left); 0 when the
 * bytes there are not valid UTF-8 (overlong, surrogate, > U+10FFFF) */
size_t utf8__seq_len(const unsigned char *s, size_t n);
/* s as a JSON string literal (NULL -> null); bad UTF-8 -> U+FFFD;
 * html_safe also escapes < > & so it can sit inside a <script> */
void json__put_string(FILE *f, const char *s, bool html_safe);

#endif /* ASGST_WRITERS_H */
