// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* HotSpot dynamic attach (see attach.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "jvm/attach.h"
#include "jvm/jvm_discover.h"
#include "util/err.h"
#include "util/safe_open.h"
#include "codemap_format.h"

/* HotSpot's limits for a request (attachListener.hpp, JDK 17) */
#define CMD_LEN_MAX	16
#define ARG_LEN_MAX	1024
/* a reply larger than this is cut (thread dumps can be long) */
#define REPLY_MAX	(4u << 20)
/* how long a command may take once connected (Agent_OnAttach included) */
#define EXCHANGE_MS	60000
/* a JVM still starting is asked again this often, for this long */
#define NOT_LIVE_RETRY_MS	200
#define NOT_LIVE_WAIT_MS	20000

/* the target being attached to, gathered once */
struct target {
	pid_t pid, nspid;
	uid_t uid;
	gid_t gid;
	int pidfd;		/* exit detection without pid reuse races */
	int tmpfd;		/* O_PATH of its /tmp, inside its root */
	bool other_mntns;
};

static int sys_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int sys_pidfd_send_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* whether the target has exited (its pidfd polls readable) */
static bool target_gone(const struct target *t)
{
	struct pollfd p = { .fd = t->pidfd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/* sleep up to ms; true when the target exited meanwhile */
static bool wait_or_exit(const struct target *t, int ms)
{
	struct pollfd p = { .fd = t->pidfd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	return r > 0;
}

/* the message and code of a target that went away mid-attach */
static int exited(pid_t pid, char *err, size_t errlen)
{
	return err__set(err, errlen, -ATTACH_E_EXITED,
			"JVM %d exited during attach", (int)pid);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static void reap(pid_t child, int *status)
{
	while (waitpid(child, status, 0) < 0 && errno == EINTR)
		;
}

static void target_close(struct target *t)
{
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->tmpfd >= 0)
		close(t->tmpfd);
	t->pidfd = t->tmpfd = -1;
}

static int target_open(struct target *t, pid_t pid, char *err, size_t errlen)
{
	char libjvm[PATH_MAX], a[64], b[64];
	struct stat sa, sb;
	int ret;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->pidfd = t->tmpfd = -1;
	if (pid <= 0)
		return err__set(err, errlen, -EINVAL, "invalid pid %d", (int)pid);
	t->pidfd = sys_pidfd_open(pid);
	if (t->pidfd < 0) {
		ret = -errno;
		if (ret == -ESRCH)
			return err__set(err, errlen, ret, "no such process: %d",
					(int)pid);
		return err__set(err, errlen, ret, "cannot open process %d: %s",
				(int)pid, strerror(-ret));
	}
	ret = jvm_discover__has_libjvm(pid, libjvm, sizeof(libjvm));
	if (ret < 0) {
		if (ret == -EACCES || ret == -EPERM)
			err__set(err, errlen, ret,
				 "permission denied reading process %d (run as root or as the JVM's user)",
				 (int)pid);
		else
			err__set(err, errlen, ret, "no such process: %d",
				 (int)pid);
		goto fail;
	}
	if (ret == 0) {
		if (target_gone(t))
			ret = exited(pid, err, errlen);
		else
			ret = err__set(err, errlen, -ATTACH_E_NOT_JVM,
				       "process %d is not a HotSpot JVM (no libjvm.so mapped)",
				       (int)pid);
		goto fail;
	}
	/* a library named libjvm.so is no JVM: HotSpot's exports, or no
	 * SIGQUIT (which kills a process that only installed a handler
	 * for show, and is no attach request to anything else) */
	ret = jvm_discover__is_hotspot(pid);
	if (ret <= 0) {
		if (target_gone(t))
			ret = exited(pid, err, errlen);
		else if (ret == 0)
			ret = err__set(err, errlen, -ATTACH_E_NOT_JVM,
				       "process %d is not a HotSpot JVM (its %s exports no gHotSpotVMStructs and JVM_ functions); not signalled",
				       (int)pid, libjvm);
		else
			ret = err__set(err, errlen, ret,
				       "cannot read the libjvm.so of process %d: %s; not signalled",
				       (int)pid, strerror(-ret));
		goto fail;
	}
	ret = jvm_discover__nspid(pid, &t->nspid);
	if (!ret)
		ret = jvm_discover__creds(pid, &t->uid, &t->gid);
	if (ret) {
		ret = exited(pid, err, errlen);
		goto fail;
	}
	snprintf(a, sizeof(a), "/proc/self/ns/mnt");
	snprintf(b, sizeof(b), "/proc/%d/ns/mnt", (int)pid);
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		t->other_mntns = sa.st_ino != sb.st_ino || sa.st_dev != sb.st_dev;
	t->tmpfd = jvm_discover__open_in_root(pid, "/tmp",
					      O_PATH | O_DIRECTORY);
	if (t->tmpfd < 0) {
		ret = err__set(err, errlen, t->tmpfd,
			       "cannot open /tmp of JVM %d: %s", (int)pid,
			       strerror(-t->tmpfd));
		t->tmpfd = -1;
		goto fail;
	}
	return 0;
fail:
	/* whatever failed, a JVM that is gone is the reason */
	if (ret != -ESRCH && t->pidfd >= 0 && target_gone(t))
		ret = exited(pid, err, errlen);
	target_close(t);
	return ret;
}

/* 1: the listener socket is there; 0: not; -errno: a wrong file there */
static int socket_state(const struct target *t, char *err, size_t errlen)
{
	char name[32];
	struct stat st;

	snprintf(name, sizeof(name), ".java_pid%d", (int)t->nspid);
	if (fstatat(t->tmpfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		return err__set(err, errlen, -errno,
				"cannot stat /tmp/%s of JVM %d: %s", name,
				(int)t->pid, strerror(errno));
	}
	if (!S_ISSOCK(st.st_mode) || st.st_uid != t->uid)
		return err__set(err, errlen, -EPERM,
				"/tmp/%s of JVM %d is not a socket owned by its user (uid %u): refusing it",
				name, (int)t->pid, (unsigned)t->uid);
	return 1;
}

/* whether SIGQUIT is caught, i.e. sending it will not kill the JVM */
static int sigquit_caught(pid_t pid)
{
	char path[64], line[256];
	unsigned long long mask;
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "SigCgt: %llx", &mask) == 1) {
			ret = (mask >> (SIGQUIT - 1)) & 1;
			break;
		}
	}
	fclose(f);
	return ret;
}

/*
 * Whether the JVM's "Signal Dispatcher" thread runs: before it does, a
 * SIGQUIT may be handled by start-up code, not by the attach check.
 */
static bool dispatcher_running(pid_t pid)
{
	char path[64], comm[32];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char p2[96];
		int fd;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p2, sizeof(p2), "%s/%.20s/comm", path, de->d_name);
		fd = open(p2, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		/* thread names are cut to 15 bytes */
		found = n >= 15 && !memcmp(comm, "Signal Dispatch", 15);
	}
	closedir(d);
	return found;
}

