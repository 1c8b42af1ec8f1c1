/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * String interning: one copy of every distinct string, so frames compare and
 * hash by pointer. Strings live until strtab__free().
 */
#ifndef ASGST_STRTAB_H
#define ASGST_STRTAB_H

#include <stddef.h>

struct strtab;

struct strtab *strtab__new(void);
void strtab__free(struct strtab *st);
/* NULL in, NULL out; NULL on allocation failure */
const char *strtab__intern(struct strtab *st, const char *s);
const char *strtab__intern_n(struct strtab *st, const char *s, size_t n);
size_t strtab__count(const struct strtab *st);
size_t strtab__bytes(const struct strtab *st);

#endif /* ASGST_STRTAB_H */
