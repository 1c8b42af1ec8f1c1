/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Mount tables, for refusing files on file systems that may never answer.
 *
 * A FUSE server is a process: one that stops answering stalls every
 * lookup, open, stat or read of its files, uninterruptibly for the
 * caller. A network file system whose server is gone stalls the same
 * way. The recorder reads the files of every process it profiles on one
 * thread, so such a file must be refused before any system call reaches
 * its file system. The kernel writes /proc/PID/mountinfo from its own
 * tables without asking any file system: it tells each mount's id, mount
 * point (relative to PID's root) and type.
 *
 * The tables are cached per mount namespace (the inode of
 * /proc/PID/ns/mnt) with their mountinfo file kept open: poll() on it
 * says when the namespace's mounts changed, and only then is it read
 * again. Mount ids are unique on the host while the mount exists, so a
 * fresh table classifies any mount id it lists; one it does not list is
 * refused. The recorder's own namespace is read from its own view (a
 * chrooted process's view lacks the mount its root is on). The caches
 * are not locked: safe_open() is called from the recorder's one thread.
 */
#ifndef ASGST_MOUNTS_H
#define ASGST_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mount_ent {
	uint64_t id;
	uint64_t parent;
	unsigned int major, minor;
	char *point;		/* unescaped, absolute */
	char fstype[48];	/* "ext4", "fuse.sshfs", truncated */
	bool risky;
};

struct mount_table {
	struct mount_ent *v;
	size_t n;
	size_t nrisky;
};

/*
 * File system types whose files may stall whoever reads them: FUSE (and
 * the FUSE-based virtiofs) and network file systems. The one list.
 */
bool mounts__fstype_risky(const char *fstype);
/*
 * File system types taken as answering after all (record --trust-fs: an
 * NFS /home, a rootless container on fuse-overlayfs), a comma list of
 * exact types as mountinfo names them; before any table is read. 0, or
 * -EINVAL when too long.
 */
int mounts__trust(const char *csv);

/* "FUSE" or "network" for a risky fstype's message */
const char *mounts__fstype_kind(const char *fstype);

/*
 * Parse mountinfo text into t (emptied first). Malformed lines are
 * skipped. 0 or -ENOMEM.
 */
int mount_table__parse(struct mount_table *t, const char *text, size_t len);
void mount_table__free(struct mount_table *t);

const struct mount_ent *mount_table__find_id(const struct mount_table *t,
					     uint64_t id);

/*
 * The risky mount whose mount point is path or one of its parent
 * directories (path taken lexically: "." and ".." folded, no links
 * followed), or NULL. A lookup in any directory of a risky mount may
 * stall, so a mount below a risky one counts as risky too.
 */
const struct mount_ent *mount_table__path_risky(const struct mount_table *t,
						const char *path);

/* the mount id of an open fd, from /proc/self/fdinfo: 0 or -errno */
int mounts__fd_mnt_id(int fd, uint64_t *id);

/*
 * Is the mount of fd (a file reached, not yet read) safe to use? pid
 * names the mount namespace whose table classifies it (0: the
 * recorder's own). 0, or -EREMOTE with the reason in why when the mount
 * is risky or not in the table (also after reading it again).
 */
int mounts__check_fd(pid_t pid, int fd, char *why, size_t whylen);
/* the same for a mount id already read */
int mounts__check_id(pid_t pid, uint64_t id, char *why, size_t whylen);

/*
 * The lexical test of mount_table__path_risky() for a path in pid's root
 * (0: the recorder's own): 0, or -EREMOTE with the reason in why. Made
 * only where the table's mount points are paths from that root (pid in
 * our namespace, not chrooted); elsewhere 0. Cheap; a path that passes
 * is still walked with mounts__check_fd() at each mount.
 */
int mounts__check_path(pid_t pid, const char *path, char *why, size_t whylen);

/* drop every cached table (tests) */
void mounts__reset(void);

#endif /* ASGST_MOUNTS_H */
