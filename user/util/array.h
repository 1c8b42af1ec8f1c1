/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Growable arrays: the one growth rule of the user side. An array is a
 * pointer, a capacity and a count the caller keeps; array__grow makes room
 * for `need` elements, growing by half (at least 16) so appends are
 * amortised O(1) and the waste stays at most a third.
 */
#ifndef ASGST_ARRAY_H
#define ASGST_ARRAY_H

#include <stddef.h>

/* make *arr hold at least need elements of elem bytes; 0 or -ENOMEM (on
 * failure, *arr and *cap are unchanged) */
int array__grow(void **arr, size_t *cap, size_t need, size_t elem);

/* the same for a typed pointer: ARRAY_GROW(&s->v, &s->cap, s->n + 1) */
#define ARRAY_GROW(arrp, capp, need)					\
	array__grow((void **)(arrp), (capp), (need), sizeof(**(arrp)))

#endif /* ASGST_ARRAY_H */
