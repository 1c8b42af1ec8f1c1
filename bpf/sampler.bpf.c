// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel sampler: one perf_event program on a cpu-clock event per CPU.
 * Each sample becomes one ring-buffer record laid out as bpf/sampler.h
 * says: header, kernel pcs, frame-pointer user pcs, and for the processes
 * that want it a window of raw user-stack bytes from sp.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sampler.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define HDR_BYTES	((__u32)sizeof(struct asgst_sample_hdr))
#define KSTACK_BYTES	(ASGST_MAX_KSTACK * 8)
#define USTACK_BYTES	(ASGST_MAX_USTACK * 8)
#define REC_BASE	(HDR_BYTES + KSTACK_BYTES + USTACK_BYTES)
#define PAGE_SZ		4096ull
#define MAX_WIN_PAGES	(ASGST_MAX_WINDOW / 4096 + 1)
#define MAX_CG_LEVELS	32

/* read-only config, set by user space before load */
const volatile __u32 filter_mode = ASGST_FILTER_ALL;
const volatile __u64 cgroup_id = 0;
const volatile __u32 window_size = 0;
const volatile bool window_all = false;
const volatile bool follow_children = false;
const volatile __u32 event_mask = ASGST_EVMASK_CPU;
/* sched_switch passes the state __schedule read (5.18+): the one the
 * kernel's own voluntary/involuntary accounting (nvcsw/nivcsw) uses */
const volatile bool switch_prev_state = false;
/*
 * Off-CPU: 0 takes the stack of a target's switch-out with probability
 * 1/N, N per CPU adapted each OFFCPU_PERIOD_NS so that taking stacks
 * costs about offcpu_budget_ppm of that CPU; else 1/offcpu_every (1:
 * every switch).
 */
const volatile __u32 offcpu_every = 0;
const volatile __u32 offcpu_budget_ppm = 10000;
/* wake the reader only when this much is waiting (see wakeup_flag()) */
const volatile __u64 wakeup_bytes = 4 * 1024 * 1024;
/* ... looked at once a CPU has put this much in the ring since it last
 * looked */
const volatile __u64 wakeup_check_bytes = 64 * 1024;
/* records put together in a per-CPU buffer go to the ring packed, the
 * stacks' unused room left out (bpf_ringbuf_reserve_dynptr, 5.19) */
const volatile bool ring_dynptr = false;
/* --stats: the time of each recorded cpu sample (ASGST_STAT_SAMPLE_NS) */
const volatile bool time_samples = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 32 * 1024 * 1024);	/* resized by user space */
} events SEC(".maps");

/*
 * Where a record with a window is put together, one per CPU (user space
 * sets max_entries to the CPUs and value_size to REC_BASE + window_size +
 * 8): the ring gets the bytes it uses, not a reservation of the whole
 * window. A shallow stack then takes 3 KiB of the ring instead of 18 KiB,
 * and fewer cold ring pages are touched per sample.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, REC_BASE + 8);
} recbuf SEC(".maps");

/*
 * The same for the JVM events' uprobe program alone, which can be
 * preempted (or interrupted by a cpu sample) while it fills one: a CPU's
 * buffer is taken by its owner word (0 free, 1 taken; the program cannot
 * move to another CPU meanwhile), and an event that finds it taken is
 * reserved in the ring at its full size instead. Sized as recbuf.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, REC_BASE + 8);
} jvmbuf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} jvmbuf_owner SEC(".maps");

/*
 * tgids to sample under ASGST_FILTER_PIDS. The hashes user space fills
 * are not preallocated: zeroing 65536 entries up front was a third of the
 * recorder's start-up, and they hold a handful.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* tgids that get a stack window (JVMs) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} window_pids SEC(".maps");

/*
 * Stack mapping of a thread. bpf_find_vma has to defer the mmap-lock
 * release to an irq_work when called from the timer interrupt, which
 * costs a self-IPI (several us in a VM): look it up once per thread. A
 * main-thread stack grows down, so sp below start means look again.
 */
struct stack_range {
	__u64 start;
	__u64 end;	/* where the thread's frames end in the mapping
			 * (frames_top), or the first unreadable page */
	__u64 hole;	/* end is an unreadable page inside the mapping */
};

/* JavaThreads of JVMs with the agent (bpf/sampler.h). A plain hash, not
 * an LRU: an insert never evicts another JVM's thread. User space keeps
 * it (user/jvm/jthreads.c): deletes at a thread's end and a process's,
 * and a share of the entries per JVM */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ASGST_JTHREADS_MAX);
	__type(key, struct asgst_jthread_key);
	__type(value, struct asgst_jthread);
} jthreads SEC(".maps");

/* bumped by user space after it changes targets, window_pids or jthreads:
 * what a thread's cache entry (struct thread_cache) took from them is
 * looked up again when it is older */
volatile __u32 cache_gen = 1;
/* where the reader has read the ring to (user space writes it) */
volatile __u64 reader_pos = 0;

/* JVMs whose virtual threads' frozen frames can be found, by tgid */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct asgst_jvm_cont);
} jvm_conts SEC(".maps");

/* CPython processes whose frames are walked, by tgid (bpf/sampler.h) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ASGST_PY_PROCS_MAX);
	__type(key, __u32);
	__type(value, struct asgst_py_proc);
} py_procs SEC(".maps");

/*
 * Off-CPU: when a recorded thread left the CPU. Task storage, not a hash
 * by tid: it goes with the task (no stale entries, no size limit), and an
 * LRU hash evicts live entries under the churn of 100 k switches/s spread
 * over CPUs, which loses the END of a switch. rec_ns is the record's time
 * and names its stack (the END record carries it back); the clock runs
 * from start_ns, the end of the capture.
 */
struct offcpu_out {
	__u64 rec_ns;		/* 0: not off the CPU in a recording */
	__u64 start_ns;
	__u64 ran_ns;		/* its se.sum_exec_runtime then */
	/* every switch-out of the thread, its stack taken or not: when it
	 * left (0: on a CPU, or not seen leaving), and the time it stays off,
	 * predicted from the times before (a moving mean; 0: none yet) */
	__u64 out_ns;
	__u64 pred_ns;
	/* its time off and switch-outs since its last END, every one of
	 * them: the END carries them (exact per-thread sums) */
	__u64 acc_ns;
	__u64 acc_n;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_out);
} offcpu_start SEC(".maps");

/*
 * The sampling of switch-outs on one CPU. A switch-out's stack is taken
 * with probability 1/N: N is the CPU's, set at each period's start from
 * the period before so that the stacks cost the budget, but less for a
 * thread predicted to stay off longer than the CPU's switch-outs do on
 * average (N x that mean / the prediction, at least 1): a thread that
 * sleeps long has its rare waits taken however busy the CPU, and never
 * more than the CPU's N, so a wait that turns out long against its
 * prediction weighs no more than it would with one N for all. N is fixed
 * before the coin is tossed, so N times what a taken stack weighs is an
 * unbiased estimate, however good the prediction and however N moves.
 */
#define OFFCPU_PERIOD_NS	10000000ull	/* 10 ms */
#define OFFCPU_COST0_NS		3000	/* a stack, before one is seen */
#define OFFCPU_PRED_MAX		1000000000ull	/* a prediction counts <= 1 s */

struct offcpu_rate {
	__u64 start_ns;		/* the period's start; 0: none yet */
	__u64 seen;		/* target switch-outs in it */
	__u64 taken;		/* of them, stacks taken */
	__u64 cost_ns;		/* time taking them */
	__u64 pred_ns;		/* the sum of their predictions */
	__u64 unit_ns;		/* what a stack takes, smoothed */
	__u64 every;		/* N of this period */
	__u64 quantum_ns;	/* N x the mean prediction then */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_rate);
} offcpu_rate SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ASGST_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* the top of the stack of a sample without a window, for the walk only */
#define SCRATCH_BYTES	4096
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[SCRATCH_BYTES]);
} scratch SEC(".maps");

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	/* per-CPU slot, and these programs do not nest on a CPU */
	if (v)
		*v += n;
}

static __always_inline void stat_inc(__u32 idx)
{
	stat_add(idx, 1);
}

static __always_inline bool in_cgroup(void)
{
	int i;

	if (bpf_get_current_cgroup_id() == cgroup_id)
		return true;
	/* descendants of the target cgroup count too */
	for (i = 0; i < MAX_CG_LEVELS; i++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(i);

		if (!id)
			return false;
		if (id == cgroup_id)
			return true;
	}
	return false;
}

/* pid number of a struct pid in its innermost namespace */
static __always_inline __u32 ns_nr(struct pid *pid)
{
	unsigned int level = 0;
	int nr = 0;
	__u64 addr;

	if (!pid)
		return 0;
	if (bpf_core_read(&level, sizeof(level), &pid->level))
		return 0;
	addr = (__u64)pid + bpf_core_field_offset(struct pid, numbers) +
	       (__u64)(level & 0xff) * bpf_core_type_size(struct upid) +
	       bpf_core_field_offset(struct upid, nr);
	if (bpf_probe_read_kernel(&nr, sizeof(nr), (void *)addr))
		return 0;
	return nr;
}

