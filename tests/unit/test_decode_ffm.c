// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Java <-> C crossings in the decoder, on real data (tests/data/decode/):
 *  - ffm-25: tests/workloads/jdk25/FfmChain.java on JDK 25 (threads "ffm":
 *    plain FFM downcall, "ffmcrit": Linker.Option.critical, "ffmup":
 *    Java -> downcall -> C -> upcall stub -> Java), captured without the
 *    JavaThread words; ffm-25.syms names its C frames offline;
 *  - jni-17: JniChain on JDK 17 (threads "jni" and "jnicb").
 * Checked: the barrier frames and their FRAME_F_DOWNCALL_* / _UPCALL_*
 * flags, the ASGST_FF_* frame_flags of the API, the FFM frame's stub pc,
 * whole chains across the upcall, critical vs plain from the JavaThread
 * state (written into copies of the samples) overriding the stub-size
 * rule, and the upcall's saved anchor: with the C frames between the two
 * stubs made unwalkable the Java callers still come out.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include <cmocka.h>

#include "decode/asgst.h"
#include "jvm/codemap.h"
#include "decode/decode.h"
#include "util/strtab.h"
#include "unit/decode_data.h"

#define DATA "tests/data/decode"

static struct frame frames[TRACE_MAX_FRAMES];

static const char *thread_name(const struct dd_set *d, uint32_t tid)
{
	const struct codemap_thread *th = codemap__thread(d->cm, tid, 0);

	if (!th)
		for (size_t i = 0; i < codemap__nthreads(d->cm); i++)
			if (codemap__thread_at(d->cm, i)->tid == tid)
				th = codemap__thread_at(d->cm, i);
	return th && th->name ? th->name : "";
}

static bool is_glue(const struct frame *f)
{
	return (f->type == FRAME_JAVA || f->type == FRAME_JAVA_INLINED) &&
	       f->klass && (!strncmp(f->klass, "java.lang.invoke.", 17) ||
			    !strncmp(f->klass, "jdk.internal.foreign.", 21));
}

static bool is_method(const struct frame *f, const char *k, const char *m)
{
	return (f->type == FRAME_JAVA || f->type == FRAME_JAVA_INLINED) &&
	       f->klass && f->method && !strcmp(f->klass, k) &&
	       !strcmp(f->method, m);
}

static bool is_sym(const struct frame *f, const char *sym)
{
	return f->type == FRAME_NON_JAVA && f->symbol && !strcmp(f->symbol, sym);
}

/* the frames from i on: [glue], then the Java methods in order, then
 * Thread.runWith/run; the frames after it are the thread's root (C) */
static bool java_tail(const struct trace *t, uint32_t i, const char *m[][2],
		      int nm)
{
	while (i < t->nframes && is_glue(&t->frames[i]))
		i++;
	for (int k = 0; k < nm; k++, i++)
		if (i >= t->nframes || !is_method(&t->frames[i], m[k][0], m[k][1]))
			return false;
	if (i < t->nframes && is_method(&t->frames[i], "java.lang.Thread",
					"runWith"))
		i++;
	if (i >= t->nframes || !is_method(&t->frames[i], "java.lang.Thread", "run"))
		return false;
	for (i++; i < t->nframes; i++)
		if (t->frames[i].type != FRAME_NON_JAVA ||
		    (t->frames[i].flags & (FRAME_F_DOWNCALL_MASK |
					   FRAME_F_UPCALL_MASK)))
			return false;
	return true;
}

/* index of the FFM barrier frame, -1 if none */
static int ffm_barrier(const struct trace *t)
{
	for (uint32_t i = 0; i < t->nframes; i++)
		if (t->frames[i].type == FRAME_JAVA_NATIVE &&
		    (t->frames[i].flags & FRAME_F_DOWNCALL_FFM))
			return (int)i;
	return -1;
}

/* the C frames right above frame i, root first, must start with want */
static bool c_above(const struct trace *t, int i, const char *const *want,
		    int n)
{
	for (int k = 0; k < n; k++) {
		int j = i - 1 - k;

		if (j < 0 || !is_sym(&t->frames[j], want[k]))
			return false;
	}
	return true;
}

/* a downcall chain of thread ffm or (crit_chain) ffmcrit: C chain,
 * barrier flagged critical or not (crit), Java callers */
