// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The raw recording file: see raw.h for the layout. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "capture/sample.h"
#include "profile/profile.h"
#include "decode/asgst.h"
#include "output/raw.h"
#include "util/err.h"
#include "util/outfile.h"
#include "util/strtab.h"
#include "trace.h"

#define STR_NULL	0xffffu
/*
 * The first u32 of a version-2 stacks chunk, where a version-1 chunk has
 * its first stack's pid (never this): a file's stacks chunk says its own
 * layout.
 */
#define RAW_STACKS_V2_TAG	0xfffffff2u

/*
 * A thread's last window (RAW_SAMPLE_REF, raw.h): the writer and the
 * reader each keep RAW_REF_SLOTS of them, the slot chosen by pid and tid,
 * and note every sample with a window they write or read in the same
 * order, so they hold the same bytes.
 */
struct ref_slot {
	uint32_t pid, tid;
	uint64_t sp;		/* the window's first byte's address */
	uint32_t len, cap;
	uint8_t *bytes;
};

struct raw_writer {
	FILE *f;
	char *path;
	struct outfile file;	/* f's, renamed to path when complete */
	int err;		/* first write error */
	struct ref_slot *refs;	/* RAW_REF_SLOTS; NULL: none written */
};

struct raw_reader {
	FILE *f;
	uint64_t size, pos;
	void *buf;
	size_t cap;
	struct ref_slot *refs;	/* version 4 files */
	uint64_t *rec;		/* a RAW_SAMPLE_REF's record, whole */
	size_t rec_cap;
};

static const uint8_t zeros[8];

static struct ref_slot *ref_slot(struct ref_slot *refs, uint32_t pid,
				 uint32_t tid)
{
	uint32_t k = (tid ^ (pid << 16) ^ (pid >> 16)) * 2654435761u;

	return &refs[k >> (32 - RAW_REF_SLOTS_BITS)];
}

static void refs__free(struct ref_slot *refs)
{
	if (!refs)
		return;
	for (unsigned int i = 0; i < RAW_REF_SLOTS; i++)
		free(refs[i].bytes);
	free(refs);
}

/* the window of s (parsed) becomes its thread's last; -ENOMEM: the slot
 * is emptied */
static int refs__note(struct ref_slot *refs, const struct sample *s)
{
	const struct asgst_sample_hdr *h = s->hdr;
	struct ref_slot *sl;

	if (!h->window_len)
		return 0;
	sl = ref_slot(refs, h->pid, h->tid);
	if (h->window_len > sl->cap) {
		uint8_t *nb = realloc(sl->bytes, h->window_len);

		if (!nb) {
			sl->pid = sl->tid = 0;
			sl->len = 0;
			return -ENOMEM;
		}
		sl->bytes = nb;
		sl->cap = h->window_len;
	}
	memcpy(sl->bytes, s->window, h->window_len);
	sl->pid = h->pid;
	sl->tid = h->tid;
	sl->sp = h->sp;
	sl->len = h->window_len;
	return 0;
}

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Bytes at the top of s's window (a multiple of 8) the same, at the same
 * addresses, as in its thread's last window: the frames further out than
 * the ones that changed since.
 */
static uint32_t refs__same_top(struct ref_slot *refs, const struct sample *s)
{
	const struct asgst_sample_hdr *h = s->hdr;
	const struct ref_slot *sl = ref_slot(refs, h->pid, h->tid);
	uint64_t end = h->sp + h->window_len, lo, n = 0;
	const uint8_t *a, *b;

	if (sl->pid != h->pid || sl->tid != h->tid || !sl->len ||
	    !h->window_len || end < h->sp || sl->sp + sl->len < sl->sp ||
	    end > sl->sp + sl->len || end <= sl->sp)
		return 0;
	lo = h->sp > sl->sp ? h->sp : sl->sp;
	a = s->window + h->window_len;
	b = sl->bytes + (end - sl->sp);
	while (n + 8 <= end - lo && load64(a - n - 8) == load64(b - n - 8))
		n += 8;
	return (uint32_t)n;
}

int raw_writer__open(struct raw_writer **out, const char *path, char *err,
		     size_t errlen)
{
	struct raw_file_hdr h = { .version = RAW_VERSION,
				  .hdr_size = sizeof(h) };
	struct raw_writer *w = calloc(1, sizeof(*w));
	int ret;

	if (!w || !(w->path = strdup(path))) {
		ret = err__set(err, errlen, -ENOMEM, "cannot write %s: %s",
			       path, strerror(ENOMEM));
		goto cleanup;
	}
	/* 0600: raw stack memory of every process sampled */
	ret = outfile__create(&w->file, path, err, errlen);
	if (ret)
		goto cleanup;
	w->f = w->file.f;
	/* without it every sample is written whole */
	w->refs = calloc(RAW_REF_SLOTS, sizeof(*w->refs));
	memcpy(h.magic, RAW_MAGIC, 8);
	if (fwrite(&h, sizeof(h), 1, w->f) != 1)
		w->err = -EIO;
	*out = w;
	w = NULL;
cleanup:
	if (w)
		free(w->path);
	free(w);
	return ret;
}