/*
 * Run fn(arg) in a child process with the target's uid and gid and no
 * supplementary groups. Whatever is created, replaced or removed in a
 * directory the target controls (its cwd, its /tmp, which it may have
 * mounted a root-owned host directory over) is then done with the
 * target's rights, never root's: where the target may not write, neither
 * may we. Bounded: a child stuck on the target's file system is killed
 * after AS_TARGET_MS. fn returns 0 or -errno. 0, fn's -errno, -ETIMEDOUT.
 */
#define AS_TARGET_MS	10000

static int as_target(const struct target *t, int (*fn)(void *), void *arg)
{
	uint64_t deadline = clock__mono_ms() + AS_TARGET_MS;
	int pfd[2], ret = -EIO, status;
	pid_t c;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	c = fork();
	if (c < 0) {
		ret = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return ret;
	}
	if (c == 0) {
		close(pfd[0]);
		if (geteuid() == 0 && (t->uid != 0 || t->gid != 0) &&
		    (setgroups(0, NULL) ||
		     setresgid(t->gid, t->gid, t->gid) ||
		     setresuid(t->uid, t->uid, t->uid)))
			ret = -errno;
		else
			ret = fn(arg);
		write_all(pfd[1], &ret, sizeof(ret));
		_exit(0);
	}
	close(pfd[1]);
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		uint64_t now = clock__mono_ms();
		int r;

		if (now >= deadline) {
			kill(c, SIGKILL);
			ret = -ETIMEDOUT;
			break;
		}
		r = poll(&p, 1, (int)(deadline - now));
		if (r < 0 && errno != EINTR) {
			kill(c, SIGKILL);
			ret = -errno;
			break;
		}
		if (r > 0) {
			if (read(pfd[0], &ret, sizeof(ret)) != sizeof(ret))
				ret = -EIO;
			break;
		}
	}
	close(pfd[0]);
	reap(c, &status);
	return ret;
}

struct trigger_op {
	int dirfd;
	const char *name;
};

/* in the target's rights: a fresh trigger file (owned by the target's
 * user, as HotSpot checks) */
