// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof output: a gzipped perftools.profiles.Profile (profile.proto, as
 * read by `go tool pprof`, Pyroscope and Grafana). See docs/formats.md.
 *
 * Encoded by hand rather than with protobuf-c: the writer only needs
 * varints and length-delimited fields of a dozen message types, so a
 * hundred lines replace a build-time protoc-c step, a vendored .proto, a
 * generated file and a runtime library; and it streams each message into
 * one buffer instead of building a tree of allocated structs per location.
 * zlib (already linked) does the gzip wrapper.
 *
 * Shape: one Sample per aggregated stack, location ids leaf first. A
 * compiled Java frame and the frames inlined into it (ASGST reports them
 * as JAVA_INLINED frames just before it, callee first) become ONE Location
 * whose Lines run callee first, caller last, as profile.proto wants; one
 * Location per distinct (mapping, address, inline chain), so every frame
 * of a stack is in its Sample, in order.
 */
#include <errno.h>
#include <unistd.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "symbols/elf_symbols.h"
#include <linux/types.h>
#include "sampler.h"
#include "profile/profile.h"
#include "util/array.h"
#include "util/u64map.h"
#include "util/safe_open.h"
#include "util/strtab.h"
#include "trace.h"
#include "output/evfamily.h"
#include "output/writers.h"

/* ---- protobuf encoding ------------------------------------------------ */

struct pb {
	uint8_t *buf;
	size_t len, cap;
	bool oom;
};

static void pb_reserve(struct pb *b, size_t n)
{
	size_t nc;
	uint8_t *nb;

	if (b->oom || b->len + n <= b->cap)
		return;
	nc = b->cap ? b->cap : 256;
	while (nc < b->len + n)
		nc *= 2;
	nb = realloc(b->buf, nc);
	if (!nb) {
		b->oom = true;
		return;
	}
	b->buf = nb;
	b->cap = nc;
}

static void pb_raw(struct pb *b, const void *p, size_t n)
{
	pb_reserve(b, n);
	if (b->oom)
		return;
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n] = v & 0x7f;
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	pb_raw(b, tmp, n);
}

enum { WT_VARINT = 0, WT_LEN = 2 };

/* an int64/uint64/bool field; zero is the default and is left out */
static void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3 | WT_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, unsigned field, const void *p, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | WT_LEN);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

/* append sub as embedded message `field` of b, then empty sub for reuse */
static void pb_msg(struct pb *b, unsigned field, struct pb *sub)
{
	if (sub->oom)
		b->oom = true;
	pb_bytes(b, field, sub->buf, sub->len);
	sub->len = 0;
}

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12, PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4, MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

/* ---- id maps: interned pointer -> id, over the shared u64map --------- */

static uint32_t pmap_get(const struct u64map *m, const void *k)
{
	return (uint32_t)u64map__get(m, (uint64_t)(uintptr_t)k);
}

static int pmap_put(struct u64map *m, const void *k, uint32_t v)
{
	return u64map__put(m, (uint64_t)(uintptr_t)k, v);
}

/* ---- the writer's state ----------------------------------------------- */

struct mapping {
	uint32_t filename;	/* string index */
	uint32_t build_id;	/* string index of the hex build-id, 0: none */
	uint64_t limit;		/* highest address seen + 1 */
	bool has_functions;	/* every location in it has a real symbol */
};

struct pp {
	const struct profile *p;
	struct strtab *st;	/* strings and lookup keys */
	struct u64map strs;	/* string -> index + 1 */
	const char **strv;	/* index -> string */
	size_t nstrs, cap_strs;
	struct u64map funcs;	/* key -> function id */
	struct u64map locs;	/* key -> location id */
	struct u64map maps;	/* module -> mapping id */
	struct mapping *mapv;	/* id - 1 -> mapping */
	size_t nmaps, cap_maps;
	uint32_t nfuncs, nlocs;
	struct pb out;		/* the Profile message */
	struct pb m1, m2;	/* scratch for nested messages */
	bool oom;
	uint32_t *fids;		/* scratch: function ids of a Java run */
	struct pb jkey;		/* scratch: key of a Java location */
	char key[8192];		/* scratch: keys of functions, native locations */
	uint64_t period;	/* ns a cpu sample stands for */
	bool time;		/* samples and cpu ns are values */
	bool offcpu;		/* off-CPU time is a value of its own */
	bool alloc;		/* alloc_objects, alloc_space */
	bool lock;		/* contentions, delay */
	/* write_pprof_select(): its stacks, one event, no labels */
	const struct pprof_select *sel;
	uint32_t *locids;	/* scratch: location ids of a stack */
	struct pb sample;	/* scratch: a Sample message */
	struct pb ids, vals;	/* scratch: its location ids, its values */
};

