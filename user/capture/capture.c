// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Load the sampler, one cpu-clock perf event per online CPU, poll records. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/membarrier.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "capture/capture.h"
#include "capture/kernel_features.h"
#include "capture/ring.h"
#include "util/err.h"
#include "sampler.skel.h"
#include "util/clock.h"

#define DEFAULT_RINGBUF_MB	32
#define MAX_RINGBUF_MB		1024
#define CAP_PERFMON_BIT		38
#define CAP_BPF_BIT		39

struct capture {
	struct sampler_bpf *skel;
	struct ring *ring;		/* the events ring, read in place */
	int *pfds;			/* one perf event per online CPU */
	struct bpf_link **links;
	int nev;
	int stats_fd;			/* bpf_enable_stats, -1 if refused */
	int ncpus_possible;
	/* the callback of the poll in progress */
	capture_sample_fn fn;
	void *fn_ctx;
	int consumed;
	bool stop;
	uint64_t consume_ns;	/* while consuming: when it started */
	uint32_t freq_hz;
	bool want_cpu;		/* cpu-clock events, opened by start */
	bool started;
	bool detached;		/* capture__stop ran: nothing runs any more */
	uint64_t map_errors;	/* failed map updates (capture__map_errors) */
	/* JVM events: the uprobes on the agents' probe, one a file */
	struct bpf_link **probes;
	size_t nprobes, probes_cap;
	uint64_t load_cpu_ns;		/* loading the sampler (verification) */
};

/*
 * libbpf's warnings while the sampler is opened and loaded (a refused
 * program's verifier log among them): kept, and written to a file only
 * when the load fails. libbpf's print hook is the process's, so is this.
 */
static FILE *bpf_log;
static char *bpf_log_buf;
static size_t bpf_log_len;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	const char *dbg = getenv("ASGST_DEBUG");

	/* on stderr only when asked: ASGST_DEBUG=1 warnings, =2 everything */
	if (!dbg || !*dbg || !strcmp(dbg, "0")) {
		if (bpf_log && level != LIBBPF_DEBUG)
			return vfprintf(bpf_log, fmt, ap);
		return 0;
	}
	if (level == LIBBPF_DEBUG && strcmp(dbg, "2"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void bpf_log__start(void)
{
	bpf_log = open_memstream(&bpf_log_buf, &bpf_log_len);
}

static void bpf_log__end(void)
{
	if (bpf_log)
		fclose(bpf_log);
	free(bpf_log_buf);
	bpf_log = NULL;
	bpf_log_buf = NULL;
	bpf_log_len = 0;
}

/*
 * What libbpf said (the verifier's log) into a new file of $TMPDIR or
 * /tmp, its path in path; -errno when there is nothing or no file.
 */
static int bpf_log__keep(char *path, size_t pathlen)
{
	const char *dir = getenv("TMPDIR");
	ssize_t w = 0;
	size_t off = 0;
	int fd;

	if (!bpf_log || fflush(bpf_log) || !bpf_log_len)
		return -ENODATA;
	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(path, pathlen, "%s/asgst-bpf-verifier-XXXXXX.log",
			     dir) >= pathlen)
		return -ENAMETOOLONG;
	/* O_EXCL, 0600: a name nobody could have put there first */
	fd = mkstemps(path, 4);
	if (fd < 0)
		return -errno;
	while (off < bpf_log_len &&
	       (w = write(fd, bpf_log_buf + off, bpf_log_len - off)) > 0)
		off += w;
	close(fd);
	return w < 0 ? -EIO : 0;
}

static bool have_caps(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &hdr, data))
		return false;
	/* CAP_BPF and CAP_PERFMON live in the second word */
	return (data[1].effective & (1u << (CAP_BPF_BIT - 32))) &&
	       (data[1].effective & (1u << (CAP_PERFMON_BIT - 32)));
}

/*
 * Parse a cpu list like "0-3,5,7-8" into a bitmap of nbits. Returns the
 * number of cpus set or -1 on a malformed list.
 */
