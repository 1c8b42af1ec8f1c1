/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Code-map contract between the JVM agent (writer, agent/) and the merger
 * (reader, user/jvm/codemap.c); the reader API is user/jvm/codemap.h. Fixed-width types only, no includes beyond
 * <stdint.h>, little-endian x86_64.
 *
 * File: /dev/shm/asgst-<pid>.map where <pid> is the pid the JVM sees (its
 * innermost namespace pid). From the host: /proc/<hostpid>/root/dev/shm/...
 *
 * Layout:
 *   struct cm_file_header          at offset 0, CM_HEADER_SIZE bytes
 *   records                        from CM_HEADER_SIZE to header.write_pos
 *
 * Every record starts with struct cm_rec_hdr; rec.len is the whole record
 * length including the header, a multiple of 8, at least 16. Records are
 * appended only. The writer fills a record, then publishes the new end with
 * a release store to header.write_pos; the reader acquires write_pos and
 * never reads past it. Strings inside records are struct cm_str: a __u16
 * length followed by that many bytes (no NUL), packed, and the record's
 * fixed part says how many follow. Every length, offset and count is
 * untrusted on the reader's side.
 *
 * Generations (version 2): the log does not grow for ever. When most of
 * it is dead (unloaded code, ended threads, methods of unloaded classes)
 * or it nears max_size, the writer makes a new file: a snapshot of what is
 * live (the VM and CONT records, then the methods, then STUB, CODE and
 * THREAD records, each copied byte for byte with its original time; in
 * version 3 the methods are written again as STRINGS, CLASSES and METHODS
 * records, each original record's methods together with its time), then
 * the log goes on in it. It is published by rename() over the same path; only
 * then is CM_F_SUPERSEDED set in the old file, whose write_pos is final
 * from then on. A reader reads the old file to that write_pos, opens the
 * path again and goes on at the new file's first record; records it
 * already has come again in the snapshot and are the same. Whatever the
 * reader holds as alive that is not in a snapshot it died before
 * gen_start_ns (a dropped record, or a generation the reader missed). The
 * writer holds no lock the reader could take, and its only lock is never
 * held across a JVMTI call.
 *
 * Compact methods (version 3): a writer of version 3 publishes methods
 * as METHODS records instead of METHOD records. Strings (method names,
 * signatures, class names, source files) are interned: a STRINGS record
 * defines ids, a CLASSES record names a class id by a (class name, source
 * file) pair of string ids, and each method names its class, name and
 * signature by id, with its line table delta-coded in varints. An id is
 * defined before the first record that uses it, in the same generation
 * (a snapshot defines again every id its methods use, with the same
 * text); an id never names another text for the writer's life, so a raw
 * recording's one stream of several generations reads the same. A
 * record that uses an id not defined is malformed. Readers also take
 * METHOD records in version 3 files.
 *
 * Varints (version 3) are LEB128: 7 bits a byte, low first, at most 10
 * bytes and 64 bits; zigzag maps a signed v to (v << 1) ^ (v >> 63).
 *
 * Times are CLOCK_MONOTONIC ns, the clock of bpf_ktime_get_ns().
 * Changing any layout means bumping CM_VERSION; readers also accept
 * version 1 (no generations: the version 2 header fields read as 0) and
 * version 2 (no compact methods).
 */
#ifndef ASGST_AGENT_CODEMAP_FORMAT_H
#define ASGST_AGENT_CODEMAP_FORMAT_H

#include <stdint.h>

#define CM_MAGIC		"ASGSTCM\0"	/* 8 bytes */
#define CM_VERSION		3
#define CM_VERSION_MIN		1	/* oldest version a reader accepts */
#define CM_HEADER_SIZE		4096u
#define CM_DEFAULT_MAX		(64u << 20)
/*
 * The map's path: the JVM's pid and the inode of its pid namespace
 * (/proc/self/ns/pid), so that JVMs of the same pid in containers sharing
 * /dev/shm (a pod's) never meet; CM_PATH_FMT where the namespace cannot
 * be read (no /proc), and for older agents.
 */
#define CM_PATH_NS_FMT		"/dev/shm/asgst-%d-%llu.map"
#define CM_PATH_FMT		"/dev/shm/asgst-%d.map"

/*
 * What Agent_OnAttach returns besides 0: the JVM is still starting (not in
 * its live phase, where JVMTI hands out no environment). Nothing was
 * loaded or kept; the same attach succeeds once the JVM is up.
 */
#define CM_AGENT_RC_NOT_LIVE	2

/* cm_file_header.flags */
#define CM_F_READY		(1u << 0)	/* VM record written, decode ok */
#define CM_F_FULL		(1u << 1)	/* hit max size: records dropped */
#define CM_F_DISABLED		(1u << 2)	/* agent turned itself off */
#define CM_F_CLOSED		(1u << 3)	/* JVM exited cleanly */
#define CM_F_SUPERSEDED		(1u << 4)	/* a newer generation is at the
						   path; write_pos is final */
#define CM_F_EVENTS		(1u << 5)	/* the agent answers the event
						   requests below */
#define CM_F_ALLOC_ON		(1u << 6)	/* sampled allocations on now */
#define CM_F_LOCK_ON		(1u << 7)	/* contended monitors on now */

/*
 * Event requests. A recorder asks the agent of a JVM for its events by
 * holding an open file description lock (fcntl F_OFD_SETLK, F_RDLCK, one
 * byte) on the code map file it reads:
 *   at CM_CTL_ALLOC + interval: sampled allocations, one every interval
 *     bytes on average (1 .. CM_CTL_ALLOC_MAX);
 *   at CM_CTL_LOCK: contended monitor enters.
 * The agent looks every 100 ms (F_OFD_GETLK over each range, on the
 * current generation's file and the one before it, which the reader may
 * still hold while it moves on) and turns the JVMTI events on or off to
 * match. The kernel drops the lock when the recorder closes the file,
 * however it ends, so the JVM never samples for a recorder that is gone;
 * nothing is written by the recorder. Several recorders: an event is on
 * while any asks, at the interval of one of them. The agent's probe
 * (ASGST_PROBE_SYMBOL in bpf/sampler.h) carries each event to the
 * recorder's uprobe; CM_F_ALLOC_ON and CM_F_LOCK_ON say what is on.
 */
#define CM_CTL_ALLOC		(1ull << 40)
#define CM_CTL_ALLOC_MAX	((1ull << 32) - 1)
#define CM_CTL_LOCK		((1ull << 40) + (1ull << 33))
/* kinds the probe passes (ASGST_PROBE_* in bpf/sampler.h) */
#define CM_PROBE_ALLOC		1
#define CM_PROBE_LOCK		2

struct cm_file_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;		/* CM_HEADER_SIZE */
	uint32_t writer_pid;		/* getpid() inside the JVM */
	uint32_t flags;			/* CM_F_*, updated with release stores */
	uint64_t max_size;		/* the writer never grows past this */
	uint64_t write_pos;		/* end of the last complete record */
	uint64_t start_ns;		/* agent start, CLOCK_MONOTONIC */
	uint64_t dropped;		/* records not written (map full), all
					   generations */
	char disabled_reason[128];	/* NUL-terminated when CM_F_DISABLED */
	/* version 2 */
	uint64_t generation;		/* 0 for the first file, +1 each */
	uint64_t gen_start_ns;		/* when the snapshot was taken */
	uint64_t snapshot_end;		/* [CM_HEADER_SIZE, snapshot_end): the
					   snapshot (0 in generation 0) */
	uint64_t live_bytes;		/* bytes of the live set when this
					   generation began */
};

