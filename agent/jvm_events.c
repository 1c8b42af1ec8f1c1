// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sampled allocations and contended monitor enters, for a recorder that
 * asks (codemap_format.h, "Event requests"). The agent's compactor thread
 * polls the requests every 100 ms and turns the JVMTI events on and off;
 * the callbacks run on the application's threads and only name the class
 * and call the probe, whose uprobe takes the stack. Any JVMTI error turns
 * that event off until its request goes away: the JVM runs on.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <jvmti.h>
#include "cmwriter.h"
#include "jvm_events.h"
#include "log.h"

/*
 * The probe, in assembly so that its first instruction is what it must
 * be: a 5-byte nop. The kernel emulates a uprobe on a nop (and may turn
 * it into a call to its trampoline); on a ret, what a compiler makes of
 * an empty function, it single-steps the instruction out of line: a
 * second trap, ~10 us a hit in a VM. The CFI says what an unwinder needs
 * at its entry (the return address at the stack pointer).
 */
__asm__(".text\n"
	".globl asgst_probe_event\n"
	".type asgst_probe_event, @function\n"
	"asgst_probe_event:\n"
	".cfi_startproc\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* nopl 0(%rax,%rax,1) */
	"	ret\n"
	".cfi_endproc\n"
	".size asgst_probe_event, .-asgst_probe_event\n");

/* ---- names and weights -------------------------------------------------- */

static const char *prim_name(char c)
{
	switch (c) {
	case 'B': return "byte";
	case 'C': return "char";
	case 'D': return "double";
	case 'F': return "float";
	case 'I': return "int";
	case 'J': return "long";
	case 'S': return "short";
	case 'Z': return "boolean";
	case 'V': return "void";
	}
	return NULL;
}

void jev__dotted_class(const char *sig, char *buf, size_t len)
{
	size_t dims = 0, n = 0, i;
	const char *p;

	if (!len)
		return;
	if (!sig || !*sig) {
		snprintf(buf, len, "?");
		return;
	}
	while (sig[dims] == '[')
		dims++;
	sig += dims;
	p = sig[0] == 'L' || !sig[1] ? prim_name(sig[0]) : NULL;
	if (p) {
		n = strlen(p);
		if (n >= len)
			n = len - 1;
		memcpy(buf, p, n);
	} else {
		if (sig[0] == 'L') {
			sig++;
			/* "Lfoo/Bar;": up to the ';' */
			for (p = sig; *p && *p != ';'; p++)
				;
		} else {
			p = sig + strlen(sig);
		}
		for (; sig < p && n < len - 1; sig++)
			buf[n++] = *sig == '/' ? '.' : *sig;
	}
	for (i = 0; i < dims && n + 2 < len; i++) {
		buf[n++] = '[';
		buf[n++] = ']';
	}
	buf[n] = 0;
}

/* 1 - exp(-x), x >= 0, without libm (the agent links none) */
static double one_minus_exp_neg(double x)
{
	double t, sum, y;
	unsigned int i, k = 0;

	if (x > 40)
		return 1;
	if (x < 0.5) {
		/* its own series: no cancellation for small x */
		sum = 0;
		t = x;
		for (i = 1; i < 24 && t != 0; i++) {
			sum += t;
			t *= -x / (i + 1);
		}
		return sum;
	}
	for (y = x; y > 0.5; y /= 2)
		k++;
	sum = 1;
	t = 1;
	for (i = 1; i < 24; i++) {
		t *= -y / i;
		sum += t;
	}
	while (k--)
		sum *= sum;
	return 1 - sum;
}

uint64_t jev__alloc_weight(uint64_t size, uint64_t interval)
{
	double p, w;

	if (!interval || !size)
		return size;
	p = one_minus_exp_neg((double)size / (double)interval);
	if (!(p > 0))
		return size;
	w = (double)size / p;
	if (w >= 18446744073709549568.0)
		return UINT64_MAX;
	return (uint64_t)w > size ? (uint64_t)w : size;
}

/* ---- callbacks ------------------------------------------------------------- */

static uint64_t alloc_interval;		/* atomic: the one set now */
static uint64_t lock_since_ns;		/* atomic: lock events on since */
static jfieldID tid_fid;		/* java.lang.Thread.tid */

