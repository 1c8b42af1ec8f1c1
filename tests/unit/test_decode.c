// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Decoder tests on real data: samples captured by the BPF sampler from the
 * workloads tests/workloads/Chain.java and JniChain.java on JDK 17 and 25,
 * with the code maps their agents wrote (tests/data/decode/, README there).
 * The workloads' chains are known, so every decoded stack is checked frame
 * by frame: names, types, comp levels, and each caller's bci against the
 * call site javap printed (saved beside the data). Then the API's edges:
 * kind/state filters, depth, options, bad arguments, mutated samples.
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
#define NCHAIN 22

static struct frame frames[TRACE_MAX_FRAMES];

/* call-site bcis from DATA/<name>.javap: c01..c22 -> callee, Worker.run */
struct chain_bcis {
	int c[NCHAIN + 1];	/* c[i]: bci in cNN of its call; 1-based */
	int worker;		/* bci in Chain$Worker.run of c01 */
};

static int load_bcis(const char *name, struct chain_bcis *b)
{
	char path[256], line[512];
	int cur = -1, worker = 0;
	FILE *f;

	memset(b, -1, sizeof(*b));
	snprintf(path, sizeof(path), DATA "/%s.javap", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		int n, bci;
		char callee[64];

		if (sscanf(line, "  static int c%d(int);", &n) == 1) {
			cur = n;
			worker = 0;
		} else if (!strncmp(line, "  ", 2) && line[2] != ' ' &&
			   strchr(line, '(') && strstr(line, ";\n")) {
			cur = -1;	/* another method */
		} else if (strstr(line, "class Chain$Worker")) {
			worker = 1;
			cur = -1;
		} else if (sscanf(line, " %d: invokestatic %*s // Method %63[^:]",
				  &bci, callee) == 2) {
			if (worker && (!strcmp(callee, "c01") ||
				       !strcmp(callee, "Chain.c01")))
				b->worker = bci;
			else if (cur >= 1 && cur <= NCHAIN)
				b->c[cur] = bci;
		}
	}
	fclose(f);
	for (int i = 1; i <= NCHAIN; i++)
		if (b->c[i] < 0)
			return -1;
	return b->worker < 0 ? -1 : 0;
}

static const char *thread_name(const struct dd_set *d, uint32_t tid)
{
	const struct codemap_thread *th = codemap__thread(d->cm, tid, 0);

	if (!th)
		for (size_t i = 0; i < codemap__nthreads(d->cm); i++)
			if (codemap__thread_at(d->cm, i)->tid == tid)
				th = codemap__thread_at(d->cm, i);
	return th && th->name ? th->name : "";
}

enum levels { LV_ANY, LV_COMPILED, LV_INTERP, LV_C1 };

static bool is_java(const struct frame *f)
{
	return f->type == FRAME_JAVA || f->type == FRAME_JAVA_INLINED ||
	       f->type == FRAME_JAVA_NATIVE;
}

static bool name_is(const struct frame *f, const char *k, const char *m)
{
	return f->klass && f->method && !strcmp(f->klass, k) &&
	       !strcmp(f->method, m);
}

/* the exact chain; *inl counts inlined frames seen */
static bool chain_ok(const struct trace *t, const struct chain_bcis *b,
		     enum levels lv, int *inl, char *why, size_t wl)
{
	const struct frame *j[64];
	int n = 0, k;
	char m[8];

