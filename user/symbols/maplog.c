// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-process executable mappings from the kernel's side-band records.
 * A chained hash of processes by pid; each holds its mappings sorted by
 * start and never overlapping (a new mapping cuts what it covers, as the
 * kernel's own map does).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "capture/sideband.h"
#include "symbols/maplog.h"
#include "symbols/maps.h"

#define BUCKETS		1024u

struct ml_ent {
	uint64_t start, end, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	uint32_t prot, flags;
	char *path;		/* "" for anonymous code */
};

struct ml_proc {
	struct ml_proc *next;
	uint32_t pid;
	uint32_t ppid;		/* from the fork record, 0: not known */
	bool whole;		/* seen from its exec (or a whole parent) */
	uint64_t image_ns;	/* when the current image began */
	uint64_t exit_ns;	/* 0: not exited */
	uint64_t touched_ns;	/* last change, for eviction */
	struct ml_ent *e;
	size_t n, cap;
	size_t bytes;		/* path bytes of e */
	/* the image before the last exec: a sample taken between fork and
	 * exec (decoded later) has its pcs there */
	struct ml_ent *old;
	size_t nold, old_bytes;
};

struct maplog {
	struct maplog_limits lim;
	struct ml_proc *b[BUCKETS];
	struct maplog_stats st;
};

static const struct maplog_limits default_limits = {
	.max_procs = 8192,
	.max_entries = 1024,
	.max_bytes = 16u << 20,
	.keep_ns = 5000000000ull,
};

struct maplog *maplog__new(const struct maplog_limits *lim)
{
	struct maplog *ml = calloc(1, sizeof(*ml));

	if (ml)
		ml->lim = lim ? *lim : default_limits;
	return ml;
}

static void clear_entries(struct maplog *ml, struct ml_proc *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->e[i].path);
	ml->st.entries -= p->n;
	ml->st.bytes -= p->bytes;
	p->bytes = 0;
	p->n = 0;
}

/* the current image becomes the previous one (an exec) */
static void retire_image(struct maplog *ml, struct ml_proc *p)
{
	for (size_t i = 0; i < p->nold; i++)
		free(p->old[i].path);
	free(p->old);
	ml->st.entries -= p->nold;
	ml->st.bytes -= p->old_bytes + p->nold * sizeof(*p->old);
	/* the array is cut to its length: capacity is not kept twice */
	ml->st.bytes -= (p->cap - p->n) * sizeof(*p->e);
	p->old = p->n ? realloc(p->e, p->n * sizeof(*p->e)) : NULL;
	if (p->n && !p->old)
		p->old = p->e;
	else if (!p->n)
		free(p->e);
	p->nold = p->n;
	p->old_bytes = p->bytes;
	p->e = NULL;
	p->n = p->cap = 0;
	p->bytes = 0;
}

static void proc_free(struct maplog *ml, struct ml_proc *p)
{
	clear_entries(ml, p);
	retire_image(ml, p);	/* frees the previous image */
	retire_image(ml, p);	/* ... and the (empty) current one */
	ml->st.bytes -= sizeof(*p);
	ml->st.procs--;
	free(p->e);
	free(p);
}

void maplog__free(struct maplog *ml)
{
	if (!ml)
		return;
	for (size_t i = 0; i < BUCKETS; i++) {
		struct ml_proc *p = ml->b[i], *next;

		for (; p; p = next) {
			next = p->next;
			proc_free(ml, p);
		}
	}
	free(ml);
}