static int trigger_create(void *arg)
{
	const struct trigger_op *op = arg;
	int fd;

	unlinkat(op->dirfd, op->name, 0);
	fd = openat(op->dirfd, op->name, O_CREAT | O_EXCL | O_WRONLY |
		    O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int trigger_remove(void *arg)
{
	const struct trigger_op *op = arg;

	return unlinkat(op->dirfd, op->name, 0) ? -errno : 0;
}

/* create the trigger in dirfd as the JVM's user; 0 or -errno */
static int make_trigger(const struct target *t, int dirfd, const char *name)
{
	struct trigger_op op = { dirfd, name };

	return as_target(t, trigger_create, &op);
}

/*
 * A JVM still starting may die of SIGQUIT or take it for a thread dump
 * request: wait (bounded) until its handler and its Signal Dispatcher
 * thread are there. 0: ready for the signal; 1: the listener came up
 * meanwhile (-Xrs starts it); else -errno / -ATTACH_E_*.
 */
static int wait_sigquit_ready(const struct target *t, char *err,
			      size_t errlen)
{
	uint64_t deadline = clock__mono_ms() + ATTACH_WAIT_MS;
	int ret, delay = 10;

	for (;;) {
		ret = sigquit_caught(t->pid);
		if (ret > 0 && dispatcher_running(t->pid))
			return 0;
		if (clock__mono_ms() >= deadline)
			return err__set(err, errlen, -ATTACH_E_TIMEOUT,
					"JVM %d never got ready for attach within %d s (no SIGQUIT handler or Signal Dispatcher thread: still starting, hung, or -Xrs)",
					(int)t->pid, ATTACH_WAIT_MS / 1000);
		if (wait_or_exit(t, delay))
			return exited(t->pid, err, errlen);
		delay = delay * 2 > 200 ? 200 : delay * 2;
		ret = socket_state(t, err, errlen);
		if (ret)
			return ret;
	}
}

static void drop_trigger(const struct target *t, int dirfd, const char *name)
{
	struct trigger_op op = { dirfd, name };

	as_target(t, trigger_remove, &op);
	close(dirfd);
}

/* create the trigger file name in the JVM's cwd, else in its /tmp: the fd
 * of the directory it is in, or -errno / -ATTACH_E_EXITED (err set) */
static int place_trigger(const struct target *t, const char *name, char *err,
			 size_t errlen)
{
	char cwd[64];
	int dirfd, ret;

	snprintf(cwd, sizeof(cwd), "/proc/%d/cwd", (int)t->pid);
	dirfd = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ret = dirfd >= 0 ? make_trigger(t, dirfd, name) : -errno;
	if (ret) {
		/* cwd not writable (read-only image, other fs): use /tmp */
		if (dirfd >= 0)
			close(dirfd);
		dirfd = fcntl(t->tmpfd, F_DUPFD_CLOEXEC, 0);
		ret = dirfd >= 0 ? make_trigger(t, dirfd, name) : -errno;
	}
	if (!ret)
		return dirfd;
	if (dirfd >= 0)
		close(dirfd);
	if (target_gone(t))
		return exited(t->pid, err, errlen);
	return err__set(err, errlen, ret,
			"cannot create the attach trigger for JVM %d: %s (run as root or as the JVM's user)",
			(int)t->pid, strerror(-ret));
}

/* after the SIGQUIT: wait (bounded) for the listener socket */
static int wait_listener(const struct target *t, char *err, size_t errlen)
{
	uint64_t deadline = clock__mono_ms() + ATTACH_WAIT_MS;
	int ret, delay = 10;

	for (;;) {
		ret = socket_state(t, err, errlen);
		if (ret)
			return ret < 0 ? ret : 0;
		if (clock__mono_ms() >= deadline)
			return err__set(err, errlen, -ATTACH_E_TIMEOUT,
					"JVM %d did not start its attach listener within %d s (attach disabled with -XX:+DisableAttachMechanism, or the JVM is hung)",
					(int)t->pid, ATTACH_WAIT_MS / 1000);
		if (wait_or_exit(t, delay))
			return exited(t->pid, err, errlen);
		delay = delay * 2 > 500 ? 500 : delay * 2;
	}
}

/* make sure the attach listener runs; 0 or -errno / -ATTACH_E_* */
static int start_listener(const struct target *t, char *err, size_t errlen)
{
	char name[32];
	int dirfd, ret;

	ret = socket_state(t, err, errlen);
	if (ret)
		return ret < 0 ? ret : 0;
	/* a disabled mechanism never answers: say so instead of waiting */
	if (jvm_discover__attach_disabled(t->pid))
		return err__set(err, errlen, -ATTACH_E_DISABLED,
				"JVM %d runs with -XX:+DisableAttachMechanism: it cannot be attached to; restart it with -agentpath instead",
				(int)t->pid);
	ret = wait_sigquit_ready(t, err, errlen);
	if (ret)
		return ret < 0 ? ret : 0;

	snprintf(name, sizeof(name), ".attach_pid%d", (int)t->nspid);
	dirfd = place_trigger(t, name, err, errlen);
	if (dirfd < 0)
		return dirfd;
	if (sys_pidfd_send_signal(t->pidfd, SIGQUIT)) {
		ret = -errno;
		if (ret == -ESRCH)
			ret = exited(t->pid, err, errlen);
		else
			err__set(err, errlen, ret, "cannot signal JVM %d: %s%s",
				 (int)t->pid, strerror(-ret),
				 ret == -EPERM ? " (run as root or as the JVM's user)" : "");
	} else {
		ret = wait_listener(t, err, errlen);
	}
	drop_trigger(t, dirfd, name);
	return ret;
}

/* to the socket: a JVM that hung up must not SIGPIPE us */
static int send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* the child's report ahead of the reply bytes */
struct child_status {
	int err;		/* 0 or errno */
	int stage;		/* where it failed */
};

enum { ST_OK, ST_SETNS, ST_ROOT, ST_CREDS, ST_SOCKET, ST_CONNECT, ST_SEND,
       ST_RECV };

static const char *const stage_names[] = {
	"ok", "entering its mount namespace", "entering its root",
	"taking its uid/gid", "creating a socket", "connecting to its socket",
	"sending the request", "reading the reply",
};

/*
 * In the child: enter the target's mount namespace and root, become its
 * user, connect, send, and copy the reply to out_fd. Never returns.
 */
static void __attribute__((noreturn))
child_exchange(const struct target *t, int mntfd, int rootfd,
	       const char *req, size_t reqlen, int out_fd)
{
	struct child_status cs = { 0, ST_OK };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = EXCHANGE_MS / 1000 };
	char buf[8192];
	int s = -1;

	alarm(EXCHANGE_MS / 1000 + 5);
	if (mntfd >= 0 && setns(mntfd, CLONE_NEWNS)) {
		cs.stage = ST_SETNS;
		goto fail;
	}
	if (geteuid() != 0) {
		/* no chroot without privilege: reach its /tmp through the
		 * root link (we are its user, or the kernel says no) */
		if (snprintf(sa.sun_path, sizeof(sa.sun_path),
			     "/proc/%d/root/tmp/.java_pid%d", (int)t->pid,
			     (int)t->nspid) >= (int)sizeof(sa.sun_path)) {
			errno = ENAMETOOLONG;
			cs.stage = ST_ROOT;
			goto fail;
		}
	} else if (fchdir(rootfd) || chroot(".") || chdir("/")) {
		cs.stage = ST_ROOT;
		goto fail;
	} else {
		snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/.java_pid%d",
			 (int)t->nspid);
	}
	if (geteuid() == 0 && (t->uid != 0 || t->gid != 0)) {
		/* HotSpot accepts only its own euid/egid or root, and host
		 * root is no root inside a user namespace */
		if (setgroups(0, NULL) || setresgid(t->gid, t->gid, t->gid) ||
		    setresuid(t->uid, t->uid, t->uid)) {
			cs.stage = ST_CREDS;
			goto fail;
		}
	}
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		cs.stage = ST_SOCKET;
		goto fail;
	}
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		cs.stage = ST_CONNECT;
		goto fail;
	}
	if (send_all(s, req, reqlen) < 0) {
		cs.stage = ST_SEND;
		goto fail;
	}
	if (write_all(out_fd, &cs, sizeof(cs)))
		_exit(1);
	for (;;) {
		ssize_t r = read(s, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			/* the status is sent: report a cut reply by exit code */
			_exit(3);
		}
		if (r == 0)
			break;
		if (write_all(out_fd, buf, (size_t)r))
			_exit(1);
	}
	_exit(0);