/* a class's dotted name into buf (128 bytes) */
static void class_name(jvmtiEnv *env, jclass k, char *buf, size_t len)
{
	char *sig = NULL;

	if (!k || (*env)->GetClassSignature(env, k, &sig, NULL))
		sig = NULL;
	jev__dotted_class(sig, buf, len);
	if (sig)
		(*env)->Deallocate(env, (unsigned char *)sig);
}

static void JNICALL on_sampled_alloc(jvmtiEnv *env, JNIEnv *jni, jthread t,
				     jobject o, jclass k, jlong size)
{
	uint64_t sz = size > 0 ? (uint64_t)size : 0;
	char name[128];

	(void)jni; (void)t; (void)o;
	class_name(env, k, name, sizeof(name));
	asgst_probe_event(CM_PROBE_ALLOC, name, sz, jev__alloc_weight(sz,
			  __atomic_load_n(&alloc_interval, __ATOMIC_RELAXED)));
}

/*
 * When each waiting thread began to wait, by java.lang.Thread.tid: a
 * virtual thread blocked on a monitor may unmount (JDK 24+) and enter on
 * another carrier, so neither a __thread variable nor the carrier's JVMTI
 * storage would follow it, while its tid does. Fixed size and lock-free:
 * an enter that finds no slot is not timed. A slot older than the time
 * the lock events came on is free (its entered never came). JDK 25 posts
 * no contended-enter events for a virtual thread that unmounts to wait
 * for a monitor, so this mostly serves platform threads.
 */
#define WAIT_SLOTS	4096u
#define WAIT_PROBES	16u

static struct wait_slot {
	uint64_t tid;			/* 0: free */
	uint64_t start;
} waits[WAIT_SLOTS];

static uint64_t thread_tid(JNIEnv *jni, jthread t)
{
	jlong v;

	if (!jni || !t || !tid_fid)
		return 0;
	v = (*jni)->GetLongField(jni, t, tid_fid);
	return v > 0 ? (uint64_t)v : 0;
}

static void wait_begin(uint64_t tid, uint64_t now)
{
	uint64_t since = __atomic_load_n(&lock_since_ns, __ATOMIC_ACQUIRE);
	uint32_t h = (uint32_t)((tid * 0x9E3779B97F4A7C15ull) >> 40);

	for (uint32_t i = 0; i < WAIT_PROBES; i++) {
		struct wait_slot *s = &waits[(h + i) & (WAIT_SLOTS - 1)];
		uint64_t cur = __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE);

		/* its own slot: only this thread ever writes it now */
		if (cur == tid) {
			__atomic_store_n(&s->start, now, __ATOMIC_RELEASE);
			return;
		}
		/* a slot taken is free once its start predates the events'
		 * start; start 0 is a claim or a release under way */
		if (cur) {
			uint64_t st = __atomic_load_n(&s->start, __ATOMIC_ACQUIRE);

			if (!st || st >= since)
				continue;
		}
		if (__atomic_compare_exchange_n(&s->tid, &cur, tid, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			__atomic_store_n(&s->start, now, __ATOMIC_RELEASE);
			return;
		}
	}
}

/* the start wait_begin() noted for tid, the slot freed; 0: none */
static uint64_t wait_end(uint64_t tid)
{
	uint32_t h = (uint32_t)((tid * 0x9E3779B97F4A7C15ull) >> 40);

	for (uint32_t i = 0; i < WAIT_PROBES; i++) {
		struct wait_slot *s = &waits[(h + i) & (WAIT_SLOTS - 1)];
		uint64_t start;

		if (__atomic_load_n(&s->tid, __ATOMIC_ACQUIRE) != tid)
			continue;
		start = __atomic_load_n(&s->start, __ATOMIC_ACQUIRE);
		__atomic_store_n(&s->start, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&s->tid, 0, __ATOMIC_RELEASE);
		return start;
	}
	return 0;
}

static void JNICALL on_contended_enter(jvmtiEnv *env, JNIEnv *jni,
				       jthread t, jobject o)
{
	uint64_t tid = thread_tid(jni, t);

	(void)env; (void)o;
	if (tid)
		wait_begin(tid, cmw__now_ns());
}

