// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * report --pinned: off-CPU time of carriers blocked with a virtual thread
 * mounted, by the frame that pinned it. That frame is the outermost
 * crossing into native code between the virtual thread's entry and its
 * top (a JNI native method or an FFM downcall: the virtual thread cannot
 * unmount while it is on the stack, whatever blocks above it); without
 * one (a monitor, a class initializer) the innermost Java frame.
 *
 *   # comments
 *   PINNED_NS<TAB>COUNT<TAB>FRAME      (most pinned time first)
 *   # total pinned_ns=N count=N
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "trace.h"
#include "output/writers.h"

struct pin_row {
	const char *klass;	/* interned: rows compare by pointer */
	const char *name;
	uint64_t ns, count;
};

static bool is_java(const struct frame *f)
{
	return f->type == FRAME_JAVA || f->type == FRAME_JAVA_INLINED ||
	       f->type == FRAME_JAVA_NATIVE;
}

/* the frame to blame, NULL when the stack has no Java frame at all */
static const struct frame *pinning_frame(const struct trace *t)
{
	const struct frame *inner = NULL, *cross = NULL;

	for (uint32_t i = 0; i < t->nframes; i++) {
		const struct frame *f = &t->frames[i];

		if (f->flags & FRAME_F_VTHREAD_ENTRY)
			break;		/* the carrier's frames: not the cause */
		if (!inner && is_java(f))
			inner = f;
		if (f->type == FRAME_JAVA_NATIVE &&
		    (f->flags & FRAME_F_DOWNCALL_MASK))
			cross = f;	/* keeps the outermost */
	}
	return cross ? cross : inner;
}

static int by_ns(const void *a, const void *b)
{
	const struct pin_row *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

int write_pinned(const struct profile *p, FILE *f)
{
	size_t n = profile__nstacks(p), nrows = 0;
	struct pin_row *rows = calloc(n ? n : 1, sizeof(*rows));
	uint64_t total = 0, count = 0;
	int rc = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct profile_stack *ps = profile__stack(p, i);
		const struct frame *fr;
		const char *k, *name;
		size_t j;

		/* off-CPU time only: a lock's ns are another family's */
		if (!(ps->trace.flags & TRACE_F_PINNED) ||
		    ps->trace.event != TRACE_EV_OFFCPU)
			continue;
		fr = pinning_frame(&ps->trace);
		k = fr ? fr->klass : NULL;
		name = !fr ? "[no Java frame]" : fr->klass ? fr->method :
		       fr->symbol ? fr->symbol : "[unknown]";
		for (j = 0; j < nrows; j++)
			if (rows[j].klass == k && rows[j].name == name)
				break;
		if (j == nrows) {
			rows[nrows].klass = k;
			rows[nrows].name = name;
			nrows++;
		}
		rows[j].ns += ps->weight_ns;
		rows[j].count += ps->count;
		total += ps->weight_ns;
		count += ps->count;
	}
	qsort(rows, nrows, sizeof(*rows), by_ns);
	errno = 0;
	fputs("# pinned off-CPU time: carriers blocked with a virtual thread "
	      "mounted, by the frame that pinned it\n"
	      "# pinned_ns\tcount\tframe\n", f);
	for (size_t j = 0; j < nrows; j++)
		fprintf(f, "%" PRIu64 "\t%" PRIu64 "\t%s%s%s\n", rows[j].ns,
			rows[j].count, rows[j].klass ? rows[j].klass : "",
			rows[j].klass ? "." : "", rows[j].name);
	fprintf(f, "# total pinned_ns=%" PRIu64 " count=%" PRIu64 "\n", total,
		count);
	if (fflush(f) || ferror(f))
		rc = -(errno ? errno : EIO);
	free(rows);
	return rc;
}
