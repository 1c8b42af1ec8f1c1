// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Parsers of the attach path: replies of JDK 17 / 21+, /proc and release
 * files, the DisableAttachMechanism command-line check. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "jvm/attach.h"
#include "jvm/jvm_discover.h"

#define S(x) x, sizeof(x) - 1

static void test_reply_code(void **state)
{
	const char *rest;
	size_t rl;
	int rc;

	(void)state;
	assert_int_equal(attach__parse_reply(S("0\nreturn code: 0\n"), &rc,
					     &rest, &rl), 0);
	assert_int_equal(rc, 0);
	assert_int_equal(rl, strlen("return code: 0\n"));
	assert_memory_equal(rest, "return code: 0\n", rl);

	assert_int_equal(attach__parse_reply(S("-1\nOperation bogus not recognized!"),
					     &rc, &rest, &rl), 0);
	assert_int_equal(rc, -1);
	assert_memory_equal(rest, "Operation", 9);

	/* a code alone, no newline: still a reply */
	assert_int_equal(attach__parse_reply(S("0"), &rc, &rest, &rl), 0);
	assert_int_equal(rl, 0);

	/* garbage, empty, a code followed by junk on its line, overflow */
	assert_int_equal(attach__parse_reply(S("hello\n"), &rc, &rest, &rl),
			 -ATTACH_E_PROTO);
	assert_int_equal(attach__parse_reply(S(""), &rc, &rest, &rl),
			 -ATTACH_E_PROTO);
	assert_int_equal(attach__parse_reply(S("0x\n"), &rc, &rest, &rl),
			 -ATTACH_E_PROTO);
	assert_int_equal(attach__parse_reply(S("99999999999999\n"), &rc, &rest,
					     &rl), -ATTACH_E_PROTO);
}

static void test_load_reply(void **state)
{
	char msg[128];
	int rc = -5;

	(void)state;
	/* JDK 21+ (and late 17 updates) */
	assert_int_equal(attach__parse_load_reply(S("return code: 0\n"), &rc,
						  msg, sizeof(msg)), 0);
	assert_int_equal(rc, 0);
	assert_int_equal(attach__parse_load_reply(S("return code: 7\n"), &rc,
						  msg, sizeof(msg)), 0);
	assert_int_equal(rc, 7);
	assert_int_equal(attach__parse_load_reply(S("return code: -1"), &rc,
						  msg, sizeof(msg)), 0);
	assert_int_equal(rc, -1);
	/* JDK 9..17.0.x: the agent's code alone */
	assert_int_equal(attach__parse_load_reply(S("0\n"), &rc, msg,
						  sizeof(msg)), 0);
	assert_int_equal(rc, 0);
	assert_int_equal(attach__parse_load_reply(S("12\n"), &rc, msg,
						  sizeof(msg)), 0);
	assert_int_equal(rc, 12);
	/* JDK 25 on a failed dlopen: code 0 and a message */
	assert_int_equal(attach__parse_load_reply(
		S("/x/a.so was not loaded.\n/x/a.so: cannot open shared object file\n"),
		&rc, msg, sizeof(msg)), -ATTACH_E_PROTO);
	assert_string_equal(msg, "/x/a.so was not loaded.");
	assert_int_equal(attach__parse_load_reply(S("12 monkeys\n"), &rc, msg,
						  sizeof(msg)), -ATTACH_E_PROTO);
	assert_int_equal(attach__parse_load_reply(S("return code: x\n"), &rc,
						  msg, sizeof(msg)),
			 -ATTACH_E_PROTO);
	assert_int_equal(attach__parse_load_reply(S(""), &rc, msg,
						  sizeof(msg)), -ATTACH_E_PROTO);
}

static void test_nstgid(void **state)
{
	(void)state;
	assert_int_equal(jvm_discover__parse_nstgid(
		S("Name:\tjava\nTgid:\t4242\nNStgid:\t4242\t17\t1\nPid:\t4242\n")),
		1);
	assert_int_equal(jvm_discover__parse_nstgid(S("NStgid:\t4242\n")),
			 4242);
	assert_int_equal(jvm_discover__parse_nstgid(S("Tgid:\t4242\n")), -1);
	assert_int_equal(jvm_discover__parse_nstgid(S("NStgid:\t\n")), -1);
	assert_int_equal(jvm_discover__parse_nstgid(S("NStgid:\t99999999999\n")),
			 -1);
	/* a truncated buffer: the line without its end still parses */
	assert_int_equal(jvm_discover__parse_nstgid(S("NStgid:\t5\t6")), 6);
}

static void test_nspid_self(void **state)
{
	pid_t ns = 0;
	uid_t u;
	gid_t g;

	(void)state;
	/* the test runs in the host pid namespace or a container: either
	 * way our innermost pid is what getpid() says */
	assert_int_equal(jvm_discover__nspid(getpid(), &ns), 0);
	assert_int_equal(ns, getpid());
	assert_int_equal(jvm_discover__creds(getpid(), &u, &g), 0);
	assert_int_equal(u, geteuid());
	assert_int_equal(g, getegid());
	/* not a JVM: no libjvm.so in our maps */
	assert_int_equal(jvm_discover__has_libjvm(getpid(), NULL, 0), 0);
	assert_int_equal(jvm_discover__agent_loaded(getpid()), 0);
}

static void test_probe_not_jvm(void **state)
{
	struct jvm_info info;
	char err[256];

	(void)state;
	assert_int_equal(jvm_discover__probe(getpid(), &info, err, sizeof(err)),
			 -ENOEXEC);
	assert_non_null(strstr(err, "not a HotSpot JVM"));
	assert_int_equal(jvm_discover__probe(0x7ffffff0, &info, err,
					     sizeof(err)), -ESRCH);
	assert_non_null(strstr(err, "no such process"));
}

