// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JIT symbols (symbols/perfmap.c): perf map lines and jitdump records,
 * newest-wins painting checked against a brute-force model, and the files
 * as a hostile process may leave them in its root: appended while read,
 * replaced, a FIFO, links, over the size and entry limits, a foreign owner.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbols/perfmap.h"
#include "symbols/symbolize.h"
#include "util/strtab.h"

static const char *find(struct perfmap *pm, uint64_t pc)
{
	return perfmap__find(pm, pc, NULL);
}

static void add(struct perfmap *pm, const char *text)
{
	assert_int_equal(perfmap__add_text(pm, text, strlen(text)),
			 strlen(text));
}

static void test_lines(void **state)
{
	struct perfmap *pm = perfmap__new(0);
	struct perfmap_stats st;
	const char *text = "1000 100 first\n0x2000 0x10 with spaces (x.js:1)\r\n"
			   "\n3000 8 tail";

	(void)state;
	assert_non_null(pm);
	/* the unterminated last line is not consumed */
	assert_int_equal(perfmap__add_text(pm, text, strlen(text)),
			 strlen(text) - strlen("3000 8 tail"));
	assert_string_equal(find(pm, 0x1000), "first");
	assert_string_equal(find(pm, 0x10ff), "first");
	/* a pc beyond an entry's size is not that entry */
	assert_null(find(pm, 0x1100));
	assert_null(find(pm, 0xfff));
	assert_string_equal(find(pm, 0x200f), "with spaces (x.js:1)");
	assert_null(find(pm, 0x2010));
	assert_null(find(pm, 0x3000));
	perfmap__stats(pm, &st);
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.bad_lines, 0);
	perfmap__free(pm);
}

/* a name, not a payload: cut at PERFMAP_NAME_MAX bytes */
static void test_long_name(void **state)
{
	struct perfmap *pm = perfmap__new(0);
	char *line = malloc(16 + 5000 + 2);

	(void)state;
	strcpy(line, "1000 10 ");
	memset(line + 8, 'n', 5000);
	strcpy(line + 8 + 5000, "\n");
	add(pm, line);
	assert_int_equal(strlen(find(pm, 0x1000)), PERFMAP_NAME_MAX);
	free(line);
	perfmap__free(pm);
}

static void test_malformed(void **state)
{
	static const char bad[] =
		"zz 10 name\n"			/* not hex */
		"4000\n"			/* no size */
		"4000 10\n"			/* no name */
		"4000 10 \n"			/* blank name */
		"4000 0 empty\n"		/* size 0 */
		"fffffffffffffff0 20 wraps\n"	/* end past 2^64 */
		"14000 10 seventeen digits\n"
		"10000000000000000 10 seventeen\n"
		"4000 1g0 badsize\n"
		"-4000 10 negative\n"
		"4000 10 nul\0inside\n"
		"4000-10 dash\n";
	struct perfmap *pm = perfmap__new(0);
	struct perfmap_stats st;

	(void)state;
	assert_int_equal(perfmap__add_text(pm, bad, sizeof(bad) - 1),
			 sizeof(bad) - 1);
	perfmap__stats(pm, &st);
	/* only "14000 10 seventeen digits" is a line */
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.bad_lines, 11);
	assert_null(find(pm, 0x4000));
	assert_null(find(pm, 0xfffffffffffffff8ull));
	assert_string_equal(find(pm, 0x14000), "seventeen digits");
	perfmap__free(pm);
}

static void test_newest_wins(void **state)
{
	struct perfmap *pm = perfmap__new(0);

	(void)state;
	add(pm, "1000 1000 old\n1000 1000 same-start-newer\n");
	assert_string_equal(find(pm, 0x1800), "same-start-newer");
	/* a later batch over part of it */
	add(pm, "1800 100 inner\n");
	assert_string_equal(find(pm, 0x17ff), "same-start-newer");
	assert_string_equal(find(pm, 0x1800), "inner");
	assert_string_equal(find(pm, 0x18ff), "inner");
	assert_string_equal(find(pm, 0x1900), "same-start-newer");
	/* an older-looking line written later still wins */
	add(pm, "1000 2000 outer\n");
	assert_string_equal(find(pm, 0x1850), "outer");
	assert_string_equal(find(pm, 0x2fff), "outer");
	assert_null(find(pm, 0x3000));
	perfmap__free(pm);
}

