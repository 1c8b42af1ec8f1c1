/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Realistic decoded stacks shared by the profile and writer tests: a Java
 * thread in C2 code hitting a page fault, a JNI call making a syscall, a C2
 * compiler thread in libjvm, a walk that stopped with an error, a plain
 * native process, and one stack of hostile names (separators, control
 * characters, invalid UTF-8) for the escaping rules.
 */
#ifndef WRITERS_FIXTURE_H
#define WRITERS_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "trace.h"

#define JVM_SO	"/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"
#define JLI_SO	"/usr/lib/jvm/java-17-openjdk-amd64/lib/libjli.so"
#define LIBC_SO	"/usr/lib/x86_64-linux-gnu/libc.so.6"
#define HN_SO	"/tmp/asgst-wl/libhashnative.so"
#define HN_EXE	"/work/build/workloads/hn_demo"

#define KF(pc_, sym) { .type = FRAME_KERNEL, .comp_level = -1, .bci = -1, \
	.line = -1, .pc = (pc_), .symbol = (sym) }
#define NF(pc_, off, sym, mod) { .type = FRAME_NON_JAVA, .comp_level = -1, \
	.bci = -1, .line = -1, .pc = (pc_), .offset = (off), .symbol = (sym), \
	.module = (mod) }
#define JVMF(pc_, off, sym) { .type = FRAME_NON_JAVA, .comp_level = -1, \
	.flags = FRAME_F_JVM_CPP, .bci = -1, .line = -1, .pc = (pc_), \
	.offset = (off), .symbol = (sym), .module = JVM_SO }
#define JF(t, cls, meth, sig, src, bci_, line_, lvl) { .type = (t), \
	.comp_level = (lvl), .bci = (bci_), .line = (line_), .klass = (cls), \
	.method = (meth), .signature = (sig), .source = (src) }
#define UF(pc_, why) { .type = FRAME_UNKNOWN, .comp_level = -1, .bci = -1, \
	.line = -1, .pc = (pc_), .reason = (why) }
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static struct frame fx_java_main_frames[] = {
	KF(0xffffffff81c3a2b0ull, "clear_page_erms"),
	KF(0xffffffff8131f6d5ull, "__handle_mm_fault"),
	KF(0xffffffff8131fa3eull, "handle_mm_fault"),
	KF(0xffffffff810b5d9cull, "do_user_addr_fault"),
	KF(0xffffffff81c2f1d2ull, "exc_page_fault"),
	KF(0xffffffff81e00b22ull, "asm_exc_page_fault"),
	JF(FRAME_JAVA_INLINED, "java.util.HashMap", "hash", "(Ljava/lang/Object;)I",
	   "HashMap.java", 9, 338, 4),
	JF(FRAME_JAVA, "java.util.HashMap", "put",
	   "(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;",
	   "HashMap.java", 3, 610, 4),
	JF(FRAME_JAVA, "Demo$Worker", "compute", "(I)J", "Demo.java", 22, 57, 3),
	JF(FRAME_JAVA, "Demo", "main", "([Ljava/lang/String;)V", "Demo.java", 5, 12, 0),
	JVMF(0x7f3a4c85e0a4ull, 0x85e0a4,
	     "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)"),
	JVMF(0x7f3a4c8f11e2ull, 0x8f11e2, "jni_CallStaticVoidMethod"),
	NF(0x7f3a4d4a5b3full, 0x5b3f, "JavaMain", JLI_SO),
	NF(0x7f3a4d6a1fd4ull, 0x89fd4, "start_thread", LIBC_SO),
	NF(0x7f3a4d72166cull, 0x10966c, "__clone3", LIBC_SO),
};

