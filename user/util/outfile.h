/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An output file (a profile, a raw recording) written by root into a
 * directory other users may write to, such as /tmp. It is never written
 * through something already at its path:
 *  - outfile__create() refuses a path that holds anything but a regular
 *    file owned by the recorder (geteuid()): a symbolic link, FIFO,
 *    device, socket or directory, or another user's file, each with one
 *    line naming the path and what to do;
 *  - it writes a new file instead, in the same directory: a random name
 *    created with O_EXCL | O_NOFOLLOW, mode 0600 (a recording holds stack
 *    memory of every process sampled), never reachable by anyone else's
 *    open file;
 *  - outfile__commit() renames it over the path once it is complete (the
 *    ownership is checked again first): a reader sees the old file or the
 *    whole new one, never half of one, and a crash leaves at most the
 *    temporary file, never a truncated output;
 *  - outfile__abort() removes it.
 * The directory is held open from create to commit: a directory renamed
 * meanwhile does not move the output elsewhere.
 */
#ifndef ASGST_OUTFILE_H
#define ASGST_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

/* ".asgst-" + 16 hex digits + ".tmp" */
#define OUTFILE_TMP_MAX		32

struct outfile {
	FILE *f;		/* write here; NULL when not open */
	int dirfd;		/* the path's directory (O_PATH) */
	char *path;		/* as given, for messages */
	char *name;		/* its last component */
	char tmp[OUTFILE_TMP_MAX];	/* the file written, in dirfd */
};

/*
 * Create o's temporary file for path. 0, or -errno with one line in err:
 * "cannot write PATH: REASON (WHAT TO DO)". -EEXIST: something the
 * recorder may not replace is at path.
 */
int outfile__create(struct outfile *o, const char *path, char *err,
		    size_t errlen);

/*
 * Flush, sync and close the file, then rename it to the path. 0, or
 * -errno with one line in err (the temporary file removed). o is closed
 * either way.
 */
int outfile__commit(struct outfile *o, char *err, size_t errlen);

/* close and remove the temporary file (nothing when o is not open) */
void outfile__abort(struct outfile *o);

#endif /* ASGST_OUTFILE_H */
