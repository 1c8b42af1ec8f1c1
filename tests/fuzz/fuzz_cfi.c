// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: the call-frame information of an ELF module as a process may
 * forge it (.eh_frame, .eh_frame_hdr, .debug_frame), read from an fd as
 * the symbolizer reads it, then rows looked up at addresses the input
 * names and around each FDE the search table may point at.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfi_table *t;
	struct cfi_row r;
	int fd;

	fd = memfd_create("fuzz_cfi", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	t = cfi_table__load_fd(fd);
	close(fd);
	if (!t)
		return 0;
	/* addresses from the input's last bytes, and a sweep of low ones */
	for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
		uint64_t a;

		memcpy(&a, data + size - 8 - i, 8);
		cfi_table__find(t, a, &r);
	}
	for (uint64_t a = 0; a < 0x3000; a += 0x10)
		cfi_table__find(t, a, &r);
	cfi_table__free(t);
	return 0;
}
