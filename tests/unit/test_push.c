// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * push: profiles POSTed to tests/integration/pyroscope_receiver.py (a
 * child on a free port) arrive with their query, headers and parts, the
 * profile byte for byte; a 401 is rejected at once, a 503 retried; a
 * server down keeps the newest within the bound and sends them oldest
 * first once up; the end is bounded by drain_ms however slow the server
 * (the counts say so; the time is printed, never asserted); credentials
 * from the environment and a file (a group-readable secret refused); the
 * URL check.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <zlib.h>

#include "push/push.h"
#include "util/clock.h"

static char tmpdir[64];

struct receiver {
	pid_t pid;
	int port;
	char dir[PATH_MAX];
	char count[PATH_MAX + 8];
};

static const char *tpath(const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000l };

	nanosleep(&ts, NULL);
}

/*
 * The receiver on port (0: any) with its profiles in tmpdir/sub, extra
 * options after; its first line on stdout is the port it took.
 */
static void recv_start(struct receiver *r, int port, const char *sub, ...)
{
	const char *argv[32], *src = getenv("ASGST_SRCDIR");
	char script[PATH_MAX], portarg[16], line[32];
	size_t n = 0, got = 0;
	struct pollfd pfd;
	int pipefd[2];
	va_list ap;
	char *a;

	snprintf(script, sizeof(script), "%s/tests/integration/pyroscope_receiver.py",
		 src ? src : ".");
	assert_int_equal(access(script, R_OK), 0);
	snprintf(r->dir, sizeof(r->dir), "%s", tpath(sub));
	snprintf(r->count, sizeof(r->count), "%s.count", r->dir);
	snprintf(portarg, sizeof(portarg), "%d", port);
	argv[n++] = "python3";
	argv[n++] = script;
	argv[n++] = "--port";
	argv[n++] = portarg;
	argv[n++] = "--dir";
	argv[n++] = r->dir;
	argv[n++] = "--count-file";
	argv[n++] = r->count;
	va_start(ap, sub);
	while ((a = va_arg(ap, char *)) && n < 31)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;

	assert_int_equal(pipe(pipefd), 0);
	r->pid = fork();
	assert_true(r->pid >= 0);
	if (r->pid == 0) {
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		close(pipefd[1]);
		execvp("python3", (char **)argv);
		_exit(127);
	}
	close(pipefd[1]);
	/* the port line, within 10 s */
	pfd.fd = pipefd[0];
	pfd.events = POLLIN;
	while (got < sizeof(line) - 1 && !memchr(line, '\n', got)) {
		ssize_t k;

		assert_int_equal(poll(&pfd, 1, 10000), 1);
		k = read(pipefd[0], line + got, sizeof(line) - 1 - got);
		assert_true(k > 0);
		got += (size_t)k;
	}
	line[got] = '\0';
	close(pipefd[0]);
	r->port = atoi(line);
	assert_true(r->port > 0);
	if (port)
		assert_int_equal(r->port, port);
}

static void recv_stop(struct receiver *r)
{
	int status;

	if (r->pid <= 0)
		return;
	kill(r->pid, SIGTERM);
	waitpid(r->pid, &status, 0);
	r->pid = 0;
}

/* a TCP port nothing listens on (free when asked) */
static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* the receiver's NNNNNN.json, or NULL when not there */
static json_object *recv_json(const struct receiver *r, int seq)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/%06d.json", r->dir, seq);
	if (access(path, R_OK))
		return NULL;
	return json_object_from_file(path);
}

static const char *jstr(json_object *o, const char *path)
{
	char buf[128], *save = NULL, *k;
	json_object *cur = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save))
		if (!json_object_object_get_ex(cur, k, &cur))
			return NULL;
	return json_object_get_string(cur);
}

static int64_t jint(json_object *o, const char *key)
{
	json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	return json_object_get_int64(v);
}

/* the count file's by_status[code] (0 when none yet) */
static int recv_count(const struct receiver *r, int code)
{
	json_object *o = json_object_from_file(r->count), *by, *v;
	char k[8];
	int n = 0;

	if (!o)
		return 0;
	snprintf(k, sizeof(k), "%d", code);
	if (json_object_object_get_ex(o, "by_status", &by) &&
	    json_object_object_get_ex(by, k, &v))
		n = json_object_get_int(v);
	json_object_put(o);
	return n;
}

