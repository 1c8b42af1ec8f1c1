// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The method store of the code map reader (codemap_methods.h): what it
 * keeps of methods, compactly: a big JVM has hundreds of thousands of
 * methods and the decoder looks up a few thousand of them.
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
#include "jvm/codemap_methods.h"

/*
 * A method, compact: 40 bytes in slabs, strings and classes as numbers,
 * its line table in the line arena (varint deltas). What only a few
 * methods have lives in side tables keyed by its index: the time it
 * died, an earlier method at the same Method*, a far ConstMethod*, and
 * its view (the struct codemap_method handed out, made at its first
 * lookup and kept until the method is freed).
 */
struct cm_meth {
	uint64_t method;		/* Method* */
	uint64_t load_ns;		/* its record's time */
	int32_t cdelta;			/* ConstMethod* - Method*, or CM_CFAR */
	uint32_t klass : 30;		/* class number */
	uint32_t native : 1;		/* CM_METHOD_NATIVE */
	uint32_t seen : 1;		/* in the generation read now */
	uint32_t name, sig;		/* string numbers */
	uint32_t modifiers;
	uint32_t lines;			/* offset of its table in the arena */
};

#define CM_CFAR			INT32_MIN	/* ConstMethod* in cfar */
#define CM_SLAB_SHIFT		12		/* methods per slab: 4096 */

#define CM_SCHUNK		(64u << 10)	/* string text chunk */
#define CM_SLAB			(1u << CM_SLAB_SHIFT)
#define CM_NUM_MAX		((1u << 30) - 1)	/* class numbers: 30 bits */

struct cm_view {
	struct codemap_method m;	/* first: handed out as is */
	size_t size;			/* bytes asked for */
	struct cm_line lines[];
};

