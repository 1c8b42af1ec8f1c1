// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process that looks like a JVM from outside and is not one: it maps a
 * library named libjvm.so, has a "Signal Dispatch" thread, and (with
 * "map") maps its code map once one appears, as the agent does. The
 * hostile-tenant tests run it as another user to show the recorder never
 * signals, attaches to or trusts such a process.
 *
 * Usage: fake_jvm LIBJVM MARK|- [slow] [map]
 *   LIBJVM  any shared library, dlopen()ed (so it is in /proc/PID/maps)
 *   MARK    a file created when SIGQUIT arrives ("-": none)
 *   slow    on the CPU 2 ms in 50 (record -a sees it without it
 *           starving the host); otherwise it spins in fj_spin
 *   map     map /dev/shm/asgst-PID-PIDNS.map once it exists
 * Prints "READY pid" once running.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *mark;
volatile unsigned long sink;

static void on_quit(int sig)
{
	int fd = open(mark, O_WRONLY | O_CREAT, 0644);

	(void)sig;
	if (fd >= 0)
		close(fd);
}

static void *dispatcher(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *map_it(void *arg)
{
	char path[128];
	struct stat ns, st;

	(void)arg;
	if (stat("/proc/self/ns/pid", &ns))
		return NULL;
	snprintf(path, sizeof(path), "/dev/shm/asgst-%d-%llu.map",
		 (int)getpid(), (unsigned long long)ns.st_ino);
	for (;;) {
		int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);

		if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
		    mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) != MAP_FAILED)
			return NULL;
		if (fd >= 0)
			close(fd);
		usleep(20000);
	}
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

__attribute__((noinline)) void fj_spin(long ms)
{
	long t0 = now_ms();

	do {
		for (unsigned long i = 0; i < 100000ul; i++)
			sink += i;
	} while (now_ms() - t0 < ms);
}

int main(int argc, char **argv)
{
	bool slow = false, map = false;
	pthread_t th;

	if (argc < 3 || !dlopen(argv[1], RTLD_NOW))
		return 1;
	for (int i = 3; i < argc; i++) {
		slow |= !strcmp(argv[i], "slow");
		map |= !strcmp(argv[i], "map");
	}
	if (strcmp(argv[2], "-")) {
		mark = argv[2];
		signal(SIGQUIT, on_quit);
	}
	pthread_create(&th, NULL, dispatcher, NULL);
	pthread_setname_np(th, "Signal Dispatch");
	if (map)
		pthread_create(&th, NULL, map_it, NULL);
	printf("READY %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		fj_spin(slow ? 2 : 1000);
		if (slow)
			usleep(48000);
	}
}
