// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JIT symbols from perf maps and jitdump files (see perfmap.h).
 *
 * New entries go to a batch; a lookup first paints the batch over the
 * ranges known so far: the batch is swept by address with a heap of its
 * entries by age (the newest covering entry names each stretch), and what
 * it covers is cut out of the older ranges. So the ranges stay disjoint and
 * sorted, and a lookup is one binary search. A JIT_CODE_MOVE paints a
 * tombstone over the old place and the name over the new one.
 *
 * Files are read incrementally: the bytes consumed so far are remembered
 * (up to the last complete line or record), a file that was replaced or
 * shrank starts everything afresh.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "symbols/perfmap.h"
#include "util/safe_open.h"
#include "util/u64map.h"

#define PM_NONE		UINT32_MAX	/* tombstone: the code moved away */
#define CHUNK		(1u << 20)	/* one pread; also the longest line */

enum { SRC_MAP = 0, SRC_DUMP = 1, NSRC };

/* jitdump layout (the format perf documents in jitdump-specification) */
#define JD_MAGIC	0x4A695444u	/* "JiTD" */
#define JD_MAGIC_SWAP	0x4454694Au
#define JD_HDR_SIZE	40
#define JD_HDR_MAX	4096
#define JD_REC_HDR	16
#define JD_CODE_LOAD	0
#define JD_CODE_MOVE	1
#define JD_CODE_CLOSE	3
#define JD_LOAD_FIXED	56		/* record header + fixed fields */
#define JD_MOVE_SIZE	64

struct pm_ent {			/* a batch entry */
	uint64_t start, end;
	uint32_t name;		/* offset in names, or PM_NONE */
	uint32_t seq;		/* age: larger is newer */
	uint8_t src;
};

struct pm_seg {			/* a painted range */
	uint64_t start, end;
	uint32_t name;
	uint8_t src;
};

struct pm_file {
	char path[PATH_MAX];	/* as the process sees it; "" none */
	dev_t dev;
	ino_t ino;
	bool known;		/* dev/ino are of the file read so far */
	uint64_t done;		/* bytes consumed */
	bool skip_line;		/* inside an over-long line */
	bool stopped;		/* bad record or limit: read no more */
	bool hdr;		/* jitdump: header read */
	bool swap;		/* jitdump: other byte order */
	bool bad;		/* stopped at a malformed record */
	int warned;		/* the last reason warned about */
};

struct perfmap {
	pid_t pid, nspid;
	uid_t uids[5];
	int nuids;
	bool absent;		/* no file at the last refresh */
	uint64_t next_ns;	/* rate limit */
	uint64_t reset_ns;	/* the last time a file was read afresh */
	struct pm_file f[NSRC];
	struct pm_seg *seg;
	size_t nseg;
	struct pm_ent *batch;
	size_t nbatch, capbatch;
	char *names;
	size_t nlen, ncap;
	struct u64map index;	/* jitdump code_index -> name offset + 1 */
	uint32_t seq;
	struct perfmap_stats st;
};

/* NSpid (last: the innermost namespace) and the users of pid */
static int read_status(struct perfmap *pm)
{
	char path[64], line[512];
	unsigned long r, e, s, fs;
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d", (int)pm->pid);
	if (stat(path, &st))
		return -errno;
	pm->uids[pm->nuids++] = st.st_uid;
	pm->nspid = pm->pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pm->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %lu %lu %lu %lu", &r, &e, &s, &fs) == 4) {
			pm->uids[pm->nuids++] = (uid_t)r;
			pm->uids[pm->nuids++] = (uid_t)e;
			pm->uids[pm->nuids++] = (uid_t)fs;
		} else if (!strncmp(line, "NSpid:", 6)) {
			char *p = line + 6, *end;
			long v;

			for (;;) {
				v = strtol(p, &end, 10);
				if (end == p)
					break;
				if (v > 0 && v <= INT_MAX)
					pm->nspid = (pid_t)v;
				p = end;
			}
		}
	}
	fclose(f);
	return 0;
}