/* random entries in batches against "the newest entry covering pc" */
static void test_model(void **state)
{
	enum { N = 3000, SPACE = 0x8000 };
	static uint64_t s[N], e[N];
	struct perfmap *pm = perfmap__new(0);
	unsigned int seed = 12345;
	char line[64], want[16];
	int n = 0;

	(void)state;
	for (int batch = 0; batch < 30; batch++) {
		for (int i = 0; i < N / 30; i++, n++) {
			s[n] = rand_r(&seed) % SPACE;
			e[n] = s[n] + 1 + rand_r(&seed) % (rand_r(&seed) % 4 ? 0x40 : 0x800);
			snprintf(line, sizeof(line), "%llx %llx f%d\n",
				 (unsigned long long)s[n],
				 (unsigned long long)(e[n] - s[n]), n);
			add(pm, line);
		}
		for (uint64_t pc = 0; pc < SPACE + 0x900; pc += 1 + rand_r(&seed) % 7) {
			const char *got = find(pm, pc);
			int w = -1;

			for (int k = n - 1; k >= 0; k--)
				if (pc >= s[k] && pc < e[k]) {
					w = k;
					break;
				}
			if (w < 0) {
				assert_null(got);
				continue;
			}
			snprintf(want, sizeof(want), "f%d", w);
			assert_non_null(got);
			assert_string_equal(got, want);
		}
	}
	perfmap__free(pm);
}

/* ---- jitdump ---- */

struct jd {
	uint8_t b[4096];
	size_t n;
	bool swap;
};

static void put32(struct jd *j, uint32_t v)
{
	if (j->swap)
		v = __builtin_bswap32(v);
	memcpy(j->b + j->n, &v, 4);
	j->n += 4;
}

static void put64(struct jd *j, uint64_t v)
{
	if (j->swap)
		v = __builtin_bswap64(v);
	memcpy(j->b + j->n, &v, 8);
	j->n += 8;
}

static void jd_header(struct jd *j)
{
	put32(j, 0x4A695444);
	put32(j, 1);
	put32(j, 40);
	put32(j, 62);	/* EM_X86_64 */
	put32(j, 0);
	put32(j, 42);
	put64(j, 0);
	put64(j, 0);
}

static void jd_load(struct jd *j, uint64_t addr, uint64_t size, uint64_t idx,
		    const char *name, size_t code)
{
	size_t len = strlen(name) + 1;

	put32(j, 0);
	put32(j, (uint32_t)(56 + len + code));
	put64(j, 0);
	put32(j, 42);
	put32(j, 42);
	put64(j, addr);
	put64(j, addr);
	put64(j, size);
	put64(j, idx);
	memcpy(j->b + j->n, name, len);
	j->n += len;
	memset(j->b + j->n, 0xcc, code);
	j->n += code;
}

static void jd_move(struct jd *j, uint64_t from, uint64_t to, uint64_t size,
		    uint64_t idx)
{
	put32(j, 1);
	put32(j, 64);
	put64(j, 0);
	put32(j, 42);
	put32(j, 42);
	put64(j, to);
	put64(j, from);
	put64(j, to);
	put64(j, size);
	put64(j, idx);
}

static void jd_build(struct jd *j)
{
	jd_header(j);
	jd_load(j, 0x5000, 0x100, 7, "jit_a", 0x100);
	jd_load(j, 0x6000, 0x80, 8, "jit_b", 0x80);
	/* an unknown record kind is skipped by its size */
	put32(j, 2);
	put32(j, 24);
	put64(j, 0);
	put64(j, 0);
	jd_move(j, 0x6000, 0x9000, 0x80, 8);
	jd_move(j, 0x6000, 0xa000, 0x80, 99);	/* unknown index */
	put32(j, 3);	/* JIT_CODE_CLOSE: nothing after it counts */
	put32(j, 16);
	put64(j, 0);
	jd_load(j, 0x7000, 0x10, 9, "after_close", 0);
}

