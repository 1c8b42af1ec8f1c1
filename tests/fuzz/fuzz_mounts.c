// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer: mountinfo text parsed, then paths tested against it. */
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "util/mounts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mount_table t = { 0 };
	char path[512];
	size_t n;

	if (mount_table__parse(&t, (const char *)data, size))
		return 0;
	/* every mount point, a child of it, and the input's head as a path */
	for (size_t i = 0; i < t.n; i++) {
		const struct mount_ent *m = mount_table__path_risky(&t, t.v[i].point);

		if (t.v[i].risky && !m)
			__builtin_trap();	/* its own point must be refused */
		snprintf(path, sizeof(path), "%s/../%s/x", t.v[i].point,
			 t.v[i].point);
		mount_table__path_risky(&t, path);
		mount_table__find_id(&t, t.v[i].id);
	}
	n = size < sizeof(path) - 1 ? size : sizeof(path) - 1;
	memcpy(path, data, n);
	path[n] = '\0';
	mount_table__path_risky(&t, path);
	mount_table__free(&t);
	return 0;
}
