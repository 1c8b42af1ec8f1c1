// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* asgst-bpf: command dispatch. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

static const char usage[] =
"Usage: asgst-bpf COMMAND [OPTIONS]\n"
"\n"
"Mixed Java / native / kernel CPU profiles of every process on the host,\n"
"sampled from the kernel (eBPF), with AsyncGetStackTrace-shaped Java frames.\n"
"\n"
"Commands:\n"
"  record     sample stacks and write a profile (needs root)\n"
"  report     decode a raw recording (.asgst) again, into any format\n"
"  attach     load the asgst agent into a running JVM\n"
"  jvms       list the JVMs on this host and their agent/code-map state\n"
"  codemap    print a JVM's code map as text\n"
"\n"
"Run 'asgst-bpf COMMAND --help' for a command's options.\n"
"Options: -h, --help   this help;  -V, --version   print the version\n";

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "record", cmd_record },
	{ "report", cmd_report },
	{ "attach", cmd_attach },
	{ "jvms", cmd_jvms },
	{ "codemap", cmd_codemap },
};

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") ||
	    !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("asgst-bpf %s\n", ASGST_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "asgst-bpf: unknown command '%s'; see 'asgst-bpf "
		"--help'\n", cmd);
	return 2;
}
