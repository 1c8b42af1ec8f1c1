// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's read-through-the-kernel primitive, on which its jmethodID
 * probe rests: JDK 26's jmethodIDs are small counters (JDK-8268406), not
 * pointers, and reading through one must be an error, never a fault. And
 * what the JVM events hand the recorder's probe: class names and weights.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include "codemap_format.h"
#define JEV_NO_JVMTI
#include "jvm_events.h"
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

static void class_names_are_dotted(void **state)
{
	static const char *const cases[][2] = {
		{ "Ljava/lang/String;", "java.lang.String" },
		{ "[B", "byte[]" },
		{ "[[I", "int[][]" },
		{ "[Ljava/lang/Object;", "java.lang.Object[]" },
		{ "[[Ljava/util/Map$Entry;", "java.util.Map$Entry[][]" },
		{ "J", "long" },
		{ "", "?" },
	};
	char buf[128], small[8], name[300];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		jev__dotted_class(cases[i][0], buf, sizeof(buf));
		assert_string_equal(buf, cases[i][1]);
	}
	jev__dotted_class(NULL, buf, sizeof(buf));
	assert_string_equal(buf, "?");
	/* cut, never past the buffer */
	jev__dotted_class("Ljava/lang/String;", small, sizeof(small));
	assert_string_equal(small, "java.la");
	name[0] = 'L';
	memset(name + 1, 'a', 250);
	strcpy(name + 251, ";");
	jev__dotted_class(name, buf, sizeof(buf));
	assert_int_equal(strlen(buf), 127);
}

static void alloc_weights(void **state)
{
	(void)state;
	/* size / (1 - exp(-size / interval)), to about 1e-6 */
	assert_true(jev__alloc_weight(0, 524288) == 0);
	assert_true(jev__alloc_weight(100, 0) == 100);
	/* small objects: about interval + size / 2 */
	assert_true(jev__alloc_weight(16, 524288) == 524296);
	assert_true(jev__alloc_weight(1024, 524288) == 524800);
	/* size == interval: 1 / (1 - 1/e) = 1.5819767... */
	assert_true(jev__alloc_weight(1000000, 1000000) == 1581976);
	/* size == 2 * interval: 2 / (1 - e^-2) = 2.3130352... */
	assert_true(jev__alloc_weight(2000000, 1000000) == 2313035);
	/* far past the interval: the object stands for itself */
	assert_true(jev__alloc_weight(1ull << 40, 1024) == 1ull << 40);
	assert_true(jev__alloc_weight(UINT64_MAX, 1) == UINT64_MAX);
	/* never below size, whatever the interval */
	for (uint64_t sz = 1; sz < (1ull << 40); sz *= 3)
		assert_true(jev__alloc_weight(sz, 4096) >= sz);
}

static void probe_is_callable(void **state)
{
	(void)state;
	asgst_probe_event(CM_PROBE_ALLOC, "byte[]", 16, 524296);
	asgst_probe_event(CM_PROBE_LOCK, "java.lang.Object", 0, 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_mapped_memory),
		cmocka_unit_test(counter_ids_are_errors),
		cmocka_unit_test(unmapped_page_is_an_error),
		cmocka_unit_test(class_names_are_dotted),
		cmocka_unit_test(alloc_weights),
		cmocka_unit_test(probe_is_callable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