static int wait_count(const struct receiver *r, int code, int want)
{
	int i, n = 0;

	for (i = 0; i < 200 && (n = recv_count(r, code)) < want; i++)
		sleep_ms(25);
	return n;
}

/* the plain pprof bytes of profile i (not a real pprof: the transport never looks) */
static unsigned char *plain_profile(int i, size_t len)
{
	unsigned char *b = malloc(len);
	uint32_t x = 2166136261u ^ (uint32_t)i;
	size_t k;

	assert_non_null(b);
	for (k = 0; k < len; k++) {
		x = x * 16777619u + 12345u;
		b[k] = (unsigned char)(x >> 24);
	}
	return b;
}

static void *gzip_bytes(const void *in, size_t len, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = len + len / 100 + 64;
	unsigned char *out = malloc(cap);

	assert_non_null(out);
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

static const char *stc_json = "{\"cpu\":{\"units\":\"samples\",\"aggregation\":\"sum\",\"display-name\":\"cpu\"}}";

/* profile i of name: gzipped when gz, else plain bytes of len */
static void make_profile(struct push_profile *pp, const char *name, int i,
			 size_t len, int gz)
{
	unsigned char *plain = plain_profile(i, len);

	memset(pp, 0, sizeof(*pp));
	pp->name = strdup(name);
	pp->from_s = 1700000000u + (uint64_t)i * 10;
	pp->until_s = pp->from_s + 10;
	pp->sample_rate = 99;
	pp->spy_name = "asgst-bpf";
	if (gz) {
		pp->pprof = gzip_bytes(plain, len, &pp->pprof_len);
		free(plain);
	} else {
		pp->pprof = plain;
		pp->pprof_len = len;
	}
	pp->sample_type_config = strdup(stc_json);
	assert_non_null(pp->name);
	assert_non_null(pp->sample_type_config);
}

static struct pusher *new_pusher_at(int port, const char *prefix,
				    const struct push_auth *auth,
				    size_t queue_bytes, unsigned timeout_ms)
{
	char url[128], err[256] = "";
	struct push_opts o = {
		.url = url,
		.queue_bytes = queue_bytes,
		.timeout_ms = timeout_ms,
	};
	struct pusher *p;

	/* a trailing '/' on the base: /ingest still goes once */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s/", port, prefix);
	if (auth)
		o.auth = *auth;
	p = pusher__new(&o, err, sizeof(err));
	if (!p)
		fprintf(stderr, "pusher__new: %s\n", err);
	assert_non_null(p);
	return p;
}

static struct pusher *new_pusher(int port, const struct push_auth *auth,
				 size_t queue_bytes, unsigned timeout_ms)
{
	return new_pusher_at(port, "", auth, queue_bytes, timeout_ms);
}

/* the stats once pred holds or after timeout_ms */
static void wait_stats(struct pusher *p, struct push_stats *st,
		       uint64_t done, unsigned timeout_ms)
{
	uint64_t end = clock__mono_ms() + timeout_ms;

	for (;;) {
		pusher__stats(p, st);
		if (st->sent + st->rejected + st->dropped_full >= done ||
		    clock__mono_ms() >= end)
			return;
		sleep_ms(20);
	}
}

static void check_balance(const struct push_stats *st)
{
	assert_int_equal(st->enqueued, st->sent + st->dropped_full +
			 st->dropped_end + st->rejected + st->queued);
}

static void test_arrive_basic_tenant(void **state)
{
	struct push_auth auth = { .user = "u", .password = "p w:d", .tenant = "t1" };
	const char *name = "svc{hostname=h,process=java,space=a b&c}";
	struct receiver r = { 0 };
	struct push_stats st;
	struct pusher *p;
	char err[PUSH_ERR_MAX];
	int i;

	(void)state;
	recv_start(&r, 0, "basic", "--basic", "u:p w:d", "--tenant", "t1", NULL);
	p = new_pusher(r.port, &auth, 0, 0);
	for (i = 0; i < 3; i++) {
		struct push_profile pp;

		make_profile(&pp, name, i, 3000 + (size_t)i, 1);
		assert_int_equal(pusher__enqueue(p, &pp), 0);
		/* the pusher's now */
		assert_null(pp.name);
		assert_null(pp.pprof);
		assert_null(pp.sample_type_config);
	}
	wait_stats(p, &st, 3, 15000);
	assert_int_equal(st.sent, 3);
	assert_int_equal(st.retried, 0);
	assert_int_equal(st.rejected, 0);
	check_balance(&st);
	pusher__last_error(p, err, sizeof(err));
	assert_string_equal(err, "");

	for (i = 0; i < 3; i++) {
		char pb[PATH_MAX + 16];
		unsigned char *want = plain_profile(i, 3000 + (size_t)i);
		json_object *j = recv_json(&r, i + 1), *parts, *part;
		size_t len;
		char *got;

		assert_non_null(j);
		snprintf(pb, sizeof(pb), "%s/%06d.pb", r.dir, i + 1);
		got = read_all(pb, &len);
		assert_non_null(got);
		/* gunzipped by the receiver: the very bytes */
		assert_int_equal(len, 3000 + (size_t)i);
		assert_memory_equal(got, want, len);
		assert_string_equal(jstr(j, "name"), name);
		assert_string_equal(jstr(j, "app"), "svc");
		assert_string_equal(jstr(j, "labels.hostname"), "h");
		assert_string_equal(jstr(j, "labels.process"), "java");
		assert_string_equal(jstr(j, "labels.space"), "a b&c");
		assert_int_equal(jint(j, "from"), 1700000000 + i * 10);
		assert_int_equal(jint(j, "until"), 1700000010 + i * 10);
		assert_int_equal(jint(j, "sampleRate"), 99);
		assert_string_equal(jstr(j, "spyName"), "asgst-bpf");
		assert_string_equal(jstr(j, "format"), "pprof");
		/* "u:p w:d" */
		assert_string_equal(jstr(j, "headers.authorization"), "Basic dTpwIHc6ZA==");
		assert_string_equal(jstr(j, "headers.x-scope-orgid"), "t1");
		assert_non_null(strstr(jstr(j, "headers.content-type"), "multipart/form-data"));
		assert_null(jstr(j, "headers.expect"));
		assert_true(jint(j, "profile_gzipped"));
		assert_string_equal(jstr(j, "sample_type_config.cpu.units"), "samples");
		assert_true(json_object_object_get_ex(j, "parts", &parts));
		assert_int_equal(json_object_array_length(parts), 2);
		part = json_object_array_get_idx(parts, 0);
		assert_string_equal(jstr(part, "name"), "profile");
		assert_string_equal(jstr(part, "filename"), "profile.pprof");
		part = json_object_array_get_idx(parts, 1);
		assert_string_equal(jstr(part, "name"), "sample_type_config");
		assert_string_equal(jstr(part, "filename"), "sample_type_config.json");
		assert_int_equal(jint(part, "len"), (int64_t)strlen(stc_json));
		json_object_put(j);
		free(got);
		free(want);
	}
	assert_null(recv_json(&r, 4));
	pusher__free(p, 1000);
	recv_stop(&r);
}

static void test_arrive_bearer(void **state)
{
	struct push_auth auth = { .token = "tok-123" };
	struct receiver r = { 0 };
	struct push_profile pp;
	struct push_stats st;
	struct pusher *p;
	json_object *j;

	(void)state;
	recv_start(&r, 0, "bearer", "--bearer", "tok-123", NULL);
	p = new_pusher(r.port, &auth, 0, 0);
	make_profile(&pp, "app", 7, 100, 0);
	assert_int_equal(pusher__enqueue(p, &pp), 0);
	/* the end sends what is queued */
	pusher__end(p, 10000);
	pusher__stats(p, &st);
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.dropped_end, 0);
	assert_int_equal(st.bytes_sent, 100 + strlen(stc_json));
	check_balance(&st);
	j = recv_json(&r, 1);
	assert_non_null(j);
	assert_string_equal(jstr(j, "headers.authorization"), "Bearer tok-123");
	assert_null(jstr(j, "headers.x-scope-orgid"));
	assert_string_equal(jstr(j, "app"), "app");
	assert_false(jint(j, "profile_gzipped"));
	json_object_put(j);
	/* after the end: dropped, counted */
	make_profile(&pp, "app", 8, 100, 0);
	assert_int_equal(pusher__enqueue(p, &pp), -ESHUTDOWN);
	assert_null(pp.pprof);
	pusher__stats(p, &st);
	assert_int_equal(st.dropped_end, 1);
	check_balance(&st);
	pusher__free(p, 1000);
	recv_stop(&r);
}