fail:
	cs.err = errno ? errno : EIO;
	write_all(out_fd, &cs, sizeof(cs));
	_exit(2);
}

/* build "1\0cmd\0a0\0a1\0a2\0"; length or -errno */
static int build_request(const char *cmd, const char *args[3], char *buf,
			 size_t len, char *err, size_t errlen)
{
	size_t o = 0;
	int i;

	if (!cmd || !*cmd || strlen(cmd) > CMD_LEN_MAX)
		return err__set(err, errlen, -EINVAL,
				"invalid attach command '%s'", cmd ? cmd : "");
	memcpy(buf, "1", 2);
	o = 2;
	memcpy(buf + o, cmd, strlen(cmd) + 1);
	o += strlen(cmd) + 1;
	for (i = 0; i < 3; i++) {
		const char *a = args && args[i] ? args[i] : "";
		size_t l = strlen(a);

		if (l > ARG_LEN_MAX || o + l + 1 > len)
			return err__set(err, errlen, -E2BIG,
					"attach argument %d is longer than the JVM accepts (%d bytes)",
					i + 1, ARG_LEN_MAX);
		memcpy(buf + o, a, l + 1);
		o += l + 1;
	}
	return (int)o;
}

/* one exchange in progress: the child, its pipe, what it sent back */
struct xchg {
	pid_t child;
	int rfd;		/* the pipe's read end */
	struct child_status cs;
	size_t have_cs;		/* bytes of cs read */
	char *buf;		/* REPLY_MAX + 1 */
	size_t got;		/* bytes of buf read */
};

static int sys_failed(const struct target *t, int ret, char *err,
		      size_t errlen)
{
	return err__set(err, errlen, ret, "attach to JVM %d: %s", (int)t->pid,
			strerror(-ret));
}

/* fork the child that talks to the JVM (x->child, x->rfd, x->buf set);
 * 0 or -errno (err set) */
static int spawn_exchange(const struct target *t, const char *req,
			  size_t reqlen, struct xchg *x, char *err,
			  size_t errlen)
{
	int pfd[2] = { -1, -1 }, mntfd = -1, rootfd, ret = 0;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/root", (int)t->pid);
	rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return sys_failed(t, -errno, err, errlen);
	if (t->other_mntns) {
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)t->pid);
		mntfd = open(path, O_RDONLY | O_CLOEXEC);
		if (mntfd < 0) {
			ret = sys_failed(t, -errno, err, errlen);
			goto cleanup;
		}
	}
	x->buf = malloc(REPLY_MAX + 1);
	if (!x->buf || pipe2(pfd, O_CLOEXEC)) {
		ret = sys_failed(t, x->buf ? -errno : -ENOMEM, err, errlen);
		goto cleanup;
	}
	x->child = fork();
	if (x->child < 0) {
		ret = sys_failed(t, -errno, err, errlen);
		goto cleanup;
	}
	if (x->child == 0) {
		close(pfd[0]);
		child_exchange(t, mntfd, rootfd, req, reqlen, pfd[1]);
	}
	x->rfd = pfd[0];
	pfd[0] = -1;
cleanup:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (mntfd >= 0)
		close(mntfd);
	close(rootfd);
	return ret;
}

/* one read from the pipe: the status first, then the reply; what does not
 * fit in REPLY_MAX is read and dropped. What read() returned */
static ssize_t read_some(struct xchg *x)
{
	char sink[4096];
	ssize_t r;

	if (x->have_cs < sizeof(x->cs)) {
		r = read(x->rfd, (char *)&x->cs + x->have_cs,
			 sizeof(x->cs) - x->have_cs);
		if (r > 0)
			x->have_cs += (size_t)r;
	} else if (x->got < REPLY_MAX) {
		r = read(x->rfd, x->buf + x->got, REPLY_MAX - x->got);
		if (r > 0)
			x->got += (size_t)r;
	} else {
		r = read(x->rfd, sink, sizeof(sink));
	}
	return r;
}

/* read the child's status and reply up to EOF, bounded; on failure the
 * child is killed. 0, -ETIMEDOUT or -errno (err set) */
