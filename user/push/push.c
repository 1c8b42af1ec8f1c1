// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The push transport (push.h): a byte-bounded FIFO of profiles and the one
 * thread that POSTs them to a Pyroscope server's /ingest with libcurl,
 * retrying with backoff, dropping the oldest when full.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#include "push/curl_lib.h"
#include "push/push.h"
#include "util/clock.h"
#include "util/err.h"

#define BACKOFF_MIN_MS		1000u
#define BACKOFF_MAX_MS		10000u
/* what is kept of an answer's body, and shown of it in the last error */
#define ANSWER_KEEP		4096u
#define ANSWER_SHOWN		120

#ifndef ASGST_VERSION
#define ASGST_VERSION "0"
#endif

struct push_item {
	struct push_item *next;
	struct push_profile p;
	size_t bytes;		/* pprof + config: what the bound counts */
	bool doomed;		/* dropped by the bound while in flight */
};

struct pusher {
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* CLOCK_MONOTONIC */
	pthread_t thread;
	/* under lock */
	struct push_item *head, *tail;
	struct push_item *inflight;	/* out of the list while sent */
	struct push_stats st;
	uint64_t retry_at_ms;	/* head-of-line backoff: no send before */
	unsigned backoff_ms;	/* the next backoff; 0 after a success */
	char last_error[PUSH_ERR_MAX];
	/* read by the transfer's progress callback without the lock */
	atomic_bool stop;
	_Atomic uint64_t deadline_ms;	/* monotonic, once stop */
	/* set at creation, read-only after */
	char *ingest;		/* base URL + "/ingest" */
	size_t queue_bytes;
	unsigned timeout_ms;
	struct push_auth auth;
	uint64_t rng;
	bool ended;		/* the thread joined (the caller's only) */
	/* drives the thread's transfer; pusher__end() wakes its poll */
	CURLM *multi;
};

enum send_result { SEND_OK, SEND_REJECTED, SEND_RETRY, SEND_STOPPED };

/* the body of an answer, bounded */
struct answer {
	char buf[ANSWER_KEEP];
	size_t len;
};

static void item__free(struct push_item *it)
{
	if (!it)
		return;
	free(it->p.name);
	free(it->p.pprof);
	free(it->p.sample_type_config);
	free(it);
}

static void profile__release(struct push_profile *pp)
{
	free(pp->name);
	free(pp->pprof);
	free(pp->sample_type_config);
	pp->name = NULL;
	pp->pprof = NULL;
	pp->sample_type_config = NULL;
}

static char *dup_or_null(const char *s, bool *fail)
{
	char *c;

	if (!s)
		return NULL;
	c = strdup(s);
	if (!c)
		*fail = true;
	return c;
}

/* a header value may not carry CR or LF (another header) */
static bool header_ok(const char *s)
{
	return !s || !strpbrk(s, "\r\n");
}

/* xorshift64*: jitter only, nothing secret */
static uint64_t rng_next(struct pusher *p)
{
	p->rng ^= p->rng >> 12;
	p->rng ^= p->rng << 25;
	p->rng ^= p->rng >> 27;
	return p->rng * 2685821657736338717ull;
}

/* the wait before the next try: half the backoff plus up to half again */
static uint64_t backoff_next(struct pusher *p, long retry_after_s)
{
	unsigned b = p->backoff_ms ? p->backoff_ms : BACKOFF_MIN_MS;
	uint64_t wait = b / 2 + rng_next(p) % (b / 2 + 1);

	p->backoff_ms = b >= BACKOFF_MAX_MS / 2 ? BACKOFF_MAX_MS : b * 2;
	/* the server's word, within our cap (and no overflow of a huge one) */
	if (retry_after_s > 0)
		wait = retry_after_s >= BACKOFF_MAX_MS / 1000 ? BACKOFF_MAX_MS :
		       (uint64_t)retry_after_s * 1000u;
	return wait;
}

static void cond_wait_until(struct pusher *p, uint64_t until_ms)
{
	struct timespec ts = {
		.tv_sec = (time_t)(until_ms / 1000),
		.tv_nsec = (long)(until_ms % 1000) * 1000000l,
	};

	pthread_cond_timedwait(&p->cond, &p->lock, &ts);
}

static size_t answer_write(char *data, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	size_t len = size * n, room = sizeof(a->buf) - 1 - a->len;

	/* the rest is read and dropped: an answer never grows our memory */
	if (len < room)
		room = len;
	memcpy(a->buf + a->len, data, room);
	a->len += room;
	a->buf[a->len] = '\0';
	return len;
}