/*
 * What a sample needs of its thread that does not change from sample to
 * sample, in one entry of task storage (one lookup instead of one per
 * item: a cold hash lookup is a few hundred ns at 99 Hz): its pid and tid
 * in the innermost namespace (half a dozen kernel reads, fixed for its
 * life), its stack mapping, and as of cache_gen whether its process is a
 * target (-p, -- CMD) and gets a window, and a copy of its "jthreads"
 * entry. Task storage, not a hash by tid: it goes with the task (no
 * reused tids, no eviction of an entry still being written, no size
 * limit) and it is found from the task without hashing.
 */
struct thread_cache {
	__u32 ns_pid;
	__u32 ns_tid;		/* 0: a new entry */
	__u32 gen;		/* cache_gen of the lookups; 0: none yet */
	__u8 target;
	__u8 window;
	__u8 py;		/* its process is in py_procs */
	__u8 pad;
	void *css_set;		/* the task's css_set when cgroup_id was read */
	__u64 cgroup_id;
	/* the JavaThread words as one read of [jt_lo, jt_lo + jt_span) */
	__s32 jt_lo;
	__u32 jt_span;		/* 0: one read per word */
	struct stack_range range;	/* start == end: not known */
	struct asgst_jthread jt;	/* java_thread 0: not a known thread */
	__u64 py_tstate;	/* its PyThreadState when last found */
	__u64 py_miss_ns;	/* not in the thread list then; 0: looked */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_cache);
} thread_cache SEC(".maps");

/*
 * The span of the JavaThread words read per sample (state, anchor,
 * continuation entry): 172 bytes on JDK 17, 416 on JDK 25, one user read
 * instead of five.
 */
#define JT_SPAN_MAX	512

static __always_inline void jt_word(__s32 off, __u32 size, __s32 *lo,
				    __s32 *hi)
{
	if (off < 0)
		return;
	if (off < *lo)
		*lo = off;
	if (off + (__s32)size > *hi)
		*hi = off + size;
}

/*
 * [lo, lo + span) of the words at these offsets, (span << 32) | lo; span
 * 0 when they are too far apart. Global: checked once, not on each of the
 * paths thread_lookups() is reached on.
 */
__noinline __u64 jt_span_of(__s32 off_state, __s32 off_last_sp,
			    __s32 off_last_pc, __s32 off_last_fp,
			    __s32 off_cont_entry)
{
	__s32 lo = 0x7fffffff, hi = -1;
	__u32 span;

	jt_word(off_state, 4, &lo, &hi);
	jt_word(off_last_sp, 8, &lo, &hi);
	jt_word(off_last_pc, 8, &lo, &hi);
	jt_word(off_last_fp, 8, &lo, &hi);
	jt_word(off_cont_entry, 8, &lo, &hi);
	span = hi > lo && hi - lo <= JT_SPAN_MAX ? hi - lo : 0;
	return (__u64)span << 32 | (__u32)lo;
}

static __always_inline void jt_span(struct thread_cache *c)
{
	const struct asgst_jthread *jt = &c->jt;
	__u64 v = jt_span_of(jt->off_state, jt->off_last_sp, jt->off_last_pc,
			     jt->off_last_fp, jt->off_cont_entry);

	c->jt_lo = (__s32)(__u32)v;
	c->jt_span = v >> 32;
}

/* the lookups an entry keeps until user space changes the maps */
static __always_inline void thread_lookups(struct thread_cache *c, __u32 tgid,
					   __u32 gen)
{
	struct asgst_jthread_key k = { .tgid = tgid, .ns_tid = c->ns_tid };
	struct asgst_jthread *jt;

	c->target = filter_mode != ASGST_FILTER_PIDS ||
		    bpf_map_lookup_elem(&targets, &tgid);
	c->window = window_size &&
		    (window_all || bpf_map_lookup_elem(&window_pids, &tgid));
	c->py = bpf_map_lookup_elem(&py_procs, &tgid) != NULL;
	c->py_tstate = 0;
	c->py_miss_ns = 0;
	jt = c->window ? bpf_map_lookup_elem(&jthreads, &k) : NULL;
	if (jt)
		c->jt = *jt;
	else
		__builtin_memset(&c->jt, 0, sizeof(c->jt));
	jt_span(c);
	c->gen = gen;
}

/*
 * The task's cgroup v2 id, read again only when its css_set changed (it
 * moved): two cold pointer loads fewer per sample. The css_set pointer
 * comes from the program's start (task_css()), the rest through probe
 * reads: the verifier checks each pointer load through a task's BTF
 * pointer with a search of the kernel's BTF by name, on each path it
 * takes there, a millisecond of start-up per few loads.
 */
static __always_inline void thread_cgroup(struct thread_cache *tc, __u64 css)
{
	if ((void *)css != tc->css_set) {
		tc->cgroup_id = BPF_CORE_READ((struct css_set *)css, dfl_cgrp,
					      kn, id);
		tc->css_set = (void *)css;
	}
}

/* the task's css_set, on the program's one path (see thread_cgroup()) */
static __always_inline __u64 task_css(struct task_struct *task)
{
	return (__u64)task->cgroups;
}

/*
 * The thread's entry, made when missing, its lookups redone when older
 * than cache_gen. When there is no memory or the storage is busy, *tmp is
 * filled for this sample alone.
 */
static __always_inline struct thread_cache *
get_thread(struct task_struct *task, __u64 id, __u64 css,
	   struct thread_cache *tmp)
{
	struct thread_cache *c;
	__u32 gen = cache_gen;

	c = bpf_task_storage_get(&thread_cache, task, NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (c && c->ns_tid) {
		if (c->gen != gen)
			thread_lookups(c, id >> 32, gen);
		thread_cgroup(c, css);
		return c;
	}
	if (!c) {
		__builtin_memset(tmp, 0, sizeof(*tmp));
		c = tmp;
	}
	/* an exiting thread may have no pid left: 0, looked at again */
	c->ns_tid = ns_nr(BPF_CORE_READ(task, thread_pid));
	c->ns_pid = ns_nr(BPF_CORE_READ(task, group_leader, thread_pid));
	thread_lookups(c, id >> 32, gen);
	thread_cgroup(c, css);
	return c;
}

static long vma_range_cb(struct task_struct *task, struct vm_area_struct *vma,
			 void *data)
{
	struct stack_range *r = data;

	r->start = vma->vm_start;
	r->end = vma->vm_end;
	return 0;
}

/*
 * Where the thread's frames end in its stack mapping [.., end): no frame
 * lies above the thread control block of a glibc or musl thread (it and
 * the static TLS sit at the top of the thread's stack block, and the fs
 * base points at it), nor above the main thread's initial stack pointer
 * (argc; argv, the environment and auxv lie above). What lies above is
 * KiBs of TLS or strings that no walk needs, copied into every sample.
 */
static __always_inline __u64 frames_top(struct task_struct *task, __u64 sp,
					__u64 end)
{
	__u64 fs = BPF_CORE_READ(task, thread.fsbase);
	__u64 top = BPF_CORE_READ(task, mm, start_stack) + 16;

	if (fs > sp && fs < end)
		return fs;
	if (top > sp && top < end)
		return top;
	return end;
}

/*
 * first unreadable page at or after sp's next page, up to lim. A global
 * function: the verifier checks its loop once, not on every path to it.
 */
__noinline __u64 probe_pages(__u64 sp, __u64 lim)
{
	__u64 page = (sp & ~(PAGE_SZ - 1)) + PAGE_SZ;
	__u8 tmp;
	int i;

	for (i = 0; i < MAX_WIN_PAGES; i++) {
		if (page >= lim)
			break;
		if (bpf_probe_read_user(&tmp, 1, (void *)page))
			return page;
		page += PAGE_SZ;
	}
	return lim;
}

/*
 * How many window bytes may be read from sp without leaving the stack
 * mapping; *cut is set when the mapping (or a known hole, *hole) ends
 * before want bytes. If the
 * mapping cannot be found (mmap lock busy), probe one byte per page until
 * a read fails.
 */
static __always_inline __u32 window_len(struct task_struct *task,
					 struct stack_range *range, __u64 sp,
					 __u32 want, bool *cut, bool *hole)
{
	struct stack_range r = {};
	__u64 lim = sp + want, end;

	*cut = false;
	*hole = false;
	if (sp >= range->start && sp < range->end) {
		end = range->end;
		*hole = range->hole && end < lim;
	} else if (bpf_find_vma(task, sp, vma_range_cb, &r, 0) == 0 &&
		   sp >= r.start && sp < r.end) {
		r.end = frames_top(task, sp, r.end);
		*range = r;
		end = r.end;
	} else {
		__u8 tmp;

		if (bpf_probe_read_user(&tmp, 1, (void *)sp))
			return 0;
		end = probe_pages(sp, lim);
	}
	if (end < lim) {
		*cut = !*hole;
		return end - sp;
	}
	return want;
}

#define WS_CUT		(1ull << 32)
#define WS_HOLE		(1ull << 33)

/*
 * window_len() of the current task as a global function (checked once,
 * not on each of its callers' paths): the length, WS_CUT and WS_HOLE.
 * The globals take scalars alone: a pointer argument has the kernel look
 * up the program's context type by name in its BTF at each call the
 * verifier checks, a linear search that costs more than the inlining.
 * The thread's cache entry is found again (a sample without one, no
 * memory for it, has no stack range to keep).
 */
__noinline __u64 window_span(__u64 sp, __u64 want)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct stack_range none = {}, *range = &none;
	struct thread_cache *tc;
	bool cut, hole;
	__u64 len;

