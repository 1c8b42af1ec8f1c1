// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof writer, read back by an independent decoder: gzip -dc, then
 * protobuf's own `protoc --decode=perftools.profiles.Profile` with the
 * profile.proto schema (written below from the published definition). The
 * text it prints is parsed here and checked: pprof's validity rules,
 * samples and their values and labels, functions, and inlined Java frames
 * as Lines of one Location.
 */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/types.h>
#include "sampler.h"
#include "profile/profile.h"
#include "trace.h"
#include "output/writers.h"
#include "unit/writers_fixture.h"

static const char profile_proto[] =
	"syntax = \"proto3\";\n"
	"package perftools.profiles;\n"
	"message Profile {\n"
	"  repeated ValueType sample_type = 1;\n"
	"  repeated Sample sample = 2;\n"
	"  repeated Mapping mapping = 3;\n"
	"  repeated Location location = 4;\n"
	"  repeated Function function = 5;\n"
	"  repeated string string_table = 6;\n"
	"  int64 drop_frames = 7;\n"
	"  int64 keep_frames = 8;\n"
	"  int64 time_nanos = 9;\n"
	"  int64 duration_nanos = 10;\n"
	"  ValueType period_type = 11;\n"
	"  int64 period = 12;\n"
	"  repeated int64 comment = 13;\n"
	"  int64 default_sample_type = 14;\n"
	"}\n"
	"message ValueType { int64 type = 1; int64 unit = 2; }\n"
	"message Sample {\n"
	"  repeated uint64 location_id = 1;\n"
	"  repeated int64 value = 2;\n"
	"  repeated Label label = 3;\n"
	"}\n"
	"message Label { int64 key = 1; int64 str = 2; int64 num = 3; int64 num_unit = 4; }\n"
	"message Mapping {\n"
	"  uint64 id = 1; uint64 memory_start = 2; uint64 memory_limit = 3;\n"
	"  uint64 file_offset = 4; int64 filename = 5; int64 build_id = 6;\n"
	"  bool has_functions = 7; bool has_filenames = 8;\n"
	"  bool has_line_numbers = 9; bool has_inline_frames = 10;\n"
	"}\n"
	"message Location {\n"
	"  uint64 id = 1; uint64 mapping_id = 2; uint64 address = 3;\n"
	"  repeated Line line = 4; bool is_folded = 5;\n"
	"}\n"
	"message Line { uint64 function_id = 1; int64 line = 2; int64 column = 3; }\n"
	"message Function {\n"
	"  uint64 id = 1; int64 name = 2; int64 system_name = 3;\n"
	"  int64 filename = 4; int64 start_line = 5;\n"
	"}\n";

/* ---- a parser for protobuf text format (what protoc prints) ---------- */

struct node {
	char name[32];
	char *value;		/* scalar (unescaped), NULL for a message */
	size_t vlen;
	struct node *kids;
	int nkids;
};

static void node_free(struct node *n)
{
	for (int i = 0; i < n->nkids; i++)
		node_free(&n->kids[i]);
	free(n->kids);
	free(n->value);
}

static char *unescape(const char *s, size_t *len)
{
	char *o = malloc(strlen(s) + 1), *d = o;

	assert_non_null(o);
	assert_true(*s == '"');
	for (s++; *s && *s != '"'; s++) {
		if (*s != '\\') {
			*d++ = *s;
			continue;
		}
		s++;
		switch (*s) {
		case 'n': *d++ = '\n'; break;
		case 'r': *d++ = '\r'; break;
		case 't': *d++ = '\t'; break;
		case '"': case '\'': case '\\': *d++ = *s; break;
		case 'x': {
			unsigned v = 0;
			int k;

			for (k = 0; k < 2 && isxdigit((unsigned char)s[1]); k++, s++)
				v = v * 16 + (isdigit((unsigned char)s[1]) ? s[1] - '0' :
					      (tolower((unsigned char)s[1]) - 'a' + 10));
			*d++ = (char)v;
			break;
		}
		default:
			if (*s >= '0' && *s <= '7') {
				unsigned v = 0;
				int k;

				for (k = 0; k < 3 && s[k] >= '0' && s[k] <= '7'; k++)
					v = v * 8 + (s[k] - '0');
				s += k - 1;
				*d++ = (char)v;
			} else {
				fail_msg("unknown escape \\%c", *s);
			}
		}
	}
	assert_true(*s == '"');
	*d = '\0';
	*len = d - o;
	return o;
}

