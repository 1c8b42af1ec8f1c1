// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine's kernel side for real: the BPF sampler (capture/capture.c)
 * and the side-band's perf events (capture/sideband.c). Tests put a fake
 * in its place (struct recorder_ops).
 */
#include "recorder/recorder.h"

/* a side-band ring of this many KiB per CPU */
#define SIDEBAND_RING_KIB	512

static int bpf_open(void **cap, const struct capture_opts *o, char *err,
		    size_t errlen)
{
	return capture__open((struct capture **)cap, o, err, errlen);
}

static int bpf_start(void *cap, char *err, size_t errlen)
{
	return capture__start(cap, err, errlen);
}

static void bpf_stop(void *cap)
{
	capture__stop(cap);
}

static int bpf_poll(void *cap, int timeout_ms, capture_sample_fn fn,
		    void *ctx)
{
	return capture__poll(cap, timeout_ms, fn, ctx);
}

static int bpf_drain(void *cap, capture_sample_fn fn, void *ctx)
{
	return capture__drain(cap, fn, ctx);
}

static int bpf_stats(void *cap, uint64_t out[ASGST_STAT_MAX])
{
	return capture__stats(cap, out);
}

static void bpf_close(void *cap)
{
	capture__close(cap);
}

static struct capture *bpf_capture(void *cap)
{
	return cap;
}

static int sb_open(void **sb, char *err, size_t errlen)
{
	return sideband__open((struct sideband **)sb, SIDEBAND_RING_KIB, err,
			      errlen);
}

static int sb_read(void *sb, sideband_fn fn, void *ctx)
{
	return sideband__read(sb, fn, ctx);
}

static void sb_stats(void *sb, struct sideband_stats *st)
{
	sideband__stats(sb, st);
}

static void sb_close(void *sb)
{
	sideband__close(sb);
}

const struct recorder_ops recorder_bpf_ops = {
	.open = bpf_open,
	.start = bpf_start,
	.stop = bpf_stop,
	.poll = bpf_poll,
	.drain = bpf_drain,
	.stats = bpf_stats,
	.close = bpf_close,
	.capture = bpf_capture,
	.sideband_open = sb_open,
	.sideband_read = sb_read,
	.sideband_stats = sb_stats,
	.sideband_close = sb_close,
};
