/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel side as user space sees it: load bpf/sampler.bpf.c (skeleton),
 * open a cpu-clock perf event per online CPU, attach, and poll the ring
 * buffer. Filtering happens in the kernel.
 */
#ifndef ASGST_CAPTURE_H
#define ASGST_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>	/* __u32 etc. for the shared header */

#include "sampler.h"

struct capture_opts {
	uint32_t filter_mode;	/* ASGST_FILTER_* */
	const pid_t *pids;	/* FILTER_PIDS: initial targets */
	size_t npids;
	bool follow_children;	/* FILTER_PIDS: add forked children */
	uint64_t cgroup_id;	/* FILTER_CGROUP */
	uint32_t freq_hz;
	uint32_t window_size;	/* bytes, <= ASGST_MAX_WINDOW, 0 = never */
	bool window_all;	/* window for every process (--stack-window) */
	uint32_t ringbuf_mb;	/* 0: default */
	uint32_t events;	/* ASGST_EVMASK_*, 0: cpu */
	uint32_t offcpu_every;	/* off-CPU stacks 1 in N; 0: N adapted to
				   CAPTURE_OFFCPU_BUDGET_PPM of each CPU */
	bool defer_start;	/* cpu sampling starts at capture__start() */
	bool time_samples;	/* ASGST_STAT_SAMPLE_NS counted (--stats) */
};

/* -e offcpu by default: taking stacks costs about 1 % of each CPU */
#define CAPTURE_OFFCPU_BUDGET_PPM	10000

struct capture;

/*
 * Callback per record: 0 done with it; CAPTURE_HOLD keep it where it is
 * (in the ring buffer, the kernel writing around it) until
 * capture__release(); anything else stops polling early.
 */
#define CAPTURE_HOLD	1
typedef int (*capture_sample_fn)(const void *data, size_t len, void *ctx);

/* 0 or -errno; err gets a one-line reason that says what to do */
int capture__open(struct capture **out, const struct capture_opts *o,
		  char *err, size_t errlen);
/* open_opts.defer_start: start the cpu sampling now (targets, windows and
 * threads set up first, so the first samples are whole) */
int capture__start(struct capture *c, char *err, size_t errlen);
/* no more samples: what the counters say is then all in the ring buffer
 * (the recording's end, before its last drain) */
void capture__stop(struct capture *c);
void capture__close(struct capture *c);
int capture__add_target(struct capture *c, pid_t tgid);
/* turn the stack window on/off for one process (JVMs) */
int capture__set_window(struct capture *c, pid_t tgid, bool on);
/* the JavaThread of (tgid, tid as the JVM sees it); NULL v: forget it */
int capture__set_jthread(struct capture *c, pid_t tgid, uint32_t ns_tid,
			 const struct asgst_jthread *v);
/* where tgid's virtual threads keep their frozen frames */
/* a CPython process's layout for the sampler's walk (py_procs) */
int capture__set_py_proc(struct capture *c, pid_t tgid,
			 const struct asgst_py_proc *v);
int capture__set_jvm_cont(struct capture *c, pid_t tgid,
			  const struct asgst_jvm_cont *v);
/*
 * Inside a capture_sample_fn: the CLOCK_MONOTONIC time the records being
 * handed out were taken from the ring at (one reading a pass, not one a
 * record); 0 outside a pass.
 */
uint64_t capture__consume_ns(const struct capture *c);
/* poll up to timeout_ms; >= 0 records consumed, or -errno (EINTR is 0) */
int capture__poll(struct capture *c, int timeout_ms, capture_sample_fn fn,
		  void *ctx);
/* drain what is left in the ring buffer without waiting */
int capture__drain(struct capture *c, capture_sample_fn fn, void *ctx);
/* a held record (CAPTURE_HOLD) done with, in any order */
void capture__release(struct capture *c, const void *data);
/* ring bytes from the oldest held record on (the kernel cannot write
 * there), and the ring's size */
size_t capture__held_bytes(const struct capture *c);
size_t capture__ring_bytes(const struct capture *c);
/* counters summed over CPUs (enum asgst_stat) */
int capture__stats(struct capture *c, uint64_t out[ASGST_STAT_MAX]);
/* bpf_stats of the perf-event program: run time and count (0 if off) */
int capture__prog_stats(struct capture *c, uint64_t *run_time_ns,
			uint64_t *run_cnt);
/* the CPU time the sampler's load took (the kernel's verifier, most of
 * it) and the instructions the verifier processed, all programs */
int capture__load_stats(struct capture *c, uint64_t *load_cpu_ns,
			uint64_t *verified_insns);
/* the same for the sched_switch (off-CPU) program */
int capture__offcpu_stats(struct capture *c, uint64_t *run_time_ns,
			  uint64_t *run_cnt);
/* the N off-CPU stacks are taken 1 in, now: the largest of the CPUs'
 * (offcpu_every when fixed); 0 when not known */
uint32_t capture__offcpu_every(struct capture *c);
/* the same for the JVM events' uprobe program */
int capture__jvm_event_stats(struct capture *c, uint64_t *run_time_ns,
			     uint64_t *run_cnt);
int capture__ncpus(const struct capture *c);
/*
 * JVM events (opts.events has ASGST_EVMASK_ALLOC or _LOCK): a uprobe at
 * offset of the file fd holds (an agent library, checked by the caller;
 * every process mapping that file fires it, the filter decides). Kept
 * until capture__stop. 0 or -errno with one line in err.
 */
int capture__attach_probe(struct capture *c, int fd, uint64_t offset,
			  char *err, size_t errlen);

/* pruning (a recorder runs for days): tgid exited, drop its entries in
 * targets, window_pids and, for a JVM, jvm_conts and jthreads */
int capture__forget(struct capture *c, pid_t tgid, bool jvm);
/* drop targets (-p, children followed) that are no process any more; the
 * number dropped */
int capture__prune_targets(struct capture *c);
/* map updates that failed so far (a full map, most often) */
uint64_t capture__map_errors(const struct capture *c);

#endif /* ASGST_CAPTURE_H */
