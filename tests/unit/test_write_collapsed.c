// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Collapsed writer: the output is parsed back the way flamegraph.pl reads
 * it (last blank-separated field = count, the rest split on ';') and every
 * stack, frame name and count is checked.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/types.h>
#include "sampler.h"
#include "profile/profile.h"
#include "trace.h"
#include "output/output.h"
#include "output/switch_name.h"
#include "output/writers.h"
#include "unit/writers_fixture.h"

#define MAXF 64

struct cline {
	char *frames[MAXF];
	int nframes;
	unsigned long long count;
};

/* parse the whole output; fails the test on any malformed line */
static int parse_collapsed(char *buf, struct cline *out, int max)
{
	int n = 0;
	char *save = NULL;

	for (char *line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), *end, *fs = NULL;
		struct cline *c = &out[n];

		assert_true(n < max);
		assert_non_null(sp);
		*sp = '\0';
		errno = 0;
		c->count = strtoull(sp + 1, &end, 10);
		assert_int_equal(errno, 0);
		assert_true(end != sp + 1 && *end == '\0');
		c->nframes = 0;
		/* strsep, not strtok: an empty frame must show up */
		for (char *fr = line; (fs = strsep(&fr, ";"));) {
			assert_true(c->nframes < MAXF);
			assert_true(strlen(fs) > 0);
			assert_true(fs[strlen(fs) - 1] != ' ');
			c->frames[c->nframes++] = fs;
		}
		n++;
	}
	return n;
}

static const char *exp_java_main[] = {
	"java", "__clone3", "start_thread", "JavaMain", "jni_CallStaticVoidMethod",
	"JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)",
	"Demo.main", "Demo$Worker.compute_[j]", "java/util/HashMap.put_[j]",
	"java/util/HashMap.hash_[i]", "asm_exc_page_fault_[k]", "exc_page_fault_[k]",
	"do_user_addr_fault_[k]", "handle_mm_fault_[k]", "__handle_mm_fault_[k]",
	"clear_page_erms_[k]", NULL };
static const char *exp_jni[] = {
	"java", "__clone3", "start_thread", "thread_native_entry(Thread*)",
	"JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)",
	"java/lang/Thread.run", "Demo$Worker.run_[j]", "Demo.nativeHash",
	"libhashnative.so+0x11a0", "hn_leaf", "getpid",
	"entry_SYSCALL_64_after_hwframe_[k]", "do_syscall_64_[k]",
	"__x64_sys_getpid_[k]", NULL };
static const char *exp_c2[] = {
	"C2 CompilerThre", "__clone3", "start_thread", "thread_native_entry(Thread*)",
	"Thread::call_run()", "JavaThread::thread_main_inner()",
	"CompileBroker::invoke_compiler_on_method(CompileTask*)",
	"C2Compiler::compile_method(ciEnv*, ciMethod*, int, bool, DirectiveSet*)",
	"Compile::Compile(ciEnv*, ciMethod*, int, Options, DirectiveSet*)",
	"Compile::Code_Gen()", "PhaseChaitin::Register_Allocate()",
	"PhaseChaitin::Split(unsigned int, ResourceArea*)", NULL };
static const char *exp_error[] = {
	"java", "[unknown: no code blob for pc]", "java/lang/String.hashCode_[j]", NULL };
static const char *exp_native[] = {
	"hn_demo", "_start", "__libc_start_main_impl", "__libc_start_call_main",
	"main", "hn_top", "hn_mid", "hn_leaf", "__GI___fstat64",
	"entry_SYSCALL_64_after_hwframe_[k]", "do_syscall_64_[k]",
	"__do_sys_newfstat_[k]", "cp_new_stat_[k]", "_copy_to_user_[k]", NULL };
static const char *exp_weird[] = {
	"we:ird?", "[unknown]", "pkg/Outer$Inner.run_[j]",
	"pkg/Outer$Inner.lambda$run$0_[i]", "0x7f0000001000",
	"q\"uote\\back?tab??",
	"Gr\xc3\xb6\xc3\x9f" "e::\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
	"bad\xff\xfe utf8 \xc0\xaf \xed\xa0\x80", "trail", "line?break?",
	"operator:semi", "0xffffffffc0a01234_[k]", NULL };

