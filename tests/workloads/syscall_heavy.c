// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A workload that spends its time in the kernel: small reads of /dev/zero
 * and writes to /dev/null from sh_loop. Usage: syscall_heavy SECONDS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void sh_loop(double seconds)
{
	char buf[4096];
	struct timespec a, b;
	int z = open("/dev/zero", O_RDONLY), n = open("/dev/null", O_WRONLY);

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 1000; i++) {
			if (read(z, buf, sizeof(buf)) < 0 ||
			    write(n, buf, sizeof(buf)) < 0)
				exit(1);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) +
		 (double)(b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	printf("READY %d\n", getpid());
	fflush(stdout);
	sh_loop(argc > 1 ? atof(argv[1]) : 5);
	return 0;
}