static int read_child(const struct target *t, struct xchg *x, char *err,
		      size_t errlen)
{
	uint64_t deadline = clock__mono_ms() + EXCHANGE_MS + 2000;

	for (;;) {
		struct pollfd p = { .fd = x->rfd, .events = POLLIN };
		uint64_t now = clock__mono_ms();
		ssize_t r;

		if (now >= deadline) {
			kill(x->child, SIGKILL);
			return err__set(err, errlen, -ETIMEDOUT,
					"JVM %d did not answer within %d s; giving up",
					(int)t->pid, EXCHANGE_MS / 1000);
		}
		if (poll(&p, 1, (int)(deadline - now)) <= 0)
			continue;
		r = read_some(x);
		if (r == 0)
			return 0;
		if (r < 0 && errno != EINTR && errno != EAGAIN) {
			int ret = -errno;

			kill(x->child, SIGKILL);
			return sys_failed(t, ret, err, errlen);
		}
	}
}

/* what the child reported once it is reaped (status from waitpid); 0 when
 * the whole reply arrived, else -errno / -ATTACH_E_* (err set) */
static int child_result(const struct target *t, const struct xchg *x,
			int status, char *err, size_t errlen)
{
	const struct child_status *cs = &x->cs;

	if (x->have_cs < sizeof(*cs))
		return err__set(err, errlen, -EIO,
				"attach helper for JVM %d died", (int)t->pid);
	if (cs->err) {
		if (target_gone(t))
			return exited(t->pid, err, errlen);
		if (cs->stage == ST_CONNECT && cs->err == ECONNREFUSED)
			return err__set(err, errlen, -cs->err,
					"JVM %d refused the connection on /tmp/.java_pid%d (stale socket of an exited JVM?)",
					(int)t->pid, (int)t->nspid);
		if (cs->stage == ST_CONNECT && cs->err == ENOENT)
			return err__set(err, errlen, -ATTACH_E_EXITED,
					"the attach socket of JVM %d vanished (JVM exiting?)",
					(int)t->pid);
		return err__set(err, errlen, -cs->err,
				"attach to JVM %d failed %s: %s%s", (int)t->pid,
				stage_names[cs->stage >= 0 && cs->stage <= ST_RECV ?
					    cs->stage : 0],
				strerror(cs->err),
				cs->err == EPERM || cs->err == EACCES ?
				" (run as root or as the JVM's user)" : "");
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (target_gone(t))
			return exited(t->pid, err, errlen);
		return err__set(err, errlen, -EIO,
				"reading the reply of JVM %d failed (timeout or reset)",
				(int)t->pid);
	}
	return 0;
}

/* run the exchange in a child; the whole reply into *reply (malloc'ed) */
static int exchange(const struct target *t, const char *req, size_t reqlen,
		    char **reply, size_t *replylen, char *err, size_t errlen)
{
	struct xchg x = { .child = -1, .rfd = -1 };
	int ret, status;

	*reply = NULL;
	*replylen = 0;
	ret = spawn_exchange(t, req, reqlen, &x, err, errlen);
	if (ret)
		goto cleanup;
	ret = read_child(t, &x, err, errlen);
	if (ret)
		goto cleanup;
	reap(x.child, &status);
	x.child = -1;
	ret = child_result(t, &x, status, err, errlen);
	if (ret)
		goto cleanup;
	x.buf[x.got] = '\0';
	*reply = x.buf;
	*replylen = x.got;
	x.buf = NULL;
cleanup:
	if (x.child > 0)
		reap(x.child, &status);
	free(x.buf);
	if (x.rfd >= 0)
		close(x.rfd);
	return ret;
}

static bool parse_int(const char *p, const char *end, int *out,
		      const char **after)
{
	long v = 0;
	bool neg = false, digits = false;

	if (p < end && (*p == '-' || *p == '+'))
		neg = *p++ == '-';
	while (p < end && isdigit((unsigned char)*p)) {
		v = v * 10 + (*p++ - '0');
		if (v > INT32_MAX)
			return false;
		digits = true;
	}
	if (!digits)
		return false;
	*out = neg ? -(int)v : (int)v;
	if (after)
		*after = p;
	return true;
}

int attach__parse_reply(const char *buf, size_t len, int *rc,
			const char **rest, size_t *restlen)
{
	const char *end = buf + len, *p;

	if (!parse_int(buf, end, rc, &p))
		return -ATTACH_E_PROTO;
	/* the code line ends with \n (or the reply ends right there) */
	while (p < end && (*p == ' ' || *p == '\r'))
		p++;
	if (p < end && *p != '\n')
		return -ATTACH_E_PROTO;
	if (p < end)
		p++;
	*rest = p;
	*restlen = (size_t)(end - p);
	return 0;
}

/* the first line of text, printable, into msg */
static void first_line(const char *text, size_t len, char *msg, size_t msglen)
{
	size_t i, o = 0;

	if (!msglen)
		return;
	while (len && isspace((unsigned char)*text))
		text++, len--;
	for (i = 0; i < len && text[i] != '\n' && o + 1 < msglen; i++)
		msg[o++] = isprint((unsigned char)text[i]) ? text[i] : '?';
	msg[o] = '\0';
}

/* all of text on one printable line, lines joined by "; " */
static void one_line(const char *text, size_t len, char *msg, size_t msglen)
{
	size_t i, o = 0;
	bool sep = false;

	if (!msglen)
		return;
	for (i = 0; i < len && o + 3 < msglen; i++) {
		char c = text[i];

		if (c == '\n' || c == '\r') {
			sep = o > 0;
			continue;
		}
		if (sep) {
			msg[o++] = ';';
			msg[o++] = ' ';
			sep = false;
		}
		msg[o++] = isprint((unsigned char)c) ? c : '?';
	}
	msg[o] = '\0';
}