/* a failure of the store: why, for the map's one line */
static int fail(struct cm_store *st, int errnum, const char *why)
{
	st->why = why;
	return -errnum;
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

/* a new stamp for mgen: no two stores' stamps are ever the same */
static uint64_t next_mgen(void)
{
	static uint64_t next;	/* the recorder reads maps on one thread */

	return ++next;
}

/* ---- index over numbers ---------------------------------------------------- */

typedef uint64_t (*ix_hash_fn)(const struct cm_store *st, uint32_t v);

/* room for one more, at a load of at most 3/4 */
static int ix_room(const struct cm_store *st, struct cm_ix *ix, ix_hash_fn h)
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
		for (j = h(st, ix->slot[i] - 1) & (ncap - 1); ns[j];
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

static uint64_t str_hash(const struct cm_store *st, uint32_t v)
{
	const char *s = st->strs[v];

	return hash_bytes(s, strlen(s));
}

static bool str_eq(const char *t, const char *s, size_t n)
{
	/* t may be shorter than n: never read past its end */
	return strnlen(t, n + 1) == n && !memcmp(t, s, n);
}

int cm_store__str_num(struct cm_store *st, const char *s, size_t n, uint32_t *num)
{
	uint64_t h;
	size_t i;
	char *copy;

	/* a name is what C sees of it: up to a NUL it may hold */
	n = strnlen(s, n);
	h = hash_bytes(s, n);

	if (st->str_ix.cap) {
		for (i = h & (st->str_ix.cap - 1); st->str_ix.slot[i];
		     i = (i + 1) & (st->str_ix.cap - 1))
			if (str_eq(st->strs[st->str_ix.slot[i] - 1], s, n)) {
				*num = st->str_ix.slot[i] - 1;
				return 0;
			}
	}
	if (st->nstrs >= CM_NUM_MAX ||
	    ix_room(st, &st->str_ix, str_hash) ||
	    array__grow((void **)&st->strs, &st->capstrs, st->nstrs + 1,
		 sizeof(*st->strs)))
		return -ENOMEM;
	if (!st->nschunks || st->schunk_cap - st->schunk_used < n + 1) {
		size_t sz = n + 1 > CM_SCHUNK ? n + 1 : CM_SCHUNK;
		char *c;

		if (array__grow((void **)&st->schunks, &st->capschunks,
			 st->nschunks + 1, sizeof(*st->schunks)))
			return -ENOMEM;
		c = malloc(sz);
		if (!c)
			return -ENOMEM;
		st->schunks[st->nschunks++] = c;
		st->schunk_used = 0;
		st->schunk_cap = sz;
		st->sbytes += cm_alloc_bytes(sz);
	}
	copy = st->schunks[st->nschunks - 1] + st->schunk_used;
	memcpy(copy, s, n);
	copy[n] = '\0';
	st->schunk_used += n + 1;
	st->strs[st->nstrs] = copy;
	for (i = h & (st->str_ix.cap - 1); st->str_ix.slot[i];
	     i = (i + 1) & (st->str_ix.cap - 1))
		;
	st->str_ix.slot[i] = (uint32_t)st->nstrs + 1;
	st->str_ix.n++;
	*num = (uint32_t)st->nstrs++;
	return 0;
}

const char *cm_store__str(const struct cm_store *st, uint32_t num)
{
	return num < st->nstrs ? st->strs[num] : NULL;
}

const char *cm_store__intern(struct cm_store *st, const char *s, size_t n)
{
	uint32_t num;

	return cm_store__str_num(st, s, n, &num) ? NULL : st->strs[num];
}

/* ---- classes ----------------------------------------------------------------- */

static uint64_t class_key(uint32_t name, uint32_t src)
{
	return mix64((uint64_t)name << 32 | src);
}

static uint64_t class_hash(const struct cm_store *st, uint32_t v)
{
	return class_key(st->classes[v][0], st->classes[v][1]);
}

int cm_store__class_num(struct cm_store *st, uint32_t name, uint32_t src,
		 uint32_t *num)
{
	size_t i;

	if (st->class_ix.cap) {
		for (i = class_key(name, src) & (st->class_ix.cap - 1);
		     st->class_ix.slot[i];
		     i = (i + 1) & (st->class_ix.cap - 1)) {
			uint32_t v = st->class_ix.slot[i] - 1;

			if (st->classes[v][0] == name &&
			    st->classes[v][1] == src) {
				*num = v;
				return 0;
			}
		}
	}
	if (st->nclasses >= CM_NUM_MAX ||
	    ix_room(st, &st->class_ix, class_hash) ||
	    array__grow((void **)&st->classes, &st->capclasses, st->nclasses + 1,
		 sizeof(*st->classes)))
		return -ENOMEM;
	st->classes[st->nclasses][0] = name;
	st->classes[st->nclasses][1] = src;
	for (i = class_key(name, src) & (st->class_ix.cap - 1);
	     st->class_ix.slot[i]; i = (i + 1) & (st->class_ix.cap - 1))
		;
	st->class_ix.slot[i] = (uint32_t)st->nclasses + 1;
	st->class_ix.n++;
	*num = (uint32_t)st->nclasses++;
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

/* lines sorted and encoded into st->lenc: count, then per line the bci
 * step and the zigzag line step; its length, or 0 when out of memory */
static size_t lines_encode(struct cm_store *st, struct cm_line *l, uint32_t n)
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
	if (array__grow((void **)&st->lenc, &st->lenccap, 5 + (size_t)n * 10, 1))
		return 0;
	len = put_varint(st->lenc, n);
	for (uint32_t i = 0; i < n; i++) {
		len += put_varint(st->lenc + len, l[i].bci - bci);
		len += put_varint(st->lenc + len,
				  zigzag((int64_t)l[i].line - line));
		bci = l[i].bci;
		line = l[i].line;
	}
	return len;
}

/* the table at off (written by lines_encode, so it is well formed):
 * its count, and its lines into out when out is not NULL; *len its bytes */
static uint32_t lines_decode(const struct cm_store *st, uint32_t off,
			     struct cm_line *out, size_t *len)
{
	const uint8_t *p = st->arena + off, *end = st->arena + st->arena_used;
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
		*len = (size_t)(p - (st->arena + off));
	return (uint32_t)n;
}

/* ---- methods ----------------------------------------------------------------- */

static struct cm_meth *meth(const struct cm_store *st, size_t i)
{
	return &st->mslabs[i >> CM_SLAB_SHIFT][i & (CM_SLAB - 1)];
}

static uint64_t meth_hash(const struct cm_store *st, uint32_t v)
{
	return mix64(meth(st, v)->method);
}

/* the slot of the newest method at Method* mp, or the empty slot for it */
static uint32_t *mix_slot(const struct cm_store *st, uint64_t mp)
{
	size_t i;

	for (i = mix64(mp) & (st->mix.cap - 1); st->mix.slot[i];
	     i = (i + 1) & (st->mix.cap - 1))
		if (meth(st, st->mix.slot[i] - 1)->method == mp)
			break;
	return &st->mix.slot[i];
}

static uint64_t dead_ns(const struct cm_store *st, size_t i)
{
	uint64_t v = u64map__get(&st->mdead, i);

	return v == UINT64_MAX ? 0 : v;
}

static uint64_t const_method(const struct cm_store *st, size_t i)
{
	const struct cm_meth *m = meth(st, i);

	if (m->cdelta == CM_CFAR)
		return u64map__get(&st->cfar, i);
	return m->method + (uint64_t)(int64_t)m->cdelta;
}

int cm_store__add(struct cm_store *st, const struct cm_mdesc *in,
		  struct cm_line *lines, uint64_t t)
{
	uint32_t *slot, prev = 0;
	struct cm_meth *m;
	size_t len, i = st->nmethods;
	int64_t cd;

	len = lines_encode(st, lines, in->n_lines);
	if (!len || in->klass > CM_NUM_MAX)
		return fail(st, ENOMEM, "out of memory");
	cd = (int64_t)(in->const_method - in->method);
	st->mgen = next_mgen();

	/*
	 * The same method again (a new generation's snapshot, or a race in
	 * the writer): nothing new but that it is still alive. Another
	 * method at this Method* (class unloading reused the address)
	 * replaces it, and the old one is dead from now.
	 */
	if (st->mix.cap && *(slot = mix_slot(st, in->method))) {
		struct cm_meth *pm;

		prev = *slot;
		pm = meth(st, prev - 1);
		if (const_method(st, prev - 1) == in->const_method &&
		    pm->klass == in->klass && pm->name == in->name &&
		    pm->sig == in->sig && pm->modifiers == in->modifiers &&
		    pm->native == !!(in->flags & CM_METHOD_NATIVE) &&
		    st->arena_used - pm->lines >= len &&
		    !memcmp(st->arena + pm->lines, st->lenc, len)) {
			pm->seen = 1;
			if (dead_ns(st, prev - 1) &&
			    u64map__put(&st->mdead, prev - 1, UINT64_MAX))
				return fail(st, ENOMEM, "out of memory");
			return 0;
		}
		/* methods at one Method*: a chain a lookup at a time walks */
		uint32_t n = 0;

		for (uint32_t x = prev; x;
		     x = (uint32_t)u64map__get(&st->molder, x - 1)) {
			st->budget->steps++;
			if (++n >= st->budget->lim.method_versions) {
				cm_budget__capped(st->budget,
						  "%u methods at one Method* (0x%llx)",
						  st->budget->lim.method_versions,
						  (unsigned long long)in->method);
				return 0;
			}
		}
	}
	if (st->nmethods >= st->budget->lim.methods) {
		cm_budget__capped(st->budget, "%u methods",
				  st->budget->lim.methods);
		return 0;
	}
	if (prev && !dead_ns(st, prev - 1) &&
	    u64map__put(&st->mdead, prev - 1, t ? t : 1))
		return fail(st, ENOMEM, "out of memory");
	if (i >= UINT32_MAX - 1 || st->arena_used + len > UINT32_MAX)
		return fail(st, ENOMEM, "more methods than a reader holds");
	if (ix_room(st, &st->mix, meth_hash) ||
	    array__grow((void **)&st->arena, &st->arena_cap, st->arena_used + len, 1))
		return fail(st, ENOMEM, "out of memory");
	if (!(i & (CM_SLAB - 1)) && i >> CM_SLAB_SHIFT >= st->nmslabs) {
		struct cm_meth **ns = realloc(st->mslabs, (st->nmslabs + 1) *
					      sizeof(*ns));

		if (!ns)
			return fail(st, ENOMEM, "out of memory");
		st->mslabs = ns;
		ns[st->nmslabs] = malloc(CM_SLAB * sizeof(**ns));
		if (!ns[st->nmslabs])
			return fail(st, ENOMEM, "out of memory");
		st->nmslabs++;
	}
	if ((cd < INT32_MIN + 1 || cd > INT32_MAX) && in->const_method &&
	    u64map__put(&st->cfar, i, in->const_method))
		return fail(st, ENOMEM, "out of memory");
	if (prev && u64map__put(&st->molder, i, prev))
		return fail(st, ENOMEM, "out of memory");
	m = meth(st, i);
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
	m->lines = (uint32_t)st->arena_used;
	memcpy(st->arena + st->arena_used, st->lenc, len);
	st->arena_used += len;
	st->nmethods++;
	slot = mix_slot(st, in->method);
	if (!*slot)
		st->mix.n++;
	*slot = (uint32_t)i + 1;
	st->added++;
	return 0;
}

void cm_store__unseen(struct cm_store *st)
{
	for (size_t i = 0; i < st->nmethods; i++)
		meth(st, i)->seen = 0;
}

int cm_store__reconcile(struct cm_store *st, uint64_t t)
{
	/* methods of unloaded classes: no record says so, the snapshot does */
	for (size_t i = 0; i < st->nmethods; i++)
		if (!meth(st, i)->seen && !dead_ns(st, i) &&
		    u64map__put(&st->mdead, i, t ? t : 1))
			return fail(st, ENOMEM, "out of memory");
	return 0;
}

/* a view of method i into v (room for its lines) */
static void view_fill(const struct cm_store *st, size_t i, struct cm_view *v)
{
	const struct cm_meth *m = meth(st, i);

	v->m.method = m->method;
	v->m.const_method = const_method(st, i);
	v->m.klass = st->strs[st->classes[m->klass][0]];
	v->m.source = st->strs[st->classes[m->klass][1]];
	v->m.name = st->strs[m->name];
	v->m.signature = st->strs[m->sig];
	v->m.modifiers = m->modifiers;
	v->m.flags = m->native ? CM_METHOD_NATIVE : 0;
	v->m.n_lines = lines_decode(st, m->lines, v->lines, NULL);
	v->m.lines = v->m.n_lines ? v->lines : NULL;
}

static size_t view_size(const struct cm_store *st, size_t i)
{
	return sizeof(struct cm_view) +
	       (size_t)lines_decode(st, meth(st, i)->lines, NULL, NULL) *
	       sizeof(struct cm_line);
}

/* method i's view, made at its first lookup; NULL when out of memory */
static const struct codemap_method *view_of(struct cm_store *st, size_t i)
{
	struct cm_view *v = u64map_get(&st->mviews, i);
	size_t sz;

	if (v)
		return &v->m;
	sz = view_size(st, i);
	v = malloc(sz);
	if (!v)
		return NULL;
	v->size = sz;
	view_fill(st, i, v);
	if (u64map_put(&st->mviews, i, v)) {
		free(v);
		return NULL;
	}
	st->mem += cm_alloc_bytes(sz);
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

static void mmemo_put(struct cm_store *st, struct cm_mmemo *e, uint64_t mp,
		      const struct codemap_method *m)
{
	if (!e)
		return;
	e->mp = mp;
	e->gen = st->mgen;
	e->m = m;
}

const struct codemap_method *cm_store__get(const struct cm_store *cst,
					   uint64_t mp, uint64_t at_ns,
					   bool *timeless)
{
	/* views are made on demand: the map itself is ours to change */
	struct cm_store *st = (struct cm_store *)cst;
	const struct codemap_method *m;
	struct cm_mmemo *e = NULL;
	uint32_t v, x;

	if (timeless)
		*timeless = false;
	if (!st->mgen)
		st->mgen = next_mgen();
	if (!st->mmemo && (st->mmemo = calloc(CM_MMEMO_SLOTS,
					      sizeof(*st->mmemo))))
		st->mem += cm_alloc_bytes(CM_MMEMO_SLOTS * sizeof(*st->mmemo));
	if (st->mmemo) {
		e = &st->mmemo[(mix64(mp) >> 20) & (CM_MMEMO_SLOTS - 1)];
		if (e->m && e->mp == mp && e->gen == st->mgen) {
			if (timeless)
				*timeless = true;
			return e->m;
		}
	}
	if (!st->mix.cap || !(v = *mix_slot(st, mp)))
		return NULL;
	if (!u64map__get(&st->molder, v - 1)) {
		/* one version: the answer whatever the time */
		m = view_of(st, v - 1);
		if (m)
			mmemo_put(st, e, mp, m);
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
		for (x = v; x; v = x, x = (uint32_t)u64map__get(&st->molder,
								 x - 1))
			if (meth(st, x - 1)->load_ns <= at_ns)
				break;
		if (x)
			v = x;
	}
	return view_of(st, v - 1);
}

const struct codemap_method *cm_store__at(const struct cm_store *cst,
					  size_t i)
{
	struct cm_store *st = (struct cm_store *)cst;
	struct cm_view *v = u64map_get(&st->mviews, i), **r;
	size_t sz;

	if (v)
		return &v->m;
	/* iteration does not keep a view per method: one of a ring */
	r = &st->ring[st->ring_next++ % CM_VIEW_RING];
	sz = view_size(st, i);
	if (!*r || (*r)->size < sz) {
		size_t old = *r ? cm_alloc_bytes((*r)->size) : 0;

		v = realloc(*r, sz);
		if (!v)
			return NULL;
		*r = v;
		st->mem += cm_alloc_bytes(sz) - old;
		v->size = sz;
	}
	view_fill(st, i, *r);
	return &(*r)->m;
}

int codemap_method__line(const struct codemap_method *m, int bci)
{
	uint32_t lo = 0, hi;

	if (!m || bci < 0 || !m->n_lines)
		return -1;
	/* greatest start bci <= bci */
	hi = m->n_lines;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->lines[mid].bci <= (uint32_t)bci)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (int)m->lines[lo - 1].line : -1;
}

/* the arena again, with the tables of the methods kept only */
static int arena_compact(struct cm_store *st)
{
	size_t used = 0, cap = 0;
	uint8_t *na = NULL;

	for (size_t i = 0; i < st->nmethods; i++) {
		struct cm_meth *m = meth(st, i);
		size_t len;

		lines_decode(st, m->lines, NULL, &len);
		if (array__grow((void **)&na, &cap, used + len, 1)) {
			free(na);
			return -ENOMEM;
		}
		memcpy(na + used, st->arena + m->lines, len);
		m->lines = (uint32_t)used;
		used += len;
	}
	free(st->arena);
	st->arena = na;
	st->arena_used = used;
	st->arena_cap = cap;
	return 0;
}

long cm_store__prune(struct cm_store *st, uint64_t before)
{
	struct u64map dead = { 0 }, views = { 0 }, cfar = { 0 };
	size_t k = 0, n = st->nmethods;
	bool any = false;
	long freed;

	/* called every second: only the few dead methods are looked at
	 * unless one of them goes */
	for (size_t i = 0; i < st->mdead.cap && !any; i++)
		any = st->mdead.vals[i] && st->mdead.vals[i] != UINT64_MAX &&
		      st->mdead.vals[i] < before;
	if (!any)
		return 0;
	st->mgen = next_mgen();
	for (size_t i = 0; i < n; i++) {
		uint64_t d = dead_ns(st, i);
		struct cm_view *v = u64map_get(&st->mviews, i);

		if (d && d < before) {
			if (v) {
				st->mem -= cm_alloc_bytes(v->size);
				free(v);
			}
			continue;
		}
		if ((d && u64map__put(&dead, k, d)) ||
		    (v && u64map_put(&views, k, v)) ||
		    (meth(st, i)->cdelta == CM_CFAR &&
		     u64map__get(&st->cfar, i) &&
		     u64map__put(&cfar, k, u64map__get(&st->cfar, i))))
			goto oom;
		*meth(st, k++) = *meth(st, i);
	}
	freed = (long)(n - k);
	if (!freed)
		goto keep;
	u64map__free(&st->mdead);
	u64map__free(&st->mviews);
	u64map__free(&st->cfar);
	u64map__free(&st->molder);
	st->mdead = dead;
	st->mviews = views;
	st->cfar = cfar;
	st->nmethods = k;
	/* the slabs left empty, the index and the older links again */
	while (st->nmslabs > (k + CM_SLAB - 1) >> CM_SLAB_SHIFT)
		free(st->mslabs[--st->nmslabs]);
	memset(st->mix.slot, 0, st->mix.cap * sizeof(*st->mix.slot));
	st->mix.n = 0;
	for (size_t i = 0; i < k; i++) {
		uint32_t *slot = mix_slot(st, meth(st, i)->method);

		if (*slot && u64map__put(&st->molder, i, *slot))
			return fail(st, ENOMEM, "out of memory");
		if (!*slot)
			st->mix.n++;
		*slot = (uint32_t)i + 1;
	}
	if (arena_compact(st))
		return fail(st, ENOMEM, "out of memory");
	return freed;
keep:
	u64map__free(&dead);
	u64map__free(&views);
	u64map__free(&cfar);
	return 0;
oom:
	/* nothing moved past k yet would be lost: the map is to fail */
	u64map__free(&dead);
	u64map__free(&views);
	u64map__free(&cfar);
	return fail(st, ENOMEM, "out of memory");
}

void cm_store__init(struct cm_store *st, struct cm_budget *budget)
{
	memset(st, 0, sizeof(*st));
	st->budget = budget;
}

void cm_store__free(struct cm_store *st)
{
	for (size_t i = 0; i < st->mviews.cap; i++)
		if (st->mviews.vals[i])
			free((void *)(uintptr_t)st->mviews.vals[i]);
	for (int i = 0; i < CM_VIEW_RING; i++)
		free(st->ring[i]);
	free(st->mmemo);
	st->mmemo = NULL;
	st->mgen = next_mgen();
	for (size_t i = 0; i < st->nmslabs; i++)
		free(st->mslabs[i]);
	free(st->mslabs);
	u64map__free(&st->mdead);
	u64map__free(&st->molder);
	u64map__free(&st->mviews);
	u64map__free(&st->cfar);
	free(st->mix.slot);
	free(st->arena);
	free(st->lenc);
	for (size_t i = 0; i < st->nschunks; i++)
		free(st->schunks[i]);
	free(st->schunks);
	free(st->strs);
	free(st->str_ix.slot);
	free(st->classes);
	free(st->class_ix.slot);
}

size_t cm_store__bytes(const struct cm_store *st)
{
	return st->nmslabs * cm_alloc_bytes(CM_SLAB * sizeof(struct cm_meth)) +
	       cm_arr_bytes(st->nmslabs, sizeof(*st->mslabs)) +
	       ix_bytes(&st->mix) + cm_map_bytes(&st->mdead) +
	       cm_map_bytes(&st->molder) + cm_map_bytes(&st->mviews) +
	       cm_map_bytes(&st->cfar) + cm_arr_bytes(st->arena_cap, 1) +
	       cm_arr_bytes(st->lenccap, 1) + st->sbytes +
	       cm_arr_bytes(st->capschunks, sizeof(*st->schunks)) +
	       cm_arr_bytes(st->capstrs, sizeof(*st->strs)) +
	       ix_bytes(&st->str_ix) +
	       cm_arr_bytes(st->capclasses, sizeof(*st->classes)) +
	       ix_bytes(&st->class_ix);
}
