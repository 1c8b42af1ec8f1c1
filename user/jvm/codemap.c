// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Strict, incremental reader of a JVM's code map (agent/codemap_format.h).
 *
 * The file is written by a process we do not trust and may change under us
 * at any time, so nothing is ever used in place: every update preads the
 * bytes between the last position and the published write_pos into a
 * private buffer, validates each record completely and only then copies
 * what it keeps into our own structures (strings interned).
 *
 * Blob index: blobs sorted by (start, load time) in an implicit balanced
 * tree over the sorted array, each node holding the greatest end of its
 * subtree, so "which blobs ever covered pc" costs O(log n + hits) even when
 * the same addresses were reused by several blobs over time.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jvm/codemap.h"
#include "util/u64map.h"
#include "util/strtab.h"

#define CM_FILE_LIMIT		(256ull << 20)	/* refuse bigger map files */
#define CM_CHUNK		(1u << 20)	/* pread granularity */
#define CM_MAX_DEPTH		1024u		/* inline frames per pc */
#define CM_MAX_BLOB_SIZE	(1ull << 30)
#define CM_MAX_FRAME_WORDS	(1 << 20)
#define CM_TIME_NOW		(UINT64_MAX - 1)

#define ALIGN_UP(x, a)		(((x) + ((a) - 1)) & ~((uint64_t)(a) - 1))


struct cm_blob {
	struct codemap_blob b;		/* first: handed out as is */
	struct cm_blob *shadow;		/* older loaded blob at the same start */
	uint64_t seq;			/* record order */
};

struct cm_thr {
	struct codemap_thread t;	/* first */
	struct cm_thr *older;		/* previous thread with this tid */
};

/* "key present, no loaded blob": a live-table value */
static struct cm_blob cm_none;

struct codemap {
	int fd;
	pid_t pid;			/* host pid, for messages; 0 unknown */
	char *path;			/* for messages */
	bool failed;
	int errnum;
	char err[512];

	struct cm_file_header hdr;	/* last validated copy */
	uint64_t pos;			/* next record offset */

	struct strtab *strs;
	bool have_vm;
	bool have_cont;
	struct cm_cont cont;		/* valid when have_cont */
	uint32_t jdk_major;
	struct cm_vm_consts vm;
	const char *vm_version;

	struct codemap_method **methods;
	size_t nmethods, capm;
	struct u64map mhash;		/* Method* -> newest method */

	struct cm_blob **blobs;		/* record order */
	size_t nblobs, capb;
	struct cm_blob **sorted;	/* index over blobs[0..nsorted) */
	uint64_t *maxend;
	size_t nsorted;
	struct u64map live;		/* start -> newest loaded CODE blob */

	struct cm_thr **threads;
	size_t nthreads, capt;
	struct u64map thash;		/* tid -> newest thread */

	uint8_t *buf;
	size_t bufcap;

	codemap_tap_fn tap;		/* raw recordings: bytes as consumed */
	void *tap_ctx;
	codemap_thread_fn thread_fn;	/* a thread started or ended */
	void *thread_ctx;

	struct codemap_stats stats;
	size_t mem;			/* bytes of our own records */
};

/* ---- u64 -> pointer maps over the shared u64map ------------------------ */

static void *u64map_get(const struct u64map *m, uint64_t k)
{
	return (void *)(uintptr_t)u64map__get(m, k);
}

static int u64map_put(struct u64map *m, uint64_t k, void *v)
{
	return u64map__put(m, k, (uint64_t)(uintptr_t)v);
}

/* ---- errors ------------------------------------------------------------ */

__attribute__((format(printf, 3, 4)))
static int cm_fail(struct codemap *cm, int errnum, const char *fmt, ...)
{
	char what[320];
	va_list ap;

	if (cm->failed)
		return -cm->errnum;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (cm->pid > 0)
		snprintf(cm->err, sizeof(cm->err),
			 "code map %s: %s: Java frames of pid %d will not be decoded",
			 cm->path, what, (int)cm->pid);
	else
		snprintf(cm->err, sizeof(cm->err),
			 "code map %s: %s: Java frames of this JVM will not be decoded",
			 cm->path, what);
	cm->failed = true;
	cm->errnum = errnum;
	return -errnum;
}

static int grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 256;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

/* ---- record parsing ------------------------------------------------------ */

struct rd {
	const uint8_t *p;
	size_t len;
	size_t off;
};

static bool rd_str(struct rd *r, const char **s, uint16_t *n)
{
	uint16_t l;

	if (r->len - r->off < 2)
		return false;
	memcpy(&l, r->p + r->off, 2);
	if (r->len - r->off - 2 < l)
		return false;
	*s = (const char *)r->p + r->off + 2;
	*n = l;
	r->off += 2 + (size_t)l;
	return true;
}

/* the record must end exactly at the next multiple of 8 after off */
static bool rd_end_ok(const struct rd *r)
{
	return ALIGN_UP(r->off, 8) == r->len;
}

static const char *intern(struct codemap *cm, const char *s, uint16_t n)
{
	return strtab__intern_n(cm->strs, s, n);
}

static bool off_ok(int32_t v)
{
	return v == CM_ABSENT || (v >= 0 && v < 65536);
}

static bool word_ok(int32_t v)
{
	return v == CM_ABSENT || (v >= -64 && v <= 64);
}

static const char *check_consts(const struct cm_vm_consts *c)
{
	const int32_t offs[] = {
		c->blob_name, c->blob_size, c->blob_frame_size,
		c->blob_frame_complete, c->blob_code_begin,
		c->blob_code_offset, c->blob_kind, c->blob_header_size,
		c->nm_method, c->nm_comp_level, c->nm_verified_entry_point,
		c->nm_verified_entry_offset, c->method_const,
		c->sizeof_const_method, c->sizeof_method, c->jt_anchor,
		c->jt_thread_state, c->jt_osthread, c->jt_cont_entry,
		c->jt_vthread, c->jt_stack_base, c->jt_stack_size,
		c->osthread_thread_id, c->anchor_last_sp, c->anchor_last_pc,
		c->anchor_last_fp, c->jcw_anchor, c->upcall_frame_data,
		c->upcall_fd_jfa,
	};
	const int32_t words[] = {
		c->if_method, c->if_bcp, c->if_sender_sp, c->if_locals,
		c->entry_frame_call_wrapper,
	};
	const int32_t states[] = {
		c->thread_state_in_java, c->thread_state_in_native,
		c->thread_state_in_vm, c->thread_state_blocked,
	};

	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		if (!off_ok(offs[i]))
			return "a field offset out of range";
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!word_ok(words[i]))
			return "an interpreter frame slot out of range";
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (states[i] != CM_ABSENT && (states[i] < 0 || states[i] > 1000))
			return "a thread state out of range";
	if (c->blob_frame_complete_sz != CM_ABSENT &&
	    c->blob_frame_complete_sz != 2 && c->blob_frame_complete_sz != 4)
		return "blob_frame_complete_sz is not 2 or 4";
	if (c->nm_entry_bci < -1 || c->nm_entry_bci > 65535)
		return "nm_entry_bci out of range";
	if (c->interp_begin > c->interp_end)
		return "interpreter range is reversed";
	if (c->code_low > c->code_high)
		return "code cache range is reversed";
	return NULL;
}

