// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What CFI unwinding costs in user space for one big module (default: the
 * JDK's libjvm.so, the largest binary these hosts run): the time to make
 * its table ready (cfi_table__load_fd: read .eh_frame/.eh_frame_hdr, set
 * libdw up), the memory it keeps, and the time of a row lookup by libdw
 * (a miss of the row cache) and through the cache, beside the baseline of
 * loading the same module's symbols (elf_module__load), which every
 * profiler pays. Medians of ROUNDS. Usage: bench_cfi [MODULE] [ROUNDS]
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbols/cfi.h"
#include "symbols/elf_symbols.h"
#include "bench/bench_util.h"

#define MAX_ROUNDS	31

static uint64_t median(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static const char *default_module(void)
{
	static char path[4096];
	const char *jh = getenv("JAVA_HOME");

	snprintf(path, sizeof(path), "%s/lib/server/libjvm.so",
		 jh && *jh ? jh : "/usr/lib/jvm/default-java");
	return path;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : default_module();
	int rounds = argc > 2 ? atoi(argv[2]) : 7;
	uint64_t t_cfi[MAX_ROUNDS], t_sym[MAX_ROUNDS], t_miss[MAX_ROUNDS],
		 t_hit[MAX_ROUNDS];
	struct elf_module_opts o = { .root_fd = -1 };
	struct elf_module *m = NULL;
	struct cfi_table *t = NULL;
	struct cfi_cache *c = NULL;
	size_t nsyms = 0, found = 0, hot = 0;
	struct cfi_row row;
	struct stat st;
	int fd, rc = 1;

	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 7;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "bench_cfi: %s: cannot open\n", path);
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		uint64_t a = now_ns();

		m = elf_module__load(fd, &o);
		t_sym[r] = now_ns() - a;
		a = now_ns();
		t = cfi_table__load_fd(fd);
		t_cfi[r] = now_ns() - a;
		if (!m || !t) {
			fprintf(stderr, "bench_cfi: %s: no symbols or no CFI\n",
				path);
			goto cleanup;
		}
		nsyms = elf_module__nsyms(m);
		if (r + 1 < rounds) {
			cfi_table__free(t);
			elf_module__free(m);
			t = NULL;
			m = NULL;
		}
	}
	/* a row in each function (its address + 1): libdw, then cached */
	hot = nsyms < 1024 ? nsyms : 1024;
	c = cfi_cache__new(4096);	/* the symbolizer's size */
	for (int r = 0; r < rounds && c; r++) {
		uint64_t a = now_ns();

		found = 0;
		for (size_t i = 0; i < nsyms; i++)
			found += !cfi_table__find(t, elf_module__sym_addr(m, i) + 1,
						  &row);
		t_miss[r] = (now_ns() - a) / (nsyms ? nsyms : 1);
		/* a hot set (the pcs a profile keeps meeting) that fits the
		 * symbolizer's cache, over and over */
		for (size_t i = 0; i < hot; i++)
			cfi_cache__find(c, t, elf_module__sym_addr(m, i) + 1,
					&row);
		a = now_ns();
		for (int k = 0; k < 100; k++)
			for (size_t i = 0; i < hot; i++)
				cfi_cache__find(c, t,
						elf_module__sym_addr(m, i) + 1,
						&row);
		t_hit[r] = (now_ns() - a) / (100 * (hot ? hot : 1));
	}
	printf("  %s: %.1f MiB file, %zu symbols, %zu with a CFI row\n",
	       path, (double)st.st_size / 1048576.0, nsyms, found);
	printf("  table ready in %.2f ms (median of %d), symbols loaded in "
	       "%.2f ms (baseline 1.00): ratio %.2f\n",
	       (double)median(t_cfi, rounds) / 1e6, rounds,
	       (double)median(t_sym, rounds) / 1e6,
	       (double)median(t_cfi, rounds) /
	       (double)(median(t_sym, rounds) ? median(t_sym, rounds) : 1));
	printf("  table memory %.2f MiB (%s), %.1f %% of the file\n",
	       (double)cfi_table__bytes(t) / 1048576.0, cfi_table__source(t),
	       100.0 * (double)cfi_table__bytes(t) / (double)st.st_size);
	printf("  row lookup: %" PRIu64 " ns by libdw (a row-cache miss, "
	       "every symbol once), %" PRIu64 " ns from the row cache (%zu "
	       "hot rows; medians of %d rounds)\n", median(t_miss, rounds),
	       median(t_hit, rounds), hot, rounds);
	rc = 0;
cleanup:
	cfi_cache__free(c);
	cfi_table__free(t);
	elf_module__free(m);
	close(fd);
	return rc;
}
