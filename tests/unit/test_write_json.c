// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JSON writer: the output is parsed back with json-c in strict mode with
 * UTF-8 validation, and every field of every stack and frame is compared
 * with the traces that went in.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include <json-c/json.h>

#include <linux/types.h>
#include "sampler.h"
#include "profile/profile.h"
#include "trace.h"
#include "output/writers.h"
#include "unit/writers_fixture.h"

static struct json_object *parse_strict(const char *buf, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;

	assert_non_null(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, buf, (int)len);
	if (!o)
		fail_msg("JSON does not parse: %s",
			 json_tokener_error_desc(json_tokener_get_error(tok)));
	/* nothing but blanks after the document */
	for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
		assert_true(buf[i] == '\n' || buf[i] == ' ');
	json_tokener_free(tok);
	return o;
}

static struct json_object *get(struct json_object *o, const char *key,
			       enum json_type type)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("missing key \"%s\"", key);
	if (!json_object_is_type(v, type))
		fail_msg("key \"%s\" has type %s", key,
			 json_type_to_name(json_object_get_type(v)));
	return v;
}

static int64_t get_int(struct json_object *o, const char *key)
{
	return json_object_get_int64(get(o, key, json_type_int));
}

static const char *get_str(struct json_object *o, const char *key)
{
	return json_object_get_string(get(o, key, json_type_string));
}

static uint64_t get_hex(struct json_object *o, const char *key)
{
	const char *s = get_str(o, key);
	char *end;
	uint64_t v;

	assert_true(strncmp(s, "0x", 2) == 0);
	errno = 0;
	v = strtoull(s + 2, &end, 16);
	assert_int_equal(errno, 0);
	assert_true(end != s + 2 && *end == '\0');
	return v;
}

/* a string or null field equal to want (NULL = null) */
static void check_str_or_null(struct json_object *o, const char *key,
			      const char *want)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	if (!want) {
		assert_true(json_object_is_type(v, json_type_null));
		return;
	}
	assert_true(json_object_is_type(v, json_type_string));
	assert_string_equal(json_object_get_string(v), want);
}

static int nkeys(struct json_object *o)
{
	return json_object_object_length(o);
}

/* what json_str() makes of the fixture's invalid UTF-8 */
#define R "\xef\xbf\xbd"
static const char *expected_str(const char *s)
{
	if (s && strncmp(s, "bad\xff", 4) == 0)
		return "bad" R R " utf8 " R R " " R R R;
	return s;
}

static void check_frame(struct json_object *jf, const struct frame *f)
{
	const char *type = get_str(jf, "type");

	assert_string_equal(type, frame_type__name(f->type));
	switch (f->type) {
	case FRAME_KERNEL:
		assert_int_equal(nkeys(jf), 2);
		if (f->symbol) {
			assert_string_equal(get_str(jf, "symbol"), f->symbol);
		} else {
			assert_int_equal(get_hex(jf, "symbol"), f->pc);
		}
		break;
	case FRAME_NON_JAVA:
		/* file and line only where the DWARF gave them */
		assert_int_equal(nkeys(jf), 6 + !!f->source + (f->line > 0));
		assert_int_equal(json_object_get_boolean(get(jf, "inlined",
							     json_type_boolean)),
				 !!(f->flags & FRAME_F_INLINED));
		assert_int_equal(get_hex(jf, "pc"), f->pc);
		assert_int_equal(get_hex(jf, "offset"), f->offset);
		check_str_or_null(jf, "symbol", expected_str(f->symbol));
		check_str_or_null(jf, "module", f->module);
		break;
	case FRAME_JAVA:
	case FRAME_JAVA_INLINED:
	case FRAME_JAVA_NATIVE:
		assert_int_equal(nkeys(jf), 7);
		check_str_or_null(jf, "class", f->klass);
		check_str_or_null(jf, "method", f->method);
		check_str_or_null(jf, "signature", f->signature);
		assert_int_equal(get_int(jf, "bci"), f->bci);
		assert_int_equal(get_int(jf, "line"), f->line);
		assert_int_equal(get_int(jf, "comp_level"), f->comp_level);
		break;
	default:
		assert_int_equal(nkeys(jf), 3);
		assert_int_equal(get_hex(jf, "pc"), f->pc);
		check_str_or_null(jf, "reason", f->reason);
		break;
	}
}

