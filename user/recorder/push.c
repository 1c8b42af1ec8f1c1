// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * record --push: at the end of each period, the period's profile cut into
 * one pprof per series and event, each handed to the pusher
 * (push/push.h), which sends it to Pyroscope's ingest API from a thread
 * of its own: a backend down or slow costs the recording only the bytes
 * queued.
 *
 * A series is (service, process, container, pod): what a fleet asks for
 * by label, none of it growing with pids or threads (the stacks of a
 * service's processes and threads are summed). Each event goes as the
 * profile type Pyroscope shows it under, said by the request's
 * sample_type_config: cpu as process_cpu, alloc as memory, lock as mutex,
 * off-CPU as block (time off the CPU, as Go's block profile is time
 * blocked; Pyroscope has no off-CPU type).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/writers.h"
#include "profile/profile.h"
#include "profile/service.h"
#include "push/push.h"
#include "recorder/recorder_int.h"

#define PUSH_SPY	"asgst-bpf"
/* labels asgst-bpf sets itself (hostname may be given with --label) */
static const char *const own_labels[] = {
	"service_name", "process", "container_id", "pod_uid", "__name__",
};

struct recorder_push {
	struct pusher *pusher;
	char host[SERVICE_NAME_MAX + 1];
	char labels[2048];	/* ",k=v" of --label, in order */
	uint32_t *idx;		/* scratch: stack indices, by series */
	size_t cap;
	bool drained;		/* the recording ended, the queue sent */
};

static bool label_key_ok(const char *k, size_t n)
{
	if (!n || n > 64 || (k[0] >= '0' && k[0] <= '9') ||
	    (n >= 2 && k[0] == '_' && k[1] == '_'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((k[i] >= 'a' && k[i] <= 'z') ||
		      (k[i] >= 'A' && k[i] <= 'Z') ||
		      (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
			return false;
	return true;
}

int recorder__check_label(const char *kv, char *err, size_t errlen)
{
	const char *eq = strchr(kv, '=');
	char v[SERVICE_NAME_MAX + 1];
	size_t kn;

	if (!eq || !label_key_ok(kv, (size_t)(eq - kv))) {
		snprintf(err, errlen, "--label '%s': give KEY=VALUE, KEY of "
			 "letters, digits and '_' (not starting with a digit "
			 "or '__')", kv);
		return -EINVAL;
	}
	kn = (size_t)(eq - kv);
	for (size_t i = 0; i < sizeof(own_labels) / sizeof(*own_labels); i++)
		if (strlen(own_labels[i]) == kn &&
		    !strncmp(kv, own_labels[i], kn)) {
			snprintf(err, errlen, "--label '%s': %.*s is set by "
				 "asgst-bpf for each process", kv, (int)kn, kv);
			return -EINVAL;
		}
	snprintf(v, sizeof(v), "%s", eq + 1);
	service__sanitize(v);
	if (!eq[1] || strlen(eq + 1) > SERVICE_NAME_MAX || strcmp(v, eq + 1)) {
		snprintf(err, errlen, "--label '%s': the value must be 1 to %d "
			 "of A-Z a-z 0-9 . _ / -", kv, SERVICE_NAME_MAX);
		return -EINVAL;
	}
	return 0;
}

int recorder_push_open(struct recorder *r)
{
	struct push_opts po = { 0 };
	struct recorder_push *rp;
	char err[512];
	size_t n = 0;
	int rc;

	if (!r->o.push_url)
		return 0;
	rp = calloc(1, sizeof(*rp));
	if (!rp) {
		recorder_say(r, "out of memory");
		return 1;
	}
	r->push = rp;
	if (gethostname(rp->host, sizeof(rp->host) - 1))
		snprintf(rp->host, sizeof(rp->host), "unknown");
	for (size_t i = 0; i < r->o.npush_labels; i++) {
		const char *kv = r->o.push_labels[i];

		/* --label hostname=...: the node's name where uname is the
		 * pod's */
		if (!strncmp(kv, "hostname=", 9)) {
			snprintf(rp->host, sizeof(rp->host), "%s", kv + 9);
			continue;
		}
		rc = snprintf(rp->labels + n, sizeof(rp->labels) - n, ",%s",
			      kv);
		if (rc < 0 || (size_t)rc >= sizeof(rp->labels) - n) {
			recorder_say(r, "--label: too many labels (at most "
				     "%zu bytes of them)", sizeof(rp->labels));
			return 1;
		}
		n += (size_t)rc;
	}
	service__sanitize(rp->host);
	po.url = r->o.push_url;
	po.queue_bytes = r->o.push_queue_bytes;
	po.timeout_ms = r->o.push_timeout_ms;
	rc = push_auth__load(&po.auth, r->o.push_auth_file, err, sizeof(err));
	if (!rc) {
		rp->pusher = pusher__new(&po, err, sizeof(err));
		if (!rp->pusher)
			rc = -EINVAL;
	}
	push_auth__free(&po.auth);
	if (rc) {
		recorder_say(r, "%s", err);
		return 1;
	}
	return 0;
}

/* series order: service, process, container, pod, event (interned
 * strings: their addresses are their identities) */
static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return x < y ? -1 : x > y;
}

static int series_cmp(const struct trace *a, const struct trace *b)
{
	int c;

	if ((c = cmp_ptr(a->service, b->service)) ||
	    (c = cmp_ptr(a->process, b->process)) ||
	    (c = cmp_ptr(a->container_id, b->container_id)) ||
	    (c = cmp_ptr(a->pod_uid, b->pod_uid)))
		return c;
	return (int)a->event - (int)b->event;
}

static int idx_cmp(const void *a, const void *b, void *prof)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int c = series_cmp(&profile__stack(prof, i)->trace,
			   &profile__stack(prof, j)->trace);

	return c ? c : (i > j) - (i < j);
}

/* Pyroscope's profile type for each event, by its value types' names */
static const char *sample_type_config(uint8_t event)
{
	switch (event) {
	case TRACE_EV_CPU:
		return "{\"samples\":{\"units\":\"samples\",\"display-name\":"
		       "\"cpu\",\"sampled\":true},\"cpu\":{\"units\":"
		       "\"nanoseconds\",\"display-name\":\"cpu\"}}";
	case TRACE_EV_ALLOC:
		return "{\"alloc_objects\":{\"units\":\"objects\"},"
		       "\"alloc_space\":{\"units\":\"bytes\"}}";
	case TRACE_EV_LOCK:
		return "{\"contentions\":{\"units\":\"lock_samples\","
		       "\"display-name\":\"mutex_count\"},\"delay\":"
		       "{\"units\":\"lock_nanoseconds\",\"display-name\":"
		       "\"mutex_duration\"}}";
	default:
		return "{\"contentions\":{\"units\":\"lock_samples\","
		       "\"display-name\":\"block_count\"},\"delay\":"
		       "{\"units\":\"lock_nanoseconds\",\"display-name\":"
		       "\"block_duration\"}}";
	}
}

/* "service{hostname=h,process=p,...}": the ingest API's name */
static char *series_name(const struct recorder_push *rp,
			 const struct trace *t)
{
	const char *svc = t->service ? t->service :
			  t->comm && *t->comm ? t->comm : "unknown";
	char *name = NULL;
	int n;

	n = asprintf(&name, "%s{hostname=%s,process=%s%s%s%s%s%s}", svc,
		     rp->host, t->process ? t->process : svc,
		     t->container_id ? ",container_id=" : "",
		     t->container_id ? t->container_id : "",
		     t->pod_uid ? ",pod_uid=" : "",
		     t->pod_uid ? t->pod_uid : "", rp->labels);
	return n < 0 ? NULL : name;
}

/* one series' stacks of one event: encoded and queued; 0 or -errno */
static int push_series(struct recorder *r, const uint32_t *idx, size_t n,
		       uint64_t from, uint64_t until)
{
	const struct trace *t = &profile__stack(r->prof, idx[0])->trace;
	struct pprof_select sel = { idx, n, t->event };
	struct push_profile pp = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	rc = write_pprof_select(r->prof, f, &sel);
	if (fclose(f) && !rc)
		rc = -ENOMEM;
	pp.name = series_name(r->push, t);
	pp.sample_type_config = strdup(sample_type_config(t->event));
	if (rc || !pp.name || !pp.sample_type_config) {
		free(buf);
		free(pp.name);
		free(pp.sample_type_config);
		return rc ?: -ENOMEM;
	}
	pp.from_s = from;
	pp.until_s = until;
	pp.sample_rate = r->o.freq_hz;
	pp.spy_name = PUSH_SPY;
	pp.pprof = buf;
	pp.pprof_len = len;
	/* the pusher owns the heap fields from here, whatever it returns */
	return pusher__enqueue(r->push->pusher, &pp);
}

void recorder_push_period(struct recorder *r, time_t from, time_t until)
{
	struct recorder_push *rp = r->push;
	size_t n = profile__nstacks(r->prof), i, j;
	int rc = 0;

	if (!rp || !n)
		return;
	if (n > rp->cap) {
		uint32_t *p = realloc(rp->idx, n * sizeof(*p));

		if (!p) {
			recorder_say(r, "push: out of memory, a period's "
				     "profiles were not sent");
			return;
		}
		rp->idx = p;
		rp->cap = n;
	}
	for (i = 0; i < n; i++)
		rp->idx[i] = (uint32_t)i;
	qsort_r(rp->idx, n, sizeof(*rp->idx), idx_cmp, r->prof);
	if (until <= from)
		until = from + 1;
	for (i = 0; i < n; i = j) {
		const struct trace *t = &profile__stack(r->prof,
							rp->idx[i])->trace;

		for (j = i + 1; j < n && !series_cmp(t,
			&profile__stack(r->prof, rp->idx[j])->trace); j++)
			;
		rc = push_series(r, rp->idx + i, j - i, (uint64_t)from,
				 (uint64_t)until) ?: rc;
	}
	if (rc == -ENOMEM)
		recorder_say(r, "push: out of memory, some of a period's "
			     "profiles were not sent");
}

bool recorder_push_stats(const struct recorder *r, struct push_stats *st,
			 char *err, size_t errlen)
{
	memset(st, 0, sizeof(*st));
	if (errlen)
		*err = '\0';
	if (!r->push)
		return false;
	pusher__stats(r->push->pusher, st);
	pusher__last_error(r->push->pusher, err, errlen);
	return true;
}

/* the recording's end: what is still queued gets the time of one
 * request, no more (push_opts.timeout_ms) */
void recorder_push_drain(struct recorder *r)
{
	if (r->push && !r->push->drained) {
		pusher__end(r->push->pusher, r->o.push_timeout_ms ?
			      r->o.push_timeout_ms : PUSH_TIMEOUT_MS_DEFAULT);
		r->push->drained = true;
	}
}

void recorder_push_close(struct recorder *r)
{
	struct recorder_push *rp = r->push;

	if (!rp)
		return;
	pusher__free(rp->pusher, 0);
	free(rp->idx);
	free(rp);
	r->push = NULL;
}
