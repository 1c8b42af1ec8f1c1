// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The symbolizer end to end on live processes: this test process (its own
 * noinline function, a libc function, the vdso), a PIE child before and
 * after it exits, a paused JVM (libjvm frames), and kernel pcs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbols/dwarf_lines.h"
#include "symbols/elf_symbols.h"
#include "symbols/kallsyms.h"
#include "util/strtab.h"
#include "symbols/symbolize.h"
#include "fixtures/fixture_path.h"

#define JAVA17 "/usr/lib/jvm/java-17-openjdk-amd64"

__attribute__((noinline)) int sym_probe_fn(int x)
{
	return x * 5 + 3;
}

struct ctx {
	struct strtab *st;
	struct symbolizer *sz;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	c->st = strtab__new();
	c->sz = symbolizer__new(c->st);
	assert_non_null(c->sz);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	symbolizer__free(c->sz);
	strtab__free(c->st);
	free(c);
	return 0;
}

static void test_self(void **state)
{
	struct ctx *c = *state;
	struct frame fr = { 0 };
	char exe[PATH_MAX];
	ssize_t n;
	uint64_t pc;
	const struct sym_map *m;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	pc = (uintptr_t)sym_probe_fn + 4;
	assert_int_equal(symbolizer__native(c->sz, getpid(), pc, &fr), 0);
	assert_string_equal(fr.symbol, "sym_probe_fn");
	assert_string_equal(fr.module, exe);
	assert_false(fr.flags & FRAME_F_JVM_CPP);
	/* interned: the same pointer the next time */
	{
		struct frame f2 = { 0 };

		assert_int_equal(symbolizer__native(c->sz, getpid(), pc, &f2), 0);
		assert_ptr_equal(f2.symbol, fr.symbol);
		assert_ptr_equal(f2.symbol, strtab__intern(c->st, "sym_probe_fn"));
	}
	m = symbolizer__find_map(c->sz, getpid(), pc);
	assert_non_null(m);
	assert_true(m->exec);
	assert_int_equal(fr.offset, pc - m->bias);
	assert_false(symbolizer__is_jvm(c->sz, getpid()));

	/* libc */
	pc = (uintptr_t)gnu_get_libc_version + 1;
	assert_int_equal(symbolizer__native(c->sz, getpid(), pc, &fr), 0);
	assert_string_equal(fr.symbol, "gnu_get_libc_version");
	assert_non_null(strstr(fr.module, "libc.so"));
}

