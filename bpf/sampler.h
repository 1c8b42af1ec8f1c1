/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sample-record contract between the kernel sampler (bpf/sampler.bpf.c) and
 * the merger (user/). Fixed-width types only and no includes, so the same
 * header builds for the BPF target and for user space.
 *
 * One ring-buffer record per sample:
 *
 *   struct asgst_sample_hdr
 *   __u64 kstack[kstack_n]        kernel pcs, innermost first
 *   __u64 ustack[ustack_n]        frame-pointer user pcs, innermost first
 *   ...                           (version 2: unused up to window_off)
 *   __u8  window[window_len]      raw user-stack bytes from regs.sp
 *   ...
 *   struct asgst_py_frame py[py_n] (version 4) at py_off: a CPython
 *                                 thread's frames, innermost first
 *
 * The stacks follow the header, packed. Version 2 puts the window at
 * window_off (a multiple of 8, at or after the user stack): the sampler
 * copies it first, then walks the frame-pointer chain inside the copy and
 * reads user memory only for frames beyond it. It leaves room for the
 * deepest stacks before the window, and on kernels that let it (5.19)
 * sends the record to the ring without that room, the window right after
 * the user stack (the offsets after it moved down). Version 1 (older raw
 * files) packs the window right after the user stack. A record may be
 * longer than its parts (the ring-buffer reservation is of fixed size);
 * readers use the counts and offsets, never the record length, to find
 * the parts, and reject any that does not fit the record.
 *
 * Changing the layout, or what a field means, means bumping
 * ASGST_SAMPLE_VERSION. Version 4 adds a CPython thread's frames (py_*);
 * its off-CPU records say in their flags how many switches they stand
 * for, and its END records what the thread's every switch-out summed to.
 */
#ifndef ASGST_BPF_SAMPLER_H
#define ASGST_BPF_SAMPLER_H

#define ASGST_SAMPLE_MAGIC	0x31475341u	/* "ASG1" little endian */
#define ASGST_SAMPLE_VERSION	4
#define ASGST_SAMPLE_VERSION_MIN	1	/* still read (raw files) */

#define ASGST_MAX_KSTACK	64	/* kernel frames kept per sample */
#define ASGST_MAX_USTACK	127	/* frame-pointer user frames per sample */
#define ASGST_MAX_WINDOW	(64 * 1024)	/* hard cap of the stack window */
#define ASGST_DEFAULT_WINDOW	(64 * 1024)
#define ASGST_COMM_LEN		16
#define ASGST_EV_CLASS_LEN	128

/* asgst_sample_hdr.flags */
#define ASGST_SF_KERNEL_MODE	(1u << 0)	/* interrupted in kernel mode */
#define ASGST_SF_KSTACK_ERR	(1u << 1)	/* bpf_get_stack(kernel) failed */
#define ASGST_SF_USTACK_ERR	(1u << 2)	/* bpf_get_stack(user) failed (the
						   walk when no copy is had) */
#define ASGST_SF_WINDOW_WANTED	(1u << 3)	/* a window was asked for */
#define ASGST_SF_WINDOW_ERR	(1u << 4)	/* the window read failed */
#define ASGST_SF_WINDOW_CUT	(1u << 5)	/* ends where the thread's frames
						   end (stack top, TCB, argc) */
#define ASGST_SF_NO_USER	(1u << 6)	/* kernel thread: no user part */
#define ASGST_SF_THREAD_INFO	(1u << 7)	/* jt_* fields are valid */
#define ASGST_SF_WINDOW_HOLE	(1u << 8)	/* cut before an unreadable page
						   inside the stack mapping */
#define ASGST_SF_PREEMPTED	(1u << 9)	/* off-CPU: still runnable
						   (preempted), not blocked */
#define ASGST_SF_CHUNK_MORE	(1u << 10)	/* the copied stack chunk has a
						   parent: older frozen frames
						   are not in the copy */
/*
 * Off-CPU records of version 4: the stack of a switch-out is taken with
 * probability 1/N, N in the top 16 bits of flags (0 read as 1: every
 * switch), so the record stands for N switches and N times its time.
 */