enum cm_rec_type {
	CM_REC_VM = 1,		/* struct cm_vm: JVM version and VM constants */
	CM_REC_METHOD = 2,	/* struct cm_method */
	CM_REC_CODE = 3,	/* struct cm_code: compiled code loaded */
	CM_REC_UNLOAD = 4,	/* struct cm_unload: compiled code unloaded */
	CM_REC_STUB = 5,	/* struct cm_stub: dynamic code / runtime stub */
	CM_REC_THREAD = 6,	/* struct cm_thread: start or end */
	CM_REC_CONT = 7,	/* struct cm_cont: virtual-thread layout
				   (JDK 21+, optional, after the VM record) */
	CM_REC_STRINGS = 8,	/* struct cm_strings (version 3) */
	CM_REC_CLASSES = 9,	/* struct cm_classes (version 3) */
	CM_REC_METHODS = 10,	/* struct cm_methods (version 3) */
	CM_REC_MAX
};

struct cm_rec_hdr {
	uint32_t type;		/* enum cm_rec_type */
	uint32_t len;		/* whole record, multiple of 8, >= 16 */
	uint64_t time_ns;	/* when the event happened */
};

struct cm_str {
	uint16_t len;
	char s[];		/* len bytes, no NUL */
} __attribute__((packed));