static void test_self_unknown(void **state)
{
	struct ctx *c = *state;
	struct frame fr = { 0 };
	uint64_t pc = (uintptr_t)&c;	/* the stack: mapped, no module */
	int i;

	assert_int_equal(symbolizer__native(c->sz, getpid(), pc, &fr), -ENOENT);
	assert_null(fr.symbol);
	assert_non_null(fr.module);	/* "[stack]" */
	struct symbolizer_stats s0, s1;
	struct timespec t0, t1, nap = { 0, 150 * 1000 * 1000 };
	uint64_t elapsed;
	void *fresh;
	const struct sym_map *m;

	/* garbage pcs: never a symbol, and maps are not reread for each */
	symbolizer__stats(c->sz, &s0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 1000; i++)
		assert_int_equal(symbolizer__native(c->sz, getpid(), 0x10 + i, &fr),
				 -ENOENT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	symbolizer__stats(c->sz, &s1);
	elapsed = (t1.tv_sec - t0.tv_sec) * 1000000000ull + t1.tv_nsec - t0.tv_nsec;
	/* at most one reread per 100 ms of loop */
	assert_true(s1.map_reads - s0.map_reads <= 1 + elapsed / 100000000ull);
	assert_null(fr.module);
	assert_null(symbolizer__find_map(c->sz, getpid(), 0x10));

	/* a mapping made after the last read is found by one refresh */
	fresh = mmap(NULL, 65536, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(fresh != MAP_FAILED);
	nanosleep(&nap, NULL);	/* past the refresh rate limit */
	m = symbolizer__find_map(c->sz, getpid(), (uintptr_t)fresh + 8);
	assert_non_null(m);
	/* an anonymous neighbour may have merged with it */
	assert_true(m->start <= (uintptr_t)fresh &&
		    m->end >= (uintptr_t)fresh + 65536);
	assert_null(m->path);
	munmap(fresh, 65536);
}

static void test_vdso(void **state)
{
	struct ctx *c = *state;
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	const struct sym_map *m;
	struct elf_module *em;
	struct frame fr = { 0 };
	long idx;

	if (!base)
		skip();
	m = symbolizer__find_map(c->sz, getpid(), base);
	assert_non_null(m);
	assert_string_equal(m->path, "[vdso]");
	em = elf_module__load_mem((void *)base, m->end - m->start);
	assert_non_null(em);
	/* one name per address survives: __vdso_clock_gettime or its alias */
	idx = elf_module__find_name(em, "__vdso_clock_gettime");
	if (idx < 0)
		idx = elf_module__find_name(em, "clock_gettime");
	assert_true(idx >= 0);
	assert_int_equal(symbolizer__native(c->sz, getpid(),
					    base + elf_module__sym_addr(em, idx) + 2,
					    &fr), 0);
	assert_non_null(strstr(fr.symbol, "clock_gettime"));
	assert_string_equal(fr.module, "[vdso]");
	elf_module__free(em);
}

/* start a fixture or JVM child with a pipe on stdin and one on stdout */
static pid_t spawn(char *const argv[], const char *dir, int *to, FILE **from)
{
	int in[2], out[2];
	pid_t pid;

	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (dir && chdir(dir) != 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*to = in[1];
	*from = fdopen(out[0], "r");
	assert_non_null(*from);
	return pid;
}

static void test_child_pie(void **state)
{
	struct ctx *c = *state;
	char path[PATH_MAX], line[256], name[64];
	char *argv[] = { path, NULL };
	struct {
		char name[64];
		uint64_t pc;
	} fn[8];
	int nfn = 0, to, i, status;
	FILE *from;
	pid_t pid;

	fixture_path(path, sizeof(path), "fx_pie");
	pid = spawn(argv, NULL, &to, &from);
	while (fgets(line, sizeof(line), from) && strncmp(line, "ready", 5)) {
		unsigned long long a;

		if (nfn < 8 && sscanf(line, "%63s %llx", name, &a) == 2) {
			snprintf(fn[nfn].name, sizeof(fn[nfn].name), "%s", name);
			fn[nfn++].pc = a;
		}
	}
	assert_int_equal(nfn, 4);
	assert_true(symbolizer__refresh(c->sz, pid) == 0);
	for (i = 0; i < nfn; i++) {
		struct frame fr = { 0 };

		assert_int_equal(symbolizer__native(c->sz, pid, fn[i].pc + 1, &fr), 0);
		assert_string_equal(fr.symbol, fn[i].name);
		assert_string_equal(fr.module, path);
		/* PIE bias: the offset is the link-time address nm prints */
		assert_int_equal(fr.offset - 1,
				 fixture_nm_addr("fx_pie.nm", fn[i].name, NULL));
	}
	/* the child exits and is reaped: its samples still decode */
	close(to);
	fclose(from);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(symbolizer__refresh(c->sz, pid) < 0, 1);
	for (i = 0; i < nfn; i++) {
		struct frame fr = { 0 };

		assert_int_equal(symbolizer__native(c->sz, pid, fn[i].pc, &fr), 0);
		assert_string_equal(fr.symbol, fn[i].name);
	}
	{
		struct frame fr = { 0 };

		assert_int_equal(symbolizer__native(c->sz, pid, 0x42, &fr), -ENOENT);
	}
}

/* a JVM held at startup (-XX:+PauseAtStartup): libjvm frames */
static void test_jvm(void **state)
{
	struct ctx *c = *state;
	char java[] = JAVA17 "/bin/java", dir[] = "/tmp/asgst-symjvm-XXXXXX";
	char unlock[] = "-XX:+UnlockDiagnosticVMOptions";
	char pause[] = "-XX:+PauseAtStartup", xmx[] = "-Xmx16m";
	char ver[] = "-version";
	char *argv[] = { java, unlock, pause, xmx, ver, NULL };
	char paused[64], lib[] = JAVA17 "/lib/server/libjvm.so";
	struct elf_module *em;
	struct frame fr = { 0 };
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	uint64_t pc = 0;
	int to, i, fd;
	long idx;
	FILE *from;
	pid_t pid;

	if (access(java, X_OK) != 0)
		skip();
	assert_non_null(mkdtemp(dir));
	pid = spawn(argv, dir, &to, &from);
	snprintf(paused, sizeof(paused), "%s/vm.paused.%d", dir, (int)pid);
	/* the VM creates the file once libjvm is loaded, then waits */
	for (i = 0; i < 1500 && access(paused, F_OK) != 0; i++)
		nanosleep(&ts, NULL);
	assert_int_equal(access(paused, F_OK), 0);
	assert_true(symbolizer__is_jvm(c->sz, pid));

	fd = open(lib, O_RDONLY);
	assert_true(fd >= 0);
	em = elf_module__load(fd, NULL);
	close(fd);
	assert_non_null(em);
	idx = elf_module__find_name(em, "_ZN9JavaCalls11call_helperEP9JavaValueRK12methodHandleP17JavaCallArgumentsP10JavaThread");
	assert_true(idx >= 0);
	/* pc = bias of libjvm's code mapping + the symbol's file address */
	for (i = 0; i < 1 && !pc; i++) {
		const struct sym_map *m;
		uint64_t a = elf_module__sym_addr(em, idx);
		uint64_t probe;

		/* find any libjvm exec mapping through a known pc range */
		for (probe = 0; probe < 1; probe++) {
			FILE *f;
			char mp[64], line[512];

			snprintf(mp, sizeof(mp), "/proc/%d/maps", (int)pid);
			f = fopen(mp, "r");
			assert_non_null(f);
			while (fgets(line, sizeof(line), f)) {
				unsigned long long s;

				if (strstr(line, "libjvm.so") && strstr(line, " r-xp ") &&
				    sscanf(line, "%llx-", &s) == 1) {
					m = symbolizer__find_map(c->sz, pid, s);
					assert_non_null(m);
					assert_true(m->is_jvm);
					pc = m->bias + a + 5;
				}
			}
			fclose(f);
		}
	}
	assert_true(pc != 0);
	assert_int_equal(symbolizer__native(c->sz, pid, pc, &fr), 0);
	assert_string_equal(fr.symbol, "JavaCalls::call_helper");
	assert_true(fr.flags & FRAME_F_JVM_CPP);
	assert_non_null(strstr(fr.module, "libjvm.so"));
	elf_module__free(em);
	kill(pid, SIGKILL);
	close(to);
	fclose(from);
	waitpid(pid, NULL, 0);
	unlink(paused);
	rmdir(dir);
}

static void test_kernel(void **state)
{
	struct ctx *c = *state;
	char path[PATH_MAX], line[512];
	struct frame fr = { 0 };
	unsigned long long a = 0;
	FILE *f;

	fixture_path(path, sizeof(path), "kallsyms.sample");
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " T do_syscall_64"))
			assert_int_equal(sscanf(line, "%llx", &a), 1);
	fclose(f);
	assert_true(a != 0);
	assert_int_equal(symbolizer__set_kallsyms_path(c->sz, path), 0);
	assert_int_equal(symbolizer__kernel(c->sz, a + 0x21, &fr), 0);
	assert_string_equal(fr.symbol, "do_syscall_64");
	assert_int_equal(fr.offset, 0x21);
	assert_int_equal(symbolizer__kernel(c->sz, 0x1000, &fr), -ENOENT);
	/* the live table, as root */
	assert_int_equal(symbolizer__set_kallsyms_path(c->sz, NULL), 0);
	if (geteuid() == 0) {
		struct kallsyms *ks = kallsyms__load(NULL);

		if (ks && !kallsyms__restricted(ks)) {
			/* our own address of a kernel function */
			f = fopen("/proc/kallsyms", "r");
			a = 0;
			while (f && fgets(line, sizeof(line), f))
				if (strstr(line, " T do_syscall_64\n"))
					sscanf(line, "%llx", &a);
			if (f)
				fclose(f);
			assert_int_equal(symbolizer__kernel(c->sz, a + 1, &fr), 0);
			assert_string_equal(fr.symbol, "do_syscall_64");
		}
		kallsyms__free(ks);
	}
}

/*
 * Kernel names are cached by pc: a pc asked again gives the same frame
 * (and an unknown one stays unknown), and another table
 * (symbolizer__set_kallsyms_path) gives its own names, not the cached.
 */
static void test_kernel_cached(void **state)
{
	struct ctx *c = *state;
	char path[] = "/tmp/test_symbolize_ksyms.XXXXXX";
	struct frame fr = { 0 }, again = { 0 };
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	assert_non_null(f);
	fprintf(f, "ffffffff81000000 T first_fn\n"
		   "ffffffff81000100 T second_fn\n"
		   "ffffffff81000200 T third_fn\n");
	fclose(f);
	assert_int_equal(symbolizer__set_kallsyms_path(c->sz, path), 0);
	for (int i = 0; i < 2; i++) {
		struct frame *o = i ? &again : &fr;

		assert_int_equal(symbolizer__kernel(c->sz, 0xffffffff81000110ull,
						    o), 0);
		assert_string_equal(o->symbol, "second_fn");
		assert_int_equal(o->offset, 0x10);
		assert_int_equal(symbolizer__kernel(c->sz, 0x1000, o), -ENOENT);
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "ffffffff81000000 T first_fn\n"
		   "ffffffff81000108 T renamed_fn\n"
		   "ffffffff81000200 T third_fn\n");
	fclose(f);
	assert_int_equal(symbolizer__set_kallsyms_path(c->sz, path), 0);
	assert_int_equal(symbolizer__kernel(c->sz, 0xffffffff81000110ull, &fr),
			 0);
	assert_string_equal(fr.symbol, "renamed_fn");
	assert_int_equal(fr.offset, 0x8);
	unlink(path);
}

static void test_debug_root(void **state)
{
	struct ctx *c = *state;
	char path[PATH_MAX];

	/* a stripped PIE child resolves its local function via the debug root */
	assert_int_equal(symbolizer__set_debug_root(c->sz,
		fixture_path(path, sizeof(path), "debugroot")), 0);
	{
		char exe[PATH_MAX], line[256], name[64];
		char *argv[] = { exe, NULL };
		unsigned long long a;
		int to, found = 0;
		FILE *from;
		pid_t pid;

		fixture_path(exe, sizeof(exe), "fx_pie.stripped");
		pid = spawn(argv, NULL, &to, &from);
		while (fgets(line, sizeof(line), from) && strncmp(line, "ready", 5)) {
			struct frame fr = { 0 };

			if (sscanf(line, "%63s %llx", name, &a) != 2)
				continue;
			assert_int_equal(symbolizer__native(c->sz, pid, a, &fr), 0);
			assert_string_equal(fr.symbol, name);
			found++;
		}
		assert_int_equal(found, 4);
		close(to);
		fclose(from);
		waitpid(pid, NULL, 0);
	}
	assert_true(symbolizer__nmodules(c->sz) >= 1);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	assert_true(in >= 0);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	assert_true(out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, n), n);
	close(in);
	close(out);
}

