// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Aggregation of decoded stacks. Every string of an added trace is interned
 * in the profile's own strtab, so two frames are equal when their scalar
 * fields and string pointers are equal: hashing and comparing never touch
 * string bytes. Stacks keep their insertion order (writers are
 * deterministic); an open-addressing table of indices finds them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include "profile/profile.h"
#include "sampler.h"
#include "util/strtab.h"
#include "util/u64map.h"

/* a stack's two independent 64-bit hashes: equal in both is equal (see
 * add_key) */
struct stack_hash {
	uint64_t a, b;
};

struct profile {
	struct strtab *strtab;
	struct profile_meta meta;
	struct profile_stack *stacks;
	struct stack_hash *hashes;	/* hashes[i] of stacks[i] */
	size_t nstacks;
	size_t cap_stacks;
	uint32_t *slots;	/* index + 1, 0 = empty */
	size_t nslots;		/* power of two */
	struct icache_ent *icache;	/* see intern(); NULL until needed */
	uint64_t epoch;		/* resets so far */
	size_t last;		/* the stack the last add went to */
	/* module path -> its build-id in hex, both interned, as the
	 * symbolizer read them through the processes' roots */
	struct u64map build_ids;
};

/* a string pointer as added, and its interned copy */
struct icache_ent {
	const char *src, *dst;
};

#define ICACHE_SLOTS	4096	/* direct-mapped, 64 KiB */

struct profile *profile__new(void)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->strtab = strtab__new();
	p->nslots = 1024;
	p->slots = calloc(p->nslots, sizeof(*p->slots));
	p->last = SIZE_MAX;
	if (!p->strtab || !p->slots) {
		profile__free(p);
		return NULL;
	}
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nstacks; i++)
		free(p->stacks[i].trace.frames);
	free(p->stacks);
	free(p->hashes);
	free(p->slots);
	free(p->icache);
	u64map__free(&p->build_ids);
	strtab__free(p->strtab);
	free(p);
}

int profile__set_build_id(struct profile *p, const char *module,
			  const char *hex)
{
	const char *m = strtab__intern(p->strtab, module);
	const char *h = strtab__intern(p->strtab, hex);

	if (!m || !h)
		return -ENOMEM;
	return u64map__put(&p->build_ids, (uint64_t)(uintptr_t)m,
			   (uint64_t)(uintptr_t)h);
}

const char *profile__build_id(const struct profile *p, const char *module)
{
	return (const char *)(uintptr_t)u64map__get(&p->build_ids,
						    (uint64_t)(uintptr_t)module);
}

void profile__reset(struct profile *p)
{
	struct profile_meta m = { .frequency_hz = p->meta.frequency_hz,
				  .events = p->meta.events };
	uint32_t *slots = calloc(1024, sizeof(*slots));

	for (size_t i = 0; i < p->nstacks; i++)
		free(p->stacks[i].trace.frames);
	free(p->stacks);
	free(p->hashes);
	p->stacks = NULL;
	p->hashes = NULL;
	p->nstacks = 0;
	p->cap_stacks = 0;
	p->meta = m;
	p->epoch++;
	p->last = SIZE_MAX;
	/* back to the first size; without memory keep the big table */
	if (slots) {
		free(p->slots);
		p->slots = slots;
		p->nslots = 1024;
	} else {
		memset(p->slots, 0, p->nslots * sizeof(*p->slots));
	}
}

struct strtab *profile__strtab(struct profile *p)
{
	return p->strtab;
}

struct profile_meta *profile__meta(struct profile *p)
{
	return &p->meta;
}

const struct profile_meta *profile__meta_const(const struct profile *p)
{
	return &p->meta;
}

size_t profile__nstacks(const struct profile *p)
{
	return p->nstacks;
}

/* whether the cpu and off-CPU stacks (the time family) weigh in us */
bool profile__timed(const struct profile *p)
{
	return p->meta.events & ASGST_EVMASK_OFFCPU;
}

/*
 * A stack's weight in its event's own unit: cpu and off-CPU stacks are one
 * family (samples, or us when off-CPU time is in), an allocation weighs
 * its bytes, a contended monitor its ns. Writers never add two families.
 */
