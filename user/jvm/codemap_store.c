// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the code map reader keeps of methods, compactly (codemap_internal.h):
 * a big JVM has hundreds of thousands of methods and the decoder looks up
 * a few thousand of them.
 *
 * - strings interned once, in chunks that never move, numbered;
 * - classes as (name, source) pairs of string numbers, numbered;
 * - methods as 40-byte records in slabs of 4096 (no allocation each);
 * - line tables in one arena, sorted by bci and varint-delta encoded;
 * - a Method* index of 4-byte slots;
 * - the struct codemap_method the API hands out (a "view", its lines
 *   decoded) made at a method's first lookup and kept as long as the
 *   method: the decoder holds it, and its strings, until the map frees the
 *   method (pruned after its retention) or is freed.
 *
 * Everything a method rarely has is in side tables by its index: the time
 * it died, an earlier method at the same Method*, a ConstMethod* far from
 * its Method*, its view.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "jvm/codemap_internal.h"

#define CM_SCHUNK		(64u << 10)	/* string text chunk */
#define CM_SLAB			(1u << CM_SLAB_SHIFT)
#define CM_NUM_MAX		((1u << 30) - 1)	/* class numbers: 30 bits */

size_t cm_alloc_bytes(size_t n)
{
	/* glibc: an 8-byte header, 16-byte granules, 32 bytes at least */
	size_t b = (n + 8 + 15) & ~(size_t)15;

	return b < 32 ? 32 : b;
}

static uint64_t mix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return mix64(h ^ n);
}

/* ---- index over numbers ---------------------------------------------------- */

typedef uint64_t (*ix_hash_fn)(const struct codemap *cm, uint32_t v);

/* room for one more, at a load of at most 3/4 */
static int ix_room(const struct codemap *cm, struct cm_ix *ix, ix_hash_fn h)
{
	size_t ncap;
	uint32_t *ns;

	if ((ix->n + 1) * 4 <= ix->cap * 3)
		return 0;
	ncap = ix->cap ? ix->cap * 2 : 256;
	ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < ix->cap; i++) {
		size_t j;

		if (!ix->slot[i])
			continue;
		for (j = h(cm, ix->slot[i] - 1) & (ncap - 1); ns[j];
		     j = (j + 1) & (ncap - 1))
			;
		ns[j] = ix->slot[i];
	}
	free(ix->slot);
	ix->slot = ns;
	ix->cap = ncap;
	return 0;
}

static size_t ix_bytes(const struct cm_ix *ix)
{
	return ix->cap ? cm_alloc_bytes(ix->cap * sizeof(*ix->slot)) : 0;
}

/* ---- strings ----------------------------------------------------------------- */

static uint64_t str_hash(const struct codemap *cm, uint32_t v)
{
	const char *s = cm->strs[v];

	return hash_bytes(s, strlen(s));
}

static bool str_eq(const char *t, const char *s, size_t n)
{
	/* t may be shorter than n: never read past its end */
	return strnlen(t, n + 1) == n && !memcmp(t, s, n);
}