#define BAD(...) cm_fail(cm, EINVAL, "record at offset %" PRIu64 ": " __VA_ARGS__)

static int parse_vm(struct codemap *cm, const uint8_t *p, uint32_t len,
		    uint64_t at)
{
	struct cm_vm v;
	struct rd r = { p, len, sizeof(v) };
	const char *s, *why;
	uint16_t n;

	if (len < sizeof(v))
		return BAD("VM record of %u bytes is shorter than %zu", at,
			   len, sizeof(v));
	memcpy(&v, p, sizeof(v));
	if (!rd_str(&r, &s, &n))
		return BAD("VM record's version string overruns the record", at);
	if (!rd_end_ok(&r))
		return BAD("VM record has %zu bytes after its end", at,
			   (size_t)(len - r.off));
	if (!v.jdk_major) {
		/* 0 = the writer did not know: take it from java.vm.version */
		uint32_t maj = 0;

		for (uint16_t i = 0; i < n && i < 6 && s[i] >= '0' && s[i] <= '9'; i++)
			maj = maj * 10 + (uint32_t)(s[i] - '0');
		if (maj == 1 && n > 2 && s[1] == '.')
			maj = (uint32_t)(s[2] - '0');
		v.jdk_major = maj;
	}
	if (v.jdk_major < 6 || v.jdk_major > 1000)
		return BAD("VM record has jdk_major %u", at, v.jdk_major);
	why = check_consts(&v.c);
	if (why)
		return BAD("VM record has %s", at, why);
	if (cm->have_vm) {
		/* a repeated VM record must say the same */
		if (v.jdk_major != cm->jdk_major ||
		    memcmp(&v.c, &cm->vm, sizeof(v.c)))
			return BAD("a second VM record differs from the first",
				   at);
		return 0;
	}
	cm->vm_version = intern(cm, s, n);
	if (!cm->vm_version)
		return cm_fail(cm, ENOMEM, "out of memory");
	cm->vm = v.c;
	cm->jdk_major = v.jdk_major;
	cm->have_vm = true;
	return 0;
}

static int line_cmp(const void *a, const void *b)
{
	const struct cm_line *x = a, *y = b;

	return x->bci < y->bci ? -1 : x->bci > y->bci;
}

static int parse_method(struct codemap *cm, const uint8_t *p, uint32_t len,
			uint64_t at, uint64_t t)
{
	struct cm_method rec;
	struct rd r = { p, len, sizeof(rec) };
	const char *s[4];
	uint16_t n[4];
	struct codemap_method *m;
	struct cm_line *lines;
	bool sorted = true;

	(void)t;
	if (len < sizeof(rec))
		return BAD("METHOD record of %u bytes is shorter than %zu", at,
			   len, sizeof(rec));
	memcpy(&rec, p, sizeof(rec));
	for (int i = 0; i < 4; i++)
		if (!rd_str(&r, &s[i], &n[i]))
			return BAD("METHOD record's strings overrun the record",
				   at);
	r.off = ALIGN_UP(r.off, 4);
	if (r.off > len || (len - r.off) / sizeof(struct cm_line) < rec.n_lines)
		return BAD("METHOD record has n_lines %u, more than fit", at,
			   rec.n_lines);
	r.off += (size_t)rec.n_lines * sizeof(struct cm_line);
	if (!rd_end_ok(&r))
		return BAD("METHOD record has %zu bytes after its end", at,
			   (size_t)(len - r.off));
	if (rec.flags & ~CM_METHOD_NATIVE)
		return BAD("METHOD record has unknown flags 0x%x", at,
			   rec.flags);
	if (!rec.method)
		return BAD("METHOD record has a NULL Method*", at);
	if (!n[0] || !n[1] || !n[2])
		return BAD("METHOD record has an empty class, name or signature",
			   at);

	m = calloc(1, sizeof(*m) + (size_t)rec.n_lines * sizeof(*lines));
	if (!m)
		return cm_fail(cm, ENOMEM, "out of memory");
	lines = (struct cm_line *)(m + 1);
	memcpy(lines, p + r.off - (size_t)rec.n_lines * sizeof(*lines),
	       (size_t)rec.n_lines * sizeof(*lines));
	for (uint32_t i = 1; i < rec.n_lines; i++)
		if (lines[i].bci < lines[i - 1].bci)
			sorted = false;
	if (!sorted)
		qsort(lines, rec.n_lines, sizeof(*lines), line_cmp);
	m->method = rec.method;
	m->const_method = rec.const_method;
	m->modifiers = rec.modifiers;
	m->flags = rec.flags;
	m->n_lines = rec.n_lines;
	m->lines = lines;
	m->klass = intern(cm, s[0], n[0]);
	m->name = intern(cm, s[1], n[1]);
	m->signature = intern(cm, s[2], n[2]);
	m->source = intern(cm, s[3], n[3]);
	if (!m->klass || !m->name || !m->signature || !m->source ||
	    grow_array((void **)&cm->methods, &cm->capm, cm->nmethods + 1,
		       sizeof(*cm->methods)) ||
	    u64map_put(&cm->mhash, m->method, m)) {
		free(m);
		return cm_fail(cm, ENOMEM, "out of memory");
	}
	cm->methods[cm->nmethods++] = m;
	cm->mem += sizeof(*m) + (size_t)rec.n_lines * sizeof(*lines);
	cm->stats.methods++;
	return 0;
}

static int add_blob(struct codemap *cm, struct cm_blob *b, size_t size)
{
	if (grow_array((void **)&cm->blobs, &cm->capb, cm->nblobs + 1,
		       sizeof(*cm->blobs)))
		return -ENOMEM;
	b->seq = cm->stats.records;
	cm->blobs[cm->nblobs++] = b;
	cm->mem += size;
	return 0;
}

static int pcdesc_cmp(const void *a, const void *b)
{
	const struct codemap_pcdesc *x = a, *y = b;

	if (x->pc_off != y->pc_off)
		return x->pc_off < y->pc_off ? -1 : 1;
	/* stable on equal pcs: frames are laid out in record order */
	return x->frames < y->frames ? -1 : x->frames > y->frames;
}

