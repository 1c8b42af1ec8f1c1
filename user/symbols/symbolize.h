/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Native and kernel symbolization. A struct symbolizer owns:
 *  - a per-process cache (pid -> its /proc/PID/maps, read through
 *    /proc/PID/root for containers), refreshed when a pc falls into no known
 *    mapping; a process that exits keeps its last state until
 *    symbolizer__forget;
 *  - a module cache keyed by build-id (else dev+inode) with each module's
 *    ELF symbols (.symtab, .dynsym, debug file by build-id under
 *    /usr/lib/debug/.build-id/, .gnu_debuglink), C++ names demangled;
 *  - the kernel symbols from /proc/kallsyms;
 *  - per process, the JIT symbols of code in anonymous memory (or in no ELF
 *    file) from its /tmp/perf-PID.map and jitdump (perfmap.h).
 * Strings it hands out are interned in the strtab given at creation.
 */
#ifndef ASGST_SYMBOLIZE_H
#define ASGST_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace.h"

struct strtab;
struct symbolizer;

/* One mapping of a process, as symbolize hands it to the decoder. */
struct sym_map {
	uint64_t start, end;	/* [start, end) virtual addresses */
	uint64_t pgoff;		/* file offset of start */
	uint64_t bias;		/* load bias: file vaddr = pc - bias */
	const char *path;	/* interned; NULL for anonymous */
	bool exec;
	bool is_jvm;		/* the module is libjvm.so */
};

struct symbolizer *symbolizer__new(struct strtab *st);
void symbolizer__free(struct symbolizer *sz);

/*
 * Fill out->symbol, out->module, out->offset (and FRAME_F_JVM_CPP when the
 * module is libjvm) for a user pc of process pid; out->type and out->pc are
 * set by the caller. An unknown pc keeps module/offset when the mapping is
 * known ("module+0xoffset"), never fails the frame. 0 when a symbol was
 * found, -ENOENT otherwise.
 */
int symbolizer__native(struct symbolizer *sz, pid_t pid, uint64_t pc,
		       struct frame *out);
/*
 * The functions the compiler inlined at native frame f of pid, and its
 * source line, from its module's DWARF (symbols/dwarf_lines.h; read at
 * the module's first frame named here, from the module or its separate
 * debug file). f is as symbolizer__native() filled it; call: its pc is a
 * return address, not where the thread was, so the call before it is
 * looked up (as perf and addr2line do with pc - 1). f->source and
 * f->line get the file and line of f's function (its symbol, when it had
 * none, the DWARF's name); out[0..max) the inlined functions, innermost
 * first, each a FRAME_NON_JAVA frame with FRAME_F_INLINED, its file and
 * line, and f's pc, offset and module. Returns how many were written; 0
 * when the module has no DWARF for the pc (f untouched then).
 */
uint32_t symbolizer__inlines(struct symbolizer *sz, pid_t pid,
			     struct frame *f, bool call, struct frame *out,
			     uint32_t max);
/*
 * With a debug loader (symbols/debug_loader.h; the symbolizer owns it
 * from here and frees it), a module's DWARF is read on the loader's
 * thread, and fetched from debuginfod when it has none: until its result
 * is taken (symbolizer__poll_debug) symbolizer__inlines gives nothing for
 * its frames, and symbolizer__inline_ref says so. Without one the DWARF
 * is read at the module's first frame, on the caller's thread.
 */
struct debug_loader;
void symbolizer__set_debug_loader(struct symbolizer *sz,
				  struct debug_loader *l);
/* the loader's results taken (waiting at most wait_ns for the first when
 * none is ready): DWARF kept, symbols added; how many */
size_t symbolizer__poll_debug(struct symbolizer *sz, uint64_t wait_ns);
/* frames symbolizer__inlines gave nothing for so far because their
 * module's debug info was under way (a caller compares before, after) */