static const struct {
	const char **frames;
	unsigned long long count;
} expected[] = {
	{ exp_java_main, 17 + 4 },	/* two threads, one line */
	{ exp_jni, 5 },
	{ exp_c2, 3 },
	{ exp_error, 2 },
	{ exp_native, 40 },
	{ exp_weird, 1 },
};

static char *write_to_buf(const struct profile *p)
{
	FILE *f = tmpfile();
	char *buf;

	assert_non_null(f);
	assert_int_equal(write_collapsed(p, f), 0);
	buf = fx_slurp(f, NULL);
	assert_non_null(buf);
	fclose(f);
	return buf;
}

static void test_fixture_lines(void **state)
{
	struct profile *p = fx_profile();
	struct cline lines[16];
	unsigned long long total = 0;
	char *buf;
	int n;

	(void)state;
	assert_non_null(p);
	buf = write_to_buf(p);
	n = parse_collapsed(buf, lines, 16);
	assert_int_equal(n, NELEM(expected));
	for (int i = 0; i < n; i++) {
		int k = 0;

		for (; expected[i].frames[k]; k++) {
			assert_true(k < lines[i].nframes);
			assert_string_equal(lines[i].frames[k], expected[i].frames[k]);
		}
		assert_int_equal(lines[i].nframes, k);
		assert_int_equal(lines[i].count, expected[i].count);
		total += lines[i].count;
	}
	assert_int_equal(total, profile__meta_const(p)->samples);
	free(buf);
	profile__free(p);
}

/* stacks that differ only in what the format does not show merge */
static void test_merges_identical_lines(void **state)
{
	struct profile *p = profile__new();
	struct frame fr[NELEM(fx_native_frames)];
	struct trace t = fx_traces[4].t;
	struct cline lines[8];
	char *buf;

	(void)state;
	assert_non_null(p);
	memcpy(fr, fx_native_frames, sizeof(fr));
	t.frames = fr;
	for (int i = 0; i < 50; i++) {
		t.tid = 9001 + i % 5;		/* not shown */
		fr[6].pc = 0x55d0c3a01149ull + i % 7;	/* not shown */
		assert_int_equal(profile__add(p, &t, 1, 0), 0);
	}
	fr[7].symbol = "hn_mid2";		/* shown: a new line */
	assert_int_equal(profile__add(p, &t, 3, 0), 0);
	assert_int_equal(profile__nstacks(p), 36);
	buf = write_to_buf(p);
	assert_int_equal(parse_collapsed(buf, lines, 8), 2);
	assert_int_equal(lines[0].count, 50);
	assert_string_equal(lines[0].frames[6], "hn_mid");
	assert_int_equal(lines[1].count, 3);
	assert_string_equal(lines[1].frames[6], "hn_mid2");
	free(buf);
	profile__free(p);
}

/*
 * With off-CPU time in the profile, lines are weighed in microseconds: an
 * off-CPU stack by its time (under an "[off-cpu]" root frame), a cpu
 * sample as 10^6 / frequency us.
 */
static void test_offcpu_weights(void **state)
{
	struct profile *p = profile__new();
	struct frame fr[NELEM(fx_native_frames)];
	struct trace t = fx_traces[4].t;
	struct cline lines[8];
	char *buf;

	(void)state;
	assert_non_null(p);
	memcpy(fr, fx_native_frames, sizeof(fr));
	t.frames = fr;
	profile__meta(p)->frequency_hz = 100;
	profile__meta(p)->events = ASGST_EVMASK_CPU | ASGST_EVMASK_OFFCPU;
	assert_int_equal(profile__add(p, &t, 3, 0), 0);
	t.event = TRACE_EV_OFFCPU;
	assert_int_equal(profile__add(p, &t, 2, 5000000), 0);
	assert_int_equal(profile__add(p, &t, 1, 2500999), 0);
	buf = write_to_buf(p);
	assert_int_equal(parse_collapsed(buf, lines, 8), 2);
	/* 3 samples at 100 Hz: 30 ms */
	assert_int_equal(lines[0].count, 30000);
	assert_string_not_equal(lines[0].frames[1], PROFILE_OFFCPU_FRAME);
	/* 7.500999 ms off the CPU, in whole us */
	assert_int_equal(lines[1].count, 7500);
	assert_string_equal(lines[1].frames[0], lines[0].frames[0]);
	assert_string_equal(lines[1].frames[1], PROFILE_OFFCPU_FRAME);
	/* the rest of the stack as the cpu line has it */
	assert_string_equal(lines[1].frames[7], lines[0].frames[6]);
	free(buf);
	profile__free(p);
}