/* parse lines until a closing brace (or EOF at top level) */
static void parse_block(FILE *f, struct node *parent, int depth)
{
	char line[65536];

	while (fgets(line, sizeof(line), f)) {
		char *p = line, *e;
		struct node *n;

		while (*p == ' ')
			p++;
		e = p + strlen(p);
		while (e > p && (e[-1] == '\n' || e[-1] == ' '))
			*--e = '\0';
		if (!*p)
			continue;
		if (strcmp(p, "}") == 0) {
			assert_true(depth > 0);
			return;
		}
		parent->kids = realloc(parent->kids, (parent->nkids + 1) * sizeof(*n));
		assert_non_null(parent->kids);
		n = &parent->kids[parent->nkids++];
		memset(n, 0, sizeof(*n));
		if (e - p >= 2 && strcmp(e - 2, " {") == 0) {
			e[-2] = '\0';
			snprintf(n->name, sizeof(n->name), "%.31s", p);
			parse_block(f, n, depth + 1);
			continue;
		}
		e = strstr(p, ": ");
		assert_non_null(e);
		*e = '\0';
		snprintf(n->name, sizeof(n->name), "%.31s", p);
		if (e[2] == '"') {
			n->value = unescape(e + 2, &n->vlen);
		} else {
			n->value = strdup(e + 2);
			n->vlen = strlen(n->value);
		}
	}
	assert_int_equal(depth, 0);
}

static struct node *kid(const struct node *n, const char *name, int idx)
{
	for (int i = 0; i < n->nkids; i++)
		if (strcmp(n->kids[i].name, name) == 0 && idx-- == 0)
			return &n->kids[i];
	return NULL;
}

static int count_kids(const struct node *n, const char *name)
{
	int c = 0;

	for (int i = 0; i < n->nkids; i++)
		c += strcmp(n->kids[i].name, name) == 0;
	return c;
}

/* a scalar, 0 when absent (proto3 default) */
static long long num(const struct node *n, const char *name)
{
	struct node *k = kid(n, name, 0);

	if (!k)
		return 0;
	assert_non_null(k->value);
	if (strcmp(k->value, "true") == 0)
		return 1;
	/* uint64 fields (kernel addresses) exceed LLONG_MAX */
	if (k->value[0] == '-')
		return strtoll(k->value, NULL, 10);
	return (long long)strtoull(k->value, NULL, 10);
}

/* ---- the decoded profile --------------------------------------------- */

struct dprof {
	struct node root;
	const char **strs;
	int nstrs;
	struct node **func;	/* by id */
	struct node **loc;
	struct node **map;
	int nfunc, nloc, nmap;	/* max id + 1 */
};

static const char *str_at(const struct dprof *d, long long i)
{
	assert_true(i >= 0 && i < d->nstrs);
	return d->strs[i];
}

static void index_by_id(struct dprof *d, const char *what, struct node ***out,
			int *nout)
{
	int n = count_kids(&d->root, what);

	*out = calloc(n + 1, sizeof(**out));
	assert_non_null(*out);
	*nout = n + 1;
	for (int i = 0; i < n; i++) {
		struct node *k = kid(&d->root, what, i);
		long long id = num(k, "id");

		/* pprof: ids nonzero, unique; ours are also dense */
		assert_true(id >= 1 && id <= n);
		assert_null((*out)[id]);
		(*out)[id] = k;
	}
}

static bool have_tools(void)
{
	return system("command -v protoc >/dev/null 2>&1 && command -v gzip >/dev/null 2>&1") == 0;
}

static void decode(const struct profile *p, struct dprof *d)
{
	char dir[] = "/tmp/test_write_pprof.XXXXXX", path[256], cmd[1024];
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/profile.proto", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(profile_proto, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/out.pb.gz", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(write_pprof(p, f), 0);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "gzip -t %s/out.pb.gz && gzip -dc %s/out.pb.gz | "
		 "protoc -I%s --decode=perftools.profiles.Profile %s/profile.proto "
		 "> %s/out.txt 2> %s/err.txt", dir, dir, dir, dir, dir, dir);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof(cmd), "cat %s/err.txt >&2", dir);
		(void)system(cmd);
		fail_msg("protoc could not decode the profile");
	}
	snprintf(path, sizeof(path), "%s/err.txt", dir);
	{
		struct stat sb;

		/* protoc warns (and drops fields) on bad UTF-8 in strings */
		assert_int_equal(stat(path, &sb), 0);
		assert_int_equal(sb.st_size, 0);
	}
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	memset(d, 0, sizeof(*d));
	parse_block(f, &d->root, 0);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)system(cmd);

	d->nstrs = count_kids(&d->root, "string_table");
	d->strs = calloc(d->nstrs, sizeof(*d->strs));
	for (int i = 0; i < d->nstrs; i++)
		d->strs[i] = kid(&d->root, "string_table", i)->value;
	index_by_id(d, "function", &d->func, &d->nfunc);
	index_by_id(d, "location", &d->loc, &d->nloc);
	index_by_id(d, "mapping", &d->map, &d->nmap);
}

