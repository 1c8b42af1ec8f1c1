// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Decoder tests on samples of a real application (Tomcat's request
 * threads under HTTP load, JDK 17 and 25, late attach; tests/data/decode/
 * tomcat-*, README there) that pass through JVM-generated code other than
 * methods: StubRoutines (arraycopy, frameless or framed by rbp), runtime
 * stubs with a frame size, the JNI fast getters, and C/C++ code entered
 * from compiled Java by a leaf call without a frame anchor (a gap frame).
 * Every one must decode whole: no error, down to Thread.run.
 *
 * And one captured sample per kind of JVM-generated code and stub name
 * (tests/data/decode/stubs-*: StubKinds on JDK 17 with C2, with C1 only,
 * and JDK 25; the kinds in decode_data.h, dd_kind_of), each decoded whole
 * with a Java frame right below the stub and its thread's StubKinds
 * method in the stack; and real-application samples whose top compiled
 * frame is in its epilogue (epilogue-*), which once stopped the walk.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <cmocka.h>

#include "decode/asgst.h"
#include "jvm/codemap.h"
#include "unit/decode_data.h"

#define DATA "tests/data/decode"

static ASGST_CallFrame fr[2048];

static bool is_root(const struct codemap *cm, uint64_t method)
{
	const struct codemap_method *m = codemap__method(cm, method);

	if (m && !strcmp(m->name, "main") &&
	    !strcmp(m->signature, "([Ljava/lang/String;)V"))
		return true;
	return m && !strcmp(m->klass, "java.lang.Thread") &&
	       (!strcmp(m->name, "run") || !strcmp(m->name, "runWith"));
}

static const char *method_name(const struct codemap *cm,
			       const ASGST_CallFrame *f)
{
	const struct codemap_method *m;

	if (f->type == ASGST_FRAME_NON_JAVA)
		return NULL;
	m = codemap__method(cm, f->java_frame.method);
	return m ? m->name : NULL;
}

/* decode sample i of d: the frame count, failing on an error or a stack
 * that does not reach its thread's root */
static int decode_whole(struct dd_set *d, size_t i, const char *name)
{
	struct asgst_ctx ctx;
	ASGST_CallTrace ct = { .frames = fr };
	int n, last = -1;

	asgst_ctx__init(&ctx, d->cm);
	n = asgst_decode(&ctx, &d->recs[i].s, &ct, 2048,
			 ASGST_INCLUDE_NON_JAVA_FRAMES);
	if (ctx.error)
		fail_msg("%s: sample %zu: %s: %s", name, i,
			 asgst_error_name(ctx.error), ctx.reason);
	for (int k = 0; k < n; k++)
		if (fr[k].type != ASGST_FRAME_NON_JAVA)
			last = k;
	if (last < 0 || !is_root(d->cm, fr[last].java_frame.method))
		fail_msg("%s: sample %zu: the stack does not reach its thread's "
			 "root", name, i);
	return n;
}

/*
 * The first frame after frame i that is not JVM-generated code (a stub
 * called from Java, or a deoptimized frame being unpacked: an interpreter
 * pc without a method, decode_interp.c) is Java with a method the map
 * knows.
 */
static bool java_below(const struct dd_set *d, int n, int i)
{
	const struct cm_vm_consts *vm = codemap__vm(d->cm);

	for (int k = i + 1; k < n; k++) {
		uint64_t pc;

		if (fr[k].type != ASGST_FRAME_NON_JAVA)
			return method_name(d->cm, &fr[k]) != NULL;
		pc = (uint64_t)(uintptr_t)fr[k].non_java_frame.pc;
		if (!(pc >= vm->code_low && pc < vm->code_high))
			return false;
	}
	return false;
}

