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

/* ---- the live-set index: u64 key (never 0) -> file offset --------------- */

struct idx {
	uint64_t *k, *v;
	size_t cap, n;		/* cap a power of two */
};

static size_t idx_slot(const struct idx *ix, uint64_t k)
{
	return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 17) & (ix->cap - 1);
}

static int idx_get(const struct idx *ix, uint64_t k, uint64_t *v)
{
	size_t i;

	if (!ix->cap)
		return 0;
	for (i = idx_slot(ix, k); ix->k[i]; i = (i + 1) & (ix->cap - 1))
		if (ix->k[i] == k) {
			*v = ix->v[i];
			return 1;
		}
	return 0;
}

static int idx_grow(struct idx *ix)
{
	struct idx n = { 0 };
	size_t i;

	n.cap = ix->cap ? ix->cap * 2 : 1024;
	n.k = calloc(n.cap, sizeof(*n.k));
	n.v = calloc(n.cap, sizeof(*n.v));
	if (!n.k || !n.v) {
		free(n.k);
		free(n.v);
		return -1;
	}
	for (i = 0; i < ix->cap; i++) {
		size_t j;

		if (!ix->k[i])
			continue;
		for (j = idx_slot(&n, ix->k[i]); n.k[j]; j = (j + 1) & (n.cap - 1))
			;
		n.k[j] = ix->k[i];
		n.v[j] = ix->v[i];
		n.n++;
	}
	free(ix->k);
	free(ix->v);
	*ix = n;
	return 0;
}

/* 0, or -1 out of memory; *old gets the replaced value (0: none) */
static int idx_put(struct idx *ix, uint64_t k, uint64_t v, uint64_t *old)
{
	size_t i;

	*old = 0;
	if ((ix->n + 1) * 10 > ix->cap * 7 && idx_grow(ix))
		return -1;
	for (i = idx_slot(ix, k); ix->k[i]; i = (i + 1) & (ix->cap - 1))
		if (ix->k[i] == k) {
			*old = ix->v[i];
			ix->v[i] = v;
			return 0;
		}
	ix->k[i] = k;
	ix->v[i] = v;
	ix->n++;
	return 0;
}

/* linear probing: shift the followers back so no probe chain breaks */
static void idx_del(struct idx *ix, uint64_t k)
{
	size_t i, j, h, mask = ix->cap - 1;

	if (!ix->cap)
		return;
	for (i = idx_slot(ix, k); ix->k[i] && ix->k[i] != k; i = (i + 1) & mask)
		;
	if (!ix->k[i])
		return;
	ix->k[i] = 0;
	ix->n--;
	for (j = (i + 1) & mask; ix->k[j]; j = (j + 1) & mask) {
		h = idx_slot(ix, ix->k[j]);
		/* k[j] may move to i when i lies cyclically in [h, j) */
		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			ix->k[i] = ix->k[j];
			ix->v[i] = ix->v[j];
			ix->k[j] = 0;
			i = j;
		}
	}
}

static void idx_free(struct idx *ix)
{
	free(ix->k);
	free(ix->v);
	memset(ix, 0, sizeof(*ix));
}

/* ---- writer state ---------------------------------------------------------- */

struct gen {
	int fd;
	char *base;
	struct cm_file_header *hdr;
	uint64_t file_size;
};

