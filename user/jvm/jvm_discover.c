// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Finding HotSpot JVMs through /proc (see jvm_discover.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jvm/jvm_discover.h"
#include "util/err.h"
#include "util/safe_open.h"

/* a JVM's cmdline or release file larger than this is cut: enough to see */
#define PROC_TEXT_MAX	(256u << 10)
/* a JDK's release file is a few KiB; a bigger one is not a JDK's */
#define RELEASE_MAX	(1u << 20)
/* libjvm.so is 20-30 MiB; its export table a few hundred KiB */
#define LIBJVM_MAX	(512ull << 20)
#define DYNSYM_MAX	(16u << 20)

static int read_fd_text(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, len - 1 - n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	return (int)n;
}

/* read a /proc file into buf (NUL-terminated); bytes read or -errno */
static int read_proc(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = read_fd_text(fd, buf, len);
	close(fd);
	return ret;
}

/*
 * Open path (absolute, as the target sees it) inside the target's root
 * without ever leaving it: symlinks and ".." resolve inside that root,
 * never to host files.
 */
int jvm_discover__open_in_root(pid_t pid, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char root[64];
	int rfd, fd;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	while (*path == '/')
		path++;
	fd = (int)syscall(SYS_openat2, rfd, *path ? path : ".", &how,
			  sizeof(how));
	if (fd < 0)
		fd = -errno;
	close(rfd);
	return fd;
}

long jvm_discover__parse_nstgid(const char *status, size_t len)
{
	const char *p = status, *end = status + len;
	static const char key[] = "NStgid:";

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		if ((size_t)(le - p) > sizeof(key) - 1 &&
		    !memcmp(p, key, sizeof(key) - 1)) {
			long last = -1;
			const char *q = p + sizeof(key) - 1;

			while (q < le) {
				long v = 0;
				bool digits = false;

				while (q < le && (*q == ' ' || *q == '\t'))
					q++;
				while (q < le && isdigit((unsigned char)*q)) {
					if (v > 100000000L)
						return -1;
					v = v * 10 + (*q - '0');
					digits = true;
					q++;
				}
				if (!digits)
					break;
				last = v;
			}
			return last > 0 ? last : -1;
		}
		p = le + 1;
	}
	return -1;
}

int jvm_discover__nspid(pid_t pid, pid_t *nspid)
{
	char buf[4096];
	long v;
	int n;

	n = read_proc(pid, "status", buf, sizeof(buf));
	if (n < 0)
		return n;
	v = jvm_discover__parse_nstgid(buf, (size_t)n);
	/* kernels before 4.1 have no NStgid: the pid is the only one */
	*nspid = v > 0 ? (pid_t)v : pid;
	return 0;
}

/* second field (effective) of the "Uid:" / "Gid:" line */
static int status_field(const char *buf, const char *key, unsigned long *out)
{
	const char *p = strstr(buf, key);
	unsigned long real, eff;

	if (!p)
		return -ENOENT;
	if (sscanf(p + strlen(key), "%lu %lu", &real, &eff) != 2)
		return -EINVAL;
	*out = eff;
	return 0;
}

int jvm_discover__creds(pid_t pid, uid_t *uid, gid_t *gid)
{
	char buf[4096];
	unsigned long u, g;
	int n, ret;

	n = read_proc(pid, "status", buf, sizeof(buf));
	if (n < 0)
		return n;
	ret = status_field(buf, "\nUid:", &u);
	if (!ret)
		ret = status_field(buf, "\nGid:", &g);
	if (ret)
		return ret;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}