static struct frame fx_jni_frames[] = {
	KF(0xffffffff810d2a10ull, "__x64_sys_getpid"),
	KF(0xffffffff81c2b5e8ull, "do_syscall_64"),
	KF(0xffffffff81e00124ull, "entry_SYSCALL_64_after_hwframe"),
	NF(0x7f3a4d6f2a9bull, 0xe4a9b, "getpid", LIBC_SO),
	NF(0x7f3a2c001139ull, 0x1139, "hn_leaf", HN_SO),
	NF(0x7f3a2c0011a0ull, 0x11a0, NULL, HN_SO),
	JF(FRAME_JAVA_NATIVE, "Demo", "nativeHash", "(J)J", "Demo.java", -1, -1, -1),
	JF(FRAME_JAVA, "Demo$Worker", "run", "()V", "Demo.java", 8, 70, 1),
	JF(FRAME_JAVA, "java.lang.Thread", "run", "()V", "Thread.java", 11, 833, 0),
	JVMF(0x7f3a4c85e0a4ull, 0x85e0a4,
	     "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)"),
	JVMF(0x7f3a4cc2f6b0ull, 0xc2f6b0, "thread_native_entry(Thread*)"),
	NF(0x7f3a4d6a1fd4ull, 0x89fd4, "start_thread", LIBC_SO),
	NF(0x7f3a4d72166cull, 0x10966c, "__clone3", LIBC_SO),
};

static struct frame fx_c2_frames[] = {
	JVMF(0x7f3a4cb0a3c1ull, 0xb0a3c1, "PhaseChaitin::Split(unsigned int, ResourceArea*)"),
	JVMF(0x7f3a4cb02f88ull, 0xb02f88, "PhaseChaitin::Register_Allocate()"),
	JVMF(0x7f3a4c7a44d0ull, 0x7a44d0, "Compile::Code_Gen()"),
	JVMF(0x7f3a4c7a9e12ull, 0x7a9e12,
	     "Compile::Compile(ciEnv*, ciMethod*, int, Options, DirectiveSet*)"),
	JVMF(0x7f3a4c62b1f0ull, 0x62b1f0,
	     "C2Compiler::compile_method(ciEnv*, ciMethod*, int, bool, DirectiveSet*)"),
	JVMF(0x7f3a4c7c3a55ull, 0x7c3a55,
	     "CompileBroker::invoke_compiler_on_method(CompileTask*)"),
	JVMF(0x7f3a4c8d1a07ull, 0x8d1a07, "JavaThread::thread_main_inner()"),
	JVMF(0x7f3a4cc31f4aull, 0xc31f4a, "Thread::call_run()"),
	JVMF(0x7f3a4cc2f6b0ull, 0xc2f6b0, "thread_native_entry(Thread*)"),
	NF(0x7f3a4d6a1fd4ull, 0x89fd4, "start_thread", LIBC_SO),
	NF(0x7f3a4d72166cull, 0x10966c, "__clone3", LIBC_SO),
};

static struct frame fx_error_frames[] = {
	JF(FRAME_JAVA, "java.lang.String", "hashCode", "()I", "String.java", 0, 1503, 4),
	UF(0x7f3a34013f7cull, "no code blob for pc"),
};

static struct frame fx_native_frames[] = {
	KF(0xffffffff81608ad3ull, "_copy_to_user"),
	KF(0xffffffff8138b0a4ull, "cp_new_stat"),
	KF(0xffffffff8138b5f2ull, "__do_sys_newfstat"),
	KF(0xffffffff81c2b5e8ull, "do_syscall_64"),
	KF(0xffffffff81e00124ull, "entry_SYSCALL_64_after_hwframe"),
	NF(0x7f9e1b2f3e57ull, 0xf3e57, "__GI___fstat64", LIBC_SO),
	NF(0x55d0c3a01149ull, 0x1149, "hn_leaf", HN_EXE),
	NF(0x55d0c3a0117dull, 0x117d, "hn_mid", HN_EXE),
	NF(0x55d0c3a011b2ull, 0x11b2, "hn_top", HN_EXE),
	NF(0x55d0c3a01201ull, 0x1201, "main", HN_EXE),
	NF(0x7f9e1b227249ull, 0x27249, "__libc_start_call_main", LIBC_SO),
	NF(0x7f9e1b227304ull, 0x27304, "__libc_start_main_impl", LIBC_SO),
	NF(0x55d0c3a01061ull, 0x1061, "_start", HN_EXE),
};

