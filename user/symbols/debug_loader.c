// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The debug-info thread (debug_loader.h). Jobs go in a FIFO, results come
 * back in another; a mutex guards both, a condition wakes each side. The
 * thread touches only what a job gives it (its fds) and libdw objects it
 * makes; libelf and libdw keep their error state per thread.
 */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbols/debug_loader.h"
#include "symbols/dwarf_lines.h"
#include "util/clock.h"

struct dl_node {
	struct dl_node *next;
	struct debug_job job;
	struct debug_result res;
};

struct debug_loader {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work;		/* a job, or stopping */
	pthread_cond_t done;		/* a result */
	struct dl_node *jobs, **jobs_tail;
	struct dl_node *results, **results_tail;
	size_t pending;			/* submitted, not polled */
	bool fetch_on;
	uint32_t timeout_s, max_fetches;
	atomic_bool stopping;
	atomic_bool fetching;
	uint64_t fetch_deadline_ns;	/* the thread's own */
	struct debug_loader_stats stats;	/* under lock */
};

static void node_free(struct dl_node *n)
{
	if (!n)
		return;
	if (n->job.fd >= 0)
		close(n->job.fd);
	if (n->job.debug_fd >= 0)
		close(n->job.debug_fd);
	if (n->res.fetched_fd >= 0)
		close(n->res.fetched_fd);
	dwarf_lines__free(n->res.dw);
	free(n);
}

/*
 * libdebuginfod through dlopen, opened when fetching is asked for: linked,
 * it and libcurl's thirty libraries cost every run some 5 ms of start-up.
 */
static struct {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	void (*set_user_data)(debuginfod_client *c, void *d);
	void *(*get_user_data)(const debuginfod_client *c);
	void (*set_progressfn)(debuginfod_client *c, debuginfod_progressfn_t f);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id,
			      int id_len, char **path);
} dfd;
static pthread_once_t dfd_once = PTHREAD_ONCE_INIT;
static char dfd_err[256];

#define DFD_SONAME	"libdebuginfod.so.1"

static bool dfd_sym(void *h, const char *name, void *slot)
{
	*(void **)slot = dlsym(h, name);
	if (!*(void **)slot)
		snprintf(dfd_err, sizeof(dfd_err), "%s has no %s", DFD_SONAME,
			 name);
	return *(void **)slot != NULL;
}

static void dfd_open(void)
{
	void *h = dlopen(DFD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(dfd_err, sizeof(dfd_err),
			 "cannot load %s (install libdebuginfod1): %s",
			 DFD_SONAME, dlerror());
		return;
	}
	/* kept open: clients may run until the process ends */
	if (!dfd_sym(h, "debuginfod_begin", &dfd.begin) ||
	    !dfd_sym(h, "debuginfod_end", &dfd.end) ||
	    !dfd_sym(h, "debuginfod_set_user_data", &dfd.set_user_data) ||
	    !dfd_sym(h, "debuginfod_get_user_data", &dfd.get_user_data) ||
	    !dfd_sym(h, "debuginfod_set_progressfn", &dfd.set_progressfn) ||
	    !dfd_sym(h, "debuginfod_find_debuginfo", &dfd.find_debuginfo))
		dfd.begin = NULL;
}

/* libdebuginfod calls this as the transfer goes: nonzero aborts it */
static int fetch_progress(debuginfod_client *c, long a, long b)
{
	struct debug_loader *l = dfd.get_user_data(c);

	(void)a;
	(void)b;
	return atomic_load(&l->stopping) ||
	       clock__mono_ns() > l->fetch_deadline_ns;
}

/* the debug file of build-id from the servers: its fd, or -errno */
static int fetch(struct debug_loader *l, const struct debug_job *j,
		 uint64_t *ns)
{
	debuginfod_client *c;
	uint64_t t0 = clock__mono_ns();
	int fd;

	pthread_once(&dfd_once, dfd_open);
	if (!dfd.begin)
		return -ENOSYS;
	c = dfd.begin();
	if (!c)
		return -ENOMEM;
	dfd.set_user_data(c, l);
	dfd.set_progressfn(c, fetch_progress);
	l->fetch_deadline_ns = t0 + (uint64_t)l->timeout_s * 1000000000ull;
	atomic_store(&l->fetching, true);
	fd = dfd.find_debuginfo(c, j->build_id, (int)j->build_id_len, NULL);
	atomic_store(&l->fetching, false);
	dfd.end(c);
	*ns = clock__mono_ns() - t0;
	return fd;
}

