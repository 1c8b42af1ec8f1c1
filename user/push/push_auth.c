// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The push transport's credentials and URL check (push.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>


#include "push/curl_lib.h"
#include "push/push.h"
#include "util/err.h"

/* an auth file is a few lines; anything bigger is not one */
#define AUTH_FILE_MAX	(64 * 1024)

struct auth_key {
	const char *env;	/* and the file's key */
	size_t off;		/* of the field in struct push_auth */
	bool secret;
};

static const struct auth_key auth_keys[] = {
	{ "ASGST_PUSH_USER", offsetof(struct push_auth, user), false },
	{ "ASGST_PUSH_PASSWORD", offsetof(struct push_auth, password), true },
	{ "ASGST_PUSH_TOKEN", offsetof(struct push_auth, token), true },
	{ "ASGST_PUSH_TENANT", offsetof(struct push_auth, tenant), false },
};

#define N_AUTH_KEYS	(sizeof(auth_keys) / sizeof(auth_keys[0]))

static char **auth_field(struct push_auth *a, const struct auth_key *k)
{
	return (char **)((char *)a + k->off);
}

void push_auth__free(struct push_auth *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < N_AUTH_KEYS; i++) {
		char **f = auth_field(a, &auth_keys[i]);

		if (*f) {
			/* secrets do not linger in freed heap */
			explicit_bzero(*f, strlen(*f));
			free(*f);
			*f = NULL;
		}
	}
}

/* a value goes into an HTTP header: no CR, LF or other control byte */
static bool value_ok(const char *v)
{
	for (; *v; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f)
			return false;
	return true;
}

/* set *f to a copy of v[0..len) ("" unsets) */
static int auth_set(char **f, const char *v, size_t len)
{
	char *c = NULL;

	if (len) {
		c = strndup(v, len);
		if (!c)
			return -ENOMEM;
	}
	if (*f) {
		explicit_bzero(*f, strlen(*f));
		free(*f);
	}
	*f = c;
	return 0;
}

static const struct auth_key *auth_key_find(const char *k, size_t len)
{
	size_t i;

	for (i = 0; i < N_AUTH_KEYS; i++)
		if (strlen(auth_keys[i].env) == len &&
		    !memcmp(auth_keys[i].env, k, len))
			return &auth_keys[i];
	return NULL;
}

/* the file's lines into a; secret set when one holds a password or token */
static int auth_parse(struct push_auth *a, const char *file, char *text,
		      bool *secret, char *err, size_t errlen)
{
	char *line = text, *next;
	unsigned ln = 0;
	int ret;

	for (; line; line = next) {
		char *eq, *k, *v, *kend, *vend;
		const struct auth_key *key;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		ln++;
		k = line;
		while (*k == ' ' || *k == '\t')
			k++;
		if (*k == '\0' || *k == '#' || *k == '\r')
			continue;
		eq = strchr(k, '=');
		if (!eq)
			return err__set(err, errlen, -EINVAL,
					"%s:%u: not KEY=VALUE", file, ln);
		kend = eq;
		while (kend > k && (kend[-1] == ' ' || kend[-1] == '\t'))
			kend--;
		key = auth_key_find(k, (size_t)(kend - k));
		if (!key)
			return err__set(err, errlen, -EINVAL,
					"%s:%u: unknown key '%.*s' (ASGST_PUSH_USER, _PASSWORD, _TOKEN or _TENANT)",
					file, ln, (int)(kend - k) > 64 ? 64 : (int)(kend - k), k);
		v = eq + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		vend = v + strlen(v);
		while (vend > v && (vend[-1] == ' ' || vend[-1] == '\t' ||
				    vend[-1] == '\r'))
			vend--;
		*vend = '\0';
		if (!value_ok(v))
			return err__set(err, errlen, -EINVAL,
					"%s:%u: %s holds a control character",
					file, ln, key->env);
		ret = auth_set(auth_field(a, key), v, (size_t)(vend - v));
		if (ret)
			return err__set(err, errlen, ret, "%s: out of memory", file);
		if (key->secret && vend > v)
			*secret = true;
	}
	return 0;
}

