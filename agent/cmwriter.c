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
/* the smallest maxsize: a compact map of a small JVM is well below 1 MiB,
 * so a test of a full map needs less */
#define CMW_MAX_MIN	(CM_HEADER_SIZE + (64u << 10))

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

/* room for n keys without growing: a snapshot sizes its tables once */
static int idx_reserve(struct idx *ix, size_t n)
{
	while ((n + 1) * 10 > ix->cap * 7)
		if (idx_grow(ix))
			return -1;
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
	/* method: Method* -> LOC of its METHODS entry; strings and classes
	 * of this generation: text hash -> id, id -> LOC of its entry */
	struct idx method, code, stub, thread;
	struct idx str_hash, str_loc, cls_hash, cls_loc;
	uint64_t vm_off, cont_off;
	uint64_t bytes;		/* of the indexed records */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct gen cur = { .fd = -1 };
/* the generation before cur, open but unmapped until the next compaction:
 * a reader holds its event-request locks there until it follows the
 * rename (codemap_format.h) */
static int prev_fd = -1;
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
	/* 0600: the map names every method of the JVM, and its reader
	 * (asgst-bpf) is root; no other user needs it */
	g->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (g->fd < 0) {
		log_error("cannot create code map %s: %s", path, strerror(errno));
		return -1;
	}
	fchmod(g->fd, 0600);	/* whatever the JVM's umask */
	m = mmap(NULL, mapped_max, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
	if (m == MAP_FAILED) {
		log_error("cannot map code map %s: %s", path, strerror(errno));
		goto fail;
	}
	g->base = m;
	g->hdr = (struct cm_file_header *)g->base;
	if (initial < CM_HEADER_SIZE + CHUNK)
		initial = CM_HEADER_SIZE + CHUNK;
	if (initial > mapped_max)
		initial = mapped_max;	/* a map smaller than one chunk */
	if (grow_to(g, initial)) {
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

	if (max_size < CMW_MAX_MIN)
		max_size = CMW_MAX_MIN;
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
	/* METHOD records (version 2) are no longer written: methods go
	 * through cmw__append_methods() */
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

/* ---- version 3 methods: interned strings and classes ---------------------- */

/* where an entry is: its record's file offset and its offset in it */
#define LOC(rec, in)	(((uint64_t)(rec) << 24) | (uint64_t)(in))
#define LOC_REC(l)	((l) >> 24)
#define LOC_IN(l)	((l) & 0xffffffu)
#define LOC_IN_MAX	0xffffffu
/* a snapshot's records are cut near this size */
#define REC_CUT		(48u << 10)

/* ids live as long as the writer: one id never names two texts */
static uint32_t next_sid = 1, next_cid = 1;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *c = p;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t str_key(const char *s, size_t n)
{
	uint64_t h = fnv(0xcbf29ce484222325ull, s, n);

	return h ? h : 1;
}

static uint64_t cls_key(const char *k, size_t kn, const char *src, size_t sn)
{
	uint64_t h = fnv(0xcbf29ce484222325ull, k, kn);

	/* the length apart, so ("ab", "c") is not ("a", "bc") */
	h = fnv(h, &kn, sizeof(kn));
	h = fnv(h, src, sn);
	return h ? h : 1;
}

static void rb__varint(struct recbuf *b, uint64_t v)
{
	uint8_t tmp[10];

	rb__put(b, tmp, cm_varint_put(tmp, v));
}

/* what the writer itself wrote: checked when it was made */
static uint64_t vget(const uint8_t **p)
{
	uint64_t v = 0;

	cm_varint_get(p, *p + 10, &v);
	return v;
}

static void dec_str(const char *base, uint64_t loc, const char **s, size_t *n)
{
	const uint8_t *p = (const uint8_t *)base + LOC_REC(loc) + LOC_IN(loc);

	vget(&p);
	*n = (size_t)vget(&p);
	*s = (const char *)p;
}

static void dec_cls(const char *base, uint64_t loc, uint32_t *name,
		    uint32_t *src)
{
	const uint8_t *p = (const uint8_t *)base + LOC_REC(loc) + LOC_IN(loc);

	vget(&p);
	*name = (uint32_t)vget(&p);
	*src = (uint32_t)vget(&p);
}

struct dmeth {
	uint64_t method, const_method, time;
	uint32_t cid, nid, gid, mods, flags, n_lines;
	const uint8_t *lines;		/* the encoded pairs */
	size_t lines_len, len;		/* of the pairs, of the entry */
};

static void dec_method(const char *base, uint64_t loc, struct dmeth *d)
{
	const struct cm_methods *r =
		(const struct cm_methods *)(base + LOC_REC(loc));
	const uint8_t *p = (const uint8_t *)r + LOC_IN(loc), *q = p;

	d->time = r->h.time_ns;
	d->method = r->base + vget(&q);
	d->const_method = d->method + (uint64_t)cm_unzigzag(vget(&q));
	d->cid = (uint32_t)vget(&q);
	d->nid = (uint32_t)vget(&q);
	d->gid = (uint32_t)vget(&q);
	d->mods = (uint32_t)vget(&q);
	d->flags = (uint32_t)vget(&q);
	d->n_lines = (uint32_t)vget(&q);
	d->lines = q;
	for (uint32_t i = 0; i < d->n_lines * 2; i++)
		vget(&q);
	d->lines_len = (size_t)(q - d->lines);
	d->len = (size_t)(q - p);
}

/* the id of text s in this generation's index, 0 when none */
static uint32_t str_lookup(const char *s, size_t n, uint64_t *key)
{
	uint64_t id, loc;
	const char *t;
	size_t tn;

	*key = str_key(s, n);
	if (!idx_get(&live.str_hash, *key, &id) ||
	    !idx_get(&live.str_loc, id, &loc))
		return 0;
	dec_str(cur.base, loc, &t, &tn);
	/* a hash collision: the text gets an id of its own, unindexed */
	return tn == n && !memcmp(t, s, n) ? (uint32_t)id : 0;
}

/* strings and classes a batch adds, appended with it */
struct pend_str {
	const char *s;
	size_t n;
	uint64_t key;
	uint32_t id, in;		/* in: offset in the STRINGS record */
};

struct pend_cls {
	uint64_t key;
	uint32_t id, name, src, in;
	const char *k, *sr;
	size_t kn, sn;
};

struct batch {
	struct pend_str *s;
	size_t ns, caps;
	struct pend_cls *c;
	size_t nc, capc;
	int oom;
};

static uint32_t batch_str(struct batch *bt, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	uint64_t key;
	uint32_t id;

	if (n > CM_STR_MAX)
		n = CM_STR_MAX;
	id = str_lookup(s ? s : "", n, &key);
	if (id)
		return id;
	for (size_t i = 0; i < bt->ns; i++)
		if (bt->s[i].key == key && bt->s[i].n == n &&
		    !memcmp(bt->s[i].s, s, n))
			return bt->s[i].id;
	if (bt->ns == bt->caps) {
		size_t nc = bt->caps ? bt->caps * 2 : 64;
		struct pend_str *p = realloc(bt->s, nc * sizeof(*p));

		if (!p) {
			bt->oom = 1;
			return 0;
		}
		bt->s = p;
		bt->caps = nc;
	}
	bt->s[bt->ns] = (struct pend_str){ .s = s, .n = n, .key = key,
					   .id = next_sid++ };
	return bt->s[bt->ns++].id;
}

static uint32_t batch_cls(struct batch *bt, const char *k, const char *src)
{
	size_t kn = strlen(k), sn = src ? strlen(src) : 0;
	uint64_t key, id, loc;
	struct pend_cls *c;

	if (kn > CM_STR_MAX)
		kn = CM_STR_MAX;
	if (sn > CM_STR_MAX)
		sn = CM_STR_MAX;
	key = cls_key(k, kn, src ? src : "", sn);
	if (idx_get(&live.cls_hash, key, &id) &&
	    idx_get(&live.cls_loc, id, &loc)) {
		uint32_t name, s;
		uint64_t l2;
		const char *t;
		size_t tn;
		int same;

		dec_cls(cur.base, loc, &name, &s);
		same = idx_get(&live.str_loc, name, &l2);
		if (same) {
			dec_str(cur.base, l2, &t, &tn);
			same = tn == kn && !memcmp(t, k, kn);
		}
		if (same && s) {
			same = idx_get(&live.str_loc, s, &l2);
			if (same) {
				dec_str(cur.base, l2, &t, &tn);
				same = tn == sn && !memcmp(t, src, sn);
			}
		} else if (same) {
			same = !sn;
		}
		if (same)
			return (uint32_t)id;
	}
	for (size_t i = 0; i < bt->nc; i++)
		if (bt->c[i].key == key && bt->c[i].kn == kn &&
		    bt->c[i].sn == sn && !memcmp(bt->c[i].k, k, kn) &&
		    (!sn || !memcmp(bt->c[i].sr, src, sn)))
			return bt->c[i].id;
	if (bt->nc == bt->capc) {
		size_t nc = bt->capc ? bt->capc * 2 : 8;
		struct pend_cls *p = realloc(bt->c, nc * sizeof(*p));

		if (!p) {
			bt->oom = 1;
			return 0;
		}
		bt->c = p;
		bt->capc = nc;
	}
	c = &bt->c[bt->nc];
	*c = (struct pend_cls){ .key = key, .k = k, .kn = kn, .sr = src,
				.sn = sn };
	c->name = batch_str(bt, k);
	c->src = sn ? batch_str(bt, src) : 0;
	if (bt->oom)
		return 0;
	c->id = next_cid++;
	bt->nc++;
	return c->id;
}

/* a method's entry into b: its class, name and signature already ids */
static void put_method(struct recbuf *b, uint64_t base, uint64_t method,
		       uint64_t const_method, uint32_t cid, uint32_t nid,
		       uint32_t gid, uint32_t mods, uint32_t flags,
		       uint32_t n_lines)
{
	rb__varint(b, method - base);
	rb__varint(b, cm_zigzag((int64_t)(const_method - method)));
	rb__varint(b, cid);
	rb__varint(b, nid);
	rb__varint(b, gid);
	rb__varint(b, mods);
	rb__varint(b, flags);
	rb__varint(b, n_lines);
}

static void put_lines(struct recbuf *b, const struct cm_line *l, uint32_t n)
{
	int64_t pb = 0, pl = 0;

	for (uint32_t i = 0; i < n; i++) {
		rb__varint(b, cm_zigzag((int64_t)l[i].bci - pb));
		rb__varint(b, cm_zigzag((int64_t)l[i].line - pl));
		pb = l[i].bci;
		pl = l[i].line;
	}
}

static void rec_start(struct recbuf *b, uint32_t type, uint64_t t,
		      size_t fixed)
{
	struct cm_rec_hdr *h;

	b->len = 0;
	h = rb__put(b, NULL, fixed);
	if (h) {
		h->type = type;
		h->time_ns = t;
	}
}

/* the record in b, count entries, at pos of g; 0 or -1 (no room) */
static int rec_emit(struct gen *g, uint64_t *pos, struct recbuf *b,
		    uint32_t count)
{
	if (rb__finish(b))
		return -1;
	/* count sits right after the header in all three record kinds,
	 * after base in METHODS */
	if (((struct cm_rec_hdr *)b->p)->type == CM_REC_METHODS)
		((struct cm_methods *)b->p)->count = count;
	else
		((struct cm_strings *)b->p)->count = count;
	if (*pos + b->len > g->file_size && grow_to(g, *pos + b->len))
		return -1;
	memcpy(g->base + *pos, b->p, b->len);
	*pos += b->len;
	return 0;
}

/* under the lock: index what a committed batch added */
static int batch_index(const struct batch *bt, uint64_t srec, uint64_t crec)
{
	uint64_t old;

	for (size_t i = 0; i < bt->ns; i++)
		if (idx_put(&live.str_loc, bt->s[i].id,
			    LOC(srec, bt->s[i].in), &old) ||
		    (!idx_get(&live.str_hash, bt->s[i].key, &old) &&
		     idx_put(&live.str_hash, bt->s[i].key, bt->s[i].id, &old)))
			return -1;
	for (size_t i = 0; i < bt->nc; i++)
		if (idx_put(&live.cls_loc, bt->c[i].id,
			    LOC(crec, bt->c[i].in), &old) ||
		    (!idx_get(&live.cls_hash, bt->c[i].key, &old) &&
		     idx_put(&live.cls_hash, bt->c[i].key, bt->c[i].id, &old)))
			return -1;
	return 0;
}

void cmw__append_methods(const struct cmw_method *ms, size_t n, int force)
{
	struct recbuf sb, cb, mb;
	struct batch bt = { 0 };
	uint64_t pos, p0, base = UINT64_MAX, t, v, srec = 0, crec = 0, mrec;
	uint32_t *in = NULL, count = 0;
	size_t i;

	if (!cmw__active() || !n)
		return;
	rb__init(&sb);
	rb__init(&cb);
	rb__init(&mb);
	in = calloc(n, sizeof(*in));
	pthread_mutex_lock(&mu);
	if (state != 1 || !in)
		goto cleanup;
	t = cmw__now_ns();
	for (i = 0; i < n; i++)
		if (ms[i].method && ms[i].method < base &&
		    (force || !idx_get(&live.method, ms[i].method, &v)))
			base = ms[i].method;
	if (base == UINT64_MAX)
		goto cleanup;
	rec_start(&mb, CM_REC_METHODS, t, sizeof(struct cm_methods));
	if (mb.p)
		((struct cm_methods *)mb.p)->base = base;
	for (i = 0; i < n; i++) {
		const struct cmw_method *m = &ms[i];
		uint32_t cid, nid, gid, nl = m->n_lines;

		if (!m->method ||
		    (!force && idx_get(&live.method, m->method, &v)))
			continue;
		cid = batch_cls(&bt, m->klass && *m->klass ? m->klass : "?",
				m->source && *m->source ? m->source : NULL);
		nid = batch_str(&bt, m->name && *m->name ? m->name : "?");
		gid = batch_str(&bt, m->sig && *m->sig ? m->sig : "?");
		if (bt.oom)
			break;
		if (nl > CM_LINES_MAX)
			nl = CM_LINES_MAX;
		in[i] = (uint32_t)(mb.len > LOC_IN_MAX ? 0 : mb.len);
		if (mb.len > LOC_IN_MAX)
			bt.oom = 1;
		put_method(&mb, base, m->method, m->const_method, cid, nid,
			   gid, m->modifiers, m->flags, nl);
		put_lines(&mb, m->lines, nl);
		count++;
	}
	/* the strings, then the classes that name them, then the methods */
	rec_start(&sb, CM_REC_STRINGS, t, sizeof(struct cm_strings));
	for (i = 0; i < bt.ns; i++) {
		bt.s[i].in = (uint32_t)sb.len;
		rb__varint(&sb, bt.s[i].id);
		rb__varint(&sb, bt.s[i].n);
		rb__put(&sb, bt.s[i].s, bt.s[i].n);
	}
	rec_start(&cb, CM_REC_CLASSES, t, sizeof(struct cm_classes));
	for (i = 0; i < bt.nc; i++) {
		bt.c[i].in = (uint32_t)cb.len;
		rb__varint(&cb, bt.c[i].id);
		rb__varint(&cb, bt.c[i].name);
		rb__varint(&cb, bt.c[i].src);
	}
	p0 = pos = cur.hdr->write_pos;
	if (bt.oom || sb.len > LOC_IN_MAX || cb.len > LOC_IN_MAX ||
	    (bt.ns && (srec = pos, rec_emit(&cur, &pos, &sb, (uint32_t)bt.ns))) ||
	    (bt.nc && (crec = pos, rec_emit(&cur, &pos, &cb, (uint32_t)bt.nc)))) {
		note_drop();
		goto cleanup;
	}
	mrec = pos;
	if (rec_emit(&cur, &pos, &mb, count)) {
		note_drop();
		goto cleanup;
	}
	__atomic_store_n(&cur.hdr->write_pos, pos, __ATOMIC_RELEASE);
	live.bytes += pos - p0;
	/*
	 * Out of memory for the index: the records are out, but what the
	 * index lacks a snapshot will not have (strings come again under new
	 * ids; methods die at the next generation): counted as a loss.
	 */
	if (batch_index(&bt, srec, crec)) {
		note_drop();
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		uint64_t old;
		struct dmeth d;

		if (!in[i])
			continue;
		if (idx_put(&live.method, ms[i].method, LOC(mrec, in[i]), &old)) {
			note_drop();
			break;
		}
		if (old) {
			dec_method(cur.base, old, &d);
			live.bytes -= d.len;
		}
	}
cleanup:
	pthread_mutex_unlock(&mu);
	free(in);
	free(bt.s);
	free(bt.c);
	rb__free(&sb);
	rb__free(&cb);
	rb__free(&mb);
}

struct kept {
	uint64_t time, method, loc;
};

static int kept_cmp(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->method < y->method ? -1 : x->method > y->method;
}

/*
 * Under the lock: the kept methods (sorted, n) into g at *pos, after the
 * strings and classes they use, all under their ids; nl gets the index.
 * Each original record's entries stay together with its time.
 */
static int snapshot_methods(struct gen *g, uint64_t *pos, struct live *nl,
			    struct kept *kv, size_t n,
			    struct cmw_compact_stats *st)
{
	struct idx used_s = { 0 }, used_c = { 0 };
	struct recbuf b;
	uint64_t v, loc, old, rec = 0, base = 0, t = 0;
	uint32_t count = 0;
	struct dmeth d;
	int ret = -1;

	rb__init(&b);
	if (idx_reserve(&used_s, live.str_loc.n) ||
	    idx_reserve(&used_c, live.cls_loc.n) ||
	    idx_reserve(&nl->str_loc, live.str_loc.n) ||
	    idx_reserve(&nl->str_hash, live.str_loc.n) ||
	    idx_reserve(&nl->cls_loc, live.cls_loc.n) ||
	    idx_reserve(&nl->cls_hash, live.cls_loc.n) ||
	    idx_reserve(&nl->method, n))
		goto cleanup;
	for (size_t i = 0; i < n; i++) {
		uint32_t name = 0, src = 0;
		uint64_t l2;

		dec_method(cur.base, kv[i].loc, &d);
		/* every id it names is indexed (so written again below), or
		 * the method is not kept: a map never names an id it lacks */
		if (!idx_get(&live.cls_loc, d.cid, &loc) ||
		    (dec_cls(cur.base, loc, &name, &src),
		     !idx_get(&live.str_loc, name, &l2)) ||
		    (src && !idx_get(&live.str_loc, src, &l2)) ||
		    !idx_get(&live.str_loc, d.nid, &l2) ||
		    !idx_get(&live.str_loc, d.gid, &l2)) {
			kv[i].loc = 0;
			st->methods_dropped++;
			continue;
		}
		if (idx_put(&used_c, d.cid, 1, &old) ||
		    idx_put(&used_s, d.nid, 1, &old) ||
		    idx_put(&used_s, d.gid, 1, &old) ||
		    idx_put(&used_s, name, 1, &old) ||
		    (src && idx_put(&used_s, src, 1, &old)))
			goto cleanup;
	}
	/* strings, in records of about REC_CUT bytes */
	for (size_t i = 0; i <= used_s.cap; i++) {
		const char *s;
		size_t sn;

		if (count && (i == used_s.cap || b.len >= REC_CUT)) {
			if (rec_emit(g, pos, &b, count))
				goto cleanup;
			count = 0;
		}
		if (i == used_s.cap)
			break;
		if (!used_s.k[i] || !idx_get(&live.str_loc, used_s.k[i], &loc))
			continue;
		if (!count) {
			rec = *pos;
			rec_start(&b, CM_REC_STRINGS, cur.hdr->gen_start_ns ?
				  cur.hdr->gen_start_ns : cur.hdr->start_ns,
				  sizeof(struct cm_strings));
		}
		dec_str(cur.base, loc, &s, &sn);
		if (idx_put(&nl->str_loc, used_s.k[i], LOC(rec, b.len), &old) ||
		    (!idx_get(&nl->str_hash, str_key(s, sn), &v) &&
		     idx_put(&nl->str_hash, str_key(s, sn), used_s.k[i], &old)))
			goto cleanup;
		rb__varint(&b, used_s.k[i]);
		rb__varint(&b, sn);
		rb__put(&b, s, sn);
		count++;
		st->strings++;
	}
	for (size_t i = 0; i <= used_c.cap; i++) {
		const char *k = "", *s = "";
		size_t kn = 0, sn = 0;
		uint32_t name, src;

		if (count && (i == used_c.cap || b.len >= REC_CUT)) {
			if (rec_emit(g, pos, &b, count))
				goto cleanup;
			count = 0;
		}
		if (i == used_c.cap)
			break;
		if (!used_c.k[i] || !idx_get(&live.cls_loc, used_c.k[i], &loc))
			continue;
		if (!count) {
			rec = *pos;
			rec_start(&b, CM_REC_CLASSES, cur.hdr->gen_start_ns ?
				  cur.hdr->gen_start_ns : cur.hdr->start_ns,
				  sizeof(struct cm_classes));
		}
		dec_cls(cur.base, loc, &name, &src);
		if (idx_get(&live.str_loc, name, &v))
			dec_str(cur.base, v, &k, &kn);
		if (src && idx_get(&live.str_loc, src, &v))
			dec_str(cur.base, v, &s, &sn);
		if (idx_put(&nl->cls_loc, used_c.k[i], LOC(rec, b.len), &old) ||
		    (!idx_get(&nl->cls_hash, cls_key(k, kn, s, sn), &v) &&
		     idx_put(&nl->cls_hash, cls_key(k, kn, s, sn), used_c.k[i],
			     &old)))
			goto cleanup;
		rb__varint(&b, used_c.k[i]);
		rb__varint(&b, name);
		rb__varint(&b, src);
		count++;
		st->classes++;
	}
	/* methods: a record per original time, cut near REC_CUT */
	for (size_t i = 0; i <= n; i++) {
		if (count && (i == n || kv[i].time != t || b.len >= REC_CUT)) {
			if (rec_emit(g, pos, &b, count))
				goto cleanup;
			count = 0;
		}
		if (i == n)
			break;
		if (!kv[i].loc)
			continue;
		dec_method(cur.base, kv[i].loc, &d);
		if (!count) {
			rec = *pos;
			t = kv[i].time;
			base = kv[i].method;
			rec_start(&b, CM_REC_METHODS, t, sizeof(struct cm_methods));
			if (b.p)
				((struct cm_methods *)b.p)->base = base;
		}
		if (b.len > LOC_IN_MAX ||
		    idx_put(&nl->method, kv[i].method, LOC(rec, b.len), &old))
			goto cleanup;
		put_method(&b, base, d.method, d.const_method, d.cid, d.nid,
			   d.gid, d.mods, d.flags, d.n_lines);
		rb__put(&b, d.lines, d.lines_len);
		count++;
	}
	ret = b.oom ? -1 : 0;
cleanup:
	rb__free(&b);
	idx_free(&used_s);
	idx_free(&used_c);
	return ret;
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
	struct kept *kv = NULL;
	size_t nk = 0;
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
	/* methods (and their strings) before the code that names them */
	kv = malloc((live.method.n + 1) * sizeof(*kv));
	if (!kv)
		goto cleanup;
	for (size_t i = 0; i < live.method.cap; i++) {
		uint64_t k = live.method.k[i], loc = live.method.v[i];

		if (!k)
			continue;
		if (LOC_REC(loc) < mark && !u64_in(lm, n_lm, k) &&
		    !idx_get(&pool, k, &v)) {
			st->methods_dropped++;
			continue;
		}
		kv[nk].time = ((const struct cm_rec_hdr *)
			       (cur.base + LOC_REC(loc)))->time_ns;
		kv[nk].method = k;
		kv[nk++].loc = loc;
	}
	qsort(kv, nk, sizeof(*kv), kept_cmp);
	if (snapshot_methods(g, &pos, nl, kv, nk, st))
		goto cleanup;
	st->methods_kept = nl->method.n;
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
	free(kv);
	idx_free(&pool);
	return ret;
}

static void live_free(struct live *l)
{
	idx_free(&l->str_hash);
	idx_free(&l->str_loc);
	idx_free(&l->cls_hash);
	idx_free(&l->cls_loc);
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
	uint64_t estimate, t_lock;
	int stale_fd;

	memset(st, 0, sizeof(*st));
	memset(&nl, 0, sizeof(nl));
	pthread_mutex_lock(&mu);
	estimate = state == 1 ? CM_HEADER_SIZE + live.bytes + CHUNK : 0;
	if (estimate > mapped_max)
		estimate = mapped_max;	/* grows as it is written */
	pthread_mutex_unlock(&mu);
	/* the new file is made and sized outside the lock */
	if (!estimate || gen_create(&g, next_buf, estimate))
		return -1;
	pthread_mutex_lock(&mu);
	t_lock = cmw__now_ns();
	if (state != 1 || write_snapshot(&g, &nl, lm, n_lm, mark, st))
		goto abort;
	h = g.hdr;
	h->version = CM_VERSION;
	h->header_size = CM_HEADER_SIZE;
	h->writer_pid = cur.hdr->writer_pid;
	h->flags = cur.hdr->flags & (CM_F_READY | CM_F_FULL | CM_F_EVENTS |
				     CM_F_ALLOC_ON | CM_F_LOCK_ON);
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
	stale_fd = prev_fd;
	prev_fd = old.fd;
	old.fd = -1;
	live_free(&live);
	live = nl;
	dropped_at_gen = h->dropped;
	st->locked_ns = cmw__now_ns() - t_lock;
	pthread_mutex_unlock(&mu);
	if (stale_fd >= 0)
		close(stale_fd);
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

void cmw__clear_flags(uint32_t clr)
{
	pthread_mutex_lock(&mu);
	if (cur.hdr && state == 1)
		__atomic_and_fetch(&cur.hdr->flags, ~clr, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&mu);
}

/* the first lock another open file description holds in the range, on fd */
static int ctl_query_fd(int fd, uint64_t start, uint64_t len,
			uint64_t *found)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	/* a write lock conflicts with every read lock of another OFD */
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)start;
	fl.l_len = (off_t)len;
	if (fcntl(fd, F_OFD_GETLK, &fl))
		return -1;
	if (fl.l_type == F_UNLCK)
		return 0;
	*found = (uint64_t)fl.l_start;
	return 1;
}

int cmw__ctl_query(uint64_t start, uint64_t len, uint64_t *found_start)
{
	int ret = 0, r;

	pthread_mutex_lock(&mu);
	if (state != 1 || cur.fd < 0) {
		ret = -1;
		goto cleanup;
	}
	ret = ctl_query_fd(cur.fd, start, len, found_start);
	if (ret == 0 && prev_fd >= 0) {
		r = ctl_query_fd(prev_fd, start, len, found_start);
		ret = r < 0 ? 0 : r;	/* the current file answered */
	}
cleanup:
	pthread_mutex_unlock(&mu);
	return ret;
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
		if (prev_fd >= 0)
			close(prev_fd);
		prev_fd = -1;
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