int attach__parse_load_reply(const char *text, size_t len, int *agent_rc,
			     char *msg, size_t msglen)
{
	static const char key[] = "return code:";
	const char *p = text, *end = text + len, *after;

	if (msglen)
		msg[0] = '\0';
	/* JDK 21+: "return code: N" on some line */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		if ((size_t)(le - p) > sizeof(key) - 1 &&
		    !memcmp(p, key, sizeof(key) - 1)) {
			const char *q = p + sizeof(key) - 1;

			while (q < le && *q == ' ')
				q++;
			if (parse_int(q, le, agent_rc, NULL))
				return 0;
		}
		p = le + 1;
	}
	/* JDK 9..20: the agent's return code alone on the first line */
	p = text;
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\r'))
		p++;
	if (parse_int(p, end, agent_rc, &after)) {
		while (after < end && (*after == ' ' || *after == '\r'))
			after++;
		if (after == end || *after == '\n')
			return 0;
	}
	first_line(text, len, msg, msglen);
	return -ATTACH_E_PROTO;
}

int attach__command_rc(pid_t pid, const char *cmd, const char *args[3],
		       int *jvm_rc, char *out, size_t outlen, char *err,
		       size_t errlen)
{
	struct target t = { .pidfd = -1, .tmpfd = -1 };
	char req[2 + CMD_LEN_MAX + 1 + 3 * (ARG_LEN_MAX + 1)];
	char *reply = NULL;
	const char *rest;
	size_t rlen, restlen;
	int ret, reqlen, rc;

	if (outlen)
		out[0] = '\0';
	if (errlen)
		err[0] = '\0';
	reqlen = build_request(cmd, args, req, sizeof(req), err, errlen);
	if (reqlen < 0)
		return reqlen;
	ret = target_open(&t, pid, err, errlen);
	if (ret)
		return ret;
	ret = start_listener(&t, err, errlen);
	if (ret)
		goto cleanup;
	ret = exchange(&t, req, (size_t)reqlen, &reply, &rlen, err, errlen);
	if (ret == -ECONNREFUSED) {
		char name[32];

		/* a socket left by an earlier JVM with the same pid (pid 1
		 * of a restarted container): remove it, trigger afresh */
		snprintf(name, sizeof(name), ".java_pid%d", (int)t.nspid);
		unlinkat(t.tmpfd, name, 0);
		ret = start_listener(&t, err, errlen);
		if (!ret)
			ret = exchange(&t, req, (size_t)reqlen, &reply, &rlen,
				       err, errlen);
	}
	if (ret)
		goto cleanup;
	if (attach__parse_reply(reply, rlen, &rc, &rest, &restlen)) {
		char line[128];

		if (!rlen) {
			/* HotSpot always answers; silence means it is going */
			if (target_gone(&t))
				ret = exited(pid, err, errlen);
			else
				ret = err__set(err, errlen, -ATTACH_E_EXITED,
					       "JVM %d closed the connection without a reply (exiting?)",
					       (int)pid);
			goto cleanup;
		}
		first_line(reply, rlen, line, sizeof(line));
		ret = err__set(err, errlen, -ATTACH_E_PROTO,
			       "JVM %d sent an unexpected reply: '%s'", (int)pid,
			       line);
		goto cleanup;
	}
	if (jvm_rc)
		*jvm_rc = rc;
	if (outlen) {
		size_t n = restlen < outlen - 1 ? restlen : outlen - 1;

		memcpy(out, rest, n);
		out[n] = '\0';
	}
	if (rc != 0) {
		char line[256];

		one_line(rest, restlen, line, sizeof(line));
		ret = err__set(err, errlen, -ATTACH_E_REFUSED,
			       "JVM %d rejected '%s' (code %d)%s%s", (int)pid,
			       cmd, rc, line[0] ? ": " : "", line);
	}
cleanup:
	free(reply);
	target_close(&t);
	return ret;
}

int attach__command(pid_t pid, const char *cmd, const char *args[3],
		    char *out, size_t outlen, char *err, size_t errlen)
{
	return attach__command_rc(pid, cmd, args, NULL, out, outlen, err,
				  errlen);
}

/* ---- agent staging --------------------------------------------------------- */

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* whether fd's content equals the host file's (both fds at offset 0) */
static bool same_content(int a, int b, off_t size)
{
	char x[8192], y[8192];
	off_t done = 0;

	while (done < size) {
		ssize_t ra = pread(a, x, sizeof(x), done);
		ssize_t rb = pread(b, y, sizeof(y), done);

		if (ra <= 0 || ra != rb || memcmp(x, y, (size_t)ra))
			return false;
		done += ra;
	}
	return true;
}