static void dprof_free(struct dprof *d)
{
	node_free(&d->root);
	free(d->strs);
	free(d->func);
	free(d->loc);
	free(d->map);
}

static struct node *location(const struct dprof *d, long long id)
{
	assert_true(id >= 1 && id < d->nloc);
	assert_non_null(d->loc[id]);
	return d->loc[id];
}

static struct node *function(const struct dprof *d, long long id)
{
	assert_true(id >= 1 && id < d->nfunc);
	assert_non_null(d->func[id]);
	return d->func[id];
}

/* name of the function of line i of a location */
static const char *line_name(const struct dprof *d, const struct node *loc, int i)
{
	struct node *l = kid(loc, "line", i);

	assert_non_null(l);
	return str_at(d, num(function(d, num(l, "function_id")), "name"));
}

static const char *label_str(const struct dprof *d, const struct node *s,
			     const char *key)
{
	for (int i = 0; i < count_kids(s, "label"); i++) {
		struct node *l = kid(s, "label", i);

		if (strcmp(str_at(d, num(l, "key")), key) == 0) {
			assert_null(kid(l, "num", 0));
			return str_at(d, num(l, "str"));
		}
	}
	return NULL;
}

static long long label_num(const struct dprof *d, const struct node *s,
			   const char *key)
{
	for (int i = 0; i < count_kids(s, "label"); i++) {
		struct node *l = kid(s, "label", i);

		if (strcmp(str_at(d, num(l, "key")), key) == 0)
			return num(l, "num");
	}
	fail_msg("no label %s", key);
	return -1;
}

/* one location per expected entry; NULL-separated names are its lines */
struct exp_loc {
	const char *names[4];
	int lines[4];
};

static void check_sample_locations(const struct dprof *d, const struct node *s,
				   const struct exp_loc *exp, int n)
{
	assert_int_equal(count_kids(s, "location_id"), n);
	for (int i = 0; i < n; i++) {
		struct node *loc = location(d, strtoll(kid(s, "location_id", i)->value, NULL, 10));
		int k = 0;

		for (; k < 4 && exp[i].names[k]; k++) {
			assert_string_equal(line_name(d, loc, k), exp[i].names[k]);
			assert_int_equal(num(kid(loc, "line", k), "line"), exp[i].lines[k]);
		}
		assert_int_equal(count_kids(loc, "line"), k);
	}
}

#define CALL_HELPER "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)"

