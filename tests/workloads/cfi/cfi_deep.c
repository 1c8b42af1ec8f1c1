// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A 30-frame native stack without frame pointers (-O2): main -> deep(29)
 * -> ... -> deep(0) -> spin, for the cost of CFI unwinding per sample
 * (make bench). Runs for argv[1] seconds (default 5).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t spin(uint64_t x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* the work after the call keeps it a call, not a jump */
__attribute__((noinline)) static uint64_t deep(int n, uint64_t x)
{
	uint64_t r = n ? deep(n - 1, x + 1) : spin(x);

	sink += r;
	return r ^ (uint64_t)n;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	struct timespec a, b;
	uint64_t x = 1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		x = deep(28, x);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) +
		 (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	printf("%llu\n", (unsigned long long)x);
	return 0;
}