/* hostile names: each must survive as one frame with a readable name */
static struct frame fx_weird_frames[] = {
	KF(0xffffffffc0a01234ull, NULL),
	NF(0x55d0c3a02000ull, 0x2000, "operator;semi", HN_EXE),
	NF(0x55d0c3a02010ull, 0x2010, "line\nbreak\r", HN_EXE),
	NF(0x55d0c3a02020ull, 0x2020, "trail   ", HN_EXE),
	NF(0x55d0c3a02030ull, 0x2030, "bad\xff\xfe utf8 \xc0\xaf \xed\xa0\x80", HN_EXE),
	NF(0x55d0c3a02040ull, 0x2040, "Gr\xc3\xb6\xc3\x9f" "e::\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80", HN_EXE),
	NF(0x55d0c3a02050ull, 0x2050, "q\"uote\\back\ttab\x01\x1f", HN_EXE),
	NF(0x7f0000001000ull, 0, NULL, NULL),
	JF(FRAME_JAVA_INLINED, "pkg.Outer$Inner", "lambda$run$0", "(Ljava/lang/String;)V",
	   "Outer.java", 4, 21, 2),
	JF(FRAME_JAVA, "pkg.Outer$Inner", "run", "()V", NULL, 17, -1, 2),
	UF(0x1000, NULL),
};

struct fx_trace {
	struct trace t;
	uint64_t count;
};

#define FX_TRACE(pid_, tid_, comm_, thr, kind_, err, errname, fr, cnt) \
	{ { .pid = (pid_), .tid = (tid_), .comm = (comm_), .thread = (thr), \
	    .kind = (kind_), .error = (err), .error_name = (errname), \
	    .nframes = NELEM(fr), .frames = (fr) }, (cnt) }

static struct fx_trace fx_traces[] = {
	FX_TRACE(4242, 4251, "java", "main", TRACE_KIND_JAVA, 0, NULL,
		 fx_java_main_frames, 17),
	FX_TRACE(4242, 4252, "java", "worker-1", TRACE_KIND_JAVA, 0, NULL,
		 fx_jni_frames, 5),
	FX_TRACE(4242, 4247, "C2 CompilerThre", "C2 CompilerThread0",
		 TRACE_KIND_JVM, 0, NULL, fx_c2_frames, 3),
	FX_TRACE(4242, 4251, "java", "main", TRACE_KIND_JAVA, -8,
		 "ASGST_UNKNOWN_JAVA_FRAME", fx_error_frames, 2),
	FX_TRACE(9001, 9001, "hn_demo", "hn_demo", TRACE_KIND_NATIVE, 0, NULL,
		 fx_native_frames, 40),
	/* same frames as the first, another thread of the same JVM: a
	 * distinct JSON stack, the same collapsed line */
	FX_TRACE(4242, 4253, "java", "main", TRACE_KIND_JAVA, 0, NULL,
		 fx_java_main_frames, 4),
	FX_TRACE(7, 8, "we;ird\n ", "t\"h\\r\x01", TRACE_KIND_NATIVE, 0, NULL,
		 fx_weird_frames, 1),
};

#define FX_NTRACES NELEM(fx_traces)

/* a profile holding every fixture trace once, with its count */
__attribute__((unused))
static struct profile *fx_profile(void)
{
	struct profile *p = profile__new();
	struct profile_meta *m;

	if (!p)
		return NULL;
	m = profile__meta(p);
	m->frequency_hz = 99;
	m->duration_ns = 10ull * 1000 * 1000 * 1000;
	m->lost = 3;
	for (size_t i = 0; i < FX_NTRACES; i++) {
		if (profile__add(p, &fx_traces[i].t, fx_traces[i].count, 0)) {
			profile__free(p);
			return NULL;
		}
		m->samples += fx_traces[i].count;
	}
	return p;
}