static void test_fixture_decodes(void **state)
{
	struct profile *p = fx_profile();
	struct dprof d;
	const struct node *st, *s;
	long long total = 0;

	(void)state;
	if (!have_tools()) {
		profile__free(p);
		if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
			fail_msg("protoc missing: apt-get install protobuf-compiler");
		skip();
	}
	assert_non_null(p);
	decode(p, &d);

	/* pprof's rules */
	assert_true(d.nstrs > 1);
	assert_string_equal(d.strs[0], "");
	assert_int_equal(count_kids(&d.root, "sample_type"), 2);
	st = kid(&d.root, "sample_type", 0);
	assert_string_equal(str_at(&d, num(st, "type")), "samples");
	assert_string_equal(str_at(&d, num(st, "unit")), "count");
	st = kid(&d.root, "sample_type", 1);
	assert_string_equal(str_at(&d, num(st, "type")), "cpu");
	assert_string_equal(str_at(&d, num(st, "unit")), "nanoseconds");
	st = kid(&d.root, "period_type", 0);
	assert_non_null(st);
	assert_string_equal(str_at(&d, num(st, "type")), "cpu");
	assert_string_equal(str_at(&d, num(st, "unit")), "nanoseconds");
	assert_int_equal(num(&d.root, "period"), 1000000000 / 99);
	assert_int_equal(num(&d.root, "duration_nanos"), 10000000000ll);
	assert_string_equal(str_at(&d, num(&d.root, "default_sample_type")), "cpu");
	for (int i = 1; i < d.nloc; i++) {
		long long m = num(d.loc[i], "mapping_id");

		assert_true(m >= 0 && m < d.nmap);
		assert_true(count_kids(d.loc[i], "line") >= 1);
		for (int k = 0; k < count_kids(d.loc[i], "line"); k++)
			function(&d, num(kid(d.loc[i], "line", k), "function_id"));
	}

	/* one sample per stack, one value per sample type */
	assert_int_equal(count_kids(&d.root, "sample"), FX_NTRACES);
	for (size_t i = 0; i < FX_NTRACES; i++) {
		s = kid(&d.root, "sample", i);
		assert_int_equal(count_kids(s, "value"), 2);
		assert_int_equal(strtoll(kid(s, "value", 0)->value, NULL, 10),
				 fx_traces[i].count);
		assert_int_equal(strtoll(kid(s, "value", 1)->value, NULL, 10),
				 fx_traces[i].count * (1000000000 / 99));
		assert_int_equal(label_num(&d, s, "tid"), fx_traces[i].t.tid);
		assert_int_equal(label_num(&d, s, "pid"), fx_traces[i].t.pid);
		assert_string_equal(label_str(&d, s, "comm"), fx_traces[i].t.comm);
		assert_string_equal(label_str(&d, s, "kind"),
				    trace_kind__name(fx_traces[i].t.kind));
		total += fx_traces[i].count;
	}
	assert_int_equal(total, 72);

	/* the Java thread: HashMap.hash inlined into HashMap.put is ONE
	 * location, callee line first */
	{
		static const struct exp_loc exp[] = {
			{ { "clear_page_erms" } }, { { "__handle_mm_fault" } },
			{ { "handle_mm_fault" } }, { { "do_user_addr_fault" } },
			{ { "exc_page_fault" } }, { { "asm_exc_page_fault" } },
			{ { "java.util.HashMap.hash", "java.util.HashMap.put" }, { 338, 610 } },
			{ { "Demo$Worker.compute" }, { 57 } },
			{ { "Demo.main" }, { 12 } },
			{ { CALL_HELPER } }, { { "jni_CallStaticVoidMethod" } },
			{ { "JavaMain" } }, { { "start_thread" } }, { { "__clone3" } },
		};
		struct node *loc, *fn, *fn2;

		s = kid(&d.root, "sample", 0);
		check_sample_locations(&d, s, exp, NELEM(exp));
		assert_string_equal(label_str(&d, s, "thread"), "main");
		assert_null(label_str(&d, s, "error"));
		loc = location(&d, strtoll(kid(s, "location_id", 6)->value, NULL, 10));
		fn = function(&d, num(kid(loc, "line", 0), "function_id"));
		assert_string_equal(str_at(&d, num(fn, "system_name")),
				    "java.util.HashMap.hash(Ljava/lang/Object;)I");
		assert_string_equal(str_at(&d, num(fn, "filename")), "HashMap.java");
		fn2 = function(&d, num(kid(loc, "line", 1), "function_id"));
		assert_string_equal(str_at(&d, num(fn2, "filename")), "HashMap.java");
		assert_ptr_not_equal(fn, fn2);
		/* kernel frames sit in the kernel mapping */
		loc = location(&d, strtoll(kid(s, "location_id", 0)->value, NULL, 10));
		assert_string_equal(str_at(&d, num(d.map[num(loc, "mapping_id")], "filename")),
				    "[kernel.kallsyms]");
		assert_int_equal(num(loc, "address"), (long long)0xffffffff81c3a2b0ull);
		/* libjvm frames: module-relative address, libjvm mapping */
		loc = location(&d, strtoll(kid(s, "location_id", 9)->value, NULL, 10));
		assert_int_equal(num(loc, "address"), 0x85e0a4);
		assert_string_equal(str_at(&d, num(d.map[num(loc, "mapping_id")], "filename")),
				    JVM_SO);
		assert_int_equal(num(d.map[num(loc, "mapping_id")], "has_functions"), 1);
	}

	/* the same stack on another thread reuses every location */
	{
		const struct node *a = kid(&d.root, "sample", 0);
		const struct node *b = kid(&d.root, "sample", 5);

		assert_int_equal(count_kids(a, "location_id"), count_kids(b, "location_id"));
		for (int i = 0; i < count_kids(a, "location_id"); i++)
			assert_string_equal(kid(a, "location_id", i)->value,
					    kid(b, "location_id", i)->value);
		assert_int_equal(label_num(&d, b, "tid"), 4253);
	}

	/* JNI: a native method frame, an unsymbolized native frame whose
	 * mapping then has no has_functions */
	{
		static const struct exp_loc exp[] = {
			{ { "__x64_sys_getpid" } }, { { "do_syscall_64" } },
			{ { "entry_SYSCALL_64_after_hwframe" } }, { { "getpid" } },
			{ { "hn_leaf" } }, { { "libhashnative.so+0x11a0" } },
			{ { "Demo.nativeHash" }, { 0 } },
			{ { "Demo$Worker.run" }, { 70 } },
			{ { "java.lang.Thread.run" }, { 833 } },
			{ { CALL_HELPER } }, { { "thread_native_entry(Thread*)" } },
			{ { "start_thread" } }, { { "__clone3" } },
		};
		struct node *loc;

		s = kid(&d.root, "sample", 1);
		check_sample_locations(&d, s, exp, NELEM(exp));
		assert_string_equal(label_str(&d, s, "thread"), "worker-1");
		loc = location(&d, strtoll(kid(s, "location_id", 4)->value, NULL, 10));
		assert_int_equal(num(loc, "address"), 0x1139);
		assert_string_equal(str_at(&d, num(d.map[num(loc, "mapping_id")], "filename")),
				    HN_SO);
		assert_int_equal(num(d.map[num(loc, "mapping_id")], "has_functions"), 0);
		assert_true(num(d.map[num(loc, "mapping_id")], "memory_limit") > 0x11a0);
	}

	/* the JVM thread and the failed walk */
	s = kid(&d.root, "sample", 2);
	assert_string_equal(label_str(&d, s, "thread"), "C2 CompilerThread0");
	assert_string_equal(line_name(&d, location(&d, strtoll(kid(s, "location_id", 0)->value,
		NULL, 10)), 0), "PhaseChaitin::Split(unsigned int, ResourceArea*)");
	s = kid(&d.root, "sample", 3);
	assert_string_equal(label_str(&d, s, "error"), "ASGST_UNKNOWN_JAVA_FRAME");
	assert_string_equal(line_name(&d, location(&d, strtoll(kid(s, "location_id", 1)->value,
		NULL, 10)), 0), "[unknown: no code blob for pc]");

	/* hostile names come through as valid UTF-8 */
	s = kid(&d.root, "sample", 6);
	assert_string_equal(label_str(&d, s, "comm"), "we;ird\n ");
	assert_string_equal(line_name(&d, location(&d, strtoll(kid(s, "location_id", 4)->value,
		NULL, 10)), 0), "bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd\xef\xbf\xbd "
		"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(line_name(&d, location(&d, strtoll(kid(s, "location_id", 5)->value,
		NULL, 10)), 0), "Gr\xc3\xb6\xc3\x9f" "e::\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80");
	/* the inlined lambda and its caller: one location, two lines */
	{
		struct node *loc = location(&d, strtoll(kid(s, "location_id", 8)->value, NULL, 10));

		assert_int_equal(count_kids(loc, "line"), 2);
		assert_string_equal(line_name(&d, loc, 0), "pkg.Outer$Inner.lambda$run$0");
		assert_string_equal(line_name(&d, loc, 1), "pkg.Outer$Inner.run");
		assert_int_equal(count_kids(s, "location_id"), 10);
	}
	dprof_free(&d);
	profile__free(p);
}

