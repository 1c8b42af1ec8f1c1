// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Container ids and pod uids from cgroup paths, and record --container.
 *
 * The runtimes name the cgroup of a container after its 64-hex id:
 *   podman     /libpod_parent/libpod-ID, /machine.slice/libpod-ID.scope,
 *              its monitor in libpod-conmon-ID.scope
 *   docker     /docker/ID, /system.slice/docker-ID.scope
 *   containerd /default/ID, .../cri-containerd-ID.scope
 *   cri-o      .../crio-ID.scope, its monitor in crio-conmon-ID.scope
 *   kubelet    /kubepods/QOS/podUID/ID,
 *              /kubepods.slice/kubepods-QOS.slice/kubepods-QOS-podU_I_D.slice/
 *              RUNTIME-ID.scope
 * so a component is a container's when it is the id, or ends in "-" and the
 * id, with an optional ".scope". The innermost such component counts (a
 * container in a container is the inner one).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/container.h"

static bool is_lhex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool all_lhex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_lhex(s[i]))
			return false;
	return true;
}

static bool has_suffix(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n > k && !memcmp(s + n - k, suf, k);
}

/* "ID", "PREFIX-ID", either with ".scope": id gets ID */
static bool component_id(const char *c, size_t n, char *id)
{
	if (has_suffix(c, n, ".scope"))
		n -= 6;
	if (n < CONTAINER_ID_LEN)
		return false;
	if (n > CONTAINER_ID_LEN && c[n - CONTAINER_ID_LEN - 1] != '-')
		return false;
	if (!all_lhex(c + n - CONTAINER_ID_LEN, CONTAINER_ID_LEN))
		return false;
	memcpy(id, c + n - CONTAINER_ID_LEN, CONTAINER_ID_LEN);
	id[CONTAINER_ID_LEN] = '\0';
	return true;
}

/* a uid as the kubelet gives it: 8-4-4-4-12 hex, or 32 hex (static pods) */
static bool valid_uid(const char *u, size_t n)
{
	if (n == 32)
		return all_lhex(u, n);
	if (n != 36)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? u[i] != '-' : !is_lhex(u[i]))
			return false;
	}
	return true;
}

/*
 * "kubepods[-QOS]-podU_I_D.slice" (systemd: '-' written '_'; kind's
 * kubelet prefixes "kubelet-"), or "podUID" below a kubepods cgroup
 * (cgroupfs)
 */
static bool component_pod(const char *c, size_t n, bool under_kubepods,
			  char *uid)
{
	char tmp[POD_UID_MAX];
	const char *u = NULL;
	size_t un = 0;

	if (memmem(c, n, "kubepods", 8) && has_suffix(c, n, ".slice")) {
		size_t end = n - 6;

		/* the last "-pod" of the name */
		for (size_t i = end; i >= 12; i--) {
			if (!memcmp(c + i - 4, "-pod", 4)) {
				u = c + i;
				un = end - i;
				break;
			}
		}
	} else if (under_kubepods && n > 3 && !memcmp(c, "pod", 3)) {
		u = c + 3;
		un = n - 3;
	}
	if (!u || un > sizeof(tmp))
		return false;
	for (size_t i = 0; i < un; i++)
		tmp[i] = u[i] == '_' ? '-' : u[i];
	if (!valid_uid(tmp, un))
		return false;
	memcpy(uid, tmp, un);
	uid[un] = '\0';
	return true;
}

/*
 * The next component of a cgroup path from *i: its start and length (0 at
 * the end, or at a NUL: nothing after one is trusted); *i moves past it.
 */
static size_t next_component(const char *path, size_t len, size_t *i,
			     size_t *start)
{
	while (*i < len && path[*i] == '/')
		(*i)++;
	*start = *i;
	while (*i < len && path[*i] != '/' && path[*i] != '\0')
		(*i)++;
	return *i - *start;
}

bool container__parse_path(const char *path, size_t len,
			   struct container_ids *out)
{
	bool kubepods = false;
	size_t i = 0, start, n;

	memset(out, 0, sizeof(*out));
	while ((n = next_component(path, len, &i, &start))) {
		component_id(path + start, n, out->id);
		component_pod(path + start, n, kubepods, out->pod_uid);
		if (memmem(path + start, n, "kubepods", 8))
			kubepods = true;
	}
	return out->id[0] || out->pod_uid[0];
}

bool container__scope_path(const char *path, size_t len, char *buf,
			   size_t size)
{
	char id[CONTAINER_ID_LEN + 1];
	size_t i = 0, end = 0, start, n;

	while ((n = next_component(path, len, &i, &start))) {
		if (component_id(path + start, n, id))
			end = i;
	}
	if (!end || end >= size)
		return false;
	memcpy(buf, path, end);
	buf[end] = '\0';
	return true;
}

