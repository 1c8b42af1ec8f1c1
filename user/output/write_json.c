// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JSON output, version 1 (docs/formats.md): every aggregated stack exactly
 * as decoded. Later versions only add fields. Strings are escaped per
 * RFC 8259; bytes that are not valid UTF-8 become U+FFFD so the file always
 * parses.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/types.h>
#include "profile/profile.h"
#include "sampler.h"
#include "trace.h"
#include "output/writers.h"
#include "util/json.h"

static void json_str(FILE *f, const char *s)
{
	json__put_string(f, s, false);
}

static void json_hex(FILE *f, uint64_t v)
{
	fprintf(f, "\"0x%" PRIx64 "\"", v);
}

static void write_frame(FILE *f, const struct frame *fr)
{
	fputs("{\"type\":", f);
	json_str(f, frame_type__name(fr->type));
	switch (fr->type) {
	case FRAME_CLASS:
		fputs(",\"class\":", f);
		json_str(f, fr->klass);
		break;
	case FRAME_PYTHON:
		fputs(",\"function\":", f);
		json_str(f, fr->method);
		fputs(",\"file\":", f);
		json_str(f, fr->source);
		fprintf(f, ",\"line\":%" PRId32, fr->line < 0 ? -1 : fr->line);
		fputs(",\"code\":", f);
		json_hex(f, fr->pc);
		break;
	case FRAME_KERNEL:
		fputs(",\"symbol\":", f);
		if (fr->symbol)
			json_str(f, fr->symbol);
		else
			json_hex(f, fr->pc);	/* never drop a pc */
		break;
	case FRAME_NON_JAVA:
		fputs(",\"pc\":", f);
		json_hex(f, fr->pc);
		fputs(",\"symbol\":", f);
		json_str(f, fr->symbol);
		fputs(",\"module\":", f);
		json_str(f, fr->module);
		fputs(",\"offset\":", f);
		json_hex(f, fr->offset);
		fprintf(f, ",\"inlined\":%s",
			fr->flags & FRAME_F_INLINED ? "true" : "false");
		if (fr->source) {
			fputs(",\"file\":", f);
			json_str(f, fr->source);
		}
		if (fr->line > 0)
			fprintf(f, ",\"line\":%" PRId32, fr->line);
		break;
	case FRAME_JAVA:
	case FRAME_JAVA_INLINED:
	case FRAME_JAVA_NATIVE:
		if (fr->type == FRAME_JAVA_NATIVE && !fr->klass && fr->symbol) {
			/* a stub as the barrier (FFM's nep_invoker_blob) */
			fputs(",\"symbol\":", f);
			json_str(f, fr->symbol);
		}
		fputs(",\"class\":", f);
		json_str(f, fr->klass);
		fputs(",\"method\":", f);
		json_str(f, fr->method);
		fputs(",\"signature\":", f);
		json_str(f, fr->signature);
		fprintf(f, ",\"bci\":%" PRId32 ",\"line\":%" PRId32
			",\"comp_level\":%d", fr->bci < 0 ? -1 : fr->bci,
			fr->line < 0 ? -1 : fr->line,
			fr->comp_level < 0 ? -1 : fr->comp_level);
		if (fr->code_pc) {
			fputs(",\"pc\":", f);
			json_hex(f, fr->code_pc);
		}
		break;
	default:
		fputs(",\"pc\":", f);
		json_hex(f, fr->pc);
		fputs(",\"reason\":", f);
		json_str(f, fr->reason);
		break;
	}
	if (frame_downcall__name(fr->flags)) {
		fputs(",\"downcall\":", f);
		json_str(f, frame_downcall__name(fr->flags));
	}
	if (frame_upcall__name(fr->flags)) {
		fputs(",\"upcall\":", f);
		json_str(f, frame_upcall__name(fr->flags));
	}
	if (fr->flags & FRAME_F_VTHREAD_ENTRY)
		fputs(",\"vthread_entry\":true", f);
	if (fr->flags & FRAME_F_FROZEN_GAP)
		fputs(",\"gap\":\"frozen\"", f);
	if (fr->flags & FRAME_F_FROZEN)
		fputs(",\"frozen\":true", f);
	putc('}', f);
}

/* the events recorded, in ASGST_EVMASK_* order; none named is cpu */
static void write_events(FILE *f, uint32_t events)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} evs[] = {
		{ ASGST_EVMASK_CPU, "cpu" }, { ASGST_EVMASK_OFFCPU, "offcpu" },
		{ ASGST_EVMASK_ALLOC, "alloc" }, { ASGST_EVMASK_LOCK, "lock" },
	};
	bool first = true;

	if (!(events & (ASGST_EVMASK_CPU | ASGST_EVMASK_OFFCPU |
			ASGST_EVMASK_JVM)))
		events |= ASGST_EVMASK_CPU;
	fputs(",\"events\":[", f);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		if (!(events & evs[i].bit))
			continue;
		fprintf(f, "%s\"%s\"", first ? "" : ",", evs[i].name);
		first = false;
	}
	putc(']', f);
}

