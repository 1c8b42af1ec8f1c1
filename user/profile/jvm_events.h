/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * JVM events (allocations, contended monitors): for each JVM whose code
 * map the pipeline reads, ask its agent for the recording's events (a
 * request held on the map, jvm/codemap.h) and put the sampler's uprobe on
 * the agent's probe in the very file the JVM mapped, once a file. Only a
 * file byte for byte this recorder's own agent gets the uprobe: the probe's
 * offset is known from that one, and nothing of a file a target chose is
 * parsed for it.
 */
#ifndef ASGST_JVM_EVENTS_H
#define ASGST_JVM_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct capture;
struct codemap;
struct jvm_events;

struct jvm_events_stats {
	uint64_t jvms;		/* JVMs asked for events */
	uint64_t refused;	/* JVMs that cannot give them (said once) */
	uint64_t probes;	/* agent files with the uprobe */
};

/*
 * mask: CODEMAP_EV_*; interval: bytes between sampled allocations.
 * agent_path: this recorder's agent library. NULL with one line in err
 * when the agent cannot serve (not found, no probe in it).
 */
struct jvm_events *jvm_events__new(struct capture *cap, const char *agent_path,
				   uint32_t mask, uint64_t interval, bool quiet,
				   char *err, size_t errlen);
void jvm_events__free(struct jvm_events *je);
/*
 * A JVM whose code map cm is open: ask and probe. 1 done (or refused for
 * good, said once), 0 not yet (its agent is still starting: call again
 * later).
 */
int jvm_events__add(struct jvm_events *je, pid_t pid, struct codemap *cm);
void jvm_events__stats(const struct jvm_events *je,
		       struct jvm_events_stats *out);

#endif /* ASGST_JVM_EVENTS_H */