uint64_t profile__stack_value(const struct profile *p,
			      const struct profile_stack *ps)
{
	uint32_t hz = p->meta.frequency_hz ? p->meta.frequency_hz : 99;

	if (ps->trace.event == TRACE_EV_ALLOC)
		return ps->alloc_bytes;
	if (ps->trace.event == TRACE_EV_LOCK)
		return ps->weight_ns;
	if (!profile__timed(p))
		return ps->count;
	if (ps->trace.event == TRACE_EV_OFFCPU)
		return ps->weight_ns / 1000;
	return ps->count * (1000000ull / hz);
}

const struct profile_stack *profile__stack(const struct profile *p, size_t i)
{
	return i < p->nstacks ? &p->stacks[i] : NULL;
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	/* one round of a 64-bit multiply-xorshift: cheap, good avalanche */
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

#define PTR(x) ((uint64_t)(uintptr_t)(x))

/*
 * A frame's fields folded by independent multiplies into two sums with
 * constants of their own (one serial mix a frame, not one a field: stacks
 * are deep and this runs for every sample). Strings are the profile's
 * interned ones, compared by address.
 */
static inline void frame_hash(const struct frame *f, uint64_t *ha,
			      uint64_t *hb)
{
	uint64_t a = (uint64_t)f->type << 56 |
		     (uint64_t)(uint8_t)f->comp_level << 48 |
		     (uint64_t)f->flags << 32 | (uint32_t)f->bci;
	uint64_t l = (uint64_t)(uint32_t)f->line ^ PTR(f->reason) << 1;
	uint64_t pc = f->pc ^ f->code_pc << 1;
	uint64_t ss = PTR(f->signature) ^ PTR(f->source) << 1;

	*ha = a * 0x9e3779b97f4a7c15ull + l * 0xc2b2ae3d27d4eb4full +
	      pc * 0x165667b19e3779f9ull + f->offset * 0xd6e8feb86659fd93ull +
	      PTR(f->symbol) * 0xff51afd7ed558ccdull +
	      PTR(f->module) * 0xc4ceb9fe1a85ec53ull +
	      PTR(f->klass) * 0x87c37b91114253d5ull +
	      PTR(f->method) * 0x4cf5ad432745937full +
	      ss * 0x52dce729da3ed4f5ull;
	*hb = a * 0xa0761d6478bd642full + l * 0xe7037ed1a0b428dbull +
	      pc * 0x8ebc6af09c88c6e3ull + f->offset * 0x589965cc75374cc3ull +
	      PTR(f->symbol) * 0x1d8e4e27c47d124full +
	      PTR(f->module) * 0xbf58476d1ce4e5b9ull +
	      PTR(f->klass) * 0x94d049bb133111ebull +
	      PTR(f->method) * 0x2545f4914f6cdd1dull +
	      ss * 0x9fb21c651e98df25ull;
}

static inline uint64_t mix_b(uint64_t h, uint64_t v)
{
	/* mix() with constants of its own, for the second hash */
	h ^= v + 0x7f4a7c159e3779b9ull + (h << 5) + (h >> 3);
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

/* t's strings must already be interned in p->strtab */
static struct stack_hash trace_hash(const struct trace *t)
{
	uint64_t v[6] = {
		(uint64_t)(uint32_t)t->pid << 32 | (uint32_t)t->tid,
		PTR(t->comm), PTR(t->thread),
		(uint64_t)t->kind << 32 | (uint32_t)t->error,
		(uint64_t)t->state << 56 | (uint64_t)t->event << 48 |
		(uint64_t)t->flags << 32 | (uint32_t)t->jvmti_state,
		PTR(t->error_name) ^ (PTR(t->container_id) << 1) ^
		(PTR(t->pod_uid) << 2) ^ (PTR(t->ev_class) << 3) ^
		(uint64_t)t->nframes << 48,
	};
	struct stack_hash h = { 0, 0x243f6a8885a308d3ull };

	for (int i = 0; i < 6; i++) {
		h.a = mix(h.a, v[i]);
		h.b = mix_b(h.b, v[i]);
	}
	for (uint32_t i = 0; i < t->nframes; i++) {
		uint64_t fa, fb;

		frame_hash(&t->frames[i], &fa, &fb);
		h.a = mix(h.a, fa);
		h.b = mix_b(h.b, fb);
	}
	return h;
}

/*
 * Intern s; false when s was non-NULL and interning failed. A sample's
 * strings are mostly the same pointers as the last sample's (the decoder's
 * and symbolizer's interned names, the code map's), so a cache by pointer
 * spares hashing every byte of every name of every frame. A hit is
 * trusted only when the pointer is one of the strtab's own strings (never
 * freed while the profile lives) or still holds the same bytes: a code
 * map's freed name whose address came back is caught by the strcmp.
 */
static bool intern(struct profile *p, const char **s)
{
	const char *src = *s, *dst;
	struct icache_ent *e = NULL;

	if (!src)
		return true;
	if (!p->icache)
		p->icache = calloc(ICACHE_SLOTS, sizeof(*p->icache));
	if (p->icache) {
		uint64_t h = (uint64_t)(uintptr_t)src * 0x9e3779b97f4a7c15ull;

		e = &p->icache[(h >> 40) & (ICACHE_SLOTS - 1)];
		if (e->src == src && (e->dst == src || !strcmp(src, e->dst))) {
			*s = e->dst;
			return true;
		}
	}
	dst = strtab__intern(p->strtab, src);
	if (!dst)
		return false;
	if (e) {
		e->src = src;
		e->dst = dst;
	}
	*s = dst;
	return true;
}

static int profile__rehash(struct profile *p)
{
	size_t n = p->nslots * 2;
	uint32_t *ns = calloc(n, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < p->nstacks; i++) {
		size_t j = p->hashes[i].a & (n - 1);

		while (ns[j])
			j = (j + 1) & (n - 1);
		ns[j] = i + 1;
	}
	free(p->slots);
	p->slots = ns;
	p->nslots = n;
	return 0;
}

/*
 * key's strings are p->strtab's own: count it in its stack, or add a copy.
 * A stack is found by its two 64-bit hashes and its thread and depth,
 * without comparing its frames one by one: those of a stored stack are
 * out of the cache by the time it comes again, and reading them back cost
 * more than the rest of the profile's work; two different stacks alike
 * in 128 bits do not happen.
 */
static void add_values(struct profile_stack *ps, const struct profile_values *v)
{
	ps->count += v->count;
	ps->weight_ns += v->weight_ns;
	ps->alloc_bytes += v->alloc_bytes;
	ps->alloc_objects += v->alloc_objects;
}

static int add_key(struct profile *p, const struct trace *key,
		   const struct profile_values *v)
{
	const struct frame *frames = key->frames;
	struct profile_stack *ps;
	struct stack_hash h;
	size_t j;

	/* keep the load under 1/2 so probe chains stay short; a failed grow
	 * only costs probe length until the table would be full */
	if ((p->nstacks + 1) * 2 > p->nslots && profile__rehash(p) &&
	    p->nstacks + 1 >= p->nslots)
		return -ENOMEM;
	h = trace_hash(key);
	for (j = h.a & (p->nslots - 1); p->slots[j];
	     j = (j + 1) & (p->nslots - 1)) {
		const struct stack_hash *sh = &p->hashes[p->slots[j] - 1];

		if (sh->a != h.a || sh->b != h.b)
			continue;
		ps = &p->stacks[p->slots[j] - 1];
		if (ps->trace.nframes == key->nframes &&
		    ps->trace.pid == key->pid && ps->trace.tid == key->tid &&
		    ps->trace.event == key->event &&
		    ps->trace.ev_class == key->ev_class) {
			add_values(ps, v);
			p->last = p->slots[j] - 1;
			return 0;
		}
	}

	if (p->nstacks >= UINT32_MAX - 1)
		return -ENOMEM;
	if (p->nstacks == p->cap_stacks) {
		size_t nc = p->cap_stacks ? p->cap_stacks * 2 : 256;
		struct profile_stack *s = realloc(p->stacks, nc * sizeof(*s));
		struct stack_hash *hs;

		if (!s)
			return -ENOMEM;
		p->stacks = s;
		hs = realloc(p->hashes, nc * sizeof(*hs));
		if (!hs)
			return -ENOMEM;
		p->hashes = hs;
		p->cap_stacks = nc;
	}
	ps = &p->stacks[p->nstacks];
	memset(ps, 0, sizeof(*ps));
	ps->trace = *key;
	ps->trace.frames = NULL;
	if (key->nframes) {
		ps->trace.frames = malloc(key->nframes * sizeof(*frames));
		if (!ps->trace.frames)
			return -ENOMEM;
		memcpy(ps->trace.frames, frames, key->nframes * sizeof(*frames));
	}
	add_values(ps, v);
	p->hashes[p->nstacks] = h;
	p->last = p->nstacks;
	p->slots[j] = ++p->nstacks;
	return 0;
}

uint64_t profile__epoch(const struct profile *p)
{
	return p->epoch;
}

size_t profile__last_stack(const struct profile *p)
{
	return p->last;
}

int profile__add_to_stack(struct profile *p, size_t i,
			  const struct profile_values *v)
{
	if (i >= p->nstacks)
		return -EINVAL;
	add_values(&p->stacks[i], v);
	p->last = i;
	return 0;
}

int profile__add_values(struct profile *p, const struct trace *t,
			const struct profile_values *v)
{
	struct frame local[64];
	struct frame *frames = local;
	struct trace key = *t;
	int err = -ENOMEM;

	if (key.nframes > TRACE_MAX_FRAMES)
		key.nframes = TRACE_MAX_FRAMES;
	if (key.nframes > sizeof(local) / sizeof(local[0])) {
		frames = malloc(key.nframes * sizeof(*frames));
		if (!frames)
			return -ENOMEM;
	}
	if (key.nframes)
		memcpy(frames, t->frames, key.nframes * sizeof(*frames));
	key.frames = frames;
	if (!intern(p, &key.comm) || !intern(p, &key.thread) ||
	    !intern(p, &key.error_name) ||
	    !intern(p, &key.container_id) ||
	    !intern(p, &key.pod_uid) || !intern(p, &key.ev_class) ||
	    !intern(p, &key.service) || !intern(p, &key.process))
		goto cleanup;
	for (uint32_t i = 0; i < key.nframes; i++) {
		struct frame *f = &frames[i];

		if (!intern(p, &f->symbol) || !intern(p, &f->module) ||
		    !intern(p, &f->klass) || !intern(p, &f->method) ||
		    !intern(p, &f->signature) || !intern(p, &f->source) ||
		    !intern(p, &f->reason))
			goto cleanup;
	}

	err = add_key(p, &key, v);
cleanup:
	if (frames != local)
		free(frames);
	return err;
}

int profile__add_values_interned(struct profile *p, const struct trace *t,
				 const struct profile_values *v)
{
	struct trace key = *t;

	if (key.nframes > TRACE_MAX_FRAMES)
		key.nframes = TRACE_MAX_FRAMES;
	return add_key(p, &key, v);
}

int profile__add(struct profile *p, const struct trace *t, uint64_t count,
		 uint64_t weight_ns)
{
	struct profile_values v = { .count = count, .weight_ns = weight_ns };

	return profile__add_values(p, t, &v);
}

int profile__add_interned(struct profile *p, const struct trace *t,
			  uint64_t count, uint64_t weight_ns)
{
	struct profile_values v = { .count = count, .weight_ns = weight_ns };

	return profile__add_values_interned(p, t, &v);
}

void profile__set_time(struct profile *p, size_t i, uint64_t count,
		       uint64_t weight_ns)
{
	if (i < p->nstacks) {
		p->stacks[i].count = count;
		p->stacks[i].weight_ns = weight_ns;
	}
}

void profile__set_names(struct profile *p, size_t i, const char *service,
			const char *process)
{
	if (i < p->nstacks) {
		p->stacks[i].trace.service = service;
		p->stacks[i].trace.process = process;
	}
}
