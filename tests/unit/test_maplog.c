// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Side-band records and the maps kept from them: records parsed as the
 * kernel lays them out (and refused when cut or lying), a ring read across
 * its wrap, and per-process maps through exec, fork, mmap over mmap, exit
 * and the limits, given out in /proc's text form that maps__parse reads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "capture/sideband.h"
#include "symbols/maplog.h"
#include "symbols/maps.h"

/* an mmap2 record as the kernel writes it, with a tid+time sample_id */
static size_t make_mmap2(uint8_t *buf, uint32_t pid, uint64_t start,
			 uint64_t len, uint64_t pgoff, const char *path,
			 uint64_t t)
{
	size_t nlen = (strlen(path) + 1 + 7) & ~7ul;
	size_t size = 72 + nlen + 16;
	struct perf_event_header h = { .type = PERF_RECORD_MMAP2, .misc = 0,
				       .size = (uint16_t)size };
	uint32_t u32;
	uint64_t u64;

	memset(buf, 0, size);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + 8, &pid, 4);
	memcpy(buf + 12, &pid, 4);
	memcpy(buf + 16, &start, 8);
	memcpy(buf + 24, &len, 8);
	memcpy(buf + 32, &pgoff, 8);
	u32 = 8;
	memcpy(buf + 40, &u32, 4);		/* maj */
	u32 = 1;
	memcpy(buf + 44, &u32, 4);		/* min */
	u64 = 4242;
	memcpy(buf + 48, &u64, 8);		/* ino */
	u32 = PROT_READ | PROT_EXEC;
	memcpy(buf + 64, &u32, 4);
	u32 = MAP_PRIVATE;
	memcpy(buf + 68, &u32, 4);
	memcpy(buf + 72, path, strlen(path));
	memcpy(buf + size - 16, &pid, 4);
	memcpy(buf + size - 12, &pid, 4);
	memcpy(buf + size - 8, &t, 8);
	return size;
}

static size_t make_task(uint8_t *buf, uint32_t type, uint32_t pid,
			uint32_t ppid, uint32_t tid, uint64_t t)
{
	struct perf_event_header h = { .type = type, .size = 48 };

	memset(buf, 0, 48);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + 8, &pid, 4);
	memcpy(buf + 12, &ppid, 4);
	memcpy(buf + 16, &tid, 4);
	memcpy(buf + 20, &ppid, 4);
	memcpy(buf + 24, &t, 8);
	memcpy(buf + 40, &t, 8);
	return 48;
}

static size_t make_exec(uint8_t *buf, uint32_t pid, uint64_t t)
{
	struct perf_event_header h = { .type = PERF_RECORD_COMM,
				       .misc = PERF_RECORD_MISC_COMM_EXEC,
				       .size = 40 };

	memset(buf, 0, 40);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + 8, &pid, 4);
	memcpy(buf + 12, &pid, 4);
	memcpy(buf + 16, "burner", 6);
	memcpy(buf + 32, &t, 8);
	return 40;
}