static void check_jd(bool swap)
{
	struct perfmap *pm = perfmap__new(0);
	struct perfmap_stats st;
	struct jd j = { .swap = swap };

	jd_build(&j);
	assert_int_equal(perfmap__add_jitdump(pm, j.b, j.n), 0);
	assert_string_equal(find(pm, 0x5000), "jit_a");
	assert_string_equal(find(pm, 0x50ff), "jit_a");
	assert_null(find(pm, 0x5100));
	/* moved: the old place is no longer jit_b */
	assert_null(find(pm, 0x6000));
	assert_string_equal(find(pm, 0x9040), "jit_b");
	assert_null(find(pm, 0xa000));
	assert_null(find(pm, 0x7000));
	perfmap__stats(pm, &st);
	assert_int_equal(st.moves, 1);
	assert_int_equal(st.bad_lines, 1);
	perfmap__free(pm);
}

static void test_jitdump(void **state)
{
	struct perfmap *pm = perfmap__new(0);
	struct jd j = { 0 };

	(void)state;
	check_jd(false);
	check_jd(true);
	/* not a jitdump; truncated in a record */
	assert_int_equal(perfmap__add_jitdump(pm, "JITD", 4), -EINVAL);
	jd_header(&j);
	jd_load(&j, 0x5000, 0x100, 7, "whole", 0);
	jd_load(&j, 0x8000, 0x100, 8, "cut", 64);
	assert_int_equal(perfmap__add_jitdump(pm, j.b, j.n - 1), 0);
	assert_string_equal(find(pm, 0x5000), "whole");
	assert_null(find(pm, 0x8000));
	perfmap__free(pm);
}

/* ---- files in a root ---- */

struct root {
	char dir[64];
	char map[PATH_MAX];	/* host path of /tmp/perf-PID.map in it */
	int fd;
};

