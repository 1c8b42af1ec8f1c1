/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * record --switch-output: each period's file is named after the -o path
 * and the UTC time the period began, and with --switch-max-files only the
 * newest files of each output are kept.
 */
#ifndef ASGST_SWITCH_NAME_H
#define ASGST_SWITCH_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* "20261203T112233Z": 16 characters and the NUL */
#define SWITCH_STAMP_LEN	17

/*
 * A period's file name: every "%t" of path replaced by the UTC time t, or,
 * without "%t", ".TIME" inserted before the file name's extension (before
 * both of ".pb.gz" and the like; a leading dot is no extension) or
 * appended when there is none. 0, or -ENAMETOOLONG when it does not fit.
 */
int switch_name__format(char *buf, size_t len, const char *path, time_t t);

/* the files one output wrote, oldest first (zero-initialise) */
struct switch_files {
	char **names;
	size_t n;
	size_t max;		/* keep this many; 0: all (nothing is kept) */
	/* collapsed: a file's alloc and lock siblings (output__sibling)
	 * are deleted with it */
	bool siblings;
};

/*
 * A period's file was written: remember it, and delete the oldest of the
 * files remembered beyond max (only files this recording wrote are ever
 * deleted). 0, or -errno of the unlink or -ENOMEM.
 */
int switch_files__add(struct switch_files *f, const char *name);
void switch_files__free(struct switch_files *f);

#endif /* ASGST_SWITCH_NAME_H */