static int parse_code(struct codemap *cm, const uint8_t *p, uint32_t len,
		      uint64_t at, uint64_t t)
{
	struct cm_code rec;
	size_t off, nframes = 0, size;
	struct cm_blob *b, *prev;
	struct codemap_pcdesc *pcs;
	struct cm_frame *frames;
	uint64_t *pool;
	bool sorted = true;

	if (len < sizeof(rec))
		return BAD("CODE record of %u bytes is shorter than %zu", at,
			   len, sizeof(rec));
	memcpy(&rec, p, sizeof(rec));
	if (rec.kind < CM_CODE_NMETHOD || rec.kind > CM_CODE_OSR)
		return BAD("CODE record has kind %u", at, rec.kind);
	if (rec.start >= rec.end || rec.end - rec.start > CM_MAX_BLOB_SIZE)
		return BAD("CODE record has range 0x%" PRIx64 "-0x%" PRIx64,
			   at, rec.start, rec.end);
	if (rec.comp_level < -1 || rec.comp_level > 4)
		return BAD("CODE record has comp_level %d", at, rec.comp_level);
	if (rec.frame_size < -1 || rec.frame_size > CM_MAX_FRAME_WORDS)
		return BAD("CODE record has frame_size %d", at, rec.frame_size);
	if (rec.frame_complete < -1 ||
	    (rec.frame_complete >= 0 &&
	     (uint64_t)rec.frame_complete > rec.end - rec.start))
		return BAD("CODE record has frame_complete %d", at,
			   rec.frame_complete);
	if (rec.verified_entry &&
	    (rec.verified_entry < rec.start || rec.verified_entry >= rec.end))
		return BAD("CODE record's verified entry is outside its range",
			   at);
	off = sizeof(rec);
	if ((len - off) / 8 < rec.n_methods)
		return BAD("CODE record has n_methods %u, more than fit", at,
			   rec.n_methods);
	off += (size_t)rec.n_methods * 8;
	if ((len - off) / 16 < rec.n_pcs)
		return BAD("CODE record has n_pcs %u, more than fit", at,
			   rec.n_pcs);
	/* first pass: bounds of every descriptor */
	for (uint32_t i = 0; i < rec.n_pcs; i++) {
		struct cm_pcdesc d;

		if (len - off < sizeof(d))
			return BAD("CODE record's pc descriptor %u overruns the record",
				   at, i);
		memcpy(&d, p + off, sizeof(d));
		off += sizeof(d);
		if (d.depth < 1 || d.depth > CM_MAX_DEPTH)
			return BAD("CODE record's pc descriptor %u has depth %u",
				   at, i, d.depth);
		if ((uint64_t)d.pc_off > rec.end - rec.start)
			return BAD("CODE record's pc descriptor %u is past the code end",
				   at, i);
		if ((len - off) / sizeof(struct cm_frame) < d.depth)
			return BAD("CODE record's pc descriptor %u overruns the record",
				   at, i);
		for (uint32_t j = 0; j < d.depth; j++) {
			struct cm_frame f;

			memcpy(&f, p + off, sizeof(f));
			off += sizeof(f);
			if (f.method_idx >= rec.n_methods)
				return BAD("CODE record's pc descriptor %u has method_idx %u of %u",
					   at, i, f.method_idx, rec.n_methods);
		}
		nframes += d.depth;
	}
	if (ALIGN_UP(off, 8) != len)
		return BAD("CODE record has %zu bytes after its end", at,
			   (size_t)(len - off));

	/*
	 * The same nmethod reported twice (late attach: GenerateEvents racing
	 * the live event) is one blob; two distinct blobs at one start mean
	 * an unload we have not seen yet, and both are kept.
	 */
	prev = u64map_get(&cm->live, rec.start);
	if (prev && prev != &cm_none && prev->b.end == rec.end &&
	    prev->b.method == rec.method && prev->b.blob == rec.blob &&
	    prev->b.kind == rec.kind && prev->b.n_pcs == rec.n_pcs &&
	    prev->b.comp_level == rec.comp_level)
		return 0;

	size = sizeof(*b) + (size_t)rec.n_pcs * sizeof(*pcs) +
	       nframes * sizeof(*frames) + (size_t)rec.n_methods * 8;
	b = calloc(1, size);
	if (!b)
		return cm_fail(cm, ENOMEM, "out of memory");
	pcs = (struct codemap_pcdesc *)(b + 1);
	pool = (uint64_t *)(pcs + rec.n_pcs);
	frames = (struct cm_frame *)(pool + rec.n_methods);
	memcpy(pool, p + sizeof(rec), (size_t)rec.n_methods * 8);
	off = sizeof(rec) + (size_t)rec.n_methods * 8;
	nframes = 0;
	for (uint32_t i = 0; i < rec.n_pcs; i++) {
		struct cm_pcdesc d;

		memcpy(&d, p + off, sizeof(d));
		off += sizeof(d);
		memcpy(frames + nframes, p + off, (size_t)d.depth * 8);
		off += (size_t)d.depth * 8;
		pcs[i].pc_off = d.pc_off;
		pcs[i].depth = d.depth;
		pcs[i].frames = frames + nframes;
		nframes += d.depth;
		if (i && pcs[i].pc_off < pcs[i - 1].pc_off)
			sorted = false;
	}
	if (!sorted)
		qsort(pcs, rec.n_pcs, sizeof(*pcs), pcdesc_cmp);

	b->b.type = CODEMAP_BLOB_CODE;
	b->b.kind = rec.kind;
	b->b.start = rec.start;
	b->b.end = rec.end;
	b->b.blob = rec.blob;
	b->b.method = rec.method;
	b->b.verified_entry = rec.verified_entry;
	b->b.comp_level = rec.comp_level;
	b->b.frame_size = rec.frame_size;
	b->b.frame_complete = rec.frame_complete;
	b->b.load_ns = t;
	b->b.unload_ns = UINT64_MAX;
	b->b.n_pcs = rec.n_pcs;
	b->b.pcs = pcs;
	b->b.n_methods = rec.n_methods;
	b->b.method_pool = pool;
	b->shadow = prev == &cm_none ? NULL : prev;
	if (add_blob(cm, b, size) || u64map_put(&cm->live, rec.start, b)) {
		if (cm->nblobs && cm->blobs[cm->nblobs - 1] == b)
			cm->nblobs--;
		free(b);
		return cm_fail(cm, ENOMEM, "out of memory");
	}
	cm->stats.blobs++;
	return 0;
}

static int parse_unload(struct codemap *cm, const uint8_t *p, uint32_t len,
			uint64_t at, uint64_t t)
{
	struct cm_unload rec;
	struct cm_blob *head, *b, **link;

	if (len != sizeof(rec))
		return BAD("UNLOAD record has length %u, not %zu", at, len,
			   sizeof(rec));
	memcpy(&rec, p, sizeof(rec));
	cm->stats.unloads++;
	head = u64map_get(&cm->live, rec.start);
	if (!head || head == &cm_none)
		return 0;	/* code we never saw loaded (late attach) */
	/* newest loaded blob at this start with a matching method */
	for (link = &head, b = head; b; link = &b->shadow, b = b->shadow)
		if (!rec.method || !b->b.method || b->b.method == rec.method)
			break;
	if (!b)
		return 0;
	b->b.unload_ns = t < b->b.load_ns ? b->b.load_ns : t;
	*link = b->shadow;
	b->shadow = NULL;
	/* the table holds the chain head; head may have changed */
	if (u64map_put(&cm->live, rec.start, head ? head : &cm_none))
		return cm_fail(cm, ENOMEM, "out of memory");
	return 0;
}

