/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Output formats: each writer reads a struct profile and writes one file. */
#ifndef ASGST_WRITERS_H
#define ASGST_WRITERS_H

#include <stdint.h>
#include <stdio.h>

/* the writers escape strings the JSON way (json, html, pprof's UTF-8) */
#include "util/json.h"

struct profile;

enum output_format {
	OUT_NONE = 0,
	OUT_COLLAPSED,
	OUT_JSON,
	OUT_PPROF,
	OUT_HTML,
	OUT_RAW,
	OUT_TOP,
};

/* "collapsed"/"folded", "json", ...; OUT_NONE when unknown */
enum output_format output_format__from_name(const char *name);
/* by extension: .collapsed .folded .txt .json .pb.gz .html .asgst */
enum output_format output_format__from_path(const char *path);
const char *output_format__name(enum output_format f);

/*
 * 0 on success, -errno on write failure. write_collapsed: the profile's
 * one event family (output/evfamily.h), or, when it holds several, each
 * in a block of its own after a line "# event: time|alloc|lock";
 * write_collapsed_family: that family's stacks only.
 */
int write_collapsed(const struct profile *p, FILE *f);
int write_collapsed_family(const struct profile *p, FILE *f, unsigned family);
int write_json(const struct profile *p, FILE *f);
int write_pprof(const struct profile *p, FILE *f);
/*
 * Some stacks of one event, as record --push sends them: sel->idx's
 * stacks (profile__stack() indices, all of sel->event), no sample labels
 * (a series' labels say whose they are), the value types of that event
 * only: cpu: samples/count, cpu/nanoseconds; off-CPU and lock:
 * contentions/count, delay/nanoseconds; alloc: alloc_objects/count,
 * alloc_space/bytes. 0 or -errno.
 */
struct pprof_select {
	const uint32_t *idx;
	size_t n;
	uint8_t event;		/* enum trace_event */
};
int write_pprof_select(const struct profile *p, FILE *f,
		       const struct pprof_select *sel);
int write_html(const struct profile *p, FILE *f);
int write_top(const struct profile *p, FILE *f);	/* write_top.c */
/* report --pinned: pinned off-CPU time by pinning frame (write_pinned.c) */
int write_pinned(const struct profile *p, FILE *f);

#endif /* ASGST_WRITERS_H */