static void print_frames(const struct dd_set *d, int n)
{
	for (int k = 0; k < n; k++) {
		const struct codemap_method *m;
		const struct codemap_blob *b;

		if (fr[k].type == ASGST_FRAME_NON_JAVA) {
			b = dd_stub(d->cm, &fr[k], 0);
			print_message("  %d: %p %s\n", k, fr[k].non_java_frame.pc,
				      b ? b->name : "");
			continue;
		}
		m = codemap__method(d->cm, fr[k].java_frame.method);
		print_message("  %d: %d %s.%s bci %d\n", k, fr[k].type,
			      m ? m->klass : "?", m ? m->name : "?",
			      fr[k].java_frame.bci);
	}
}

/* the frame a kind is about: the stub, the gap, the top Java frame */
static int kind_frame(const struct dd_set *d, const struct sample *s, int n,
		      enum dd_kind k)
{
	for (int i = 0; i < n; i++) {
		const struct codemap_blob *b;

		if (k == DD_VM_GAP) {
			if (fr[i].type == ASGST_FRAME_NON_JAVA &&
			    !fr[i].non_java_frame.pc)
				return i;
			continue;
		}
		if (k == DD_MH_INTRINSIC || k == DD_PROLOGUE ||
		    k == DD_EPILOGUE)
			return 0;
		b = dd_stub(d->cm, &fr[i], s->hdr->ktime_ns);
		if (b && dd_stub_kind(b) != DD_NONE)
			return i;
	}
	return -1;
}

/* the thread's StubKinds method: sk-monitor1 runs StubKinds.monitor */
static bool has_thread_method(const struct dd_set *d, const struct sample *s,
			      int n)
{
	const struct codemap_thread *th =
		codemap__thread(d->cm, s->hdr->ns_tid, s->hdr->ktime_ns);
	char want[64];
	size_t l;

	if (!th || !th->name || strncmp(th->name, "sk-", 3))
		return false;
	snprintf(want, sizeof(want), "%s", th->name + 3);
	for (l = strlen(want); l && want[l - 1] >= '0' && want[l - 1] <= '9';)
		want[--l] = 0;
	for (int i = 0; i < n; i++) {
		const struct codemap_method *m;

		if (fr[i].type == ASGST_FRAME_NON_JAVA)
			continue;
		m = codemap__method(d->cm, fr[i].java_frame.method);
		if (m && !strcmp(m->klass, "StubKinds") &&
		    !strcmp(m->name, want))
			return true;
	}
	return false;
}

/*
 * name: a stubs-* set; kinds: the kinds it must hold; names: stub or
 * intrinsic names (substrings) it must hold.
 */
static void check_kinds(const char *name, const enum dd_kind *kinds,
			const char *const *names)
{
	struct dd_set d;
	char err[256];
	bool seen[DD_NKINDS] = { false };
	char whats[4096] = "";

	if (dd_load(&d, DATA, name, err, sizeof(err)))
		fail_msg("%s: %s", name, err);
	assert_true(d.n >= 10);
	for (size_t i = 0; i < d.n; i++) {
		const struct sample *s = &d.recs[i].s;
		const char *what;
		enum dd_kind k;
		int n, at;

		n = decode_whole(&d, i, name);
		k = dd_kind_of(d.cm, s, fr, n, &what);
		if (k == DD_NONE)
			fail_msg("%s: sample %zu: no stub kind", name, i);
		at = kind_frame(&d, s, n, k);
		print_message("%s: sample %zu: %s %s, %d frames\n", name, i,
			      dd_kind_name(k), what ? what : "", n);
		if (at < 0 || !java_below(&d, n, k == DD_MH_INTRINSIC ||
					       k == DD_PROLOGUE ||
					       k == DD_EPILOGUE ? at - 1 : at))
			print_frames(&d, n);
		if (!has_thread_method(&d, s, n))
			print_frames(&d, n);
		if (at < 0 || !java_below(&d, n, k == DD_MH_INTRINSIC ||
					       k == DD_PROLOGUE ||
					       k == DD_EPILOGUE ? at - 1 : at))
			fail_msg("%s: sample %zu (%s): no Java frame below it",
				 name, i, dd_kind_name(k));
		if (!has_thread_method(&d, s, n))
			fail_msg("%s: sample %zu (%s): its thread's StubKinds "
				 "method is not in the stack", name, i,
				 dd_kind_name(k));
		seen[k] = true;
		if (what && strlen(whats) + strlen(what) + 2 < sizeof(whats)) {
			strcat(whats, what);
			strcat(whats, ";");
		}
	}
	for (const enum dd_kind *k = kinds; *k != DD_NONE; k++)
		if (!seen[*k])
			fail_msg("%s: no sample of kind %s", name,
				 dd_kind_name(*k));
	for (const char *const *w = names; *w; w++)
		if (!strstr(whats, *w))
			fail_msg("%s: no sample of %s", name, *w);
	dd_free(&d);
}

