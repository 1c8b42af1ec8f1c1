// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Virtual-thread workload (JDK 21+): CPU-bound virtual threads that yield
 * after every call of a known chain
 *   VtYield.c1 -> c2 -> c3 -> c4 -> leaf   (leaf: ~0.3 ms of arithmetic)
 * Run with -XX:CompileCommand=dontinline,VtYield::* so each chain method
 * stays a frame of its own, and a small carrier pool
 * (-Djdk.virtualThreadScheduler.parallelism=3: one carrier is
 * held by the never-yielding thread).
 *
 * Four kinds of callers of the chain, told apart by the loop frame:
 *  - VtYield.longLoop: LONG virtual threads that live for the whole run,
 *    called from VtYield.longEntry, which the test keeps interpreted
 *    (-XX:CompileCommand=exclude,VtYield::longEntry). A frozen stack chunk
 *    with an interpreted frame takes HotSpot's slow thaw, which brings back
 *    only the top frames after each yield (and one more frame per return):
 *    the frames below longLoop stay frozen (a cont_returnBarrier gap).
 *  - VtYield.shortLoop: SHORT virtual threads, each lives for SHORT_ITERS
 *    chain calls and is replaced by a new one; the virtual-thread entry
 *    frames are compiled during the warm-up (WARM_THREADS empty ones).
 *    HotSpot's fast thaw brings a small all-compiled chunk (< 500 words)
 *    back whole, but it is not always taken (with a JVMTI agent loaded,
 *    measured here: a gap in ~97 % of the samples), so these stacks may or
 *    may not have a gap.
 *  - VtYield.noYieldLoop: one NOYIELD virtual thread that never yields: it
 *    keeps a carrier to itself and its frames are never frozen, so its
 *    stacks never have a gap.
 *  - VtYield.platLoop: the same chain on a platform thread "plat" (no
 *    virtual thread: no enterSpecial, virtual_thread false).
 *
 * Usage: java ... VtYield [seconds] [long] [short] [noyield]
 *        (default 600 2 2 1)
 * Prints "READY" once warmed up; then "JSTACK <frames>" lines, the
 * virtual thread's own view (Thread.getStackTrace, top first,
 * class.method;...) taken inside leaf, once per kind; at the end
 * "YIELDS n SHORT_THREADS n".
 */
import java.util.concurrent.atomic.AtomicLong;

public class VtYield {
	static final int SHORT_ITERS = 40;
	static final int WARM_THREADS = 30000;
	static volatile boolean stop, warm;
	static volatile long sink;
	static final AtomicLong yields = new AtomicLong();
	static final AtomicLong spawned = new AtomicLong();
	static final AtomicLong noYieldRunning = new AtomicLong();
	static volatile int dumpLong, dumpShort, dumpNoYield;
	static final java.util.concurrent.ConcurrentLinkedQueue<String> dumps =
		new java.util.concurrent.ConcurrentLinkedQueue<>();

	static int leaf(int x, int kind) {
		int s = x;
		for (int i = 0; i < 300000; i++) {
			s = s * 31 + i;
			s ^= s >>> 7;
		}
		if (kind == 1 && dumpLong > 0) {
			dumpLong = 0;
			dump("long");
		} else if (kind == 2 && dumpShort > 0) {
			dumpShort = 0;
			dump("short");
		} else if (kind == 3 && dumpNoYield > 0) {
			dumpNoYield = 0;
			dump("noyield");
		}
		return s;
	}

	static int c4(int x, int k) { return leaf(x + 4, k) + 1; }
	static int c3(int x, int k) { return c4(x ^ 3, k) + 2; }
	static int c2(int x, int k) { return c3(x - 2, k) + 3; }
	static int c1(int x, int k) { return c2(x | 1, k) + 4; }

	static void dump(String kind) {
		StringBuilder sb = new StringBuilder("JSTACK " + kind + " ");
		StackTraceElement[] st = Thread.currentThread().getStackTrace();
		/* [0] is getStackTrace itself, [1] dump */
		for (int i = 2; i < st.length; i++) {
			if (i > 2)
				sb.append(';');
			sb.append(st[i].getClassName()).append('.')
			  .append(st[i].getMethodName());
		}
		/* printed by main: a virtual thread that contends for
		 * System.out's lock (with main's READY, or another dump)
		 * parks and unmounts on JDK 24+, which would freeze the
		 * never-yielding one's frames; a lock-free queue never blocks */
		dumps.add(sb.toString());
	}

