// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a recording samples, and whether it is still there: --cgroup and
 * --container turned into the sampler's filter, -- COMMAND forked and held
 * until sampling is on (the fork/exec handshake), and the end of the
 * command or of every -p process noticed (by pidfds).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile/filter.h"
#include "profile/pipeline.h"
#include "recorder/recorder_int.h"

/* how often -p's processes are looked at */
#define ALIVE_EVERY_NS	250000000ull

static int cgroup_id_of(const char *path, uint64_t *id)
{
	char full[PATH_MAX];
	struct {
		struct file_handle fh;
		uint64_t cgid;
	} h;
	int mount_id;

	if (path[0] == '/')
		snprintf(full, sizeof(full), "%s", path);
	else
		snprintf(full, sizeof(full), "/sys/fs/cgroup/%s", path);
	h.fh.handle_bytes = sizeof(h.cgid);
	if (name_to_handle_at(AT_FDCWD, full, &h.fh, &mount_id, 0) < 0)
		return -errno;
	*id = h.cgid;
	return 0;
}

/*
 * --container: its processes now, and the cgroup v2 that holds them; the
 * kernel records that cgroup's tasks (new ones too), the pipeline keeps
 * those whose cgroup path names the container. Without such a cgroup
 * (cgroup v1, or its processes spread over cgroups shared with others)
 * every process is sampled and the pipeline alone chooses.
 */
static int open_container(struct recorder *r)
{
	struct container_target *t = &r->ct;
	struct filter *f = r->o.filter;
	char err[512];

	if (container__resolve(f->container, t, err, sizeof(err))) {
		recorder_say(r, "%s", err);
		return 2;
	}
	/* the full id: a container started later with the same prefix is
	 * not this one */
	memcpy(f->container, t->id, sizeof(t->id));
	/* processes that come later: the same owner's cgroups only */
	f->container_owner_known = true;
	f->container_owner = t->owner;
	r->co.filter_mode = t->have_cgroup ? ASGST_FILTER_CGROUP :
					     ASGST_FILTER_ALL;
	r->co.cgroup_id = t->cgroup_id;
	if (r->o.quiet)
		return 0;
	if (t->ignored)
		fprintf(stderr, "asgst-bpf: container %.12s: %zu processes "
			"left out: their cgroup names the container but is "
			"uid %u's, not the runtime's (uid %u)\n", t->id,
			t->ignored, (unsigned)t->ignored_owner,
			(unsigned)t->owner);
	if (t->have_cgroup)
		fprintf(stderr, "asgst-bpf: container %.12s: %zu processes, "
			"cgroup %s\n", t->id, t->npids, t->cgroup);
	else
		fprintf(stderr, "asgst-bpf: container %.12s: %zu processes, no "
			"cgroup v2 of its own: every process is sampled, the "
			"container's kept\n", t->id, t->npids);
	return 0;
}

/*
 * Fork the command stopped on a pipe; it execs once the sampler is on. A
 * second, close-on-exec pipe tells the parent when the exec happened (EOF)
 * or why it failed (the errno).
 */
