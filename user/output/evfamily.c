// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Event families of a profile's stacks (evfamily.h). */
#include <linux/types.h>
#include "output/evfamily.h"
#include "profile/profile.h"
#include "sampler.h"

const char *ev_family__name(enum ev_family f)
{
	switch (f) {
	case EVF_ALLOC:
		return "alloc";
	case EVF_LOCK:
		return "lock";
	default:
		return "time";
	}
}

unsigned ev_families(const struct profile *p)
{
	const struct profile_meta *m = profile__meta_const(p);
	uint32_t ev = m->events ? m->events : ASGST_EVMASK_CPU;
	unsigned fams = 0;

	if (ev & (ASGST_EVMASK_CPU | ASGST_EVMASK_OFFCPU))
		fams |= EVF_BIT(EVF_TIME);
	if (ev & ASGST_EVMASK_ALLOC)
		fams |= EVF_BIT(EVF_ALLOC);
	if (ev & ASGST_EVMASK_LOCK)
		fams |= EVF_BIT(EVF_LOCK);
	for (size_t i = 0; i < profile__nstacks(p); i++)
		fams |= EVF_BIT(ev_family__of(&profile__stack(p, i)->trace));
	return fams ? fams : EVF_BIT(EVF_TIME);
}

enum ev_family ev_families__main(unsigned fams)
{
	for (int f = 0; f < EVF_N; f++)
		if (fams & EVF_BIT(f))
			return (enum ev_family)f;
	return EVF_TIME;
}

size_t ev_frame_name(const struct trace *t, const struct frame *f, char *buf,
		     size_t size, bool suffix)
{
	const char *s = f->klass && *f->klass ? f->klass : "[unknown class]";
	const char *sfx = t->event == TRACE_EV_LOCK ? "_[l]" : "_[a]";
	size_t n = 0;

	if (f->type != FRAME_CLASS)
		return frame__display_name(f, buf, size, suffix);
	if (!size)
		return 0;
	/* what the collapsed format cannot carry, as frame__display_name */
	for (; *s && n + 1 < size; s++) {
		unsigned char c = *s;

		buf[n++] = c == ';' ? ':' : c < 0x20 || c == 0x7f ? '?' : c;
	}
	while (n && buf[n - 1] == ' ')
		n--;
	for (; suffix && *sfx && n + 1 < size; sfx++)
		buf[n++] = *sfx;
	buf[n] = '\0';
	return n;
}
