// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Opening a file another process controls (see safe_open.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/err.h"
#include "util/safe_open.h"

/* openat2 says EAGAIN when a rename raced a ".." in RESOLVE_IN_ROOT */
#define RESOLVE_TRIES	4

void safe_open__size_str(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (1ull << 30) && !(bytes & ((1ull << 30) - 1)))
		snprintf(buf, len, "%" PRIu64 " GiB", bytes >> 30);
	else if (bytes >= (1ull << 20) && !(bytes & ((1ull << 20) - 1)))
		snprintf(buf, len, "%" PRIu64 " MiB", bytes >> 20);
	else
		snprintf(buf, len, "%" PRIu64 " bytes", bytes);
}

static const char *type_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFIFO:	return "a FIFO";
	case S_IFCHR:	return "a character device";
	case S_IFBLK:	return "a block device";
	case S_IFSOCK:	return "a socket";
	case S_IFDIR:	return "a directory";
	default:	return "not a plain file";
	}
}

static int resolve_error(int e, char *why, size_t whylen)
{
	switch (e) {
	case ELOOP:
		return err__set(why, whylen, -e,
				"is a link that may not be followed here (refused)");
	case EXDEV:
		return err__set(why, whylen, -e, "leads out of its root (refused)");
	case ENOENT:
		return err__set(why, whylen, -e, "does not exist");
	case ENOSYS:
		return err__set(why, whylen, -e,
				"openat2 is not available (Linux 5.6 or later is needed)");
	default:
		return err__set(why, whylen, -e, "%s", strerror(e));
	}
}

/* what makes st unfit to be read; 0 when it is fit */
static int check_stat(const struct stat *st, uint64_t max_size, char *why,
		      size_t whylen)
{
	char lim[32];

	if (S_ISLNK(st->st_mode))
		return err__set(why, whylen, -ELOOP,
				"is a symbolic link (refused)");
	if (!S_ISREG(st->st_mode))
		return err__set(why, whylen, -EINVAL,
				"is %s, not a regular file (refused)",
				type_name(st->st_mode));
	if (st->st_size < 0 || (uint64_t)st->st_size > max_size) {
		safe_open__size_str(max_size, lim, sizeof(lim));
		return err__set(why, whylen, -EFBIG,
				"is %" PRIu64 " bytes, more than the %s limit (refused)",
				(uint64_t)st->st_size, lim);
	}
	return 0;
}

int safe_open(int root_fd, const char *path, unsigned int flags,
	      uint64_t max_size, struct stat *st, char *why, size_t whylen)
{
	/* O_PATH opens nothing: no FIFO wait, no device open routine */
	struct open_how how = { .flags = O_PATH | O_CLOEXEC };
	struct stat a, b;
	char self[48];
	int pfd = -1, fd = -1, ret, dfd = AT_FDCWD;

	if (why && whylen)
		why[0] = '\0';
	if (!path || !*path)
		return err__set(why, whylen, -EINVAL, "has no path");
	if (flags & SAFE_OPEN_NOFOLLOW)
		how.flags |= O_NOFOLLOW;
	if (root_fd >= 0) {
		dfd = root_fd;
		how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	} else if (!(flags & SAFE_OPEN_PROC_LINK)) {
		how.resolve = RESOLVE_NO_MAGICLINKS;
	}
	for (int i = 0; i < RESOLVE_TRIES; i++) {
		pfd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
		if (pfd >= 0 || errno != EAGAIN)
			break;
	}
	if (pfd < 0)
		return resolve_error(errno, why, whylen);
	if (fstat(pfd, &a)) {
		ret = err__set(why, whylen, -errno, "fstat: %s", strerror(errno));
		goto cleanup;
	}
	ret = check_stat(&a, max_size, why, whylen);
	if (ret)
		goto cleanup;
	/* the inode just checked, now for reading */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		ret = err__set(why, whylen, -errno, "%s", strerror(errno));
		goto cleanup;
	}
	if (fstat(fd, &b)) {
		ret = err__set(why, whylen, -errno, "fstat: %s", strerror(errno));
		goto cleanup;
	}
	if (b.st_dev != a.st_dev || b.st_ino != a.st_ino) {
		ret = err__set(why, whylen, -ESTALE,
			       "changed while it was opened (refused)");
		goto cleanup;
	}
	ret = check_stat(&b, max_size, why, whylen);
	if (ret)
		goto cleanup;
	if (st)
		*st = b;
	ret = fd;
	fd = -1;
cleanup:
	if (fd >= 0)
		close(fd);
	close(pfd);
	return ret;
}
