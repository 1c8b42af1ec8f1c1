// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * outfile: an output is written to a new 0600 file beside its path and
 * renamed over it when complete; an older file of ours is replaced (a new
 * inode: whoever holds the old one open never sees the new data); a link,
 * FIFO, device or directory at the path, or another user's file, is
 * refused with one line and left as it was; an abort leaves nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/outfile.h"

static char tmpdir[64];

static const char *tpath(const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* the file's text, or "" when it cannot be read */
static const char *read_file(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/* temporary files in tmpdir: their count, the last one's name in name */
static int count_tmp(char *name, size_t len)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, ".asgst-", 7)) {
			n++;
			if (name)
				snprintf(name, len, "%s", e->d_name);
		}
	closedir(d);
	return n;
}

/* one line, no newline, naming the path and what to do */
static void check_err(const char *err, const char *path, const char *want)
{
	print_message("  err: %s\n", err);
	assert_null(strchr(err, '\n'));
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, want));
}

/* path is refused with one line holding want; nothing left behind */
static void check_refused(const char *path, const char *want)
{
	struct outfile o;
	char err[256] = "";

	assert_int_equal(outfile__create(&o, path, err, sizeof(err)),
			 -EEXIST);
	check_err(err, path, want);
	assert_non_null(strstr(err, "refused"));
	assert_null(o.f);
	assert_int_equal(count_tmp(NULL, 0), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_outfile.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) ? -1 : 0;
}

