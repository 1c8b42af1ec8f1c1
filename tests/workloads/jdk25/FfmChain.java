// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Decoder workload for FFM (java.lang.foreign, JDK 22+) crossings, C code
 * in libffmchain.so (tests/workloads/libffmchain.c):
 *   thread "ffm":     Thread.run -> FfmChain$Plain.run -> p1 -> p2 -> p3
 *                     -> (downcall) ffm_chain -> fc_a -> fc_b -> fc_leaf
 *   thread "ffmcrit": Thread.run -> FfmChain$Crit.run -> q1 -> q2 -> q3
 *                     -> (critical downcall) ffm_crit_chain -> fk_a -> fk_b
 *                     -> fk_leaf
 *   thread "ffmup":   Thread.run -> FfmChain$Up.run -> u1 -> u2
 *                     -> (downcall) ffm_callback -> fu_a -> fu_b
 *                     -> (upcall) FfmChain.upLeaf (Java, hot)
 * Usage: java --enable-native-access=ALL-UNNAMED FfmChain LIB [seconds]
 */
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

public class FfmChain {
	static volatile boolean stop;
	static volatile long sink;
	static MethodHandle chain, crit, callback;
	static MemorySegment upStub;

	static int upLeaf(int x) {
		int s = x;
		for (int i = 0; i < 1000000; i++) {
			s = s * 31 + i;
			s ^= s >>> 9;
		}
		return s;
	}

	static int p3(int x) throws Throwable { return (int)chain.invokeExact(x + 3) + 1; }
	static int p2(int x) throws Throwable { return p3(x ^ 2) + 2; }
	static int p1(int x) throws Throwable { return p2(x - 1) + 3; }
	static int q3(int x) throws Throwable { return (int)crit.invokeExact(x + 5) + 1; }
	static int q2(int x) throws Throwable { return q3(x ^ 4) + 2; }
	static int q1(int x) throws Throwable { return q2(x - 3) + 3; }
	static int u2(int x) throws Throwable {
		return (int)callback.invokeExact(upStub, x + 2) + 1;
	}
	static int u1(int x) throws Throwable { return u2(x ^ 1) + 2; }

	static void fail(Throwable e) {
		e.printStackTrace();
		System.exit(2);
	}

	static final class Plain implements Runnable {
		public void run() {
			long acc = 0;
			try {
				while (!stop)
					acc += p1((int)acc);
			} catch (Throwable e) {
				fail(e);
			}
			sink = acc;
		}
	}

	static final class Crit implements Runnable {
		public void run() {
			long acc = 0;
			try {
				while (!stop)
					acc += q1((int)acc);
			} catch (Throwable e) {
				fail(e);
			}
			sink = acc;
		}
	}

	static final class Up implements Runnable {
		public void run() {
			long acc = 0;
			try {
				while (!stop)
					acc += u1((int)acc);
			} catch (Throwable e) {
				fail(e);
			}
			sink = acc;
		}
	}

	static void start(String name, Runnable r) {
		Thread t = new Thread(r, name);
		t.setDaemon(true);
		t.start();
	}

	public static void main(String[] args) throws Throwable {
		Linker linker = Linker.nativeLinker();
		SymbolLookup lib = SymbolLookup.libraryLookup(Path.of(args[0]),
							      Arena.global());
		int secs = args.length > 1 ? Integer.parseInt(args[1]) : 600;
		FunctionDescriptor ii = FunctionDescriptor.of(JAVA_INT, JAVA_INT);

		chain = linker.downcallHandle(lib.find("ffm_chain").orElseThrow(), ii);
		crit = linker.downcallHandle(lib.find("ffm_crit_chain").orElseThrow(),
					     ii, Linker.Option.critical(false));
		callback = linker.downcallHandle(lib.find("ffm_callback").orElseThrow(),
						 FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
		MethodHandle leaf = MethodHandles.lookup().findStatic(FfmChain.class,
			"upLeaf", MethodType.methodType(int.class, int.class));
		upStub = linker.upcallStub(leaf, ii, Arena.global());

		start("ffm", new Plain());
		start("ffmcrit", new Crit());
		start("ffmup", new Up());
		Thread.sleep(1000);
		System.out.println("READY");
		System.out.flush();
		Thread.sleep(secs * 1000L);
		stop = true;
	}
}
