/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inlined functions and source lines of one ELF module, from its DWARF
 * (.debug_info, .debug_line; elfutils' libdw). A pc becomes the chain of
 * functions the compiler inlined there, innermost first, as addr2line -i
 * and perf show it: each with the file and line it was at, the last one
 * the function the code belongs to (its DW_TAG_subprogram), at the line
 * where the outermost inlined call was made (or the pc's own line when
 * nothing was inlined there).
 *
 * The debug sections are read once (pread, never mapped; compressed ones
 * inflated by libdw) and the file is let go: a file replaced or cut later
 * changes nothing. Split DWARF (.dwo files) and dwz's supplementary files
 * (.gnu_debugaltlink) are not followed: libdw would open the paths they
 * name with a plain open(), which a target's file must not choose. Lookups
 * walk the DIEs of the unit holding the pc; the caller caches the answers
 * (symbolize.c).
 */
#ifndef ASGST_DWARF_LINES_H
#define ASGST_DWARF_LINES_H

#include <stddef.h>
#include <stdint.h>

/* frames one pc gives at most (deeper chains are cut at their innermost
 * DWARF_LINES_MAX - 1 and their function) */
#define DWARF_LINES_MAX		32

struct dwarf_lines;

/* one frame of a pc's chain; strings live as long as the dwarf_lines */
struct dwarf_line_frame {
	const char *name;	/* linkage name (mangled) if any, else the
				   DWARF name; NULL when unknown */
	const char *file;	/* source file path, NULL when unknown */
	int32_t line;		/* 0 when unknown */
};

/*
 * The DWARF of the ELF file on fd (the fd stays the caller's; nothing is
 * read through it after return). Its .debug_* sections may take at most
 * max_bytes (inflated). NULL with errno: ENOENT no .debug_info, EFBIG
 * over max_bytes, ENOTSUP split or supplementary DWARF, EINVAL not a
 * usable ELF or DWARF, ENOMEM.
 */
struct dwarf_lines *dwarf_lines__open(int fd, uint64_t max_bytes);
void dwarf_lines__free(struct dwarf_lines *d);
/* the debug sections' bytes held (about what the module's DWARF costs) */
size_t dwarf_lines__bytes(const struct dwarf_lines *d);
/* the units' scope trees made so far (dwarf_lines__find makes a unit's
 * at its first lookup there; at most 256 MiB a module) */
size_t dwarf_lines__index_bytes(const struct dwarf_lines *d);

/*
 * The chain at file vaddr into out[0..max), innermost first; its length,
 * 0 when the DWARF does not cover vaddr. A chain cut for max keeps its
 * last entry, the function itself.
 */
int dwarf_lines__find(struct dwarf_lines *d, uint64_t vaddr,
		      struct dwarf_line_frame *out, int max);

#endif /* ASGST_DWARF_LINES_H */
