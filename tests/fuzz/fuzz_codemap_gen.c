// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target of the code-map reader across a hand-over between
 * generations (agent/codemap_format.h): the input is two map files, the
 * old generation and the new one, with a 4-byte length of the first in
 * front. The old one is opened by path, the new one renamed over that
 * path and the old one marked superseded, as the agent does; the reader
 * follows, then frees what died (retention), and after each step every
 * kind of lookup runs over what it holds.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvm/codemap.h"
#include "codemap_lookups.h"

static char dir[64];


static int put(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, data, size) == (ssize_t)size ? 0 : -1;
	close(fd);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct codemap *cm = NULL;
	struct codemap_stats st;
	char err[600], path[96], next[104];
	uint32_t n_old, flags;
	int fd = -1;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_codemap_gen.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	if (size < 4)
		return 0;
	memcpy(&n_old, data, 4);
	data += 4;
	size -= 4;
	if (n_old > size)
		n_old = (uint32_t)size;
	snprintf(path, sizeof(path), "%s/gen.map", dir);
	snprintf(next, sizeof(next), "%s/gen.map.next", dir);
	if (put(path, data, n_old))
		return 0;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || codemap__open(&cm, "/", path, err, sizeof(err)))
		goto cleanup;
	lookups(cm);
	/* the writer's hand-over: the new file at the path, then the flag */
	if (put(next, data + n_old, size - n_old) || rename(next, path))
		goto cleanup;
	if (pread(fd, &flags, 4, offsetof(struct cm_file_header, flags)) == 4) {
		flags |= CM_F_SUPERSEDED;
		if (pwrite(fd, &flags, 4,
			   offsetof(struct cm_file_header, flags)) != 4)
			goto cleanup;
	}
	codemap__update(cm);
	lookups(cm);
	codemap__stats(cm, &st);
	if (st.handovers > 1 || st.file_bytes > size)
		abort();	/* one newer file, read once */
	/* free what died before the middle of what was seen */
	codemap__prune(cm, st.last_record_ns / 2);
	lookups(cm);
	codemap__prune(cm, UINT64_MAX);
	lookups(cm);
	/* memory stays proportional to the maps (a version 3 method entry
	 * of 8 bytes is a method of ~200 bytes in the reader) */
	if (codemap__mem_bytes(cm) > 32 * (size + 4) + (2u << 20))
		abort();
cleanup:
	if (fd >= 0)
		close(fd);
	codemap__free(cm);
	unlink(path);
	unlink(next);
	return 0;
}
