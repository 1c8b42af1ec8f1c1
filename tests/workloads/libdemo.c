// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* JNI side of the demo (Demo.java): C frames under a Java native method. */
#include <jni.h>

__attribute__((noinline)) static unsigned long demo_checksum(unsigned long x,
							     int rounds)
{
	for (int i = 0; i < rounds; i++)
		x = (x ^ (x >> 3)) * 0x100000001b3ul + (unsigned long)i;
	return x;
}

__attribute__((noinline)) static unsigned long demo_native_work(int rounds)
{
	return demo_checksum(0xcbf29ce484222325ul, rounds) + 1;
}

JNIEXPORT jlong JNICALL Java_Demo_nativeWork(JNIEnv *env, jclass cls,
					     jint rounds)
{
	(void)env;
	(void)cls;
	return (jlong)demo_native_work(rounds);
}