const char *raw_writer__path(const struct raw_writer *w)
{
	return w->path;
}

int raw_writer__chunkv(struct raw_writer *w, uint32_t type,
		       const struct iovec *iov, unsigned int n)
{
	struct raw_chunk c = { .type = type };
	size_t pad;

	for (unsigned int i = 0; i < n; i++)
		c.len += iov[i].iov_len;
	pad = (8 - (c.len & 7)) & 7;
	if (w->err)
		return w->err;
	errno = 0;
	if (fwrite(&c, sizeof(c), 1, w->f) != 1)
		goto fail;
	for (unsigned int i = 0; i < n; i++)
		if (iov[i].iov_len &&
		    fwrite(iov[i].iov_base, iov[i].iov_len, 1, w->f) != 1)
			goto fail;
	if (pad && fwrite(zeros, pad, 1, w->f) != 1)
		goto fail;
	return 0;
fail:
	w->err = errno ? -errno : -EIO;
	return w->err;
}

int raw_writer__chunk(struct raw_writer *w, uint32_t type, const void *a,
		      size_t alen, const void *b, size_t blen)
{
	struct iovec iov[2] = {
		{ .iov_base = (void *)a, .iov_len = alen },
		{ .iov_base = (void *)b, .iov_len = blen },
	};

	return raw_writer__chunkv(w, type, iov, 2);
}

/*
 * A record as it waits in the ring buffer holds the sampler's gap between
 * its stacks and its window (the room for the deepest stacks) and the
 * reservation's slack after its parts: the file gets the parts only, the
 * window moved down to right after the stacks, window_off, chunk_off and
 * py_off with it (as profile/pipeline.c's record_copy does, and as
 * bpf/sampler.h allows), so sample__parse reads the same parts back. The
 * top of the window its thread's last sample had the same goes as a
 * RAW_SAMPLE_REF without those bytes. A record not parsed, or of a header
 * this does not know, goes as it is.
 */
int raw_writer__sample(struct raw_writer *w, const void *rec, size_t len)
{
	const struct asgst_sample_hdr *h = rec;
	const uint8_t *p = rec;
	struct asgst_sample_hdr nh;
	struct raw_sample_ref ref;
	struct iovec iov[5];
	struct sample s;
	size_t used, head, woff, wend, gap = 0;
	uint32_t same = 0;
	unsigned int n = 0;
	int rc;

	if (sample__parse(rec, len, &s, NULL)) {
		/* the reader may parse what this could not (it reads the
		 * record aligned): its thread's window is not referred to
		 * until both have noted the next one */
		if (w->refs && len >= SAMPLE_HDR_MIN) {
			struct ref_slot *sl;
			/* pid, tid: rec may be unaligned */
			uint32_t id[2];

			memcpy(id, p + offsetof(struct asgst_sample_hdr, pid),
			       sizeof(id));
			sl = ref_slot(w->refs, id[0], id[1]);
			sl->pid = sl->tid = 0;
			sl->len = 0;
		}
		return raw_writer__chunk(w, RAW_SAMPLE, rec, len, NULL, 0);
	}
	used = sample__used_len(&s);
	if (used > len)
		used = len;
	head = (size_t)((const uint8_t *)(s.ustack + h->ustack_n) - p);
	woff = (size_t)(s.window - p);
	wend = woff + h->window_len;
	if (h->version >= 2 && h->hdr_size == sizeof(nh) && woff > head &&
	    woff <= used)
		gap = woff - head;
	if (gap) {
		nh = *h;
		nh.window_off = (uint32_t)head;
		if (nh.chunk_len)
			nh.chunk_off -= (uint32_t)gap;
		if (nh.version >= 4 && nh.py_n)
			nh.py_off -= (uint32_t)gap;
		iov[n++] = (struct iovec){ &nh, sizeof(nh) };
		iov[n++] = (struct iovec){ (void *)(h + 1), head - sizeof(nh) };
	} else {
		iov[n++] = (struct iovec){ (void *)rec, woff };
	}
	if (w->refs && wend <= used)
		same = refs__same_top(w->refs, &s);
	if (same >= RAW_REF_MIN) {
		ref = (struct raw_sample_ref){
			.pid = h->pid, .tid = h->tid,
			.cut = (uint32_t)(wend - gap - same),
			.omitted = same,
			.addr = h->sp + h->window_len - same,
		};
		iov[n++] = (struct iovec){ (void *)s.window,
					   h->window_len - same };
		iov[n++] = (struct iovec){ (void *)(p + wend), used - wend };
		memmove(iov + 1, iov, n * sizeof(*iov));
		iov[0] = (struct iovec){ &ref, sizeof(ref) };
		rc = raw_writer__chunkv(w, RAW_SAMPLE_REF, iov, n + 1);
	} else {
		iov[n++] = (struct iovec){ (void *)s.window, used - woff };
		rc = raw_writer__chunkv(w, RAW_SAMPLE, iov, n);
	}
	/* a failed note leaves the slot empty: never referred to */
	if (w->refs)
		refs__note(w->refs, &s);
	return rc;
}