static void test_parse(void **state)
{
	uint8_t buf[512];
	struct sideband_rec r;
	size_t n;

	(void)state;
	n = make_mmap2(buf, 77, 0x400000, 0x2000, 0x1000, "/usr/bin/x", 123);
	assert_int_equal(sideband__parse(buf, n, &r), 1);
	assert_int_equal(r.type, SIDEBAND_MMAP);
	assert_int_equal(r.pid, 77);
	assert_int_equal(r.start, 0x400000);
	assert_int_equal(r.len, 0x2000);
	assert_int_equal(r.pgoff, 0x1000);
	assert_int_equal(r.maj, 8);
	assert_int_equal(r.ino, 4242);
	assert_int_equal(r.time_ns, 123);
	assert_string_equal(r.path, "/usr/bin/x");
	/* the size the header gives must be the record's */
	assert_int_equal(sideband__parse(buf, n - 8, &r), -EINVAL);
	/* a name with no NUL before the sample_id */
	memset(buf + 72, 'a', n - 72 - 16);
	assert_int_equal(sideband__parse(buf, n, &r), -EINVAL);
	/* a mapping that wraps the address space */
	n = make_mmap2(buf, 77, ~0ull - 10, 0x2000, 0, "/x", 1);
	assert_int_equal(sideband__parse(buf, n, &r), -EINVAL);

	n = make_exec(buf, 88, 500);
	assert_int_equal(sideband__parse(buf, n, &r), 1);
	assert_int_equal(r.type, SIDEBAND_EXEC);
	assert_int_equal(r.pid, 88);
	assert_int_equal(r.time_ns, 500);
	/* a rename (prctl) is not an exec */
	buf[4] = 0;	/* misc */
	buf[5] = 0;
	assert_int_equal(sideband__parse(buf, n, &r), 0);

	n = make_task(buf, PERF_RECORD_FORK, 90, 88, 90, 600);
	assert_int_equal(sideband__parse(buf, n, &r), 1);
	assert_int_equal(r.type, SIDEBAND_FORK);
	assert_int_equal(r.pid, 90);
	assert_int_equal(r.ppid, 88);
	n = make_task(buf, PERF_RECORD_EXIT, 90, 88, 90, 700);
	assert_int_equal(sideband__parse(buf, n, &r), 1);
	assert_int_equal(r.type, SIDEBAND_EXIT);
	assert_int_equal(r.time_ns, 700);
	/* too short for its type */
	((struct perf_event_header *)buf)->size = 24;
	assert_int_equal(sideband__parse(buf, 24, &r), -EINVAL);
	assert_int_equal(sideband__parse(buf, 4, &r), -EINVAL);
}

struct seen {
	int n;
	uint32_t pids[16];
	char paths[16][32];
};

static int count(const struct sideband_rec *r, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < 16) {
		s->pids[s->n] = r->pid;
		snprintf(s->paths[s->n], sizeof(s->paths[0]), "%s",
			 r->path ? r->path : "");
	}
	s->n++;
	return 0;
}

static void test_ring_wrap(void **state)
{
	uint8_t ring[256], rec[128], *buf = malloc(65536);
	struct seen s = { 0 };
	uint64_t tail = 200, head, bad = 0;
	size_t n1, n2;

	(void)state;
	assert_non_null(buf);
	memset(ring, 0xee, sizeof(ring));
	/* the first record straddles the end of the ring */
	n1 = make_mmap2(rec, 1, 0x1000, 0x1000, 0, "/lib/a.so", 10);
	for (size_t i = 0; i < n1; i++)
		ring[(tail + i) % sizeof(ring)] = rec[i];
	n2 = make_task(rec, PERF_RECORD_EXIT, 1, 0, 1, 20);
	for (size_t i = 0; i < n2; i++)
		ring[(tail + n1 + i) % sizeof(ring)] = rec[i];
	head = tail + n1 + n2;
	tail = sideband__read_ring(ring, sizeof(ring), tail, head, buf, 65536,
				   count, &s, &bad);
	assert_int_equal(tail, head);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.paths[0], "/lib/a.so");
	assert_int_equal(bad, 0);
	/* a record whose header itself wraps */
	memset(&s, 0, sizeof(s));
	tail = 252;
	n2 = make_task(rec, PERF_RECORD_EXIT, 3, 0, 3, 30);
	for (size_t i = 0; i < n2; i++)
		ring[(tail + i) % sizeof(ring)] = rec[i];
	head = tail + n2;
	tail = sideband__read_ring(ring, sizeof(ring), tail, head, buf, 65536,
				   count, &s, &bad);
	assert_int_equal(tail, head);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.pids[0], 3);
	assert_int_equal(bad, 0);

	/* a size beyond what was written: the read stops, counted */
	((struct perf_event_header *)ring)->size = 200;
	memset(&s, 0, sizeof(s));
	tail = sideband__read_ring(ring, sizeof(ring), 0, 48, buf, 65536,
				   count, &s, &bad);
	assert_int_equal(tail, 48);
	assert_int_equal(s.n, 0);
	assert_int_equal(bad, 1);
	/* not a power of two */
	tail = sideband__read_ring(ring, 200, 0, 48, buf, 65536, count, &s,
				   &bad);
	assert_int_equal(bad, 2);
	free(buf);
}