static bool downcall_ok(const struct trace *t, bool crit_chain, bool crit)
{
	static const char *plain_c[] = { "ffm_chain", "fc_a", "fc_b", "fc_leaf" };
	static const char *crit_c[] = { "ffm_crit_chain", "fk_a", "fk_b",
					"fk_leaf" };
	static const char *plain_j[][2] = {
		{ "FfmChain", "p3" }, { "FfmChain", "p2" }, { "FfmChain", "p1" },
		{ "FfmChain$Plain", "run" } };
	static const char *crit_j[][2] = {
		{ "FfmChain", "q3" }, { "FfmChain", "q2" }, { "FfmChain", "q1" },
		{ "FfmChain$Crit", "run" } };
	int b = ffm_barrier(t);
	const struct frame *f;

	if (t->error || b < 0)
		return false;
	f = &t->frames[b];
	if (f->klass || !f->symbol || strcmp(f->symbol, "nep_invoker_blob") ||
	    !!(f->flags & FRAME_F_DOWNCALL_CRIT) != crit ||
	    !c_above(t, b, crit_chain ? crit_c : plain_c, 4))
		return false;
	return java_tail(t, (uint32_t)b + 1, crit_chain ? crit_j : plain_j, 4);
}

/* Java -> downcall -> C -> upcall -> Java, one stack (thread ffmup) */
static bool upcall_ok(const struct trace *t, bool c_frames)
{
	static const char *up_j[][2] = {
		{ "FfmChain", "u2" }, { "FfmChain", "u1" },
		{ "FfmChain$Up", "run" } };
	static const char *up_c[] = { "ffm_callback", "fu_a", "fu_b" };
	uint32_t i = 0;
	int b = ffm_barrier(t), s;

	if (t->error || b < 0 || !is_method(&t->frames[0], "FfmChain", "upLeaf"))
		return false;
	for (i = 1; i < t->nframes && is_glue(&t->frames[i]); i++)
		;
	if (i >= t->nframes || !is_sym(&t->frames[i], "upcall_stub") ||
	    !(t->frames[i].flags & FRAME_F_UPCALL_FFM))
		return false;
	s = (int)i;
	if (c_frames ? !c_above(t, b, up_c, 3) || b - s != 4 :
		       b - s < 2 || t->frames[b - 1].pc)
		return false;
	if (t->frames[b].flags & FRAME_F_DOWNCALL_CRIT)
		return false;
	return java_tail(t, (uint32_t)b + 1, up_j, 3);
}

static const struct cm_vm_consts *vm_of(const struct dd_set *d)
{
	return codemap__vm(d->cm);
}

/* decode a copy of sample s, with the JavaThread words set */
static void trace_with_state(struct decoder *dec, const struct dd_set *d,
			     const struct dd_rec *r, int32_t state,
			     uint64_t last_sp, struct trace *t)
{
	uint64_t *copy = malloc((r->len + 7) / 8 * 8 + 8);
	struct asgst_sample_hdr *h;
	struct sample s;
	const char *why;

	assert_non_null(copy);
	memcpy(copy, r->data, r->len);
	h = (struct asgst_sample_hdr *)copy;
	h->flags |= ASGST_SF_THREAD_INFO;
	h->jt_state = (uint32_t)state;
	h->jt_last_sp = last_sp;
	h->jt_last_pc = h->jt_last_fp = h->jt_cont_entry = 0;
	assert_int_equal(sample__parse(copy, r->len, &s, &why), 0);
	decoder__trace(dec, &s, d->cm, true, t, frames, TRACE_MAX_FRAMES);
	/* the frames' strings live in the map and the strtab, not the copy */
	free(copy);
}

static void test_ffm_chains(void **state)
{
	struct dd_set d;
	struct dd_syms sy;
	struct strtab *st = strtab__new();
	struct decoder *dec = decoder__new(NULL, st);
	char err[256];
	int tot[3] = { 0 }, good[3] = { 0 }, tstate = 0, gstate = 0;
	int tcrit = 0, gcrit = 0;

	(void)state;
	if (dd_load(&d, DATA, "ffm-25", err, sizeof(err)))
		fail_msg("ffm-25: %s", err);
	assert_int_equal(dd_load_syms(DATA, "ffm-25", &sy), 0);
	for (size_t i = 0; i < d.n; i++) {
		const struct dd_rec *r = &d.recs[i];
		const char *tn = thread_name(&d, r->s.hdr->ns_tid);
		const char *top = dd_sym_of(&sy, r->s.hdr->ip, false);
		struct trace t;
		int k = !strcmp(tn, "ffm") ? 0 : !strcmp(tn, "ffmcrit") ? 1 :
			!strcmp(tn, "ffmup") ? 2 : -1;
		bool ok;

		if (k < 0)
			continue;
		/* the data has no JavaThread words: critical by stub size */
		assert_false(r->s.hdr->flags & ASGST_SF_THREAD_INFO);
		decoder__trace(dec, &r->s, d.cm, true, &t, frames,
			       TRACE_MAX_FRAMES);
		dd_name_c_frames(&sy, &t);
		ok = k == 2 ? upcall_ok(&t, true) :
			     downcall_ok(&t, k == 1, k == 1);
		tot[k]++;
		good[k] += ok;
		if (!ok || k == 2 || !top)
			continue;
		/*
		 * In the C code: the thread's state decides, whatever the
		 * stub's size: in Java = critical, in native = plain.
		 */
		tstate++;
		trace_with_state(dec, &d, r, vm_of(&d)->thread_state_in_java, 0,
				 &t);
		dd_name_c_frames(&sy, &t);
		ok = downcall_ok(&t, k == 1, true) &&
		     t.state == TRACE_STATE_IN_JAVA;
		trace_with_state(dec, &d, r, vm_of(&d)->thread_state_in_native, 0,
				 &t);
		dd_name_c_frames(&sy, &t);
		gstate += ok && downcall_ok(&t, k == 1, false) &&
			  t.state == TRACE_STATE_IN_NATIVE;
		if (k == 1)
			tcrit++, gcrit += ok;
	}
	print_message("ffm-25: ffm %d/%d, ffmcrit %d/%d, ffmup %d/%d exact; "
		      "by thread state %d/%d\n", good[0], tot[0], good[1], tot[1],
		      good[2], tot[2], gstate, tstate);
	for (int k = 0; k < 3; k++) {
		assert_true(tot[k] >= 50);
		assert_true(good[k] * 100 >= tot[k] * 95);
	}
	assert_true(tstate >= 50 && tcrit >= 20);
	assert_int_equal(gstate, tstate);
	assert_int_equal(gcrit, tcrit);
	dd_free(&d);
	decoder__free(dec);
	strtab__free(st);
}