static int parse_stub(struct codemap *cm, const uint8_t *p, uint32_t len,
		      uint64_t at, uint64_t t)
{
	struct cm_stub rec;
	struct rd r = { p, len, sizeof(rec) };
	struct cm_blob *b;
	const char *s;
	uint16_t n;

	if (len < sizeof(rec))
		return BAD("STUB record of %u bytes is shorter than %zu", at,
			   len, sizeof(rec));
	memcpy(&rec, p, sizeof(rec));
	if (!rd_str(&r, &s, &n))
		return BAD("STUB record's name overruns the record", at);
	if (!rd_end_ok(&r))
		return BAD("STUB record has %zu bytes after its end", at,
			   (size_t)(len - r.off));
	if (rec.kind > CM_STUB_RUNTIME)
		return BAD("STUB record has kind %u", at, rec.kind);
	if (rec.start >= rec.end || rec.end - rec.start > CM_MAX_BLOB_SIZE)
		return BAD("STUB record has range 0x%" PRIx64 "-0x%" PRIx64,
			   at, rec.start, rec.end);
	if (rec.frame_size < -1 || rec.frame_size > CM_MAX_FRAME_WORDS)
		return BAD("STUB record has frame_size %d", at, rec.frame_size);
	if (rec.frame_complete < -1 ||
	    (rec.frame_complete >= 0 &&
	     (uint64_t)rec.frame_complete > rec.end - rec.start))
		return BAD("STUB record has frame_complete %d", at,
			   rec.frame_complete);
	b = calloc(1, sizeof(*b));
	if (!b)
		return cm_fail(cm, ENOMEM, "out of memory");
	b->b.type = CODEMAP_BLOB_STUB;
	b->b.kind = rec.kind;
	b->b.start = rec.start;
	b->b.end = rec.end;
	b->b.blob = rec.blob;
	b->b.comp_level = -1;
	b->b.frame_size = rec.frame_size;
	b->b.frame_complete = rec.frame_complete;
	b->b.name = intern(cm, s, n);
	b->b.load_ns = t;
	b->b.unload_ns = UINT64_MAX;
	if (!b->b.name || add_blob(cm, b, sizeof(*b))) {
		free(b);
		return cm_fail(cm, ENOMEM, "out of memory");
	}
	cm->stats.stubs++;
	return 0;
}

static int parse_thread(struct codemap *cm, const uint8_t *p, uint32_t len,
			uint64_t at, uint64_t t)
{
	const uint32_t known = CM_THREAD_END | CM_THREAD_VIRTUAL |
			       CM_THREAD_CARRIER | CM_THREAD_DAEMON;
	struct cm_thread rec;
	struct rd r = { p, len, sizeof(rec) };
	struct cm_thr *th, *cur;
	const char *s;
	uint16_t n;

	if (len < sizeof(rec))
		return BAD("THREAD record of %u bytes is shorter than %zu", at,
			   len, sizeof(rec));
	memcpy(&rec, p, sizeof(rec));
	if (!rd_str(&r, &s, &n))
		return BAD("THREAD record's name overruns the record", at);
	if (!rd_end_ok(&r))
		return BAD("THREAD record has %zu bytes after its end", at,
			   (size_t)(len - r.off));
	if (rec.flags & ~known)
		return BAD("THREAD record has unknown flags 0x%x", at,
			   rec.flags);
	if (!rec.tid || rec.tid > (1u << 30))
		return BAD("THREAD record has tid %u", at, rec.tid);
	cur = u64map_get(&cm->thash, rec.tid);
	if (rec.flags & CM_THREAD_END) {
		for (th = cur; th; th = th->older)
			if (th->t.end_ns == UINT64_MAX &&
			    (!rec.java_thread || !th->t.java_thread ||
			     rec.java_thread == th->t.java_thread))
				break;
		if (th) {
			th->t.end_ns = t < th->t.start_ns ? th->t.start_ns : t;
			if (cm->thread_fn)
				cm->thread_fn(cm->thread_ctx, &th->t, false);
			return 0;
		}
		/* an end without a start (attached late): keep the name */
	} else if (cur && cur->t.end_ns == UINT64_MAX && rec.java_thread &&
		   cur->t.java_thread == rec.java_thread) {
		/* the same live thread reported again (enumerated at start-up
		 * and by its ThreadStart): one thread, the latest name */
		const char *name = intern(cm, s, n);

		if (!name)
			return cm_fail(cm, ENOMEM, "out of memory");
		cur->t.name = name;
		cur->t.flags = rec.flags;
		if (cm->thread_fn)
			cm->thread_fn(cm->thread_ctx, &cur->t, true);
		return 0;
	}
	th = calloc(1, sizeof(*th));
	if (!th)
		return cm_fail(cm, ENOMEM, "out of memory");
	th->t.tid = rec.tid;
	th->t.flags = rec.flags & ~CM_THREAD_END;
	th->t.java_thread = rec.java_thread;
	th->t.name = intern(cm, s, n);
	th->t.start_ns = (rec.flags & CM_THREAD_END) ? 0 : t;
	th->t.end_ns = (rec.flags & CM_THREAD_END) ? t : UINT64_MAX;
	th->older = cur;
	if (!th->t.name ||
	    grow_array((void **)&cm->threads, &cm->capt, cm->nthreads + 1,
		       sizeof(*cm->threads)) ||
	    u64map_put(&cm->thash, rec.tid, th)) {
		free(th);
		return cm_fail(cm, ENOMEM, "out of memory");
	}
	cm->threads[cm->nthreads++] = th;
	cm->mem += sizeof(*th);
	cm->stats.threads++;
	if (cm->thread_fn)
		cm->thread_fn(cm->thread_ctx, &th->t,
			      th->t.end_ns == UINT64_MAX);
	return 0;
}

