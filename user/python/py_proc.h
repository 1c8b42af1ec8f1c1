/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A CPython process: its interpreter found in its maps (the python
 * binary or libpython that defines _PyRuntime), its version (Py_Version),
 * the layout of that version (py_layout.h) or a refusal, and the names
 * of its code objects, read with process_vm_readv and cached by address.
 */
#ifndef ASGST_PY_PROC_H
#define ASGST_PY_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "sampler.h"
#include "util/strtab.h"

/* code objects cached per process; past it the cache starts afresh */
#define PY_CODES_MAX	65536

struct py_proc;

/*
 * Look at pid: 0 not a CPython process; 1 a supported one (*out made,
 * *bpf its sampler entry); -1 a CPython whose layout is not verified
 * (why: one line saying which and why; native frames only). -errno when
 * its maps or interpreter file could not be read.
 */
int py_proc__probe(pid_t pid, struct py_proc **out, struct asgst_py_proc *bpf,
		   char *why, size_t whylen);
void py_proc__free(struct py_proc *pp);

/* "3.11" */
const char *py_proc__version(const struct py_proc *pp);

/*
 * The function (co_qualname), file and line of a frame: code object
 * code, prev_instr at byte instr from it (~0u: unknown). Names are
 * interned in st. A cached code object is checked again against the
 * process (its type and the fields the names came from) once per epoch.
 *
 * seq is the sample's index (in the order samples are decoded) and
 * seq_next the index the next sample to arrive will get. A code object
 * found changed at an address (freed, its memory reused by another) is
 * read again, and samples before seq_next, which may have run the old
 * one, get no name from it (the address is "poisoned" until seq_next).
 *
 * flags are the frame's (ASGST_PYF_*): one the sampler saw run
 * module-level code gets no name from a function's code object found at
 * its address, nor a function's frame from a module's (the object was
 * freed and its memory reused before it was read).
 *
 * False when the code object cannot be read, is not one, is poisoned for
 * seq or is not of the frame's kind.
 */
bool py_proc__frame(struct py_proc *pp, struct strtab *st, uint64_t code,
		    uint32_t instr, uint32_t flags, uint64_t epoch, uint64_t seq,
		    uint64_t seq_next, const char **func, const char **file,
		    int32_t *line);

/*
 * A code object as the reader keeps it: what a raw recording stores
 * (output/raw.h, RAW_PYCODE) so that report names frames as record did.
 */
struct py_code_view {
	uint64_t code;		/* its address in the process */
	uint32_t version;	/* the layout's: (major << 8) | minor */
	int32_t firstlineno;
	uint32_t lt_len;
	const char *func, *file;
	const uint8_t *lt;	/* the location table, lt_len bytes */
	uint64_t poison_until;	/* samples before it get no name from it */
};

typedef void (*py_code_fn)(void *ctx, pid_t pid, const struct py_code_view *v);
/* fn is called with each code object read from the process */
void py_proc__set_hook(struct py_proc *pp, py_code_fn fn, void *ctx);
/* fn with every code object cached now */
void py_proc__each_code(const struct py_proc *pp, py_code_fn fn, void *ctx);

/*
 * A process of a recording (report): no memory is read, its code
 * objects come from py_proc__add_code (a replacement at an address
 * known already is poisoned as v says). NULL when out of memory.
 */
struct py_proc *py_proc__new_offline(pid_t pid, uint32_t version);
int py_proc__add_code(struct py_proc *pp, struct strtab *st,
		      const struct py_code_view *v);

struct py_proc_stats {
	uint64_t codes;		/* code objects read */
	uint64_t rechecks;	/* cached ones checked again */
	uint64_t stale;		/* ... and found changed: read again */
	uint64_t bad;		/* not readable or not code objects */
	uint64_t poisoned;	/* frames left unnamed: their address was
				   reused while they waited */
	uint64_t other_kind;	/* ... a module's code for a function's
				   frame, or the reverse */
};
void py_proc__stats(const struct py_proc *pp, struct py_proc_stats *out);

#endif /* ASGST_PY_PROC_H */
