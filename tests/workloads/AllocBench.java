// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Allocation benchmark workload (tests/bench/bench_jvm_events.sh): one
 * thread "alloc-bench" does a fixed operation again and again, which
 * allocates about 3.8 KB in objects of mixed sizes (a byte[] of 1-4 KiB,
 * an int[256], 8 small objects) and does some work between the
 * allocations (fills and sums the arrays, a multiply-add chain of WORK
 * steps), so the JVM allocates at a realistic rate (about 0.9 GB/s on one
 * core of a busy 2-vCPU VM), not as fast as it can. Every object goes
 * into a ring of live references, so escape analysis cannot remove an
 * allocation and some survive a young collection.
 *
 * A thread "alloc-ticker" prints every 100 ms
 *   T <epoch ms> <operations done so far> <CPU ns of alloc-bench so far>
 * so that a driver can take the rate over any span of the run (with a
 * recorder on or off) from the same warmed-up JVM, by wall time and by
 * the allocating thread's own CPU time (user + system: the uprobe's trap
 * and its BPF program run on that thread), which other work on a busy
 * host does not change.
 *
 * Usage: java AllocBench SECONDS
 * Prints "READY <pid> <bytes per op>" once warmed up (C2 has compiled the
 * operation), runs SECONDS more, prints "DONE <ops> <ms>" and exits.
 */
public class AllocBench {
	static final int SMALL = 8;
	/* steps of a dependent multiply-add chain an op does besides */
	static final int WORK = 2048;

	/* 16 + 4 * 2 + 4 (rounded to 24 with compressed class pointers) */
	static final class Node {
		int a, b;
		Object next;

		Node(int a, int b, Object next) {
			this.a = a;
			this.b = b;
			this.next = next;
		}
	}

	static final Object[] LIVE = new Object[1 << 14];
	static volatile long ops;
	static volatile boolean stop;
	static volatile long sink;

	/* one operation: ~5.2 KiB on average in 10 objects, and the work */
	static long op(long i) {
		int k = (int) i;
		int len = 1024 + ((k * 0x9e3779b1) >>> 20 & 3071);	/* 1-4 KiB */
		byte[] b = new byte[len];
		for (int j = 0; j < len; j += 16)
			b[j] = (byte) (j ^ k);
		int[] v = new int[256];
		long acc = 0;
		for (int j = 0; j < v.length; j++) {
			v[j] = j * k + (b[j & ~15] & 0xff);
			acc += v[j] ^ (acc >>> 7);
		}
		for (int j = 0; j < WORK; j++)
			acc = acc * 6364136223846793005L + v[j & 255];
		Object prev = v;
		for (int j = 0; j < SMALL; j++) {
			prev = new Node(j, k, prev);
			acc += ((Node) prev).a * 31 + ((Node) prev).b;
		}
		Object[] live = LIVE;
		live[k & (live.length - 1)] = b;
		live[(k + 1) & (live.length - 1)] = prev;
		return acc;
	}

	/* bytes an op allocates, HotSpot's sizes with compressed class
	 * pointers: arrays 16 + elements rounded to 8, a Node 24 */
	static long bytesPerOp() {
		long sum = 0;
		for (int k = 0; k < 4096; k++) {
			int len = 1024 + ((k * 0x9e3779b1) >>> 20 & 3071);
			sum += (16 + len + 7) & ~7L;
		}
		return sum / 4096 + (16 + 4 * 256) + SMALL * 24;
	}

	static void run(long n) {
		long acc = 0;
		long i = ops;
		for (long e = i + n; i < e; ) {
			acc += op(i);
			i++;
			if ((i & 255) == 0)
				ops = i;
			if (stop)
				break;
		}
		ops = i;
		sink = acc;
	}

	public static void main(String[] args) throws Exception {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 10;
		Thread w = new Thread(() -> {
			while (!stop)
				run(1 << 20);
		}, "alloc-bench");
		w.start();
		Thread.sleep(3000);	/* C2 */
		System.out.println("READY " + ProcessHandle.current().pid() + " " +
				   bytesPerOp());
		System.out.flush();
		java.lang.management.ThreadMXBean mx =
			java.lang.management.ManagementFactory.getThreadMXBean();
		long wid = w.getId();
		Thread t = new Thread(() -> {
			try {
				while (!stop) {
					long o = ops;
					long c = mx.getThreadCpuTime(wid);
					System.out.println("T " + System.currentTimeMillis() +
							   " " + o + " " + c);
					System.out.flush();
					Thread.sleep(100);
				}
			} catch (InterruptedException e) {
			}
		}, "alloc-ticker");
		t.setDaemon(true);
		long t0 = System.nanoTime(), o0 = ops;
		t.start();
		Thread.sleep((long) (secs * 1000));
		stop = true;
		w.join();
		System.out.println("DONE " + (ops - o0) + " " +
				   (System.nanoTime() - t0) / 1_000_000);
		System.out.flush();
	}
}