/* a huge C++ name is cut, the line stays well formed */
static void test_long_name_and_empty(void **state)
{
	struct profile *p = profile__new();
	char *longsym = malloc(20001);
	struct frame fr[2] = {
		NF(0x401000, 0x1000, NULL, HN_EXE),
		NF(0x401100, 0x1100, "", HN_EXE),	/* empty symbol */
	};
	struct trace t = { .pid = 1, .tid = 1, .comm = "", .thread = "",
			   .nframes = 2, .frames = fr };
	struct cline lines[4];
	char *buf;

	(void)state;
	assert_non_null(p);
	assert_non_null(longsym);
	memset(longsym, 'a', 20000);
	longsym[20000] = '\0';
	fr[0].symbol = longsym;
	assert_int_equal(profile__add(p, &t, 7, 0), 0);
	buf = write_to_buf(p);
	assert_int_equal(parse_collapsed(buf, lines, 4), 1);
	assert_int_equal(lines[0].nframes, 3);
	assert_string_equal(lines[0].frames[0], "[unknown]");
	assert_string_equal(lines[0].frames[1], "hn_demo+0x1100");
	assert_int_equal(strlen(lines[0].frames[2]), 4096);
	assert_int_equal(lines[0].count, 7);
	free(buf);
	free(longsym);
	profile__free(p);
}

/*
 * Java <-> C crossings: the barrier and upcall frames carry the kind in
 * their names (" [jni]", " [ffm]", " [ffm critical]", " [upcall ...]");
 * the FFM barrier (a stub, no class) is named by its symbol; frames
 * without crossing flags keep their plain names.
 */
static void test_crossing_names(void **state)
{
	static const struct {
		uint8_t type;
		uint16_t flags;
		const char *sym, *cls, *meth, *want;
	} c[] = {
		{ FRAME_JAVA_NATIVE, FRAME_F_DOWNCALL_JNI, NULL, "JniChain",
		  "nativeChain", "JniChain.nativeChain [jni]" },
		{ FRAME_JAVA_NATIVE, FRAME_F_DOWNCALL_FFM, "nep_invoker_blob",
		  NULL, NULL, "nep_invoker_blob [ffm]" },
		{ FRAME_JAVA_NATIVE, FRAME_F_DOWNCALL_FFM | FRAME_F_DOWNCALL_CRIT,
		  "nep_invoker_blob", NULL, NULL,
		  "nep_invoker_blob [ffm critical]" },
		{ FRAME_NON_JAVA, FRAME_F_STUB | FRAME_F_UPCALL_JNI, "call_stub",
		  NULL, NULL, "call_stub [upcall jni]" },
		{ FRAME_NON_JAVA, FRAME_F_STUB | FRAME_F_UPCALL_FFM, "upcall_stub",
		  NULL, NULL, "upcall_stub [upcall ffm]" },
		{ FRAME_NON_JAVA, FRAME_F_STUB, "call_stub", NULL, NULL,
		  "call_stub" },
		{ FRAME_JAVA_NATIVE, 0, NULL, "java.lang.Object", "hashCode",
		  "java/lang/Object.hashCode" },
		{ FRAME_JAVA_NATIVE, FRAME_F_VTHREAD_ENTRY, NULL,
		  "jdk.internal.vm.Continuation", "enterSpecial",
		  "jdk/internal/vm/Continuation.enterSpecial" },
	};
	struct profile *p = profile__new();
	struct frame fr[NELEM(c)];
	struct trace t = { .pid = 1, .tid = 1, .comm = "java",
			   .thread = "t", .nframes = NELEM(c), .frames = fr };
	struct cline lines[4];
	char name[128], *buf;

	(void)state;
	assert_non_null(p);
	memset(fr, 0, sizeof(fr));
	for (size_t i = 0; i < NELEM(c); i++) {
		fr[i].type = c[i].type;
		fr[i].flags = c[i].flags;
		fr[i].comp_level = -1;
		fr[i].bci = fr[i].line = -1;
		fr[i].pc = 0x7f0000001000ull + i;
		fr[i].symbol = c[i].sym;
		fr[i].klass = c[i].cls;
		fr[i].method = c[i].meth;
		/* the same name with or without the format's suffixes */
		frame__display_name(&fr[i], name, sizeof(name), false);
		assert_string_equal(name, c[i].want);
		frame__display_name(&fr[i], name, sizeof(name), true);
		assert_string_equal(name, c[i].want);
	}
	assert_int_equal(profile__add(p, &t, 5, 0), 0);
	buf = write_to_buf(p);
	assert_int_equal(parse_collapsed(buf, lines, 4), 1);
	assert_int_equal(lines[0].nframes, (int)NELEM(c) + 1);
	for (size_t i = 0; i < NELEM(c); i++)
		assert_string_equal(lines[0].frames[NELEM(c) - i], c[i].want);
	assert_int_equal(lines[0].count, 5);
	free(buf);
	profile__free(p);
}