static void test_reject_401(void **state)
{
	struct receiver r = { 0 };
	struct push_profile pp;
	struct push_stats st;
	struct pusher *p;
	char err[PUSH_ERR_MAX], want[128];

	(void)state;
	recv_start(&r, 0, "reject", "--basic", "u:p", NULL);
	p = new_pusher(r.port, NULL, 0, 0);
	make_profile(&pp, "app{a=b}", 1, 200, 1);
	assert_int_equal(pusher__enqueue(p, &pp), 0);
	wait_stats(p, &st, 1, 10000);
	assert_int_equal(st.rejected, 1);
	assert_int_equal(st.sent, 0);
	assert_int_equal(st.retried, 0);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.queued_bytes, 0);
	check_balance(&st);
	pusher__last_error(p, err, sizeof(err));
	snprintf(want, sizeof(want), "HTTP 401 from http://127.0.0.1:%d/ingest: unauthorized",
		 r.port);
	assert_string_equal(err, want);
	/* seen once: not tried again */
	assert_int_equal(wait_count(&r, 401, 1), 1);
	sleep_ms(1500);
	assert_int_equal(recv_count(&r, 401), 1);
	pusher__free(p, 0);
	recv_stop(&r);
}

static void test_retry_503(void **state)
{
	struct receiver r = { 0 };
	struct push_profile pp;
	struct push_stats st;
	struct pusher *p;
	char err[PUSH_ERR_MAX];
	json_object *j;

	(void)state;
	recv_start(&r, 0, "retry", "--status", "503", "--status-count", "1", NULL);
	p = new_pusher(r.port, NULL, 0, 0);
	make_profile(&pp, "app", 1, 500, 1);
	assert_int_equal(pusher__enqueue(p, &pp), 0);
	wait_stats(p, &st, 1, 15000);
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.retried, 1);
	assert_int_equal(st.rejected, 0);
	check_balance(&st);
	assert_int_equal(wait_count(&r, 503, 1), 1);
	assert_int_equal(wait_count(&r, 200, 1), 1);
	j = recv_json(&r, 1);
	assert_non_null(j);
	json_object_put(j);
	/* the 503 stays the last failure, for the status line */
	pusher__last_error(p, err, sizeof(err));
	assert_non_null(strstr(err, "HTTP 503 from http://127.0.0.1:"));
	assert_non_null(strstr(err, "/ingest: status 503, as told"));
	pusher__free(p, 0);
	recv_stop(&r);
}

