// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's read-through-the-kernel primitive, on which its jmethodID
 * probe rests: JDK 26's jmethodIDs are small counters (JDK-8268406), not
 * pointers, and reading through one must be an error, never a fault.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include "vmconsts.h"

static void reads_mapped_memory(void **state)
{
	uint64_t word = 0x1122334455667788ull, got = 0;
	char text[] = "jmethodID", buf[sizeof(text)];

	(void)state;
	assert_int_equal(vmc__safe_read((uintptr_t)&word, &got, sizeof(got)), 0);
	assert_true(got == word);
	assert_int_equal(vmc__safe_read((uintptr_t)text, buf, sizeof(buf)), 0);
	assert_string_equal(buf, text);
}

static void counter_ids_are_errors(void **state)
{
	uint64_t got = 0;
	uintptr_t ids[] = { 0, 1, 2, 0x400, 0xfff, 0x1000, 0x12345, 0x7fff0 };

	(void)state;
	/* the first jmethodIDs a JDK 26 hands out, and a later one */
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		assert_int_equal(vmc__safe_read(ids[i], &got, sizeof(got)), -1);
}

static void unmapped_page_is_an_error(void **state)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t got = 0;

	(void)state;
	assert_true(p != MAP_FAILED);
	memset(p, 0xab, (size_t)pg * 2);
	assert_int_equal(munmap(p + pg, (size_t)pg), 0);
	assert_int_equal(vmc__safe_read((uintptr_t)p, &got, sizeof(got)), 0);
	assert_true(got == 0xababababababababull);
	/* straddling into the unmapped page, and wholly inside it */
	assert_int_equal(vmc__safe_read((uintptr_t)(p + pg - 4), &got,
					sizeof(got)), -1);
	assert_int_equal(vmc__safe_read((uintptr_t)(p + pg), &got,
					sizeof(got)), -1);
	munmap(p, (size_t)pg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_mapped_memory),
		cmocka_unit_test(counter_ids_are_errors),
		cmocka_unit_test(unmapped_page_is_an_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