struct live {
	struct idx method, code, stub, thread;
	uint64_t vm_off, cont_off;
	uint64_t bytes;		/* of the indexed records */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct gen cur = { .fd = -1 };
static struct live live;
static uint64_t mapped_max;
static uint64_t compact_min = CMW_COMPACT_MIN;
static uint64_t dropped_at_gen;	/* hdr->dropped when this generation began */
static uint64_t base_end;	/* generation 0: end of the start-up records */
static char path_buf[256], next_buf[272];
static int state;	/* 0 closed, 1 writing, 2 disabled/closed */

uint64_t cmw__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int cmw__active(void)
{
	return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == 1;
}

static int grow_to(struct gen *g, uint64_t need)
{
	uint64_t n = g->file_size;

	while (n < need)
		n += CHUNK;
	if (n > mapped_max)
		n = mapped_max;
	if (n < need)
		return -1;
	/* fallocate commits tmpfs pages: ENOSPC here instead of SIGBUS later */
	if (posix_fallocate(g->fd, (off_t)g->file_size,
			    (off_t)(n - g->file_size)))
		return -1;
	g->file_size = n;
	return 0;
}

/* a new, empty, zero-headed file at path, mapped at mapped_max */
static int gen_create(struct gen *g, const char *path, uint64_t initial)
{
	void *m;

	g->fd = -1;
	g->base = NULL;
	g->file_size = 0;
	/* a map left by an earlier process with our pid is replaced */
	unlink(path);
	g->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0644);
	if (g->fd < 0) {
		log_error("cannot create code map %s: %s", path, strerror(errno));
		return -1;
	}
	fchmod(g->fd, 0644);
	m = mmap(NULL, mapped_max, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
	if (m == MAP_FAILED) {
		log_error("cannot map code map %s: %s", path, strerror(errno));
		goto fail;
	}
	g->base = m;
	g->hdr = (struct cm_file_header *)g->base;
	if (grow_to(g, initial < CM_HEADER_SIZE + CHUNK ?
		       CM_HEADER_SIZE + CHUNK : initial)) {
		log_error("cannot size code map %s: %s (is /dev/shm full?)",
			  path, strerror(errno));
		munmap(m, mapped_max);
		goto fail;
	}
	memset(g->hdr, 0, CM_HEADER_SIZE);
	return 0;
fail:
	close(g->fd);
	g->fd = -1;
	g->base = NULL;
	unlink(path);
	return -1;
}

static void gen_drop(struct gen *g)
{
	if (g->base)
		munmap(g->base, mapped_max);
	if (g->fd >= 0)
		close(g->fd);
	g->base = NULL;
	g->fd = -1;
}

int cmw__open(const char *path, uint64_t max_size)
{
	struct cm_file_header *h;

	if (max_size < CM_HEADER_SIZE + CHUNK)
		max_size = CM_HEADER_SIZE + CHUNK;
	snprintf(path_buf, sizeof(path_buf), "%s", path);
	snprintf(next_buf, sizeof(next_buf), "%s.next", path_buf);
	mapped_max = max_size;
	unlink(next_buf);	/* a compaction an earlier process left */
	if (gen_create(&cur, path_buf, 0))
		return -1;
	h = cur.hdr;
	h->version = CM_VERSION;
	h->header_size = CM_HEADER_SIZE;
	h->writer_pid = (uint32_t)getpid();
	h->max_size = max_size;
	h->write_pos = CM_HEADER_SIZE;
	h->start_ns = cmw__now_ns();
	h->gen_start_ns = h->start_ns;
	/* magic last: a reader never sees a half-made header as valid */
	atomic_thread_fence(memory_order_release);
	memcpy(h->magic, CM_MAGIC, 8);
	__atomic_store_n(&state, 1, __ATOMIC_RELEASE);
	return 0;
}

static uint32_t rec_len(const struct gen *g, uint64_t off)
{
	return ((const struct cm_rec_hdr *)(g->base + off))->len;
}

/* replace in ix (under the lock): the bytes of the old record go */
static int live_put(struct idx *ix, uint64_t k, uint64_t off, uint32_t len)
{
	uint64_t old;

	if (idx_put(ix, k, off, &old))
		return -1;
	if (old)
		live.bytes -= rec_len(&cur, old);
	live.bytes += len;
	return 0;
}

static void live_del(struct idx *ix, uint64_t k)
{
	uint64_t off;

	if (!idx_get(ix, k, &off))
		return;
	live.bytes -= rec_len(&cur, off);
	idx_del(ix, k);
}

/* the live set after the record rec goes to off; -1: out of memory */
static int live_note(const void *rec, uint64_t off, uint32_t len)
{
	const struct cm_rec_hdr *h = rec;

	switch (h->type) {
	case CM_REC_VM:
		live.vm_off = off;
		return 0;
	case CM_REC_CONT:
		live.cont_off = off;
		return 0;
	case CM_REC_METHOD:
		return live_put(&live.method,
				((const struct cm_method *)rec)->method, off, len);
	case CM_REC_CODE:
		return live_put(&live.code, ((const struct cm_code *)rec)->start,
				off, len);
	case CM_REC_STUB:
	{
		const struct cm_stub *st = rec;

		/* several stubs may share a start: the range tells them apart */
		return live_put(&live.stub, st->start ^
				(st->end * 0x9E3779B97F4A7C15ull), off, len);
	}
	case CM_REC_THREAD: {
		const struct cm_thread *t = rec;

		if (t->flags & CM_THREAD_END) {
			live_del(&live.thread, t->tid);
			return 0;
		}
		return live_put(&live.thread, t->tid, off, len);
	}
	case CM_REC_UNLOAD: {
		const struct cm_unload *u = rec;
		const struct cm_code *c;
		uint64_t coff;

		if (!idx_get(&live.code, u->start, &coff))
			return 0;
		c = (const struct cm_code *)(cur.base + coff);
		if (!u->method || !c->method || c->method == u->method)
			live_del(&live.code, u->start);
		return 0;
	}
	}
	return 0;
}

static void note_drop(void)
{
	if (!(cur.hdr->flags & CM_F_FULL)) {
		__atomic_or_fetch(&cur.hdr->flags, CM_F_FULL, __ATOMIC_RELEASE);
		log_warn("code map full at %llu bytes: dropping records",
			 (unsigned long long)cur.file_size);
	}
	__atomic_add_fetch(&cur.hdr->dropped, 1, __ATOMIC_RELEASE);
}

void cmw__append(const void *rec, size_t len)
{
	uint64_t pos;

	if (!cmw__active())
		return;
	pthread_mutex_lock(&mu);
	if (state != 1)
		goto cleanup;
	pos = cur.hdr->write_pos;
	if ((pos + len > cur.file_size && grow_to(&cur, pos + len)) ||
	    live_note(rec, pos, (uint32_t)len)) {
		note_drop();
		goto cleanup;
	}
	memcpy(cur.base + pos, rec, len);
	__atomic_store_n(&cur.hdr->write_pos, pos + len, __ATOMIC_RELEASE);
cleanup:
	pthread_mutex_unlock(&mu);
}

int cmw__method_known(uint64_t method)
{
	uint64_t off;
	int ret;

	pthread_mutex_lock(&mu);
	ret = state == 1 && idx_get(&live.method, method, &off);
	pthread_mutex_unlock(&mu);
	return ret;
}

void cmw__set_compact_min(uint64_t bytes)
{
	pthread_mutex_lock(&mu);
	compact_min = bytes;
	pthread_mutex_unlock(&mu);
}

void cmw__mark_base(void)
{
	pthread_mutex_lock(&mu);
	if (state == 1)
		base_end = cur.hdr->write_pos;
	pthread_mutex_unlock(&mu);
}

uint64_t cmw__pos(void)
{
	uint64_t p = 0;

	pthread_mutex_lock(&mu);
	if (state == 1)
		p = cur.hdr->write_pos;
	pthread_mutex_unlock(&mu);
	return p;
}

int cmw__compaction_due(void)
{
	uint64_t used, snap, log_bytes;
	int due = 0;

	pthread_mutex_lock(&mu);
	if (state != 1 || !live.vm_off)
		goto cleanup;
	used = cur.hdr->write_pos;
	snap = cur.hdr->snapshot_end ? cur.hdr->snapshot_end :
	       base_end ? base_end : CM_HEADER_SIZE;
	log_bytes = used - snap;
	/* something to win first, so a map of nothing but live records is
	 * not copied over and over */
	if (log_bytes < CHUNK / 4)
		goto cleanup;
	due = used > mapped_max / 4 * 3 || cur.hdr->dropped > dropped_at_gen ||
	      (log_bytes > compact_min && log_bytes > snap - CM_HEADER_SIZE);
cleanup:
	pthread_mutex_unlock(&mu);
	return due;
}

static int u64_in(const uint64_t *a, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] == v)
			return 1;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* copy the record at off of cur to the end of g, indexed under k in ix */
