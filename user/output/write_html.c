// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HTML output: one self-contained interactive flame graph (docs/formats.md).
 * The stacks are merged into a call tree here, children sorted by name, and
 * embedded as compact JSON: frames (name, category, comp level) and nodes
 * in preorder as (frame, distance to parent, self samples) triples. The
 * page (res/flamegraph.*) computes totals, draws on a canvas only the
 * boxes at least a quarter pixel wide, and builds the reversed tree on
 * demand, so 100 000 distinct stacks stay interactive. A profile with
 * allocations or contended monitors has several weights (time, bytes,
 * objects, ns): one tree, a self value per weight, and the page a chooser.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "profile/profile.h"
#include "util/u64map.h"
#include "util/strtab.h"
#include "trace.h"
#include "output/evfamily.h"
#include "output/writers.h"

/*
 * The page, from res/: NUL-terminated strings the Makefile links in. In
 * the template a line {{css}}, {{data}} or {{js}} stands for that text,
 * which ends in a newline; no external resource, so the page works offline.
 */
extern const char res_flamegraph_html[], res_flamegraph_css[],
	res_flamegraph_js[];

/* frame categories: the page colours by these (order = index in "cats") */
enum cat {
	CAT_ROOT, CAT_PROCESS, CAT_KERNEL, CAT_NATIVE, CAT_JVM, CAT_STUB,
	CAT_INTERP, CAT_C1, CAT_C2, CAT_JAVA, CAT_INLINED, CAT_JNATIVE,
	CAT_UNKNOWN, CAT_CLASS, CAT_PYTHON, NCATS,
};

static const char *const cat_names[NCATS] = {
	"root", "process", "kernel", "native", "jvm", "stub", "interpreted",
	"c1", "c2", "java", "inlined", "java_native", "unknown", "class",
	"python",
};

/* the weights a page may show, in the chooser's order */
enum hweight { HW_TIME, HW_ALLOC_BYTES, HW_ALLOC_OBJECTS, HW_LOCK, HW_N };

static const char *const hweight_names[HW_N] = {
	"cpu/off-cpu time", "alloc bytes", "alloc objects", "lock time",
};

/* a stack's value in weight w (0 when it is another event's) */
static uint64_t hweight_value(const struct profile *p,
			      const struct profile_stack *ps, enum hweight w)
{
	enum ev_family fam = ev_family__of(&ps->trace);

	switch (w) {
	case HW_TIME:
		return fam == EVF_TIME ? profile__stack_value(p, ps) : 0;
	case HW_ALLOC_BYTES:
		return fam == EVF_ALLOC ? ps->alloc_bytes : 0;
	case HW_ALLOC_OBJECTS:
		return fam == EVF_ALLOC ? ps->alloc_objects : 0;
	case HW_LOCK:
		return fam == EVF_LOCK ? ps->weight_ns : 0;
	default:
		return 0;
	}
}

static enum cat frame_cat(const struct frame *f)
{
	switch (f->type) {
	case FRAME_KERNEL:
		return CAT_KERNEL;
	case FRAME_NON_JAVA:
		if (f->flags & FRAME_F_STUB)
			return CAT_STUB;
		return f->flags & FRAME_F_JVM_CPP ? CAT_JVM : CAT_NATIVE;
	case FRAME_JAVA:
		if (f->comp_level == 0)
			return CAT_INTERP;
		if (f->comp_level >= 1 && f->comp_level <= 3)
			return CAT_C1;
		return f->comp_level >= 4 ? CAT_C2 : CAT_JAVA;
	case FRAME_JAVA_INLINED:
		return CAT_INLINED;
	case FRAME_JAVA_NATIVE:
		return CAT_JNATIVE;
	case FRAME_CLASS:
		return CAT_CLASS;
	case FRAME_PYTHON:
		return CAT_PYTHON;
	default:
		return CAT_UNKNOWN;
	}
}

/* u64 -> u32 ids over the shared u64map; 0 means absent */
static uint32_t umap_get(const struct u64map *m, uint64_t k)
{
	return (uint32_t)u64map__get(m, k);
}

static int umap_put(struct u64map *m, uint64_t k, uint32_t v)
{
	return u64map__put(m, k, v);
}

struct hframe {
	uint32_t name;		/* index in names */
	uint8_t cat;
	int8_t comp_level;
};

struct hnode {
	uint32_t frame;
	uint32_t parent;
	uint32_t first, next;	/* children: creation order, 0 = none */
	uint64_t self[HW_N];	/* by enum hweight */
	int32_t bci, line;	/* -1 unknown, -2 differs between samples */
};