int cm_str_num(struct codemap *cm, const char *s, size_t n, uint32_t *num)
{
	uint64_t h;
	size_t i;
	char *copy;

	/* a name is what C sees of it: up to a NUL it may hold */
	n = strnlen(s, n);
	h = hash_bytes(s, n);

	if (cm->str_ix.cap) {
		for (i = h & (cm->str_ix.cap - 1); cm->str_ix.slot[i];
		     i = (i + 1) & (cm->str_ix.cap - 1))
			if (str_eq(cm->strs[cm->str_ix.slot[i] - 1], s, n)) {
				*num = cm->str_ix.slot[i] - 1;
				return 0;
			}
	}
	if (cm->nstrs >= CM_NUM_MAX ||
	    ix_room(cm, &cm->str_ix, str_hash) ||
	    array__grow((void **)&cm->strs, &cm->capstrs, cm->nstrs + 1,
		 sizeof(*cm->strs)))
		return -ENOMEM;
	if (!cm->nschunks || cm->schunk_cap - cm->schunk_used < n + 1) {
		size_t sz = n + 1 > CM_SCHUNK ? n + 1 : CM_SCHUNK;
		char *c;

		if (array__grow((void **)&cm->schunks, &cm->capschunks,
			 cm->nschunks + 1, sizeof(*cm->schunks)))
			return -ENOMEM;
		c = malloc(sz);
		if (!c)
			return -ENOMEM;
		cm->schunks[cm->nschunks++] = c;
		cm->schunk_used = 0;
		cm->schunk_cap = sz;
		cm->sbytes += cm_alloc_bytes(sz);
	}
	copy = cm->schunks[cm->nschunks - 1] + cm->schunk_used;
	memcpy(copy, s, n);
	copy[n] = '\0';
	cm->schunk_used += n + 1;
	cm->strs[cm->nstrs] = copy;
	for (i = h & (cm->str_ix.cap - 1); cm->str_ix.slot[i];
	     i = (i + 1) & (cm->str_ix.cap - 1))
		;
	cm->str_ix.slot[i] = (uint32_t)cm->nstrs + 1;
	cm->str_ix.n++;
	*num = (uint32_t)cm->nstrs++;
	return 0;
}

const char *cm_str(const struct codemap *cm, uint32_t num)
{
	return num < cm->nstrs ? cm->strs[num] : NULL;
}

const char *cm_intern(struct codemap *cm, const char *s, size_t n)
{
	uint32_t num;

	return cm_str_num(cm, s, n, &num) ? NULL : cm->strs[num];
}

/* ---- classes ----------------------------------------------------------------- */

static uint64_t class_key(uint32_t name, uint32_t src)
{
	return mix64((uint64_t)name << 32 | src);
}

static uint64_t class_hash(const struct codemap *cm, uint32_t v)
{
	return class_key(cm->classes[v][0], cm->classes[v][1]);
}

int cm_class_num(struct codemap *cm, uint32_t name, uint32_t src,
		 uint32_t *num)
{
	size_t i;

	if (cm->class_ix.cap) {
		for (i = class_key(name, src) & (cm->class_ix.cap - 1);
		     cm->class_ix.slot[i];
		     i = (i + 1) & (cm->class_ix.cap - 1)) {
			uint32_t v = cm->class_ix.slot[i] - 1;

			if (cm->classes[v][0] == name &&
			    cm->classes[v][1] == src) {
				*num = v;
				return 0;
			}
		}
	}
	if (cm->nclasses >= CM_NUM_MAX ||
	    ix_room(cm, &cm->class_ix, class_hash) ||
	    array__grow((void **)&cm->classes, &cm->capclasses, cm->nclasses + 1,
		 sizeof(*cm->classes)))
		return -ENOMEM;
	cm->classes[cm->nclasses][0] = name;
	cm->classes[cm->nclasses][1] = src;
	for (i = class_key(name, src) & (cm->class_ix.cap - 1);
	     cm->class_ix.slot[i]; i = (i + 1) & (cm->class_ix.cap - 1))
		;
	cm->class_ix.slot[i] = (uint32_t)cm->nclasses + 1;
	cm->class_ix.n++;
	*num = (uint32_t)cm->nclasses++;
	return 0;
}

/* ---- line tables ------------------------------------------------------------- */

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int line_cmp(const void *a, const void *b)
{
	const struct cm_line *x = a, *y = b;

	return x->bci < y->bci ? -1 : x->bci > y->bci;
}

/* lines sorted and encoded into cm->lenc: count, then per line the bci
 * step and the zigzag line step; its length, or 0 when out of memory */
