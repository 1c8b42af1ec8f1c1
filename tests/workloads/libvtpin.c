// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Native side of tests/workloads/jdk25/PinnedJni.java: a JNI method that
 * sleeps in C (pinning the virtual thread that calls it to its carrier)
 *   Java_PinnedJni_sleepInC -> vp_sleep_mid -> vp_sleep_leaf (nanosleep)
 * and an FFM downcall target that calls back into Java
 *   vp_call_upcall -> vp_up_mid -> (upcall stub) -> PinnedJni.upcallPark
 * vp_sleep_leaf makes the nanosleep system call itself (inline "syscall"),
 * so the frame-pointer walk from the syscall sees vp_sleep_leaf and every
 * caller; a libc nanosleep has no frame pointer and would hide its caller.
 * The time spent in nanosleep is measured here (CLOCK_MONOTONIC around the
 * call) and summed for the test: PinnedJni.cSleptNs().
 */
#include <jni.h>
#include <sys/syscall.h>
#include <time.h>

static long long slept_ns;	/* summed by every caller (__atomic) */
static long long sleeps;

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

__attribute__((noinline)) long vp_sleep_leaf(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000l };
	long ret;

	/* no EINTR retry: nothing here takes signals, and a short sleep is
	 * measured as what it was */
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_nanosleep), "D"(&ts), "S"(0l)
			 : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) long vp_sleep_mid(int ms)
{
	long long t0, t1;
	long ret;

	if (ms <= 0)
		return 0;
	t0 = mono_ns();
	ret = vp_sleep_leaf(ms);
	t1 = mono_ns();
	__atomic_fetch_add(&slept_ns, t1 - t0, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sleeps, 1, __ATOMIC_RELAXED);
	return ret;
}

JNIEXPORT jint JNICALL Java_PinnedJni_sleepInC(JNIEnv *env, jclass cls,
					       jint ms)
{
	(void)env;
	(void)cls;
	return (jint)vp_sleep_mid(ms);
}

JNIEXPORT jlong JNICALL Java_PinnedJni_cSleptNs(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	return __atomic_load_n(&slept_ns, __ATOMIC_RELAXED);
}

JNIEXPORT jlong JNICALL Java_PinnedJni_cSleeps(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	return __atomic_load_n(&sleeps, __ATOMIC_RELAXED);
}

__attribute__((noinline)) int vp_up_mid(int (*cb)(int), int arg)
{
	return cb(arg + 1) + 1;
}

/* FFM downcall target: C calls back into Java through an upcall stub */
__attribute__((noinline)) int vp_call_upcall(int (*cb)(int), int arg)
{
	return vp_up_mid(cb, arg - 1) + 1;
}