/*
 * Every frame of a Java stack comes back from the pprof, in order, with
 * its line: the sample's locations, each one's lines callee first.
 */
static void check_java_frames(const struct dprof *d, const struct node *s,
			      const struct frame *fr, uint32_t n)
{
	uint32_t k = 0;
	char want[512];

	for (int i = 0; i < count_kids(s, "location_id"); i++) {
		struct node *loc = location(d, strtoll(kid(s, "location_id", i)->value,
						       NULL, 10));

		/* no stable code address for a Java frame: none, no mapping */
		assert_int_equal(num(loc, "address"), 0);
		assert_int_equal(num(loc, "mapping_id"), 0);
		for (int l = 0; l < count_kids(loc, "line"); l++, k++) {
			assert_true(k < n);
			snprintf(want, sizeof(want), "%s.%s", fr[k].klass, fr[k].method);
			assert_string_equal(line_name(d, loc, l), want);
			assert_int_equal(num(kid(loc, "line", l), "line"), fr[k].line);
		}
	}
	assert_int_equal(k, n);
}

/*
 * The same compiled chain with different runs inlined: distinct chains get
 * distinct Locations, equal ones share theirs.
 */
static void test_inline_chains(void **state)
{
	struct profile *p = fx_inline_profile();
	struct dprof d;

	(void)state;
	assert_non_null(p);
	if (!have_tools()) {
		profile__free(p);
		skip();
	}
	decode(p, &d);
	assert_int_equal(count_kids(&d.root, "sample"), FX_INL_NTRACES);
	for (size_t i = 0; i < FX_INL_NTRACES; i++) {
		const struct node *s = kid(&d.root, "sample", i);

		assert_int_equal(strtoll(kid(s, "value", 0)->value, NULL, 10),
				 fx_inl_traces[i].count);
		check_java_frames(&d, s, fx_inl_traces[i].t.frames,
				  fx_inl_traces[i].t.nframes);
	}
	/* split: [leaf c03] [c02 c01] run; all: [leaf c03 c02 c01] run;
	 * line: [leaf:24 c03] [c02 c01] run; none: 5 one-line locations */
	assert_int_equal(count_kids(kid(&d.root, "sample", 0), "location_id"), 3);
	assert_int_equal(count_kids(kid(&d.root, "sample", 1), "location_id"), 2);
	assert_int_equal(count_kids(kid(&d.root, "sample", 2), "location_id"), 3);
	assert_int_equal(count_kids(kid(&d.root, "sample", 3), "location_id"), 5);
	/* [c02 c01] and run are shared by split and line */
	assert_string_equal(kid(kid(&d.root, "sample", 0), "location_id", 1)->value,
			    kid(kid(&d.root, "sample", 2), "location_id", 1)->value);
	assert_string_equal(kid(kid(&d.root, "sample", 0), "location_id", 2)->value,
			    kid(kid(&d.root, "sample", 1), "location_id", 1)->value);
	/* 3 + 1 + 1 + 4 distinct Java locations (run and c01:92 shared) */
	assert_int_equal(d.nloc - 1, 2 + 1 + 1 + 1 + 4);
	dprof_free(&d);
	profile__free(p);
}

