/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One ELF module's symbols (libelf): function symbols from .symtab, else
 * .dynsym plus a separate debug file (by build-id under DEBUG_ROOT/.build-id/,
 * then .gnu_debuglink next to the file, in .debug/, in DEBUG_ROOT/<dir>),
 * sorted for binary search; PT_LOAD headers for the load bias; build-id.
 * Files are read with pread (libelf ELF_C_READ), never mapped, and debug
 * files are opened with safe_open(): a file that changes or shrinks while
 * it is read is an error, not a crash.
 */
#ifndef ASGST_ELF_SYMBOLS_H
#define ASGST_ELF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_BUILD_ID_MAX	64
#define ELF_DEFAULT_DEBUG_ROOT	"/usr/lib/debug"
/* module and debug files bigger than this are not read */
#define ELF_FILE_MAX		(4ull << 30)

struct elf_module;

struct elf_module_opts {
	const char *debug_root;	/* NULL = ELF_DEFAULT_DEBUG_ROOT (host) */
	int root_fd;		/* dirfd of the process root, -1 = host "/" */
	const char *path;	/* path of the module inside that root (for
				 * .gnu_debuglink directories), may be NULL */
	char *refused;		/* out, may be NULL: the first debug file
				 * found but refused, "debug file PATH: why" */
	size_t refusedlen;
};

/* where a module's symbols came from (elf_module__sources bits) */
#define ELF_SRC_SYMTAB		(1u << 0)
#define ELF_SRC_DYNSYM		(1u << 1)
#define ELF_SRC_DEBUG_BUILDID	(1u << 2)
#define ELF_SRC_DEBUG_LINK	(1u << 3)

/* build-id of the ELF file on fd (file offset untouched); length or -errno */
int elf_read_build_id(int fd, uint8_t *id, size_t cap);
/*
 * The file offset of the code of the defined dynamic function name in the
 * ELF file on fd (where a uprobe goes). 0, -ENOENT, or -EINVAL.
 */
int elf_symbol_file_offset(int fd, const char *name, uint64_t *off);
/* "abcd..." hex of id into buf (2*len+1 bytes) */
void elf_build_id_hex(const uint8_t *id, size_t len, char *buf);

/*
 * libelf handle on fd, read with pread (ELF_C_READ) after the header's
 * section and segment counts were checked; NULL if refused. For other
 * readers of the same file (CFI); elf_end() it.
 */
struct Elf;
struct Elf *elf_open_fd(int fd);

/*
 * A program's entry code (e_entry on): the first frame of each process it
 * starts. Where the file has no symbol or CFI for it (the dynamic loader's
 * _start), it is named _start and taken as a thread's first frame for
 * this many bytes.
 */
#define ELF_ENTRY_CODE_BYTES	64

/*
 * The separate debug file of the ELF file on fd, found as
 * elf_module__load() finds one for symbols (by build-id under
 * o->debug_root, then under the target's /usr/lib/debug; then by
 * .gnu_debuglink), whether or not fd has a .symtab: its fd, which the
 * caller closes, or -ENOENT. o->refused as for elf_module__load().
 */
int elf_debug_file_open(int fd, const struct elf_module_opts *o);

/* load a module from fd (fd stays owned by the caller); NULL + errno */
struct elf_module *elf_module__load(int fd, const struct elf_module_opts *o);
/* load from an in-memory image (the vdso); NULL + errno */
struct elf_module *elf_module__load_mem(const void *img, size_t len);
/*
 * The .symtab of a debug file found later (debuginfod) added to a module
 * that had only its dynamic symbols, when the file's build-id is the
 * module's: 1 added, 0 nothing to add, -errno (the module unchanged).
 */
int elf_module__add_debug_symbols(struct elf_module *m, int dfd);
void elf_module__free(struct elf_module *m);

size_t elf_module__nsyms(const struct elf_module *m);
unsigned int elf_module__sources(const struct elf_module *m);
/* build-id bytes (length in *len, 0 when none) */
const uint8_t *elf_module__build_id(const struct elf_module *m, size_t *len);

/*
 * Load bias of a mapping [start, ...) at file offset pgoff, from the PT_LOAD
 * that maps that offset (exec preferred): file vaddr = pc - bias. Without a
 * matching PT_LOAD: start - pgoff.
 */
uint64_t elf_module__bias(const struct elf_module *m, uint64_t start,
			  uint64_t pgoff, bool exec);

/*
 * Symbol index for file vaddr: the last symbol at or before vaddr that
 * covers it (size 0: nearest preceding). -ENOENT when none.
 */
long elf_module__lookup(const struct elf_module *m, uint64_t vaddr);
/* raw (mangled) name, address, size of symbol idx */
const char *elf_module__sym_name(const struct elf_module *m, size_t idx);
uint64_t elf_module__sym_addr(const struct elf_module *m, size_t idx);
uint64_t elf_module__sym_size(const struct elf_module *m, size_t idx);
/* per-symbol slot for a cached display name (the symbolizer's), NULL init */
const char **elf_module__display_slot(struct elf_module *m, size_t idx);
/* first symbol with this raw name, or -ENOENT (tests, VMStructs lookups) */
long elf_module__find_name(const struct elf_module *m, const char *name);

#endif /* ASGST_ELF_SYMBOLS_H */