	if (t->error) {
		snprintf(why, wl, "error %s", t->error_name);
		return false;
	}
	for (uint32_t i = 0; i < t->nframes && n < 64; i++)
		if (is_java(&t->frames[i]))
			j[n++] = &t->frames[i];
	if (n < NCHAIN + 3) {
		snprintf(why, wl, "%d java frames", n);
		return false;
	}
	if (!name_is(j[0], "Chain", "leaf")) {
		snprintf(why, wl, "top is %s.%s", j[0]->klass, j[0]->method);
		return false;
	}
	for (k = 1; k <= NCHAIN; k++) {
		int idx = NCHAIN + 1 - k;	/* j[1] is c22 */

		snprintf(m, sizeof(m), "c%02d", idx);
		if (!name_is(j[k], "Chain", m) || j[k]->bci != b->c[idx]) {
			snprintf(why, wl, "frame %d: %s.%s bci %d, want %s bci %d",
				 k, j[k]->klass, j[k]->method, j[k]->bci, m,
				 b->c[idx]);
			return false;
		}
	}
	if (!name_is(j[k], "Chain$Worker", "run") || j[k]->bci != b->worker) {
		snprintf(why, wl, "frame %d: %s.%s", k, j[k]->klass,
			 j[k]->method);
		return false;
	}
	k++;
	if (k < n && name_is(j[k], "java.lang.Thread", "runWith"))
		k++;
	if (k != n - 1 || !name_is(j[k], "java.lang.Thread", "run") ||
	    j[k]->type != FRAME_JAVA || j[k]->bci < 0) {
		snprintf(why, wl, "does not end in Thread.run");
		return false;
	}
	for (k = 0; k < n; k++) {
		const struct frame *f = j[k];
		bool chain = !strcmp(f->klass, "Chain");

		if (f->type == FRAME_JAVA_INLINED) {
			(*inl)++;
			if (k + 1 >= n || j[k + 1]->comp_level != f->comp_level) {
				snprintf(why, wl, "inlined level differs");
				return false;
			}
		}
		if ((lv == LV_INTERP && (f->comp_level != 0 ||
					 f->type == FRAME_JAVA_INLINED)) ||
		    (lv == LV_COMPILED && chain &&
		     (f->comp_level < 1 || f->comp_level > 4)) ||
		    (lv == LV_C1 && chain &&
		     (f->comp_level < 1 || f->comp_level > 3))) {
			snprintf(why, wl, "%s.%s level %d", f->klass, f->method,
				 f->comp_level);
			return false;
		}
		if (f->line < 0 && chain) {
			snprintf(why, wl, "%s.%s has no line", f->klass,
				 f->method);
			return false;
		}
	}
	return true;
}

static void check_chain_set(const char *name, enum levels lv, bool want_inl)
{
	struct dd_set d;
	struct chain_bcis b;
	struct strtab *st = strtab__new();
	struct decoder *dec = decoder__new(NULL, st);
	char err[256], why[200], first[256] = "";
	int total = 0, good = 0, inl = 0;

	assert_non_null(dec);
	if (dd_load(&d, DATA, name, err, sizeof(err)))
		fail_msg("%s: %s", name, err);
	if (load_bcis(name, &b))
		fail_msg("%s: no call-site bcis in %s/%s.javap", name, DATA,
			 name);
	for (size_t i = 0; i < d.n; i++) {
		struct trace t;

		if (strcmp(thread_name(&d, d.recs[i].s.hdr->ns_tid), "chain"))
			continue;
		assert_int_equal(decoder__trace(dec, &d.recs[i].s, d.cm, true,
						&t, frames, TRACE_MAX_FRAMES),
				 0);
		assert_int_equal(t.kind, TRACE_KIND_JAVA);
		total++;
		if (chain_ok(&t, &b, lv, &inl, why, sizeof(why)))
			good++;
		else if (!first[0])
			snprintf(first, sizeof(first), "#%zu: %s", i, why);
	}
	print_message("%s: %d of %d chain samples exact (%.2f %%)%s%s\n", name,
		      good, total, total ? 100.0 * good / total : 0.0,
		      first[0] ? "; first bad " : "", first);
	assert_true(total >= 50);
	assert_true(good * 100 >= total * 98);
	if (want_inl)
		assert_true(inl > 0);
	else
		assert_int_equal(inl, 0);
	dd_free(&d);
	decoder__free(dec);
	strtab__free(st);
}

static void test_chain_jdk17(void **state)
{
	(void)state;
	check_chain_set("chain-17", LV_COMPILED, true);
}

static void test_chain_jdk17_xint(void **state)
{
	(void)state;
	check_chain_set("chain-17-xint", LV_INTERP, false);
}

