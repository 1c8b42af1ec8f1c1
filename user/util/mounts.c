// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Mount tables and file systems that may never answer (see mounts.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/mounts.h"

/* namespaces whose tables are kept (each holds an fd) */
#define NS_CACHE	32
/* a mountinfo larger than this is not believed */
#define MOUNTINFO_MAX	(64u << 20)

static const char *const risky_network[] = {
	"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "afs",
	"ncpfs", "coda", "gfs2", "ocfs2", "glusterfs", "lustre", "orangefs",
	"davfs",
};

static bool is_fuse(const char *fstype)
{
	return !strcmp(fstype, "fuse") || !strcmp(fstype, "fuseblk") ||
	       !strncmp(fstype, "fuse.", 5) || !strcmp(fstype, "virtiofs");
}

/* file system types the user trusts (record --trust-fs): "a,b,c" */
static char trusted[256];

int mounts__trust(const char *csv)
{
	if (!csv || strlen(csv) >= sizeof(trusted))
		return -EINVAL;
	snprintf(trusted, sizeof(trusted), "%s", csv);
	return 0;
}

static bool is_trusted(const char *fstype)
{
	size_t n = strlen(fstype);

	for (const char *p = trusted; *p;) {
		const char *c = strchr(p, ',');
		size_t k = c ? (size_t)(c - p) : strlen(p);

		if (k == n && !memcmp(p, fstype, n))
			return true;
		p += k + (c ? 1 : 0);
	}
	return false;
}

bool mounts__fstype_risky(const char *fstype)
{
	if (!fstype || is_trusted(fstype))
		return false;
	if (is_fuse(fstype))
		return true;
	for (size_t i = 0; i < sizeof(risky_network) / sizeof(*risky_network); i++)
		if (!strcmp(fstype, risky_network[i]))
			return true;
	return false;
}

const char *mounts__fstype_kind(const char *fstype)
{
	return fstype && is_fuse(fstype) ? "FUSE" : "network";
}

void mount_table__free(struct mount_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].point);
	free(t->v);
	t->v = NULL;
	t->n = t->nrisky = 0;
}

/* the next space-separated field of [*p, end), or NULL */
static const char *field(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *e;

	while (s < end && *s == ' ')
		s++;
	if (s >= end)
		return NULL;
	for (e = s; e < end && *e != ' '; e++)
		;
	*len = (size_t)(e - s);
	*p = e;
	return s;
}

static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (!len || len > 19)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

/* the kernel escapes ' ', '\t', '\n' and '\\' as \ooo */
static char *unescape(const char *s, size_t len)
{
	char *out = malloc(len + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' &&
		    s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			*o++ = (char)(((s[i + 1] - '0') << 6) |
				      ((s[i + 2] - '0') << 3) | (s[i + 3] - '0'));
			i += 3;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

/* fold "." and ".." and repeated slashes: "/a/./b/../c" -> "/a/c" */
static size_t fold(const char *in, char *out, size_t cap)
{
	size_t o = 0;

	if (cap < 2)
		return 0;
	out[o++] = '/';
	while (*in) {
		const char *c;
		size_t n;

		while (*in == '/')
			in++;
		c = in;
		while (*in && *in != '/')
			in++;
		n = (size_t)(in - c);
		if (!n || (n == 1 && c[0] == '.'))
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			while (o > 1 && out[o - 1] != '/')
				o--;
			if (o > 1)
				o--;
			continue;
		}
		if (o + (o > 1) + n + 1 > cap)
			return 0;
		if (o > 1)
			out[o++] = '/';
		memcpy(out + o, c, n);
		o += n;
	}
	out[o] = '\0';
	return o;
}

/* one line; false when malformed */
static bool parse_line(const char *s, const char *end, struct mount_ent *m)
{
	const char *f[5], *p = s, *sep;
	size_t l[5], n;
	uint64_t major, minor;
	const char *colon;
	char *raw;

	memset(m, 0, sizeof(*m));
	/* id parent major:minor root point */
	for (int i = 0; i < 5; i++) {
		f[i] = field(&p, end, &l[i]);
		if (!f[i])
			return false;
	}
	if (!parse_u64(f[0], l[0], &m->id) || !parse_u64(f[1], l[1], &m->parent))
		return false;
	colon = memchr(f[2], ':', l[2]);
	if (!colon || !parse_u64(f[2], (size_t)(colon - f[2]), &major) ||
	    !parse_u64(colon + 1, l[2] - (size_t)(colon - f[2]) - 1, &minor) ||
	    major > UINT32_MAX || minor > UINT32_MAX)
		return false;
	m->major = (unsigned int)major;
	m->minor = (unsigned int)minor;
	if (f[4][0] != '/')
		return false;
	/* options, optional fields, then "-" and the type */
	for (;;) {
		sep = field(&p, end, &n);
		if (!sep)
			return false;
		if (n == 1 && *sep == '-')
			break;
	}
	sep = field(&p, end, &n);
	if (!sep)
		return false;
	if (n >= sizeof(m->fstype))
		n = sizeof(m->fstype) - 1;
	memcpy(m->fstype, sep, n);
	m->fstype[n] = '\0';
	/* the type itself may be escaped too; none we look for is */
	/* folded like the paths tested against it ("//a/./b" is "/a/b") */
	raw = unescape(f[4], l[4]);
	if (!raw)
		return false;
	m->point = malloc(strlen(raw) + 2);
	if (!m->point || !fold(raw, m->point, strlen(raw) + 2)) {
		free(raw);
		free(m->point);
		m->point = NULL;
		return false;
	}
	free(raw);
	m->risky = mounts__fstype_risky(m->fstype);
	return true;
}

int mount_table__parse(struct mount_table *t, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t cap = 0;

	mount_table__free(t);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		struct mount_ent m;

		if (memchr(p, '\0', (size_t)(le - p)) == NULL &&
		    parse_line(p, le, &m)) {
			if (t->n == cap) {
				size_t nc = cap ? 2 * cap : 64;
				struct mount_ent *v = realloc(t->v, nc * sizeof(*v));

				if (!v) {
					free(m.point);
					mount_table__free(t);
					return -ENOMEM;
				}
				t->v = v;
				cap = nc;
			}
			t->v[t->n++] = m;
			if (m.risky)
				t->nrisky++;
		}
		p = le + 1;
	}
	return 0;
}