/*
 * The upcall stub's saved anchor: break the frame-pointer chain of the C
 * code between the upcall and the downcall stub (fu_b's saved rbp) and the
 * walk resumes at the anchor the upcall saved, the downcall stub: the Java
 * callers still come out, with the skipped C frames as one pc-0 frame.
 */
static void test_ffm_upcall_anchor(void **state)
{
	struct dd_set d;
	struct dd_syms sy;
	struct strtab *st = strtab__new();
	struct decoder *dec = decoder__new(NULL, st);
	char err[256];
	int tried = 0, good = 0;

	(void)state;
	if (dd_load(&d, DATA, "ffm-25", err, sizeof(err)))
		fail_msg("ffm-25: %s", err);
	assert_int_equal(dd_load_syms(DATA, "ffm-25", &sy), 0);
	for (size_t i = 0; i < d.n; i++) {
		struct dd_rec *r = &d.recs[i];
		const struct asgst_sample_hdr *h = r->s.hdr;
		uint8_t *win = (uint8_t *)r->s.window;
		struct trace t;
		uint64_t w0, w1;
		uint8_t *orig;
		int hits = 0;

		if (strcmp(thread_name(&d, h->ns_tid), "ffmup"))
			continue;
		decoder__trace(dec, &r->s, d.cm, true, &t, frames,
			       TRACE_MAX_FRAMES);
		dd_name_c_frames(&sy, &t);
		if (!upcall_ok(&t, true))
			continue;
		/*
		 * fu_b's frame record, [saved rbp][return into fu_a]: every
		 * pair that looks like it (stale copies too) gets a saved
		 * rbp of 0, below every frame
		 */
		orig = malloc(h->window_len);
		assert_non_null(orig);
		memcpy(orig, win, h->window_len);
		for (size_t o = 0; o + 16 <= h->window_len; o += 8) {
			memcpy(&w0, win + o, 8);
			memcpy(&w1, win + o + 8, 8);
			if (w0 > h->sp + o && dd_sym_of(&sy, w1, true) &&
			    !strcmp(dd_sym_of(&sy, w1, true), "fu_a")) {
				memset(win + o, 0, 8);
				hits++;
			}
		}
		if (hits)
			decoder__trace(dec, &r->s, d.cm, true, &t, frames,
				       TRACE_MAX_FRAMES);
		memcpy(win, orig, h->window_len);
		free(orig);
		if (!hits)
			continue;
		dd_name_c_frames(&sy, &t);
		tried++;
		good += upcall_ok(&t, false);
	}
	print_message("ffm-25: upcall anchor: %d/%d whole\n", good, tried);
	assert_true(tried >= 50);
	assert_true(good * 100 >= tried * 95);
	dd_free(&d);
	decoder__free(dec);
	strtab__free(st);
}

