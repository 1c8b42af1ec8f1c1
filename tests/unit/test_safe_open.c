// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * safe_open(): regular files inside a root open; FIFOs, devices, sockets,
 * directories, links out of the root, magic links and files over the
 * limit are refused at once with one reason line; nothing blocks (an
 * alarm fails the test if something does). Outputs are test_outfile.c's.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/safe_open.h"

static char tmpdir[64];
static char root[128];
static int root_fd = -1;

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

/* one line, no newline, not empty */
static void check_why(const char *why, const char *want)
{
	print_message("  why: %s\n", why);
	assert_true(why[0] != '\0');
	assert_null(strchr(why, '\n'));
	if (want)
		assert_non_null(strstr(why, want));
}

static void on_alarm(int sig)
{
	(void)sig;
	/* a blocked open: the very thing safe_open() must never do */
	_exit(99);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_safe_open.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(root, sizeof(root), "%s/root", tmpdir);
	if (mkdir(root, 0755) || mkdir(tpath("root/dir"), 0755) ||
	    mkdir(tpath("outside"), 0755))
		return -1;
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	signal(SIGALRM, on_alarm);
	alarm(30);
	return root_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	if (root_fd >= 0)
		close(root_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) ? -1 : 0;
}

static void test_regular(void **state)
{
	char why[SAFE_OPEN_WHY_MAX], buf[16];
	struct stat st;
	int fd, fl;

	(void)state;
	write_file(tpath("root/dir/file"), "hello");
	fd = safe_open(root_fd, "/dir/file", 0, 1024, &st, why, sizeof(why));
	assert_true(fd >= 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 5);
	fl = fcntl(fd, F_GETFL);
	assert_int_equal(fl & O_ACCMODE, O_RDONLY);
	assert_true(fl & O_NONBLOCK);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 5);
	close(fd);
	/* relative to the root too, and without st or why */
	fd = safe_open(root_fd, "dir/file", SAFE_OPEN_NOFOLLOW, 5, NULL, NULL, 0);
	assert_true(fd >= 0);
	close(fd);
	/* a host path */
	fd = safe_open(SAFE_OPEN_HOST, tpath("root/dir/file"), 0, 5, NULL, why,
		       sizeof(why));
	assert_true(fd >= 0);
	close(fd);
}

static void test_not_regular(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char why[SAFE_OPEN_WHY_MAX];
	int fd, s;

	(void)state;
	/* a FIFO without a writer: refused at once, never waited on */
	assert_int_equal(mkfifo(tpath("root/dir/fifo"), 0644), 0);
	fd = safe_open(root_fd, "/dir/fifo", 0, 1 << 20, NULL, why, sizeof(why));
	assert_int_equal(fd, -EINVAL);
	check_why(why, "is a FIFO, not a regular file");
	/* a directory */
	fd = safe_open(root_fd, "/dir", 0, 1 << 20, NULL, why, sizeof(why));
	assert_int_equal(fd, -EINVAL);
	check_why(why, "directory");
	/* devices, on the host */
	fd = safe_open(SAFE_OPEN_HOST, "/dev/zero", 0, 1 << 20, NULL, why,
		       sizeof(why));
	assert_int_equal(fd, -EINVAL);
	check_why(why, "character device");
	fd = safe_open(SAFE_OPEN_HOST, "/dev/tty", 0, 1 << 20, NULL, why,
		       sizeof(why));
	assert_true(fd < 0);
	/* a socket */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", tpath("root/sock"));
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	fd = safe_open(root_fd, "/sock", 0, 1 << 20, NULL, why, sizeof(why));
	assert_int_equal(fd, -EINVAL);
	check_why(why, "socket");
	close(s);
}