const struct mount_ent *mount_table__find_id(const struct mount_table *t,
					     uint64_t id)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (t->v[i].id == id)
			return &t->v[i];
	return NULL;
}

/* is the absolute, folded path `dir` (length dl) dir or below it? */
static bool at_or_below(const char *path, size_t pl, const char *dir)
{
	size_t dl = strlen(dir);

	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	if (dl == 1 && dir[0] == '/')
		return true;
	return pl >= dl && !memcmp(path, dir, dl) &&
	       (pl == dl || path[dl] == '/');
}

const struct mount_ent *mount_table__path_risky(const struct mount_table *t,
						const char *path)
{
	char buf[PATH_MAX];
	size_t pl;

	if (!t || !t->nrisky || !path)
		return NULL;
	pl = fold(path, buf, sizeof(buf));
	if (!pl)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].risky && at_or_below(buf, pl, t->v[i].point))
			return &t->v[i];
	return NULL;
}

int mounts__fd_mnt_id(int fd, uint64_t *id)
{
	char path[48], buf[512], *s;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	s = strstr(buf, "\nmnt_id:");
	if (!s)
		return -ENOSYS;
	s += 8;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -EIO;
	*id = strtoull(s, NULL, 10);
	return 0;
}

/* one namespace's table */
struct ns_cache {
	dev_t dev;
	ino_t ino;
	bool live;
	bool self;		/* read from our own view */
	int fd;			/* its mountinfo, for poll() */
	uint64_t used;		/* for eviction */
	struct mount_table t;
};

static struct ns_cache cache[NS_CACHE];
static uint64_t use_clock;
static struct stat self_ns;	/* the recorder's own mount namespace */

/*
 * The namespace of each pid asked about, so that a stat of
 * /proc/PID/ns/mnt is made once a pid, not once a file. A stale one (the
 * process moved to another namespace, or its pid reused) can only name a
 * table without the mount asked about: looked up again then.
 */
struct pid_memo {
	pid_t pid;
	signed char chroot;	/* -1 not known, 0 its root is ours, 1 not */
	dev_t dev;
	ino_t ino;
};

#define PID_MEMO	256
static struct pid_memo memo[PID_MEMO];

static struct pid_memo *memo_of(pid_t pid)
{
	return &memo[(unsigned int)pid % PID_MEMO];
}

static void ns_drop(struct ns_cache *c)
{
	if (c->live)
		close(c->fd);
	mount_table__free(&c->t);
	memset(c, 0, sizeof(*c));
}

void mounts__reset(void)
{
	for (int i = 0; i < NS_CACHE; i++)
		ns_drop(&cache[i]);
	memset(memo, 0, sizeof(memo));
}

/* read the whole table again from c->fd */
static int ns_read(struct ns_cache *c)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	ssize_t n;
	int ret;

	if (!buf)
		return -ENOMEM;
	if (lseek(c->fd, 0, SEEK_SET) < 0) {
		free(buf);
		return -errno;
	}
	for (;;) {
		if (len == cap) {
			char *nb;

			if (cap >= MOUNTINFO_MAX) {
				free(buf);
				return -EFBIG;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(c->fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			free(buf);
			return ret;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	ret = mount_table__parse(&c->t, buf, len);
	free(buf);
	return ret;
}

/* did the namespace's mounts change since the last look? */
static bool ns_changed(struct ns_cache *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLPRI };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLPRI | POLLERR));
}

/* pid's table, fresh (read again if its mounts changed); NULL on error */
/*
 * pid's table (0: ours), read again if its mounts changed or reread;
 * ns_again: the pid's namespace looked up afresh. NULL on error.
 */
static struct ns_cache *ns_get(pid_t pid, bool ns_again, bool reread)
{
	char path[64];
	struct ns_cache *c = NULL, *victim = &cache[0];
	struct pid_memo *pm = pid > 0 ? memo_of(pid) : NULL;
	struct stat st;

