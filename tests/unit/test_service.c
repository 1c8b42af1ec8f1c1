// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Service names (user/profile/service.c): a JVM's main class or jar from
 * the java launcher's argv, a container's name from podman's, docker's and
 * a CRI runtime's files (parsed, and read from a fake root), and the
 * labels' characters.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "profile/service.h"

#define ID	"754a01428d315bc8e8cfc050e60c9d9a2bd85bf328f9de84f5daf1858ed6a625"
#define ID2	"4a3c38d7d3030000000000000000000000000000000000000000000000000000"

/* argv as /proc/PID/cmdline holds it: NUL after each argument */
static void main_is(const char *want, int n, ...)
{
	char buf[4096], out[SERVICE_NAME_MAX + 1];
	size_t len = 0;
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		const char *a = va_arg(ap, const char *);

		memcpy(buf + len, a, strlen(a) + 1);
		len += strlen(a) + 1;
	}
	va_end(ap);
	if (!want) {
		assert_int_equal(service__jvm_main(buf, len, out, sizeof(out)),
				 -ENOENT);
		return;
	}
	assert_int_equal(service__jvm_main(buf, len, out, sizeof(out)), 0);
	assert_string_equal(out, want);
}

static void test_jvm_main(void **state)
{
	(void)state;
	main_is("Chain", 4, "java", "-cp", "/x/classes", "Chain");
	main_is("org.apache.catalina.startup.Bootstrap", 8, "/usr/bin/java",
		"-Xmx1g", "-Dcatalina.base=/t", "--add-opens",
		"java.base/java.lang=ALL-UNNAMED", "-classpath", "/t/b.jar",
		"org.apache.catalina.startup.Bootstrap");
	main_is("h2", 3, "java", "-jar", "/usr/share/java/h2.jar");
	main_is("com.example.Main", 3, "java", "-m", "app/com.example.Main");
	main_is("app", 3, "java", "--module", "app");
	main_is("com.x.M", 2, "java", "--module=mod/com.x.M");
	main_is("Hello", 4, "java", "--source", "21", "Hello.java");
	main_is("Tool", 3, "java", "@argfile", "Tool");
	/* no main: a JVM made through JNI, options only, a cut argv */
	main_is(NULL, 1, "jsvc");
	main_is(NULL, 3, "java", "-Xint", "-version");
	main_is(NULL, 2, "java", "-cp");
	/* hostile argv: label-safe and bounded */
	main_is("a_b_c__d", 2, "java", "a b{c}=d");
	{
		char big[600], out[SERVICE_NAME_MAX + 1];

		memcpy(big, "java", 5);
		memset(big + 5, 'x', 500);
		big[505] = '\0';
		assert_int_equal(service__jvm_main(big, 506, out, sizeof(out)),
				 0);
		assert_int_equal(strlen(out), SERVICE_NAME_MAX);
		/* not NUL-terminated at the end: the last argument is cut */
		assert_int_equal(service__jvm_main(big, 300, out, sizeof(out)),
				 -ENOENT);
	}
}

static void parse_is(enum service_runtime rt, const char *text,
		     const char *id, const char *want)
{
	char out[SERVICE_NAME_MAX + 1];
	int rc = service__parse_runtime(rt, text, strlen(text), id, out,
					sizeof(out));

	if (!want) {
		assert_int_equal(rc, -ENOENT);
		return;
	}
	assert_int_equal(rc, 0);
	assert_string_equal(out, want);
}

static const char podman_json[] =
	"[{\"id\":\"" ID2 "\",\"names\":[\"other\"],\"image\":\"x\"},"
	"{\"id\":\"" ID "\",\"names\":[\"asgst-probe-name\"],"
	"\"layer\":\"l\",\"metadata\":\"{}\"},"
	"{\"id\":\"1111111111111111111111111111111111111111111111111111111111111111\"}]";

