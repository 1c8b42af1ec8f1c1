// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Names of the frame types and trace kinds, as the JSON output spells them. */
#include <stddef.h>

#include "trace.h"

const char *frame_type__name(enum frame_type t)
{
	switch (t) {
	case FRAME_KERNEL:
		return "kernel";
	case FRAME_NON_JAVA:
		return "non_java";
	case FRAME_JAVA:
		return "java";
	case FRAME_JAVA_INLINED:
		return "java_inlined";
	case FRAME_JAVA_NATIVE:
		return "java_native";
	case FRAME_UNKNOWN:
		break;
	}
	return "unknown";
}

const char *trace_kind__name(enum trace_kind k)
{
	switch (k) {
	case TRACE_KIND_JAVA:
		return "java";
	case TRACE_KIND_JVM:
		return "jvm";
	case TRACE_KIND_NATIVE:
		break;
	}
	return "native";
}

const char *trace_state__name(enum trace_state s)
{
	switch (s) {
	case TRACE_STATE_IN_JAVA: return "in_java";
	case TRACE_STATE_IN_NATIVE: return "in_native";
	case TRACE_STATE_IN_VM: return "in_vm";
	case TRACE_STATE_BLOCKED: return "blocked";
	default: return "unknown";
	}
}

const char *frame_downcall__name(uint16_t flags)
{
	if (flags & FRAME_F_DOWNCALL_CRIT)
		return "ffm_critical";
	if (flags & FRAME_F_DOWNCALL_FFM)
		return "ffm";
	if (flags & FRAME_F_DOWNCALL_JNI)
		return "jni";
	return NULL;
}

const char *frame_upcall__name(uint16_t flags)
{
	if (flags & FRAME_F_UPCALL_FFM)
		return "ffm";
	if (flags & FRAME_F_UPCALL_JNI)
		return "jni";
	return NULL;
}