/* 429 with a Retry-After: retried; 404 (a prefix the server lacks): rejected */
static void test_retry_429_reject_404(void **state)
{
	struct receiver r = { 0 };
	struct push_profile pp;
	struct push_stats st;
	struct pusher *p;
	char err[PUSH_ERR_MAX], want[128];

	(void)state;
	recv_start(&r, 0, "r429", "--status", "429", "--status-count", "1",
		   "--retry-after", "1", NULL);
	p = new_pusher(r.port, NULL, 0, 0);
	make_profile(&pp, "app", 1, 300, 1);
	assert_int_equal(pusher__enqueue(p, &pp), 0);
	wait_stats(p, &st, 1, 15000);
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.retried, 1);
	check_balance(&st);
	pusher__free(p, 0);

	/* the prefix goes before /ingest; the receiver has none: 404 */
	p = new_pusher_at(r.port, "/pyro", NULL, 0, 0);
	make_profile(&pp, "app", 2, 300, 1);
	assert_int_equal(pusher__enqueue(p, &pp), 0);
	wait_stats(p, &st, 1, 10000);
	assert_int_equal(st.rejected, 1);
	assert_int_equal(st.retried, 0);
	check_balance(&st);
	pusher__last_error(p, err, sizeof(err));
	snprintf(want, sizeof(want), "HTTP 404 from http://127.0.0.1:%d/pyro/ingest: not found",
		 r.port);
	assert_string_equal(err, want);
	pusher__free(p, 0);
	recv_stop(&r);
}