static int parse_cpulist(const char *s, bool *set, int nbits)
{
	int n = 0;

	while (*s && *s != '\n') {
		char *end;
		long a, b;

		errno = 0;
		a = strtol(s, &end, 10);
		if (errno || end == s || a < 0)
			return -1;
		b = a;
		s = end;
		if (*s == '-') {
			s++;
			b = strtol(s, &end, 10);
			if (errno || end == s || b < a)
				return -1;
			s = end;
		}
		for (long i = a; i <= b && i < nbits; i++) {
			if (!set[i]) {
				set[i] = true;
				n++;
			}
		}
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -1;
	}
	return n;
}

static int online_cpus(bool *set, int nbits)
{
	char buf[4096];
	ssize_t r;
	int fd, n;

	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -EIO;
	buf[r] = '\0';
	n = parse_cpulist(buf, set, nbits);
	return n < 0 ? -EINVAL : n;
}

static uint32_t ringbuf_bytes(uint32_t mb)
{
	uint32_t v = 1;

	if (!mb)
		mb = DEFAULT_RINGBUF_MB;
	if (mb > MAX_RINGBUF_MB)
		mb = MAX_RINGBUF_MB;
	while (v < mb)
		v <<= 1;
	return v * 1024u * 1024u;
}

static int on_record(const void *data, size_t len, void *ctx)
{
	struct capture *c = ctx;
	int rc;

	if (c->stop)
		return -ECANCELED;
	c->consumed++;
	rc = c->fn ? c->fn(data, len, c->fn_ctx) : 0;
	if (rc == CAPTURE_HOLD)
		return RING_HOLD;
	if (rc) {
		c->stop = true;
		return -ECANCELED;
	}
	return 0;
}

static int open_events(struct capture *c, uint32_t freq, char *err,
		       size_t errlen)
{
	bool *online;
	int ret = 0, n;

	online = calloc(c->ncpus_possible, sizeof(*online));
	c->pfds = calloc(c->ncpus_possible, sizeof(*c->pfds));
	c->links = calloc(c->ncpus_possible, sizeof(*c->links));
	if (!online || !c->pfds || !c->links) {
		ret = err__set(err, errlen, -ENOMEM, "out of memory");
		goto cleanup;
	}
	n = online_cpus(online, c->ncpus_possible);
	if (n <= 0) {
		ret = err__set(err, errlen, n < 0 ? n : -ENODEV,
			       "cannot read /sys/devices/system/cpu/online: is /sys mounted?");
		goto cleanup;
	}
	for (int cpu = 0; cpu < c->ncpus_possible; cpu++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(attr),
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.freq = 1,
			.sample_freq = freq,
		};
		struct bpf_link *link;
		int fd;

		if (!online[cpu])
			continue;
		fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
			     PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			/* went offline since we read the list: skip it */
			if (errno == ENODEV)
				continue;
			ret = -errno;
			if (ret == -EACCES || ret == -EPERM)
				err__set(err, errlen, ret,
					 "perf_event_open on CPU %d: %s: run as root, or lower /proc/sys/kernel/perf_event_paranoid",
					 cpu, strerror(-ret));
			else if (ret == -EINVAL && freq > 1000)
				err__set(err, errlen, ret,
					 "perf_event_open on CPU %d: %s: -F %u is above /proc/sys/kernel/perf_event_max_sample_rate?",
					 cpu, strerror(-ret), freq);
			else
				err__set(err, errlen, ret,
					 "perf_event_open on CPU %d: %s (check /proc/sys/kernel/perf_event_paranoid)",
					 cpu, strerror(-ret));
			goto cleanup;
		}
		link = bpf_program__attach_perf_event(c->skel->progs.asgst_sample,
						      fd);
		if (!link) {
			ret = -errno;
			close(fd);
			err__set(err, errlen, ret,
				 "attaching the BPF program to CPU %d's perf event: %s",
				 cpu, strerror(-ret));
			goto cleanup;
		}
		c->pfds[c->nev] = fd;
		c->links[c->nev] = link;
		c->nev++;
	}
	if (!c->nev)
		ret = err__set(err, errlen, -ENODEV,
			       "no online CPU could be sampled");