struct perfmap *perfmap__new(pid_t pid)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->pid = pid;
	/* a process gone already: the refresh finds no root, nothing is read */
	if (pid > 0)
		read_status(pm);
	snprintf(pm->f[SRC_MAP].path, sizeof(pm->f[SRC_MAP].path),
		 "/tmp/perf-%d.map", (int)pm->nspid);
	return pm;
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	free(pm->seg);
	free(pm->batch);
	free(pm->names);
	u64map__free(&pm->index);
	free(pm);
}

void perfmap__stats(const struct perfmap *pm, struct perfmap_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!pm)
		return;
	*out = pm->st;
	out->ranges = pm->nseg;
}

/* ---- entries ------------------------------------------------------------- */

/* what limit was reached, for the one warning */
static void set_capped(struct perfmap *pm, const char *what)
{
	if (!pm->st.capped && pm->pid > 0)
		fprintf(stderr, "warning: pid %d: %s: later JIT symbols are not read (their frames stay addresses)\n",
			(int)pm->pid, what);
	pm->st.capped = true;
}

#define CAP_ENTRIES	"more than 1048576 JIT symbols"
#define CAP_NAMES	"more than 64 MiB of JIT symbol names"
#define CAP_MAP		"a perf map of more than 64 MiB"
#define CAP_DUMP	"a jitdump of more than 1 GiB"

/* a name into the arena: its offset, or PM_NONE when full */
static uint32_t add_name(struct perfmap *pm, const char *s, size_t n)
{
	uint32_t off;

	if (pm->nlen + n + 1 > PERFMAP_MAX_BYTES) {
		set_capped(pm, CAP_NAMES);
		return PM_NONE;
	}
	if (pm->nlen + n + 1 > pm->ncap) {
		size_t cap = pm->ncap ? pm->ncap * 2 : 4096;
		char *p;

		while (cap < pm->nlen + n + 1)
			cap *= 2;
		if (cap > PERFMAP_MAX_BYTES)
			cap = PERFMAP_MAX_BYTES;
		p = realloc(pm->names, cap);
		if (!p)
			return PM_NONE;
		pm->names = p;
		pm->ncap = cap;
	}
	off = (uint32_t)pm->nlen;
	memcpy(pm->names + off, s, n);
	pm->names[off + n] = '\0';
	pm->nlen += n + 1;
	return off;
}

