// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Decoder tests on samples of a real application (Tomcat's request
 * threads under HTTP load, JDK 17 and 25, late attach; tests/data/decode/
 * tomcat-*, README there) that pass through JVM-generated code other than
 * methods: StubRoutines (arraycopy, frameless or framed by rbp), runtime
 * stubs with a frame size, the JNI fast getters, and C/C++ code entered
 * from compiled Java by a leaf call without a frame anchor (a gap frame).
 * Every one must decode whole: no error, down to Thread.run.
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

	return m && !strcmp(m->klass, "java.lang.Thread") &&
	       (!strcmp(m->name, "run") || !strcmp(m->name, "runWith"));
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
	};

	return cmocka_run_group_tests_name("decode_stubs", t, NULL, NULL);
}
