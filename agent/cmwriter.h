/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Code-map writer: the shared-memory file of agent/codemap_format.h.
 * Appends are serialised by one short mutex; nothing else is held across
 * it. The file is reserved in the address space at max_size once, so the
 * mapping never moves; it grows (fallocate, so tmpfs space is committed
 * and a full /dev/shm is an error, not a SIGBUS) in chunks.
 */
#ifndef ASGST_AGENT_CMWRITER_H
#define ASGST_AGENT_CMWRITER_H

#include <stddef.h>
#include <stdint.h>
#include "codemap_format.h"

/* 0 ok, -1 with errno-like message logged */
int cmw__open(const char *path, uint64_t max_size);
/* append one complete record (hdr.len already set, multiple of 8) */
void cmw__append(const void *rec, size_t len);
/* set header flags (release store) */
void cmw__set_flags(uint32_t set);
/* stop writing for good and say why */
void cmw__disable(const char *reason);
/* mark closed and remove the file; idempotent */
void cmw__close(void);
int cmw__active(void);
uint64_t cmw__now_ns(void);
void cmw__lock(void);
void cmw__unlock(void);

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
