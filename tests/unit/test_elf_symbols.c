// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ELF symbol lookup on the fixtures: PIE, shared library (real addresses by
 * dlopen+dlsym), stripped + debug file by build-id and by .gnu_debuglink,
 * build-id, load bias, the vdso image, debug files that are FIFOs, devices
 * or rewritten while read. Expected addresses come from nm.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbols/elf_symbols.h"
#include "symbols/maps.h"
#include "fixtures/fixture_path.h"

static struct elf_module *load_fx(const char *name, const char *debug_root,
				  bool with_path)
{
	char path[PATH_MAX], droot[PATH_MAX];
	struct elf_module_opts o = { .root_fd = -1 };
	struct elf_module *m;
	int fd;

	fixture_path(path, sizeof(path), name);
	if (debug_root)
		o.debug_root = fixture_path(droot, sizeof(droot), debug_root);
	if (with_path)
		o.path = path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	m = elf_module__load(fd, &o);
	close(fd);
	assert_non_null(m);
	return m;
}

static void expect_sym(const struct elf_module *m, uint64_t vaddr,
		       const char *name)
{
	long idx = elf_module__lookup(m, vaddr);

	if (idx < 0)
		fail_msg("no symbol at 0x%llx, want %s", (unsigned long long)vaddr,
			 name);
	assert_string_equal(elf_module__sym_name(m, idx), name);
}

static void test_pie(void **state)
{
	static const char *const fns[] = { "fx_alpha", "fx_beta",
					   "fx_local_gamma", "main" };
	struct elf_module *m = load_fx("fx_pie", "empty-debugroot", true);
	size_t i;

	(void)state;
	assert_true(elf_module__sources(m) & ELF_SRC_SYMTAB);
	for (i = 0; i < 4; i++) {
		char t;
		uint64_t a = fixture_nm_addr("fx_pie.nm", fns[i], &t);
		long idx;
		uint64_t sz, past;

		assert_true(a != 0);
		expect_sym(m, a, fns[i]);
		expect_sym(m, a + 1, fns[i]);
		idx = elf_module__lookup(m, a);
		sz = elf_module__sym_size(m, idx);
		assert_true(sz > 0);
		expect_sym(m, a + sz - 1, fns[i]);
		/* past the size: nothing, or the next symbol, never this one */
		idx = elf_module__lookup(m, a + sz);
		past = a + sz;
		if (idx >= 0) {
			assert_string_not_equal(elf_module__sym_name(m, idx), fns[i]);
			assert_true(elf_module__sym_addr(m, idx) <= past);
		}
	}
	/* below every symbol */
	assert_int_equal(elf_module__lookup(m, 0x10), -ENOENT);
	elf_module__free(m);
}

static void test_build_id(void **state)
{
	char path[PATH_MAX], dir[PATH_MAX], hex[2 * ELF_BUILD_ID_MAX + 1];
	char want[2 * ELF_BUILD_ID_MAX + 1] = "";
	uint8_t id[ELF_BUILD_ID_MAX];
	struct dirent *de;
	DIR *d, *sub;
	int fd, n;

	(void)state;
	/* the fixture rule named the debug file after readelf's build-id */
	fixture_path(dir, sizeof(dir), "debugroot/.build-id");
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		char subp[PATH_MAX + 300];
		struct dirent *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(subp, sizeof(subp), "%s/%s", dir, de->d_name);
		sub = opendir(subp);
		assert_non_null(sub);
		while ((f = readdir(sub))) {
			size_t l = strlen(f->d_name);

			if (l > 6 && strcmp(f->d_name + l - 6, ".debug") == 0)
				snprintf(want, sizeof(want), "%.2s%.*s", de->d_name,
					 (int)(l - 6), f->d_name);
		}
		closedir(sub);
	}
	closedir(d);
	assert_true(strlen(want) == 40);
	fd = open(fixture_path(path, sizeof(path), "fx_pie.stripped"), O_RDONLY);
	assert_true(fd >= 0);
	n = elf_read_build_id(fd, id, sizeof(id));
	close(fd);
	assert_int_equal(n, 20);
	elf_build_id_hex(id, n, hex);
	assert_string_equal(hex, want);
	/* a file that is not ELF */
	fd = open(fixture_path(path, sizeof(path), "jvm17.maps"), O_RDONLY);
	assert_true(elf_read_build_id(fd, id, sizeof(id)) < 0);
	close(fd);
}

