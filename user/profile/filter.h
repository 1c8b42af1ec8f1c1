/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Stack filters shared by record and report: which decoded stacks enter the
 * profile, and how they are shaped (Java frames only, reversed).
 */
#ifndef ASGST_FILTER_H
#define ASGST_FILTER_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct trace;

/* --vthreads: how a sample of a carrier running a virtual thread shows */
enum filter_vthreads {
	FILTER_VT_MERGED = 0,	/* virtual thread's frames, then carrier's */
	FILTER_VT_VIRTUAL,	/* down to Continuation.enterSpecial only */
	FILTER_VT_CARRIER,	/* from Continuation.enterSpecial down only */
};

struct filter {
	pid_t *pids;		/* --pid: keep these (empty: all) */
	size_t npids;
	pid_t *tids;		/* --tid */
	size_t ntids;
	bool have_thread, have_include, have_exclude;
	regex_t thread;		/* --thread: on the thread name */
	regex_t include;	/* --include: some frame name matches */
	regex_t exclude;	/* --exclude: no frame name matches */
	unsigned kind_mask;	/* --kind: 1 << enum trace_kind; 0 = all */
	unsigned state_mask;	/* --state: 1 << enum trace_state; 0 = all */
	uint8_t vthreads;	/* --vthreads: enum filter_vthreads */
	bool java_only;		/* --java-only: drop non-Java frames */
	bool reverse;		/* --reverse: frames root first */
	/* record --container: the id (or its prefix) of the container whose
	 * processes are kept; "" = all */
	char container[65];
	/* and the owner of its cgroups (record: a process in another user's
	 * cgroup that names the id is not the container's) */
	bool container_owner_known;
	uid_t container_owner;
};

/*
 * Apply one filter option (name without dashes: "pid", "tid", "thread",
 * "include", "exclude", "kind", "java-only", "reverse", "container"). 0, or
 * -EINVAL with a one-line reason in err.
 */
int filter__option(struct filter *f, const char *name, const char *arg,
		   char *err, size_t errlen);
bool filter__active(const struct filter *f);
/*
 * A comma list of names[] (index i = bit i) into *mask, for --kind,
 * --state and record -e. 0, or -EINVAL with "OPT: unknown WHAT 'x' (a, b)".
 */
int filter__name_mask(const char *list, const char *const *names, size_t n,
		      unsigned *mask, const char *opt, const char *what,
		      char *err, size_t errlen);
/* does a process in container_id (NULL: none) pass --container */
bool filter__container_ok(const struct filter *f, const char *container_id);
/* true when t is kept; t's frames may be changed in place */
bool filter__apply(const struct filter *f, struct trace *t);
void filter__free(struct filter *f);

#endif /* ASGST_FILTER_H */