/*
 * A run of inlined frames as deep as a trace can be: no frame is left out
 * and two runs that differ only in their last (outermost) frame stay two
 * Locations, however long the chain.
 */
static void test_deep_inline(void **state)
{
	enum { N = TRACE_MAX_FRAMES };
	static char names[N][16];
	struct frame *fr = calloc(2 * N, sizeof(*fr));
	struct profile *p = profile__new();
	struct dprof d;

	(void)state;
	assert_non_null(fr);
	assert_non_null(p);
	if (!have_tools()) {
		free(fr);
		profile__free(p);
		skip();
	}
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "m%04d", i);
		fr[i] = (struct frame)JF(i == N - 1 ? FRAME_JAVA : FRAME_JAVA_INLINED,
					 "p.Deep", names[i], "()V", "Deep.java",
					 1, 10000 + i, 4);
	}
	memcpy(fr + N, fr, N * sizeof(*fr));
	fr[2 * N - 1].line = 99999;	/* only the outermost line differs */
	{
		struct trace a = { .pid = 1, .tid = 1, .comm = "java", .thread = "deep",
				   .kind = TRACE_KIND_JAVA, .nframes = N, .frames = fr };
		struct trace b = a;

		b.frames = fr + N;
		assert_int_equal(profile__add(p, &a, 1, 0), 0);
		assert_int_equal(profile__add(p, &b, 2, 0), 0);
	}
	decode(p, &d);
	assert_int_equal(count_kids(&d.root, "sample"), 2);
	check_java_frames(&d, kid(&d.root, "sample", 0), fr, N);
	check_java_frames(&d, kid(&d.root, "sample", 1), fr + N, N);
	assert_string_not_equal(kid(kid(&d.root, "sample", 0), "location_id", 0)->value,
				kid(kid(&d.root, "sample", 1), "location_id", 0)->value);
	dprof_free(&d);
	profile__free(p);
	free(fr);
}

/*
 * Native functions inlined at one pc (from DWARF) and the frame they are
 * inlined into: ONE Location in the module's mapping at the file offset,
 * its Lines callee first with their lines, Functions with the source
 * file; a native frame without DWARF stays a one-line Location.
 */
