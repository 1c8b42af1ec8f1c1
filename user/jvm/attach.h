/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * HotSpot dynamic attach, across container boundaries.
 *
 * The protocol: the JVM listens on a UNIX socket /tmp/.java_pid<nspid>
 * (its own /tmp, nspid = the pid it sees). When the socket is missing, a
 * trigger file .attach_pid<nspid> in its cwd (or /tmp) owned by its euid
 * plus a SIGQUIT makes it start the listener. A request is "1", the
 * command and three arguments, each NUL-terminated; the reply is a return
 * code line and the command's output, up to EOF.
 *
 * The connect and the exchange happen in a forked child that alone enters
 * the target's mount namespace and takes the target's euid/egid (HotSpot
 * accepts only peers with its own euid/egid, or root, and in a user
 * namespace host root is not root); the child pipes the reply back.
 * Every wait is bounded.
 */
#ifndef ASGST_ATTACH_H
#define ASGST_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* errors beyond -errno, so callers can tell the cases apart */
#define ATTACH_E_NOT_JVM	1000	/* no libjvm.so in its maps */
#define ATTACH_E_DISABLED	1001	/* -XX:+DisableAttachMechanism */
#define ATTACH_E_TIMEOUT	1002	/* listener never came up */
#define ATTACH_E_EXITED		1003	/* JVM exited during the attach */
#define ATTACH_E_REFUSED	1004	/* the JVM answered with an error */
#define ATTACH_E_PROTO		1005	/* unparsable reply */
#define ATTACH_E_AGENT		1006	/* Agent_OnAttach failed */

/* bounded wait for the listener socket, milliseconds */
#define ATTACH_WAIT_MS		10000

/*
 * Run an attach command (e.g. "properties", "load", "threaddump") with up
 * to three arguments (args may be NULL; NULL entries are sent as empty).
 * out gets the reply after the return-code line, NUL-terminated and
 * truncated to outlen. Returns 0 when the JVM's return code is 0, or
 * -errno / -ATTACH_E_*, with err set to one line naming the problem.
 * *jvm_rc (may be NULL) gets the JVM's return code when there was a reply.
 */
int attach__command_rc(pid_t pid, const char *cmd, const char *args[3],
		       int *jvm_rc, char *out, size_t outlen, char *err,
		       size_t errlen);
int attach__command(pid_t pid, const char *cmd, const char *args[3],
		    char *out, size_t outlen, char *err, size_t errlen);

/*
 * Load the JVMTI agent at agent_path (a path on the host) into pid with
 * options (may be NULL). When agent_path is not the same file inside the
 * target's root, it is copied in (/tmp/asgst-agent-<uid>.so, or /dev/shm
 * when /tmp is noexec) readable by the target. out gets the JVM's reply
 * text; 0 when Agent_OnAttach returned 0, else -errno / -ATTACH_E_*.
 */
int attach__load_agent(pid_t pid, const char *agent_path, const char *options,
		       char *out, size_t outlen, char *err, size_t errlen);

/*
 * The path the target will see for agent_path: agent_path itself when it is
 * the same file inside the target's root, else a copy made in there.
 * 0 or -errno (err set).
 */
int attach__stage_agent(pid_t pid, const char *agent_path, char *target_path,
			size_t tplen, char *err, size_t errlen);

/*
 * Parse a "load" reply (the text after the first return-code line).
 * JDK 9..20 print the agent's return code as a bare number line; JDK 21+
 * print "return code: N". 0 with *agent_rc set, or -ATTACH_E_PROTO when
 * neither form is there (msg then holds the first line).
 */
int attach__parse_load_reply(const char *text, size_t len, int *agent_rc,
			     char *msg, size_t msglen);
/*
 * Split a whole reply into the return code (first line) and the rest.
 * 0, or -ATTACH_E_PROTO when the first line is not a number.
 */
int attach__parse_reply(const char *buf, size_t len, int *rc,
			const char **rest, size_t *restlen);

/*
 * The agent library for this asgst-bpf: $ASGST_AGENT, else beside
 * /proc/self/exe (build/) or in ../lib/asgst-bpf/ (installed). 0, or -1 with
 * err set to one line.
 */
int attach__find_agent(char *out, size_t len, char *err, size_t errlen);

#endif /* ASGST_ATTACH_H */
