/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The push transport of `record --push URL`: profiles sent to a Grafana
 * Pyroscope server's HTTP ingest API (POST URL/ingest, format=pprof, a
 * multipart/form-data body of a "profile" part, the gzipped pprof, and a
 * "sample_type_config" part, JSON).
 *
 * One sending thread takes profiles off a FIFO queue bounded in bytes, so
 * the recorder never waits on the network:
 *  - over the bound the oldest queued profiles are dropped (a server that
 *    is down keeps the newest, sent oldest first once it is back);
 *  - connection failures, timeouts, HTTP 408, 429 and 5xx are retried
 *    after 1 s doubling to 10 s (with jitter; a Retry-After of a 429 or
 *    503 is honoured up to 10 s), with no limit on the attempts: the byte
 *    bound and the end are what drop a profile; other 4xx drop it
 *    (rejected), with the server's answer kept as the last error;
 *  - pusher__free() gives what is queued drain_ms, aborting a transfer
 *    in flight at that deadline, however slow the server.
 * As the recorder runs as root, only http and https are spoken, redirects
 * are never followed, credentials never go in the URL and at most 4 KiB of
 * an answer is kept.
 */
#ifndef ASGST_PUSH_H
#define ASGST_PUSH_H

#include <stddef.h>
#include <stdint.h>

#define PUSH_QUEUE_BYTES_DEFAULT	(64u << 20)
#define PUSH_TIMEOUT_MS_DEFAULT		10000u
/* the one-line last error fits in this */
#define PUSH_ERR_MAX			256

/*
 * Credentials, each NULL when not given. A token is sent as
 * "Authorization: Bearer", a user (and password, "" when NULL) as Basic;
 * both at once are refused. tenant: "X-Scope-OrgID".
 */
struct push_auth {
	char *user, *password, *token, *tenant;
};

struct push_opts {
	/* base http(s)://host[:port][/prefix]; /ingest is appended */
	const char *url;
	/* bound on the queued bodies (profile + config bytes); 0: default */
	size_t queue_bytes;
	/* one request, connect included; 0: default */
	unsigned timeout_ms;
	/* copied */
	struct push_auth auth;
};

/* what one POST carries; pusher__enqueue() takes the heap fields */
struct push_profile {
	char *name;			/* app{k=v,...}, unencoded */
	uint64_t from_s, until_s;	/* unix seconds */
	uint32_t sample_rate;		/* Hz */
	const char *spy_name;		/* static string, e.g. "asgst-bpf" */
	void *pprof;			/* gzipped pprof */
	size_t pprof_len;
	char *sample_type_config;	/* JSON */
};

/*
 * Counts since pusher__new(). Every profile enqueued ends as exactly one
 * of sent, dropped_full, dropped_end, rejected or is still queued:
 *	enqueued == sent + dropped_full + dropped_end + rejected + queued
 * (a profile in flight counts as queued). retried counts attempts that
 * failed and were tried again.
 */
struct push_stats {
	uint64_t enqueued, sent, retried, dropped_full, dropped_end, rejected;
	uint64_t bytes_sent;	/* profile + config bytes of the profiles sent */
	size_t queued, queued_bytes, queue_bytes_max;	/* max: high-water mark */
};

struct pusher;

/*
 * Credentials from the environment (ASGST_PUSH_USER, ASGST_PUSH_PASSWORD,
 * ASGST_PUSH_TOKEN, ASGST_PUSH_TENANT), then from file (may be NULL):
 * KEY=VALUE lines of the same keys, '#' comments, blank lines; a value of
 * the file overrides the environment's, spaces around key and value are
 * trimmed (no quoting: the rest of the line is the value) and an empty
 * value unsets it. The file must be a regular file owned by root or the
 * caller, writable by neither group nor other, and readable by neither
 * when it holds a password or token. A value with a
 * control character, or a user with ':', is refused. 0, or -errno with
 * one line in err (*a then holds nothing). Free with push_auth__free().
 */
int push_auth__load(struct push_auth *a, const char *file, char *err, size_t errlen);
void push_auth__free(struct push_auth *a);

/*
 * 0 when url is http:// or https:// with a host, and no user, password,
 * query or fragment (credentials go in push_auth: a URL is seen by ps);
 * -EINVAL with one line in err otherwise.
 */
int push_url__check(const char *url, char *err, size_t errlen);

/* starts the sending thread; NULL with one line in err */
struct pusher *pusher__new(const struct push_opts *o, char *err, size_t errlen);

/*
 * Queue pp; never waits on the network. Its heap fields are the pusher's
 * (freed) whatever the result, and NULL in *pp after. Over the bound the
 * oldest queued profiles are dropped (dropped_full; one in flight is let
 * finish and counted by how it ends). 0, -E2BIG when pp alone is over the
 * bound (dropped, counted enqueued and dropped_full), -ESHUTDOWN after
 * pusher__end() (counted dropped_end), -ENOMEM (not counted).
 */
int pusher__enqueue(struct pusher *p, struct push_profile *pp);

void pusher__stats(struct pusher *p, struct push_stats *st);

/*
 * The last failure as one line, e.g. "HTTP 401 from http://h:4040/ingest:
 * <first 120 characters of the answer>" or curl's error; "" when none.
 */
void pusher__last_error(struct pusher *p, char *buf, size_t len);

/*
 * The end: send what is queued for at most drain_ms (a transfer in flight
 * at the deadline is aborted), drop the rest (dropped_end) and join the
 * thread. pusher__stats() and pusher__last_error() still answer after it
 * (the recorder's closing line); a profile enqueued after it is dropped
 * (dropped_end, -ESHUTDOWN). Once only: a second call does nothing.
 */
void pusher__end(struct pusher *p, unsigned drain_ms);

/* pusher__end(p, drain_ms) when not ended yet, then free; NULL is fine */
void pusher__free(struct pusher *p, unsigned drain_ms);

#endif /* ASGST_PUSH_H */
