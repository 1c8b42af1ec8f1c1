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
#include "jvm/jvm_discover.h"

static const char jvms_usage[] =
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
"Options:\n"
"  -v, --verbose  also say why for maps that are only partly usable\n"
"  -h, --help     this help\n";

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

int cmd_jvms(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct jvm_info *v = NULL;
	bool verbose = false;
	size_t n = 0, i;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose = true;
			break;
		case 'h':
			fputs(jvms_usage, stdout);
			return 0;
		default:
			fputs("asgst-bpf jvms: see 'asgst-bpf jvms --help'\n",
			      stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "asgst-bpf jvms: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	ret = jvm_discover__list(&v, &n);
	if (ret) {
		fprintf(stderr, "asgst-bpf jvms: cannot list processes: %s\n",
			strerror(-ret));
		return 1;
	}
	printf("%-8s %-7s %-4s %-10s %-6s %-22s %s\n", "PID", "NSPID", "ROOT",
	       "JDK", "AGENT", "MAP", "COMMAND");
	for (i = 0; i < n; i++) {
		char map[48], why[256];

		map_state(v[i].pid, map, sizeof(map), why, sizeof(why));
		printf("%-8d %-7d %-4s %-10s %-6s %-22s %s\n", (int)v[i].pid,
		       (int)v[i].nspid, v[i].other_root ? "ctr" :
		       v[i].other_mntns ? "mnt" : "/",
		       v[i].version[0] ? v[i].version : "?",
		       v[i].agent_loaded ? "yes" :
		       v[i].attach_disabled ? "no-att" : "no",
		       map, v[i].comm);
		/* why a map is off or unusable is always said */
		if (why[0] && (verbose || !strcmp(map, "off") ||
			       !strcmp(map, "bad") || strstr(map, "/lost=")))
			printf("         map of %d: %s\n", (int)v[i].pid, why);
	}
	free(v);
	return 0;
}
