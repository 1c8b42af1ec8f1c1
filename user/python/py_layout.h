/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The CPython layouts the recorder knows: per version, the offsets of
 * the fields the sampler's walk reads (bpf/sampler.h, struct
 * asgst_py_proc) and those the name reader reads (code objects, str and
 * bytes). Each table is checked against that version's own headers by
 * tests/unit/test_py_layout.c (offsetof under Py_BUILD_CORE); a version
 * with no table is refused, never guessed.
 */
#ifndef ASGST_PY_LAYOUT_H
#define ASGST_PY_LAYOUT_H

#include <stdint.h>
#include <linux/types.h>

#include "sampler.h"

struct py_layout {
	uint32_t version;	/* (major << 8) | minor: 0x030b */
	const char *name;	/* "3.11" */
	/* the sampler's walk */
	int32_t rt_interp;	/* _PyRuntime.interpreters.main */
	int32_t is_threads;	/* PyInterpreterState.threads.head */
	int32_t ts_next;
	int32_t ts_tid;		/* PyThreadState.native_thread_id */
	int32_t ts_cframe;
	int32_t cf_frame;	/* _PyCFrame.current_frame */
	int32_t fr_code;
	int32_t fr_previous;
	int32_t fr_instr;	/* prev_instr */
	int32_t fr_entry;	/* is_entry */
	int32_t fr_owner;
	int32_t fr_globals;
	int32_t fr_locals;
	/* code objects */
	int32_t ob_type;
	int32_t co_firstlineno;
	int32_t co_filename;
	int32_t co_name;
	int32_t co_qualname;
	int32_t co_linetable;
	int32_t co_firsttraceable;
	int32_t co_code;	/* co_code_adaptive: the first instruction */
	/* str (PEP 393) and bytes */
	int32_t str_length;
	int32_t str_state;
	int32_t str_ascii_data;	/* sizeof(PyASCIIObject) */
	int32_t str_data;	/* sizeof(PyCompactUnicodeObject) */
	int32_t bytes_size;	/* ob_size */
	int32_t bytes_data;	/* ob_sval */
};

/* the table of version (major << 8 | minor); NULL: not verified */
const struct py_layout *py_layout__find(uint32_t version);
/* the sampler's entry for an interpreter whose _PyRuntime is at runtime */
void py_layout__to_bpf(const struct py_layout *l, uint64_t runtime,
		       uint32_t version_hex, struct asgst_py_proc *out);

#endif /* ASGST_PY_LAYOUT_H */
