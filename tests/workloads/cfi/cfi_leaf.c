// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Frame pointers everywhere but in the leaf (built with
 * -fno-omit-frame-pointer -momit-leaf-frame-pointer): main -> c1 -> c2 ->
 * c3 -> leaf. While leaf runs rbp is still c3's, so a frame-pointer walk
 * skips c3; CFI does not. Runs for argv[1] seconds (default 5).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t leaf(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) uint64_t c3(uint64_t x)
{
	x = leaf(x);
	sink += x;
	return x + 3;
}

__attribute__((noinline)) uint64_t c2(uint64_t x)
{
	x = c3(x);
	sink += x;
	return x + 2;
}

__attribute__((noinline)) uint64_t c1(uint64_t x)
{
	x = c2(x);
	sink += x;
	return x + 1;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	struct timespec a, b;
	uint64_t x = 1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		x = c1(x);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) +
		 (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	printf("%llu\n", (unsigned long long)x);
	return 0;
}