#define ASGST_SF_EVERY_SHIFT	16
#define ASGST_SF_EVERY_MAX	0xffffu
#define ASGST_SF_EVERY(flags)	((flags) >> ASGST_SF_EVERY_SHIFT)
/* version 4: a CPython process (its layout in "py_procs") */
#define ASGST_SF_PY		(1u << 11)	/* py_* fields are valid */
#define ASGST_SF_PY_TRUNC	(1u << 12)	/* more frames than were kept
						   (depth or room) */
#define ASGST_SF_PY_ERR		(1u << 13)	/* a read of the chain failed:
						   the frames kept are the
						   innermost ones */

/* asgst_sample_hdr.event */
#define ASGST_EV_CPU		0	/* cpu-clock sample, weight = 1 period */
#define ASGST_EV_OFFCPU		1	/* sched_switch out; weight_ns is
					   filled by the matching END */
#define ASGST_EV_OFFCPU_END	2	/* header only: the thread tid that
					   left the CPU at ktime_ns ran again
					   weight_ns later; version 4:
					   ev_weight ns off the CPU over
					   ev_size switch-outs of the thread,
					   every one, since its END before
					   (this one's included) */
#define ASGST_EV_ALLOC		3	/* a JVM's sampled allocation (version
					   3): ev_size, ev_weight, ev_class */
#define ASGST_EV_LOCK		4	/* a JVM thread entered a contended
					   monitor: ev_weight ns waited */

struct asgst_sample_hdr {
	__u32 magic;
	__u16 version;
	__u16 hdr_size;		/* sizeof(struct asgst_sample_hdr) */
	__u32 flags;
	__u32 event;
	__u32 pid;		/* host tgid */
	__u32 tid;		/* host pid (thread id) */
	__u32 ns_pid;		/* tgid in the innermost pid namespace */
	__u32 ns_tid;		/* tid in the innermost pid namespace */
	__u32 cpu;
	__u32 kstack_n;		/* number of __u64 kernel pcs */
	__u32 ustack_n;		/* number of __u64 user pcs */
	__u32 window_len;	/* bytes of window actually copied */
	__u64 ktime_ns;		/* bpf_ktime_get_ns(), CLOCK_MONOTONIC */
	__u64 cgroup_id;
	__u64 weight_ns;	/* off-CPU: ns until it ran again; else 0 */
	/* user registers at the sample (task_pt_regs) */
	__u64 ip;
	__u64 sp;
	__u64 bp;
	__u64 rbx;
	__u64 r13;
	/* JavaThread words read at sample time: thread state, frame anchor,
	 * continuation (docs/sampler.md) */
	__u64 jt_state;
	__u64 jt_last_sp;
	__u64 jt_last_pc;
	__u64 jt_last_fp;
	__u64 jt_cont_entry;
	char comm[ASGST_COMM_LEN];
	/* version 2 */
	__u32 window_off;	/* window offset from the record start */
	__u32 chunk_len;	/* bytes of a virtual thread's frozen frames */
	__u32 chunk_off;	/* ... at this offset from the record start */
	__u32 pad;
	__u64 chunk_addr;	/* JVM address of the first chunk byte */
	__u64 chunk_sp;		/* the top frozen frame's sp (JVM address) */
	__u64 chunk_end;	/* end of the frozen frames (JVM address) */
	/* version 3: what the agent's probe passed (ALLOC and LOCK only) */
	__u64 ev_size;		/* alloc: the sampled object's bytes */
	__u64 ev_weight;	/* alloc: the bytes it stands for (scaled by
				   the sampling interval); lock: ns waited */
	char ev_class[ASGST_EV_CLASS_LEN]; /* alloc: the object's class,
				   lock: the monitor's; dotted, NUL-ended */
	/* version 4: a CPython thread's frames (ASGST_SF_PY) */
	__u32 py_n;		/* struct asgst_py_frame at py_off */
	__u32 py_off;		/* from the record start, a multiple of 8, at
				   or after the window (and frozen frames) */
	__u64 py_tstate;	/* the thread's PyThreadState*, 0: not found */
};

/*
 * CPython frames (version 4): for a thread of a process in "py_procs",
 * the sampler finds its PyThreadState (the interpreter's thread list,
 * by native_thread_id == the tid the process sees) and walks
 * tstate->cframe->current_frame, then each frame's previous, up to
 * ASGST_PY_MAX_FRAMES. What a frame keeps is the code object's address,
 * prev_instr as a byte offset from that address and the frame's flags;
 * user space reads the names and the line (docs/sampler.md).
 */
