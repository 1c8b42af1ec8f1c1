// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Service names (service.h): a container's name from its runtime's
 * files, a JVM's main class from its argv, an executable's name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/container.h"
#include "profile/service.h"
#include "util/safe_open.h"

/* a JVM's argv is read this far: a long class path comes before the
 * main class */
#define CMDLINE_MAX	(64u << 10)

static char runtime_root[PATH_MAX] = "";

void service__set_root(const char *root)
{
	snprintf(runtime_root, sizeof(runtime_root), "%s",
		 root && strcmp(root, "/") ? root : "");
}

static bool label_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
	       c == '/';
}

void service__sanitize(char *s)
{
	for (; *s; s++)
		if (!label_char(*s))
			*s = '_';
}

/* src (n bytes) into out, cut to SERVICE_NAME_MAX and sanitized */
static int put_name(const char *src, size_t n, char *out, size_t size)
{
	if (!n || !size)
		return -ENOENT;
	if (n > SERVICE_NAME_MAX)
		n = SERVICE_NAME_MAX;
	if (n >= size)
		n = size - 1;
	/* every byte, a NUL in a forged string included */
	for (size_t i = 0; i < n; i++)
		out[i] = label_char(src[i]) ? src[i] : '_';
	out[n] = '\0';
	return 0;
}

/*
 * A runtime's file, root-owned, whole (at most max bytes), NUL-terminated;
 * NULL when absent, not root's, too big or unreadable
 */
static char *read_runtime_file(const char *path, size_t max, size_t *len)
{
	char full[PATH_MAX];
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	int fd;

	if (snprintf(full, sizeof(full), "%s%s", runtime_root, path) >=
	    (int)sizeof(full))
		return NULL;
	if (runtime_root[0]) {
		fd = safe_open(SAFE_OPEN_HOST, full, SAFE_OPEN_NOFOLLOW, max,
			       &st, NULL, 0);
	} else {
		/*
		 * the runtimes' state is the host's: through init's root,
		 * which is "/" on a host and the host's root for a recorder
		 * in a container with the host's pids (a DaemonSet)
		 */
		int root = safe_open__root(1);

		fd = safe_open(root >= 0 ? root : SAFE_OPEN_HOST, full,
			       SAFE_OPEN_NOFOLLOW, max, &st, NULL, 0);
		if (root >= 0)
			close(root);
	}
	if (fd < 0)
		return NULL;
	/* a file a user could write is no runtime's word */
	if (st.st_uid != 0 || (st.st_mode & 0022))
		goto cleanup;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		goto cleanup;
	n = pread(fd, buf, (size_t)st.st_size, 0);
	if (n != st.st_size) {
		free(buf);
		buf = NULL;
		goto cleanup;
	}
	buf[n] = '\0';
	*len = (size_t)n;
cleanup:
	close(fd);
	return buf;
}

/*
 * The string value of "key" at or after p (before end): [ws] ':' [ws]
 * ['[' [ws]] '"' value '"'. A value with an escape is refused (no
 * runtime names a container with one). Its start and length, or NULL.
 */
static const char *json_value(const char *p, const char *end,
			      const char *key, size_t *vlen)
{
	const char *start = p;
	size_t kl = strlen(key);

	while (p && p + kl + 2 < end) {
		const char *k = memmem(p, (size_t)(end - p), key, kl);
		const char *v;

		if (!k)
			return NULL;
		p = k + kl;
		if (k == start || k[-1] != '"' || *p != '"')
			continue;
		v = p + 1;
		while (v < end && (*v == ' ' || *v == '\t' || *v == '\n' ||
				   *v == '\r'))
			v++;
		if (v >= end || *v++ != ':')
			continue;
		while (v < end && (*v == ' ' || *v == '\n' || *v == '[' ||
				   *v == '\t' || *v == '\r'))
			v++;
		if (v >= end || *v++ != '"')
			continue;
		for (const char *q = v; q < end; q++) {
			if (*q == '\\')
				return NULL;
			if (*q == '"') {
				*vlen = (size_t)(q - v);
				return v;
			}
		}
		return NULL;
	}
	return NULL;
}

/* podman (containers/storage): the list of every container and its names */
static int parse_podman(const char *buf, size_t len, const char *id,
			char *out, size_t size)
{
	const char *p, *end = buf + len, *next, *v;
	char key[CONTAINER_ID_LEN + 3];
	size_t vl;

	snprintf(key, sizeof(key), "\"%s\"", id);
	p = memmem(buf, len, key, strlen(key));
	if (!p)
		return -ENOENT;
	p += strlen(key);
	/* its own record only: names before the next container's id */
	next = memmem(p, (size_t)(end - p), "\"id\"", 4);
	v = json_value(p, next ? next : end, "names", &vl);
	return v ? put_name(v, vl, out, size) : -ENOENT;
}

/* docker: the container's own config, its "Name" is "/name" */
static int parse_docker(const char *buf, size_t len, char *out, size_t size)
{
	const char *v;
	size_t vl;

	v = json_value(buf, buf + len, "Name", &vl);
	if (v && vl > 1 && *v == '/')
		return put_name(v + 1, vl - 1, out, size);
	return -ENOENT;
}

/*
 * Kubernetes through containerd's or CRI-O's CRI: the OCI config's
 * annotations name the container and its pod's namespace
 */
