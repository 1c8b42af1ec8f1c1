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
/* wake the reader only when this much is waiting (see submit()) */
const volatile __u64 wakeup_bytes = 4 * 1024 * 1024;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 32 * 1024 * 1024);	/* resized by user space */
} events SEC(".maps");

/* tgids to sample under ASGST_FILTER_PIDS */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* tgids that get a stack window (JVMs) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} window_pids SEC(".maps");

/*
 * Stack mapping of a thread, by pid_tgid. bpf_find_vma has to defer the
 * mmap-lock release to an irq_work when called from the timer interrupt,
 * which costs a self-IPI (several us in a VM): look it up once per thread.
 * A main-thread stack grows down, so sp below start means look again.
 */
struct stack_range {
	__u64 start;
	__u64 end;	/* mapping end, or the first unreadable page */
	__u64 hole;	/* end is an unreadable page inside the mapping */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct stack_range);
} stack_ranges SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ASGST_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	/* per-CPU slot, and this program does not nest on a CPU */
	if (v)
		(*v)++;
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

static __always_inline bool is_target(__u32 tgid)
{
	if (filter_mode == ASGST_FILTER_PIDS)
		return bpf_map_lookup_elem(&targets, &tgid) != NULL;
	if (filter_mode == ASGST_FILTER_CGROUP)
		return in_cgroup();
	return true;
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

static long vma_range_cb(struct task_struct *task, struct vm_area_struct *vma,
			 void *data)
{
	struct stack_range *r = data;

	r->start = vma->vm_start;
	r->end = vma->vm_end;
	return 0;
}

/* first unreadable page at or after sp's next page, up to lim */
static __always_inline __u64 probe_pages(__u64 sp, __u64 lim)
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
static __always_inline __u32 window_len(struct task_struct *task, __u64 id,
					 __u64 sp, __u32 want, bool *cut,
					 bool *hole)
{
	struct stack_range *cr, r = {};
	__u64 lim = sp + want, end;

	*cut = false;
	*hole = false;
	cr = bpf_map_lookup_elem(&stack_ranges, &id);
	if (cr && sp >= cr->start && sp < cr->end) {
		end = cr->end;
		*hole = cr->hole && end < lim;
	} else if (bpf_find_vma(task, sp, vma_range_cb, &r, 0) == 0 &&
		   sp >= r.start && sp < r.end) {
		bpf_map_update_elem(&stack_ranges, &id, &r, BPF_ANY);
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

/* remember a hole so the next samples read up to it directly */
static __always_inline void note_hole(__u64 id, __u64 sp, __u64 hole)
{
	struct stack_range *cr = bpf_map_lookup_elem(&stack_ranges, &id);

	if (cr && sp >= cr->start && hole > sp && hole < cr->end) {
		cr->end = hole;
		cr->hole = 1;
	}
}

/*
 * Waking the reader per record costs an irq_work self-IPI per sample
 * (tens of us in a VM, and it throttles the timer): wake it only when a
 * good part of the ring is waiting; it also polls with a timeout.
 */
static __always_inline void submit(void *rec)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(rec, flags);
}

/*
 * Fill header, kernel and user stacks into a reservation of at least
 * REC_BASE bytes. Returns the offset where the window goes (<= REC_BASE).
 */
static __always_inline __u32 fill(struct bpf_perf_event_data *ctx, void *rec,
				  struct task_struct *task, __u64 id,
				  bool user)
{
	struct asgst_sample_hdr *h = rec;
	struct pt_regs *ur;
	__u32 kbytes = 0, ubytes = 0;
	__u64 cs;
	long n;

	__builtin_memset(h, 0, sizeof(*h));
	h->magic = ASGST_SAMPLE_MAGIC;
	h->version = ASGST_SAMPLE_VERSION;
	h->hdr_size = HDR_BYTES;
	h->event = ASGST_EV_CPU;
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->ns_tid = ns_nr(BPF_CORE_READ(task, thread_pid));
	h->ns_pid = ns_nr(BPF_CORE_READ(task, group_leader, thread_pid));
	h->cpu = bpf_get_smp_processor_id();
	h->ktime_ns = bpf_ktime_get_ns();
	h->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(h->comm, sizeof(h->comm));

	/*
	 * user-mode CPL is 3: anything else interrupted the kernel. The ctx
	 * only allows 8-byte loads, so read the whole cs word.
	 */
	cs = *(volatile __u64 *)((void *)&ctx->regs +
				 __builtin_offsetof(struct pt_regs, cs));
	if ((cs & 3) != 3) {
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

	if (!user) {
		h->flags |= ASGST_SF_NO_USER;
		return HDR_BYTES + kbytes;
	}

	/* the user-mode registers, even when the kernel was interrupted */
	ur = (struct pt_regs *)bpf_task_pt_regs(task);
	if (ur) {
		h->ip = BPF_CORE_READ(ur, ip);
		h->sp = BPF_CORE_READ(ur, sp);
		h->bp = BPF_CORE_READ(ur, bp);
		h->rbx = BPF_CORE_READ(ur, bx);
		h->r13 = BPF_CORE_READ(ur, r13);
	}

	n = bpf_get_stack(ctx, rec + HDR_BYTES + kbytes, USTACK_BYTES,
			  BPF_F_USER_STACK);
	if (n < 0)
		h->flags |= ASGST_SF_USTACK_ERR;
	else
		ubytes = (__u32)n & ~7u;
	if (ubytes > USTACK_BYTES)
		ubytes = USTACK_BYTES;
	h->ustack_n = ubytes / 8;
	return HDR_BYTES + kbytes + ubytes;
}

SEC("perf_event")
int asgst_sample(struct bpf_perf_event_data *ctx)
{
	struct asgst_sample_hdr *h;
	struct task_struct *task;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	bool user, cut, hole;
	__u64 off, len;
	void *rec;

	if ((__u32)id == 0) {
		stat_inc(ASGST_STAT_IDLE);
		return 0;
	}
	if (!is_target(tgid)) {
		stat_inc(ASGST_STAT_FILTERED);
		return 0;
	}

	task = bpf_get_current_task_btf();
	user = task->mm != NULL;

	if (!window_size || !user ||
	    (!window_all && !bpf_map_lookup_elem(&window_pids, &tgid))) {
		rec = bpf_ringbuf_reserve(&events, REC_BASE, 0);
		if (!rec) {
			stat_inc(ASGST_STAT_LOST);
			return 0;
		}
		fill(ctx, rec, task, id, user);
		submit(rec);
		stat_inc(ASGST_STAT_SAMPLES);
		return 0;
	}

	rec = bpf_ringbuf_reserve(&events, REC_BASE + window_size, 0);
	if (!rec) {
		stat_inc(ASGST_STAT_LOST);
		return 0;
	}
	off = fill(ctx, rec, task, id, true);
	h = rec;
	h->flags |= ASGST_SF_WINDOW_WANTED;
	len = window_len(task, id, h->sp, window_size, &cut, &hole);
	/* keep the bound where the verifier sees it, clang may fold it */
	barrier_var(len);
	if (len > window_size)
		len = window_size;
	barrier_var(off);
	if (off > REC_BASE)
		off = REC_BASE;
	if (len && bpf_probe_read_user(rec + off, len, (void *)h->sp)) {
		/*
		 * A page inside the mapping is not present (a big frame
		 * never touched it): keep what lies before the hole.
		 */
		len = probe_pages(h->sp, h->sp + len) - h->sp;
		note_hole(id, h->sp, h->sp + len);
		barrier_var(len);
		if (len > window_size)
			len = window_size;
		if (!len || bpf_probe_read_user(rec + off, len, (void *)h->sp))
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
	submit(rec);
	stat_inc(ASGST_STAT_SAMPLES);
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