/* 7 profiles of 1000 + config bytes while down, room for 4: the last 4 arrive */
static void test_down_then_up(void **state)
{
	const size_t each = 1000 + strlen(stc_json);
	struct receiver r = { 0 };
	struct push_stats st;
	struct pusher *p;
	char err[PUSH_ERR_MAX];
	int port = free_port(), i;

	(void)state;
	p = new_pusher(port, NULL, 4 * each + each / 2, 2000);
	for (i = 0; i < 7; i++) {
		struct push_profile pp;
		char name[32];

		snprintf(name, sizeof(name), "app{i=%d}", i);
		make_profile(&pp, name, i, 1000, 0);
		assert_int_equal(pusher__enqueue(p, &pp), 0);
	}
	/* a few refused connections */
	sleep_ms(1200);
	pusher__stats(p, &st);
	assert_true(st.retried >= 1);
	assert_int_equal(st.sent, 0);
	assert_int_equal(st.queued, 4);
	assert_int_equal(st.queued_bytes, 4 * each);
	assert_true(st.queue_bytes_max <= 4 * each + each / 2);
	check_balance(&st);
	pusher__last_error(p, err, sizeof(err));
	fprintf(stderr, "down: %s\n", err);
	assert_non_null(strstr(err, "/ingest: "));

	recv_start(&r, port, "down", NULL);
	wait_stats(p, &st, 7, 20000);
	assert_int_equal(st.sent, 4);
	assert_int_equal(st.dropped_full, 3);
	assert_int_equal(st.queued, 0);
	check_balance(&st);
	/* oldest first */
	for (i = 0; i < 4; i++) {
		json_object *j = recv_json(&r, i + 1);
		char want[16];

		assert_non_null(j);
		snprintf(want, sizeof(want), "%d", 3 + i);
		assert_string_equal(jstr(j, "labels.i"), want);
		json_object_put(j);
	}
	assert_null(recv_json(&r, 5));
	pusher__free(p, 0);
	recv_stop(&r);
}

/*
 * The oldest is the one in flight: over the bound it is dropped as its
 * transfer ends, unless that transfer sends it (then sent). The receiver
 * answers 1 s late: the first 503, then 200.
 */
static void test_bound_in_flight(void **state)
{
	const size_t each = 1000 + strlen(stc_json);
	struct receiver r = { 0 };
	struct push_stats st;
	struct pusher *p;
	int i;

	(void)state;
	recv_start(&r, 0, "inflight", "--delay", "1", "--status", "503",
		   "--status-count", "1", NULL);
	p = new_pusher(r.port, NULL, each + each / 2, 0);
	for (i = 0; i < 3; i++) {
		struct push_profile pp;
		char name[32];

		snprintf(name, sizeof(name), "app{i=%d}", i);
		make_profile(&pp, name, i, 1000, 0);
		assert_int_equal(pusher__enqueue(p, &pp), 0);
		pusher__stats(p, &st);
		/* the one in flight still counts as queued, not its bytes */
		assert_int_equal(st.queued_bytes, each);
		assert_true(st.queue_bytes_max <= each + each / 2);
		check_balance(&st);
		/* A in flight (0 to 1 s) when B comes at 0.4 s, B (1 to 2 s) when C at 1.4 s */
		sleep_ms(i == 0 ? 400 : 1000);
	}
	wait_stats(p, &st, 3, 15000);
	fprintf(stderr, "in flight: sent %llu dropped_full %llu retried %llu\n",
		(unsigned long long)st.sent, (unsigned long long)st.dropped_full,
		(unsigned long long)st.retried);
	/* A: doomed, failed: dropped; B: doomed, sent; C: sent */
	assert_int_equal(st.dropped_full, 1);
	assert_int_equal(st.sent, 2);
	assert_int_equal(st.queued, 0);
	check_balance(&st);
	pusher__free(p, 0);
	recv_stop(&r);
}

/* one profile alone over the bound */
static void test_too_big(void **state)
{
	struct push_profile pp;
	struct push_stats st;
	struct pusher *p;

	(void)state;
	p = new_pusher(free_port(), NULL, 500, 0);
	make_profile(&pp, "app", 1, 1000, 0);
	assert_int_equal(pusher__enqueue(p, &pp), -E2BIG);
	assert_null(pp.name);
	pusher__stats(p, &st);
	assert_int_equal(st.enqueued, 1);
	assert_int_equal(st.dropped_full, 1);
	check_balance(&st);
	pusher__free(p, 0);
}