static char *write_to_buf(const struct profile *p, size_t *len)
{
	FILE *f = tmpfile();
	char *buf;

	assert_non_null(f);
	assert_int_equal(write_json(p, f), 0);
	buf = fx_slurp(f, len);
	assert_non_null(buf);
	fclose(f);
	return buf;
}

static void test_fixture_round_trip(void **state)
{
	struct profile *p = fx_profile();
	struct json_object *root, *stacks;
	size_t len;
	char *buf;

	(void)state;
	assert_non_null(p);
	buf = write_to_buf(p, &len);
	/* no raw control byte anywhere: they must all be escaped */
	for (size_t i = 0; i < len; i++)
		assert_true((unsigned char)buf[i] >= 0x20 || buf[i] == '\n');
	root = parse_strict(buf, len);
	assert_int_equal(nkeys(root), 11);
	assert_int_equal(json_object_array_length(get(root, "events",
						      json_type_array)), 1);
	assert_int_equal(get_int(root, "offcpu_samples"), 0);
	assert_int_equal(get_int(root, "offcpu_capture_ns"), 0);
	assert_string_equal(get_str(root, "format"), "asgst-bpf");
	assert_int_equal(get_int(root, "version"), 1);
	assert_int_equal(get_int(root, "frequency_hz"), 99);
	assert_int_equal(get_int(root, "duration_ns"), 10000000000ll);
	assert_int_equal(get_int(root, "samples"), 17 + 5 + 3 + 2 + 40 + 4 + 1);
	assert_int_equal(get_int(root, "lost"), 3);
	stacks = get(root, "stacks", json_type_array);
	assert_int_equal(json_object_array_length(stacks), FX_NTRACES);
	for (size_t i = 0; i < FX_NTRACES; i++) {
		struct json_object *js = json_object_array_get_idx(stacks, i);
		const struct trace *t = &fx_traces[i].t;
		struct json_object *err, *frames;

		assert_true(json_object_is_type(js, json_type_object));
		/* + state, event, virtual_thread, pinned; jvmti_state for Java */
		assert_int_equal(nkeys(js), t->kind == TRACE_KIND_JAVA ? 13 : 12);
		assert_string_equal(get_str(js, "state"), trace_state__name(t->state));
		assert_string_equal(get_str(js, "event"), "cpu");
		assert_int_equal(get_int(js, "pid"), t->pid);
		assert_int_equal(get_int(js, "tid"), t->tid);
		assert_string_equal(get_str(js, "comm"), t->comm);
		assert_string_equal(get_str(js, "thread"), t->thread);
		assert_int_equal(get_int(js, "count"), fx_traces[i].count);
		assert_string_equal(get_str(js, "kind"), trace_kind__name(t->kind));
		assert_true(json_object_object_get_ex(js, "error", &err));
		if (t->error) {
			assert_true(json_object_is_type(err, json_type_object));
			assert_int_equal(nkeys(err), 2);
			assert_int_equal(get_int(err, "code"), t->error);
			assert_string_equal(get_str(err, "name"), t->error_name);
		} else {
			assert_true(json_object_is_type(err, json_type_null));
		}
		frames = get(js, "frames", json_type_array);
		assert_int_equal(json_object_array_length(frames), t->nframes);
		for (uint32_t k = 0; k < t->nframes; k++)
			check_frame(json_object_array_get_idx(frames, k), &t->frames[k]);
	}
	/* spot checks, independent of the loop above */
	{
		struct json_object *s0 = json_object_array_get_idx(stacks, 0);
		struct json_object *f0 = json_object_array_get_idx(
			get(s0, "frames", json_type_array), 0);
		struct json_object *f7 = json_object_array_get_idx(
			get(s0, "frames", json_type_array), 7);
		struct json_object *s6 = json_object_array_get_idx(stacks, 6);

		assert_string_equal(get_str(f0, "type"), "kernel");
		assert_string_equal(get_str(f0, "symbol"), "clear_page_erms");
		assert_string_equal(get_str(f7, "class"), "java.util.HashMap");
		assert_int_equal(get_int(f7, "comp_level"), 4);
		assert_string_equal(get_str(s6, "comm"), "we;ird\n ");
		assert_string_equal(get_str(s6, "thread"), "t\"h\\r\x01");
	}
	json_object_put(root);
	free(buf);
	profile__free(p);
}

