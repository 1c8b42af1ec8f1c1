/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Strict parser of the sample records defined in bpf/sampler.h. */
#ifndef ASGST_SAMPLE_H
#define ASGST_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>	/* __u32 etc. for the shared header */

#include "sampler.h"

/*
 * The header's fields every version has (ids, event, time, weight_ns,
 * registers, comm): what a reader may look at in a record of at least
 * this many bytes before sample__parse.
 */
#define SAMPLE_HDR_MIN	offsetof(struct asgst_sample_hdr, window_off)

struct sample {
	const struct asgst_sample_hdr *hdr;
	const uint64_t *kstack;		/* hdr->kstack_n pcs */
	const uint64_t *ustack;		/* hdr->ustack_n pcs */
	const uint8_t *window;		/* hdr->window_len bytes from hdr->sp */
	/* a virtual thread's frozen frames: hdr->chunk_len bytes copied from
	 * hdr->chunk_addr; NULL when none (version 1, or not copied) */
	const uint8_t *chunk;
	/* a CPython thread's frames, hdr->py_n of them, innermost first;
	 * NULL when none (before version 4, or not a Python thread) */
	const struct asgst_py_frame *py;
};

/*
 * Validate a record of len bytes and point out its parts (no copy; the
 * pointers are into data, which must be 8-byte aligned). 0, or -EINVAL with
 * *why set to a static reason ("bad magic", "truncated tail", ...).
 */
int sample__parse(const void *data, size_t len, struct sample *out,
		  const char **why);

/* bytes of the record its parts cover (the rest is reservation slack) */
size_t sample__used_len(const struct sample *s);

#endif /* ASGST_SAMPLE_H */