/* basename of a maps line's path, without a " (deleted)" tail */
static const char *maps_path(char *line)
{
	char *p = line, *nl;
	int field;

	nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	/* address perms offset dev inode path */
	for (field = 0; field < 5; field++) {
		p = strchr(p, ' ');
		if (!p)
			return NULL;
		while (*p == ' ')
			p++;
	}
	if (*p != '/')
		return NULL;
	nl = strstr(p, " (deleted)");
	if (nl && nl[10] == '\0')
		*nl = '\0';
	return p;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

bool jvm_discover__is_agent_lib(const char *base)
{
	/* libasgst-agent.so as built, asgst-agent-<uid>.so when copied in */
	return !strcmp(base, "libasgst-agent.so") ||
	       (!strncmp(base, "asgst-agent-", 12) &&
		strstr(base, ".so") != NULL);
}

/*
 * scan maps once; libjvm path, the address range of its first mapping
 * ("start-end", as /proc/PID/map_files names it) and agent presence
 */
static int scan_maps(pid_t pid, char *libjvm, size_t len, char *range,
		     size_t rlen, bool *agent)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *f;

	if (agent)
		*agent = false;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		const char *p, *b;
		size_t rl = strcspn(line, " ");

		p = maps_path(line);
		if (!p)
			continue;
		b = base_name(p);
		if (!found && !strcmp(b, "libjvm.so")) {
			found = true;
			if (libjvm && len)
				snprintf(libjvm, len, "%s", p);
			if (range && rlen)
				snprintf(range, rlen, "%.*s", (int)rl, line);
		} else if (agent && jvm_discover__is_agent_lib(b)) {
			*agent = true;
		}
	}
	free(line);
	fclose(f);
	return found ? 1 : 0;
}

int jvm_discover__agent_map(pid_t pid, char *range, size_t len)
{
	char mpath[64], *line = NULL;
	size_t cap = 0;
	int ret = 0;
	FILE *f;

	snprintf(mpath, sizeof(mpath), "/proc/%d/maps", (int)pid);
	f = fopen(mpath, "re");
	if (!f)
		return -errno;
	while (!ret && getline(&line, &cap, f) > 0) {
		size_t rl = strcspn(line, " ");
		const char *p = maps_path(line);

		if (!p || !jvm_discover__is_agent_lib(base_name(p)) || rl >= len)
			continue;
		snprintf(range, len, "%.*s", (int)rl, line);
		ret = 1;
	}
	free(line);
	fclose(f);
	return ret;
}

int jvm_discover__has_libjvm(pid_t pid, char *libjvm, size_t len)
{
	return scan_maps(pid, libjvm, len, NULL, 0, NULL);
}

int jvm_discover__elf_is_hotspot(int fd)
{
	bool structs = false, jvm_fn = false;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return 0;
	while (!(structs && jvm_fn) && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		GElf_Shdr sh;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    sh.sh_size > DYNSYM_MAX || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = d->d_size / sh.sh_entsize;
		for (size_t i = 0; i < n && !(structs && jvm_fn); i++) {
			const char *name;
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!name)
				continue;
			if (GELF_ST_TYPE(sym.st_info) == STT_OBJECT &&
			    !strcmp(name, "gHotSpotVMStructs"))
				structs = true;
			else if (GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
				 !strncmp(name, "JVM_", 4))
				jvm_fn = true;
		}
	}
	elf_end(e);
	return structs && jvm_fn;
}

int jvm_discover__is_hotspot(pid_t pid)
{
	char libjvm[PATH_MAX], range[64], path[128];
	int fd, ret, rfd;

	ret = scan_maps(pid, libjvm, sizeof(libjvm), range, sizeof(range),
			NULL);
	if (ret <= 0)
		return ret;
	/* the very file mapped, whatever its path names now */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%s", (int)pid, range);
	fd = safe_open(SAFE_OPEN_HOST, path, SAFE_OPEN_PROC_LINK, LIBJVM_MAX,
		       NULL, NULL, 0);
	if (fd < 0) {
		/* map_files needs CAP_SYS_ADMIN: the path in its root */
		snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
		rfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rfd < 0)
			return -errno;
		fd = safe_open(rfd, libjvm, 0, LIBJVM_MAX, NULL, NULL, 0);
		close(rfd);
		if (fd < 0)
			return fd;
	}
	ret = jvm_discover__elf_is_hotspot(fd);
	close(fd);
	return ret;
}