static bool get_bool(struct json_object *o, const char *key)
{
	return json_object_get_boolean(get(o, key, json_type_boolean));
}

/* runtime insight: state, off-CPU weight, virtual threads, crossings */
static void test_runtime_fields(void **state)
{
	struct profile *p = profile__new();
	struct frame fr[3] = {
		{ .type = FRAME_JAVA_NATIVE, .comp_level = -1, .bci = -1,
		  .line = -1, .klass = "Pin", .method = "sleepInC",
		  .signature = "(I)V", .flags = FRAME_F_DOWNCALL_JNI },
		{ .type = FRAME_JAVA_NATIVE, .comp_level = -1, .bci = -1,
		  .line = -1, .klass = "jdk.internal.vm.Continuation",
		  .method = "enterSpecial", .signature = "()V",
		  .flags = FRAME_F_VTHREAD_ENTRY },
		{ .type = FRAME_NON_JAVA, .comp_level = -1, .bci = -1,
		  .line = -1, .pc = 0x1000, .symbol = "call_stub",
		  .flags = FRAME_F_STUB | FRAME_F_UPCALL_JNI },
	};
	struct trace t = { .pid = 1, .tid = 2, .comm = "java",
			   .thread = "ForkJoinPool-1-worker-1",
			   .kind = TRACE_KIND_JAVA, .state = TRACE_STATE_IN_NATIVE,
			   .jvmti_state = 0x400005, .event = TRACE_EV_OFFCPU,
			   .flags = TRACE_F_VTHREAD | TRACE_F_PINNED,
			   .nframes = 3, .frames = fr };
	struct json_object *root, *js, *frames;
	size_t len;
	char *buf;

	(void)state;
	assert_non_null(p);
	profile__meta(p)->events = ASGST_EVMASK_CPU | ASGST_EVMASK_OFFCPU;
	profile__meta(p)->offcpu_events = 7;
	profile__meta(p)->offcpu_capture_ns = 31234;
	/* the same stack twice: one entry, weights summed */
	assert_int_equal(profile__add(p, &t, 1, 1500), 0);
	assert_int_equal(profile__add(p, &t, 1, 2500), 0);
	t.flags = TRACE_F_PREEMPTED;
	assert_int_equal(profile__add(p, &t, 1, 100), 0);
	buf = write_to_buf(p, &len);
	root = parse_strict(buf, len);
	assert_int_equal(json_object_array_length(get(root, "events",
						      json_type_array)), 2);
	assert_int_equal(get_int(root, "offcpu_samples"), 7);
	assert_int_equal(get_int(root, "offcpu_capture_ns"), 31234);
	assert_int_equal(json_object_array_length(get(root, "stacks",
						      json_type_array)), 2);
	js = json_object_array_get_idx(get(root, "stacks", json_type_array), 0);
	assert_string_equal(get_str(js, "state"), "in_native");
	assert_int_equal(get_int(js, "jvmti_state"), 0x400005);
	assert_string_equal(get_str(js, "event"), "offcpu");
	assert_int_equal(get_int(js, "offcpu_ns"), 4000);
	assert_int_equal(get_int(js, "count"), 2);
	assert_true(get_bool(js, "virtual_thread"));
	assert_true(get_bool(js, "pinned"));
	assert_false(get_bool(js, "preempted"));
	frames = get(js, "frames", json_type_array);
	assert_string_equal(get_str(json_object_array_get_idx(frames, 0),
				    "downcall"), "jni");
	assert_true(get_bool(json_object_array_get_idx(frames, 1),
			     "vthread_entry"));
	assert_false(json_object_object_get_ex(
		json_object_array_get_idx(frames, 1), "downcall", NULL));
	assert_string_equal(get_str(json_object_array_get_idx(frames, 2),
				    "upcall"), "jni");
	js = json_object_array_get_idx(get(root, "stacks", json_type_array), 1);
	assert_false(get_bool(js, "pinned"));
	assert_true(get_bool(js, "preempted"));
	assert_int_equal(get_int(js, "offcpu_ns"), 100);
	json_object_put(root);
	free(buf);
	profile__free(p);
}

