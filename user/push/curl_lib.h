/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libcurl, opened with dlopen when a push is asked for: linked, it and
 * the thirty libraries it brings (TLS, Kerberos, LDAP, ...) cost every
 * run of the recorder some 5 ms of start-up, and most runs never push.
 * The calls go through curl_lib's pointers: curl_lib.easy_setopt(...).
 */
#ifndef ASGST_CURL_LIB_H
#define ASGST_CURL_LIB_H

#include <stddef.h>

#include <curl/curl.h>

struct curl_lib {
	CURLcode (*global_init)(long flags);
	const char *(*easy_strerror)(CURLcode code);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	CURLcode (*easy_perform)(CURL *c);
	void (*easy_reset)(CURL *c);
	void (*easy_cleanup)(CURL *c);
	char *(*easy_escape)(CURL *c, const char *s, int len);
	void (*free)(void *p);
	curl_mime *(*mime_init)(CURL *c);
	curl_mimepart *(*mime_addpart)(curl_mime *m);
	CURLcode (*mime_name)(curl_mimepart *p, const char *name);
	CURLcode (*mime_filename)(curl_mimepart *p, const char *name);
	CURLcode (*mime_type)(curl_mimepart *p, const char *type);
	CURLcode (*mime_data)(curl_mimepart *p, const char *data, size_t len);
	void (*mime_free)(curl_mime *m);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_add_handle)(CURLM *m, CURL *c);
	CURLMcode (*multi_remove_handle)(CURLM *m, CURL *c);
	CURLMcode (*multi_perform)(CURLM *m, int *running);
	CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd extra[],
				unsigned int n, int timeout_ms, int *ret);
	CURLMcode (*multi_wakeup)(CURLM *m);
	CURLMsg *(*multi_info_read)(CURLM *m, int *left);
	CURLMcode (*multi_cleanup)(CURLM *m);
	struct curl_slist *(*slist_append)(struct curl_slist *l,
					   const char *s);
	void (*slist_free_all)(struct curl_slist *l);
	CURLU *(*url)(void);
	CURLUcode (*url_set)(CURLU *u, CURLUPart part, const char *s,
			     unsigned int flags);
	CURLUcode (*url_get)(const CURLU *u, CURLUPart part, char **s,
			     unsigned int flags);
	void (*url_cleanup)(CURLU *u);
};

/* filled by curl_lib__open */
extern struct curl_lib curl_lib;

/*
 * Open libcurl (libcurl.so.4) and its global state, once for the process
 * (safe from any thread): 0, or < 0 with one line in err saying what is
 * missing.
 */
int curl_lib__open(char *err, size_t errlen);

#endif