/* a label of the process chunk's tail: u8 length + bytes (at most 64) */
static size_t put_label(char *p, const char *s, size_t max)
{
	size_t n = s ? strnlen(s, max) : 0;

	p[0] = (char)n;
	memcpy(p + 1, s ? s : "", n);
	return n + 1;
}

int raw_writer__proc(struct raw_writer *w, pid_t pid, bool is_jvm,
		     uint64_t jvm_from_seq, const char *comm, const char *maps,
		     size_t maps_len, const struct raw_proc_names *nm)
{
	struct raw_proc rp = {
		.pid = (uint32_t)pid,
		.flags = is_jvm ? RAW_PROC_JVM : 0,
		.comm_len = comm ? (uint32_t)strlen(comm) : 0,
		.maps_len = maps_len,
		.jvm_from_seq = jvm_from_seq,
	};
	/* the tail: container and pod labels, then (readers before them
	 * stop there) the service's and the process's names */
	bool names = nm && (nm->service || nm->process);
	bool labels = names || (nm && (nm->container_id || nm->pod_uid));
	size_t n = sizeof(rp) + rp.comm_len + maps_len +
		   (labels ? 2 + 2 * RAW_LABEL_MAX : 0) +
		   (names ? 2 + 2 * RAW_NAME_MAX : 0);
	char *buf = malloc(n);
	int rc;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, &rp, sizeof(rp));
	if (rp.comm_len)
		memcpy(buf + sizeof(rp), comm, rp.comm_len);
	if (maps_len)
		memcpy(buf + sizeof(rp) + rp.comm_len, maps, maps_len);
	n = sizeof(rp) + rp.comm_len + maps_len;
	if (labels) {
		n += put_label(buf + n, nm->container_id, RAW_LABEL_MAX);
		n += put_label(buf + n, nm->pod_uid, RAW_LABEL_MAX);
	}
	if (names) {
		n += put_label(buf + n, nm->service, RAW_NAME_MAX);
		n += put_label(buf + n, nm->process, RAW_NAME_MAX);
	}
	rc = raw_writer__chunk(w, RAW_PROC, buf, n, NULL, 0);
	free(buf);
	return rc;
}

/* ---- decoded stacks: a growable byte buffer and its reader ---- */

struct bytes {
	uint8_t *p;
	size_t n, cap;
	int err;
};

