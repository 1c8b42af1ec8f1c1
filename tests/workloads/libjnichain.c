// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JNI library of tests/workloads/JniChain.java: a known chain of C
 * functions under each native method (built with frame pointers and no
 * inlining by the Makefile, so the chain stays as written).
 */
#include <jni.h>

static volatile int c_sink;

/* a call keeps jc_leaf from being a leaf, which gcc would build without a
 * frame pointer (-momit-leaf-frame-pointer), hiding its caller */
__attribute__((noinline)) void jc_sink(int s)
{
	c_sink = s;
}

__attribute__((noinline)) int jc_leaf(int x)
{
	int s = x;

	for (int i = 0; i < 200000; i++) {
		s = s * 31 + i;
		s ^= (int)((unsigned)s >> 9);
	}
	jc_sink(s);
	return s;
}

__attribute__((noinline)) int jc_c(int x)
{
	return jc_leaf(x + 3) + 1;
}

__attribute__((noinline)) int jc_b(int x)
{
	return jc_c(x ^ 2) + 2;
}

__attribute__((noinline)) int jc_a(int x)
{
	return jc_b(x - 1) + 3;
}

JNIEXPORT jint JNICALL Java_JniChain_nativeChain(JNIEnv *env, jclass cls,
						  jint x)
{
	(void)env;
	(void)cls;
	return jc_a(x) + 4;
}

__attribute__((noinline)) int jcb_b(JNIEnv *env, jclass cls, int x)
{
	static jmethodID leaf;

	if (!leaf)
		leaf = (*env)->GetStaticMethodID(env, cls, "javaLeaf", "(I)I");
	if (!leaf)
		return 0;
	return (*env)->CallStaticIntMethod(env, cls, leaf, x + 1) + 1;
}

__attribute__((noinline)) int jcb_a(JNIEnv *env, jclass cls, int x)
{
	return jcb_b(env, cls, x ^ 5) + 2;
}

JNIEXPORT jint JNICALL Java_JniChain_nativeCallback(JNIEnv *env, jclass cls,
						     jint x)
{
	return jcb_a(env, cls, x) + 3;
}
