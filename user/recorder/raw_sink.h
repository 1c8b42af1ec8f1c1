/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pipeline's sink (profile/pipeline.h) as a raw recording: samples,
 * code-map bytes and processes become the chunks of output/raw.h.
 */
#ifndef ASGST_RAW_SINK_H
#define ASGST_RAW_SINK_H

#include "profile/pipeline.h"

struct raw_writer;

/*
 * s writes into *w, the writer there when a call comes (NULL: the call
 * does nothing and says -EBADF), so a recording can give each
 * --switch-output period a new file behind one sink. The writer keeps its
 * first write error (raw_writer__close returns it).
 */
void raw_sink__init(struct pipeline_sink *s, struct raw_writer **w);

#endif /* ASGST_RAW_SINK_H */