static int parse_cont(struct codemap *cm, const uint8_t *p, uint32_t len,
		      uint64_t at)
{
	struct cm_cont c;

	if (len != ((sizeof(c) + 7) & ~(size_t)7))
		return BAD("CONT record of %u bytes, not %zu", at, len,
			   sizeof(c));
	memcpy(&c, p, sizeof(c));
	/* offsets inside small objects, and a sane oop decoding */
	if (c.entry_cont < 0 || c.entry_cont > 256 || c.cont_tail < 8 ||
	    c.cont_tail > 1024 || c.chunk_size < 8 || c.chunk_size > 1024 ||
	    c.chunk_sp < 8 || c.chunk_sp > 1024 ||
	    (c.chunk_argsize < 8) == (c.chunk_bottom < 8) ||
	    c.chunk_argsize > 1024 || c.chunk_bottom > 1024 ||
	    (c.chunk_argsize < 0 && c.chunk_argsize != -1) ||
	    (c.chunk_bottom < 0 && c.chunk_bottom != -1) || c.chunk_stack < 16 ||
	    c.chunk_stack > 4096 || (c.chunk_stack & 7) ||
	    (c.oop_size != 4 && c.oop_size != 8) || c.oop_shift > 8 ||
	    c.entry_size < 32 || c.entry_size > 256 || (c.entry_size & 15) ||
	    c.entry_cont + 8 > c.entry_size || c.chunk_parent < 8 ||
	    c.chunk_parent > 1024 || c.pad)
		return BAD("CONT record has an implausible layout", at);
	if (cm->have_cont && memcmp(&c.entry_cont, &cm->cont.entry_cont,
				    sizeof(c) - sizeof(c.h)))
		return BAD("a second CONT record differs from the first", at);
	cm->cont = c;
	cm->have_cont = true;
	return 0;
}

static int parse_record(struct codemap *cm, const uint8_t *p, uint32_t len,
			uint64_t at)
{
	struct cm_rec_hdr h;
	int err;

	memcpy(&h, p, sizeof(h));
	switch (h.type) {
	case CM_REC_VM:
		err = parse_vm(cm, p, len, at);
		break;
	case CM_REC_METHOD:
		err = parse_method(cm, p, len, at, h.time_ns);
		break;
	case CM_REC_CODE:
		err = parse_code(cm, p, len, at, h.time_ns);
		break;
	case CM_REC_UNLOAD:
		err = parse_unload(cm, p, len, at, h.time_ns);
		break;
	case CM_REC_STUB:
		err = parse_stub(cm, p, len, at, h.time_ns);
		break;
	case CM_REC_THREAD:
		err = parse_thread(cm, p, len, at, h.time_ns);
		break;
	case CM_REC_CONT:
		err = parse_cont(cm, p, len, at);
		break;
	default:
		return BAD("unknown record type %u", at, h.type);
	}
	if (err)
		return err;
	cm->stats.records++;
	cm->stats.bytes = at + len;
	if (h.time_ns > cm->stats.last_record_ns)
		cm->stats.last_record_ns = h.time_ns;
	return 0;
}

/* ---- blob index ---------------------------------------------------------- */

static int blob_cmp(const void *a, const void *b)
{
	const struct cm_blob *x = *(struct cm_blob *const *)a;
	const struct cm_blob *y = *(struct cm_blob *const *)b;

	if (x->b.start != y->b.start)
		return x->b.start < y->b.start ? -1 : 1;
	if (x->b.load_ns != y->b.load_ns)
		return x->b.load_ns < y->b.load_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint64_t build_maxend(struct codemap *cm, size_t lo, size_t hi)
{
	size_t mid;
	uint64_t m, l, r;

	if (lo >= hi)
		return 0;
	mid = lo + (hi - lo) / 2;
	m = cm->sorted[mid]->b.end;
	l = build_maxend(cm, lo, mid);
	r = build_maxend(cm, mid + 1, hi);
	if (l > m)
		m = l;
	if (r > m)
		m = r;
	cm->maxend[mid] = m;
	return m;
}

static int reindex(struct codemap *cm)
{
	size_t nnew = cm->nblobs - cm->nsorted, i = 0, j = 0, k = 0;
	struct cm_blob **fresh, **merged;
	uint64_t *maxend;

	if (!nnew)
		return 0;
	fresh = malloc(nnew * sizeof(*fresh));
	merged = malloc(cm->nblobs * sizeof(*merged));
	maxend = malloc(cm->nblobs * sizeof(*maxend));
	if (!fresh || !merged || !maxend) {
		free(fresh);
		free(merged);
		free(maxend);
		return cm_fail(cm, ENOMEM, "out of memory");
	}
	memcpy(fresh, cm->blobs + cm->nsorted, nnew * sizeof(*fresh));
	qsort(fresh, nnew, sizeof(*fresh), blob_cmp);
	while (i < cm->nsorted && j < nnew)
		merged[k++] = blob_cmp(&cm->sorted[i], &fresh[j]) <= 0 ?
			      cm->sorted[i++] : fresh[j++];
	while (i < cm->nsorted)
		merged[k++] = cm->sorted[i++];
	while (j < nnew)
		merged[k++] = fresh[j++];
	free(fresh);
	free(cm->sorted);
	free(cm->maxend);
	cm->sorted = merged;
	cm->maxend = maxend;
	cm->nsorted = cm->nblobs;
	build_maxend(cm, 0, cm->nsorted);
	return 0;
}

struct find_ctx {
	uint64_t pc, t;
	const struct cm_blob *exact;	/* newest whose lifetime holds t */
	const struct cm_blob *later;	/* oldest loaded after t */
};

static bool newer(const struct cm_blob *a, const struct cm_blob *b)
{
	return a->b.load_ns != b->b.load_ns ? a->b.load_ns > b->b.load_ns :
					      a->seq > b->seq;
}

static void find_visit(const struct codemap *cm, size_t lo, size_t hi,
		       struct find_ctx *f)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cm_blob *b = cm->sorted[mid];

		if (cm->maxend[mid] <= f->pc)
			return;		/* nothing in this subtree reaches pc */
		find_visit(cm, lo, mid, f);
		if (b->b.start > f->pc)
			return;		/* the right side starts later still */
		if (f->pc < b->b.end) {
			if (b->b.load_ns <= f->t && f->t < b->b.unload_ns) {
				if (!f->exact || newer(b, f->exact))
					f->exact = b;
			} else if (b->b.load_ns > f->t &&
				   f->t != CM_TIME_NOW) {
				if (!f->later || newer(f->later, b))
					f->later = b;
			}
		}
		lo = mid + 1;
	}
}

/* ---- reading ------------------------------------------------------------- */

