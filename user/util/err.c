// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>

#include "util/err.h"

int err__set(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return ret;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

void err__vsay(const char *who, const char *fmt, va_list ap)
{
	fprintf(stderr, "asgst-bpf %s: ", who);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void err__say(const char *who, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err__vsay(who, fmt, ap);
	va_end(ap);
}