/*
 * Native functions inlined into a frame (from DWARF): frames of their own,
 * suffixed _[i] like inlined Java frames, before the frame they are
 * inlined into; without the suffix when the format asks for none.
 */
static void test_native_inlined(void **state)
{
	struct frame fr[] = {
		NF(0x55550000172bull, 0x172b, "Step<1>::run", HN_EXE),
		NF(0x55550000172bull, 0x172b, "mix", HN_EXE),
		NF(0x55550000172bull, 0x172b, "chain_outer", HN_EXE),
		NF(0x5555000010a0ull, 0x10a0, "main", HN_EXE),
	};
	struct profile *p = profile__new();
	struct trace t = { .pid = 1, .tid = 1, .comm = "inl",
			   .thread = "inl", .nframes = NELEM(fr), .frames = fr };
	struct cline lines[4];
	char name[128], *buf;

	(void)state;
	assert_non_null(p);
	fr[0].flags = fr[1].flags = FRAME_F_INLINED;
	fr[0].source = fr[1].source = fr[2].source = "/src/inl.cpp";
	fr[0].line = 21;
	fr[1].line = 36;
	fr[2].line = 43;
	frame__display_name(&fr[0], name, sizeof(name), true);
	assert_string_equal(name, "Step<1>::run_[i]");
	frame__display_name(&fr[0], name, sizeof(name), false);
	assert_string_equal(name, "Step<1>::run");
	frame__display_name(&fr[2], name, sizeof(name), true);
	assert_string_equal(name, "chain_outer");
	assert_int_equal(profile__add(p, &t, 3, 0), 0);
	buf = write_to_buf(p);
	assert_int_equal(parse_collapsed(buf, lines, 4), 1);
	assert_int_equal(lines[0].nframes, 5);
	assert_string_equal(lines[0].frames[0], "inl");
	assert_string_equal(lines[0].frames[1], "main");
	assert_string_equal(lines[0].frames[2], "chain_outer");
	assert_string_equal(lines[0].frames[3], "mix_[i]");
	assert_string_equal(lines[0].frames[4], "Step<1>::run_[i]");
	assert_int_equal(lines[0].count, 3);
	free(buf);
	profile__free(p);
}

static void test_empty_profile_and_write_error(void **state)
{
	struct profile *p = profile__new();
	FILE *f = tmpfile(), *full;
	char *buf;

	(void)state;
	assert_non_null(p);
	assert_non_null(f);
	assert_int_equal(write_collapsed(p, f), 0);
	buf = fx_slurp(f, NULL);
	assert_string_equal(buf, "");
	free(buf);
	fclose(f);
	profile__free(p);

	p = fx_profile();
	full = fopen("/dev/full", "w");
	if (!full) {
		profile__free(p);
		skip();
	}
	assert_int_equal(write_collapsed(p, full), -ENOSPC);
	fclose(full);
	profile__free(p);
}

