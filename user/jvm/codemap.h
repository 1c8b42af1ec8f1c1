/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reader of one JVM's code map (format: agent/codemap_format.h). The file comes
 * from a process we do not trust: every length, offset and count is
 * checked; a bad file disables Java decoding for that JVM (codemap__error()
 * says why, in one line) and nothing else.
 *
 * Reads incrementally: codemap__update() consumes the records appended since
 * the last call. Answers "which code was at address A at time T".
 */
#ifndef ASGST_CODEMAP_H
#define ASGST_CODEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codemap_format.h"	/* agent/: the on-disk format */

struct codemap;

struct codemap_method {
	uint64_t method;		/* Method* */
	uint64_t const_method;		/* ConstMethod* */
	const char *klass;		/* dotted binary name */
	const char *name;
	const char *signature;
	const char *source;		/* "" when unknown */
	uint32_t modifiers;
	uint32_t flags;			/* CM_METHOD_* */
	uint32_t n_lines;
	const struct cm_line *lines;	/* sorted by bci */
};

enum codemap_blob_type {
	CODEMAP_BLOB_CODE = 1,		/* cm_code: a compiled/native method */
	CODEMAP_BLOB_STUB = 2,		/* cm_stub */
};

struct codemap_pcdesc {
	uint32_t pc_off;
	uint32_t depth;
	const struct cm_frame *frames;	/* depth entries, 0 innermost */
};

struct codemap_blob {
	uint8_t type;			/* enum codemap_blob_type */
	uint32_t kind;			/* cm_code_kind or cm_stub_kind */
	uint64_t start, end;
	uint64_t blob;
	uint64_t method;		/* CODE: Method* */
	uint64_t verified_entry;
	int32_t comp_level;
	int32_t frame_size;		/* words, -1 unknown */
	int32_t frame_complete;		/* offset, -1 unknown */
	const char *name;		/* STUB: its name; CODE: NULL */
	uint64_t load_ns;
	uint64_t unload_ns;		/* UINT64_MAX while loaded */
	uint32_t n_pcs;
	const struct codemap_pcdesc *pcs;	/* sorted by pc_off */
	uint32_t n_methods;
	const uint64_t *method_pool;	/* cm_frame.method_idx -> Method* */
};

struct codemap_thread {
	uint32_t tid;			/* as the JVM sees it */
	uint32_t flags;			/* CM_THREAD_* */
	uint64_t java_thread;
	const char *name;
	uint64_t start_ns;
	uint64_t end_ns;		/* UINT64_MAX while alive */
};

struct codemap_stats {
	uint64_t bytes;			/* consumed so far */
	uint64_t records;
	uint64_t methods, blobs, stubs, threads, unloads;
	uint64_t last_record_ns;
	uint32_t file_flags;		/* cm_file_header.flags */
	uint64_t dropped;		/* writer-side drops (map full) */
	/* generations (format version 2) */
	uint64_t generation;		/* of the file read now */
	uint64_t file_bytes;		/* its write_pos: the map's size */
	uint64_t handovers;		/* generations this reader followed */
	uint64_t gens_missed;		/* generations gone before it read them */
	uint64_t reconciled;		/* code and threads found dead only by a
					   snapshot (their records were lost) */
	uint64_t pruned;		/* dead records freed (retention) */
	/* version 3: string and class ids read (all files) */
	uint64_t strings, classes;
	/* budgets (struct codemap_limits) */
	uint64_t capped;		/* records dropped: past a cap */
	uint64_t steps;			/* chain links walked applying records
					   (thread ends, unloads, method
					   versions, admission counts) */
	uint64_t find_cut;		/* lookups given up: more blobs over
					   one pc than a lookup looks at */
};

/*
 * Budgets: what one map may make the reader hold and walk. The map's
 * writer is not trusted, and one recorder thread reads every JVM's map,
 * so nothing a map controls grows without bound: a record past a count
 * cap is dropped and counted (stats.capped; codemap__capped() names the
 * first cap hit), and a map whose reader would hold more than mem bytes
 * is refused (the map fails, as a malformed one does). Each cap is far
 * above what a real JVM needs (a big one: ~200k methods, thousands of
 * threads; about 86 bytes a method). Chains the lookups walk are
 * bounded by the per-key caps: the records kept for one tid (a thread's
 * end and each sample's thread lookup walk them), the loaded blobs at one
 * start (an unload walks them) and the methods at one Method* (a method
 * lookup at a time walks them).
 */
struct codemap_limits {
	size_t mem;			/* bytes the reader holds for the map */
	uint32_t live_threads;		/* threads alive at once */
	uint32_t tid_records;		/* thread records kept for one tid */
	uint32_t blobs_at_start;	/* loaded CODE blobs at one start */
	uint32_t method_versions;	/* methods kept at one Method* */
	uint32_t methods;		/* methods kept */
	uint32_t blobs;			/* code blobs and stubs kept */
};

