// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The tables of the code map reader (codemap_tables.h): each record is
 * validated completely, in the private copy codemap.c read, and only
 * then is what it keeps copied into the tables (strings interned, methods
 * in the method store).
 *
 * Blob index: blobs sorted by (start, load time) in an implicit balanced
 * tree over the sorted array, each node holding the greatest end of its
 * subtree, so "which blobs ever covered pc" costs O(log n + hits) even when
 * the same addresses were reused by several blobs over time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "jvm/codemap_tables.h"

#define CM_MAX_DEPTH		1024u		/* inline frames per pc */
#define CM_MAX_BLOB_SIZE	(1ull << 30)
#define CM_MAX_FRAME_WORDS	(1 << 20)

#define ALIGN_UP(x, a)		(((x) + ((a) - 1)) & ~((uint64_t)(a) - 1))

/* "key present, no loaded blob": a live-table value */
static struct cm_blob cm_none;

/* stubs are told apart by their range (several may share a start) */
#define CM_STUB_KEY(start, end)	((start) ^ ((end) * 0x9E3779B97F4A7C15ull))

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

/* a failure: why (one line: fmt), -errnum */
__attribute__((format(printf, 3, 4)))
static int fail(struct cm_tables *tb, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tb->why, sizeof(tb->why), fmt, ap);
	va_end(ap);
	return -errnum;
}

/* a failure of the store (err: 0 or -errno) as one of ours */
static int store_err(struct cm_tables *tb, int err)
{
	return err ? fail(tb, -err, "%s", tb->store.why) : 0;
}