/* the next line of text: [*line, *line + *n); false at the end */
static bool next_line(const char **p, const char *end, const char **line,
		      size_t *n)
{
	const char *nl;

	if (*p >= end)
		return false;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	*line = *p;
	*n = (size_t)((nl ? nl : end) - *p);
	*p = nl ? nl + 1 : end;
	return true;
}

/* "HIER:CONTROLLERS:PATH": the path, and whether it is the v2 line */
static bool line_path(const char *line, size_t n, const char **path,
		      size_t *plen, bool *v2)
{
	const char *c1 = memchr(line, ':', n), *c2;

	if (!c1)
		return false;
	c2 = memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - line));
	if (!c2)
		return false;
	*v2 = c1 - line == 1 && line[0] == '0' && c2 == c1 + 1;
	*path = c2 + 1;
	*plen = n - (size_t)(c2 + 1 - line);
	return true;
}

bool container__parse_cgroup(const char *text, size_t len,
			     struct container_ids *out)
{
	const char *end = text + len, *p, *line, *path;
	size_t n, plen;
	bool v2;

	memset(out, 0, sizeof(*out));
	/* the unified hierarchy first: it is where runtimes put containers */
	for (p = text; next_line(&p, end, &line, &n);)
		if (line_path(line, n, &path, &plen, &v2) && v2 &&
		    container__parse_path(path, plen, out))
			return true;
	for (p = text; next_line(&p, end, &line, &n);)
		if (line_path(line, n, &path, &plen, &v2) && !v2 &&
		    container__parse_path(path, plen, out))
			return true;
	memset(out, 0, sizeof(*out));
	return false;
}

bool container__cgroup2_path(const char *text, size_t len, char *buf,
			     size_t size)
{
	const char *end = text + len, *p, *line, *path;
	size_t n, plen;
	bool v2;

	for (p = text; next_line(&p, end, &line, &n);) {
		if (!line_path(line, n, &path, &plen, &v2) || !v2)
			continue;
		if (!plen || plen >= size || memchr(path, '\0', plen))
			return false;
		memcpy(buf, path, plen);
		buf[plen] = '\0';
		return true;
	}
	return false;
}

/*
 * /proc/PID/cgroup is the kernel's text about the process, not a file the
 * process controls: a plain open, but bounded, and a last line cut by the
 * bound is dropped (a cut path could name an outer container).
 */
ssize_t container__read_cgroup(pid_t pid, char *buf, size_t size)
{
	char path[64];
	size_t len = 0;
	ssize_t ret = 0;
	int fd;

	if (size < 2)
		return -EINVAL;
	if (size > CONTAINER_CGROUP_MAX + 1)
		size = CONTAINER_CGROUP_MAX + 1;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	while (len < size - 1) {
		ssize_t r = read(fd, buf + len, size - 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			goto cleanup;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	if (len == size - 1) {
		while (len && buf[len - 1] != '\n')
			len--;
	}
	buf[len] = '\0';
	ret = (ssize_t)len;
cleanup:
	close(fd);
	return ret;
}

int container__read_pid(pid_t pid, struct container_ids *out)
{
	char buf[CONTAINER_CGROUP_MAX + 1];
	ssize_t n;

	memset(out, 0, sizeof(*out));
	n = container__read_cgroup(pid, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	container__parse_cgroup(buf, (size_t)n, out);
	return 0;
}

int container__parse_arg(const char *arg, char *prefix, size_t size,
			 char *err, size_t errlen)
{
	size_t n = strlen(arg);

	if (size <= CONTAINER_ID_LEN)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)arg[i])) {
			n = 0;
			break;
		}
	}
	if (n < CONTAINER_PREFIX_MIN || n > CONTAINER_ID_LEN) {
		snprintf(err, errlen, "--container: '%s' is not a container "
			 "id (%d to %d hex digits, as podman ps --no-trunc or "
			 "docker ps --no-trunc show it)", arg,
			 CONTAINER_PREFIX_MIN, CONTAINER_ID_LEN);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		prefix[i] = (char)tolower((unsigned char)arg[i]);
	prefix[n] = '\0';
	return 0;
}

bool container__id_matches(const char *id, const char *prefix)
{
	return id && *prefix && !strncmp(id, prefix, strlen(prefix));
}

