// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * C side of tests/workloads/jdk25/FfmChain.java, called through the FFM
 * linker (no JNI): a known chain of C functions under each downcall, and
 * one that calls back into Java through an upcall stub. Built with frame
 * pointers and no inlining by the Makefile, so the chains stay as written.
 */
static volatile int c_sink;

/* a call keeps the leaves from being leaf functions, which gcc builds
 * without a frame pointer (-momit-leaf-frame-pointer) */
__attribute__((noinline)) void ffm_sink(int s)
{
	c_sink = s;
}

__attribute__((noinline)) static int spin(int x)
{
	int s = x;

	for (int i = 0; i < 200000; i++) {
		s = s * 31 + i;
		s ^= (int)((unsigned)s >> 9);
	}
	ffm_sink(s);
	return s;
}

/* plain downcall: ffm_chain -> fc_a -> fc_b -> fc_leaf */
__attribute__((noinline)) int fc_leaf(int x)
{
	return spin(x) + 1;
}

__attribute__((noinline)) int fc_b(int x)
{
	return fc_leaf(x ^ 2) + 2;
}

__attribute__((noinline)) int fc_a(int x)
{
	return fc_b(x - 1) + 3;
}

int ffm_chain(int x)
{
	return fc_a(x) + 4;
}

/* critical downcall (Linker.Option.critical): ffm_crit_chain -> fk_a ->
 * fk_b -> fk_leaf */
__attribute__((noinline)) int fk_leaf(int x)
{
	return spin(x) + 5;
}

__attribute__((noinline)) int fk_b(int x)
{
	return fk_leaf(x ^ 3) + 6;
}

__attribute__((noinline)) int fk_a(int x)
{
	return fk_b(x + 7) + 7;
}

int ffm_crit_chain(int x)
{
	return fk_a(x) + 8;
}

/* downcall that calls back: ffm_callback -> fu_a -> fu_b -> cb (the
 * upcall stub, then Java) */
__attribute__((noinline)) int fu_b(int (*cb)(int), int x)
{
	return cb(x + 1) + 1;
}

__attribute__((noinline)) int fu_a(int (*cb)(int), int x)
{
	return fu_b(cb, x ^ 5) + 2;
}

int ffm_callback(int (*cb)(int), int x)
{
	return fu_a(cb, x) + 3;
}