	/* never compiled (-XX:CompileCommand=exclude,VtYield::longEntry): an
	 * interpreted frame under longLoop */
	static void longEntry() {
		longLoop();
	}

	static void longLoop() {
		long acc = 0;
		while (!stop) {
			acc += c1((int)acc, 1);
			Thread.yield();
			yields.incrementAndGet();
		}
		sink = acc;
	}

	static void shortLoop() {
		long acc = 0;
		if (warm)
			return;
		for (int i = 0; i < SHORT_ITERS && !stop; i++) {
			acc += c1((int)acc, 2);
			Thread.yield();
			yields.incrementAndGet();
		}
		sink = acc;
	}

	static void noYieldLoop() {
		long acc = 0;
		noYieldRunning.incrementAndGet();
		while (!stop)
			acc += c1((int)acc, 3);
		sink = acc;
	}

	static void platLoop() {
		long acc = 0;
		while (!stop)
			acc += c1((int)acc, 0);
		sink = acc;
	}

	public static void main(String[] args) throws Exception {
		int secs = args.length > 0 ? Integer.parseInt(args[0]) : 600;
		int nlong = args.length > 1 ? Integer.parseInt(args[1]) : 2;
		int nshort = args.length > 2 ? Integer.parseInt(args[2]) : 2;
		int nnoyield = args.length > 3 ? Integer.parseInt(args[3]) : 1;

		/* warm up the virtual-thread entry (VirtualThread.run,
		 * Continuation.enter ...) until it is compiled, while the
		 * carriers are free */
		warm = true;
		for (int i = 0; i < WARM_THREADS; i++)
			Thread.ofVirtual().start(VtYield::shortLoop).join();
		warm = false;
		/* the chain's first calls resolve its classes and constants
		 * under locks: on JDK 24+ a virtual thread that blocks on one
		 * unmounts (JEP 491), which would freeze the never-yielding
		 * one's lower frames for good. Do them here, on this thread. */
		for (int i = 0; i < 20; i++)
			sink += c1(i, 0);
		/* first, while a carrier is free: a thread started from this
		 * platform thread queues behind the yielding ones and may wait */
		for (int i = 0; i < nnoyield; i++)
			Thread.ofVirtual().name("vnoyield-" + i)
				.start(VtYield::noYieldLoop);
		/* it holds its carrier from now on: let it get there before the
		 * yielding ones fill the queues (else it may never run) */
		for (int i = 0; i < 1000 && noYieldRunning.get() < nnoyield; i++)
			Thread.sleep(10);
		/* the yielding ones are started from a virtual thread: from
		 * this platform thread they would wait in the pool's external
		 * queue, which carriers kept busy by yielding threads may not
		 * look at for seconds (whichever kind starts last starves) */
		Thread.ofVirtual().name("launcher").start(() -> {
			for (int i = 0; i < nlong; i++)
				Thread.ofVirtual().name("vlong-" + i).start(VtYield::longEntry);
			for (int i = 0; i < nshort; i++) {
				final int slot = i;
				/* a virtual thread keeps one SHORT virtual thread alive;
				 * started from a virtual thread, the new one queues on
				 * the carriers' own queues, where the yielding LONG ones
				 * are, and gets its turn */
				Thread.ofVirtual().name("spawner-" + i).start(() -> {
					long n = 0;
					while (!stop) {
						Thread v = Thread.ofVirtual()
							.name("vshort-" + slot + "-" + n++)
							.start(VtYield::shortLoop);
						try {
							v.join();
						} catch (InterruptedException e) {
							return;
						}
						spawned.incrementAndGet();
					}
				});
			}
		}).join();
		Thread p = new Thread(VtYield::platLoop, "plat");
		p.setDaemon(true);
		p.start();
		Thread.sleep(3000);	/* warm up: compile the chain, the entry */
		dumpLong = 1;
		dumpShort = 1;
		dumpNoYield = 1;
		System.out.println("READY");
		System.out.flush();
		long end = System.nanoTime() + secs * 1000000000L;
		while (System.nanoTime() < end) {
			Thread.sleep(Math.max(1, Math.min(100,
				(end - System.nanoTime()) / 1000000)));
			for (String d; (d = dumps.poll()) != null; )
				System.out.println(d);
			System.out.flush();
		}
		stop = true;
		System.out.println("YIELDS " + yields.get() + " SHORT_THREADS " +
				   spawned.get());
	}
}