/*
 * proto3 string fields must be UTF-8 (protobuf's C++ parser rejects the
 * whole message otherwise): interned copy with bad bytes -> U+FFFD
 */
static const char *intern_utf8(struct strtab *st, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i, o = 0, l;
	const char *r;
	char *buf;

	for (i = 0; i < n; i += l)
		if (!(l = utf8__seq_len(u + i, n - i)))
			break;
	if (i >= n)
		return strtab__intern(st, s);
	buf = malloc(n * 3 + 1);
	if (!buf)
		return NULL;
	for (i = 0; i < n; i += l) {
		l = utf8__seq_len(u + i, n - i);
		if (l) {
			memcpy(buf + o, s + i, l);
			o += l;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			l = 1;
		}
	}
	r = strtab__intern_n(st, buf, o);
	free(buf);
	return r;
}

/* string-table index of s (interned into pp->st first) */
static uint32_t pp_str(struct pp *pp, const char *s)
{
	const char *is;
	uint32_t idx;

	if (!s || !*s)
		return 0;
	is = intern_utf8(pp->st, s);
	if (!is) {
		pp->oom = true;
		return 0;
	}
	idx = pmap_get(&pp->strs, is);
	if (idx)
		return idx - 1;
	if (ARRAY_GROW(&pp->strv, &pp->cap_strs, pp->nstrs + 1)) {
		pp->oom = true;
		return 0;
	}
	pp->strv[pp->nstrs] = is;
	if (pmap_put(&pp->strs, is, pp->nstrs + 1)) {
		pp->oom = true;
		return 0;
	}
	return pp->nstrs++;
}

static const char *pp_key(struct pp *pp, size_t len)
{
	const char *k = strtab__intern_n(pp->st, pp->key,
					 len < sizeof(pp->key) ? len : sizeof(pp->key) - 1);

	if (!k)
		pp->oom = true;
	return k;
}

static uint32_t pp_function(struct pp *pp, const char *name,
			    const char *system_name, const char *filename)
{
	uint32_t n = pp_str(pp, name), s = pp_str(pp, system_name);
	uint32_t f = pp_str(pp, filename), id;
	const char *k;

	k = pp_key(pp, snprintf(pp->key, sizeof(pp->key), "F%u/%u/%u", n, s, f));
	if (!k)
		return 0;
	id = pmap_get(&pp->funcs, k);
	if (id)
		return id;
	id = ++pp->nfuncs;
	if (pmap_put(&pp->funcs, k, id))
		pp->oom = true;
	pb_uint(&pp->m1, FUNCTION_ID, id);
	pb_uint(&pp->m1, FUNCTION_NAME, n);
	pb_uint(&pp->m1, FUNCTION_SYSTEM_NAME, s);
	pb_uint(&pp->m1, FUNCTION_FILENAME, f);
	pb_msg(&pp->out, PROFILE_FUNCTION, &pp->m1);
	return id;
}

/*
 * The module's GNU build-id as hex, as the symbolizer read it from the file
 * the processes mapped (through their own roots; never a host file looked
 * up by a path a process chose); 0 when unknown.
 */
static uint32_t module_build_id(struct pp *pp, const char *module)
{
	const char *hex = profile__build_id(pp->p, module);

	return hex ? pp_str(pp, hex) : 0;
}

