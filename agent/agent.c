// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * asgst-bpf JVMTI agent: publishes what a stack walker needs (VM constants,
 * methods, compiled code with inline tables, stubs, threads) in the code
 * map of agent/codemap_format.h. It never walks stacks and never blocks the
 * JVM: JVMTI calls happen outside the one short writer mutex, and any
 * surprise disables the agent, not the JVM.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <jvmti.h>
#include <jvmticmlr.h>
#include "cmwriter.h"
#include "jvm_events.h"
#include "log.h"
#include "vmconsts.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * The JDK feature releases whose layouts this agent knows. Up to JDK 25 a
 * jmethodID is a Method** (a slot in a JNIMethodBlock) and method_ptr()
 * reads through it; from JDK 26 on (JDK-8268406) it is a counter looked up
 * in a table of the JVM's own, and reading through it faults. A release
 * outside this range is refused before the agent reads anything of the VM.
 */
#define AGENT_JDK_MIN	17
#define AGENT_JDK_MAX	25

static struct {
	char path[256];
	uint64_t max_size;
	uint64_t compact_min;	/* compactmin=SIZE */
	int jdk_max;		/* jdkmax=N: narrows AGENT_JDK_MAX, never widens */
} opt;

static jvmtiEnv *jvmti;
static int loaded;		/* a second load is a no-op */
static int ready;		/* VM record written: events go to the map */
static int jdk_major;
static uintptr_t early_cont_barrier;	/* seen before the VM record */
static jfieldID eetop_fid;
static JavaVM *java_vm;
static JNIEnv *compactor_jni;	/* the compactor thread's own */
static int compactor_started, compactor_stop;

/* only called once jdk_check() and probe_method_ids() passed */
static uintptr_t method_ptr(jmethodID mid)
{
	return mid ? *(const uintptr_t *)mid : 0;
}


static void jfree(void *p)
{
	if (p)
		(*jvmti)->Deallocate(jvmti, p);
}

static uint32_t gettid_u32(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* ---- METHOD records --------------------------------------------------- */

struct class_info {
	char name[1024];
	char *source;		/* JVMTI-allocated or NULL */
};

static void class_info_get(jclass k, struct class_info *ci)
{
	char *sig = NULL;

	ci->source = NULL;
	if ((*jvmti)->GetClassSignature(jvmti, k, &sig, NULL) != JVMTI_ERROR_NONE)
		sig = NULL;
	jev__dotted_class(sig, ci->name, sizeof(ci->name));
	jfree(sig);
	if ((*jvmti)->GetSourceFileName(jvmti, k, &ci->source) != JVMTI_ERROR_NONE)
		ci->source = NULL;
}

/* a method as the writer takes it, and the JVMTI memory it points to */
struct meth_buf {
	struct cmw_method m;
	char *name, *sig;
	struct cm_line *lines;
};

/*
 * Fill mb for the method mid of the class ci. method is the Method* to
 * publish (normally *(Method**)mid; the blob's own for MethodHandle
 * intrinsics, with sig_override then). 0, or -1: nothing to publish.
 */
static int method_get(jmethodID mid, const struct class_info *ci,
		      uintptr_t method, const char *name_override,
		      const char *sig_override, struct meth_buf *mb)
{
	jvmtiLineNumberEntry *lines = NULL;
	jint n_lines = 0, mods = 0, i;
	jboolean native = JNI_FALSE;

	memset(mb, 0, sizeof(*mb));
	if (!method ||
	    (*jvmti)->GetMethodName(jvmti, mid, &mb->name, &mb->sig, NULL))
		return -1;
	(*jvmti)->GetMethodModifiers(jvmti, mid, &mods);
	(*jvmti)->IsMethodNative(jvmti, mid, &native);
	if (native ||
	    (*jvmti)->GetLineNumberTable(jvmti, mid, &n_lines, &lines))
		n_lines = 0, lines = NULL;
	if (n_lines > 0) {
		mb->lines = malloc((size_t)n_lines * sizeof(*mb->lines));
		if (!mb->lines)
			n_lines = 0;
	}
	for (i = 0; i < n_lines; i++) {
		mb->lines[i].bci = (uint32_t)lines[i].start_location;
		mb->lines[i].line = (uint32_t)lines[i].line_number;
	}
	jfree(lines);
	mb->m.method = method;
	mb->m.const_method = *(const uintptr_t *)(method + vmc.method_const);
	mb->m.modifiers = (uint32_t)mods;
	mb->m.flags = native ? CM_METHOD_NATIVE : 0;
	mb->m.klass = ci->name;
	mb->m.source = ci->source;
	mb->m.name = name_override ? name_override : mb->name;
	mb->m.sig = sig_override ? sig_override : mb->sig;
	mb->m.lines = mb->lines;
	mb->m.n_lines = (uint32_t)(n_lines > 0 ? n_lines : 0);
	return 0;
}

static void method_put(struct meth_buf *mb)
{
	jfree(mb->name);
	jfree(mb->sig);
	free(mb->lines);
	memset(mb, 0, sizeof(*mb));
}

/* methods handed to the writer in batches of this many (one class's) */
#define METHOD_BATCH	256

/*
 * All methods of a prepared class, in one batch (interned strings, see
 * codemap_format.h); force: ClassPrepare always writes, so a Method*
 * address reused after class unloading gets its new record.
 */
static void write_class(jclass k, bool force)
{
	jmethodID *mids = NULL;
	jint n = 0, i, status = 0;
	struct class_info ci;
	struct meth_buf *mb = NULL;
	struct cmw_method *ms = NULL;
	size_t nb = 0;

	if ((*jvmti)->GetClassStatus(jvmti, k, &status) ||
	    !(status & JVMTI_CLASS_STATUS_PREPARED) ||
	    (status & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE)))
		return;
	if ((*jvmti)->GetClassMethods(jvmti, k, &n, &mids))
		return;
	class_info_get(k, &ci);
	mb = calloc(METHOD_BATCH, sizeof(*mb));
	ms = calloc(METHOD_BATCH, sizeof(*ms));
	if (!mb || !ms)
		goto cleanup;
	for (i = 0; i <= n && cmw__active(); i++) {
		uintptr_t m = i < n ? method_ptr(mids[i]) : 0;

		if (nb && (i == n || nb == METHOD_BATCH)) {
			cmw__append_methods(ms, nb, force);
			while (nb)
				method_put(&mb[--nb]);
		}
		if (i == n)
			break;
		if (!force && cmw__method_known(m))
			continue;
		if (method_get(mids[i], &ci, m, NULL, NULL, &mb[nb]))
			continue;
		ms[nb] = mb[nb].m;
		nb++;
	}
cleanup:
	while (nb)
		method_put(&mb[--nb]);
	free(mb);
	free(ms);
	jfree(ci.source);
	jfree(mids);
}

