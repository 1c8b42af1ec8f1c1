/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* For the benchmarks: a monotonic clock in ns and a qsort order of u64s. */
#ifndef ASGST_BENCH_UTIL_H
#define ASGST_BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#endif /* ASGST_BENCH_UTIL_H */