static int read_header(struct codemap *cm, struct cm_file_header *h,
		       bool *retry)
{
	uint64_t wp2;
	struct stat st;
	ssize_t n;

	*retry = false;
	if (fstat(cm->fd, &st))
		return cm_fail(cm, errno, "fstat: %s", strerror(errno));
	if ((uint64_t)st.st_size > CM_FILE_LIMIT)
		return cm_fail(cm, EFBIG,
			       "file is %" PRIu64 " bytes, more than the %llu MiB limit",
			       (uint64_t)st.st_size, CM_FILE_LIMIT >> 20);
	n = pread(cm->fd, h, sizeof(*h), 0);
	if (n < 0)
		return cm_fail(cm, errno, "read: %s", strerror(errno));
	if ((n >= 8 || (size_t)n == (uint64_t)st.st_size) &&
	    memcmp(h->magic, CM_MAGIC, n < 8 ? (size_t)n : 8))
		return cm_fail(cm, EINVAL, "bad magic (not a code map)");
	if ((size_t)n < sizeof(*h))
		return cm_fail(cm, EINVAL,
			       "truncated: %zd bytes, shorter than its header",
			       n);
	if (h->version != CM_VERSION)
		return cm_fail(cm, EPROTO,
			       "format version %u, this asgst-bpf reads version %u: use a matching agent",
			       h->version, CM_VERSION);
	if (h->header_size != CM_HEADER_SIZE)
		return cm_fail(cm, EINVAL, "header_size %u, expected %u",
			       h->header_size, CM_HEADER_SIZE);
	if (h->flags & ~(CM_F_READY | CM_F_FULL | CM_F_DISABLED | CM_F_CLOSED))
		return cm_fail(cm, EINVAL, "unknown header flags 0x%x",
			       h->flags);
	h->disabled_reason[sizeof(h->disabled_reason) - 1] = '\0';
	/* a torn write_pos would be caught below; still, read it twice */
	if (pread(cm->fd, &wp2, sizeof(wp2),
		  offsetof(struct cm_file_header, write_pos)) != sizeof(wp2))
		return cm_fail(cm, EINVAL, "truncated while reading");
	if (wp2 != h->write_pos) {
		*retry = true;
		return 0;
	}
	if (h->write_pos < CM_HEADER_SIZE || h->write_pos % 8)
		return cm_fail(cm, EINVAL, "write_pos %" PRIu64 " is invalid",
			       h->write_pos);
	if (h->write_pos > (uint64_t)st.st_size)
		return cm_fail(cm, EINVAL,
			       "write_pos %" PRIu64 " is past the end of the %" PRIu64 "-byte file (truncated?)",
			       h->write_pos, (uint64_t)st.st_size);
	if (h->max_size && h->write_pos > h->max_size)
		return cm_fail(cm, EINVAL,
			       "write_pos %" PRIu64 " is past max_size %" PRIu64,
			       h->write_pos, h->max_size);
	if (h->write_pos < cm->pos)
		return cm_fail(cm, EINVAL,
			       "write_pos went back from %" PRIu64 " to %" PRIu64,
			       cm->pos, h->write_pos);
	return 0;
}

static int ensure_buf(struct codemap *cm, size_t n)
{
	uint8_t *nb;

	if (n <= cm->bufcap)
		return 0;
	nb = realloc(cm->buf, n);
	if (!nb)
		return cm_fail(cm, ENOMEM, "out of memory");
	cm->buf = nb;
	cm->bufcap = n;
	return 0;
}

static int read_at(struct codemap *cm, void *dst, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(cm->fd, (uint8_t *)dst + got, n - got,
				  (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return cm_fail(cm, errno, "read: %s", strerror(errno));
		if (r == 0)
			return cm_fail(cm, EINVAL,
				       "file shrank below offset %" PRIu64,
				       off + got);
		got += (size_t)r;
	}
	return 0;
}

int codemap__update(struct codemap *cm)
{
	struct cm_file_header h;
	uint64_t wp;
	bool retry = false;
	int err = 0;

	if (!cm)
		return -EINVAL;
	if (cm->failed)
		return -cm->errnum;
	for (int tries = 0; tries < 4; tries++) {
		err = read_header(cm, &h, &retry);
		if (err || !retry)
			break;
	}
	if (err)
		return err;
	if (retry)
		return 0;	/* writer busy: try again next time */
	cm->hdr = h;
	cm->stats.file_flags = h.flags;
	cm->stats.dropped = h.dropped;
	wp = h.write_pos;

	while (cm->pos < wp) {
		uint64_t want = wp - cm->pos;
		size_t p = 0;

		if (want > CM_CHUNK)
			want = CM_CHUNK;
		if ((err = ensure_buf(cm, want)) ||
		    (err = read_at(cm, cm->buf, want, cm->pos)))
			goto cleanup;
		while (want - p >= sizeof(struct cm_rec_hdr)) {
			struct cm_rec_hdr rh;
			uint64_t at = cm->pos + p;

			memcpy(&rh, cm->buf + p, sizeof(rh));
			if (rh.len < sizeof(rh) || rh.len % 8) {
				err = cm_fail(cm, EINVAL,
					      "record at offset %" PRIu64 " has length %u (%s)",
					      at, rh.len,
					      rh.len % 8 ? "not a multiple of 8" :
							   "shorter than 16");
				goto cleanup;
			}
			if (rh.len > wp - at) {
				err = cm_fail(cm, EINVAL,
					      "record at offset %" PRIu64 " has length %u, past write_pos %" PRIu64,
					      at, rh.len, wp);
				goto cleanup;
			}
			if (rh.len > want - p) {
				if (p)
					break;	/* next chunk starts here */
				/* one record bigger than a chunk */
				if ((err = ensure_buf(cm, rh.len)) ||
				    (err = read_at(cm, cm->buf, rh.len, at)))
					goto cleanup;
				want = rh.len;
			}
			if ((err = parse_record(cm, cm->buf + p, rh.len, at)))
				goto cleanup;
			p += rh.len;
		}
		if (!p) {
			err = cm_fail(cm, EINVAL,
				      "record at offset %" PRIu64 " is cut by write_pos %" PRIu64,
				      cm->pos, wp);
			goto cleanup;
		}
		if (cm->tap)
			cm->tap(cm->tap_ctx, cm->pos, cm->buf, p);
		cm->pos += p;
	}
cleanup:
	/* index what was read, even up to a bad record */
	if (reindex(cm) && !err)
		err = -cm->errnum;
	if (cm->bufcap > CM_CHUNK) {
		free(cm->buf);
		cm->buf = NULL;
		cm->bufcap = 0;
	}
	return err;
}

/* ---- open ---------------------------------------------------------------- */

static char *join_path(const char *root, const char *path)
{
	size_t rl = strlen(root);
	char *s;

	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (rl == 1 && root[0] == '/')
		rl = 0;
	if (asprintf(&s, "%.*s%s%s", (int)rl, root, path[0] == '/' ? "" : "/",
		     path) < 0)
		return NULL;
	return s;
}

static struct codemap *codemap_new(int fd, const char *display, pid_t pid)
{
	struct codemap *cm = calloc(1, sizeof(*cm));

	if (!cm)
		return NULL;
	cm->fd = fd;
	cm->pid = pid;
	cm->path = strdup(display);
	cm->strs = strtab__new();
	cm->pos = CM_HEADER_SIZE;
	if (!cm->path || !cm->strs) {
		cm->fd = -1;
		codemap__free(cm);
		return NULL;
	}
	return cm;
}

static void set_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
}

/*
 * fd is ours from here on. A file too short for its header, or still
 * zero-filled, is a map being created: -EAGAIN, try again later.
 */
