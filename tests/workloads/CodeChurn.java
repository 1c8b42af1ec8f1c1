// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Code-map churn workload: the main thread loads CodeChurn$Plugin again and
// again, each time in a fresh class loader (so each round is a new class
// with new methods), runs it hot until C1 and C2 compile it, changes its
// type profile (a second and third Shape: the monomorphic inlining
// deoptimises), drops it, and every few rounds collects so the classes and
// their compiled code unload.
// Usage: java CodeChurn SECONDS
//   prints READY, then "ROUNDS n" at the end.
import java.net.URL;
import java.net.URLClassLoader;
import java.util.function.IntUnaryOperator;

public class CodeChurn {
	public interface Shape { int area(int x); }
	public static final class Square implements Shape {
		public int area(int x) { return x * x + 1; }
	}
	public static final class Circle implements Shape {
		public int area(int x) { return 3 * x * x; }
	}
	public static final class Tri implements Shape {
		public int area(int x) { return x * (x + 1) / 2; }
	}

	/* loaded fresh in every round: its code is new code every time */
	public static class Plugin implements IntUnaryOperator, Runnable {
		Shape[] shapes = { new Square() };

		public int applyAsInt(int n) {
			int acc = 0;
			for (int i = 0; i < n; i++)
				acc += shapes[i % shapes.length].area(i & 1023);
			return acc;
		}

		/* a wider type profile: the code that inlined Square goes */
		public void run() {
			shapes = new Shape[] { new Square(), new Circle(), new Tri() };
		}
	}

	static volatile int sink;

	static int hot(IntUnaryOperator op, int rounds) {
		int acc = 0;
		for (int r = 0; r < rounds; r++)
			acc += op.applyAsInt(5000);
		return acc;
	}

	static void churnOnce(URL where) throws Exception {
		URLClassLoader cl = new URLClassLoader(new URL[] { where }, null);
		Object o = cl.loadClass("CodeChurn$Plugin").getDeclaredConstructor()
			.newInstance();
		IntUnaryOperator op = (IntUnaryOperator) o;

		sink += hot(op, 400);
		((Runnable) o).run();
		sink += hot(op, 400);
		cl.close();
	}

	public static void main(String[] args) throws Exception {
		long secs = args.length > 0 ? Long.parseLong(args[0]) : 30;
		long end = System.nanoTime() + secs * 1_000_000_000L;
		URL where = CodeChurn.class.getProtectionDomain().getCodeSource()
			.getLocation();
		long rounds = 0;

		System.out.println("READY");
		System.out.flush();
		while (System.nanoTime() < end) {
			churnOnce(where);
			if (++rounds % 16 == 0)
				System.gc();	/* the dropped loaders' classes unload */
		}
		System.out.println("ROUNDS " + rounds);
	}
}