/* a method referenced by compiled code: recorded once */
static void ensure_method(jmethodID mid, uintptr_t method, const char *name,
			  const char *sig)
{
	struct class_info ci;
	struct meth_buf mb;
	jclass k = NULL;

	if (cmw__method_known(method) || (*jvmti)->GetMethodDeclaringClass(jvmti, mid, &k) || !k)
		return;
	class_info_get(k, &ci);
	/* the writer's live set dedups; a race writes one twice, harmless */
	if (!method_get(mid, &ci, method, name, sig, &mb))
		cmw__append_methods(&mb.m, 1, false);
	method_put(&mb);
	jfree(ci.source);
}

/* ---- CODE records ----------------------------------------------------- */

static bool is_mh_intrinsic(const char *name)
{
	static const char *const names[] = {
		"linkToStatic", "linkToVirtual", "linkToInterface",
		"linkToSpecial", "invokeBasic", "linkToNative",
	};
	unsigned i;

	for (i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

struct pool {
	uintptr_t *m;
	jmethodID *mid;
	uint32_t n, cap;
};

static int pool_idx(struct pool *p, jmethodID mid, uintptr_t m)
{
	uint32_t i;

	for (i = p->n; i-- > 0;)
		if (p->m[i] == m)
			return (int)i;
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 16;
		uintptr_t *nm = realloc(p->m, cap * sizeof(*nm));
		jmethodID *nmid;

		if (!nm)
			return -1;
		p->m = nm;
		nmid = realloc(p->mid, cap * sizeof(*nmid));
		if (!nmid)
			return -1;
		p->mid = nmid;
		p->cap = cap;
	}
	p->m[p->n] = m;
	p->mid[p->n] = mid;
	return (int)p->n++;
}

static void JNICALL on_compiled_load(jvmtiEnv *env, jmethodID mid,
				     jint code_size, const void *code_addr,
				     jint map_length, const jvmtiAddrLocationMap *map,
				     const void *compile_info)
{
	const jvmtiCompiledMethodLoadRecordHeader *r;
	uintptr_t start = (uintptr_t)code_addr, blob, method, ev_method;
	char *name = NULL, *sig = NULL, nsig[512], nname[128];
	const char *blob_sig = NULL, *blob_name = NULL;
	jboolean native = JNI_FALSE;
	struct pool pool = { 0 };
	struct cm_code c;
	struct recbuf b, pcs;
	bool intrinsic;
	jint i, j;

	(void)env; (void)map_length; (void)map;
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE) || !cmw__active())
		return;
	rb__init(&b);
	rb__init(&pcs);
	ev_method = method_ptr(mid);
	(*jvmti)->GetMethodName(jvmti, mid, &name, &sig, NULL);
	(*jvmti)->IsMethodNative(jvmti, mid, &native);
	intrinsic = is_mh_intrinsic(name);

	memset(&c, 0, sizeof(c));
	c.h.type = CM_REC_CODE;
	c.h.time_ns = cmw__now_ns();
	c.start = start;
	c.end = start + (uint32_t)code_size;
	c.kind = native ? CM_CODE_NATIVE : CM_CODE_NMETHOD;
	c.comp_level = -1;
	c.frame_size = -1;
	c.frame_complete = -1;
	method = ev_method;
	blob = vmc__find_blob(start);
	/* the segmap walk must land on the blob whose code begins here */
	if (blob && vmc__blob_code_begin(blob) == start) {
		uintptr_t bm = vmc__nm_method(blob);

		c.blob = blob;
		c.frame_size = vmc__blob_frame_size(blob);
		c.frame_complete = vmc__blob_frame_complete(blob);
		c.comp_level = vmc__nm_comp_level(blob);
		c.verified_entry = vmc__nm_verified_entry(blob);
		if (!native && vmc__nm_entry_bci(blob) >= 0)
			c.kind = CM_CODE_OSR;
		if (bm && (intrinsic || !method))
			method = bm;
	} else {
		log_debug("no code-heap blob at %p (found %p)", code_addr,
			  (void *)blob);
	}
	c.method = method;
	/* the blob's own Method*: its name and signature from its symbols,
	 * since the event's jmethodID stands for another intrinsic */
	if (method != ev_method) {
		if (vmc__method_signature(method, nsig, sizeof(nsig)))
			blob_sig = nsig;
		if (vmc__method_name(method, nname, sizeof(nname)))
			blob_name = nname;
	}
	ensure_method(mid, method, blob_name, blob_sig);

	pool_idx(&pool, mid, method);
	for (r = compile_info; r; r = r->next) {
		const jvmtiCompiledMethodLoadInlineRecord *ir;

		if (r->kind != JVMTI_CMLR_INLINE_INFO)
			continue;
		ir = (const void *)r;
		for (i = 0; i < ir->numpcs; i++) {
			const PCStackInfo *pi = &ir->pcinfo[i];
			uintptr_t pc = (uintptr_t)pi->pc;
			struct cm_pcdesc d;

			if (pi->numstackframes <= 0 || pc < start || pc > c.end)
				continue;
			d.pc_off = (uint32_t)(pc - start);
			d.depth = (uint32_t)pi->numstackframes;
			rb__put(&pcs, &d, sizeof(d));
			for (j = 0; j < pi->numstackframes; j++) {
				jmethodID fm = pi->methods[j];
				uintptr_t m = method_ptr(fm);
				struct cm_frame f;
				int idx;

				/* the shared intrinsic jmethodID means this blob */
				if (intrinsic && m == ev_method)
					m = method;
				idx = pool_idx(&pool, fm, m);
				if (idx < 0) {
					pcs.oom = 1;
					break;
				}
				f.method_idx = (uint32_t)idx;
				f.bci = pi->bcis[j];
				rb__put(&pcs, &f, sizeof(f));
			}
			c.n_pcs++;
		}
	}
	c.n_methods = pool.n;
	/* every method of the chains has a METHOD record before the CODE */
	for (i = 1; i < (jint)pool.n; i++)
		ensure_method(pool.mid[i], pool.m[i], NULL, NULL);
	rb__put(&b, &c, sizeof(c));
	rb__put(&b, pool.m, pool.n * sizeof(uint64_t));
	rb__put(&b, pcs.p, pcs.len);
	if (pcs.oom || rb__finish(&b))
		log_warn("CODE record for %s dropped: out of memory", name ? name : "?");
	else
		cmw__append(b.p, b.len);
	rb__free(&b);
	rb__free(&pcs);
	free(pool.m);
	free(pool.mid);
	jfree(name);
	jfree(sig);
}