static void test_stripped_build_id(void **state)
{
	uint64_t a = fixture_nm_addr("fx_pie.nm", "fx_local_gamma", NULL);
	struct elf_module *m;

	(void)state;
	assert_true(a != 0);
	/* no debug file reachable: the local function is unknown */
	m = load_fx("fx_pie.stripped", "empty-debugroot", true);
	assert_false(elf_module__sources(m) & ELF_SRC_SYMTAB);
	assert_false(elf_module__sources(m) & ELF_SRC_DEBUG_BUILDID);
	assert_true(elf_module__lookup(m, a) < 0 ||
		    strcmp(elf_module__sym_name(m, elf_module__lookup(m, a)),
			   "fx_local_gamma") != 0);
	elf_module__free(m);
	/* the debug root has it by build-id */
	m = load_fx("fx_pie.stripped", "debugroot", true);
	assert_true(elf_module__sources(m) & ELF_SRC_DEBUG_BUILDID);
	expect_sym(m, a + 2, "fx_local_gamma");
	expect_sym(m, fixture_nm_addr("fx_pie.nm", "fx_alpha", NULL), "fx_alpha");
	elf_module__free(m);
}

static void test_debuglink(void **state)
{
	uint64_t a = fixture_nm_addr("libfx.so.nm", "fx_lib_hidden", NULL);
	uint64_t b = fixture_nm_addr("libfx.so.nm", "fx_lib_add", NULL);
	static const char *const names[] = { "dl/libfx.so", "dl2/libfx.so" };
	size_t i;

	(void)state;
	assert_true(a && b);
	for (i = 0; i < 2; i++) {
		struct elf_module *m;

		/* exported names come from .dynsym even without debug info */
		m = load_fx(names[i], "empty-debugroot", false);
		assert_true(elf_module__sources(m) & ELF_SRC_DYNSYM);
		assert_false(elf_module__sources(m) & ELF_SRC_DEBUG_LINK);
		expect_sym(m, b, "fx_lib_add");
		elf_module__free(m);
		/* with the file's path, .gnu_debuglink finds the debug file */
		m = load_fx(names[i], "empty-debugroot", true);
		assert_true(elf_module__sources(m) & ELF_SRC_DEBUG_LINK);
		expect_sym(m, a, "fx_lib_hidden");
		expect_sym(m, b + 3, "fx_lib_add");
		elf_module__free(m);
	}
}

