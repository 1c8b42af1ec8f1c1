// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A native workload with a known call chain: main -> nc_chain1 -> ... ->
 * nc_chain8 -> nc_leaf, which spins. Built with frame pointers and without
 * inlining (see the Makefile), so every sample of the spinning thread must
 * show exactly this chain. Usage: native_chain SECONDS [THREADS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static double seconds = 5;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void nc_leaf(double end)
{
	unsigned long x = 1;

	/* spin in this frame; check the clock rarely so samples land here */
	while (1) {
		for (int i = 0; i < 1000000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		sink = x;
		if (now() >= end)
			break;
	}
}

#define CHAIN(n, next) \
	__attribute__((noinline)) void nc_chain##n(double end) \
	{ next(end); sink++; }

CHAIN(8, nc_leaf)
CHAIN(7, nc_chain8)
CHAIN(6, nc_chain7)
CHAIN(5, nc_chain6)
CHAIN(4, nc_chain5)
CHAIN(3, nc_chain4)
CHAIN(2, nc_chain3)
CHAIN(1, nc_chain2)

static void *thread_main(void *arg)
{
	(void)arg;
	nc_chain1(now() + seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 0;
	pthread_t t[16];

	if (argc > 1)
		seconds = atof(argv[1]);
	if (threads > 16)
		threads = 16;
	printf("READY %d\n", getpid());
	fflush(stdout);
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, thread_main, NULL);
	nc_chain1(now() + seconds);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
