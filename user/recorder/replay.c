// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A raw recording (.asgst) decoded again, after the processes are gone:
 * the recorded code maps and /proc/PID/maps texts stand in for the
 * processes; native modules are read from their host paths. Three passes
 * over the file: the code maps (rebuilt in private files), the metadata
 * and stored stacks; then the processes, once their maps are complete;
 * then the samples, in the order the live decode took them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm/codemap.h"
#include "output/raw.h"
#include "profile/profile.h"
#include "recorder/recorder_int.h"
#include "util/array.h"

#define REPLAY_MAX_CODEMAPS	4096	/* JVMs in one recording */
#define REPLAY_BATCH		1024	/* samples a decode */

/* one recorded code map, rebuilt in a private file from its chunks */
struct cm_file {
	pid_t pid;
	int fd;
};

struct replay {
	struct cm_file *cms;
	size_t ncms, cms_cap;
	char dir[64];		/* private directory of the rebuilt maps */
	bool have_dir;
	unsigned samples;
};

static int cm_file_for(struct replay *rp, pid_t pid)
{
	char path[128];
	int fd;

	for (size_t i = 0; i < rp->ncms; i++)
		if (rp->cms[i].pid == pid)
			return rp->cms[i].fd;
	/* one open file each: a crafted file must not exhaust them */
	if (rp->ncms >= REPLAY_MAX_CODEMAPS)
		return -EMFILE;
	if (!rp->have_dir) {
		snprintf(rp->dir, sizeof(rp->dir), "/tmp/asgst-report.XXXXXX");
		if (!mkdtemp(rp->dir))
			return -errno;
		rp->have_dir = true;
	}
	if (ARRAY_GROW(&rp->cms, &rp->cms_cap, rp->ncms + 1))
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/%d.map", rp->dir, (int)pid);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	rp->cms[rp->ncms].pid = pid;
	rp->cms[rp->ncms].fd = fd;
	rp->ncms++;
	return fd;
}

void recorder_replay_free(struct recorder *r)
{
	struct replay *rp = r->rp;
	char path[128];

	if (!rp)
		return;
	for (size_t i = 0; i < rp->ncms; i++) {
		close(rp->cms[i].fd);
		snprintf(path, sizeof(path), "%s/%d.map", rp->dir,
			 (int)rp->cms[i].pid);
		unlink(path);
	}
	if (rp->have_dir)
		rmdir(rp->dir);
	free(rp->cms);
	free(rp);
	r->rp = NULL;
}

typedef int (*chunk_fn)(struct recorder *r, uint32_t type, const void *pay,
			uint64_t len, char *err, size_t errlen);

/* one pass over the file: fn for every chunk; 0, or the first error */
static int raw_pass(struct recorder *r, chunk_fn fn, char *err, size_t errlen)
{
	struct raw_reader *rd = NULL;
	const void *pay;
	uint64_t len;
	uint32_t type;
	int rc;

	rc = raw_reader__open(&rd, r->o.replay, err, errlen);
	if (rc)
		return rc;
	while ((rc = raw_reader__next(rd, &type, &pay, &len, err,
				      errlen)) == 1 &&
	       !(rc = fn(r, type, pay, len, err, errlen)))
		;
	raw_reader__close(rd);
	return rc < 0 ? rc : 0;
}

static int bad_file(const struct recorder *r, const char *why, char *err,
		    size_t errlen)
{
	snprintf(err, errlen, "%s: %s (not a recording this asgst-bpf wrote, "
		 "or damaged)", r->o.replay, why);
	return -EINVAL;
}

/* pass 1: code maps (rebuilt in private files), metadata, stored stacks */
static int on_context(struct recorder *r, uint32_t type, const void *pay,
		      uint64_t len, char *err, size_t errlen)
{
	char why[256];

	if (type == RAW_CODEMAP) {
		struct raw_codemap_view c;
		int fd;

		if (raw__parse_codemap(pay, len, &c, why, sizeof(why)))
			return bad_file(r, why, err, errlen);
		fd = cm_file_for(r->rp, c.pid);
		if (fd < 0 || pwrite(fd, c.bytes, c.len, (off_t)c.offset) !=
				      (ssize_t)c.len) {
			snprintf(err, errlen, "cannot rebuild the code map of "
				 "pid %d: %s", (int)c.pid,
				 strerror(fd < 0 ? -fd : errno));
			return -EIO;
		}
	} else if (type == RAW_META) {
		if (raw__load_meta(r->prof, pay, len, why, sizeof(why)))
			return bad_file(r, why, err, errlen);
	} else if (type == RAW_STACKS) {
		if (raw__load_stacks(r->prof, pay, len)) {
			snprintf(err, errlen, "%s: corrupt stacks chunk",
				 r->o.replay);
			return -EINVAL;
		}
	}
	return 0;
}

