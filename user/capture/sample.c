// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Strict parser of the kernel sampler's records (bpf/sampler.h). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "capture/sample.h"

static int reject(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	return -EINVAL;
}

size_t sample__used_len(const struct sample *s)
{
	if (s->py)
		return (size_t)s->hdr->py_off +
		       (size_t)s->hdr->py_n * sizeof(*s->py);
	if (s->chunk)
		return (size_t)(s->chunk - (const uint8_t *)s->hdr) +
		       s->hdr->chunk_len;
	return (size_t)(s->window - (const uint8_t *)s->hdr) +
	       s->hdr->window_len;
}

int sample__parse(const void *data, size_t len, struct sample *out,
		  const char **why)
{
	const struct asgst_sample_hdr *h = data;
	const uint8_t *p = data;
	size_t tail, woff;

	if (why)
		*why = NULL;
	if (!data || !out)
		return reject(why, "no record");
	if ((uintptr_t)data & 7)
		return reject(why, "misaligned record");
	/* a version 1 header is the shortest; hdr_size is checked below */
	if (len < offsetof(struct asgst_sample_hdr, window_off))
		return reject(why, "truncated header");
	if (h->magic != ASGST_SAMPLE_MAGIC)
		return reject(why, "bad magic");
	if (h->version < ASGST_SAMPLE_VERSION_MIN ||
	    h->version > ASGST_SAMPLE_VERSION)
		return reject(why, "unsupported version");
	/* version 1 ended before window_off, version 2 before ev_size,
	 * version 3 before py_n */
	if (h->hdr_size < (h->version == 1 ?
			   offsetof(struct asgst_sample_hdr, window_off) :
			   h->version == 2 ?
			   offsetof(struct asgst_sample_hdr, ev_size) :
			   h->version == 3 ?
			   offsetof(struct asgst_sample_hdr, py_n) :
			   sizeof(*h)) || h->hdr_size & 7)
		return reject(why, "bad header size");
	/* the JVM events' fields are in version 3 headers only */
	if (h->event > (h->version < 3 ? ASGST_EV_OFFCPU_END : ASGST_EV_LOCK))
		return reject(why, "unknown event");
	if (h->hdr_size > len)
		return reject(why, "truncated header");
	if (h->kstack_n > ASGST_MAX_KSTACK)
		return reject(why, "too many kernel frames");
	if (h->ustack_n > ASGST_MAX_USTACK)
		return reject(why, "too many user frames");
	if (h->window_len > ASGST_MAX_WINDOW)
		return reject(why, "window too large");
	/* counts are bounded above, so this cannot overflow */
	tail = (size_t)h->kstack_n * 8 + (size_t)h->ustack_n * 8;
	if (tail > len - h->hdr_size)
		return reject(why, "truncated tail");
	woff = h->hdr_size + tail;
	if (h->version >= 2) {
		if (h->window_off < woff || (h->window_off & 7))
			return reject(why, "window overlaps the stacks");
		woff = h->window_off;
	}
	if (woff > len || h->window_len > len - woff)
		return reject(why, "truncated tail");

	out->chunk = NULL;
	if (h->version >= 2 && h->chunk_len) {
		/* after the window, inside the record, and describing frames */
		if (h->chunk_len > ASGST_CHUNK_BYTES || (h->chunk_off & 7) ||
		    h->chunk_off < woff + h->window_len || h->chunk_off > len ||
		    h->chunk_len > len - h->chunk_off)
			return reject(why, "bad frozen-frames chunk");
		if (h->chunk_addr + 16 != h->chunk_sp ||
		    h->chunk_end <= h->chunk_sp || h->chunk_sp < h->chunk_addr)
			return reject(why, "bad frozen-frames chunk");
		out->chunk = p + h->chunk_off;
	}
	out->py = NULL;
	if (h->version >= 4 && h->py_n) {
		/* after the window and the frozen frames, inside the record */
		size_t after = out->chunk ? h->chunk_off + (size_t)h->chunk_len :
			       woff + h->window_len;

		if (h->py_n > ASGST_PY_MAX_FRAMES || (h->py_off & 7) ||
		    h->py_off < after || h->py_off > len ||
		    (size_t)h->py_n * sizeof(struct asgst_py_frame) >
			    len - h->py_off)
			return reject(why, "bad Python frames");
		out->py = (const struct asgst_py_frame *)(p + h->py_off);
	}
	out->hdr = h;
	out->kstack = (const uint64_t *)(p + h->hdr_size);
	out->ustack = out->kstack + h->kstack_n;
	out->window = p + woff;
	return 0;
}
