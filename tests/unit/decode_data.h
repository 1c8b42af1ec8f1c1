/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Loader of the decoder's captured data (tests/data/decode/, see its
 * README): a gzipped file of raw sample records, each as u32 length, u32
 * pad, the record, padding to 8; and the JVM's gzipped code map, unpacked
 * to a temporary file and opened with the real reader. Shared by
 * tests/unit/test_decode.c, tests/bench/bench_decode.c and
 * tests/fuzz/fuzz_decode.c.
 */
#ifndef DECODE_DATA_H
#define DECODE_DATA_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <zlib.h>

#include "jvm/codemap.h"
#include "capture/sample.h"
#include "trace.h"
#include "decode/asgst.h"

struct dd_rec {
	uint64_t *data;		/* 8-byte aligned copy */
	uint32_t len;
	struct sample s;
};

struct dd_set {
	struct dd_rec *recs;
	size_t n;
	struct codemap *cm;
	char map_tmp[600];
};

/* read a whole gzip (or plain) file; NULL on error */
static inline uint8_t *dd_slurp(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;
	int r;

	if (!gz)
		return NULL;
	for (;;) {
		if (n + 65536 > cap) {
			uint8_t *nb = realloc(buf, cap = cap ? cap * 2 : 1 << 20);

			if (!nb) {
				free(buf);
				gzclose(gz);
				return NULL;
			}
			buf = nb;
		}
		r = gzread(gz, buf + n, 65536);
		if (r < 0) {
			free(buf);
			gzclose(gz);
			return NULL;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	gzclose(gz);
	*len = n;
	return buf;
}

/* split a records file into parsed samples (bad ones are skipped) */
static inline int dd_parse_recs(struct dd_set *d, const uint8_t *b, size_t n)
{
	size_t off = 0;

	while (off + 8 <= n) {
		uint32_t l;
		struct dd_rec *r;
		const char *why;
		void *nr;

		memcpy(&l, b + off, 4);
		off += 8;
		if (l > n - off)
			break;
		nr = realloc(d->recs, (d->n + 1) * sizeof(*d->recs));
		if (!nr)
			return -ENOMEM;
		d->recs = nr;
		r = &d->recs[d->n];
		r->data = calloc(1, (l + 7) / 8 * 8 + 8);
		if (!r->data)
			return -ENOMEM;
		memcpy(r->data, b + off, l);
		r->len = l;
		off += (l + 7) / 8 * 8;
		if (sample__parse(r->data, l, &r->s, &why)) {
			free(r->data);
			continue;
		}
		d->n++;
	}
	return 0;
}

static inline void dd_free(struct dd_set *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->recs[i].data);
	free(d->recs);
	if (d->cm)
		codemap__free(d->cm);
	if (d->map_tmp[0])
		unlink(d->map_tmp);
	memset(d, 0, sizeof(*d));
}

/* open a (gzipped) code map through a temporary plain copy */
static inline int dd_open_map(struct dd_set *d, const char *map_path,
			      char *err, size_t errlen)
{
	uint8_t *b;
	size_t n;
	int fd, r;

	b = dd_slurp(map_path, &n);
	if (!b) {
		snprintf(err, errlen, "cannot read %.200s", map_path);
		return -ENOENT;
	}
	snprintf(d->map_tmp, sizeof(d->map_tmp), "/tmp/asgst-dd-XXXXXX");
	fd = mkstemp(d->map_tmp);
	if (fd < 0 || write(fd, b, n) != (ssize_t)n) {
		free(b);
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "cannot write a temporary map");
		return -EIO;
	}
	close(fd);
	free(b);
	r = codemap__open(&d->cm, "/", d->map_tmp, err, errlen);
	if (r)
		return r;
	r = codemap__update(d->cm);
	if (r) {
		snprintf(err, errlen, "%s", codemap__error(d->cm));
		return r;
	}
	return 0;
}

/* load DIR/NAME.rec.gz and DIR/NAME.map.gz */
static inline int dd_load(struct dd_set *d, const char *dir, const char *name,
			  char *err, size_t errlen)
{
	char path[512];
	uint8_t *b;
	size_t n;
	int r;

	memset(d, 0, sizeof(*d));
	snprintf(path, sizeof(path), "%s/%s.rec.gz", dir, name);
	b = dd_slurp(path, &n);
	if (!b) {
		snprintf(err, errlen, "cannot read %.200s", path);
		return -ENOENT;
	}
	r = dd_parse_recs(d, b, n);
	free(b);
	if (r)
		return r;
	snprintf(path, sizeof(path), "%s/%s.map.gz", dir, name);
	return dd_open_map(d, path, err, errlen);
}