struct html {
	struct strtab *st;
	struct u64map name_ids;	/* interned name pointer -> index + 1 */
	const char **names;
	size_t nnames, cap_names;
	struct u64map frame_ids;	/* name << 16 | cat << 8 | level -> index + 1 */
	struct hframe *frames;
	size_t nframes, cap_frames;
	struct u64map node_ids;	/* parent << 32 | frame -> index + 1 */
	struct hnode *nodes;
	size_t nnodes, cap_nodes;
};

/* frame index of (name, cat, level); UINT32_MAX on allocation failure */
static uint32_t html_frame(struct html *h, const char *name, enum cat cat,
			   int comp_level)
{
	const char *is = strtab__intern(h->st, name);
	uint32_t ni, fi;
	uint64_t key;

	if (!is)
		return UINT32_MAX;
	ni = umap_get(&h->name_ids, (uintptr_t)is);
	if (!ni) {
		if (array__grow((void **)&h->names, &h->cap_names, h->nnames + 1, sizeof(*h->names)))
			return UINT32_MAX;
		h->names[h->nnames] = is;
		ni = ++h->nnames;
		if (umap_put(&h->name_ids, (uintptr_t)is, ni))
			return UINT32_MAX;
	}
	if (cat != CAT_INTERP && cat != CAT_C1 && cat != CAT_C2 && cat != CAT_JAVA &&
	    cat != CAT_INLINED)
		comp_level = -1;
	key = (uint64_t)(ni - 1) << 16 | (uint64_t)cat << 8 | (uint8_t)comp_level;
	fi = umap_get(&h->frame_ids, key);
	if (fi)
		return fi - 1;
	if (array__grow((void **)&h->frames, &h->cap_frames, h->nframes + 1, sizeof(*h->frames)))
		return UINT32_MAX;
	h->frames[h->nframes] = (struct hframe){ ni - 1, cat, (int8_t)comp_level };
	fi = ++h->nframes;
	if (umap_put(&h->frame_ids, key, fi))
		return UINT32_MAX;
	return fi - 1;
}

/* child of parent for frame; UINT32_MAX on allocation failure */
static uint32_t html_child(struct html *h, uint32_t parent, uint32_t frame,
			   int32_t bci, int32_t line)
{
	uint64_t key = (uint64_t)parent << 32 | frame;
	uint32_t id = umap_get(&h->node_ids, key);
	struct hnode *n;

	if (id) {
		n = &h->nodes[id - 1];
		if (n->bci != bci)
			n->bci = -2;
		if (n->line != line)
			n->line = -2;
		return id - 1;
	}
	if (h->nnodes >= UINT32_MAX - 1 ||
	    array__grow((void **)&h->nodes, &h->cap_nodes, h->nnodes + 1, sizeof(*h->nodes)))
		return UINT32_MAX;
	n = &h->nodes[h->nnodes];
	*n = (struct hnode){ .frame = frame, .parent = parent, .bci = bci,
			     .line = line };
	id = ++h->nnodes;
	if (umap_put(&h->node_ids, key, id))
		return UINT32_MAX;
	/* prepend: the order is fixed by sorting at output time */
	n->next = h->nodes[parent].first;
	h->nodes[parent].first = id - 1;
	return id - 1;
}

static int cmp_nodes(const void *a, const void *b, void *ctx)
{
	const struct html *h = ctx;
	const struct hnode *x = &h->nodes[*(const uint32_t *)a];
	const struct hnode *y = &h->nodes[*(const uint32_t *)b];
	const struct hframe *fx = &h->frames[x->frame];
	const struct hframe *fy = &h->frames[y->frame];
	int c = strcmp(h->names[fx->name], h->names[fy->name]);

	if (c)
		return c;
	return (int)fx->cat - (int)fy->cat ?: (int)fx->comp_level - (int)fy->comp_level;
}

/* nodes in preorder, children sorted by name: order[i] = node */
static int preorder(struct html *h, uint32_t *order)
{
	uint32_t *stack = malloc(h->nnodes * sizeof(*stack));
	uint32_t *kids = malloc(h->nnodes * sizeof(*kids));
	size_t sp = 0, out = 0;

	if (!stack || !kids) {
		free(stack);
		free(kids);
		return -ENOMEM;
	}
	stack[sp++] = 0;
	while (sp) {
		uint32_t n = stack[--sp], nk = 0;

		order[out++] = n;
		for (uint32_t c = h->nodes[n].first; c; c = h->nodes[c].next)
			kids[nk++] = c;
		qsort_r(kids, nk, sizeof(*kids), cmp_nodes, h);
		/* pushed last-first so the first child pops first */
		while (nk)
			stack[sp++] = kids[--nk];
	}
	free(stack);
	free(kids);
	return 0;
}