#define ASGST_PY_MAX_FRAMES	96
#define ASGST_PY_BYTES		(ASGST_PY_MAX_FRAMES * 16)
#define ASGST_PY_THREADS_MAX	256	/* threads looked at in the list */
#define ASGST_PY_SPAN_MAX	128	/* a frame's fields lie in its first
					   bytes (3.11: 72) */

struct asgst_py_frame {
	__u64 code;		/* PyCodeObject* (f_code) */
	__u32 instr;		/* prev_instr - code, bytes; ~0u: outside
				   [0, 2^30) */
	__u32 flags;		/* ASGST_PYF_* */
};

#define ASGST_PYF_ENTRY		(1u << 0)	/* is_entry: the first frame
						   of a _PyEval_EvalFrameDefault
						   activation */
/* f_locals is f_globals: module-level code (a module's body, exec) */
#define ASGST_PYF_MODULE	(1u << 1)
/* f_locals is NULL: a function's frame, its locals fast */
#define ASGST_PYF_FUNC		(1u << 2)
#define ASGST_PYF_OWNER_SHIFT	8		/* frame owner (3.11: 0 thread,
						   1 generator, 2 frame
						   object), 8 bits */

/*
 * "py_procs" map value, by host tgid: where an interpreter's structures
 * are and the offsets of the fields the walk reads. User space fills it
 * from a table checked against the version's headers (user/python/).
 */
#define ASGST_PY_PROCS_MAX	4096

struct asgst_py_proc {
	__u64 runtime;		/* &_PyRuntime in the process */
	__u32 version;		/* PY_VERSION_HEX */
	__s32 rt_interp;	/* _PyRuntime.interpreters.main */
	__s32 is_threads;	/* PyInterpreterState.threads.head */
	__s32 ts_next;		/* PyThreadState.next */
	__s32 ts_tid;		/* PyThreadState.native_thread_id */
	__s32 ts_cframe;	/* PyThreadState.cframe */
	__s32 cf_frame;		/* _PyCFrame.current_frame */
	__s32 fr_code;		/* _PyInterpreterFrame.f_code */
	__s32 fr_previous;	/* .previous */
	__s32 fr_instr;		/* .prev_instr */
	__s32 fr_entry;		/* .is_entry (a byte) */
	__s32 fr_owner;		/* .owner (a byte) */
	__s32 fr_globals;	/* .f_globals */
	__s32 fr_locals;	/* .f_locals */
	__u32 fr_span;		/* bytes of a frame read (<= SPAN_MAX) */
};

/*
 * JVM events come from a uprobe on the agent's probe function (the
 * agent's agent/jvm_events.c calls it on the allocating or waiting
 * thread): void ASGST_PROBE_SYMBOL(__u32 kind, const char *cls,
 * __u64 size, __u64 weight), kind one of ASGST_PROBE_*. The uprobe takes
 * the stack there like a sample. A process gets at most
 * ASGST_JVM_EV_BURST events in any ASGST_JVM_EV_WINDOW_NS (the rest is
 * counted, ASGST_STAT_JVM_EV_THROTTLED): one JVM cannot flood the ring.
 */
#define ASGST_PROBE_SYMBOL	"asgst_probe_event"
#define ASGST_PROBE_ALLOC	1
#define ASGST_PROBE_LOCK	2
#define ASGST_JVM_EV_BURST	2000
#define ASGST_JVM_EV_WINDOW_NS	100000000ull	/* 100 ms */

/*
 * Frozen frames: when a virtual thread is mounted and its JVM's layout is
 * known ("jvm_conts"), the youngest ASGST_CHUNK_BYTES of its heap stack
 * chunk (from the top frame's saved rbp/return pc, chunk_sp - 16) are
 * copied into the last ASGST_CHUNK_BYTES of the window area, and the
 * window itself is cut to leave room.
 */
#define ASGST_CHUNK_BYTES	4096

/*
 * "jthreads" map: the JavaThread of a thread of a JVM with the agent, and
 * where in it the words the header's jt_* fields copy live (offsets from
 * the JavaThread*, -1 when the JVM has no such field). The merger fills it
 * from the code map's THREAD records and VMStructs offsets.
 */