/* a becomes the nearest cgroup that holds both a and b ("/" at worst) */
static void common_ancestor(char *a, const char *b)
{
	size_t i = 0;

	while (a[i] && a[i] == b[i])
		i++;
	if ((a[i] == '\0' || a[i] == '/') && (b[i] == '\0' || b[i] == '/')) {
		a[i] = '\0';
	} else {
		while (i && a[i] != '/')
			i--;
		a[i] = '\0';
	}
	if (!a[0])
		strcpy(a, "/");
}

/*
 * The cgroup v2 mount (whose root is the hierarchy's root: the paths of
 * /proc/PID/cgroup are relative to it) into mnt; false when none.
 */
static bool cgroup2_mount(char *mnt, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024], root[256], point[512], fstype[64];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(sep, " - %63s", fstype) != 1 ||
		    strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %255s %511s", root, point) != 2)
			continue;
		/* an escaped mount point (\040), or a namespaced root */
		if (strcmp(root, "/") || strchr(point, '\\') ||
		    strlen(point) >= size)
			continue;
		strcpy(mnt, point);
		found = true;
	}
	fclose(f);
	return found;
}

/* the kernel's id of the cgroup v2 at path (as /proc/PID/cgroup says it) */
static int cgroup2_id(const char *path, uint64_t *id)
{
	char mnt[512], full[PATH_MAX];
	struct {
		struct file_handle fh;
		uint64_t cgid;
	} h;
	int mount_id;

	if (!cgroup2_mount(mnt, sizeof(mnt)))
		return -ENOENT;
	if ((size_t)snprintf(full, sizeof(full), "%s%s", mnt, path) >=
	    sizeof(full))
		return -ENAMETOOLONG;
	h.fh.handle_bytes = sizeof(h.cgid);
	if (name_to_handle_at(AT_FDCWD, full, &h.fh, &mount_id, 0) < 0)
		return -errno;
	if (h.fh.handle_bytes != sizeof(h.cgid))
		return -EINVAL;
	*id = h.cgid;
	return 0;
}

static int target_add_pid(struct container_target *t, pid_t pid)
{
	pid_t *np = realloc(t->pids, (t->npids + 1) * sizeof(*np));

	if (!np)
		return -ENOMEM;
	t->pids = np;
	t->pids[t->npids++] = pid;
	return 0;
}