	if (want > ASGST_MAX_WINDOW)
		return 0;
	tc = bpf_task_storage_get(&thread_cache, task, NULL, 0);
	/* no address computed from tc before the check (clang did so) */
	barrier_var(tc);
	if (tc)
		range = &tc->range;
	len = window_len(task, range, sp, want, &cut, &hole);
	return len | (cut ? WS_CUT : 0) | (hole ? WS_HOLE : 0);
}

/* remember a hole so the next samples read up to it directly */
static __always_inline void note_hole(struct thread_cache *tc, __u64 sp,
				      __u64 hole)
{
	if (sp >= tc->range.start && hole > sp && hole < tc->range.end) {
		tc->range.end = hole;
		tc->range.hole = 1;
	}
}

/*
 * Bytes each CPU put in the ring since it last looked at the reader, a
 * cache line each (CPU 0's is reader_pos's, which user space writes:
 * aligning the array past it changed no figure measured, and Debian 12's
 * kernel under QEMU ran the JVM test worse with it). A global, not a
 * per-CPU map: its look-up's key would
 * take stack the off-CPU program has none of on 6.1 (512 bytes over
 * its calls). CPUs past WAKE_CPUS share lines: a count lost to a race
 * only moves the next look a little.
 */
#define WAKE_CPUS	512
#define WAKE_STRIDE	8	/* words: a cache line */
__u64 wake_acc[WAKE_CPUS * WAKE_STRIDE];

/*
 * Waking the reader per record costs an irq_work self-IPI per sample
 * (tens of us in a VM, and it throttles the timer): wake it only when a
 * good part of the ring is waiting; it also polls with a timeout. Where
 * the reader is, and the ring's producer position, are cache lines other
 * CPUs write: read once per wakeup_check_bytes this CPU put in the ring
 * (a tenth of a JVM sample's cost when read at every one).
 */
