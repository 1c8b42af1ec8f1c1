// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Demangling on real names: libjvm.so's symbol table (JDK 17 and 25 when
 * installed) and the C++ fixture library's nm listing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/demangle.h"
#include "symbols/elf_symbols.h"
#include "fixtures/fixture_path.h"

static const char *const jvms[] = {
	"/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so",
	"/usr/lib/jvm/temurin-25-jdk-amd64/lib/server/libjvm.so",
};

#define CALL_HELPER "_ZN9JavaCalls11call_helperEP9JavaValueRK12methodHandleP17JavaCallArgumentsP10JavaThread"

static struct elf_module *load(const char *path)
{
	struct elf_module *m;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	m = elf_module__load(fd, NULL);
	close(fd);
	return m;
}

/* a short form has no parameter list and no return type */
static void check_short_form(const char *raw, const char *s)
{
	size_t n = strlen(s);

	if (n == 0)
		fail_msg("%s: empty short form", raw);
	if (s[n - 1] == ')' && !(n >= 10 && strcmp(s + n - 10, "operator()") == 0) &&
	    !(n >= 21 && strcmp(s + n - 21, "(anonymous namespace)") == 0) &&
	    s[n - 2] != '(' /* "{lambda()#1}" style ends with '}' anyway */)
		fail_msg("%s: parameter list left in \"%s\"", raw, s);
}

static void test_libjvm(void **state)
{
	size_t j, tested = 0;

	(void)state;
	for (j = 0; j < sizeof(jvms) / sizeof(jvms[0]); j++) {
		struct elf_module *m;
		char buf[4096];
		long idx;
		size_t i, n, cpp = 0;

		if (access(jvms[j], R_OK) != 0)
			continue;
		m = load(jvms[j]);
		assert_non_null(m);
		idx = elf_module__find_name(m, CALL_HELPER);
		assert_true(idx >= 0);
		assert_int_equal(demangle__short(elf_module__sym_name(m, idx),
						 buf, sizeof(buf)), 1);
		assert_string_equal(buf, "JavaCalls::call_helper");
		/* every C++ name of the JVM: demangles to a short form */
		n = elf_module__nsyms(m);
		for (i = 0; i < n; i++) {
			const char *raw = elf_module__sym_name(m, i);

			if (demangle__short(raw, buf, sizeof(buf)) == 1) {
				check_short_form(raw, buf);
				cpp++;
			}
		}
		print_message("%s: %zu of %zu symbols demangled\n", jvms[j],
			      cpp, n);
		assert_true(cpp > n / 2);
		elf_module__free(m);
		tested++;
	}
	if (!tested)
		skip();
}

/* the full form is what __cxa_demangle says; the short form cuts it */
static void test_full_vs_short(void **state)
{
	char *full = demangle__full(CALL_HELPER);
	char buf[256];

	(void)state;
	assert_non_null(full);
	assert_string_equal(full, "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)");
	demangle__strip(full);
	assert_string_equal(full, "JavaCalls::call_helper");
	free(full);
	/* truncation keeps a NUL */
	assert_int_equal(demangle__short(CALL_HELPER, buf, 8), 1);
	assert_string_equal(buf, "JavaCal");
}

static void test_not_mangled(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(demangle__short("fx_alpha", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "fx_alpha");
	/* looks mangled, is not: kept as is */
	assert_int_equal(demangle__short("_Zgarbage(", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "_Zgarbage(");
	assert_null(demangle__full("main"));
	assert_int_equal(demangle__short(NULL, buf, sizeof(buf)), -1);
	/* PLT stubs: the function demangled, "@plt" kept */
	assert_int_equal(demangle__short("puts@plt", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "puts@plt");
	assert_int_equal(demangle__short(CALL_HELPER "@plt", buf, sizeof(buf)),
			 1);
	assert_string_equal(buf, "JavaCalls::call_helper@plt");
	assert_int_equal(demangle__short("@plt", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "@plt");
}

/* the fixture's templates, operators, anonymous namespace, return types */
static void test_cxx_fixture(void **state)
{
	static const char *const want[] = {
		"fxns::Widget<int>::poke",
		"fxns::Widget<long>::poke",
		"fxns::Functor::operator()",
		"fxns::twice<long>",
		"fxns::twice<int>",
		"fxns::(anonymous namespace)::hidden",
		"fxns::use_all",
	};
	bool found[sizeof(want) / sizeof(want[0])] = { 0 };
	char path[PATH_MAX], line[2048];
	FILE *f;
	size_t i;

	(void)state;
	f = fopen(fixture_path(path, sizeof(path), "libfxcxx.so.nm"), "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char name[1024], buf[1024], t;
		unsigned long long a;

		if (sscanf(line, "%llx %c %1023s", &a, &t, name) != 3)
			continue;
		if (demangle__short(name, buf, sizeof(buf)) != 1)
			continue;
		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			if (strcmp(buf, want[i]) == 0)
				found[i] = true;
	}
	fclose(f);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!found[i])
			fail_msg("no symbol of libfxcxx.so demangles to %s", want[i]);
}

/* demangled shapes cut by hand: operators, lambdas, clones */
static void test_strip_shapes(void **state)
{
	static const char *const cases[][2] = {
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)",
		  "std::vector<int, std::allocator<int> >::push_back" },
		{ "bool operator< <int>(Foo<int> const&, Foo<int> const&)",
		  "operator< <int>" },
		{ "Foo::operator<<(int)", "Foo::operator<<" },
		{ "Foo::operator new(unsigned long)", "Foo::operator new" },
		{ "Foo::operator unsigned long() const", "Foo::operator unsigned long" },
		{ "foo(int)::{lambda(int)#1}::operator()(int) const",
		  "foo(int)::{lambda(int)#1}::operator()" },
		{ "G1CollectedHeap::do_collection_pause_at_safepoint(double) [clone .part.0]",
		  "G1CollectedHeap::do_collection_pause_at_safepoint" },
		{ "(anonymous namespace)::run(int)", "(anonymous namespace)::run" },
		{ "void GrowableArray<int>::grow<long>(int)", "GrowableArray<int>::grow<long>" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = strdup(cases[i][0]);

		assert_non_null(s);
		demangle__strip(s);
		assert_string_equal(s, cases[i][1]);
		free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libjvm),
		cmocka_unit_test(test_full_vs_short),
		cmocka_unit_test(test_not_mangled),
		cmocka_unit_test(test_cxx_fixture),
		cmocka_unit_test(test_strip_shapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