static uint32_t pp_mapping(struct pp *pp, const char *module)
{
	const char *is = strtab__intern(pp->st, module);
	uint32_t id;

	if (!is) {
		pp->oom = true;
		return 0;
	}
	id = pmap_get(&pp->maps, is);
	if (id)
		return id;
	if (ARRAY_GROW(&pp->mapv, &pp->cap_maps, pp->nmaps + 1)) {
		pp->oom = true;
		return 0;
	}
	pp->mapv[pp->nmaps] = (struct mapping){ pp_str(pp, is),
						module_build_id(pp, module), 0,
						true };
	id = ++pp->nmaps;
	if (pmap_put(&pp->maps, is, id))
		pp->oom = true;
	return id;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

#define KERNEL_MAPPING "[kernel.kallsyms]"

/* location of a native, kernel or unknown frame */
static uint32_t pp_location_pc(struct pp *pp, const struct frame *f)
{
	char name[512];
	const char *sym = f->symbol && *f->symbol ? f->symbol : NULL;
	const char *mod = NULL;
	uint64_t addr = f->pc;
	uint32_t id, map = 0, fn;
	const char *k;

	if (f->type == FRAME_KERNEL) {
		mod = KERNEL_MAPPING;
		if (!sym)
			snprintf(name, sizeof(name), "0x%" PRIx64, f->pc);
	} else if (f->type == FRAME_NON_JAVA) {
		mod = f->module && *f->module ? f->module : NULL;
		/* module-relative, so the same code in two processes is one
		 * location */
		if (mod)
			addr = f->offset;
		if (!sym && mod)
			snprintf(name, sizeof(name), "%s+0x%" PRIx64,
				 base_name(mod), f->offset);
		else if (!sym)
			snprintf(name, sizeof(name), "0x%" PRIx64, f->pc);
	} else if (f->type == FRAME_CLASS) {
		/* what was allocated, or whose monitor: a function by the
		 * class's name, no address */
		sym = f->klass && *f->klass ? f->klass : "[unknown class]";
		addr = 0;
	} else {
		snprintf(name, sizeof(name), f->reason && *f->reason ?
			 "[unknown: %s]" : "[unknown]", f->reason);
		sym = name;
	}
	if (!sym)
		sym = name;

	k = pp_key(pp, snprintf(pp->key, sizeof(pp->key), "L%d/%p/%" PRIx64 "/%p",
				f->type, (const void *)mod, addr,
				(const void *)strtab__intern(pp->st, sym)));
	if (!k)
		return 0;
	id = pmap_get(&pp->locs, k);
	if (id)
		return id;
	if (mod) {
		map = pp_mapping(pp, mod);
		if (map) {
			struct mapping *m = &pp->mapv[map - 1];

			if (addr + 1 > m->limit)
				m->limit = addr + 1;
			if (!f->symbol || !*f->symbol)
				m->has_functions = false;
		}
	}
	fn = pp_function(pp, sym, sym, NULL);
	id = ++pp->nlocs;
	if (pmap_put(&pp->locs, k, id))
		pp->oom = true;
	pb_uint(&pp->m1, LOCATION_ID, id);
	pb_uint(&pp->m1, LOCATION_MAPPING_ID, map);
	pb_uint(&pp->m1, LOCATION_ADDRESS, addr);
	pb_uint(&pp->m2, LINE_FUNCTION_ID, fn);
	pb_msg(&pp->m1, LOCATION_LINE, &pp->m2);
	pb_msg(&pp->out, PROFILE_LOCATION, &pp->m1);
	return id;
}

/*
 * The key of a Location of an inline chain, fr[0..n) with their function
 * ids in pp->fids: head (what tells the code apart: address, mapping)
 * then (function, line) per frame, in a buffer of its own (pp_function()
 * reuses pp->key). Interned; NULL with pp->oom set when out of memory.
 */
static const char *pp_chain_key(struct pp *pp, const char *head,
				const struct frame *fr, uint32_t n)
{
	char tmp[32];
	const char *k;

	pp->jkey.len = 0;
	pb_raw(&pp->jkey, head, strlen(head));
	for (uint32_t i = 0; i < n; i++)
		pb_raw(&pp->jkey, tmp, snprintf(tmp, sizeof(tmp), "/%u:%d",
						pp->fids[i],
						fr[i].line > 0 ? fr[i].line : 0));
	k = pp->jkey.oom ? NULL :
	    strtab__intern_n(pp->st, (const char *)pp->jkey.buf, pp->jkey.len);
	if (!k)
		pp->oom = true;
	return k;
}

/* the Location in pp->m1 gets a Line per frame of the chain, callee
 * first, and goes out */
static void pp_chain_lines(struct pp *pp, const struct frame *fr, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		pb_uint(&pp->m2, LINE_FUNCTION_ID, pp->fids[i]);
		pb_uint(&pp->m2, LINE_LINE, fr[i].line > 0 ? (uint64_t)fr[i].line : 0);
		pb_msg(&pp->m1, LOCATION_LINE, &pp->m2);
	}
	pb_msg(&pp->out, PROFILE_LOCATION, &pp->m1);
}

