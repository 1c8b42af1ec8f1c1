// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A static object of a shared library whose destructor runs for argv[1]
 * seconds (default 3) at exit: exit -> __run_exit_handlers -> _dl_fini ->
 * the library's __do_global_dtors_aux (crtstuff's, which has no CFI, only
 * a frame pointer) -> __cxa_finalize -> Spin::~Spin. Built twice from this
 * file: with CFI_EXIT_LIB as libcfi_exit.so, without as the program.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#ifdef CFI_EXIT_LIB
static volatile uint64_t sink;
static double spin_secs;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct Spin {
	__attribute__((noinline)) ~Spin()
	{
		double end = now() + spin_secs;

		while (now() < end)
			for (int i = 0; i < 100000; i++)
				sink += (uint64_t)i;
	}
};

static Spin spin;

extern "C" void cfi_exit_arm(double secs)
{
	spin_secs = secs;
}
#else
extern "C" void cfi_exit_arm(double secs);

int main(int argc, char **argv)
{
	cfi_exit_arm(argc > 1 ? atof(argv[1]) : 3);
	return 0;
}
#endif
