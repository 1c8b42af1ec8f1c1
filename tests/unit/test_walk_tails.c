// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The walk's native tails (decode/walk.h): a tail kept from one walk is
 * replayed by a later walk of the same thread entering at the same frame
 * with the same bytes where the first one read, under the same stamp and
 * horizon, with room for its frames; anything else walks again. And the
 * stack memo (profile/stack_memo.h): a key's stack comes back under the
 * stamps it was kept with, at sample times past the code map's horizon.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/walk.h"
#include "profile/profile.h"
#include "profile/stack_memo.h"
#include "trace.h"

#define LO	0x7ffd00001000ull
#define WIN	4096

struct fixture {
	struct asgst_sample_hdr h;
	struct sample s;
	uint8_t win[WIN];
	ASGST_CallFrame frames[64];
	struct walk w;
	uint64_t stamp[3];
};

static void fixture_init(struct fixture *fx)
{
	memset(fx, 0, sizeof(*fx));
	fx->h.pid = 100;
	fx->h.tid = 101;
	fx->h.ktime_ns = 5000;
	fx->h.sp = LO;
	fx->h.window_len = WIN;
	for (size_t i = 0; i < WIN; i++)
		fx->win[i] = (uint8_t)(i * 7);
	fx->s.hdr = &fx->h;
	fx->s.window = fx->win;
	fx->stamp[0] = 1;
	fx->stamp[1] = 2;
	fx->stamp[2] = 3;
}

/* a walk of fx's sample as decode.c starts one, with the tails t */
static void walk_begin(struct fixture *fx, struct walk_tails *t,
		       uint64_t horizon)
{
	struct walk *w = &fx->w;

	memset(w, 0, sizeof(*w));
	w->s = &fx->s;
	w->t = fx->h.ktime_ns;
	w->lo = fx->h.sp;
	w->hi = fx->h.sp + fx->h.window_len;
	w->win = fx->s.window;
	w->options = ASGST_INCLUDE_NON_JAVA_FRAMES;
	w->frames = fx->frames;
	w->depth = 64;
	w->tails = t;
	w->tail_stamp = fx->stamp;
	w->tail_horizon = horizon;
}

static const struct wframe entry = { .pc = 0x401000, .sp = LO + 0x800,
				     .fp = LO + 0x900, .top = false };
static const uint64_t tail_pcs[] = { 0x401000, 0x402000, 0x403000 };

/* the walk from entry to the stack's end: three frames, reads at
 * [sp + 0x100, sp + 0x200] */
static void walk_tail(struct walk *w)
{
	uint64_t v;

	assert_false(walk_tail_replay(w, &entry));
	walk_tail_start(w, &entry);
	for (size_t i = 0; i < 3; i++) {
		assert_true(walk_push_native(w, tail_pcs[i]));
		w->steps++;
		assert_true(walk_read(w, entry.sp + 0x100 + i * 0x80, &v));
	}
	w->done = true;
	walk_tail_keep(w);
}

static bool replays(struct fixture *fx, struct walk_tails *t,
		    uint64_t horizon, int32_t n0)
{
	walk_begin(fx, t, horizon);
	fx->w.n = n0;
	return walk_tail_replay(&fx->w, &entry);
}

