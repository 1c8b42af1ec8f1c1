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
#include "cli/options.h"
#include "jvm/jvm_discover.h"
#include "util/err.h"

struct attach_args {
	bool force;
	bool quiet;
};

static const struct cli_option attach_opts[] = {
	CLI_FLAG("force", 'f', "load even when an agent is already mapped",
		 struct attach_args, force),
	CLI_FLAG("quiet", 'q', "print nothing on success",
		 struct attach_args, quiet),
	CLI_HELP_OPT("this help"),
	CLI_TEXT("\nExit status: 0 attached (or already attached), 1 failed, 2 usage error."),
};

static const struct cli_command attach_cmd = {
	.name = "attach",
	.usage =
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
"Options:\n",
	.opts = attach_opts,
	.nopts = CLI_NOPTS(attach_opts),
	/* stop at PID so agent options that start with '-' pass */
	.in_order = true,
	.help_col = 16,
};

static int attach_find_agent_cli(char *out, size_t len)
{
	char err[512];

	if (attach__find_agent(out, len, err, sizeof(err)) == 0)
		return 0;
	err__say("attach", "%s", err);
	return -1;
}

/* the pid argument: > 0 and an int, else 0 (said) */
static pid_t parse_pid(const char *arg)
{
	char *end;
	long pid;

	errno = 0;
	pid = strtol(arg, &end, 10);
	if (errno || *end || end == arg || pid <= 0 || pid > INT_MAX) {
		options__error(&attach_cmd, "'%s' is not a pid", arg);
		return 0;
	}
	return (pid_t)pid;
}

/* "attached agent to JVM ...": where its code map is, seen from here */
static void print_attached(pid_t pid, const struct jvm_info *info)
{
	char map[160], rel[96] = "";
	bool inside = info->other_root || info->other_mntns;

	codemap__pid_path(pid, info->nspid, rel, sizeof(rel));
	if (inside)
		snprintf(map, sizeof(map), "/proc/%d/root%s", (int)pid, rel);
	else
		snprintf(map, sizeof(map), "%s", rel);
	printf("attached agent to JVM %d (pid %d in its namespace%s%s%s): code map %s\n",
	       (int)pid, (int)info->nspid, info->version[0] ? ", JDK " : "",
	       info->version, inside ? ", in a container" : "", map);
}

int cmd_attach(int argc, char **argv)
{
	struct attach_args args = { 0 };
	char agent[PATH_MAX], err[512], out[1024];
	const char *options = NULL;
	struct jvm_info *info = NULL;
	int ret;
	pid_t pid;

	ret = options__parse(&attach_cmd, argc, argv, &args);
	if (ret != CLI_OK)
		return ret == CLI_HELP ? 0 : 2;
	if (optind >= argc || argc - optind > 2)
		return options__error(&attach_cmd,
				      "expected PID [AGENT_OPTIONS]; see 'asgst-bpf attach --help'");
	pid = parse_pid(argv[optind]);
	if (!pid)
		return 2;
	if (argc - optind == 2)
		options = argv[optind + 1];

	ret = 1;
	info = malloc(sizeof(*info));
	if (!info) {
		fputs("asgst-bpf attach: out of memory\n", stderr);
		goto cleanup;
	}
	if (jvm_discover__probe(pid, info, err, sizeof(err))) {
		err__say("attach", "%s", err);
		goto cleanup;
	}
	if (info->agent_loaded && !args.force) {
		if (!args.quiet)
			printf("agent already loaded in JVM %d (pid %d in its namespace); nothing to do\n",
			       (int)pid, (int)info->nspid);
		ret = 0;
		goto cleanup;
	}
	if (attach_find_agent_cli(agent, sizeof(agent)))
		goto cleanup;
	if (attach__load_agent(pid, agent, options, out, sizeof(out), err,
			       sizeof(err))) {
		err__say("attach", "%s", err);
		goto cleanup;
	}
	if (!args.quiet)
		print_attached(pid, info);
	ret = 0;
cleanup:
	free(info);
	return ret;
}