/*
 * DIR/<name>.syms: the load address of a workload's library in the
 * captured JVM ("base 0x...") and its functions (nm -S: offset size
 * name), to name the C frames offline.
 */
struct dd_syms {
	uint64_t lo[32], hi[32];
	char name[32][40];
	int n;
	uint64_t base;
};

static inline int dd_load_syms(const char *dir, const char *name,
			       struct dd_syms *s)
{
	char path[256], line[256];
	FILE *f;

	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "%s/%s.syms", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && s->n < 32) {
		unsigned long long a, sz;
		char nm[40];

		if (sscanf(line, "base %llx", &a) == 1)
			s->base = a;
		else if (sscanf(line, "%llx %llx %39s", &a, &sz, nm) == 3) {
			s->lo[s->n] = a;
			s->hi[s->n] = a + sz;
			snprintf(s->name[s->n], sizeof(s->name[0]), "%s", nm);
			s->n++;
		}
	}
	fclose(f);
	return s->base && s->n ? 0 : -1;
}

/* the function holding pc: a return pc (ret: pc - 1 is in the call) or a
 * sampled one; NULL if none */
static inline const char *dd_sym_of(const struct dd_syms *s, uint64_t pc,
				     bool ret)
{
	uint64_t p = ret ? pc - 1 : pc;

	for (int i = 0; i < s->n; i++)
		if (p >= s->base + s->lo[i] && p < s->base + s->hi[i])
			return s->name[i];
	return NULL;
}

/* name the trace's unnamed C frames (return pcs) from s */
static inline void dd_name_c_frames(const struct dd_syms *s, struct trace *t)
{
	for (uint32_t i = 0; i < t->nframes; i++)
		if (t->frames[i].type == FRAME_NON_JAVA && !t->frames[i].symbol)
			t->frames[i].symbol = dd_sym_of(s, t->frames[i].pc, true);
}

/*
 * The kind of JVM-generated code a sample of StubKinds
 * (tests/workloads/StubKinds.java) shows, from its decoded frames: at the
 * top (a stub, an adapter, a method handle intrinsic, a compiled frame
 * in its prologue or epilogue) or, when the top is VM or libc code, the
 * stub it was entered from (runtime stubs, deoptimization) or the gap
 * (entered from Java without frames to follow). The capture tool picks
 * samples by it and tests/unit/test_decode_stubs.c checks them.
 */
enum dd_kind {
	DD_NONE = 0,
	DD_ARRAYCOPY,		/* StubRoutines arraycopy at the top */
	DD_STUBROUTINE,		/* other StubRoutines (CRC32, libm) */
	DD_RUNTIME1,		/* a C1 Runtime1 stub at the top */
	DD_RUNTIME1_VM,		/* VM code called from a Runtime1 stub */
	DD_GC_BARRIER,		/* a GC barrier stub at the top */
	DD_OPTO_VM,		/* VM code called from a C2 runtime stub */
	DD_ADAPTER,		/* i2c/c2i adapter at the top */
	DD_VTABLE,		/* vtable/itable stub at the top */
	DD_MH_INTRINSIC,	/* MethodHandle invokeBasic/linkTo* at the top */
	DD_DEOPT,		/* VM code called from the deopt/trap blob */
	DD_SAFEPOINT,		/* the safepoint blob at the top */
	DD_PROLOGUE,		/* compiled top frame before frame_complete */
	DD_EPILOGUE,		/* compiled top frame whose frame is popped */
	DD_VM_GAP,		/* VM/libc code entered from Java: a gap */
	DD_NKINDS,
};

static inline const char *dd_kind_name(enum dd_kind k)
{
	static const char *const names[DD_NKINDS] = {
		"none", "arraycopy", "stubroutine", "runtime1", "runtime1_vm",
		"gc_barrier", "opto_vm", "adapter", "vtable", "mh_intrinsic",
		"deopt", "safepoint", "prologue", "epilogue", "vm_gap",
	};

	return k < DD_NKINDS ? names[k] : "?";
}

static inline const struct codemap_blob *dd_stub(const struct codemap *cm,
						 const ASGST_CallFrame *f,
						 uint64_t t)
{
	const struct codemap_blob *b;
	uint64_t pc;

	if (f->type != ASGST_FRAME_NON_JAVA)
		return NULL;
	pc = (uint64_t)(uintptr_t)f->non_java_frame.pc;
	b = pc ? codemap__find(cm, pc, t) : NULL;
	return b && b->type == CODEMAP_BLOB_STUB && b->name ? b : NULL;
}

