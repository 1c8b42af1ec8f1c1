/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inject the agent into a running JVM that has none, from the recorder: in
 * a child process, so the recording goes on meanwhile (an attach can take a
 * second or more).
 */
#ifndef ASGST_INJECT_H
#define ASGST_INJECT_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Start loading agent_path into JVM pid. The child's pid; 0 when there is
 * nothing to do (an agent is loaded already, or the JVM refuses attaches:
 * said unless quiet); -1 when fork failed.
 */
pid_t inject__start(pid_t pid, const char *agent_path, bool quiet);
/* has the child ended (waiting for it when block): 1 the agent is in, 0 the
 * attach failed (said by the child), -1 still running */
int inject__reap(pid_t child, bool block);

#endif /* ASGST_INJECT_H */