static int auth_file(struct push_auth *a, const char *file, char *err,
		     size_t errlen)
{
	struct stat st;
	char *text = NULL;
	bool secret = false;
	ssize_t n;
	int fd, ret;

	/* no link followed, no FIFO waited on: O_NOFOLLOW, O_NONBLOCK */
	fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return err__set(err, errlen, -errno, "auth file %s: %s", file,
				strerror(errno));
	if (fstat(fd, &st)) {
		ret = err__set(err, errlen, -errno, "auth file %s: %s", file,
			       strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = err__set(err, errlen, -EINVAL,
			       "auth file %s is not a regular file (refused)", file);
		goto cleanup;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		ret = err__set(err, errlen, -EPERM,
			       "auth file %s is owned by uid %u, not root or us (refused)",
			       file, (unsigned)st.st_uid);
		goto cleanup;
	}
	/* whoever may write it chooses where the credentials go */
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		ret = err__set(err, errlen, -EPERM,
			       "auth file %s is writable by group or other (refused; chmod 600 it)",
			       file);
		goto cleanup;
	}
	if (st.st_size > AUTH_FILE_MAX) {
		ret = err__set(err, errlen, -EFBIG,
			       "auth file %s is over %d bytes (refused)", file,
			       AUTH_FILE_MAX);
		goto cleanup;
	}
	text = calloc(1, (size_t)st.st_size + 1);
	if (!text) {
		ret = err__set(err, errlen, -ENOMEM, "auth file %s: out of memory", file);
		goto cleanup;
	}
	n = pread(fd, text, (size_t)st.st_size, 0);
	if (n != st.st_size) {
		ret = err__set(err, errlen, n < 0 ? -errno : -EIO,
			       "auth file %s: short read", file);
		goto cleanup;
	}
	ret = auth_parse(a, file, text, &secret, err, errlen);
	if (ret)
		goto cleanup;
	if (secret && (st.st_mode & (S_IRGRP | S_IROTH)))
		ret = err__set(err, errlen, -EPERM,
			       "auth file %s holds a secret and is readable by group or other (refused; chmod 600 it)",
			       file);
cleanup:
	if (text) {
		explicit_bzero(text, (size_t)st.st_size);
		free(text);
	}
	close(fd);
	return ret;
}

int push_auth__load(struct push_auth *a, const char *file, char *err, size_t errlen)
{
	size_t i;
	int ret = 0;

	memset(a, 0, sizeof(*a));
	for (i = 0; i < N_AUTH_KEYS; i++) {
		const char *v = getenv(auth_keys[i].env);

		if (!v)
			continue;
		if (!value_ok(v)) {
			ret = err__set(err, errlen, -EINVAL,
				       "%s holds a control character", auth_keys[i].env);
			goto cleanup;
		}
		ret = auth_set(auth_field(a, &auth_keys[i]), v, strlen(v));
		if (ret) {
			err__set(err, errlen, ret, "out of memory");
			goto cleanup;
		}
	}
	if (file) {
		ret = auth_file(a, file, err, errlen);
		if (ret)
			goto cleanup;
	}
	if (a->user && strchr(a->user, ':')) {
		ret = err__set(err, errlen, -EINVAL,
			       "ASGST_PUSH_USER may not hold ':' (HTTP Basic)");
		goto cleanup;
	}
	if (a->token && (a->user || a->password)) {
		ret = err__set(err, errlen, -EINVAL,
			       "both a token and a user or password to push with: give one");
		goto cleanup;
	}
cleanup:
	if (ret)
		push_auth__free(a);
	return ret;
}

int push_url__check(const char *url, char *err, size_t errlen)
{
	char *scheme = NULL, *host = NULL, *part = NULL;
	CURLU *u = NULL;
	const char *s;
	int ret = -EINVAL;

	if (!url || !*url)
		return err__set(err, errlen, -EINVAL, "push URL is empty");
	for (s = url; *s; s++)
		if ((unsigned char)*s <= 0x20 || *s == 0x7f)
			return err__set(err, errlen, -EINVAL,
					"push URL holds a space or control character");
	if (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8))
		return err__set(err, errlen, -EINVAL,
				"push URL %.200s: not http:// or https://", url);
	if ((ret = curl_lib__open(err, errlen)))
		return ret;
	ret = -EINVAL;
	u = curl_lib.url();
	if (!u) {
		ret = err__set(err, errlen, -ENOMEM, "out of memory");
		goto cleanup;
	}
	if (curl_lib.url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
		err__set(err, errlen, ret, "push URL %.200s: not a URL", url);
		goto cleanup;
	}
	if (curl_lib.url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") && strcmp(scheme, "https"))) {
		err__set(err, errlen, ret, "push URL %.200s: not http:// or https://", url);
		goto cleanup;
	}
	if (curl_lib.url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host) {
		err__set(err, errlen, ret, "push URL %.200s: no host", url);
		goto cleanup;
	}
	if (curl_lib.url_get(u, CURLUPART_USER, &part, 0) == CURLUE_OK ||
	    curl_lib.url_get(u, CURLUPART_PASSWORD, &part, 0) == CURLUE_OK) {
		/* not echoed: it holds a secret */
		err__set(err, errlen, ret,
			 "push URL holds a user or password: give them by ASGST_PUSH_USER/_PASSWORD or the auth file");
		goto cleanup;
	}
	if (curl_lib.url_get(u, CURLUPART_QUERY, &part, 0) == CURLUE_OK ||
	    curl_lib.url_get(u, CURLUPART_FRAGMENT, &part, 0) == CURLUE_OK) {
		err__set(err, errlen, ret,
			 "push URL %.200s: a query or fragment (give the base URL; /ingest is added)",
			 url);
		goto cleanup;
	}
	ret = 0;
cleanup:
	curl_lib.free(part);
	curl_lib.free(host);
	curl_lib.free(scheme);
	curl_lib.url_cleanup(u);
	return ret;
}