static void JNICALL on_compiled_unload(jvmtiEnv *env, jmethodID mid,
				       const void *code_addr)
{
	struct cm_unload u;

	(void)env;
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		return;
	memset(&u, 0, sizeof(u));
	u.h.type = CM_REC_UNLOAD;
	u.h.len = sizeof(u);
	u.h.time_ns = cmw__now_ns();
	u.start = (uintptr_t)code_addr;
	u.method = method_ptr(mid);
	cmw__append(&u, sizeof(u));
}

/* ---- STUB records ----------------------------------------------------- */

static uint32_t stub_kind(const char *name, uintptr_t blob, bool whole)
{
	const char *base = strrchr(name, ':');

	base = base ? base + 1 : name;
	if (!strcmp(name, "Interpreter"))
		return CM_STUB_INTERPRETER;
	if (!strcmp(base, "call_stub"))
		return CM_STUB_CALL_STUB;
	if (strstr(name, "I2C/C2I") || strstr(name, "adapter"))
		return CM_STUB_ADAPTER;
	if (strstr(name, "nep_invoker"))
		return CM_STUB_NEP_INVOKER;
	if (strstr(name, "upcall_stub") && whole)
		return CM_STUB_UPCALL;
	if (!strncasecmp(base, "cont_", 5))
		return CM_STUB_CONT;
	/* a stub that is a whole blob with a frame of its own; without
	 * CodeBlob::_kind (JDK <= 22) a BufferBlob is the one without */
	if (blob && whole && (vmc__blob_is_runtime_stub(blob) ||
			      (vmc.blob_kind < 0 && vmc__blob_frame_size(blob) > 0)))
		return CM_STUB_RUNTIME;
	return CM_STUB_OTHER;
}