static void test_chain_jdk17_c1(void **state)
{
	(void)state;
	check_chain_set("chain-17-c1", LV_C1, true);
}

static void test_chain_jdk25(void **state)
{
	(void)state;
	check_chain_set("chain-25", LV_COMPILED, true);
}

static int sym_index(const struct trace *t, const char *sym, int from)
{
	for (uint32_t i = (uint32_t)from; i < t->nframes; i++)
		if (t->frames[i].type == FRAME_NON_JAVA && t->frames[i].symbol &&
		    !strcmp(t->frames[i].symbol, sym))
			return (int)i;
	return -1;
}

/*
 * JNI: Java -> native method -> C chain; and Java -> C -> Java. The data
 * set carries the symbolized C frames: its samples are decoded with a
 * symbolizer over the library built for the capture? No: the process is
 * gone. So the C frames are checked by their pcs falling into the
 * library's functions, which the data set's .syms file lists (nm output).
 */
static void test_jni_jdk17(void **state)
{
	static const char *cchain[] = { "jc_leaf", "jc_c", "jc_b", "jc_a",
					"Java_JniChain_nativeChain" };
	static const char *jchain[][2] = {
		{ "JniChain", "nativeChain" }, { "JniChain", "j3" },
		{ "JniChain", "j2" }, { "JniChain", "j1" },
		{ "JniChain$Jni", "run" }, { "java.lang.Thread", "run" } };
	static const char *cbjava[][2] = {
		{ "JniChain", "javaLeaf" }, { "JniChain", "nativeCallback" },
		{ "JniChain", "k2" }, { "JniChain", "k1" },
		{ "JniChain$Cb", "run" }, { "java.lang.Thread", "run" } };
	struct dd_set d;
	struct dd_syms sy;
	struct strtab *st = strtab__new();
	struct decoder *dec = decoder__new(NULL, st);
	char err[256];
	int tj = 0, gj = 0, tc = 0, gc = 0;

	(void)state;
	if (dd_load(&d, DATA, "jni-17", err, sizeof(err)))
		fail_msg("jni-17: %s", err);
	assert_int_equal(dd_load_syms(DATA, "jni-17", &sy), 0);
	for (size_t i = 0; i < d.n; i++) {
		const char *tn = thread_name(&d, d.recs[i].s.hdr->ns_tid);
		struct trace t;
		const struct frame *j[16];
		int n = 0, k, ci = 0, at = 0;
		bool ok;

		if (strcmp(tn, "jni") && strcmp(tn, "jnicb"))
			continue;
		decoder__trace(dec, &d.recs[i].s, d.cm, true, &t, frames,
			       TRACE_MAX_FRAMES);
		dd_name_c_frames(&sy, &t);
		for (uint32_t f = 0; f < t.nframes && n < 16; f++)
			if (is_java(&t.frames[f]))
				j[n++] = &t.frames[f];
		ok = !t.error && n == 6;
		if (!strcmp(tn, "jni")) {
			tj++;
			for (k = 0; ok && k < 6; k++)
				ok = name_is(j[k], jchain[k][0], jchain[k][1]);
			ok = ok && j[0]->type == FRAME_JAVA_NATIVE;
			/* the C chain, in order, right above the barrier */
			for (uint32_t f = 0; ok && f < t.nframes; f++) {
				if (&t.frames[f] == j[0])
					break;
				if (t.frames[f].type != FRAME_NON_JAVA)
					continue;
				ok = ci < 5 && t.frames[f].symbol &&
				     !strcmp(t.frames[f].symbol, cchain[ci]);
				ci++;
			}
			gj += ok && ci == 5;
		} else {
			tc++;
			for (k = 0; ok && k < 6; k++)
				ok = name_is(j[k], cbjava[k][0], cbjava[k][1]);
			ok = ok && j[1]->type == FRAME_JAVA_NATIVE;
			/* jcb_b, jcb_a, Java_..., between the two */
			if (ok) {
				at = sym_index(&t, "jcb_b", 0);
				at = at < 0 ? -1 : sym_index(&t, "jcb_a", at);
				at = at < 0 ? -1 :
				     sym_index(&t, "Java_JniChain_nativeCallback",
					       at);
				ok = at >= 0 && &t.frames[at] < j[1] &&
				     &t.frames[at] > j[0];
			}
			gc += ok;
		}
	}
	print_message("jni-17: jni %d/%d, jnicb %d/%d exact\n", gj, tj, gc, tc);
	assert_true(tj >= 30 && tc >= 30);
	assert_true(gj * 100 >= tj * 98);
	assert_true(gc * 100 >= tc * 98);
	dd_free(&d);
	decoder__free(dec);
	strtab__free(st);
}