static void test_links(void **state)
{
	char why[SAFE_OPEN_WHY_MAX];
	int fd;

	(void)state;
	write_file(tpath("root/dir/target"), "x");
	write_file(tpath("outside/secret"), "s");
	/* inside the root: followed, unless the last one is refused */
	assert_int_equal(symlink("/dir/target", tpath("root/dir/in")), 0);
	fd = safe_open(root_fd, "/dir/in", 0, 16, NULL, why, sizeof(why));
	assert_true(fd >= 0);
	close(fd);
	fd = safe_open(root_fd, "/dir/in", SAFE_OPEN_NOFOLLOW, 16, NULL, why,
		       sizeof(why));
	assert_int_equal(fd, -ELOOP);
	check_why(why, "symbolic link");
	/* to a device: resolved in the root, where there is none */
	assert_int_equal(symlink("/dev/zero", tpath("root/dir/zero")), 0);
	fd = safe_open(root_fd, "/dir/zero", 0, 16, NULL, why, sizeof(why));
	assert_int_equal(fd, -ENOENT);
	check_why(why, "does not exist");
	/* the same link read as a host path: the device, refused */
	fd = safe_open(SAFE_OPEN_HOST, tpath("root/dir/zero"), 0, 16, NULL,
		       why, sizeof(why));
	assert_int_equal(fd, -EINVAL);
	check_why(why, "character device");
	/* out of the root, absolute or relative: stays inside */
	assert_int_equal(symlink(tpath("outside/secret"),
				 tpath("root/dir/abs")), 0);
	fd = safe_open(root_fd, "/dir/abs", 0, 16, NULL, why, sizeof(why));
	assert_true(fd < 0);
	assert_int_equal(symlink("../../outside/secret",
				 tpath("root/dir/rel")), 0);
	fd = safe_open(root_fd, "/dir/rel", 0, 16, NULL, why, sizeof(why));
	assert_true(fd < 0);
	fd = safe_open(root_fd, "../outside/secret", 0, 16, NULL, why,
		       sizeof(why));
	assert_true(fd < 0);
	/* /proc magic links: refused unless asked for */
	fd = safe_open(SAFE_OPEN_HOST, "/proc/self/exe", 0, 1ull << 40, NULL,
		       why, sizeof(why));
	assert_int_equal(fd, -ELOOP);
	check_why(why, "link");
	fd = safe_open(SAFE_OPEN_HOST, "/proc/self/exe", SAFE_OPEN_PROC_LINK,
		       1ull << 40, NULL, why, sizeof(why));
	assert_true(fd >= 0);
	close(fd);
	/* missing */
	fd = safe_open(root_fd, "/nope", 0, 16, NULL, why, sizeof(why));
	assert_int_equal(fd, -ENOENT);
	fd = safe_open(root_fd, "", 0, 16, NULL, why, sizeof(why));
	assert_int_equal(fd, -EINVAL);
}

static void test_size(void **state)
{
	char why[SAFE_OPEN_WHY_MAX], s[32];
	int fd;

	(void)state;
	fd = open(tpath("root/big"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(3ull << 20) + 1), 0);	/* sparse */
	close(fd);
	fd = safe_open(root_fd, "/big", 0, 3ull << 20, NULL, why, sizeof(why));
	assert_int_equal(fd, -EFBIG);
	check_why(why, "more than the 3 MiB limit");
	fd = safe_open(root_fd, "/big", 0, (3ull << 20) + 1, NULL, why,
		       sizeof(why));
	assert_true(fd >= 0);
	close(fd);
	safe_open__size_str(4ull << 30, s, sizeof(s));
	assert_string_equal(s, "4 GiB");
	safe_open__size_str(1000, s, sizeof(s));
	assert_string_equal(s, "1000 bytes");
}

/* a file that shrinks while read: a short pread, nothing worse */
static void test_truncated(void **state)
{
	char why[SAFE_OPEN_WHY_MAX], buf[4096];
	int fd, w;

	(void)state;
	w = open(tpath("root/shrink"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(w >= 0);
	memset(buf, 'a', sizeof(buf));
	for (int i = 0; i < 16; i++)
		assert_int_equal(write(w, buf, sizeof(buf)), sizeof(buf));
	fd = safe_open(root_fd, "/shrink", 0, 1 << 20, NULL, why, sizeof(why));
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(w, 100), 0);
	assert_int_equal(pread(fd, buf, sizeof(buf), 8192), 0);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 100);
	close(fd);
	close(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regular),
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_truncated),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