static void JNICALL on_dynamic_code(jvmtiEnv *env, const char *name,
				    const void *address, jint length)
{
	uintptr_t start = (uintptr_t)address, blob;
	struct cm_stub s;
	struct recbuf b;
	const char *base;
	bool whole;

	(void)env;
	if (!name)
		name = "";
	base = strrchr(name, ':');
	base = base ? base + 1 : name;
	if (!strcasecmp(base, "cont_returnBarrier"))
		__atomic_store_n(&early_cont_barrier, start, __ATOMIC_RELEASE);
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE) || !cmw__active())
		return;
	memset(&s, 0, sizeof(s));
	s.h.type = CM_REC_STUB;
	s.h.time_ns = cmw__now_ns();
	s.start = start;
	s.end = start + (uint32_t)length;
	s.frame_size = -1;
	s.frame_complete = -1;
	blob = vmc__find_blob(start);
	whole = blob && vmc__blob_code_begin(blob) == start;
	if (blob) {
		s.blob = blob;
		/* a blob's frame describes the stub only when the stub is the
		 * blob (not one of many stubs in a StubRoutines buffer) */
		if (whole) {
			s.frame_size = vmc__blob_frame_size(blob);
			s.frame_complete = vmc__blob_frame_complete(blob);
		}
	}
	s.kind = stub_kind(name, blob, whole);
	rb__init(&b);
	rb__put(&b, &s, sizeof(s));
	rb__str(&b, name);
	if (!rb__finish(&b))
		cmw__append(b.p, b.len);
	rb__free(&b);
}

/* ---- THREAD records --------------------------------------------------- */

static uintptr_t java_thread_of(JNIEnv *jni, jthread t)
{
	if (!jni || !t || !eetop_fid)
		return 0;
	return (uintptr_t)(*jni)->GetLongField(jni, t, eetop_fid);
}

static void write_thread(JNIEnv *jni, jthread t, bool end, uint32_t tid)
{
	jvmtiThreadInfo ti;
	struct cm_thread r;
	struct recbuf b;
	char *csig = NULL;
	jclass k;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE) || !cmw__active())
		return;
	memset(&ti, 0, sizeof(ti));
	if ((*jvmti)->GetThreadInfo(jvmti, t, &ti))
		memset(&ti, 0, sizeof(ti));
	memset(&r, 0, sizeof(r));
	r.h.type = CM_REC_THREAD;
	r.h.time_ns = cmw__now_ns();
	r.java_thread = java_thread_of(jni, t);
	if (!tid)
		tid = vmc__jt_tid(r.java_thread);
	r.tid = tid;
	r.flags = (end ? CM_THREAD_END : 0) | (ti.is_daemon ? CM_THREAD_DAEMON : 0);
	k = jni ? (*jni)->GetObjectClass(jni, t) : NULL;
	if (k && !(*jvmti)->GetClassSignature(jvmti, k, &csig, NULL) && csig) {
		/* the class says it without a version check */
		if (!strcmp(csig, "Ljdk/internal/misc/CarrierThread;"))
			r.flags |= CM_THREAD_CARRIER;
		else if (strstr(csig, "VirtualThread"))
			r.flags |= CM_THREAD_VIRTUAL;
	}
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	rb__init(&b);
	rb__put(&b, &r, sizeof(r));
	rb__str(&b, ti.name ? ti.name : "");
	if (!rb__finish(&b))
		cmw__append(b.p, b.len);
	rb__free(&b);
	jfree(csig);
	jfree(ti.name);
	if (jni) {
		if (ti.thread_group)
			(*jni)->DeleteLocalRef(jni, ti.thread_group);
		if (ti.context_class_loader)
			(*jni)->DeleteLocalRef(jni, ti.context_class_loader);
	}
}

static void JNICALL on_thread_start(jvmtiEnv *env, JNIEnv *jni, jthread t)
{
	(void)env;
	/* ThreadStart and ThreadEnd run on the thread itself */
	write_thread(jni, t, false, gettid_u32());
}

static void JNICALL on_thread_end(jvmtiEnv *env, JNIEnv *jni, jthread t)
{
	(void)env;
	write_thread(jni, t, true, gettid_u32());
}

static void JNICALL on_class_prepare(jvmtiEnv *env, JNIEnv *jni, jthread t,
				     jclass k)
{
	(void)env; (void)jni; (void)t;
	if (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) && cmw__active())
		write_class(k, true);
}

/* ---- start-up: VM record and enumeration ------------------------------ */

static void write_vm_record(void)
{
	char *ver = NULL;
	struct cm_vm v;
	struct recbuf b;

	(*jvmti)->GetSystemProperty(jvmti, "java.vm.version", &ver);
	memset(&v, 0, sizeof(v));
	v.h.type = CM_REC_VM;
	v.h.time_ns = cmw__now_ns();
	v.jdk_major = (uint32_t)jdk_major;
	v.c = vmc;
	rb__init(&b);
	rb__put(&b, &v, sizeof(v));
	rb__str(&b, ver ? ver : "");
	if (!rb__finish(&b))
		cmw__append(b.p, b.len);
	rb__free(&b);
	jfree(ver);
}

/* a HotSpot instance jfieldID is (offset << 2) | 2 (jfieldIDWorkaround) */
static int32_t field_offset(JNIEnv *jni, jclass k, const char *name,
			    const char *sig)
{
	jfieldID f = (*jni)->GetFieldID(jni, k, name, sig);
	uintptr_t v = (uintptr_t)f;

	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (!f || (v & 3) != 2 || (v >> 2) < 8 || (v >> 2) > 1024)
		return -1;
	return (int32_t)(v >> 2);
}

