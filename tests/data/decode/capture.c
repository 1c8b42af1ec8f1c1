// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Capture tool for the decoder's test data (see README.md; not part of the
 * build): records raw BPF samples of one JVM with the stack window on,
 * copies its code map, and writes the records with each window cut to the
 * bytes the decoder actually needs (plus a margin), so the data stays
 * small. Build: see capture.sh.
 *
 *   capture PID SECONDS MAXREC HZ OUT.rec OUT.map
 *
 * or from a recording (record -o x.asgst) of a real application, keeping
 * up to MAXREC samples of threads whose name holds THREAD that decode
 * whole through a stub or a gap frame, and in the map only the code and
 * stub records their windows and registers point into:
 *
 *   capture --raw FILE.asgst PID THREAD MAXREC OUT.rec OUT.map
 *
 * or from a recording of StubKinds (tests/workloads/StubKinds.java), up to
 * PER samples of each kind of JVM-generated code (decode_data.h,
 * dd_kind_of) that decode whole down to Thread.run:
 *
 *   capture --kinds FILE.asgst PID PER OUT.rec OUT.map
 *
 * or the given samples (indices among PID's samples in the recording,
 * comma-separated), whatever they decode to:
 *
 *   capture --pick FILE.asgst PID IDX[,IDX...] OUT.rec OUT.map
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "decode/asgst.h"
#include "capture/capture.h"
#include "jvm/codemap.h"
#include "capture/sample.h"
#include "output/raw.h"
#include "unit/decode_data.h"

struct rec {
	uint64_t *d;
	uint32_t len;
};

static struct rec *recs;
static long nrec, maxrec;
static pid_t want;

static int cb(const void *data, size_t len, void *ctx)
{
	const struct asgst_sample_hdr *h = data;

	(void)ctx;
	if (len < sizeof(*h) || (pid_t)h->pid != want || nrec >= maxrec)
		return nrec >= maxrec;
	recs[nrec].d = calloc(1, (len + 15) / 8 * 8);
	memcpy(recs[nrec].d, data, len);
	recs[nrec].len = (uint32_t)len;
	nrec++;
	return 0;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return -errno;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	close(out);
	return 0;
}

static uint64_t *used;
static size_t nused, capused;

static void use_method(uint64_t m)
{
	for (size_t i = 0; i < nused; i++)
		if (used[i] == m)
			return;
	if (nused == capused)
		used = realloc(used, (capused = capused ? capused * 2 : 1024) *
				     sizeof(*used));
	used[nused++] = m;
}

static bool is_used(uint64_t m)
{
	for (size_t i = 0; i < nused; i++)
		if (used[i] == m)
			return true;
	return false;
}

/* the code addresses the kept samples can lead the decoder to */
static uint64_t *addrs;
static size_t naddrs, capaddrs;