/* the rebuilt code map of pid, NULL when none or unusable (said once) */
static struct codemap *open_rebuilt_map(struct recorder *r, uint32_t pid)
{
	struct replay *rp = r->rp;
	struct codemap *cm = NULL;
	char path[128], cerr[512];

	for (size_t i = 0; i < rp->ncms; i++) {
		if (rp->cms[i].pid != (pid_t)pid)
			continue;
		snprintf(path, sizeof(path), "%s/%u.map", rp->dir, pid);
		if (codemap__open(&cm, "/", path, cerr, sizeof(cerr)) ||
		    codemap__update(cm)) {
			if (!r->o.quiet)
				recorder_say(r, "pid %u: %s", pid,
					     cm ? codemap__error(cm) : cerr);
			codemap__free(cm);
			cm = NULL;
		}
		break;
	}
	return cm;
}

/* pass 2: processes, once their code maps are complete */
static int on_proc(struct recorder *r, uint32_t type, const void *pay,
		   uint64_t len, char *err, size_t errlen)
{
	struct pipeline_offline_names nm;
	struct raw_proc_view p;
	char why[256];
	int rc;

	if (type != RAW_PROC)
		return 0;
	if (raw__parse_proc(pay, len, &p, why, sizeof(why)))
		return bad_file(r, why, err, errlen);
	nm.container_id = p.container_id;
	nm.pod_uid = p.pod_uid;
	nm.service = p.service;
	nm.process = p.process;
	rc = pipeline__add_offline(r->pl, p.pid, p.comm, p.is_jvm,
				   p.jvm_from_seq, p.maps, p.maps_len,
				   open_rebuilt_map(r, (uint32_t)p.pid), &nm);
	if (rc)
		snprintf(err, errlen, "pid %d: %s", (int)p.pid, strerror(-rc));
	return rc;
}

/* pass 3: the samples, in the order the live decode took them */
static int on_sample(struct recorder *r, uint32_t type, const void *pay,
		     uint64_t len, char *err, size_t errlen)
{
	int rc;

	if (type == RAW_PYCODE) {
		struct raw_pycode_view *pv = malloc(sizeof(*pv));
		char why[256];

		if (!pv)
			return -ENOMEM;
		rc = raw__parse_pycode(pay, len, pv, why, sizeof(why));
		if (rc) {
			free(pv);
			return bad_file(r, why, err, errlen);
		}
		rc = pipeline__add_pycode(r->pl, pv->pid, &pv->v);
		free(pv);
		if (rc == -EINVAL) {
			snprintf(err, errlen, "%s: Python code of a version "
				 "this asgst-bpf has no layout of", r->o.replay);
			return rc;
		}
		return rc;
	}
	if (type != RAW_SAMPLE)
		return 0;
	rc = pipeline__push(r->pl, pay, len);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	/* decode in batches: bounded memory, few code-map checks */
	if (++r->rp->samples % REPLAY_BATCH == 0)
		pipeline__process(r->pl, 0, true);
	return 0;
}

/* the passes over the raw file, then whatever is left decoded; 0 or -errno
 * (said) */
int recorder_replay_run(struct recorder *r)
{
	char err[512];
	int rc;

	if (!r->rp && !(r->rp = calloc(1, sizeof(*r->rp)))) {
		recorder_say(r, "out of memory");
		return -ENOMEM;
	}
	rc = raw_pass(r, on_context, err, sizeof(err));
	if (!rc)
		rc = raw_pass(r, on_proc, err, sizeof(err));
	if (!rc)
		rc = raw_pass(r, on_sample, err, sizeof(err));
	pipeline__finish(r->pl, profile__meta(r->prof)->end_ns);
	if (rc)
		recorder_say(r, "%s", err);
	return rc;
}