/* ---- the API -------------------------------------------------------------- */

static struct dd_set api;

static int api_setup(void **state)
{
	char err[256];

	(void)state;
	if (dd_load(&api, DATA, "chain-17", err, sizeof(err))) {
		fprintf(stderr, "chain-17: %s\n", err);
		return -1;
	}
	return 0;
}

static int api_teardown(void **state)
{
	(void)state;
	dd_free(&api);
	return 0;
}

/* a sample of thread "chain" */
static const struct sample *chain_sample(size_t nth)
{
	for (size_t i = 0; i < api.n; i++)
		if (!strcmp(thread_name(&api, api.recs[i].s.hdr->ns_tid),
			    "chain") && !nth--)
			return &api.recs[i].s;
	return NULL;
}

static void test_api_args(void **state)
{
	ASGST_CallFrame fr[8];
	ASGST_CallTrace ct = { .frames = fr };
	struct asgst_ctx ctx;
	const struct sample *s = chain_sample(0);

	(void)state;
	assert_non_null(s);
	asgst_ctx__init(&ctx, api.cm);
	assert_int_equal(asgst_decode(NULL, s, &ct, 8, 0), -EINVAL);
	assert_int_equal(asgst_decode(&ctx, NULL, &ct, 8, 0), -EINVAL);
	assert_int_equal(asgst_decode(&ctx, s, NULL, 8, 0), -EINVAL);
	assert_int_equal(asgst_decode(&ctx, s, &ct, -1, 0), -EINVAL);
	ct.frames = NULL;
	assert_int_equal(asgst_decode(&ctx, s, &ct, 8, 0), -EINVAL);
	assert_int_equal(decoder__trace(NULL, s, api.cm, true, NULL, frames,
					8), -EINVAL);
}

static void test_api_java_only_and_depth(void **state)
{
	static ASGST_CallFrame fr[TRACE_MAX_FRAMES];
	ASGST_CallTrace ct;
	struct asgst_ctx ctx;
	const struct sample *s = chain_sample(3);
	int n, all;

	(void)state;
	asgst_ctx__init(&ctx, api.cm);
	memset(&ct, 0, sizeof(ct));
	ct.frames = fr;
	all = asgst_decode(&ctx, s, &ct, TRACE_MAX_FRAMES,
			   ASGST_INCLUDE_NON_JAVA_FRAMES);
	assert_true(all > NCHAIN + 3);
	assert_int_equal(ct.kind, ASGST_JAVA_TRACE);
	assert_int_equal(ct.num_frames, all);
	assert_int_equal(ct.state, ASGST_STATE_ALIVE | ASGST_STATE_RUNNABLE);

	/* without non-Java frames: only Java ones, exactly the chain */
	memset(&ct, 0, sizeof(ct));
	ct.frames = fr;
	n = asgst_decode(&ctx, s, &ct, TRACE_MAX_FRAMES, 0);
	assert_true(n >= NCHAIN + 3 && n < all);
	for (int i = 0; i < n; i++)
		assert_true(fr[i].type >= ASGST_FRAME_JAVA &&
			    fr[i].type <= ASGST_FRAME_JAVA_NATIVE);
	assert_int_equal(fr[0].java_frame.bci == ASGST_BCI_UNKNOWN ||
			 fr[0].java_frame.bci < 1000, 1);

	/* depth: cut, said so, frames kept */
	memset(&ct, 0, sizeof(ct));
	ct.frames = fr;
	assert_int_equal(asgst_decode(&ctx, s, &ct, 5, 0), 5);
	assert_int_equal(ct.num_frames, ASGST_DEPTH);
	assert_int_equal(ctx.error, ASGST_DEPTH);
	assert_string_equal(asgst_error_name(ct.num_frames), "ASGST_DEPTH");
}