/* the owner of the cgroup v2 directory at path; 0 or -errno */
static int cgroup2_owner(const char *path, uid_t *owner)
{
	char mnt[512], full[PATH_MAX];
	struct stat st;

	if (!cgroup2_mount(mnt, sizeof(mnt)))
		return -ENOENT;
	if ((size_t)snprintf(full, sizeof(full), "%s%s", mnt, path) >=
	    sizeof(full))
		return -ENAMETOOLONG;
	if (lstat(full, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*owner = st.st_uid;
	return 0;
}

/* the owner of the cgroup naming the container in cgroup text buf */
static int scope_owner(const char *buf, size_t n, uid_t *owner)
{
	char path[CONTAINER_CGROUP_MAX], scope[CONTAINER_CGROUP_MAX];

	if (!container__cgroup2_path(buf, n, path, sizeof(path)) ||
	    !container__scope_path(path, strlen(path), scope, sizeof(scope)))
		return -ENOENT;
	return cgroup2_owner(scope, owner);
}

int container__scope_owner(pid_t pid, uid_t *owner)
{
	char *buf = malloc(CONTAINER_CGROUP_MAX + 1);
	ssize_t n;
	int rc;

	if (!buf)
		return -ENOMEM;
	n = container__read_cgroup(pid, buf, CONTAINER_CGROUP_MAX + 1);
	rc = n < 0 ? (int)n : scope_owner(buf, (size_t)n, owner);
	free(buf);
	return rc;
}

/* a process whose cgroup names the container, before the owners are
 * weighed */
struct candidate {
	pid_t pid;
	uid_t owner;		/* (uid_t)-1: unknown (cgroup v1) */
	char *path;		/* cgroup v2 path; NULL: none */
};

struct candidates {
	struct candidate *v;
	size_t n, cap;
};

static void candidates_free(struct candidates *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* one process of the scan: does its cgroup name the container */
static int resolve_one(const char *prefix, pid_t pid, char *buf,
		       struct container_target *t, char *other,
		       struct candidates *c)
{
	struct container_ids ci;
	char path[sizeof(t->cgroup)];
	struct candidate *cd;
	ssize_t n;

	n = container__read_cgroup(pid, buf, CONTAINER_CGROUP_MAX + 1);
	if (n < 0 || !container__parse_cgroup(buf, (size_t)n, &ci) ||
	    !container__id_matches(ci.id, prefix))
		return 0;
	if (t->id[0] && strcmp(t->id, ci.id)) {
		memcpy(other, ci.id, sizeof(ci.id));
		return 0;
	}
	memcpy(t->id, ci.id, sizeof(ci.id));
	if (c->n == c->cap) {
		size_t nc = c->cap ? 2 * c->cap : 16;
		struct candidate *nv = realloc(c->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		c->v = nv;
		c->cap = nc;
	}
	cd = &c->v[c->n];
	cd->pid = pid;
	cd->path = NULL;
	if (scope_owner(buf, (size_t)n, &cd->owner))
		cd->owner = (uid_t)-1;
	if (container__cgroup2_path(buf, (size_t)n, path, sizeof(path)) &&
	    !(cd->path = strdup(path)))
		return -ENOMEM;
	c->n++;
	return 0;
}

/*
 * Whose cgroups are the container's: root's if any are (a rootful
 * runtime's; a user can only name cgroups in a subtree delegated to it),
 * else the one user's of a rootless runtime. -EPERM: several users' and
 * no root's.
 */
static int weigh_owners(const struct candidates *c, uid_t *owner)
{
	bool have = false;

	for (size_t i = 0; i < c->n; i++) {
		uid_t o = c->v[i].owner;

		if (o == (uid_t)-1)
			continue;
		if (o == 0) {
			*owner = 0;
			return 0;
		}
		if (have && *owner != o)
			return -EPERM;
		*owner = o;
		have = true;
	}
	if (!have)
		*owner = 0;
	return 0;
}

/* the candidates of the owner become the target's pids and cgroup */
static int take_owners(const struct candidates *c, struct container_target *t,
		       bool *v2_everywhere)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct candidate *cd = &c->v[i];

		if (cd->owner != (uid_t)-1 && cd->owner != t->owner) {
			t->ignored++;
			t->ignored_owner = cd->owner;
			continue;
		}
		if (!cd->path)
			*v2_everywhere = false;
		else if (!t->npids)
			strcpy(t->cgroup, cd->path);
		else
			common_ancestor(t->cgroup, cd->path);
		if (target_add_pid(t, cd->pid))
			return -ENOMEM;
	}
	return 0;
}

int container__resolve(const char *prefix, struct container_target *t,
		       char *err, size_t errlen)
{
	char *buf = malloc(CONTAINER_CGROUP_MAX + 1);
	char other[CONTAINER_ID_LEN + 1] = "";
	struct candidates c = { 0 };
	bool v2_everywhere = true;
	struct dirent *de;
	DIR *d = NULL;
	int rc = 0;

	memset(t, 0, sizeof(*t));
	if (!buf)
		return -ENOMEM;
	d = opendir("/proc");
	if (!d) {
		rc = -errno;
		snprintf(err, errlen, "--container: cannot list /proc: %s",
			 strerror(errno));
		goto cleanup;
	}
	while (!rc && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid > INT_MAX)
			continue;
		rc = resolve_one(prefix, (pid_t)pid, buf, t, other, &c);
	}
	if (!rc && !other[0] && t->id[0] && weigh_owners(&c, &t->owner)) {
		rc = -EPERM;
		snprintf(err, errlen, "--container %s: cgroups of more than "
			 "one user name this container, none of root's: "
			 "give its cgroup with --cgroup PATH", prefix);
		goto cleanup;
	}
	if (!rc && !other[0] && t->id[0])
		rc = take_owners(&c, t, &v2_everywhere);
	if (rc == -ENOMEM) {
		snprintf(err, errlen, "--container: out of memory");
	} else if (rc) {
		snprintf(err, errlen, "--container: %s", strerror(-rc));
	} else if (other[0]) {
		rc = -EEXIST;
		snprintf(err, errlen, "--container %s: more than one container "
			 "has an id that begins so (%.12s..., %.12s...): give "
			 "more digits", prefix, t->id, other);
	} else if (!t->id[0]) {
		rc = -ENOENT;
		snprintf(err, errlen, "--container %s: no running process is "
			 "in a container with this id (see podman ps "
			 "--no-trunc, docker ps --no-trunc or crictl ps)",
			 prefix);
	} else if (v2_everywhere && strcmp(t->cgroup, "/") &&
		   !cgroup2_id(t->cgroup, &t->cgroup_id)) {
		t->have_cgroup = true;
	}
cleanup:
	if (d)
		closedir(d);
	free(buf);
	candidates_free(&c);
	if (rc)
		container_target__free(t);
	return rc;
}

void container_target__free(struct container_target *t)
{
	free(t->pids);
	t->pids = NULL;
	t->npids = 0;
}