/* dlopen'ed library: real run-time addresses, bias from the real mapping */
static void test_shared_dlopen(void **state)
{
	char path[PATH_MAX];
	struct elf_module *m;
	struct maps mp;
	void *h, *add, *hidden;
	void *(*hidden_addr)(void);
	Dl_info di;
	size_t i;
	int checked = 0;

	(void)state;
	fixture_path(path, sizeof(path), "libfx.so");
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	add = dlsym(h, "fx_lib_add");
	*(void **)&hidden_addr = dlsym(h, "fx_lib_hidden_addr");
	assert_non_null(add);
	assert_non_null(hidden_addr);
	hidden = hidden_addr();
	assert_true(dladdr(add, &di) != 0);
	m = load_fx("libfx.so", "empty-debugroot", true);
	expect_sym(m, (uintptr_t)add - (uintptr_t)di.dli_fbase, "fx_lib_add");
	expect_sym(m, (uintptr_t)hidden - (uintptr_t)di.dli_fbase, "fx_lib_hidden");
	/* nm agrees with the dynamic loader */
	assert_int_equal((uintptr_t)add - (uintptr_t)di.dli_fbase,
			 fixture_nm_addr("libfx.so.nm", "fx_lib_add", NULL));
	/*
	 * the code mapping and the first one get the loader's base as bias
	 * (a read-only page shared by two PT_LOADs is ambiguous on its own)
	 */
	assert_int_equal(maps__read(getpid(), &mp), 0);
	for (i = 0; i < mp.n; i++) {
		if (!mp.e[i].path || strcmp(mp.e[i].path, path) != 0 ||
		    (!mp.e[i].x && mp.e[i].pgoff != 0))
			continue;
		assert_int_equal(elf_module__bias(m, mp.e[i].start, mp.e[i].pgoff,
						  mp.e[i].x),
				 (uintptr_t)di.dli_fbase);
		checked++;
	}
	assert_true(checked >= 2);
	maps__free(&mp);
	elf_module__free(m);
	dlclose(h);
}

static void test_vdso(void **state)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	const struct maps_entry *e;
	struct elf_module *m;
	struct maps mp;
	long idx;

	(void)state;
	if (!base)
		skip();
	assert_int_equal(maps__read(getpid(), &mp), 0);
	e = maps__find(&mp, base);
	assert_non_null(e);
	assert_string_equal(e->path, "[vdso]");
	m = elf_module__load_mem((void *)base, e->end - e->start);
	assert_non_null(m);
	idx = elf_module__find_name(m, "__vdso_clock_gettime");
	assert_true(idx >= 0 || elf_module__find_name(m, "clock_gettime") >= 0);
	if (idx < 0)
		idx = elf_module__find_name(m, "clock_gettime");
	assert_int_equal(elf_module__lookup(m, elf_module__sym_addr(m, idx) + 1),
			 idx);
	/* the vdso is linked at 0: its bias is where the kernel put it */
	assert_int_equal(elf_module__bias(m, e->start, 0, true), e->start);
	elf_module__free(m);
	maps__free(&mp);
}

/*
 * The dynamic loader (the system's own): its entry point is the first
 * frame of every dynamically linked process, named _start whether or not
 * the file keeps a symbol for it; the entry symbol is a few bytes only.
 */
static void test_entry_symbol(void **state)
{
	const char *ld = "/lib64/ld-linux-x86-64.so.2";
	struct elf_module *m;
	GElf_Ehdr eh;
	Elf *e;
	long idx;
	int fd;

	(void)state;
	fd = open(ld, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		skip();
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_non_null(gelf_getehdr(e, &eh));
	elf_end(e);
	m = elf_module__load(fd, NULL);
	close(fd);
	assert_non_null(m);
	/* a return address right after the call in the entry code */
	expect_sym(m, eh.e_entry + 7, "_start");
	idx = elf_module__lookup(m, eh.e_entry + 64);
	if (idx >= 0)
		assert_string_not_equal(elf_module__sym_name(m, idx), "_start");
	elf_module__free(m);
}

/*
 * A symbol without a size spans at most to its section's end: _init (in
 * .init, size 0) names its own code, not the PLT stubs in the section
 * after it.
 */
static void test_unsized_section_end(void **state)
{
	char path[PATH_MAX];
	struct elf_module *m = load_fx("fx_pie", "empty-debugroot", true);
	uint64_t init = 0, plt = 0;
	Elf_Scn *scn = NULL;
	size_t shstr;
	Elf *e;
	long idx;
	int fd;

	(void)state;
	fd = open(fixture_path(path, sizeof(path), "fx_pie"),
		  O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstr), 0);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) ||
		    !(n = elf_strptr(e, shstr, sh.sh_name)))
			continue;
		if (!strcmp(n, ".init"))
			init = sh.sh_addr;
		else if (!strcmp(n, ".plt"))
			plt = sh.sh_addr;
	}
	elf_end(e);
	close(fd);
	assert_true(init && plt > init);
	expect_sym(m, init, "_init");
	idx = elf_module__lookup(m, plt + 16);
	if (idx >= 0)
		assert_string_not_equal(elf_module__sym_name(m, idx), "_init");
	elf_module__free(m);
}