static struct maplog_map map(uint64_t start, uint64_t len, uint64_t pgoff,
			     const char *path)
{
	struct maplog_map m = { .start = start, .len = len, .pgoff = pgoff,
				.maj = 8, .min = 1, .ino = 99,
				.prot = PROT_READ | PROT_EXEC,
				.flags = MAP_PRIVATE, .path = path };
	return m;
}

/* pid's maps through maps__parse, as the symbolizer would take them */
static int parsed(struct maplog *ml, uint32_t pid, struct maps *mp)
{
	char *text;
	size_t len;
	int ret = maplog__text(ml, pid, &text, &len);

	if (ret)
		return ret;
	ret = maps__parse(text, len, mp);
	free(text);
	return ret;
}

static void test_exec_fork_exit(void **state)
{
	struct maplog *ml = maplog__new(NULL);
	struct maplog_stats st;
	struct maplog_map m;
	struct maps mp;

	(void)state;
	assert_non_null(ml);
	/* a process not seen from its exec: its maps are not given out */
	m = map(0x1000, 0x1000, 0, "/bin/sh");
	assert_int_equal(maplog__mmap(ml, 10, 5, &m), 0);
	m = map(0x556000, 0x1000, 0, "/bin/sh2");
	assert_int_equal(maplog__mmap(ml, 10, 6, &m), 0);
	assert_int_equal(parsed(ml, 10, &mp), -ENOENT);

	assert_int_equal(maplog__exec(ml, 10, 100), 0);
	m = map(0x555000, 0x3000, 0x1000, "/usr/bin/burner");
	assert_int_equal(maplog__mmap(ml, 10, 101, &m), 0);
	m = map(0x7f0000, 0x10000, 0x2000, "/lib/ld.so");
	assert_int_equal(maplog__mmap(ml, 10, 102, &m), 0);
	/* data mappings are not code */
	m = map(0x900000, 0x1000, 0, "/data");
	m.prot = PROT_READ | PROT_WRITE;
	assert_int_equal(maplog__mmap(ml, 10, 103, &m), 0);
	/* anonymous code (a JIT) keeps its place, without a name */
	m = map(0x600000, 0x1000, 0, "//anon");
	assert_int_equal(maplog__mmap(ml, 10, 103, &m), 0);
	/* a mapping from before the exec, read late: the old image's */
	m = map(0x111000, 0x1000, 0, "/bin/old");
	assert_int_equal(maplog__mmap(ml, 10, 99, &m), 0);
	/* the image before the exec stays where the new one has nothing
	 * (samples between fork and exec): /bin/sh, not /bin/sh2 */
	assert_int_equal(parsed(ml, 10, &mp), 0);
	assert_int_equal(mp.n, 4);
	assert_string_equal(mp.e[0].path, "/bin/sh");
	assert_int_equal(mp.e[1].start, 0x555000);
	assert_int_equal(mp.e[1].end, 0x558000);
	assert_int_equal(mp.e[1].pgoff, 0x1000);
	assert_true(mp.e[1].x);
	assert_int_equal(mp.e[1].dev_major, 8);
	assert_int_equal(mp.e[1].inode, 99);
	assert_string_equal(mp.e[1].path, "/usr/bin/burner");
	assert_int_equal(mp.e[2].kind, MAPS_ANON);
	assert_string_equal(mp.e[3].path, "/lib/ld.so");
	maps__free(&mp);

	/* a fork inherits the image; an out-of-order fork (older than the
	 * child's exec) does not undo the exec */
	assert_int_equal(maplog__fork(ml, 11, 10, 200), 0);
	assert_int_equal(parsed(ml, 11, &mp), 0);
	assert_int_equal(mp.n, 3);
	maps__free(&mp);
	assert_int_equal(maplog__exec(ml, 12, 300), 0);
	m = map(0x400000, 0x1000, 0, "/bin/true");
	assert_int_equal(maplog__mmap(ml, 12, 301, &m), 0);
	assert_int_equal(maplog__fork(ml, 12, 10, 250), 0);
	assert_int_equal(parsed(ml, 12, &mp), 0);
	assert_int_equal(mp.n, 1);
	assert_string_equal(mp.e[0].path, "/bin/true");
	maps__free(&mp);
	/* a new thread is not a new process */
	assert_int_equal(maplog__fork(ml, 12, 12, 302), 0);
	assert_int_equal(parsed(ml, 12, &mp), 0);
	assert_int_equal(mp.n, 1);
	maps__free(&mp);

	/* exit: kept for the grace period, then gone */
	maplog__exit(ml, 10, 1000);
	maplog__prune(ml, 1000 + 4000000000ull);
	assert_int_equal(parsed(ml, 10, &mp), 0);
	maps__free(&mp);
	maplog__prune(ml, 1000 + 6000000000ull);
	assert_int_equal(parsed(ml, 10, &mp), -ENOENT);
	/* the pid used again: a new image, nothing of the old one */
	assert_int_equal(maplog__exec(ml, 10, 7000000000ull), 0);
	assert_int_equal(parsed(ml, 10, &mp), -ENOENT);
	maplog__stats(ml, &st);
	assert_int_equal(st.procs, 3);
	maplog__free(ml);
}

