// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cmwriter.h"
#include "log.h"

#define CHUNK		(1u << 20)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct cm_file_header *hdr;
static char *base;
static int fd = -1;
static uint64_t mapped_max, file_size;
static char path_buf[256];
static int state;	/* 0 closed, 1 writing, 2 disabled/closed */

uint64_t cmw__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cmw__lock(void) { pthread_mutex_lock(&mu); }
void cmw__unlock(void) { pthread_mutex_unlock(&mu); }

int cmw__active(void)
{
	return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == 1;
}

static int grow_to(uint64_t need)
{
	uint64_t n = file_size;

	while (n < need)
		n += CHUNK;
	if (n > mapped_max)
		n = mapped_max;
	if (n < need)
		return -1;
	/* fallocate commits tmpfs pages: ENOSPC here instead of SIGBUS later */
	if (posix_fallocate(fd, (off_t)file_size, (off_t)(n - file_size)))
		return -1;
	file_size = n;
	return 0;
}

int cmw__open(const char *path, uint64_t max_size)
{
	void *m;

	if (max_size < CM_HEADER_SIZE + CHUNK)
		max_size = CM_HEADER_SIZE + CHUNK;
	snprintf(path_buf, sizeof(path_buf), "%s", path);
	/* a map left by an earlier process with our pid is replaced */
	unlink(path_buf);
	fd = open(path_buf, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		log_error("cannot create code map %s: %s", path_buf,
			  strerror(errno));
		return -1;
	}
	fchmod(fd, 0644);
	m = mmap(NULL, max_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		log_error("cannot map code map %s: %s", path_buf,
			  strerror(errno));
		goto fail;
	}
	base = m;
	mapped_max = max_size;
	file_size = 0;
	if (grow_to(CM_HEADER_SIZE + CHUNK)) {
		log_error("cannot size code map %s: %s (is /dev/shm full?)",
			  path_buf, strerror(errno));
		munmap(m, max_size);
		goto fail;
	}
	hdr = (struct cm_file_header *)base;
	memset(hdr, 0, CM_HEADER_SIZE);
	hdr->version = CM_VERSION;
	hdr->header_size = CM_HEADER_SIZE;
	hdr->writer_pid = (uint32_t)getpid();
	hdr->max_size = max_size;
	hdr->write_pos = CM_HEADER_SIZE;
	hdr->start_ns = cmw__now_ns();
	/* magic last: a reader never sees a half-made header as valid */
	atomic_thread_fence(memory_order_release);
	memcpy(hdr->magic, CM_MAGIC, 8);
	__atomic_store_n(&state, 1, __ATOMIC_RELEASE);
	return 0;
fail:
	close(fd);
	fd = -1;
	unlink(path_buf);
	return -1;
}

void cmw__append(const void *rec, size_t len)
{
	uint64_t pos;

	if (!cmw__active())
		return;
	pthread_mutex_lock(&mu);
	if (state != 1)
		goto cleanup;
	pos = hdr->write_pos;
	if (pos + len > file_size && grow_to(pos + len)) {
		if (!(hdr->flags & CM_F_FULL)) {
			__atomic_or_fetch(&hdr->flags, CM_F_FULL,
					  __ATOMIC_RELEASE);
			log_warn("code map full at %llu bytes: dropping records",
				 (unsigned long long)file_size);
		}
		__atomic_add_fetch(&hdr->dropped, 1, __ATOMIC_RELEASE);
		goto cleanup;
	}
	memcpy(base + pos, rec, len);
	__atomic_store_n(&hdr->write_pos, pos + len, __ATOMIC_RELEASE);
cleanup:
	pthread_mutex_unlock(&mu);
}

void cmw__set_flags(uint32_t set)
{
	pthread_mutex_lock(&mu);
	if (hdr && state == 1)
		__atomic_or_fetch(&hdr->flags, set, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&mu);
}

void cmw__disable(const char *reason)
{
	pthread_mutex_lock(&mu);
	if (hdr && state == 1) {
		snprintf(hdr->disabled_reason, sizeof(hdr->disabled_reason),
			 "%s", reason);
		__atomic_or_fetch(&hdr->flags, CM_F_DISABLED,
				  __ATOMIC_RELEASE);
		__atomic_store_n(&state, 2, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&mu);
	log_error("agent disabled: %s", reason);
}

void cmw__close(void)
{
	pthread_mutex_lock(&mu);
	if (hdr && fd >= 0) {
		__atomic_or_fetch(&hdr->flags, CM_F_CLOSED, __ATOMIC_RELEASE);
		__atomic_store_n(&state, 2, __ATOMIC_RELEASE);
		unlink(path_buf);
		close(fd);
		fd = -1;
		/* the mapping stays: a late callback may still test state */
	}
	pthread_mutex_unlock(&mu);
}

void rb__init(struct recbuf *b)
{
	memset(b, 0, sizeof(*b));
}

void rb__free(struct recbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void *rb__put(struct recbuf *b, const void *data, size_t n)
{
	void *dst;

	if (b->oom)
		return NULL;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	dst = b->p + b->len;
	if (data)
		memcpy(dst, data, n);
	else
		memset(dst, 0, n);
	b->len += n;
	return dst;
}

void rb__str(struct recbuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	uint16_t l;

	if (n > 0xffff)
		n = 0xffff;
	l = (uint16_t)n;
	rb__put(b, &l, 2);
	rb__put(b, s, n);
}

void rb__pad(struct recbuf *b, size_t align)
{
	size_t r = b->len % align;

	if (r)
		rb__put(b, NULL, align - r);
}

int rb__finish(struct recbuf *b)
{
	rb__pad(b, 8);
	if (b->oom || b->len < sizeof(struct cm_rec_hdr) || b->len > 0xfffffff0u)
		return -1;
	((struct cm_rec_hdr *)b->p)->len = (uint32_t)b->len;
	return 0;
}