static void test_runtime_files(void **state)
{
	(void)state;
	parse_is(SERVICE_PODMAN, podman_json, ID, "asgst-probe-name");
	parse_is(SERVICE_PODMAN, podman_json, ID2, "other");
	parse_is(SERVICE_PODMAN, podman_json,
		 "2222222222222222222222222222222222222222222222222222222222222222",
		 NULL);
	/* the next record's names are not this one's */
	parse_is(SERVICE_PODMAN,
		 "[{\"id\":\"" ID "\"},{\"id\":\"" ID2 "\",\"names\":[\"n\"]}]",
		 ID, NULL);
	/* spaces as a pretty printer leaves them */
	parse_is(SERVICE_PODMAN, "[ {\"id\": \"" ID "\", \"names\": [ \"web\" ]} ]",
		 ID, "web");
	parse_is(SERVICE_DOCKER, "{\"State\":{},\"ID\":\"" ID "\",\"Name\":"
		 "\"/shop-db\",\"Driver\":\"overlay2\"}", ID, "shop-db");
	parse_is(SERVICE_DOCKER, "{\"Name\":\"nameless\"}", ID, NULL);
	parse_is(SERVICE_CRI, "{\"annotations\":{\"io.kubernetes.cri."
		 "container-type\":\"container\",\"io.kubernetes.cri."
		 "container-name\":\"api\",\"io.kubernetes.cri.sandbox-"
		 "namespace\":\"shop\"}}", ID, "shop/api");
	parse_is(SERVICE_CRI, "{\"annotations\":{\"io.kubernetes.container."
		 "name\":\"worker\",\"io.kubernetes.pod.namespace\":\"batch\"}}",
		 ID, "batch/worker");
	/* an escape or a cut string: refused, not guessed */
	parse_is(SERVICE_DOCKER, "{\"Name\":\"/a\\\"b\"}", ID, NULL);
	parse_is(SERVICE_DOCKER, "{\"Name\":\"/abc", ID, NULL);
	/* names as their owners chose them: label-safe */
	parse_is(SERVICE_DOCKER, "{\"Name\":\"/x{y=z},w\"}", ID, "x_y_z__w");
}

static char root[64];

static void put_file(const char *rel, const char *text, mode_t mode)
{
	char path[512], dir[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (p = dir + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(dir, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static void test_container_name(void **state)
{
	char out[SERVICE_NAME_MAX + 1], cmd[128];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/asgst-service-XXXXXX");
	assert_non_null(mkdtemp(root));
	service__set_root(root);
	put_file("/var/lib/containers/storage/overlay-containers/"
		 "containers.json", podman_json, 0600);
	if (geteuid() != 0) {
		/* the runtime's files must be root's: ours are refused */
		assert_int_equal(service__container_name(ID, out, sizeof(out)),
				 -ENOENT);
		goto cleanup;
	}
	assert_int_equal(service__container_name(ID, out, sizeof(out)), 0);
	assert_string_equal(out, "asgst-probe-name");
	/* a CRI config for the same id is more specific */
	put_file("/run/containerd/io.containerd.runtime.v2.task/k8s.io/" ID
		 "/config.json", "{\"annotations\":{\"io.kubernetes.cri."
		 "container-name\":\"api\",\"io.kubernetes.cri.sandbox-"
		 "namespace\":\"shop\"}}", 0644);
	assert_int_equal(service__container_name(ID, out, sizeof(out)), 0);
	assert_string_equal(out, "shop/api");
	/* a file others may write is no runtime's word */
	put_file("/var/lib/docker/containers/" ID2 "/config.v2.json",
		 "{\"Name\":\"/forged\"}", 0666);
	assert_int_equal(service__container_name(ID2, out, sizeof(out)), 0);
	assert_string_equal(out, "other");
	/* not an id: never part of a path */
	assert_int_equal(service__container_name("../../etc/x", out,
						  sizeof(out)), -EINVAL);
	assert_int_equal(service__container_name(
		"3333333333333333333333333333333333333333333333333333333333333333",
		out, sizeof(out)), -ENOENT);
cleanup:
	service__set_root(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void test_exe_and_sanitize(void **state)
{
	char out[SERVICE_NAME_MAX + 1], s[] = "a b\x01{}=,\"ok-1.2_3:/x";

	(void)state;
	assert_int_equal(service__exe_name(getpid(), out, sizeof(out)), 0);
	assert_string_equal(out, "test_service");
	service__sanitize(s);
	/* ':' is no part of a Pyroscope application name */
	assert_string_equal(s, "a_b______ok-1.2_3_/x");
	assert_true(service__exe_name(0x7ffffff0, out, sizeof(out)) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jvm_main),
		cmocka_unit_test(test_runtime_files),
		cmocka_unit_test(test_container_name),
		cmocka_unit_test(test_exe_and_sanitize),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