#define ASGST_JTHREADS_MAX	65536	/* entries, shared by every JVM */

struct asgst_jthread_key {
	__u32 tgid;		/* host tgid */
	__u32 ns_tid;		/* tid as the JVM sees it */
};

struct asgst_jthread {
	__u64 java_thread;	/* JavaThread* in the process */
	__s32 off_state;	/* JavaThread::_thread_state (an int) */
	__s32 off_last_sp;	/* _anchor._last_Java_sp */
	__s32 off_last_pc;	/* _anchor._last_Java_pc */
	__s32 off_last_fp;	/* _anchor._last_Java_fp */
	__s32 off_cont_entry;	/* JavaThread::_cont_entry (JDK 21+) */
	__u32 pad;
};

/* "jvm_conts" map value, by tgid: struct cm_cont of the JVM's code map */
struct asgst_jvm_cont {
	__s32 entry_cont;	/* ContinuationEntry::_cont */
	__s32 cont_tail;	/* Continuation.tail */
	__s32 chunk_size;	/* StackChunk.size */
	__s32 chunk_sp;		/* StackChunk.sp */
	__s32 chunk_argsize;	/* StackChunk.argsize, -1 */
	__s32 chunk_bottom;	/* StackChunk.bottom, -1 */
	__s32 chunk_stack;	/* the stack's offset in a StackChunk */
	__u32 oop_size;		/* 4 or 8 */
	__u64 oop_base;
	__u32 oop_shift;
	__s32 chunk_parent;	/* StackChunk.parent */
};

/* per-CPU counters in the "stats" map, indexed by these */
enum asgst_stat {
	ASGST_STAT_SAMPLES = 0,	/* records submitted */
	ASGST_STAT_LOST,	/* ring buffer full: record dropped */
	ASGST_STAT_FILTERED,	/* not a target: not recorded */
	ASGST_STAT_IDLE,	/* idle task: not recorded */
	ASGST_STAT_OFFCPU,	/* off-CPU records submitted */
	ASGST_STAT_OFFCPU_LOST,	/* off-CPU: ring buffer full */
	/* ns spent taking off-CPU stacks, while their threads switched out:
	 * the profiler's time, in neither their CPU time nor offcpu_ns */
	ASGST_STAT_OFFCPU_CAPTURE_NS,
	/* a recorded thread left the CPU again with no switch seen that
	 * brought it back: its END is inferred from its CPU time */
	ASGST_STAT_OFFCPU_NO_SWITCH_IN,
	ASGST_STAT_ALLOC,	/* allocation records submitted */
	ASGST_STAT_LOCK,	/* lock records submitted */
	ASGST_STAT_JVM_EV_LOST,	/* alloc or lock: ring buffer full */
	ASGST_STAT_JVM_EV_THROTTLED, /* alloc or lock: over a process's
				   ASGST_JVM_EV_BURST, not recorded */
	/* switch-outs of target threads seen, each taken or not (1 in N) */
	ASGST_STAT_OFFCPU_SWITCHES,
	/* the sum of N over the stacks taken: switches they stand for */
	ASGST_STAT_OFFCPU_WEIGHT,
	/* with --stats: ns of the cpu-clock program's runs that took a
	 * sample (or lost one to a full ring), from its start */
	ASGST_STAT_SAMPLE_NS,
	ASGST_STAT_MAX,
};

/* events in the BPF program's read-only config (a mask) */
#define ASGST_EVMASK_CPU	(1u << 0)
#define ASGST_EVMASK_OFFCPU	(1u << 1)
#define ASGST_EVMASK_ALLOC	(1u << 2)	/* JVM sampled allocations */
#define ASGST_EVMASK_LOCK	(1u << 3)	/* JVM contended monitors */
#define ASGST_EVMASK_JVM	(ASGST_EVMASK_ALLOC | ASGST_EVMASK_LOCK)

/* filter_mode in the BPF program's read-only config */
#define ASGST_FILTER_ALL	0	/* every process */
#define ASGST_FILTER_PIDS	1	/* tgids in the "targets" map */
#define ASGST_FILTER_CGROUP	2	/* tasks in one cgroup v2 (by id) */

#endif /* ASGST_BPF_SAMPLER_H */