static void test_native_inline(void **state)
{
	struct frame fr[] = {
		NF(0x55550000172bull, 0x172b, "Step<1>::run", HN_EXE),
		NF(0x55550000172bull, 0x172b, "mix", HN_EXE),
		NF(0x55550000172bull, 0x172b, "chain_outer", HN_EXE),
		NF(0x7f3a4d6a1fd4ull, 0x89fd4, "start_thread", LIBC_SO),
	};
	static const char *const names[] = { "Step<1>::run", "mix",
					     "chain_outer" };
	static const int lines[] = { 21, 36, 43 };
	struct profile *p = profile__new();
	struct trace t = { .pid = 1, .tid = 1, .comm = "inl",
			   .thread = "inl", .nframes = NELEM(fr), .frames = fr };
	const struct node *s, *loc;
	struct dprof d;

	(void)state;
	assert_non_null(p);
	if (!have_tools()) {
		profile__free(p);
		skip();
	}
	fr[0].flags = fr[1].flags = FRAME_F_INLINED;
	for (int i = 0; i < 3; i++) {
		fr[i].source = "/src/inl.cpp";
		fr[i].line = lines[i];
	}
	assert_int_equal(profile__add(p, &t, 4, 0), 0);
	decode(p, &d);
	s = kid(&d.root, "sample", 0);
	assert_int_equal(count_kids(s, "location_id"), 2);
	loc = location(&d, strtoll(kid(s, "location_id", 0)->value, NULL, 10));
	assert_int_equal(num(loc, "address"), 0x172b);
	assert_string_equal(str_at(&d, num(d.map[num(loc, "mapping_id")],
					   "filename")), HN_EXE);
	assert_int_equal(count_kids(loc, "line"), 3);
	for (int i = 0; i < 3; i++) {
		const struct node *l = kid(loc, "line", i);

		assert_string_equal(line_name(&d, loc, i), names[i]);
		assert_int_equal(num(l, "line"), lines[i]);
		assert_string_equal(str_at(&d, num(function(&d,
				num(l, "function_id")), "filename")),
				    "/src/inl.cpp");
	}
	loc = location(&d, strtoll(kid(s, "location_id", 1)->value, NULL, 10));
	assert_int_equal(count_kids(loc, "line"), 1);
	assert_string_equal(line_name(&d, loc, 0), "start_thread");
	dprof_free(&d);
	profile__free(p);
}

static void test_empty_profile(void **state)
{
	struct profile *p = profile__new();
	struct dprof d;

	(void)state;
	assert_non_null(p);
	if (!have_tools()) {
		profile__free(p);
		skip();
	}
	decode(p, &d);
	assert_string_equal(d.strs[0], "");
	assert_int_equal(count_kids(&d.root, "sample"), 0);
	assert_int_equal(count_kids(&d.root, "sample_type"), 2);
	assert_int_equal(num(&d.root, "period"), 0);	/* no frequency known */
	dprof_free(&d);
	profile__free(p);
}

static void test_write_error(void **state)
{
	struct profile *p = fx_profile();
	FILE *full = fopen("/dev/full", "w");

	(void)state;
	assert_non_null(p);
	if (!full) {
		profile__free(p);
		skip();
	}
	assert_int_equal(write_pprof(p, full), -ENOSPC);
	fclose(full);
	profile__free(p);
}

/* the sample types' names, "type/unit" joined by ' ' */
static void sample_types(const struct dprof *d, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < count_kids(&d->root, "sample_type"); i++) {
		struct node *st = kid(&d->root, "sample_type", i);

		len += snprintf(buf + len, size - len, "%s%s/%s", i ? " " : "",
				str_at(d, num(st, "type")),
				str_at(d, num(st, "unit")));
	}
}

static long long value(const struct node *s, int i)
{
	return strtoll(kid(s, "value", i)->value, NULL, 10);
}

/*
 * cpu, alloc and lock in one profile: every event's value types, a
 * sample's values 0 in the others', the class a location of its own
 */