/*
 * VM constants: offsets of fields (bytes) and addresses, read by the agent
 * from the JVM's own VMStructs. CM_ABSENT marks a field the JVM does not
 * have; the reader decides what it can do without it.
 */
#define CM_ABSENT		(-1)

struct cm_vm_consts {
	/* CodeBlob */
	int32_t blob_name;		/* const char* _name */
	int32_t blob_size;		/* int _size */
	int32_t blob_frame_size;	/* int _frame_size (words) */
	int32_t blob_frame_complete;	/* _frame_complete_offset */
	int32_t blob_frame_complete_sz;	/* its size: 4 (JDK 17) or 2 */
	int32_t blob_code_begin;	/* address _code_begin (JDK <= 22) */
	int32_t blob_code_offset;	/* int _code_offset (JDK 23+) */
	int32_t blob_kind;		/* u1 _kind (JDK 23+) */
	int32_t blob_header_size;	/* sizeof(CodeBlob) */
	/* nmethod (CompiledMethod on JDK <= 22 for _method) */
	int32_t nm_method;
	int32_t nm_comp_level;
	int32_t nm_entry_bci;		/* InvocationEntryBci (-1) unless OSR */
	int32_t nm_verified_entry_point;/* address (JDK <= 22) */
	int32_t nm_verified_entry_offset;/* u2 (JDK 23+) */
	/* Method / ConstMethod */
	int32_t method_const;		/* Method::_constMethod */
	int32_t sizeof_const_method;	/* bcp -> bci: bcp - (cm + this) */
	int32_t sizeof_method;
	/* JavaThread and friends */
	int32_t jt_anchor;		/* JavaThread::_anchor */
	int32_t jt_thread_state;
	int32_t jt_osthread;		/* JavaThread or Thread::_osthread */
	int32_t jt_cont_entry;		/* JDK 21+ */
	int32_t jt_vthread;		/* OopHandle, JDK 21+ */
	int32_t jt_stack_base;
	int32_t jt_stack_size;
	int32_t osthread_thread_id;
	int32_t anchor_last_sp;		/* JavaFrameAnchor::_last_Java_sp */
	int32_t anchor_last_pc;
	int32_t anchor_last_fp;
	int32_t jcw_anchor;		/* JavaCallWrapper::_anchor */
	int32_t upcall_frame_data;	/* UpcallStub::_frame_data_offset */
	int32_t upcall_fd_jfa;		/* UpcallStub::FrameData::jfa */
	/* interpreter frame layout, words relative to rbp */
	int32_t if_method;		/* -3 */
	int32_t if_bcp;			/* -8 */
	int32_t if_sender_sp;		/* -1 */
	int32_t if_locals;		/* -6 */
	int32_t entry_frame_call_wrapper;/* -6 */
	int32_t thread_state_in_java;	/* JavaThreadState values */
	int32_t thread_state_in_native;
	int32_t thread_state_in_vm;
	int32_t thread_state_blocked;
	int32_t pad0;
	/* addresses (0 = unknown) */
	uint64_t call_stub_return;	/* StubRoutines::_call_stub_return_address */
	uint64_t interp_begin;		/* interpreter StubQueue code range */
	uint64_t interp_end;
	uint64_t code_low;		/* CodeCache::_low_bound */
	uint64_t code_high;		/* CodeCache::_high_bound */
	uint64_t cont_return_barrier;	/* StubRoutines::_cont_returnBarrier */
	uint64_t cont_return_pc;	/* ContinuationEntry::_return_pc */
	uint64_t reserved[16];
};