/* a server that answers in 10 s: the end takes drain_ms, not 10 s */
static void test_end_slow_server(void **state)
{
	struct receiver r = { 0 };
	struct push_stats st;
	struct pusher *p;
	uint64_t t;
	int i;

	(void)state;
	recv_start(&r, 0, "slow", "--delay", "10", NULL);
	p = new_pusher(r.port, NULL, 0, 0);
	for (i = 0; i < 3; i++) {
		struct push_profile pp;

		make_profile(&pp, "app", i, 100, 1);
		assert_int_equal(pusher__enqueue(p, &pp), 0);
	}
	/* the first in flight */
	sleep_ms(300);
	t = clock__mono_ms();
	pusher__end(p, 1000);
	t = clock__mono_ms() - t;
	fprintf(stderr, "end against a 10 s server, drain 1000 ms: %llu ms\n",
		(unsigned long long)t);
	pusher__stats(p, &st);
	assert_int_equal(st.sent, 0);
	assert_int_equal(st.dropped_end, 3);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.queued_bytes, 0);
	check_balance(&st);
	pusher__free(p, 1000);
	recv_stop(&r);
}

/* a server that takes the connection and never answers */
static void test_end_silent_server(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	struct push_profile pp;
	struct push_stats st;
	struct pusher *p;
	uint64_t t;
	int fd;

	(void)state;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	/* the kernel completes the handshake; nobody ever accepts */
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	p = new_pusher(ntohs(sa.sin_port), NULL, 0, 0);
	make_profile(&pp, "app", 1, 100, 1);
	assert_int_equal(pusher__enqueue(p, &pp), 0);
	sleep_ms(300);
	t = clock__mono_ms();
	pusher__end(p, 500);
	t = clock__mono_ms() - t;
	fprintf(stderr, "end against a silent server, drain 500 ms: %llu ms\n",
		(unsigned long long)t);
	pusher__stats(p, &st);
	assert_int_equal(st.sent, 0);
	assert_int_equal(st.retried, 0);
	assert_int_equal(st.dropped_end, 1);
	check_balance(&st);
	pusher__free(p, 500);
	close(fd);
	/* an end at once: drain 0 drops what is queued */
	p = new_pusher(free_port(), NULL, 0, 0);
	make_profile(&pp, "app", 2, 100, 1);
	assert_int_equal(pusher__enqueue(p, &pp), 0);
	pusher__end(p, 0);
	pusher__stats(p, &st);
	assert_int_equal(st.sent, 0);
	assert_int_equal(st.dropped_end, 1);
	check_balance(&st);
	pusher__free(p, 0);
}

static void unset_env(void)
{
	unsetenv("ASGST_PUSH_USER");
	unsetenv("ASGST_PUSH_PASSWORD");
	unsetenv("ASGST_PUSH_TOKEN");
	unsetenv("ASGST_PUSH_TENANT");
}