static int parse_cri(const char *buf, size_t len, char *out, size_t size)
{
	char name[2 * SERVICE_NAME_MAX + 2];
	const char *ns, *cn, *end = buf + len;
	size_t nl = 0, cl = 0;
	int n;

	cn = json_value(buf, end, "io.kubernetes.cri.container-name", &cl);
	if (!cn)
		cn = json_value(buf, end, "io.kubernetes.container.name", &cl);
	ns = json_value(buf, end, "io.kubernetes.cri.sandbox-namespace", &nl);
	if (!ns)
		ns = json_value(buf, end, "io.kubernetes.pod.namespace", &nl);
	if (!cn || !cl || cl > SERVICE_NAME_MAX || (ns && nl > SERVICE_NAME_MAX))
		return -ENOENT;
	n = ns && nl ? snprintf(name, sizeof(name), "%.*s/%.*s", (int)nl, ns,
				(int)cl, cn) :
		       snprintf(name, sizeof(name), "%.*s", (int)cl, cn);
	return put_name(name, (size_t)n, out, size);
}

int service__parse_runtime(enum service_runtime rt, const char *buf,
			   size_t len, const char *id, char *out, size_t size)
{
	switch (rt) {
	case SERVICE_PODMAN:
		return parse_podman(buf, len, id, out, size);
	case SERVICE_DOCKER:
		return parse_docker(buf, len, out, size);
	default:
		return parse_cri(buf, len, out, size);
	}
}

int service__container_name(const char *id, char *out, size_t size)
{
	/* where each runtime keeps what names a container, most specific
	 * first (%s: the id) */
	static const struct {
		enum service_runtime rt;
		const char *path;
		size_t max;
	} files[] = {
		{ SERVICE_CRI, "/run/containerd/io.containerd.runtime.v2.task/"
			       "k8s.io/%s/config.json", 4u << 20 },
		{ SERVICE_CRI, "/run/containers/storage/overlay-containers/%s/"
			       "userdata/config.json", 4u << 20 },
		{ SERVICE_DOCKER, "/var/lib/docker/containers/%s/"
				  "config.v2.json", 4u << 20 },
		{ SERVICE_PODMAN, "/var/lib/containers/storage/"
				  "overlay-containers/containers.json%.0s",
		  SERVICE_RUNTIME_FILE_MAX },
	};
	char path[256];

	/* a well-formed id only: it becomes part of a path */
	if (strlen(id) != CONTAINER_ID_LEN ||
	    strspn(id, "0123456789abcdef") != CONTAINER_ID_LEN)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t len = 0;
		char *buf;
		int rc;

		snprintf(path, sizeof(path), files[i].path, id);
		buf = read_runtime_file(path, files[i].max, &len);
		if (!buf)
			continue;
		rc = service__parse_runtime(files[i].rt, buf, len, id, out,
					    size);
		free(buf);
		if (!rc)
			return 0;
	}
	return -ENOENT;
}

/* the java launcher's options that take the next argument as their value */
static bool takes_value(const char *a)
{
	static const char *const opts[] = {
		"-cp", "-classpath", "--class-path", "-p", "--module-path",
		"--upgrade-module-path", "--add-modules", "--limit-modules",
		"--add-reads", "--add-exports", "--add-opens",
		"--patch-module", "--enable-native-access", "--source",
	};

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (!strcmp(a, opts[i]))
			return true;
	return false;
}

/* the last path component of s, without the suffix sfx */
static int put_base(const char *s, const char *sfx, char *out, size_t size)
{
	const char *b = strrchr(s, '/');
	size_t n, sl = strlen(sfx);

	b = b ? b + 1 : s;
	n = strlen(b);
	if (n > sl && !strcmp(b + n - sl, sfx))
		n -= sl;
	return put_name(b, n, out, size);
}

int service__jvm_main(const char *argv, size_t len, char *out, size_t size)
{
	const char *end = argv + len, *a = argv;
	bool first = true;

	while (a < end) {
		const char *next = memchr(a, '\0', (size_t)(end - a));
		const char *val;

		if (!next)
			return -ENOENT;	/* cut: no whole argument left */
		val = next + 1 < end ? next + 1 : NULL;
		if (first) {
			first = false;	/* argv[0], the launcher */
		} else if (!strcmp(a, "-jar")) {
			return val && memchr(val, '\0', (size_t)(end - val)) ?
			       put_base(val, ".jar", out, size) : -ENOENT;
		} else if (!strcmp(a, "-m") || !strcmp(a, "--module")) {
			const char *slash;

			if (!val || !memchr(val, '\0', (size_t)(end - val)))
				return -ENOENT;
			slash = strchr(val, '/');
			return put_name(slash ? slash + 1 : val,
					strlen(slash ? slash + 1 : val), out,
					size);
		} else if (!strncmp(a, "--module=", 9)) {
			const char *slash = strchr(a + 9, '/');

			a = slash ? slash + 1 : a + 9;
			return put_name(a, strlen(a), out, size);
		} else if (takes_value(a)) {
			if (!val)
				return -ENOENT;
			next = memchr(val, '\0', (size_t)(end - val));
			if (!next)
				return -ENOENT;
		} else if (*a != '-' && *a != '@' && *a) {
			/* the main class, or a source file launched */
			return put_base(a, ".java", out, size);
		}
		a = next + 1;
	}
	return -ENOENT;
}

int service__jvm_main_pid(pid_t pid, char *out, size_t size)
{
	char path[64];
	char *buf;
	ssize_t n;
	int fd, rc = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(CMDLINE_MAX);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, buf, CMDLINE_MAX);
	if (n > 0)
		rc = service__jvm_main(buf, (size_t)n, out, size);
	free(buf);
	close(fd);
	return rc;
}

int service__exe_name(pid_t pid, char *out, size_t size)
{
	char path[64], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	target[n] = '\0';
	/* an unlinked binary: the name it had */
	if (n > 10 && !strcmp(target + n - 10, " (deleted)"))
		target[n - 10] = '\0';
	return put_base(target, "", out, size);
}