/* the escapes themselves, as bytes in the file */
static void test_escape_bytes(void **state)
{
	struct profile *p = profile__new();
	struct frame fr = UF(0x10, "a\"b\\c\nd\x7f" "e\x01\xe2\x82\xac");
	struct trace t = { .pid = 1, .tid = 2, .comm = "c", .thread = NULL,
			   .nframes = 1, .frames = &fr };
	size_t len;
	char *buf;

	(void)state;
	assert_non_null(p);
	assert_int_equal(profile__add(p, &t, 1, 0), 0);
	buf = write_to_buf(p, &len);
	assert_non_null(strstr(buf, "\"reason\":\"a\\\"b\\\\c\\nd\x7f" "e\\u0001\xe2\x82\xac\""));
	/* no thread name: the comm stands in */
	assert_non_null(strstr(buf, "\"thread\":\"c\""));
	json_object_put(parse_strict(buf, len));
	free(buf);
	profile__free(p);
}

/* native frames: inlined (bool), and file and line where the DWARF gave
 * them, absent otherwise */
static void test_native_inline_fields(void **state)
{
	struct frame fr[] = {
		NF(0x55550000172bull, 0x172b, "mix", HN_EXE),
		NF(0x55550000172bull, 0x172b, "chain_outer", HN_EXE),
		NF(0x7f3a4d6a1fd4ull, 0x89fd4, "start_thread", LIBC_SO),
	};
	struct profile *p = profile__new();
	struct trace t = { .pid = 1, .tid = 1, .comm = "inl",
			   .thread = "inl", .nframes = NELEM(fr), .frames = fr };
	struct json_object *root, *frames, *v;
	size_t len;
	char *buf;

	(void)state;
	assert_non_null(p);
	fr[0].flags = FRAME_F_INLINED;
	fr[0].source = fr[1].source = "/src/inl.cpp";
	fr[0].line = 36;
	fr[1].line = 43;
	assert_int_equal(profile__add(p, &t, 2, 0), 0);
	buf = write_to_buf(p, &len);
	root = parse_strict(buf, len);
	frames = get(json_object_array_get_idx(get(root, "stacks",
						   json_type_array), 0),
		     "frames", json_type_array);
	assert_int_equal(json_object_array_length(frames), 3);
	v = json_object_array_get_idx(frames, 0);
	assert_string_equal(get_str(v, "symbol"), "mix");
	assert_true(json_object_get_boolean(get(v, "inlined", json_type_boolean)));
	assert_string_equal(get_str(v, "file"), "/src/inl.cpp");
	assert_int_equal(get_int(v, "line"), 36);
	assert_int_equal(get_hex(v, "offset"), 0x172b);
	v = json_object_array_get_idx(frames, 1);
	assert_false(json_object_get_boolean(get(v, "inlined", json_type_boolean)));
	assert_string_equal(get_str(v, "file"), "/src/inl.cpp");
	assert_int_equal(get_int(v, "line"), 43);
	v = json_object_array_get_idx(frames, 2);
	assert_false(json_object_get_boolean(get(v, "inlined", json_type_boolean)));
	assert_false(json_object_object_get_ex(v, "file", NULL));
	assert_false(json_object_object_get_ex(v, "line", NULL));
	json_object_put(root);
	free(buf);
	profile__free(p);
}

static void test_empty_and_write_error(void **state)
{
	struct profile *p = profile__new();
	struct json_object *root;
	FILE *full;
	size_t len;
	char *buf;

	(void)state;
	assert_non_null(p);
	buf = write_to_buf(p, &len);
	root = parse_strict(buf, len);
	assert_int_equal(json_object_array_length(get(root, "stacks", json_type_array)), 0);
	assert_int_equal(get_int(root, "samples"), 0);
	json_object_put(root);
	free(buf);
	profile__free(p);

	p = fx_profile();
	full = fopen("/dev/full", "w");
	if (!full) {
		profile__free(p);
		skip();
	}
	assert_int_equal(write_json(p, full), -ENOSPC);
	fclose(full);
	profile__free(p);
}

