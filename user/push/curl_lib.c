// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libcurl through dlopen (push/curl_lib.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "push/curl_lib.h"
#include "util/err.h"

struct curl_lib curl_lib;

#define CURL_SONAME	"libcurl.so.4"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char open_err[256];
static int open_rc;

/* one symbol into *slot: false when the library lacks it */
static bool sym(void *h, const char *name, void *slot)
{
	void *p = dlsym(h, name);

	if (!p) {
		snprintf(open_err, sizeof(open_err),
			 "%s has no %s (libcurl 7.68 or later is needed)",
			 CURL_SONAME, name);
		return false;
	}
	*(void **)slot = p;
	return true;
}

#define SYM(field, name)	sym(h, name, &l.field)

static void open_once(void)
{
	struct curl_lib l = { 0 };
	void *h;
	CURLcode rc;

	/* never closed: libcurl's global state lives as long as we do */
	h = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(open_err, sizeof(open_err),
			 "cannot load %s (install libcurl4): %s", CURL_SONAME,
			 dlerror());
		open_rc = -ENOENT;
		return;
	}
	if (!SYM(global_init, "curl_global_init") ||
	    !SYM(easy_strerror, "curl_easy_strerror") ||
	    !SYM(easy_init, "curl_easy_init") ||
	    !SYM(easy_setopt, "curl_easy_setopt") ||
	    !SYM(easy_getinfo, "curl_easy_getinfo") ||
	    !SYM(easy_perform, "curl_easy_perform") ||
	    !SYM(easy_reset, "curl_easy_reset") ||
	    !SYM(easy_cleanup, "curl_easy_cleanup") ||
	    !SYM(easy_escape, "curl_easy_escape") ||
	    !SYM(free, "curl_free") ||
	    !SYM(mime_init, "curl_mime_init") ||
	    !SYM(mime_addpart, "curl_mime_addpart") ||
	    !SYM(mime_name, "curl_mime_name") ||
	    !SYM(mime_filename, "curl_mime_filename") ||
	    !SYM(mime_type, "curl_mime_type") ||
	    !SYM(mime_data, "curl_mime_data") ||
	    !SYM(mime_free, "curl_mime_free") ||
	    !SYM(multi_init, "curl_multi_init") ||
	    !SYM(multi_add_handle, "curl_multi_add_handle") ||
	    !SYM(multi_remove_handle, "curl_multi_remove_handle") ||
	    !SYM(multi_perform, "curl_multi_perform") ||
	    !SYM(multi_poll, "curl_multi_poll") ||
	    !SYM(multi_wakeup, "curl_multi_wakeup") ||
	    !SYM(multi_info_read, "curl_multi_info_read") ||
	    !SYM(multi_cleanup, "curl_multi_cleanup") ||
	    !SYM(slist_append, "curl_slist_append") ||
	    !SYM(slist_free_all, "curl_slist_free_all") ||
	    !SYM(url, "curl_url") ||
	    !SYM(url_set, "curl_url_set") ||
	    !SYM(url_get, "curl_url_get") ||
	    !SYM(url_cleanup, "curl_url_cleanup")) {
		open_rc = -ENOSYS;
		return;
	}
	rc = l.global_init(CURL_GLOBAL_DEFAULT);
	if (rc != CURLE_OK) {
		snprintf(open_err, sizeof(open_err), "libcurl: %s",
			 l.easy_strerror(rc));
		open_rc = -EIO;
		return;
	}
	curl_lib = l;
}

int curl_lib__open(char *err, size_t errlen)
{
	pthread_once(&once, open_once);
	if (open_rc)
		return err__set(err, errlen, open_rc, "%s", open_err);
	return 0;
}