/*
 * A "container": a child in its own mount namespace whose root is a
 * directory with its own /lib/libfx.so.
 * Its maps say "/lib/libfx.so", which the host does not have: the file is
 * found through /proc/PID/root. Then the container swaps that file for an
 * absolute symlink to a host file: we must not follow it out of the root,
 * and the mapped file (map_files) still gives the right symbols.
 */
static void test_container_root(void **state)
{
	struct ctx *c = *state;
	char root[] = "/tmp/asgst-symroot-XXXXXX", lib[PATH_MAX], libdir[64];
	char src[PATH_MAX], host_exe[PATH_MAX];
	uint64_t pcs[2];
	int in[2], out[2], round;
	pid_t pid;

	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(root));
	snprintf(libdir, sizeof(libdir), "%s/lib", root);
	assert_int_equal(mkdir(libdir, 0755), 0);
	snprintf(lib, sizeof(lib), "%s/libfx.so", libdir);
	copy_file(fixture_path(src, sizeof(src), "libfx.so"), lib);
	fixture_path(host_exe, sizeof(host_exe), "fx_pie");
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		void *h, *(*hid)(void);
		uint64_t v[2];
		char ch;

		close(in[1]);
		close(out[0]);
		/*
		 * a private mount namespace whose root is `root`, like a
		 * container (a plain chroot would still show host paths)
		 */
		if (unshare(CLONE_NEWNS) != 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
		    mount(root, root, NULL, MS_BIND, NULL) != 0 ||
		    chdir(root) != 0 ||
		    syscall(SYS_pivot_root, ".", ".") != 0 ||
		    umount2(".", MNT_DETACH) != 0 || chdir("/") != 0)
			_exit(1);
		h = dlopen("/lib/libfx.so", RTLD_NOW);
		if (!h)
			_exit(2);
		*(void **)&hid = dlsym(h, "fx_lib_hidden_addr");
		v[0] = (uintptr_t)dlsym(h, "fx_lib_add");
		v[1] = (uintptr_t)hid();
		if (write(out[1], v, sizeof(v)) != sizeof(v))
			_exit(3);
		while (read(in[0], &ch, 1) > 0)
			;
		_exit(0);
	}
	close(in[0]);
	close(out[1]);
	if (read(out[0], pcs, sizeof(pcs)) != sizeof(pcs)) {
		int st = 0;

		waitpid(pid, &st, 0);
		fail_msg("container child failed (exit %d)", WEXITSTATUS(st));
	}
	for (round = 0; round < 2; round++) {
		struct strtab *st = strtab__new();
		struct symbolizer *sz = symbolizer__new(st);
		struct symbolizer_stats s0, s1;
		struct frame fr = { 0 };

		if (round == 1) {
			/* the container replaces its file by a link to the host */
			assert_int_equal(unlink(lib), 0);
			assert_int_equal(symlink(host_exe, lib), 0);
		}
		symbolizer__stats(sz, &s0);
		assert_int_equal(symbolizer__native(sz, pid, pcs[0] + 1, &fr), 0);
		assert_string_equal(fr.symbol, "fx_lib_add");
		assert_string_equal(fr.module, "/lib/libfx.so");
		assert_int_equal(symbolizer__native(sz, pid, pcs[1], &fr), 0);
		assert_string_equal(fr.symbol, "fx_lib_hidden");
		symbolizer__stats(sz, &s1);
		print_message("round %d: %zu opened in root, %zu via map_files\n",
			      round, s1.open_root, s1.open_map_files);
		if (round == 0)
			assert_true(s1.open_root > s0.open_root);
		else
			assert_true(s1.open_map_files > s0.open_map_files);
		symbolizer__free(sz);
		strtab__free(st);
	}
	close(in[1]);
	close(out[0]);
	waitpid(pid, NULL, 0);
	unlink(lib);
	rmdir(libdir);
	rmdir(root);
	(void)c;
}