/*
 * The same JIT-compiled call chain (leaf <- c03 <- c02 <- c01 <- run), with
 * different runs of it inlined in different samples, as C1 and C2 do: the
 * stacks share their outermost compiled method (c01) but not the frames
 * inlined into it, and leaf is sampled at two lines. pprof must keep every
 * frame of every stack in order, so these chains must never share a
 * Location.
 */
#define FX_CHAIN(t, m, line_) JF(t, "Chain", m, "(I)I", "Chain.java", 3, \
				 line_, 4)
#define FX_CHAIN_RUN JF(FRAME_JAVA, "Chain$Worker", "run", "()V", \
			"Chain.java", 9, 99, 0)
static struct frame fx_inl_split_frames[] = {	/* [leaf c03] [c02 c01] */
	FX_CHAIN(FRAME_JAVA_INLINED, "leaf", 23),
	FX_CHAIN(FRAME_JAVA, "c03", 86),
	FX_CHAIN(FRAME_JAVA_INLINED, "c02", 89),
	FX_CHAIN(FRAME_JAVA, "c01", 92),
	FX_CHAIN_RUN,
};
static struct frame fx_inl_all_frames[] = {	/* [leaf c03 c02 c01] */
	FX_CHAIN(FRAME_JAVA_INLINED, "leaf", 23),
	FX_CHAIN(FRAME_JAVA_INLINED, "c03", 86),
	FX_CHAIN(FRAME_JAVA_INLINED, "c02", 89),
	FX_CHAIN(FRAME_JAVA, "c01", 92),
	FX_CHAIN_RUN,
};
static struct frame fx_inl_line_frames[] = {	/* [leaf:24 c03] [c02 c01] */
	FX_CHAIN(FRAME_JAVA_INLINED, "leaf", 24),
	FX_CHAIN(FRAME_JAVA, "c03", 86),
	FX_CHAIN(FRAME_JAVA_INLINED, "c02", 89),
	FX_CHAIN(FRAME_JAVA, "c01", 92),
	FX_CHAIN_RUN,
};
static struct frame fx_inl_none_frames[] = {	/* nothing inlined */
	FX_CHAIN(FRAME_JAVA, "leaf", 23),
	FX_CHAIN(FRAME_JAVA, "c03", 86),
	FX_CHAIN(FRAME_JAVA, "c02", 89),
	FX_CHAIN(FRAME_JAVA, "c01", 92),
	FX_CHAIN_RUN,
};

static struct fx_trace fx_inl_traces[] = {
	FX_TRACE(500, 501, "java", "chain", TRACE_KIND_JAVA, 0, NULL,
		 fx_inl_split_frames, 7),
	FX_TRACE(500, 501, "java", "chain", TRACE_KIND_JAVA, 0, NULL,
		 fx_inl_all_frames, 11),
	FX_TRACE(500, 501, "java", "chain", TRACE_KIND_JAVA, 0, NULL,
		 fx_inl_line_frames, 3),
	FX_TRACE(500, 501, "java", "chain", TRACE_KIND_JAVA, 0, NULL,
		 fx_inl_none_frames, 2),
};

#define FX_INL_NTRACES NELEM(fx_inl_traces)

/* a profile of the fx_inl_traces, each once with its count */
__attribute__((unused))
static struct profile *fx_inline_profile(void)
{
	struct profile *p = profile__new();

	if (!p)
		return NULL;
	profile__meta(p)->frequency_hz = 99;
	for (size_t i = 0; i < FX_INL_NTRACES; i++) {
		if (profile__add(p, &fx_inl_traces[i].t, fx_inl_traces[i].count, 0)) {
			profile__free(p);
			return NULL;
		}
		profile__meta(p)->samples += fx_inl_traces[i].count;
	}
	return p;
}

/*
 * JVM events: allocations (the class allocated as the FRAME_CLASS leaf,
 * then the allocating thread's frames) and a contended monitor (its
 * class, then the waiting thread's frames), beside the cpu stacks.
 */
#define CF(cls) { .type = FRAME_CLASS, .comp_level = -1, .bci = -1, \
	.line = -1, .klass = (cls) }