static __always_inline __u64 wakeup_flag(__u64 size)
{
	__u64 *acc = &wake_acc[(bpf_get_smp_processor_id() &
				(WAKE_CPUS - 1)) * WAKE_STRIDE];

	if (*acc + size < wakeup_check_bytes) {
		*acc += size;
		return BPF_RB_NO_WAKEUP;
	}
	*acc = 0;
	/* not what lies past the consumer position: the reader holds
	 * records there until they are decoded (user/capture/ring.c) */
	if (bpf_ringbuf_query(&events, BPF_RB_PROD_POS) - reader_pos >=
	    wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* a reservation of size bytes, filled */
static __always_inline void submit(void *rec, __u64 size)
{
	bpf_ringbuf_submit(rec, wakeup_flag(size));
}

/*
 * A record put together in recbuf or jvmbuf, size bytes of it; false:
 * ring full. Packed where the kernel can: the unused room between the
 * user pcs and the window (REC_BASE) is left out, up to 1.5 KiB of a
 * JVM sample's 5, and the offsets after it moved down. The ring's memory
 * is cold when written (it wraps every few seconds): its bytes are most
 * of what a sample costs.
 */
static __always_inline bool output(void *rec, __u64 size)
{
	struct asgst_sample_hdr *h = rec;
	struct bpf_dynptr dp;
	__u64 head, gap;

	head = HDR_BYTES + (__u64)h->kstack_n * 8 + (__u64)h->ustack_n * 8;
	if (!ring_dynptr || head > REC_BASE || size < REC_BASE ||
	    size > REC_BASE + window_size + 8)
		return bpf_ringbuf_output(&events, rec, size,
					  wakeup_flag(size)) == 0;
	gap = REC_BASE - head;
	h->window_off = head;
	if (h->chunk_len)
		h->chunk_off -= gap;
	if (h->py_n)
		h->py_off -= gap;
	if (bpf_ringbuf_reserve_dynptr(&events, size - gap, 0, &dp)) {
		bpf_ringbuf_discard_dynptr(&dp, 0);
		return false;
	}
	bpf_dynptr_write(&dp, 0, rec, head, 0);
	bpf_dynptr_write(&dp, head, rec + REC_BASE, size - REC_BASE, 0);
	bpf_ringbuf_submit_dynptr(&dp, wakeup_flag(size - gap));
	return true;
}

/* a word of the JavaThread from the one read of its span, 0 if none */
static __always_inline __u64 jt_get(const void *buf, __s32 off, __s32 lo)
{
	__u32 o = off - lo;

	if (off < 0 || o > JT_SPAN_MAX - 8)
		return 0;
	return *(const __u64 *)(buf + o);
}

/*
 * The JavaThread words of the sampled thread, if the merger knows it. The
 * span is read into the per-CPU scratch, or, where another program may
 * run on this CPU meanwhile (a uprobe's is preemptible), into the record's
 * own stack area (own_buf), which the stacks overwrite afterwards.
 */
static __always_inline void read_jthread(struct asgst_sample_hdr *h,
					 const struct thread_cache *tc,
					 bool own_buf)
{
	const struct asgst_jthread *jt = &tc->jt;
	__u32 zero = 0, span = tc->jt_span;
	__s32 lo = tc->jt_lo;
	__u64 base;
	__u32 st = 0;
	void *buf = NULL;

	if (!jt->java_thread)
		return;
	base = jt->java_thread;
	/* the thread is stopped on this CPU: the words are consistent */
	if (span)
		buf = own_buf ? (void *)h + HDR_BYTES :
				bpf_map_lookup_elem(&scratch, &zero);
	if (buf) {
		__u32 n = span & (2 * JT_SPAN_MAX - 1);

		barrier_var(n);
		if (n > JT_SPAN_MAX)
			n = JT_SPAN_MAX;
		if (bpf_probe_read_user(buf, n, (void *)(base + lo)))
			return;
		h->jt_state = (__u32)jt_get(buf, jt->off_state, lo);
		h->jt_last_sp = jt_get(buf, jt->off_last_sp, lo);
		h->jt_last_pc = jt_get(buf, jt->off_last_pc, lo);
		h->jt_last_fp = jt_get(buf, jt->off_last_fp, lo);
		h->jt_cont_entry = jt_get(buf, jt->off_cont_entry, lo);
		h->flags |= ASGST_SF_THREAD_INFO;
		return;
	}
	if (jt->off_state >= 0 &&
	    bpf_probe_read_user(&st, sizeof(st), (void *)(base + jt->off_state)))
		return;
	h->jt_state = st;
	if (jt->off_last_sp >= 0)
		bpf_probe_read_user(&h->jt_last_sp, 8,
				    (void *)(base + jt->off_last_sp));
	if (jt->off_last_pc >= 0)
		bpf_probe_read_user(&h->jt_last_pc, 8,
				    (void *)(base + jt->off_last_pc));
	if (jt->off_last_fp >= 0)
		bpf_probe_read_user(&h->jt_last_fp, 8,
				    (void *)(base + jt->off_last_fp));
	if (jt->off_cont_entry >= 0)
		bpf_probe_read_user(&h->jt_cont_entry, 8,
				    (void *)(base + jt->off_cont_entry));
	h->flags |= ASGST_SF_THREAD_INFO;
}

/*
 * Fill the header and the kernel stack into a record of at least REC_BASE
 * bytes (a ring reservation, or recbuf), and read the user registers. Returns the kernel stack's
 * bytes. kmode: the kernel was interrupted (or is switching the task out).
 */
static __always_inline __u32 fill_head(void *ctx, void *rec,
				       struct task_struct *task, __u64 id,
				       struct thread_cache *tc,
				       bool user, bool kmode, __u32 event,
				       __u64 now)
{
	struct asgst_sample_hdr *h = rec;
	struct pt_regs *ur;
	__u32 kbytes = 0;
	long n;

	__builtin_memset(h, 0, sizeof(*h));
	h->magic = ASGST_SAMPLE_MAGIC;
	h->version = ASGST_SAMPLE_VERSION;
	h->hdr_size = HDR_BYTES;
	h->event = event;
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->ns_pid = tc->ns_pid;
	h->ns_tid = tc->ns_tid;
	h->cpu = bpf_get_smp_processor_id();
	h->ktime_ns = now;
	/*
	 * Plain loads through the task's BTF pointer instead of the two
	 * helpers: a helper call is ~100 ns with this host's return-thunk
	 * mitigations. comm is NUL-padded (set_task_comm).
	 */
	h->cgroup_id = tc->cgroup_id;
	*(__u64 *)&h->comm[0] = *(__u64 *)&task->comm[0];
	*(__u64 *)&h->comm[8] = *(__u64 *)&task->comm[8];

	if (kmode) {
		h->flags |= ASGST_SF_KERNEL_MODE;
		n = bpf_get_stack(ctx, rec + HDR_BYTES, KSTACK_BYTES, 0);
		if (n < 0)
			h->flags |= ASGST_SF_KSTACK_ERR;
		else
			kbytes = (__u32)n & ~7u;
		if (kbytes > KSTACK_BYTES)
			kbytes = KSTACK_BYTES;
	}
	h->kstack_n = kbytes / 8;
	h->window_off = HDR_BYTES + kbytes;

	if (!user) {
		h->flags |= ASGST_SF_NO_USER;
		return kbytes;
	}
	/* the user-mode registers, even when the kernel was interrupted */
	/* a BTF pointer: plain loads, no helper call per register */
	ur = (struct pt_regs *)bpf_task_pt_regs(task);
	if (ur) {
		h->ip = ur->ip;
		h->sp = ur->sp;
		h->bp = ur->bp;
		h->rbx = ur->bx;
		h->r13 = ur->r13;
	}
	return kbytes;
}

/* the kernel's frame-pointer walk of the user stack, packed after kstack */
static __always_inline void user_stack_kernel(void *ctx, void *rec,
					      __u32 kbytes)
{
	struct asgst_sample_hdr *h = rec;
	__u32 ubytes = 0;
	long n;

	barrier_var(kbytes);
	if (kbytes > KSTACK_BYTES)
		kbytes = KSTACK_BYTES;
	n = bpf_get_stack(ctx, rec + HDR_BYTES + kbytes, USTACK_BYTES,
			  BPF_F_USER_STACK);
	if (n < 0)
		h->flags |= ASGST_SF_USTACK_ERR;
	else
		ubytes = (__u32)n & ~7u;
	if (ubytes > USTACK_BYTES)
		ubytes = USTACK_BYTES;
	h->ustack_n = ubytes / 8;
	h->window_off = HDR_BYTES + kbytes + ubytes;
}

/*
 * The kernel's frame-pointer walk of the user stack (ip, then each frame's
 * return address from rbp[1], rbp = rbp[0]), but reading the frames that
 * lie in win (a copy of wlen bytes from sp, at most cap) from the copy: a
 * stack-memory read per frame is most of the cost of a walk (bpf_get_stack
 * of the user stack is 1.3-3 us here). Frames beyond it are read from user
 * memory. One step per frame under bpf_loop: the verifier checks the step
 * once instead of once per frame and per path.
 */
struct walk {
	__u64 fp;
	__u64 sp;
	const void *win;
	__u64 *us;
	__u64 frame[2];		/* here, not in the step's own frame: 6.18's
				 * verifier trips over a helper writing a
				 * callback's stack ("verifier bug") */
	__u32 wlen;
	__u32 n;
};

static __always_inline long walk_step(struct walk *w, __u32 cap)
{
	__u64 fp = w->fp, off, next, ret;
	__u32 n = w->n;

	if (fp < w->sp || (fp & 7) || n >= ASGST_MAX_USTACK)
		return 1;
	off = fp - w->sp;
	if (off + 16 <= w->wlen && off <= cap - 16) {
		next = *(const __u64 *)(w->win + off);
		ret = *(const __u64 *)(w->win + off + 8);
	} else if (bpf_probe_read_user(w->frame, sizeof(w->frame),
				       (void *)fp)) {
		return 1;
	} else {
		next = w->frame[0];
		ret = w->frame[1];
	}
	if (!ret)
		return 1;
	w->us[n] = ret;
	w->n = n + 1;
	if (next <= fp)
		return 1;
	w->fp = next;
	return 0;
}

static long walk_window(__u64 i, void *w)
{
	return walk_step(w, window_size);
}

static long walk_scratch(__u64 i, void *w)
{
	return walk_step(w, SCRATCH_BYTES);
}

/* the walk over the record's own window */
static __always_inline void user_stack_window(void *rec, __u32 kbytes,
					      __u32 wlen)
{
	struct asgst_sample_hdr *h = rec;
	struct walk w = { .fp = h->bp, .sp = h->sp, .win = rec + REC_BASE,
			  .wlen = wlen, .n = 1 };

	barrier_var(kbytes);
	if (kbytes > KSTACK_BYTES)
		kbytes = KSTACK_BYTES;
	w.us = rec + HDR_BYTES + kbytes;
	w.us[0] = h->ip;
	bpf_loop(ASGST_MAX_USTACK, walk_window, &w, 0);
	h->ustack_n = w.n;
}

/* where fill_window() puts a record together */
enum rec_buf {
	REC_RECBUF,	/* this CPU's recbuf (cpu samples) */
	REC_JVMBUF,	/* this CPU's jvmbuf (JVM events) */
	REC_RING,	/* a reservation of the ring */
};

/*
 * This CPU's recbuf or jvmbuf record; NULL for jvmbuf when no JVM event is
 * recorded (it has its size only then).
 */
static __always_inline void *rec_buf(__u32 which)
{
	__u32 cpu = bpf_get_smp_processor_id();

	if (which == REC_JVMBUF && (event_mask & ASGST_EVMASK_JVM))
		return bpf_map_lookup_elem(&jvmbuf, &cpu);
	if (which == REC_JVMBUF)
		return NULL;
	return bpf_map_lookup_elem(&recbuf, &cpu);
}

/* output() of this CPU's recbuf or jvmbuf record: global, checked once
 * instead of on each path of fill_window() to it; 0, or -1 when the ring
 * is full */
__noinline int output_buf(__u32 which, __u64 size)
{
	void *rec = rec_buf(which);

	if (!rec || size > REC_BASE + window_size + 8)
		return -1;
	return output(rec, size) ? 0 : -1;
}

/*
 * The walk over the window of this CPU's recbuf or jvmbuf record. A global
 * function: the verifier checks the walk once, instead of once for each
 * of the many states fill_window() reaches it in (a virtual thread's
 * chunk or not, a Python thread or not, a cut or a hole in the window).
 */
__noinline int user_stack_buf(__u32 which, __u64 kbytes, __u64 wlen)
{
	void *rec = rec_buf(which);

	/* 64-bit arguments: bounded here, with no zero-extension that
	 * clang may apply to a copy the verifier did not see checked */
	if (!rec || kbytes > KSTACK_BYTES || wlen > ASGST_MAX_WINDOW)
		return -1;
	user_stack_window(rec, kbytes, wlen);
	return 0;
}

/*
 * A record without a window: the walk over a per-CPU copy of the top of
 * the stack (up to where the thread's frames end, at most SCRATCH_BYTES),
 * which is not kept; the kernel's own walk when there is no copy.
 */
static __always_inline void user_stack_scratch(void *ctx, void *rec,
					       struct task_struct *task,
					       struct thread_cache *tc,
					       __u32 kbytes)
{
	struct asgst_sample_hdr *h = rec;
	struct walk w;
	__u32 zero = 0;
	__u64 len = 0;
	void *buf;

	barrier_var(kbytes);
	if (kbytes > KSTACK_BYTES)
		kbytes = KSTACK_BYTES;
	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf) {
		user_stack_kernel(ctx, rec, kbytes);
		return;
	}
	len = (__u32)window_span(h->sp, SCRATCH_BYTES);
	barrier_var(len);
	if (len > SCRATCH_BYTES)
		len = SCRATCH_BYTES;
	/* a hole or a read error: every frame from user memory then */
	if (len && bpf_probe_read_user(buf, len, (void *)h->sp))
		len = 0;
	w.fp = h->bp;
	w.sp = h->sp;
	w.win = buf;
	w.wlen = len;
	w.n = 1;
	w.us = rec + HDR_BYTES + kbytes;
	w.us[0] = h->ip;
	bpf_loop(ASGST_MAX_USTACK, walk_scratch, &w, 0);
	h->ustack_n = w.n;
	barrier_var(w.n);
	if (w.n > ASGST_MAX_USTACK)
		w.n = ASGST_MAX_USTACK;
	h->window_off = HDR_BYTES + kbytes + w.n * 8;
}

/*
 * CPython frames (bpf/sampler.h): the thread's PyThreadState, found in
 * the interpreter's thread list by native_thread_id and kept in the
 * thread's cache entry while its native_thread_id still says so, then
 * tstate->cframe->current_frame and each frame's previous. One bounded
 * step per thread and per frame under bpf_loop; every read goes into the
 * per-CPU py_buf (a helper writing a callback's own stack trips some
 * verifiers, see struct walk), each frame's fields in one read of its
 * first fr_span bytes.
 */
struct py_buf {
	__u8 fr[ASGST_PY_SPAN_MAX];
	struct asgst_py_frame out[ASGST_PY_MAX_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_buf);
} pybuf SEC(".maps");

struct py_walk {
	const struct asgst_py_proc *pp;
	struct py_buf *b;
	__u64 ts;		/* the thread list: the one looked at */
	__u64 found;
	__u64 frame;		/* the frame chain: the next frame */
	__u32 tid;
	__u32 n;
	__u32 trunc;
	__u32 err;
};

#define PY_MISS_NS	(200ull * 1000 * 1000)
#define PY_OFF_OK(o)	((__u32)(o) <= ASGST_PY_SPAN_MAX - 8 && !((o) & 7))

/* a user word at addr + off into b->fr; 0 when it cannot be read */
static __always_inline __u64 py_read(struct py_buf *b, __u64 addr, __s32 off)
{
	if (!addr || bpf_probe_read_user(b->fr, 8, (void *)(addr + off)))
		return 0;
	return *(__u64 *)b->fr;
}

static long py_thread_step(__u64 i, void *arg)
{
	struct py_walk *w = arg;
	const struct asgst_py_proc *pp = w->pp;
	__u64 ts = w->ts;

	if (!ts)
		return 1;
	if (bpf_probe_read_user(w->b->fr, 8, (void *)(ts + pp->ts_tid)))
		return 1;
	if (*(__u64 *)w->b->fr == w->tid) {
		w->found = ts;
		return 1;
	}
	w->ts = py_read(w->b, ts, pp->ts_next);
	return 0;
}

static long py_frame_step(__u64 i, void *arg)
{
	struct py_walk *w = arg;
	const struct asgst_py_proc *pp = w->pp;
	struct py_buf *b = w->b;
	struct asgst_py_frame *f;
	__s32 oc = pp->fr_code, op = pp->fr_previous, oi = pp->fr_instr;
	__s32 oe = pp->fr_entry, oo = pp->fr_owner;
	__s32 og = pp->fr_globals, ol = pp->fr_locals;
	__u32 span = pp->fr_span, n = w->n;
	__u64 code, instr, glob, loc;

	if (!w->frame)
		return 1;
	if (n >= ASGST_PY_MAX_FRAMES) {
		w->trunc = 1;
		return 1;
	}
	if (span > ASGST_PY_SPAN_MAX)
		span = ASGST_PY_SPAN_MAX;
	if (!PY_OFF_OK(oc) || !PY_OFF_OK(op) || !PY_OFF_OK(oi) ||
	    !PY_OFF_OK(og) || !PY_OFF_OK(ol) ||
	    (__u32)oe >= ASGST_PY_SPAN_MAX || (__u32)oo >= ASGST_PY_SPAN_MAX ||
	    bpf_probe_read_user(b->fr, span, (void *)w->frame)) {
		w->err = 1;
		return 1;
	}
	/*
	 * Checked above, and masked again where used: clang spills them,
	 * and verifiers before 6.9 lose a spilled scalar's bounds (see
	 * read_chunk()). The masks change no offset that passed the check.
	 */
	barrier_var(oc);
	code = *(__u64 *)(b->fr + (oc & (ASGST_PY_SPAN_MAX - 8)));
	barrier_var(oi);
	instr = *(__u64 *)(b->fr + (oi & (ASGST_PY_SPAN_MAX - 8))) - code;
	f = &b->out[n];
	f->code = code;
	f->instr = instr < (1ull << 30) ? (__u32)instr : ~0u;
	barrier_var(oe);
	barrier_var(oo);
	f->flags = (b->fr[oe & (ASGST_PY_SPAN_MAX - 1)] ? ASGST_PYF_ENTRY : 0) |
		   ((__u32)b->fr[oo & (ASGST_PY_SPAN_MAX - 1)]
		    << ASGST_PYF_OWNER_SHIFT);
	/* what kind of code runs, for the reader to check the code object
	 * it finds at the address later against (py_proc__frame) */
	barrier_var(og);
	glob = *(__u64 *)(b->fr + (og & (ASGST_PY_SPAN_MAX - 8)));
	barrier_var(ol);
	loc = *(__u64 *)(b->fr + (ol & (ASGST_PY_SPAN_MAX - 8)));
	if (!loc)
		f->flags |= ASGST_PYF_FUNC;
	else if (loc == glob)
		f->flags |= ASGST_PYF_MODULE;
	w->n = n + 1;
	barrier_var(op);
	w->frame = *(__u64 *)(b->fr + (op & (ASGST_PY_SPAN_MAX - 8)));
	return 0;
}

/*
 * The thread's Python frames into the CPU's py_buf (h->py_tstate set);
 * how many, 0 when it runs none.
 */
static __always_inline __u32 py_walk(struct asgst_sample_hdr *h,
				     struct thread_cache *tc, __u32 tgid,
				     struct py_buf **out)
{
	struct py_walk w = { .tid = tc->ns_tid };
	__u64 ts = tc->py_tstate, cf;
	__u32 zero = 0;

	w.pp = bpf_map_lookup_elem(&py_procs, &tgid);
	w.b = bpf_map_lookup_elem(&pybuf, &zero);
	if (!w.pp || !w.b)
		return 0;
	*out = w.b;
	h->flags |= ASGST_SF_PY;
	if (ts && py_read(w.b, ts, w.pp->ts_tid) != w.tid)
		ts = 0;
	if (!ts) {
		/*
		 * A thread the interpreter does not know (a C library's
		 * own) would walk the whole list at every sample: it is
		 * looked for again PY_MISS_NS after it was not found.
		 */
		__u64 now = bpf_ktime_get_ns();

		if (tc->py_miss_ns && now - tc->py_miss_ns < PY_MISS_NS)
			return 0;
		w.ts = py_read(w.b, py_read(w.b, w.pp->runtime,
					    w.pp->rt_interp),
			       w.pp->is_threads);
		bpf_loop(ASGST_PY_THREADS_MAX, py_thread_step, &w, 0);
		ts = w.found;
		tc->py_tstate = ts;
		tc->py_miss_ns = ts ? 0 : now;
	}
	h->py_tstate = ts;
	if (!ts)
		return 0;
	cf = py_read(w.b, ts, w.pp->ts_cframe);
	w.frame = py_read(w.b, cf, w.pp->cf_frame);
	bpf_loop(ASGST_PY_MAX_FRAMES + 1, py_frame_step, &w, 0);
	if (w.trunc)
		h->flags |= ASGST_SF_PY_TRUNC;
	if (w.err)
		h->flags |= ASGST_SF_PY_ERR;
	return w.n;
}

/*
 * py_walk() of the current thread into this CPU's recbuf record (cpu
 * samples alone walk Python frames): global, as user_stack_buf()
 */
__noinline int py_walk_buf(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	void *rec = rec_buf(REC_RECBUF);
	struct thread_cache *tc;
	struct py_buf *pb;

	/* its cache entry keeps where its thread state was found */
	tc = bpf_task_storage_get(&thread_cache, task, NULL, 0);
	if (!rec || !tc)
		return 0;
	return py_walk(rec, tc, tgid, &pb);
}

/*
 * The Python frames of a record at off, up to lim bytes of the record
 * (off and lim as the verifier sees them bounded by the callers).
 */
static __always_inline void py_put(struct asgst_sample_hdr *h, void *rec,
				   struct py_buf *b, __u32 n, __u64 off,
				   __u64 room)
{
	__u64 bytes = (__u64)n * sizeof(struct asgst_py_frame);

	if (bytes > room) {
		bytes = room & ~15ull;
		h->flags |= ASGST_SF_PY_TRUNC;
	}
	barrier_var(bytes);
	if (bytes > ASGST_PY_BYTES)
		bytes = ASGST_PY_BYTES;
	if (!bytes || bpf_probe_read_kernel(rec + off, bytes, b->out))
		return;
	h->py_off = off;
	h->py_n = bytes / sizeof(struct asgst_py_frame);
}

/* a heap oop field of obj, decoded */
static __always_inline __u64 read_oop(const struct asgst_jvm_cont *jc,
				      __u64 obj, __s32 off)
{
	__u64 v = 0;
	__u32 narrow = 0;

	if (jc->oop_size != 4)
		return bpf_probe_read_user(&v, 8, (void *)(obj + off)) ? 0 : v;
	if (bpf_probe_read_user(&narrow, 4, (void *)(obj + off)) || !narrow)
		return 0;
	return jc->oop_base + ((__u64)narrow << (jc->oop_shift & 31));
}

/*
 * A mounted virtual thread's frozen frames: ContinuationEntry -> its
 * Continuation -> tail StackChunk -> the words [sp, bottom) of its stack.
 * The youngest ASGST_CHUNK_BYTES of them, from the top frame's saved rbp
 * and return pc, go into the record at coff (right after the window,
 * which left room for them).
 */
static __always_inline void read_chunk(struct asgst_sample_hdr *h, void *rec,
				       const struct asgst_jvm_cont *jc,
				       __u64 coff)
{
	__u64 cont = 0, chunk, top, end, from, n;
	__s32 size = 0, sp = 0, lim = 0, args = 0;
	int i;

	if (bpf_probe_read_user(&cont, 8, (void *)(h->jt_cont_entry +
						      jc->entry_cont)) || !cont)
		return;
	chunk = read_oop(jc, cont, jc->cont_tail);
	/* the tail chunk, or the first non-empty parent of it */
	for (i = 0; i < 4 && chunk; i++) {
		if (bpf_probe_read_user(&size, 4, (void *)(chunk + jc->chunk_size)) ||
		    bpf_probe_read_user(&sp, 4, (void *)(chunk + jc->chunk_sp)))
			return;
		if (jc->chunk_bottom >= 0) {
			if (bpf_probe_read_user(&lim, 4,
						(void *)(chunk + jc->chunk_bottom)))
				return;
		} else {
			if (bpf_probe_read_user(&args, 4,
						(void *)(chunk + jc->chunk_argsize)))
				return;
			lim = size - args;
		}
		if (sp < lim)
			break;
		chunk = read_oop(jc, chunk, jc->chunk_parent);
	}
	/* all empty (all thawed), or not a chunk we understand */
	if (!chunk || sp < 2 || lim <= sp || lim > size || size > (1 << 24))
		return;
	top = chunk + jc->chunk_stack + (__u64)sp * 8;
	end = chunk + jc->chunk_stack + (__u64)lim * 8;
	from = top - 16;
	n = end - from;
	if (n > ASGST_CHUNK_BYTES)
		n = ASGST_CHUNK_BYTES;
	barrier_var(n);
	if (n > ASGST_CHUNK_BYTES)
		n = ASGST_CHUNK_BYTES;
	/*
	 * coff is not used past the read: kept live, clang spills it before
	 * the bound check and reloads it for the read, and verifiers before
	 * 6.9 (no ids for spilled scalars) never see the reloaded copy
	 * bounded. Debian 12's 6.1 refused the program so.
	 */
	h->chunk_off = coff;
	barrier_var(coff);
	if (coff > REC_BASE + window_size + 8 - ASGST_CHUNK_BYTES ||
	    bpf_probe_read_user(rec + coff, n, (void *)from)) {
		h->chunk_off = 0;
		return;
	}
	if (read_oop(jc, chunk, jc->chunk_parent))
		h->flags |= ASGST_SF_CHUNK_MORE;
	h->chunk_len = n;
	h->chunk_addr = from;
	h->chunk_sp = top;
	h->chunk_end = end;
}

/* read_chunk() into this CPU's recbuf or jvmbuf record: global, as
 * user_stack_buf() */
__noinline int read_chunk_buf(__u32 which, __u64 coff)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	const struct asgst_jvm_cont *jc;
	void *rec = rec_buf(which);

	jc = bpf_map_lookup_elem(&jvm_conts, &tgid);
	if (!rec || !jc)
		return -1;
	read_chunk(rec, rec, jc, coff);
	return 0;
}

