/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * JVM events for a recorder: sampled allocations and contended monitor
 * enters, on only while a recorder asks (the event requests of
 * codemap_format.h), each carried to the recorder's uprobe by a call of
 * asgst_probe_event().
 */
#ifndef ASGST_AGENT_JVM_EVENTS_H
#define ASGST_AGENT_JVM_EVENTS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The probe (ASGST_PROBE_SYMBOL in bpf/sampler.h): does nothing; a uprobe
 * at its first instruction reads kind, cls, size and weight from rdi,
 * rsi, rdx and rcx. kind CM_PROBE_ALLOC: size the object's bytes, weight
 * the bytes it stands for; CM_PROBE_LOCK: size 0, weight ns waited.
 */
void asgst_probe_event(uint32_t kind, const char *cls, uint64_t size,
		       uint64_t weight);

/* a class signature ("Ljava/lang/String;", "[[I") as a dotted name
 * ("java.lang.String", "int[][]") into buf, cut to len - 1 chars */
void jev__dotted_class(const char *sig, char *buf, size_t len);

/* the bytes a sample of size bytes stands for at a mean interval:
 * size / (1 - exp(-size / interval)), never below size */
uint64_t jev__alloc_weight(uint64_t size, uint64_t interval);

/* the JVMTI side; without it (JEV_NO_JVMTI) the pure functions above,
 * for a test built without the JDK's headers */
#ifndef JEV_NO_JVMTI
#include <jvmti.h>

/* before SetEventCallbacks: the events' callbacks into cb */
void jev__callbacks(jvmtiEventCallbacks *cb);
/*
 * Live phase, on the thread that will poll: whether the events can be
 * had here; when so, CM_F_EVENTS is set and the agent answers requests.
 */
void jev__init(jvmtiEnv *jvmti, JNIEnv *jni);
/* every 100 ms: the events on or off to match the requests */
void jev__poll(void);
/* the agent stops: both events off (not at VM death: JVMTI is gone) */
void jev__stop(void);
#endif

#endif /* ASGST_AGENT_JVM_EVENTS_H */