static void test_not_elf(void **state)
{
	char path[PATH_MAX];
	int fd;

	(void)state;
	fd = open(fixture_path(path, sizeof(path), "kallsyms.sample"), O_RDONLY);
	assert_true(fd >= 0);
	assert_null(elf_module__load(fd, NULL));
	close(fd);
	assert_null(elf_module__load_mem("\x7f" "ELF garbage", 11));
}


static void *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void write_all(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* dl2/libfx.so copied to dir, its debuglink target as the caller left it */
static struct elf_module *load_linked(const char *lib, char *refused,
				      size_t len)
{
	struct elf_module_opts o = {
		.root_fd = -1, .path = lib, .refused = refused,
		.refusedlen = len,
	};
	char droot[PATH_MAX];
	struct elf_module *m;
	int fd;

	o.debug_root = fixture_path(droot, sizeof(droot), "empty-debugroot");
	refused[0] = '\0';
	fd = open(lib, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	m = elf_module__load(fd, &o);
	close(fd);
	assert_non_null(m);
	return m;
}

/*
 * The debug file a program names may be anything its owner likes: a FIFO
 * (never opened, so never waited on), a link to a device (refused), a file
 * shrinking and growing while it is read (no SIGBUS: never mapped).
 */
static void test_debuglink_hostile(void **state)
{
	char dir[] = "/tmp/test_elf_hostile.XXXXXX", src[PATH_MAX];
	char lib[PATH_MAX], dbg[PATH_MAX], refused[512];
	size_t liblen, dbglen, with = 0;
	struct elf_module *m;
	void *libimg, *dbgimg;
	pid_t child;
	int status;

	(void)state;
	assert_non_null(mkdtemp(dir));
	libimg = read_all(fixture_path(src, sizeof(src), "dl2/libfx.so"),
			  &liblen);
	dbgimg = read_all(fixture_path(src, sizeof(src), "dl2/libfx.so.dbg"),
			  &dbglen);
	snprintf(lib, sizeof(lib), "%s/libfx.so", dir);
	snprintf(dbg, sizeof(dbg), "%s/libfx.so.dbg", dir);
	write_all(lib, libimg, liblen);

	/* the real one: found */
	write_all(dbg, dbgimg, dbglen);
	m = load_linked(lib, refused, sizeof(refused));
	assert_true(elf_module__sources(m) & ELF_SRC_DEBUG_LINK);
	assert_string_equal(refused, "");
	elf_module__free(m);
	unlink(dbg);

	/* a FIFO nobody writes to */
	assert_int_equal(mkfifo(dbg, 0644), 0);
	m = load_linked(lib, refused, sizeof(refused));
	print_message("%s\n", refused);
	assert_true(elf_module__sources(m) & ELF_SRC_DYNSYM);
	assert_false(elf_module__sources(m) & ELF_SRC_DEBUG_LINK);
	assert_non_null(strstr(refused, "FIFO"));
	assert_non_null(strstr(refused, dbg));
	elf_module__free(m);
	unlink(dbg);

	/* a link to a device */
	assert_int_equal(symlink("/dev/zero", dbg), 0);
	m = load_linked(lib, refused, sizeof(refused));
	print_message("%s\n", refused);
	assert_false(elf_module__sources(m) & ELF_SRC_DEBUG_LINK);
	assert_non_null(strstr(refused, "character device"));
	elf_module__free(m);
	unlink(dbg);

	/* cut and rewritten as fast as it goes while it is read */
	write_all(dbg, dbgimg, dbglen);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int fd = open(dbg, O_WRONLY);

		for (;;) {
			if (ftruncate(fd, (off_t)(dbglen / 3)) ||
			    ftruncate(fd, 0) ||
			    pwrite(fd, dbgimg, dbglen, 0) != (ssize_t)dbglen)
				_exit(1);
			usleep(50);	/* whole now and then */
		}
	}
	for (int i = 0; i < 500; i++) {
		m = load_linked(lib, refused, sizeof(refused));
		with += !!(elf_module__sources(m) & ELF_SRC_DEBUG_LINK);
		elf_module__free(m);
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	print_message("debug file used in %zu of 500 loads while rewritten\n",
		      with);
	unlink(dbg);
	unlink(lib);
	rmdir(dir);
	free(libimg);
	free(dbgimg);
}

/* the IFUNC nm lists at addr, "" if none */
static void nm_ifunc_at(const char *nm_file, uint64_t addr, char *out,
			size_t len)
{
	char path[PATH_MAX], line[1024], name[900], t;
	uint64_t a;
	FILE *f = fopen(fixture_path(path, sizeof(path), nm_file), "r");

	out[0] = '\0';
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 " %c %899s", &a, &t, name) == 3 &&
		    a == addr && t == 'i')
			snprintf(out, len, "%s", name);
	fclose(f);
}

