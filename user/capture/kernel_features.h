/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the sampler needs of the running kernel, so a kernel without one is
 * told in one line that names it (and the Linux version that brought it)
 * instead of by a verifier log: its files before the load, the rest
 * probed when the load or the attach fails.
 * docs/kernels.md lists the same, with what falls back where.
 */
#ifndef ASGST_KERNEL_FEATURES_H
#define ASGST_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kfeat_kind {
	KFEAT_MAP,	/* a map type (id: enum bpf_map_type) */
	KFEAT_HELPER,	/* a helper for perf_event programs (enum bpf_func_id) */
	KFEAT_BTF,	/* a type in the kernel's BTF (what: its name) */
	KFEAT_FILE,	/* a file the kernel provides (what: its path) */
};

/* who needs a feature: every recording, or only some */
#define KFEAT_ALL	0u
#define KFEAT_OFFCPU	(1u << 0)	/* -e offcpu */
#define KFEAT_FOLLOW	(1u << 1)	/* record -- CMD: the fork hook */
#define KFEAT_JVM	(1u << 2)	/* -e alloc, -e lock: the uprobe */
#define KFEAT_CGROUP	(1u << 3)	/* --cgroup, --container */

struct kfeat {
	const char *name;	/* as the user reads it: "bpf_loop" */
	const char *since;	/* the Linux version that brought it */
	enum kfeat_kind kind;
	int id;
	const char *what;	/* KFEAT_BTF, KFEAT_FILE */
	uint32_t needed_by;	/* KFEAT_ALL or KFEAT_* bits */
};

/*
 * The probes, one a kind: 1 present, 0 absent, < 0 could not tell (the
 * feature is then taken as present: the load will say).
 */
struct kfeat_ops {
	int (*map)(int map_type);
	int (*helper)(int func_id);
	int (*btf)(const char *type_name);
	int (*file)(const char *path);
};

/* the table, in the order of the versions; *n its length */
const struct kfeat *kernel_features__table(size_t *n);

/* the first feature a recording of these KFEAT_* needs that ops find
 * absent, NULL when none is */
const struct kfeat *kernel_features__first_missing(const struct kfeat_ops *ops,
						   uint32_t needs);

/* the one-line message for a missing feature */
int kernel_features__describe(const struct kfeat *f, const char *release,
			      char *err, size_t errlen);

/*
 * All of it on this kernel with libbpf's probes: 0, or -ENOTSUP with the
 * one line in err.
 */
int kernel_features__check(uint32_t needs, char *err, size_t errlen);
/* the same for the files alone (access(2)), every other feature taken as
 * present */
int kernel_features__check_files(uint32_t needs, char *err, size_t errlen);

/*
 * Whether a release string ("6.1.0-18-amd64") is at least major.minor;
 * false for one that does not start with two numbers.
 */
bool kernel_features__release_at_least(const char *release, int major,
				       int minor);
/* ... of the running kernel (uname): for what a newer kernel does
 * better, never for what the sampler needs (a backport is not seen) */
bool kernel_features__at_least(int major, int minor);

#endif
