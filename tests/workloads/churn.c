// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Process churn for the memory tests: RATE short-lived processes a second
 * for SECONDS, alternately /bin/true and this program again burning the
 * CPU for a few milliseconds (so the sampler catches it). Each child is a
 * new exec: new maps, new modules to look up, a pid never seen before.
 *
 *   churn RATE SECONDS [BURN_MS]   prints the number of children at the end
 *   churn --burn MS                (a child)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

static __attribute__((noinline)) void churn_burn(double ms)
{
	double end = now_s() + ms / 1000.0;

	while (now_s() < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * 7;
}

int main(int argc, char **argv)
{
	double rate, secs, burn_ms = 8, t0, next;
	unsigned long n = 0;
	char ms[32];

	if (argc == 3 && !strcmp(argv[1], "--burn")) {
		churn_burn(atof(argv[2]));
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: churn RATE SECONDS [BURN_MS]\n");
		return 2;
	}
	rate = atof(argv[1]);
	secs = atof(argv[2]);
	if (argc > 3)
		burn_ms = atof(argv[3]);
	if (rate <= 0 || secs <= 0)
		return 2;
	snprintf(ms, sizeof(ms), "%g", burn_ms);
	signal(SIGCHLD, SIG_DFL);
	t0 = now_s();
	next = t0;
	while (now_s() < t0 + secs) {
		pid_t c = fork();

		if (c == 0) {
			if (n % 2)
				execl("/bin/true", "true", (char *)NULL);
			else
				execl("/proc/self/exe", "churn", "--burn", ms,
				      (char *)NULL);
			_exit(127);
		}
		if (c > 0)
			n++;
		/* reap what has ended; never more than a few alive */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		next += 1.0 / rate;
		while (now_s() < next)
			usleep(1000);
	}
	while (wait(NULL) > 0)
		;
	printf("%lu\n", n);
	return 0;
}
