// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Aggregation: keys, counts, copies, interning, order, growth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include <linux/types.h>
#include "profile/profile.h"
#include "sampler.h"
#include "util/strtab.h"
#include "trace.h"
#include "unit/writers_fixture.h"

/* a deep copy of t in heap memory the test frees and scribbles over */
struct heap_trace {
	struct trace t;
	char *strs[TRACE_MAX_FRAMES * 7 + 3];
	size_t nstrs;
};

static const char *dup_str(struct heap_trace *h, const char *s)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	assert_non_null(d);
	h->strs[h->nstrs++] = d;
	return d;
}

static struct heap_trace *heap_copy(const struct trace *t)
{
	struct heap_trace *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	h->t = *t;
	h->t.comm = dup_str(h, t->comm);
	h->t.thread = dup_str(h, t->thread);
	h->t.error_name = dup_str(h, t->error_name);
	h->t.frames = calloc(t->nframes + 1, sizeof(struct frame));
	assert_non_null(h->t.frames);
	for (uint32_t i = 0; i < t->nframes; i++) {
		struct frame *d = &h->t.frames[i];

		*d = t->frames[i];
		d->symbol = dup_str(h, d->symbol);
		d->module = dup_str(h, d->module);
		d->klass = dup_str(h, d->klass);
		d->method = dup_str(h, d->method);
		d->signature = dup_str(h, d->signature);
		d->source = dup_str(h, d->source);
		d->reason = dup_str(h, d->reason);
	}
	return h;
}

static void heap_free(struct heap_trace *h)
{
	for (size_t i = 0; i < h->nstrs; i++) {
		memset(h->strs[i], 'X', strlen(h->strs[i]));
		free(h->strs[i]);
	}
	memset(h->t.frames, 0xa5, h->t.nframes * sizeof(struct frame));
	free(h->t.frames);
	free(h);
}

static void assert_str_eq_or_null(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void assert_same_trace(const struct trace *a, const struct trace *b)
{
	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->tid, b->tid);
	assert_str_eq_or_null(a->comm, b->comm);
	assert_str_eq_or_null(a->thread, b->thread);
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->error, b->error);
	assert_str_eq_or_null(a->error_name, b->error_name);
	assert_int_equal(a->nframes, b->nframes);
	for (uint32_t i = 0; i < a->nframes; i++) {
		const struct frame *x = &a->frames[i], *y = &b->frames[i];

		assert_int_equal(x->type, y->type);
		assert_int_equal(x->comp_level, y->comp_level);
		assert_int_equal(x->flags, y->flags);
		assert_int_equal(x->bci, y->bci);
		assert_int_equal(x->line, y->line);
		assert_int_equal(x->pc, y->pc);
		assert_int_equal(x->offset, y->offset);
		assert_str_eq_or_null(x->symbol, y->symbol);
		assert_str_eq_or_null(x->module, y->module);
		assert_str_eq_or_null(x->klass, y->klass);
		assert_str_eq_or_null(x->method, y->method);
		assert_str_eq_or_null(x->signature, y->signature);
		assert_str_eq_or_null(x->source, y->source);
		assert_str_eq_or_null(x->reason, y->reason);
	}
}

/* the same content from separate copies aggregates into one stack */
static void test_aggregates_by_content(void **state)
{
	struct profile *p = profile__new();
	const struct profile_stack *ps;

	(void)state;
	assert_non_null(p);
	for (int i = 0; i < 3; i++) {
		struct heap_trace *h = heap_copy(&fx_traces[0].t);

		assert_int_equal(profile__add(p, &h->t, 2 + i, 1000), 0);
		heap_free(h);	/* the profile must not keep caller memory */
	}
	assert_int_equal(profile__nstacks(p), 1);
	ps = profile__stack(p, 0);
	assert_int_equal(ps->count, 2 + 3 + 4);
	assert_int_equal(ps->weight_ns, 3000);
	assert_same_trace(&ps->trace, &fx_traces[0].t);
	assert_null(profile__stack(p, 1));
	profile__free(p);
}

/* strings end up interned in the profile's strtab: equal pointers */
static void test_strings_interned(void **state)
{
	struct profile *p = profile__new();
	struct strtab *st;
	const struct trace *t0, *t1;

	(void)state;
	assert_non_null(p);
	assert_int_equal(profile__add(p, &fx_traces[0].t, 1, 0), 0);
	assert_int_equal(profile__add(p, &fx_traces[1].t, 1, 0), 0);
	st = profile__strtab(p);
	t0 = &profile__stack(p, 0)->trace;
	t1 = &profile__stack(p, 1)->trace;
	/* JavaCalls::call_helper and start_thread appear in both */
	assert_ptr_equal(t0->frames[10].symbol, t1->frames[9].symbol);
	assert_ptr_equal(t0->frames[13].module, t1->frames[11].module);
	assert_ptr_equal(t0->frames[6].klass, strtab__intern(st, "java.util.HashMap"));
	assert_ptr_equal(t0->comm, t1->comm);
	assert_ptr_not_equal(t0->frames, fx_traces[0].t.frames);
	profile__free(p);
}

