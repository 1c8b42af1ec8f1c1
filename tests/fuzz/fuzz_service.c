// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer: what names a service (user/profile/service.c): a java
 * launcher's argv and the container runtimes' files. Whatever the bytes,
 * a name is label-safe and at most SERVICE_NAME_MAX bytes, or there is
 * none.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/service.h"

#define ID	"754a01428d315bc8e8cfc050e60c9d9a2bd85bf328f9de84f5daf1858ed6a625"

static void check(int rc, const char *s)
{
	size_t n = strlen(s);

	if (rc)
		return;
	if (!n || n > SERVICE_NAME_MAX)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789._-/", s[i]))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[SERVICE_NAME_MAX + 1];
	char *buf = malloc(size + 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	out[0] = '\0';
	check(service__jvm_main(buf, size, out, sizeof(out)), out);
	for (int rt = SERVICE_PODMAN; rt <= SERVICE_CRI; rt++) {
		out[0] = '\0';
		check(service__parse_runtime((enum service_runtime)rt, buf,
					     size, ID, out, sizeof(out)), out);
	}
	free(buf);
	return 0;
}