static int copy_fd(int from, int to, off_t size)
{
	char buf[65536];
	off_t done = 0;

	while (done < size) {
		ssize_t r = pread(from, buf, sizeof(buf), done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		if (write_all(to, buf, (size_t)r))
			return -errno;
		done += r;
	}
	return 0;
}

/* one copy of the agent into a directory of the target's root */
struct stage_op {
	uid_t uid;
	int rootfd;		/* /proc/PID/root */
	const char *dir;	/* as the target sees it */
	int src;		/* the host file */
	const struct stat *sst;
};

/*
 * In the target's rights (as_target): copy the host file into dir of the
 * target as asgst-agent-<uid>.so. A file of the same content already there
 * is reused (so a second attach dlopens the same inode: a no-op);
 * otherwise the copy is written under a temporary name and renamed, so a
 * library mapped by another JVM is never changed under it. -EROFS: dir is
 * mounted noexec or read-only (dlopen would fail).
 */
static int stage_copy(void *arg)
{
	const struct stage_op *op = arg;
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char name[64], tmp[80];
	struct statvfs vfs;
	int dirfd, fd = -1, ret;
	struct stat st;

	dirfd = (int)syscall(SYS_openat2, op->rootfd, op->dir + 1, &how,
			     sizeof(how));
	if (dirfd < 0)
		return -errno;
	/* dlopen fails on noexec mounts (Docker's /dev/shm) */
	if (fstatvfs(dirfd, &vfs) || (vfs.f_flag & ST_NOEXEC) ||
	    (vfs.f_flag & ST_RDONLY)) {
		ret = -EROFS;
		goto cleanup;
	}
	snprintf(name, sizeof(name), "asgst-agent-%u.so", (unsigned)op->uid);
	/* anyone may have put something there: a FIFO must not stall us */
	fd = safe_open(dirfd, name, SAFE_OPEN_NOFOLLOW,
		       (uint64_t)op->sst->st_size, &st, NULL, 0);
	if (fd >= 0) {
		bool reuse = st.st_size == op->sst->st_size &&
			     st.st_uid == op->uid && st.st_nlink == 1 &&
			     !(st.st_mode & 022) &&
			     same_content(fd, op->src, op->sst->st_size);

		close(fd);
		fd = -1;
		if (reuse) {
			ret = 0;
			goto cleanup;
		}
	}
	snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid());
	unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		goto cleanup;
	}
	ret = copy_fd(op->src, fd, op->sst->st_size);
	if (!ret && fchmod(fd, 0644))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	fd = -1;
	if (!ret && renameat(dirfd, tmp, dirfd, name))
		ret = -errno;
	if (ret)
		unlinkat(dirfd, tmp, 0);
cleanup:
	if (fd >= 0)
		close(fd);
	close(dirfd);
	return ret;
}

/* the host's agent file, as the target would open it */
struct visible_op {
	int rootfd;
	const char *path;	/* absolute */
	const struct stat *hst;
};

/*
 * In the target's rights (as_target): 0 when the target can read the
 * host's agent file at the same path in its root (the same file: no copy
 * needed), -ENOENT when another file or none is there, else the open's
 * error (-EACCES: a folder it may not enter, such as a 0700 home).
 */
static int agent_visible(void *arg)
{
	const struct visible_op *op = arg;
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	struct stat st;
	int fd, ret;

	fd = (int)syscall(SYS_openat2, op->rootfd, op->path + 1, &how,
			  sizeof(how));
	if (fd < 0)
		return -errno;
	ret = fstat(fd, &st) ? -errno :
	      same_file(&st, op->hst) ? 0 : -ENOENT;
	close(fd);
	return ret;
}

int attach__stage_agent(pid_t pid, const char *agent_path, char *target_path,
			size_t tplen, char *err, size_t errlen)
{
	static const char *const dirs[] = { "/tmp", "/dev/shm" };
	struct target t = { .pidfd = -1, .tmpfd = -1 };
	char host[PATH_MAX], path[64];
	struct visible_op vis;
	struct stat hst;
	int src = -1, rootfd = -1, ret;
	size_t i;

	if (!realpath(agent_path, host))
		return err__set(err, errlen, -errno, "agent library %s: %s",
				agent_path, strerror(errno));
	src = open(host, O_RDONLY | O_CLOEXEC);
	if (src < 0 || fstat(src, &hst) || !S_ISREG(hst.st_mode)) {
		ret = err__set(err, errlen, src < 0 ? -errno : -EINVAL,
			       "agent library %s: %s", host,
			       src < 0 ? strerror(errno) : "not a regular file");
		goto cleanup;
	}
	ret = target_open(&t, pid, err, errlen);
	if (ret)
		goto cleanup;
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		ret = err__set(err, errlen, -errno,
			       "cannot open the root of JVM %d: %s", (int)pid,
			       strerror(errno));
		goto cleanup;
	}
	/* the same file inside the target's root, and the JVM's user may
	 * read it: pass the path as is */
	vis = (struct visible_op){ rootfd, host, &hst };
	if (!as_target(&t, agent_visible, &vis)) {
		if (snprintf(target_path, tplen, "%s", host) >= (int)tplen)
			ret = -ENAMETOOLONG;
		goto cleanup;
	}
	ret = -ENOENT;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		struct stage_op op = { t.uid, rootfd, dirs[i], src, &hst };

		ret = as_target(&t, stage_copy, &op);
		if (ret)
			continue;
		if (snprintf(target_path, tplen, "%s/asgst-agent-%u.so",
			     dirs[i], (unsigned)t.uid) >= (int)tplen)
			ret = -ENAMETOOLONG;
		break;
	}
	if (ret)
		err__set(err, errlen, ret,
			 "cannot copy the agent into the root of JVM %d (/tmp, /dev/shm) as its user (uid %u): %s",
			 (int)pid, (unsigned)t.uid, strerror(-ret));
cleanup:
	if (rootfd >= 0)
		close(rootfd);
	if (src >= 0)
		close(src);
	target_close(&t);
	return ret;
}

