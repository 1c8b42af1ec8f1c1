// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* asgst-bpf attach PID [AGENT OPTIONS]: load the agent into a running JVM. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm/attach.h"
#include "jvm/codemap.h"
#include "cli/commands.h"
#include "jvm/jvm_discover.h"

static const char attach_usage[] =
"Usage: asgst-bpf attach [OPTIONS] PID [AGENT_OPTIONS]\n"
"\n"
"Load the asgst JVMTI agent into the running HotSpot JVM PID (host pid;\n"
"JVMs in containers work too) through the JVM's attach mechanism. The agent\n"
"then publishes the JVM's code map in the JVM's\n"
"/dev/shm/asgst-<pid>-<pidns>.map.\n"
"AGENT_OPTIONS is passed to the agent as is (see the agent's options).\n"
"A JVM that already has the agent is left alone (success).\n"
"\n"
"The agent library is found next to the asgst-bpf binary (libasgst-agent.so,\n"
"or ../lib/asgst-bpf/libasgst-agent.so when installed); the environment\n"
"variable ASGST_AGENT overrides that path.\n"
"\n"
"Options:\n"
"  -f, --force   load even when an agent is already mapped\n"
"  -q, --quiet   print nothing on success\n"
"  -h, --help    this help\n"
"\n"
"Exit status: 0 attached (or already attached), 1 failed, 2 usage error.\n";

static int attach_find_agent_cli(char *out, size_t len)
{
	char err[512];

	if (attach__find_agent(out, len, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "asgst-bpf attach: %s\n", err);
	return -1;
}

int cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char agent[PATH_MAX], err[512], out[1024];
	const char *options = NULL;
	struct jvm_info *info = NULL;
	bool force = false, quiet = false;
	int c, ret = 1;
	char *end;
	long pid;

	optind = 1;
	/* '+': stop at PID so agent options that start with '-' pass */
	while ((c = getopt_long(argc, argv, "+fqh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			force = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(attach_usage, stdout);
			return 0;
		default:
			fputs("asgst-bpf attach: see 'asgst-bpf attach --help'\n",
			      stderr);
			return 2;
		}
	}
	if (optind >= argc || argc - optind > 2) {
		fputs("asgst-bpf attach: expected PID [AGENT_OPTIONS]; see 'asgst-bpf attach --help'\n",
		      stderr);
		return 2;
	}
	errno = 0;
	pid = strtol(argv[optind], &end, 10);
	if (errno || *end || end == argv[optind] || pid <= 0 ||
	    pid > INT_MAX) {
		fprintf(stderr, "asgst-bpf attach: '%s' is not a pid\n",
			argv[optind]);
		return 2;
	}
	if (argc - optind == 2)
		options = argv[optind + 1];

	info = malloc(sizeof(*info));
	if (!info) {
		fputs("asgst-bpf attach: out of memory\n", stderr);
		return 1;
	}
	if (jvm_discover__probe((pid_t)pid, info, err, sizeof(err))) {
		fprintf(stderr, "asgst-bpf attach: %s\n", err);
		goto cleanup;
	}
	if (info->agent_loaded && !force) {
		if (!quiet)
			printf("agent already loaded in JVM %ld (pid %d in its namespace); nothing to do\n",
			       pid, (int)info->nspid);
		ret = 0;
		goto cleanup;
	}
	if (attach_find_agent_cli(agent, sizeof(agent)))
		goto cleanup;
	if (attach__load_agent((pid_t)pid, agent, options, out, sizeof(out),
			       err, sizeof(err))) {
		fprintf(stderr, "asgst-bpf attach: %s\n", err);
		goto cleanup;
	}
	if (!quiet) {
		char map[160], rel[96] = "";
		bool inside = info->other_root || info->other_mntns;

		codemap__pid_path((pid_t)pid, info->nspid, rel, sizeof(rel));
		/* the map's path as seen from here */
		if (inside)
			snprintf(map, sizeof(map), "/proc/%ld/root%s", pid, rel);
		else
			snprintf(map, sizeof(map), "%s", rel);
		printf("attached agent to JVM %ld (pid %d in its namespace%s%s%s): code map %s\n",
		       pid, (int)info->nspid, info->version[0] ? ", JDK " : "",
		       info->version, inside ? ", in a container" : "", map);
	}
	ret = 0;
cleanup:
	free(info);
	return ret;
}
