// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A recording's outputs: opened before anything is recorded (a bad path
 * fails first), written at the end (or each --switch-output period), and
 * when one cannot be written the decoded stacks are kept in a raw file
 * that report reads, so nothing recorded is lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/raw.h"
#include "profile/profile.h"
#include "recorder/recorder_int.h"

/*
 * The output could not be written: the decoded stacks go to a raw file in
 * $TMPDIR (or /var/tmp) that report reads.
 */
static void keep_recording(const struct recorder *r, const char *why)
{
	const char *dir = getenv("TMPDIR");
	struct raw_writer *w = NULL;
	char path[4096], err[512] = "";
	int rc, fd;

	if (!dir || !*dir)
		dir = "/var/tmp";
	/*
	 * a name nobody can guess and create first: mkstemps makes it ours,
	 * 0600, and the writer then replaces it with the whole recording
	 */
	snprintf(path, sizeof(path), "%s/asgst-bpf-%d-XXXXXX.asgst", dir,
		 (int)getpid());
	fd = mkstemps(path, 6);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, sizeof(err), "%s", strerror(errno));
	} else {
		close(fd);
		rc = raw_writer__open(&w, path, err, sizeof(err));
	}
	if (!rc) {
		rc = raw_writer__stacks(w, r->prof);
		if (rc) {
			raw_writer__abort(w);
			snprintf(err, sizeof(err), "%s", strerror(-rc));
		} else {
			rc = raw_writer__close(w, r->prof, err, sizeof(err));
		}
	}
	if (rc && fd >= 0)
		unlink(path);
	if (rc)
		recorder_say(r, "%s; keeping the recording in %s failed too: "
			     "%s", why, path, err);
	else
		recorder_say(r, "%s; the recording is kept in %s (asgst-bpf "
			     "report -i %s -o FILE)", why, path, path);
}

/* open the outputs now: a bad path fails before anything is recorded */
int recorder_outputs_open(struct recorder *r)
{
	char err[512];
	int rc;

	for (size_t i = 0; i < r->o.nout; i++) {
		if (r->o.formats[i] == OUT_RAW) {
			if (r->raw)
				continue;	/* one raw file is enough */
			rc = raw_writer__open(&r->raw, r->o.outputs[i], err,
					      sizeof(err));
			r->raw_idx = i;
		} else {
			rc = output__open(&r->out[i], r->o.outputs[i],
					  r->o.formats[i], err, sizeof(err));
		}
		if (rc) {
			recorder_say(r, "%s", err);
			return 1;
		}
	}
	return 0;
}

/* --switch-max-files: output i's period file was written (rc 0) */
static void rotate(struct recorder *r, size_t i, int rc)
{
	if (!rc)
		rc = switch_files__add(&r->kept[i], r->names[i]);
	else
		rc = 0;
	if (rc)
		recorder_say(r, "cannot delete an old file of %s: %s",
			     r->o.outputs[i], strerror(-rc));
}

/* the raw output: what it needs besides the samples, then in place */
static int write_raw(struct recorder *r, size_t i, char *err, size_t errlen)
{
	int rc;

	/* no writer: a period's file whose open failed */
	rc = r->raw ? pipeline__finish_sink(r->pl) : -EBADF;
	if (rc)
		snprintf(err, errlen, "writing %s failed: %s",
			 r->o.switch_ns ? r->names[i] : r->o.outputs[i],
			 strerror(-rc));
	/* what was written is put in place: the maps that failed are only
	 * some processes' */
	if (r->raw && raw_writer__close(r->raw, r->prof, err, errlen))
		rc = rc ?: -EIO;
	r->raw = NULL;
	return rc;
}

/*
 * Write every output; one that fails keeps the recording (keep_recording;
 * a replay has its file already), and a period's (--switch-output) files
 * are all written and closed anyway.
 */
int recorder_outputs_write(struct recorder *r)
{
	char err[512];
	int rc, ret = 0;

	pipeline__annotate(r->pl, r->prof);
	for (size_t i = 0; i < r->o.nout; i++) {
		if (r->o.formats[i] == OUT_RAW) {
			if (i != r->raw_idx)
				continue;
			rc = write_raw(r, i, err, sizeof(err));
		} else if (!r->out[i].f) {
			/* its open failed, and said so */
			rc = -EBADF;
			snprintf(err, sizeof(err), "%s was not written",
				 r->names[i]);
		} else {
			rc = output__write(&r->out[i], r->prof, err,
					   sizeof(err));
		}
		if (r->o.switch_ns) {
			/* complete on disk before the next period's */
			output__close(&r->out[i]);
			rotate(r, i, rc);
		}
		if (rc && r->o.replay)
			recorder_say(r, "%s", err);
		else if (rc && !ret)
			keep_recording(r, err);
		if (rc)
			ret = 1;
		if (rc && !r->o.switch_ns)
			break;
	}
	return ret;
}

void recorder_outputs_close(struct recorder *r)
{
	for (size_t i = 0; i < RECORDER_MAX_OUTPUTS; i++) {
		output__close(&r->out[i]);
		switch_files__free(&r->kept[i]);
	}
	/* an output not written by now (an error before the end): removed */
	raw_writer__abort(r->raw);
	r->raw = NULL;
}