static void test_fresh(void **state)
{
	char err[256] = "", name[64];
	struct outfile o;
	struct stat st;
	mode_t old = umask(0);

	(void)state;
	assert_int_equal(outfile__create(&o, tpath("fresh.json"), err,
					 sizeof(err)), 0);
	fputs("profile", o.f);
	/* written beside the path, which is not there yet */
	assert_int_equal(count_tmp(name, sizeof(name)), 1);
	assert_int_equal(lstat(tpath(name), &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(access(tpath("fresh.json"), F_OK), -1);
	assert_int_equal(outfile__commit(&o, err, sizeof(err)), 0);
	assert_null(o.f);
	assert_string_equal(read_file(tpath("fresh.json")), "profile");
	assert_int_equal(stat(tpath("fresh.json"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(count_tmp(NULL, 0), 0);
	umask(old);
}

/* a file of ours is replaced by a new inode, not written into */
static void test_replace_ours(void **state)
{
	char err[256] = "", old_text[16] = "";
	struct stat before, after;
	struct outfile o;
	int held;

	(void)state;
	write_file(tpath("ours.json"), "old");
	assert_int_equal(chmod(tpath("ours.json"), 0666), 0);
	assert_int_equal(stat(tpath("ours.json"), &before), 0);
	/* someone holding the old file open */
	held = open(tpath("ours.json"), O_RDONLY);
	assert_true(held >= 0);
	assert_int_equal(outfile__create(&o, tpath("ours.json"), err,
					 sizeof(err)), 0);
	fputs("new profile", o.f);
	fflush(o.f);
	/* readers see the old file until the new one is whole */
	assert_string_equal(read_file(tpath("ours.json")), "old");
	assert_int_equal(outfile__commit(&o, err, sizeof(err)), 0);
	assert_string_equal(read_file(tpath("ours.json")), "new profile");
	assert_int_equal(stat(tpath("ours.json"), &after), 0);
	assert_true(after.st_ino != before.st_ino);
	assert_int_equal(after.st_mode & 0777, 0600);
	assert_int_equal(read(held, old_text, sizeof(old_text) - 1), 3);
	assert_string_equal(old_text, "old");
	close(held);
	assert_int_equal(count_tmp(NULL, 0), 0);
}

static void test_refuse_kinds(void **state)
{
	struct stat st;

	(void)state;
	/* a link: neither it nor its target is written */
	write_file(tpath("victim"), "keep");
	assert_int_equal(symlink(tpath("victim"), tpath("link.json")), 0);
	check_refused(tpath("link.json"), "symbolic link");
	assert_string_equal(read_file(tpath("victim")), "keep");
	assert_int_equal(lstat(tpath("link.json"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* a dangling link is a link too */
	assert_int_equal(symlink(tpath("nowhere"), tpath("dangling")), 0);
	check_refused(tpath("dangling"), "symbolic link");
	assert_int_equal(access(tpath("nowhere"), F_OK), -1);
	/* a FIFO: never opened (the test would block) */
	assert_int_equal(mkfifo(tpath("fifo.json"), 0666), 0);
	check_refused(tpath("fifo.json"), "FIFO");
	/* a directory */
	assert_int_equal(mkdir(tpath("dir.json"), 0755), 0);
	check_refused(tpath("dir.json"), "directory");
	/* a device */
	check_refused("/dev/null", "character device");
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

static void test_refuse_other_user(void **state)
{
	struct stat st;

	(void)state;
	if (geteuid() != 0) {
		print_message("  not root: cannot give a file to uid 65534, "
			      "the other-user case is not tested\n");
		skip();
	}
	write_file(tpath("theirs.json"), "theirs");
	assert_int_equal(chmod(tpath("theirs.json"), 0666), 0);
	assert_int_equal(chown(tpath("theirs.json"), 65534, 65534), 0);
	check_refused(tpath("theirs.json"), "owned by uid 65534");
	assert_string_equal(read_file(tpath("theirs.json")), "theirs");
	assert_int_equal(stat(tpath("theirs.json"), &st), 0);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(st.st_mode & 0777, 0666);
}

/* an abort leaves the path as it was and no temporary file */
static void test_abort(void **state)
{
	char err[256] = "";
	struct outfile o;

	(void)state;
	write_file(tpath("kept.json"), "before");
	assert_int_equal(outfile__create(&o, tpath("kept.json"), err,
					 sizeof(err)), 0);
	fputs("half a profile", o.f);
	assert_int_equal(count_tmp(NULL, 0), 1);
	outfile__abort(&o);
	assert_null(o.f);
	outfile__abort(&o);	/* twice: nothing */
	assert_string_equal(read_file(tpath("kept.json")), "before");
	assert_int_equal(count_tmp(NULL, 0), 0);
	assert_int_equal(outfile__create(&o, tpath("never.json"), err,
					 sizeof(err)), 0);
	outfile__abort(&o);
	assert_int_equal(access(tpath("never.json"), F_OK), -1);
	assert_int_equal(count_tmp(NULL, 0), 0);
}

/* what appears at the path during the recording is not replaced */
static void test_commit_checks_again(void **state)
{
	char err[256] = "";
	struct outfile o;
	struct stat st;

	(void)state;
	assert_int_equal(outfile__create(&o, tpath("late.json"), err,
					 sizeof(err)), 0);
	fputs("profile", o.f);
	assert_int_equal(mkfifo(tpath("late.json"), 0666), 0);
	assert_int_equal(outfile__commit(&o, err, sizeof(err)), -EEXIST);
	check_err(err, tpath("late.json"), "FIFO");
	assert_null(o.f);
	assert_int_equal(lstat(tpath("late.json"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(count_tmp(NULL, 0), 0);
}

static void test_bad_paths(void **state)
{
	char err[256] = "", cwd[PATH_MAX];
	struct outfile o;

	(void)state;
	assert_int_equal(outfile__create(&o, tpath("sub/"), err, sizeof(err)),
			 -EISDIR);
	check_err(err, tpath("sub/"), "directory");
	assert_int_equal(outfile__create(&o, tpath("none/x.json"), err,
					 sizeof(err)), -ENOENT);
	check_err(err, tpath("none/x.json"), "No such file");
	/* a name alone: in the working directory */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(tmpdir), 0);
	assert_int_equal(outfile__create(&o, "rel.json", err, sizeof(err)), 0);
	fputs("x", o.f);
	assert_int_equal(outfile__commit(&o, err, sizeof(err)), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_string_equal(read_file(tpath("rel.json")), "x");
	assert_int_equal(count_tmp(NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh),
		cmocka_unit_test(test_replace_ours),
		cmocka_unit_test(test_refuse_kinds),
		cmocka_unit_test(test_refuse_other_user),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_commit_checks_again),
		cmocka_unit_test(test_bad_paths),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