static struct frame fx_alloc_bytes_frames[] = {
	CF("byte[]"),
	JF(FRAME_JAVA, "Demo$Worker", "compute", "(I)J", "Demo.java", 22, 57, 3),
	JF(FRAME_JAVA, "Demo", "main", "([Ljava/lang/String;)V", "Demo.java", 5, 12, 0),
};
static struct frame fx_alloc_str_frames[] = {
	CF("java.lang.String"),
	JF(FRAME_JAVA, "Demo$Worker", "run", "()V", "Demo.java", 8, 70, 1),
	JF(FRAME_JAVA, "java.lang.Thread", "run", "()V", "Thread.java", 11, 833, 0),
};
static struct frame fx_lock_frames[] = {
	CF("java.lang.Object"),
	JF(FRAME_JAVA, "Demo$Worker", "run", "()V", "Demo.java", 8, 70, 1),
	JF(FRAME_JAVA, "java.lang.Thread", "run", "()V", "Thread.java", 11, 833, 0),
};

struct fx_event {
	struct trace t;
	struct profile_values v;
};

#define FX_EVENT(tid_, ev, cls, fr, cnt, ns, bytes, objs) \
	{ { .pid = 4242, .tid = (tid_), .comm = "java", .thread = "worker-1", \
	    .kind = TRACE_KIND_JAVA, .event = (ev), .ev_class = (cls), \
	    .state = TRACE_STATE_IN_JAVA, .nframes = NELEM(fr), \
	    .frames = (fr) }, \
	  { .count = (cnt), .weight_ns = (ns), .alloc_bytes = (bytes), \
	    .alloc_objects = (objs) } }

static struct fx_event fx_events[] = {
	FX_EVENT(4251, TRACE_EV_ALLOC, "byte[]", fx_alloc_bytes_frames, 3, 0,
		 3 * 524288, 3 * 64),
	FX_EVENT(4252, TRACE_EV_ALLOC, "java.lang.String",
		 fx_alloc_str_frames, 2, 0, 2 * 524288, 2 * 21845),
	FX_EVENT(4252, TRACE_EV_LOCK, "java.lang.Object", fx_lock_frames, 4,
		 7500000, 0, 0),
};

#define FX_NEVENTS NELEM(fx_events)
#define FX_ALLOC_BYTES	(5ull * 524288)
#define FX_ALLOC_OBJS	(3ull * 64 + 2 * 21845)
#define FX_LOCK_NS	7500000ull

/*
 * events (ASGST_EVMASK_*): the fixture's cpu stacks when it holds cpu
 * (bit 0), then each JVM event of the kinds asked (alloc bit 2, lock
 * bit 3), with the JVM events' figures in the meta
 */
__attribute__((unused))
static struct profile *fx_jvm_profile(uint32_t events)
{
	struct profile *p = events & 1 ? fx_profile() : profile__new();
	struct profile_meta *m;

	if (!p)
		return NULL;
	m = profile__meta(p);
	m->frequency_hz = 99;
	m->duration_ns = 10ull * 1000 * 1000 * 1000;
	m->events = events;
	m->jvm_ev_lost = 1;
	m->jvm_ev_throttled = 4;
	for (size_t i = 0; i < FX_NEVENTS; i++) {
		const struct fx_event *e = &fx_events[i];
		bool alloc = e->t.event == TRACE_EV_ALLOC;

		if (!(events & (alloc ? 4u : 8u)))
			continue;
		if (profile__add_values(p, &e->t, &e->v)) {
			profile__free(p);
			return NULL;
		}
		if (alloc)
			m->alloc_events += e->v.count;
		else
			m->lock_events += e->v.count;
	}
	if (events & 4)
		m->alloc_interval = 524288;
	return p;
}

/* read a whole stream back into a NUL-terminated heap buffer */
__attribute__((unused))
static char *fx_slurp(FILE *f, size_t *len)
{
	size_t cap = 4096, n = 0, r;
	char *buf = malloc(cap);

	if (!buf)
		return NULL;
	rewind(f);
	while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (cap - n - 1 == 0) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

#endif /* WRITERS_FIXTURE_H */