int jvm_discover__agent_loaded(pid_t pid)
{
	bool agent;
	int ret = scan_maps(pid, NULL, 0, NULL, 0, &agent);

	if (ret < 0)
		return ret;
	return agent ? 1 : 0;
}

int jvm_discover__parse_release(const char *text, size_t len, char *out,
				size_t outlen)
{
	static const char key[] = "JAVA_VERSION=\"";
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		if ((size_t)(le - p) >= sizeof(key) - 1 &&
		    !memcmp(p, key, sizeof(key) - 1)) {
			const char *v = p + sizeof(key) - 1;
			const char *q = memchr(v, '"', (size_t)(le - v));
			size_t n, i;

			if (!q || q == v)
				return -ENOENT;
			n = (size_t)(q - v);
			for (i = 0; i < n; i++)
				if (!isprint((unsigned char)v[i]))
					return -ENOENT;
			if (!outlen)
				return -ENOSPC;
			if (n >= outlen)
				n = outlen - 1;
			memcpy(out, v, n);
			out[n] = '\0';
			return 0;
		}
		p = le + 1;
	}
	return -ENOENT;
}

/* launcher options that take the next argument as their value */
static bool takes_value(const char *a, size_t n)
{
	static const char *const with_value[] = {
		"-cp", "-classpath", "--class-path", "-p", "--module-path",
		"--add-modules", "--add-opens", "--add-exports", "--add-reads",
		"--patch-module", "--upgrade-module-path", "--limit-modules",
		NULL,
	};
	int i;

	for (i = 0; with_value[i]; i++)
		if (strlen(with_value[i]) == n && !memcmp(a, with_value[i], n))
			return true;
	return false;
}

/* one option's effect on the flag: 1 on, 0 off, -1 not this flag */
static int attach_flag(const char *p, size_t n)
{
	static const char flag[] = "DisableAttachMechanism";

	if (n != 5 + sizeof(flag) - 1 || memcmp(p, "-XX:", 4) ||
	    memcmp(p + 5, flag, sizeof(flag) - 1))
		return -1;
	return p[4] == '+' ? 1 : p[4] == '-' ? 0 : -1;
}

bool jvm_discover__cmdline_disables_attach(const char *cmdline, size_t len)
{
	const char *p = cmdline, *end = cmdline + len;
	bool disabled = false, first = true;

	while (p < end) {
		size_t n = strnlen(p, (size_t)(end - p));
		int f = attach_flag(p, n);

		if (f >= 0)
			disabled = f;
		/* JVM options end at the main class or -jar: the rest are
		 * the program's arguments */
		if (!first && ((n == 4 && !memcmp(p, "-jar", 4)) ||
			       (n && p[0] != '-')))
			break;
		if (!first && takes_value(p, n)) {
			p += n + 1;
			if (p < end)
				p += strnlen(p, (size_t)(end - p)) + 1;
			continue;
		}
		first = false;
		p += n + 1;
	}
	return disabled;
}

/* the flag in a space-separated options variable (JAVA_TOOL_OPTIONS) */
static int env_flag(const char *v, size_t len)
{
	const char *p = v, *end = v + len;
	int last = -1;

	while (p < end) {
		size_t n = 0;
		int f;

		while (p < end && *p == ' ')
			p++;
		while (p + n < end && p[n] != ' ')
			n++;
		f = attach_flag(p, n);
		if (f >= 0)
			last = f;
		p += n;
	}
	return last;
}

/* JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS before the command line,
 * _JAVA_OPTIONS after it */