static void test_jvm_events(void **state)
{
	struct profile *p = fx_jvm_profile(ASGST_EVMASK_CPU |
					   ASGST_EVMASK_ALLOC |
					   ASGST_EVMASK_LOCK);
	struct dprof d;
	char types[512];

	(void)state;
	assert_non_null(p);
	if (!have_tools()) {
		profile__free(p);
		skip();
	}
	decode(p, &d);
	sample_types(&d, types, sizeof(types));
	assert_string_equal(types, "samples/count cpu/nanoseconds "
			    "alloc_objects/count alloc_space/bytes "
			    "contentions/count delay/nanoseconds");
	assert_string_equal(str_at(&d, num(&d.root, "default_sample_type")),
			    "cpu");
	assert_int_equal(count_kids(&d.root, "sample"),
			 FX_NTRACES + FX_NEVENTS);
	for (size_t i = 0; i < FX_NTRACES; i++) {
		const struct node *s = kid(&d.root, "sample", i);

		assert_int_equal(count_kids(s, "value"), 6);
		assert_int_equal(value(s, 0), fx_traces[i].count);
		for (int k = 2; k < 6; k++)
			assert_int_equal(value(s, k), 0);
	}
	for (size_t i = 0; i < FX_NEVENTS; i++) {
		const struct node *s = kid(&d.root, "sample", FX_NTRACES + i);
		const struct fx_event *e = &fx_events[i];
		bool alloc = e->t.event == TRACE_EV_ALLOC;
		struct node *loc;
		long long want[6] = { 0 };

		if (alloc) {
			want[2] = e->v.alloc_objects;
			want[3] = e->v.alloc_bytes;
		} else {
			want[4] = e->v.count;
			want[5] = e->v.weight_ns;
		}
		assert_int_equal(count_kids(s, "value"), 6);
		for (int k = 0; k < 6; k++)
			assert_int_equal(value(s, k), want[k]);
		assert_string_equal(label_str(&d, s, "event"),
				    alloc ? "alloc" : "lock");
		/* the leaf: a location named after the class, no address */
		loc = location(&d, strtoll(kid(s, "location_id", 0)->value,
					   NULL, 10));
		assert_int_equal(count_kids(loc, "line"), 1);
		assert_string_equal(line_name(&d, loc, 0), e->t.ev_class);
		assert_int_equal(num(loc, "address"), 0);
		assert_int_equal(num(loc, "mapping_id"), 0);
		assert_int_equal(count_kids(s, "location_id"), e->t.nframes);
	}
	dprof_free(&d);
	profile__free(p);

	/* alloc alone: its types only, alloc_space the default, the
	 * sampling interval the period */
	p = fx_jvm_profile(ASGST_EVMASK_ALLOC);
	assert_non_null(p);
	decode(p, &d);
	sample_types(&d, types, sizeof(types));
	assert_string_equal(types, "alloc_objects/count alloc_space/bytes");
	assert_string_equal(str_at(&d, num(&d.root, "default_sample_type")),
			    "alloc_space");
	assert_string_equal(str_at(&d, num(kid(&d.root, "period_type", 0),
					   "type")), "space");
	assert_int_equal(num(&d.root, "period"), 524288);
	assert_int_equal(count_kids(&d.root, "sample"), 2);
	dprof_free(&d);
	profile__free(p);

	/* lock alone */
	p = fx_jvm_profile(ASGST_EVMASK_LOCK);
	assert_non_null(p);
	decode(p, &d);
	sample_types(&d, types, sizeof(types));
	assert_string_equal(types, "contentions/count delay/nanoseconds");
	assert_string_equal(str_at(&d, num(&d.root, "default_sample_type")),
			    "delay");
	dprof_free(&d);
	profile__free(p);
}

/*
 * The Go tools read the value types by their names: go tool pprof's -top
 * of alloc_space and delay (skipped without go)
 */
static void test_jvm_events_gotool(void **state)
{
	struct profile *p = fx_jvm_profile(ASGST_EVMASK_CPU |
					   ASGST_EVMASK_ALLOC |
					   ASGST_EVMASK_LOCK);
	char dir[] = "/tmp/test_write_pprof.XXXXXX", path[256], cmd[1024];
	char *out;
	FILE *f;

	(void)state;
	assert_non_null(p);
	if (system("go tool pprof -h >/dev/null 2>&1") != 0) {
		profile__free(p);
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.pb.gz", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(write_pprof(p, f), 0);
	fclose(f);
	/* pprof's cache and temporary files in the test's directory */
	snprintf(cmd, sizeof(cmd), "cd %s && export HOME=%s GOCACHE=%s/gc "
		 "PPROF_TMPDIR=%s && for i in alloc_space alloc_objects delay "
		 "contentions cpu; do go tool pprof -symbolize=none -top "
		 "-sample_index=$i out.pb.gz || exit 1; done > top.txt 2>&1",
		 dir, dir, dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/top.txt", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	out = fx_slurp(f, NULL);
	fclose(f);
	assert_non_null(out);
	/* 1.5 MiB of byte[] of 2.5 in all; 4 contentions, 7.5 ms */
	assert_non_null(strstr(out, "Type: alloc_space"));
	assert_non_null(strstr(out, "Total samples = 2.50MB"));
	assert_non_null(strstr(out, "1.50MB 60.00% 60.00%     1.50MB 60.00%  "
				    "byte[]"));
	assert_non_null(strstr(out, "Type: alloc_objects"));
	assert_non_null(strstr(out, "Total samples = 43882"));
	assert_non_null(strstr(out, "Type: delay"));
	assert_non_null(strstr(out, "7.50ms   100%   100%     7.50ms   100%  "
				    "java.lang.Object"));
	assert_non_null(strstr(out, "Type: contentions"));
	/* cpu: the fixture's 72 samples, none of the JVM events' */
	assert_non_null(strstr(out, "Type: cpu"));
	assert_non_null(strstr(out, "Total samples = 727.27ms"));
	free(out);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)system(cmd);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_decodes),
		cmocka_unit_test(test_inline_chains),
		cmocka_unit_test(test_deep_inline),
		cmocka_unit_test(test_native_inline),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_jvm_events),
		cmocka_unit_test(test_jvm_events_gotool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