static void put(struct bytes *b, const void *v, size_t n)
{
	if (b->err)
		return;
	if (b->n + n > b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 4096;
		uint8_t *np;

		while (nc < b->n + n)
			nc *= 2;
		np = realloc(b->p, nc);
		if (!np) {
			b->err = -ENOMEM;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->n, v, n);
	b->n += n;
}

static void put_str(struct bytes *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	uint16_t len;

	if (n >= STR_NULL)
		n = STR_NULL - 1;
	len = s ? (uint16_t)n : STR_NULL;
	put(b, &len, sizeof(len));
	if (s)
		put(b, s, n);
}

struct raw_stack {
	uint32_t pid, tid;
	uint8_t kind;
	uint8_t state, event, flags;	/* trace_state/event, TRACE_F_*;
					   zero in files of before */
	int32_t error;
	uint64_t count, weight_ns;
	uint32_t nframes;
} __attribute__((packed));

/* version 2: after each raw_stack */
struct raw_stack_jvm {
	uint64_t alloc_bytes, alloc_objects;
} __attribute__((packed));

struct raw_frame {
	uint8_t type;
	int8_t comp_level;
	uint16_t flags;
	int32_t bci, line;
	uint64_t pc, offset;
} __attribute__((packed));

int raw_writer__stacks(struct raw_writer *w, const struct profile *p)
{
	struct bytes b = { 0 };
	uint32_t tag = RAW_STACKS_V2_TAG;
	int rc;

	put(&b, &tag, sizeof(tag));
	for (size_t i = 0; i < profile__nstacks(p); i++) {
		const struct profile_stack *s = profile__stack(p, i);
		const struct trace *t = &s->trace;
		struct raw_stack rs = {
			.pid = (uint32_t)t->pid, .tid = (uint32_t)t->tid,
			.kind = t->kind, .error = t->error,
			.state = t->state, .event = t->event,
			.flags = (uint8_t)t->flags,
			.count = s->count, .weight_ns = s->weight_ns,
			.nframes = t->nframes,
		};
		struct raw_stack_jvm rj = {
			.alloc_bytes = s->alloc_bytes,
			.alloc_objects = s->alloc_objects,
		};

		put(&b, &rs, sizeof(rs));
		put(&b, &rj, sizeof(rj));
		put_str(&b, t->comm);
		put_str(&b, t->thread);
		put_str(&b, t->error_name);
		put_str(&b, t->ev_class);
		for (uint32_t j = 0; j < t->nframes; j++) {
			const struct frame *f = &t->frames[j];
			struct raw_frame rf = {
				.type = f->type, .comp_level = f->comp_level,
				.flags = f->flags, .bci = f->bci,
				.line = f->line, .pc = f->pc,
				.offset = f->offset,
			};

			put(&b, &rf, sizeof(rf));
			put_str(&b, f->symbol);
			put_str(&b, f->module);
			put_str(&b, f->klass);
			put_str(&b, f->method);
			put_str(&b, f->signature);
			put_str(&b, f->source);
			put_str(&b, f->reason);
		}
	}
	rc = b.err ? b.err : raw_writer__chunk(w, RAW_STACKS, b.p, b.n, NULL, 0);
	free(b.p);
	return rc;
}

int raw_writer__close(struct raw_writer *w, const struct profile *p,
		      char *err, size_t errlen)
{
	int rc;

	if (!w)
		return 0;
	if (p) {
		const struct profile_meta *m = profile__meta_const(p);
		struct raw_meta rm = {
			.frequency_hz = m->frequency_hz,
			.duration_ns = m->duration_ns,
			.samples = m->samples,
			.lost = m->lost,
			.events = m->events,
			.offcpu_events = m->offcpu_events,
			.offcpu_lost = m->offcpu_lost,
			.end_ns = m->end_ns,
			.offcpu_capture_ns = m->offcpu_capture_ns,
			.alloc_events = m->alloc_events,
			.lock_events = m->lock_events,
			.jvm_ev_lost = m->jvm_ev_lost,
			.jvm_ev_throttled = m->jvm_ev_throttled,
			.alloc_interval = m->alloc_interval,
		};

		raw_writer__chunk(w, RAW_META, &rm, sizeof(rm), NULL, 0);
	}
	rc = w->err;
	if (rc) {
		/* a file missing chunks is not put in place */
		outfile__abort(&w->file);
		err__set(err, errlen, rc, "writing %s failed: %s", w->path,
			 strerror(-rc));
	} else {
		rc = outfile__commit(&w->file, err, errlen);
	}
	refs__free(w->refs);
	free(w->path);
	free(w);
	return rc;
}

void raw_writer__abort(struct raw_writer *w)
{
	if (!w)
		return;
	outfile__abort(&w->file);
	refs__free(w->refs);
	free(w->path);
	free(w);
}

/* ---- reader ---- */

int raw_reader__open(struct raw_reader **out, const char *path, char *err,
		     size_t errlen)
{
	struct raw_file_hdr h;
	struct raw_reader *r;
	struct stat st;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->f = fdopen(fd, "r"))) {
		close(fd);
		free(r);
		return -ENOMEM;
	}
	r->size = (uint64_t)st.st_size;
	if (fread(&h, sizeof(h), 1, r->f) != 1 ||
	    memcmp(h.magic, RAW_MAGIC, 8) != 0) {
		snprintf(err, errlen, "%s is not an asgst-bpf raw file (bad "
			 "magic); record one with -o FILE.asgst", path);
		goto bad;
	}
	if (h.version < RAW_VERSION_MIN || h.version > RAW_VERSION) {
		snprintf(err, errlen, "%s is a raw file of version %u; this "
			 "asgst-bpf reads versions %u to %u", path, h.version,
			 RAW_VERSION_MIN, RAW_VERSION);
		goto bad;
	}
	if (h.hdr_size < sizeof(h) || h.hdr_size > 4096 ||
	    h.hdr_size > r->size ||
	    fseek(r->f, (long)h.hdr_size, SEEK_SET)) {
		snprintf(err, errlen, "%s: bad header size %u", path,
			 h.hdr_size);
		goto bad;
	}
	r->pos = h.hdr_size;
	if (h.version >= 4 &&
	    !(r->refs = calloc(RAW_REF_SLOTS, sizeof(*r->refs)))) {
		snprintf(err, errlen, "reading %s: %s", path, strerror(ENOMEM));
		raw_reader__close(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
bad:
	raw_reader__close(r);
	return -EINVAL;
}

/*
 * A RAW_SAMPLE_REF's record put together in r->rec: its bytes with the
 * omitted ones from its thread's last window; checked to be that
 * thread's, at the top of the record's window, where the chunk says.
 */
static int reader__ref(struct raw_reader *r, const uint8_t *pay, uint64_t len,
		       const void **out, uint64_t *out_len, char *err,
		       size_t errlen)
{
	const struct asgst_sample_hdr *h;
	const struct ref_slot *sl;
	struct raw_sample_ref ref;
	struct sample s;
	uint64_t rest, total;
	uint8_t *rec;

	if (len < sizeof(ref)) {
		snprintf(err, errlen, "raw file corrupt at offset %llu: "
			 "sample chunk too short", (unsigned long long)r->pos);
		return -EINVAL;
	}
	memcpy(&ref, pay, sizeof(ref));
	rest = len - sizeof(ref);
	sl = ref_slot(r->refs, ref.pid, ref.tid);
	if (ref.cut > rest || !ref.omitted ||
	    ref.omitted > ASGST_MAX_WINDOW || sl->pid != ref.pid ||
	    sl->tid != ref.tid || ref.addr < sl->sp ||
	    ref.addr - sl->sp > sl->len ||
	    ref.omitted > sl->len - (ref.addr - sl->sp)) {
		snprintf(err, errlen, "raw file corrupt at offset %llu: a "
			 "sample refers to stack bytes no earlier sample of "
			 "thread %u had", (unsigned long long)r->pos, ref.tid);
		return -EINVAL;
	}
	total = rest + ref.omitted;
	if (total > r->rec_cap) {
		uint64_t *nb = malloc(total);

		if (!nb) {
			snprintf(err, errlen, "reading the raw file: %s",
				 strerror(ENOMEM));
			return -ENOMEM;
		}
		free(r->rec);
		r->rec = nb;
		r->rec_cap = total;
	}
	rec = (uint8_t *)r->rec;
	pay += sizeof(ref);
	memcpy(rec, pay, ref.cut);
	memcpy(rec + ref.cut, sl->bytes + (ref.addr - sl->sp), ref.omitted);
	memcpy(rec + ref.cut + ref.omitted, pay + ref.cut, rest - ref.cut);
	h = (const struct asgst_sample_hdr *)rec;
	if (sample__parse(rec, total, &s, NULL) || h->pid != ref.pid ||
	    h->tid != ref.tid || h->window_len < ref.omitted ||
	    (uint64_t)(s.window - rec) + h->window_len !=
		    (uint64_t)ref.cut + ref.omitted ||
	    h->sp + h->window_len - ref.omitted != ref.addr) {
		snprintf(err, errlen, "raw file corrupt at offset %llu: a "
			 "sample's stack bytes do not fit its record",
			 (unsigned long long)r->pos);
		return -EINVAL;
	}
	if (refs__note(r->refs, &s)) {
		snprintf(err, errlen, "reading the raw file: %s",
			 strerror(ENOMEM));
		return -ENOMEM;
	}
	*out = rec;
	*out_len = total;
	return 0;
}

int raw_reader__next(struct raw_reader *r, uint32_t *type,
		     const void **payload, uint64_t *len, char *err,
		     size_t errlen)
{
	struct raw_chunk c;
	uint64_t padded;

	if (r->pos == r->size)
		return 0;
	if (r->size - r->pos < sizeof(c) ||
	    fread(&c, sizeof(c), 1, r->f) != 1) {
		snprintf(err, errlen, "raw file truncated at offset %llu (a "
			 "chunk header is cut)", (unsigned long long)r->pos);
		return -EINVAL;
	}
	padded = (c.len + 7) & ~7ull;
	if (c.len > RAW_MAX_CHUNK ||
	    padded > r->size - r->pos - sizeof(c)) {
		snprintf(err, errlen, "raw file corrupt or truncated at offset "
			 "%llu: chunk of %llu bytes does not fit",
			 (unsigned long long)r->pos, (unsigned long long)c.len);
		return -EINVAL;
	}
	if (c.type < RAW_SAMPLE || c.type > RAW_SAMPLE_REF ||
	    (c.type == RAW_SAMPLE_REF && !r->refs)) {
		snprintf(err, errlen, "raw file corrupt at offset %llu: "
			 "unknown chunk type %u", (unsigned long long)r->pos,
			 c.type);
		return -EINVAL;
	}
	if (padded > r->cap) {
		void *nb = malloc(padded ? padded : 8);

		if (!nb)
			return -ENOMEM;
		free(r->buf);
		r->buf = nb;
		r->cap = padded;
	}
	if (padded && fread(r->buf, padded, 1, r->f) != 1) {
		snprintf(err, errlen, "raw file truncated at offset %llu",
			 (unsigned long long)r->pos);
		return -EINVAL;
	}
	*type = c.type;
	*payload = r->buf;
	*len = c.len;
	if (c.type == RAW_SAMPLE_REF) {
		int rc = reader__ref(r, r->buf, c.len, payload, len, err,
				     errlen);

		if (rc)
			return rc;
		*type = RAW_SAMPLE;
	} else if (c.type == RAW_SAMPLE && r->refs) {
		struct sample s;

		/* a record the writer noted as well (raw_writer__sample) */
		if (!sample__parse(r->buf, c.len, &s, NULL) &&
		    refs__note(r->refs, &s)) {
			snprintf(err, errlen, "reading the raw file: %s",
				 strerror(ENOMEM));
			return -ENOMEM;
		}
	}
	r->pos += sizeof(c) + padded;
	return 1;
}

void raw_reader__close(struct raw_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	refs__free(r->refs);
	free(r->rec);
	free(r->buf);
	free(r);
}

struct cursor {
	const uint8_t *p;
	uint64_t n, off;
	struct strtab *st;
	bool bad;
};

static void get(struct cursor *c, void *v, size_t n)
{
	if (c->bad || c->n - c->off < n) {
		c->bad = true;
		memset(v, 0, n);
		return;
	}
	memcpy(v, c->p + c->off, n);
	c->off += n;
}

static const char *get_str(struct cursor *c)
{
	uint16_t len;
	const char *s;

	get(c, &len, sizeof(len));
	if (c->bad || len == STR_NULL)
		return NULL;
	if (c->n - c->off < len) {
		c->bad = true;
		return NULL;
	}
	s = strtab__intern_n(c->st, (const char *)c->p + c->off, len);
	c->off += len;
	return s;
}

/* the JVMTI state bits a trace_state stands for (the file keeps only it) */
static int32_t raw_state_bits(uint8_t state, uint8_t kind)
{
	if (kind != TRACE_KIND_JAVA)
		return -1;
	switch (state) {
	case TRACE_STATE_BLOCKED:
		return ASGST_STATE_ALIVE | ASGST_STATE_BLOCKED;
	case TRACE_STATE_IN_NATIVE:
		return ASGST_STATE_ALIVE | ASGST_STATE_RUNNABLE |
		       ASGST_STATE_IN_NATIVE;
	default:
		return ASGST_STATE_ALIVE | ASGST_STATE_RUNNABLE;
	}
}

int raw__load_stacks(struct profile *p, const void *payload, uint64_t len)
{
	struct cursor c = { .p = payload, .n = len, .st = profile__strtab(p) };
	struct frame *frames = calloc(TRACE_MAX_FRAMES, sizeof(*frames));
	uint32_t tag = 0;
	bool v2;
	int rc = 0;

	if (!frames)
		return -ENOMEM;
	if (len >= sizeof(tag))
		memcpy(&tag, payload, sizeof(tag));
	v2 = tag == RAW_STACKS_V2_TAG;
	if (v2)
		c.off = sizeof(tag);
	while (!c.bad && c.off < c.n) {
		struct raw_stack rs;
		struct raw_stack_jvm rj = { 0 };
		struct profile_values v;
		struct trace t = { 0 };

		get(&c, &rs, sizeof(rs));
		if (v2)
			get(&c, &rj, sizeof(rj));
		/* a field out of range is a bad file, not its end */
		if (rs.nframes > TRACE_MAX_FRAMES ||
		    rs.kind > TRACE_KIND_JVM || rs.state > TRACE_STATE_BLOCKED ||
		    rs.event > (v2 ? TRACE_EV_LOCK : TRACE_EV_OFFCPU))
			c.bad = true;
		if (c.bad)
			break;
		t.state = rs.state;
		t.event = rs.event;
		t.flags = rs.flags;
		t.jvmti_state = raw_state_bits(rs.state, rs.kind);
		t.pid = (pid_t)rs.pid;
		t.tid = (pid_t)rs.tid;
		t.kind = rs.kind;
		t.error = rs.error;
		t.comm = get_str(&c);
		t.thread = get_str(&c);
		t.error_name = get_str(&c);
		if (v2)
			t.ev_class = get_str(&c);
		t.nframes = rs.nframes;
		t.frames = frames;
		for (uint32_t j = 0; j < rs.nframes && !c.bad; j++) {
			struct raw_frame rf;
			struct frame *f = &frames[j];

			get(&c, &rf, sizeof(rf));
			if (rf.type > (v2 ? FRAME_PYTHON : FRAME_KERNEL))
				c.bad = true;
			f->type = rf.type;
			f->comp_level = rf.comp_level;
			f->flags = rf.flags;
			f->bci = rf.bci;
			f->line = rf.line;
			f->pc = rf.pc;
			f->offset = rf.offset;
			f->symbol = get_str(&c);
			f->module = get_str(&c);
			f->klass = get_str(&c);
			f->method = get_str(&c);
			f->signature = get_str(&c);
			f->source = get_str(&c);
			f->reason = get_str(&c);
		}
		if (c.bad)
			break;
		v = (struct profile_values){
			.count = rs.count, .weight_ns = rs.weight_ns,
			.alloc_bytes = rj.alloc_bytes,
			.alloc_objects = rj.alloc_objects,
		};
		rc = profile__add_values(p, &t, &v);
		if (rc)
			break;
	}
	free(frames);
	if (!rc && c.bad)
		rc = -EINVAL;
	return rc;
}

/* one label of the tail into out (NUL-terminated); -EINVAL if bad */
static int take_label(const uint8_t **b, uint64_t *rest, char *out)
{
	size_t n;

	if (!*rest)
		return -EINVAL;
	n = (*b)[0];
	if (n > RAW_LABEL_MAX || n > *rest - 1)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = (char)(*b)[1 + i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		      c == '-'))
			return -EINVAL;
		out[i] = c;
	}
	out[n] = '\0';
	*b += n + 1;
	*rest -= n + 1;
	return 0;
}

