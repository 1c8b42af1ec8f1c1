// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HTML writer: the page is self-contained (no URL it would fetch), the
 * embedded data parses as strict JSON and its call tree gives back every
 * stack with its count, frame category, comp level, bci and line; names
 * cannot break out of the <script>. A 100 000-stack profile checks the
 * size and the merge at scale.
 *
 * With ASGST_HTML_OUT=DIR it also leaves fixture.html, big.html and
 * expect.txt (query and expected matched percentage, computed here from
 * the profile, not from the page) in DIR for tests/integration/test_html.sh,
 * which renders them in headless Chromium.
 */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "profile/profile.h"
#include "trace.h"
#include "output/writers.h"
#include "unit/writers_fixture.h"

#define DATA_OPEN "<script id=\"fg-data\" type=\"application/json\">"

static char *write_html_buf(const struct profile *p, size_t *len)
{
	FILE *f = tmpfile();
	char *buf;

	assert_non_null(f);
	assert_int_equal(write_html(p, f), 0);
	buf = fx_slurp(f, len);
	assert_non_null(buf);
	fclose(f);
	return buf;
}

/* the embedded data block, parsed strictly */
static struct json_object *page_data(const char *html, size_t *data_len)
{
	const char *s = strstr(html, DATA_OPEN), *e;
	struct json_tokener *tok;
	struct json_object *o;

	assert_non_null(s);
	assert_null(strstr(s + 1, DATA_OPEN));
	s += strlen(DATA_OPEN);
	e = strstr(s, "</script>");
	assert_non_null(e);
	/* no '<' at all inside: names cannot close the script element */
	assert_null(memchr(s, '<', e - s));
	tok = json_tokener_new();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, s, (int)(e - s));
	if (!o)
		fail_msg("data block is not JSON: %s",
			 json_tokener_error_desc(json_tokener_get_error(tok)));
	json_tokener_free(tok);
	*data_len = e - s;
	return o;
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v))
		fail_msg("missing \"%s\"", k);
	return v;
}

static int64_t at(struct json_object *arr, size_t i)
{
	struct json_object *v = json_object_array_get_idx(arr, i);

	assert_non_null(v);
	assert_true(json_object_is_type(v, json_type_int));
	return json_object_get_int64(v);
}

/* the page's tree, decoded the way the page's script reads it */
struct tree {
	struct json_object *root, *names, *frames, *cats;
	size_t n;
	int64_t *parent;
	int64_t *v;		/* 5 per node: frame, distance, self, bci+2, line+2 */
};

