// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Container ids and pod uids from cgroup paths (user/profile/container.c):
 * the /proc/PID/cgroup text of each runtime's containers, hosts' own
 * processes that must get none, and cut or forged paths.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "output/writers.h"
#include "profile/container.h"
#include "profile/filter.h"
#include "profile/profile.h"
#include "trace.h"

/* ids as the runtimes print them (podman's as podman 4.3 with runc and
 * --cgroup-manager cgroupfs prints it) */
#define ID_PODMAN "eed256089ba60de2242a8b6b906dc15a8717d9a4a4f563bfa3e91d4610f22465"
#define ID_DOCKER "4e5b6f0d9c8a7b61e2f3d4c5b6a79801f2e3d4c5b6a7980f1e2d3c4b5a697887"
#define ID_CTRD   "9a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
#define ID_CRIO   "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
#define ID_OUTER  "1111111111111111111111111111111111111111111111111111111111111111"
#define POD_UID   "1f3a2b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b"
#define POD_SD    "1f3a2b4c_5d6e_4f70_8a9b_0c1d2e3f4a5b"
#define POD_STATIC "6b2f34a0c9e1d7f8a2b3c4d5e6f70819"

struct cg_case {
	const char *what;
	const char *text;	/* /proc/PID/cgroup */
	const char *id;		/* expected, "" none */
	const char *pod;
};

static const struct cg_case cases[] = {
	{ "podman, cgroupfs, hybrid v1 + v2 (captured)",
	  "9:name=systemd:/libpod_parent/libpod-" ID_PODMAN "\n"
	  "8:pids:/libpod_parent/libpod-" ID_PODMAN "\n"
	  "4:memory:/libpod_parent/libpod-" ID_PODMAN "\n"
	  "1:cpu:/libpod_parent/libpod-" ID_PODMAN "\n"
	  "0::/libpod_parent/libpod-" ID_PODMAN "\n", ID_PODMAN, "" },
	{ "podman's conmon, cgroupfs (captured): not in the container",
	  "9:name=systemd:/\n8:pids:/libpod_parent/conmon\n"
	  "4:memory:/libpod_parent/conmon\n0::/\n", "", "" },
	{ "podman, systemd, cgroup v2",
	  "0::/machine.slice/libpod-" ID_PODMAN ".scope/container\n",
	  ID_PODMAN, "" },
	{ "podman's conmon, systemd",
	  "0::/machine.slice/libpod-conmon-" ID_PODMAN ".scope\n",
	  ID_PODMAN, "" },
	{ "podman rootless",
	  "0::/user.slice/user-1000.slice/user@1000.service/user.slice/"
	  "libpod-" ID_PODMAN ".scope/container\n", ID_PODMAN, "" },
	{ "podman in a pod (libpod pod slice is not a kubernetes pod)",
	  "0::/machine.slice/machine-libpod_pod_" ID_OUTER ".slice/libpod-"
	  ID_PODMAN ".scope\n", ID_PODMAN, "" },
	{ "docker, cgroup v1 (cgroupfs)",
	  "12:memory:/docker/" ID_DOCKER "\n11:cpu,cpuacct:/docker/" ID_DOCKER
	  "\n1:name=systemd:/docker/" ID_DOCKER "\n0::/\n", ID_DOCKER, "" },
	{ "docker, systemd, cgroup v2",
	  "0::/system.slice/docker-" ID_DOCKER ".scope\n", ID_DOCKER, "" },
	{ "docker, cgroupfs, cgroup v2", "0::/docker/" ID_DOCKER "\n",
	  ID_DOCKER, "" },
	{ "containerd (ctr, nerdctl), cgroupfs", "0::/default/" ID_CTRD "\n",
	  ID_CTRD, "" },
	{ "containerd (nerdctl), systemd",
	  "0::/system.slice/nerdctl-" ID_CTRD ".scope\n", ID_CTRD, "" },
	{ "kubernetes, containerd, systemd, burstable",
	  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	  POD_SD ".slice/cri-containerd-" ID_CTRD ".scope\n", ID_CTRD,
	  POD_UID },
	{ "kubernetes, containerd, systemd, guaranteed",
	  "0::/kubepods.slice/kubepods-pod" POD_SD ".slice/cri-containerd-"
	  ID_CTRD ".scope\n", ID_CTRD, POD_UID },
	{ "kubernetes, cri-o, systemd, besteffort",
	  "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
	  POD_SD ".slice/crio-" ID_CRIO ".scope\n", ID_CRIO, POD_UID },
	{ "kubernetes, cri-o's conmon",
	  "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
	  POD_SD ".slice/crio-conmon-" ID_CRIO ".scope\n", ID_CRIO, POD_UID },
	{ "kubernetes, cgroupfs, cgroup v1",
	  "11:memory:/kubepods/burstable/pod" POD_UID "/" ID_DOCKER "\n"
	  "1:name=systemd:/kubepods/burstable/pod" POD_UID "/" ID_DOCKER
	  "\n0::/\n", ID_DOCKER, POD_UID },
	{ "kubernetes, cgroupfs, guaranteed",
	  "0::/kubepods/pod" POD_UID "/" ID_CTRD "\n", ID_CTRD, POD_UID },
	{ "kubernetes static pod (uid is a 32-hex hash)",
	  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	  POD_STATIC ".slice/cri-containerd-" ID_CTRD ".scope\n", ID_CTRD,
	  POD_STATIC },
	{ "kind: a kubelet in a docker container (the inner one counts)",
	  "0::/docker/" ID_OUTER "/kubelet.slice/kubelet-kubepods.slice/"
	  "kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod"
	  POD_SD ".slice/cri-containerd-" ID_CTRD ".scope\n", ID_CTRD,
	  POD_UID },
	{ "pod cgroup itself (no container yet)",
	  "0::/kubepods/besteffort/pod" POD_UID "\n", "", POD_UID },
	/* the host's own processes */
	{ "systemd service", "0::/system.slice/sshd.service\n", "", "" },
	{ "login session", "0::/user.slice/user-0.slice/session-3.scope\n",
	  "", "" },
	{ "root cgroup", "0::/\n", "", "" },
	{ "empty file", "", "", "" },
	/* near misses and forgeries */
	{ "63 hex", "0::/docker/" "eed256089ba60de2242a8b6b906dc15a8717d9a4a4f563"
	  "bfa3e91d4610f2246\n", "", "" },
	{ "65 hex", "0::/docker/" ID_DOCKER "0\n", "", "" },
	{ "upper case hex",
	  "0::/docker/EED256089BA60DE2242A8B6B906DC15A8717D9A4A4F563BFA3E91D4610F22465\n",
	  "", "" },
	{ "id without a dash before it",
	  "0::/system.slice/docker" ID_DOCKER ".scope\n", "", "" },
	{ "a suffix after .scope",
	  "0::/system.slice/docker-" ID_DOCKER ".scopex\n", "", "" },
	{ "pod dir without a kubepods parent",
	  "0::/pods/pod" POD_UID "/" ID_CTRD "\n", ID_CTRD, "" },
	{ "malformed pod uid",
	  "0::/kubepods/pod1f3a2b4c-5d6e-4f70-8a9b-0c1d2e3f4a5/" ID_CTRD "\n",
	  ID_CTRD, "" },
	{ "v2 line first, v1 lines after it in the file",
	  "4:memory:/docker/" ID_DOCKER "\n0::/system.slice/docker-" ID_CTRD
	  ".scope\n", ID_CTRD, "" },
	{ "v1 line when the v2 one names nothing",
	  "0::/init.scope\n4:memory:/docker/" ID_DOCKER "\n", ID_DOCKER, "" },
	{ "colons in the path", "0::/a:b/docker-" ID_DOCKER ".scope\n",
	  ID_DOCKER, "" },
	{ "a line without colons", "garbage\n0::/docker/" ID_DOCKER "\n",
	  ID_DOCKER, "" },
	{ "no newline at the end", "0::/docker/" ID_DOCKER, ID_DOCKER, "" },
};