cleanup:
	free(online);
	return ret;
}

/* what the sampler records: cpu samples unless told otherwise */
static uint32_t event_mask(const struct capture_opts *o)
{
	return o->events ? o->events : ASGST_EVMASK_CPU;
}

/* the fork hook only matters for record -- CMD */
static bool follows(const struct capture_opts *o)
{
	return o->follow_children && o->filter_mode == ASGST_FILTER_PIDS;
}

/* the kernel features a recording of o needs beyond every recording's */
static uint32_t kfeat_needs(const struct capture_opts *o)
{
	uint32_t ev = event_mask(o), needs = 0;

	if (ev & ASGST_EVMASK_OFFCPU)
		needs |= KFEAT_OFFCPU;
	if (ev & ASGST_EVMASK_JVM)
		needs |= KFEAT_JVM;
	if (follows(o))
		needs |= KFEAT_FOLLOW;
	if (o->filter_mode == ASGST_FILTER_CGROUP)
		needs |= KFEAT_CGROUP;
	return needs;
}

/* what can be refused before anything is loaded */
static int check_opts(const struct capture_opts *o, char *err, size_t errlen)
{
	if (!o || o->filter_mode > ASGST_FILTER_CGROUP)
		return err__set(err, errlen, -EINVAL,
				"capture: bad filter mode");
	if (!o->freq_hz)
		return err__set(err, errlen, -EINVAL,
				"sampling frequency must be at least 1 Hz");
	if (o->window_size > ASGST_MAX_WINDOW)
		return err__set(err, errlen, -EINVAL,
				"stack window of %u bytes is above the %u-byte maximum",
				o->window_size, ASGST_MAX_WINDOW);
	if (!have_caps())
		return err__set(err, errlen, -EPERM,
				"asgst-bpf needs root (CAP_BPF and CAP_PERFMON): run it with sudo");
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return err__set(err, errlen, -ENOTSUP,
				"this kernel has no BTF (/sys/kernel/btf/vmlinux missing): a kernel built with CONFIG_DEBUG_INFO_BTF=y is needed");
	return 0;
}

/*
 * Whether this kernel's sched_switch tracepoint passes prev_state (5.18+):
 * its BTF type btf_trace_sched_switch is a pointer to a prototype of
 * (void *, preempt, prev, next[, prev_state]).
 */
static bool switch_has_prev_state(void)
{
	const struct btf_type *t;
	struct btf *btf;
	bool ret = false;
	int id;

	btf = btf__load_vmlinux_btf();
	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "btf_trace_sched_switch",
				    BTF_KIND_TYPEDEF);
	if (id < 0)
		goto cleanup;
	t = btf__type_by_id(btf, id);
	t = t ? btf__type_by_id(btf, t->type) : NULL;
	if (!t || !btf_is_ptr(t))
		goto cleanup;
	t = btf__type_by_id(btf, t->type);
	ret = t && btf_is_func_proto(t) && btf_vlen(t) >= 5;
cleanup:
	btf__free(btf);
	return ret;
}