struct cm_vm {
	struct cm_rec_hdr h;
	uint32_t jdk_major;		/* 17, 25, ... */
	uint32_t pad;
	struct cm_vm_consts c;
	/* followed by: cm_str vm_version (java.vm.version) */
};

/* cm_method.flags */
#define CM_METHOD_NATIVE	(1u << 0)

struct cm_method {
	struct cm_rec_hdr h;
	uint64_t method;		/* Method* */
	uint64_t const_method;		/* ConstMethod* (bcp base - sizeof) */
	uint32_t modifiers;		/* JVMTI GetMethodModifiers */
	uint32_t flags;			/* CM_METHOD_* */
	uint32_t n_lines;		/* struct cm_line entries that follow */
	uint32_t pad;
	/* followed by: cm_str class (dotted binary name), name, signature,
	 * source file (may be empty), then padding to 4, then n_lines
	 * struct cm_line, then padding to 8 */
};

struct cm_line {
	uint32_t bci;			/* start bci */
	uint32_t line;
};

/*
 * Version 3: interned strings. count entries follow, each
 *   varint id (>= 1, < 2^32), varint len (<= CM_STR_MAX), len bytes
 * then padding to 8 (zero bytes).
 */
#define CM_STR_MAX		65535u

struct cm_strings {
	struct cm_rec_hdr h;
	uint32_t count;
	uint32_t pad;
};

/*
 * Version 3: classes. count entries follow, each
 *   varint id (>= 1, < 2^32), varint name (string id of the dotted
 *   binary name, >= 1), varint source (string id, 0: no source file)
 * then padding to 8. Classes of one name loaded twice (two class loaders)
 * share an id: the id names the pair, not the class.
 */
struct cm_classes {
	struct cm_rec_hdr h;
	uint32_t count;
	uint32_t pad;
};

/*
 * Version 3: methods, count entries, each
 *   varint method - base        (Method*, base <= every Method* here)
 *   varint zigzag(const_method - method)
 *   varint class id, varint name id, varint signature id (all >= 1)
 *   varint modifiers (< 2^32), varint flags (CM_METHOD_*)
 *   varint n_lines (<= CM_LINES_MAX), then n_lines pairs
 *     varint zigzag(bci - previous bci), varint zigzag(line - previous
 *     line) (both previous 0 at the first; each result in [0, 2^32))
 * then padding to 8. The entries are methods as a METHOD record has them.
 */
#define CM_LINES_MAX		65536u

struct cm_methods {
	struct cm_rec_hdr h;
	uint64_t base;
	uint32_t count;
	uint32_t pad;
};

/*
 * Varint helpers for both sides. cm_varint_get reads one varint at *p
 * below end: 1 and *p moved past it, or 0 (it runs past end, is longer
 * than 10 bytes or does not fit 64 bits).
 */
static inline int cm_varint_get(const uint8_t **p, const uint8_t *end,
				uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t x = 0;

	for (unsigned int i = 0; i < 10; i++) {
		uint8_t c;

		if (q >= end)
			return 0;
		c = *q++;
		if (i == 9 && c > 1)
			return 0;
		x |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = x;
			*p = q;
			return 1;
		}
	}
	return 0;
}