static size_t lines_encode(struct codemap *cm, struct cm_line *l, uint32_t n)
{
	uint32_t bci = 0, line = 0;
	size_t len;
	bool sorted = true;

	for (uint32_t i = 1; i < n; i++)
		if (l[i].bci < l[i - 1].bci)
			sorted = false;
	if (!sorted)
		qsort(l, n, sizeof(*l), line_cmp);
	/* at most 5 bytes a count, 5 a bci step, 5 a zigzag line step */
	if (array__grow((void **)&cm->lenc, &cm->lenccap, 5 + (size_t)n * 10, 1))
		return 0;
	len = put_varint(cm->lenc, n);
	for (uint32_t i = 0; i < n; i++) {
		len += put_varint(cm->lenc + len, l[i].bci - bci);
		len += put_varint(cm->lenc + len,
				  zigzag((int64_t)l[i].line - line));
		bci = l[i].bci;
		line = l[i].line;
	}
	return len;
}

/* the table at off (written by lines_encode, so it is well formed):
 * its count, and its lines into out when out is not NULL; *len its bytes */
static uint32_t lines_decode(const struct codemap *cm, uint32_t off,
			     struct cm_line *out, size_t *len)
{
	const uint8_t *p = cm->arena + off, *end = cm->arena + cm->arena_used;
	uint64_t n = 0, d = 0;
	uint32_t bci = 0, line = 0;

	cm_varint_get(&p, end, &n);
	for (uint64_t i = 0; i < n; i++) {
		cm_varint_get(&p, end, &d);
		bci += (uint32_t)d;
		cm_varint_get(&p, end, &d);
		line = (uint32_t)((int64_t)line + cm_unzigzag(d));
		if (out) {
			out[i].bci = bci;
			out[i].line = line;
		}
	}
	if (len)
		*len = (size_t)(p - (cm->arena + off));
	return (uint32_t)n;
}

/* ---- methods ----------------------------------------------------------------- */

static struct cm_meth *meth(const struct codemap *cm, size_t i)
{
	return &cm->mslabs[i >> CM_SLAB_SHIFT][i & (CM_SLAB - 1)];
}

static uint64_t meth_hash(const struct codemap *cm, uint32_t v)
{
	return mix64(meth(cm, v)->method);
}

/* the slot of the newest method at Method* mp, or the empty slot for it */
static uint32_t *mix_slot(const struct codemap *cm, uint64_t mp)
{
	size_t i;

	for (i = mix64(mp) & (cm->mix.cap - 1); cm->mix.slot[i];
	     i = (i + 1) & (cm->mix.cap - 1))
		if (meth(cm, cm->mix.slot[i] - 1)->method == mp)
			break;
	return &cm->mix.slot[i];
}

static uint64_t dead_ns(const struct codemap *cm, size_t i)
{
	uint64_t v = u64map__get(&cm->mdead, i);

	return v == UINT64_MAX ? 0 : v;
}

static uint64_t const_method(const struct codemap *cm, size_t i)
{
	const struct cm_meth *m = meth(cm, i);

	if (m->cdelta == CM_CFAR)
		return u64map__get(&cm->cfar, i);
	return m->method + (uint64_t)(int64_t)m->cdelta;
}

int cm_method_add(struct codemap *cm, const struct cm_mdesc *in,
		  struct cm_line *lines, uint64_t t)
{
	uint32_t *slot, prev = 0;
	struct cm_meth *m;
	size_t len, i = cm->nmethods;
	int64_t cd;

	len = lines_encode(cm, lines, in->n_lines);
	if (!len || in->klass > CM_NUM_MAX)
		return cm_fail(cm, ENOMEM, "out of memory");
	cd = (int64_t)(in->const_method - in->method);
	cm->mgen = cm_next_mgen();

