/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where a profile goes: the output file is opened when the recording starts
 * (an unwritable path fails before anything is recorded) and written in the
 * chosen format when it ends.
 */
#ifndef ASGST_OUTPUT_H
#define ASGST_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "output/writers.h"

struct profile;

struct output {
	FILE *f;
	const char *path;	/* NULL: stdout */
	enum output_format format;
};

/* the formats this build can write */
bool output__supported(enum output_format f);
int output__open(struct output *o, const char *path, enum output_format f,
		 char *err, size_t errlen);
int output__write(struct output *o, const struct profile *p, char *err,
		  size_t errlen);
void output__close(struct output *o);

#endif /* ASGST_OUTPUT_H */