static void test_api_filters(void **state)
{
	ASGST_CallFrame fr[TRACE_MAX_FRAMES];
	ASGST_CallTrace ct;
	struct asgst_ctx ctx;
	const struct sample *s = chain_sample(1);

	(void)state;
	asgst_ctx__init(&ctx, api.cm);
	memset(&ct, 0, sizeof(ct));
	ct.frames = fr;
	ct.kind = ASGST_JVM_TRACE;	/* accept JVM-internal threads only */
	assert_int_equal(asgst_decode(&ctx, s, &ct, TRACE_MAX_FRAMES, 0), 0);
	assert_int_equal(ct.num_frames, ASGST_WRONG_KIND);
	assert_int_equal(ct.kind, ASGST_JAVA_TRACE);

	memset(&ct, 0, sizeof(ct));
	ct.frames = fr;
	ct.kind = ASGST_JAVA_TRACE | ASGST_JVM_TRACE;
	ct.state = ASGST_STATE_IN_NATIVE;	/* only threads in native */
	assert_int_equal(asgst_decode(&ctx, s, &ct, TRACE_MAX_FRAMES, 0), 0);
	assert_int_equal(ct.num_frames, ASGST_WRONG_STATE);

	memset(&ct, 0, sizeof(ct));
	ct.frames = fr;
	ct.state = ASGST_STATE_RUNNABLE;
	assert_true(asgst_decode(&ctx, s, &ct, TRACE_MAX_FRAMES, 0) > 0);
	assert_true(ct.num_frames > 0);
}

static void test_api_method_info(void **state)
{
	ASGST_CallFrame fr[TRACE_MAX_FRAMES];
	ASGST_CallTrace ct = { .frames = fr };
	ASGST_MethodInfo mi;
	struct asgst_ctx ctx;

	(void)state;
	asgst_ctx__init(&ctx, api.cm);
	assert_true(asgst_decode(&ctx, chain_sample(2), &ct, TRACE_MAX_FRAMES,
				 0) > 0);
	assert_int_equal(ASGST_GetMethodInfo_cm(ctx.cm, fr[0].java_frame.method,
						&mi), 0);
	assert_string_equal(mi.class_name, "Chain");
	assert_string_equal(mi.method_name, "leaf");
	assert_string_equal(mi.signature, "(I)I");
	assert_int_equal(mi.method_name_len, 4);
	assert_int_equal(mi.generic_signature_len, 0);
	assert_int_equal(ASGST_GetMethodInfo_cm(api.cm, 12345, &mi), -ENOENT);
	assert_string_equal(mi.class_name, "");
}