	/*
	 * The same method again (a new generation's snapshot, or a race in
	 * the writer): nothing new but that it is still alive. Another
	 * method at this Method* (class unloading reused the address)
	 * replaces it, and the old one is dead from now.
	 */
	if (cm->mix.cap && *(slot = mix_slot(cm, in->method))) {
		struct cm_meth *pm;

		prev = *slot;
		pm = meth(cm, prev - 1);
		if (const_method(cm, prev - 1) == in->const_method &&
		    pm->klass == in->klass && pm->name == in->name &&
		    pm->sig == in->sig && pm->modifiers == in->modifiers &&
		    pm->native == !!(in->flags & CM_METHOD_NATIVE) &&
		    cm->arena_used - pm->lines >= len &&
		    !memcmp(cm->arena + pm->lines, cm->lenc, len)) {
			pm->seen = 1;
			if (dead_ns(cm, prev - 1) &&
			    u64map__put(&cm->mdead, prev - 1, UINT64_MAX))
				return cm_fail(cm, ENOMEM, "out of memory");
			return 0;
		}
		/* methods at one Method*: a chain a lookup at a time walks */
		uint32_t n = 0;

		for (uint32_t x = prev; x;
		     x = (uint32_t)u64map__get(&cm->molder, x - 1)) {
			cm->stats.steps++;
			if (++n >= cm->lim.method_versions) {
				cm_capped(cm, "%u methods at one Method* (0x%llx)",
					  cm->lim.method_versions,
					  (unsigned long long)in->method);
				return 0;
			}
		}
	}
	if (cm->nmethods >= cm->lim.methods) {
		cm_capped(cm, "%u methods", cm->lim.methods);
		return 0;
	}
	if (prev && !dead_ns(cm, prev - 1) &&
	    u64map__put(&cm->mdead, prev - 1, t ? t : 1))
		return cm_fail(cm, ENOMEM, "out of memory");
	if (i >= UINT32_MAX - 1 || cm->arena_used + len > UINT32_MAX)
		return cm_fail(cm, ENOMEM, "more methods than a reader holds");
	if (ix_room(cm, &cm->mix, meth_hash) ||
	    array__grow((void **)&cm->arena, &cm->arena_cap, cm->arena_used + len, 1))
		return cm_fail(cm, ENOMEM, "out of memory");
	if (!(i & (CM_SLAB - 1)) && i >> CM_SLAB_SHIFT >= cm->nmslabs) {
		struct cm_meth **ns = realloc(cm->mslabs, (cm->nmslabs + 1) *
					      sizeof(*ns));

		if (!ns)
			return cm_fail(cm, ENOMEM, "out of memory");
		cm->mslabs = ns;
		ns[cm->nmslabs] = malloc(CM_SLAB * sizeof(**ns));
		if (!ns[cm->nmslabs])
			return cm_fail(cm, ENOMEM, "out of memory");
		cm->nmslabs++;
	}
	if ((cd < INT32_MIN + 1 || cd > INT32_MAX) && in->const_method &&
	    u64map__put(&cm->cfar, i, in->const_method))
		return cm_fail(cm, ENOMEM, "out of memory");
	if (prev && u64map__put(&cm->molder, i, prev))
		return cm_fail(cm, ENOMEM, "out of memory");
	m = meth(cm, i);
	m->method = in->method;
	m->load_ns = t;
	m->cdelta = cd < INT32_MIN + 1 || cd > INT32_MAX ? CM_CFAR :
		    (int32_t)cd;
	m->klass = in->klass;
	m->native = !!(in->flags & CM_METHOD_NATIVE);
	m->seen = 1;
	m->name = in->name;
	m->sig = in->sig;
	m->modifiers = in->modifiers;
	m->lines = (uint32_t)cm->arena_used;
	memcpy(cm->arena + cm->arena_used, cm->lenc, len);
	cm->arena_used += len;
	cm->nmethods++;
	slot = mix_slot(cm, in->method);
	if (!*slot)
		cm->mix.n++;
	*slot = (uint32_t)i + 1;
	cm->stats.methods++;
	return 0;
}

void cm_methods_unseen(struct codemap *cm)
{
	for (size_t i = 0; i < cm->nmethods; i++)
		meth(cm, i)->seen = 0;
}