static void test_release(void **state)
{
	char v[32];

	(void)state;
	assert_int_equal(jvm_discover__parse_release(
		S("IMPLEMENTOR=\"Debian\"\nJAVA_RUNTIME_VERSION=\"17.0.15+6\"\nJAVA_VERSION=\"17.0.15\"\nOS_ARCH=\"x86_64\"\n"),
		v, sizeof(v)), 0);
	assert_string_equal(v, "17.0.15");
	assert_int_equal(jvm_discover__parse_release(S("JAVA_VERSION=\"25.0.3\""),
						     v, sizeof(v)), 0);
	assert_string_equal(v, "25.0.3");
	/* JAVA_VERSION_DATE must not match JAVA_VERSION */
	assert_int_equal(jvm_discover__parse_release(
		S("JAVA_VERSION_DATE=\"2025-04-15\"\n"), v, sizeof(v)), -ENOENT);
	assert_int_equal(jvm_discover__parse_release(S("JAVA_VERSION=\"17"),
						     v, sizeof(v)), -ENOENT);
	assert_int_equal(jvm_discover__parse_release(S("JAVA_VERSION=\"\"\n"),
						     v, sizeof(v)), -ENOENT);
	assert_int_equal(jvm_discover__parse_release(S("JAVA_VERSION=\"1\x01\"\n"),
						     v, sizeof(v)), -ENOENT);
	/* cut to the buffer, NUL-terminated */
	assert_int_equal(jvm_discover__parse_release(
		S("JAVA_VERSION=\"17.0.15.1.2.3\"\n"), v, 5), 0);
	assert_string_equal(v, "17.0");
}

static void test_cmdline_flag(void **state)
{
	(void)state;
	assert_true(jvm_discover__cmdline_disables_attach(
		S("java\0-XX:+DisableAttachMechanism\0-cp\0x\0Main\0")));
	assert_false(jvm_discover__cmdline_disables_attach(
		S("java\0-cp\0x\0Main\0")));
	/* the last one wins */
	assert_false(jvm_discover__cmdline_disables_attach(
		S("java\0-XX:+DisableAttachMechanism\0-XX:-DisableAttachMechanism\0Main\0")));
	/* a program argument after the main class is not a JVM option */
	assert_false(jvm_discover__cmdline_disables_attach(
		S("java\0Main\0-XX:+DisableAttachMechanism\0")));
	assert_false(jvm_discover__cmdline_disables_attach(
		S("java\0-jar\0app.jar\0-XX:+DisableAttachMechanism\0")));
	/* the value of -cp is not the main class */
	assert_true(jvm_discover__cmdline_disables_attach(
		S("java\0-cp\0dir\0-XX:+DisableAttachMechanism\0Main\0")));
	/* near misses */
	assert_false(jvm_discover__cmdline_disables_attach(
		S("java\0-XX:+DisableAttachMechanismX\0Main\0")));
	assert_false(jvm_discover__cmdline_disables_attach(
		S("java\0-XX:+DisableAttachMechanis\0Main\0")));
	/* no trailing NUL */
	assert_true(jvm_discover__cmdline_disables_attach(
		S("java\0-XX:+DisableAttachMechanism")));
	assert_false(jvm_discover__cmdline_disables_attach(S("")));
}

static void test_java_home(void **state)
{
	char h[64];

	(void)state;
	assert_int_equal(jvm_discover__java_home(
		"/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", h,
		sizeof(h)), 0);
	assert_string_equal(h, "/usr/lib/jvm/java-17-openjdk-amd64");
	assert_int_equal(jvm_discover__java_home("/opt/jdk/lib/client/libjvm.so",
						 h, sizeof(h)), 0);
	assert_string_equal(h, "/opt/jdk");
	assert_int_equal(jvm_discover__java_home("/lib/server/libjvm.so", h,
						 sizeof(h)), -EINVAL);
	assert_int_equal(jvm_discover__java_home("/opt/jdk/jre/x/libjvm.so", h,
						 sizeof(h)), -EINVAL);
	assert_int_equal(jvm_discover__java_home("libjvm.so", h, sizeof(h)),
			 -EINVAL);
	assert_int_equal(jvm_discover__java_home("/a/very/long/home/lib/server/libjvm.so",
						 h, 8), -ENAMETOOLONG);
}

static void test_command_errors(void **state)
{
	char out[64], err[256];
	const char *args[3] = { NULL, NULL, NULL };

	(void)state;
	/* our own process is no JVM; an over-long command never gets sent */
	assert_int_equal(attach__command(getpid(), "properties", args, out,
					 sizeof(out), err, sizeof(err)),
			 -ATTACH_E_NOT_JVM);
	assert_non_null(strstr(err, "not a HotSpot JVM"));
	assert_int_equal(attach__command(getpid(), "averyveryverylongcommand",
					 args, out, sizeof(out), err,
					 sizeof(err)), -EINVAL);
	assert_int_equal(attach__command(0, "properties", args, out,
					 sizeof(out), err, sizeof(err)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply_code),
		cmocka_unit_test(test_load_reply),
		cmocka_unit_test(test_nstgid),
		cmocka_unit_test(test_nspid_self),
		cmocka_unit_test(test_probe_not_jvm),
		cmocka_unit_test(test_release),
		cmocka_unit_test(test_cmdline_flag),
		cmocka_unit_test(test_java_home),
		cmocka_unit_test(test_command_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
