// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A hostile JVM for tests/integration/test_hostile_events.sh: LD_PRELOADed
 * into java, it finds the agent's exported asgst_probe_event (the function
 * the recorder's uprobe sits on) and calls it in a tight loop with
 * arguments no agent would pass, on threads named "probeflood":
 *   - kinds 1 (alloc) and 2 (lock), three calls in four, and garbage kinds;
 *   - cls NULL, an unmapped address, a kernel address, a non-canonical
 *     one, a 1 MiB string of 'M' with no NUL in reach, a run of 'P' from
 *     the middle of a page to its end and one of 'Q' 60 bytes before the
 *     end of a page, each followed by a page the process cannot read;
 *   - huge size and weight values.
 * The uprobe fires on every call: the kernel's per-process budget is what
 * keeps the ring buffer, the recorder and the other processes' samples
 * safe from it.
 *
 * Environment: FLOOD_AGENT, the agent's path as given to -agentpath (it is
 * found with RTLD_NOLOAD once the JVM has loaded it); FLOOD_THREADS, how
 * many threads call (default 4: on a loaded host one thread may get too
 * little CPU to reach the budget). It says on stderr
 * "probeflood: flooding" when it starts calling; the loop itself does no
 * I/O.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef void (*probe_fn)(uint32_t kind, const char *cls, uint64_t size,
			 uint64_t weight);

#define BIG_LEN		(1u << 20)

/* the class pointers, set up once before the loop */
static const char *cls[9];
static size_t ncls;
static int flooding;

/* two pages, the second PROT_NONE: a string running into it cannot be
 * read past the first page's end */
static char *guarded_page(char fill)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, fill, pg);
	if (mprotect(p + pg, pg, PROT_NONE))
		return NULL;
	return p;
}

static int setup(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *big, *pp, *qq, *hole;

	/* a 1 MiB run of 'M' with the next page unreadable: no NUL anywhere
	 * the kernel may look */
	big = mmap(NULL, BIG_LEN + pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED)
		return -1;
	memset(big, 'M', BIG_LEN);
	if (mprotect(big + BIG_LEN, pg, PROT_NONE))
		return -1;
	pp = guarded_page('P');
	qq = guarded_page('Q');
	/* an address that was mapped and no longer is */
	hole = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!pp || !qq || hole == MAP_FAILED || munmap(hole, pg))
		return -1;
	cls[ncls++] = NULL;
	cls[ncls++] = hole;
	cls[ncls++] = (const char *)(uintptr_t)0xffffffff81000000ull;
	cls[ncls++] = (const char *)(uintptr_t)0x8000000000000000ull;
	cls[ncls++] = big;
	cls[ncls++] = big + BIG_LEN - 4096;
	cls[ncls++] = pp + pg / 2;
	cls[ncls++] = qq + pg - 60;
	cls[ncls++] = (const char *)(uintptr_t)1;
	return 0;
}

static void *flood(void *arg)
{
	const char *agent = arg;
	struct timespec ms10 = { 0, 10 * 1000 * 1000 };
	static const uint32_t kinds[] = {
		1, 2, 1, 0, 2, 1, 2, 3, 1, 2, 1, 0xffffffffu, 2, 1, 2, 0x80000001u
	};
	probe_fn probe = NULL;
	uint64_t i = 0;

	/* the JVM loads the agent (-agentpath) after the launcher started:
	 * wait for it, and never load it ourselves */
	while (!probe) {
		void *h = dlopen(agent, RTLD_NOLOAD | RTLD_LAZY);

		if (h)
			probe = (probe_fn)(uintptr_t)dlsym(h, "asgst_probe_event");
		if (!probe)
			nanosleep(&ms10, NULL);
	}
	if (__sync_fetch_and_add(&flooding, 1) == 0)
		fprintf(stderr, "probeflood: flooding\n");
	for (;; i++) {
		size_t nk = sizeof(kinds) / sizeof(kinds[0]);
		uint32_t kind = kinds[i % nk];
		uint64_t size = i & 1 ? UINT64_MAX : UINT64_MAX - i;
		uint64_t weight = i & 2 ? UINT64_MAX : (uint64_t)1 << 63;

		/* every kind meets every class pointer */
		probe(kind, cls[(i / nk) % ncls], size, weight);
	}
	return NULL;
}

__attribute__((constructor)) static void probeflood_start(void)
{
	const char *agent = getenv("FLOOD_AGENT");
	const char *nt = getenv("FLOOD_THREADS");
	int n = nt ? atoi(nt) : 4;
	pthread_t t;

	/* only the process that asked (not a child the JVM runs) */
	if (!agent || !*agent)
		return;
	if (setup()) {
		fprintf(stderr, "probeflood: cannot set up its strings\n");
		return;
	}
	if (n < 1 || n > 64)
		n = 4;
	agent = strdup(agent);
	for (int i = 0; agent && i < n; i++) {
		if (pthread_create(&t, NULL, flood, (void *)agent)) {
			fprintf(stderr, "probeflood: no thread\n");
			return;
		}
		pthread_setname_np(t, "probeflood");
		pthread_detach(t);
	}
	/* a child of the JVM inherits LD_PRELOAD, not the flooding (the
	 * threads hold a copy of the path) */
	unsetenv("FLOOD_AGENT");
}
