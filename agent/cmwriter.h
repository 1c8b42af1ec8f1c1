/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Code-map writer: the shared-memory file of agent/codemap_format.h.
 * Appends are serialised by one short mutex; nothing else is held across
 * it and no JVMTI call is made under it. Each generation's file is
 * reserved in the address space at max_size once, so its mapping never
 * moves; it grows (fallocate, so tmpfs space is committed and a full
 * /dev/shm is an error, not a SIGBUS) in chunks.
 *
 * The writer indexes what it appended (methods by Method*, CODE and STUB
 * by start, THREAD by tid, the VM and CONT records; the strings and
 * classes of this generation by text and by id): UNLOAD and thread-end
 * records take entries out, so the index is the live set, offsets into the
 * current file. cmw__compact() copies the live set into a new generation
 * (see codemap_format.h), methods with exactly the strings and classes
 * they use; only methods need the JVM's word on what is still loaded,
 * which the caller enumerates outside the lock.
 */
#ifndef ASGST_AGENT_CMWRITER_H
#define ASGST_AGENT_CMWRITER_H

#include <stddef.h>
#include <stdint.h>
#include "codemap_format.h"

/* 0 ok, -1 with errno-like message logged */
int cmw__open(const char *path, uint64_t max_size);
/* append one complete record (hdr.len already set, multiple of 8); methods
 * go through cmw__append_methods() */
void cmw__append(const void *rec, size_t len);
/* set header flags (release store) */
void cmw__set_flags(uint32_t set);
/* clear header flags (release store) */
void cmw__clear_flags(uint32_t clr);
/*
 * Event requests (codemap_format.h): the start of a lock another open
 * file description holds in [start, start + len) on the current file, or
 * else on the generation before it. 1 and *found_start, 0 none, -1 the
 * writer is off or the kernel refused.
 */
int cmw__ctl_query(uint64_t start, uint64_t len, uint64_t *found_start);
/* stop writing for good and say why */
void cmw__disable(const char *reason);
/* mark closed and remove the file; idempotent */
void cmw__close(void);
int cmw__active(void);
uint64_t cmw__now_ns(void);
/* a METHOD record for this Method* is in the live set */
int cmw__method_known(uint64_t method);

/*
 * Methods (version 3): interned into STRINGS, CLASSES and METHODS records
 * appended together, so a method is never written without the strings it
 * names. Methods already in the live set are skipped unless force. The
 * strings are copied; the caller keeps its own.
 */
struct cmw_method {
	uint64_t method, const_method;
	uint32_t modifiers, flags;
	const char *klass, *source;	/* source NULL or "" when unknown */
	const char *name, *sig;
	const struct cm_line *lines;
	uint32_t n_lines;
};

void cmw__append_methods(const struct cmw_method *ms, size_t n, int force);

/* log bytes past the snapshot before a compaction is worth it (default);
 * compact methods (version 3) make a log of the same churn about half
 * the bytes version 2 took, hence 1 MiB where it was 2 */
#define CMW_COMPACT_MIN		(1u << 20)
void cmw__set_compact_min(uint64_t bytes);
/* 1: the log is mostly dead, nears max_size, or records were dropped */
int cmw__compaction_due(void);
/* the start-up enumeration ends here: generation 0's "snapshot" */
void cmw__mark_base(void);
/* end of the log now: methods recorded from here on are kept as live */
uint64_t cmw__pos(void);

struct cmw_compact_stats {
	uint64_t generation;
	uint64_t old_bytes;		/* file bytes before */
	uint64_t new_bytes;		/* snapshot bytes after */
	uint64_t methods_kept, methods_dropped;
	uint64_t strings, classes;	/* re-emitted for the kept methods */
	uint64_t locked_ns;		/* the JVM's appends waited this long */
	uint64_t code, stubs, threads;
};

/*
 * Write the live set to a new generation and publish it. live: sorted
 * Method* of the classes loaded now, enumerated after mark = cmw__pos().
 * A method is kept when it is in live, in the pool of live code, or was
 * recorded at or after mark. 0, or -1 (nothing changed).
 */
int cmw__compact(const uint64_t *live, size_t n_live, uint64_t mark,
		 struct cmw_compact_stats *st);

/* a growable record buffer with the cm_str/padding helpers */
struct recbuf {
	char *p;
	size_t len, cap;
	int oom;
};

void rb__init(struct recbuf *b);
void rb__free(struct recbuf *b);
void *rb__put(struct recbuf *b, const void *data, size_t n);
void rb__str(struct recbuf *b, const char *s);
void rb__pad(struct recbuf *b, size_t align);
/* pad to 8, fill in the record header's len; returns 0 when ok */
int rb__finish(struct recbuf *b);

#endif /* ASGST_AGENT_CMWRITER_H */
