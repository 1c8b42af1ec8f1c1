// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target of the code-map reader: the input is a map file. It is
 * read in two steps, as from a writer still appending: first with
 * write_pos cut at a point the input chooses (and the file cut there too),
 * then the whole file; after each step every kind of lookup runs over what
 * was read. Seeds: maps of every version, a version 3 one with STRINGS,
 * CLASSES and METHODS records (test_codemap --write-seeds).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jvm/codemap.h"
#include "codemap_lookups.h"

static int memfd = -1;

static int put(const uint8_t *data, size_t size)
{
	if (ftruncate(memfd, 0))
		return -1;
	return pwrite(memfd, data, size, 0) == (ssize_t)size ? 0 : -1;
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
	/* memory stays proportional to the map: a version 3 method entry
	 * of 8 bytes is a method of ~200 bytes in the reader */
	if (codemap__mem_bytes(cm) > 32 * size + (1u << 20))
		abort();
cleanup:
	codemap__free(cm);
	free(cut);
	return 0;
}