/* heap oop size: an Object[2] is 24 bytes with 4-byte oops, 32 with 8 */
static uint32_t heap_oop_size(JNIEnv *jni)
{
	jclass ok = (*jni)->FindClass(jni, "java/lang/Object");
	jobjectArray a = ok ? (*jni)->NewObjectArray(jni, 2, ok, NULL) : NULL;
	jlong sz = 0;

	if (a && (*jvmti)->GetObjectSize(jvmti, a, &sz))
		sz = 0;
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (a)
		(*jni)->DeleteLocalRef(jni, a);
	if (ok)
		(*jni)->DeleteLocalRef(jni, ok);
	return sz == 24 ? 4 : sz == 32 ? 8 : 0;
}

/*
 * JDK 21+: how to find a mounted virtual thread's frozen frames (struct
 * cm_cont), so the sampler can copy them. Optional: anything unexpected
 * and the record is simply not written.
 */
static void write_cont_record(JNIEnv *jni)
{
	jclass ck = NULL, sk = NULL;
	struct cm_cont c;
	struct recbuf b;

	if (!jni || jdk_major < 21)
		return;
	memset(&c, 0, sizeof(c));
	c.h.type = CM_REC_CONT;
	c.h.time_ns = cmw__now_ns();
	ck = (*jni)->FindClass(jni, "jdk/internal/vm/Continuation");
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	sk = (*jni)->FindClass(jni, "jdk/internal/vm/StackChunk");
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (!ck || !sk)
		goto cleanup;
	c.cont_tail = field_offset(jni, ck, "tail",
				   "Ljdk/internal/vm/StackChunk;");
	c.chunk_size = field_offset(jni, sk, "size", "I");
	c.chunk_parent = field_offset(jni, sk, "parent",
				      "Ljdk/internal/vm/StackChunk;");
	c.chunk_sp = field_offset(jni, sk, "sp", "I");
	c.chunk_bottom = field_offset(jni, sk, "bottom", "I");
	c.chunk_argsize = c.chunk_bottom < 0 ?
			  field_offset(jni, sk, "argsize", "I") : -1;
	c.oop_size = heap_oop_size(jni);
	if (c.cont_tail < 0 || c.chunk_size < 0 || c.chunk_sp < 0 ||
	    c.chunk_parent < 0 ||
	    (c.chunk_argsize < 0 && c.chunk_bottom < 0) || !c.oop_size ||
	    !vmc__cont_layout(&c, sk)) {
		log_info("virtual-thread layout not found: frozen frames will not be decoded");
		goto cleanup;
	}
	rb__init(&b);
	rb__put(&b, &c, sizeof(c));
	if (!rb__finish(&b))
		cmw__append(b.p, b.len);
	rb__free(&b);
cleanup:
	if (ck)
		(*jni)->DeleteLocalRef(jni, ck);
	if (sk)
		(*jni)->DeleteLocalRef(jni, sk);
}

static int parse_major(const char *s)
{
	int v;

	if (!s)
		return 0;
	v = atoi(s);
	if (v == 1 && s[1] == '.')	/* 1.8 style */
		v = atoi(s + 2);
	return v;
}

/*
 * The JDK release from JVMTI's own version number (its major is the feature
 * release since JDK 9) and from the VM's specification version: both must
 * agree and name a release this agent knows. NULL when so, else why not
 * (short: it goes into the code map's 128-byte reason).
 */
static const char *jdk_check(char *why, size_t len)
{
	char *spec = NULL;
	jint v = 0;
	int ti_major;

	if ((*jvmti)->GetVersionNumber(jvmti, &v))
		v = 0;
	ti_major = (int)(((unsigned)v & JVMTI_VERSION_MASK_MAJOR) >>
			 JVMTI_VERSION_SHIFT_MAJOR);
	if ((*jvmti)->GetSystemProperty(jvmti, "java.vm.specification.version",
					&spec))
		spec = NULL;
	jdk_major = parse_major(spec);
	jfree(spec);
	if (ti_major != jdk_major) {
		snprintf(why, len, "JDK release unclear (JVMTI %d, VM spec %d): "
			 "refused, the JVM runs on", ti_major, jdk_major);
		return why;
	}
	if (jdk_major < AGENT_JDK_MIN || jdk_major > opt.jdk_max) {
		snprintf(why, len, "JDK %d is not one this agent knows (JDK %d-%d): "
			 "refused, the JVM runs on", jdk_major, AGENT_JDK_MIN,
			 opt.jdk_max);
		return why;
	}
	return NULL;
}

/*
 * Before method_ptr() reads through any jmethodID: a few of
 * java.lang.Object's jmethodIDs must read, through the kernel, as the
 * Method* of the method JVMTI names. A JDK update that changed what a
 * jmethodID is turns the agent off here instead of faulting later.
 */
static const char *probe_method_ids(JNIEnv *jni)
{
	const char *why = "jmethodIDs are not Method** here: refused, the JVM runs on";
	jmethodID *ms = NULL;
	jclass k = NULL;
	jint n = 0, i;
	int ok = 0;

	if (!jni)
		return "no JNI environment to check jmethodIDs: refused";
	k = (*jni)->FindClass(jni, "java/lang/Object");
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (!k || (*jvmti)->GetClassMethods(jvmti, k, &n, &ms))
		goto cleanup;
	for (i = 0; i < n && i < 8; i++) {
		char *name = NULL, vname[128];
		uintptr_t m = 0;
		bool same;

		if ((*jvmti)->GetMethodName(jvmti, ms[i], &name, NULL, NULL))
			goto cleanup;
		same = name && !vmc__safe_read((uintptr_t)ms[i], &m, sizeof(m)) &&
		       vmc__method_name_checked(m, vname, sizeof(vname)) &&
		       !strcmp(name, vname);
		jfree(name);
		if (!same)
			goto cleanup;
		ok++;
	}
	if (ok >= 3)
		why = NULL;
cleanup:
	jfree(ms);
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	return why;
}