uint64_t symbolizer__inlines_unready(const struct symbolizer *sz);
/* modules whose debug info is still being read or fetched */
size_t symbolizer__debug_loading(const struct symbolizer *sz);
/*
 * A native frame held for later, its module's debug info perhaps under
 * way: symbolizer__inline_ref is true when f's module may have DWARF for
 * it, and then holds the module in *ref until symbolizer__unref (the
 * module stays, whatever its processes do). Once symbolizer__ref_ready, symbolizer__ref_inlines
 * is symbolizer__inlines for it, and names f again when its module got
 * symbols since (a debug file from debuginfod).
 */
struct sym_ref {
	void *mod;
	uint64_t vaddr;
	uint32_t sym_gen;
};
bool symbolizer__inline_ref(struct symbolizer *sz, pid_t pid,
			    const struct frame *f, bool call,
			    struct sym_ref *ref);
bool symbolizer__ref_ready(const struct sym_ref *ref);
uint32_t symbolizer__ref_inlines(struct symbolizer *sz,
				 const struct sym_ref *ref, struct frame *f,
				 struct frame *out, uint32_t max);
void symbolizer__unref(struct symbolizer *sz, struct sym_ref *ref);
/*
 * symbolizer__inlines on (record --inline) or off (the default: it then
 * gives nothing, and no DWARF is read)
 */
void symbolizer__set_inlines(struct symbolizer *sz, bool on);
/*
 * What the names symbolizer__native and symbolizer__kernel give for pid
 * hang on: the maps' load (returned, never another's; 0 when none is
 * read) and *epoch (symbols added, modules freed, the kernel's table
 * read). Equal both, equal names, but for names looked for in JIT maps
 * (symbolizer__jit_lookups counts those asks): they may come later.
 */
uint64_t symbolizer__names_stamp(struct symbolizer *sz, pid_t pid,
				 uint64_t *epoch);
uint64_t symbolizer__jit_lookups(const struct symbolizer *sz);
/*
 * The CFI row (symbols/cfi.h) at user pc of pid, cached. 0; -ESRCH when
 * no executable mapping holds pc, -ENODATA when its module has no CFI,
 * -ENOENT when no FDE covers pc (or libdw cannot parse it).
 */
struct cfi_row;
int symbolizer__cfi(struct symbolizer *sz, pid_t pid, uint64_t pc,
		    struct cfi_row *row);
/* kernel pc -> out->symbol ("do_syscall_64"); 0 or -ENOENT */
int symbolizer__kernel(struct symbolizer *sz, uint64_t pc, struct frame *out);
/*
 * the mapping holding pc, refreshing the process once if needed; NULL if none.
 * The pointer stays valid until the maps of that pid are read again (a later
 * call with an unknown pc of that pid, or symbolizer__refresh).
 */
const struct sym_map *symbolizer__find_map(struct symbolizer *sz, pid_t pid,
					    uint64_t pc);
/* process maps include libjvm.so (reads maps if not cached) */
bool symbolizer__is_jvm(struct symbolizer *sz, pid_t pid);
/* re-read the maps of pid now (e.g. when a JVM loaded new code) */
int symbolizer__refresh(struct symbolizer *sz, pid_t pid);
/* the /proc/PID/maps text the current maps of pid came from (raw files) */
int symbolizer__maps_text(struct symbolizer *sz, pid_t pid, const char **text,
			  size_t *len);
/* a process known only from a recording: maps from text, files opened by
 * their host paths, /proc never read for it */
int symbolizer__add_offline(struct symbolizer *sz, pid_t pid, const char *text,
			    size_t len);
/*
 * Where the maps of a process come from once /proc has none (it is gone,
 * perhaps before it was ever read): the kernel's side-band records. fn
 * gives a malloc'ed maps text and a live process whose root holds the
 * same files (*root_pid, 0: the host's), or -ENOENT.
 */
