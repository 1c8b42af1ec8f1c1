/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Python frames merged into a sample's native stack: each Python frame
 * takes the place of the _PyEval_EvalFrameDefault activation that runs
 * it, so C called from Python (zlib, hashlib, json's encoder) is under
 * the Python function that called it.
 */
#ifndef ASGST_PY_MERGE_H
#define ASGST_PY_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "trace.h"

/* the C function one activation of which runs a chain of Python frames */
#define PY_EVAL_SYMBOL	"_PyEval_EvalFrameDefault"

/*
 * in: n frames, callee first (kernel, then user). py: npy Python frames,
 * innermost first; entry[i] true when py[i] was the first frame of its
 * eval activation (is_entry): the frames from one entry to the next
 * belong to one activation, the innermost to the innermost activation.
 * Each _PyEval_EvalFrameDefault frame of in is replaced by its frames;
 * unless keep_native, the interpreter's own C frames (of a module named
 * python* or libpython*) between the innermost Python frame and the
 * outermost are left out. Python frames left over (the native walk stopped short) go at the
 * root. Writes at most cap frames to out; the count.
 */
uint32_t py_merge(const struct frame *in, uint32_t n, const struct frame *py,
		  const bool *entry, uint32_t npy, bool keep_native,
		  struct frame *out, uint32_t cap);

/* a path of the interpreter (python3.11, libpython3.11.so.1.0, ...) */
bool py_merge__interp_module(const char *path);

#endif /* ASGST_PY_MERGE_H */
