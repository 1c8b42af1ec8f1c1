/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one clock of the user side: CLOCK_MONOTONIC, the clock the BPF
 * sampler stamps its samples and side-band records with (bpf_ktime_get_ns),
 * so times from both sides compare directly.
 */
#ifndef ASGST_CLOCK_H
#define ASGST_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds */
static inline uint64_t clock__mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in milliseconds */
static inline uint64_t clock__mono_ms(void)
{
	return clock__mono_ns() / 1000000ull;
}

/* a CPU-time clock (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID)
 * in nanoseconds; 0 if it cannot be read */
static inline uint64_t clock__cpu_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* ASGST_CLOCK_H */
