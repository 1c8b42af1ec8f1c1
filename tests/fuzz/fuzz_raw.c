// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer: the raw recording reader and its decoded-stacks chunks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "profile/profile.h"
#include "output/raw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/fuzz_raw.XXXXXX", err[256];
	struct raw_reader *r = NULL;
	struct profile *p;
	const void *pay;
	uint64_t len;
	uint32_t type;
	int fd = mkstemp(path);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	p = profile__new();
	if (p && raw_reader__open(&r, path, err, sizeof(err)) == 0) {
		while (raw_reader__next(r, &type, &pay, &len, err,
					sizeof(err)) == 1)
			if (type == RAW_STACKS)
				raw__load_stacks(p, pay, len);
		raw_reader__close(r);
	}
	profile__free(p);
	unlink(path);
	return 0;
}