static void JNICALL on_contended_entered(jvmtiEnv *env, JNIEnv *jni,
					 jthread t, jobject o)
{
	uint64_t tid = thread_tid(jni, t), start, now;
	char name[128];
	jclass k;

	if (!tid)
		return;
	start = wait_end(tid);
	now = cmw__now_ns();
	/* not timed, or begun before the events (re)started */
	if (!start || start < __atomic_load_n(&lock_since_ns, __ATOMIC_ACQUIRE) ||
	    now < start)
		return;
	k = o ? (*jni)->GetObjectClass(jni, o) : NULL;
	class_name(env, k, name, sizeof(name));
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	asgst_probe_event(CM_PROBE_LOCK, name, 0, now - start);
}

void jev__callbacks(jvmtiEventCallbacks *cb)
{
	cb->SampledObjectAlloc = on_sampled_alloc;
	cb->MonitorContendedEnter = on_contended_enter;
	cb->MonitorContendedEntered = on_contended_entered;
}

/* ---- on and off ------------------------------------------------------------- */

enum { EV_ALLOC, EV_LOCK, EV_N };

static struct ev {
	const char *name;
	uint32_t flag;			/* CM_F_*_ON */
	int possible;			/* the agent can ask the JVM for it */
	int on;
	int failed;			/* an error while this request stands */
	uint64_t interval;		/* alloc: the one set */
} evs[EV_N] = {
	[EV_ALLOC] = { .name = "allocation", .flag = CM_F_ALLOC_ON },
	[EV_LOCK] = { .name = "lock", .flag = CM_F_LOCK_ON },
};

static jvmtiEnv *jv;
static int inited;

static void ev_caps(int e, jvmtiCapabilities *c)
{
	memset(c, 0, sizeof(*c));
	if (e == EV_ALLOC)
		c->can_generate_sampled_object_alloc_events = 1;
	else
		c->can_generate_monitor_events = 1;
}