static void enumerate_classes(void)
{
	jclass *ks = NULL;
	jint n = 0, i;

	if ((*jvmti)->GetLoadedClasses(jvmti, &n, &ks))
		return;
	for (i = 0; i < n && cmw__active(); i++)
		write_class(ks[i], false);
	jfree(ks);
}

static void enumerate_threads(JNIEnv *jni)
{
	jthread *ts = NULL;
	jint n = 0, i;

	if ((*jvmti)->GetAllThreads(jvmti, &n, &ts))
		return;
	for (i = 0; i < n; i++) {
		write_thread(jni, ts[i], false, 0);
		if (jni)
			(*jni)->DeleteLocalRef(jni, ts[i]);
	}
	jfree(ts);
}

/* ---- compaction: the map keeps only what is live -------------------------- */

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the Method* of every method of every loaded class, sorted; NULL on error */
static uint64_t *loaded_methods(size_t *n_out)
{
	jclass *ks = NULL;
	jint nk = 0, i;
	uint64_t *ms = NULL;
	size_t n = 0, cap = 0;

	if ((*jvmti)->GetLoadedClasses(jvmti, &nk, &ks))
		return NULL;
	for (i = 0; i < nk && !__atomic_load_n(&compactor_stop, __ATOMIC_ACQUIRE); i++) {
		jmethodID *mids = NULL;
		jint nm = 0, j, status = 0;

		if ((*jvmti)->GetClassStatus(jvmti, ks[i], &status) ||
		    !(status & JVMTI_CLASS_STATUS_PREPARED) ||
		    (*jvmti)->GetClassMethods(jvmti, ks[i], &nm, &mids))
			continue;
		if (n + (size_t)nm > cap) {
			size_t nc = cap ? cap * 2 : 4096;
			uint64_t *p;

			while (nc < n + (size_t)nm)
				nc *= 2;
			p = realloc(ms, nc * sizeof(*ms));
			if (!p) {
				jfree(mids);
				free(ms);
				ms = NULL;
				goto cleanup;
			}
			ms = p;
			cap = nc;
		}
		for (j = 0; j < nm; j++)
			ms[n++] = method_ptr(mids[j]);
		jfree(mids);
	}
	if (!ms)
		ms = malloc(sizeof(*ms));
	if (ms)
		qsort(ms, n, sizeof(*ms), u64_cmp);
	*n_out = n;
cleanup:
	/* local references of an attached native thread: freed one by one */
	for (i = 0; i < nk; i++)
		if (ks[i])
			(*compactor_jni)->DeleteLocalRef(compactor_jni, ks[i]);
	jfree(ks);
	return ms;
}

/* 0 when the map came out well below its cap, else -1 (back off) */
static int compact_once(void)
{
	struct cmw_compact_stats st;
	uint64_t mark = cmw__pos(), t0 = cmw__now_ns(), *ms;
	size_t n = 0;
	int ret = -1;

	ms = loaded_methods(&n);
	if (!ms)
		return -1;
	if (!cmw__compact(ms, n, mark, &st)) {
		/* what is live nearly fills the map: compacting again soon
		 * would win nothing */
		ret = st.new_bytes > opt.max_size / 2 ? -1 : 0;
		log_info("code map generation %llu: %llu -> %llu bytes (%llu methods kept, %llu dropped, %llu strings, %llu classes, %llu code, %llu stubs, %llu threads), %.1f ms, %.1f ms of it locked",
			 (unsigned long long)st.generation,
			 (unsigned long long)st.old_bytes,
			 (unsigned long long)st.new_bytes,
			 (unsigned long long)st.methods_kept,
			 (unsigned long long)st.methods_dropped,
			 (unsigned long long)st.strings,
			 (unsigned long long)st.classes,
			 (unsigned long long)st.code,
			 (unsigned long long)st.stubs,
			 (unsigned long long)st.threads,
			 (double)(cmw__now_ns() - t0) / 1e6,
			 (double)st.locked_ns / 1e6);
	} else {
		log_warn("code map compaction failed (the live set does not fit maxsize=%llu, or /dev/shm is full): tried again later",
			 (unsigned long long)opt.max_size);
	}
	free(ms);
	return ret;
}

/*
 * A daemon thread of the agent's own: it checks the map every 100 ms and
 * compacts when due. The enumeration of loaded classes (JVMTI) happens
 * here, outside the writer lock; JVM threads only ever append.
 */
