// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Inlined functions and lines from DWARF (symbols/dwarf_lines.c) on the
 * -O2 -g fixture libfxinl.so: at every byte of fx_outer the chain equals
 * llvm-addr2line -i -f's (libfxinl.so.a2l, an independent reader), names,
 * files and lines; a function with nothing inlined; chains cut at max;
 * the stripped copy has no DWARF, its debug file (found by debuglink as
 * the symbols find it) gives the same chains; size limit; not ELF.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/dwarf_lines.h"
#include "symbols/elf_symbols.h"
#include "fixtures/fixture_path.h"

static struct dwarf_lines *open_fx(const char *name)
{
	char path[PATH_MAX];
	struct dwarf_lines *d;
	int fd;

	fd = open(fixture_path(path, sizeof(path), name), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	d = dwarf_lines__open(fd, 1ull << 30);
	close(fd);
	assert_non_null(d);
	return d;
}

static const char *base(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "";
}

struct a2l_frame {
	char name[1024];
	char file[1024];
	int line;
};

/*
 * Each address of the .a2l file, its frames compared with ours; returns
 * the addresses compared, *deep those with fx_leaf inlined in fx_mid in
 * fx_outer.
 */
static int compare_a2l(struct dwarf_lines *d, int *deep)
{
	char path[PATH_MAX], line[1024];
	struct a2l_frame want[DWARF_LINES_MAX];
	int nwant = 0, addrs = 0;
	unsigned long long addr = 0;
	bool have = false;
	FILE *f;

	*deep = 0;
	f = fopen(fixture_path(path, sizeof(path), "libfxinl.so.a2l"), "r");
	assert_non_null(f);
	for (;;) {
		char *got = fgets(line, sizeof(line), f);

		line[strcspn(line, "\n")] = '\0';
		if (!got || !strncmp(line, "0x", 2)) {
			if (have) {
				struct dwarf_line_frame out[DWARF_LINES_MAX];
				int n = dwarf_lines__find(d, addr, out,
							  DWARF_LINES_MAX);

				if (n != nwant)
					fail_msg("0x%llx: %d frames, llvm-addr2line %d",
						 addr, n, nwant);
				for (int i = 0; i < n; i++) {
					assert_non_null(out[i].name);
					if (strcmp(out[i].name, want[i].name) ||
					    strcmp(base(out[i].file),
						   base(want[i].file)) ||
					    out[i].line != want[i].line)
						fail_msg("0x%llx frame %d: %s %s:%d, llvm-addr2line %s %s:%d",
							 addr, i, out[i].name,
							 out[i].file, out[i].line,
							 want[i].name,
							 want[i].file,
							 want[i].line);
				}
				if (n == 3 && !strcmp(out[0].name, "fx_leaf") &&
				    !strcmp(out[1].name, "fx_mid") &&
				    !strcmp(out[2].name, "fx_outer"))
					(*deep)++;
				addrs++;
			}
			if (!got)
				break;
			addr = strtoull(line, NULL, 16);
			have = true;
			nwant = 0;
			continue;
		}
		/* a name line, then its file:line */
		assert_true(nwant < DWARF_LINES_MAX);
		snprintf(want[nwant].name, sizeof(want[nwant].name), "%s", line);
		assert_non_null(fgets(line, sizeof(line), f));
		line[strcspn(line, "\n")] = '\0';
		{
			char *colon = strrchr(line, ':');

			assert_non_null(colon);
			*colon = '\0';
			snprintf(want[nwant].file, sizeof(want[nwant].file),
				 "%s", line);
			want[nwant].line = atoi(colon + 1);
		}
		nwant++;
	}
	fclose(f);
	return addrs;
}

static void test_chains_as_addr2line(void **state)
{
	struct dwarf_lines *d = open_fx("libfxinl.so");
	int deep, n = compare_a2l(d, &deep);

	(void)state;
	assert_true(n > 16);
	/* the loop of fx_leaf is most of fx_outer */
	assert_true(deep > 4);
	assert_true(dwarf_lines__bytes(d) > 0);
	dwarf_lines__free(d);
}

static uint64_t nm_addr(const char *sym)
{
	char path[PATH_MAX], cmd[PATH_MAX + 64], line[256];
	unsigned long long a = 0;
	char name[128];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm --defined-only %s",
		 fixture_path(path, sizeof(path), "libfxinl.so"));
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %*s %127s", &a, name) == 2 &&
		    !strcmp(name, sym))
			break;
	pclose(p);
	assert_true(a != 0);
	return a;
}