static int copy_rec(struct gen *g, uint64_t *pos, uint64_t off,
		    struct idx *ix, uint64_t k)
{
	uint32_t len = rec_len(&cur, off);
	uint64_t old;

	if (*pos + len > g->file_size && grow_to(g, *pos + len))
		return -1;
	if (ix && idx_put(ix, k, *pos, &old))
		return -1;
	memcpy(g->base + *pos, cur.base + off, len);
	*pos += len;
	return 0;
}

/* under the lock: Method*s the pools of live code refer to */
static int code_pools(struct idx *pool)
{
	uint64_t old;

	for (size_t i = 0; i < live.code.cap; i++) {
		const struct cm_code *c;
		const uint64_t *m;

		if (!live.code.k[i])
			continue;
		c = (const struct cm_code *)(cur.base + live.code.v[i]);
		m = (const uint64_t *)(c + 1);
		for (uint32_t j = 0; j < c->n_methods; j++)
			if (m[j] && idx_put(pool, m[j], 1, &old))
				return -1;
	}
	return 0;
}

/* under the lock: the snapshot into g; its index into nl */
static int write_snapshot(struct gen *g, struct live *nl, const uint64_t *lm,
			  size_t n_lm, uint64_t mark,
			  struct cmw_compact_stats *st)
{
	struct idx *const from[] = { &live.stub, &live.code, &live.thread };
	struct idx *const to[] = { &nl->stub, &nl->code, &nl->thread };
	uint64_t pos = CM_HEADER_SIZE, v;
	struct idx pool = { 0 };
	int ret = -1;