static void test_kinds_jdk17(void **state)
{
	static const enum dd_kind k[] = {
		DD_ARRAYCOPY, DD_STUBROUTINE, DD_OPTO_VM, DD_ADAPTER,
		DD_VTABLE, DD_MH_INTRINSIC, DD_DEOPT, DD_RUNTIME1_VM,
		DD_PROLOGUE, DD_EPILOGUE, DD_VM_GAP, DD_NONE
	};
	static const char *const w[] = {
		"jbyte_disjoint_arraycopy", "jbyte_conjoint_arraycopy",
		"checkcast_arraycopy", "updateBytesCRC32", "libmSin",
		"itable stub", "vtable stub", "I2C/C2I adapters", "invokeBasic",
		"DeoptimizationBlob", "UncommonTrapBlob", "_new_array_Java",
		"_complete_monitor_locking_Java", NULL
	};

	(void)state;
	check_kinds("stubs-17", k, w);
}

static void test_kinds_jdk17_c1(void **state)
{
	static const enum dd_kind k[] = {
		DD_ARRAYCOPY, DD_STUBROUTINE, DD_RUNTIME1, DD_RUNTIME1_VM,
		DD_GC_BARRIER, DD_ADAPTER, DD_VTABLE, DD_MH_INTRINSIC,
		DD_PROLOGUE, DD_EPILOGUE, DD_VM_GAP, DD_NONE
	};
	static const char *const w[] = {
		"slow_subtype_check", "monitorenter", "monitorexit",
		"g1_post_barrier_slow", "new_type_array", "generic_arraycopy",
		"linkToVirtual", NULL
	};

	(void)state;
	check_kinds("stubs-17-c1", k, w);
}

static void test_kinds_jdk25(void **state)
{
	static const enum dd_kind k[] = {
		DD_ARRAYCOPY, DD_STUBROUTINE, DD_OPTO_VM, DD_ADAPTER,
		DD_VTABLE, DD_MH_INTRINSIC, DD_DEOPT, DD_RUNTIME1_VM,
		DD_PROLOGUE, DD_EPILOGUE, DD_VM_GAP, DD_NONE
	};
	static const char *const w[] = {
		"jbyte_disjoint_arraycopy", "oop_disjoint_arraycopy", "dsin",
		"linkToStatic", "DeoptimizationBlob", "UncommonTrapBlob",
		"C2 Runtime new_array", "C2 Runtime complete_monitor_locking",
		NULL
	};

	(void)state;
	check_kinds("stubs-25", k, w);
}

/*
 * A top compiled frame in its epilogue (after "add rsp", before "pop
 * rbp"; or at its ret) with stale return pcs of an earlier, deeper frame
 * below sp where the whole frame's return pc would be: the caller must be
 * the one the frame's own return pc names (a compiled caller whose frame
 * checks out, an interpreted one with a method at its rbp).
 */
