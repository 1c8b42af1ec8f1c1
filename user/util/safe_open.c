// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Opening a file another process controls (see safe_open.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/err.h"
#include "util/mounts.h"
#include "util/safe_open.h"

/* openat2 says EAGAIN when a rename raced a ".." in RESOLVE_IN_ROOT */
#define RESOLVE_TRIES	4
/* the walk across mounts: directories deep, links followed */
#define WALK_DEPTH	64
#define WALK_LINKS	40

/* the recorder's own "/", opened once, and its mount id */
static int host_root = -1;
static uint64_t host_root_mnt;

/* the pid whose root each fd from safe_open__root() is, by fd */
static pid_t *root_pids;
static size_t root_cap;

int safe_open__root(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	return safe_open__root_dir(path);
}

int safe_open__root_dir(const char *dir)
{
	long pid = 0;
	char *end;
	int fd;

	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!strncmp(dir, "/proc/", 6)) {
		pid = strtol(dir + 6, &end, 10);
		if (strcmp(end, "/root") || pid <= 0 || pid > INT_MAX)
			pid = 0;
	}
	if (!pid && (size_t)fd < root_cap)
		root_pids[fd] = 0;
	if (pid && (size_t)fd >= root_cap) {
		size_t nc = root_cap ? root_cap : 64;
		pid_t *v;

		while (nc <= (size_t)fd)
			nc *= 2;
		v = realloc(root_pids, nc * sizeof(*v));
		if (!v) {
			close(fd);
			return -ENOMEM;
		}
		memset(v + root_cap, 0, (nc - root_cap) * sizeof(*v));
		root_pids = v;
		root_cap = nc;
	}
	if (pid)
		root_pids[fd] = (pid_t)pid;
	return fd;
}

/*
 * The pid whose mount table tells the mounts met resolving path in
 * root_fd (0: the recorder's own). A stale entry (the fd closed, its
 * number reused) can only name a table that does not list the mount:
 * a refusal, never a wrong pass.
 */
static pid_t table_pid(int root_fd, const char *path, unsigned int flags)
{
	long pid = 0;

	if (flags & SAFE_OPEN_PROC_LINK) {
		if (!strncmp(path, "/proc/", 6)) {
			char *end;

			pid = strtol(path + 6, &end, 10);
			if (*end != '/' || pid <= 0 || pid > INT_MAX)
				pid = 0;
		}
		return (pid_t)pid;
	}
	if (root_fd >= 0 && (size_t)root_fd < root_cap)
		return root_pids[root_fd];
	return 0;
}

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

static int openat2_retry(int dfd, const char *path, struct open_how *how)
{
	int fd = -1;

	for (int i = 0; i < RESOLVE_TRIES; i++) {
		fd = (int)syscall(SYS_openat2, dfd, path, how, sizeof(*how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd < 0 ? -errno : fd;
}

/* is the /proc link name in dir a magic link? (followed within /proc) */
static bool is_magic(int dir, const char *name)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV |
			   RESOLVE_BENEATH,
	};
	int fd = openat2_retry(dir, name, &how);

	if (fd >= 0)
		close(fd);
	return fd == -ELOOP;
}

/*
 * Resolve path in root one component at a time, each looked up in a
 * directory whose mount was found safe, each mount crossed checked
 * before anything is asked of it; links are read and followed here
 * (absolute ones from root), so a link cannot lead into a risky mount
 * unchecked. ".." goes back up the directories walked, never above
 * root. The O_PATH fd, or -errno (why set).
 */
static int walk(int root, const char *path, bool nofollow, pid_t pid,
		char *why, size_t whylen)
{
	int fds[WALK_DEPTH], depth = 0, links = 0, ret;
	char *rest = malloc(2 * PATH_MAX), *lnk = malloc(PATH_MAX);
	size_t pos = 0;

	if (!rest || !lnk) {
		ret = err__set(why, whylen, -ENOMEM, "out of memory");
		goto out;
	}
	if (strlen(path) >= 2 * PATH_MAX) {
		ret = resolve_error(ENAMETOOLONG, why, whylen);
		goto out;
	}
	strcpy(rest, path);
	for (;;) {
		struct open_how how = {
			.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH |
				   RESOLVE_NO_XDEV,
		};
		int cur = depth ? fds[depth - 1] : root, nfd;
		char *c = rest + pos, *e;
		bool last;
		struct stat sb;
		ssize_t n;

		while (*c == '/')
			c++;
		if (!*c) {
			/* the path named a directory (or root) */
			ret = err__set(why, whylen, -EINVAL,
				       "is a directory, not a regular file (refused)");
			goto out;
		}
		e = strchr(c, '/');
		if (e)
			*e = '\0';
		pos = e ? (size_t)(e - rest) + 1 : strlen(rest);
		last = true;
		for (const char *q = rest + pos; e && *q; q++)
			if (*q != '/') {
				last = false;
				break;
			}
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			if (depth)
				close(fds[--depth]);
			continue;
		}
		nfd = openat2_retry(cur, c, &how);
		if (nfd == -EXDEV) {
			/* a mount point: cross it, then look before using it */
			how.resolve &= ~(uint64_t)RESOLVE_NO_XDEV;
			nfd = openat2_retry(cur, c, &how);
			if (nfd >= 0) {
				ret = mounts__check_fd(pid, nfd, why, whylen);
				if (ret) {
					close(nfd);
					goto out;
				}
			}
		}
		if (nfd < 0) {
			ret = resolve_error(-nfd, why, whylen);
			goto out;
		}
		if (fstat(nfd, &sb)) {
			ret = err__set(why, whylen, -errno, "fstat: %s",
				       strerror(errno));
			close(nfd);
			goto out;
		}
		if (S_ISLNK(sb.st_mode) && !(last && nofollow)) {
			size_t rl = strlen(rest + pos);
			struct statfs sf;

			/*
			 * /proc's links may be magic: their text is not where
			 * they lead. Such a one is refused; the others
			 * ("self") are followed by their text.
			 */
			if (fstatfs(nfd, &sf) || (sf.f_type == PROC_SUPER_MAGIC &&
						  is_magic(cur, c))) {
				close(nfd);
				ret = resolve_error(ELOOP, why, whylen);
				goto out;
			}
			n = readlinkat(nfd, "", lnk, PATH_MAX);
			close(nfd);
			if (++links > WALK_LINKS || n <= 0 || n >= PATH_MAX) {
				ret = resolve_error(n <= 0 ? EINVAL : ELOOP, why,
						    whylen);
				goto out;
			}
			if ((size_t)n + 1 + rl >= 2 * PATH_MAX) {
				ret = resolve_error(ENAMETOOLONG, why, whylen);
				goto out;
			}
			/* the link's text, then what was left of the path */
			memmove(rest + n + 1, rest + pos, rl + 1);
			memcpy(rest, lnk, (size_t)n);
			rest[n] = '/';
			pos = 0;
			if (lnk[0] == '/')
				while (depth)
					close(fds[--depth]);
			continue;
		}
		if (last) {
			ret = nfd;
			goto out;
		}
		if (!S_ISDIR(sb.st_mode) || depth == WALK_DEPTH) {
			close(nfd);
			ret = resolve_error(S_ISDIR(sb.st_mode) ? ENAMETOOLONG :
					    ENOTDIR, why, whylen);
			goto out;
		}
		fds[depth++] = nfd;
	}
out:
	while (depth)
		close(fds[--depth]);
	free(rest);
	free(lnk);
	return ret;
}