static jvmtiError ev_mode(int e, jvmtiEventMode mode)
{
	jvmtiError err;

	if (e == EV_ALLOC)
		return (*jv)->SetEventNotificationMode(jv, mode,
				JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	err = (*jv)->SetEventNotificationMode(jv, mode,
			JVMTI_EVENT_MONITOR_CONTENDED_ENTER, NULL);
	if (!err || mode == JVMTI_DISABLE) {
		jvmtiError e2 = (*jv)->SetEventNotificationMode(jv, mode,
				JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, NULL);

		if (!err)
			err = e2;
	}
	return err;
}

/* the events off and the capability given back; 0 or the first error */
static jvmtiError ev_off(int e)
{
	jvmtiCapabilities c;
	jvmtiError err, e2;

	err = ev_mode(e, JVMTI_DISABLE);
	/*
	 * Given back: HotSpot's can_generate_sampled_object_alloc_events is
	 * a solo capability (one environment at a time), so while held no
	 * other agent of the JVM could sample allocations. Neither capability
	 * costs the JVM anything by itself: the enabled events do.
	 */
	ev_caps(e, &c);
	e2 = (*jv)->RelinquishCapabilities(jv, &c);
	cmw__clear_flags(evs[e].flag);
	evs[e].on = 0;
	return err ? err : e2;
}

static int sampling_interval(uint64_t interval)
{
	return interval > INT32_MAX ? INT32_MAX : (int)interval;
}

/* one warn line: the event stays off until its request goes away */
static void ev_fail(int e, const char *what, jvmtiError err)
{
	evs[e].failed = 1;
	ev_off(e);
	log_warn("%s events off: %s failed (JVMTI error %d)", evs[e].name,
		 what, (int)err);
}

static void ev_on(int e, uint64_t interval)
{
	jvmtiCapabilities c;
	jvmtiError err;

	ev_caps(e, &c);
	err = (*jv)->AddCapabilities(jv, &c);
	if (err) {
		ev_fail(e, "AddCapabilities", err);
		return;
	}
	if (e == EV_ALLOC) {
		interval = (uint64_t)sampling_interval(interval);
		err = (*jv)->SetHeapSamplingInterval(jv, (jint)interval);
		if (err) {
			ev_fail(e, "SetHeapSamplingInterval", err);
			return;
		}
		evs[e].interval = interval;
		__atomic_store_n(&alloc_interval, interval, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&lock_since_ns, cmw__now_ns(), __ATOMIC_RELEASE);
	}
	err = ev_mode(e, JVMTI_ENABLE);
	if (err) {
		ev_fail(e, "SetEventNotificationMode", err);
		return;
	}
	evs[e].on = 1;
	cmw__set_flags(evs[e].flag);
	if (e == EV_ALLOC)
		log_info("allocation events on: one sample every %llu bytes",
			 (unsigned long long)interval);
	else
		log_info("lock events on: contended monitor enters");
}

static void ev_update(int e, int want, uint64_t interval)
{
	struct ev *v = &evs[e];
	jvmtiError err;

	if (!want) {
		if (v->on) {
			err = ev_off(e);
			if (err)
				log_warn("%s events off, with JVMTI error %d",
					 v->name, (int)err);
			else
				log_info("%s events off: no recorder asks",
					 v->name);
		}
		v->failed = 0;
		return;
	}
	if (v->failed || !v->possible)
		return;
	if (!v->on) {
		ev_on(e, interval);
		return;
	}
	if (e != EV_ALLOC ||
	    (uint64_t)sampling_interval(interval) == v->interval)
		return;
	interval = (uint64_t)sampling_interval(interval);
	err = (*jv)->SetHeapSamplingInterval(jv, (jint)interval);
	if (err) {
		ev_fail(e, "SetHeapSamplingInterval", err);
		return;
	}
	v->interval = interval;
	__atomic_store_n(&alloc_interval, interval, __ATOMIC_RELEASE);
	log_info("allocation events: one sample every %llu bytes now",
		 (unsigned long long)interval);
}

void jev__init(jvmtiEnv *jvmti, JNIEnv *jni)
{
	jvmtiCapabilities pc;
	jclass tc;

	jv = jvmti;
	tc = jni ? (*jni)->FindClass(jni, "java/lang/Thread") : NULL;
	if (tc) {
		tid_fid = (*jni)->GetFieldID(jni, tc, "tid", "J");
		(*jni)->DeleteLocalRef(jni, tc);
	}
	if (jni && (*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	memset(&pc, 0, sizeof(pc));
	if ((*jv)->GetPotentialCapabilities(jv, &pc)) {
		log_warn("JVM events off: GetPotentialCapabilities failed");
		return;
	}
	/*
	 * Sampled allocations are a solo capability in HotSpot: another
	 * agent may hold it now and give it back later, so it is asked for
	 * at each request (a refusal is that request's one warn line).
	 */
	evs[EV_ALLOC].possible = 1;
	/* a wait is timed by the waiting thread's tid */
	evs[EV_LOCK].possible = pc.can_generate_monitor_events && tid_fid;
	if (!pc.can_generate_sampled_object_alloc_events &&
	    !evs[EV_LOCK].possible) {
		log_info("JVM events not available here: requests not answered");
		return;
	}
	inited = 1;
	cmw__set_flags(CM_F_EVENTS);
	log_info("JVM events answered: allocations %s, locks %s",
		 pc.can_generate_sampled_object_alloc_events ? "yes" :
		 "not now (another agent holds them)",
		 evs[EV_LOCK].possible ? "yes" : "no");
}

void jev__poll(void)
{
	uint64_t at = 0;
	int r;

	if (!inited)
		return;
	r = cmw__ctl_query(CM_CTL_ALLOC + 1, CM_CTL_ALLOC_MAX, &at);
	ev_update(EV_ALLOC, r == 1, r == 1 ? at - CM_CTL_ALLOC : 0);
	r = cmw__ctl_query(CM_CTL_LOCK, 1, &at);
	ev_update(EV_LOCK, r == 1, 0);
}

void jev__stop(void)
{
	if (!inited)
		return;
	for (int e = 0; e < EV_N; e++)
		if (evs[e].on)
			ev_off(e);
	inited = 0;
}
