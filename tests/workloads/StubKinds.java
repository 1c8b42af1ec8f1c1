// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.zip.CRC32;

/*
 * Keeps the JVM in each kind of code it generates besides Java methods,
 * one thread per kind (named sk-KIND), so that samples of it have that
 * code at or near the top: arraycopy and other StubRoutines, runtime stubs
 * (allocation and monitor slow paths: C2's OptoRuntime stubs, or C1's
 * Runtime1 stubs with -XX:TieredStopAtLevel=1), GC barriers, i2c/c2i
 * adapters (with the interpreted methods excluded from compilation:
 * -XX:CompileCommand=exclude,StubKinds*::interp*), method handle
 * intrinsics, vtable/itable stubs, deoptimization (classes loaded afresh,
 * compiled, then trapped) and small compiled frames (prologue/epilogue).
 *
 *   java [flags] StubKinds SECONDS
 */
public class StubKinds {
	static volatile long sink;
	static volatile boolean stop;

	/* ---- StubRoutines: arraycopy, CRC32, math ---- */
	static void arraycopy() {
		byte[] a = new byte[8192], b = new byte[8192];
		short[] s = new short[4096], t = new short[4096];
		int i = 0;
		while (!stop) {
			int n = 256 + (i & 4095);
			System.arraycopy(a, i & 7, b, 0, n);	/* disjoint */
			System.arraycopy(b, 0, b, 3, n);	/* conjoint */
			System.arraycopy(s, 0, t, i & 3, n / 2);
			i++;
		}
		sink += b[5] + t[1];
	}

	static void crc() {
		byte[] buf = new byte[2048];
		CRC32 c = new CRC32();
		double d = 0;
		int i = 0;
		while (!stop) {
			buf[i & 2047] = (byte)i;
			c.update(buf, 0, 512 + (i & 1023));
			d += Math.sin(i * 0.001) + Math.log(1 + i) + Math.exp(-d * 1e-9);
			i++;
		}
		sink += c.getValue() + (long)d;
	}

	/* ---- allocation slow paths (runtime stubs, then the VM) ---- */
	static void alloc() {
		Object keep = null;
		int i = 0;
		while (!stop) {
			int n = 1 << (10 + (i & 7));
			long[] big = new long[n];	/* outside the TLAB */
			int[][] m = new int[2 + (i & 3)][3 + (i & 7)];
			big[n - 1] = i;
			keep = (i & 15) == 0 ? big : m;
			i++;
		}
		sink += keep.hashCode();
	}

	/* ---- contended monitors: enter/exit slow paths ---- */
	static final Object lock = new Object();
	static long counter;

	static void monitor() {
		while (!stop) {
			synchronized (lock) {
				counter++;
				if ((counter & 63) == 0)
					lock.notifyAll();
			}
		}
	}

	/* ---- subtype checks against interfaces (secondary supers) ---- */
	interface I0 {} interface I1 {} interface I2 {} interface I3 {}
	interface I4 {} interface I5 {} interface I6 {} interface I7 {}
	static class S0 implements I0, I1, I2, I3, I4, I5, I6, I7 {}
	static class S1 implements I7, I6, I5, I4 {}
	static class S2 implements I3, I2, I1, I0 {}
	static class S3 implements I1, I3, I5, I7 {}

	static int checks(Object[] os) {
		int n = 0;
		for (Object o : os) {
			if (o instanceof I7)
				n++;
			if (o instanceof I0)
				n += 2;
			if (o instanceof I4)
				n += 3;
		}
		return n;
	}

	static void subtype() {
		Object[] os = { new S0(), new S1(), new S2(), new S3(), "x", 1 };
		Object[] dst = new Object[6];
		while (!stop) {
			sink += checks(os);
			/* checked copies of an Object[] into an I7[] */
			try {
				System.arraycopy(os, 0, dst, 0, 6);
				I7[] t = new I7[2];
				System.arraycopy(new Object[] { os[0], os[1] }, 0, t, 0, 2);
			} catch (ArrayStoreException e) {
				sink++;
			}
		}
	}

	/* ---- GC barriers: references stored into old objects ---- */
	static void barriers() {
		Object[][] old = new Object[256][];
		for (int k = 0; k < old.length; k++)
			old[k] = new Object[4096];
		int i = 0;
		while (!stop) {
			Object[] o = old[i & 255];
			o[(i * 31) & 4095] = new int[1 + (i & 15)];
			i++;
			if ((i & 0xfffff) == 0)	/* old garbage: marking runs */
				old[(i >> 20) & 255] = new Object[4096];
		}
	}

	/* ---- adapters: interpreted <-> compiled ---- */
	static int tiny(int x) {
		return x * 31 + 7;
	}

	static int interpCallee(int x) {	/* never compiled */
		return x ^ 0x5a;
	}

	static int interpLoop(int n) {		/* never compiled: i2c */
		int s = 0;
		for (int i = 0; i < n; i++)
			s += tiny(i);
		return s;
	}

	static int compiledCaller(int n) {	/* compiled: c2i */
		int s = 0;
		for (int i = 0; i < n; i++)
			s += interpCallee(i);
		return s;
	}

