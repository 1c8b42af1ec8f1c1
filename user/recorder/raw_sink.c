// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The pipeline's sink written as raw-recording chunks (output/raw.h). */
#include <errno.h>

#include "output/raw.h"
#include "recorder/raw_sink.h"

static int sink_sample(void *ctx, const void *rec, size_t len)
{
	struct raw_writer *w = *(struct raw_writer **)ctx;

	if (!w)
		return -EBADF;
	return raw_writer__sample(w, rec, len);
}

static int sink_codemap(void *ctx, pid_t pid, uint64_t off, const void *bytes,
			size_t len)
{
	struct raw_writer *w = *(struct raw_writer **)ctx;
	struct raw_codemap rc = { .pid = (uint32_t)pid, .offset = off };

	if (!w)
		return -EBADF;
	return raw_writer__chunk(w, RAW_CODEMAP, &rc, sizeof(rc), bytes, len);
}

static int sink_proc(void *ctx, const struct pipeline_proc_rec *p)
{
	struct raw_writer *w = *(struct raw_writer **)ctx;
	struct raw_proc_names nm = {
		p->container_id, p->pod_uid, p->service, p->process,
	};

	if (!w)
		return -EBADF;
	return raw_writer__proc(w, p->pid, p->is_jvm, p->jvm_from_seq, p->comm,
				p->maps, p->maps_len, &nm);
}

static int sink_pycode(void *ctx, pid_t pid, const struct py_code_view *v)
{
	struct raw_writer *w = *(struct raw_writer **)ctx;

	if (!w)
		return -EBADF;
	return raw_writer__pycode(w, pid, v);
}

void raw_sink__init(struct pipeline_sink *s, struct raw_writer **w)
{
	s->pycode = sink_pycode;
	s->sample = sink_sample;
	s->codemap = sink_codemap;
	s->proc = sink_proc;
	s->ctx = w;
}
