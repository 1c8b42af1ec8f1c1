/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The raw recording file (.asgst): everything needed to decode a recording
 * later on the same host, after the processes are gone (asgst-bpf report).
 *
 *   struct raw_file_hdr
 *   chunks: struct raw_chunk + len bytes of payload + padding to 8
 *
 * Chunk payloads:
 *   RAW_SAMPLE   one sample record (bpf/sampler.h) in the order they were
 *                decoded: its parts as the kernel sent them, without the
 *                sampler's gap between the stacks and the window (the
 *                window right after the stacks, window_off, chunk_off and
 *                py_off moved with it) and the reservation's slack (files
 *                before version 4 may have both: the offsets say where
 *                the parts are either way)
 *   RAW_SAMPLE_REF (version 4) struct raw_sample_ref + such a record
 *                without the top `omitted` bytes of its window (cut out
 *                at record offset `cut`): the bytes at those addresses
 *                in the window of the last sample of the same thread
 *                before it in the file, which were the same. Writer and
 *                reader keep the last window of RAW_REF_SLOTS threads,
 *                one a slot chosen by pid and tid, replaced by every
 *                sample with a window of a thread of that slot (RAW_SAMPLE
 *                or RAW_SAMPLE_REF, in file order), so both hold the same
 *                bytes; the reader hands the record out whole, as a
 *                RAW_SAMPLE. A record's stack below where it changed goes
 *                into the file once, not with every sample.
 *   RAW_PROC     struct raw_proc + comm + /proc/PID/maps text, then
 *                (when the process runs in a container) u8 length +
 *                container id + u8 length + pod uid (earlier readers
 *                ignore what follows the maps)
 *   RAW_CODEMAP  struct raw_codemap + code-map bytes at that file offset
 *                (the chunks of one pid, in order, rebuild its map)
 *   RAW_STACKS   decoded stacks (struct raw_stack ...), written when a
 *                recording's output could not be written; in version 2
 *                led by RAW_STACKS_V2_TAG, each stack with its
 *                allocation values and event class (struct raw_stack_jvm
 *                and a string after its thread strings)
 *   RAW_PYCODE   struct raw_pycode + co_qualname + co_filename +
 *                co_linetable bytes: a CPython process's code object as
 *                record read it, before the samples decoded after it
 *                (version 3)
 *   RAW_META     struct raw_meta (last)
 *
 * Little-endian x86_64. The reader checks every length against the file and
 * the payload; a bad file is a one-line error.
 */
#ifndef ASGST_RAW_H
#define ASGST_RAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "python/py_parse.h"
#include "python/py_proc.h"

#define RAW_MAGIC		"ASGSTRAW"
#define RAW_VERSION		4	/* 2: JVM events' stack values,
					   3: RAW_PYCODE, Python frames,
					   4: RAW_SAMPLE_REF */
#define RAW_VERSION_MIN		1	/* still read */
#define RAW_MAX_CHUNK		(256u << 20)

struct raw_file_hdr {
	char magic[8];
	uint32_t version;
	uint32_t hdr_size;
};

enum raw_chunk_type {
	RAW_SAMPLE = 1,
	RAW_PROC = 2,
	RAW_CODEMAP = 3,
	RAW_STACKS = 4,
	RAW_META = 5,
	RAW_PYCODE = 6,
	RAW_SAMPLE_REF = 7,
};

/* RAW_SAMPLE_REF: its threads' last windows kept, and the least it omits */
#define RAW_REF_SLOTS_BITS	8
#define RAW_REF_SLOTS		(1u << RAW_REF_SLOTS_BITS)
#define RAW_REF_MIN		64

struct raw_sample_ref {
	uint32_t pid, tid;	/* the record's */
	uint32_t cut;		/* where the omitted bytes go */
	uint32_t omitted;	/* bytes, the top of the record's window */
	uint64_t addr;		/* their stack address: the record's
				   sp + window_len - omitted */
};

struct raw_pycode {
	uint32_t pid;
	uint32_t version;	/* (major << 8) | minor */
	uint64_t code;		/* the code object's address */
	uint64_t poison_until;	/* samples before it (index in the file's
				   order) get no name from it */
	int32_t firstlineno;
	uint32_t func_len, file_len, lt_len;	/* the bytes that follow */
};

struct raw_chunk {
	uint32_t type;
	uint32_t pad;
	uint64_t len;		/* payload bytes, without padding */
};

#define RAW_PROC_JVM		(1u << 0)

struct raw_proc {
	uint32_t pid;
	uint32_t flags;		/* RAW_PROC_* */
	uint32_t comm_len;
	uint32_t pad;
	uint64_t maps_len;
	uint64_t jvm_from_seq;	/* sample index from which it was a JVM */
};

struct raw_codemap {
	uint32_t pid;
	uint32_t pad;
	uint64_t offset;	/* file offset of the bytes that follow */
};

struct raw_meta {
	uint32_t frequency_hz;
	uint32_t events;	/* ASGST_EVMASK_*; 0 in older files: cpu */
	uint64_t duration_ns;
	uint64_t samples;
	uint64_t lost;
	/* added with off-CPU recording; absent from older files */
	uint64_t offcpu_events;
	uint64_t offcpu_lost;
	uint64_t end_ns;	/* recording end, the samples' clock; 0 before */
	uint64_t offcpu_capture_ns;	/* 0 in older files */
	/* added with the JVM events (file version 2); 0 in older files */
	uint64_t alloc_events;
	uint64_t lock_events;
	uint64_t jvm_ev_lost;
	uint64_t jvm_ev_throttled;
	uint64_t alloc_interval;
};
#define RAW_META_V1_SIZE	32	/* before the off-CPU fields */