static void test_runtime_paths(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cg_case *c = &cases[i];
		struct container_ids ci;
		bool found;

		memset(&ci, 0x55, sizeof(ci));
		found = container__parse_cgroup(c->text, strlen(c->text), &ci);
		if (strcmp(ci.id, c->id) || strcmp(ci.pod_uid, c->pod))
			fail_msg("%s: id '%s' pod '%s', want '%s' '%s'",
				 c->what, ci.id, ci.pod_uid, c->id, c->pod);
		assert_int_equal(found, c->id[0] || c->pod[0]);
	}
}

/* a NUL inside the text ends the path: nothing after it is trusted */
static void test_nul_and_bounds(void **state)
{
	static const char t[] = "0::/docker/\0" ID_DOCKER "\n";
	char big[3 * CONTAINER_CGROUP_MAX], path[64];
	struct container_ids ci;
	size_t n = 0;

	(void)state;
	assert_false(container__parse_cgroup(t, sizeof(t) - 1, &ci));
	assert_string_equal(ci.id, "");
	/* a very long path of components, the id at the end still found */
	n += (size_t)snprintf(big, sizeof(big), "0::");
	while (n < sizeof(big) - 200)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "/x");
	n += (size_t)snprintf(big + n, sizeof(big) - n, "/crio-%s.scope\n",
			      ID_CRIO);
	assert_true(container__parse_cgroup(big, n, &ci));
	assert_string_equal(ci.id, ID_CRIO);
	/* the v2 path, and what does not fit */
	assert_true(container__cgroup2_path("1:cpu:/a\n0::/b/c\n", 17, path,
					    sizeof(path)));
	assert_string_equal(path, "/b/c");
	assert_false(container__cgroup2_path(big, n, path, sizeof(path)));
	assert_false(container__cgroup2_path("1:cpu:/a\n", 9, path,
					     sizeof(path)));
}

