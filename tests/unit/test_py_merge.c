// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Python frames merged into native stacks (python/py_merge.c): each
 * _PyEval_EvalFrameDefault activation replaced by its run of Python
 * frames (is_entry splits them), the interpreter's C frames outward of
 * the innermost Python frame folded away unless kept, C called from
 * Python kept, leftovers at the root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "python/py_merge.h"

#define LIBPY	"/usr/lib/libpython3.11.so.1.0"
#define LIBC	"/lib/x86_64-linux-gnu/libc.so.6"
#define LIBZ	"/lib/x86_64-linux-gnu/libz.so.1"

static struct frame nat(const char *sym, const char *mod)
{
	return (struct frame){ .type = FRAME_NON_JAVA, .symbol = sym,
			       .module = mod, .line = -1, .bci = -1 };
}

static struct frame py(const char *name)
{
	return (struct frame){ .type = FRAME_PYTHON, .method = name,
			       .line = 1, .bci = -1 };
}

static const char *name(const struct frame *f)
{
	return f->type == FRAME_PYTHON ? f->method : f->symbol;
}

static void expect(const struct frame *out, uint32_t n, const char **want,
		   uint32_t nw)
{
	assert_int_equal(n, nw);
	for (uint32_t i = 0; i < n; i++)
		assert_string_equal(name(&out[i]), want[i]);
}

/*
 * leaf first: deflate (libz) <- zlib_compress (libpython) <- eval #1
 * (squeeze, <lambda>) <- builtin_sum <- eval #2 (consume, main,
 * <module>) <- _PyEval_Vector <- Py_RunMain <- __libc_start_main
 */
static void test_merge(void **state)
{
	struct frame in[] = {
		nat("deflate", LIBZ),
		nat("zlib_compress", LIBPY),
		nat("_PyEval_EvalFrameDefault", LIBPY),
		nat("builtin_sum", LIBPY),
		nat("_PyEval_EvalFrameDefault", LIBPY),
		nat("_PyEval_Vector", LIBPY),
		nat("Py_RunMain", LIBPY),
		nat("__libc_start_main", LIBC),
	};
	struct frame p[] = { py("squeeze"), py("<lambda>"), py("consume"),
			     py("main"), py("<module>") };
	bool entry[] = { false, true, false, false, true };
	struct frame out[32];
	/* the start-up outward of <module> stays: the stack is whole */
	const char *folded[] = { "deflate", "zlib_compress", "squeeze",
				 "<lambda>", "consume", "main", "<module>",
				 "_PyEval_Vector", "Py_RunMain",
				 "__libc_start_main" };
	const char *kept[] = { "deflate", "zlib_compress", "squeeze",
			       "<lambda>", "builtin_sum", "consume", "main",
			       "<module>", "_PyEval_Vector", "Py_RunMain",
			       "__libc_start_main" };
	uint32_t n;

	(void)state;
	n = py_merge(in, 8, p, entry, 5, false, out, 32);
	expect(out, n, folded, 10);
	n = py_merge(in, 8, p, entry, 5, true, out, 32);
	expect(out, n, kept, 11);
	/* cut to the room there is */
	n = py_merge(in, 8, p, entry, 5, false, out, 4);
	expect(out, n, folded, 4);
}

/* the native walk stopped before the outer activation: the rest at the
 * root; no activation at all: all of them there */
static void test_leftovers(void **state)
{
	struct frame in[] = {
		nat("_PyEval_EvalFrameDefault", LIBPY),
		{ .type = FRAME_UNKNOWN, .reason = "no CFI" },
	};
	struct frame p[] = { py("f"), py("g"), py("h") };
	bool entry[] = { true, false, true };
	struct frame out[8];
	uint32_t n;

	(void)state;
	n = py_merge(in, 2, p, entry, 3, false, out, 8);
	assert_int_equal(n, 4);
	assert_string_equal(out[0].method, "f");
	assert_int_equal(out[1].type, FRAME_UNKNOWN);
	assert_string_equal(out[2].method, "g");
	assert_string_equal(out[3].method, "h");
	n = py_merge(in + 1, 1, p, entry, 3, false, out, 8);
	assert_int_equal(n, 4);
	/* no Python frames: the stack as it was */
	n = py_merge(in, 2, p, entry, 0, false, out, 8);
	assert_int_equal(n, 2);
	assert_string_equal(out[0].symbol, "_PyEval_EvalFrameDefault");
}

static void test_interp_module(void **state)
{
	(void)state;
	assert_true(py_merge__interp_module("/usr/bin/python3.11"));
	assert_true(py_merge__interp_module(LIBPY));
	assert_false(py_merge__interp_module(LIBZ));
	assert_false(py_merge__interp_module(
		"/usr/lib/python3.11/lib-dynload/_json.cpython-311.so"));
	assert_false(py_merge__interp_module(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_leftovers),
		cmocka_unit_test(test_interp_module),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
