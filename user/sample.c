// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Strict parser of the kernel sampler's records (bpf/sampler.h). */
#include <errno.h>
#include <stdint.h>
#include <linux/types.h>

#include "sample.h"

static int reject(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	return -EINVAL;
}

int sample__parse(const void *data, size_t len, struct sample *out,
		  const char **why)
{
	const struct asgst_sample_hdr *h = data;
	const uint8_t *p = data;
	size_t tail;

	if (why)
		*why = NULL;
	if (!data || !out)
		return reject(why, "no record");
	if ((uintptr_t)data & 7)
		return reject(why, "misaligned record");
	if (len < sizeof(*h))
		return reject(why, "truncated header");
	if (h->magic != ASGST_SAMPLE_MAGIC)
		return reject(why, "bad magic");
	if (h->version != ASGST_SAMPLE_VERSION)
		return reject(why, "unsupported version");
	if (h->hdr_size < sizeof(*h) || h->hdr_size & 7)
		return reject(why, "bad header size");
	if (h->hdr_size > len)
		return reject(why, "truncated header");
	if (h->kstack_n > ASGST_MAX_KSTACK)
		return reject(why, "too many kernel frames");
	if (h->ustack_n > ASGST_MAX_USTACK)
		return reject(why, "too many user frames");
	if (h->window_len > ASGST_MAX_WINDOW)
		return reject(why, "window too large");
	/* counts are bounded above, so this cannot overflow */
	tail = (size_t)h->kstack_n * 8 + (size_t)h->ustack_n * 8 +
	       h->window_len;
	if (tail > len - h->hdr_size)
		return reject(why, "truncated tail");

	out->hdr = h;
	out->kstack = (const uint64_t *)(p + h->hdr_size);
	out->ustack = out->kstack + h->kstack_n;
	out->window = (const uint8_t *)(out->ustack + h->ustack_n);
	return 0;
}