/* a child that dlopens lib and sends the address of its symbol sym */
static pid_t spawn_dlopen(const char *lib, const char *sym, uint64_t *pc,
			  int *keep)
{
	int in[2], out[2];
	pid_t pid;

	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		void *h = dlopen(lib, RTLD_NOW);
		uint64_t v = h ? (uintptr_t)dlsym(h, sym) : 0;
		char ch;

		close(in[1]);
		close(out[0]);
		if (write(out[1], &v, sizeof(v)) != sizeof(v))
			_exit(3);
		while (read(in[0], &ch, 1) > 0)
			;
		_exit(0);
	}
	close(in[0]);
	close(out[1]);
	assert_int_equal(read(out[0], pc, sizeof(*pc)), sizeof(*pc));
	close(out[0]);
	assert_true(*pc != 0);
	*keep = in[1];
	return pid;
}

/*
 * A build-id is what a file claims. A user's library that claims another's
 * (libfx.so with fx_lib_add renamed in its symbol table, its build-id note
 * kept, owned by uid 65534) is seen first; root's real library, another inode, must still be
 * named from its own symbols, while two root copies share one module.
 */
static void test_forged_build_id(void **state)
{
	struct ctx *c = *state;
	char dir[] = "/tmp/asgst-bid-XXXXXX", forged[PATH_MAX], real[PATH_MAX];
	char real2[PATH_MAX], src[PATH_MAX], cmd[3 * PATH_MAX];
	struct symbolizer_stats s0, s1;
	struct frame fr = { 0 };
	uint64_t pcf, pcr, pcr2;
	int kf, kr, kr2;
	pid_t a, b, d;

	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(dir));
	fixture_path(src, sizeof(src), "libfx.so");
	snprintf(forged, sizeof(forged), "%s/libforged.so", dir);
	snprintf(real, sizeof(real), "%s/libfx.so", dir);
	snprintf(real2, sizeof(real2), "%s/libfx2.so", dir);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --redefine-sym fx_lib_add=forged_add %s %s", src,
		 forged);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(chown(forged, 65534, 65534), 0);
	assert_int_equal(chmod(forged, 0644), 0);
	copy_file(src, real);
	copy_file(src, real2);

	a = spawn_dlopen(forged, "fx_lib_add", &pcf, &kf);
	assert_int_equal(symbolizer__native(c->sz, a, pcf + 1, &fr), 0);
	assert_string_equal(fr.symbol, "forged_add");
	b = spawn_dlopen(real, "fx_lib_add", &pcr, &kr);
	assert_int_equal(symbolizer__native(c->sz, b, pcr + 1, &fr), 0);
	assert_string_equal(fr.symbol, "fx_lib_add");
	/* the same build-id and owner: shared, no new module */
	symbolizer__stats(c->sz, &s0);
	d = spawn_dlopen(real2, "fx_lib_add", &pcr2, &kr2);
	assert_int_equal(symbolizer__native(c->sz, d, pcr2 + 1, &fr), 0);
	assert_string_equal(fr.symbol, "fx_lib_add");
	symbolizer__stats(c->sz, &s1);
	print_message("modules: %zu before root's second copy, %zu after\n",
		      s0.modules, s1.modules);
	assert_int_equal(s1.modules, s0.modules);

	close(kf);
	close(kr);
	close(kr2);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	waitpid(d, NULL, 0);
	unlink(forged);
	unlink(real);
	unlink(real2);
	rmdir(dir);
}