/* one name of the tail (label-safe, as profile/service.h makes them) */
static int take_name(const uint8_t **b, uint64_t *rest, char *out)
{
	size_t n;

	if (!*rest)
		return -EINVAL;
	n = (*b)[0];
	if (n > RAW_NAME_MAX || n > *rest - 1)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = (char)(*b)[1 + i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z') || c == '-' || c == '.' ||
		      c == '_' || c == '/'))
			return -EINVAL;
		out[i] = c;
	}
	out[n] = '\0';
	*b += n + 1;
	*rest -= n + 1;
	return 0;
}

int raw__parse_proc(const void *payload, uint64_t len,
		    struct raw_proc_view *out, char *err, size_t errlen)
{
	const uint8_t *b = payload;
	struct raw_proc p;
	uint64_t rest;

	if (len < sizeof(p)) {
		snprintf(err, errlen, "process chunk of %llu bytes (the header "
			 "alone is %zu)", (unsigned long long)len, sizeof(p));
		return -EINVAL;
	}
	memcpy(&p, b, sizeof(p));
	/* each length against what is left, never a difference that wraps */
	rest = len - sizeof(p);
	if (p.comm_len > RAW_COMM_MAX || p.comm_len > rest) {
		snprintf(err, errlen, "process chunk: comm of %u bytes (at "
			 "most %d, %llu left)", p.comm_len, RAW_COMM_MAX,
			 (unsigned long long)rest);
		return -EINVAL;
	}
	rest -= p.comm_len;
	if (p.maps_len > rest) {
		snprintf(err, errlen, "process chunk: maps text of %llu bytes, "
			 "%llu left", (unsigned long long)p.maps_len,
			 (unsigned long long)rest);
		return -EINVAL;
	}
	if (p.pid > (uint32_t)INT32_MAX) {
		snprintf(err, errlen, "process chunk: pid %u", p.pid);
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	out->pid = (pid_t)p.pid;
	out->is_jvm = p.flags & RAW_PROC_JVM;
	out->jvm_from_seq = p.jvm_from_seq;
	memcpy(out->comm, b + sizeof(p), p.comm_len);
	out->comm[p.comm_len] = '\0';
	out->maps = (const char *)b + sizeof(p) + p.comm_len;
	out->maps_len = (size_t)p.maps_len;
	rest -= p.maps_len;
	b += sizeof(p) + p.comm_len + p.maps_len;
	if (rest && (take_label(&b, &rest, out->container_id) ||
		     take_label(&b, &rest, out->pod_uid))) {
		snprintf(err, errlen, "process chunk: a container label that "
			 "is not up to %d hex digits and dashes",
			 RAW_LABEL_MAX);
		return -EINVAL;
	}
	if (rest && (take_name(&b, &rest, out->service) ||
		     take_name(&b, &rest, out->process))) {
		snprintf(err, errlen, "process chunk: a service or process name "
			 "that is not up to %d of A-Z a-z 0-9 . _ / -",
			 RAW_NAME_MAX);
		return -EINVAL;
	}
	return 0;
}

int raw__parse_codemap(const void *payload, uint64_t len,
		       struct raw_codemap_view *out, char *err, size_t errlen)
{
	struct raw_codemap c;