static void test_no_map_no_window(void **state)
{
	struct strtab *st = strtab__new();
	struct decoder *dec = decoder__new(NULL, st);
	const struct sample *s = chain_sample(4);
	struct asgst_sample_hdr h;
	struct sample s2;
	struct trace t;

	(void)state;
	/* a JVM without a code map: native frames, said so */
	assert_int_equal(decoder__trace(dec, s, NULL, true, &t, frames,
					TRACE_MAX_FRAMES), 0);
	assert_int_equal(t.error, ASGST_NO_CODEMAP);
	assert_int_equal(t.frames[t.nframes - 1].type, FRAME_UNKNOWN);
	assert_non_null(t.frames[t.nframes - 1].reason);
	/* not a JVM: no error, the frame-pointer stack */
	assert_int_equal(decoder__trace(dec, s, NULL, false, &t, frames,
					TRACE_MAX_FRAMES), 0);
	assert_int_equal(t.error, 0);
	assert_int_equal(t.kind, TRACE_KIND_NATIVE);
	assert_int_equal(t.nframes, s->hdr->kstack_n + s->hdr->ustack_n);
	/* no window */
	h = *s->hdr;
	h.window_len = 0;
	s2 = *s;
	s2.hdr = &h;
	assert_int_equal(decoder__trace(dec, &s2, api.cm, true, &t, frames,
					TRACE_MAX_FRAMES), 0);
	assert_int_equal(t.error, ASGST_NO_WINDOW);
	/* a window cut short: the walk stops inside, with an error */
	h = *s->hdr;
	h.window_len = 256;
	assert_int_equal(decoder__trace(dec, &s2, api.cm, true, &t, frames,
					TRACE_MAX_FRAMES), 0);
	assert_int_equal(t.error, ASGST_WINDOW_SHORT);
	assert_true(t.nframes >= 2);
	assert_int_equal(t.frames[t.nframes - 1].type, FRAME_UNKNOWN);
	decoder__free(dec);
	strtab__free(st);
}

/* JVM-internal threads: C++ frames only, kind jvm */
static void test_jvm_threads(void **state)
{
	struct strtab *st = strtab__new();
	struct decoder *dec = decoder__new(NULL, st);
	int jvm = 0;

	(void)state;
	for (size_t i = 0; i < api.n; i++) {
		struct trace t;

		if (*thread_name(&api, api.recs[i].s.hdr->ns_tid))
			continue;	/* a Java thread */
		decoder__trace(dec, &api.recs[i].s, api.cm, true, &t, frames,
			       TRACE_MAX_FRAMES);
		if (t.kind != TRACE_KIND_JVM)
			continue;
		jvm++;
		for (uint32_t f = 0; f < t.nframes; f++)
			assert_false(is_java(&t.frames[f]));
	}
	print_message("chain-17: %d JVM-internal samples\n", jvm);
	assert_true(jvm > 0);
	decoder__free(dec);
	strtab__free(st);
}

/* shifted sp/fp, moved window: never crash, never loop, always bounded */
static void test_mutated(void **state)
{
	struct strtab *st = strtab__new();
	struct decoder *dec = decoder__new(NULL, st);
	size_t errs = 0, runs = 0;

	(void)state;
	for (size_t i = 0; i < api.n; i++) {
		const struct sample *s = &api.recs[i].s;

		for (int shift = -3; shift <= 3; shift++) {
			struct asgst_sample_hdr h = { 0 };
			struct sample s2 = *s;
			struct trace t;

			/* the captured records' headers are as long as their
			 * version's: no more of them is read */
			memcpy(&h, s->hdr, s->hdr->hdr_size < sizeof(h) ?
					   s->hdr->hdr_size : sizeof(h));
			s2.hdr = &h;
			h.sp += (uint64_t)(int64_t)shift * 8;
			h.bp += (uint64_t)(int64_t)shift * 16;
			if (shift > 0 && h.window_len > (uint32_t)shift * 8) {
				s2.window += shift * 8;
				h.window_len -= (uint32_t)shift * 8;
			}
			assert_int_equal(decoder__trace(dec, &s2, api.cm, true,
							&t, frames,
							TRACE_MAX_FRAMES), 0);
			assert_true(t.nframes <= TRACE_MAX_FRAMES);
			errs += t.error != 0;
			runs++;
		}
	}
	print_message("mutated: %zu of %zu walks stopped with an error\n",
		      errs, runs);
	assert_true(errs > 0);
	decoder__free(dec);
	strtab__free(st);
}

/*
 * An allocation or lock record: the class as the leaf frame, the VM's and
 * the agent's frames on top of the program's cut, nothing else changed
 * (the same walk as the record decoded as a cpu sample)
 */
static bool vm_frame(const struct frame *f)
{
	const char *b = f->module ? strrchr(f->module, '/') : NULL;

	b = b ? b + 1 : f->module;
	return f->type == FRAME_NON_JAVA &&
	       ((f->flags & (FRAME_F_JVM_CPP | FRAME_F_STUB)) ||
		(b && (!strcmp(b, "libasgst-agent.so") ||
		       !strncmp(b, "asgst-agent-", 12))));
}