static void run_job(struct debug_loader *l, struct dl_node *n)
{
	struct debug_job *j = &n->job;
	struct debug_result *r = &n->res;
	bool ask = false;
	uint64_t t0;

	r->key = j->key;
	r->fetched_fd = -1;
	r->err = ENOENT;
	t0 = clock__mono_ns();
	if (j->fd >= 0 && (r->dw = dwarf_lines__open(j->fd, j->max_bytes)))
		goto done;
	if (j->fd >= 0)
		r->err = errno;
	if (r->err == ENOENT && j->debug_fd >= 0) {
		r->dw = dwarf_lines__open(j->debug_fd, j->max_bytes);
		if (r->dw)
			goto done;
		r->err = errno;
	}
	r->read_ns = clock__mono_ns() - t0;
	/* no DWARF here: the servers, once a build-id, within the cap */
	if (r->err != ENOENT || !l->fetch_on || j->build_id_len < 2 ||
	    atomic_load(&l->stopping))
		return;
	pthread_mutex_lock(&l->lock);
	if (l->stats.fetches < l->max_fetches) {
		l->stats.fetches++;
		ask = true;
	} else {
		l->stats.fetch_capped++;
	}
	pthread_mutex_unlock(&l->lock);
	if (!ask)
		return;
	r->fetched_fd = fetch(l, j, &r->fetch_ns);
	pthread_mutex_lock(&l->lock);
	l->stats.fetch_ns += r->fetch_ns;
	if (r->fetched_fd >= 0)
		l->stats.fetched++;
	else
		l->stats.fetch_failed++;
	pthread_mutex_unlock(&l->lock);
	if (r->fetched_fd < 0) {
		r->err = -r->fetched_fd;
		r->fetched_fd = -1;
		return;
	}
	t0 = clock__mono_ns();
	r->dw = dwarf_lines__open(r->fetched_fd, j->max_bytes);
	r->err = r->dw ? 0 : errno;
	r->read_ns += clock__mono_ns() - t0;
	return;
done:
	r->err = 0;
	r->read_ns = clock__mono_ns() - t0;
}

static void *loader_main(void *arg)
{
	struct debug_loader *l = arg;

	pthread_mutex_lock(&l->lock);
	for (;;) {
		struct dl_node *n;

		while (!l->jobs && !atomic_load(&l->stopping))
			pthread_cond_wait(&l->work, &l->lock);
		if (atomic_load(&l->stopping))
			break;
		n = l->jobs;
		l->jobs = n->next;
		if (!l->jobs)
			l->jobs_tail = &l->jobs;
		pthread_mutex_unlock(&l->lock);
		run_job(l, n);
		/* the fds are read: nothing goes through them again */
		if (n->job.fd >= 0)
			close(n->job.fd);
		if (n->job.debug_fd >= 0)
			close(n->job.debug_fd);
		n->job.fd = n->job.debug_fd = -1;
		pthread_mutex_lock(&l->lock);
		n->next = NULL;
		*l->results_tail = n;
		l->results_tail = &n->next;
		l->stats.done++;
		pthread_cond_broadcast(&l->done);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* dir made if missing; 0 when it is ours alone, else -errno */
static int own_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022))
		return -EPERM;
	return 0;
}

const char *debug_loader__env(const char *urls, uint64_t max_fetch_bytes,
			      char *err, size_t errlen)
{
	char buf[32];
	const char *u;
	int r;

	if (errlen)
		err[0] = '\0';
	if (urls && setenv("DEBUGINFOD_URLS", urls, 1))
		goto fail;
	u = getenv("DEBUGINFOD_URLS");
	if (!u || !u[0])
		return NULL;
	pthread_once(&dfd_once, dfd_open);
	if (!dfd.begin) {
		snprintf(err, errlen, "debuginfod: %s", dfd_err);
		errno = ENOSYS;
		return NULL;
	}
	if (!getenv("DEBUGINFOD_CACHE_PATH")) {
		/* /var/cache/asgst-bpf, then its debuginfod folder */
		char parent[] = DEBUG_LOADER_CACHE;

		*strrchr(parent, '/') = '\0';
		if ((r = own_dir(parent)) || (r = own_dir(DEBUG_LOADER_CACHE))) {
			snprintf(err, errlen,
				 "debuginfod cache %s: %s (set DEBUGINFOD_CACHE_PATH to a folder of root's)",
				 DEBUG_LOADER_CACHE, strerror(-r));
			errno = -r;
			return NULL;
		}
		if (setenv("DEBUGINFOD_CACHE_PATH", DEBUG_LOADER_CACHE, 1))
			goto fail;
	}
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)
		 (max_fetch_bytes ? max_fetch_bytes : 1ull << 30));
	if (!getenv("DEBUGINFOD_MAXSIZE") &&
	    setenv("DEBUGINFOD_MAXSIZE", buf, 1))
		goto fail;
	return getenv("DEBUGINFOD_URLS");