/*
 * frames[0..n): native functions the compiler inlined (FRAME_F_INLINED,
 * from DWARF) then the frame they are inlined into, all at one pc: ONE
 * Location whose lines run callee first, as for compiled Java frames, in
 * the module's mapping at the file offset. Functions carry the source
 * file. The key is the mapping, the address and every (function, line).
 */
static uint32_t pp_location_native(struct pp *pp, const struct frame *fr,
				   uint32_t n)
{
	const struct frame *out = &fr[n - 1];
	const char *mod = out->module && *out->module ? out->module : NULL;
	uint64_t addr = mod ? out->offset : out->pc;
	char tmp[64], name[512];
	uint32_t id, map = 0;
	bool named = true;
	const char *k;

	for (uint32_t i = 0; i < n; i++) {
		const char *sym = fr[i].symbol && *fr[i].symbol ?
				  fr[i].symbol : NULL;

		if (!sym) {
			named = false;
			if (mod)
				snprintf(name, sizeof(name), "%s+0x%" PRIx64,
					 base_name(mod), out->offset);
			else
				snprintf(name, sizeof(name), "0x%" PRIx64,
					 out->pc);
			sym = name;
		}
		pp->fids[i] = pp_function(pp, sym, sym, fr[i].source);
	}
	snprintf(tmp, sizeof(tmp), "N%p/%" PRIx64,
		 (const void *)(mod ? strtab__intern(pp->st, mod) : NULL), addr);
	k = pp_chain_key(pp, tmp, fr, n);
	if (!k)
		return 0;
	id = pmap_get(&pp->locs, k);
	if (id)
		return id;
	if (mod) {
		map = pp_mapping(pp, mod);
		if (map) {
			struct mapping *m = &pp->mapv[map - 1];

			if (addr + 1 > m->limit)
				m->limit = addr + 1;
			if (!named)
				m->has_functions = false;
		}
	}
	id = ++pp->nlocs;
	if (pmap_put(&pp->locs, k, id))
		pp->oom = true;
	pb_uint(&pp->m1, LOCATION_ID, id);
	pb_uint(&pp->m1, LOCATION_MAPPING_ID, map);
	pb_uint(&pp->m1, LOCATION_ADDRESS, addr);
	pp_chain_lines(pp, fr, n);
	return id;
}

/* function id of a Java frame: pkg.Class.method, + signature as system name */
static uint32_t pp_java_function(struct pp *pp, const struct frame *f)
{
	char name[2048], sys[4096];
	const char *m = f->method && *f->method ? f->method :
			f->symbol && *f->symbol ? f->symbol : "[unknown]";

	if (f->klass && *f->klass)
		snprintf(name, sizeof(name), "%s.%s", f->klass, m);
	else
		snprintf(name, sizeof(name), "%s", m);
	snprintf(sys, sizeof(sys), "%s%s", name, f->signature ? f->signature : "");
	return pp_function(pp, name, sys, f->source);
}

/*
 * frames[0..n): JAVA_INLINED callees then the frame they are inlined into.
 * The location's key is its whole inline chain, (function, line) per frame,
 * built in a buffer of its own: pp_function() reuses pp->key, and any key
 * cut short would let two chains that share their outermost method (the
 * JIT inlined different runs in different samples) share one Location, and
 * so one Line list. A compiled frame's address is the pc of the PcDesc
 * that names its bci in the nmethod (code_pc, shared by its inlined
 * frames); interpreted frames have none (0). There is no mapping (code
 * in the code cache belongs to no file): address and chain together tell
 * Locations apart.
 */
static uint32_t pp_location_java(struct pp *pp, const struct frame *fr, uint32_t n)
{
	char tmp[32];
	const char *k;
	uint32_t id;

	for (uint32_t i = 0; i < n; i++)
		pp->fids[i] = pp_java_function(pp, &fr[i]);
	snprintf(tmp, sizeof(tmp), "J%" PRIx64, fr[n - 1].code_pc);
	k = pp_chain_key(pp, tmp, fr, n);
	if (!k)
		return 0;
	id = pmap_get(&pp->locs, k);
	if (id)
		return id;
	id = ++pp->nlocs;
	if (pmap_put(&pp->locs, k, id))
		pp->oom = true;
	pb_uint(&pp->m1, LOCATION_ID, id);
	if (fr[n - 1].code_pc)
		pb_uint(&pp->m1, LOCATION_ADDRESS, fr[n - 1].code_pc);
	pp_chain_lines(pp, fr, n);
	return id;
}

