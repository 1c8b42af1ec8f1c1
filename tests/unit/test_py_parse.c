// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The readers of CPython objects (python/py_parse.c): str headers and
 * characters (PEP 393 kinds), the 3.11 location table against the lines
 * CPython itself gives (py_linetable_data.h), and hostile inputs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "python/py_layout.h"
#include "python/py_parse.h"
#include "unit/py_linetable_data.h"	/* -Itests */

static const struct py_layout *l311(void)
{
	const struct py_layout *l = py_layout__find(0x030b);

	assert_non_null(l);
	return l;
}

/* a str header: length, state bits (compact, ascii, kind, ready) */
static void mk_str(uint8_t *b, const struct py_layout *l, uint64_t len,
		   unsigned kind, int compact, int ascii, int ready)
{
	uint32_t st = (kind << 2) | (compact << 5) | (ascii << 6) |
		      (ready << 7);

	memset(b, 0, 128);
	memcpy(b + l->str_length, &len, 8);
	memcpy(b + l->str_state, &st, 4);
}

static void test_str_header(void **state)
{
	const struct py_layout *l = l311();
	struct py_str_info si;
	uint8_t b[128];

	(void)state;
	mk_str(b, l, 5, 1, 1, 1, 1);
	assert_int_equal(py_str__header(b, 128, l, &si), 0);
	assert_int_equal(si.kind, 1);
	assert_int_equal(si.length, 5);
	assert_int_equal(si.data_off, 48);
	/* latin-1, not ascii: after the compact header */
	mk_str(b, l, 3, 1, 1, 0, 1);
	assert_int_equal(py_str__header(b, 128, l, &si), 0);
	assert_int_equal(si.data_off, 72);
	mk_str(b, l, 3, 4, 1, 0, 1);
	assert_int_equal(py_str__header(b, 128, l, &si), 0);
	assert_int_equal(si.kind, 4);
	/* long: cut to PY_STR_MAX_CHARS */
	mk_str(b, l, 100000, 2, 1, 0, 1);
	assert_int_equal(py_str__header(b, 128, l, &si), 0);
	assert_int_equal(si.length, PY_STR_MAX_CHARS);
	assert_int_equal(si.cut, 1);
	/* refused: not compact, not ready, a bad kind, ascii of kind 2,
	 * absurd length, a short header */
	mk_str(b, l, 3, 1, 0, 1, 1);
	assert_int_equal(py_str__header(b, 128, l, &si), -EINVAL);
	mk_str(b, l, 3, 1, 1, 1, 0);
	assert_int_equal(py_str__header(b, 128, l, &si), -EINVAL);
	mk_str(b, l, 3, 3, 1, 0, 1);
	assert_int_equal(py_str__header(b, 128, l, &si), -EINVAL);
	mk_str(b, l, 3, 2, 1, 1, 1);
	assert_int_equal(py_str__header(b, 128, l, &si), -EINVAL);
	mk_str(b, l, 1ull << 50, 1, 1, 1, 1);
	assert_int_equal(py_str__header(b, 128, l, &si), -EINVAL);
	mk_str(b, l, 3, 1, 1, 1, 1);
	assert_int_equal(py_str__header(b, 40, l, &si), -EINVAL);
	assert_int_equal(py_str__header(NULL, 128, l, &si), -EINVAL);
}