	if (!self_ns.st_ino && stat("/proc/self/ns/mnt", &self_ns))
		return NULL;
	if (pm && pm->pid == pid && !ns_again) {
		st.st_dev = pm->dev;
		st.st_ino = pm->ino;
	} else if (pm) {
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
		if (stat(path, &st))
			return NULL;
		pm->pid = pid;
		pm->chroot = -1;
		pm->dev = st.st_dev;
		pm->ino = st.st_ino;
	} else {
		st = self_ns;
	}
	/*
	 * Our own namespace is read from our own view, which shows every
	 * mount from the host's root; a process's view shows only what is
	 * under its root (a chroot's own root mount is missing).
	 */
	if (st.st_dev == self_ns.st_dev && st.st_ino == self_ns.st_ino)
		pid = 0;
	for (int i = 0; i < NS_CACHE; i++) {
		if (cache[i].live && cache[i].dev == st.st_dev &&
		    cache[i].ino == st.st_ino) {
			c = &cache[i];
			break;
		}
		if (cache[i].used < victim->used)
			victim = &cache[i];
	}
	if (!c) {
		int fd;

		if (pid > 0)
			snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
		else
			snprintf(path, sizeof(path), "/proc/self/mountinfo");
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return NULL;
		ns_drop(victim);
		c = victim;
		c->live = true;
		c->self = pid <= 0;
		c->fd = fd;
		c->dev = st.st_dev;
		c->ino = st.st_ino;
		ns_changed(c);	/* from now on, changes after this read */
		if (ns_read(c)) {
			ns_drop(c);
			return NULL;
		}
	} else if (ns_changed(c) || reread) {
		if (ns_read(c)) {
			ns_drop(c);
			return NULL;
		}
	}
	c->used = ++use_clock;
	return c;
}

static int refuse(const struct mount_ent *m, char *why, size_t whylen)
{
	return err__set(why, whylen, -EREMOTE,
			"is on a %s file system (%s at %.48s) that may never answer (refused)",
			mounts__fstype_kind(m->fstype), m->fstype, m->point);
}

/*
 * The kernel's own mount that memfd_create() files are on: in no mount
 * table, served by no one (runc runs from such a copy of itself, JITs map
 * them). Its id (0 on the kernels seen: an internal mount gets none, and
 * no mount made with mount(2) or fsmount(2) has 0), learnt from a memfd
 * of ours; UINT64_MAX when none could be made.
 */
static uint64_t memfd_mnt_id(void)
{
	static uint64_t id = UINT64_MAX;
	static bool tried;
	int fd;

	if (tried)
		return id;
	tried = true;
	fd = memfd_create("asgst-mnt-probe", MFD_CLOEXEC);
	if (fd < 0)
		return id;
	if (mounts__fd_mnt_id(fd, &id))
		id = UINT64_MAX;
	close(fd);
	return id;
}

int mounts__check_id(pid_t pid, uint64_t id, char *why, size_t whylen)
{
	const struct mount_ent *m = NULL;
	struct ns_cache *c;

	if (id == memfd_mnt_id())
		return 0;

	c = ns_get(pid, false, false);
	if (c)
		m = mount_table__find_id(&c->t, id);
	if (!m) {
		/* perhaps mounted since, or the pid is in another namespace */
		c = ns_get(pid, true, true);
		if (c)
			m = mount_table__find_id(&c->t, id);
	}
	if (!m)
		return err__set(why, whylen, -EREMOTE,
				"is on a mount its mount table does not show (refused)");
	if (m->risky)
		return refuse(m, why, whylen);
	return 0;
}

int mounts__check_fd(pid_t pid, int fd, char *why, size_t whylen)
{
	uint64_t id;
	int ret;

	ret = mounts__fd_mnt_id(fd, &id);
	if (ret)
		return err__set(why, whylen, -EREMOTE,
				"its mount cannot be told (%s) (refused)",
				strerror(-ret));
	return mounts__check_id(pid, id, why, whylen);
}

int mounts__check_path(pid_t pid, const char *path, char *why, size_t whylen)
{
	const struct mount_ent *m;
	struct ns_cache *c = ns_get(pid, false, false);
	struct pid_memo *pm = pid > 0 ? memo_of(pid) : NULL;
	char root[8], lp[64];
	ssize_t n;

	if (!c)
		return 0;	/* the walk still checks every mount */
	/*
	 * Mount points are paths from the root of whoever read the table:
	 * ours. Only a process in our namespace with our root sees the same
	 * paths; for the others, the walk alone decides.
	 */
	if (!c->self)
		return 0;
	if (pm && pm->pid == pid && pm->chroot < 0) {
		snprintf(lp, sizeof(lp), "/proc/%d/root", (int)pid);
		n = readlink(lp, root, sizeof(root));
		pm->chroot = n != 1 || root[0] != '/';
	}
	if (pm && (pm->pid != pid || pm->chroot))
		return 0;
	m = mount_table__path_risky(&c->t, path);
	return m ? refuse(m, why, whylen) : 0;
}
