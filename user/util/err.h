/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Error messages for the caller. A function that can fail for a reason the
 * user must read takes (char *err, size_t errlen) and, when it fails, leaves
 * one line there. err__set() formats that line and hands back the return
 * value, so a failure is one statement:
 *
 *	return err__set(err, errlen, -ENOENT, "no such process: %d", pid);
 */
#ifndef ASGST_ERR_H
#define ASGST_ERR_H

#include <stdarg.h>
#include <stddef.h>

/*
 * printf fmt into err (truncated to errlen; nothing when err is NULL or
 * errlen 0). Returns ret unchanged: -errno, a module's own -E_* code, -1...
 */
__attribute__((format(printf, 4, 5)))
int err__set(char *err, size_t errlen, int ret, const char *fmt, ...);

/*
 * A command's message to the user: "asgst-bpf WHO: " and fmt on stderr,
 * one line (WHO: the command, "record", "report"...).
 */
__attribute__((format(printf, 2, 3)))
void err__say(const char *who, const char *fmt, ...);
__attribute__((format(printf, 2, 0)))
void err__vsay(const char *who, const char *fmt, va_list ap);

#endif /* ASGST_ERR_H */