	static void adapters() {
		while (!stop)
			sink += interpLoop(1000) + compiledCaller(1000);
	}

	/* ---- method handles: invokeBasic, linkTo* ---- */
	static int mhA(int x) { return x + 1; }
	static int mhB(int x) { return x + 2; }
	int mhV(int x) { return x + 3; }

	static void handles() {
		try {
			MethodHandles.Lookup l = MethodHandles.lookup();
			MethodType t = MethodType.methodType(int.class, int.class);
			MethodHandle[] hs = {
				l.findStatic(StubKinds.class, "mhA", t),
				l.findStatic(StubKinds.class, "mhB", t),
				l.findVirtual(StubKinds.class, "mhV", t)
					.bindTo(new StubKinds()),
			};
			int i = 0, s = 0;
			while (!stop) {
				MethodHandle h = hs[i % 3];
				s += (int)h.invokeExact(i);
				i++;
			}
			sink += s;
		} catch (Throwable e) {
			throw new RuntimeException(e);
		}
	}

	/* ---- megamorphic calls: itable and vtable stubs ---- */
	interface Op { int f(int x); }
	static abstract class Base implements Op { abstract int g(int x); }
	static final class O1 extends Base { public int f(int x) { return x + 1; } int g(int x) { return x - 1; } }
	static final class O2 extends Base { public int f(int x) { return x * 2; } int g(int x) { return x - 2; } }
	static final class O3 extends Base { public int f(int x) { return x ^ 3; } int g(int x) { return x - 3; } }
	static final class O4 extends Base { public int f(int x) { return x | 4; } int g(int x) { return x - 4; } }
	static final class O5 extends Base { public int f(int x) { return x & 5; } int g(int x) { return x - 5; } }

	static void megamorphic() {
		Op[] ops = { new O1(), new O2(), new O3(), new O4(), new O5() };
		Base[] bs = { new O5(), new O4(), new O3(), new O2(), new O1() };
		int s = 0, i = 0;
		while (!stop) {
			s += ops[i % 5].f(i);
			s += bs[(i >> 1) % 5].g(i);
			i++;
		}
		sink += s;
	}

	/* ---- small compiled frames, not inlined ---- */
	static int leafA(int x) { return x + (x >>> 3); }
	static int leafB(int x, int y) { return leafA(x) ^ y; }

	static void prologue() {
		int s = 0, i = 0;
		while (!stop)
			s += leafB(i++, s);
		sink += s;
	}

	/* ---- deoptimization: a fresh class compiled, then trapped ---- */
	public static class Trap {
		public static int run(int[] a) {
			int s = 0;
			for (int i = 0; i < a.length; i++) {
				if (a[i] < 0)
					s += a[i] * 3 - Integer.bitCount(i);	/* rare */
				else
					s += a[i];
			}
			return s;
		}
	}

	static byte[] trapBytes() throws Exception {
		try (java.io.InputStream in = StubKinds.class.getResourceAsStream(
				"StubKinds$Trap.class")) {
			return in.readAllBytes();
		}
	}

	static void deopt() {
		try {
			byte[] code = trapBytes();
			int[] pos = new int[256], neg = new int[256];
			for (int k = 0; k < 256; k++) {
				pos[k] = k;
				neg[k] = -k;
			}
			while (!stop) {
				ClassLoader cl = new ClassLoader(null) {
					@Override
					protected Class<?> findClass(String n)
							throws ClassNotFoundException {
						if (!n.equals("StubKinds$Trap"))
							throw new ClassNotFoundException(n);
						return defineClass(n, code, 0, code.length);
					}
				};
				MethodHandle run = MethodHandles.publicLookup().findStatic(
					cl.loadClass("StubKinds$Trap"), "run",
					MethodType.methodType(int.class, int[].class));
				int s = 0;
				for (int k = 0; k < 20000; k++)
					s += (int)run.invokeExact(pos);
				for (int k = 0; k < 200; k++)
					s += (int)run.invokeExact(neg);
				sink += s;
			}
		} catch (Throwable e) {
			throw new RuntimeException(e);
		}
	}

	static void start(String name, Runnable r) {
		Thread t = new Thread(r, "sk-" + name);
		t.setDaemon(true);
		t.start();
	}

	public static void main(String[] args) throws Exception {
		int secs = args.length > 0 ? Integer.parseInt(args[0]) : 60;

		start("arraycopy", StubKinds::arraycopy);
		start("crc", StubKinds::crc);
		start("alloc", StubKinds::alloc);
		start("monitor1", StubKinds::monitor);
		start("monitor2", StubKinds::monitor);
		start("subtype", StubKinds::subtype);
		start("barriers", StubKinds::barriers);
		start("adapters", StubKinds::adapters);
		start("handles", StubKinds::handles);
		start("megamorphic", StubKinds::megamorphic);
		start("prologue", StubKinds::prologue);
		start("deopt", StubKinds::deopt);
		System.out.println("READY");
		System.out.flush();
		Thread.sleep(secs * 1000L);
		stop = true;
		Thread.sleep(200);
		System.out.println(sink);
	}
}