static int open_fd_common(struct codemap **out, int fd, const char *display,
			  pid_t pid, bool from_path, char *err, size_t errlen)
{
	struct codemap *cm;
	struct stat st;
	char magic[8];
	ssize_t n;
	int ret;

	*out = NULL;
	cm = codemap_new(fd, display, pid);
	if (!cm) {
		close(fd);
		set_err(err, errlen, "code map: out of memory");
		return -ENOMEM;
	}
	if (fstat(fd, &st)) {
		ret = cm_fail(cm, errno, "fstat: %s", strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = cm_fail(cm, EINVAL, "not a regular file (refused)");
		goto cleanup;
	}
	if (from_path && st.st_nlink > 1) {
		ret = cm_fail(cm, EINVAL,
			      "has %ju hard links, a map has one (refused)",
			      (uintmax_t)st.st_nlink);
		goto cleanup;
	}
	if ((uint64_t)st.st_size > CM_FILE_LIMIT) {
		ret = cm_fail(cm, EFBIG,
			      "file is %" PRIu64 " bytes, more than the %llu MiB limit",
			      (uint64_t)st.st_size, CM_FILE_LIMIT >> 20);
		goto cleanup;
	}
	/*
	 * Being created: shorter than its header, starting with a prefix of
	 * the magic or with zeros (the magic is written last).
	 */
	n = pread(fd, magic, sizeof(magic), 0);
	if (n < 0)
		n = 0;
	if ((!memcmp(magic, CM_MAGIC, (size_t)n) &&
	     (uint64_t)st.st_size < sizeof(struct cm_file_header)) ||
	    (n == sizeof(magic) && !memcmp(magic, "\0\0\0\0\0\0\0\0", 8))) {
		ret = cm_fail(cm, EAGAIN,
			      "not initialised yet (%" PRIu64 " bytes): try again when the agent has started",
			      (uint64_t)st.st_size);
		goto cleanup;
	}
	ret = codemap__update(cm);
cleanup:
	if (ret) {
		set_err(err, errlen, cm->err);
		codemap__free(cm);
		return ret;
	}
	*out = cm;
	return 0;
}

static int open_common(struct codemap **out, const char *root,
		       const char *path, pid_t pid, char *err, size_t errlen)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
			 O_NOCTTY,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char *display = NULL;
	const char *why;
	char msg[512];
	int dirfd = -1, fd, ret, e;

	*out = NULL;
	display = join_path(root, path);
	if (!display) {
		set_err(err, errlen, "code map: out of memory");
		return -ENOMEM;
	}
	dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		e = errno;
		why = strerror(e);
		goto fail;
	}
	fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd < 0) {
		e = errno;
		switch (e) {
		case ELOOP:
			why = "is a symbolic link (refused)";
			break;
		case EXDEV:
			why = "path leaves its root (refused)";
			break;
		case ENOENT:
			why = "does not exist (no agent in this JVM? see asgst-bpf attach)";
			break;
		case ENOSYS:
			why = "openat2 is not available (kernel older than 5.6)";
			break;
		default:
			why = strerror(e);
		}
		goto fail;
	}
	close(dirfd);
	ret = open_fd_common(out, fd, display, pid, true, err, errlen);
	free(display);
	return ret;
fail:
	if (pid > 0)
		snprintf(msg, sizeof(msg),
			 "code map %s: %s: Java frames of pid %d will not be decoded",
			 display, why, (int)pid);
	else
		snprintf(msg, sizeof(msg),
			 "code map %s: %s: Java frames of this JVM will not be decoded",
			 display, why);
	set_err(err, errlen, msg);
	if (dirfd >= 0)
		close(dirfd);
	free(display);
	return -e;
}

int codemap__open(struct codemap **out, const char *root, const char *path,
		  char *err, size_t errlen)
{
	if (!out || !root || !path) {
		set_err(err, errlen, "code map: no path given");
		return -EINVAL;
	}
	return open_common(out, root, path, 0, err, errlen);
}

int codemap__open_fd(struct codemap **out, int fd, const char *name,
		     char *err, size_t errlen)
{
	int nfd;

	if (!out || fd < 0) {
		set_err(err, errlen, "code map: bad file descriptor");
		return -EINVAL;
	}
	*out = NULL;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0) {
		int e = errno;

		set_err(err, errlen, "code map: dup failed");
		return -e;
	}
	return open_fd_common(out, nfd, name ? name : "(fd)", 0, false, err,
			      errlen);
}

int codemap__nspid(pid_t pid, pid_t *nspid)
{
	char path[64], line[512];
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *last = NULL, *tok, *save = NULL;

		if (strncmp(line, "NStgid:", 7))
			continue;
		for (tok = strtok_r(line + 7, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save))
			last = tok;
		if (last) {
			char *end;
			long v = strtol(last, &end, 10);

			if (*end == '\0' && v > 0 && v <= INT_MAX) {
				*nspid = (pid_t)v;
				ret = 0;
			}
		}
		break;
	}
	fclose(f);
	return ret;
}

int codemap__open_pid(struct codemap **out, pid_t pid, char *err,
		      size_t errlen)
{
	char root[64], path[64];
	pid_t nspid;
	int ret;

	if (!out || pid <= 0) {
		set_err(err, errlen, "code map: bad pid");
		return -EINVAL;
	}
	*out = NULL;
	ret = codemap__nspid(pid, &nspid);
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen,
				 "code map of pid %d: cannot read /proc/%d/status (%s): Java frames of pid %d will not be decoded",
				 (int)pid, (int)pid,
				 ret == -ENOENT ? "process gone" : strerror(-ret),
				 (int)pid);
		return ret == -ENOENT ? -ESRCH : ret;
	}
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	snprintf(path, sizeof(path), CM_PATH_FMT, (int)nspid);
	ret = open_common(out, root, path, pid, err, errlen);
	if (ret)
		return ret;
	if ((*out)->hdr.writer_pid != (uint32_t)nspid) {
		struct codemap *cm = *out;

		ret = cm_fail(cm, ESTALE,
			      "left by pid %u, not by this JVM (pid %d in its namespace): stale map ignored",
			      cm->hdr.writer_pid, (int)nspid);
		set_err(err, errlen, cm->err);
		codemap__free(cm);
		*out = NULL;
	}
	return ret;
}

void codemap__free(struct codemap *cm)
{
	if (!cm)
		return;
	if (cm->fd >= 0)
		close(cm->fd);
	for (size_t i = 0; i < cm->nmethods; i++)
		free(cm->methods[i]);
	for (size_t i = 0; i < cm->nblobs; i++)
		free(cm->blobs[i]);
	for (size_t i = 0; i < cm->nthreads; i++)
		free(cm->threads[i]);
	free(cm->methods);
	free(cm->blobs);
	free(cm->sorted);
	free(cm->maxend);
	free(cm->threads);
	u64map__free(&cm->mhash);
	u64map__free(&cm->live);
	u64map__free(&cm->thash);
	strtab__free(cm->strs);
	free(cm->buf);
	free(cm->path);
	free(cm);
}