static int agent_failed(pid_t pid, int agent_rc, char *err, size_t errlen)
{
	if (agent_rc == CM_AGENT_RC_NOT_LIVE)
		return err__set(err, errlen, -ATTACH_E_AGENT,
				"JVM %d was still starting after %d s (no JVMTI environment before its live phase): attach again once it is up",
				(int)pid, NOT_LIVE_WAIT_MS / 1000);
	return err__set(err, errlen, -ATTACH_E_AGENT,
			"agent failed to start in JVM %d (Agent_OnAttach returned %d); see the JVM's stderr",
			(int)pid, agent_rc);
}

/* one "load" of the staged agent at tpath: 0 with *agent_rc set, else
 * -errno / -ATTACH_E_* with err set */
static int load_once(pid_t pid, const char *tpath, const char *options,
		     int *agent_rc, char *reply, size_t replylen, char *out,
		     size_t outlen, char *err, size_t errlen)
{
	char msg[256];
	const char *args[3];
	int ret, jvm_rc = 0;

	args[0] = tpath;
	args[1] = "true";	/* the path is absolute */
	args[2] = options ? options : "";
	*agent_rc = 0;
	ret = attach__command_rc(pid, "load", args, &jvm_rc, reply, replylen,
				 err, errlen);
	if (outlen)
		snprintf(out, outlen, "%s", reply);
	/* JDK 21+ refuse it themselves until then (JvmtiAgentList) */
	if ((ret == 0 || ret == -ATTACH_E_REFUSED) &&
	    strstr(reply, "only permitted in the live phase")) {
		*agent_rc = CM_AGENT_RC_NOT_LIVE;
		return 0;
	}
	if (ret == -ATTACH_E_REFUSED) {
		/* JDK 21+ answer a failing Agent_OnAttach with a non-zero
		 * code and "return code: N"; others say why it did not load */
		if (!attach__parse_load_reply(reply, strlen(reply), agent_rc,
					      msg, sizeof(msg)) && *agent_rc)
			return 0;
		return ret;
	}
	if (ret)
		return ret;
	if (attach__parse_load_reply(reply, strlen(reply), agent_rc, msg,
				     sizeof(msg))) {
		/* JDK 25 answers a failed dlopen with code 0 and "<path> was
		 * not loaded." plus dlerror(): one line with both */
		one_line(reply, strlen(reply), msg, sizeof(msg));
		return err__set(err, errlen,
				strstr(reply, "not loaded") ? -ATTACH_E_AGENT :
							      -ATTACH_E_PROTO,
				"JVM %d did not load the agent: %s", (int)pid,
				msg[0] ? msg : "empty reply");
	}
	return 0;
}

int attach__load_agent(pid_t pid, const char *agent_path, const char *options,
		       char *out, size_t outlen, char *err, size_t errlen)
{
	char tpath[PATH_MAX], *reply = NULL;
	uint64_t until;
	int ret, agent_rc = 0;

	if (outlen)
		out[0] = '\0';
	ret = attach__stage_agent(pid, agent_path, tpath, sizeof(tpath), err,
				  errlen);
	if (ret)
		return ret;
	if (options && strlen(options) > ARG_LEN_MAX)
		return err__set(err, errlen, -E2BIG,
				"agent options longer than %d bytes",
				ARG_LEN_MAX);
	reply = malloc(16384);
	if (!reply)
		return err__set(err, errlen, -ENOMEM, "out of memory");
	/*
	 * A JVM whose attach listener is up may still be starting (a system
	 * class loader of its own runs then): JDK 21+ refuse the load, older
	 * ones load the agent, which finds no JVMTI environment, says
	 * CM_AGENT_RC_NOT_LIVE and is unloaded. Asked
	 * again until the JVM is up, within NOT_LIVE_WAIT_MS.
	 */
	until = clock__mono_ns() + (uint64_t)NOT_LIVE_WAIT_MS * 1000000ull;
	for (;;) {
		ret = load_once(pid, tpath, options, &agent_rc, reply, 16384,
				out, outlen, err, errlen);
		if (ret || agent_rc != CM_AGENT_RC_NOT_LIVE ||
		    clock__mono_ns() >= until)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = NOT_LIVE_RETRY_MS *
							 1000000l }, NULL);
	}
	if (!ret && agent_rc != 0)
		ret = agent_failed(pid, agent_rc, err, errlen);
	free(reply);
	return ret;
}

/* the agent library: $ASGST_AGENT, else beside /proc/self/exe */
int attach__find_agent(char *out, size_t len, char *err, size_t errlen)
{
	static const char *const rel[] = {
		"libasgst-agent.so", "../lib/asgst-bpf/libasgst-agent.so",
	};
	const char *env = getenv("ASGST_AGENT");
	char exe[PATH_MAX], *slash;
	ssize_t n;
	size_t i;

	if (env && *env) {
		if (access(env, R_OK))
			return err__set(err, errlen, -1, "ASGST_AGENT=%s: %s",
					env, strerror(errno));
		snprintf(out, len, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return err__set(err, errlen, -1, "cannot find my own binary: %s",
				strerror(errno));
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		struct stat st;

		if (snprintf(out, len, "%s/%s", exe, rel[i]) >= (int)len)
			continue;
		if (!stat(out, &st) && S_ISREG(st.st_mode))
			return 0;
	}
	return err__set(err, errlen, -1,
			"agent library not found (looked for %s/libasgst-agent.so and %s/../lib/asgst-bpf/libasgst-agent.so); build it or set ASGST_AGENT",
			exe, exe);
}