/* bytes written to out (at least 10 bytes of room) */
static inline unsigned int cm_varint_put(uint8_t *out, uint64_t v)
{
	unsigned int n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

static inline uint64_t cm_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t cm_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* cm_code.kind */
enum cm_code_kind {
	CM_CODE_NMETHOD = 1,		/* compiled Java method */
	CM_CODE_NATIVE = 2,		/* native-method wrapper (JNI) */
	CM_CODE_OSR = 3,		/* on-stack-replacement nmethod */
};

struct cm_code {
	struct cm_rec_hdr h;
	uint64_t start;			/* code begin (JVMTI code_addr) */
	uint64_t end;			/* code begin + code_size */
	uint64_t blob;			/* CodeBlob* / nmethod* (0: unknown) */
	uint64_t method;		/* Method* (from the blob when known) */
	uint64_t verified_entry;	/* 0: unknown */
	uint32_t kind;			/* enum cm_code_kind */
	int32_t comp_level;		/* 0..4, -1 unknown */
	int32_t frame_size;		/* words incl. return pc, -1 unknown */
	int32_t frame_complete;		/* offset from start, -1 unknown */
	uint32_t n_pcs;			/* pc descriptors that follow */
	uint32_t n_methods;		/* Method* pool entries that follow */
	/* followed by: uint64_t methods[n_methods] (the pool), then n_pcs
	 * variable-size descriptors, each struct cm_pcdesc followed by
	 * depth struct cm_frame (index 0 innermost), then padding to 8 */
};

struct cm_pcdesc {
	uint32_t pc_off;		/* pc - start */
	uint32_t depth;			/* inline frames at this pc, >= 1 */
};

struct cm_frame {
	uint32_t method_idx;		/* index into the record's method pool */
	int32_t bci;			/* -1 unknown */
};

struct cm_unload {
	struct cm_rec_hdr h;
	uint64_t start;
	uint64_t method;
};

/* cm_stub.kind */
enum cm_stub_kind {
	CM_STUB_OTHER = 0,
	CM_STUB_INTERPRETER = 1,
	CM_STUB_CALL_STUB = 2,
	CM_STUB_ADAPTER = 3,		/* i2c/c2i adapters */
	CM_STUB_NEP_INVOKER = 4,	/* FFM downcall */
	CM_STUB_UPCALL = 5,		/* FFM upcall */
	CM_STUB_CONT = 6,		/* cont_* (return barrier, ...) */
	CM_STUB_RUNTIME = 7,		/* other RuntimeStub */
};

struct cm_stub {
	struct cm_rec_hdr h;
	uint64_t start;
	uint64_t end;
	uint64_t blob;			/* CodeBlob* when found, else 0 */
	uint32_t kind;			/* enum cm_stub_kind */
	int32_t frame_size;		/* words, -1 unknown */
	int32_t frame_complete;		/* offset from start, -1 unknown */
	uint32_t pad;
	/* followed by: cm_str name */
};

/* cm_thread.flags */
#define CM_THREAD_END		(1u << 0)	/* the thread ended */
#define CM_THREAD_VIRTUAL	(1u << 1)	/* a virtual thread (mount) */
#define CM_THREAD_CARRIER	(1u << 2)	/* a carrier of virtual threads */
#define CM_THREAD_DAEMON	(1u << 3)

struct cm_thread {
	struct cm_rec_hdr h;
	uint64_t java_thread;		/* JavaThread* (0 unknown) */
	uint32_t tid;			/* OS tid as the JVM sees it */
	uint32_t flags;			/* CM_THREAD_* */
	/* followed by: cm_str name */
};

/*
 * Where a mounted virtual thread's frozen frames are: the ContinuationEntry
 * (JavaThread::_cont_entry) holds its Continuation; Continuation.tail is
 * the youngest heap stack chunk; a StackChunk's frames are the words
 * [sp, bottom) (JDK 24+; [sp, size - argsize) before) of the stack that
 * starts chunk_stack bytes into it (youngest first, the top frame's
 * return pc at sp - 1).
 */
struct cm_cont {
	struct cm_rec_hdr h;
	int32_t entry_cont;		/* ContinuationEntry::_cont (oopDesc*) */
	int32_t cont_tail;		/* Continuation.tail (a heap oop) */
	int32_t chunk_size;		/* StackChunk.size (int, words) */
	int32_t chunk_sp;		/* StackChunk.sp (int, words) */
	int32_t chunk_argsize;		/* StackChunk.argsize (JDK 21-23), -1 */
	int32_t chunk_bottom;		/* StackChunk.bottom (JDK 24+), -1 */
	int32_t chunk_stack;		/* the stack's offset in a StackChunk */
	int32_t entry_size;		/* ContinuationEntry::size(): sizeof
					   aligned to 16; the enterSpecial
					   frame's rbp slot is right above */
	uint32_t oop_size;		/* heap oop: 4 (compressed) or 8 */
	uint32_t oop_shift;		/* CompressedOops::_shift */
	uint64_t oop_base;		/* CompressedOops::_base */
	int32_t chunk_parent;		/* StackChunk.parent (a heap oop): an
					   emptied tail chunk's frames are in
					   its parent */
	int32_t pad;
};

#endif /* ASGST_AGENT_CODEMAP_FORMAT_H */