static void *compactor_main(void *arg)
{
	JNIEnv *jni = NULL;
	unsigned backoff = 0, wait_ticks = 0;	/* in 100 ms ticks */
	JavaVMAttachArgs aa = {
		.version = JNI_VERSION_1_6, .name = "asgst-codemap", .group = NULL,
	};

	(void)arg;
	if ((*java_vm)->AttachCurrentThreadAsDaemon(java_vm, (void **)&jni,
						    &aa) != JNI_OK) {
		log_warn("code map compaction off: cannot attach its thread");
		return NULL;
	}
	compactor_jni = jni;
	/* this thread answers the event requests too (jev__init ran with
	 * the map's start) */
	while (!__atomic_load_n(&compactor_stop, __ATOMIC_ACQUIRE) &&
	       cmw__active()) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		if (__atomic_load_n(&compactor_stop, __ATOMIC_ACQUIRE))
			break;
		jev__poll();
		if (wait_ticks) {
			wait_ticks--;
			continue;
		}
		if (!cmw__compaction_due())
			continue;
		/* a compaction that does not help backs off: 1 s, 2 s, ..
		 * up to a minute, so a map too small costs the JVM little */
		if (compact_once()) {
			backoff = backoff ? backoff * 2 : 10;
			if (backoff > 600)
				backoff = 600;
			wait_ticks = backoff;
		} else {
			backoff = 0;
		}
	}
	/* the agent turned itself off: no events for a recorder that cannot
	 * decode them; at VM death JVMTI is gone and the JVM tears down its
	 * daemon threads itself */
	if (!__atomic_load_n(&compactor_stop, __ATOMIC_ACQUIRE))
		jev__stop();
	return NULL;
}

static void compactor_start(void)
{
	pthread_attr_t a;
	pthread_t t;

	if (!java_vm || __atomic_exchange_n(&compactor_started, 1,
					    __ATOMIC_ACQ_REL))
		return;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, compactor_main, NULL))
		log_warn("code map compaction off: no thread (%s)",
			 strerror(errno));
	pthread_attr_destroy(&a);
}

