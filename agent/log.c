// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include "log.h"

int agent_log_level = LOG_WARN;
static FILE *log_fp;

int agent_log_open(const char *path)
{
	FILE *f = fopen(path, "ae");

	if (!f)
		return -1;
	setvbuf(f, NULL, _IOLBF, 0);
	log_fp = f;
	return 0;
}

void agent_log(int level, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	FILE *f = log_fp ? log_fp : stderr;
	char line[512];
	va_list ap;

	if (level > agent_log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one fprintf per line so concurrent lines do not interleave */
	fprintf(f, "asgst-agent[%d] %s: %s\n", (int)getpid(), names[level], line);
}
