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
