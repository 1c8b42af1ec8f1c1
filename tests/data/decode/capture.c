// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Capture tool for the decoder's test data (see README.md; not part of the
 * build): records raw BPF samples of one JVM with the stack window on,
 * copies its code map, and writes the records with each window cut to the
 * bytes the decoder actually needs (plus a margin), so the data stays
 * small. Build: see capture.sh.
 *
 *   capture PID SECONDS MAXREC HZ OUT.rec OUT.map
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
		if (r->type != CM_REC_METHOD ||
		    is_used(((struct cm_method *)r)->method)) {
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
	snprintf(mp, sizeof(mp), "/proc/%d/root/dev/shm/asgst-%u.map", pid,
		 nrec ? ((struct asgst_sample_hdr *)recs[0].d)->ns_pid :
			(unsigned)pid);
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
