// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Decoder workload: a thread "chain" runs a fixed chain of 22 distinct small
 * static methods c01 -> c02 -> ... -> c22 -> leaf, with leaf a hot loop,
 * called from Chain$Worker.run (started by java.lang.Thread.run). C2
 * inlines some of the chain into its callers (MaxInlineLevel cuts it), so
 * samples hold java and java_inlined frames. Each chain method calls the
 * next at exactly one call site: tests take the expected bcis from javap.
 *
 * Usage: java Chain [seconds]   (default 600)
 * Prints "READY" once warmed up, then "JSTACK <frames>" lines: the JVM's own
 * view of the chain thread (Thread.getStackTrace, top first, entries
 * class.method:line separated by ';') whenever its top frame is leaf, for
 * the cross-check.
 */
public class Chain {
	static volatile boolean stop;
	static volatile long sink;

	static int leaf(int x) {
		int s = x;
		for (int i = 0; i < 100000; i++) {
			s = s * 31 + i;
			s ^= s >>> 7;
		}
		return s;
	}
	static int c22(int x) {
		return leaf(x - 155) + 22;
	}
	static int c21(int x) {
		return c22(x ^ 148) + 21;
	}
	static int c20(int x) {
		return c21(x + 141) + 20;
	}
	static int c19(int x) {
		return c20(x + 134) * 3;
	}
	static int c18(int x) {
		return c19(x | 127) + 18;
	}
	static int c17(int x) {
		return c18(x - 120) + 17;
	}
	static int c16(int x) {
		return c17(x ^ 113) + 16;
	}
	static int c15(int x) {
		return c16(x + 106) + 15;
	}
	static int c14(int x) {
		return c15(x + 99) * 3;
	}
	static int c13(int x) {
		return c14(x | 92) + 13;
	}
	static int c12(int x) {
		return c13(x - 85) + 12;
	}
	static int c11(int x) {
		return c12(x ^ 78) + 11;
	}
	static int c10(int x) {
		return c11(x + 71) + 10;
	}
	static int c09(int x) {
		return c10(x + 64) * 3;
	}
	static int c08(int x) {
		return c09(x | 57) + 8;
	}
	static int c07(int x) {
		return c08(x - 50) + 7;
	}
	static int c06(int x) {
		return c07(x ^ 43) + 6;
	}
	static int c05(int x) {
		return c06(x + 36) + 5;
	}
	static int c04(int x) {
		return c05(x + 29) * 3;
	}
	static int c03(int x) {
		return c04(x | 22) + 3;
	}
	static int c02(int x) {
		return c03(x - 15) + 2;
	}
	static int c01(int x) {
		return c02(x ^ 8) + 1;
	}

	static final class Worker implements Runnable {
		public void run() {
			long acc = 0;
			while (!stop)
				acc += c01((int)acc);
			sink = acc;
		}
	}

	public static void main(String[] args) throws Exception {
		int secs = args.length > 0 ? Integer.parseInt(args[0]) : 600;
		Thread t = new Thread(new Worker(), "chain");
		t.setDaemon(true);
		t.start();
		/* garbage, so that GC threads (JVM-internal) show up too */
		Thread g = new Thread(() -> {
			Object[] keep = new Object[1 << 17];
			for (int i = 0; !stop; i++) {
				keep[(i * 7919) & 0x1ffff] = new byte[512];
				if ((i & 16383) == 0)
					try { Thread.sleep(5); } catch (InterruptedException e) { return; }
			}
		}, "alloc");
		g.setDaemon(true);
		g.start();
		Thread.sleep(3000);	/* warm up: let C1/C2 compile the chain */
		System.out.println("READY");
		System.out.flush();
		long end = System.nanoTime() + secs * 1_000_000_000L;
		int printed = 0;
		while (System.nanoTime() < end) {
			Thread.sleep(200);
			if (printed >= 5)
				continue;
			StackTraceElement[] st = t.getStackTrace();
			if (st.length == 0 || !st[0].getMethodName().equals("leaf"))
				continue;
			StringBuilder b = new StringBuilder("JSTACK ");
			for (int i = 0; i < st.length; i++) {
				if (i > 0)
					b.append(';');
				b.append(st[i].getClassName()).append('.')
				 .append(st[i].getMethodName()).append(':')
				 .append(st[i].getLineNumber());
			}
			System.out.println(b);
			System.out.flush();
			printed++;
		}
		stop = true;
		t.join();
	}
}