/* docs/formats.md: base-32 digits, last one upper-case-ish */
static int64_t *decode_nodes(const char *s, size_t n)
{
	static const char more[] = "0123456789abcdefghijklmnopqrstuv";
	static const char end[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZwxyz+/";
	int64_t *v = calloc(5 * n + 1, sizeof(*v)), acc = 0;
	size_t k = 0;

	assert_non_null(v);
	for (; *s; s++) {
		const char *m = strchr(more, *s), *e = strchr(end, *s);

		assert_true(m || e);
		if (m) {
			acc = acc * 32 + (m - more);
			continue;
		}
		assert_true(k < 5 * n);
		v[k++] = acc * 32 + (e - end);
		acc = 0;
	}
	assert_int_equal(k, 5 * n);
	return v;
}

static void tree_load(struct tree *t, const char *html)
{
	size_t len;

	t->root = page_data(html, &len);
	t->names = get(t->root, "names");
	t->frames = get(t->root, "frames");
	t->cats = get(t->root, "cats");
	assert_int_equal(json_object_array_length(t->frames) % 3, 0);
	t->n = json_object_get_int64(get(t->root, "n"));
	assert_true(t->n >= 1);
	t->v = decode_nodes(json_object_get_string(get(t->root, "nodes")), t->n);
	t->parent = calloc(t->n, sizeof(*t->parent));
	assert_non_null(t->parent);
	t->parent[0] = -1;
	assert_int_equal(t->v[1], 0);
	for (size_t i = 1; i < t->n; i++) {
		int64_t d = t->v[5 * i + 1];

		assert_true(d >= 1 && (size_t)d <= i);
		t->parent[i] = i - d;
	}
}

static void tree_free(struct tree *t)
{
	json_object_put(t->root);
	free(t->parent);
	free(t->v);
}

static const char *node_name(const struct tree *t, size_t i)
{
	int64_t f = t->v[5 * i];

	return json_object_get_string(json_object_array_get_idx(t->names,
					at(t->frames, 3 * f)));
}

static const char *node_cat(const struct tree *t, size_t i)
{
	int64_t f = t->v[5 * i];

	return json_object_get_string(json_object_array_get_idx(t->cats,
					at(t->frames, 3 * f + 1)));
}

static int node_level(const struct tree *t, size_t i)
{
	return at(t->frames, 3 * t->v[5 * i] + 2);
}

static const char *get_str_meta(const struct tree *t, const char *k)
{
	return json_object_get_string(get(get(t->root, "meta"), k));
}

/* root-first path of node i, names joined by ';' (without "all") */
static void node_path(const struct tree *t, size_t i, char *buf, size_t size)
{
	size_t chain[TRACE_MAX_FRAMES + 2], n = 0, len = 0;

	for (int64_t k = i; k > 0; k = t->parent[k])
		chain[n++] = k;
	buf[0] = '\0';
	while (n--)
		len += snprintf(buf + len, len < size ? size - len : 0, "%s%s",
				len ? ";" : "", node_name(t, chain[n]));
}

/* the test's own reading of a frame name (suffix-free collapsed names) */
static void frame_name(const struct frame *f, char *buf, size_t size)
{
	const char *base;
	char *p;

	switch (f->type) {
	case FRAME_KERNEL:
		snprintf(buf, size, "%s", f->symbol);
		break;
	case FRAME_NON_JAVA:
		if (f->symbol) {
			snprintf(buf, size, "%s", f->symbol);
			break;
		}
		base = strrchr(f->module, '/');
		snprintf(buf, size, "%s+0x%llx", base + 1, (unsigned long long)f->offset);
		break;
	case FRAME_UNKNOWN:
		snprintf(buf, size, "[unknown: %s]", f->reason);
		break;
	default:
		snprintf(buf, size, "%s.%s", f->klass, f->method);
		/* dots of the class name become slashes, not the last one */
		for (p = buf; p < buf + strlen(f->klass); p++)
			if (*p == '.')
				*p = '/';
		break;
	}
}

static void trace_path(const struct trace *t, char *buf, size_t size)
{
	size_t len = snprintf(buf, size, "%s", t->comm);

	for (uint32_t k = t->nframes; k-- > 0;) {
		char name[512];

		frame_name(&t->frames[k], name, sizeof(name));
		len += snprintf(buf + len, len < size ? size - len : 0, ";%s", name);
	}
}

static void test_fixture_tree(void **state)
{
	struct profile *p = fx_profile();
	struct tree t;
	char *html, path[8192], want[8192];
	int64_t sum = 0;
	size_t len;
	int found[FX_NTRACES] = { 0 };

	(void)state;
	assert_non_null(p);
	html = write_html_buf(p, &len);
	assert_true(strncmp(html, "<!DOCTYPE html>", 15) == 0);
	assert_non_null(strstr(html, "</html>"));
	/* nothing to fetch: no URL, no external script or style */
	assert_null(strstr(html, "http://"));
	assert_null(strstr(html, "https://"));
	assert_null(strstr(html, " src="));
	assert_null(strstr(html, "<link"));
	assert_non_null(strstr(html, "<canvas"));
	tree_load(&t, html);
	assert_string_equal(node_name(&t, 0), "all");
	assert_int_equal(json_object_get_int64(get(get(t.root, "meta"), "samples")), 72);
	assert_int_equal(json_object_get_int64(get(get(t.root, "meta"), "stacks")), FX_NTRACES);

	for (size_t i = 0; i < t.n; i++) {
		int64_t self = t.v[5 * i + 2];

		if (!self)
			continue;
		sum += self;
		node_path(&t, i, path, sizeof(path));
		/* stacks 0 and 5 are one path (same comm, same frames) */
		for (size_t k = 0; k < FX_NTRACES - 1; k++) {
			if (k == 5)
				continue;
			trace_path(&fx_traces[k].t, want, sizeof(want));
			if (strcmp(path, want) == 0) {
				found[k]++;
				assert_int_equal(self, fx_traces[k].count +
						 (k == 0 ? fx_traces[5].count : 0));
			}
		}
		if (strncmp(path, "we:ird", 6) == 0 || strncmp(path, "we;ird", 6) == 0) {
			found[6]++;
			assert_int_equal(self, 1);
		}
	}
	assert_int_equal(sum, 72);
	for (size_t k = 0; k < FX_NTRACES; k++)
		assert_int_equal(found[k], k == 5 ? 0 : 1);

	/* categories, levels, bci/line on the Java main thread's path */
	for (size_t i = 0; i < t.n; i++) {
		const char *n = node_name(&t, i);

		if (strcmp(n, "java/util/HashMap.hash") == 0) {
			assert_string_equal(node_cat(&t, i), "inlined");
			assert_int_equal(node_level(&t, i), 4);
			assert_int_equal((t.v[5 * i + 3] - 2), 9);
			assert_int_equal((t.v[5 * i + 4] - 2), 338);
		} else if (strcmp(n, "java/util/HashMap.put") == 0) {
			assert_string_equal(node_cat(&t, i), "c2");
		} else if (strcmp(n, "Demo$Worker.compute") == 0) {
			assert_string_equal(node_cat(&t, i), "c1");
			assert_int_equal(node_level(&t, i), 3);
		} else if (strcmp(n, "Demo.main") == 0) {
			assert_string_equal(node_cat(&t, i), "interpreted");
			assert_int_equal((t.v[5 * i + 4] - 2), 12);
		} else if (strcmp(n, "Demo.nativeHash") == 0) {
			assert_string_equal(node_cat(&t, i), "java_native");
		} else if (strncmp(n, "JavaCalls::call_helper", 22) == 0) {
			assert_string_equal(node_cat(&t, i), "jvm");
			assert_int_equal((t.v[5 * i + 3] - 2), -1);
		} else if (strcmp(n, "JavaMain") == 0 || strcmp(n, "libhashnative.so+0x11a0") == 0) {
			assert_string_equal(node_cat(&t, i), "native");
		} else if (strcmp(n, "clear_page_erms") == 0) {
			assert_string_equal(node_cat(&t, i), "kernel");
		} else if (strcmp(n, "[unknown: no code blob for pc]") == 0) {
			assert_string_equal(node_cat(&t, i), "unknown");
		} else if (strcmp(n, "hn_demo") == 0 && t.parent[i] == 0) {
			assert_string_equal(node_cat(&t, i), "process");
		}
	}
	tree_free(&t);
	free(html);
	profile__free(p);
}

/* a name that tries to end the script element */
static void test_script_breakout(void **state)
{
	struct profile *p = profile__new();
	struct frame fr[] = {
		NF(0x401000, 0x1000, "</script><script>alert(1)</script>", HN_EXE),
		NF(0x401100, 0x1100, "a<!--b&c>", HN_EXE),
	};
	struct trace tr = { .pid = 1, .tid = 1, .comm = "x</script>", .thread = "x",
			    .nframes = 2, .frames = fr };
	struct tree t;
	size_t len;
	char *html, path[1024];

	(void)state;
	assert_non_null(p);
	assert_int_equal(profile__add(p, &tr, 3, 0), 0);
	html = write_html_buf(p, &len);
	tree_load(&t, html);	/* asserts no '<' in the data block */
	assert_int_equal(t.n, 4);
	node_path(&t, 3, path, sizeof(path));
	assert_string_equal(path, "x</script>;a<!--b&c>;</script><script>alert(1)</script>");
	tree_free(&t);
	free(html);
	profile__free(p);
}

/* the crossing kind is part of the boxes' names; the category stays the
 * frame type's (java_native for the FFM barrier, stub for the stubs) */
static void test_crossing_names(void **state)
{
	struct frame fr[] = {
		JF(FRAME_JAVA, "FfmChain", "upLeaf", "(I)I", NULL, 3, 30, 4),
		NF(0x7f0000002000ull, 0x2000, "upcall_stub", NULL),
		NF(0x7f0000003000ull, 0x1000, "fu_b", "/lib/libffmchain.so"),
		NF(0x7f0000004000ull, 0x0, "nep_invoker_blob", NULL),
		JF(FRAME_JAVA, "FfmChain", "u2", "(I)I", NULL, 9, 40, 4),
		JF(FRAME_JAVA_NATIVE, "JniChain", "nativeChain", "(I)I", NULL,
		   -1, -1, 0),
		JF(FRAME_JAVA, "JniChain", "j3", "(I)I", NULL, 3, 20, 0),
	};
	struct trace tr = { .pid = 2, .tid = 2, .comm = "java", .thread = "t",
			    .kind = TRACE_KIND_JAVA, .nframes = NELEM(fr),
			    .frames = fr };
	struct profile *p = profile__new();
	struct tree t;
	size_t len, seen = 0;
	char *html;

	(void)state;
	assert_non_null(p);
	fr[1].flags = FRAME_F_STUB | FRAME_F_UPCALL_FFM;
	/* the FFM barrier: a JAVA_NATIVE frame named by its stub */
	fr[3].type = FRAME_JAVA_NATIVE;
	fr[3].flags = FRAME_F_DOWNCALL_FFM | FRAME_F_DOWNCALL_CRIT;
	fr[5].flags = FRAME_F_DOWNCALL_JNI;
	assert_int_equal(profile__add(p, &tr, 3, 0), 0);
	html = write_html_buf(p, &len);
	tree_load(&t, html);
	for (size_t i = 0; i < t.n; i++) {
		const char *n = node_name(&t, i);

		if (!strcmp(n, "upcall_stub [upcall ffm]")) {
			assert_string_equal(node_cat(&t, i), "stub");
			seen |= 1;
		} else if (!strcmp(n, "nep_invoker_blob [ffm critical]")) {
			assert_string_equal(node_cat(&t, i), "java_native");
			seen |= 2;
		} else if (!strcmp(n, "JniChain.nativeChain [jni]")) {
			assert_string_equal(node_cat(&t, i), "java_native");
			seen |= 4;
		} else {
			assert_null(strstr(n, " ["));
		}
	}
	assert_int_equal(seen, 7);
	tree_free(&t);
	free(html);
	profile__free(p);
}

static void test_empty_profile(void **state)
{
	struct profile *p = profile__new();
	struct tree t;
	size_t len;
	char *html;

	(void)state;
	assert_non_null(p);
	html = write_html_buf(p, &len);
	tree_load(&t, html);
	assert_int_equal(t.n, 1);
	assert_string_equal(node_name(&t, 0), "all");
	tree_free(&t);
	free(html);
	profile__free(p);
}

/* a weight's self values, one number a node (the nodes' own code) */
static int64_t *decode_self(const char *s, size_t n)
{
	static const char more[] = "0123456789abcdefghijklmnopqrstuv";
	static const char end[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZwxyz+/";
	int64_t *v = calloc(n + 1, sizeof(*v)), acc = 0;
	size_t k = 0;

	assert_non_null(v);
	for (; *s; s++) {
		const char *m = strchr(more, *s), *e = strchr(end, *s);

		assert_true(m || e);
		if (m) {
			acc = acc * 32 + (m - more);
			continue;
		}
		assert_true(k < n);
		v[k++] = acc * 32 + (e - end);
		acc = 0;
	}
	assert_int_equal(k, n);
	return v;
}

/*
 * cpu, alloc and lock: one tree, a self value a node per weight (time,
 * bytes, objects, ns), each summing to its own total; the class leaf is
 * of its own category
 */
static void test_jvm_event_weights(void **state)
{
	static const struct {
		const char *name, *unit;
		int64_t total;
	} want[] = {
		{ "cpu/off-cpu time", "samples", 72 },
		{ "alloc bytes", "bytes", FX_ALLOC_BYTES },
		{ "alloc objects", "objects", FX_ALLOC_OBJS },
		{ "lock time", "ns", FX_LOCK_NS },
	};
	struct profile *p = fx_jvm_profile(1 | 4 | 8);
	struct json_object *ws, *w;
	struct tree t;
	size_t len, nclass = 0;
	char *html;

	(void)state;
	assert_non_null(p);
	html = write_html_buf(p, &len);
	tree_load(&t, html);
	assert_string_equal(get_str_meta(&t, "unit"), "samples");
	ws = get(t.root, "weights");
	assert_int_equal(json_object_array_length(ws), NELEM(want));
	for (size_t k = 0; k < NELEM(want); k++) {
		int64_t *self, sum = 0;

		w = json_object_array_get_idx(ws, k);
		assert_string_equal(json_object_get_string(get(w, "name")),
				    want[k].name);
		assert_string_equal(json_object_get_string(get(w, "unit")),
				    want[k].unit);
		self = decode_self(json_object_get_string(get(w, "self")),
				   t.n);
		for (size_t i = 0; i < t.n; i++) {
			sum += self[i];
			/* the nodes' own self values are the first weight's */
			if (k == 0)
				assert_int_equal(self[i], t.v[5 * i + 2]);
			/* allocations and monitors end at their class */
			if (k && self[i])
				assert_string_equal(node_cat(&t, i), "class");
		}
		assert_int_equal(sum, want[k].total);
		free(self);
	}
	for (size_t i = 0; i < t.n; i++) {
		if (strcmp(node_cat(&t, i), "class"))
			continue;
		nclass++;
		assert_true(!strcmp(node_name(&t, i), "byte[]") ||
			    !strcmp(node_name(&t, i), "java.lang.String") ||
			    !strcmp(node_name(&t, i), "java.lang.Object"));
	}
	assert_int_equal(nclass, 3);
	tree_free(&t);
	free(html);
	profile__free(p);

	/* one family, one weight: no chooser */
	p = fx_profile();
	assert_non_null(p);
	html = write_html_buf(p, &len);
	tree_load(&t, html);
	assert_false(json_object_object_get_ex(t.root, "weights", NULL));
	tree_free(&t);
	free(html);
	profile__free(p);
}

/* ---- a 100 000-stack profile shaped like a busy service JVM ----------- */

#define BIG_STACKS	100000
#define BIG_METHODS	3000

static const char *const pkgs[] = { "com.acme.orders", "com.acme.billing",
	"org.apache.kafka.clients.consumer", "io.netty.channel", "java.util.concurrent",
	"jdk.internal.misc", "com.fasterxml.jackson.databind", "org.postgresql.core" };
static const char *const classes[] = { "Service", "Handler", "Codec", "Pool",
	"Worker", "Mapper", "Registry", "Buffer", "Fetcher", "Pipeline$Context" };
static const char *const methods[] = { "process", "handle", "encode", "decode",
	"run", "apply", "get", "put", "submit", "read", "write", "flush", "poll",
	"lambda$submit$0" };
static const char *const ksyms[] = { "copy_user_enhanced_fast_string",
	"__x64_sys_futex", "futex_wait", "do_syscall_64", "entry_SYSCALL_64_after_hwframe",
	"tcp_sendmsg", "__sys_sendto", "ep_poll", "do_epoll_wait" };

struct big {
	struct profile *p;
	char *klass[BIG_METHODS];
	char *meth[BIG_METHODS];
	uint64_t total;
	uint64_t matched;	/* samples of stacks with a frame matching the query */
};

#define BIG_QUERY "Fetcher7.submit"

static uint64_t rnd_state = 0x2545f4914f6cdd1dull;
static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state >> 11);
}

