// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* /proc/PID/maps parsing: the live /proc/self/maps and a saved JVM's maps */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/maps.h"
#include "fixtures/fixture_path.h"

__attribute__((noinline)) int maps_probe_fn(int x)
{
	return x * 7 + 1;
}

static char *slurp_path(const char *path, size_t *len)
{
	char *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(maps__slurp(fd, &buf, len), 0);
	close(fd);
	return buf;
}

/* each parsed entry agrees with an sscanf reading of the same line */
static void cross_check(const char *text, const struct maps *m)
{
	const char *p = text;
	size_t lines = 0;

	while (*p) {
		const char *eol = strchr(p, '\n');
		char line[1024], perms[5], path[900] = "";
		unsigned long long s, e, off, ino;
		unsigned int maj, min;
		const struct maps_entry *me;
		size_t n = eol ? (size_t)(eol - p) : strlen(p);

		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (eol ? 1 : 0);
		if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %899[^\n]", &s, &e,
			   perms, &off, &maj, &min, &ino, path) < 7)
			continue;
		lines++;
		me = maps__find(m, s);
		assert_non_null(me);
		assert_int_equal(me->start, s);
		assert_int_equal(me->end, e);
		assert_int_equal(me->pgoff, off);
		assert_int_equal(me->dev_major, maj);
		assert_int_equal(me->dev_minor, min);
		assert_int_equal(me->inode, ino);
		assert_int_equal(me->x, perms[2] == 'x');
		assert_int_equal(me->r, perms[0] == 'r');
		if (path[0]) {
			char *del = strstr(path, " (deleted)");

			if (del)
				*del = '\0';
			assert_non_null(me->path);
			assert_string_equal(me->path, path);
			assert_int_equal(me->deleted, del != NULL);
			assert_int_equal(me->kind, path[0] == '/' ? MAPS_FILE :
					 MAPS_SPECIAL);
		} else {
			assert_null(me->path);
			assert_int_equal(me->kind, MAPS_ANON);
		}
	}
	assert_int_equal(lines, m->n);
}

static void test_self(void **state)
{
	char exe[PATH_MAX], *text;
	struct maps m;
	const struct maps_entry *e;
	ssize_t n;
	size_t len;
	Dl_info di;

	(void)state;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(maps__read(getpid(), &m), 0);
	assert_true(m.n > 5);
	/* our own code */
	e = maps__find(&m, (uint64_t)(uintptr_t)maps_probe_fn);
	assert_non_null(e);
	assert_true(e->x);
	assert_string_equal(e->path, exe);
	/* a libc function */
	assert_true(dladdr((void *)gnu_get_libc_version, &di) != 0);
	e = maps__find(&m, (uint64_t)(uintptr_t)gnu_get_libc_version);
	assert_non_null(e);
	assert_true(e->x);
	assert_non_null(strstr(e->path, "libc.so"));
	/* the stack */
	e = maps__find(&m, (uint64_t)(uintptr_t)&n);
	assert_non_null(e);
	assert_false(e->x);
	maps__free(&m);

	/* whole-text parse agrees with sscanf (maps may change in between:
	 * parse the very same text) */
	text = slurp_path("/proc/self/maps", &len);
	assert_int_equal(maps__parse(text, len, &m), 0);
	cross_check(text, &m);
	maps__free(&m);
	free(text);
}

static void test_deleted(void **state)
{
	char path[] = "/tmp/asgst-maps-XXXXXX";
	struct maps m;
	const struct maps_entry *e;
	void *p;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 8192), 0);
	p = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 4096);
	assert_true(p != MAP_FAILED);
	close(fd);
	unlink(path);
	assert_int_equal(maps__read(getpid(), &m), 0);
	e = maps__find(&m, (uint64_t)(uintptr_t)p + 100);
	assert_non_null(e);
	assert_true(e->deleted);
	assert_string_equal(e->path, path);
	assert_int_equal(e->pgoff, 4096);
	maps__free(&m);
	munmap(p, 8192);
}

static void test_saved_jvm(void **state)
{
	char path[PATH_MAX], *text;
	struct maps m;
	size_t len, i, jvm_x = 0, vdso = 0;

	(void)state;
	text = slurp_path(fixture_path(path, sizeof(path), "jvm17.maps"), &len);
	assert_int_equal(maps__parse(text, len, &m), 0);
	cross_check(text, &m);
	for (i = 0; i < m.n; i++) {
		if (i)
			assert_true(m.e[i].start >= m.e[i - 1].end);
		if (m.e[i].path && m.e[i].x &&
		    strstr(m.e[i].path, "/lib/server/libjvm.so"))
			jvm_x++;
		if (m.e[i].path && strcmp(m.e[i].path, "[vdso]") == 0) {
			vdso++;
			assert_int_equal(m.e[i].kind, MAPS_SPECIAL);
		}
	}
	assert_int_equal(jvm_x, 1);
	assert_int_equal(vdso, 1);
	maps__free(&m);
	free(text);
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"zzz",
		"1000-0500 r-xp 00000000 fe:00 1 /bin/x",	/* end < start */
		"1000-2000 r-x",				/* truncated */
		"1000-2000 r-xp 00000000 fe:00",		/* no inode */
		"11112222333344445-2000 r-xp 00000000 fe:00 1 /x", /* 17 digits */
		"1000 2000 r-xp 00000000 fe:00 1 /bin/x",
	};
	static const char good[] =
		"1000-2000 r-xp 00000000 fe:00 1 /bin/x\n"
		"garbage line\n"
		"3000-4000 rw-p 00001000 00:00 0\n"
		"5000-6000 r-xp 00000000 fe:00 7 /bin/with space (deleted)";
	struct maps_entry e;
	struct maps m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(maps__parse_line(bad[i], strlen(bad[i]), &e),
				 -EINVAL);
	assert_int_equal(maps__parse(good, sizeof(good) - 1, &m), 0);
	assert_int_equal(m.n, 3);
	assert_string_equal(m.e[2].path, "/bin/with space");
	assert_true(m.e[2].deleted);
	assert_null(maps__find(&m, 0x2000));
	assert_non_null(maps__find(&m, 0x1fff));
	maps__free(&m);
	/* a process that does not exist */
	assert_true(maps__read(0x7ffffff0, &m) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_deleted),
		cmocka_unit_test(test_saved_jvm),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
