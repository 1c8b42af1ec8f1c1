// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Frame pointers everywhere (built with -fno-omit-frame-pointer), and a
 * tiny function called in a tight loop: main -> c1 -> spin -> tiny -> step. Many
 * samples stop tiny at its "ret", after "pop %rbp", where GCC's CFI still
 * says rbp is saved at CFA - 16: below sp, outside a stack copy that
 * starts at sp. spin's frame is found through rbp, which the pop already
 * restored. Runs for argv[1] seconds (default 5).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t step(uint64_t x)
{
	return x * 6364136223846793005ull + 1442695040888963407ull;
}

/* not a leaf, so it sets up a frame: push, mov, call, pop, ret */
__attribute__((noinline)) uint64_t tiny(uint64_t x)
{
	return step(x) >> 1;
}

__attribute__((noinline)) uint64_t spin(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = tiny(x) ^ (uint64_t)i;
	sink += x;
	return x;
}

__attribute__((noinline)) uint64_t c1(uint64_t x)
{
	x = spin(x);
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