/* format names and extensions (output_format.c) */
static void test_output_format(void **state)
{
	(void)state;
	assert_int_equal(output_format__from_name("collapsed"), OUT_COLLAPSED);
	assert_int_equal(output_format__from_name("folded"), OUT_COLLAPSED);
	assert_int_equal(output_format__from_name("JSON"), OUT_JSON);
	assert_int_equal(output_format__from_name("pprof"), OUT_PPROF);
	assert_int_equal(output_format__from_name("html"), OUT_HTML);
	assert_int_equal(output_format__from_name("raw"), OUT_RAW);
	assert_int_equal(output_format__from_name("top"), OUT_TOP);
	assert_int_equal(output_format__from_name("svg"), OUT_NONE);
	assert_int_equal(output_format__from_name(""), OUT_NONE);
	assert_int_equal(output_format__from_name(NULL), OUT_NONE);
	assert_int_equal(output_format__from_path("/tmp/a.collapsed"), OUT_COLLAPSED);
	assert_int_equal(output_format__from_path("out.folded"), OUT_COLLAPSED);
	assert_int_equal(output_format__from_path("out.txt"), OUT_COLLAPSED);
	assert_int_equal(output_format__from_path("dir.v2/out.json"), OUT_JSON);
	assert_int_equal(output_format__from_path("p.pb.gz"), OUT_PPROF);
	assert_int_equal(output_format__from_path("p.pprof"), OUT_PPROF);
	assert_int_equal(output_format__from_path("p.gz"), OUT_NONE);
	assert_int_equal(output_format__from_path("x.HTML"), OUT_HTML);
	assert_int_equal(output_format__from_path("rec.asgst"), OUT_RAW);
	assert_int_equal(output_format__from_path("noext"), OUT_NONE);
	assert_int_equal(output_format__from_path("dir/.json"), OUT_NONE);
	assert_int_equal(output_format__from_path(NULL), OUT_NONE);
	for (int f = OUT_COLLAPSED; f <= OUT_TOP; f++)
		assert_int_equal(output_format__from_name(output_format__name(f)), f);
	assert_string_equal(output_format__name(OUT_NONE), "none");
}

/* a whole file back; NULL when there is none */
static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;

	if (!f)
		return NULL;
	buf = fx_slurp(f, NULL);
	fclose(f);
	return buf;
}

/* the lines of the alloc family: class leaf _[a], weight in bytes */
static void check_alloc_lines(char *buf)
{
	struct cline lines[8];
	int n = parse_collapsed(buf, lines, 8);

	assert_int_equal(n, 2);
	for (int i = 0; i < n; i++) {
		const struct fx_event *e = &fx_events[i];
		struct cline *c = &lines[i];
		char leaf[64];

		snprintf(leaf, sizeof(leaf), "%s_[a]", e->t.ev_class);
		assert_int_equal(c->nframes, 4);
		assert_string_equal(c->frames[0], "java");
		assert_string_equal(c->frames[c->nframes - 1], leaf);
		assert_int_equal(c->count, e->v.alloc_bytes);
	}
	assert_string_equal(lines[0].frames[1], "Demo.main");
	assert_string_equal(lines[0].frames[2], "Demo$Worker.compute_[j]");
}

static void check_lock_lines(char *buf)
{
	struct cline lines[8];
	int n = parse_collapsed(buf, lines, 8);

	assert_int_equal(n, 1);
	assert_int_equal(lines[0].nframes, 4);
	assert_string_equal(lines[0].frames[3], "java.lang.Object_[l]");
	assert_int_equal(lines[0].count, FX_LOCK_NS);
}