/* open the BPF object and size it for o, not loaded yet */
static int open_sampler(struct capture *c, const struct capture_opts *o,
			char *err, size_t errlen)
{
	struct sampler_bpf *skel;
	uint32_t rb_bytes, events = event_mask(o);
	int ncpu, ret;

	skel = c->skel = sampler_bpf__open();
	if (!skel) {
		ret = -errno;
		return err__set(err, errlen, ret, "opening the BPF object: %s",
				strerror(-ret));
	}
	skel->rodata->filter_mode = o->filter_mode;
	skel->rodata->cgroup_id = o->cgroup_id;
	skel->rodata->window_size = o->window_size;
	skel->rodata->window_all = o->window_all && o->window_size;
	skel->rodata->follow_children = o->follow_children;
	skel->rodata->event_mask = events;
	skel->rodata->offcpu_every = o->offcpu_every;
	skel->rodata->offcpu_budget_ppm = CAPTURE_OFFCPU_BUDGET_PPM;
	skel->rodata->time_samples = o->time_samples;
	/* packed records (bpf_ringbuf_reserve_dynptr) */
	skel->rodata->ring_dynptr = kernel_features__at_least(5, 19);
	rb_bytes = ringbuf_bytes(o->ringbuf_mb);
	bpf_map__set_max_entries(skel->maps.events, rb_bytes);
	/* where window records are put together: one per CPU */
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0) {
		ret = ncpu ? ncpu : -EINVAL;
		return err__set(err, errlen, ret, "counting the possible CPUs: %s",
				strerror(-ret));
	}
	bpf_map__set_max_entries(skel->maps.recbuf, ncpu);
	bpf_map__set_value_size(skel->maps.recbuf,
				sizeof(struct asgst_sample_hdr) +
				8 * (ASGST_MAX_KSTACK + ASGST_MAX_USTACK) +
				o->window_size + 8);
	/* the JVM events' own, only when they are recorded */
	bpf_map__set_max_entries(skel->maps.jvmbuf_owner, ncpu);
	if (events & ASGST_EVMASK_JVM) {
		bpf_map__set_max_entries(skel->maps.jvmbuf, ncpu);
		bpf_map__set_value_size(skel->maps.jvmbuf,
					sizeof(struct asgst_sample_hdr) +
					8 * (ASGST_MAX_KSTACK + ASGST_MAX_USTACK) +
					o->window_size + 8);
	}
	/* one wakeup per eighth of the ring; capture__poll also times out.
	 * Each CPU looks at the backlog once per wakeup_check_bytes it
	 * wrote: all of them together past it by at most another eighth */
	skel->rodata->wakeup_bytes = rb_bytes / 8;
	skel->rodata->wakeup_check_bytes =
		rb_bytes / 8 / (uint32_t)ncpu < 64 * 1024 ?
		rb_bytes / 8 / (uint32_t)ncpu : 64 * 1024;
	if (!follows(o))
		bpf_program__set_autoload(skel->progs.asgst_fork, false);
	if (!(events & ASGST_EVMASK_OFFCPU))
		bpf_program__set_autoload(skel->progs.asgst_switch, false);
	else
		skel->rodata->switch_prev_state = switch_has_prev_state();
	/* not even verified when no JVM event is asked for */
	if (!(events & ASGST_EVMASK_JVM))
		bpf_program__set_autoload(skel->progs.asgst_jvm_event, false);
	return 0;
}

/* load the sampler, fill its targets, attach its tracepoints, open the
 * ring buffer; the cpu-clock events are capture__start's */
static int load_sampler(struct capture *c, const struct capture_opts *o,
			char *err, size_t errlen)
{
	struct sampler_bpf *skel = c->skel;
	uint64_t t0;
	int ret;

	t0 = clock__cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	ret = sampler_bpf__load(skel);
	c->load_cpu_ns = clock__cpu_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	if (ret) {
		char path[PATH_MAX];

		/* a kernel too old: the feature it lacks, in one line */
		if (kernel_features__check(kfeat_needs(o), err, errlen))
			return -ENOTSUP;
		if (!bpf_log__keep(path, sizeof(path)))
			return err__set(err, errlen, ret,
					"loading the BPF program failed (%s): the kernel refused it; its verifier log is in %s",
					strerror(-ret), path);
		return err__set(err, errlen, ret,
				"loading the BPF program failed (%s): the kernel refused it; run with ASGST_DEBUG=1 for the verifier log",
				strerror(-ret));
	}
	for (size_t i = 0; i < o->npids; i++) {
		ret = capture__add_target(c, o->pids[i]);
		if (ret)
			return err__set(err, errlen, ret,
					"adding pid %d to the targets: %s",
					(int)o->pids[i], strerror(-ret));
	}
	if (follows(o) || (event_mask(o) & ASGST_EVMASK_OFFCPU)) {
		ret = sampler_bpf__attach(skel);
		if (ret && kernel_features__check(kfeat_needs(o), err, errlen))
			return -ENOTSUP;
		if (ret)
			return err__set(err, errlen, ret,
					"attaching the %s tracepoint: %s",
					follows(o) ? "fork" : "sched_switch",
					strerror(-ret));
	}
	ret = ring__open(&c->ring, bpf_map__fd(skel->maps.events),
			 bpf_map__max_entries(skel->maps.events));
	if (ret)
		return err__set(err, errlen, ret,
				"setting up the ring buffer: %s",
				strerror(-ret));
	return 0;
}