static void check_epilogue(const char *name, const char *top,
			   const char *caller, int caller_level)
{
	struct dd_set d;
	char err[256];
	int n, k;

	if (dd_load(&d, DATA, name, err, sizeof(err)))
		fail_msg("%s: %s", name, err);
	assert_int_equal(d.n, 1);
	n = decode_whole(&d, 0, name);
	/* the top physical frame, then its caller's */
	for (k = 0; k < n && fr[k].type != ASGST_FRAME_JAVA; k++)
		;
	assert_true(k + 1 < n);
	assert_string_equal(method_name(d.cm, &fr[k]), top);
	k++;
	while (k < n && fr[k].type != ASGST_FRAME_JAVA)
		k++;
	assert_true(k < n);
	print_message("%s: %s called by %s (level %d), %d frames\n", name,
		      top, method_name(d.cm, &fr[k]),
		      fr[k].java_frame.comp_level, n);
	assert_string_equal(method_name(d.cm, &fr[k]), caller);
	assert_int_equal(fr[k].java_frame.comp_level, caller_level);
	dd_free(&d);
}

static void test_epilogue_jruby(void **state)
{
	(void)state;
	check_epilogue("epilogue-jruby-17", "call", "RUBY$method$fib$10", 4);
}

static void test_epilogue_h2(void **state)
{
	(void)state;
	check_epilogue("epilogue-h2-17", "getValue", "analyzeTable", 0);
}

static void check_set(const char *name)
{
	struct dd_set d;
	char err[256];
	size_t whole = 0, stubs = 0, gaps = 0;

	if (dd_load(&d, DATA, name, err, sizeof(err)))
		fail_msg("%s: %s", name, err);
	for (size_t i = 0; i < d.n; i++) {
		const struct sample *s = &d.recs[i].s;
		struct asgst_ctx ctx;
		ASGST_CallTrace ct = { .frames = fr };
		bool stub = false, gap = false;
		int n, last = -1;

		asgst_ctx__init(&ctx, d.cm);
		n = asgst_decode(&ctx, s, &ct, 2048,
				 ASGST_INCLUDE_NON_JAVA_FRAMES);
		for (int k = 0; k < n; k++) {
			const struct codemap_blob *b;
			uint64_t pc;

			if (fr[k].type != ASGST_FRAME_NON_JAVA) {
				last = k;
				continue;
			}
			pc = (uint64_t)(uintptr_t)fr[k].non_java_frame.pc;
			b = pc ? codemap__find(d.cm, pc, s->hdr->ktime_ns) : NULL;
			gap |= !pc;
			stub |= b && b->type == CODEMAP_BLOB_STUB &&
				b->kind != CM_STUB_CALL_STUB;
		}
		if (ctx.error)
			print_message("%s: sample %zu: %s: %s\n", name, i,
				      asgst_error_name(ctx.error), ctx.reason);
		else if (last >= 0 &&
			 is_root(d.cm, fr[last].java_frame.method))
			whole++;
		stubs += stub;
		gaps += gap;
	}
	print_message("%s: %zu of %zu samples whole; %zu through a stub, "
		      "%zu through a gap\n", name, whole, d.n, stubs, gaps);
	assert_true(d.n >= 100);
	assert_int_equal(whole, d.n);
	assert_true(stubs >= 20);
	assert_true(gaps >= 5);
	dd_free(&d);
}

static void test_tomcat_jdk17(void **state)
{
	(void)state;
	check_set("tomcat-17");
}

static void test_tomcat_jdk25(void **state)
{
	(void)state;
	check_set("tomcat-25");
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_tomcat_jdk17),
		cmocka_unit_test(test_tomcat_jdk25),
		cmocka_unit_test(test_kinds_jdk17),
		cmocka_unit_test(test_kinds_jdk17_c1),
		cmocka_unit_test(test_kinds_jdk25),
		cmocka_unit_test(test_epilogue_jruby),
		cmocka_unit_test(test_epilogue_h2),
	};

	return cmocka_run_group_tests_name("decode_stubs", t, NULL, NULL);
}