static void test_overlap(void **state)
{
	struct maplog *ml = maplog__new(NULL);
	struct maplog_map m;
	struct maps mp;

	(void)state;
	assert_int_equal(maplog__exec(ml, 5, 1), 0);
	m = map(0x10000, 0x10000, 0, "/a");
	assert_int_equal(maplog__mmap(ml, 5, 2, &m), 0);
	/* MAP_FIXED over the middle: /a is split around it, its right part
	 * keeps its file offset */
	m = map(0x14000, 0x2000, 0, "/b");
	assert_int_equal(maplog__mmap(ml, 5, 3, &m), 0);
	assert_int_equal(parsed(ml, 5, &mp), 0);
	assert_int_equal(mp.n, 3);
	assert_int_equal(mp.e[0].start, 0x10000);
	assert_int_equal(mp.e[0].end, 0x14000);
	assert_string_equal(mp.e[1].path, "/b");
	assert_int_equal(mp.e[2].start, 0x16000);
	assert_int_equal(mp.e[2].end, 0x20000);
	assert_int_equal(mp.e[2].pgoff, 0x6000);
	maps__free(&mp);
	/* over the left end of /b and into /a's right part */
	m = map(0x15000, 0x2000, 0, "/c");
	assert_int_equal(maplog__mmap(ml, 5, 4, &m), 0);
	assert_int_equal(parsed(ml, 5, &mp), 0);
	assert_int_equal(mp.n, 4);
	assert_int_equal(mp.e[1].end, 0x15000);
	assert_int_equal(mp.e[3].start, 0x17000);
	assert_int_equal(mp.e[3].pgoff, 0x7000);
	maps__free(&mp);
	/* covering everything */
	m = map(0x10000, 0x10000, 0, "/d");
	assert_int_equal(maplog__mmap(ml, 5, 5, &m), 0);
	assert_int_equal(parsed(ml, 5, &mp), 0);
	assert_int_equal(mp.n, 1);
	assert_string_equal(mp.e[0].path, "/d");
	maps__free(&mp);
	/* a name with a newline would break the text's lines */
	m = map(0x30000, 0x1000, 0, "/e\n1000-2000 r-xp 0 0:0 0 /evil");
	assert_int_equal(maplog__mmap(ml, 5, 6, &m), 0);
	assert_int_equal(parsed(ml, 5, &mp), 0);
	assert_int_equal(mp.n, 2);
	assert_int_equal(mp.e[1].kind, MAPS_ANON);
	maps__free(&mp);
	maplog__free(ml);
}

