// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Side-band records (mmap2, exec, fork, exit) from a dummy perf event per
 * CPU, the way perf keeps the maps of processes that are gone before
 * anyone reads /proc. The rings are read, not polled: the recorder's loop
 * comes by at least every 100 ms, and the kernel is asked for no wakeups.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "util/array.h"
#include "capture/sideband.h"
#include "util/err.h"

#define REC_MAX		65536u		/* perf_event_header.size is a u16 */
#define ID_BYTES	16u		/* sample_id: pid, tid, time */
#define RING_MAX_TOTAL	(64u << 20)	/* all CPUs' rings together */

struct sb_ring {
	int fd;
	struct perf_event_mmap_page *meta;
	size_t map_bytes;
	uint8_t *data;
	uint64_t size;
};

/* records of one read, sorted by time before they are handed on */
struct sb_item {
	struct sideband_rec r;
	size_t path_off;	/* in the read's path arena; SIZE_MAX: none */
	size_t seq;		/* the order read, for a stable sort */
};

struct sideband {
	struct sb_ring *rings;
	int nrings;
	uint8_t *buf;		/* one record, copied out of the ring */
	struct sb_item *items;
	size_t nitems, cap_items;
	char *paths;
	size_t npaths, cap_paths;
	struct sideband_stats st;
};

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int sideband__parse(const void *rec, size_t len, struct sideband_rec *out)
{
	const uint8_t *p = rec;
	struct perf_event_header h;
	const uint8_t *id;

	if (!p || len < sizeof(h))
		return -EINVAL;
	memcpy(&h, p, sizeof(h));
	if (h.size != len || len % 8)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	id = p + len - ID_BYTES;
	switch (h.type) {
	case PERF_RECORD_MMAP2: {
		const char *name = (const char *)p + 72;
		size_t nlen;

		/* fixed part, at least one NUL-padded word of name, id */
		if (len < 72 + 8 + ID_BYTES)
			return -EINVAL;
		nlen = (size_t)(id - (const uint8_t *)name);
		if (!memchr(name, '\0', nlen))
			return -EINVAL;
		out->type = SIDEBAND_MMAP;
		out->pid = get_u32(p + 8);
		out->tid = get_u32(p + 12);
		out->start = get_u64(p + 16);
		out->len = get_u64(p + 24);
		out->pgoff = get_u64(p + 32);
		if (!(h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
			out->maj = get_u32(p + 40);
			out->min = get_u32(p + 44);
			out->ino = get_u64(p + 48);
		}
		out->prot = get_u32(p + 64);
		out->flags = get_u32(p + 68);
		out->path = name;
		if (!out->len || out->start + out->len < out->start)
			return -EINVAL;
		break;
	}
	case PERF_RECORD_COMM:
		if (len < 8 + 8 + 8 + ID_BYTES)
			return -EINVAL;
		if (!(h.misc & PERF_RECORD_MISC_COMM_EXEC))
			return 0;
		out->type = SIDEBAND_EXEC;
		out->pid = get_u32(p + 8);
		out->tid = get_u32(p + 12);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (len < 32 + ID_BYTES)
			return -EINVAL;
		out->type = h.type == PERF_RECORD_FORK ? SIDEBAND_FORK :
							 SIDEBAND_EXIT;
		out->pid = get_u32(p + 8);
		out->ppid = get_u32(p + 12);
		out->tid = get_u32(p + 16);
		out->ptid = get_u32(p + 20);
		break;
	case PERF_RECORD_LOST:
		if (len < 24 + ID_BYTES)
			return -EINVAL;
		out->type = SIDEBAND_LOST;
		out->lost = get_u64(p + 16);
		break;
	default:
		return 0;
	}
	out->time_ns = get_u64(id + 8);
	return 1;
}

uint64_t sideband__read_ring(const uint8_t *ring, uint64_t size,
			     uint64_t tail, uint64_t head, uint8_t *buf,
			     size_t bufsz, sideband_fn fn, void *ctx,
			     uint64_t *bad)
{
	struct sideband_rec r;

	if (!size || (size & (size - 1)) || head - tail > size ||
	    bufsz < REC_MAX) {
		if (bad)
			(*bad)++;
		return head;
	}
	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail & (size - 1), first;
		int ret;

		if (head - tail < sizeof(h))
			goto broken;
		/* the header itself may wrap */
		first = size - off;
		if (first >= sizeof(h)) {
			memcpy(&h, ring + off, sizeof(h));
		} else {
			memcpy(&h, ring + off, first);
			memcpy((uint8_t *)&h + first, ring, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || h.size > head - tail)
			goto broken;
		if (first >= h.size) {
			memcpy(buf, ring + off, h.size);
		} else {
			memcpy(buf, ring + off, first);
			memcpy(buf + first, ring, h.size - first);
		}
		tail += h.size;
		ret = sideband__parse(buf, h.size, &r);
		if (ret < 0) {
			if (bad)
				(*bad)++;
			continue;
		}
		if (ret > 0 && fn(&r, ctx))
			break;
	}
	return tail;
broken:
	if (bad)
		(*bad)++;
	return head;
}

static void ring_close(struct sb_ring *r)
{
	if (r->meta && r->meta != MAP_FAILED)
		munmap(r->meta, r->map_bytes);
	if (r->fd >= 0)
		close(r->fd);
}

static int ring_open(struct sb_ring *r, int cpu, size_t data_bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		/* the samples' clock (bpf_ktime_get_ns) */
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/* read on the recorder's own beat: no wakeups */
		.watermark = 1,
		.wakeup_watermark = (uint32_t)(data_bytes - data_bytes / 8),
	};

	r->fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
			PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->map_bytes = (size_t)page + data_bytes;
	r->meta = mmap(NULL, r->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		       r->fd, 0);
	if (r->meta == MAP_FAILED) {
		r->meta = NULL;
		return -errno;
	}
	r->data = (uint8_t *)r->meta + page;
	r->size = data_bytes;
	return 0;
}