/* this process's own file: read whole, or cut at a line */
static void test_read_self(void **state)
{
	char small[8], buf[CONTAINER_CGROUP_MAX + 1];
	struct container_ids ci;
	ssize_t n;

	(void)state;
	n = container__read_cgroup(getpid(), buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(buf[n - 1], '\n');
	assert_int_equal((size_t)n, strlen(buf));
	n = container__read_cgroup(getpid(), small, sizeof(small));
	assert_true(n >= 0);
	assert_true(n == 0 || small[n - 1] == '\n');
	assert_int_equal(container__read_pid(getpid(), &ci), 0);
	assert_int_equal(container__read_cgroup(-1, buf, sizeof(buf)),
			 -ENOENT);
}

/* the cgroup that names the container: up to its innermost id component */
static void test_scope_path(void **state)
{
	static const char id[] =
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char path[512], out[512], small[16];

	(void)state;
	snprintf(path, sizeof(path), "/machine.slice/libpod-%s.scope/container",
		 id);
	assert_true(container__scope_path(path, strlen(path), out,
					  sizeof(out)));
	assert_int_equal(strlen(out), strlen(path) - strlen("/container"));
	assert_memory_equal(out, path, strlen(out));
	/* the innermost of two: a container in a container */
	snprintf(path, sizeof(path), "/docker/%s/kubepods/pod1/%s", id, id);
	assert_true(container__scope_path(path, strlen(path), out,
					  sizeof(out)));
	assert_string_equal(out, path);
	/* a user's subtree naming the id is still a scope path: who owns
	 * it decides (container__scope_owner) */
	snprintf(path, sizeof(path), "/user.slice/deleg/libpod-%s.scope", id);
	assert_true(container__scope_path(path, strlen(path), out,
					  sizeof(out)));
	assert_string_equal(out, path);
	assert_false(container__scope_path("/user.slice/x", 13, out,
					   sizeof(out)));
	assert_false(container__scope_path(path, strlen(path), small,
					   sizeof(small)));
}

static void test_arg(void **state)
{
	char p[CONTAINER_ID_LEN + 1], err[256];

	(void)state;
	assert_int_equal(container__parse_arg("EED256089BA6", p, sizeof(p),
					      err, sizeof(err)), 0);
	assert_string_equal(p, "eed256089ba6");
	assert_int_equal(container__parse_arg(ID_PODMAN, p, sizeof(p), err,
					      sizeof(err)), 0);
	assert_true(container__id_matches(ID_PODMAN, "eed256089ba6"));
	assert_false(container__id_matches(ID_DOCKER, "eed256089ba6"));
	assert_false(container__id_matches(NULL, "eed256089ba6"));
	assert_int_equal(container__parse_arg("eed256089ba", p, sizeof(p), err,
					      sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "12 to 64 hex digits"));
	assert_int_equal(container__parse_arg("eed256089ba6x", p, sizeof(p),
					      err, sizeof(err)), -EINVAL);
	assert_int_equal(container__parse_arg(ID_PODMAN "0", p, sizeof(p), err,
					      sizeof(err)), -EINVAL);
	assert_int_equal(container__parse_arg("", p, sizeof(p), err,
					      sizeof(err)), -EINVAL);
}

/* the filter keeps the container's stacks only, by id or prefix */
static void test_filter(void **state)
{
	struct trace in = { .pid = 1, .tid = 1, .container_id = ID_PODMAN };
	struct trace out = { .pid = 2, .tid = 2, .container_id = ID_DOCKER };
	struct trace host = { .pid = 3, .tid = 3 };
	struct filter f = { 0 };
	char err[256];

	(void)state;
	assert_true(filter__container_ok(&f, NULL));
	assert_int_equal(filter__option(&f, "container", "eed256089ba60de2",
					err, sizeof(err)), 0);
	assert_true(filter__active(&f));
	assert_true(filter__apply(&f, &in));
	assert_false(filter__apply(&f, &out));
	assert_false(filter__apply(&f, &host));
	assert_int_equal(filter__option(&f, "container", "xyz", err,
					sizeof(err)), -EINVAL);
	filter__free(&f);
}

/* JSON fields and pprof labels: only where the path named them */
static void test_writers(void **state)
{
	struct profile *p = profile__new();
	struct frame fr = { .type = FRAME_NON_JAVA, .pc = 0x1000,
			    .symbol = "loop", .module = "/bin/x" };
	struct trace a = { .pid = 7, .tid = 7, .comm = "java", .thread = "main",
			   .container_id = ID_CTRD, .pod_uid = POD_UID,
			   .nframes = 1, .frames = &fr };
	struct trace b = { .pid = 8, .tid = 8, .comm = "sh", .thread = "sh",
			   .nframes = 1, .frames = &fr };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(p);
	assert_int_equal(profile__add(p, &a, 3, 0), 0);
	assert_int_equal(profile__add(p, &b, 2, 0), 0);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(write_json(p, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"pid\":7,\"tid\":7,\"comm\":\"java\","
			       "\"thread\":\"main\",\"container_id\":\""
			       ID_CTRD "\",\"pod_uid\":\"" POD_UID "\""));
	assert_non_null(strstr(buf, "\"thread\":\"sh\",\"count\":2"));
	free(buf);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runtime_paths),
		cmocka_unit_test(test_nul_and_bounds),
		cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_scope_path),
		cmocka_unit_test(test_arg),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_writers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
