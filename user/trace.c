// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Names of the frame types and trace kinds, as the JSON output spells them,
 * and the display names of frames and processes, as the collapsed output
 * shows them and the filters match them.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

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
	case FRAME_CLASS:
		return "class";
	case FRAME_PYTHON:
		return "python";
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

struct sbuf {
	char *buf;
	size_t size;	/* capacity, including the NUL */
	size_t len;
};

static void sb_putc(struct sbuf *b, char c)
{
	if (b->len + 1 < b->size)
		b->buf[b->len++] = c;
}

/*
 * Append s, replacing what the format cannot carry: ';' separates frames,
 * a newline ends the record, other control bytes confuse viewers.
 */
static void sb_puts_clean(struct sbuf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == ';')
			c = ':';
		else if (c < 0x20 || c == 0x7f)
			c = '?';
		sb_putc(b, c);
	}
}

static void sb_printf_hex(struct sbuf *b, const char *prefix, uint64_t v)
{
	char tmp[40];

	snprintf(tmp, sizeof(tmp), "%s0x%" PRIx64, prefix, v);
	sb_puts_clean(b, tmp);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* how the stack crossed between Java and C at f, as a name tag */
static const char *crossing_tag(const struct frame *f)
{
	const char *d = frame_downcall__name(f->flags);
	const char *u = frame_upcall__name(f->flags);

	if (d)
		return !strcmp(d, "ffm_critical") ? " [ffm critical]" :
		       !strcmp(d, "ffm") ? " [ffm]" : " [jni]";
	if (u)
		return !strcmp(u, "ffm") ? " [upcall ffm]" : " [upcall jni]";
	return NULL;
}

size_t frame__display_name(const struct frame *f, char *buf, size_t size,
			   bool suffix)
{
	struct sbuf b = { buf, size, 0 };
	const char *sfx = NULL;
	size_t start;

	if (!size)
		return 0;
	switch (f->type) {
	case FRAME_KERNEL:
		if (f->symbol && *f->symbol)
			sb_puts_clean(&b, f->symbol);
		else
			sb_printf_hex(&b, "", f->pc);
		sfx = "_[k]";
		break;
	case FRAME_NON_JAVA:
		if (f->symbol && *f->symbol) {
			sb_puts_clean(&b, f->symbol);
		} else if (f->module && *f->module) {
			sb_puts_clean(&b, base_name(f->module));
			sb_printf_hex(&b, "+", f->offset);
		} else {
			sb_printf_hex(&b, "", f->pc);
		}
		/* as an inlined Java frame: FlameGraph's palette colours it */
		if (f->flags & FRAME_F_INLINED)
			sfx = "_[i]";
		break;
	case FRAME_JAVA:
	case FRAME_JAVA_INLINED:
	case FRAME_JAVA_NATIVE:
		/* pkg/Class.method, as async-profiler and FlameGraph's java
		 * palette expect */
		start = b.len;
		if (f->type == FRAME_JAVA_NATIVE && !f->klass && f->symbol &&
		    *f->symbol) {
			/* a stub as the barrier: FFM's nep_invoker_blob */
			sb_puts_clean(&b, f->symbol);
			break;
		}
		if (f->klass && *f->klass) {
			sb_puts_clean(&b, f->klass);
			for (size_t i = start; i < b.len; i++)
				if (b.buf[i] == '.')
					b.buf[i] = '/';
			sb_putc(&b, '.');
		}
		sb_puts_clean(&b, f->method && *f->method ? f->method : "[unknown]");
		if (f->type == FRAME_JAVA_INLINED)
			sfx = "_[i]";
		else if (f->type == FRAME_JAVA && f->comp_level >= 1)
			sfx = "_[j]";
		break;
	case FRAME_PYTHON:
		/* qualified name; the file and line are in json and pprof */
		sb_puts_clean(&b, f->method && *f->method ? f->method :
							    "[unknown]");
		sfx = "_[p]";
		break;
	case FRAME_CLASS:
		/* the allocated (_[a]) or waited-for (_[l]) class, dotted */
		sb_puts_clean(&b, f->klass && *f->klass ? f->klass :
							  "[unknown class]");
		sfx = f->flags & FRAME_F_MONITOR ? "_[l]" : "_[a]";
		break;
	default:
		if (f->reason && *f->reason) {
			sb_puts_clean(&b, "[unknown: ");
			sb_puts_clean(&b, f->reason);
			sb_putc(&b, ']');
		} else {
			sb_puts_clean(&b, "[unknown]");
		}
		break;
	}
	/* trailing blanks would be eaten by parsers that split on spaces */
	while (b.len && (b.buf[b.len - 1] == ' '))
		b.len--;
	if (!b.len)
		sb_puts_clean(&b, "[unknown]");
	/* part of the name in every output, so filters can match it */
	if (crossing_tag(f))
		sb_puts_clean(&b, crossing_tag(f));
	if (suffix && sfx)
		sb_puts_clean(&b, sfx);
	b.buf[b.len] = '\0';
	return b.len;
}

size_t trace__display_comm(const struct trace *t, char *buf, size_t size)
{
	struct sbuf b = { buf, size, 0 };
	const char *c = t->comm && *t->comm ? t->comm :
			t->thread && *t->thread ? t->thread : "[unknown]";

	sb_puts_clean(&b, c);
	while (b.len && b.buf[b.len - 1] == ' ')
		b.len--;
	if (!b.len)
		sb_puts_clean(&b, "[unknown]");
	b.buf[b.len] = '\0';
	return b.len;
}