/*
 * A Python frame: a Function by its qualified name and file, a Location
 * of its own per (function, line), no mapping or address (a code
 * object's address means nothing outside its process).
 */
static uint32_t pp_location_python(struct pp *pp, const struct frame *f)
{
	const char *name = f->method && *f->method ? f->method : "[unknown]";
	const char *k;
	uint32_t id;

	pp->fids[0] = pp_function(pp, name, name, f->source);
	k = pp_chain_key(pp, "P", f, 1);
	if (!k)
		return 0;
	id = pmap_get(&pp->locs, k);
	if (id)
		return id;
	id = ++pp->nlocs;
	if (pmap_put(&pp->locs, k, id))
		pp->oom = true;
	pb_uint(&pp->m1, LOCATION_ID, id);
	pp_chain_lines(pp, f, 1);
	return id;
}

static void pp_value_type(struct pp *pp, unsigned field, const char *type,
			  const char *unit)
{
	pb_uint(&pp->m1, VALUETYPE_TYPE, pp_str(pp, type));
	pb_uint(&pp->m1, VALUETYPE_UNIT, pp_str(pp, unit));
	pb_msg(&pp->out, field, &pp->m1);
}

static void pp_label(struct pp *pp, struct pb *sample, const char *key,
		     const char *str, int64_t num)
{
	pb_uint(&pp->m2, LABEL_KEY, pp_str(pp, key));
	if (str)
		pb_uint(&pp->m2, LABEL_STR, pp_str(pp, str));
	else
		pb_uint(&pp->m2, LABEL_NUM, (uint64_t)num);
	pb_msg(sample, SAMPLE_LABEL, &pp->m2);
}

static int gzip_out(const uint8_t *buf, size_t len, FILE *f)
{
	uint8_t chunk[64 * 1024];
	z_stream zs = { 0 };
	int zr, err = 0;

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = (uint8_t *)buf;
	zs.avail_in = len;	/* len < 4 GiB: a profile is far smaller */
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zr = deflate(&zs, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(chunk, 1, sizeof(chunk) - zs.avail_out, f) !=
		    sizeof(chunk) - zs.avail_out) {
			err = -(errno ? errno : EIO);
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&zs);
	return err;
}

/* the writer's state for p, string_table[0] ""; 0 or -ENOMEM */
static int pp__init(struct pp *pp, const struct profile *p)
{
	const struct profile_meta *meta = profile__meta_const(p);
	unsigned fams;

	memset(pp, 0, sizeof(*pp));
	pp->p = p;
	pp->period = meta->frequency_hz ?
		     1000000000ull / meta->frequency_hz : 0;
	fams = ev_families(p);
	/* a recording of JVM events alone has no time to show */
	pp->time = fams & EVF_BIT(EVF_TIME);
	pp->offcpu = pp->time && meta->events & ASGST_EVMASK_OFFCPU;
	pp->alloc = fams & EVF_BIT(EVF_ALLOC);
	pp->lock = fams & EVF_BIT(EVF_LOCK);
	pp->st = strtab__new();
	/* profile__add() keeps at most TRACE_MAX_FRAMES frames a stack */
	pp->locids = malloc(TRACE_MAX_FRAMES * sizeof(*pp->locids));
	pp->fids = malloc(TRACE_MAX_FRAMES * sizeof(*pp->fids));
	if (!pp->st || !pp->locids || !pp->fids ||
	    ARRAY_GROW(&pp->strv, &pp->cap_strs, 1024))
		return -ENOMEM;
	pp->strv[pp->nstrs++] = "";	/* string_table[0] must be "" */
	return 0;
}

static void pp__free(struct pp *pp)
{
	free(pp->locids);
	free(pp->sample.buf);
	free(pp->ids.buf);
	free(pp->vals.buf);
	free(pp->out.buf);
	free(pp->m1.buf);
	free(pp->m2.buf);
	free(pp->jkey.buf);
	free(pp->fids);
	free(pp->strv);
	free(pp->mapv);
	u64map__free(&pp->strs);
	u64map__free(&pp->funcs);
	u64map__free(&pp->locs);
	u64map__free(&pp->maps);
	strtab__free(pp->st);
}

/*
 * Sample and period types, period, duration, default type, comment. The
 * value types are those of every event recorded, by the names the Go
 * tools know (alloc_space, delay...): a sample has 0 in those of events
 * not its own. The default is the first event's weight: cpu, offcpu,
 * alloc_space, delay.
 */