int capture__open(struct capture **out, const struct capture_opts *o,
		  char *err, size_t errlen)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	struct capture *c = NULL;
	int ret;

	*out = NULL;
	ret = check_opts(o, err, errlen);
	if (ret)
		return ret;

	libbpf_set_print(libbpf_print);
	/* not needed on 6.x (memcg accounting), harmless */
	setrlimit(RLIMIT_MEMLOCK, &rl);
	/*
	 * A kernel too old for the sampler: one line naming what it lacks.
	 * Its files here; its helpers, maps and BTF types when the load or
	 * the attach fails (each probe a program or a map of its own, the
	 * BTF read whole: milliseconds a kernel that loads it need not pay)
	 */
	ret = kernel_features__check_files(kfeat_needs(o), err, errlen);
	if (ret)
		return ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return err__set(err, errlen, -ENOMEM, "out of memory");
	c->stats_fd = -1;
	c->ncpus_possible = libbpf_num_possible_cpus();
	if (c->ncpus_possible <= 0) {
		ret = err__set(err, errlen,
			       c->ncpus_possible ? c->ncpus_possible : -ENODEV,
			       "cannot count CPUs (/sys/devices/system/cpu/possible)");
		goto cleanup;
	}
	bpf_log__start();
	ret = open_sampler(c, o, err, errlen);
	if (!ret)
		ret = load_sampler(c, o, err, errlen);
	bpf_log__end();
	if (ret)
		goto cleanup;

	/* kept open while capturing so run_time_ns/run_cnt accumulate */
	c->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	c->freq_hz = o->freq_hz;
	c->want_cpu = event_mask(o) & ASGST_EVMASK_CPU;
	if (!o->defer_start) {
		ret = capture__start(c, err, errlen);
		if (ret)
			goto cleanup;
	}

	*out = c;
	return 0;
cleanup:
	capture__close(c);
	return ret;
}

int capture__start(struct capture *c, char *err, size_t errlen)
{
	if (!c)
		return -EINVAL;
	if (c->started || !c->want_cpu)
		return 0;
	c->started = true;
	return open_events(c, c->freq_hz, err, errlen);
}

/*
 * Wait until no program detached above still runs. A detach does not wait
 * for the runs under way on other CPUs: one may have put its record in the
 * ring and not yet counted it, and the drain and the counters read next
 * would disagree. The programs run inside RCU read-side sections, and
 * MEMBARRIER_CMD_GLOBAL is a synchronize_rcu(); where it is refused
 * (nohz_full) a pause far longer than a run stands in.
 */
static void quiesce(void)
{
	struct timespec ts = { .tv_nsec = 20 * 1000 * 1000 };

	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
	nanosleep(&ts, NULL);
}

void capture__stop(struct capture *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nev; i++) {
		bpf_link__destroy(c->links[i]);
		close(c->pfds[i]);
	}
	c->nev = 0;
	for (size_t i = 0; i < c->nprobes; i++)
		bpf_link__destroy(c->probes[i]);
	c->nprobes = 0;
	/* the tracepoints: their links are NULL afterwards, destroy skips
	 * them */
	if (c->skel)
		sampler_bpf__detach(c->skel);
	if (!c->detached)
		quiesce();
	c->detached = true;
}

void capture__close(struct capture *c)
{
	if (!c)
		return;
	capture__stop(c);
	free(c->links);
	free(c->pfds);
	free(c->probes);
	ring__free(c->ring);
	sampler_bpf__destroy(c->skel);
	if (c->stats_fd >= 0)
		close(c->stats_fd);
	free(c);
}

/* after a change to targets, window_pids or jthreads: the sampler's
 * per-thread entries are older now and look them up again (0 is their
 * "never looked up") */
