/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Finding HotSpot JVMs on the host, including those in containers: a JVM
 * is a process with libjvm.so mapped. Everything read from the target
 * (maps, status, its JDK's release file) is untrusted and bounds-checked;
 * files inside the target's root are opened without leaving that root.
 */
#ifndef ASGST_JVM_DISCOVER_H
#define ASGST_JVM_DISCOVER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct jvm_info {
	pid_t pid;			/* host pid */
	pid_t nspid;			/* innermost namespace pid (NStgid) */
	uid_t uid;			/* effective uid, host view */
	gid_t gid;			/* effective gid, host view */
	bool other_root;		/* /proc/PID/root is not our / */
	bool other_mntns;		/* mount namespace differs from ours */
	bool agent_loaded;		/* an asgst agent is in its maps */
	bool attach_disabled;		/* -XX:+DisableAttachMechanism */
	char libjvm[PATH_MAX];		/* path as the target sees it */
	char java_home[PATH_MAX];	/* "" when not derivable */
	char version[32];		/* JAVA_VERSION from release, or "" */
	char comm[64];			/* short command summary */
};

/*
 * Probe one pid. 0 when it is a JVM; -ESRCH when there is no such process,
 * -ENOEXEC when it is not a JVM, -EACCES when its maps are unreadable;
 * err gets a one-line reason on error.
 */
int jvm_discover__probe(pid_t pid, struct jvm_info *out, char *err,
			size_t errlen);

/*
 * Every JVM on the host, sorted by pid. *out is malloc'ed (free() it);
 * 0 or -errno.
 */
int jvm_discover__list(struct jvm_info **out, size_t *n);

/* ---- /proc helpers, also used by attach ---------------------------------- */

/* innermost pid of pid (last NStgid field); 0 or -errno */
int jvm_discover__nspid(pid_t pid, pid_t *nspid);
/* effective uid/gid of pid; 0 or -errno */
int jvm_discover__creds(pid_t pid, uid_t *uid, gid_t *gid);
/* whether /proc/PID/maps has libjvm.so (1), not (0), or -errno */
int jvm_discover__has_libjvm(pid_t pid, char *libjvm, size_t len);
/*
 * whether the libjvm.so pid maps is HotSpot's (1): it exports the
 * gHotSpotVMStructs table and JVM_* functions. 0: no libjvm.so or another
 * library by that name (never to be signalled); -errno: unreadable
 */
int jvm_discover__is_hotspot(pid_t pid);
/* the same test on an ELF file open at fd (pure, for tests) */
int jvm_discover__elf_is_hotspot(int fd);
/* whether an asgst agent library is mapped (1), not (0), or -errno */
int jvm_discover__agent_loaded(pid_t pid);
/* a library file name (no folder) the agent goes by: libasgst-agent.so as
 * built, asgst-agent-<uid>.so when copied in */
bool jvm_discover__is_agent_lib(const char *base);
/*
 * The address range ("start-end", as /proc/PID/map_files names it) of the
 * first mapping of the agent library in pid. 1 found, 0 none, -errno.
 */
int jvm_discover__agent_map(pid_t pid, char *range, size_t len);

/*
 * whether pid's command line or its JAVA_TOOL_OPTIONS / JDK_JAVA_OPTIONS /
 * _JAVA_OPTIONS turn on -XX:+DisableAttachMechanism (an -XX:Flags= file
 * is not read: the bounded wait catches that case)
 */
bool jvm_discover__attach_disabled(pid_t pid);

/*
 * open path (as the target sees it) inside /proc/PID/root without leaving
 * that root (openat2 RESOLVE_IN_ROOT); an fd or -errno
 */
int jvm_discover__open_in_root(pid_t pid, const char *path, int flags);

/* ---- parsers (pure, for tests) -------------------------------------------- */

/* the last field of a "NStgid:" line in a status file's text; -1 if none */
long jvm_discover__parse_nstgid(const char *status, size_t len);
/*
 * JAVA_VERSION="..." from a JDK release file's text into out; 0 on
 * success, -ENOENT when absent or malformed.
 */
int jvm_discover__parse_release(const char *text, size_t len, char *out,
				size_t outlen);
/*
 * Whether a NUL-separated command line (as in /proc/PID/cmdline) turns on
 * DisableAttachMechanism: the last -XX:[+-]DisableAttachMechanism wins.
 */
bool jvm_discover__cmdline_disables_attach(const char *cmdline, size_t len);
/* java home from a libjvm.so path (<home>/lib/<vm>/libjvm.so); 0 or -EINVAL */
int jvm_discover__java_home(const char *libjvm, char *out, size_t outlen);

#endif /* ASGST_JVM_DISCOVER_H */
