/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * JIT symbols of a process, from the files runtimes write for perf:
 *  - /tmp/perf-PID.map: text lines "START SIZE NAME" (hex, "0x" optional),
 *    e.g. node --perf-basic-prof, JVM perf agents;
 *  - jit-PID.dump (jitdump): binary JIT_CODE_LOAD / JIT_CODE_MOVE records;
 *    a runtime mmaps it so that /proc/PID/maps shows where it is.
 * PID is the pid the process sees (its own pid namespace); both files are
 * opened inside the process's root with safe_open() and read with pread().
 *
 * Both are untrusted: at most PERFMAP_MAX_BYTES of a map and of names and
 * PERFMAP_MAX_ENTRIES entries are read, names are cut at PERFMAP_NAME_MAX
 * bytes, malformed lines and records are skipped, a file that is not a
 * regular file, is a link or is owned by neither the process's user nor
 * root is refused. A map is read again (only what was appended) when a pc
 * is not found, at most every PERFMAP_REREAD_MS.
 *
 * Lookup: entries are painted into disjoint ranges, the newest entry wins
 * at each address (a later line for the same code replaces an earlier
 * one); a pc beyond an entry's size is not that entry.
 */
#ifndef ASGST_PERFMAP_H
#define ASGST_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PERFMAP_MAX_BYTES	(64ull << 20)	/* of a perf map; of all names */
#define PERFMAP_MAX_ENTRIES	(1u << 20)	/* entries ever added */
#define PERFMAP_JITDUMP_MAX	(1ull << 30)	/* jitdump bytes read (code too) */
#define PERFMAP_NAME_MAX	4095		/* longer names are cut */
#define PERFMAP_REREAD_MS	200		/* between re-reads on a miss */
#define PERFMAP_ABSENT_MS	1000		/* ... when no file exists */
/* a file replaced or cut is read afresh at most this often (a writer
 * that keeps cutting its map would have it parsed whole at every
 * re-read) */
#define PERFMAP_RESET_MIN_MS	10000

struct perfmap;

struct perfmap_stats {
	size_t entries;		/* entries added (lines + jitdump loads) */
	size_t ranges;		/* disjoint ranges they paint */
	size_t bad_lines;	/* malformed map lines / jitdump records skipped */
	size_t moves;		/* JIT_CODE_MOVE records applied */
	size_t reads;		/* refreshes that read a file */
	uint64_t map_bytes;	/* bytes of the perf map consumed */
	uint64_t dump_bytes;	/* bytes of the jitdump consumed */
	bool capped;		/* a limit was reached: later entries ignored */
	size_t resets;		/* files replaced or cut, read afresh */
	size_t resets_put_off;	/* ... kept as read, within the minimum */
};

/*
 * JIT symbols of process pid (host pid): its namespace pid and users are
 * read from /proc/PID/status (a process gone already reads nothing);
 * NULL on -ENOMEM. pid 0: no process (tests, fuzzing): only the parsers.
 */
struct perfmap *perfmap__new(pid_t pid);
void perfmap__free(struct perfmap *pm);

/*
 * Read what is new in the perf map and, when jitdump is not NULL, in that
 * jitdump (its path in the process, from its maps), inside root_fd (a
 * directory taken as "/"; -1: /proc/PID/root). A refused or unreadable
 * file leaves one warning on stderr, once per reason. 0, or -errno when
 * neither file could be read.
 */
int perfmap__refresh(struct perfmap *pm, int root_fd, const char *jitdump);
/* a refresh is allowed now (the rate limit); starts its clock when true */
bool perfmap__due(struct perfmap *pm);

/*
 * The name of pc (in the struct, valid until the next refresh or add), or
 * NULL. file (may be NULL) gets the path the name came from, as the
 * process sees it ("/tmp/perf-42.map").
 */
const char *perfmap__find(struct perfmap *pm, uint64_t pc, const char **file);

/*
 * Parsers on memory (tests, fuzzing; the refresh uses them too).
 * add_text: complete lines of a perf map ("\n"-terminated); returns the
 * bytes consumed (up to and with the last newline).
 * add_jitdump: a whole jitdump image (header and records); 0, or -EINVAL
 * when the header is not a jitdump's (records after a bad one are dropped).
 */
size_t perfmap__add_text(struct perfmap *pm, const char *text, size_t len);
int perfmap__add_jitdump(struct perfmap *pm, const void *data, size_t len);

void perfmap__stats(const struct perfmap *pm, struct perfmap_stats *out);

#endif /* ASGST_PERFMAP_H */