int sideband__open(struct sideband **out, size_t ring_kib_per_cpu, char *err,
		   size_t errlen)
{
	long page = sysconf(_SC_PAGESIZE);
	struct sideband *sb;
	size_t bytes = (size_t)page * 2;
	int ncpus, ret = 0;

	*out = NULL;
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return err__set(err, errlen, ncpus ? ncpus : -ENODEV,
				"side-band records: cannot count the CPUs");
	/* a power of two of pages, the rings of all CPUs bounded */
	while (bytes < ring_kib_per_cpu * 1024 &&
	       bytes * 2 * (size_t)ncpus <= RING_MAX_TOTAL)
		bytes *= 2;
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return err__set(err, errlen, -ENOMEM, "out of memory");
	sb->rings = calloc(ncpus, sizeof(*sb->rings));
	sb->buf = malloc(REC_MAX);
	if (!sb->rings || !sb->buf) {
		ret = err__set(err, errlen, -ENOMEM, "out of memory");
		goto cleanup;
	}
	for (int cpu = 0; cpu < ncpus; cpu++) {
		struct sb_ring *r = &sb->rings[sb->nrings];

		r->fd = -1;
		ret = ring_open(r, cpu, bytes);
		if (ret == -ENODEV) {	/* offline CPU */
			ring_close(r);
			memset(r, 0, sizeof(*r));
			ret = 0;
			continue;
		}
		if (ret) {
			ring_close(r);
			err__set(err, errlen, ret,
				 "side-band records on CPU %d: %s (kernel without dummy events or use_clockid?)",
				 cpu, strerror(-ret));
			goto cleanup;
		}
		sb->nrings++;
	}
	if (!sb->nrings) {
		ret = err__set(err, errlen, -ENODEV,
			       "side-band records: no online CPU");
		goto cleanup;
	}
	*out = sb;
	return 0;
cleanup:
	sideband__close(sb);
	return ret;
}

/* one record kept for the sort, its path copied into the arena */
static int collect(const struct sideband_rec *r, void *ctx)
{
	struct sideband *sb = ctx;
	struct sb_item *it;

	if (r->type == SIDEBAND_LOST) {
		sb->st.lost += r->lost;
		return 0;
	}
	if (array__grow((void **)&sb->items, &sb->cap_items, sb->nitems + 1,
		 sizeof(*sb->items)))
		return 1;
	it = &sb->items[sb->nitems];
	it->r = *r;
	it->path_off = SIZE_MAX;
	if (r->path) {
		size_t n = strnlen(r->path, SIDEBAND_PATH_MAX - 1) + 1;

		if (array__grow((void **)&sb->paths, &sb->cap_paths, sb->npaths + n, 1))
			return 1;
		memcpy(sb->paths + sb->npaths, r->path, n - 1);
		sb->paths[sb->npaths + n - 1] = '\0';
		it->path_off = sb->npaths;
		sb->npaths += n;
	}
	it->seq = sb->nitems++;
	return 0;
}

static int item_cmp(const void *a, const void *b)
{
	const struct sb_item *x = a, *y = b;

	if (x->r.time_ns != y->r.time_ns)
		return x->r.time_ns < y->r.time_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int sideband__read(struct sideband *sb, sideband_fn fn, void *ctx)
{
	if (!sb)
		return 0;
	sb->nitems = 0;
	sb->npaths = 0;
	for (int i = 0; i < sb->nrings; i++) {
		struct sb_ring *r = &sb->rings[i];
		uint64_t head, tail;

		head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		tail = r->meta->data_tail;
		tail = sideband__read_ring(r->data, r->size, tail, head,
					   sb->buf, REC_MAX, collect, sb,
					   &sb->st.bad);
		/* what was not collected (out of memory) is dropped, and
		 * counted: the stream has a gap its readers must know of */
		if (tail != head)
			sb->st.bad++;
		__atomic_store_n(&r->meta->data_tail, head, __ATOMIC_RELEASE);
	}
	qsort(sb->items, sb->nitems, sizeof(*sb->items), item_cmp);
	for (size_t i = 0; i < sb->nitems; i++) {
		struct sb_item *it = &sb->items[i];

		it->r.path = it->path_off == SIZE_MAX ? NULL :
						       sb->paths + it->path_off;
		sb->st.records++;
		if (fn(&it->r, ctx))
			break;
	}
	return (int)sb->nitems;
}

void sideband__stats(const struct sideband *sb, struct sideband_stats *st)
{
	if (sb)
		*st = sb->st;
	else
		memset(st, 0, sizeof(*st));
}

void sideband__close(struct sideband *sb)
{
	if (!sb)
		return;
	for (int i = 0; i < sb->nrings; i++)
		ring_close(&sb->rings[i]);
	free(sb->rings);
	free(sb->buf);
	free(sb->items);
	free(sb->paths);
	free(sb);
}