typedef int (*symbolizer_maps_fn)(void *ctx, pid_t pid, char **text,
				  size_t *len, pid_t *root_pid);
void symbolizer__set_maps_fallback(struct symbolizer *sz,
				   symbolizer_maps_fn fn, void *ctx);
/*
 * pid has exited and its last samples are decoded: drop its maps (a later
 * call for pid reads /proc again, as for a new process). Modules no cached
 * process maps any more are freed, but for a bounded number kept idle.
 */
void symbolizer__forget(struct symbolizer *sz, pid_t pid);

/*
 * Additions (symbolize helper): where separate debug files are looked up
 * (default /usr/lib/debug: DIR/.build-id/xx/yyyy.debug and DIR/<module dir>/
 * for .gnu_debuglink); NULL restores the default. 0 or -ENOMEM.
 */
int symbolizer__set_debug_root(struct symbolizer *sz, const char *dir);
/* kernel symbols from this file instead of /proc/kallsyms (tests, replays) */
int symbolizer__set_kallsyms_path(struct symbolizer *sz, const char *path);
/* distinct modules loaded so far (memory figures, tests) */
size_t symbolizer__nmodules(const struct symbolizer *sz);
/* processes with cached maps now */
size_t symbolizer__nprocs(const struct symbolizer *sz);

/* how module files were reached (summary lines, tests) */
struct symbolizer_stats {
	size_t modules;		/* distinct modules (build-id, else file) */
	size_t procs;		/* processes with cached maps now */
	size_t open_root;	/* opened via /proc/PID/root (openat2) */
	size_t open_map_files;	/* via /proc/PID/map_files fallback */
	size_t open_failed;	/* unreachable: pcs shown as module+0xoff */
	size_t debug_refused;	/* debug files refused (FIFO, device, size) */
	size_t map_reads;	/* /proc/PID/maps reads */
	size_t procs_forgotten;	/* dropped by symbolizer__forget */
	size_t modules_freed;	/* no process mapped them any more */
	size_t cfi_modules;	/* modules with call-frame information */
	size_t cfi_bytes;	/* CFI sections kept in memory */
	uint64_t cfi_hits;	/* CFI rows found in the row cache */
	uint64_t cfi_misses;	/* ... looked up by libdw */
	size_t maps_fallback;	/* maps of gone processes from the fallback */
	size_t modules_refused;	/* over the modules' memory limits */
	size_t module_bytes;	/* the modules' tables now (about) */
	size_t dwarf_modules;	/* modules whose DWARF is read */
	size_t dwarf_bytes;	/* their debug sections held */
	size_t dwarf_refused;	/* DWARF over the limits, or dwz/split */
	uint64_t dwarf_ns;	/* time spent reading DWARF */
	size_t dwarf_max_bytes;	/* the largest module's DWARF */
	size_t dwarf_index_bytes;	/* the units' scope trees made */
	size_t debuginfod_symbols;	/* modules named from a fetched file */
	uint64_t inline_hits;	/* inline chains found in their cache */
	uint64_t inline_misses;	/* ... looked up in the DWARF */
	uint64_t inline_cache_full;	/* not kept: the cache at its cap */
};
void symbolizer__stats(const struct symbolizer *sz, struct symbolizer_stats *out);
/*
 * The modules' memory limits (bytes of symbol tables and CFI): in all, and
 * for the files of each user other than root. Defaults 2 GiB and 256 MiB.
 */
void symbolizer__set_limits(struct symbolizer *sz, size_t all, size_t user);
/*
 * fn(ctx, module path, build-id hex) for each module path whose file had a
 * build-id, read through the processes' roots (a file of root's preferred
 * where paths are alike); both strings interned in the symbolizer's strtab
 */
void symbolizer__each_build_id(const struct symbolizer *sz,
			       void (*fn)(void *ctx, const char *module,
					  const char *hex),
			       void *ctx);

#endif /* ASGST_SYMBOLIZE_H */