struct profile;

/* writer */
struct raw_writer;
int raw_writer__open(struct raw_writer **out, const char *path, char *err,
		     size_t errlen);
int raw_writer__chunk(struct raw_writer *w, uint32_t type, const void *a,
		      size_t alen, const void *b, size_t blen);
/* one chunk whose payload is the n parts of iov, in order */
int raw_writer__chunkv(struct raw_writer *w, uint32_t type,
		       const struct iovec *iov, unsigned int n);
/*
 * A sample record (bpf/sampler.h) as a RAW_SAMPLE chunk (its parts only,
 * without the sampler's gap and the reservation's slack) or a
 * RAW_SAMPLE_REF; sample chunks are written by it only (it keeps the
 * threads' windows the reader will have).
 */
int raw_writer__sample(struct raw_writer *w, const void *rec, size_t len);
/* container_id, pod_uid, service and process (profile/service.h): NULL
 * when none */
struct raw_proc_names {
	const char *container_id, *pod_uid, *service, *process;
};
int raw_writer__proc(struct raw_writer *w, pid_t pid, bool is_jvm,
		     uint64_t jvm_from_seq, const char *comm, const char *maps,
		     size_t maps_len, const struct raw_proc_names *names);
int raw_writer__stacks(struct raw_writer *w, const struct profile *p);
/*
 * Writes RAW_META (p may be NULL: none) and puts the file in place at its
 * path (util/outfile.h); after a write error it is removed instead. 0, or
 * -errno (the first write error) with one line in err.
 */
int raw_writer__close(struct raw_writer *w, const struct profile *p,
		      char *err, size_t errlen);
/* a recording not finished: closed and its file removed */
void raw_writer__abort(struct raw_writer *w);
const char *raw_writer__path(const struct raw_writer *w);

/* reader */
struct raw_reader;
int raw_reader__open(struct raw_reader **out, const char *path, char *err,
		     size_t errlen);
/* 1 and the next chunk (payload valid until the next call; a
 * RAW_SAMPLE_REF handed out as the RAW_SAMPLE it stands for), 0 at the
 * end, -EINVAL with err set on a bad file (-ENOMEM, err set, out of
 * memory) */
int raw_reader__next(struct raw_reader *r, uint32_t *type,
		     const void **payload, uint64_t *len, char *err,
		     size_t errlen);
void raw_reader__close(struct raw_reader *r);
/* RAW_STACKS payload -> stacks added to p; 0 or -EINVAL */
int raw__load_stacks(struct profile *p, const void *payload, uint64_t len);

/*
 * The other chunks, checked against their payload's length: 0, or -EINVAL
 * with err set to one line naming what is wrong. The pointers point into
 * the payload.
 */
#define RAW_COMM_MAX		63	/* a comm is 15 bytes; room for more */
#define RAW_CODEMAP_MAX_OFF	(1ull << 32)	/* code maps are smaller */

#define RAW_LABEL_MAX		64	/* a container id: 64 hex digits */
#define RAW_NAME_MAX		128	/* a service's or process's name */

struct raw_proc_view {
	char container_id[RAW_LABEL_MAX + 1];	/* "" when none */
	char pod_uid[RAW_LABEL_MAX + 1];
	char service[RAW_NAME_MAX + 1];		/* "" when none */
	char process[RAW_NAME_MAX + 1];
	pid_t pid;
	bool is_jvm;
	uint64_t jvm_from_seq;
	char comm[RAW_COMM_MAX + 1];	/* NUL-terminated copy */
	const char *maps;
	size_t maps_len;
};
int raw__parse_proc(const void *payload, uint64_t len,
		    struct raw_proc_view *out, char *err, size_t errlen);

struct raw_codemap_view {
	pid_t pid;
	uint64_t offset;	/* where bytes go in the rebuilt map */
	const void *bytes;
	size_t len;
};
int raw__parse_codemap(const void *payload, uint64_t len,
		       struct raw_codemap_view *out, char *err, size_t errlen);
/* RAW_PYCODE: a name or file name at most this long */
#define RAW_PY_STR_MAX		(PY_STR_MAX_CHARS * 4)
struct raw_pycode_view {
	pid_t pid;
	struct py_code_view v;	/* func and file point at the two below */
	char func[RAW_PY_STR_MAX + 1];
	char file[RAW_PY_STR_MAX + 1];
};
int raw__parse_pycode(const void *payload, uint64_t len,
		      struct raw_pycode_view *out, char *err, size_t errlen);
int raw_writer__pycode(struct raw_writer *w, pid_t pid,
		       const struct py_code_view *v);
/* older (shorter) meta chunks read with the newer fields 0 */
int raw__parse_meta(const void *payload, uint64_t len, struct raw_meta *out,
		    char *err, size_t errlen);
/* a RAW_META chunk into p's profile_meta, the one place raw_meta and
 * profile_meta meet when reading (raw_writer__close when writing) */
int raw__load_meta(struct profile *p, const void *payload, uint64_t len,
		   char *err, size_t errlen);

#endif /* ASGST_RAW_H */