static void big_build(struct big *b)
{
	struct frame fr[80];
	char jname[256];

	rnd_state = 0x2545f4914f6cdd1dull;	/* the same profile every call */
	b->p = profile__new();
	assert_non_null(b->p);
	for (int i = 0; i < BIG_METHODS; i++) {
		char k[128];

		snprintf(k, sizeof(k), "%s.%s%d", pkgs[i % 8], classes[(i / 8) % 10], i / 80);
		b->klass[i] = strdup(k);
		b->meth[i] = strdup(methods[(i * 7 + i / 8) % 14]);
	}
	profile__meta(b->p)->frequency_hz = 999;
	profile__meta(b->p)->duration_ns = 60ull * 1000000000;
	while (profile__nstacks(b->p) < BIG_STACKS) {
		struct trace t = { .pid = 31337, .comm = "java", .kind = TRACE_KIND_JAVA,
				   .frames = fr };
		char tname[32];
		int n = 0, depth = 8 + rnd() % 36, m = rnd() % 64, nj;
		uint64_t cnt = 1 + rnd() % 20;
		bool match = false;
		struct frame base[] = {
			NF(0x7f3a4d72166cull, 0x10966c, "__clone3", LIBC_SO),
			NF(0x7f3a4d6a1fd4ull, 0x89fd4, "start_thread", LIBC_SO),
			JVMF(0x7f3a4cc2f6b0ull, 0xc2f6b0, "thread_native_entry(Thread*)"),
			JVMF(0x7f3a4c85e0a4ull, 0x85e0a4,
			     "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)"),
		};

		t.tid = 31340 + m % 16;
		snprintf(tname, sizeof(tname), "pool-1-thread-%d", m % 16);
		t.thread = tname;
		/* leaf part, built callee first */
		if (rnd() % 10 < 3) {
			int nk = 2 + rnd() % 3;

			for (int k = 0; k < nk; k++)
				fr[n++] = (struct frame)KF(0xffffffff81000000ull + rnd() % 4096,
							   ksyms[(m + k) % 9]);
		}
		nj = depth;
		/* the Java part: a walk in a call graph of fan-out 4, root
		 * side first, written into the tail */
		{
			struct frame java[64];
			int cur = m, jn = 0;

			for (int k = 0; k < nj && jn < 64; k++) {
				int lvl = (int[]){ 0, 1, 3, 4, 4, 4 }[rnd() % 6];

				cur = (cur * 31 + 1 + rnd() % 4) % BIG_METHODS;
				java[jn++] = (struct frame)JF(FRAME_JAVA, b->klass[cur],
					b->meth[cur], "()V", "Gen.java", rnd() % 40,
					10 + cur % 500, lvl);
				if (lvl == 4 && rnd() % 3 == 0)
					java[jn - 1].type = FRAME_JAVA_INLINED;
			}
			/* callee first */
			for (int k = jn; k-- > 0 && n < 76;)
				fr[n++] = java[k];
		}
		for (int k = 3; k >= 0; k--)
			fr[n++] = base[k];
		t.nframes = n;
		for (int k = 0; k < n; k++) {
			if (fr[k].type != FRAME_JAVA && fr[k].type != FRAME_JAVA_INLINED)
				continue;
			snprintf(jname, sizeof(jname), "%s.%s", fr[k].klass, fr[k].method);
			if (strstr(jname, BIG_QUERY))
				match = true;
		}
		assert_int_equal(profile__add(b->p, &t, cnt, 0), 0);
		b->total += cnt;
		if (match)
			b->matched += cnt;
	}
	profile__meta(b->p)->samples = b->total;
}