#define CODEMAP_MAX_MEM			(256ull << 20)
#define CODEMAP_MAX_LIVE_THREADS	65536u
#define CODEMAP_MAX_TID_RECORDS		64u
#define CODEMAP_MAX_BLOBS_AT_START	16u
#define CODEMAP_MAX_METHOD_VERSIONS	64u
#define CODEMAP_MAX_METHODS		(2u << 20)
#define CODEMAP_MAX_BLOBS		(1u << 20)

/*
 * Open a map. root is the directory the map's path is resolved under
 * without leaving it ("/proc/PID/root", or "/" for a plain file path);
 * path is inside root. 0, or -errno with err set to a one-line reason.
 */
int codemap__open(struct codemap **out, const char *root, const char *path,
		  char *err, size_t errlen);
/* the map of host pid: /proc/PID/root/dev/shm/asgst-<nspid>.map */
/*
 * The code map's path as JVM pid (nspid in its namespace) names it
 * ("/dev/shm/asgst-NSPID-PIDNS.map", or the older "/dev/shm/asgst-NSPID.map"
 * where only that one is there), for messages. 0 or -errno.
 */
int codemap__pid_path(pid_t pid, pid_t nspid, char *path, size_t len);
int codemap__open_pid(struct codemap **out, pid_t pid, char *err,
		      size_t errlen);
void codemap__free(struct codemap *cm);
/*
 * Ask the JVM's agent for events while this map is open (codemap_format.h,
 * event requests: nothing is written, a lock on the file is held, and
 * moved to each new generation): CODEMAP_EV_ALLOC at interval bytes,
 * CODEMAP_EV_LOCK. The agent answers within ~100 ms when its header has
 * CM_F_EVENTS (codemap__header). 0 or -errno.
 */
#define CODEMAP_EV_ALLOC	(1u << 0)
#define CODEMAP_EV_LOCK		(1u << 1)
int codemap__request_events(struct codemap *cm, uint32_t mask,
			    uint64_t interval);
/* the default budgets (CODEMAP_MAX_*), which every map starts with */
void codemap__limits_default(struct codemap_limits *out);
/* other budgets (tests): they apply to the records read from now on */
void codemap__set_limits(struct codemap *cm, const struct codemap_limits *l);
/*
 * The first cap the map hit, as "65536 live threads" (for "the code map
 * of JVM N exceeds ..."), or NULL while none was.
 */
const char *codemap__capped(const struct codemap *cm);
/*
 * Additions (codemap helper): a map already open as fd (dup'ed; memfd or a
 * raw file; name is for messages), and the innermost-namespace pid of a
 * host pid (last NStgid field of /proc/PID/status; 0 or -errno).
 * codemap__open* read every record present before returning; a file still
 * being created (shorter than its header or zero magic) gives -EAGAIN.
 * codemap__open_pid refuses a map whose writer_pid is not the JVM's
 * namespace pid (left by a dead JVM): -ESTALE.
 */
int codemap__open_fd(struct codemap **out, int fd, const char *name,
		     char *err, size_t errlen);
int codemap__nspid(pid_t pid, pid_t *nspid);

/*
 * Read what was appended; 0, or -errno (then the map is disabled). A map
 * opened by path follows the writer to each new generation (the old file
 * is read to its end first, then the path opened again with the same
 * checks).
 */
int codemap__update(struct codemap *cm);
/*
 * Let updates free what died more than retain_ns ago (CLOCK_MONOTONIC):
 * code unloaded, threads ended, methods gone from a snapshot. A live
 * recorder sets it a good margin above its decode delay, so pending
 * samples still find what they need; report, which decodes old samples,
 * does not. A lookup before what was freed never falls back to code
 * loaded later: it finds nothing (ASGST_UNKNOWN_CODE), never a stranger.
 */
void codemap__set_retention(struct codemap *cm, uint64_t retain_ns);
/* what a live recorder keeps: far above its decode delay (400 ms) */
#define CODEMAP_RETAIN_NS	(30ull * 1000 * 1000 * 1000)
/* free now what died before t (tests; the update does it by itself) */
void codemap__prune(struct codemap *cm, uint64_t before_ns);
bool codemap__ok(const struct codemap *cm);
const char *codemap__error(const struct codemap *cm);	/* NULL when ok */
uint32_t codemap__writer_pid(const struct codemap *cm);
/* additions: the last header read (disabled_reason NUL-terminated), the
 * path used in messages, and the bytes this reader's allocations hold
 * (about 86 a method, twice the map's bytes; at worst ~20x for a crafted
 * map of minimal version 3 method entries all looked up) */