/*
 * The modules' memory limits: with room for less than libfx.so's tables
 * for each user, a copy owned by uid 65534 is refused (its pc shown as
 * module+offset, counted), while root's copy, under the overall limit
 * only, is named.
 */
static void test_module_limits(void **state)
{
	struct ctx *c = *state;
	char dir[] = "/tmp/asgst-lim-XXXXXX", mine[PATH_MAX], root[PATH_MAX];
	char src[PATH_MAX];
	struct symbolizer_stats s0, s1;
	struct frame fr = { 0 };
	uint64_t pcu, pcr;
	int ku, kr;
	pid_t a, b;

	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(dir));
	fixture_path(src, sizeof(src), "libfx.so");
	snprintf(mine, sizeof(mine), "%s/libuser.so", dir);
	snprintf(root, sizeof(root), "%s/libroot.so", dir);
	copy_file(src, mine);
	copy_file(src, root);
	assert_int_equal(chown(mine, 65534, 65534), 0);
	symbolizer__set_limits(c->sz, 64u << 20, 512);

	symbolizer__stats(c->sz, &s0);
	a = spawn_dlopen(mine, "fx_lib_add", &pcu, &ku);
	/* unnamed: no symbol (-ENOENT, or a frame without one) */
	if (symbolizer__native(c->sz, a, pcu + 1, &fr) == 0)
		assert_null(fr.symbol);
	b = spawn_dlopen(root, "fx_lib_add", &pcr, &kr);
	assert_int_equal(symbolizer__native(c->sz, b, pcr + 1, &fr), 0);
	assert_string_equal(fr.symbol, "fx_lib_add");
	symbolizer__stats(c->sz, &s1);
	print_message("refused %zu, module tables %zu KiB\n",
		      s1.modules_refused - s0.modules_refused,
		      s1.module_bytes / 1024);
	assert_int_equal(s1.modules_refused - s0.modules_refused, 1);
	assert_true(s1.module_bytes <= 64u << 20);

	close(ku);
	close(kr);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	unlink(mine);
	unlink(root);
	rmdir(dir);
}