static inline bool dd_has(const char *s, const char *sub)
{
	return s && strstr(s, sub);
}

static inline enum dd_kind dd_stub_kind(const struct codemap_blob *b)
{
	const char *n = b->name;

	if (dd_has(n, "arraycopy"))
		return DD_ARRAYCOPY;
	if (dd_has(n, "barrier") && !dd_has(n, "method_entry"))
		return DD_GC_BARRIER;
	if (dd_has(n, "Runtime1") || dd_has(n, "C1 Runtime"))
		return DD_RUNTIME1;
	if (dd_has(n, "_Java") || dd_has(n, "C2 Runtime"))
		return DD_OPTO_VM;
	if (dd_has(n, "Deoptimization") || dd_has(n, "UncommonTrap"))
		return DD_DEOPT;
	if (dd_has(n, "SafepointBlob"))
		return DD_SAFEPOINT;
	if (b->kind == CM_STUB_ADAPTER)
		return DD_ADAPTER;
	if (dd_has(n, "vtable") || dd_has(n, "itable"))
		return DD_VTABLE;
	if (b->kind == CM_STUB_OTHER)
		return DD_STUBROUTINE;
	return DD_NONE;
}

/* the words at sp[i] is a call site of compiled code */
static inline bool dd_callsite_at(const struct codemap *cm,
				  const struct sample *s, uint32_t word)
{
	const struct codemap_blob *b;
	const struct codemap_pcdesc *pd;
	uint64_t v;

	if ((word + 1) * 8 > s->hdr->window_len)
		return false;
	memcpy(&v, (const uint8_t *)s->window + word * 8, 8);
	b = codemap__find(cm, v, s->hdr->ktime_ns);
	if (!b || b->type != CODEMAP_BLOB_CODE)
		return false;
	pd = codemap_blob__pcdesc(b, v);
	return pd && b->start + pd->pc_off == v;
}

/* *what: the stub's (or intrinsic's) name, NULL for the other kinds */
static inline enum dd_kind dd_kind_of(const struct codemap *cm,
				      const struct sample *s,
				      const ASGST_CallFrame *fr, int n,
				      const char **what)
{
	uint64_t t = s->hdr->ktime_ns;
	const struct codemap_blob *b;
	const struct codemap_method *m;
	enum dd_kind k;

	*what = NULL;
	if (n <= 0)
		return DD_NONE;
	b = dd_stub(cm, &fr[0], t);
	if (b) {
		*what = b->name;
		k = dd_stub_kind(b);
		return k == DD_OPTO_VM || k == DD_DEOPT ? DD_NONE : k;
	}
	if (fr[0].type == ASGST_FRAME_NON_JAVA) {
		/* VM or libc code at the top: what called it */
		for (int i = 1; i < n; i++) {
			if (fr[i].type != ASGST_FRAME_NON_JAVA)
				break;
			if (!fr[i].non_java_frame.pc)
				return DD_VM_GAP;
			b = dd_stub(cm, &fr[i], t);
			if (!b)
				continue;
			k = dd_stub_kind(b);
			*what = b->name;
			if (k == DD_RUNTIME1)
				return DD_RUNTIME1_VM;
			return k == DD_OPTO_VM || k == DD_DEOPT ? k : DD_NONE;
		}
		return DD_NONE;
	}
	m = codemap__method(cm, fr[0].java_frame.method);
	if (m && !strcmp(m->klass, "java.lang.invoke.MethodHandle") &&
	    (!strcmp(m->name, "invokeBasic") || !strncmp(m->name, "linkTo", 6))) {
		*what = m->name;
		return DD_MH_INTRINSIC;
	}
	b = codemap__find(cm, s->hdr->ip, t);
	if (!b || b->type != CODEMAP_BLOB_CODE || b->kind == CM_CODE_NATIVE ||
	    b->frame_size <= 2 || fr[0].type != ASGST_FRAME_JAVA)
		return DD_NONE;
	if (b->frame_complete >= 0 &&
	    s->hdr->ip < b->start + (uint64_t)b->frame_complete)
		return DD_PROLOGUE;
	/* the frame is gone: the return pc at sp[0] or sp[1], not at the
	 * end of the frame */
	if (!dd_callsite_at(cm, s, (uint32_t)b->frame_size - 1) &&
	    (dd_callsite_at(cm, s, 0) || dd_callsite_at(cm, s, 1)))
		return DD_EPILOGUE;
	return DD_NONE;
}

#endif /* DECODE_DATA_H */
