/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef ASGST_AGENT_LOG_H
#define ASGST_AGENT_LOG_H

enum { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

extern int agent_log_level;
void agent_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int agent_log_open(const char *path);

#define log_error(...) agent_log(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) agent_log(LOG_WARN, __VA_ARGS__)
#define log_info(...) agent_log(LOG_INFO, __VA_ARGS__)
#define log_debug(...) do { if (agent_log_level >= LOG_DEBUG) \
	agent_log(LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
