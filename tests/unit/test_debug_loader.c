// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The debug-info thread: a module's DWARF read there (this test binary,
 * built -g), a file with none, a fetch from a server that is not there,
 * one from a server that never answers (ended at its deadline, and at
 * once when the loader is freed), the fetch cap, and the environment
 * libdebuginfod is given (its cache a folder of ours, never another's).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/debug_loader.h"
#include "symbols/dwarf_lines.h"

static char cache_dir[] = "/tmp/asgst-dl-XXXXXX";

/*
 * libdebuginfod writes its cache's settings with dprintf(), whose buffer
 * glibc frees in a way LeakSanitizer does not see: not a leak of ours
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libdebuginfod.so\n";
}

/* whole stacks (not frame pointers alone) so the suppression sees the
 * library in them */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}

/* one result, waiting at most 30 s for it */
static struct debug_result wait_one(struct debug_loader *l)
{
	struct debug_result r = { 0 };

	for (int i = 0; i < 300; i++)
		if (debug_loader__poll(l, &r, 1, 100ull * 1000 * 1000) == 1)
			return r;
	fail_msg("no result from the loader");
	return r;
}

static void test_reads_dwarf(void **state)
{
	struct debug_loader *l = debug_loader__new(NULL);
	struct debug_job j = { .key = (void *)1, .debug_fd = -1,
			       .max_bytes = 1ull << 30 };
	struct debug_result r;
	struct dwarf_line_frame f[DWARF_LINES_MAX];

	(void)state;
	assert_non_null(l);
	j.fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(j.fd >= 0);
	assert_int_equal(debug_loader__submit(l, &j), 0);
	r = wait_one(l);
	assert_ptr_equal(r.key, (void *)1);
	assert_int_equal(r.err, 0);
	assert_non_null(r.dw);
	assert_int_equal(r.fetched_fd, -1);
	assert_true(dwarf_lines__bytes(r.dw) > 0);
	/* the DWARF names this very function's code */
	assert_true(dwarf_lines__find(r.dw, 0, f, DWARF_LINES_MAX) >= 0);
	dwarf_lines__free(r.dw);
	assert_int_equal(debug_loader__pending(l), 0);
	debug_loader__free(l);
}

static void test_no_dwarf_no_fetch(void **state)
{
	struct debug_loader *l = debug_loader__new(NULL);
	struct debug_job j = { .key = (void *)2, .debug_fd = -1,
			       .max_bytes = 1ull << 30,
			       .build_id = { 1, 2, 3, 4 }, .build_id_len = 4 };
	struct debug_loader_stats st;
	struct debug_result r;

	(void)state;
	/* a file with no debug sections: not an ELF at all */
	j.fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	assert_true(j.fd >= 0);
	assert_int_equal(debug_loader__submit(l, &j), 0);
	r = wait_one(l);
	assert_null(r.dw);
	assert_int_not_equal(r.err, 0);
	debug_loader__stats(l, &st);
	assert_int_equal(st.fetches, 0);
	debug_loader__free(l);
}

/* a job only debuginfod can answer: a build-id, a module with no DWARF */
static struct debug_job fetch_job(void *key)
{
	struct debug_job j = { .key = key, .debug_fd = -1,
			       .max_bytes = 1ull << 30, .build_id_len = 20 };

	for (int i = 0; i < 20; i++)
		j.build_id[i] = (uint8_t)(0xa0 + i);
	j.fd = -1;
	return j;
}

static int listen_port(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(s, 16) || getsockname(s, (struct sockaddr *)&a, &len))
		return -1;
	*port = ntohs(a.sin_port);
	return s;
}

