// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target of the code-map reader: the input is a map file. It is
 * read in two steps, as from a writer still appending: first with
 * write_pos cut at a point the input chooses (and the file cut there too),
 * then the whole file; after each step every kind of lookup runs over what
 * was read.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jvm/codemap.h"

static int memfd = -1;

static int put(const uint8_t *data, size_t size)
{
	if (ftruncate(memfd, 0))
		return -1;
	return pwrite(memfd, data, size, 0) == (ssize_t)size ? 0 : -1;
}

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct codemap *cm = NULL;
	struct codemap_stats st;
	char err[600];
	uint8_t *cut = NULL;
	size_t n1 = size;

	if (memfd < 0) {
		memfd = memfd_create("fuzz_codemap", MFD_CLOEXEC);
		if (memfd < 0)
			abort();
	}
	/* step 1: write_pos and the file cut at a point chosen by the input */
	if (size >= sizeof(struct cm_file_header) + 8) {
		uint64_t wp;

		memcpy(&wp, data + offsetof(struct cm_file_header, write_pos), 8);
		if (wp > CM_HEADER_SIZE && wp <= size) {
			uint64_t c = CM_HEADER_SIZE +
				     ((wp - CM_HEADER_SIZE) * data[size - 1] / 255);

			c &= ~7ull;
			n1 = c > sizeof(struct cm_file_header) ? c : size;
			cut = malloc(n1);
			if (!cut)
				return 0;
			memcpy(cut, data, n1);
			memcpy(cut + offsetof(struct cm_file_header, write_pos),
			       &c, 8);
		}
	}
	if (put(cut ? cut : data, n1))
		goto cleanup;
	if (codemap__open_fd(&cm, memfd, "fuzz", err, sizeof(err)))
		goto cleanup;
	lookups(cm);
	/* step 2: the rest appears */
	if (cut) {
		if (put(data, size))
			goto cleanup;
		codemap__update(cm);
		lookups(cm);
	}
	codemap__stats(cm, &st);
	if (st.bytes > size)
		abort();
	if (codemap__mem_bytes(cm) > 4 * size + (1u << 20))
		abort();	/* memory stays proportional to the map */
cleanup:
	codemap__free(cm);
	free(cut);
	return 0;
}