/*
 * The JavaThread words, the stack window and a virtual thread's frozen
 * frames into rec (a header filled, room for REC_BASE + window_size + 8
 * bytes); the bytes of the record used.
 */
static __always_inline __u64 fill_window(void *rec, struct task_struct *task,
					 struct thread_cache *tc, __u32 tgid,
					 __u32 kbytes, enum rec_buf buf,
					 bool py)
{
	struct asgst_sample_hdr *h = rec;
	const struct asgst_jvm_cont *jc = NULL;
	struct py_buf *pb;
	__u32 want = window_size, pn = 0, zero = 0;
	bool cut, hole;
	__u64 len, size, ws;

	/* JVMs: the JavaThread words (thread state, anchor, continuation) */
	read_jthread(h, tc, buf != REC_RECBUF);
	h->window_off = REC_BASE;
	/* a virtual thread mounted: room for its frozen frames too */
	if (h->jt_cont_entry && window_size >= 2 * ASGST_CHUNK_BYTES &&
	    (jc = bpf_map_lookup_elem(&jvm_conts, &tgid)))
		want = window_size - ASGST_CHUNK_BYTES;
	/* a CPython thread: room for its frames after the window */
	if (py && !jc && tc->py && window_size >= 2 * ASGST_PY_BYTES) {
		pn = py_walk_buf();
		want = window_size - ASGST_PY_BYTES;
	}
	ws = window_span(h->sp, want);
	len = (__u32)ws;
	cut = ws & WS_CUT;
	hole = ws & WS_HOLE;
	/* keep the bound where the verifier sees it, clang may fold it */
	barrier_var(len);
	if (len > want)
		len = want;
	if (len > window_size)
		len = window_size;
	if (len && bpf_probe_read_user(rec + REC_BASE, len, (void *)h->sp)) {
		/*
		 * A page inside the mapping is not present (a big frame
		 * never touched it): keep what lies before the hole.
		 */
		len = probe_pages(h->sp, h->sp + len) - h->sp;
		note_hole(tc, h->sp, h->sp + len);
		barrier_var(len);
		if (len > window_size)
			len = window_size;
		if (!len || bpf_probe_read_user(rec + REC_BASE, len,
						(void *)h->sp))
			len = 0;
		else
			hole = true;
		cut = false;
	}
	if (len && hole)
		h->flags |= ASGST_SF_WINDOW_HOLE;
	if (len) {
		h->window_len = len;
		if (cut)
			h->flags |= ASGST_SF_WINDOW_CUT;
	} else {
		h->flags |= ASGST_SF_WINDOW_ERR;
	}
	if (buf == REC_RING)
		user_stack_window(rec, kbytes, len);
	else
		user_stack_buf(buf, kbytes, len);
	/* the frozen frames right after the window (it left room) */
	size = REC_BASE + ((len + 7) & ~7ull);
	if (jc) {
		if (buf == REC_RING)
			read_chunk(h, rec, jc, size);
		else
			read_chunk_buf(buf, size);
		if (h->chunk_len)
			size = h->chunk_off + h->chunk_len;
	}
	if (pn) {
		size = (size + 7) & ~7ull;
		barrier_var(size);
		if (size <= REC_BASE + window_size + 8 - ASGST_PY_BYTES &&
		    (pb = bpf_map_lookup_elem(&pybuf, &zero))) {
			py_put(h, rec, pb, pn, size, ASGST_PY_BYTES);
			size += (__u64)h->py_n * sizeof(struct asgst_py_frame);
		}
	}
	barrier_var(size);
	if (size > REC_BASE + window_size + 8)	/* recbuf's value_size */
		size = REC_BASE + window_size + 8;
	return size;
}

