// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* An output written beside its path and renamed into place (outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/outfile.h"

/* random names tried before giving up (each is 64 random bits) */
#define OUTFILE_TRIES	8

static const char *kind_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	case S_IFDIR:
		return "a directory";
	default:
		return "something else";
	}
}

/*
 * What is at o->name now: nothing, or a regular file of ours, is 0; else
 * -EEXIST (or the lookup's -errno) with the line in err.
 */
static int outfile__check(const struct outfile *o, char *err, size_t errlen)
{
	struct stat st;

	if (fstatat(o->dirfd, o->name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 :
		       err__set(err, errlen, -errno, "cannot write %s: %s",
				o->path, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return err__set(err, errlen, -EEXIST, "cannot write %s: it is "
				"a symbolic link (refused: give the real path, "
				"or -o - for standard output)", o->path);
	if (!S_ISREG(st.st_mode))
		return err__set(err, errlen, -EEXIST, "cannot write %s: it is "
				"%s, not a regular file (refused: choose "
				"another -o)", o->path, kind_name(st.st_mode));
	if (st.st_uid != geteuid())
		return err__set(err, errlen, -EEXIST, "cannot write %s: the "
				"file there is owned by uid %u, not by uid %u "
				"(refused: remove it or choose another -o)",
				o->path, (unsigned int)st.st_uid,
				(unsigned int)geteuid());
	return 0;
}

/* a new 0600 file of a random name in o->dirfd: its fd, or -errno */
static int outfile__open_tmp(struct outfile *o)
{
	uint8_t rnd[8];
	int fd = -EEXIST;

	for (int i = 0; i < OUTFILE_TRIES && fd == -EEXIST; i++) {
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			return -errno;
		snprintf(o->tmp, sizeof(o->tmp), ".asgst-%02x%02x%02x%02x"
			 "%02x%02x%02x%02x.tmp", rnd[0], rnd[1], rnd[2],
			 rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
		fd = openat(o->dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0)
		o->tmp[0] = '\0';
	return fd;
}

static void outfile__release(struct outfile *o)
{
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->dirfd = -1;
	free(o->path);
	free(o->name);
	o->path = o->name = NULL;
	o->tmp[0] = '\0';
}

int outfile__create(struct outfile *o, const char *path, char *err,
		    size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char *dir = NULL;
	int fd = -1, ret;

	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	o->path = strdup(path);
	o->name = strdup(slash ? slash + 1 : path);
	if (slash == path)
		dir = strdup("/");
	else
		dir = slash ? strndup(path, (size_t)(slash - path)) :
			      strdup(".");
	if (!o->path || !o->name || !dir) {
		ret = err__set(err, errlen, -ENOMEM, "cannot write %s: %s",
			       path, strerror(ENOMEM));
		goto cleanup;
	}
	if (!o->name[0] || !strcmp(o->name, ".") || !strcmp(o->name, "..")) {
		ret = err__set(err, errlen, -EISDIR, "cannot write %s: it is "
			       "a directory (give a file name)", path);
		goto cleanup;
	}
	o->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (o->dirfd < 0) {
		ret = err__set(err, errlen, -errno, "cannot write %s: %s",
			       path, strerror(errno));
		goto cleanup;
	}
	ret = outfile__check(o, err, errlen);
	if (ret)
		goto cleanup;
	fd = outfile__open_tmp(o);
	if (fd < 0) {
		ret = err__set(err, errlen, fd, "cannot write %s: %s", path,
			       strerror(-fd));
		goto cleanup;
	}
	/* exactly 0600, whatever the umask */
	if (fchmod(fd, 0600) || !(o->f = fdopen(fd, "w"))) {
		ret = err__set(err, errlen, -errno, "cannot write %s: %s",
			       path, strerror(errno));
		goto cleanup;
	}
	fd = -1;
	ret = 0;
cleanup:
	free(dir);
	if (ret) {
		if (fd >= 0)
			close(fd);
		if (o->tmp[0])
			unlinkat(o->dirfd, o->tmp, 0);
		outfile__release(o);
	}
	return ret;
}

int outfile__commit(struct outfile *o, char *err, size_t errlen)
{
	int ret = 0;

	if (!o->f)
		return err__set(err, errlen, -EBADF, "cannot write %s: not "
				"open", o->path ? o->path : "output");
	if (fflush(o->f) || fsync(fileno(o->f)))
		ret = -errno;
	if (fclose(o->f) && !ret)
		ret = -errno;
	o->f = NULL;
	if (ret) {
		err__set(err, errlen, ret, "writing %s failed: %s", o->path,
			 strerror(-ret));
		goto cleanup;
	}
	/* what came to the path meanwhile is not replaced either */
	ret = outfile__check(o, err, errlen);
	if (ret)
		goto cleanup;
	if (renameat(o->dirfd, o->tmp, o->dirfd, o->name))
		ret = err__set(err, errlen, -errno, "cannot write %s: %s",
			       o->path, strerror(errno));
	else
		o->tmp[0] = '\0';
cleanup:
	if (o->tmp[0])
		unlinkat(o->dirfd, o->tmp, 0);
	outfile__release(o);
	return ret;
}

void outfile__abort(struct outfile *o)
{
	if (!o->f)
		return;
	fclose(o->f);
	o->f = NULL;
	unlinkat(o->dirfd, o->tmp, 0);
	outfile__release(o);
}
