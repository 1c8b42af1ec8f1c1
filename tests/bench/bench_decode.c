// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Decode cost per sample: replays the real captured JVM samples of
 * tests/data/decode/ (see its README) through decoder__trace() in a loop,
 * at least 100k decodes, each timed alone, and prints the median and p99.
 * Native symbolization is off (no symbolizer: the sampled processes are
 * gone), so this is the ASGST walk plus the code-map lookups and Java name
 * resolution. Usage: bench_decode [DATA_DIR] [MIN_DECODES]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <linux/types.h>

#include "decode/decode.h"
#include "util/strtab.h"
#include "unit/decode_data.h"
#include "bench/bench_util.h"

int main(int argc, char **argv)
{
	static const char *names[] = { "chain-17", "chain-17-xint",
				       "chain-17-c1", "jni-17", "chain-25" };
	const char *dir = argc > 1 ? argv[1] : "tests/data/decode";
	size_t want = argc > 2 ? strtoul(argv[2], NULL, 0) : 100000;
	struct dd_set sets[5];
	size_t nsets = 0, total = 0, k = 0, java = 0;
	static struct frame frames[TRACE_MAX_FRAMES];
	struct strtab *st = strtab__new();
	struct decoder *dec = decoder__new(NULL, st);
	uint64_t *t;
	char err[256];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!dd_load(&sets[nsets], dir, names[i], err, sizeof(err))) {
			total += sets[nsets].n;
			nsets++;
		}
	if (!total || !dec) {
		fprintf(stderr, "bench_decode: no captured samples under %s: run from the top of the tree\n",
			dir);
		return 1;
	}
	t = calloc(want + total, sizeof(*t));
	if (!t)
		return 1;
	while (k < want) {
		for (size_t i = 0; i < nsets; i++)
			for (size_t j = 0; j < sets[i].n; j++) {
				struct trace tr;
				uint64_t a = now_ns();

				decoder__trace(dec, &sets[i].recs[j].s,
					       sets[i].cm, true, &tr, frames,
					       TRACE_MAX_FRAMES);
				t[k++] = now_ns() - a;
				java += tr.kind == TRACE_KIND_JAVA;
			}
	}
	qsort(t, k, sizeof(*t), cmp_u64);
	printf("MEASURE: decode per sample: median %" PRIu64 " ns, p99 %" PRIu64
	       " ns over %zu decodes of %zu real samples (%zu Java)\n",
	       t[k / 2], t[k * 99 / 100], k, total, java * total / k);
	for (size_t i = 0; i < nsets; i++)
		dd_free(&sets[i]);
	free(t);
	decoder__free(dec);
	strtab__free(st);
	return 0;
}