static void cache_gen_bump(struct capture *c)
{
	__atomic_store_n(&c->skel->data->cache_gen,
			 c->skel->data->cache_gen + 1 ? : 1, __ATOMIC_RELEASE);
}

/* a map update failed (full, most often): counted, shown by --stats */
static int map_error(struct capture *c)
{
	int e = errno ? -errno : -EIO;

	c->map_errors++;
	return e;
}

int capture__add_target(struct capture *c, pid_t tgid)
{
	uint32_t key = tgid;
	uint8_t one = 1;

	if (!c || tgid <= 0)
		return -EINVAL;
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.targets), &key, &one,
				BPF_ANY))
		return map_error(c);
	cache_gen_bump(c);
	return 0;
}

int capture__set_window(struct capture *c, pid_t tgid, bool on)
{
	int fd;
	uint32_t key = tgid;
	uint8_t one = 1;

	if (!c || tgid <= 0)
		return -EINVAL;
	fd = bpf_map__fd(c->skel->maps.window_pids);
	if (on) {
		if (bpf_map_update_elem(fd, &key, &one, BPF_ANY))
			return map_error(c);
	} else if (bpf_map_delete_elem(fd, &key) && errno != ENOENT) {
		return -errno;
	}
	cache_gen_bump(c);
	return 0;
}

int capture__set_jthread(struct capture *c, pid_t tgid, uint32_t ns_tid,
			 const struct asgst_jthread *v)
{
	struct asgst_jthread_key k = { .tgid = (uint32_t)tgid,
				       .ns_tid = ns_tid };
	int fd;

	if (!c || tgid <= 0 || !ns_tid)
		return -EINVAL;
	fd = bpf_map__fd(c->skel->maps.jthreads);
	if (v) {
		if (bpf_map_update_elem(fd, &k, v, BPF_ANY))
			return map_error(c);
	} else if (bpf_map_delete_elem(fd, &k) && errno != ENOENT) {
		return -errno;
	}
	cache_gen_bump(c);
	return 0;
}

int capture__set_py_proc(struct capture *c, pid_t tgid,
			 const struct asgst_py_proc *v)
{
	uint32_t k = (uint32_t)tgid;

	if (!c || tgid <= 0 || !v)
		return -EINVAL;
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.py_procs), &k, v,
				BPF_ANY))
		return map_error(c);
	cache_gen_bump(c);
	return 0;
}

int capture__set_jvm_cont(struct capture *c, pid_t tgid,
			  const struct asgst_jvm_cont *v)
{
	uint32_t k = (uint32_t)tgid;

	if (!c || tgid <= 0 || !v)
		return -EINVAL;
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.jvm_conts), &k, v,
				BPF_ANY))
		return map_error(c);
	return 0;
}

static int run(struct capture *c, int timeout_ms, bool wait,
	       capture_sample_fn fn, void *ctx)
{
	int ret;

	if (!c)
		return -EINVAL;
	c->fn = fn;
	c->fn_ctx = ctx;
	c->consumed = 0;
	c->stop = false;
	ret = 0;
	if (wait)
		ret = ring__wait(c->ring, timeout_ms);
	/* the kernel side skips most wakeups: take what is there anyway */
	if (ret >= 0 && !c->stop) {
		c->consume_ns = clock__mono_ns();
		ret = ring__consume(c->ring, on_record, c);
		c->consume_ns = 0;
	}
	/* the kernel wakes the reader by what it has not read yet */
	c->skel->bss->reader_pos = ring__read_pos(c->ring);
	c->fn = NULL;
	c->fn_ctx = NULL;
	if (ret == -EINTR || ret == -ECANCELED || ret >= 0)
		return c->consumed;
	return ret;
}

void capture__release(struct capture *c, const void *data)
{
	if (c)
		ring__release(c->ring, data);
}

size_t capture__held_bytes(const struct capture *c)
{
	return c ? ring__held_bytes(c->ring) : 0;
}

size_t capture__ring_bytes(const struct capture *c)
{
	return c ? ring__size(c->ring) : 0;
}