static bool environ_disables(pid_t pid, bool cmdline_says)
{
	char *env = malloc(PROC_TEXT_MAX), *p, *end;
	int n, tool = -1, over = -1;
	bool ret = cmdline_says;

	if (!env)
		return ret;
	n = read_proc(pid, "environ", env, PROC_TEXT_MAX);
	for (p = env, end = env + (n > 0 ? n : 0); p < end;) {
		size_t l = strnlen(p, (size_t)(end - p));

		int f = -1;

		if (!strncmp(p, "JAVA_TOOL_OPTIONS=", 18))
			f = env_flag(p + 18, l - 18);
		else if (!strncmp(p, "JDK_JAVA_OPTIONS=", 17))
			f = env_flag(p + 17, l - 17);
		if (f >= 0)
			tool = f;
		else if (!strncmp(p, "_JAVA_OPTIONS=", 14))
			over = env_flag(p + 14, l - 14);
		p += l + 1;
	}
	free(env);
	if (tool >= 0 && !cmdline_says)
		ret = tool;
	if (over >= 0)
		ret = over;
	return ret;
}

bool jvm_discover__attach_disabled(pid_t pid)
{
	char *cl = malloc(PROC_TEXT_MAX);
	bool ret = false;
	int n;

	if (!cl)
		return false;
	n = read_proc(pid, "cmdline", cl, PROC_TEXT_MAX);
	ret = environ_disables(pid, n > 0 &&
			       jvm_discover__cmdline_disables_attach(cl,
								     (size_t)n));
	free(cl);
	return ret;
}

int jvm_discover__java_home(const char *libjvm, char *out, size_t outlen)
{
	const char *s[3] = { NULL, NULL, NULL };
	const char *p;
	int k = 0;

	/* <home>/lib/<vm>/libjvm.so: s[0] before libjvm.so, s[1] before
	 * <vm>, s[2] ends <home> */
	for (p = libjvm + strlen(libjvm); p > libjvm && k < 3;) {
		p--;
		if (*p == '/')
			s[k++] = p;
	}
	if (k < 3 || s[2] == libjvm || strncmp(s[2], "/lib/", 5))
		return -EINVAL;
	if ((size_t)(s[2] - libjvm) >= outlen)
		return -ENAMETOOLONG;
	memcpy(out, libjvm, (size_t)(s[2] - libjvm));
	out[s[2] - libjvm] = '\0';
	return 0;
}

/* JAVA_VERSION of the JDK at home, read inside the target's root */
static void read_version(pid_t pid, const char *home, char *out, size_t len)
{
	char path[PATH_MAX + 16], buf[8192];
	int fd, rfd, n;

	out[0] = '\0';
	if (snprintf(path, sizeof(path), "%s/release", home) >=
	    (int)sizeof(path))
		return;
	rfd = safe_open__root(pid);
	if (rfd < 0)
		return;
	/* a FIFO or a device there must not stall or touch anything */
	fd = safe_open(rfd, path, SAFE_OPEN_NOFOLLOW, RELEASE_MAX, NULL, NULL, 0);
	close(rfd);
	if (fd < 0)
		return;
	n = read_fd_text(fd, buf, sizeof(buf));
	close(fd);
	if (n > 0)
		jvm_discover__parse_release(buf, (size_t)n, out, len);
}

/* whether two of our /proc paths name different files (dev+ino) */
static bool differs(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) || stat(b, &sb))
		return false;
	return sa.st_dev != sb.st_dev || sa.st_ino != sb.st_ino;
}

/* "java [-jar X | Main] args...", printable, cut to len */
static void summarize_cmdline(const char *cl, size_t n, char *out, size_t len)
{
	const char *p = cl, *end = cl + n;
	bool in_main = false;
	size_t o;

	out[0] = '\0';
	if (!n || !len)
		return;
	o = (size_t)snprintf(out, len, "%s", base_name(cl));
	p += strnlen(p, (size_t)(end - p)) + 1;
	while (p < end && o + 1 < len) {
		size_t a = strnlen(p, (size_t)(end - p));

		if (!in_main && a == 4 && !memcmp(p, "-jar", 4))
			in_main = true;
		else if (!in_main && a && p[0] != '-')
			in_main = true;
		if (!in_main) {
			bool skip = takes_value(p, a);

			p += a + 1;
			if (skip && p < end)
				p += strnlen(p, (size_t)(end - p)) + 1;
			continue;
		}
		o += (size_t)snprintf(out + o, len - o, " %.*s", (int)a, p);
		p += a + 1;
	}
	for (o = 0; out[o]; o++)
		if (!isprint((unsigned char)out[o]))
			out[o] = '?';
}