static void pp_header(struct pp *pp)
{
	const struct profile_meta *meta = profile__meta_const(pp->p);
	const char *def;
	char c[256];
	int n;

	if (pp->time) {
		pp_value_type(pp, PROFILE_SAMPLE_TYPE, "samples", "count");
		pp_value_type(pp, PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
	}
	/* off-CPU time as a value of its own: never summed with cpu time */
	if (pp->offcpu)
		pp_value_type(pp, PROFILE_SAMPLE_TYPE, "offcpu", "nanoseconds");
	if (pp->alloc) {
		pp_value_type(pp, PROFILE_SAMPLE_TYPE, "alloc_objects",
			      "count");
		pp_value_type(pp, PROFILE_SAMPLE_TYPE, "alloc_space", "bytes");
	}
	if (pp->lock) {
		pp_value_type(pp, PROFILE_SAMPLE_TYPE, "contentions", "count");
		pp_value_type(pp, PROFILE_SAMPLE_TYPE, "delay", "nanoseconds");
	}
	if (pp->time) {
		pp_value_type(pp, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
		pb_uint(&pp->out, PROFILE_PERIOD, pp->period);
	} else if (pp->alloc) {
		pp_value_type(pp, PROFILE_PERIOD_TYPE, "space", "bytes");
		pb_uint(&pp->out, PROFILE_PERIOD, meta->alloc_interval);
	} else {
		pp_value_type(pp, PROFILE_PERIOD_TYPE, "contentions", "count");
		pb_uint(&pp->out, PROFILE_PERIOD, 1);
	}
	pb_uint(&pp->out, PROFILE_DURATION_NANOS, meta->duration_ns);
	if (pp->time)
		def = pp->offcpu && !(meta->events & ASGST_EVMASK_CPU) ?
		      "offcpu" : "cpu";
	else
		def = pp->alloc ? "alloc_space" : "delay";
	pb_uint(&pp->out, PROFILE_DEFAULT_SAMPLE_TYPE, pp_str(pp, def));
	n = snprintf(c, sizeof(c), "asgst-bpf: %" PRIu64 " samples, %" PRIu64
		     " lost, %u Hz", meta->samples, meta->lost,
		     meta->frequency_hz);
	if (meta->events & ASGST_EVMASK_JVM)
		snprintf(c + n, sizeof(c) - n, "; %" PRIu64 " alloc, %" PRIu64
			 " lock events, %" PRIu64 " lost, %" PRIu64
			 " throttled", meta->alloc_events, meta->lock_events,
			 meta->jvm_ev_lost, meta->jvm_ev_throttled);
	pb_uint(&pp->out, PROFILE_COMMENT, pp_str(pp, c));
}

/*
 * write_pprof_select(): one event's value types, named as Pyroscope's
 * ingest maps them to its profile types (recorder/push.c sends the
 * mapping): cpu samples and ns, off-CPU and lock contentions and delay,
 * alloc_objects and alloc_space
 */
static void pp_header_select(struct pp *pp)
{
	const struct profile_meta *meta = profile__meta_const(pp->p);
	const char *def;

	switch (pp->sel->event) {
	case TRACE_EV_CPU:
		pp_value_type(pp, PROFILE_SAMPLE_TYPE, "samples", "count");
		pp_value_type(pp, PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
		pp_value_type(pp, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
		pb_uint(&pp->out, PROFILE_PERIOD, pp->period);
		def = "cpu";
		break;
	case TRACE_EV_ALLOC:
		pp_value_type(pp, PROFILE_SAMPLE_TYPE, "alloc_objects",
			      "count");
		pp_value_type(pp, PROFILE_SAMPLE_TYPE, "alloc_space", "bytes");
		pp_value_type(pp, PROFILE_PERIOD_TYPE, "space", "bytes");
		pb_uint(&pp->out, PROFILE_PERIOD, meta->alloc_interval);
		def = "alloc_space";
		break;
	default:	/* off-CPU, lock */
		pp_value_type(pp, PROFILE_SAMPLE_TYPE, "contentions", "count");
		pp_value_type(pp, PROFILE_SAMPLE_TYPE, "delay", "nanoseconds");
		pp_value_type(pp, PROFILE_PERIOD_TYPE, "contentions", "count");
		pb_uint(&pp->out, PROFILE_PERIOD, 1);
		def = "delay";
		break;
	}
	pb_uint(&pp->out, PROFILE_DURATION_NANOS, meta->duration_ns);
	pb_uint(&pp->out, PROFILE_DEFAULT_SAMPLE_TYPE, pp_str(pp, def));
}

/* the stack's locations, leaf first, into pp->locids; how many */
static uint32_t pp_stack_locations(struct pp *pp, const struct trace *t)
{
	/* never more (profile.c cuts there): pp->locids, pp->fids */
	uint32_t nf = t->nframes < TRACE_MAX_FRAMES ? t->nframes :
		      TRACE_MAX_FRAMES;
	uint32_t nloc = 0;

	for (uint32_t k = 0; k < nf;) {
		const struct frame *fr = &t->frames[k];
		uint32_t n = 1;

		if (fr->type == FRAME_JAVA_INLINED || fr->type == FRAME_JAVA ||
		    fr->type == FRAME_JAVA_NATIVE) {
			/* the inlined run ends at the frame it is inlined
			 * into */
			while (fr[n - 1].type == FRAME_JAVA_INLINED &&
			       k + n < nf &&
			       (fr[n].type == FRAME_JAVA_INLINED ||
				fr[n].type == FRAME_JAVA))
				n++;
			pp->locids[nloc++] = pp_location_java(pp, fr, n);
		} else if (fr->type == FRAME_PYTHON) {
			pp->locids[nloc++] = pp_location_python(pp, fr);
		} else if (fr->type == FRAME_NON_JAVA &&
			   (fr->flags & FRAME_F_INLINED || fr->source ||
			    fr->line > 0)) {
			/* the inlined run ends at the frame it is inlined
			 * into (the first one not inlined, at the same pc) */
			while (fr[n - 1].flags & FRAME_F_INLINED &&
			       k + n < nf && fr[n].type == FRAME_NON_JAVA &&
			       fr[n].pc == fr->pc)
				n++;
			pp->locids[nloc++] = pp_location_native(pp, fr, n);
		} else {
			pp->locids[nloc++] = pp_location_pc(pp, fr);
		}
		k += n;
	}
	return nloc;
}

/* a stack's values in pp_header()'s order, 0 for other events' types */
static void pp_sample_values(struct pp *pp, const struct profile_stack *ps)
{
	struct pb *vals = &pp->vals;
	uint8_t ev = ps->trace.event;
	bool time = ev == TRACE_EV_CPU || ev == TRACE_EV_OFFCPU;

	if (pp->sel) {
		/* the stack is of the selected event */
		pb_varint(vals, ev == TRACE_EV_ALLOC ? ps->alloc_objects :
			  ps->count);
		pb_varint(vals, ev == TRACE_EV_CPU ? ps->count * pp->period :
			  ev == TRACE_EV_ALLOC ? ps->alloc_bytes :
			  ps->weight_ns);
		return;
	}

	if (pp->time) {
		pb_varint(vals, time ? ps->count : 0);
		pb_varint(vals, ev == TRACE_EV_CPU ?
				ps->count * pp->period : 0);
	}
	if (pp->offcpu)
		pb_varint(vals, ev == TRACE_EV_OFFCPU ? ps->weight_ns : 0);
	if (pp->alloc) {
		pb_varint(vals, ev == TRACE_EV_ALLOC ? ps->alloc_objects : 0);
		pb_varint(vals, ev == TRACE_EV_ALLOC ? ps->alloc_bytes : 0);
	}
	if (pp->lock) {
		pb_varint(vals, ev == TRACE_EV_LOCK ? ps->count : 0);
		pb_varint(vals, ev == TRACE_EV_LOCK ? ps->weight_ns : 0);
	}
}

static const char *or_unknown(const char *s)
{
	return s && *s ? s : "[unknown]";
}

/* the thread, process, container and what kind of stack it is */
static void pp_sample_labels(struct pp *pp, const struct trace *t)
{
	struct pb *sample = &pp->sample;

	pp_label(pp, sample, "thread",
		 t->thread && *t->thread ? t->thread : or_unknown(t->comm), 0);
	pp_label(pp, sample, "tid", NULL, t->tid);
	pp_label(pp, sample, "pid", NULL, t->pid);
	pp_label(pp, sample, "comm", or_unknown(t->comm), 0);
	if (t->container_id)
		pp_label(pp, sample, "container_id", t->container_id, 0);
	if (t->pod_uid)
		pp_label(pp, sample, "pod_uid", t->pod_uid, 0);
	pp_label(pp, sample, "kind", trace_kind__name(t->kind), 0);
	if (t->event == TRACE_EV_ALLOC || t->event == TRACE_EV_LOCK)
		pp_label(pp, sample, "event", t->event == TRACE_EV_ALLOC ?
			 "alloc" : "lock", 0);
	if (t->kind == TRACE_KIND_JAVA)
		pp_label(pp, sample, "state", trace_state__name(t->state), 0);
	if (t->flags & TRACE_F_VTHREAD)
		pp_label(pp, sample, "virtual_thread", "true", 0);
	if (t->flags & TRACE_F_PINNED)
		pp_label(pp, sample, "pinned", "true", 0);
	if (t->error)
		pp_label(pp, sample, "error",
			 t->error_name && *t->error_name ? t->error_name :
							   "error", 0);
}

/* one Sample: the stack's locations, its values, its labels */
static void pp_sample(struct pp *pp, const struct profile_stack *ps)
{
	uint32_t nloc = pp_stack_locations(pp, &ps->trace);

	for (uint32_t k = 0; k < nloc; k++)
		pb_varint(&pp->ids, pp->locids[k]);
	pb_bytes(&pp->sample, SAMPLE_LOCATION_ID, pp->ids.buf, pp->ids.len);
	pp_sample_values(pp, ps);
	pb_bytes(&pp->sample, SAMPLE_VALUE, pp->vals.buf, pp->vals.len);
	pp->ids.len = pp->vals.len = 0;
	if (!pp->sel)
		pp_sample_labels(pp, &ps->trace);
	pb_msg(&pp->out, PROFILE_SAMPLE, &pp->sample);
	if (pp->ids.oom || pp->vals.oom)
		pp->oom = true;
}

/* the modules the native locations named */
static void pp_mappings(struct pp *pp)
{
	for (size_t i = 0; i < pp->nmaps; i++) {
		const struct mapping *m = &pp->mapv[i];

		pb_uint(&pp->m1, MAPPING_ID, i + 1);
		pb_uint(&pp->m1, MAPPING_MEMORY_START, 0);
		pb_uint(&pp->m1, MAPPING_MEMORY_LIMIT, m->limit);
		pb_uint(&pp->m1, MAPPING_FILENAME, m->filename);
		if (m->build_id)
			pb_uint(&pp->m1, MAPPING_BUILD_ID, m->build_id);
		pb_uint(&pp->m1, MAPPING_HAS_FUNCTIONS, m->has_functions);
		pb_msg(&pp->out, PROFILE_MAPPING, &pp->m1);
	}
}

static void pp_string_table(struct pp *pp)
{
	for (size_t i = 0; i < pp->nstrs; i++)
		pb_bytes(&pp->out, PROFILE_STRING_TABLE, pp->strv[i],
			 strlen(pp->strv[i]));
}

static bool pp_oom(const struct pp *pp)
{
	return pp->oom || pp->out.oom || pp->m1.oom || pp->m2.oom ||
	       pp->sample.oom;
}

static int pprof_write(const struct profile *p, FILE *f,
		       const struct pprof_select *sel)
{
	struct pp pp;
	int err = -ENOMEM;

	if (pp__init(&pp, p))
		goto cleanup;
	pp.sel = sel;
	if (sel) {
		pp_header_select(&pp);
		for (size_t i = 0; i < sel->n && !pp.oom; i++)
			pp_sample(&pp, profile__stack(p, sel->idx[i]));
	} else {
		pp_header(&pp);
		for (size_t i = 0; i < profile__nstacks(p) && !pp.oom; i++)
			pp_sample(&pp, profile__stack(p, i));
	}
	/* after the samples: their locations name the mappings */
	pp_mappings(&pp);
	pp_string_table(&pp);
	if (pp_oom(&pp))
		goto cleanup;
	errno = 0;
	err = gzip_out(pp.out.buf, pp.out.len, f);
	if (!err && (fflush(f) || ferror(f)))
		err = -(errno ? errno : EIO);
cleanup:
	pp__free(&pp);
	return err;
}

int write_pprof(const struct profile *p, FILE *f)
{
	return pprof_write(p, f, NULL);
}

int write_pprof_select(const struct profile *p, FILE *f,
		       const struct pprof_select *sel)
{
	return pprof_write(p, f, sel);
}