static const char *intern(struct cm_tables *tb, const char *s, uint16_t n)
{
	return cm_store__intern(&tb->store, s, n);
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

#define BAD(...) fail(tb, EINVAL, "record at offset %" PRIu64 ": " __VA_ARGS__)

static int parse_vm(struct cm_tables *tb, const uint8_t *p, uint32_t len,
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
	if (tb->have_vm) {
		/* a repeated VM record must say the same */
		if (v.jdk_major != tb->jdk_major ||
		    memcmp(&v.c, &tb->vm, sizeof(v.c)))
			return BAD("a second VM record differs from the first",
				   at);
		return 0;
	}
	tb->vm_version = intern(tb, s, n);
	if (!tb->vm_version)
		return fail(tb, ENOMEM, "out of memory");
	tb->vm = v.c;
	tb->jdk_major = v.jdk_major;
	tb->have_vm = true;
	return 0;
}

/* room in tb->lbuf for n lines; 0 or -ENOMEM */
static int lines_room(struct cm_tables *tb, size_t n)
{
	return array__grow((void **)&tb->lbuf, &tb->lbufcap, n ? n : 1,
			  sizeof(*tb->lbuf));
}

static int parse_method(struct cm_tables *tb, const uint8_t *p, uint32_t len,
			uint64_t at, uint64_t t)
{
	struct cm_method rec;
	struct rd r = { p, len, sizeof(rec) };
	const char *s[4];
	uint16_t n[4];
	struct cm_mdesc m;
	uint32_t num[4];

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

	for (int i = 0; i < 4; i++)
		if (cm_store__str_num(&tb->store, s[i], n[i], &num[i]))
			return fail(tb, ENOMEM, "out of memory");
	m = (struct cm_mdesc){
		.method = rec.method, .const_method = rec.const_method,
		.name = num[1], .sig = num[2], .modifiers = rec.modifiers,
		.flags = rec.flags, .n_lines = rec.n_lines,
	};
	if (cm_store__class_num(&tb->store, num[0], num[3], &m.klass))
		return fail(tb, ENOMEM, "out of memory");
	/* the table may sit unaligned in the record: copied out first */
	if (lines_room(tb, rec.n_lines))
		return fail(tb, ENOMEM, "out of memory");
	if (rec.n_lines)
		memcpy(tb->lbuf, p + r.off - (size_t)rec.n_lines *
		       sizeof(struct cm_line),
		       (size_t)rec.n_lines * sizeof(struct cm_line));
	return store_err(tb, cm_store__add(&tb->store, &m, tb->lbuf, t));
}

static int add_blob(struct cm_tables *tb, struct cm_blob *b, size_t size)
{
	if (array__grow((void **)&tb->blobs, &tb->capb, tb->nblobs + 1,
		       sizeof(*tb->blobs)))
		return -ENOMEM;
	b->seq = tb->seq;
	b->size = cm_alloc_bytes(size);
	b->epoch = tb->epoch;
	tb->blobs[tb->nblobs++] = b;
	tb->mem += b->size;
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

/* the fixed part of a CODE record, and that its arrays can fit */
static int check_code(struct cm_tables *tb, const struct cm_code *rec,
		      uint32_t len, uint64_t at)
{
	size_t off = sizeof(*rec);

	if (rec->kind < CM_CODE_NMETHOD || rec->kind > CM_CODE_OSR)
		return BAD("CODE record has kind %u", at, rec->kind);
	if (rec->start >= rec->end || rec->end - rec->start > CM_MAX_BLOB_SIZE)
		return BAD("CODE record has range 0x%" PRIx64 "-0x%" PRIx64,
			   at, rec->start, rec->end);
	if (rec->comp_level < -1 || rec->comp_level > 4)
		return BAD("CODE record has comp_level %d", at, rec->comp_level);
	if (rec->frame_size < -1 || rec->frame_size > CM_MAX_FRAME_WORDS)
		return BAD("CODE record has frame_size %d", at, rec->frame_size);
	if (rec->frame_complete < -1 ||
	    (rec->frame_complete >= 0 &&
	     (uint64_t)rec->frame_complete > rec->end - rec->start))
		return BAD("CODE record has frame_complete %d", at,
			   rec->frame_complete);
	if (rec->verified_entry && (rec->verified_entry < rec->start ||
				    rec->verified_entry >= rec->end))
		return BAD("CODE record's verified entry is outside its range",
			   at);
	if ((len - off) / 8 < rec->n_methods)
		return BAD("CODE record has n_methods %u, more than fit", at,
			   rec->n_methods);
	off += (size_t)rec->n_methods * 8;
	if ((len - off) / 16 < rec->n_pcs)
		return BAD("CODE record has n_pcs %u, more than fit", at,
			   rec->n_pcs);
	return 0;
}

/* the bounds of every pc descriptor and its frames; *nframes gets the
 * frames of all of them */
static int check_pcdescs(struct cm_tables *tb, const uint8_t *p, uint32_t len,
			 uint64_t at, const struct cm_code *rec,
			 size_t *nframes)
{
	size_t off = sizeof(*rec) + (size_t)rec->n_methods * 8;

	*nframes = 0;
	for (uint32_t i = 0; i < rec->n_pcs; i++) {
		struct cm_pcdesc d;

		if (len - off < sizeof(d))
			return BAD("CODE record's pc descriptor %u overruns the record",
				   at, i);
		memcpy(&d, p + off, sizeof(d));
		off += sizeof(d);
		if (d.depth < 1 || d.depth > CM_MAX_DEPTH)
			return BAD("CODE record's pc descriptor %u has depth %u",
				   at, i, d.depth);
		if ((uint64_t)d.pc_off > rec->end - rec->start)
			return BAD("CODE record's pc descriptor %u is past the code end",
				   at, i);
		if ((len - off) / sizeof(struct cm_frame) < d.depth)
			return BAD("CODE record's pc descriptor %u overruns the record",
				   at, i);
		for (uint32_t j = 0; j < d.depth; j++) {
			struct cm_frame f;

			memcpy(&f, p + off, sizeof(f));
			off += sizeof(f);
			if (f.method_idx >= rec->n_methods)
				return BAD("CODE record's pc descriptor %u has method_idx %u of %u",
					   at, i, f.method_idx, rec->n_methods);
		}
		*nframes += d.depth;
	}
	if (ALIGN_UP(off, 8) != len)
		return BAD("CODE record has %zu bytes after its end", at,
			   (size_t)(len - off));
	return 0;
}

/* a blob holding a copy of the checked record p: its method pool and its
 * pc descriptors sorted by pc, in one allocation of *size bytes */
static struct cm_blob *copy_code(const uint8_t *p, const struct cm_code *rec,
				 size_t nframes, size_t *size)
{
	struct codemap_pcdesc *pcs;
	struct cm_frame *frames;
	struct cm_blob *b;
	uint64_t *pool;
	size_t off;
	bool sorted = true;

	*size = sizeof(*b) + (size_t)rec->n_pcs * sizeof(*pcs) +
		nframes * sizeof(*frames) + (size_t)rec->n_methods * 8;
	b = calloc(1, *size);
	if (!b)
		return NULL;
	pcs = (struct codemap_pcdesc *)(b + 1);
	pool = (uint64_t *)(pcs + rec->n_pcs);
	frames = (struct cm_frame *)(pool + rec->n_methods);
	memcpy(pool, p + sizeof(*rec), (size_t)rec->n_methods * 8);
	off = sizeof(*rec) + (size_t)rec->n_methods * 8;
	nframes = 0;
	for (uint32_t i = 0; i < rec->n_pcs; i++) {
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
		qsort(pcs, rec->n_pcs, sizeof(*pcs), pcdesc_cmp);
	b->b.n_pcs = rec->n_pcs;
	b->b.pcs = pcs;
	b->b.n_methods = rec->n_methods;
	b->b.method_pool = pool;
	return b;
}

static int parse_code(struct cm_tables *tb, const uint8_t *p, uint32_t len,
		      uint64_t at, uint64_t t)
{
	struct cm_code rec;
	struct cm_blob *b, *prev;
	size_t nframes, size;
	int err;

	if (len < sizeof(rec))
		return BAD("CODE record of %u bytes is shorter than %zu", at,
			   len, sizeof(rec));
	memcpy(&rec, p, sizeof(rec));
	if ((err = check_code(tb, &rec, len, at)) ||
	    (err = check_pcdescs(tb, p, len, at, &rec, &nframes)))
		return err;

	/*
	 * The same nmethod reported twice (late attach: GenerateEvents racing
	 * the live event) is one blob; two distinct blobs at one start mean
	 * an unload we have not seen yet, and both are kept.
	 */
	prev = u64map_get(&tb->live, rec.start);
	if (prev && prev != &cm_none && prev->b.end == rec.end &&
	    prev->b.method == rec.method && prev->b.blob == rec.blob &&
	    prev->b.kind == rec.kind && prev->b.n_pcs == rec.n_pcs &&
	    prev->b.comp_level == rec.comp_level) {
		prev->epoch = tb->epoch;
		return 0;
	}

	if (tb->nblobs >= tb->budget->lim.blobs) {
		cm_budget__capped(tb->budget, "%u code blobs",
				  tb->budget->lim.blobs);
		return 0;
	}
	if (prev && prev != &cm_none) {
		/* loaded blobs at this start: at most the cap, so an unload's
		 * walk of them is bounded (a real JVM has one, or a few while
		 * unload records are late) */
		uint32_t n = 0;

		for (const struct cm_blob *x = prev; x; x = x->shadow) {
			tb->budget->steps++;
			if (++n >= tb->budget->lim.blobs_at_start) {
				cm_budget__capped(tb->budget,
						  "%u loaded code blobs at one address (0x%" PRIx64 ")",
						  tb->budget->lim.blobs_at_start,
						  rec.start);
				return 0;
			}
		}
	}

	b = copy_code(p, &rec, nframes, &size);
	if (!b)
		return fail(tb, ENOMEM, "out of memory");
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
	b->shadow = prev == &cm_none ? NULL : prev;
	if (add_blob(tb, b, size) || u64map_put(&tb->live, rec.start, b)) {
		if (tb->nblobs && tb->blobs[tb->nblobs - 1] == b)
			tb->nblobs--;
		free(b);
		return fail(tb, ENOMEM, "out of memory");
	}
	tb->n.blobs++;
	return 0;
}

static int parse_unload(struct cm_tables *tb, const uint8_t *p, uint32_t len,
			uint64_t at, uint64_t t)
{
	struct cm_unload rec;
	struct cm_blob *head, *b, **link;

	if (len != sizeof(rec))
		return BAD("UNLOAD record has length %u, not %zu", at, len,
			   sizeof(rec));
	memcpy(&rec, p, sizeof(rec));
	tb->n.unloads++;
	head = u64map_get(&tb->live, rec.start);
	if (!head || head == &cm_none)
		return 0;	/* code we never saw loaded (late attach) */
	/* newest loaded blob at this start with a matching method */
	/* at most lim.blobs_at_start links (parse_code) */
	for (link = &head, b = head; b; link = &b->shadow, b = b->shadow,
	     tb->budget->steps++)
		if (!rec.method || !b->b.method || b->b.method == rec.method)
			break;
	if (!b)
		return 0;
	b->b.unload_ns = t < b->b.load_ns ? b->b.load_ns : t;
	*link = b->shadow;
	b->shadow = NULL;
	/* the table holds the chain head; head may have changed */
	if (u64map_put(&tb->live, rec.start, head ? head : &cm_none))
		return fail(tb, ENOMEM, "out of memory");
	return 0;
}

static int parse_stub(struct cm_tables *tb, const uint8_t *p, uint32_t len,
		      uint64_t at, uint64_t t)
{
	struct cm_stub rec;
	struct rd r = { p, len, sizeof(rec) };
	struct cm_blob *b, *prev;
	const char *s, *name;
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
	name = intern(tb, s, n);
	if (!name)
		return fail(tb, ENOMEM, "out of memory");
	/* the same stub again (a snapshot, a late attach's enumeration) */
	prev = u64map_get(&tb->stubs, CM_STUB_KEY(rec.start, rec.end));
	if (prev && (prev->b.start != rec.start || prev->b.end != rec.end))
		prev = NULL;	/* another range with the same key */
	if (prev && prev->b.end == rec.end && prev->b.kind == rec.kind &&
	    prev->b.name == name && prev->b.blob == rec.blob &&
	    prev->b.frame_size == rec.frame_size &&
	    prev->b.frame_complete == rec.frame_complete) {
		prev->epoch = tb->epoch;
		return 0;
	}
	if (tb->nblobs >= tb->budget->lim.blobs) {
		cm_budget__capped(tb->budget, "%u code blobs",
				  tb->budget->lim.blobs);
		return 0;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return fail(tb, ENOMEM, "out of memory");
	b->b.type = CODEMAP_BLOB_STUB;
	b->b.kind = rec.kind;
	b->b.start = rec.start;
	b->b.end = rec.end;
	b->b.blob = rec.blob;
	b->b.comp_level = -1;
	b->b.frame_size = rec.frame_size;
	b->b.frame_complete = rec.frame_complete;
	b->b.name = name;
	b->b.load_ns = t;
	b->b.unload_ns = UINT64_MAX;
	if (add_blob(tb, b, sizeof(*b)) ||
	    u64map_put(&tb->stubs, CM_STUB_KEY(rec.start, rec.end), b)) {
		if (tb->nblobs && tb->blobs[tb->nblobs - 1] == b)
			tb->nblobs--;
		free(b);
		return fail(tb, ENOMEM, "out of memory");
	}
	/* another stub over the same range: the old one's code is gone */
	if (prev && prev->b.unload_ns == UINT64_MAX)
		prev->b.unload_ns = t < prev->b.load_ns ? prev->b.load_ns : t;
	tb->n.stubs++;
	return 0;
}

static int parse_thread(struct cm_tables *tb, const uint8_t *p, uint32_t len,
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
	cur = u64map_get(&tb->thash, rec.tid);
	if (rec.flags & CM_THREAD_END) {
		/* the tid's records: at most lim.tid_records (below) */
		for (th = cur; th; th = th->older, tb->budget->steps++)
			if (th->t.end_ns == UINT64_MAX &&
			    (!rec.java_thread || !th->t.java_thread ||
			     rec.java_thread == th->t.java_thread))
				break;
		if (th) {
			th->t.end_ns = t < th->t.start_ns ? th->t.start_ns : t;
			tb->nlive--;
			if (tb->thread_fn)
				tb->thread_fn(tb->thread_ctx, &th->t, false);
			return 0;
		}
		/* an end without a start (attached late): keep the name */
	} else if (cur && cur->t.end_ns == UINT64_MAX &&
		   cur->t.java_thread == rec.java_thread &&
		   (rec.java_thread || cur->t.flags == rec.flags)) {
		/* the same live thread reported again (enumerated at start-up
		 * and by its ThreadStart): one thread, the latest name */
		const char *name = intern(tb, s, n);

		if (!name)
			return fail(tb, ENOMEM, "out of memory");
		cur->t.name = name;
		cur->t.flags = rec.flags;
		cur->epoch = tb->epoch;
		if (tb->thread_fn)
			tb->thread_fn(tb->thread_ctx, &cur->t, true);
		return 0;
	}
	/*
	 * Budgets: the records of one tid are a chain that a thread's end
	 * and each sample's thread lookup walk (a real JVM has one, a few
	 * more when the kernel reuses the tid within the retention), and the
	 * live threads are held until their end.
	 */
	if (cur && cur->depth >= tb->budget->lim.tid_records) {
		cm_budget__capped(tb->budget,
				  "%u thread records for one thread id (%u)",
				  tb->budget->lim.tid_records, rec.tid);
		return 0;
	}
	if (!(rec.flags & CM_THREAD_END) &&
	    tb->nlive >= tb->budget->lim.live_threads) {
		cm_budget__capped(tb->budget, "%u live threads",
				  tb->budget->lim.live_threads);
		return 0;
	}
	th = calloc(1, sizeof(*th));
	if (!th)
		return fail(tb, ENOMEM, "out of memory");
	th->t.tid = rec.tid;
	th->t.flags = rec.flags & ~CM_THREAD_END;
	th->t.java_thread = rec.java_thread;
	th->t.name = intern(tb, s, n);
	th->t.start_ns = (rec.flags & CM_THREAD_END) ? 0 : t;
	th->t.end_ns = (rec.flags & CM_THREAD_END) ? t : UINT64_MAX;
	th->older = cur;
	th->depth = cur ? cur->depth + 1 : 1;
	th->epoch = tb->epoch;
	if (!th->t.name ||
	    array__grow((void **)&tb->threads, &tb->capt, tb->nthreads + 1,
		       sizeof(*tb->threads)) ||
	    u64map_put(&tb->thash, rec.tid, th)) {
		free(th);
		return fail(tb, ENOMEM, "out of memory");
	}
	tb->threads[tb->nthreads++] = th;
	tb->mem += cm_alloc_bytes(sizeof(*th));
	tb->n.threads++;
	if (th->t.end_ns == UINT64_MAX)
		tb->nlive++;
	if (tb->thread_fn)
		tb->thread_fn(tb->thread_ctx, &th->t,
			      th->t.end_ns == UINT64_MAX);
	return 0;
}

static int parse_cont(struct cm_tables *tb, const uint8_t *p, uint32_t len,
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
	if (tb->have_cont && memcmp(&c.entry_cont, &tb->cont.entry_cont,
				    sizeof(c) - sizeof(c.h)))
		return BAD("a second CONT record differs from the first", at);
	tb->cont = c;
	tb->have_cont = true;
	return 0;
}

/* ---- version 3: strings, classes and compact methods ---------------------- */

#define CM_ID_MAX		0xffffffffull

struct vr {
	const uint8_t *p, *end;
};

static bool vr_get(struct vr *r, uint64_t *v)
{
	return cm_varint_get(&r->p, r->end, v);
}

/* the entries end at the record's padding to 8, which is zero */
static bool vr_end_ok(const struct vr *r, const uint8_t *rec, uint32_t len)
{
	size_t off = (size_t)(r->p - rec);

	if (ALIGN_UP(off, 8) != len)
		return false;
	for (; off < len; off++)
		if (rec[off])
			return false;
	return true;
}

static uint64_t id_slot(uint32_t k, size_t cap)
{
	uint64_t h = k * 0x9E3779B97F4A7C15ull;

	return (h ^ (h >> 29)) & (cap - 1);
}

/* the number of id k: true and *v, or false when not defined */
static bool idmap_get(const struct cm_idmap *m, uint64_t k, uint32_t *v)
{
	if (!m->cap || !k || k > CM_ID_MAX)
		return false;
	for (size_t i = id_slot((uint32_t)k, m->cap); m->kv[i][0];
	     i = (i + 1) & (m->cap - 1))
		if (m->kv[i][0] == k) {
			*v = m->kv[i][1];
			return true;
		}
	return false;
}

/* define id k (1 .. CM_ID_MAX, not defined yet) as v; 0 or -ENOMEM */
static int idmap_put(struct cm_idmap *m, uint32_t k, uint32_t v)
{
	size_t i;

	if ((m->n + 1) * 4 > m->cap * 3) {
		struct cm_idmap nm = { .cap = m->cap ? m->cap * 2 : 256 };

		nm.kv = calloc(nm.cap, sizeof(*nm.kv));
		if (!nm.kv)
			return -ENOMEM;
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->kv[j][0])
				continue;
			for (i = id_slot(m->kv[j][0], nm.cap); nm.kv[i][0];
			     i = (i + 1) & (nm.cap - 1))
				;
			nm.kv[i][0] = m->kv[j][0];
			nm.kv[i][1] = m->kv[j][1];
		}
		nm.n = m->n;
		free(m->kv);
		*m = nm;
	}
	for (i = id_slot(k, m->cap); m->kv[i][0]; i = (i + 1) & (m->cap - 1))
		;
	m->kv[i][0] = k;
	m->kv[i][1] = v;
	m->n++;
	return 0;
}

static void ids_reset(struct cm_tables *tb)
{
	free(tb->sids.kv);
	free(tb->cids.kv);
	memset(&tb->sids, 0, sizeof(tb->sids));
	memset(&tb->cids, 0, sizeof(tb->cids));
}

static size_t ids_bytes(const struct cm_tables *tb)
{
	return cm_arr_bytes(tb->sids.cap, sizeof(*tb->sids.kv)) +
	       cm_arr_bytes(tb->cids.cap, sizeof(*tb->cids.kv));
}

/* the text of a string id, NULL when not defined */
static const char *sid_text(const struct cm_tables *tb, uint64_t id)
{
	uint32_t num;

	return idmap_get(&tb->sids, id, &num) ? cm_store__str(&tb->store, num) : NULL;
}

static int parse_strings(struct cm_tables *tb, const uint8_t *p, uint32_t len,
			 uint64_t at)
{
	struct cm_strings rec;

	if (len < sizeof(rec))
		return BAD("STRINGS record of %u bytes is shorter than %zu", at,
			   len, sizeof(rec));
	memcpy(&rec, p, sizeof(rec));
	if (rec.pad)
		return BAD("STRINGS record has pad 0x%x", at, rec.pad);
	/* checked whole first, then applied */
	for (int apply = 0; apply < 2; apply++) {
		struct vr r = { p + sizeof(rec), p + len };

		for (uint32_t i = 0; i < rec.count; i++) {
			uint64_t id, n;
			const char *old;

			if (!vr_get(&r, &id) || !vr_get(&r, &n) ||
			    n > (uint64_t)(r.end - r.p))
				return BAD("STRINGS record's entry %u overruns the record",
					   at, i);
			if (!id || id > CM_ID_MAX)
				return BAD("STRINGS record's entry %u has id %" PRIu64,
					   at, i, id);
			if (n > CM_STR_MAX)
				return BAD("STRINGS record's entry %u is %" PRIu64 " bytes long",
					   at, i, n);
			old = sid_text(tb, id);
			if (!apply && old &&
			    (strlen(old) != n || memcmp(old, r.p, (size_t)n)))
				return BAD("STRINGS record defines string id %" PRIu64 " again with another text",
					   at, id);
			if (apply && !old) {
				uint32_t num;

				if (cm_store__str_num(&tb->store, (const char *)r.p, (size_t)n,
					       &num) ||
				    idmap_put(&tb->sids, (uint32_t)id, num))
					return fail(tb, ENOMEM, "out of memory");
				tb->n.strings++;
			}
			r.p += n;
		}
		if (!vr_end_ok(&r, p, len))
			return BAD("STRINGS record has bytes after its %u entries",
				   at, rec.count);
	}
	return 0;
}

static int parse_classes(struct cm_tables *tb, const uint8_t *p, uint32_t len,
			 uint64_t at)
{
	struct cm_classes rec;

	if (len < sizeof(rec))
		return BAD("CLASSES record of %u bytes is shorter than %zu", at,
			   len, sizeof(rec));
	memcpy(&rec, p, sizeof(rec));
	if (rec.pad)
		return BAD("CLASSES record has pad 0x%x", at, rec.pad);
	for (int apply = 0; apply < 2; apply++) {
		struct vr r = { p + sizeof(rec), p + len };

		for (uint32_t i = 0; i < rec.count; i++) {
			uint64_t id, name, src;
			uint32_t nn, sn = 0, cn, on;
			const char *ns;
			bool defined;

			if (!vr_get(&r, &id) || !vr_get(&r, &name) ||
			    !vr_get(&r, &src))
				return BAD("CLASSES record's entry %u overruns the record",
					   at, i);
			if (!id || id > CM_ID_MAX)
				return BAD("CLASSES record's entry %u has id %" PRIu64,
					   at, i, id);
			ns = idmap_get(&tb->sids, name, &nn) ? cm_store__str(&tb->store, nn) :
			     NULL;
			if (!ns || !*ns || (src && !idmap_get(&tb->sids, src, &sn)))
				return BAD("CLASSES record's entry %u names string id %" PRIu64 ", not defined or empty",
					   at, i, ns && *ns ? src : name);
			if (!src && cm_store__str_num(&tb->store, "", 0, &sn))
				return fail(tb, ENOMEM, "out of memory");
			/* a class number is its (name, source) */
			if (cm_store__class_num(&tb->store, nn, sn, &cn))
				return fail(tb, ENOMEM, "out of memory");
			defined = idmap_get(&tb->cids, id, &on);
			if (defined && on != cn)
				return BAD("CLASSES record defines class id %" PRIu64 " again as another class",
					   at, id);
			if (apply && !defined &&
			    idmap_put(&tb->cids, (uint32_t)id, cn))
				return fail(tb, ENOMEM, "out of memory");
			if (apply && !defined)
				tb->n.classes++;
		}
		if (!vr_end_ok(&r, p, len))
			return BAD("CLASSES record has bytes after its %u entries",
				   at, rec.count);
	}
	return 0;
}

/* a line-table coordinate: prev plus a zigzag delta, in [0, 2^32) */
static bool line_step(uint64_t z, uint32_t *prev)
{
	int64_t d = cm_unzigzag(z), v;

	if (d < -(int64_t)CM_ID_MAX || d > (int64_t)CM_ID_MAX)
		return false;
	v = (int64_t)*prev + d;
	if (v < 0 || v > (int64_t)CM_ID_MAX)
		return false;
	*prev = (uint32_t)v;
	return true;
}

/* entry i of a METHODS record at r into m, its lines into tb->lbuf */
static int method_entry(struct cm_tables *tb, struct vr *r,
			const struct cm_methods *rec, uint32_t i, uint64_t at,
			struct cm_mdesc *m)
{
	uint64_t d, z, cid, nid, gid, mods, flags, nl;
	uint32_t bci = 0, line = 0;
	const char *name, *sig;

	if (!vr_get(r, &d) || !vr_get(r, &z) || !vr_get(r, &cid) ||
	    !vr_get(r, &nid) || !vr_get(r, &gid) || !vr_get(r, &mods) ||
	    !vr_get(r, &flags) || !vr_get(r, &nl))
		return BAD("METHODS record's entry %u overruns the record", at,
			   i);
	if (d > UINT64_MAX - rec->base || !(rec->base + d))
		return BAD("METHODS record's entry %u has a Method* out of range",
			   at, i);
	memset(m, 0, sizeof(*m));
	m->method = rec->base + d;
	m->const_method = m->method + (uint64_t)cm_unzigzag(z);
	if (!idmap_get(&tb->cids, cid, &m->klass))
		return BAD("METHODS record's entry %u names class id %" PRIu64 ", not defined",
			   at, i, cid);
	if (!idmap_get(&tb->sids, nid, &m->name) ||
	    !idmap_get(&tb->sids, gid, &m->sig) ||
	    !(name = cm_store__str(&tb->store, m->name)) || !(sig = cm_store__str(&tb->store, m->sig)) ||
	    !*name || !*sig)
		return BAD("METHODS record's entry %u names a string id not defined or empty",
			   at, i);
	if (mods > CM_ID_MAX)
		return BAD("METHODS record's entry %u has modifiers 0x%" PRIx64,
			   at, i, mods);
	if (flags & ~(uint64_t)CM_METHOD_NATIVE)
		return BAD("METHODS record's entry %u has unknown flags 0x%" PRIx64,
			   at, i, flags);
	/* two bytes at least a line: a count the record cannot hold is bad
	 * before any room is taken for it */
	if (nl > CM_LINES_MAX || nl * 2 > (uint64_t)(r->end - r->p))
		return BAD("METHODS record's entry %u has n_lines %" PRIu64 ", more than fit",
			   at, i, nl);
	m->modifiers = (uint32_t)mods;
	m->flags = (uint32_t)flags;
	m->n_lines = (uint32_t)nl;
	if (lines_room(tb, (size_t)nl))
		return fail(tb, ENOMEM, "out of memory");
	for (uint32_t j = 0; j < m->n_lines; j++) {
		uint64_t zb, zl;

		if (!vr_get(r, &zb) || !vr_get(r, &zl))
			return BAD("METHODS record's entry %u's line table overruns the record",
				   at, i);
		if (!line_step(zb, &bci) || !line_step(zl, &line))
			return BAD("METHODS record's entry %u's line %u is out of range",
				   at, i, j);
		tb->lbuf[j].bci = bci;
		tb->lbuf[j].line = line;
	}
	return 0;
}

static int parse_methods(struct cm_tables *tb, const uint8_t *p, uint32_t len,
			 uint64_t at, uint64_t t)
{
	struct cm_methods rec;
	struct cm_mdesc m;
	int err;

	if (len < sizeof(rec))
		return BAD("METHODS record of %u bytes is shorter than %zu", at,
			   len, sizeof(rec));
	memcpy(&rec, p, sizeof(rec));
	if (rec.pad)
		return BAD("METHODS record has pad 0x%x", at, rec.pad);
	for (int apply = 0; apply < 2; apply++) {
		struct vr r = { p + sizeof(rec), p + len };

		for (uint32_t i = 0; i < rec.count; i++) {
			if ((err = method_entry(tb, &r, &rec, i, at, &m)))
				return err;
			if (apply && (err = cm_store__add(&tb->store, &m,
							 tb->lbuf, t)))
				return store_err(tb, err);
		}
		if (!vr_end_ok(&r, p, len))
			return BAD("METHODS record has bytes after its %u entries",
				   at, rec.count);
	}
	return 0;
}

/* a stamp no table has had: the recorder reads maps on one thread */
static void changed(struct cm_tables *tb, uint64_t t)
{
	static uint64_t next;

	tb->stamp = ++next;
	if (t > tb->last_ev_ns)
		tb->last_ev_ns = t;
}

uint64_t cm_tables__stamp(const struct cm_tables *tb, uint64_t *horizon)
{
	*horizon = tb->last_ev_ns > tb->pruned_before ? tb->last_ev_ns :
							tb->pruned_before;
	return tb->stamp;
}

int cm_tables__apply(struct cm_tables *tb, const uint8_t *p, uint32_t len,
		     uint64_t at)
{
	struct cm_rec_hdr h;
	int err;

	memcpy(&h, p, sizeof(h));
	switch (h.type) {
	case CM_REC_VM:
		err = parse_vm(tb, p, len, at);
		break;
	case CM_REC_METHOD:
		err = parse_method(tb, p, len, at, h.time_ns);
		break;
	case CM_REC_CODE:
		err = parse_code(tb, p, len, at, h.time_ns);
		break;
	case CM_REC_UNLOAD:
		err = parse_unload(tb, p, len, at, h.time_ns);
		break;
	case CM_REC_STUB:
		err = parse_stub(tb, p, len, at, h.time_ns);
		break;
	case CM_REC_THREAD:
		err = parse_thread(tb, p, len, at, h.time_ns);
		break;
	case CM_REC_CONT:
		err = parse_cont(tb, p, len, at);
		break;
	case CM_REC_STRINGS:
		err = parse_strings(tb, p, len, at);
		break;
	case CM_REC_CLASSES:
		err = parse_classes(tb, p, len, at);
		break;
	case CM_REC_METHODS:
		err = parse_methods(tb, p, len, at, h.time_ns);
		break;
	default:
		return BAD("unknown record type %u", at, h.type);
	}
	tb->seq++;
	changed(tb, h.time_ns);
	return err;
}

/* ---- blob index ------------------------------------------------------------ */

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

static uint64_t build_maxend(struct cm_tables *tb, size_t lo, size_t hi)
{
	size_t mid;
	uint64_t m, l, r;

	if (lo >= hi)
		return 0;
	mid = lo + (hi - lo) / 2;
	m = tb->sorted[mid]->b.end;
	l = build_maxend(tb, lo, mid);
	r = build_maxend(tb, mid + 1, hi);
	if (l > m)
		m = l;
	if (r > m)
		m = r;
	tb->maxend[mid] = m;
	return m;
}

int cm_tables__index(struct cm_tables *tb)
{
	size_t nnew = tb->nblobs - tb->nsorted, i = 0, j = 0, k = 0;
	struct cm_blob **fresh, **merged;
	uint64_t *maxend;

	if (!nnew)
		return 0;
	fresh = malloc(nnew * sizeof(*fresh));
	merged = malloc(tb->nblobs * sizeof(*merged));
	maxend = malloc(tb->nblobs * sizeof(*maxend));
	if (!fresh || !merged || !maxend) {
		free(fresh);
		free(merged);
		free(maxend);
		return fail(tb, ENOMEM, "out of memory");
	}
	memcpy(fresh, tb->blobs + tb->nsorted, nnew * sizeof(*fresh));
	qsort(fresh, nnew, sizeof(*fresh), blob_cmp);
	while (i < tb->nsorted && j < nnew)
		merged[k++] = blob_cmp(&tb->sorted[i], &fresh[j]) <= 0 ?
			      tb->sorted[i++] : fresh[j++];
	while (i < tb->nsorted)
		merged[k++] = tb->sorted[i++];
	while (j < nnew)
		merged[k++] = fresh[j++];
	free(fresh);
	free(tb->sorted);
	free(tb->maxend);
	tb->sorted = merged;
	tb->maxend = maxend;
	tb->nsorted = tb->nblobs;
	build_maxend(tb, 0, tb->nsorted);
	return 0;
}

/*
 * A lookup looks at every blob whose range holds pc (of any time): a real
 * JVM's code cache has a few at one pc (code unloaded and its address
 * reused within the retention). A map whose blobs pile up over one pc (a
 * forged one) would make each sample's lookup walk them all: past this
 * many the lookup gives up (counted, stats.find_cut) and the pc is
 * unknown code.
 */
#define CM_FIND_MAX		4096u
#define CM_TIME_NOW		(UINT64_MAX - 1)

struct find_ctx {
	uint64_t pc, t;
	uint32_t left;			/* blobs holding pc it may look at */
	bool cut;			/* there were more */
	const struct cm_blob *exact;	/* newest whose lifetime holds t */
	const struct cm_blob *later;	/* oldest loaded after t */
};

static bool newer(const struct cm_blob *a, const struct cm_blob *b)
{
	return a->b.load_ns != b->b.load_ns ? a->b.load_ns > b->b.load_ns :
					      a->seq > b->seq;
}

static void find_visit(const struct cm_tables *tb, size_t lo, size_t hi,
		       struct find_ctx *f)
{
	while (lo < hi && !f->cut) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cm_blob *b = tb->sorted[mid];

		if (tb->maxend[mid] <= f->pc)
			return;		/* nothing in this subtree reaches pc */
		find_visit(tb, lo, mid, f);
		if (b->b.start > f->pc || f->cut)
			return;		/* the right side starts later still */
		if (f->pc < b->b.end) {
			if (!f->left) {
				f->cut = true;
				return;
			}
			f->left--;
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

const struct codemap_blob *cm_tables__find(const struct cm_tables *tb,
					   uint64_t pc, uint64_t t)
{
	struct find_ctx f = { .pc = pc, .t = t ? t : CM_TIME_NOW,
			      .left = CM_FIND_MAX };

	if (!tb->nsorted)
		return NULL;
	find_visit(tb, 0, tb->nsorted, &f);
	if (f.cut) {
		/* lookups leave the tables as they are, but for this count */
		((struct cm_tables *)tb)->n.find_cut++;
		return NULL;
	}
	/*
	 * Nothing alive at t: JVMTI posts CompiledMethodLoad after the code
	 * was installed (and may already run), so the earliest blob loaded
	 * after t is what was there; unless t is before what was pruned,
	 * when the blob that was there may be gone.
	 */
	if (!f.exact && f.later && f.t < tb->pruned_before)
		return NULL;
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

const struct codemap_thread *cm_tables__thread(const struct cm_tables *tb,
					       uint32_t tid, uint64_t t)
{
	const struct cm_thr *th, *later = NULL;

	th = u64map_get(&tb->thash, tid);
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

/* ---- generations and retention --------------------------------------------- */

/* the live CODE chains and the stub table, from the blobs alive now */
static int relink(struct cm_tables *tb)
{
	u64map__free(&tb->live);
	u64map__free(&tb->stubs);
	for (size_t i = 0; i < tb->nblobs; i++) {
		struct cm_blob *b = tb->blobs[i];

		b->shadow = NULL;
		if (b->b.unload_ns != UINT64_MAX)
			continue;
		if (b->b.type == CODEMAP_BLOB_STUB) {
			if (u64map_put(&tb->stubs, CM_STUB_KEY(b->b.start, b->b.end), b))
				return fail(tb, ENOMEM, "out of memory");
			continue;
		}
		b->shadow = u64map_get(&tb->live, b->b.start);
		if (u64map_put(&tb->live, b->b.start, b))
			return fail(tb, ENOMEM, "out of memory");
	}
	return 0;
}

void cm_tables__next_generation(struct cm_tables *tb)
{
	ids_reset(tb);
	cm_store__unseen(&tb->store);
	tb->epoch++;
	changed(tb, 0);
}

/*
 * A snapshot was read whole: what these tables hold as alive and the
 * snapshot did not have died by its time (its unload record was dropped,
 * or was in a generation the reader missed).
 */
int cm_tables__reconcile(struct cm_tables *tb, uint64_t t)
{
	bool relinks = false;
	int err;

	changed(tb, t);
	for (size_t i = 0; i < tb->nblobs; i++) {
		struct cm_blob *b = tb->blobs[i];

		if (b->epoch == tb->epoch || b->b.unload_ns != UINT64_MAX)
			continue;
		b->b.unload_ns = t > b->b.load_ns ? t : b->b.load_ns;
		tb->n.reconciled++;
		relinks = true;
	}
	for (size_t i = 0; i < tb->nthreads; i++) {
		struct cm_thr *th = tb->threads[i];

		if (th->epoch == tb->epoch || th->t.end_ns != UINT64_MAX)
			continue;
		th->t.end_ns = t > th->t.start_ns ? t : th->t.start_ns;
		tb->nlive--;
		tb->n.reconciled++;
		if (tb->thread_fn)
			tb->thread_fn(tb->thread_ctx, &th->t, false);
	}
	if ((err = cm_store__reconcile(&tb->store, t)))
		return store_err(tb, err);
	return relinks ? relink(tb) : 0;
}

long cm_tables__prune(struct cm_tables *tb, uint64_t before)
{
	size_t k, freed = 0;
	long nm;

	if (before > tb->pruned_before)
		tb->pruned_before = before;
	k = 0;
	for (size_t i = 0; i < tb->nblobs; i++) {
		struct cm_blob *b = tb->blobs[i];

		if (b->b.unload_ns != UINT64_MAX && b->b.unload_ns < before) {
			tb->mem -= b->size;
			free(b);
			continue;
		}
		tb->blobs[k++] = b;
	}
	if (k != tb->nblobs) {
		int err;

		freed += tb->nblobs - k;
		tb->nblobs = k;
		free(tb->sorted);
		free(tb->maxend);
		tb->sorted = NULL;
		tb->maxend = NULL;
		tb->nsorted = 0;
		if ((err = relink(tb)) || (err = cm_tables__index(tb)))
			return err;
	}
	k = 0;
	for (size_t i = 0; i < tb->nthreads; i++) {
		struct cm_thr *th = tb->threads[i];

		if (th->t.end_ns != UINT64_MAX && th->t.end_ns < before) {
			tb->mem -= cm_alloc_bytes(sizeof(*th));
			free(th);
			continue;
		}
		tb->threads[k++] = th;
	}
	if (k != tb->nthreads) {
		freed += tb->nthreads - k;
		tb->nthreads = k;
		u64map__free(&tb->thash);
		for (size_t i = 0; i < k; i++) {
			struct cm_thr *th = tb->threads[i];

			th->older = u64map_get(&tb->thash, th->t.tid);
			th->depth = th->older ? th->older->depth + 1 : 1;
			if (u64map_put(&tb->thash, th->t.tid, th))
				return fail(tb, ENOMEM, "out of memory");
		}
	}
	nm = cm_store__prune(&tb->store, before);
	if (nm < 0)
		return store_err(tb, (int)nm);
	if (freed || nm)
		changed(tb, 0);
	return (long)freed + nm;
}

/* ---- the tables ------------------------------------------------------------- */

void cm_tables__set_thread_cb(struct cm_tables *tb, codemap_thread_fn fn,
			      void *ctx)
{
	tb->thread_fn = fn;
	tb->thread_ctx = ctx;
	if (!fn)
		return;
	/* the threads read so far, latest state of each */
	for (size_t i = 0; i < tb->nthreads; i++)
		fn(ctx, &tb->threads[i]->t,
		   tb->threads[i]->t.end_ns == UINT64_MAX);
}

void cm_tables__init(struct cm_tables *tb, struct cm_budget *budget)
{
	memset(tb, 0, sizeof(*tb));
	tb->budget = budget;
	cm_store__init(&tb->store, budget);
}

void cm_tables__free(struct cm_tables *tb)
{
	cm_store__free(&tb->store);
	for (size_t i = 0; i < tb->nblobs; i++)
		free(tb->blobs[i]);
	for (size_t i = 0; i < tb->nthreads; i++)
		free(tb->threads[i]);
	free(tb->blobs);
	free(tb->sorted);
	free(tb->maxend);
	free(tb->threads);
	ids_reset(tb);
	free(tb->lbuf);
	u64map__free(&tb->live);
	u64map__free(&tb->thash);
	u64map__free(&tb->stubs);
}

size_t cm_tables__bytes(const struct cm_tables *tb)
{
	return tb->mem + cm_store__bytes(&tb->store) +
	       cm_arr_bytes(tb->capb, sizeof(*tb->blobs)) +
	       cm_arr_bytes(tb->nsorted, sizeof(*tb->sorted)) +
	       cm_arr_bytes(tb->nsorted, sizeof(*tb->maxend)) +
	       cm_arr_bytes(tb->capt, sizeof(*tb->threads)) +
	       cm_map_bytes(&tb->live) + cm_map_bytes(&tb->thash) +
	       cm_map_bytes(&tb->stubs) + ids_bytes(tb) +
	       cm_arr_bytes(tb->lbufcap, sizeof(*tb->lbuf));
}