static bool past_deadline(struct pusher *p)
{
	return atomic_load(&p->stop) &&
	       clock__mono_ms() >= atomic_load(&p->deadline_ms);
}

/* abort the transfer once pusher__end()'s deadline has passed */
static int transfer_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
			     curl_off_t ultotal, curl_off_t ulnow)
{
	struct pusher *p = arg;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return past_deadline(p);
}

/*
 * curl_lib.easy_perform() on our multi handle: its poll is woken by
 * pusher__end() and waits no later than the deadline, so the end is not
 * held for the second curl may otherwise sleep between progress calls.
 */
static CURLcode perform_bounded(struct pusher *p, CURL *c)
{
	CURLcode rc = CURLE_ABORTED_BY_CALLBACK;
	struct CURLMsg *msg;
	int running = 1, left;

	if (curl_lib.multi_add_handle(p->multi, c) != CURLM_OK)
		return CURLE_OUT_OF_MEMORY;
	for (;;) {
		uint64_t now, wait = 1000;

		if (curl_lib.multi_perform(p->multi, &running) != CURLM_OK) {
			rc = CURLE_OUT_OF_MEMORY;
			goto cleanup;
		}
		if (!running)
			break;
		if (past_deadline(p))
			goto cleanup;	/* aborted */
		if (atomic_load(&p->stop)) {
			uint64_t d = atomic_load(&p->deadline_ms);

			now = clock__mono_ms();
			wait = now >= d ? 0 : d - now < wait ? d - now : wait;
		}
		if (curl_lib.multi_poll(p->multi, NULL, 0, (int)wait, NULL) != CURLM_OK) {
			rc = CURLE_OUT_OF_MEMORY;
			goto cleanup;
		}
	}
	rc = CURLE_RECV_ERROR;	/* no message: should not happen */
	while ((msg = curl_lib.multi_info_read(p->multi, &left)))
		if (msg->msg == CURLMSG_DONE && msg->easy_handle == c)
			rc = msg->data.result;
cleanup:
	curl_lib.multi_remove_handle(p->multi, c);
	return rc;
}

/* the error line: "HTTP 503 from URL: answer", control bytes as spaces */
static void set_http_error(struct pusher *p, long code, const struct answer *a)
{
	char shown[ANSWER_SHOWN + 1];
	size_t i, n = a->len < ANSWER_SHOWN ? a->len : ANSWER_SHOWN;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)a->buf[i];

		shown[i] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
	}
	shown[n] = '\0';
	pthread_mutex_lock(&p->lock);
	snprintf(p->last_error, sizeof(p->last_error), "HTTP %ld from %s%s%s",
		 code, p->ingest, n ? ": " : "", shown);
	pthread_mutex_unlock(&p->lock);
}

static void set_error(struct pusher *p, const char *fmt, const char *a,
		      const char *b)
{
	pthread_mutex_lock(&p->lock);
	snprintf(p->last_error, sizeof(p->last_error), fmt, a, b);
	pthread_mutex_unlock(&p->lock);
}

/* the ingest URL with its query; NULL when out of memory */
static char *ingest_url(struct pusher *p, CURL *c, const struct push_profile *pp)
{
	char *name = NULL, *spy = NULL, *url = NULL;

	name = curl_lib.easy_escape(c, pp->name ? pp->name : "", 0);
	spy = curl_lib.easy_escape(c, pp->spy_name ? pp->spy_name : "", 0);
	if (!name || !spy)
		goto cleanup;
	if (asprintf(&url, "%s?name=%s&from=%llu&until=%llu&format=pprof&sampleRate=%u&spyName=%s",
		     p->ingest, name, (unsigned long long)pp->from_s,
		     (unsigned long long)pp->until_s, pp->sample_rate, spy) < 0)
		url = NULL;
cleanup:
	curl_lib.free(spy);
	curl_lib.free(name);
	return url;
}

/*
 * One POST of pp on c (the thread's handle, kept for its connection).
 * *retry_after: the server's Retry-After in seconds, or -1.
 */
