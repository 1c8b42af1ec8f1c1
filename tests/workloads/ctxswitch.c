// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A context-switch-heavy workload: threads "cs-ping" and "cs-pong" pass one
 * byte back and forth over two pipes, so each blocks in read() once per
 * round trip (tens of thousands of switches per second). Known chains:
 *   cs_ping_thread -> cs_ping_loop -> cs_exchange -> cs_sys_read/cs_sys_write
 *   cs_pong_thread -> cs_pong_loop -> cs_exchange -> cs_sys_read/cs_sys_write
 * The syscalls are made by inline "syscall" instructions inside
 * cs_sys_read/cs_sys_write, which have frame pointers: a libc read() has
 * none and would hide its caller from a frame-pointer walk.
 * Optional "cs-spin-N" threads spin in cs_spin (cs_spin_thread ->
 * cs_spin) without syscalls: with more runnable threads than CPUs they
 * leave the CPU only by preemption.
 *
 * Usage: ctxswitch SECONDS [SPINNERS [GOFILE|- [CPU|- [fork|- [SLOW]]]]]
 * Prints "READY pid"; with GOFILE, waits until that file exists; starts
 * the threads (with CPU, the two ping-pong threads are bound to it; with
 * "fork", cs-pong runs in a child process, "CHILD pid", so that a recording
 * of pid has cs-ping and not cs-pong; with SLOW > 0, every SLOW-th round
 * cs-ping asks through cs_exchange_slow instead, and cs-pong answers that
 * after a 100 us sleep: cs-ping then waits in two places, most rounds
 * briefly, now and then long); prints "START ping_tid pong_tid", runs
 * SECONDS, ends the
 * threads and prints per thread, measured by the thread itself from its
 * start to its end,
 *   THREAD name tid switches=N cpu_ns=N wall_ns=N steal_ns=N involuntary=N
 * (switches: voluntary + involuntary, getrusage RUSAGE_THREAD; involuntary:
 * those of them the kernel counts as preemptions, ru_nivcsw; cpu_ns:
 * CLOCK_THREAD_CPUTIME_ID; so the thread was off the CPU for about
 * wall_ns - cpu_ns; steal_ns: what the host stole from the guest meanwhile,
 * all CPUs, which is in wall_ns but neither on nor off the CPU), and
 *   DONE rounds=N secs=S rounds_per_s=R switches=N switches_per_s=R
 * (switches of the two ping-pong threads).
 */
#define _GNU_SOURCE	/* RUSAGE_THREAD, pthread_setname_np */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SPIN 8

static int to_pong[2], to_ping[2];
static volatile int stop;
static int slow_every;	/* every slow_every-th round through cs_exchange_slow */
static volatile unsigned long spin_sink;
static unsigned long rounds;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) long cs_sys_read(int fd, void *buf, size_t n)
{
	long r;
	volatile long ret;	/* a stack slot: gcc then gives this leaf a
				   frame pointer, which it omits otherwise */

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(n)
			 : "rcx", "r11", "memory");
	ret = r;
	return ret;
}

__attribute__((noinline)) long cs_sys_write(int fd, const void *buf, size_t n)
{
	long r;
	volatile long ret;	/* a stack slot: gcc then gives this leaf a
				   frame pointer, which it omits otherwise */

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"((long)SYS_write), "D"((long)fd), "S"(buf), "d"(n)
			 : "rcx", "r11", "memory");
	ret = r;
	return ret;
}

/* ping: send 'x' on wfd, then wait for the answer on rfd; pong: wait for
 * a byte on rfd and answer it ('s': after a 100 us sleep), unless it is
 * 'q' (the end). Returns the byte read, -1 on an error. */
__attribute__((noinline)) int cs_exchange(int rfd, int wfd, int ping)
{
	const struct timespec slow = { 0, 100000 };
	char c = 'x';

	if (ping && cs_sys_write(wfd, &c, 1) != 1)
		return -1;
	if (cs_sys_read(rfd, &c, 1) != 1)
		return -1;
	if (!ping && c == 's')
		nanosleep(&slow, NULL);
	if (!ping && c != 'q' && cs_sys_write(wfd, &c, 1) != 1)
		return -1;
	return c;
}

/* ping's slow round: send 's', wait for the answer */
__attribute__((noinline)) int cs_exchange_slow(int rfd, int wfd)
{
	char c = 's';

	if (cs_sys_write(wfd, &c, 1) != 1)
		return -1;
	if (cs_sys_read(rfd, &c, 1) != 1)
		return -1;
	return c;
}

/* what a thread says about itself at its end */
struct cs_thread {
	pthread_t th;
	char name[16];
	pid_t tid;
	long switches;		/* voluntary + involuntary, RUSAGE_THREAD */
	long involuntary;	/* ru_nivcsw: preempted while runnable */
	long long cpu_ns;	/* CLOCK_THREAD_CPUTIME_ID */
	long long wall_ns;	/* from its start to its end */
	long long steal_ns;	/* the host's steal time meanwhile, all CPUs */
};

/* ping, pong, spinners; shared with the child that runs pong (fork) */
static struct cs_thread *threads;

static long long clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/*
 * Time the hypervisor took from this guest's CPUs (/proc/stat "steal", in
 * USER_HZ ticks, all CPUs). With paravirtual time accounting a stolen
 * stretch counts in the thread's wall time but not in its CPU time, so
 * wall - CPU overstates its off-CPU time by up to this much.
 */
static long long steal_ns(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n = 0;

	if (f) {
		n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7]);
		fclose(f);
	}
	return n == 8 ? (long long)v[7] * (1000000000ll / sysconf(_SC_CLK_TCK)) : 0;
}