/* one weight a file: time at the path, alloc and lock beside it */
static void test_jvm_event_siblings(void **state)
{
	struct profile *p = fx_jvm_profile(ASGST_EVMASK_CPU |
					   ASGST_EVMASK_ALLOC |
					   ASGST_EVMASK_LOCK);
	char dir[] = "/tmp/test_collapsed.XXXXXX", path[128], sib[128];
	char err[256], *buf;
	struct cline lines[16];
	struct output o;

	(void)state;
	assert_non_null(p);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.collapsed", dir);
	assert_int_equal(output__open(&o, path, OUT_COLLAPSED, err,
				      sizeof(err)), 0);
	assert_int_equal(output__write(&o, p, err, sizeof(err)), 0);
	buf = read_file(path);
	assert_non_null(buf);
	/* the cpu stacks alone, as without JVM events */
	assert_int_equal(parse_collapsed(buf, lines, 16), NELEM(expected));
	assert_null(strstr(buf, "_[a]"));
	free(buf);
	snprintf(sib, sizeof(sib), "%s/out.alloc.collapsed", dir);
	buf = read_file(sib);
	assert_non_null(buf);
	check_alloc_lines(buf);
	free(buf);
	assert_int_equal(unlink(sib), 0);
	snprintf(sib, sizeof(sib), "%s/out.lock.collapsed", dir);
	buf = read_file(sib);
	assert_non_null(buf);
	check_lock_lines(buf);
	free(buf);
	assert_int_equal(unlink(sib), 0);
	assert_int_equal(unlink(path), 0);
	profile__free(p);

	/* alloc alone: at the path, no sibling; no extension: FILE.lock */
	p = fx_jvm_profile(ASGST_EVMASK_ALLOC | ASGST_EVMASK_LOCK);
	assert_non_null(p);
	snprintf(path, sizeof(path), "%s/out", dir);
	assert_int_equal(output__open(&o, path, OUT_COLLAPSED, err,
				      sizeof(err)), 0);
	assert_int_equal(output__write(&o, p, err, sizeof(err)), 0);
	buf = read_file(path);
	assert_non_null(buf);
	check_alloc_lines(buf);
	free(buf);
	snprintf(sib, sizeof(sib), "%s/out.lock", dir);
	buf = read_file(sib);
	assert_non_null(buf);
	check_lock_lines(buf);
	free(buf);
	assert_int_equal(unlink(sib), 0);
	assert_int_equal(unlink(path), 0);
	profile__free(p);

	p = fx_jvm_profile(ASGST_EVMASK_ALLOC);
	assert_non_null(p);
	snprintf(path, sizeof(path), "%s/a.folded", dir);
	assert_int_equal(output__open(&o, path, OUT_COLLAPSED, err,
				      sizeof(err)), 0);
	assert_int_equal(output__write(&o, p, err, sizeof(err)), 0);
	buf = read_file(path);
	assert_non_null(buf);
	check_alloc_lines(buf);
	free(buf);
	assert_int_equal(unlink(path), 0);
	/* nothing else was written */
	assert_int_equal(rmdir(dir), 0);
	profile__free(p);
}

/* one stream (stdout): a block a family, each after its comment line */
static void test_jvm_event_stream(void **state)
{
	struct profile *p = fx_jvm_profile(ASGST_EVMASK_CPU |
					   ASGST_EVMASK_ALLOC |
					   ASGST_EVMASK_LOCK);
	char *buf, *alloc, *lock;

	(void)state;
	assert_non_null(p);
	buf = write_to_buf(p);
	assert_true(!strncmp(buf, "# event: time\n", 14));
	alloc = strstr(buf, "\n# event: alloc\n");
	lock = strstr(buf, "\n# event: lock\n");
	assert_non_null(alloc);
	assert_non_null(lock);
	assert_true(alloc < lock);
	*alloc = '\0';
	*lock = '\0';
	check_lock_lines(lock + 15);
	check_alloc_lines(alloc + 16);
	free(buf);
	profile__free(p);
}

/* --switch-max-files: an old period's siblings go with it */
static void test_rotation_takes_siblings(void **state)
{
	char dir[] = "/tmp/test_collapsed.XXXXXX", a[128], b[128], sib[128];
	struct switch_files kept = { .max = 1, .siblings = true };
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/p1.collapsed", dir);
	snprintf(b, sizeof(b), "%s/p2.collapsed", dir);
	snprintf(sib, sizeof(sib), "%s/p1.alloc.collapsed", dir);
	assert_non_null(f = fopen(a, "w"));
	fclose(f);
	assert_non_null(f = fopen(sib, "w"));
	fclose(f);
	assert_non_null(f = fopen(b, "w"));
	fclose(f);
	assert_int_equal(switch_files__add(&kept, a), 0);
	/* p1 has no lock sibling: nothing to remove there */
	assert_int_equal(switch_files__add(&kept, b), 0);
	assert_int_not_equal(access(a, F_OK), 0);
	assert_int_not_equal(access(sib, F_OK), 0);
	assert_int_equal(access(b, F_OK), 0);
	switch_files__free(&kept);
	assert_int_equal(unlink(b), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_lines),
		cmocka_unit_test(test_merges_identical_lines),
		cmocka_unit_test(test_offcpu_weights),
		cmocka_unit_test(test_long_name_and_empty),
		cmocka_unit_test(test_crossing_names),
		cmocka_unit_test(test_native_inlined),
		cmocka_unit_test(test_empty_profile_and_write_error),
		cmocka_unit_test(test_output_format),
		cmocka_unit_test(test_jvm_event_siblings),
		cmocka_unit_test(test_jvm_event_stream),
		cmocka_unit_test(test_rotation_takes_siblings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