static void use_addr(uint64_t a)
{
	if (naddrs == capaddrs)
		addrs = realloc(addrs, (capaddrs = capaddrs ? capaddrs * 2 :
						       4096) * sizeof(*addrs));
	addrs[naddrs++] = a;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* some kept address lies in [start, end) */
static bool addr_in(uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = naddrs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addrs[mid] < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < naddrs && addrs[lo] < end;
}

static bool keep_blobs;	/* only the code/stub records addrs point into */

/*
 * Rewrite the map keeping only the method records the decoded frames use
 * (names for the frames; the rest of a JVM's methods is most of the map).
 */
static int filter_map(const char *path)
{
	FILE *f = fopen(path, "r+b");
	struct cm_file_header h;
	uint8_t *b;
	uint64_t in, out;

	if (!f || fread(&h, sizeof(h), 1, f) != 1)
		return -1;
	b = malloc(h.write_pos);
	fseek(f, 0, SEEK_SET);
	if (fread(b, 1, h.write_pos, f) != h.write_pos)
		return -1;
	for (in = out = CM_HEADER_SIZE; in + sizeof(struct cm_rec_hdr) <= h.write_pos;) {
		struct cm_rec_hdr *r = (void *)(b + in);
		uint32_t len = r->len;

		if (len < 16 || len > h.write_pos - in)
			break;
		bool keep = r->type != CM_REC_METHOD ||
			    is_used(((struct cm_method *)r)->method);

		if (keep_blobs && r->type == CM_REC_CODE)
			keep = addr_in(((struct cm_code *)r)->start,
				       ((struct cm_code *)r)->end);
		if (keep_blobs && r->type == CM_REC_STUB)
			keep = addr_in(((struct cm_stub *)r)->start,
				       ((struct cm_stub *)r)->end);
		if (keep) {
			memmove(b + out, b + in, len);
			out += len;
		}
		in += len;
	}
	h.write_pos = out;
	memcpy(b, &h, sizeof(h));
	fseek(f, 0, SEEK_SET);
	fwrite(b, 1, out, f);
	fclose(f);
	free(b);
	return truncate(path, (off_t)out);
}

/* a frame of the walk is a stub, or a gap (pc 0) */
static bool through_stub(const struct codemap *cm, const ASGST_CallFrame *fr,
			 int n, uint64_t t)
{
	for (int k = 0; k < n; k++) {
		const struct codemap_blob *b;
		uint64_t pc;

		if (fr[k].type != ASGST_FRAME_NON_JAVA)
			continue;
		pc = (uint64_t)(uintptr_t)fr[k].non_java_frame.pc;
		if (!pc)
			return true;
		b = codemap__find(cm, pc, t);
		if (b && b->type == CODEMAP_BLOB_STUB &&
		    b->kind != CM_STUB_CALL_STUB)
			return true;
	}
	return false;
}

/* i is in the comma-separated list */
static bool picked(const char *list, long i)
{
	char *end;

	while (*list) {
		if (strtol(list, &end, 10) == i && end != list)
			return true;
		if (end == list || !*end)
			return false;
		list = end + 1;
	}
	return false;
}

/* the outermost Java frame is Thread.run */
static bool whole(const struct codemap *cm, const ASGST_CallFrame *fr, int n)
{
	for (int k = n - 1; k >= 0; k--) {
		const struct codemap_method *m;

		if (fr[k].type == ASGST_FRAME_NON_JAVA)
			continue;
		m = codemap__method(cm, fr[k].java_frame.method);
		return m && !strcmp(m->klass, "java.lang.Thread") &&
		       (!strcmp(m->name, "run") || !strcmp(m->name, "runWith"));
	}
	return false;
}

static int from_raw(int argc, char **argv)
{
	bool kinds = !strcmp(argv[1], "--kinds");
	bool pick = !strcmp(argv[1], "--pick");
	const char *picks = pick && argc >= 7 ? argv[4] : NULL;
	static struct {
		enum dd_kind k;
		char what[64];
		long n;
	} keys[256];
	int nkeys = 0;
	const char *thread;
	struct raw_reader *r;
	struct codemap *cm;
	static ASGST_CallFrame fr[2048];
	char err[256];
	uint32_t type;
	const void *pay;
	uint64_t len;
	long max;
	pid_t pid;
	FILE *out;
	int fd;

	if ((kinds || pick) && argc >= 7) {
		/* same arguments as --raw, the thread being StubKinds' */
		argv[7] = argv[6];
		argv[6] = argv[5];
		argv[5] = argv[4];
		argv[4] = kinds ? "sk-" : "";
		if (pick)
			argv[5] = "1000000";
	} else if (argc < 8) {
		fprintf(stderr, "usage: capture --raw FILE.asgst PID THREAD MAXREC OUT.rec OUT.map\n"
				"       capture --kinds FILE.asgst PID PER OUT.rec OUT.map\n");
		return 2;
	}
	pid = atoi(argv[3]);
	thread = argv[4];
	max = atol(argv[5]);
	if (raw_reader__open(&r, argv[2], err, sizeof(err))) {
		fprintf(stderr, "capture: %s\n", err);
		return 1;
	}
	fd = open(argv[7], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	maxrec = 1 << 20;
	recs = calloc((size_t)maxrec, sizeof(*recs));
	while (raw_reader__next(r, &type, &pay, &len, err, sizeof(err)) == 1) {
		if (type == RAW_CODEMAP && len >= sizeof(struct raw_codemap)) {
			const struct raw_codemap *c = pay;

			if (c->pid == (uint32_t)pid &&
			    pwrite(fd, c + 1, len - sizeof(*c),
				   (off_t)c->offset) < 0)
				return 1;
		} else if (type == RAW_SAMPLE && nrec < maxrec &&
			   len >= sizeof(struct asgst_sample_hdr) &&
			   ((const struct asgst_sample_hdr *)pay)->pid ==
			   (uint32_t)pid) {
			recs[nrec].d = calloc(1, (len + 15) / 8 * 8);
			memcpy(recs[nrec].d, pay, len);
			recs[nrec].len = (uint32_t)len;
			nrec++;
		}
	}
	raw_reader__close(r);
	close(fd);
	if (codemap__open(&cm, "/", argv[7], err, sizeof(err)) ||
	    codemap__update(cm)) {
		fprintf(stderr, "capture: map: %s\n", cm ? codemap__error(cm) : err);
		return 1;
	}
	out = fopen(argv[6], "w");
	long kept_all = 0;

	for (long i = 0, kept = 0; i < nrec && kept < max; i++) {
		struct asgst_sample_hdr *h = (void *)recs[i].d;
		const struct codemap_thread *th;
		struct sample s;
		struct asgst_ctx ctx;
		ASGST_CallTrace ct = { .frames = fr };
		const char *why;
		uint32_t keep, plen, pad = 0;
		static const char z[8];
		int nf;

		if (sample__parse(recs[i].d, recs[i].len, &s, &why))
			continue;
		if (picks && !picked(picks, i))
			continue;
		th = codemap__thread(cm, h->ns_tid, h->ktime_ns);
		if (!th || !th->name || !strstr(th->name, thread))
			continue;
		asgst_ctx__init(&ctx, cm);
		nf = asgst_decode(&ctx, &s, &ct, 2048,
				  ASGST_INCLUDE_NON_JAVA_FRAMES);
		if (kinds) {
			const char *what;
			enum dd_kind k = dd_kind_of(cm, &s, fr, nf, &what);
			int kk;

			/* the safepoint blob at the top, before it stores the
			 * poll's pc (from the thread, not in the sample) in its
			 * return slot, cannot be walked reliably: left out */
			if (ctx.error || k == DD_NONE || k == DD_SAFEPOINT ||
			    !whole(cm, fr, nf))
				continue;
			/* up to max of each kind and stub name */
			for (kk = 0; kk < nkeys; kk++)
				if (keys[kk].k == k &&
				    !strcmp(keys[kk].what, what ? what : ""))
					break;
			if (kk == nkeys) {
				if (nkeys == 256)
					continue;
				keys[nkeys].k = k;
				snprintf(keys[nkeys].what, sizeof(keys[0].what),
					 "%s", what ? what : "");
				nkeys++;
			}
			if (keys[kk].n >= max)
				continue;
			keys[kk].n++;
			fprintf(stderr, "capture: %ld: %s %s (%s)\n", kept_all++,
				dd_kind_name(k), what ? what : "", th->name);
		} else if (!pick &&
			   (ctx.error || !through_stub(cm, fr, nf, h->ktime_ns))) {
			continue;
		}
		for (int k = 0; k < nf; k++)
			if (fr[k].type != ASGST_FRAME_NON_JAVA)
				use_method(fr[k].java_frame.method);
		use_method(h->rbx);
		keep = (ctx.window_used + 64 + 63) / 64 * 64;
		if (keep < h->window_len)
			h->window_len = keep;
		use_addr(h->ip);
		use_addr(h->jt_last_pc);
		for (uint32_t k = 0; k + 8 <= h->window_len; k += 8) {
			uint64_t v;

			memcpy(&v, s.window + k, 8);
			use_addr(v);
		}
		for (uint32_t k = 0; k < h->ustack_n; k++)
			use_addr(s.ustack[k]);
		plen = (uint32_t)((const uint8_t *)s.window - (const uint8_t *)h) +
		       h->window_len;
		fwrite(&plen, 4, 1, out);
		fwrite(&pad, 4, 1, out);
		fwrite(h, 1, plen, out);
		if (plen % 8)
			fwrite(z, 1, 8 - plen % 8, out);
		kept += !kinds;	/* with --kinds, max is per kind */
	}
	fclose(out);
	codemap__free(cm);
	qsort(addrs, naddrs, sizeof(*addrs), cmp_u64);
	keep_blobs = true;
	filter_map(argv[7]);
	fprintf(stderr, "capture: %zu methods kept\n", nused);
	return 0;
}

int main(int argc, char **argv)
{
	struct capture_opts o = { 0 };
	struct capture *c;
	struct codemap *cm;
	char err[256], mp[256];
	struct timespec t0, t;
	static ASGST_CallFrame fr[2048];
	FILE *out;
	pid_t pid;
	int secs;

	if (argc > 1 && (!strcmp(argv[1], "--raw") ||
			 !strcmp(argv[1], "--kinds") || !strcmp(argv[1], "--pick")))
		return from_raw(argc, argv);
	if (argc < 7) {
		fprintf(stderr, "usage: capture PID SECONDS MAXREC HZ OUT.rec OUT.map\n");
		return 2;
	}
	pid = atoi(argv[1]);
	secs = atoi(argv[2]);
	maxrec = atol(argv[3]);
	want = pid;
	recs = calloc((size_t)maxrec, sizeof(*recs));
	o.filter_mode = ASGST_FILTER_PIDS;
	o.pids = &pid;
	o.npids = 1;
	o.freq_hz = (uint32_t)atoi(argv[4]);
	o.window_size = ASGST_DEFAULT_WINDOW;
	if (capture__open(&c, &o, err, sizeof(err))) {
		fprintf(stderr, "capture: %s\n", err);
		return 1;
	}
	capture__set_window(c, pid, true);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (capture__poll(c, 100, cb, NULL) < 0)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (nrec < maxrec && t.tv_sec - t0.tv_sec < secs);
	capture__close(c);

	/* the map as the JVM wrote it, by its namespace pid */
	{
		char rel[96] = "";

		codemap__pid_path(pid, nrec ? (pid_t)((struct asgst_sample_hdr *)
						      recs[0].d)->ns_pid : pid,
				  rel, sizeof(rel));
		snprintf(mp, sizeof(mp), "/proc/%d/root%s", pid, rel);
	}
	if (copy_file(mp, argv[6])) {
		fprintf(stderr, "capture: cannot copy %s\n", mp);
		return 1;
	}
	if (codemap__open(&cm, "/", argv[6], err, sizeof(err)) ||
	    codemap__update(cm)) {
		/* keep the records whole: they can be trimmed later */
		fprintf(stderr, "capture: map: %s (windows not trimmed)\n",
			cm ? codemap__error(cm) : err);
		cm = NULL;
	}
	out = fopen(argv[5], "w");
	for (long i = 0; i < nrec; i++) {
		struct asgst_sample_hdr *h = (void *)recs[i].d;
		struct sample s;
		struct asgst_ctx ctx;
		ASGST_CallTrace ct = { .frames = fr };
		const char *why;
		uint32_t keep, len, pad = 0;
		int nf;
		static const char z[8];

		if (sample__parse(recs[i].d, recs[i].len, &s, &why))
			continue;
		asgst_ctx__init(&ctx, cm);
		nf = asgst_decode(&ctx, &s, &ct, 2048,
				  ASGST_INCLUDE_NON_JAVA_FRAMES);
		for (int k = 0; k < nf; k++)
			if (fr[k].type != ASGST_FRAME_NON_JAVA)
				use_method(fr[k].java_frame.method);
		keep = (ctx.window_used + 64 + 63) / 64 * 64;
		if (cm && keep < h->window_len)
			h->window_len = keep;
		len = (uint32_t)((const uint8_t *)s.window - (const uint8_t *)h) +
		      h->window_len;
		fwrite(&len, 4, 1, out);
		fwrite(&pad, 4, 1, out);
		fwrite(h, 1, len, out);
		if (len % 8)
			fwrite(z, 1, 8 - len % 8, out);
	}
	fclose(out);
	if (cm) {
		codemap__free(cm);
		filter_map(argv[6]);
	}
	fprintf(stderr, "capture: %ld records, %zu methods kept\n", nrec,
		nused);
	return 0;
}