	if (code_pools(&pool))
		goto cleanup;
	if (live.vm_off) {
		nl->vm_off = pos;
		if (copy_rec(g, &pos, live.vm_off, NULL, 0))
			goto cleanup;
	}
	if (live.cont_off) {
		nl->cont_off = pos;
		if (copy_rec(g, &pos, live.cont_off, NULL, 0))
			goto cleanup;
	}
	/* methods before the code that names them */
	for (size_t i = 0; i < live.method.cap; i++) {
		uint64_t k = live.method.k[i], off = live.method.v[i];

		if (!k)
			continue;
		if (off < mark && !u64_in(lm, n_lm, k) && !idx_get(&pool, k, &v)) {
			st->methods_dropped++;
			continue;
		}
		if (copy_rec(g, &pos, off, &nl->method, k))
			goto cleanup;
		st->methods_kept++;
	}
	for (size_t t = 0; t < 3; t++) {
		for (size_t i = 0; i < from[t]->cap; i++) {
			if (!from[t]->k[i])
				continue;
			if (copy_rec(g, &pos, from[t]->v[i], to[t],
				     from[t]->k[i]))
				goto cleanup;
		}
	}
	st->stubs = nl->stub.n;
	st->code = nl->code.n;
	st->threads = nl->thread.n;
	nl->bytes = pos - CM_HEADER_SIZE;
	g->hdr->write_pos = pos;
	ret = 0;
cleanup:
	idx_free(&pool);
	return ret;
}

static void live_free(struct live *l)
{
	idx_free(&l->method);
	idx_free(&l->code);
	idx_free(&l->stub);
	idx_free(&l->thread);
}

int cmw__compact(const uint64_t *lm, size_t n_lm, uint64_t mark,
		 struct cmw_compact_stats *st)
{
	struct gen g = { .fd = -1 }, old;
	struct live nl;
	struct cm_file_header *h;
	uint64_t estimate;

	memset(st, 0, sizeof(*st));
	memset(&nl, 0, sizeof(nl));
	pthread_mutex_lock(&mu);
	estimate = state == 1 ? CM_HEADER_SIZE + live.bytes + CHUNK : 0;
	pthread_mutex_unlock(&mu);
	/* the new file is made and sized outside the lock */
	if (!estimate || gen_create(&g, next_buf, estimate))
		return -1;
	pthread_mutex_lock(&mu);
	if (state != 1 || write_snapshot(&g, &nl, lm, n_lm, mark, st))
		goto abort;
	h = g.hdr;
	h->version = CM_VERSION;
	h->header_size = CM_HEADER_SIZE;
	h->writer_pid = cur.hdr->writer_pid;
	h->flags = cur.hdr->flags & (CM_F_READY | CM_F_FULL);
	h->max_size = cur.hdr->max_size;
	h->start_ns = cur.hdr->start_ns;
	h->dropped = cur.hdr->dropped;
	h->generation = cur.hdr->generation + 1;
	h->gen_start_ns = cmw__now_ns();
	h->snapshot_end = h->write_pos;
	h->live_bytes = nl.bytes;
	atomic_thread_fence(memory_order_release);
	memcpy(h->magic, CM_MAGIC, 8);
	/* the path names the new generation before the old one says so */
	if (rename(next_buf, path_buf)) {
		log_warn("code map compaction: rename: %s", strerror(errno));
		goto abort;
	}
	__atomic_or_fetch(&cur.hdr->flags, CM_F_SUPERSEDED, __ATOMIC_RELEASE);
	st->generation = h->generation;
	st->old_bytes = cur.hdr->write_pos;
	st->new_bytes = h->write_pos;
	old = cur;
	cur = g;
	live_free(&live);
	live = nl;
	dropped_at_gen = h->dropped;
	pthread_mutex_unlock(&mu);
	gen_drop(&old);
	return 0;
abort:
	pthread_mutex_unlock(&mu);
	live_free(&nl);
	gen_drop(&g);
	unlink(next_buf);
	return -1;
}

void cmw__set_flags(uint32_t set)
{
	pthread_mutex_lock(&mu);
	if (cur.hdr && state == 1)
		__atomic_or_fetch(&cur.hdr->flags, set, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&mu);
}

void cmw__disable(const char *reason)
{
	pthread_mutex_lock(&mu);
	if (cur.hdr && state == 1) {
		snprintf(cur.hdr->disabled_reason,
			 sizeof(cur.hdr->disabled_reason), "%s", reason);
		__atomic_or_fetch(&cur.hdr->flags, CM_F_DISABLED,
				  __ATOMIC_RELEASE);
		__atomic_store_n(&state, 2, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&mu);
	log_error("agent disabled: %s", reason);
}

void cmw__close(void)
{
	pthread_mutex_lock(&mu);
	if (cur.hdr && cur.fd >= 0) {
		__atomic_or_fetch(&cur.hdr->flags, CM_F_CLOSED, __ATOMIC_RELEASE);
		__atomic_store_n(&state, 2, __ATOMIC_RELEASE);
		unlink(path_buf);
		close(cur.fd);
		cur.fd = -1;
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