static void test_jvm_event_leaf(void **state)
{
	struct strtab *st = strtab__new();
	struct decoder *dec = decoder__new(NULL, st);
	struct frame *ref = calloc(TRACE_MAX_FRAMES, sizeof(*ref));
	size_t checked = 0, cut_some = 0;

	(void)state;
	assert_non_null(ref);
	for (size_t i = 0; i < api.n; i++) {
		const struct sample *s = &api.recs[i].s;

		for (int ev = ASGST_EV_ALLOC; ev <= ASGST_EV_LOCK; ev++) {
			struct asgst_sample_hdr h = { 0 };
			struct sample s2 = *s;
			struct trace t, rt;
			uint32_t cut = 0;

			assert_int_equal(decoder__trace(dec, s, api.cm, true,
							&rt, ref,
							TRACE_MAX_FRAMES), 0);
			while (cut < rt.nframes && vm_frame(&ref[cut]))
				cut++;
			if (cut == rt.nframes)
				cut = 0;
			memcpy(&h, s->hdr, s->hdr->hdr_size < sizeof(h) ?
					   s->hdr->hdr_size : sizeof(h));
			h.version = 3;
			h.hdr_size = sizeof(h);
			h.event = (uint32_t)ev;
			h.ev_size = 24;
			h.ev_weight = 524288;
			strcpy(h.ev_class, ev == ASGST_EV_ALLOC ?
			       "byte[]" : "java.lang.Object");
			s2.hdr = &h;
			assert_int_equal(decoder__trace(dec, &s2, api.cm, true,
							&t, frames,
							TRACE_MAX_FRAMES), 0);
			assert_int_equal(t.event, ev == ASGST_EV_ALLOC ?
					 TRACE_EV_ALLOC : TRACE_EV_LOCK);
			assert_string_equal(t.ev_class, h.ev_class);
			assert_int_equal(frames[0].type, FRAME_CLASS);
			assert_string_equal(frames[0].klass, h.ev_class);
			assert_int_equal(!!(frames[0].flags & FRAME_F_MONITOR),
					 ev == ASGST_EV_LOCK);
			assert_int_equal(t.nframes, rt.nframes - cut + 1);
			for (uint32_t k = cut; k < rt.nframes; k++) {
				assert_int_equal(frames[k - cut + 1].type,
						 ref[k].type);
				assert_true(frames[k - cut + 1].pc == ref[k].pc);
				assert_ptr_equal(frames[k - cut + 1].method,
						 ref[k].method);
			}
			cut_some += cut > 0;
			checked++;
		}
	}
	print_message("jvm events: %zu records, %zu with VM frames cut\n",
		      checked, cut_some);
	assert_true(checked > 0);
	free(ref);
	decoder__free(dec);
	strtab__free(st);
}

int main(void)
{
	const struct CMUnitTest data[] = {
		cmocka_unit_test(test_chain_jdk17),
		cmocka_unit_test(test_chain_jdk17_xint),
		cmocka_unit_test(test_chain_jdk17_c1),
		cmocka_unit_test(test_chain_jdk25),
		cmocka_unit_test(test_jni_jdk17),
	};
	const struct CMUnitTest apit[] = {
		cmocka_unit_test(test_api_args),
		cmocka_unit_test(test_api_java_only_and_depth),
		cmocka_unit_test(test_api_filters),
		cmocka_unit_test(test_api_method_info),
		cmocka_unit_test(test_no_map_no_window),
		cmocka_unit_test(test_jvm_threads),
		cmocka_unit_test(test_mutated),
		cmocka_unit_test(test_jvm_event_leaf),
	};
	int r = cmocka_run_group_tests_name("decode_data", data, NULL, NULL);

	return r | cmocka_run_group_tests_name("decode_api", apit, api_setup,
					       api_teardown);
}
