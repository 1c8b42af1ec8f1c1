// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Pinned-carrier workload (JDK 22+: FFM). Virtual threads of three kinds:
 *  - "vjni-N": jniLoop -> jniA -> jniB -> sleepInC (a JNI method that sleeps
 *    JNI_MS in C, libvtpin.so): the virtual thread never parks, its carrier
 *    blocks in nanosleep with it mounted (pinned). JFR reports nothing.
 *  - "vup-N": upLoop -> upA -> upB -> FFM downcall vp_call_upcall -> C ->
 *    upcall PinnedJni.upcallPark -> LockSupport.parkNanos(UP_MS): a park
 *    with a native frame on the stack cannot unmount, so it parks the
 *    carrier (pinned): JFR reports a jdk.VirtualThreadPinned event.
 *  - "vsleep-N": sleepLoop -> sleepA -> sleepB -> Thread.sleep(SLEEP_MS):
 *    unmounts, never pinned.
 * Run with -Djdk.virtualThreadScheduler.parallelism >= pinners + 2 so the
 * sleepers still get a carrier, -Djava.library.path=DIR (libvtpin.so) and
 * --enable-native-access=ALL-UNNAMED.
 *
 * Usage: java ... PinnedJni GOFILE PHASE_SECONDS [IDLE_SECONDS
 *                            [NJNI NUP NSLEEP]]   (default 1 2 2 4)
 * Warms up (calls with 0 ms, which neither sleep nor park), prints
 * "READY", waits for GOFILE to exist, runs the phase for PHASE_SECONDS
 * (every thread starts no new call after that), then prints
 *   PHASE phase_ns=N jni_c_sleep_ns=N jni_calls=N upcall_park_ns=N
 *         upcall_calls=N java_sleep_ns=N java_sleep_calls=N
 * (jni_c_sleep_ns is measured in C around nanosleep, upcall_park_ns and
 * java_sleep_ns in Java around parkNanos / Thread.sleep), "DONE", and exits
 * after IDLE_SECONDS (default 1) more.
 */
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

public class PinnedJni {
	static final int JNI_MS = 20, UP_MS = 30, SLEEP_MS = 10, WARM = 3000;
	static final CountDownLatch go = new CountDownLatch(1);
	static volatile long deadline;	/* System.nanoTime() end of the phase */
	static final AtomicLong upParkNs = new AtomicLong();
	static final AtomicLong upCalls = new AtomicLong();
	static final AtomicLong jSleepNs = new AtomicLong();
	static final AtomicLong jSleeps = new AtomicLong();
	static final AtomicLong jniCalls = new AtomicLong();
	static volatile long sink;
	static MethodHandle callUpcall;
	static MemorySegment upStub;

	static native int sleepInC(int ms);
	static native long cSleptNs();
	static native long cSleeps();

	/* the upcall: C calls this back, below a native frame */
	static int upcallPark(int ms) {
		if (ms > 0) {
			long t0 = System.nanoTime();
			LockSupport.parkNanos(ms * 1_000_000L);
			upParkNs.addAndGet(System.nanoTime() - t0);
			upCalls.incrementAndGet();
		}
		return ms;
	}

	static int jniB(int ms) { return sleepInC(ms) + 1; }
	static int jniA(int ms) { return jniB(ms) + 1; }

	static int upB(int ms) {
		try {
			return (int)callUpcall.invokeExact(upStub, ms) + 1;
		} catch (Throwable t) {
			throw new RuntimeException(t);
		}
	}
	static int upA(int ms) { return upB(ms) + 1; }

	static int sleepB(int ms) {
		long t0 = System.nanoTime();
		try {
			Thread.sleep(ms);
		} catch (InterruptedException e) {
			return 0;
		}
		jSleepNs.addAndGet(System.nanoTime() - t0);
		jSleeps.incrementAndGet();
		return 1;
	}
	static int sleepA(int ms) { return sleepB(ms) + 1; }

	static void awaitGo() {
		try {
			go.await();	/* parks: unmounted, not pinned */
		} catch (InterruptedException e) {
			throw new RuntimeException(e);
		}
	}

	static void jniLoop() {
		long acc = 0;
		for (int i = 0; i < WARM; i++)
			acc += jniA(0);
		awaitGo();
		while (System.nanoTime() < deadline) {
			acc += jniA(JNI_MS);
			jniCalls.incrementAndGet();
		}
		sink = acc;
	}

	static void upLoop() {
		long acc = 0;
		for (int i = 0; i < WARM; i++)
			acc += upA(0);
		awaitGo();
		while (System.nanoTime() < deadline)
			acc += upA(UP_MS);
		sink = acc;
	}

	static void sleepLoop() {
		long acc = 0;
		awaitGo();
		while (System.nanoTime() < deadline)
			acc += sleepA(SLEEP_MS);
		sink = acc;
	}

	public static void main(String[] args) throws Exception {
		Path goFile = Path.of(args[0]);
		double phase = Double.parseDouble(args[1]);
		double idle = args.length > 2 ? Double.parseDouble(args[2]) : 1;
		int njni = args.length > 3 ? Integer.parseInt(args[3]) : 2;
		int nup = args.length > 4 ? Integer.parseInt(args[4]) : 2;
		int nsleep = args.length > 5 ? Integer.parseInt(args[5]) : 4;

		System.loadLibrary("vtpin");
		Linker linker = Linker.nativeLinker();
		MemorySegment fn = SymbolLookup.loaderLookup().find("vp_call_upcall")
			.orElseThrow();
		callUpcall = linker.downcallHandle(fn, FunctionDescriptor.of(
			ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
		MethodHandle target = MethodHandles.lookup().findStatic(PinnedJni.class,
			"upcallPark", MethodType.methodType(int.class, int.class));
		upStub = linker.upcallStub(target, FunctionDescriptor.of(
			ValueLayout.JAVA_INT, ValueLayout.JAVA_INT), Arena.global());

		deadline = Long.MAX_VALUE;
		List<Thread> all = new ArrayList<>();
		for (int i = 0; i < njni; i++)
			all.add(Thread.ofVirtual().name("vjni-" + i)
				.start(PinnedJni::jniLoop));
		for (int i = 0; i < nup; i++)
			all.add(Thread.ofVirtual().name("vup-" + i)
				.start(PinnedJni::upLoop));
		for (int i = 0; i < nsleep; i++)
			all.add(Thread.ofVirtual().name("vsleep-" + i)
				.start(PinnedJni::sleepLoop));
		/* warm-up done when every pinner waits on the latch */
		while (true) {
			int waiting = 0;
			for (Thread t : all)
				if (t.getState() == Thread.State.WAITING)
					waiting++;
			if (waiting == all.size())
				break;
			Thread.sleep(10);
		}
		System.out.println("READY");
		System.out.flush();
		while (!Files.exists(goFile))
			Thread.sleep(5);
		long c0 = cSleptNs(), t0 = System.nanoTime();
		deadline = t0 + (long)(phase * 1e9);
		go.countDown();
		for (Thread t : all)
			t.join();
		long t1 = System.nanoTime();
		System.out.println("PHASE phase_ns=" + (t1 - t0) +
			" jni_c_sleep_ns=" + (cSleptNs() - c0) +
			" jni_calls=" + jniCalls.get() +
			" upcall_park_ns=" + upParkNs.get() +
			" upcall_calls=" + upCalls.get() +
			" java_sleep_ns=" + jSleepNs.get() +
			" java_sleep_calls=" + jSleeps.get());
		System.out.println("DONE");
		System.out.flush();
		Thread.sleep((long)(idle * 1000));
	}
}