static void thread_begin(struct cs_thread *t)
{
	pthread_setname_np(pthread_self(), t->name);
	t->steal_ns = steal_ns();
	t->wall_ns = clock_ns(CLOCK_MONOTONIC);
	__atomic_store_n(&t->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
}

static void thread_end(struct cs_thread *t)
{
	struct rusage ru;

	t->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		t->switches = ru.ru_nvcsw + ru.ru_nivcsw;
		t->involuntary = ru.ru_nivcsw;
	}
	t->wall_ns = clock_ns(CLOCK_MONOTONIC) - t->wall_ns;
	t->steal_ns = steal_ns() - t->steal_ns;
}

__attribute__((noinline)) void cs_ping_loop(void)
{
	unsigned long n = 0;

	/* only ping looks at stop: it tells pong to end with a 'q', so that
	 * neither is left waiting for the other */
	while (!stop) {
		int slow = slow_every > 0 && (n + 1) % slow_every == 0;
		int c = slow ? cs_exchange_slow(to_ping[0], to_pong[1]) :
			       cs_exchange(to_ping[0], to_pong[1], 1);

		if (c != 'x' && c != 's')
			break;
		n++;
	}
	rounds = n;
	cs_sys_write(to_pong[1], "q", 1);
}

__attribute__((noinline)) void cs_pong_loop(void)
{
	int c;

	do
		c = cs_exchange(to_pong[0], to_ping[1], 0);
	while (c == 'x' || c == 's');
}

__attribute__((noinline)) void *cs_ping_thread(void *arg)
{
	thread_begin(arg);
	cs_ping_loop();
	thread_end(arg);
	return NULL;
}

__attribute__((noinline)) void *cs_pong_thread(void *arg)
{
	thread_begin(arg);
	cs_pong_loop();
	thread_end(arg);
	return NULL;
}

__attribute__((noinline)) void cs_spin(void)
{
	volatile unsigned long x = 1;	/* on the stack: a frame pointer */

	while (!stop)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	spin_sink = x;
}

__attribute__((noinline)) void *cs_spin_thread(void *arg)
{
	thread_begin(arg);
	cs_spin();
	thread_end(arg);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, t0, t1;
	int nspin = argc > 2 ? atoi(argv[2]) : 0, n;
	const char *go = argc > 3 && strcmp(argv[3], "-") ? argv[3] : NULL;
	int cpu = argc > 4 && strcmp(argv[4], "-") ? atoi(argv[4]) : -1;
	int fork_pong = argc > 5 && !strcmp(argv[5], "fork");
	void *(*fn)(void *);
	pid_t child = 0;
	cpu_set_t set;

	slow_every = argc > 6 ? atoi(argv[6]) : 0;
	if (nspin > MAX_SPIN)
		nspin = MAX_SPIN;
	n = 2 + nspin;
	threads = mmap(NULL, sizeof(*threads) * (2 + MAX_SPIN),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (threads == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (pipe(to_pong) || pipe(to_ping)) {
		perror("pipe");
		return 1;
	}
	printf("READY %d\n", getpid());
	fflush(stdout);
	while (go && access(go, F_OK) != 0)
		usleep(10000);
	t0 = now();
	if (fork_pong) {
		fflush(stdout);
		child = fork();
		if (child < 0) {
			perror("fork");
			return 1;
		}
	}
	for (int i = 0; i < n; i++) {
		/* fork: pong in the child, the others in the parent */
		if (fork_pong && (i == 1) != (child == 0))
			continue;
		fn = i == 0 ? cs_ping_thread : i == 1 ? cs_pong_thread :
		     cs_spin_thread;
		if (i < 2)
			snprintf(threads[i].name, sizeof(threads[i].name),
				 i ? "cs-pong" : "cs-ping");
		else
			snprintf(threads[i].name, sizeof(threads[i].name),
				 "cs-spin-%d", i - 2);
		pthread_create(&threads[i].th, NULL, fn, &threads[i]);
		/* both ping-pong threads on one CPU: every switch is a direct
		 * hand-over, so the rate does not depend on where the
		 * scheduler happens to place them (for make bench) */
		if (i < 2 && cpu >= 0) {
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			pthread_setaffinity_np(threads[i].th, sizeof(set), &set);
		}
	}
	if (fork_pong && child == 0) {
		pthread_join(threads[1].th, NULL);
		_exit(0);
	}
	for (int i = 0; i < n; i++)
		while (!__atomic_load_n(&threads[i].tid, __ATOMIC_ACQUIRE))
			usleep(1000);
	if (child)
		printf("CHILD %d\n", child);
	printf("START %d %d\n", threads[0].tid, threads[1].tid);
	fflush(stdout);
	usleep((useconds_t)(secs * 1e6));
	stop = 1;
	for (int i = 0; i < n; i++)
		if (i != 1 || !child)
			pthread_join(threads[i].th, NULL);
	if (child && waitpid(child, NULL, 0) != child)
		perror("waitpid");
	t1 = now();
	for (int i = 0; i < n; i++)
		printf("THREAD %s %d switches=%ld cpu_ns=%lld wall_ns=%lld "
		       "steal_ns=%lld involuntary=%ld\n", threads[i].name,
		       threads[i].tid, threads[i].switches, threads[i].cpu_ns,
		       threads[i].wall_ns, threads[i].steal_ns,
		       threads[i].involuntary);
	printf("DONE rounds=%lu secs=%.3f rounds_per_s=%.0f switches=%ld "
	       "switches_per_s=%.0f\n", rounds, t1 - t0,
	       (double)rounds / (t1 - t0),
	       threads[0].switches + threads[1].switches,
	       (double)(threads[0].switches + threads[1].switches) /
	       (t1 - t0));
	return 0;
}
