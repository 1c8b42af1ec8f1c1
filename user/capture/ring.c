// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The BPF ring buffer read in place (ring.h). The kernel's layout: a
 * consumer page we write, then a producer page and the data area, mapped
 * twice in a row so that a record that wraps reads as one; each record
 * is an 8-byte header (length with BUSY and DISCARD bits, page offset)
 * and its data, rounded up to 8 bytes. The kernel may write a new record
 * where the consumer position has passed: so the position we publish is
 * that of the oldest record still held, and ours to read goes on ahead
 * of it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <sys/epoll.h>
#include <sys/mman.h>

#include "capture/ring.h"

#define HDR_SZ		8u

struct held {
	uint64_t start;		/* the record's position */
	bool released;
};

struct ring {
	uint64_t *cons_pos;		/* the kernel reads it */
	const uint64_t *prod_pos;
	const uint8_t *data;
	uint64_t mask;
	uint64_t read_pos;		/* next record to hand out */
	/* the records held, oldest first: a circular array */
	struct held *held;
	size_t held_head, held_n, held_cap;
	/* ring__open's mappings and descriptors, if any */
	void *cons_map, *prod_map;
	size_t prod_map_len, page;
	int epfd;
};

struct ring *ring__new(uint64_t *cons_pos, const uint64_t *prod_pos,
		       const uint8_t *data, size_t size)
{
	struct ring *r;

	if (!cons_pos || !prod_pos || !data || !size || (size & (size - 1)))
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->cons_pos = cons_pos;
	r->prod_pos = prod_pos;
	r->data = data;
	r->mask = size - 1;
	r->read_pos = __atomic_load_n(cons_pos, __ATOMIC_ACQUIRE);
	r->epfd = -1;
	return r;
}

int ring__open(struct ring **out, int map_fd, size_t size)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	long page = sysconf(_SC_PAGESIZE);
	void *cons = MAP_FAILED, *prod = MAP_FAILED;
	struct ring *r = NULL;
	int epfd = -1, ret;

	*out = NULL;
	if (page <= 0 || !size || (size & (size - 1)))
		return -EINVAL;
	cons = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
		    map_fd, 0);
	if (cons == MAP_FAILED)
		goto fail;
	/* the producer page, then the data twice (read-only to us) */
	prod = mmap(NULL, (size_t)page + 2 * size, PROT_READ, MAP_SHARED,
		    map_fd, page);
	if (prod == MAP_FAILED)
		goto fail;
	/*
	 * Edge-triggered: the ring reads as ready while anything lies
	 * between the consumer position and the producer's, which held
	 * records always do; a wakeup from the kernel is the edge.
	 */
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, map_fd, &ev))
		goto fail;
	r = ring__new(cons, prod, (const uint8_t *)prod + page, size);
	if (!r) {
		errno = ENOMEM;
		goto fail;
	}
	r->cons_map = cons;
	r->prod_map = prod;
	r->prod_map_len = (size_t)page + 2 * size;
	r->page = (size_t)page;
	r->epfd = epfd;
	*out = r;
	return 0;
fail:
	ret = -errno;
	if (epfd >= 0)
		close(epfd);
	if (prod != MAP_FAILED)
		munmap(prod, (size_t)page + 2 * size);
	if (cons != MAP_FAILED)
		munmap(cons, (size_t)page);
	return ret ? ret : -EINVAL;
}

void ring__free(struct ring *r)
{
	if (!r)
		return;
	if (r->epfd >= 0)
		close(r->epfd);
	if (r->prod_map)
		munmap(r->prod_map, r->prod_map_len);
	if (r->cons_map)
		munmap(r->cons_map, r->page);
	free(r->held);
	free(r);
}

static struct held *held_at(const struct ring *r, size_t i)
{
	return &r->held[(r->held_head + i) % r->held_cap];
}

/* room for one more hold, made before a record is handed out */
static int held_room(struct ring *r)
{
	size_t nc;
	struct held *nh;

	if (r->held_n < r->held_cap)
		return 0;
	nc = r->held_cap ? r->held_cap * 2 : 256;
	nh = malloc(nc * sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	for (size_t i = 0; i < r->held_n; i++)
		nh[i] = *held_at(r, i);
	free(r->held);
	r->held = nh;
	r->held_cap = nc;
	r->held_head = 0;
	return 0;
}

/* the kernel may write up to the oldest record held, else up to what was
 * read */
static void publish(struct ring *r)
{
	uint64_t pos = r->held_n ? held_at(r, 0)->start : r->read_pos;

	__atomic_store_n(r->cons_pos, pos, __ATOMIC_RELEASE);
}

int ring__consume(struct ring *r, ring_fn fn, void *ctx)
{
	uint64_t prod;
	int n = 0, rc, err = 0;

	if (!r)
		return -EINVAL;
	prod = __atomic_load_n(r->prod_pos, __ATOMIC_ACQUIRE);
	while (r->read_pos < prod) {
		const uint8_t *hdr = r->data + (r->read_pos & r->mask);
		uint32_t raw = __atomic_load_n((const uint32_t *)hdr,
					       __ATOMIC_ACQUIRE);
		uint32_t len = raw & ~(BPF_RINGBUF_BUSY_BIT |
				       BPF_RINGBUF_DISCARD_BIT);
		uint64_t start = r->read_pos;

		if (raw & BPF_RINGBUF_BUSY_BIT)
			break;	/* being written: the rest comes next time */
		if (raw & BPF_RINGBUF_DISCARD_BIT) {
			r->read_pos += ((uint64_t)len + HDR_SZ + 7) & ~7ull;
			continue;
		}
		/* handed out only with room to note a hold */
		if ((err = held_room(r)))
			break;
		r->read_pos += ((uint64_t)len + HDR_SZ + 7) & ~7ull;
		rc = fn ? fn(hdr + HDR_SZ, len, ctx) : 0;
		n++;
		if (rc == RING_HOLD)
			r->held[(r->held_head + r->held_n++) % r->held_cap] =
				(struct held){ .start = start };
		if (rc < 0)
			break;
	}
	publish(r);
	return err ? err : n;
}

int ring__wait(struct ring *r, int timeout_ms)
{
	struct epoll_event ev;

	if (!r || r->epfd < 0)
		return -EINVAL;
	if (epoll_wait(r->epfd, &ev, 1, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

void ring__release(struct ring *r, const void *data)
{
	uint64_t off;
	size_t i;

	if (!r || !r->held_n)
		return;
	off = (uint64_t)((const uint8_t *)data - HDR_SZ - r->data);
	/* the oldest first: records are mostly released in order */
	for (i = 0; i < r->held_n; i++) {
		struct held *h = held_at(r, i);

		if (!h->released && (h->start & r->mask) == off) {
			h->released = true;
			break;
		}
	}
	if (i)
		return;	/* an older one is still held */
	while (r->held_n && held_at(r, 0)->released) {
		r->held_head = (r->held_head + 1) % r->held_cap;
		r->held_n--;
	}
	publish(r);
}

uint64_t ring__read_pos(const struct ring *r)
{
	return r ? r->read_pos : 0;
}

size_t ring__held_bytes(const struct ring *r)
{
	return r && r->held_n ? (size_t)(r->read_pos - held_at(r, 0)->start) :
				0;
}

size_t ring__held(const struct ring *r)
{
	return r ? r->held_n : 0;
}

size_t ring__size(const struct ring *r)
{
	return r ? (size_t)r->mask + 1 : 0;
}
