/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Code maps written in memory for the code-map unit tests: a record at a
 * time, in the layout of agent/codemap_format.h.
 */
#ifndef ASGST_TEST_CODEMAP_MAPW_H
#define ASGST_TEST_CODEMAP_MAPW_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codemap_format.h"

/* each test uses some of these */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"

/* ---- writer ------------------------------------------------------------ */

struct mapw {
	uint8_t *buf;
	size_t len, cap;
	size_t rec;		/* start of the record being built */
};

static void w_reserve(struct mapw *w, size_t n)
{
	if (w->len + n <= w->cap)
		return;
	while (w->len + n > w->cap)
		w->cap = w->cap ? w->cap * 2 : 8192;
	w->buf = realloc(w->buf, w->cap);
	assert_non_null(w->buf);
}

static void w_put(struct mapw *w, const void *p, size_t n)
{
	w_reserve(w, n);
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void w_pad(struct mapw *w, size_t a)
{
	static const uint8_t z[8];

	while (w->len % a)
		w_put(w, z, 1);
}

static void w_str(struct mapw *w, const char *s)
{
	uint16_t n = (uint16_t)strlen(s);

	w_put(w, &n, 2);
	w_put(w, s, n);
}

static struct cm_file_header *w_hdr(struct mapw *w)
{
	return (struct cm_file_header *)w->buf;
}

static void w_init(struct mapw *w, uint32_t pid)
{
	struct cm_file_header h = { 0 };

	memset(w, 0, sizeof(*w));
	memcpy(h.magic, CM_MAGIC, 8);
	h.version = CM_VERSION;
	h.header_size = CM_HEADER_SIZE;
	h.writer_pid = pid;
	h.flags = CM_F_READY;
	h.max_size = CM_DEFAULT_MAX;
	h.start_ns = 1;
	w_reserve(w, CM_HEADER_SIZE);
	memset(w->buf, 0, CM_HEADER_SIZE);
	memcpy(w->buf, &h, sizeof(h));
	w->len = CM_HEADER_SIZE;
	w_hdr(w)->write_pos = w->len;
}

/* a record: fixed part (with its cm_rec_hdr) first */
static void w_begin(struct mapw *w, const void *fixed, size_t n)
{
	w->rec = w->len;
	w_put(w, fixed, n);
}

static void w_end(struct mapw *w)
{
	uint32_t len;

	w_pad(w, 8);
	len = (uint32_t)(w->len - w->rec);
	memcpy(w->buf + w->rec + offsetof(struct cm_rec_hdr, len), &len, 4);
	w_hdr(w)->write_pos = w->len;
}

static struct cm_rec_hdr rh(uint32_t type, uint64_t t)
{
	struct cm_rec_hdr h = { .type = type, .time_ns = t };

	return h;
}

static void add_vm(struct mapw *w, uint64_t t, uint32_t jdk, const char *ver)
{
	struct cm_vm v;

	memset(&v, 0xff, sizeof(v));	/* every const CM_ABSENT */
	v.h = rh(CM_REC_VM, t);
	v.jdk_major = jdk;
	v.pad = 0;
	v.c.blob_frame_size = 20;
	v.c.nm_entry_bci = -1;
	v.c.if_method = -3;
	v.c.if_bcp = -8;
	v.c.pad0 = 0;
	v.c.call_stub_return = 0x7000100;
	v.c.interp_begin = 0x7000000;
	v.c.interp_end = 0x7000800;
	v.c.code_low = 0x7000000;
	v.c.code_high = 0x8000000;
	v.c.cont_return_barrier = 0;
	v.c.cont_return_pc = 0;
	memset(v.c.reserved, 0, sizeof(v.c.reserved));
	w_begin(w, &v, sizeof(v));
	w_str(w, ver);
	w_end(w);
}

static void add_method(struct mapw *w, uint64_t t, uint64_t mp,
		       const char *klass, const char *name, const char *sig,
		       const char *src, uint32_t n_lines,
		       const struct cm_line *lines)
{
	struct cm_method m = {
		.h = rh(CM_REC_METHOD, t),
		.method = mp,
		.const_method = mp + 0x100,
		.modifiers = 1,
		.n_lines = n_lines,
	};

	w_begin(w, &m, sizeof(m));
	w_str(w, klass);
	w_str(w, name);
	w_str(w, sig);
	w_str(w, src);
	w_pad(w, 4);
	w_put(w, lines, (size_t)n_lines * sizeof(*lines));
	w_end(w);
}

struct tpc {
	uint32_t off, depth;
	struct cm_frame f[4];
};

static void add_code(struct mapw *w, uint64_t t, uint64_t start, uint64_t end,
		     uint64_t mp, int level, int frame, uint32_t n_pool,
		     const uint64_t *pool, uint32_t n_pcs,
		     const struct tpc *pcs)
{
	struct cm_code c = {
		.h = rh(CM_REC_CODE, t),
		.start = start,
		.end = end,
		.blob = start - 0x80,
		.method = mp,
		.verified_entry = start + 0x20 < end ? start + 0x20 : 0,
		.kind = CM_CODE_NMETHOD,
		.comp_level = level,
		.frame_size = frame,
		.frame_complete = end - start > 0x14 ? 0x14 : -1,
		.n_pcs = n_pcs,
		.n_methods = n_pool,
	};

	w_begin(w, &c, sizeof(c));
	w_put(w, pool, (size_t)n_pool * 8);
	for (uint32_t i = 0; i < n_pcs; i++) {
		struct cm_pcdesc d = { pcs[i].off, pcs[i].depth };

		w_put(w, &d, sizeof(d));
		w_put(w, pcs[i].f, (size_t)pcs[i].depth * sizeof(struct cm_frame));
	}
	w_end(w);
}

static void add_unload(struct mapw *w, uint64_t t, uint64_t start, uint64_t mp)
{
	struct cm_unload u = { rh(CM_REC_UNLOAD, t), start, mp };

	w_begin(w, &u, sizeof(u));
	w_end(w);
}

static void add_stub(struct mapw *w, uint64_t t, uint64_t start, uint64_t end,
		     uint32_t kind, int frame, const char *name)
{
	struct cm_stub s = {
		.h = rh(CM_REC_STUB, t),
		.start = start,
		.end = end,
		.kind = kind,
		.frame_size = frame,
		.frame_complete = -1,
	};

	w_begin(w, &s, sizeof(s));
	w_str(w, name);
	w_end(w);
}

static void add_thread(struct mapw *w, uint64_t t, uint32_t tid, uint64_t jt,
		       uint32_t flags, const char *name)
{
	struct cm_thread th = { rh(CM_REC_THREAD, t), jt, tid, flags };

	w_begin(w, &th, sizeof(th));
	w_str(w, name);
	w_end(w);
}

#pragma GCC diagnostic pop

#endif /* ASGST_TEST_CODEMAP_MAPW_H */