/*
 * The same string pointer with other bytes (a caller's buffer reused, a
 * freed name whose address came back): a new name, never the one a cache
 * kept for that pointer; the same bytes again: the same stack.
 */
static void test_reused_string_memory(void **state)
{
	struct profile *p = profile__new();
	struct frame fr = { .type = FRAME_NON_JAVA };
	struct trace t = { .pid = 1, .tid = 1, .nframes = 1, .frames = &fr };
	char buf[32];

	(void)state;
	assert_non_null(p);
	fr.symbol = buf;
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 3; i++) {
			snprintf(buf, sizeof(buf), "fn_%d", i);
			assert_int_equal(profile__add(p, &t, 1, 0), 0);
		}
	}
	assert_int_equal(profile__nstacks(p), 3);
	for (int i = 0; i < 3; i++) {
		const struct profile_stack *ps = profile__stack(p, (size_t)i);

		snprintf(buf, sizeof(buf), "fn_%d", i);
		assert_string_equal(ps->trace.frames[0].symbol, buf);
		assert_ptr_not_equal(ps->trace.frames[0].symbol, buf);
		assert_int_equal(ps->count, 2);
	}
	profile__free(p);
}

/* each key field on its own separates stacks */
static void test_key_fields(void **state)
{
	struct profile *p = profile__new();
	struct frame fr[NELEM(fx_jni_frames)];
	struct trace t = fx_traces[1].t;
	size_t n = 0;

	(void)state;
	assert_non_null(p);
	memcpy(fr, fx_jni_frames, sizeof(fr));
	t.frames = fr;
#define ADD_EXPECT_NEW() do { \
		assert_int_equal(profile__add(p, &t, 1, 0), 0); \
		assert_int_equal(profile__nstacks(p), ++n); \
	} while (0)
	ADD_EXPECT_NEW();
	t.tid++;
	ADD_EXPECT_NEW();
	t.pid++;
	ADD_EXPECT_NEW();
	t.thread = "worker-2";
	ADD_EXPECT_NEW();
	t.kind = TRACE_KIND_JVM;
	ADD_EXPECT_NEW();
	t.error = -3;
	t.error_name = "ASGST_NOT_WALKABLE";
	ADD_EXPECT_NEW();
	fr[7].bci = 9;
	ADD_EXPECT_NEW();
	fr[7].comp_level = 4;
	ADD_EXPECT_NEW();
	fr[4].symbol = "hn_leaf2";
	ADD_EXPECT_NEW();
	fr[3].pc += 4;
	ADD_EXPECT_NEW();
	t.nframes--;
	ADD_EXPECT_NEW();
	/* every other field of the key, each alone (stacks are told apart by
	 * their hashes: each field must reach them) */
	t.comm = "other-comm";
	ADD_EXPECT_NEW();
	t.state++;
	ADD_EXPECT_NEW();
	t.event++;
	ADD_EXPECT_NEW();
	t.flags ^= 1;
	ADD_EXPECT_NEW();
	t.jvmti_state ^= 4;
	ADD_EXPECT_NEW();
	t.container_id = "c0ffee";
	ADD_EXPECT_NEW();
	t.pod_uid = "pod-1";
	ADD_EXPECT_NEW();
	fr[2].type ^= 1;
	ADD_EXPECT_NEW();
	fr[2].flags ^= 2;
	ADD_EXPECT_NEW();
	fr[2].line += 1;
	ADD_EXPECT_NEW();
	fr[2].code_pc += 1;
	ADD_EXPECT_NEW();
	fr[2].offset += 8;
	ADD_EXPECT_NEW();
	fr[2].module = "libother.so";
	ADD_EXPECT_NEW();
	fr[2].klass = "OtherClass";
	ADD_EXPECT_NEW();
	fr[2].method = "otherMethod";
	ADD_EXPECT_NEW();
	fr[2].signature = "()J";
	ADD_EXPECT_NEW();
	fr[2].source = "Other.java";
	ADD_EXPECT_NEW();
	fr[2].reason = "a reason";
	ADD_EXPECT_NEW();
	/* the same frames in another order; a pc apart in its top bit */
	{
		struct frame tmp = fr[0];

		fr[0] = fr[1];
		fr[1] = tmp;
		ADD_EXPECT_NEW();
		fr[1].pc ^= 1ull << 63;
		ADD_EXPECT_NEW();
	}
	/* and back to the very first: counted on the first stack */
	t = fx_traces[1].t;
	assert_int_equal(profile__add(p, &t, 5, 0), 0);
	assert_int_equal(profile__nstacks(p), n);
	assert_int_equal(profile__stack(p, 0)->count, 6);
	for (size_t i = 1; i < n; i++)
		assert_int_equal(profile__stack(p, i)->count, 1);
	profile__free(p);
}