static const char *event_name(uint8_t event)
{
	switch (event) {
	case TRACE_EV_OFFCPU:
		return "offcpu";
	case TRACE_EV_ALLOC:
		return "alloc";
	case TRACE_EV_LOCK:
		return "lock";
	default:
		return "cpu";
	}
}

/* an alloc or lock stack's values and class (dotted) */
static void write_jvm_event(FILE *f, const struct profile_stack *ps)
{
	const struct trace *t = &ps->trace;

	if (t->event == TRACE_EV_ALLOC) {
		fprintf(f, ",\"alloc_count\":%" PRIu64 ",\"alloc_bytes\":%"
			PRIu64 ",\"alloc_class\":", ps->alloc_objects,
			ps->alloc_bytes);
		json_str(f, t->ev_class ? t->ev_class : "");
	} else if (t->event == TRACE_EV_LOCK) {
		fprintf(f, ",\"lock_ns\":%" PRIu64 ",\"lock_class\":",
			ps->weight_ns);
		json_str(f, t->ev_class ? t->ev_class : "");
	}
}

int write_json(const struct profile *p, FILE *f)
{
	const struct profile_meta *m = profile__meta_const(p);
	size_t n = profile__nstacks(p);

	errno = 0;
	fprintf(f, "{\"format\":\"asgst-bpf\",\"version\":1,\"frequency_hz\":%" PRIu32
		",\"duration_ns\":%" PRIu64 ",\"samples\":%" PRIu64
		",\"lost\":%" PRIu64, m->frequency_hz, m->duration_ns,
		m->samples, m->lost);
	write_events(f, m->events);
	fprintf(f, ",\"offcpu_samples\":%" PRIu64 ",\"offcpu_lost\":%" PRIu64
		",\"offcpu_capture_ns\":%" PRIu64, m->offcpu_events,
		m->offcpu_lost, m->offcpu_capture_ns);
	/* the JVM events' figures when one of them was recorded */
	if (m->events & ASGST_EVMASK_JVM)
		fprintf(f, ",\"alloc_events\":%" PRIu64 ",\"lock_events\":%"
			PRIu64 ",\"jvm_events_lost\":%" PRIu64
			",\"jvm_events_throttled\":%" PRIu64
			",\"alloc_interval\":%" PRIu64, m->alloc_events,
			m->lock_events, m->jvm_ev_lost, m->jvm_ev_throttled,
			m->alloc_interval);
	fputs(",\n\"stacks\":[", f);
	for (size_t i = 0; i < n; i++) {
		const struct profile_stack *ps = profile__stack(p, i);
		const struct trace *t = &ps->trace;

		fprintf(f, "%s\n{\"pid\":%d,\"tid\":%d,\"comm\":", i ? "," : "",
			(int)t->pid, (int)t->tid);
		json_str(f, t->comm ? t->comm : "");
		fputs(",\"thread\":", f);
		json_str(f, t->thread ? t->thread : t->comm ? t->comm : "");
		if (t->container_id) {
			fputs(",\"container_id\":", f);
			json_str(f, t->container_id);
		}
		if (t->pod_uid) {
			fputs(",\"pod_uid\":", f);
			json_str(f, t->pod_uid);
		}
		if (t->service) {
			fputs(",\"service\":", f);
			json_str(f, t->service);
		}
		if (t->process) {
			fputs(",\"process\":", f);
			json_str(f, t->process);
		}
		fprintf(f, ",\"count\":%" PRIu64 ",\"kind\":", ps->count);
		json_str(f, trace_kind__name(t->kind));
		fputs(",\"error\":", f);
		if (t->error) {
			fprintf(f, "{\"code\":%" PRId32 ",\"name\":", t->error);
			json_str(f, t->error_name ? t->error_name : "");
			putc('}', f);
		} else {
			fputs("null", f);
		}
		fputs(",\"state\":", f);
		json_str(f, trace_state__name(t->state));
		if (t->kind == TRACE_KIND_JAVA)
			fprintf(f, ",\"jvmti_state\":%" PRId32, t->jvmti_state);
		fprintf(f, ",\"event\":\"%s\"", event_name(t->event));
		if (t->event == TRACE_EV_OFFCPU)
			fprintf(f, ",\"offcpu_ns\":%" PRIu64, ps->weight_ns);
		write_jvm_event(f, ps);
		fprintf(f, ",\"virtual_thread\":%s,\"pinned\":%s",
			t->flags & TRACE_F_VTHREAD ? "true" : "false",
			t->flags & TRACE_F_PINNED ? "true" : "false");
		if (t->event == TRACE_EV_OFFCPU)
			fprintf(f, ",\"preempted\":%s",
				t->flags & TRACE_F_PREEMPTED ? "true" : "false");
		fputs(",\"frames\":[", f);
		for (uint32_t k = 0; k < t->nframes; k++) {
			if (k)
				putc(',', f);
			write_frame(f, &t->frames[k]);
		}
		fputs("]}", f);
	}
	fputs("\n]}\n", f);
	if (fflush(f) || ferror(f))
		return -(errno ? errno : EIO);
	return 0;
}