/* runs at VMInit, or in Agent_OnAttach (live phase) */
static void agent_init_live(JNIEnv *jni)
{
	const char *why;
	jclass tc;
	uint64_t t0 = cmw__now_ns();

	if (!cmw__active())
		return;
	why = probe_method_ids(jni);
	if (why) {
		cmw__disable(why);
		return;
	}
	tc = jni ? (*jni)->FindClass(jni, "java/lang/Thread") : NULL;
	if (tc) {
		eetop_fid = (*jni)->GetFieldID(jni, tc, "eetop", "J");
		(*jni)->DeleteLocalRef(jni, tc);
	}
	if (jni && (*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (!eetop_fid)
		log_warn("java.lang.Thread.eetop not found: JavaThread* unknown");
	/* a first pass over the stubs only learns cont_returnBarrier for the
	 * VM record (the events are synchronous on this thread) */
	vmc__refresh();
	if (!vmc.cont_return_barrier) {
		(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
		vmc.cont_return_barrier =
			__atomic_load_n(&early_cont_barrier, __ATOMIC_ACQUIRE);
	}
	write_vm_record();
	write_cont_record(jni);
	/* CM_F_EVENTS before CM_F_READY: a reader that finds the map ready
	 * knows at once whether its requests will be answered */
	jev__init(jvmti, jni);
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	cmw__set_flags(CM_F_READY);
	enumerate_classes();
	(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
	(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	enumerate_threads(jni);
	cmw__mark_base();
	log_info("code map ready: JDK %d, %llu bytes, %.1f ms", jdk_major,
		 (unsigned long long)cmw__pos(),
		 (double)(cmw__now_ns() - t0) / 1e6);
	compactor_start();
}

static void JNICALL on_vm_init(jvmtiEnv *env, JNIEnv *jni, jthread t)
{
	(void)env; (void)t;
	agent_init_live(jni);
}

static void agent_shutdown(void)
{
	__atomic_store_n(&compactor_stop, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&ready, 0, __ATOMIC_RELEASE);
	cmw__close();
}

static void JNICALL on_vm_death(jvmtiEnv *env, JNIEnv *jni)
{
	(void)env; (void)jni;
	agent_shutdown();
}

/* ---- options ---------------------------------------------------------- */

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (tolower((unsigned char)*end)) {
	case 'k': v <<= 10; end++; break;
	case 'm': v <<= 20; end++; break;
	case 'g': v <<= 30; end++; break;
	}
	if (*end || v < (64u << 10) || v > (4ull << 30))
		return -1;
	*out = v;
	return 0;
}

/* NULL when fine, else the offending option */
static const char *parse_options(const char *options, char *bad, size_t badlen)
{
	char buf[1024], *save = NULL, *tok;
	struct stat ns;

	if (!stat("/proc/self/ns/pid", &ns))
		snprintf(opt.path, sizeof(opt.path), CM_PATH_NS_FMT,
			 (int)getpid(), (unsigned long long)ns.st_ino);
	else
		snprintf(opt.path, sizeof(opt.path), CM_PATH_FMT,
			 (int)getpid());
	opt.max_size = CM_DEFAULT_MAX;
	opt.jdk_max = AGENT_JDK_MAX;
	if (!options || !*options)
		return NULL;
	if (strlen(options) >= sizeof(buf))
		return "options too long";
	strcpy(buf, options);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		const char *v = eq ? eq + 1 : "";

		if (eq)
			*eq = 0;
		if (!strcmp(tok, "path") && *v && strlen(v) < sizeof(opt.path)) {
			strcpy(opt.path, v);
		} else if (!strcmp(tok, "maxsize") && !parse_size(v, &opt.max_size)) {
		} else if (!strcmp(tok, "compactmin") &&
			   !parse_size(v, &opt.compact_min)) {
		} else if (!strcmp(tok, "jdkmax") && atoi(v) > 0) {
			if (atoi(v) < opt.jdk_max)
				opt.jdk_max = atoi(v);
		} else if (!strcmp(tok, "loglevel") && *v) {
			if (!strcmp(v, "error"))
				agent_log_level = LOG_ERROR;
			else if (!strcmp(v, "warn"))
				agent_log_level = LOG_WARN;
			else if (!strcmp(v, "info"))
				agent_log_level = LOG_INFO;
			else if (!strcmp(v, "debug"))
				agent_log_level = LOG_DEBUG;
			else
				goto bad;
		} else if (!strcmp(tok, "logfile") && *v) {
			if (agent_log_open(v))
				goto bad;
		} else {
			goto bad;
		}
		continue;
bad:
		snprintf(bad, badlen, "%s%s%s", tok, eq ? "=" : "", v);
		return bad;
	}
	return NULL;
}

/* ---- load / attach ---------------------------------------------------- */

static void atexit_cleanup(void)
{
	agent_shutdown();
}

static int agent_start(JavaVM *vm, const char *options, bool live)
{
	jvmtiEventCallbacks cb;
	jvmtiCapabilities caps;
	const char *why, *bad;
	char badbuf[256], whybuf[128];
	JNIEnv *jni = NULL;
	static const jvmtiEvent events[] = {
		JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH,
		JVMTI_EVENT_CLASS_PREPARE, JVMTI_EVENT_COMPILED_METHOD_LOAD,
		JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
		JVMTI_EVENT_DYNAMIC_CODE_GENERATED, JVMTI_EVENT_THREAD_START,
		JVMTI_EVENT_THREAD_END,
	};
	unsigned i;

	if (__atomic_exchange_n(&loaded, 1, __ATOMIC_ACQ_REL)) {
		log_warn("already loaded (code map %s): ignoring this load",
			 opt.path);
		return 0;
	}
	bad = parse_options(options, badbuf, sizeof(badbuf));
	if (bad) {
		fprintf(stderr, "asgst-agent: bad option '%s' (use path=,maxsize=,compactmin=,"
			"loglevel=error|warn|info|debug,logfile=,jdkmax=): agent disabled\n",
			bad);
		/* off, but a later load with good options may still start */
		__atomic_store_n(&loaded, 0, __ATOMIC_RELEASE);
		return 0;
	}
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		jvmti = NULL;
		if (live) {
			/* attached before the JVM's live phase (a system
			 * class loader still starting): the attacher asks
			 * again, and finds the agent unloaded by then */
			log_info("the JVM is still starting (no JVMTI environment yet): not loaded");
			__atomic_store_n(&loaded, 0, __ATOMIC_RELEASE);
			return CM_AGENT_RC_NOT_LIVE;
		}
		log_error("no JVMTI 1.2 environment: agent disabled");
		return 0;
	}
	if (cmw__open(opt.path, opt.max_size))
		return 0;
	atexit(atexit_cleanup);
	/* before anything of the VM is read or written */
	why = jdk_check(whybuf, sizeof(whybuf));
	if (why) {
		cmw__disable(why);
		return 0;
	}
	why = vmc__init();
	if (why) {
		cmw__disable(why);
		return 0;
	}
	java_vm = vm;
	if (opt.compact_min)
		cmw__set_compact_min(opt.compact_min);
	/* PcDescs at every pc, not just safepoints: inline chains resolve
	 * accurately for code compiled from now on */
	if (vmc__set_bool_flag("DebugNonSafepoints", true))
		log_warn("DebugNonSafepoints not found: inline info only at safepoints");

	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	caps.can_get_line_numbers = 1;
	caps.can_get_source_file_name = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps)) {
		cmw__disable("JVMTI capabilities not available");
		return 0;
	}
	memset(&cb, 0, sizeof(cb));
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.ClassPrepare = on_class_prepare;
	cb.CompiledMethodLoad = on_compiled_load;
	cb.CompiledMethodUnload = on_compiled_unload;
	cb.DynamicCodeGenerated = on_dynamic_code;
	cb.ThreadStart = on_thread_start;
	cb.ThreadEnd = on_thread_end;
	jev__callbacks(&cb);
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb))) {
		cmw__disable("JVMTI SetEventCallbacks failed");
		return 0;
	}
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		if (live && events[i] == JVMTI_EVENT_VM_INIT)
			continue;
		if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
						       events[i], NULL)) {
			cmw__disable("JVMTI SetEventNotificationMode failed");
			return 0;
		}
	}
	log_info("agent loaded (%s), code map %s, max %llu bytes",
		 live ? "attach" : "start", opt.path,
		 (unsigned long long)opt.max_size);
	if (live) {
		if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK)
			jni = NULL;
		agent_init_live(jni);
	}
	return 0;
}

EXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	/* never a non-zero return: that would abort the JVM */
	agent_start(vm, options, false);
	return 0;
}

EXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	/* non-zero only for CM_AGENT_RC_NOT_LIVE: the JVM unloads the
	 * library and the attacher tries again */
	return agent_start(vm, options, true);
}

EXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	agent_shutdown();
}
