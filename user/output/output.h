/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where a profile goes: the output file is opened when the recording starts
 * (an unwritable path fails before anything is recorded) and written in the
 * chosen format when it ends. A file is written beside its path and renamed
 * into place by output__write() (util/outfile.h); one closed unwritten is
 * removed.
 */
#ifndef ASGST_OUTPUT_H
#define ASGST_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "output/writers.h"
#include "util/outfile.h"

struct profile;

struct output {
	FILE *f;		/* NULL: not open, or written */
	const char *path;	/* NULL: stdout */
	enum output_format format;
	struct outfile file;	/* path's file, until written */
};

/* the formats this build can write */
bool output__supported(enum output_format f);
int output__open(struct output *o, const char *path, enum output_format f,
		 char *err, size_t errlen);
/* write the profile and put the file in place (once); 0 or -errno with
 * one line in err */
int output__write(struct output *o, const struct profile *p, char *err,
		  size_t errlen);
/*
 * A collapsed output holds one event family (output/evfamily.h): the
 * first the profile has (time, alloc, lock) at its path, each other one
 * in a sibling named by output__sibling(path, "alloc" or "lock"):
 * out.collapsed -> out.alloc.collapsed (also .folded, .txt), out ->
 * out.alloc. A heap string (NULL without memory).
 */
char *output__sibling(const char *path, const char *family);
/* an output not written: its file removed */
void output__close(struct output *o);

#endif /* ASGST_OUTPUT_H */
