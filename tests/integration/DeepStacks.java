// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Workload of tests/integration/test_html_firstscreen.sh: a profile whose
 * widest frames are shallow and which also has a tower hundreds of frames
 * deep: the HTML page must open on the wide frames, not on an empty
 * screen at the tower's depth.
 *   thread "wide": serve -> parse / compute / encode, hot loops 1 to 3
 *     frames under Thread.run (most of the samples);
 *   thread "deep": descendA -> descendB -> descendC -> descendA ...
 *     DEPTH frames, then deepLeaf, a hot loop.
 * Usage: java DeepStacks [seconds] [depth]   (defaults 60, 300)
 * Prints "READY" once both threads run.
 */
public class DeepStacks {
	static volatile long sink;
	static volatile boolean stop;

	static long spin(long n) {
		long s = n;
		for (int i = 0; i < 200000; i++) {
			s = s * 6364136223846793005L + 1442695040888963407L;
			s ^= s >>> 13;
		}
		return s;
	}
	static long parse(long x) { return spin(x + 1); }
	static long compute(long x) { return spin(x + 2) + spin(x + 3); }
	static long encode(long x) { return spin(x + 4); }
	static long serve(long x) { return parse(x) + compute(x) + encode(x); }

	static long deepLeaf(long x) { return spin(x + 5); }
	static long descendA(int n, long x) { return n <= 0 ? deepLeaf(x) : descendB(n - 1, x + 1) + 1; }
	static long descendB(int n, long x) { return n <= 0 ? deepLeaf(x) : descendC(n - 1, x + 2) + 2; }
	static long descendC(int n, long x) { return n <= 0 ? deepLeaf(x) : descendA(n - 1, x + 3) + 3; }

	public static void main(String[] args) throws Exception {
		long secs = args.length > 0 ? Long.parseLong(args[0]) : 60;
		final int depth = args.length > 1 ? Integer.parseInt(args[1]) : 300;
		Thread wide = new Thread(() -> {
			while (!stop) sink += serve(sink);
		}, "wide");
		Thread deep = new Thread(() -> {
			while (!stop) sink += descendA(depth, sink);
		}, "deep");
		wide.start();
		deep.start();
		Thread.sleep(500);
		System.out.println("READY " + ProcessHandle.current().pid());
		System.out.flush();
		Thread.sleep(secs * 1000);
		stop = true;
		wide.join();
		deep.join();
	}
}