/* many distinct stacks: insertion order kept across table growth */
static void test_many_stacks_order(void **state)
{
	enum { N = 20000 };
	struct profile *p = profile__new();
	struct frame fr[NELEM(fx_native_frames)];
	struct trace t = fx_traces[4].t;

	(void)state;
	assert_non_null(p);
	memcpy(fr, fx_native_frames, sizeof(fr));
	t.frames = fr;
	for (int round = 0; round < 2; round++) {
		for (uint32_t i = 0; i < N; i++) {
			char sym[32];

			snprintf(sym, sizeof(sym), "fn_%u", i);
			fr[6].symbol = sym;
			fr[6].offset = 0x1000 + i;
			assert_int_equal(profile__add(p, &t, i + 1, 0), 0);
		}
	}
	assert_int_equal(profile__nstacks(p), N);
	for (uint32_t i = 0; i < N; i++) {
		const struct profile_stack *ps = profile__stack(p, i);
		char sym[32];

		snprintf(sym, sizeof(sym), "fn_%u", i);
		assert_string_equal(ps->trace.frames[6].symbol, sym);
		assert_int_equal(ps->trace.frames[6].offset, 0x1000 + i);
		assert_int_equal(ps->count, 2 * (i + 1));
	}
	profile__free(p);
}

/* the fixture profile holds every trace, in order, with its count */
static void test_fixture_profile(void **state)
{
	struct profile *p = fx_profile();

	(void)state;
	assert_non_null(p);
	assert_int_equal(profile__nstacks(p), FX_NTRACES);
	for (size_t i = 0; i < FX_NTRACES; i++) {
		assert_same_trace(&profile__stack(p, i)->trace, &fx_traces[i].t);
		assert_int_equal(profile__stack(p, i)->count, fx_traces[i].count);
	}
	assert_int_equal(profile__meta_const(p)->frequency_hz, 99);
	profile__free(p);
}

/* no frames, and more frames than a trace may have */
static void test_frame_count_limits(void **state)
{
	struct profile *p = profile__new();
	struct frame *big = calloc(TRACE_MAX_FRAMES + 10, sizeof(*big));
	struct trace t = { .pid = 1, .tid = 1, .comm = "x", .thread = "x" };

	(void)state;
	assert_non_null(p);
	assert_non_null(big);
	assert_int_equal(profile__add(p, &t, 1, 0), 0);
	assert_int_equal(profile__stack(p, 0)->trace.nframes, 0);
	for (int i = 0; i < TRACE_MAX_FRAMES + 10; i++) {
		big[i].type = FRAME_NON_JAVA;
		big[i].pc = 0x400000 + i;
		big[i].symbol = "recurse";
	}
	t.frames = big;
	t.nframes = TRACE_MAX_FRAMES + 10;
	assert_int_equal(profile__add(p, &t, 1, 0), 0);
	assert_int_equal(profile__nstacks(p), 2);
	assert_int_equal(profile__stack(p, 1)->trace.nframes, TRACE_MAX_FRAMES);
	assert_int_equal(profile__stack(p, 1)->trace.frames[TRACE_MAX_FRAMES - 1].pc,
			 0x400000 + TRACE_MAX_FRAMES - 1);
	free(big);
	profile__free(p);
}

