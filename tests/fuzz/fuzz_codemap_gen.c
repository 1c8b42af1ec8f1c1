// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target of the code-map reader across a hand-over between
 * generations (agent/codemap_format.h): the input is two map files, the
 * old generation and the new one, with a 4-byte length of the first in
 * front. The old one is opened by path, the new one renamed over that
 * path and the old one marked superseded, as the agent does; the reader
 * follows, then frees what died (retention), and after each step every
 * kind of lookup runs over what it holds.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvm/codemap.h"

static char dir[64];

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

static int put(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, data, size) == (ssize_t)size ? 0 : -1;
	close(fd);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct codemap *cm = NULL;
	struct codemap_stats st;
	char err[600], path[96], next[104];
	uint32_t n_old, flags;
	int fd = -1;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_codemap_gen.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	if (size < 4)
		return 0;
	memcpy(&n_old, data, 4);
	data += 4;
	size -= 4;
	if (n_old > size)
		n_old = (uint32_t)size;
	snprintf(path, sizeof(path), "%s/gen.map", dir);
	snprintf(next, sizeof(next), "%s/gen.map.next", dir);
	if (put(path, data, n_old))
		return 0;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || codemap__open(&cm, "/", path, err, sizeof(err)))
		goto cleanup;
	lookups(cm);
	/* the writer's hand-over: the new file at the path, then the flag */
	if (put(next, data + n_old, size - n_old) || rename(next, path))
		goto cleanup;
	if (pread(fd, &flags, 4, offsetof(struct cm_file_header, flags)) == 4) {
		flags |= CM_F_SUPERSEDED;
		if (pwrite(fd, &flags, 4,
			   offsetof(struct cm_file_header, flags)) != 4)
			goto cleanup;
	}
	codemap__update(cm);
	lookups(cm);
	codemap__stats(cm, &st);
	if (st.handovers > 1 || st.file_bytes > size)
		abort();	/* one newer file, read once */
	/* free what died before the middle of what was seen */
	codemap__prune(cm, st.last_record_ns / 2);
	lookups(cm);
	codemap__prune(cm, UINT64_MAX);
	lookups(cm);
	if (codemap__mem_bytes(cm) > 8 * (size + 4) + (2u << 20))
		abort();	/* memory stays proportional to the maps */
cleanup:
	if (fd >= 0)
		close(fd);
	codemap__free(cm);
	unlink(path);
	unlink(next);
	return 0;
}