/*
 * One record of the current task: header, stacks and, for the processes
 * that want it, the stack window. False when the ring buffer was full.
 */
static __always_inline bool record(void *ctx, struct task_struct *task,
				   __u64 id, struct thread_cache *tc,
				   bool user, bool kmode, __u32 event,
				   __u32 xflags, __u64 now)
{
	struct asgst_sample_hdr *h;
	__u32 tgid = id >> 32, kbytes, cpu;
	void *rec;

	if (!window_size || !tc->window || !user) {
		rec = bpf_ringbuf_reserve(&events, REC_BASE, 0);
		if (!rec)
			return false;
		kbytes = fill_head(ctx, rec, task, id, tc, user, kmode, event,
				   now);
		h = rec;
		h->flags |= xflags;
		if (user)
			user_stack_scratch(ctx, rec, task, tc, kbytes);
		submit(rec, REC_BASE);
		return true;
	}

	cpu = bpf_get_smp_processor_id();
	rec = bpf_map_lookup_elem(&recbuf, &cpu);
	if (!rec)
		return false;
	kbytes = fill_head(ctx, rec, task, id, tc, true, kmode, event, now);
	h = rec;
	h->flags |= ASGST_SF_WINDOW_WANTED | xflags;
	return output_buf(REC_RECBUF, fill_window(rec, task, tc, tgid, kbytes,
						  REC_RECBUF, true)) == 0;
}

