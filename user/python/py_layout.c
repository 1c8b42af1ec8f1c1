// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* CPython layouts by version (py_layout.h). */
#include <stddef.h>
#include <string.h>

#include "python/py_layout.h"

/*
 * 3.11 on x86_64, the same in Debian 12's 3.11.2 and pyenv's 3.11.7
 * (release builds; a --with-pydebug build is refused by the reader):
 * tests/unit/test_py_layout.c compares each with offsetof against the
 * installed headers.
 */
static const struct py_layout layouts[] = {
	{
		.version = 0x030b, .name = "3.11",
		.rt_interp = 48, .is_threads = 16, .ts_next = 8,
		.ts_tid = 160, .ts_cframe = 56, .cf_frame = 8,
		.fr_code = 32, .fr_previous = 48, .fr_instr = 56,
		.fr_entry = 68, .fr_owner = 69, .fr_globals = 8,
		.fr_locals = 24,
		.ob_type = 8, .co_firstlineno = 72, .co_filename = 112,
		.co_name = 120, .co_qualname = 128, .co_linetable = 136,
		.co_firsttraceable = 168, .co_code = 184,
		.str_length = 16, .str_state = 32, .str_ascii_data = 48,
		.str_data = 72, .bytes_size = 16, .bytes_data = 32,
	},
};

const struct py_layout *py_layout__find(uint32_t version)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == version)
			return &layouts[i];
	return NULL;
}

static int32_t max_i32(int32_t a, int32_t b)
{
	return a > b ? a : b;
}

void py_layout__to_bpf(const struct py_layout *l, uint64_t runtime,
		       uint32_t version_hex, struct asgst_py_proc *out)
{
	int32_t end;

	memset(out, 0, sizeof(*out));
	out->runtime = runtime;
	out->version = version_hex;
	out->rt_interp = l->rt_interp;
	out->is_threads = l->is_threads;
	out->ts_next = l->ts_next;
	out->ts_tid = l->ts_tid;
	out->ts_cframe = l->ts_cframe;
	out->cf_frame = l->cf_frame;
	out->fr_code = l->fr_code;
	out->fr_previous = l->fr_previous;
	out->fr_instr = l->fr_instr;
	out->fr_entry = l->fr_entry;
	out->fr_owner = l->fr_owner;
	out->fr_globals = l->fr_globals;
	out->fr_locals = l->fr_locals;
	/* one read of a frame covers every field the walk takes from it */
	end = max_i32(max_i32(l->fr_code, l->fr_previous), l->fr_instr) + 8;
	end = max_i32(end, max_i32(l->fr_globals, l->fr_locals) + 8);
	end = max_i32(end, max_i32(l->fr_entry, l->fr_owner) + 1);
	out->fr_span = (uint32_t)((end + 7) & ~7);
}