static pid_t spawn_stopped(char **cmd, int *go_fd, int *exec_fd)
{
	int p[2], e[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	if (pipe2(e, O_CLOEXEC)) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		close(e[0]);
		close(e[1]);
		return -errno;
	}
	if (pid == 0) {
		char c;
		int err;

		close(p[1]);
		close(e[0]);
		if (read(p[0], &c, 1) != 1)
			_exit(126);	/* the recorder went away */
		execvp(cmd[0], cmd);
		err = errno;
		if (write(e[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(p[0]);
	close(e[1]);
	*go_fd = p[1];
	*exec_fd = e[0];
	return pid;
}

/* let the command go; 0 once it exec'd, else the exec's -errno */
static int start_command(int go_fd, int exec_fd)
{
	int err = 0;
	ssize_t n;

	if (write(go_fd, "g", 1) != 1)
		return -errno;
	do
		n = read(exec_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(err) ? -err : 0;
}

/* the sampler's filter from the targets; a command forked, held */
int recorder_targets_open(struct recorder *r)
{
	struct capture_opts *co = &r->co;
	int rc;

	if (r->o.cgroup) {
		rc = cgroup_id_of(r->o.cgroup, &co->cgroup_id);
		if (rc) {
			recorder_say(r, "--cgroup %s: %s (give a cgroup v2 "
				     "directory)", r->o.cgroup, strerror(-rc));
			return 2;
		}
	}
	if (r->o.container && (rc = open_container(r)))
		return rc;
	if (!r->o.cmd)
		return 0;
	r->tg.child = spawn_stopped(r->o.cmd, &r->tg.go_fd, &r->tg.exec_fd);
	if (r->tg.child < 0) {
		recorder_say(r, "cannot start '%s': %s", r->o.cmd[0],
			     strerror((int)-r->tg.child));
		return 1;
	}
	co->filter_mode = ASGST_FILTER_PIDS;
	co->pids = &r->tg.child;
	co->npids = 1;
	co->follow_children = true;
	return 0;
}

/* sampling is on: let the command exec */
int recorder_targets_start(struct recorder *r)
{
	struct targets *t = &r->tg;
	int rc;

	if (t->go_fd < 0)
		return 0;
	rc = start_command(t->go_fd, t->exec_fd);
	close(t->go_fd);
	close(t->exec_fd);
	t->go_fd = t->exec_fd = -1;
	if (rc) {
		recorder_say(r, "cannot run '%s': %s", r->o.cmd[0],
			     strerror(-rc));
		waitpid(t->child, NULL, 0);
		t->child_done = true;
		return 1;
	}
	/* look at it now that it is the command, not our fork */
	pipeline__prime(r->pl, t->child);
	return 0;
}

/* a zombie (exited, not reaped by its parent yet) counts as gone */
static bool is_alive(pid_t pid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT && errno != ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the state follows "(comm)" */
	return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/*
 * A pidfd turns readable when its process has exited (a zombie too): one
 * poll instead of reading /proc/PID/stat, which the kernel makes by
 * summing every thread of the process (tens of us for a JVM), four times
 * a second. Opened at the first look: a pid that went and came back
 * before that passes for the target.
 */
static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

static bool any_alive(const pid_t *pids, size_t n, int **pidfds)
{
	if (!*pidfds && (*pidfds = malloc(n * sizeof(**pidfds))))
		for (size_t i = 0; i < n; i++)
			(*pidfds)[i] = is_alive(pids[i]) ? pidfd_of(pids[i]) : -1;
	for (size_t i = 0; i < n; i++) {
		struct pollfd pfd = { .fd = *pidfds ? (*pidfds)[i] : -1,
				      .events = POLLIN };

		if (pfd.fd >= 0 ? poll(&pfd, 1, 0) == 0 : is_alive(pids[i]))
			return true;
	}
	return false;
}

/* the command exited, or (-p) every target has: so has the recording */
bool recorder_targets_gone(struct recorder *r, uint64_t now)
{
	struct targets *t = &r->tg;
	int status;

	if (t->child > 0 && !t->child_done &&
	    waitpid(t->child, &status, WNOHANG) == t->child) {
		t->child_done = true;
		return true;
	}
	if (!r->o.npids || now - t->last_alive < ALIVE_EVERY_NS)
		return false;
	t->last_alive = now;
	if (any_alive(r->o.pids, r->o.npids, &t->pidfds))
		return false;
	if (!r->o.quiet)
		recorder_say(r, "the target processes exited");
	return true;
}

void recorder_targets_close(struct recorder *r)
{
	struct targets *t = &r->tg;

	if (t->go_fd >= 0)
		close(t->go_fd);	/* the child sees EOF and exits */
	if (t->exec_fd >= 0)
		close(t->exec_fd);
	t->go_fd = t->exec_fd = -1;
	if (t->child > 0 && !t->child_done) {
		/* the recording is over (time, Ctrl-C or error): so is the
		 * command */
		kill(t->child, SIGTERM);
		waitpid(t->child, NULL, 0);
		t->child_done = true;
	}
	for (size_t i = 0; t->pidfds && i < r->o.npids; i++)
		if (t->pidfds[i] >= 0)
			close(t->pidfds[i]);
	free(t->pidfds);
	t->pidfds = NULL;
	container_target__free(&r->ct);
}