static void test_auth_load(void **state)
{
	struct push_auth a;
	char err[256];

	(void)state;
	unset_env();
	assert_int_equal(push_auth__load(&a, NULL, err, sizeof(err)), 0);
	assert_null(a.user);
	assert_null(a.password);
	assert_null(a.token);
	assert_null(a.tenant);

	setenv("ASGST_PUSH_USER", "envuser", 1);
	setenv("ASGST_PUSH_PASSWORD", "envpw", 1);
	setenv("ASGST_PUSH_TENANT", "envtenant", 1);
	assert_int_equal(push_auth__load(&a, NULL, err, sizeof(err)), 0);
	assert_string_equal(a.user, "envuser");
	assert_string_equal(a.password, "envpw");
	assert_string_equal(a.tenant, "envtenant");
	assert_null(a.token);
	push_auth__free(&a);
	assert_null(a.user);

	/* the file overrides; an empty value unsets */
	write_file(tpath("auth"), "# push credentials\n\n ASGST_PUSH_PASSWORD = file pw \n"
		   "ASGST_PUSH_TENANT=\nASGST_PUSH_USER=fileuser\r\n", 0600);
	assert_int_equal(push_auth__load(&a, tpath("auth"), err, sizeof(err)), 0);
	assert_string_equal(a.user, "fileuser");
	assert_string_equal(a.password, "file pw");
	assert_null(a.tenant);
	push_auth__free(&a);

	/* a secret readable by group: refused, nothing kept */
	write_file(tpath("auth-g"), "ASGST_PUSH_PASSWORD=x\n", 0640);
	err[0] = '\0';
	assert_int_equal(push_auth__load(&a, tpath("auth-g"), err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, tpath("auth-g")));
	assert_non_null(strstr(err, "readable by group or other"));
	assert_null(strchr(err, '\n'));
	assert_null(a.user);
	assert_null(a.password);
	/* no secret in it: group may read it */
	write_file(tpath("auth-t"), "ASGST_PUSH_TENANT=t2\n", 0644);
	assert_int_equal(push_auth__load(&a, tpath("auth-t"), err, sizeof(err)), 0);
	assert_string_equal(a.tenant, "t2");
	assert_string_equal(a.user, "envuser");
	push_auth__free(&a);
	/* nobody else may write it */
	write_file(tpath("auth-w"), "ASGST_PUSH_TENANT=t2\n", 0662);
	assert_int_equal(push_auth__load(&a, tpath("auth-w"), err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "writable"));
	/* a link is not followed */
	unlink(tpath("auth-l"));
	assert_int_equal(symlink(tpath("auth"), tpath("auth-l")), 0);
	assert_true(push_auth__load(&a, tpath("auth-l"), err, sizeof(err)) < 0);
	/* another user's file */
	if (geteuid() == 0) {
		write_file(tpath("auth-o"), "ASGST_PUSH_TENANT=t2\n", 0600);
		assert_int_equal(chown(tpath("auth-o"), 4242, 4242), 0);
		assert_int_equal(push_auth__load(&a, tpath("auth-o"), err, sizeof(err)), -EPERM);
		assert_non_null(strstr(err, "owned by uid 4242"));
	}
	/* unknown keys, token with a user, a header break in the environment */
	write_file(tpath("auth-k"), "ASGST_PUSH_PASSWRD=x\n", 0600);
	assert_int_equal(push_auth__load(&a, tpath("auth-k"), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":1: unknown key"));
	write_file(tpath("auth-tok"), "ASGST_PUSH_TOKEN=tok\n", 0600);
	assert_int_equal(push_auth__load(&a, tpath("auth-tok"), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "token"));
	unset_env();
	assert_int_equal(push_auth__load(&a, tpath("auth-tok"), err, sizeof(err)), 0);
	assert_string_equal(a.token, "tok");
	push_auth__free(&a);
	setenv("ASGST_PUSH_TENANT", "t\r\nX-Evil: 1", 1);
	assert_int_equal(push_auth__load(&a, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "control character"));
	unset_env();
	assert_int_equal(push_auth__load(&a, tpath("nonexistent"), err, sizeof(err)), -ENOENT);
	unset_env();
}

static void test_url_check(void **state)
{
	static const char *const good[] = {
		"http://h", "https://pyroscope.example.com", "http://127.0.0.1:4040",
		"https://h:443/prefix/", "http://[::1]:4040", "HTTP://H:4040",
	};
	static const char *const bad[] = {
		"", "h:4040", "ftp://h", "file:///etc/passwd", "gopher://h",
		"http://", "https://:4040", "http://u:secret@h", "http://h/?x=1",
		"http://h/#f", "http://h x", "http://h\n", "http://h:99999",
	};
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		err[0] = '\0';
		if (push_url__check(good[i], err, sizeof(err)))
			fail_msg("%s refused: %s", good[i], err);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (push_url__check(bad[i], err, sizeof(err)) != -EINVAL)
			fail_msg("%s taken", bad[i]);
		assert_true(err[0]);
		assert_null(strchr(err, '\n'));
	}
	/* the secret is not echoed */
	assert_int_equal(push_url__check("http://u:secret@h", err, sizeof(err)), -EINVAL);
	assert_null(strstr(err, "secret"));
	/* pusher__new checks it */
	{
		struct push_opts o = { .url = "file:///etc/passwd" };

		assert_null(pusher__new(&o, err, sizeof(err)));
		assert_non_null(strstr(err, "not http"));
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_push.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	/* a proxy of the environment would take 127.0.0.1 elsewhere */
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("https_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url_check),
		cmocka_unit_test(test_auth_load),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_arrive_basic_tenant),
		cmocka_unit_test(test_arrive_bearer),
		cmocka_unit_test(test_reject_401),
		cmocka_unit_test(test_retry_503),
		cmocka_unit_test(test_retry_429_reject_404),
		cmocka_unit_test(test_down_then_up),
		cmocka_unit_test(test_bound_in_flight),
		cmocka_unit_test(test_end_slow_server),
		cmocka_unit_test(test_end_silent_server),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
