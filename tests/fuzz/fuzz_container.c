// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: /proc/PID/cgroup text to a container id and pod uid
 * (user/profile/container.c). Whatever the text, an id is 64 lowercase hex
 * digits or nothing, a pod uid a kubelet uid or nothing, and the v2 path
 * fits its buffer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/container.h"

static int is_lhex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static void check_ids(const struct container_ids *ci)
{
	size_t n = strlen(ci->id), p = strlen(ci->pod_uid);

	if (n && n != CONTAINER_ID_LEN)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!is_lhex(ci->id[i]))
			abort();
	if (p && p != 32 && p != 36)
		abort();
	for (size_t i = 0; i < p; i++)
		if (!is_lhex(ci->pod_uid[i]) && ci->pod_uid[i] != '-')
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char path[256], prefix[CONTAINER_ID_LEN + 1], err[256], *arg;
	struct container_ids ci;
	bool found;

	found = container__parse_cgroup(text, size, &ci);
	check_ids(&ci);
	if (found != (ci.id[0] || ci.pod_uid[0]))
		abort();
	container__parse_path(text, size, &ci);
	check_ids(&ci);
	if (container__cgroup2_path(text, size, path, sizeof(path)) &&
	    strlen(path) >= sizeof(path))
		abort();
	/* the same bytes as a --container argument */
	arg = malloc(size + 1);
	if (!arg)
		return 0;
	memcpy(arg, data, size);
	arg[size] = '\0';
	if (!container__parse_arg(arg, prefix, sizeof(prefix), err,
				  sizeof(err))) {
		if (strlen(prefix) < CONTAINER_PREFIX_MIN ||
		    strlen(prefix) > CONTAINER_ID_LEN)
			abort();
		container__id_matches(ci.id[0] ? ci.id : NULL, prefix);
	}
	free(arg);
	return 0;
}
