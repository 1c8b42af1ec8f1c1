/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The container a process runs in, from its cgroup path: the 64-hex id
 * that podman, docker, containerd and cri-o name their cgroups with, and a
 * Kubernetes pod's uid where the path has one (docs/formats.md lists the
 * shapes). Also the resolution of record --container ID to the container's
 * processes and cgroup.
 *
 * A cgroup path is text that whoever may create cgroups chose (a container
 * with a delegated subtree names its own sub-cgroups): the parser is
 * bounded, accepts only exact shapes and yields either a well-formed id or
 * nothing.
 */
#ifndef ASGST_CONTAINER_H
#define ASGST_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONTAINER_ID_LEN	64	/* lowercase hex digits */
#define CONTAINER_PREFIX_MIN	12	/* --container: at least this many */
#define POD_UID_MAX		36	/* 8-4-4-4-12, or 32 hex (static pods) */
/* /proc/PID/cgroup read up to this many bytes (longer: the rest ignored) */
#define CONTAINER_CGROUP_MAX	8192

struct container_ids {
	char id[CONTAINER_ID_LEN + 1];	/* "" when the path names none */
	char pod_uid[POD_UID_MAX + 1];	/* "" when none */
};

/*
 * One cgroup path ("/machine.slice/libpod-<id>.scope/container"), len
 * bytes. The innermost component naming a container gives the id, the
 * innermost pod component the pod uid. true when either was found.
 */
bool container__parse_path(const char *path, size_t len,
			   struct container_ids *out);
/*
 * The text of /proc/PID/cgroup: the cgroup v2 line ("0::PATH") first, else
 * the first v1 line ("N:controllers:PATH") whose path names a container.
 * true when an id or a pod uid was found.
 */
bool container__parse_cgroup(const char *text, size_t len,
			     struct container_ids *out);
/*
 * The cgroup v2 path of the text of /proc/PID/cgroup ("0::" line) into
 * buf; false when there is none (a v1-only host) or it does not fit.
 */
bool container__cgroup2_path(const char *text, size_t len, char *buf,
			     size_t size);
/*
 * Read /proc/PID/cgroup (at most CONTAINER_CGROUP_MAX bytes) into buf
 * (size > 1, NUL-terminated); its length, or -errno. When the file fills
 * the buffer, its last line, which may have been cut, is dropped.
 */
ssize_t container__read_cgroup(pid_t pid, char *buf, size_t size);
/* read and parse pid's cgroup; 0 (out may be empty) or -errno */
int container__read_pid(pid_t pid, struct container_ids *out);

/*
 * --container ARG: 12 to 64 hex digits (upper case folded) into prefix
 * (size > 64). 0, or -EINVAL with a one-line reason in err.
 */
int container__parse_arg(const char *arg, char *prefix, size_t size,
			 char *err, size_t errlen);
/* does id (NULL: none) begin with prefix */
bool container__id_matches(const char *id, const char *prefix);

/* what record --container ID records */
struct container_target {
	char id[CONTAINER_ID_LEN + 1];	/* the full id */
	pid_t *pids;			/* its processes now */
	size_t npids;
	/* the cgroup v2 that holds them all (their nearest common one), when
	 * it is not the root: the kernel records only its tasks */
	bool have_cgroup;
	uint64_t cgroup_id;
	char cgroup[512];		/* its path, for messages */
	/*
	 * The owner of the container's cgroups (the runtime's: root for a
	 * rootful one, the user of a rootless one). A cgroup that names the
	 * id but is another user's (a delegated subtree) is not the
	 * container's: its processes are left out (ignored counts them).
	 */
	uid_t owner;
	size_t ignored;
	uid_t ignored_owner;		/* one of theirs, for the message */
};

/*
 * Find the container whose id begins with prefix among the running
 * processes (every /proc/PID/cgroup). 0; -ENOENT none, -EEXIST more than
 * one container matches, each with a one-line reason in err.
 */
int container__resolve(const char *prefix, struct container_target *t,
		       char *err, size_t errlen);
void container_target__free(struct container_target *t);
/*
 * The owner of the cgroup that names pid's container (the innermost
 * component of its cgroup v2 path with a container id, as a directory of
 * the cgroup v2 mount). 0 or -errno (-ENOENT: no such cgroup).
 */
int container__scope_owner(pid_t pid, uid_t *owner);
/*
 * Of a cgroup path, the prefix up to and with its innermost component that
 * names a container, into buf; false when none does or it does not fit.
 */
bool container__scope_path(const char *path, size_t len, char *buf,
			   size_t size);

#endif /* ASGST_CONTAINER_H */
