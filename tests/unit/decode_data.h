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

#endif /* DECODE_DATA_H */
