// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* asgst-bpf jvms: the JVMs on this host and their agent / code-map state. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "jvm/codemap.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "jvm/jvm_discover.h"

struct jvms_args {
	bool verbose;
};

static const struct cli_option jvms_opts[] = {
	CLI_FLAG("verbose", 'v',
		 "also say why for maps that are only partly usable",
		 struct jvms_args, verbose),
	CLI_HELP_OPT("this help"),
};

static const struct cli_command jvms_cmd = {
	.name = "jvms",
	.usage =
"Usage: asgst-bpf jvms [OPTIONS]\n"
"\n"
"List every HotSpot JVM on this host (processes with libjvm.so mapped),\n"
"containers included. Columns:\n"
"  PID      host pid\n"
"  NSPID    pid inside its pid namespace\n"
"  ROOT     '/' when it shares our root and mounts, 'mnt' when only its\n"
"           mount namespace differs, 'ctr' when its root differs\n"
"  JDK      JAVA_VERSION from its JDK's release file ('?' when unknown)\n"
"  AGENT    'yes' when the asgst agent is loaded, 'no-att' when attach\n"
"           is disabled (-XX:+DisableAttachMechanism), else 'no'\n"
"  MAP      code map: records/size/age of the last record, then /gN when\n"
"           it was compacted to generation N and /lost=N when N records\n"
"           were dropped (a line below says what that costs); '-' when\n"
"           there is none, 'off' when the agent refused the JVM or turned\n"
"           itself off, 'bad' when the map is unusable; a line below says why\n"
"  COMMAND  its command line, shortened\n"
"Needs root to see other users' JVMs.\n"
"\n"
"Options:\n",
	.opts = jvms_opts,
	.nopts = CLI_NOPTS(jvms_opts),
	.help_col = 17,
};

static void human_size(uint64_t b, char *out, size_t len)
{
	static const char units[] = "BKMGT";
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, len, "%lluB", (unsigned long long)b);
	else
		snprintf(out, len, "%.1f%c", v, units[u]);
}

static void human_age(uint64_t ns, char *out, size_t len)
{
	uint64_t s = ns / 1000000000ull;

	if (s < 120)
		snprintf(out, len, "%llus", (unsigned long long)s);
	else if (s < 7200)
		snprintf(out, len, "%llum", (unsigned long long)(s / 60));
	else
		snprintf(out, len, "%lluh", (unsigned long long)(s / 3600));
}

/* "records/size/age" of the JVM's code map, or "-" / "bad" */
static void map_state(pid_t pid, char *out, size_t len, char *why,
		      size_t whylen)
{
	struct codemap *cm = NULL;
	const struct cm_file_header *hdr;
	struct codemap_stats st;
	char size[16], age[16];
	uint64_t now;
	int ret;

	why[0] = '\0';
	ret = codemap__open_pid(&cm, pid, why, whylen);
	if (ret) {
		snprintf(out, len, ret == -ENOENT ? "-" : "bad");
		if (ret == -ENOENT)
			why[0] = '\0';
		goto cleanup;
	}
	if (codemap__update(cm) || !codemap__ok(cm)) {
		const char *e = codemap__error(cm);

		snprintf(why, whylen, "%s", e ? e : "unusable");
		snprintf(out, len, "bad");
		goto cleanup;
	}
	hdr = codemap__header(cm);
	if (hdr && (hdr->flags & CM_F_DISABLED)) {
		/* the agent refused this JVM or turned itself off */
		snprintf(out, len, "off");
		snprintf(why, whylen, "agent off: %s", hdr->disabled_reason);
		goto cleanup;
	}
	codemap__stats(cm, &st);
	now = clock__mono_ns();
	human_size(st.bytes, size, sizeof(size));
	if (st.last_record_ns && st.last_record_ns <= now)
		human_age(now - st.last_record_ns, age, sizeof(age));
	else
		snprintf(age, sizeof(age), "-");
	snprintf(out, len, "%llu/%s/%s", (unsigned long long)st.records, size,
		 age);
	if (st.generation)
		snprintf(out + strlen(out), len - strlen(out), "/g%llu",
			 (unsigned long long)st.generation);
	if (st.dropped) {
		snprintf(out + strlen(out), len - strlen(out), "/lost=%llu",
			 (unsigned long long)st.dropped);
		/* said always: the map lost something */
		snprintf(why, whylen,
			 "%llu records dropped (the map was full): code they named decodes as unknown, never as other code",
			 (unsigned long long)st.dropped);
	}
cleanup:
	codemap__free(cm);
}

/* the JVM's line, and why its map is off, unusable or lossy */
static void print_jvm(const struct jvm_info *v, bool verbose)
{
	char map[48], why[256];

	map_state(v->pid, map, sizeof(map), why, sizeof(why));
	printf("%-8d %-7d %-4s %-10s %-6s %-22s %s\n", (int)v->pid,
	       (int)v->nspid, v->other_root ? "ctr" :
	       v->other_mntns ? "mnt" : "/",
	       v->version[0] ? v->version : "?",
	       v->agent_loaded ? "yes" :
	       v->attach_disabled ? "no-att" : "no",
	       map, v->comm);
	/* why a map is off or unusable is always said */
	if (why[0] && (verbose || !strcmp(map, "off") ||
		       !strcmp(map, "bad") || strstr(map, "/lost=")))
		printf("         map of %d: %s\n", (int)v->pid, why);
}

int cmd_jvms(int argc, char **argv)
{
	struct jvms_args args = { 0 };
	struct jvm_info *v = NULL;
	size_t n = 0;
	int ret;

	ret = options__parse(&jvms_cmd, argc, argv, &args);
	if (ret != CLI_OK)
		return ret == CLI_HELP ? 0 : 2;
	if (optind < argc)
		return options__error(&jvms_cmd, "unexpected argument '%s'",
				      argv[optind]);
	ret = jvm_discover__list(&v, &n);
	if (ret) {
		fprintf(stderr, "asgst-bpf jvms: cannot list processes: %s\n",
			strerror(-ret));
		return 1;
	}
	printf("%-8s %-7s %-4s %-10s %-6s %-22s %s\n", "PID", "NSPID", "ROOT",
	       "JDK", "AGENT", "MAP", "COMMAND");
	for (size_t i = 0; i < n; i++)
		print_jvm(&v[i], args.verbose);
	free(v);
	return 0;
}