	if (len < sizeof(c)) {
		snprintf(err, errlen, "code-map chunk of %llu bytes (the "
			 "header alone is %zu)", (unsigned long long)len,
			 sizeof(c));
		return -EINVAL;
	}
	memcpy(&c, payload, sizeof(c));
	if (c.offset > RAW_CODEMAP_MAX_OFF ||
	    len - sizeof(c) > RAW_CODEMAP_MAX_OFF - c.offset) {
		snprintf(err, errlen, "code-map chunk: %llu bytes at offset "
			 "%llu (a map ends by %llu)",
			 (unsigned long long)(len - sizeof(c)),
			 (unsigned long long)c.offset,
			 (unsigned long long)RAW_CODEMAP_MAX_OFF);
		return -EINVAL;
	}
	if (c.pid > (uint32_t)INT32_MAX) {
		snprintf(err, errlen, "code-map chunk: pid %u", c.pid);
		return -EINVAL;
	}
	out->pid = (pid_t)c.pid;
	out->offset = c.offset;
	out->bytes = (const uint8_t *)payload + sizeof(c);
	out->len = (size_t)(len - sizeof(c));
	return 0;
}

int raw_writer__pycode(struct raw_writer *w, pid_t pid,
		       const struct py_code_view *v)
{
	struct raw_pycode h = { .pid = (uint32_t)pid, .version = v->version,
				.code = v->code,
				.poison_until = v->poison_until,
				.firstlineno = v->firstlineno };
	size_t fl = v->func ? strnlen(v->func, RAW_PY_STR_MAX) : 0;
	size_t sl = v->file ? strnlen(v->file, RAW_PY_STR_MAX) : 0;
	uint8_t *buf;
	int rc;

	h.func_len = (uint32_t)fl;
	h.file_len = (uint32_t)sl;
	h.lt_len = v->lt && v->lt_len <= PY_LINETABLE_MAX ? v->lt_len : 0;
	buf = malloc(fl + sl + h.lt_len + 1);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, v->func ? v->func : "", fl);
	memcpy(buf + fl, v->file ? v->file : "", sl);
	if (h.lt_len)
		memcpy(buf + fl + sl, v->lt, h.lt_len);
	rc = raw_writer__chunk(w, RAW_PYCODE, &h, sizeof(h), buf,
			      fl + sl + h.lt_len);
	free(buf);
	return rc;
}