/* [start, start + size) named by name (PM_NONE: a tombstone); 0 or -errno */
static int add_ent(struct perfmap *pm, uint64_t start, uint64_t size,
		   uint32_t name, uint8_t src)
{
	struct pm_ent *e;

	if (pm->st.entries >= PERFMAP_MAX_ENTRIES) {
		set_capped(pm, CAP_ENTRIES);
		return -ENOSPC;
	}
	if (pm->nbatch == pm->capbatch) {
		size_t cap = pm->capbatch ? pm->capbatch * 2 : 256;

		e = realloc(pm->batch, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		pm->batch = e;
		pm->capbatch = cap;
	}
	e = &pm->batch[pm->nbatch++];
	e->start = start;
	e->end = start + size;
	e->name = name;
	e->seq = pm->seq++;
	e->src = src;
	pm->st.entries++;
	return 0;
}

static int add_named(struct perfmap *pm, uint64_t start, uint64_t size,
		     const char *name, size_t n, uint8_t src, uint32_t *off)
{
	uint32_t o;

	if (n > PERFMAP_NAME_MAX)
		n = PERFMAP_NAME_MAX;	/* a name, not a payload */
	if (pm->st.entries >= PERFMAP_MAX_ENTRIES) {
		set_capped(pm, CAP_ENTRIES);
		return -ENOSPC;
	}
	o = add_name(pm, name, n);
	if (o == PM_NONE)
		return -ENOSPC;
	if (off)
		*off = o;
	return add_ent(pm, start, size, o, src);
}

static int ent_cmp(const void *a, const void *b)
{
	const struct pm_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* max-heap of batch indices by seq */
static void heap_push(uint32_t *h, size_t *n, const struct pm_ent *b, uint32_t v)
{
	size_t i = (*n)++;

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (b[h[p]].seq >= b[v].seq)
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n, const struct pm_ent *b)
{
	uint32_t v = h[--(*n)];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && b[h[c + 1]].seq > b[h[c]].seq)
			c++;
		if (b[h[c]].seq <= b[v].seq)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

static void seg_emit(struct pm_seg *out, size_t *n, uint64_t s, uint64_t e,
		     uint32_t name, uint8_t src)
{
	struct pm_seg *l = *n ? &out[*n - 1] : NULL;

	if (l && l->end == s && l->name == name && l->src == src) {
		l->end = e;
		return;
	}
	out[*n].start = s;
	out[*n].end = e;
	out[*n].name = name;
	out[*n].src = src;
	(*n)++;
}

/* the batch, newest wins, as disjoint sorted ranges (tombstones kept) */
static size_t paint_batch(struct pm_ent *b, size_t n, struct pm_seg *out,
			  uint32_t *heap)
{
	size_t i = 0, hn = 0, k = 0;
	uint64_t x = 0;

	qsort(b, n, sizeof(*b), ent_cmp);
	while (i < n || hn) {
		uint64_t next;
		uint32_t t;

		if (!hn)
			x = b[i].start;
		while (i < n && b[i].start <= x)
			heap_push(heap, &hn, b, (uint32_t)i++);
		while (hn && b[heap[0]].end <= x)
			heap_pop(heap, &hn, b);
		if (!hn)
			continue;
		t = heap[0];
		next = b[t].end;
		if (i < n && b[i].start < next)
			next = b[i].start;
		seg_emit(out, &k, x, next, b[t].name, b[t].src);
		x = next;
	}
	return k;
}

/* paint the batch over the ranges; 0 or -ENOMEM (the batch is kept) */
static int commit(struct perfmap *pm)
{
	struct pm_seg *nb = NULL, *pieces = NULL, *out = NULL;
	size_t nn, np = 0, no = 0, i, j = 0, k;
	uint32_t *heap = NULL;
	int err = -ENOMEM;

	if (!pm->nbatch)
		return 0;
	nb = malloc(2 * pm->nbatch * sizeof(*nb));
	heap = malloc(pm->nbatch * sizeof(*heap));
	pieces = malloc((pm->nseg + 2 * pm->nbatch + 1) * sizeof(*pieces));
	out = malloc((pm->nseg + 4 * pm->nbatch + 1) * sizeof(*out));
	if (!nb || !heap || !pieces || !out)
		goto cleanup;
	nn = paint_batch(pm->batch, pm->nbatch, nb, heap);
	/* the old ranges minus all the batch covers */
	for (i = 0; i < pm->nseg; i++) {
		const struct pm_seg *o = &pm->seg[i];
		uint64_t cur = o->start;

		while (j < nn && nb[j].end <= o->start)
			j++;
		for (k = j; k < nn && nb[k].start < o->end; k++) {
			if (nb[k].start > cur)
				seg_emit(pieces, &np, cur, nb[k].start, o->name, o->src);
			if (nb[k].end > cur)
				cur = nb[k].end;
		}
		if (cur < o->end)
			seg_emit(pieces, &np, cur, o->end, o->name, o->src);
	}
	/* both are sorted and disjoint: merge, dropping tombstones */
	for (i = 0, j = 0; i < np || j < nn;) {
		if (j == nn || (i < np && pieces[i].start < nb[j].start)) {
			out[no++] = pieces[i++];
			continue;
		}
		if (nb[j].name != PM_NONE)
			out[no++] = nb[j];
		j++;
	}
	free(pm->seg);
	pm->seg = out;
	pm->nseg = no;
	pm->nbatch = 0;
	out = NULL;
	err = 0;
cleanup:
	free(nb);
	free(heap);
	free(pieces);
	free(out);
	return err;
}

const char *perfmap__find(struct perfmap *pm, uint64_t pc, const char **file)
{
	size_t lo = 0, hi;
	const struct pm_seg *s;

	if (!pm)
		return NULL;
	commit(pm);
	hi = pm->nseg;
	/* the last range starting at or before pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->seg[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &pm->seg[lo - 1];
	if (pc >= s->end || s->name == PM_NONE)
		return NULL;
	if (file)
		*file = pm->f[s->src].path;
	return pm->names + s->name;
}

/* ---- perf map text --------------------------------------------------------- */

static bool hex_u64(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end; s++, n++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (n == 16)
			return false;	/* more than 64 bits */
		v = v << 4 | (uint64_t)d;
	}
	if (!n)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool skip_blanks(const char **p, const char *end)
{
	const char *s = *p;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == *p)
		return false;
	*p = s;
	return true;
}

/* one line without its newline: "START SIZE NAME" */
static void parse_line(struct perfmap *pm, const char *s, size_t len)
{
	const char *p = s, *end = s + len;
	uint64_t start, size;

	while (end > p && (end[-1] == '\r' || end[-1] == ' ' ||
			   end[-1] == '\t'))
		end--;
	if (p == end)
		return;		/* an empty line */
	if (!hex_u64(&p, end, &start) || !skip_blanks(&p, end) ||
	    !hex_u64(&p, end, &size) || !skip_blanks(&p, end) || p == end ||
	    size == 0 || start + size < start || memchr(p, '\0', end - p)) {
		pm->st.bad_lines++;
		return;
	}
	add_named(pm, start, size, p, end - p, SRC_MAP, NULL);
}

static size_t add_text(struct perfmap *pm, const char *text, size_t len)
{
	size_t off = 0;

	while (off < len && !pm->st.capped) {
		const char *nl = memchr(text + off, '\n', len - off);

		if (!nl)
			break;
		parse_line(pm, text + off, nl - (text + off));
		off = nl - text + 1;
	}
	return off;
}

size_t perfmap__add_text(struct perfmap *pm, const char *text, size_t len)
{
	return pm ? add_text(pm, text, len) : 0;
}

/* ---- jitdump ------------------------------------------------------------------ */

static uint32_t rd32(const struct pm_file *f, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return f->swap ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const struct pm_file *f, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return f->swap ? __builtin_bswap64(v) : v;
}

/* the file header: its size (records start there), or -EINVAL */
static int jd_header(struct pm_file *f, const uint8_t *p, size_t len)
{
	uint32_t magic, size;

	if (len < JD_HDR_SIZE)
		return -EINVAL;
	memcpy(&magic, p, sizeof(magic));
	if (magic != JD_MAGIC && magic != JD_MAGIC_SWAP)
		return -EINVAL;
	f->swap = magic == JD_MAGIC_SWAP;
	size = rd32(f, p + 8);
	if (rd32(f, p + 4) < 1 || size < JD_HDR_SIZE || size > JD_HDR_MAX)
		return -EINVAL;
	f->hdr = true;
	return (int)size;
}

static void jd_load(struct perfmap *pm, const uint8_t *r, uint32_t size,
		    const struct pm_file *f)
{
	const char *name = (const char *)r + JD_LOAD_FIXED;
	const char *nul = memchr(name, '\0', size - JD_LOAD_FIXED);
	uint64_t addr = rd64(f, r + 32), len = rd64(f, r + 40);
	uint64_t index = rd64(f, r + 48);
	uint32_t off;

	if (!nul || nul == name || len == 0 || addr + len < addr) {
		pm->st.bad_lines++;
		return;
	}
	if (add_named(pm, addr, len, name, nul - name, SRC_DUMP, &off))
		return;
	/* for a later move; a full map keeps what it has */
	u64map__put(&pm->index, index, (uint64_t)off + 1);
}

static void jd_move(struct perfmap *pm, const uint8_t *r,
		    const struct pm_file *f)
{
	uint64_t from = rd64(f, r + 32), to = rd64(f, r + 40);
	uint64_t len = rd64(f, r + 48), index = rd64(f, r + 56);
	uint64_t v = u64map__get(&pm->index, index);

	if (!v || len == 0 || from + len < from || to + len < to) {
		pm->st.bad_lines++;
		return;
	}
	/* the old place holds no code of that name any more */
	if (add_ent(pm, from, len, PM_NONE, SRC_DUMP) ||
	    add_ent(pm, to, len, (uint32_t)(v - 1), SRC_DUMP))
		return;
	pm->st.moves++;
}

/*
 * Records in buf (len bytes read of avail bytes left in the file, from a
 * record's start): the bytes consumed, which may pass len (a record's code
 * is skipped unread). *more: the next record's fixed part and name are not
 * all in buf. A record shorter than its header stops the file.
 */
static uint64_t jd_records(struct perfmap *pm, struct pm_file *f,
			   const uint8_t *buf, size_t len, uint64_t avail,
			   bool *more)
{
	uint64_t off = 0;

	*more = false;
	while (!f->stopped && !pm->st.capped) {
		const uint8_t *r = buf + off;
		uint32_t id, size;
		size_t inbuf;

		if (off + JD_REC_HDR > len) {
			*more = off + JD_REC_HDR <= avail;
			break;
		}
		id = rd32(f, r);
		size = rd32(f, r + 4);
		if (size < JD_REC_HDR) {
			/* no way to the next record */
			f->stopped = f->bad = true;
			pm->st.bad_lines++;
			break;
		}
		if (size > avail - off)
			break;			/* still being written */
		inbuf = len - off < size ? len - off : size;
		if (id == JD_CODE_LOAD) {
			const uint8_t *nul = inbuf > JD_LOAD_FIXED ?
				memchr(r + JD_LOAD_FIXED, '\0',
				       inbuf - JD_LOAD_FIXED) : NULL;

			if (size <= JD_LOAD_FIXED) {
				pm->st.bad_lines++;
			} else if (!nul && inbuf < size) {
				*more = true;	/* read on from this record */
				break;
			} else {
				jd_load(pm, r, (uint32_t)inbuf, f);
			}
		} else if (id == JD_CODE_MOVE) {
			if (size < JD_MOVE_SIZE) {
				pm->st.bad_lines++;
			} else if (inbuf < JD_MOVE_SIZE) {
				*more = true;
				break;
			} else {
				jd_move(pm, r, f);
			}
		} else if (id == JD_CODE_CLOSE) {
			f->stopped = true;
			off += size;
			break;
		}
		off += size;
		if (off >= len)
			break;
	}
	return off;
}

int perfmap__add_jitdump(struct perfmap *pm, const void *data, size_t len)
{
	struct pm_file *f;
	bool more;
	int h;

	if (!pm)
		return -EINVAL;
	f = &pm->f[SRC_DUMP];
	h = jd_header(f, data, len);
	if (h < 0 || (size_t)h > len)
		return -EINVAL;
	f->stopped = false;
	jd_records(pm, f, (const uint8_t *)data + h, len - h, len - h, &more);
	return 0;
}

/* ---- files ------------------------------------------------------------------------- */

static void warn(struct perfmap *pm, struct pm_file *f, int err,
		 const char *why)
{
	if (f->warned == err || pm->pid <= 0)
		return;
	f->warned = err;
	fprintf(stderr, "warning: pid %d: %s: %s: its JIT frames stay addresses\n",
		(int)pm->pid, f->path, why);
}

/* everything read so far is void: a file was replaced or truncated */
static void reset(struct perfmap *pm)
{
	free(pm->seg);
	pm->seg = NULL;
	pm->nseg = 0;
	pm->nbatch = 0;
	pm->nlen = 0;
	u64map__free(&pm->index);
	memset(&pm->index, 0, sizeof(pm->index));
	for (int i = 0; i < NSRC; i++) {
		pm->f[i].known = false;
		pm->f[i].done = 0;
		pm->f[i].skip_line = false;
		pm->f[i].stopped = false;
		pm->f[i].hdr = false;
		pm->f[i].bad = false;
	}
	pm->st.entries = 0;
	pm->st.capped = false;
	pm->st.map_bytes = pm->st.dump_bytes = 0;
}

/* a file of one of the process's users (root's only for a process that
 * runs as root: a root file linked to its path is none of its) */
static bool owner_ok(const struct perfmap *pm, uid_t uid)
{
	if (pm->pid <= 0)
		return true;
	for (int i = 0; i < pm->nuids; i++)
		if (pm->uids[i] == uid)
			return true;
	return false;
}

static int open_file(struct perfmap *pm, int root_fd, struct pm_file *f,
		     struct stat *st)
{
	char why[SAFE_OPEN_WHY_MAX + 64];
	int fd;

	fd = safe_open(root_fd, f->path, SAFE_OPEN_NOFOLLOW, UINT64_MAX, st,
		       why, sizeof(why));
	if (fd < 0) {
		if (fd != -ENOENT)
			warn(pm, f, fd, why);
		return fd;
	}
	if (!owner_ok(pm, st->st_uid)) {
		snprintf(why, sizeof(why),
			 "owned by uid %u, not by the process's user (refused)",
			 (unsigned)st->st_uid);
		warn(pm, f, -EPERM, why);
		close(fd);
		return -EPERM;
	}
	if (f->known && (st->st_dev != f->dev || st->st_ino != f->ino ||
			 (uint64_t)st->st_size < f->done)) {
		uint64_t now = clock__mono_ns();

		if (pm->reset_ns &&
		    now < pm->reset_ns + PERFMAP_RESET_MIN_MS * 1000000ull) {
			/* keep what was read until then */
			pm->st.resets_put_off++;
			close(fd);
			return -EAGAIN;
		}
		pm->reset_ns = now;
		pm->st.resets++;
		reset(pm);
	}
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->known = true;
	return fd;
}

static int read_map(struct perfmap *pm, struct pm_file *f, int fd,
		    uint64_t size, char *buf)
{
	while (f->done < size && !pm->st.capped) {
		uint64_t want = size - f->done;
		size_t off = 0, used;
		ssize_t got;

		if (f->done >= PERFMAP_MAX_BYTES) {
			set_capped(pm, CAP_MAP);
			break;
		}
		if (want > PERFMAP_MAX_BYTES - f->done)
			want = PERFMAP_MAX_BYTES - f->done;
		if (want > CHUNK)
			want = CHUNK;
		got = pread(fd, buf, want, (off_t)f->done);
		if (got < 0)
			return -errno;
		if (got == 0)
			break;		/* shrank while read: the next refresh */
		if (f->skip_line) {
			const char *nl = memchr(buf, '\n', got);

			if (!nl) {
				f->done += got;
				continue;
			}
			off = nl - buf + 1;
			f->skip_line = false;
		}
		used = add_text(pm, buf + off, got - off);
		if (!off && !used) {
			if (f->done + got >= PERFMAP_MAX_BYTES) {
				set_capped(pm, CAP_MAP);
				break;
			}
			if (got < CHUNK)
				break;	/* a last line not written whole yet */
			/* a line longer than CHUNK: no name is that long */
			pm->st.bad_lines++;
			f->skip_line = true;
			used = got;
		}
		f->done += off + used;
		pm->st.map_bytes = f->done;
	}
	return 0;
}

static int read_dump(struct perfmap *pm, struct pm_file *f, int fd,
		     uint64_t size, uint8_t *buf)
{
	ssize_t got;
	int h;

	if (!f->hdr) {
		got = pread(fd, buf, JD_HDR_MAX, 0);
		if (got < 0)
			return -errno;
		if (got < JD_HDR_SIZE)
			return 0;	/* not written yet */
		h = jd_header(f, buf, got);
		if (h < 0 || h > got) {
			f->stopped = true;
			warn(pm, f, -EINVAL, "not a jitdump file (bad header)");
			return -EINVAL;
		}
		f->done = (uint64_t)h;
	}
	while (f->done < size && !f->stopped && !pm->st.capped) {
		uint64_t want = size - f->done, used;
		bool more;

		if (f->done >= PERFMAP_JITDUMP_MAX) {
			set_capped(pm, CAP_DUMP);
			break;
		}
		if (want > CHUNK)
			want = CHUNK;
		got = pread(fd, buf, want, (off_t)f->done);
		if (got < 0)
			return -errno;
		if (got == 0)
			break;
		used = jd_records(pm, f, buf, got, size - f->done, &more);
		if (!used) {
			if (more && got == CHUNK) {
				/* a name longer than CHUNK: nothing to sync on */
				f->stopped = f->bad = true;
				pm->st.bad_lines++;
			}
			break;
		}
		f->done += used;
		pm->st.dump_bytes = f->done;
	}
	if (f->bad)
		warn(pm, f, -EBADMSG, "malformed record (the rest is not read)");
	return 0;
}

static int refresh_file(struct perfmap *pm, int root_fd, int src, void *buf)
{
	struct pm_file *f = &pm->f[src];
	struct stat st;
	int fd, err;

	fd = open_file(pm, root_fd, f, &st);
	if (fd < 0)
		return fd;
	f->warned = 0;
	if ((uint64_t)st.st_size > f->done && !f->stopped) {
		pm->st.reads++;
		err = src == SRC_MAP ? read_map(pm, f, fd, st.st_size, buf) :
		      read_dump(pm, f, fd, st.st_size, buf);
	} else {
		err = 0;
	}
	close(fd);
	return err;
}

int perfmap__refresh(struct perfmap *pm, int root_fd, const char *jitdump)
{
	void *buf = NULL;
	int own = -1, err, err2 = -ENOENT;

	if (!pm || pm->pid <= 0)
		return -EINVAL;
	if (jitdump && strcmp(jitdump, pm->f[SRC_DUMP].path)) {
		if (pm->f[SRC_DUMP].path[0])
			reset(pm);	/* another dump: start afresh */
		snprintf(pm->f[SRC_DUMP].path, sizeof(pm->f[SRC_DUMP].path),
			 "%s", jitdump);
	}
	if (root_fd < 0) {
		own = safe_open__root(pm->pid);
		if (own < 0)
			return own;	/* gone: keep what was read */
		root_fd = own;
	}
	buf = malloc(CHUNK);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = refresh_file(pm, root_fd, SRC_MAP, buf);
	if (pm->f[SRC_DUMP].path[0])
		err2 = refresh_file(pm, root_fd, SRC_DUMP, buf);
	pm->absent = err == -ENOENT && err2 == -ENOENT;
	if (err && !err2)
		err = 0;
cleanup:
	free(buf);
	if (own >= 0)
		close(own);
	return err;
}

bool perfmap__due(struct perfmap *pm)
{
	uint64_t now = clock__mono_ns();

	if (!pm || now < pm->next_ns)
		return false;
	pm->next_ns = now + (pm->absent ? PERFMAP_ABSENT_MS : PERFMAP_REREAD_MS) *
		      1000000ull;
	return true;
}