/* the API: ASGST_FF_* per frame, the FFM frame's method = its stub's pc */
static void test_ffm_api_flags(void **state)
{
	static ASGST_CallFrame fr[TRACE_MAX_FRAMES];
	static uint16_t ff[TRACE_MAX_FRAMES];
	struct dd_set d;
	char err[256];
	int seen_plain = 0, seen_crit = 0, seen_up = 0;

	(void)state;
	if (dd_load(&d, DATA, "ffm-25", err, sizeof(err)))
		fail_msg("ffm-25: %s", err);
	for (size_t i = 0; i < d.n; i++) {
		const char *tn = thread_name(&d, d.recs[i].s.hdr->ns_tid);
		struct asgst_ctx ctx;
		ASGST_CallTrace ct = { .frames = fr };
		int n;

		if (strncmp(tn, "ffm", 3))
			continue;
		asgst_ctx__init(&ctx, d.cm);
		ctx.frame_flags = ff;
		memset(ff, 0xff, sizeof(ff));
		n = asgst_decode(&ctx, &d.recs[i].s, &ct, TRACE_MAX_FRAMES,
				 ASGST_INCLUDE_NON_JAVA_FRAMES);
		for (int k = 0; k < n; k++) {
			const struct codemap_blob *b;

			/* every written frame's flags were written */
			assert_true(!(ff[k] & ~0x1f));
			if (ff[k] & ASGST_FF_DOWNCALL_FFM) {
				uint64_t pc = fr[k].java_frame.method;

				assert_int_equal(fr[k].type,
						 ASGST_FRAME_JAVA_NATIVE);
				b = codemap__find(d.cm, pc, 0);
				assert_non_null(b);
				assert_int_equal(b->kind, CM_STUB_NEP_INVOKER);
				assert_true(pc > b->start && pc < b->end);
				if (ff[k] & ASGST_FF_DOWNCALL_CRIT)
					seen_crit += !strcmp(tn, "ffmcrit");
				else
					seen_plain += strcmp(tn, "ffmcrit") != 0;
				/* no critical downcall outside ffmcrit */
				assert_false((ff[k] & ASGST_FF_DOWNCALL_CRIT) &&
					     strcmp(tn, "ffmcrit"));
			}
			if (ff[k] & ASGST_FF_UPCALL_FFM) {
				assert_int_equal(fr[k].type, ASGST_FRAME_NON_JAVA);
				seen_up += !strcmp(tn, "ffmup");
			}
			assert_false(ff[k] & (ASGST_FF_DOWNCALL_JNI |
					      ASGST_FF_UPCALL_JNI));
		}
	}
	assert_true(seen_plain >= 50 && seen_crit >= 50 && seen_up >= 50);
	dd_free(&d);
}

/* JNI: the native methods are JNI downcalls, the call stub of the JNI
 * callback an upcall, the thread's own first entry neither */
static void test_jni_flags(void **state)
{
	struct dd_set d;
	struct strtab *st = strtab__new();
	struct decoder *dec = decoder__new(NULL, st);
	char err[256];
	int tot = 0, good = 0;

	(void)state;
	if (dd_load(&d, DATA, "jni-17", err, sizeof(err)))
		fail_msg("jni-17: %s", err);
	for (size_t i = 0; i < d.n; i++) {
		const char *tn = thread_name(&d, d.recs[i].s.hdr->ns_tid);
		bool cb = !strcmp(tn, "jnicb");
		int natives = 0, jni = 0, up = 0, stubs = 0, last_stub = -1;
		struct trace t;

		if (!cb && strcmp(tn, "jni"))
			continue;
		decoder__trace(dec, &d.recs[i].s, d.cm, true, &t, frames,
			       TRACE_MAX_FRAMES);
		if (t.error)
			continue;
		tot++;
		for (uint32_t k = 0; k < t.nframes; k++) {
			const struct frame *f = &t.frames[k];

			if (f->type == FRAME_JAVA_NATIVE) {
				natives++;
				jni += (f->flags & FRAME_F_DOWNCALL_MASK) ==
				       FRAME_F_DOWNCALL_JNI;
			}
			if (is_sym(f, "call_stub")) {
				stubs++;
				last_stub = (int)k;
				up += (f->flags & FRAME_F_UPCALL_MASK) ==
				      FRAME_F_UPCALL_JNI;
			}
			if (f->type != FRAME_JAVA_NATIVE && f->type != FRAME_NON_JAVA)
				assert_false(f->flags & (FRAME_F_DOWNCALL_MASK |
							 FRAME_F_UPCALL_MASK));
		}
		good += natives == 1 && jni == 1 && stubs == (cb ? 2 : 1) &&
			up == (cb ? 1 : 0) && last_stub >= 0 &&
			!(t.frames[last_stub].flags & FRAME_F_UPCALL_MASK);
	}
	print_message("jni-17: %d/%d with the JNI crossings right\n", good, tot);
	assert_true(tot >= 60);
	assert_true(good * 100 >= tot * 95);
	dd_free(&d);
	decoder__free(dec);
	strtab__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ffm_chains),
		cmocka_unit_test(test_ffm_upcall_anchor),
		cmocka_unit_test(test_ffm_api_flags),
		cmocka_unit_test(test_jni_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
