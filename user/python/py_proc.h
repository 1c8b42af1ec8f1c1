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
 * False when the code object cannot be read or is not one.
 */
bool py_proc__frame(struct py_proc *pp, struct strtab *st, uint64_t code,
		    uint32_t instr, uint64_t epoch, const char **func,
		    const char **file, int32_t *line);

struct py_proc_stats {
	uint64_t codes;		/* code objects read */
	uint64_t rechecks;	/* cached ones checked again */
	uint64_t stale;		/* ... and found changed: read again */
	uint64_t bad;		/* not readable or not code objects */
};
void py_proc__stats(const struct py_proc *pp, struct py_proc_stats *out);

#endif /* ASGST_PY_PROC_H */
