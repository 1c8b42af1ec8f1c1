// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine's messages: every file of it says things the same way, so
 * they all call down to this one.
 */
#include <stdarg.h>
#include <stdio.h>

#include "recorder/recorder_int.h"

void recorder_say(const struct recorder *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "asgst-bpf %s: ", r->who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