const struct cm_file_header *codemap__header(const struct codemap *cm);
const char *codemap__path(const struct codemap *cm);
size_t codemap__mem_bytes(const struct codemap *cm);

/*
 * Raw recordings: fn gets every byte range of records the reader consumed
 * (file offset, bytes), first what was consumed before the call, then each
 * update's. codemap__pos() is the end of what was consumed.
 */
typedef void (*codemap_tap_fn)(void *ctx, uint64_t off, const void *buf,
			       size_t len);
int codemap__set_tap(struct codemap *cm, codemap_tap_fn fn, void *ctx);
uint64_t codemap__pos(const struct codemap *cm);

/*
 * Called for each THREAD record as it is applied (alive: started or seen
 * again; else ended), and at once for the threads read before.
 */
typedef void (*codemap_thread_fn)(void *ctx, const struct codemap_thread *th,
				  bool alive);
void codemap__set_thread_cb(struct codemap *cm, codemap_thread_fn fn,
			    void *ctx);

/* NULL until a VM record was read */
const struct cm_vm_consts *codemap__vm(const struct codemap *cm);
uint32_t codemap__jdk_major(const struct codemap *cm);
/* the virtual-thread layout (JDK 21+ with a CONT record), else NULL */
const struct cm_cont *codemap__cont(const struct codemap *cm);
const char *codemap__vm_version(const struct codemap *cm);

/*
 * The method at a Method*: the one it was at the decode time when one is
 * set (a Method* freed with its class may be reused by another), else the
 * newest. The answer (its strings, its lines) stays valid until the
 * method is pruned or the map freed; the same method gives the same
 * pointer.
 */
const struct codemap_method *codemap__method(const struct codemap *cm,
					     uint64_t method);
/* the time (of the sample being decoded) method lookups answer for; 0: now */
void codemap__set_decode_time(struct codemap *cm, uint64_t t);
/* line for bci from the method's table, -1 when unknown */
int codemap_method__line(const struct codemap_method *m, int bci);

/*
 * the blob that held pc at time t (t = 0: whatever holds it now). Of the
 * blobs whose [load_ns, unload_ns) holds t the newest; when none does, the
 * earliest loaded after t (JVMTI posts loads after the code is installed).
 * Lookups return NULL once the map failed; iteration still works.
 */
const struct codemap_blob *codemap__find(const struct codemap *cm,
					 uint64_t pc, uint64_t t);
/* pc descriptor for pc: the nearest at or after it; NULL if none */
const struct codemap_pcdesc *codemap_blob__pcdesc(const struct codemap_blob *b,
						  uint64_t pc);

/* thread by tid (as the JVM sees it) alive at t; NULL when unknown */
const struct codemap_thread *codemap__thread(const struct codemap *cm,
					     uint32_t tid, uint64_t t);

void codemap__stats(const struct codemap *cm, struct codemap_stats *out);
/*
 * Records the map lost: dropped by the writer (map full), in generations
 * this reader missed, or found only by a snapshot. True when that grew
 * since it was last told (then at each doubling), with the total in *n.
 */
bool codemap__loss_news(struct codemap *cm, uint64_t *n);

/*
 * codemap__method() that also says whether the answer is the same at any
 * decode time (one method ever at that Method*), and a stamp of the
 * methods as they are: it changes with every change to them, and no two
 * maps have had the same one. A name kept by (stamp, Method*) for a
 * timeless method is the map's answer while the stamp stays.
 */
const struct codemap_method *codemap__method_timeless(const struct codemap *cm,
						      uint64_t method,
						      bool *timeless);
uint64_t codemap__methods_stamp(const struct codemap *cm);
/*
 * A stamp of all the map answers (blobs, threads, methods): it changes
 * with every change to them, and no two maps have had the same one.
 * Lookups at two times both at or after *horizon answer the same while
 * it stays. 0 when the map failed (its lookups are NULL then).
 */
uint64_t codemap__stamp(const struct codemap *cm, uint64_t *horizon);

/*
 * iteration, for `asgst-bpf codemap` and raw files; record order. A
 * method not looked up by codemap__method() is handed out in one of 16
 * views reused in turn: use it before the 16th next codemap__method_at()
 * (its strings live as long as the map).
 */
size_t codemap__nblobs(const struct codemap *cm);
const struct codemap_blob *codemap__blob_at(const struct codemap *cm, size_t i);
size_t codemap__nmethods(const struct codemap *cm);
const struct codemap_method *codemap__method_at(const struct codemap *cm,
						size_t i);
size_t codemap__nthreads(const struct codemap *cm);
const struct codemap_thread *codemap__thread_at(const struct codemap *cm,
						size_t i);

#endif /* ASGST_CODEMAP_H */