uint64_t capture__consume_ns(const struct capture *c)
{
	return c ? c->consume_ns : 0;
}

int capture__poll(struct capture *c, int timeout_ms, capture_sample_fn fn,
		  void *ctx)
{
	return run(c, timeout_ms, true, fn, ctx);
}

int capture__drain(struct capture *c, capture_sample_fn fn, void *ctx)
{
	return run(c, 0, false, fn, ctx);
}

int capture__stats(struct capture *c, uint64_t out[ASGST_STAT_MAX])
{
	uint64_t *vals;
	int fd, ret = 0;

	if (!c)
		return -EINVAL;
	vals = calloc(c->ncpus_possible, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	fd = bpf_map__fd(c->skel->maps.stats);
	for (uint32_t k = 0; k < ASGST_STAT_MAX; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, vals)) {
			ret = -errno;
			goto cleanup;
		}
		for (int i = 0; i < c->ncpus_possible; i++)
			out[k] += vals[i];
	}
cleanup:
	free(vals);
	return ret;
}

static int prog_stats(struct bpf_program *prog, uint64_t *run_time_ns,
		      uint64_t *run_cnt)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);

	*run_time_ns = 0;
	*run_cnt = 0;
	if (bpf_program__fd(prog) < 0)
		return 0;	/* not loaded: no cost */
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return -errno;
	/* zero unless stats are on (ours, or someone else's) */
	*run_time_ns = info.run_time_ns;
	*run_cnt = info.run_cnt;
	return 0;
}

int capture__prog_stats(struct capture *c, uint64_t *run_time_ns,
			uint64_t *run_cnt)
{
	if (!c)
		return -EINVAL;
	return prog_stats(c->skel->progs.asgst_sample, run_time_ns, run_cnt);
}

int capture__load_stats(struct capture *c, uint64_t *load_cpu_ns,
			uint64_t *verified_insns)
{
	struct bpf_program *prog;

	*load_cpu_ns = 0;
	*verified_insns = 0;
	if (!c)
		return -EINVAL;
	*load_cpu_ns = c->load_cpu_ns;
	bpf_object__for_each_program(prog, c->skel->obj) {
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info);

		if (bpf_program__fd(prog) < 0 ||
		    bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			continue;
		*verified_insns += info.verified_insns;
	}
	return 0;
}

int capture__offcpu_stats(struct capture *c, uint64_t *run_time_ns,
			  uint64_t *run_cnt)
{
	if (!c)
		return -EINVAL;
	return prog_stats(c->skel->progs.asgst_switch, run_time_ns, run_cnt);
}

/* the sampler's struct offcpu_rate: its N is the field read here */
struct offcpu_rate_view {
	uint64_t start_ns, seen, taken, cost_ns, pred_ns, unit_ns, every;
	uint64_t quantum_ns;
};

uint32_t capture__offcpu_every(struct capture *c)
{
	struct offcpu_rate_view *v = NULL;
	uint32_t key = 0, best = 0;
	int ncpu;

	if (!c || !c->skel)
		return 0;
	if (c->skel->rodata->offcpu_every)
		return c->skel->rodata->offcpu_every;
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return 0;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return 0;
	if (bpf_map__lookup_elem(c->skel->maps.offcpu_rate, &key, sizeof(key),
				 v, (size_t)ncpu * sizeof(*v), 0))
		goto cleanup;
	for (int i = 0; i < ncpu; i++)
		if (v[i].every > best)
			best = (uint32_t)v[i].every;
cleanup:
	free(v);
	return best;
}