static void test_fetch_dead_server(void **state)
{
	struct debug_loader_opts o = { .fetch_timeout_s = 5 };
	struct debug_loader_stats st;
	struct debug_loader *l;
	struct debug_result r;
	struct debug_job j;
	char url[64], err[256];
	int s, port;

	(void)state;
	/* a port no one listens on: one we closed */
	s = listen_port(&port);
	assert_true(s >= 0);
	close(s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o.urls = debug_loader__env(url, 0, err, sizeof(err));
	assert_non_null(o.urls);
	l = debug_loader__new(&o);
	j = fetch_job((void *)3);
	assert_int_equal(debug_loader__submit(l, &j), 0);
	r = wait_one(l);
	assert_null(r.dw);
	assert_int_equal(r.fetched_fd, -1);
	assert_int_not_equal(r.err, 0);
	debug_loader__stats(l, &st);
	assert_int_equal(st.fetches, 1);
	assert_int_equal(st.fetched, 0);
	assert_int_equal(st.fetch_failed, 1);
	debug_loader__free(l);
}

static void test_fetch_silent_server(void **state)
{
	struct debug_loader_opts o = { .fetch_timeout_s = 1 };
	struct debug_loader_stats st;
	struct debug_loader *l;
	struct debug_result r;
	struct debug_job j;
	char url[64], err[256];
	int s, port;

	(void)state;
	/* connections are taken by the kernel's backlog, never answered */
	s = listen_port(&port);
	assert_true(s >= 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o.urls = debug_loader__env(url, 0, err, sizeof(err));
	assert_non_null(o.urls);
	l = debug_loader__new(&o);
	j = fetch_job((void *)4);
	assert_int_equal(debug_loader__submit(l, &j), 0);
	/* the deadline ends it: a result, no file */
	r = wait_one(l);
	assert_null(r.dw);
	assert_int_equal(r.fetched_fd, -1);
	debug_loader__stats(l, &st);
	assert_int_equal(st.fetch_failed, 1);
	/* a fetch under way when the loader goes: it ends, nothing leaks */
	j = fetch_job((void *)5);
	assert_int_equal(debug_loader__submit(l, &j), 0);
	for (int i = 0; i < 100 && !debug_loader__fetching(l); i++)
		usleep(10000);
	debug_loader__free(l);
	close(s);
}

static void test_fetch_cap(void **state)
{
	struct debug_loader_opts o = { .fetch_timeout_s = 2,
				       .max_fetches = 2 };
	struct debug_loader_stats st;
	struct debug_loader *l;
	struct debug_result r;
	char url[64], err[256];
	int s, port;

	(void)state;
	s = listen_port(&port);
	assert_true(s >= 0);
	close(s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	o.urls = debug_loader__env(url, 0, err, sizeof(err));
	l = debug_loader__new(&o);
	for (int i = 0; i < 4; i++) {
		struct debug_job j = fetch_job((void *)(uintptr_t)(10 + i));

		assert_int_equal(debug_loader__submit(l, &j), 0);
	}
	for (int i = 0; i < 4; i++) {
		r = wait_one(l);
		assert_null(r.dw);
	}
	debug_loader__stats(l, &st);
	assert_int_equal(st.fetches, 2);
	assert_int_equal(st.fetch_capped, 2);
	debug_loader__free(l);
}

static void test_env_cache(void **state)
{
	char err[256];
	const char *u;

	(void)state;
	/* none given, none in the environment: no servers */
	unsetenv("DEBUGINFOD_URLS");
	assert_null(debug_loader__env(NULL, 0, err, sizeof(err)));
	assert_string_equal(err, "");
	/* given: set, the cache the caller chose kept, the size capped */
	u = debug_loader__env("http://127.0.0.1:9", 4096, err, sizeof(err));
	assert_string_equal(u, "http://127.0.0.1:9");
	assert_string_equal(getenv("DEBUGINFOD_CACHE_PATH"), cache_dir);
	assert_string_equal(getenv("DEBUGINFOD_MAXSIZE"), "4096");
	/* the environment's servers when none are given */
	assert_string_equal(debug_loader__env(NULL, 0, err, sizeof(err)),
			    "http://127.0.0.1:9");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_cache),
		cmocka_unit_test(test_reads_dwarf),
		cmocka_unit_test(test_no_dwarf_no_fetch),
		cmocka_unit_test(test_fetch_dead_server),
		cmocka_unit_test(test_fetch_silent_server),
		cmocka_unit_test(test_fetch_cap),
	};
	int rc;

	if (!mkdtemp(cache_dir))
		return 1;
	setenv("DEBUGINFOD_CACHE_PATH", cache_dir, 1);
	unsetenv("DEBUGINFOD_MAXSIZE");
	char cmd[sizeof(cache_dir) + 16];

	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", cache_dir);
	if (system(cmd) != 0 && !rc)
		rc = 1;
	return rc;
}