static void root_make(struct root *r)
{
	char tmp[PATH_MAX];

	snprintf(r->dir, sizeof(r->dir), "/tmp/test_perfmap.XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(tmp, sizeof(tmp), "%s/tmp", r->dir);
	assert_int_equal(mkdir(tmp, 01777), 0);
	snprintf(r->map, sizeof(r->map), "%s/tmp/perf-%d.map", r->dir,
		 (int)getpid());
	r->fd = open(r->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(r->fd >= 0);
}

static void root_free(struct root *r)
{
	char cmd[PATH_MAX + 16];

	close(r->fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->dir);
	assert_int_equal(system(cmd), 0);
}

static void append(const char *path, const char *s)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fputs(s, f);
	fclose(f);
}

static void test_file_grows(void **state)
{
	struct perfmap *pm = perfmap__new(getpid());
	struct perfmap_stats st;
	struct root r;

	(void)state;
	assert_non_null(pm);
	root_make(&r);
	/* no map yet */
	assert_int_equal(perfmap__refresh(pm, r.fd, NULL), -ENOENT);
	append(r.map, "1000 10 one\n2000 10 tw");
	assert_int_equal(perfmap__refresh(pm, r.fd, NULL), 0);
	assert_string_equal(find(pm, 0x1000), "one");
	assert_null(find(pm, 0x2000));
	/* the runtime writes on: only what is new is read */
	append(r.map, "o\n1000 10 one-recompiled\n");
	assert_int_equal(perfmap__refresh(pm, r.fd, NULL), 0);
	assert_string_equal(find(pm, 0x2000), "two");
	assert_string_equal(find(pm, 0x1000), "one-recompiled");
	perfmap__stats(pm, &st);
	assert_int_equal(st.entries, 3);
	assert_int_equal(st.map_bytes, strlen("1000 10 one\n2000 10 two\n1000 10 one-recompiled\n"));
	/* the rate limit */
	assert_true(perfmap__due(pm));
	assert_false(perfmap__due(pm));
	/* replaced (a new process with the same pid): its names only */
	assert_int_equal(unlink(r.map), 0);
	append(r.map, "3000 10 three\n");
	assert_int_equal(perfmap__refresh(pm, r.fd, NULL), 0);
	assert_null(find(pm, 0x1000));
	assert_string_equal(find(pm, 0x3000), "three");
	perfmap__free(pm);
	root_free(&r);
}

static void test_file_hostile(void **state)
{
	struct perfmap *pm = perfmap__new(getpid());
	char other[PATH_MAX];
	struct root r;
	FILE *f;

	(void)state;
	root_make(&r);
	/* a FIFO without a writer: refused at once, never waited on */
	assert_int_equal(mkfifo(r.map, 0644), 0);
	assert_int_equal(perfmap__refresh(pm, r.fd, NULL), -EINVAL);
	assert_null(find(pm, 0x1000));
	unlink(r.map);
	/* a link to a map elsewhere, in or out of the root: not followed */
	snprintf(other, sizeof(other), "%s/tmp/real.map", r.dir);
	append(other, "1000 10 linked\n");
	assert_int_equal(symlink(other, r.map), 0);
	assert_true(perfmap__refresh(pm, r.fd, NULL) < 0);
	assert_null(find(pm, 0x1000));
	unlink(r.map);
	assert_int_equal(symlink("/tmp/real.map", r.map), 0);
	assert_true(perfmap__refresh(pm, r.fd, NULL) < 0);
	assert_null(find(pm, 0x1000));
	unlink(r.map);
	/* owned by another user: refused */
	append(r.map, "1000 10 foreign\n");
	assert_int_equal(chown(r.map, 12345, 12345), 0);
	assert_int_equal(perfmap__refresh(pm, r.fd, NULL), -EPERM);
	assert_null(find(pm, 0x1000));
	unlink(r.map);
	/*
	 * bigger than the limit: its first PERFMAP_MAX_BYTES are read, what
	 * follows is not (a sparse file of NULs: no line at all up to there)
	 */
	f = fopen(r.map, "w");
	assert_non_null(f);
	assert_int_equal(fseeko(f, PERFMAP_MAX_BYTES + 100, SEEK_SET), 0);
	fputs("\n1000 10 beyond\n", f);
	fclose(f);
	assert_int_equal(perfmap__refresh(pm, r.fd, NULL), 0);
	assert_null(find(pm, 0x1000));
	perfmap__free(pm);
	root_free(&r);
}

/*
 * A map cut again and again is read afresh at most every
 * PERFMAP_RESET_MIN_MS: a writer that keeps cutting it cannot have it
 * parsed whole at every re-read. What was read stays meanwhile.
 */
static void test_file_cut(void **state)
{
	struct perfmap *pm = perfmap__new(getpid());
	struct perfmap_stats st;
	struct root r;

	(void)state;
	root_make(&r);
	append(r.map, "1000 10 one\n2000 10 two\n");
	assert_int_equal(perfmap__refresh(pm, r.fd, NULL), 0);
	assert_int_equal(truncate(r.map, 12), 0);
	/* the first cut: read afresh */
	assert_int_equal(perfmap__refresh(pm, r.fd, NULL), 0);
	assert_string_equal(find(pm, 0x1000), "one");
	assert_null(find(pm, 0x2000));
	append(r.map, "3000 10 three\n");
	assert_int_equal(perfmap__refresh(pm, r.fd, NULL), 0);
	assert_int_equal(truncate(r.map, 12), 0);
	/* cut again at once: put off, what was read kept */
	assert_int_equal(perfmap__refresh(pm, r.fd, NULL), -EAGAIN);
	assert_string_equal(find(pm, 0x3000), "three");
	perfmap__stats(pm, &st);
	assert_int_equal(st.resets, 1);
	assert_int_equal(st.resets_put_off, 1);
	perfmap__free(pm);
	root_free(&r);
}

/* root's file is no map of a process that does not run as root (a link
 * to a root file made at its path) */
static void test_root_file_other_user(void **state)
{
	char path[PATH_MAX];
	struct perfmap *pm;
	int sync[2];
	struct root r;
	pid_t child;
	char ch;

	(void)state;
	if (geteuid() != 0)
		skip();
	root_make(&r);
	assert_int_equal(pipe(sync), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(sync[0]);
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(1);
		if (write(sync[1], "x", 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	close(sync[1]);
	assert_int_equal(read(sync[0], &ch, 1), 1);
	close(sync[0]);
	snprintf(path, sizeof(path), "%s/tmp/perf-%d.map", r.dir, (int)child);
	append(path, "1000 10 roots\n");
	pm = perfmap__new(child);
	assert_non_null(pm);
	assert_int_equal(perfmap__refresh(pm, r.fd, NULL), -EPERM);
	assert_null(find(pm, 0x1000));
	/* the process's own file is read */
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(perfmap__refresh(pm, r.fd, NULL), 0);
	assert_string_equal(find(pm, 0x1000), "roots");
	perfmap__free(pm);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	root_free(&r);
}

static void test_entry_limit(void **state)
{
	struct perfmap *pm = perfmap__new(0);
	struct perfmap_stats st;
	size_t n = PERFMAP_MAX_ENTRIES + 10, len = 0;
	char *text = malloc(n * 16);

	(void)state;
	assert_non_null(text);
	for (size_t i = 0; i < n; i++)
		len += sprintf(text + len, "%zx 1 e\n", i);
	perfmap__add_text(pm, text, len);
	perfmap__stats(pm, &st);
	assert_int_equal(st.entries, PERFMAP_MAX_ENTRIES);
	assert_true(st.capped);
	assert_non_null(find(pm, PERFMAP_MAX_ENTRIES - 1));
	assert_null(find(pm, PERFMAP_MAX_ENTRIES));
	free(text);
	perfmap__free(pm);
}

/* a jitdump file read as it grows, record by record */
static void test_jitdump_file(void **state)
{
	struct perfmap *pm = perfmap__new(getpid());
	char path[PATH_MAX];
	struct jd j = { 0 };
	const char *file;
	struct root r;
	int fd;

	(void)state;
	root_make(&r);
	jd_header(&j);
	jd_load(&j, 0x5000, 0x100, 7, "dumped", 0x100);
	jd_load(&j, 0x6000, 0x100, 8, "later", 0x100);
	snprintf(path, sizeof(path), "%s/tmp/jit-%d.dump", r.dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	/* the second record half written */
	assert_int_equal(write(fd, j.b, j.n - 50), (ssize_t)(j.n - 50));
	snprintf(path, sizeof(path), "/tmp/jit-%d.dump", (int)getpid());
	assert_int_equal(perfmap__refresh(pm, r.fd, path), 0);
	assert_string_equal(perfmap__find(pm, 0x5010, &file), "dumped");
	assert_string_equal(file, path);
	assert_null(find(pm, 0x6000));
	assert_int_equal(write(fd, j.b + j.n - 50, 50), 50);
	close(fd);
	assert_int_equal(perfmap__refresh(pm, r.fd, path), 0);
	assert_string_equal(find(pm, 0x6000), "later");
	perfmap__free(pm);
	root_free(&r);
}

/*
 * The symbolizer's use of it, on this process: a pc of an anonymous
 * executable page is named by /tmp/perf-PID.map once the map says so, a pc
 * past the entry stays unnamed, and an ELF pc keeps its ELF name.
 */
static void test_symbolizer(void **state)
{
	struct strtab *st = strtab__new();
	struct symbolizer *sz = symbolizer__new(st);
	struct frame fr = { 0 };
	char map[64], line[128];
	uint8_t *code;
	FILE *f;

	(void)state;
	code = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(code != MAP_FAILED);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	unlink(map);
	/* no map: the pc stays a pc */
	assert_int_equal(symbolizer__native(sz, getpid(), (uintptr_t)code + 16,
					    &fr), -ENOENT);
	assert_null(fr.symbol);
	f = fopen(map, "w");
	assert_non_null(f);
	snprintf(line, sizeof(line), "%lx 40 JS:*jitted /x.js:1:1\n",
		 (unsigned long)(uintptr_t)code);
	fputs(line, f);
	fclose(f);
	/* read again once the rate limit allows it */
	usleep((PERFMAP_ABSENT_MS + 50) * 1000);
	assert_int_equal(symbolizer__native(sz, getpid(), (uintptr_t)code + 16,
					    &fr), 0);
	assert_string_equal(fr.symbol, "JS:*jitted /x.js:1:1");
	assert_string_equal(fr.module, map);
	assert_int_equal(fr.offset, (uintptr_t)code + 16);
	/* past the entry's size: not that entry */
	assert_int_equal(symbolizer__native(sz, getpid(), (uintptr_t)code + 0x40,
					    &fr), -ENOENT);
	assert_null(fr.symbol);
	/* ELF code keeps its ELF name */
	assert_int_equal(symbolizer__native(sz, getpid(),
					    (uintptr_t)&test_symbolizer, &fr), 0);
	assert_string_equal(fr.symbol, "test_symbolizer");
	unlink(map);
	munmap(code, 4096);
	symbolizer__free(sz);
	strtab__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_long_name),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_newest_wins),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_jitdump),
		cmocka_unit_test(test_file_grows),
		cmocka_unit_test(test_file_hostile),
		cmocka_unit_test(test_file_cut),
		cmocka_unit_test(test_root_file_other_user),
		cmocka_unit_test(test_entry_limit),
		cmocka_unit_test(test_jitdump_file),
		cmocka_unit_test(test_symbolizer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