/* alloc and lock stacks: their values, classes and class frame */
static void test_jvm_events(void **state)
{
	struct profile *p = fx_jvm_profile(ASGST_EVMASK_CPU |
					   ASGST_EVMASK_ALLOC |
					   ASGST_EVMASK_LOCK);
	struct json_object *root, *stacks, *events, *frames, *f0;
	size_t len, nalloc = 0, nlock = 0;
	char *buf;

	(void)state;
	assert_non_null(p);
	buf = write_to_buf(p, &len);
	root = parse_strict(buf, len);
	events = get(root, "events", json_type_array);
	assert_int_equal(json_object_array_length(events), 3);
	assert_string_equal(json_object_get_string(
		json_object_array_get_idx(events, 0)), "cpu");
	assert_string_equal(json_object_get_string(
		json_object_array_get_idx(events, 1)), "alloc");
	assert_string_equal(json_object_get_string(
		json_object_array_get_idx(events, 2)), "lock");
	assert_int_equal(get_int(root, "alloc_events"), 5);
	assert_int_equal(get_int(root, "lock_events"), 4);
	assert_int_equal(get_int(root, "jvm_events_lost"), 1);
	assert_int_equal(get_int(root, "jvm_events_throttled"), 4);
	assert_int_equal(get_int(root, "alloc_interval"), 524288);
	stacks = get(root, "stacks", json_type_array);
	assert_int_equal(json_object_array_length(stacks),
			 FX_NTRACES + FX_NEVENTS);
	for (size_t i = 0; i < FX_NEVENTS; i++) {
		struct json_object *js = json_object_array_get_idx(stacks,
							FX_NTRACES + i);
		const struct fx_event *e = &fx_events[i];

		assert_int_equal(get_int(js, "count"), e->v.count);
		frames = get(js, "frames", json_type_array);
		assert_int_equal(json_object_array_length(frames),
				 e->t.nframes);
		f0 = json_object_array_get_idx(frames, 0);
		assert_int_equal(nkeys(f0), 2);
		assert_string_equal(get_str(f0, "type"), "class");
		assert_string_equal(get_str(f0, "class"), e->t.ev_class);
		assert_string_equal(get_str(json_object_array_get_idx(frames,
						1), "type"), "java");
		if (e->t.event == TRACE_EV_ALLOC) {
			assert_string_equal(get_str(js, "event"), "alloc");
			assert_int_equal(get_int(js, "alloc_count"),
					 e->v.alloc_objects);
			assert_int_equal(get_int(js, "alloc_bytes"),
					 e->v.alloc_bytes);
			assert_string_equal(get_str(js, "alloc_class"),
					    e->t.ev_class);
			assert_false(json_object_object_get_ex(js, "lock_ns",
							       NULL));
			nalloc++;
		} else {
			assert_string_equal(get_str(js, "event"), "lock");
			assert_int_equal(get_int(js, "lock_ns"),
					 e->v.weight_ns);
			assert_string_equal(get_str(js, "lock_class"),
					    e->t.ev_class);
			assert_false(json_object_object_get_ex(js,
							"alloc_bytes", NULL));
			nlock++;
		}
	}
	assert_int_equal(nalloc, 2);
	assert_int_equal(nlock, 1);
	/* a cpu stack has none of them */
	assert_false(json_object_object_get_ex(
		json_object_array_get_idx(stacks, 0), "alloc_class", NULL));
	json_object_put(root);
	free(buf);
	profile__free(p);

	/* alloc alone: the only event named */
	p = fx_jvm_profile(ASGST_EVMASK_ALLOC);
	assert_non_null(p);
	buf = write_to_buf(p, &len);
	root = parse_strict(buf, len);
	events = get(root, "events", json_type_array);
	assert_int_equal(json_object_array_length(events), 1);
	assert_string_equal(json_object_get_string(
		json_object_array_get_idx(events, 0)), "alloc");
	assert_int_equal(json_object_array_length(get(root, "stacks",
				json_type_array)), 2);
	json_object_put(root);
	free(buf);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_round_trip),
		cmocka_unit_test(test_escape_bytes),
		cmocka_unit_test(test_runtime_fields),
		cmocka_unit_test(test_empty_and_write_error),
		cmocka_unit_test(test_native_inline_fields),
		cmocka_unit_test(test_jvm_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
