/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * For the code-map fuzz targets: every kind of lookup over what a reader
 * holds, checking what must hold whatever the input (a blob's own pcs
 * are found, their method indexes are in range).
 */
#ifndef ASGST_FUZZ_CODEMAP_LOOKUPS_H
#define ASGST_FUZZ_CODEMAP_LOOKUPS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/codemap.h"

static void lookups(const struct codemap *cm)
{
	size_t nb = codemap__nblobs(cm), nt = codemap__nthreads(cm);
	volatile uint64_t sink = 0;

	for (size_t i = 0; i < nb && i < 256; i++) {
		const struct codemap_blob *b = codemap__blob_at(cm, i), *f;
		uint64_t mid = b->start + (b->end - b->start) / 2;

		f = codemap__find(cm, mid, 0);
		if (f)
			sink += f->start;
		f = codemap__find(cm, b->start, b->load_ns);
		if (f)
			sink += f->end;
		f = codemap__find(cm, b->end - 1, b->load_ns ? b->load_ns - 1 : 1);
		if (f)
			sink += f->frame_size;
		sink += (uintptr_t)codemap__find(cm, b->end, 0);
		sink += (uintptr_t)codemap__find(cm, b->start - 1, 5);
		for (uint32_t j = 0; j < b->n_pcs && j < 64; j++) {
			const struct codemap_pcdesc *d =
				codemap_blob__pcdesc(b, b->start + b->pcs[j].pc_off);

			if (!d)
				abort();	/* its own pc must be found */
			for (uint32_t k = 0; k < d->depth; k++) {
				const struct codemap_method *m;

				if (d->frames[k].method_idx >= b->n_methods)
					abort();
				m = codemap__method(cm,
					b->method_pool[d->frames[k].method_idx]);
				sink += (unsigned)codemap_method__line(
					m, d->frames[k].bci);
			}
		}
		sink += (uintptr_t)codemap_blob__pcdesc(b, b->end + 1);
	}
	for (size_t i = 0; i < codemap__nmethods(cm) && i < 256; i++) {
		const struct codemap_method *m = codemap__method_at(cm, i);

		sink += strlen(m->klass) + strlen(m->name) + strlen(m->source);
		for (int bci = -1; bci < 40; bci += 7)
			sink += (unsigned)codemap_method__line(m, bci);
	}
	for (size_t i = 0; i < nt && i < 256; i++) {
		const struct codemap_thread *t = codemap__thread_at(cm, i), *u;

		u = codemap__thread(cm, t->tid, t->start_ns);
		if (u)
			sink += strlen(u->name);
		sink += (uintptr_t)codemap__thread(cm, t->tid, 0);
	}
	if (codemap__vm(cm))
		sink += strlen(codemap__vm_version(cm));
	(void)sink;
}

#endif /* ASGST_FUZZ_CODEMAP_LOOKUPS_H */
