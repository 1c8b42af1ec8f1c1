// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: an ELF module file as a process may forge it (symbols,
 * build-id, PT_LOADs, section and header counts), read from an fd the way
 * the symbolizer reads module files: header checks, then libelf by pread.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/elf_symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_module_opts o = { .root_fd = -1 };
	uint8_t id[ELF_BUILD_ID_MAX];
	struct elf_module *m;
	int fd;

	fd = memfd_create("fuzz_elf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	elf_read_build_id(fd, id, sizeof(id));
	/* no path: no debug file is looked for on this host */
	m = elf_module__load(fd, &o);
	if (m) {
		for (size_t i = 0; i < elf_module__nsyms(m); i++)
			elf_module__sym_name(m, i);
		elf_module__lookup(m, 0x1000);
		elf_module__bias(m, 0x400000, 0, true);
		elf_module__free(m);
	}
	close(fd);
	return 0;
}