int capture__attach_probe(struct capture *c, int fd, uint64_t offset,
			  char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	struct bpf_link *l;
	char path[40];
	int ret;

	if (!c || !c->skel ||
	    !(c->skel->rodata->event_mask & ASGST_EVMASK_JVM))
		return err__set(err, errlen, -EINVAL,
				"the sampler records no JVM event");
	if (c->nprobes == c->probes_cap) {
		size_t cap = c->probes_cap ? c->probes_cap * 2 : 8;
		struct bpf_link **v = realloc(c->probes, cap * sizeof(*v));

		if (!v)
			return err__set(err, errlen, -ENOMEM, "out of memory");
		c->probes = v;
		c->probes_cap = cap;
	}
	/* the kernel resolves the path to the very file fd holds */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	l = bpf_program__attach_uprobe_opts(c->skel->progs.asgst_jvm_event, -1,
					    path, offset, &uo);
	if (!l) {
		ret = -errno;
		return err__set(err, errlen, ret ? ret : -EINVAL,
				"uprobe on the agent's probe: %s",
				strerror(ret ? -ret : EINVAL));
	}
	c->probes[c->nprobes++] = l;
	return 0;
}

int capture__jvm_event_stats(struct capture *c, uint64_t *run_time_ns,
			     uint64_t *run_cnt)
{
	if (!c)
		return -EINVAL;
	return prog_stats(c->skel->progs.asgst_jvm_event, run_time_ns,
			  run_cnt);
}

int capture__ncpus(const struct capture *c)
{
	return c ? c->nev : 0;
}

/*
 * Pruning: entries of processes that have exited, so the maps hold what is
 * alive (a recorder runs for days; a pid may come back as another process).
 */
uint64_t capture__map_errors(const struct capture *c)
{
	return c ? c->map_errors : 0;
}

/* the jthreads entries of tgid (a JVM has one per thread) */
static void forget_jthreads(struct capture *c, uint32_t tgid)
{
	int fd = bpf_map__fd(c->skel->maps.jthreads);
	struct asgst_jthread_key k, next, *prev = NULL;
	struct asgst_jthread_key del[256];
	size_t n = 0;

	/* collect, then delete: deleting while walking restarts the walk */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (k.tgid != tgid)
			continue;
		if (n == sizeof(del) / sizeof(del[0])) {
			size_t gone = 0;

			for (size_t i = 0; i < n; i++)
				gone += !bpf_map_delete_elem(fd, &del[i]);
			if (!gone)
				return;	/* nothing moves: never loop */
			n = 0;
			prev = NULL;	/* the walk again, the deleted gone */
			continue;
		}
		del[n++] = k;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &del[i]);
}

int capture__forget(struct capture *c, pid_t tgid, bool jvm)
{
	uint32_t key = (uint32_t)tgid;

	if (!c || tgid <= 0)
		return -EINVAL;
	bpf_map_delete_elem(bpf_map__fd(c->skel->maps.targets), &key);
	bpf_map_delete_elem(bpf_map__fd(c->skel->maps.window_pids), &key);
	bpf_map_delete_elem(bpf_map__fd(c->skel->maps.py_procs), &key);
	if (jvm) {
		bpf_map_delete_elem(bpf_map__fd(c->skel->maps.jvm_conts), &key);
		forget_jthreads(c, key);
	}
	cache_gen_bump(c);
	return 0;
}

/* is tgid a process now: /proc/TGID is there (a thread's is hidden) */
static bool tgid_alive(uint32_t tgid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%u", tgid);
	return access(path, F_OK) == 0;
}

int capture__prune_targets(struct capture *c)
{
	int fd, n = 0;
	uint32_t k, next, *prev = NULL;
	uint32_t del[256];
	size_t nd = 0, gone = 0;
	bool more = true;

	if (!c)
		return 0;
	fd = bpf_map__fd(c->skel->maps.targets);
	/* children the sampler added (follow) die without telling us */
	while (more) {
		more = false;
		while (!bpf_map_get_next_key(fd, prev, &next)) {
			k = next;
			prev = &k;
			if (tgid_alive(k))
				continue;
			del[nd++] = k;
			if (nd == sizeof(del) / sizeof(del[0])) {
				more = true;
				break;
			}
		}
		for (size_t i = 0; i < nd; i++)
			gone += !bpf_map_delete_elem(fd, &del[i]);
		if (!gone)
			more = false;	/* nothing moves: never loop */
		n += gone;
		gone = 0;
		nd = 0;
		prev = NULL;
	}
	if (n)
		cache_gen_bump(c);
	return n;
}