/* a process older than the log: seeded from /proc's text at its fork */
static void test_seed(void **state)
{
	static const char text[] =
		"55d000-55e000 r--p 00000000 08:01 11 /usr/bin/bash\n"
		"55e000-560000 r-xp 00001000 08:01 11 /usr/bin/bash\n"
		"7f0000-7f2000 r-xp 00002000 08:01 12 /lib/libc.so.6 (deleted)\n"
		"7f3000-7f4000 rw-p 00000000 00:00 0 \n"
		"7ffd000-7ffe000 r-xp 00000000 00:00 0 [vdso]\n";
	struct maplog *ml = maplog__new(NULL);
	struct maplog_map m;
	struct maps mp;

	(void)state;
	assert_false(maplog__whole(ml, 20));
	assert_int_equal(maplog__seed(ml, 20, 100, text, strlen(text)), 0);
	assert_true(maplog__whole(ml, 20));
	assert_int_equal(maplog__seed(ml, 20, 101, text, strlen(text)),
			 -EEXIST);
	/* its child, before and after its exec */
	assert_int_equal(maplog__fork(ml, 21, 20, 200), 0);
	assert_int_equal(maplog__exec(ml, 21, 210), 0);
	m = map(0x400000, 0x1000, 0, "/bin/sed");
	assert_int_equal(maplog__mmap(ml, 21, 211, &m), 0);
	assert_int_equal(parsed(ml, 21, &mp), 0);
	/* sed, and bash's code, libc (deleted) and the vdso from before */
	assert_int_equal(mp.n, 4);
	assert_string_equal(mp.e[0].path, "/bin/sed");
	assert_string_equal(mp.e[1].path, "/usr/bin/bash");
	assert_int_equal(mp.e[1].pgoff, 0x1000);
	assert_string_equal(mp.e[2].path, "/lib/libc.so.6");
	assert_true(mp.e[2].deleted);
	assert_string_equal(mp.e[3].path, "[vdso]");
	maps__free(&mp);
	maplog__free(ml);
}

static void test_limits(void **state)
{
	struct maplog_limits lim = { .max_procs = 4, .max_entries = 3,
				     .max_bytes = 1u << 20,
				     .keep_ns = 1000 };
	struct maplog *ml = maplog__new(&lim);
	struct maplog_stats st;
	struct maplog_map m;
	struct maps mp;

	(void)state;
	for (uint32_t pid = 1; pid <= 10; pid++) {
		assert_int_equal(maplog__exec(ml, pid, pid * 10), 0);
		for (int i = 0; i < 5; i++) {
			m = map(0x1000 * (i + 1), 0x1000, 0, "/lib/x.so");
			assert_int_equal(maplog__mmap(ml, pid, pid * 10 + i,
						      &m), 0);
		}
	}
	maplog__stats(ml, &st);
	assert_int_equal(st.procs, 4);
	assert_int_equal(st.evicted, 6);
	assert_int_equal(st.refused, 20);
	assert_int_equal(st.entries, 12);
	/* the newest stay */
	assert_int_equal(parsed(ml, 10, &mp), 0);
	assert_int_equal(mp.n, 3);
	maps__free(&mp);
	assert_int_equal(parsed(ml, 1, &mp), -ENOENT);
	/* all gone by exit: nothing held */
	for (uint32_t pid = 7; pid <= 10; pid++)
		maplog__exit(ml, pid, 200);
	maplog__prune(ml, 5000);
	maplog__stats(ml, &st);
	assert_int_equal(st.procs, 0);
	assert_int_equal(st.entries, 0);
	assert_int_equal(st.bytes, 0);
	maplog__free(ml);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_ring_wrap),
		cmocka_unit_test(test_exec_fork_exit),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_seed),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
