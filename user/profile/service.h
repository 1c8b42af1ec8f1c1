/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a process is called in a fleet's profile store (record --push, the
 * JSON "service" and "process" fields): its container's name where the
 * runtime publishes it (podman, docker, containerd's CRI), else the
 * container's short id; else a JVM's main class or jar; else its
 * executable's name.
 *
 * Every name here comes from a process or a container we do not trust
 * (its argv, a container name its owner chose): each is read bounded and
 * reduced to the characters Pyroscope allows in a name ([A-Za-z0-9._/-],
 * others as '_'), at
 * most SERVICE_NAME_MAX bytes. The runtimes' own files are read only from
 * root-owned paths of the host, through pid 1's root (so a recorder in a
 * container sharing the host's pids reads the host's).
 */
#ifndef ASGST_SERVICE_H
#define ASGST_SERVICE_H

#include <stddef.h>
#include <sys/types.h>

#define SERVICE_NAME_MAX	128
/* a runtime's container list is read up to this size */
#define SERVICE_RUNTIME_FILE_MAX	(16u << 20)

/*
 * The runtimes' state is looked for under root ("/" normally; a test's
 * folder). Not thread-safe: set it before any lookup.
 */
void service__set_root(const char *root);
/*
 * The name the container runtime gave container id (64 hex): podman's
 * containers.json, docker's config.v2.json, a CRI container's
 * "namespace/name" annotations. 0, or -ENOENT when no runtime names it.
 */
int service__container_name(const char *id, char *out, size_t size);
/*
 * A runtime's file (buf, len bytes, NUL-terminated after them) read for
 * container id's name: podman's containers.json, docker's config.v2.json,
 * a CRI container's OCI config.json. 0, or -ENOENT.
 */
enum service_runtime { SERVICE_PODMAN, SERVICE_DOCKER, SERVICE_CRI };
int service__parse_runtime(enum service_runtime rt, const char *buf,
			   size_t len, const char *id, char *out, size_t size);
/*
 * A JVM's main class (dotted, as given), or its jar's name without
 * ".jar", or its module's main class, from the java launcher's argv
 * (len bytes, NUL-separated as /proc/PID/cmdline holds it). 0, or -ENOENT
 * when argv names none (a JVM started through JNI by another program).
 */
int service__jvm_main(const char *argv, size_t len, char *out, size_t size);
/* the same from /proc/PID/cmdline (read up to 64 KiB) */
int service__jvm_main_pid(pid_t pid, char *out, size_t size);
/* the base name of /proc/PID/exe's target; 0 or -errno */
int service__exe_name(pid_t pid, char *out, size_t size);
/* s reduced to label-safe characters, in place; "" stays "" */
void service__sanitize(char *s);

#endif /* ASGST_SERVICE_H */
