// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The live path's caches keep their answers true: a native pc named once
 * is named from the symbolizer's pc cache, but never from the maps it was
 * named with once the process's maps are loaded again (the same pc in
 * another file); a trace added with profile__add_interned lands in the
 * same stack as the same trace added with profile__add.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "profile/profile.h"
#include "symbols/symbolize.h"
#include "trace.h"
#include "util/strtab.h"

__attribute__((noinline)) int live_caches_probe_fn(int x)
{
	return x * 5 + 3;
}

static int name_of(struct symbolizer *sz, pid_t pid, uint64_t pc,
		   struct frame *f)
{
	memset(f, 0, sizeof(*f));
	return symbolizer__native(sz, pid, pc, f);
}

/* our own maps line holding pc, with its file replaced by path */
static int maps_with_file(uint64_t pc, const char *path, char *out,
			  size_t len)
{
	FILE *fp = fopen("/proc/self/maps", "r");
	unsigned long long s, e, off;
	char line[1024], perms[8];
	struct stat sb;
	int rc = -1;

	if (!fp || stat(path, &sb))
		goto done;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%llx-%llx %7s %llx", &s, &e, perms, &off) != 4 ||
		    pc < s || pc >= e)
			continue;
		snprintf(out, len, "%llx-%llx %s %08llx %02x:%02x %llu %s\n",
			 s, e, perms, off, major(sb.st_dev), minor(sb.st_dev),
			 (unsigned long long)sb.st_ino, path);
		rc = 0;
		break;
	}
done:
	if (fp)
		fclose(fp);
	return rc;
}

static void test_pc_cache_follows_maps(void **state)
{
	struct strtab *st = strtab__new();
	struct symbolizer *sz = symbolizer__new(st);
	uint64_t pc = (uint64_t)(uintptr_t)live_caches_probe_fn + 2;
	const char *self_module;
	char text[2048];
	struct frame f;

	(void)state;
	assert_non_null(sz);
	assert_int_equal(name_of(sz, getpid(), pc, &f), 0);
	assert_string_equal(f.symbol, "live_caches_probe_fn");
	self_module = f.module;
	assert_non_null(self_module);
	/* again: the cached answer, the same */
	assert_int_equal(name_of(sz, getpid(), pc, &f), 0);
	assert_string_equal(f.symbol, "live_caches_probe_fn");
	assert_ptr_equal(f.module, self_module);
	/* the maps loaded again, the same addresses now another file's */
	assert_int_equal(maps_with_file(pc, "/bin/sh", text, sizeof(text)), 0);
	assert_int_equal(symbolizer__add_offline(sz, getpid(), text,
						 strlen(text)), 0);
	name_of(sz, getpid(), pc, &f);
	assert_non_null(f.module);
	assert_string_equal(f.module, "/bin/sh");
	assert_true(!f.symbol || strcmp(f.symbol, "live_caches_probe_fn"));
	/* a pc in no mapping now: no name, whatever was cached for it */
	assert_int_not_equal(name_of(sz, getpid(), 16, &f), 0);
	symbolizer__forget(sz, getpid());
	/* forgotten: read afresh from /proc, named as at first */
	assert_int_equal(name_of(sz, getpid(), pc, &f), 0);
	assert_string_equal(f.symbol, "live_caches_probe_fn");
	symbolizer__free(sz);
	strtab__free(st);
}

static void fill_trace(struct trace *t, struct frame *fr, const char **s)
{
	memset(t, 0, sizeof(*t));
	memset(fr, 0, 3 * sizeof(*fr));
	t->pid = 7;
	t->tid = 8;
	t->comm = s[0];
	t->thread = s[1];
	t->nframes = 3;
	t->frames = fr;
	fr[0].type = FRAME_JAVA;
	fr[0].klass = s[2];
	fr[0].method = s[3];
	fr[0].signature = s[4];
	fr[0].bci = 3;
	fr[1].type = FRAME_NON_JAVA;
	fr[1].symbol = s[5];
	fr[1].module = s[6];
	fr[1].pc = 0x1234;
	fr[2].type = FRAME_KERNEL;
	fr[2].symbol = s[7];
}

static void test_add_interned_same_stack(void **state)
{
	static const char *names[] = { "java", "worker-1", "demo.Chain",
				       "leaf", "(I)V", "memcpy",
				       "/lib/libc.so.6", "do_syscall_64" };
	struct profile *p = profile__new();
	const char *own[8];
	char *copies[8];
	struct frame fr[3];
	struct trace t;

	(void)state;
	assert_non_null(p);
	for (int i = 0; i < 8; i++) {
		/* strings of the caller's (profile__add interns them) */
		copies[i] = strdup(names[i]);
		assert_non_null(copies[i]);
		own[i] = strtab__intern(profile__strtab(p), names[i]);
		assert_non_null(own[i]);
	}
	fill_trace(&t, fr, (const char **)copies);
	assert_int_equal(profile__add(p, &t, 1, 0), 0);
	fill_trace(&t, fr, own);
	assert_int_equal(profile__add_interned(p, &t, 2, 0), 0);
	assert_int_equal(profile__nstacks(p), 1);
	assert_int_equal(profile__stack(p, 0)->count, 3);
	/* another bci: another stack */
	fr[0].bci = 4;
	assert_int_equal(profile__add_interned(p, &t, 1, 0), 0);
	assert_int_equal(profile__nstacks(p), 2);
	/* the profile keeps its own copy of the frames */
	fr[0].bci = 5;
	assert_int_equal(profile__stack(p, 1)->trace.frames[0].bci, 4);
	assert_string_equal(profile__stack(p, 1)->trace.frames[1].symbol,
			    "memcpy");
	for (int i = 0; i < 8; i++)
		free(copies[i]);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pc_cache_follows_maps),
		cmocka_unit_test(test_add_interned_same_stack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