static void test_tail_replay(void **state)
{
	struct walk_tails *t = walk_tails__new();
	struct fixture *fx = calloc(1, sizeof(*fx));

	(void)state;
	assert_non_null(t);
	assert_non_null(fx);
	fixture_init(fx);
	walk_begin(fx, t, 0);
	fx->w.n = 5;
	walk_tail(&fx->w);

	/* the same: the frames pushed after what the walk had, done */
	assert_true(replays(fx, t, 0, 7));
	assert_true(fx->w.done);
	assert_int_equal(fx->w.n, 10);
	assert_int_equal(fx->w.steps, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal((uint64_t)(uintptr_t)
				 fx->frames[7 + i].non_java_frame.pc,
				 tail_pcs[i]);
	assert_int_equal(walk_tails__hits(t), 1);

	/* a byte where the walk read: walked again */
	fx->win[0x800 + 0x180] ^= 1;
	assert_false(replays(fx, t, 0, 0));
	fx->win[0x800 + 0x180] ^= 1;
	/* bytes it did not read (below, above): the same tail */
	fx->win[0x800 + 0x0f8] ^= 1;
	fx->win[0x800 + 0x208] ^= 1;
	assert_true(replays(fx, t, 0, 0));

	/* another stamp, another thread, another entry frame */
	fx->stamp[2] = 4;
	assert_false(replays(fx, t, 0, 0));
	fx->stamp[2] = 3;
	fx->h.tid = 102;
	assert_false(replays(fx, t, 0, 0));
	fx->h.tid = 101;
	walk_begin(fx, t, 0);
	{
		struct wframe other = entry;

		other.sp += 8;
		assert_false(walk_tail_replay(&fx->w, &other));
		other = entry;
		other.top = true;
		assert_false(walk_tail_replay(&fx->w, &other));
	}
	/* the code map has records newer than the sample, or the tail */
	assert_false(replays(fx, t, fx->h.ktime_ns + 1, 0));
	/* no room for its frames: the walk finds the depth itself */
	assert_false(replays(fx, t, 0, 62));
	/* the window shorter than the bytes it hangs on */
	fx->h.window_len = 0x900;
	assert_false(replays(fx, t, 0, 0));
	fx->h.window_len = WIN;
	assert_true(replays(fx, t, 0, 0));
	assert_int_equal(walk_tails__hits(t), 3);

	/* kept only by a walk that reached the end from where it started:
	 * one that left for Java frames keeps nothing, nor does a keep
	 * without a start */
	fx->h.tid = 103;
	walk_begin(fx, t, 0);
	walk_tail_start(&fx->w, &entry);
	assert_true(walk_push_native(&fx->w, 0x401000));
	assert_false(replays(fx, t, 0, 0));
	walk_begin(fx, t, 0);
	walk_tail_keep(&fx->w);
	assert_false(replays(fx, t, 0, 0));
	assert_int_equal(walk_tails__hits(t), 3);
	free(fx);
	walk_tails__free(t);
}

static void test_stack_memo(void **state)
{
	struct stack_memo *m = stack_memo__new();
	struct stack_memo_stamp st = { .prof_epoch = 0, .cm_stamp = 9,
				       .names_gen = 4, .names_epoch = 1,
				       .comm = "java" };
	struct stack_memo_stamp other;
	struct decode_key k = { 0x1234, 0x5678 }, k2 = { 0x1234, 0x5679 };
	struct stack_memo_stats ms;
	size_t stack = 0;
	bool err = true;

	(void)state;
	assert_non_null(m);
	assert_false(stack_memo__find(m, &k, &st, 100, 0, &stack, &err));
	stack_memo__keep(m, &k, &st, 100, 42, false);
	assert_true(stack_memo__find(m, &k, &st, 200, 50, &stack, &err));
	assert_int_equal(stack, 42);
	assert_false(err);
	/* the other half of the key, any stamp, the map's horizon */
	assert_false(stack_memo__find(m, &k2, &st, 200, 50, &stack, &err));
	other = st;
	other.cm_stamp = 10;
	assert_false(stack_memo__find(m, &k, &other, 200, 50, &stack, &err));
	other = st;
	other.prof_epoch = 1;
	assert_false(stack_memo__find(m, &k, &other, 200, 50, &stack, &err));
	other = st;
	other.names_gen = 5;
	assert_false(stack_memo__find(m, &k, &other, 200, 50, &stack, &err));
	other = st;
	other.comm = "java2";
	assert_false(stack_memo__find(m, &k, &other, 200, 50, &stack, &err));
	assert_false(stack_memo__find(m, &k, &st, 200, 150, &stack, &err));
	assert_false(stack_memo__find(m, &k, &st, 90, 95, &stack, &err));
	/* without a code map no horizon holds */
	other = st;
	other.cm_stamp = 0;
	stack_memo__keep(m, &k, &other, 100, 43, true);
	assert_true(stack_memo__find(m, &k, &other, 50, 150, &stack, &err));
	assert_int_equal(stack, 43);
	assert_true(err);
	/* no maps known for the process: nothing kept or found */
	other.names_gen = 0;
	stack_memo__keep(m, &k2, &other, 100, 44, false);
	assert_false(stack_memo__find(m, &k2, &other, 100, 0, &stack, &err));
	stack_memo__stats(m, &ms);
	assert_int_equal(ms.hits, 2);
	assert_int_equal(ms.kept, 2);
	stack_memo__free(m);
}

/* adding to a stack by index, as a memo hit does, is adding the trace */
static void test_profile_add_to_stack(void **state)
{
	struct profile *p = profile__new();
	struct frame f = { .type = FRAME_NON_JAVA, .pc = 0x1234,
			   .bci = -1, .line = -1, .comp_level = -1 };
	struct trace t = { .pid = 1, .tid = 2, .frames = &f, .nframes = 1 };
	struct profile_values v = { .count = 1, .weight_ns = 10 };
	size_t i;

	(void)state;
	assert_non_null(p);
	assert_int_equal(profile__last_stack(p), SIZE_MAX);
	assert_int_equal(profile__add_values(p, &t, &v), 0);
	i = profile__last_stack(p);
	assert_int_equal(i, 0);
	assert_int_equal(profile__add_to_stack(p, i, &v), 0);
	assert_int_equal(profile__add_values(p, &t, &v), 0);
	assert_int_equal(profile__last_stack(p), 0);
	assert_int_equal(profile__nstacks(p), 1);
	assert_int_equal(profile__stack(p, 0)->count, 3);
	assert_int_equal(profile__stack(p, 0)->weight_ns, 30);
	assert_int_equal(profile__add_to_stack(p, 1, &v), -EINVAL);
	assert_int_equal(profile__epoch(p), 0);
	profile__reset(p);
	assert_int_equal(profile__epoch(p), 1);
	assert_int_equal(profile__last_stack(p), SIZE_MAX);
	assert_int_equal(profile__add_to_stack(p, 0, &v), -EINVAL);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tail_replay),
		cmocka_unit_test(test_stack_memo),
		cmocka_unit_test(test_profile_add_to_stack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