/*
 * A number as base-32 digits, most significant first: the last digit from
 * NUM_END, the others from NUM_MORE. Neither set needs escaping in JSON or
 * HTML; docs/formats.md describes the code.
 */
static const char NUM_MORE[] = "0123456789abcdefghijklmnopqrstuv";
static const char NUM_END[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZwxyz+/";

static void put_num(FILE *f, uint64_t v)
{
	char d[14];
	int n = 0;

	do {
		d[n++] = v & 31;
		v >>= 5;
	} while (v);
	while (n > 1)
		putc(NUM_MORE[(int)d[--n]], f);
	putc(NUM_END[(int)d[0]], f);
}

/* writes s up to the template line mark; returns what follows that line */
static const char *put_upto(FILE *f, const char *s, const char *mark)
{
	const char *m = strstr(s, mark);
	size_t n = m ? (size_t)(m - s) : strlen(s);

	fwrite(s, 1, n, f);
	return m ? m + strlen(mark) : s + n;
}

/* the weights p's events have, in order; how many */
static int html_weights(const struct profile *p, enum hweight *w)
{
	unsigned fams = ev_families(p);
	int n = 0;

	if (fams & EVF_BIT(EVF_TIME))
		w[n++] = HW_TIME;
	if (fams & EVF_BIT(EVF_ALLOC)) {
		w[n++] = HW_ALLOC_BYTES;
		w[n++] = HW_ALLOC_OBJECTS;
	}
	if (fams & EVF_BIT(EVF_LOCK))
		w[n++] = HW_LOCK;
	return n;
}

static const char *hweight_unit(const struct profile *p, enum hweight w)
{
	switch (w) {
	case HW_ALLOC_BYTES:
		return "bytes";
	case HW_ALLOC_OBJECTS:
		return "objects";
	case HW_LOCK:
		return "ns";
	default:
		return profile__timed(p) ? "us" : "samples";
	}
}

/*
 * With more than one weight, each one's self values of the nodes in
 * preorder (the number code of put_num()); "nodes" holds the first's.
 */
static void put_weights(FILE *f, const struct profile *p,
			const struct html *h, const uint32_t *order,
			const enum hweight *w, int nw)
{
	if (nw < 2)
		return;
	fputs(",\n\"weights\":[", f);
	for (int k = 0; k < nw; k++) {
		fprintf(f, "%s{\"name\":\"%s\",\"unit\":\"%s\",\"self\":\"",
			k ? "," : "", hweight_names[w[k]],
			hweight_unit(p, w[k]));
		for (size_t i = 0; i < h->nnodes; i++)
			put_num(f, h->nodes[order[i]].self[w[k]]);
		fputs("\"}", f);
	}
	putc(']', f);
}

int write_html(const struct profile *p, FILE *f)
{
	const struct profile_meta *m = profile__meta_const(p);
	struct html h = { 0 };
	uint32_t *order = NULL, *pos = NULL, root_frame;
	enum hweight w[HW_N];
	int nw = html_weights(p, w);
	const char *page;
	char name[4097];
	int err = -ENOMEM;

	h.st = strtab__new();
	if (!h.st)
		goto cleanup;
	root_frame = html_frame(&h, "all", CAT_ROOT, -1);
	if (root_frame == UINT32_MAX ||
	    array__grow((void **)&h.nodes, &h.cap_nodes, 1, sizeof(*h.nodes)))
		goto cleanup;
	h.nodes[0] = (struct hnode){ .frame = root_frame, .bci = -1, .line = -1 };
	h.nnodes = 1;

	for (size_t i = 0; i < profile__nstacks(p); i++) {
		const struct profile_stack *ps = profile__stack(p, i);
		const struct trace *t = &ps->trace;
		const char *comm = t->comm && *t->comm ? t->comm :
				   t->thread && *t->thread ? t->thread : "[unknown]";
		uint32_t fr = html_frame(&h, comm, CAT_PROCESS, -1), node;

		if (fr == UINT32_MAX)
			goto cleanup;
		node = html_child(&h, 0, fr, -1, -1);
		if (t->event == TRACE_EV_OFFCPU && node != UINT32_MAX) {
			fr = html_frame(&h, PROFILE_OFFCPU_FRAME, CAT_PROCESS, -1);
			if (fr == UINT32_MAX)
				goto cleanup;
			node = html_child(&h, node, fr, -1, -1);
		}
		for (uint32_t k = t->nframes; k-- > 0 && node != UINT32_MAX;) {
			const struct frame *fp = &t->frames[k];
			bool java = fp->type == FRAME_JAVA || fp->type == FRAME_JAVA_INLINED ||
				    fp->type == FRAME_JAVA_NATIVE;

			ev_frame_name(t, fp, name, sizeof(name), false);
			fr = html_frame(&h, name, frame_cat(fp), fp->comp_level);
			if (fr == UINT32_MAX)
				goto cleanup;
			/* a Python frame's line as a Java frame's (no bci) */
			node = html_child(&h, node, fr, java && fp->bci >= 0 ? fp->bci : -1,
					  (java || fp->type == FRAME_PYTHON) &&
					  fp->line >= 0 ? fp->line : -1);
		}
		if (node == UINT32_MAX)
			goto cleanup;
		for (int k = 0; k < nw; k++)
			h.nodes[node].self[w[k]] += hweight_value(p, ps, w[k]);
	}

	order = malloc(h.nnodes * sizeof(*order));
	pos = malloc(h.nnodes * sizeof(*pos));
	if (!order || !pos || preorder(&h, order))
		goto cleanup;
	for (size_t i = 0; i < h.nnodes; i++)
		pos[order[i]] = i;

	errno = 0;
	page = put_upto(f, res_flamegraph_html, "{{css}}\n");
	fputs(res_flamegraph_css, f);
	page = put_upto(f, page, "{{data}}\n");
	fprintf(f, "{\"v\":1,\"meta\":{\"frequency_hz\":%" PRIu32 ",\"duration_ns\":%"
		PRIu64 ",\"samples\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"stacks\":%zu,"
		"\"unit\":\"%s\"", m->frequency_hz, m->duration_ns, m->samples,
		m->lost, profile__nstacks(p), hweight_unit(p, w[0]));
	if (nw > 1)
		fprintf(f, ",\"alloc_events\":%" PRIu64 ",\"lock_events\":%"
			PRIu64, m->alloc_events, m->lock_events);
	fputs("},\n\"cats\":[", f);
	for (int c = 0; c < NCATS; c++)
		fprintf(f, "%s\"%s\"", c ? "," : "", cat_names[c]);
	fputs("],\n\"names\":[", f);
	for (size_t i = 0; i < h.nnames; i++) {
		if (i)
			putc(',', f);
		json__put_string(f, h.names[i], true);
	}
	fputs("],\n\"frames\":[", f);
	for (size_t i = 0; i < h.nframes; i++)
		fprintf(f, "%s%u,%u,%d", i ? "," : "", h.frames[i].name,
			h.frames[i].cat, h.frames[i].comp_level);
	/*
	 * Nodes in preorder (the parent is always earlier: send the distance
	 * back), five numbers each: frame, parent distance, self samples,
	 * bci + 2, line + 2, in the number code of put_num(). Half the size
	 * of a JSON array, and the page decodes it straight into typed
	 * arrays.
	 */
	fprintf(f, "],\n\"n\":%zu,\n\"nodes\":\"", h.nnodes);
	for (size_t i = 0; i < h.nnodes; i++) {
		const struct hnode *n = &h.nodes[order[i]];

		put_num(f, n->frame);
		put_num(f, i ? i - pos[n->parent] : 0);
		put_num(f, n->self[w[0]]);
		put_num(f, (uint64_t)(n->bci + 2));
		put_num(f, (uint64_t)(n->line + 2));
	}
	putc('"', f);
	put_weights(f, p, &h, order, w, nw);
	fputs("}\n", f);
	page = put_upto(f, page, "{{js}}\n");
	fputs(res_flamegraph_js, f);
	fputs(page, f);
	err = fflush(f) || ferror(f) ? -(errno ? errno : EIO) : 0;
cleanup:
	free(order);
	free(pos);
	free(h.names);
	free(h.frames);
	free(h.nodes);
	u64map__free(&h.name_ids);
	u64map__free(&h.frame_ids);
	u64map__free(&h.node_ids);
	strtab__free(h.st);
	return err;
}