/*
 * Inlined functions and lines of a stripped library whose DWARF is in its
 * debug file (.gnu_debuglink): a pc of fx_outer where fx_leaf is inlined
 * in fx_mid gets both as inlined frames, innermost first, with the lines
 * the unstripped file's DWARF gives; a return address looks up the call
 * before it; the second lookup comes from the cache; max bounds what is
 * written.
 */
static void test_inlines(void **state)
{
	struct ctx *c = *state;
	char lib[PATH_MAX], full[PATH_MAX];
	struct dwarf_line_frame want[DWARF_LINES_MAX];
	struct symbolizer_stats s0, s1;
	struct frame fr = { 0 }, fr2 = { 0 }, out[8];
	struct elf_module_opts o = { .root_fd = -1 };
	struct elf_module *em;
	struct dwarf_lines *dw;
	uint64_t pc, outer = 0, deep = 0;
	int k, fd, n = 0;
	pid_t a;

	fixture_path(lib, sizeof(lib), "inl/libfxinl.so");
	fd = open(fixture_path(full, sizeof(full), "libfxinl.so"),
		  O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	em = elf_module__load(fd, &o);
	dw = dwarf_lines__open(fd, 1ull << 30);
	close(fd);
	assert_non_null(em);
	assert_non_null(dw);
	outer = elf_module__sym_addr(em, elf_module__find_name(em, "fx_outer"));
	for (uint64_t i = 0; i < 256 && !deep; i++)
		if ((n = dwarf_lines__find(dw, outer + i, want,
					   DWARF_LINES_MAX)) == 3)
			deep = outer + i;
	assert_true(deep != 0);

	symbolizer__stats(c->sz, &s0);
	a = spawn_dlopen(lib, "fx_outer", &pc, &k);
	/* off by default: nothing, no DWARF read */
	fr.type = FRAME_NON_JAVA;
	fr.pc = pc + (deep - outer);
	fr.line = -1;
	assert_int_equal(symbolizer__native(c->sz, a, fr.pc, &fr), 0);
	assert_int_equal(symbolizer__inlines(c->sz, a, &fr, false, out, 8), 0);
	assert_int_equal(fr.line, -1);
	symbolizer__set_inlines(c->sz, true);
	pc += deep - outer;
	fr.type = FRAME_NON_JAVA;
	fr.pc = pc;
	fr.line = -1;
	assert_int_equal(symbolizer__native(c->sz, a, pc, &fr), 0);
	assert_string_equal(fr.symbol, "fx_outer");
	assert_int_equal(symbolizer__inlines(c->sz, a, &fr, false, out, 8), 2);
	assert_string_equal(out[0].symbol, "fx_leaf");
	assert_string_equal(out[1].symbol, "fx_mid");
	for (int i = 0; i < 2; i++) {
		assert_int_equal(out[i].type, FRAME_NON_JAVA);
		assert_true(out[i].flags & FRAME_F_INLINED);
		assert_int_equal(out[i].pc, pc);
		assert_int_equal(out[i].offset, fr.offset);
		assert_string_equal(out[i].module, fr.module);
		assert_int_equal(out[i].line, want[i].line);
		assert_string_equal(out[i].source, want[i].file);
	}
	assert_false(fr.flags & FRAME_F_INLINED);
	assert_int_equal(fr.line, want[2].line);
	assert_string_equal(fr.source, want[2].file);

	/* a return address just after: the same chain, from the cache */
	fr2.type = FRAME_NON_JAVA;
	fr2.pc = pc + 1;
	assert_int_equal(symbolizer__native(c->sz, a, pc + 1, &fr2), 0);
	assert_int_equal(symbolizer__inlines(c->sz, a, &fr2, true, out, 1), 1);
	assert_string_equal(out[0].symbol, "fx_leaf");
	assert_int_equal(fr2.line, want[2].line);
	symbolizer__stats(c->sz, &s1);
	print_message("dwarf: %zu modules, %zu KiB, %.2f ms; inline chains "
		      "%llu looked up, %llu cached\n", s1.dwarf_modules,
		      s1.dwarf_bytes / 1024, s1.dwarf_ns / 1e6,
		      (unsigned long long)(s1.inline_misses - s0.inline_misses),
		      (unsigned long long)(s1.inline_hits - s0.inline_hits));
	assert_int_equal(s1.dwarf_modules - s0.dwarf_modules, 1);
	assert_true(s1.inline_hits - s0.inline_hits >= 1);
	assert_int_equal(s1.inline_misses - s0.inline_misses, 1);

	/* a frame that is no native code of a module: nothing */
	fr2 = (struct frame){ .type = FRAME_NON_JAVA, .pc = 0, .line = -1 };
	assert_int_equal(symbolizer__inlines(c->sz, a, &fr2, false, out, 8), 0);
	fr2 = (struct frame){ .type = FRAME_NON_JAVA, .pc = pc, .line = -1,
			      .flags = FRAME_F_STUB };
	assert_int_equal(symbolizer__inlines(c->sz, a, &fr2, false, out, 8), 0);
	assert_int_equal(fr2.line, -1);

	close(k);
	waitpid(a, NULL, 0);
	dwarf_lines__free(dw);
	elf_module__free(em);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_self, setup, teardown),
		cmocka_unit_test_setup_teardown(test_self_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vdso, setup, teardown),
		cmocka_unit_test_setup_teardown(test_child_pie, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jvm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_cached, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_debug_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_container_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged_build_id, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_inlines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_module_limits, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