/* ---- queries ------------------------------------------------------------- */

bool codemap__ok(const struct codemap *cm)
{
	return cm && !cm->failed;
}

const char *codemap__error(const struct codemap *cm)
{
	return cm && cm->failed ? cm->err : NULL;
}

uint32_t codemap__writer_pid(const struct codemap *cm)
{
	return cm ? cm->hdr.writer_pid : 0;
}

const struct cm_file_header *codemap__header(const struct codemap *cm)
{
	return cm ? &cm->hdr : NULL;
}

const char *codemap__path(const struct codemap *cm)
{
	return cm ? cm->path : NULL;
}

const struct cm_vm_consts *codemap__vm(const struct codemap *cm)
{
	return cm && cm->have_vm ? &cm->vm : NULL;
}

const struct cm_cont *codemap__cont(const struct codemap *cm)
{
	return cm && cm->have_cont ? &cm->cont : NULL;
}

uint32_t codemap__jdk_major(const struct codemap *cm)
{
	return cm && cm->have_vm ? cm->jdk_major : 0;
}

const char *codemap__vm_version(const struct codemap *cm)
{
	return cm && cm->have_vm ? cm->vm_version : NULL;
}

const struct codemap_method *codemap__method(const struct codemap *cm,
					     uint64_t method)
{
	if (!codemap__ok(cm))
		return NULL;
	return u64map_get(&cm->mhash, method);
}

int codemap_method__line(const struct codemap_method *m, int bci)
{
	uint32_t lo = 0, hi;

	if (!m || bci < 0 || !m->n_lines)
		return -1;
	/* greatest start bci <= bci */
	hi = m->n_lines;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->lines[mid].bci <= (uint32_t)bci)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (int)m->lines[lo - 1].line : -1;
}

const struct codemap_blob *codemap__find(const struct codemap *cm,
					 uint64_t pc, uint64_t t)
{
	struct find_ctx f = { .pc = pc, .t = t ? t : CM_TIME_NOW };

	if (!codemap__ok(cm) || !cm->nsorted)
		return NULL;
	find_visit(cm, 0, cm->nsorted, &f);
	/*
	 * Nothing alive at t: JVMTI posts CompiledMethodLoad after the code
	 * was installed (and may already run), so the earliest blob loaded
	 * after t is what was there.
	 */
	return f.exact ? &f.exact->b : f.later ? &f.later->b : NULL;
}

const struct codemap_pcdesc *codemap_blob__pcdesc(const struct codemap_blob *b,
						  uint64_t pc)
{
	uint64_t off;
	uint32_t lo = 0, hi;

	if (!b || pc < b->start || !b->n_pcs)
		return NULL;
	off = pc - b->start;
	if (off > UINT32_MAX)
		return NULL;
	hi = b->n_pcs;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (b->pcs[mid].pc_off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->n_pcs ? &b->pcs[lo] : NULL;
}

const struct codemap_thread *codemap__thread(const struct codemap *cm,
					     uint32_t tid, uint64_t t)
{
	const struct cm_thr *th, *later = NULL;

	if (!codemap__ok(cm))
		return NULL;
	th = u64map_get(&cm->thash, tid);
	if (!t) {
		for (; th; th = th->older)
			if (th->t.end_ns == UINT64_MAX)
				return &th->t;
		return NULL;
	}
	for (; th; th = th->older) {
		if (th->t.start_ns <= t && t < th->t.end_ns)
			return &th->t;
		/* started after t: its start event came late, see find() */
		if (th->t.start_ns > t)
			later = th;
	}
	return later ? &later->t : NULL;
}

void codemap__stats(const struct codemap *cm, struct codemap_stats *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (cm)
		*out = cm->stats;
}

size_t codemap__mem_bytes(const struct codemap *cm)
{
	if (!cm)
		return 0;
	return sizeof(*cm) + cm->mem + strtab__bytes(cm->strs) +
	       cm->capm * sizeof(*cm->methods) +
	       cm->capb * sizeof(*cm->blobs) +
	       cm->nsorted * (sizeof(*cm->sorted) + sizeof(*cm->maxend)) +
	       cm->capt * sizeof(*cm->threads) +
	       (cm->mhash.cap + cm->live.cap + cm->thash.cap) *
		       (sizeof(uint64_t) + sizeof(void *)) +
	       cm->bufcap;
}

size_t codemap__nblobs(const struct codemap *cm)
{
	return cm ? cm->nblobs : 0;
}

const struct codemap_blob *codemap__blob_at(const struct codemap *cm, size_t i)
{
	return cm && i < cm->nblobs ? &cm->blobs[i]->b : NULL;
}

size_t codemap__nmethods(const struct codemap *cm)
{
	return cm ? cm->nmethods : 0;
}

const struct codemap_method *codemap__method_at(const struct codemap *cm,
						size_t i)
{
	return cm && i < cm->nmethods ? cm->methods[i] : NULL;
}

size_t codemap__nthreads(const struct codemap *cm)
{
	return cm ? cm->nthreads : 0;
}

const struct codemap_thread *codemap__thread_at(const struct codemap *cm,
						size_t i)
{
	return cm && i < cm->nthreads ? &cm->threads[i]->t : NULL;
}

uint64_t codemap__pos(const struct codemap *cm)
{
	return cm->pos;
}

void codemap__set_thread_cb(struct codemap *cm, codemap_thread_fn fn,
			    void *ctx)
{
	cm->thread_fn = fn;
	cm->thread_ctx = ctx;
	if (!fn)
		return;
	/* the threads read so far, latest state of each */
	for (size_t i = 0; i < cm->nthreads; i++)
		fn(ctx, &cm->threads[i]->t,
		   cm->threads[i]->t.end_ns == UINT64_MAX);
}

int codemap__set_tap(struct codemap *cm, codemap_tap_fn fn, void *ctx)
{
	uint64_t off = CM_HEADER_SIZE;
	uint8_t *buf;
	int err = 0;

	cm->tap = fn;
	cm->tap_ctx = ctx;
	if (!fn || cm->pos <= CM_HEADER_SIZE)
		return 0;
	/* catch up on what open() already consumed */
	buf = malloc(CM_CHUNK);
	if (!buf)
		return -ENOMEM;
	while (off < cm->pos) {
		size_t n = cm->pos - off > CM_CHUNK ? CM_CHUNK : cm->pos - off;
		ssize_t r = pread(cm->fd, buf, n, (off_t)off);

		if (r <= 0) {
			err = r < 0 ? -errno : -EIO;
			break;
		}
		fn(ctx, off, buf, (size_t)r);
		off += (uint64_t)r;
	}
	free(buf);
	return err;
}