static void test_nothing_inlined(void **state)
{
	struct dwarf_lines *d = open_fx("libfxinl.so");
	struct dwarf_line_frame out[DWARF_LINES_MAX];
	int n = dwarf_lines__find(d, nm_addr("fx_plain"), out, DWARF_LINES_MAX);

	(void)state;
	assert_int_equal(n, 1);
	assert_string_equal(out[0].name, "fx_plain");
	assert_string_equal(base(out[0].file), "fx_inline.c");
	assert_true(out[0].line > 0);
	/* an address no unit covers */
	assert_int_equal(dwarf_lines__find(d, 0x10, out, DWARF_LINES_MAX), 0);
	dwarf_lines__free(d);
}

/* the first deep chain's address, by walking fx_outer */
static uint64_t deep_addr(struct dwarf_lines *d)
{
	struct dwarf_line_frame out[DWARF_LINES_MAX];
	uint64_t a = nm_addr("fx_outer");

	for (uint64_t i = 0; i < 256; i++)
		if (dwarf_lines__find(d, a + i, out, DWARF_LINES_MAX) == 3)
			return a + i;
	fail_msg("no pc of fx_outer with fx_leaf inlined");
	return 0;
}

static void test_cut_at_max(void **state)
{
	struct dwarf_lines *d = open_fx("libfxinl.so");
	struct dwarf_line_frame out[DWARF_LINES_MAX];
	uint64_t a = deep_addr(d);

	(void)state;
	/* the innermost and the function itself */
	assert_int_equal(dwarf_lines__find(d, a, out, 2), 2);
	assert_string_equal(out[0].name, "fx_leaf");
	assert_string_equal(out[1].name, "fx_outer");
	assert_int_equal(dwarf_lines__find(d, a, out, 0), 0);
	dwarf_lines__free(d);
}

static void test_debug_file(void **state)
{
	char path[PATH_MAX];
	struct elf_module_opts o = { .root_fd = -1 };
	struct dwarf_line_frame a[DWARF_LINES_MAX], b[DWARF_LINES_MAX];
	struct dwarf_lines *full = open_fx("libfxinl.so"), *d;
	uint64_t pc = deep_addr(full);
	int fd, dfd, n;

	(void)state;
	fd = open(fixture_path(path, sizeof(path), "inl/libfxinl.so"),
		  O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	/* stripped: no DWARF of its own */
	errno = 0;
	assert_null(dwarf_lines__open(fd, 1ull << 30));
	assert_int_equal(errno, ENOENT);
	/* its debug file, by .gnu_debuglink next to it */
	o.path = path;
	o.debug_root = "/nonexistent";
	dfd = elf_debug_file_open(fd, &o);
	close(fd);
	assert_true(dfd >= 0);
	d = dwarf_lines__open(dfd, 1ull << 30);
	close(dfd);
	assert_non_null(d);
	n = dwarf_lines__find(d, pc, a, DWARF_LINES_MAX);
	assert_int_equal(n, 3);
	assert_int_equal(dwarf_lines__find(full, pc, b, DWARF_LINES_MAX), n);
	for (int i = 0; i < n; i++) {
		assert_string_equal(a[i].name, b[i].name);
		assert_string_equal(a[i].file, b[i].file);
		assert_int_equal(a[i].line, b[i].line);
	}
	dwarf_lines__free(d);
	dwarf_lines__free(full);
}

static void test_limits(void **state)
{
	char path[PATH_MAX];
	int fd;

	(void)state;
	fd = open(fixture_path(path, sizeof(path), "libfxinl.so"),
		  O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	errno = 0;
	assert_null(dwarf_lines__open(fd, 16));
	assert_int_equal(errno, EFBIG);
	close(fd);
	/* not ELF */
	fd = open(fixture_path(path, sizeof(path), "libfxinl.so.a2l"),
		  O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	errno = 0;
	assert_null(dwarf_lines__open(fd, 1ull << 30));
	assert_int_equal(errno, EINVAL);
	close(fd);
	assert_int_equal(dwarf_lines__find(NULL, 0x1000, NULL, 4), 0);
	dwarf_lines__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chains_as_addr2line),
		cmocka_unit_test(test_nothing_inlined),
		cmocka_unit_test(test_cut_at_max),
		cmocka_unit_test(test_debug_file),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