/*
 * PLT stubs named "name@plt" at each address binutils names one, over the
 * whole stub: lazy stubs (.plt, .plt.got) and IBT ones (.plt.sec), in a
 * file with its symbol tables and in a stripped one. binutils names an
 * IFUNC's stub by its resolver's address ("*ABS*+0x119d@plt"): ours is
 * the IFUNC's name where a table has it, else none.
 */
static void expect_plt_names(const char *elf, const char *listing,
			     const char *nm_file)
{
	char path[PATH_MAX], line[1024], name[900], want[1000];
	struct elf_module *m = load_fx(elf, NULL, false);
	bool puts_seen = false, ifunc_seen = false;
	uint64_t a, abs;
	int n = 0;
	FILE *f;

	f = fopen(fixture_path(path, sizeof(path), listing), "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		long idx;

		if (sscanf(line, "%" SCNx64 " <%899[^>]>:", &a, name) != 2)
			continue;
		snprintf(want, sizeof(want), "%s", name);
		if (sscanf(name, "*ABS*+%" SCNx64 "@plt", &abs) == 1) {
			char ifunc[900];

			ifunc_seen = true;
			if (!nm_file) {
				assert_true(elf_module__lookup(m, a) < 0);
				continue;
			}
			nm_ifunc_at(nm_file, abs, ifunc, sizeof(ifunc));
			assert_true(ifunc[0]);
			snprintf(want, sizeof(want), "%s@plt", ifunc);
		}
		expect_sym(m, a, want);
		idx = elf_module__lookup(m, a);
		assert_true(elf_module__sym_size(m, idx) == 8 ||
			    elf_module__sym_size(m, idx) == 16);
		expect_sym(m, a + elf_module__sym_size(m, idx) - 1, want);
		puts_seen |= !strcmp(name, "puts@plt");
		n++;
	}
	fclose(f);
	/* free, puts, strlen, printf, snprintf, malloc, __cxa_finalize */
	assert_true(n >= 6);
	assert_true(puts_seen);
	assert_true(ifunc_seen);
	elf_module__free(m);
}

static void test_plt_stubs(void **state)
{
	(void)state;
	expect_plt_names("fx_plt", "fx_plt.plt", "fx_plt.nm");
	expect_plt_names("fx_plt_ibt.stripped", "fx_plt_ibt.stripped.plt",
			 NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_build_id),
		cmocka_unit_test(test_stripped_build_id),
		cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_shared_dlopen),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_entry_symbol),
		cmocka_unit_test(test_unsized_section_end),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_debuglink_hostile),
		cmocka_unit_test(test_plt_stubs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
