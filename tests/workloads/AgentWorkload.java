// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Agent test workload: a known call chain for inlining (outer -> middle ->
// inner, small enough for C2 to inline), a named worker thread, and a
// deoptimisation: Shape.area() is monomorphic (only Square loaded) until
// Circle is loaded mid-run, which invalidates code that inlined it by CHA.
// Usage: java AgentWorkload SECONDS [bench]
//   bench: print "OPS n" (operations per second of the CPU loop) at the end.
public class AgentWorkload {
	static abstract class Shape { abstract int area(int x); }
	static final class Square extends Shape { int area(int x) { return x * x; } }
	static final class Circle extends Shape { int area(int x) { return 3 * x * x; } }

	static volatile int sink;

	static int inner(int x) { return (x ^ (x >>> 3)) + 7; }
	static int middle(int x) { return inner(x + 1) * 3; }
	static int outer(int x) { return middle(x) - inner(x); }

	static int shapes(Shape s, int x) { return s.area(x & 1023); }

	static long spin(long n) {
		int acc = 0;
		for (long i = 0; i < n; i++)
			acc += outer((int) i);
		sink = acc;
		return n;
	}

	/* Code of a class in its own loader: dropping the loader and
	 * collecting unloads the class and its compiled code (UNLOAD). */
	public static class Plugin implements java.util.function.IntUnaryOperator {
		public int applyAsInt(int x) { return inner(x) * 5 + (x >>> 2); }
	}

	static void unloadPlugin() throws Exception {
		java.net.URL where = AgentWorkload.class.getProtectionDomain()
			.getCodeSource().getLocation();
		java.net.URLClassLoader cl = new java.net.URLClassLoader(
			new java.net.URL[] { where }, null);
		java.util.function.IntUnaryOperator op = (java.util.function.IntUnaryOperator)
			cl.loadClass("AgentWorkload$Plugin").getDeclaredConstructor().newInstance();
		int acc = 0;
		for (int i = 0; i < 3_000_000; i++)
			acc += op.applyAsInt(i);
		sink = acc;
		op = null;
		cl.close();
		cl = null;
		for (int i = 0; i < 3; i++) {
			System.gc();
			Thread.sleep(100);
		}
	}

	public static void main(String[] args) throws Exception {
		int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
		boolean bench = args.length > 1 && args[1].equals("bench");
		Thread worker = new Thread(() -> {
			Shape sq = new Square();
			long t = System.nanoTime();
			int acc = 0;
			while (System.nanoTime() - t < 1_500_000_000L)
				for (int i = 0; i < 10000; i++)
					acc += shapes(sq, i);
			/* a second subclass: CHA dependency of shapes() breaks */
			Shape c = new Circle();
			for (int i = 0; i < 100000; i++)
				acc += shapes(c, i);
			sink = acc;
		}, "asgst-worker");
		worker.start();
		spin(2_000_000);
		unloadPlugin();
		System.out.println("READY");
		System.out.flush();
		long end = System.nanoTime() + seconds * 1_000_000_000L;
		long ops = 0, start = System.nanoTime();
		while (System.nanoTime() < end)
			ops += spin(1_000_000);
		worker.join();
		if (bench)
			System.out.printf("OPS %.0f%n", ops / ((System.nanoTime() - start) / 1e9));
	}
}