static enum send_result send_one(struct pusher *p, CURL *c,
				 const struct push_profile *pp, long *retry_after)
{
	char curl_err[CURL_ERROR_SIZE] = "", *tenant_hdr = NULL, *url = NULL;
	struct curl_slist *hdrs = NULL, *h;
	struct answer *ans = NULL;
	curl_mimepart *part;
	curl_mime *mime = NULL;
	enum send_result res = SEND_RETRY;
	uint64_t now, timeout = p->timeout_ms;
	curl_off_t ra = -1;
	long code = 0;
	CURLcode rc;

	*retry_after = -1;
	/* the handle is kept for its connection, not its options */
	curl_lib.easy_reset(c);
	ans = calloc(1, sizeof(*ans));
	url = ingest_url(p, c, pp);
	if (!ans || !url)
		goto oom;
	/* past pusher__end()'s call, no request outlives its deadline */
	if (atomic_load(&p->stop)) {
		now = clock__mono_ms();
		if (now >= atomic_load(&p->deadline_ms)) {
			res = SEND_STOPPED;
			goto cleanup;
		}
		if (atomic_load(&p->deadline_ms) - now < timeout)
			timeout = atomic_load(&p->deadline_ms) - now;
	}

	mime = curl_lib.mime_init(c);
	if (!mime)
		goto oom;
	part = curl_lib.mime_addpart(mime);
	if (!part || curl_lib.mime_name(part, "profile") ||
	    curl_lib.mime_filename(part, "profile.pprof") ||
	    curl_lib.mime_type(part, "application/octet-stream") ||
	    curl_lib.mime_data(part, pp->pprof ? pp->pprof : "", pp->pprof_len))
		goto oom;
	if (pp->sample_type_config) {
		part = curl_lib.mime_addpart(mime);
		if (!part || curl_lib.mime_name(part, "sample_type_config") ||
		    curl_lib.mime_filename(part, "sample_type_config.json") ||
		    curl_lib.mime_type(part, "application/json") ||
		    curl_lib.mime_data(part, pp->sample_type_config, CURL_ZERO_TERMINATED))
			goto oom;
	}

	/* no "Expect: 100-continue": it costs a round trip, or a second */
	h = curl_lib.slist_append(hdrs, "Expect:");
	if (!h)
		goto oom;
	hdrs = h;
	if (p->auth.tenant) {
		if (asprintf(&tenant_hdr, "X-Scope-OrgID: %s", p->auth.tenant) < 0) {
			tenant_hdr = NULL;
			goto oom;
		}
		h = curl_lib.slist_append(hdrs, tenant_hdr);
		if (!h)
			goto oom;
		hdrs = h;
	}

	curl_lib.easy_setopt(c, CURLOPT_URL, url);
	/* root: http(s) only, never redirected elsewhere, no signals */
	curl_lib.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_lib.easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_lib.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_lib.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_lib.easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout);
	curl_lib.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout);
	curl_lib.easy_setopt(c, CURLOPT_USERAGENT, "asgst-bpf/" ASGST_VERSION);
	curl_lib.easy_setopt(c, CURLOPT_MIMEPOST, mime);
	curl_lib.easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_lib.easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
	curl_lib.easy_setopt(c, CURLOPT_WRITEFUNCTION, answer_write);
	curl_lib.easy_setopt(c, CURLOPT_WRITEDATA, ans);
	curl_lib.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_lib.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, transfer_progress);
	curl_lib.easy_setopt(c, CURLOPT_XFERINFODATA, p);
	if (p->auth.token) {
		curl_lib.easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
		curl_lib.easy_setopt(c, CURLOPT_XOAUTH2_BEARER, p->auth.token);
	} else if (p->auth.user) {
		curl_lib.easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_lib.easy_setopt(c, CURLOPT_USERNAME, p->auth.user);
		curl_lib.easy_setopt(c, CURLOPT_PASSWORD,
				 p->auth.password ? p->auth.password : "");
	}

	rc = perform_bounded(p, c);
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		res = SEND_STOPPED;
		set_error(p, "%s: %s", p->ingest, "aborted at the end of the recording");
		goto cleanup;
	}
	if (rc != CURLE_OK) {
		set_error(p, "%s: %s", p->ingest,
			  curl_err[0] ? curl_err : curl_lib.easy_strerror(rc));
		goto cleanup;	/* connection, timeout: retried */
	}
	curl_lib.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300) {
		res = SEND_OK;
		goto cleanup;
	}
	set_http_error(p, code, ans);
	if (code == 408 || code == 429 || code >= 500) {
		if ((code == 429 || code == 503) &&
		    curl_lib.easy_getinfo(c, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
			*retry_after = (long)ra;
		res = SEND_RETRY;
	} else {
		/* 3xx (not followed), other 4xx: trying again changes nothing */
		res = SEND_REJECTED;
	}
	goto cleanup;
oom:
	set_error(p, "%s: %s", p->ingest, "out of memory");
	res = SEND_RETRY;
cleanup:
	/* the handle must not point at what is freed here */
	curl_lib.easy_setopt(c, CURLOPT_MIMEPOST, NULL);
	curl_lib.easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_lib.easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
	curl_lib.mime_free(mime);
	curl_lib.slist_free_all(hdrs);
	free(tenant_hdr);
	free(url);
	free(ans);
	return res;
}

/* queued = list + in flight; a doomed one's bytes are already off */
static void item__done(struct pusher *p, struct push_item *it)
{
	if (!it->doomed)
		p->st.queued_bytes -= it->bytes;
	p->st.queued--;
	item__free(it);
}

static void *pusher__run(void *arg)
{
	struct pusher *p = arg;
	struct push_item *it;
	CURL *c = curl_lib.easy_init();

	pthread_mutex_lock(&p->lock);
	if (!c)
		snprintf(p->last_error, sizeof(p->last_error), "%s: %s", p->ingest,
			 "cannot make a curl handle");
	for (;;) {
		enum send_result r;
		uint64_t now = clock__mono_ms(), until;
		long retry_after;

		if (atomic_load(&p->stop) &&
		    (!p->head || now >= atomic_load(&p->deadline_ms)))
			break;
		if (!p->head || !c) {
			if (atomic_load(&p->stop))
				cond_wait_until(p, atomic_load(&p->deadline_ms));
			else
				pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		if (now < p->retry_at_ms) {
			until = p->retry_at_ms;
			if (atomic_load(&p->stop) && atomic_load(&p->deadline_ms) < until)
				until = atomic_load(&p->deadline_ms);
			cond_wait_until(p, until);
			continue;
		}
		it = p->head;
		p->head = it->next;
		if (!p->head)
			p->tail = NULL;
		it->next = NULL;
		p->inflight = it;
		pthread_mutex_unlock(&p->lock);

		r = send_one(p, c, &it->p, &retry_after);

		pthread_mutex_lock(&p->lock);
		p->inflight = NULL;
		switch (r) {
		case SEND_OK:
			p->st.sent++;
			p->st.bytes_sent += it->bytes;
			p->backoff_ms = 0;
			p->retry_at_ms = 0;
			item__done(p, it);
			break;
		case SEND_REJECTED:
			p->st.rejected++;
			item__done(p, it);
			break;
		case SEND_RETRY:
		case SEND_STOPPED:
			if (it->doomed) {
				p->st.dropped_full++;
				item__done(p, it);
				break;
			}
			/* back at the head: the oldest is sent first */
			it->next = p->head;
			p->head = it;
			if (!p->tail)
				p->tail = it;
			if (r == SEND_RETRY) {
				p->st.retried++;
				p->retry_at_ms = clock__mono_ms() +
						 backoff_next(p, retry_after);
			}
			break;
		}
	}
	/* the end: what is left is dropped */
	while ((it = p->head)) {
		p->head = it->next;
		p->st.dropped_end++;
		item__done(p, it);
	}
	p->tail = NULL;
	pthread_mutex_unlock(&p->lock);
	curl_lib.easy_cleanup(c);
	return NULL;
}

struct pusher *pusher__new(const struct push_opts *o, char *err, size_t errlen)
{
	struct pusher *p = NULL;
	pthread_condattr_t ca;
	sigset_t all, old;
	bool fail = false, cond_made = false, lock_made = false;
	size_t blen;
	int ret;

	if (push_url__check(o->url, err, errlen))
		return NULL;
	if (!header_ok(o->auth.user) || !header_ok(o->auth.password) ||
	    !header_ok(o->auth.token) || !header_ok(o->auth.tenant)) {
		err__set(err, errlen, -EINVAL, "push credentials hold a line break");
		return NULL;
	}
	/* once for the process: libcurl's global state is never torn down */
	if (curl_lib__open(err, errlen))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		goto oom;
	p->multi = curl_lib.multi_init();
	if (!p->multi)
		goto oom;
	p->queue_bytes = o->queue_bytes ? o->queue_bytes : PUSH_QUEUE_BYTES_DEFAULT;
	p->timeout_ms = o->timeout_ms ? o->timeout_ms : PUSH_TIMEOUT_MS_DEFAULT;
	p->rng = clock__mono_ns() ^ (uint64_t)(uintptr_t)p;
	if (!p->rng)
		p->rng = 1;
	atomic_init(&p->stop, false);
	atomic_init(&p->deadline_ms, 0);
	/* base without its trailing '/'s, then /ingest */
	blen = strlen(o->url);
	while (blen && o->url[blen - 1] == '/')
		blen--;
	if (asprintf(&p->ingest, "%.*s/ingest", (int)blen, o->url) < 0) {
		p->ingest = NULL;
		goto oom;
	}
	p->auth.user = dup_or_null(o->auth.user, &fail);
	p->auth.password = dup_or_null(o->auth.password, &fail);
	p->auth.token = dup_or_null(o->auth.token, &fail);
	p->auth.tenant = dup_or_null(o->auth.tenant, &fail);
	if (fail)
		goto oom;
	if (pthread_mutex_init(&p->lock, NULL))
		goto oom;
	lock_made = true;
	if (pthread_condattr_init(&ca))
		goto oom;
	ret = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (ret)
		goto oom;
	cond_made = true;
	/* the recorder's signals go to its own threads, never this one */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&p->thread, NULL, pusher__run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		err__set(err, errlen, -ret, "push thread: %s", strerror(ret));
		goto cleanup;
	}
	return p;
oom:
	err__set(err, errlen, -ENOMEM, "push: out of memory");
cleanup:
	if (p) {
		if (cond_made)
			pthread_cond_destroy(&p->cond);
		if (lock_made)
			pthread_mutex_destroy(&p->lock);
		push_auth__free(&p->auth);
		curl_lib.multi_cleanup(p->multi);
		free(p->ingest);
		free(p);
	}
	return NULL;
}

int pusher__enqueue(struct pusher *p, struct push_profile *pp)
{
	struct push_item *it, *old;
	size_t bytes = pp->pprof_len +
		       (pp->sample_type_config ? strlen(pp->sample_type_config) : 0);

	if (bytes > p->queue_bytes) {
		profile__release(pp);
		pthread_mutex_lock(&p->lock);
		p->st.enqueued++;
		p->st.dropped_full++;
		pthread_mutex_unlock(&p->lock);
		return -E2BIG;
	}
	it = calloc(1, sizeof(*it));
	if (!it) {
		profile__release(pp);
		return -ENOMEM;
	}
	it->p = *pp;
	it->bytes = bytes;
	/* the pusher's now */
	pp->name = NULL;
	pp->pprof = NULL;
	pp->sample_type_config = NULL;

	pthread_mutex_lock(&p->lock);
	/* stop is set under the lock: the thread is gone or going */
	if (atomic_load(&p->stop)) {
		p->st.enqueued++;
		p->st.dropped_end++;
		pthread_mutex_unlock(&p->lock);
		item__free(it);
		return -ESHUTDOWN;
	}
	/* the oldest go first: the one in flight, then the list's head */
	while (p->st.queued_bytes + bytes > p->queue_bytes) {
		if (p->inflight && !p->inflight->doomed) {
			/* counted when its transfer ends: it may yet be sent */
			p->inflight->doomed = true;
			p->st.queued_bytes -= p->inflight->bytes;
			continue;
		}
		old = p->head;
		if (!old)
			break;
		p->head = old->next;
		if (!p->head)
			p->tail = NULL;
		p->st.dropped_full++;
		item__done(p, old);
	}
	if (p->tail)
		p->tail->next = it;
	else
		p->head = it;
	p->tail = it;
	p->st.enqueued++;
	p->st.queued++;
	p->st.queued_bytes += bytes;
	if (p->st.queued_bytes > p->st.queue_bytes_max)
		p->st.queue_bytes_max = p->st.queued_bytes;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void pusher__stats(struct pusher *p, struct push_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->st;
	pthread_mutex_unlock(&p->lock);
}

void pusher__last_error(struct pusher *p, char *buf, size_t len)
{
	if (!len)
		return;
	pthread_mutex_lock(&p->lock);
	snprintf(buf, len, "%s", p->last_error);
	pthread_mutex_unlock(&p->lock);
}

void pusher__end(struct pusher *p, unsigned drain_ms)
{
	if (p->ended)
		return;
	pthread_mutex_lock(&p->lock);
	atomic_store(&p->deadline_ms, clock__mono_ms() + drain_ms);
	atomic_store(&p->stop, true);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	curl_lib.multi_wakeup(p->multi);
	pthread_join(p->thread, NULL);
	p->ended = true;
}

void pusher__free(struct pusher *p, unsigned drain_ms)
{
	if (!p)
		return;
	pusher__end(p, drain_ms);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	push_auth__free(&p->auth);
	curl_lib.multi_cleanup(p->multi);
	free(p->ingest);
	free(p);
}