static void big_free(struct big *b)
{
	profile__free(b->p);
	for (int i = 0; i < BIG_METHODS; i++) {
		free(b->klass[i]);
		free(b->meth[i]);
	}
}

static void test_big_profile(void **state)
{
	struct big b = { 0 };
	struct tree t;
	int64_t sum = 0;
	size_t len;
	char *html;

	(void)state;
	big_build(&b);
	assert_int_equal(profile__nstacks(b.p), BIG_STACKS);
	assert_true(b.matched > 0 && b.matched < b.total);
	html = write_html_buf(b.p, &len);
	tree_load(&t, html);
	for (size_t i = 0; i < t.n; i++)
		sum += t.v[5 * i + 2];
	assert_int_equal(sum, b.total);
	print_message("MEASURE: html_100k_stacks_bytes=%zu tree_nodes=%zu\n", len, t.n);
	/* a file a browser opens without trouble */
	assert_true(len < 64u * 1024 * 1024);
	tree_free(&t);
	free(html);
	big_free(&b);
}

static void write_file(const char *dir, const char *name, const struct profile *p)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(write_html(p, f), 0);
	assert_int_equal(fclose(f), 0);
}

/* the files tests/integration/test_html.sh renders in Chromium */
static void test_emit_for_browser(void **state)
{
	const char *dir = getenv("ASGST_HTML_OUT");
	struct profile *p;
	struct big b = { 0 };
	char path[4096];
	FILE *f;
	uint64_t hm = 0, total = 0;

	(void)state;
	if (!dir || !*dir)
		skip();
	p = fx_profile();
	assert_non_null(p);
	write_file(dir, "fixture.html", p);
	for (size_t i = 0; i < FX_NTRACES; i++) {
		total += fx_traces[i].count;
		for (uint32_t k = 0; k < fx_traces[i].t.nframes; k++) {
			const char *c = fx_traces[i].t.frames[k].klass;

			if (c && strstr(c, "HashMap")) {
				hm += fx_traces[i].count;
				break;
			}
		}
	}
	big_build(&b);
	write_file(dir, "big.html", b.p);
	snprintf(path, sizeof(path), "%s/expect.txt", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "fixture hashmap %.2f %llu\n", 100.0 * hm / total,
		(unsigned long long)total);
	fprintf(f, "big %s %.2f %llu\n", BIG_QUERY, 100.0 * b.matched / b.total,
		(unsigned long long)b.total);
	assert_int_equal(fclose(f), 0);
	big_free(&b);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_tree),
		cmocka_unit_test(test_script_breakout),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_jvm_event_weights),
		cmocka_unit_test(test_crossing_names),
		cmocka_unit_test(test_big_profile),
		cmocka_unit_test(test_emit_for_browser),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
