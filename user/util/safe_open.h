/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Opening a file that a process we do not trust controls (its binaries,
 * debug files, code map, JDK release file). Every such open goes through
 * safe_open():
 *  - the path resolves inside the process's root (openat2 RESOLVE_IN_ROOT):
 *    symlinks and ".." stay inside it, /proc magic links are refused;
 *  - the file is first reached with O_PATH, which opens nothing: a FIFO is
 *    never waited on and a device's open is never called;
 *  - only a regular file no bigger than the caller's limit is then opened
 *    for reading (O_NONBLOCK, O_NOCTTY, O_CLOEXEC), the same inode;
 *  - nothing is asked of a file system that may never answer (FUSE,
 *    network file systems; util/mounts.h): the path is first tested
 *    against the process's mount table, and resolved with RESOLVE_NO_XDEV;
 *    a path that crosses mounts is walked a component at a time, links
 *    read and followed by the walk, each mount crossed looked up in the
 *    table (by its id, from /proc/self/fdinfo) before anything is looked
 *    up in it; a file on such a mount is refused (-EREMOTE);
 *  - a refusal leaves one short reason ("is a FIFO, not a regular file
 *    (refused)") for the caller's own message, which names the path.
 * The file may still change size while it is read: read it with pread()
 * and treat a short read as an error, never mmap() it.
 */
#ifndef ASGST_SAFE_OPEN_H
#define ASGST_SAFE_OPEN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* root_fd for a path of the recorder's own (host) file system */
#define SAFE_OPEN_HOST		(-1)

/* the last component may not be a symbolic link (-ELOOP) */
#define SAFE_OPEN_NOFOLLOW	(1u << 0)
/*
 * path is a /proc magic link the kernel keeps for us, such as
 * /proc/PID/map_files/START-END: follow it (only with SAFE_OPEN_HOST)
 */
#define SAFE_OPEN_PROC_LINK	(1u << 1)

/* a reason fits in this (the caller adds the path) */
#define SAFE_OPEN_WHY_MAX	160

/*
 * The root_fd for pid's files: /proc/PID/root, O_PATH. safe_open() then
 * knows whose mount table to test its paths against (any other root_fd
 * is tested against the recorder's own). Close it with close(). -errno
 * when the process is gone.
 */
int safe_open__root(pid_t pid);
/* the same for a directory path; "/proc/PID/root" counts as pid's root */
int safe_open__root_dir(const char *dir);

/*
 * Open path read-only inside root_fd (a directory fd taken as "/", e.g.
 * of /proc/PID/root) or, with SAFE_OPEN_HOST, as the recorder sees it.
 * max_size: larger files are refused (-EFBIG). st (may be NULL) gets the
 * file's fstat. Returns the fd, or -errno with a one-line reason in why
 * (may be NULL): -EINVAL not a regular file, -ELOOP a link where none is
 * allowed, -EXDEV the path leaves the root, -EFBIG too big, -EREMOTE on
 * a file system that may never answer (or a mount not in the table), else the
 * open's own error (-ENOENT, -EACCES, -ENOSYS before Linux 5.6...).
 */
int safe_open(int root_fd, const char *path, unsigned int flags,
	      uint64_t max_size, struct stat *st, char *why, size_t whylen);

/* "N GiB", "N MiB" or "N bytes" for a limit in messages */
void safe_open__size_str(uint64_t bytes, char *buf, size_t len);

#endif /* ASGST_SAFE_OPEN_H */