void cm_methods_reconcile(struct codemap *cm, uint64_t t)
{
	/* methods of unloaded classes: no record says so, the snapshot does */
	for (size_t i = 0; i < cm->nmethods; i++)
		if (!meth(cm, i)->seen && !dead_ns(cm, i) &&
		    u64map__put(&cm->mdead, i, t ? t : 1)) {
			cm_fail(cm, ENOMEM, "out of memory");
			return;
		}
}

/* a view of method i into v (room for its lines) */
static void view_fill(const struct codemap *cm, size_t i, struct cm_view *v)
{
	const struct cm_meth *m = meth(cm, i);

	v->m.method = m->method;
	v->m.const_method = const_method(cm, i);
	v->m.klass = cm->strs[cm->classes[m->klass][0]];
	v->m.source = cm->strs[cm->classes[m->klass][1]];
	v->m.name = cm->strs[m->name];
	v->m.signature = cm->strs[m->sig];
	v->m.modifiers = m->modifiers;
	v->m.flags = m->native ? CM_METHOD_NATIVE : 0;
	v->m.n_lines = lines_decode(cm, m->lines, v->lines, NULL);
	v->m.lines = v->m.n_lines ? v->lines : NULL;
}

static size_t view_size(const struct codemap *cm, size_t i)
{
	return sizeof(struct cm_view) +
	       (size_t)lines_decode(cm, meth(cm, i)->lines, NULL, NULL) *
	       sizeof(struct cm_line);
}

/* method i's view, made at its first lookup; NULL when out of memory */
static const struct codemap_method *view_of(struct codemap *cm, size_t i)
{
	struct cm_view *v = u64map_get(&cm->mviews, i);
	size_t sz;

	if (v)
		return &v->m;
	sz = view_size(cm, i);
	v = malloc(sz);
	if (!v)
		return NULL;
	v->size = sz;
	view_fill(cm, i, v);
	if (u64map_put(&cm->mviews, i, v)) {
		free(v);
		return NULL;
	}
	cm->mem += cm_alloc_bytes(sz);
	return &v->m;
}

/*
 * A sample's Java frames name the same few hundred methods again and
 * again, each a probe of the Method* index, of the earlier versions and
 * of the views, most of them cache misses. The answer for a Method* with
 * one version only holds whatever the decode time: kept here, direct
 * mapped, until the methods change (mgen).
 */
#define CM_MMEMO_SLOTS		1024

struct cm_mmemo {
	uint64_t mp;
	uint64_t gen;
	const struct codemap_method *m;
};

static void mmemo_put(struct codemap *cm, struct cm_mmemo *e, uint64_t mp,
		      const struct codemap_method *m)
{
	if (!e)
		return;
	e->mp = mp;
	e->gen = cm->mgen;
	e->m = m;
}

uint64_t cm_next_mgen(void)
{
	static uint64_t next;	/* the recorder reads maps on one thread */

	return ++next;
}