SEC("perf_event")
int asgst_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task;
	struct thread_cache tmp, *tc;
	__u64 id = bpf_get_current_pid_tgid();
	__u64 cs, css, t0 = 0;
	bool user;

	if ((__u32)id == 0) {
		stat_inc(ASGST_STAT_IDLE);
		return 0;
	}
	if (time_samples)
		t0 = bpf_ktime_get_ns();
	task = bpf_get_current_task_btf();
	/* here, on the one path: see thread_cgroup() */
	user = task->mm != NULL;
	css = task_css(task);
	if (filter_mode == ASGST_FILTER_CGROUP && !in_cgroup()) {
		stat_inc(ASGST_STAT_FILTERED);
		return 0;
	}
	/* -p, -- CMD: the entry says whether it is a target */
	tc = get_thread(task, id, css, &tmp);
	if (!tc->target) {
		stat_inc(ASGST_STAT_FILTERED);
		return 0;
	}
	/*
	 * user-mode CPL is 3: anything else interrupted the kernel. The ctx
	 * only allows 8-byte loads, so read the whole cs word.
	 */
	cs = *(volatile __u64 *)((void *)&ctx->regs +
				 __builtin_offsetof(struct pt_regs, cs));
	if (record(ctx, task, id, tc, user, (cs & 3) != 3, ASGST_EV_CPU, 0,
		   bpf_ktime_get_ns()))
		stat_inc(ASGST_STAT_SAMPLES);
	else
		stat_inc(ASGST_STAT_LOST);
	/* what a taken sample costs, apart from the cheap runs that take
	 * none (idle, not a target), which bpf_stats averages in */
	if (time_samples)
		stat_add(ASGST_STAT_SAMPLE_NS, bpf_ktime_get_ns() - t0);
	return 0;
}

/*
 * The END record of an off-CPU stack: header only, the record's time names
 * the stack, weight_ns the time off the CPU.
 */
static __always_inline void offcpu_end(struct task_struct *task,
				       struct offcpu_out *t0, __u64 weight)
{
	struct asgst_sample_hdr *h;

	h = bpf_ringbuf_reserve(&events, HDR_BYTES, 0);
	if (!h) {
		stat_inc(ASGST_STAT_OFFCPU_LOST);
		return;
	}
	__builtin_memset(h, 0, sizeof(*h));
	h->magic = ASGST_SAMPLE_MAGIC;
	h->version = ASGST_SAMPLE_VERSION;
	h->hdr_size = HDR_BYTES;
	h->event = ASGST_EV_OFFCPU_END;
	h->window_off = HDR_BYTES;
	h->flags = ASGST_SF_NO_USER;
	h->pid = task->tgid;
	h->tid = task->pid;
	h->cpu = bpf_get_smp_processor_id();
	h->ktime_ns = t0->rec_ns;
	/* the fast monotonic clock may not have moved (or read a hair
	 * behind on another CPU) for a very short switch: it still took
	 * time, count the least */
	h->weight_ns = weight ? weight : 1;
	/* every switch-out of the thread since its END before, this one's
	 * included: the exact sums that its sampled stacks are scaled to */
	h->ev_weight = t0->acc_ns;
	h->ev_size = t0->acc_n;
	t0->acc_ns = 0;
	t0->acc_n = 0;
	bpf_probe_read_kernel_str(h->comm, sizeof(h->comm), task->comm);
	submit(h, HDR_BYTES);
}

/*
 * The sampling period of this CPU as of now. A new period sets N from the
 * one before: N = ceil(switch-outs x what a stack takes / the budget of
 * the period's length), so at a steady rate the stacks cost the budget,
 * and below about budget / (what a stack takes) switch-outs a second
 * every one is taken.
 */
static __always_inline struct offcpu_rate *offcpu_period(__u64 now)
{
	struct offcpu_rate *r;
	__u64 el, budget, unit, n;
	__u32 k = 0;

	r = bpf_map_lookup_elem(&offcpu_rate, &k);
	if (!r)
		return NULL;
	if (!r->start_ns) {
		r->start_ns = now;
		r->unit_ns = OFFCPU_COST0_NS;
		r->every = 1;
		return r;
	}
	el = now - r->start_ns;
	if (el < OFFCPU_PERIOD_NS)
		return r;
	unit = r->unit_ns;
	if (r->taken)
		unit = (3 * unit + r->cost_ns / r->taken) / 4;
	budget = el / 1000 * offcpu_budget_ppm / 1000;
	n = budget ? (r->seen * unit + budget - 1) / budget :
		     ASGST_SF_EVERY_MAX;
	if (n < 1)
		n = 1;
	if (n > ASGST_SF_EVERY_MAX)
		n = ASGST_SF_EVERY_MAX;
	r->every = n;
	r->quantum_ns = r->seen ? n * (r->pred_ns / r->seen) : 0;
	r->unit_ns = unit;
	r->start_ns = now;
	r->seen = 0;
	r->taken = 0;
	r->cost_ns = 0;
	r->pred_ns = 0;
	return r;
}

/* N of a switch-out of a thread predicted to stay off pred ns (0: not
 * known, its first: taken) */
static __always_inline __u64 offcpu_n(struct offcpu_rate *r, __u64 pred)
{
	__u64 n;

	if (!r || !pred || r->every <= 1)
		return 1;
	if (pred <= r->quantum_ns / r->every)
		return r->every;
	n = r->quantum_ns / pred;
	return n ? n : 1;
}

/*
 * Off-CPU: the stack of a target thread as it leaves the CPU (current is
 * still prev here), and when it runs again a header-only END record with
 * the time in between; user space joins the two by (tid, ktime_ns). The
 * stack of a switch-out is taken with probability 1/N (offcpu_every, or
 * offcpu_n's), its record marked as standing for N switches: the rest
 * cost a coin toss, the thread's clock and no record.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(asgst_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u64 id, now = bpf_ktime_get_ns(), start, ran;
	struct thread_cache tmp, *tc;
	struct offcpu_rate *r = NULL;
	struct offcpu_out *t0;
	__u32 state;
	__u64 every;
	bool take;

	t0 = bpf_task_storage_get(&offcpu_start, next, NULL, 0);
	if (t0 && t0->out_ns) {
		__u64 d = now > t0->out_ns ? now - t0->out_ns : 0;

		/* a moving mean of its times off, a quarter the newest */
		t0->pred_ns = t0->pred_ns ? t0->pred_ns - t0->pred_ns / 4 +
					    d / 4 : d;
		if (!t0->pred_ns)
			t0->pred_ns = 1;
		t0->out_ns = 0;
		t0->acc_ns += d ? d : 1;
		t0->acc_n++;
	}
	if (t0 && t0->rec_ns) {
		offcpu_end(next, t0,
			   now > t0->start_ns ? now - t0->start_ns : 0);
		t0->rec_ns = 0;
	}

	id = bpf_get_current_pid_tgid();
	if ((__u32)id == 0 || (__u32)id != (__u32)prev->pid || !prev->mm)
		return 0;
	if (filter_mode == ASGST_FILTER_CGROUP && !in_cgroup())
		return 0;
	tc = get_thread(prev, id, task_css(prev), &tmp);
	if (!tc->target)
		return 0;
	stat_inc(ASGST_STAT_OFFCPU_SWITCHES);
	t0 = bpf_task_storage_get(&offcpu_start, prev, NULL,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t0) {	/* no memory, or the storage is busy: no END to come */
		stat_inc(ASGST_STAT_OFFCPU_LOST);
		return 0;
	}
	every = offcpu_every;
	if (!every) {
		r = offcpu_period(now);
		every = offcpu_n(r, t0->pred_ns);
		if (r) {
			__u64 c = t0->pred_ns;

			r->seen++;
			r->pred_ns += c < OFFCPU_PRED_MAX ? c : OFFCPU_PRED_MAX;
		}
	}
	take = every <= 1 || bpf_get_prandom_u32() % every == 0;
	t0->out_ns = now;
	if (!take && !t0->rec_ns)
		return 0;
	ran = BPF_CORE_READ(prev, se.sum_exec_runtime);
	if (t0->rec_ns) {
		/*
		 * It left the CPU before and is leaving again, yet no switch
		 * brought it back: this kernel (6.18 in a VM) now and then
		 * runs a task again without the sched_switch tracepoint, and
		 * tracefs misses it too. Off-CPU time = wall time since then
		 * less the CPU time it has had since.
		 */
		__u64 wall = now - t0->start_ns, cpu = ran - t0->ran_ns;

		t0->acc_ns += wall > cpu ? wall - cpu : 1;
		t0->acc_n++;
		offcpu_end(prev, t0, wall > cpu ? wall - cpu : 1);
		t0->rec_ns = 0;
		stat_inc(ASGST_STAT_OFFCPU_NO_SWITCH_IN);
	}
	if (!take)
		return 0;
	/*
	 * TASK_RUNNING (0) when it leaves the CPU: preempted, not blocked.
	 * The state as __schedule read it, where the tracepoint passes it:
	 * prev->__state read here can already be TASK_RUNNING again, set by
	 * a wake-up on another CPU after the task was taken off its queue.
	 */
	state = switch_prev_state ? (__u32)ctx[3] :
				    BPF_CORE_READ(prev, __state);
	if (!record(ctx, prev, id, tc, true, true, ASGST_EV_OFFCPU,
		    (preempt || !state ? ASGST_SF_PREEMPTED : 0) |
		    (__u32)every << ASGST_SF_EVERY_SHIFT, now)) {
		stat_inc(ASGST_STAT_OFFCPU_LOST);
		return 0;
	}
	/* the clock starts once the stack is taken: the capture is the
	 * profiler's cost, not time the thread waited (its CPU time stopped
	 * before this tracepoint; at 100 k switches/s the capture would be
	 * a tenth of its off-CPU time) */
	start = bpf_ktime_get_ns();
	t0->rec_ns = now;
	t0->start_ns = start;
	t0->out_ns = start;	/* its clock, as the END's, from here */
	t0->ran_ns = ran;
	stat_inc(ASGST_STAT_OFFCPU);
	stat_add(ASGST_STAT_OFFCPU_WEIGHT, every);
	stat_add(ASGST_STAT_OFFCPU_CAPTURE_NS, start - now);
	if (r) {
		r->taken++;
		r->cost_ns += start - now;
	}
	return 0;
}