/* a zombie, or a process whose memory is already gone (exiting) */
static bool exiting(pid_t pid)
{
	char buf[512], *p;
	int n = read_proc(pid, "stat", buf, sizeof(buf));

	if (n <= 0)
		return true;
	/* "pid (comm) S ...": comm may hold ')' itself, take the last */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

int jvm_discover__probe(pid_t pid, struct jvm_info *out, char *err,
			size_t errlen)
{
	char path[64], buf[4096], *cl = NULL;
	int ret, n;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (access(path, F_OK))
		return err__set(err, errlen, -ESRCH, "no such process: %d",
				(int)pid);
	ret = scan_maps(pid, out->libjvm, sizeof(out->libjvm), NULL, 0,
			&out->agent_loaded);
	if (ret == -ENOENT || ret == -ESRCH)
		return err__set(err, errlen, -ESRCH, "no such process: %d",
				(int)pid);
	if (ret < 0)
		return err__set(err, errlen, ret,
				"cannot read /proc/%d/maps: %s (run as root)",
				(int)pid, strerror(-ret));
	if (ret == 0 && exiting(pid))
		return err__set(err, errlen, -ESRCH,
				"process %d exited meanwhile", (int)pid);
	if (ret == 0)
		return err__set(err, errlen, -ENOEXEC,
				"process %d is not a HotSpot JVM (no libjvm.so mapped)",
				(int)pid);
	ret = jvm_discover__nspid(pid, &out->nspid);
	if (!ret)
		ret = jvm_discover__creds(pid, &out->uid, &out->gid);
	if (ret)
		return err__set(err, errlen, -ESRCH,
				"process %d vanished while probing it",
				(int)pid);
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	out->other_root = differs("/proc/self/root", path);
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	out->other_mntns = differs("/proc/self/ns/mnt", path);
	if (!jvm_discover__java_home(out->libjvm, out->java_home,
				     sizeof(out->java_home)))
		read_version(pid, out->java_home, out->version,
			     sizeof(out->version));
	cl = malloc(PROC_TEXT_MAX);
	if (cl) {
		n = read_proc(pid, "cmdline", cl, PROC_TEXT_MAX);
		if (n > 0) {
			out->attach_disabled = environ_disables(pid,
				jvm_discover__cmdline_disables_attach(cl,
								      (size_t)n));
			summarize_cmdline(cl, (size_t)n, out->comm,
					  sizeof(out->comm));
		}
		free(cl);
	}
	if (!out->comm[0] && read_proc(pid, "comm", buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(out->comm, sizeof(out->comm), "%.63s", buf);
	}
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct jvm_info *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

int jvm_discover__list(struct jvm_info **out, size_t *n)
{
	struct jvm_info *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	char err[256];
	DIR *d;
	int ret = 0;

	*out = NULL;
	*n = 0;
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *e;
		long pid = strtol(de->d_name, &e, 10);

		if (*e || pid <= 0 || pid == getpid())
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 8;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				ret = -ENOMEM;
				goto cleanup;
			}
			v = nv;
		}
		if (!jvm_discover__probe((pid_t)pid, &v[cnt], err, sizeof(err)))
			cnt++;
	}
	qsort(v, cnt, sizeof(*v), cmp_pid);
	*out = v;
	*n = cnt;
	v = NULL;
cleanup:
	free(v);
	closedir(d);
	return ret;
}