int raw__parse_pycode(const void *payload, uint64_t len,
		      struct raw_pycode_view *out, char *err, size_t errlen)
{
	const uint8_t *b;
	struct raw_pycode h;

	if (!payload || len < sizeof(h)) {
		snprintf(err, errlen, "Python code chunk of %llu bytes",
			 (unsigned long long)len);
		return -EINVAL;
	}
	memcpy(&h, payload, sizeof(h));
	if (h.func_len > RAW_PY_STR_MAX || h.file_len > RAW_PY_STR_MAX ||
	    h.lt_len > PY_LINETABLE_MAX ||
	    (uint64_t)h.func_len + h.file_len + h.lt_len !=
		    len - sizeof(h) ||
	    h.pid > (uint32_t)INT32_MAX || !h.code) {
		snprintf(err, errlen, "Python code chunk: lengths %u, %u, %u "
			 "in %llu bytes, or pid %u", h.func_len, h.file_len,
			 h.lt_len, (unsigned long long)len, h.pid);
		return -EINVAL;
	}
	b = (const uint8_t *)payload + sizeof(h);
	memset(&out->v, 0, sizeof(out->v));
	out->pid = (pid_t)h.pid;
	memcpy(out->func, b, h.func_len);
	out->func[h.func_len] = '\0';
	memcpy(out->file, b + h.func_len, h.file_len);
	out->file[h.file_len] = '\0';
	out->v.code = h.code;
	out->v.version = h.version;
	out->v.firstlineno = h.firstlineno;
	out->v.poison_until = h.poison_until;
	out->v.func = out->func;
	out->v.file = out->file;
	out->v.lt = h.lt_len ? b + h.func_len + h.file_len : NULL;
	out->v.lt_len = h.lt_len;
	return 0;
}

