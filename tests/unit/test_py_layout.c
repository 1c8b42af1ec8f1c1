// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CPython 3.11 table of python/py_layout.c against the headers of
 * the interpreter itself: offsetof of each field, with CPython's internal
 * headers (Py_BUILD_CORE). Built with -I of Debian's python3.11-dev
 * (/usr/include/python3.11, make deps), and as test_py_layout_pyenv with
 * pyenv's 3.11 headers where they are (PY_LAYOUT_PYENV_MISSING when not:
 * that test then says so and skips).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#ifndef PY_LAYOUT_PYENV_MISSING
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#endif

#include "python/py_layout.h"

#ifndef PY_LAYOUT_PYENV_MISSING
#define EQ(field, type, member) \
	assert_int_equal(l->field, offsetof(type, member))

static void test_layout_311(void **state)
{
	const struct py_layout *l = py_layout__find(0x030b);

	(void)state;
	/* the headers are those of a 3.11 */
	assert_int_equal(PY_MAJOR_VERSION, 3);
	assert_int_equal(PY_MINOR_VERSION, 11);
	assert_non_null(l);
	EQ(rt_interp, _PyRuntimeState, interpreters.main);
	EQ(is_threads, PyInterpreterState, threads.head);
	EQ(ts_next, PyThreadState, next);
	EQ(ts_tid, PyThreadState, native_thread_id);
	EQ(ts_cframe, PyThreadState, cframe);
	EQ(cf_frame, _PyCFrame, current_frame);
	EQ(fr_code, _PyInterpreterFrame, f_code);
	EQ(fr_previous, _PyInterpreterFrame, previous);
	EQ(fr_instr, _PyInterpreterFrame, prev_instr);
	EQ(fr_entry, _PyInterpreterFrame, is_entry);
	EQ(fr_owner, _PyInterpreterFrame, owner);
	EQ(fr_globals, _PyInterpreterFrame, f_globals);
	EQ(fr_locals, _PyInterpreterFrame, f_locals);
	EQ(ob_type, PyObject, ob_type);
	EQ(co_firstlineno, PyCodeObject, co_firstlineno);
	EQ(co_filename, PyCodeObject, co_filename);
	EQ(co_name, PyCodeObject, co_name);
	EQ(co_qualname, PyCodeObject, co_qualname);
	EQ(co_linetable, PyCodeObject, co_linetable);
	EQ(co_firsttraceable, PyCodeObject, _co_firsttraceable);
	EQ(co_code, PyCodeObject, co_code_adaptive);
	EQ(str_length, PyASCIIObject, length);
	EQ(bytes_size, PyVarObject, ob_size);
	EQ(bytes_data, PyBytesObject, ob_sval);
	assert_int_equal(l->str_ascii_data, sizeof(PyASCIIObject));
	assert_int_equal(l->str_data, sizeof(PyCompactUnicodeObject));
	/* the sizes the readers copy them as */
	assert_int_equal(sizeof(((PyThreadState *)0)->native_thread_id), 8);
	assert_int_equal(sizeof(((_PyInterpreterFrame *)0)->prev_instr), 8);
	assert_int_equal(sizeof(((_PyInterpreterFrame *)0)->is_entry), 1);
	assert_int_equal(sizeof(((_PyInterpreterFrame *)0)->owner), 1);
	assert_int_equal(sizeof(((PyCodeObject *)0)->co_firstlineno), 4);
	assert_int_equal(sizeof(_Py_CODEUNIT), 2);
	assert_int_equal(FRAME_OWNED_BY_GENERATOR, 1);
}
#else
static void test_layout_311(void **state)
{
	(void)state;
	skip();
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_311),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