/*
 * The O_PATH fd of path, reached without asking anything of a file
 * system that may never answer (mounts.h): the whole path at once when
 * it stays on the mount it starts on (RESOLVE_NO_XDEV), that mount
 * checked; else walk(). A /proc magic link is followed at once (O_PATH
 * opens nothing) and the mount it lands on checked.
 */
static int resolve(int root_fd, const char *path, unsigned int flags,
		   char *why, size_t whylen)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC };
	pid_t pid = table_pid(root_fd, path, flags);
	int dfd, own = -1, pfd, ret;

	if (flags & SAFE_OPEN_NOFOLLOW)
		how.flags |= O_NOFOLLOW;
	if (root_fd < 0 && (flags & SAFE_OPEN_PROC_LINK)) {
		pfd = openat2_retry(AT_FDCWD, path, &how);
		if (pfd < 0)
			return resolve_error(-pfd, why, whylen);
		ret = mounts__check_fd(pid, pfd, why, whylen);
		if (ret) {
			close(pfd);
			return ret;
		}
		return pfd;
	}
	if (path[0] == '/') {
		ret = mounts__check_path(pid, path, why, whylen);
		if (ret)
			return ret;
	}
	if (root_fd >= 0) {
		dfd = root_fd;
		how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	} else if (path[0] == '/') {
		/* the recorder's own root: opened once, its mount known */
		if (host_root < 0) {
			int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

			if (fd < 0)
				return resolve_error(errno, why, whylen);
			ret = mounts__fd_mnt_id(fd, &host_root_mnt);
			if (ret) {
				close(fd);
				return err__set(why, whylen, -EREMOTE,
						"its mount cannot be told (%s) (refused)",
						strerror(-ret));
			}
			host_root = fd;
		}
		dfd = host_root;
		how.resolve = RESOLVE_NO_MAGICLINKS | RESOLVE_IN_ROOT;
	} else {
		/* a path of the recorder's own, from its cwd */
		own = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (own < 0)
			return resolve_error(errno, why, whylen);
		dfd = own;
		how.resolve = RESOLVE_NO_MAGICLINKS;
	}
	if (dfd == host_root)
		ret = mounts__check_id(pid, host_root_mnt, why, whylen);
	else
		ret = mounts__check_fd(pid, dfd, why, whylen);
	if (ret)
		goto out;
	how.resolve |= RESOLVE_NO_XDEV;
	pfd = openat2_retry(dfd, path, &how);
	if (pfd == -EXDEV)
		pfd = walk(dfd, path, flags & SAFE_OPEN_NOFOLLOW, pid, why,
			   whylen);
	else if (pfd < 0)
		pfd = resolve_error(-pfd, why, whylen);
	ret = pfd;
out:
	if (own >= 0)
		close(own);
	return ret;
}

int safe_open(int root_fd, const char *path, unsigned int flags,
	      uint64_t max_size, struct stat *st, char *why, size_t whylen)
{
	struct stat a, b;
	char self[48];
	int pfd = -1, fd = -1, ret;

	if (why && whylen)
		why[0] = '\0';
	if (!path || !*path)
		return err__set(why, whylen, -EINVAL, "has no path");
	/* O_PATH opens nothing: no FIFO wait, no device open routine */
	pfd = resolve(root_fd, path, flags, why, whylen);
	if (pfd < 0)
		return pfd;
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