const struct codemap_method *cm_method_get(const struct codemap *ccm,
					   uint64_t mp, uint64_t at_ns,
					   bool *timeless)
{
	/* views are made on demand: the map itself is ours to change */
	struct codemap *cm = (struct codemap *)ccm;
	const struct codemap_method *m;
	struct cm_mmemo *e = NULL;
	uint32_t v, x;

	if (timeless)
		*timeless = false;
	if (!cm->mgen)
		cm->mgen = cm_next_mgen();
	if (!cm->mmemo && (cm->mmemo = calloc(CM_MMEMO_SLOTS,
					      sizeof(*cm->mmemo))))
		cm->mem += cm_alloc_bytes(CM_MMEMO_SLOTS * sizeof(*cm->mmemo));
	if (cm->mmemo) {
		e = &cm->mmemo[(mix64(mp) >> 20) & (CM_MMEMO_SLOTS - 1)];
		if (e->m && e->mp == mp && e->gen == cm->mgen) {
			if (timeless)
				*timeless = true;
			return e->m;
		}
	}
	if (!cm->mix.cap || !(v = *mix_slot(cm, mp)))
		return NULL;
	if (!u64map__get(&cm->molder, v - 1)) {
		/* one version: the answer whatever the time */
		m = view_of(cm, v - 1);
		if (m)
			mmemo_put(cm, e, mp, m);
		if (timeless)
			*timeless = m != NULL;
		return m;
	}
	/*
	 * A Method* freed with its class may come back as another method:
	 * the one recorded by the decode time, or the first one (its record
	 * came after a late attach).
	 */
	if (at_ns) {
		for (x = v; x; v = x, x = (uint32_t)u64map__get(&cm->molder,
								 x - 1))
			if (meth(cm, x - 1)->load_ns <= at_ns)
				break;
		if (x)
			v = x;
	}
	return view_of(cm, v - 1);
}

const struct codemap_method *cm_method_at(const struct codemap *ccm,
					  size_t i)
{
	struct codemap *cm = (struct codemap *)ccm;
	struct cm_view *v = u64map_get(&cm->mviews, i), **r;
	size_t sz;

	if (v)
		return &v->m;
	/* iteration does not keep a view per method: one of a ring */
	r = &cm->ring[cm->ring_next++ % CM_VIEW_RING];
	sz = view_size(cm, i);
	if (!*r || (*r)->size < sz) {
		size_t old = *r ? cm_alloc_bytes((*r)->size) : 0;

		v = realloc(*r, sz);
		if (!v)
			return NULL;
		*r = v;
		cm->mem += cm_alloc_bytes(sz) - old;
		v->size = sz;
	}
	view_fill(cm, i, *r);
	return &(*r)->m;
}

/* the arena again, with the tables of the methods kept only */
static int arena_compact(struct codemap *cm)
{
	size_t used = 0, cap = 0;
	uint8_t *na = NULL;

	for (size_t i = 0; i < cm->nmethods; i++) {
		struct cm_meth *m = meth(cm, i);
		size_t len;

		lines_decode(cm, m->lines, NULL, &len);
		if (array__grow((void **)&na, &cap, used + len, 1)) {
			free(na);
			return -ENOMEM;
		}
		memcpy(na + used, cm->arena + m->lines, len);
		m->lines = (uint32_t)used;
		used += len;
	}
	free(cm->arena);
	cm->arena = na;
	cm->arena_used = used;
	cm->arena_cap = cap;
	return 0;
}