/* a stack's values: summed per key; event and class are in the key */
static void test_values_and_event_key(void **state)
{
	struct profile *p = profile__new();
	struct trace t = fx_events[0].t, other;
	struct profile_values v = { .count = 1, .alloc_bytes = 1000,
				    .alloc_objects = 2 };
	char cls[] = "byte[]";	/* not the fixture's pointer: interned */
	const struct profile_stack *ps;

	(void)state;
	assert_non_null(p);
	t.ev_class = cls;
	assert_int_equal(profile__add_values(p, &t, &v), 0);
	assert_int_equal(profile__add_values(p, &t, &v), 0);
	assert_int_equal(profile__nstacks(p), 1);
	ps = profile__stack(p, 0);
	assert_int_equal(ps->count, 2);
	assert_int_equal(ps->alloc_bytes, 2000);
	assert_int_equal(ps->alloc_objects, 4);
	assert_int_equal(ps->weight_ns, 0);
	assert_string_equal(ps->trace.ev_class, "byte[]");
	assert_ptr_not_equal(ps->trace.ev_class, cls);
	/* allocations weigh their bytes, whatever the time family does */
	assert_int_equal(profile__stack_value(p, ps), 2000);

	/* another class, another stack */
	other = t;
	other.ev_class = "int[]";
	assert_int_equal(profile__add_values(p, &other, &v), 0);
	assert_int_equal(profile__nstacks(p), 2);
	/* the same frames as a lock: another stack, weighed in ns */
	other = t;
	other.event = TRACE_EV_LOCK;
	v = (struct profile_values){ .count = 1, .weight_ns = 5000 };
	assert_int_equal(profile__add_values(p, &other, &v), 0);
	assert_int_equal(profile__nstacks(p), 3);
	ps = profile__stack(p, 2);
	assert_int_equal(profile__stack_value(p, ps), 5000);
	assert_int_equal(ps->alloc_bytes, 0);
	/* as cpu: a fourth, weighed in samples (no off-CPU time) */
	other.event = TRACE_EV_CPU;
	other.ev_class = NULL;
	assert_int_equal(profile__add(p, &other, 3, 0), 0);
	assert_int_equal(profile__nstacks(p), 4);
	assert_false(profile__timed(p));
	assert_int_equal(profile__stack_value(p, profile__stack(p, 3)), 3);
	/* with off-CPU time in: cpu in us, allocations still bytes */
	profile__meta(p)->events = ASGST_EVMASK_CPU | ASGST_EVMASK_OFFCPU |
				   ASGST_EVMASK_ALLOC;
	profile__meta(p)->frequency_hz = 100;
	assert_true(profile__timed(p));
	assert_int_equal(profile__stack_value(p, profile__stack(p, 3)), 30000);
	assert_int_equal(profile__stack_value(p, profile__stack(p, 0)), 2000);
	profile__free(p);
}

/* interned adds: the strings are the profile's own, values summed */
static void test_values_interned(void **state)
{
	struct profile *p = profile__new();
	struct strtab *st;
	struct trace t = fx_events[2].t;
	struct frame fr[NELEM(fx_lock_frames)];
	struct profile_values v = fx_events[2].v;

	(void)state;
	assert_non_null(p);
	st = profile__strtab(p);
	memcpy(fr, fx_lock_frames, sizeof(fr));
	for (size_t i = 0; i < NELEM(fr); i++) {
		fr[i].klass = strtab__intern(st, fr[i].klass);
		fr[i].method = strtab__intern(st, fr[i].method);
		fr[i].signature = strtab__intern(st, fr[i].signature);
		fr[i].source = strtab__intern(st, fr[i].source);
	}
	t.frames = fr;
	t.comm = strtab__intern(st, t.comm);
	t.thread = strtab__intern(st, t.thread);
	t.ev_class = strtab__intern(st, t.ev_class);
	assert_int_equal(profile__add_values_interned(p, &t, &v), 0);
	assert_int_equal(profile__add_values(p, &fx_events[2].t, &v), 0);
	assert_int_equal(profile__nstacks(p), 1);
	assert_int_equal(profile__stack(p, 0)->count, 2 * v.count);
	assert_int_equal(profile__stack(p, 0)->weight_ns, 2 * v.weight_ns);
	profile__free(p);
}

/* a new period: the JVM events' figures zeroed too */
static void test_reset_jvm_meta(void **state)
{
	struct profile *p = fx_jvm_profile(ASGST_EVMASK_CPU |
					   ASGST_EVMASK_ALLOC |
					   ASGST_EVMASK_LOCK);
	const struct profile_meta *m;

	(void)state;
	assert_non_null(p);
	assert_int_equal(profile__nstacks(p), FX_NTRACES + FX_NEVENTS);
	profile__reset(p);
	m = profile__meta_const(p);
	assert_int_equal(profile__nstacks(p), 0);
	assert_int_equal(m->events, ASGST_EVMASK_CPU | ASGST_EVMASK_ALLOC |
			 ASGST_EVMASK_LOCK);
	assert_int_equal(m->alloc_events, 0);
	assert_int_equal(m->lock_events, 0);
	assert_int_equal(m->jvm_ev_lost, 0);
	assert_int_equal(m->jvm_ev_throttled, 0);
	assert_int_equal(m->alloc_interval, 0);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aggregates_by_content),
		cmocka_unit_test(test_strings_interned),
		cmocka_unit_test(test_reused_string_memory),
		cmocka_unit_test(test_key_fields),
		cmocka_unit_test(test_many_stacks_order),
		cmocka_unit_test(test_fixture_profile),
		cmocka_unit_test(test_frame_count_limits),
		cmocka_unit_test(test_values_and_event_key),
		cmocka_unit_test(test_values_interned),
		cmocka_unit_test(test_reset_jvm_meta),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