static struct ml_proc **slot(struct maplog *ml, uint32_t pid)
{
	struct ml_proc **pp = &ml->b[(pid * 2654435761u) % BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

/* the process least recently changed goes */
static void evict_one(struct maplog *ml, const struct ml_proc *keep)
{
	struct ml_proc **best = NULL, *p;

	for (size_t i = 0; i < BUCKETS; i++)
		for (struct ml_proc **pp = &ml->b[i]; *pp; pp = &(*pp)->next)
			if (*pp != keep &&
			    (!best || (*pp)->touched_ns < (*best)->touched_ns))
				best = pp;
	if (!best)
		return;
	p = *best;
	*best = p->next;
	proc_free(ml, p);
	ml->st.evicted++;
}

static void enforce(struct maplog *ml, const struct ml_proc *keep)
{
	while (ml->st.procs > 1 && (ml->st.procs > ml->lim.max_procs ||
				    ml->st.bytes > ml->lim.max_bytes)) {
		uint64_t before = ml->st.procs;

		evict_one(ml, keep);
		if (ml->st.procs == before)
			break;
	}
}

static struct ml_proc *get(struct maplog *ml, uint32_t pid, bool create)
{
	struct ml_proc **pp = slot(ml, pid), *p;

	if (*pp || !create)
		return *pp;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	*pp = p;
	ml->st.procs++;
	ml->st.bytes += sizeof(*p);
	return p;
}

/* a new image (exec, or a fork's copy) from time t on; a fork's child
 * has no earlier image of its own (what the pid held was another's) */
static struct ml_proc *new_image(struct maplog *ml, uint32_t pid, uint64_t t,
				 bool keep_old)
{
	struct ml_proc *p = get(ml, pid, true);

	if (!p)
		return NULL;
	/* an exec or fork older than the image we hold: out of order */
	if (p->image_ns > t)
		return NULL;
	retire_image(ml, p);
	if (!keep_old)
		retire_image(ml, p);
	p->image_ns = t;
	p->exit_ns = 0;
	p->touched_ns = t;
	p->whole = false;
	p->ppid = 0;
	return p;
}

int maplog__exec(struct maplog *ml, uint32_t pid, uint64_t t)
{
	struct ml_proc *p;

	if (!ml || !pid)
		return 0;
	p = new_image(ml, pid, t, true);
	if (!p)
		return 0;
	p->whole = true;
	enforce(ml, p);
	return 0;
}

static int reserve(struct maplog *ml, struct ml_proc *p, size_t need)
{
	size_t cap = p->cap ? p->cap : 16;
	struct ml_ent *e;

	if (need <= p->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	e = realloc(p->e, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	ml->st.bytes += (cap - p->cap) * sizeof(*e);
	p->e = e;
	p->cap = cap;
	return 0;
}

static int copy_ent(struct ml_ent *to, const struct ml_ent *from)
{
	*to = *from;
	to->path = strdup(from->path);
	return to->path ? 0 : -ENOMEM;
}

int maplog__fork(struct maplog *ml, uint32_t pid, uint32_t ppid, uint64_t t)
{
	struct ml_proc *c, *parent;

	/* a new thread of the same process changes nothing */
	if (!ml || !pid || pid == ppid)
		return 0;
	c = new_image(ml, pid, t, false);
	if (!c)
		return 0;
	c->ppid = ppid;
	parent = get(ml, ppid, false);
	if (parent && parent->whole) {
		if (reserve(ml, c, parent->n))
			return -ENOMEM;
		for (size_t i = 0; i < parent->n; i++) {
			size_t b;

			if (copy_ent(&c->e[i], &parent->e[i]))
				return -ENOMEM;
			b = strlen(c->e[i].path) + 1;
			c->n++;
			c->bytes += b;
			ml->st.entries++;
			ml->st.bytes += b;
		}
		c->whole = true;
	}
	enforce(ml, c);
	return 0;
}

void maplog__exit(struct maplog *ml, uint32_t pid, uint64_t t)
{
	struct ml_proc *p = ml ? get(ml, pid, false) : NULL;

	if (p && t >= p->image_ns)
		p->exit_ns = t ? t : 1;
}

static void drop_at(struct maplog *ml, struct ml_proc *p, size_t i)
{
	ml->st.entries--;
	ml->st.bytes -= strlen(p->e[i].path) + 1;
	p->bytes -= strlen(p->e[i].path) + 1;
	free(p->e[i].path);
	memmove(&p->e[i], &p->e[i + 1], (p->n - i - 1) * sizeof(*p->e));
	p->n--;
}

/*
 * Cut [s, e) out of p's mappings: entries inside go, entries across an
 * end keep their outside part (their file offset moved along), an entry
 * around the whole range is split in two.
 */
static int cut(struct maplog *ml, struct ml_proc *p, uint64_t s, uint64_t e)
{
	for (size_t i = 0; i < p->n;) {
		struct ml_ent *x = &p->e[i];

		if (x->end <= s || x->start >= e) {
			i++;
			continue;
		}
		if (x->start >= s && x->end <= e) {
			drop_at(ml, p, i);
			continue;
		}
		if (x->start < s && x->end > e) {
			struct ml_ent right;

			if (reserve(ml, p, p->n + 1))
				return -ENOMEM;
			x = &p->e[i];
			if (copy_ent(&right, x))
				return -ENOMEM;
			right.pgoff += e - x->start;
			right.start = e;
			x->end = s;
			memmove(&p->e[i + 2], &p->e[i + 1],
				(p->n - i - 1) * sizeof(*p->e));
			p->e[i + 1] = right;
			p->n++;
			ml->st.entries++;
			p->bytes += strlen(right.path) + 1;
			ml->st.bytes += strlen(right.path) + 1;
			i += 2;
			continue;
		}
		if (x->start < s) {
			x->end = s;
		} else {
			x->pgoff += e - x->start;
			x->start = e;
		}
		i++;
	}
	return 0;
}

int maplog__mmap(struct maplog *ml, uint32_t pid, uint64_t t,
		 const struct maplog_map *m)
{
	struct ml_proc *p;
	struct ml_ent ne = { 0 };
	const char *path;
	size_t i;

	if (!ml || !m || !m->len || m->start + m->len < m->start ||
	    !(m->prot & PROT_EXEC))
		return 0;
	p = get(ml, pid, true);
	if (!p)
		return -ENOMEM;
	/* a mapping of the image before an exec we already took */
	if (t < p->image_ns)
		return 0;
	p->touched_ns = t;
	if (cut(ml, p, m->start, m->start + m->len))
		return -ENOMEM;
	if (p->n >= ml->lim.max_entries) {
		ml->st.refused++;
		return 0;
	}
	path = m->path ? m->path : "";
	/* /proc shows anonymous code with no name; a name that would break
	 * the text's lines is not kept either */
	if (!strcmp(path, "//anon") || strpbrk(path, "\n\r"))
		path = "";
	ne.start = m->start;
	ne.end = m->start + m->len;
	ne.pgoff = m->pgoff;
	ne.maj = m->maj;
	ne.min = m->min;
	ne.ino = m->ino;
	ne.prot = m->prot;
	ne.flags = m->flags;
	ne.path = strdup(path);
	if (!ne.path || reserve(ml, p, p->n + 1)) {
		free(ne.path);
		return -ENOMEM;
	}
	for (i = 0; i < p->n && p->e[i].start < ne.start; i++)
		;
	memmove(&p->e[i + 1], &p->e[i], (p->n - i) * sizeof(*p->e));
	p->e[i] = ne;
	p->n++;
	ml->st.entries++;
	p->bytes += strlen(path) + 1;
	ml->st.bytes += strlen(path) + 1;
	enforce(ml, p);
	return 0;
}

/* does x overlap a mapping of p's current image */
static bool overlaps(const struct ml_proc *p, const struct ml_ent *x)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->e[i].start < x->end && x->start < p->e[i].end)
			return true;
	return false;
}

int maplog__text(struct maplog *ml, uint32_t pid, char **text, size_t *len)
{
	struct ml_proc *p = ml ? get(ml, pid, false) : NULL;
	size_t cap = 0, n = 0;
	char *buf = NULL;

	*text = NULL;
	*len = 0;
	if (!p || !p->whole || !p->n)
		return -ENOENT;
	for (size_t i = 0; i < p->n; i++)
		cap += 100 + strlen(p->e[i].path);
	for (size_t i = 0; i < p->nold; i++)
		cap += 100 + strlen(p->old[i].path);
	buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	/* the image, then what the one before it had where it has nothing
	 * (maps__parse sorts the lines) */
	for (size_t i = 0; i < p->n + p->nold; i++) {
		const struct ml_ent *x = i < p->n ? &p->e[i] :
						    &p->old[i - p->n];
		int w;

		if (i >= p->n && overlaps(p, x))
			continue;
		w = snprintf(buf + n, cap + 1 - n,
			     "%llx-%llx %c%c%c%c %08llx %02x:%02x %llu %s\n",
			     (unsigned long long)x->start,
			     (unsigned long long)x->end,
			     x->prot & PROT_READ ? 'r' : '-',
			     x->prot & PROT_WRITE ? 'w' : '-',
			     x->prot & PROT_EXEC ? 'x' : '-',
			     x->flags & MAP_SHARED ? 's' : 'p',
			     (unsigned long long)x->pgoff, x->maj, x->min,
			     (unsigned long long)x->ino, x->path);
		if (w < 0 || (size_t)w > cap - n) {
			free(buf);
			return -EOVERFLOW;
		}
		n += w;
	}
	ml->st.served++;
	*text = buf;
	*len = n;
	return 0;
}

bool maplog__whole(struct maplog *ml, uint32_t pid)
{
	struct ml_proc *p = ml ? get(ml, pid, false) : NULL;

	return p && p->whole;
}

int maplog__seed(struct maplog *ml, uint32_t pid, uint64_t t,
		 const char *text, size_t len)
{
	struct maps mp = { 0 };
	struct ml_proc *p;
	int ret = 0;

	if (!ml || !pid)
		return 0;
	if (maplog__whole(ml, pid))
		return -EEXIST;
	if (maps__parse(text, len, &mp))
		return -ENOMEM;
	p = new_image(ml, pid, t, false);
	if (!p)
		goto cleanup;
	p->whole = true;
	for (size_t i = 0; i < mp.n && !ret; i++) {
		const struct maps_entry *e = &mp.e[i];
		struct maplog_map m = {
			.start = e->start, .len = e->end - e->start,
			.pgoff = e->pgoff, .maj = e->dev_major,
			.min = e->dev_minor, .ino = e->inode,
			.prot = (e->r ? PROT_READ : 0) |
				(e->w ? PROT_WRITE : 0) |
				(e->x ? PROT_EXEC : 0),
			.flags = e->shared ? MAP_SHARED : MAP_PRIVATE,
			.path = e->kind == MAPS_ANON ? "//anon" :
				e->deleted ? NULL : e->path,
		};
		char *del = NULL;

		/* /proc's " (deleted)" was cut off by the parser: put back */
		if (e->deleted && e->path &&
		    asprintf(&del, "%s (deleted)", e->path) < 0) {
			ret = -ENOMEM;
			break;
		}
		if (del)
			m.path = del;
		ret = maplog__mmap(ml, pid, t, &m);
		free(del);
	}
cleanup:
	maps__free(&mp);
	return ret;
}

uint32_t maplog__parent(struct maplog *ml, uint32_t pid)
{
	struct ml_proc *p = ml ? get(ml, pid, false) : NULL;

	return p ? p->ppid : 0;
}

int maplog__apply(const struct sideband_rec *r, void *ctx)
{
	struct maplog *ml = ctx;
	struct maplog_map m;

	switch (r->type) {
	case SIDEBAND_MMAP:
		m = (struct maplog_map){
			.start = r->start, .len = r->len, .pgoff = r->pgoff,
			.maj = r->maj, .min = r->min, .ino = r->ino,
			.prot = r->prot, .flags = r->flags, .path = r->path,
		};
		return maplog__mmap(ml, r->pid, r->time_ns, &m) ? 1 : 0;
	case SIDEBAND_EXEC:
		return maplog__exec(ml, r->pid, r->time_ns) ? 1 : 0;
	case SIDEBAND_FORK:
		return maplog__fork(ml, r->pid, r->ppid, r->time_ns) ? 1 : 0;
	case SIDEBAND_EXIT:
		/* the process ends with its last thread; the leader's exit
		 * is the one a pid is known by */
		if (r->pid == r->tid)
			maplog__exit(ml, r->pid, r->time_ns);
		return 0;
	}
	return 0;
}

void maplog__prune(struct maplog *ml, uint64_t now_ns)
{
	if (!ml)
		return;
	for (size_t i = 0; i < BUCKETS; i++) {
		struct ml_proc **pp = &ml->b[i];

		while (*pp) {
			struct ml_proc *p = *pp;

			if (p->exit_ns && now_ns > p->exit_ns &&
			    now_ns - p->exit_ns > ml->lim.keep_ns) {
				*pp = p->next;
				proc_free(ml, p);
			} else {
				pp = &p->next;
			}
		}
	}
}

void maplog__stats(const struct maplog *ml, struct maplog_stats *st)
{
	if (ml)
		*st = ml->st;
	else
		memset(st, 0, sizeof(*st));
}
