// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Lock-contention workload (record -e lock): thread "lock-holder" takes the
 * monitor of one LockHold$Guard object again and again and holds it
 * HOLD_MS (20 ms, sleeping inside the synchronized block) each time, with
 * 2 ms free between holds; three threads "lock-waiter-1..3" enter the same
 * monitor in a loop, in LockHold.contend (a synchronized block on the
 * guard), hold it WAITER_HOLD_US (200 us, spinning) and leave, then pause
 * 1 ms. So nearly every entry of a waiter is contended: it waits for the
 * holder (~20 ms) or for another waiter.
 *
 * Each waiter measures its own wait around the entry: System.nanoTime()
 * just before the synchronized block and as the first statement inside it;
 * the difference, summed over its entries, is its measured wait. A
 * profiler's contended-enter time for the waiter lies within that (the
 * measured wait adds the monitor's uncontended fast path and the spin
 * before the JVM blocks the thread, microseconds).
 *
 * The holder's stack while it waits (when a waiter holds the guard) has
 * LockHold.hold, the waiters' LockHold.contend; the chain is
 * Thread.run -> LockHold$Waiter.run -> LockHold.contend.
 *
 * Usage: java LockHold GOFILE [SECONDS [LINGER]]   (default 5, 0)
 * Prints "READY <pid>", waits for GOFILE to exist, contends for SECONDS,
 * then prints
 *   WAITER <thread> <entries> <total wait ns> <max wait ns>
 * per waiter, "HOLDER <holds> <held ns>", "DONE <total wait ns of the
 * waiters>", and exits after LINGER more seconds.
 */
import java.nio.file.Files;
import java.nio.file.Path;

public class LockHold {
	static final int HOLD_MS = 20;
	static final int WAITER_HOLD_US = 200;

	static final class Guard {
	}

	static final Guard GUARD = new Guard();
	static volatile boolean stop;
	static volatile long sink;

	/* the holder: takes the guard, sleeps HOLD_MS in it */
	static long hold() throws InterruptedException {
		synchronized (GUARD) {
			Thread.sleep(HOLD_MS);
		}
		return HOLD_MS;
	}

	/* a waiter's entry: returns the ns it waited for the guard */
	static long contend() {
		long t0 = System.nanoTime();
		synchronized (GUARD) {
			long t1 = System.nanoTime();
			long end = t1 + WAITER_HOLD_US * 1000L;
			long x = 0;
			while (System.nanoTime() < end)
				x++;
			sink = x;
			return t1 - t0;
		}
	}

	/* Runnables, so every thread's root is Thread.run */
	static final class Waiter implements Runnable {
		long entries, waitNs, maxNs;

		@Override
		public void run() {
			try {
				while (!stop) {
					long w = contend();
					entries++;
					waitNs += w;
					if (w > maxNs)
						maxNs = w;
					Thread.sleep(1);
				}
			} catch (InterruptedException e) {
				throw new RuntimeException(e);
			}
		}
	}

	static final class Holder implements Runnable {
		long holds, heldNs;

		@Override
		public void run() {
			try {
				while (!stop) {
					long t0 = System.nanoTime();
					hold();
					heldNs += System.nanoTime() - t0;
					holds++;
					Thread.sleep(2);
				}
			} catch (InterruptedException e) {
				throw new RuntimeException(e);
			}
		}
	}

	public static void main(String[] args) throws Exception {
		if (args.length < 1) {
			System.err.println("usage: LockHold GOFILE [SECONDS [LINGER]]");
			System.exit(2);
		}
		Path go = Path.of(args[0]);
		double secs = args.length > 1 ? Double.parseDouble(args[1]) : 5;
		double linger = args.length > 2 ? Double.parseDouble(args[2]) : 0;
		System.out.println("READY " + ProcessHandle.current().pid());
		System.out.flush();
		while (!Files.exists(go))
			Thread.sleep(20);

		Holder h = new Holder();
		Thread ht = new Thread(h, "lock-holder");
		Waiter[] ws = new Waiter[3];
		Thread[] wt = new Thread[ws.length];
		ht.start();
		for (int i = 0; i < ws.length; i++) {
			ws[i] = new Waiter();
			wt[i] = new Thread(ws[i], "lock-waiter-" + (i + 1));
			wt[i].start();
		}
		Thread.sleep((long) (secs * 1000));
		stop = true;
		ht.join();
		long total = 0;
		for (int i = 0; i < ws.length; i++) {
			Waiter w = ws[i];
			wt[i].join();
			total += w.waitNs;
			System.out.println("WAITER " + wt[i].getName() + " " +
					   w.entries + " " + w.waitNs + " " + w.maxNs);
		}
		System.out.println("HOLDER " + h.holds + " " + h.heldNs);
		System.out.println("DONE " + total);
		System.out.flush();
		if (linger > 0)
			Thread.sleep((long) (linger * 1000));
	}
}
