/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sampler's BPF ring buffer, read in place. A record is handed out
 * where the kernel wrote it and may be held there until it is decoded
 * (no copy of its stack window); the kernel's consumer position stays at
 * the oldest record still held, so the kernel never writes over one.
 * Holding costs ring space: the caller copies the oldest out when
 * ring__held_bytes() grows (see pipeline.c).
 */
#ifndef ASGST_RING_H
#define ASGST_RING_H

#include <stddef.h>
#include <stdint.h>

struct ring;

/* what a ring_fn returns: < 0 stop; 0 done with the record; RING_HOLD
 * keep it where it is until ring__release() */
#define RING_HOLD	1
typedef int (*ring_fn)(const void *data, size_t len, void *ctx);

/* the ring buffer map map_fd of size bytes, mapped; 0 or -errno */
int ring__open(struct ring **out, int map_fd, size_t size);
/*
 * Over memory laid out as the kernel maps it (tests): the consumer
 * position, the producer position and the data area mapped twice in a
 * row (2 * size bytes), size a power of two.
 */
struct ring *ring__new(uint64_t *cons_pos, const uint64_t *prod_pos,
		       const uint8_t *data, size_t size);
void ring__free(struct ring *r);

/* hand every complete record to fn, in order, until fn says stop;
 * records handed out, or -errno (-ENOMEM: no room to note a hold) */
int ring__consume(struct ring *r, ring_fn fn, void *ctx);
/* wait up to timeout_ms for the kernel to wake the reader (only wakeups
 * since the last wait count); 0 (woken or not), or -errno */
int ring__wait(struct ring *r, int timeout_ms);
/* a held record (the data a ring_fn got) is done with: in any order */
void ring__release(struct ring *r, const void *data);

/* where the next record will be read (the kernel's producer counts in
 * the same bytes) */
uint64_t ring__read_pos(const struct ring *r);
/* bytes held from the oldest held record on; records held */
size_t ring__held_bytes(const struct ring *r);
size_t ring__held(const struct ring *r);
size_t ring__size(const struct ring *r);

#endif /* ASGST_RING_H */
