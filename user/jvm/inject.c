// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Agent injection from the recorder, in a child process (see inject.h). */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jvm/attach.h"
#include "jvm/inject.h"
#include "jvm/jvm_discover.h"

pid_t inject__start(pid_t pid, const char *agent_path, bool quiet)
{
	pid_t c;

	if (jvm_discover__agent_loaded(pid) > 0)
		return 0;	/* loaded, but no map: it turned itself off */
	if (jvm_discover__attach_disabled(pid)) {
		if (!quiet)
			fprintf(stderr, "asgst-bpf: JVM %d runs with "
				"-XX:+DisableAttachMechanism: its Java frames "
				"will not be decoded (start it with -agentpath)\n",
				(int)pid);
		return 0;
	}
	fflush(stderr);
	c = fork();
	if (c == 0) {
		char out[512], err[512];
		int rc = attach__load_agent(pid, agent_path, NULL, out,
					    sizeof(out), err, sizeof(err));

		if (rc && !quiet)
			fprintf(stderr, "asgst-bpf: cannot attach to JVM %d: %s "
				"(its Java frames will not be decoded)\n",
				(int)pid, err);
		_exit(rc ? 1 : 0);
	}
	return c;
}

int inject__reap(pid_t child, bool block)
{
	int status;

	if (waitpid(child, &status, block ? 0 : WNOHANG) != child)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