fail:
	snprintf(err, errlen, "debuginfod: %s", strerror(errno));
	return NULL;
}

struct debug_loader *debug_loader__new(const struct debug_loader_opts *o)
{
	struct debug_loader *l = calloc(1, sizeof(*l));
	int err;

	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	l->jobs_tail = &l->jobs;
	l->results_tail = &l->results;
	l->fetch_on = o && o->urls && o->urls[0];
	l->timeout_s = o && o->fetch_timeout_s ? o->fetch_timeout_s : 10;
	l->max_fetches = o && o->max_fetches ? o->max_fetches : 256;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->work, NULL);
	pthread_cond_init(&l->done, NULL);
	err = pthread_create(&l->thread, NULL, loader_main, l);
	if (err) {
		pthread_cond_destroy(&l->work);
		pthread_cond_destroy(&l->done);
		pthread_mutex_destroy(&l->lock);
		free(l);
		errno = err;
		return NULL;
	}
	return l;
}

void debug_loader__free(struct debug_loader *l)
{
	struct dl_node *n;

	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	atomic_store(&l->stopping, true);
	pthread_cond_broadcast(&l->work);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->thread, NULL);
	while ((n = l->jobs)) {
		l->jobs = n->next;
		node_free(n);
	}
	while ((n = l->results)) {
		l->results = n->next;
		node_free(n);
	}
	pthread_cond_destroy(&l->work);
	pthread_cond_destroy(&l->done);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

int debug_loader__submit(struct debug_loader *l, const struct debug_job *j)
{
	struct dl_node *n = calloc(1, sizeof(*n));

	if (!n) {
		if (j->fd >= 0)
			close(j->fd);
		if (j->debug_fd >= 0)
			close(j->debug_fd);
		return -ENOMEM;
	}
	n->job = *j;
	if (n->job.build_id_len > sizeof(n->job.build_id))
		n->job.build_id_len = 0;
	n->res.fetched_fd = -1;
	pthread_mutex_lock(&l->lock);
	*l->jobs_tail = n;
	l->jobs_tail = &n->next;
	l->pending++;
	l->stats.jobs++;
	pthread_cond_signal(&l->work);
	pthread_mutex_unlock(&l->lock);
	return 0;
}

size_t debug_loader__poll(struct debug_loader *l, struct debug_result *out,
			  size_t max, uint64_t wait_ns)
{
	size_t k = 0;

	if (!l || !max)
		return 0;
	pthread_mutex_lock(&l->lock);
	if (!l->results && wait_ns && l->pending) {
		struct timespec ts;
		uint64_t at;

		clock_gettime(CLOCK_REALTIME, &ts);
		at = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec + wait_ns;
		ts.tv_sec = at / 1000000000ull;
		ts.tv_nsec = at % 1000000000ull;
		while (!l->results)
			if (pthread_cond_timedwait(&l->done, &l->lock, &ts))
				break;
	}
	while (l->results && k < max) {
		struct dl_node *n = l->results;

		l->results = n->next;
		if (!l->results)
			l->results_tail = &l->results;
		out[k++] = n->res;
		n->res.dw = NULL;
		n->res.fetched_fd = -1;
		l->pending--;
		node_free(n);
	}
	pthread_mutex_unlock(&l->lock);
	return k;
}

size_t debug_loader__pending(const struct debug_loader *l)
{
	size_t n;

	if (!l)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&l->lock);
	n = l->pending;
	pthread_mutex_unlock((pthread_mutex_t *)&l->lock);
	return n;
}

bool debug_loader__fetching(const struct debug_loader *l)
{
	return l && atomic_load(&l->fetching);
}

void debug_loader__stats(const struct debug_loader *l,
			 struct debug_loader_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!l)
		return;
	pthread_mutex_lock((pthread_mutex_t *)&l->lock);
	*out = l->stats;
	pthread_mutex_unlock((pthread_mutex_t *)&l->lock);
}