int raw__parse_meta(const void *payload, uint64_t len, struct raw_meta *out,
		    char *err, size_t errlen)
{
	if (len < RAW_META_V1_SIZE) {
		snprintf(err, errlen, "meta chunk of %llu bytes (at least %d)",
			 (unsigned long long)len, RAW_META_V1_SIZE);
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	memcpy(out, payload, len < sizeof(*out) ? len : sizeof(*out));
	return 0;
}

int raw__load_meta(struct profile *p, const void *payload, uint64_t len,
		   char *err, size_t errlen)
{
	struct profile_meta *pm = profile__meta(p);
	struct raw_meta m;
	int rc;

	rc = raw__parse_meta(payload, len, &m, err, errlen);
	if (rc)
		return rc;
	pm->frequency_hz = m.frequency_hz;
	pm->duration_ns = m.duration_ns;
	pm->samples = m.samples;
	pm->lost = m.lost;
	pm->events = m.events;
	pm->offcpu_events = m.offcpu_events;
	pm->offcpu_lost = m.offcpu_lost;
	pm->end_ns = m.end_ns;
	pm->offcpu_capture_ns = m.offcpu_capture_ns;
	pm->alloc_events = m.alloc_events;
	pm->lock_events = m.lock_events;
	pm->jvm_ev_lost = m.jvm_ev_lost;
	pm->jvm_ev_throttled = m.jvm_ev_throttled;
	pm->alloc_interval = m.alloc_interval;
	return 0;
}
