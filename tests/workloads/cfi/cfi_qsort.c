// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A chain through a libc callback, built as distributions build (-O2, no
 * frame pointers): main -> nf_run -> qsort_r (libc: msort_with_tmp) ->
 * nf_cmp -> nf_leaf. Unwinding it needs the binaries' CFI. Runs for
 * argv[1] seconds (default 5); with argv[2] = "t" the chain runs in a second
 * thread too (a thread's stack ends at clone3, not _start).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096

static volatile uint64_t sink;
static double seconds = 5;

__attribute__((noinline)) static uint64_t nf_leaf(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ b;

	for (int i = 0; i < 200; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink += x;
	return x;
}

__attribute__((noinline)) static int nf_cmp(const void *pa, const void *pb,
					    void *arg)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	nf_leaf(a, b + (uintptr_t)arg);
	return a < b ? -1 : a > b;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void nf_run(void)
{
	static __thread uint64_t v[N];
	double end = now() + seconds;
	uint64_t s = 88172645463325252ull;

	while (now() < end) {
		for (int i = 0; i < N; i++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			v[i] = s;
		}
		qsort_r(v, N, sizeof(v[0]), nf_cmp, NULL);
	}
}

static void *nf_thread(void *arg)
{
	(void)arg;
	nf_run();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int threaded = argc > 2 && !strcmp(argv[2], "t");

	if (argc > 1)
		seconds = atof(argv[1]);
	if (threaded && pthread_create(&t, NULL, nf_thread, NULL))
		return 1;
	nf_run();
	if (threaded)
		pthread_join(t, NULL);
	printf("%llu\n", (unsigned long long)sink);
	return 0;
}