static void test_str_utf8(void **state)
{
	const uint8_t latin[] = { 'c', 0xe9, 'a' };
	const uint16_t ucs2[] = { 0x3b1, 0x20ac, 0xd800, 0 };
	const uint32_t ucs4[] = { 0x1f40d, 0x110000, 'x' };
	char out[32];

	(void)state;
	assert_int_equal(py_str__utf8(latin, 3, 1, out, sizeof(out)), 4);
	assert_string_equal(out, "c\xc3\xa9" "a");
	/* a surrogate and NUL become '?' */
	py_str__utf8((const uint8_t *)ucs2, 4, 2, out, sizeof(out));
	assert_string_equal(out, "\xce\xb1\xe2\x82\xac??");
	py_str__utf8((const uint8_t *)ucs4, 3, 4, out, sizeof(out));
	assert_string_equal(out, "\xf0\x9f\x90\x8d?x");
	/* cut at a character, never inside one */
	assert_int_equal(py_str__utf8((const uint8_t *)ucs4, 3, 4, out, 4), 0);
	assert_string_equal(out, "");
	assert_int_equal(py_str__utf8(latin, 3, 1, out, 3), 1);
	assert_string_equal(out, "c");
	assert_int_equal(py_str__utf8(latin, 3, 3, out, sizeof(out)), 0);
	assert_int_equal(py_str__utf8(latin, 3, 1, out, 0), 0);
}

/* every instruction's line as CPython gives it */
static void test_linetable_cpython(void **state)
{
	size_t n = sizeof(lt_f_lines) / sizeof(lt_f_lines[0]);

	(void)state;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(py_linetable__line(lt_f, sizeof(lt_f),
						    lt_f_first, (int64_t)i),
				 lt_f_lines[i]);
	/* before the first instruction: the first line; past the end: none */
	assert_int_equal(py_linetable__line(lt_f, sizeof(lt_f), lt_f_first, -1),
			 lt_f_first);
	assert_int_equal(py_linetable__line(lt_f, sizeof(lt_f), lt_f_first,
					    (int64_t)n + 5), -1);
}

static void test_linetable_hostile(void **state)
{
	/* a long-form entry whose varint never ends */
	const uint8_t runaway[] = { 0xf0, 0x7f, 0x7f, 0x7f };
	/* not the start of an entry */
	const uint8_t bad[] = { 0x10, 0x00 };
	/* a one-line entry cut short, then past the end of its bytes */
	const uint8_t cut[] = { 0xd8 };
	/* deltas that push the line past 32 bits */
	uint8_t big[64];
	size_t k = 0;

	(void)state;
	assert_int_equal(py_linetable__line(runaway, sizeof(runaway), 1, 3), -1);
	assert_int_equal(py_linetable__line(bad, sizeof(bad), 1, 0), -1);
	assert_int_equal(py_linetable__line(cut, sizeof(cut), 1, 0), -1);
	assert_int_equal(py_linetable__line(NULL, 0, 7, 0), -1);
	assert_int_equal(py_linetable__line(lt_f, PY_LINETABLE_MAX + 1, 7, 0),
			 -1);
	for (int i = 0; i < 6; i++) {
		/* code 13: svarint delta 2^31 - 1 (6-bit groups) */
		big[k++] = 0x80 | (13 << 3);
		big[k++] = 0x40 | 0x3e;
		big[k++] = 0x40 | 0x3f;
		big[k++] = 0x40 | 0x3f;
		big[k++] = 0x40 | 0x3f;
		big[k++] = 0x40 | 0x3f;
		big[k++] = 0x03;
	}
	assert_int_equal(py_linetable__line(big, k, 1, 5), -1);
}

static void test_layout(void **state)
{
	const struct py_layout *l = l311();
	struct asgst_py_proc v;

	(void)state;
	assert_null(py_layout__find(0x030c));
	assert_null(py_layout__find(0x030a));
	py_layout__to_bpf(l, 0x1000, 0x030b02f0, &v);
	assert_int_equal(v.runtime, 0x1000);
	assert_int_equal(v.version, 0x030b02f0);
	/* one read of a frame covers is_entry and owner (bytes 68, 69) */
	assert_int_equal(v.fr_span, 72);
	assert_true(v.fr_span <= ASGST_PY_SPAN_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_str_header),
		cmocka_unit_test(test_str_utf8),
		cmocka_unit_test(test_linetable_cpython),
		cmocka_unit_test(test_linetable_hostile),
		cmocka_unit_test(test_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