/*
 * JVM events: a process's budget, ASGST_JVM_EV_BURST events a window of
 * ASGST_JVM_EV_WINDOW_NS. Racy across CPUs by a few events at most.
 */
struct jvm_ev_budget {
	__u64 start_ns;
	__u64 n;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct jvm_ev_budget);
} jvm_ev_budget SEC(".maps");

static __always_inline bool jvm_ev_allowed(__u32 tgid, __u64 now)
{
	struct jvm_ev_budget *b, nb = { .start_ns = now, .n = 1 };

	b = bpf_map_lookup_elem(&jvm_ev_budget, &tgid);
	if (!b) {
		bpf_map_update_elem(&jvm_ev_budget, &tgid, &nb, BPF_ANY);
		return true;
	}
	if (now - b->start_ns > ASGST_JVM_EV_WINDOW_NS) {
		b->start_ns = now;
		b->n = 0;
	}
	return __sync_fetch_and_add(&b->n, 1) < ASGST_JVM_EV_BURST;
}

/* this program may be preempted or interrupted by the others on its CPU:
 * its counts are atomic */
static __always_inline void stat_inc_atomic(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/*
 * The agent's probe was called on a JVM thread (bpf/sampler.h): a record
 * of that thread's stack there, as a cpu sample's. Everything goes into
 * the ring buffer's own reservation, never through the per-CPU buffers,
 * which a cpu sample interrupting this program would overwrite.
 */
/* what the probe passed, into a record's header */
static __always_inline void jvm_ev_head(struct asgst_sample_hdr *h,
					struct pt_regs *ctx)
{
	h->ev_size = ctx->dx;
	h->ev_weight = ctx->cx;
	if (bpf_probe_read_user_str(h->ev_class, sizeof(h->ev_class),
				    (void *)ctx->si) < 0)
		h->ev_class[0] = 0;
}

/* a JVM event's record with the stack window into rec (room for
 * REC_BASE + window_size + 8 bytes); the bytes used */
static __always_inline __u64 jvm_ev_fill(void *rec, struct pt_regs *ctx,
					 struct task_struct *task, __u64 id,
					 struct thread_cache *tc, __u32 event,
					 __u64 now, enum rec_buf buf)
{
	struct asgst_sample_hdr *h = rec;
	__u32 kbytes;

	kbytes = fill_head(ctx, rec, task, id, tc, true, false, event, now);
	h->flags |= ASGST_SF_WINDOW_WANTED;
	jvm_ev_head(h, ctx);
	return fill_window(rec, task, tc, id >> 32, kbytes, buf, false);
}

/* ... in a reservation of the ring at its full size; false: ring full */
static __always_inline bool jvm_ev_window(struct pt_regs *ctx,
					  struct task_struct *task, __u64 id,
					  struct thread_cache *tc, __u32 event,
					  __u64 now)
{
	void *rec;

	rec = bpf_ringbuf_reserve(&events, REC_BASE + window_size + 8, 0);
	if (!rec)
		return false;
	jvm_ev_fill(rec, ctx, task, id, tc, event, now, REC_RING);
	submit(rec, REC_BASE + window_size + 8);
	return true;
}

/*
 * ... put together in this CPU's jvmbuf, when free, and the ring given
 * only the bytes used (a shallow stack's few KiB, not the window size).
 * -1: the buffer is taken (a preempted event of another thread holds
 * it); else whether the ring took the record.
 */
static __always_inline int jvm_ev_buffered(struct pt_regs *ctx,
					   struct task_struct *task, __u64 id,
					   struct thread_cache *tc,
					   __u32 event, __u64 now)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 *own, size;
	void *rec;
	bool ok;

	own = bpf_map_lookup_elem(&jvmbuf_owner, &cpu);
	rec = bpf_map_lookup_elem(&jvmbuf, &cpu);
	if (!own || !rec || __sync_val_compare_and_swap(own, 0, 1) != 0)
		return -1;
	size = jvm_ev_fill(rec, ctx, task, id, tc, event, now, REC_JVMBUF);
	ok = output_buf(REC_JVMBUF, size) == 0;
	__sync_fetch_and_and(own, 0);
	return ok;
}

/* the same without a window (--stack-window 0): the kernel's walk */
static __always_inline bool jvm_ev_plain(struct pt_regs *ctx,
					 struct task_struct *task, __u64 id,
					 struct thread_cache *tc, __u32 event,
					 __u64 now)
{
	__u32 kbytes;
	void *rec;

	rec = bpf_ringbuf_reserve(&events, REC_BASE, 0);
	if (!rec)
		return false;
	kbytes = fill_head(ctx, rec, task, id, tc, true, false, event, now);
	jvm_ev_head(rec, ctx);
	user_stack_kernel(ctx, rec, kbytes);
	submit(rec, REC_BASE);
	return true;
}

/*
 * The agent's probe was called on a JVM thread (bpf/sampler.h): a record
 * of that thread's stack there, as a cpu sample's. Everything goes into
 * the ring buffer's own reservation, never through the per-CPU buffers,
 * which a cpu sample interrupting this program would overwrite.
 */
SEC("uprobe")
int asgst_jvm_event(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	struct thread_cache tmp, *tc;
	struct task_struct *task;
	__u32 kind = (__u32)ctx->di, event;
	bool ok;

	if (kind == ASGST_PROBE_ALLOC && (event_mask & ASGST_EVMASK_ALLOC))
		event = ASGST_EV_ALLOC;
	else if (kind == ASGST_PROBE_LOCK && (event_mask & ASGST_EVMASK_LOCK))
		event = ASGST_EV_LOCK;
	else
		return 0;
	task = bpf_get_current_task_btf();
	if (filter_mode == ASGST_FILTER_CGROUP && !in_cgroup())
		return 0;
	tc = get_thread(task, id, task_css(task), &tmp);
	if (!tc->target)
		return 0;
	now = bpf_ktime_get_ns();
	if (!jvm_ev_allowed(id >> 32, now)) {
		stat_inc_atomic(ASGST_STAT_JVM_EV_THROTTLED);
		return 0;
	}
	/*
	 * JVM events fill at most half the ring: one JVM's flood, which the
	 * reader cannot decode as fast as the JVM makes it, leaves the other
	 * half to the cpu samples of every process. Counted as lost.
	 */
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
	    bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 2) {
		stat_inc_atomic(ASGST_STAT_JVM_EV_LOST);
		return 0;
	}
	if (window_size && tc->window) {
		int r = jvm_ev_buffered(ctx, task, id, tc, event, now);

		ok = r < 0 ? jvm_ev_window(ctx, task, id, tc, event, now) : r;
	} else {
		ok = jvm_ev_plain(ctx, task, id, tc, event, now);
	}
	if (!ok)
		stat_inc_atomic(ASGST_STAT_JVM_EV_LOST);
	else
		stat_inc_atomic(event == ASGST_EV_ALLOC ? ASGST_STAT_ALLOC :
							  ASGST_STAT_LOCK);
	return 0;
}

/* record -- CMD: a forked child of a target is a target */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(asgst_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid, ctgid;
	__u8 one = 1;

	if (!follow_children || filter_mode != ASGST_FILTER_PIDS)
		return 0;
	ptgid = parent->tgid;
	ctgid = child->tgid;
	if (ptgid == ctgid)
		return 0;	/* a new thread, not a new process */
	if (!bpf_map_lookup_elem(&targets, &ptgid))
		return 0;
	bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
	return 0;
}
