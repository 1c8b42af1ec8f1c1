// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * symbolizer__forget: an exited process's maps are dropped, a module a
 * live process still maps stays and still names its pcs, a pid seen again
 * is read afresh, and idle modules are bounded (count and bytes).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbols/symbolize.h"
#include "util/strtab.h"

__attribute__((noinline)) int forget_probe_fn(int x)
{
	return x * 7 + 1;
}

static const char *name_of(struct symbolizer *sz, pid_t pid, uint64_t pc)
{
	struct frame f;

	memset(&f, 0, sizeof(f));
	if (symbolizer__native(sz, pid, pc, &f))
		return NULL;
	return f.symbol;
}

static void test_forget_child(void **state)
{
	struct strtab *st = strtab__new();
	struct symbolizer *sz = symbolizer__new(st);
	struct symbolizer_stats s0, s1;
	uint64_t pc = (uint64_t)(uintptr_t)forget_probe_fn + 2;
	const char *n;
	pid_t c;

	(void)state;
	assert_non_null(sz);
	n = name_of(sz, getpid(), pc);
	assert_non_null(n);
	assert_string_equal(n, "forget_probe_fn");
	c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		pause();
		_exit(0);
	}
	/* the same image in the child (fork): the same module */
	n = name_of(sz, c, pc);
	assert_non_null(n);
	assert_string_equal(n, "forget_probe_fn");
	symbolizer__stats(sz, &s0);
	assert_int_equal(s0.procs, 2);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	symbolizer__forget(sz, c);
	symbolizer__forget(sz, c);	/* twice: nothing */
	symbolizer__stats(sz, &s1);
	assert_int_equal(s1.procs, 1);
	assert_int_equal(s1.procs_forgotten, 1);
	assert_int_equal(s1.modules, s0.modules);	/* we still map them */
	/* the module the live process maps still names its pcs */
	n = name_of(sz, getpid(), pc);
	assert_non_null(n);
	assert_string_equal(n, "forget_probe_fn");
	/* the pid again: read afresh (it is gone: no name, no crash) */
	assert_null(name_of(sz, c, pc));
	symbolizer__free(sz);
	strtab__free(st);
}

/* a maps line for one executable mapping of path, as a process had it */
static int maps_line(char *buf, size_t len, const char *path, int i)
{
	struct stat sb;

	if (stat(path, &sb) || !S_ISREG(sb.st_mode) || sb.st_size < 4096)
		return -1;
	return snprintf(buf, len, "%llx-%llx r-xp 00000000 %02x:%02x %llu %s\n",
			0x7f0000000000ull + ((unsigned long long)i << 24),
			0x7f0000001000ull + ((unsigned long long)i << 24),
			major(sb.st_dev), minor(sb.st_dev),
			(unsigned long long)sb.st_ino, path);
}

static void test_idle_modules_bounded(void **state)
{
	struct strtab *st = strtab__new();
	struct symbolizer *sz = symbolizer__new(st);
	struct symbolizer_stats s;
	DIR *d = opendir("/usr/lib/x86_64-linux-gnu");
	struct dirent *de;
	char path[512], line[768];
	int n = 0, want = 90;

	(void)state;
	assert_non_null(sz);
	assert_non_null(d);	/* Debian's multiarch library directory */
	/* processes that each mapped one shared library, then exited */
	while (n < want && (de = readdir(d))) {
		int len;

		if (!strstr(de->d_name, ".so"))
			continue;
		snprintf(path, sizeof(path), "/usr/lib/x86_64-linux-gnu/%s",
			 de->d_name);
		len = maps_line(line, sizeof(line), path, n);
		if (len <= 0)
			continue;
		if (symbolizer__add_offline(sz, 100000 + n, line, (size_t)len))
			continue;
		n++;
	}
	closedir(d);
	assert_true(n >= 70);
	symbolizer__stats(sz, &s);
	assert_true(s.modules >= 33);
	for (int i = 0; i < n; i++)
		symbolizer__forget(sz, 100000 + i);
	symbolizer__stats(sz, &s);
	assert_int_equal(s.procs, 0);
	/* at most 32 kept idle (and 4 MiB of tables), the rest freed */
	assert_true(s.modules <= 32);
	assert_true(s.modules_freed >= 1);
	print_message("%d libraries: %zu modules kept idle, %zu freed\n", n,
		      s.modules, s.modules_freed);
	symbolizer__free(sz);
	strtab__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forget_child),
		cmocka_unit_test(test_idle_modules_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
