// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Python frames merged into native stacks (py_merge.h). */
#include <string.h>

#include "python/py_merge.h"

bool py_merge__interp_module(const char *path)
{
	const char *b;

	if (!path)
		return false;
	b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return !strncmp(b, "python", 6) || !strncmp(b, "libpython", 9);
}

static bool is_eval(const struct frame *f)
{
	return f->type == FRAME_NON_JAVA && !(f->flags & FRAME_F_INLINED) &&
	       f->symbol && !strcmp(f->symbol, PY_EVAL_SYMBOL);
}

uint32_t py_merge(const struct frame *in, uint32_t n, const struct frame *py,
		  const bool *entry, uint32_t npy, bool keep_native,
		  struct frame *out, uint32_t cap)
{
	uint32_t k = 0, p = 0;
	bool seen = false;

	for (uint32_t i = 0; i < n && k < cap; i++) {
		const struct frame *f = &in[i];

		if (p < npy && is_eval(f)) {
			/* this activation's frames: up to its entry frame */
			do {
				if (k < cap)
					out[k++] = py[p];
			} while (!entry[p++] && p < npy);
			seen = true;
			continue;
		}
		/*
		 * The interpreter's C frames between the innermost Python
		 * frame and the outermost are its machinery (calls, the eval
		 * loop's helpers): Python frames stand for them. Those inward
		 * of it are what the Python code called, those outward of the
		 * outermost how the thread started (Py_RunMain, a thread's
		 * bootstrap, _start): both stay, so the stack is still whole.
		 */
		if (seen && p < npy && !keep_native &&
		    f->type == FRAME_NON_JAVA &&
		    py_merge__interp_module(f->module))
			continue;
		out[k++] = *f;
	}
	while (p < npy && k < cap)
		out[k++] = py[p++];
	return k;
}