long cm_methods_prune(struct codemap *cm, uint64_t before)
{
	struct u64map dead = { 0 }, views = { 0 }, cfar = { 0 };
	size_t k = 0, n = cm->nmethods;
	bool any = false;
	long freed;

	/* called every second: only the few dead methods are looked at
	 * unless one of them goes */
	for (size_t i = 0; i < cm->mdead.cap && !any; i++)
		any = cm->mdead.vals[i] && cm->mdead.vals[i] != UINT64_MAX &&
		      cm->mdead.vals[i] < before;
	if (!any)
		return 0;
	cm->mgen = cm_next_mgen();
	for (size_t i = 0; i < n; i++) {
		uint64_t d = dead_ns(cm, i);
		struct cm_view *v = u64map_get(&cm->mviews, i);

		if (d && d < before) {
			if (v) {
				cm->mem -= cm_alloc_bytes(v->size);
				free(v);
			}
			continue;
		}
		if ((d && u64map__put(&dead, k, d)) ||
		    (v && u64map_put(&views, k, v)) ||
		    (meth(cm, i)->cdelta == CM_CFAR &&
		     u64map__get(&cm->cfar, i) &&
		     u64map__put(&cfar, k, u64map__get(&cm->cfar, i))))
			goto oom;
		*meth(cm, k++) = *meth(cm, i);
	}
	freed = (long)(n - k);
	if (!freed)
		goto keep;
	u64map__free(&cm->mdead);
	u64map__free(&cm->mviews);
	u64map__free(&cm->cfar);
	u64map__free(&cm->molder);
	cm->mdead = dead;
	cm->mviews = views;
	cm->cfar = cfar;
	cm->nmethods = k;
	/* the slabs left empty, the index and the older links again */
	while (cm->nmslabs > (k + CM_SLAB - 1) >> CM_SLAB_SHIFT)
		free(cm->mslabs[--cm->nmslabs]);
	memset(cm->mix.slot, 0, cm->mix.cap * sizeof(*cm->mix.slot));
	cm->mix.n = 0;
	for (size_t i = 0; i < k; i++) {
		uint32_t *slot = mix_slot(cm, meth(cm, i)->method);

		if (*slot && u64map__put(&cm->molder, i, *slot)) {
			cm_fail(cm, ENOMEM, "out of memory");
			return -ENOMEM;
		}
		if (!*slot)
			cm->mix.n++;
		*slot = (uint32_t)i + 1;
	}
	if (arena_compact(cm)) {
		cm_fail(cm, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	return freed;
keep:
	u64map__free(&dead);
	u64map__free(&views);
	u64map__free(&cfar);
	return 0;
oom:
	/* nothing moved past k yet would be lost: fail the map */
	u64map__free(&dead);
	u64map__free(&views);
	u64map__free(&cfar);
	cm_fail(cm, ENOMEM, "out of memory");
	return -ENOMEM;
}

void cm_store_free(struct codemap *cm)
{
	for (size_t i = 0; i < cm->mviews.cap; i++)
		if (cm->mviews.vals[i])
			free((void *)(uintptr_t)cm->mviews.vals[i]);
	for (int i = 0; i < CM_VIEW_RING; i++)
		free(cm->ring[i]);
	free(cm->mmemo);
	cm->mmemo = NULL;
	cm->mgen = cm_next_mgen();
	for (size_t i = 0; i < cm->nmslabs; i++)
		free(cm->mslabs[i]);
	free(cm->mslabs);
	u64map__free(&cm->mdead);
	u64map__free(&cm->molder);
	u64map__free(&cm->mviews);
	u64map__free(&cm->cfar);
	free(cm->mix.slot);
	free(cm->arena);
	free(cm->lenc);
	for (size_t i = 0; i < cm->nschunks; i++)
		free(cm->schunks[i]);
	free(cm->schunks);
	free(cm->strs);
	free(cm->str_ix.slot);
	free(cm->classes);
	free(cm->class_ix.slot);
}

static size_t map_bytes(const struct u64map *m)
{
	return m->cap ? 2 * cm_alloc_bytes(m->cap * sizeof(uint64_t)) : 0;
}

static size_t arr_bytes(size_t cap, size_t elem)
{
	return cap ? cm_alloc_bytes(cap * elem) : 0;
}

size_t cm_store_bytes(const struct codemap *cm)
{
	return cm->nmslabs * cm_alloc_bytes(CM_SLAB * sizeof(struct cm_meth)) +
	       arr_bytes(cm->nmslabs, sizeof(*cm->mslabs)) +
	       ix_bytes(&cm->mix) + map_bytes(&cm->mdead) +
	       map_bytes(&cm->molder) + map_bytes(&cm->mviews) +
	       map_bytes(&cm->cfar) + arr_bytes(cm->arena_cap, 1) +
	       arr_bytes(cm->lenccap, 1) + cm->sbytes +
	       arr_bytes(cm->capschunks, sizeof(*cm->schunks)) +
	       arr_bytes(cm->capstrs, sizeof(*cm->strs)) +
	       ix_bytes(&cm->str_ix) +
	       arr_bytes(cm->capclasses, sizeof(*cm->classes)) +
	       ix_bytes(&cm->class_ix);
}
