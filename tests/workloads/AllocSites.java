// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Allocation-profile workload (record -e alloc): one thread "alloc-worker"
 * allocates at three known sites and counts, itself, what each allocated.
 *
 *   AllocSites.bytesSite   byte[3056]        3072 bytes each
 *   AllocSites.intsSite    int[252]          1024 bytes each
 *   AllocSites.cellsBatch  64 x AllocSites$Cell (16 bytes each), 1024 bytes
 *
 * once each per round, so bytesSite allocates 3x the bytes of intsSite and
 * of cellsBatch: shares 60 / 20 / 20 %. The call chain is fixed:
 * Thread.run -> AllocSites$Worker.run -> AllocSites.hotLoop -> site. hotLoop,
 * bytesSite and intsSite are hot and get compiled (C2, bytesSite and
 * intsSite usually inlined into hotLoop); cellsBatch is meant to stay
 * interpreted: the test passes
 *   -XX:CompileCommand=exclude,AllocSites::cellsBatch
 *   -XX:CompileCommand=dontinline,AllocSites::cellsBatch
 * (exclude alone also keeps a method out of its callers on HotSpot; the
 * second says it outright). Every object goes into a sink array read by
 * nobody, so escape analysis cannot remove the allocations.
 *
 * Sizes are HotSpot's with compressed class pointers (the default below a
 * 32 GiB heap) and without compact object headers (the default on JDK 17
 * and 25): an array is a 16-byte header (mark word, narrow klass, length)
 * plus its elements, rounded up to 8; a Cell is a 12-byte header plus one
 * int. The workload computes its truth from the array lengths with that
 * rule; with other header layouts the figures are estimates.
 *
 * Usage: java AllocSites GOFILE [SECONDS [LINGER [MINBYTES]]]   (default
 * 5, 0, 0; MINBYTES: the measured phase goes on past SECONDS until the
 * sites have allocated that much, up to 12 times SECONDS)
 * Prints "READY <pid>" once warmed up (the sites are called with empty
 * arrays and no cells first: ~20 MB in all), waits for GOFILE
 * to exist, allocates for SECONDS, then prints one line per site
 *   SITE <method> <class> <objects> <bytes>
 * and "DONE <rounds> rounds <ms> ms", and exits after LINGER more seconds
 * (a recorder can then end while the JVM still runs).
 */
import java.nio.file.Files;
import java.nio.file.Path;

public class AllocSites {
	static final int BYTES_LEN = 3056;	/* 16 + 3056 = 3072 */
	static final int INTS_LEN = 252;	/* 16 + 4 * 252 = 1024 */
	static final int CELLS = 64;		/* 64 x 16 = 1024 */
	/* warm-up rounds (with lengths 0 and no cells: 32 bytes a round) */
	static final int WARMUP_ROUNDS = 300000;

	record Cell(int v) {
	}

	static final Object[] SINK = new Object[4096];
	static volatile boolean stop;
	static volatile long rounds;
	/* rounds so far, published every 1024: enough bytes yet? */
	static volatile long progress;
	static final long ROUND_BYTES = 3072 + 1024 + 64 * 16;

	/* what each site allocated, counted by the worker itself */
	static long bytesObjs, bytesBytes, intsObjs, intsBytes, cellObjs,
		cellBytes;

	static long arrayBytes(long len, long elem) {
		return (16 + len * elem + 7) & ~7L;
	}

	static byte[] bytesSite(int n) {
		return new byte[n];
	}

	static int[] intsSite(int n) {
		return new int[n];
	}

	/* interpreted (excluded from compilation by the test's flags) */
	static void cellsBatch(int n, int base) {
		Object[] s = SINK;
		for (int i = 0; i < n; i++)
			s[(base + i) & (s.length - 1)] = new Cell(base + i);
	}

	/* one round per iteration; counts what it allocated */
	static void hotLoop(int bytesLen, int intsLen, int cells, boolean count) {
		Object[] s = SINK;
		int k = 0;
		long r = 0;
		while (!stop) {
			s[k & (s.length - 1)] = bytesSite(bytesLen);
			s[(k + 1) & (s.length - 1)] = intsSite(intsLen);
			cellsBatch(cells, k + 2);
			k += 2 + cells;
			r++;
			if ((r & 1023) == 0 && count)
				progress = r;
			if (!count && r >= WARMUP_ROUNDS)
				break;
		}
		if (count) {
			bytesObjs += r;
			bytesBytes += r * arrayBytes(bytesLen, 1);
			intsObjs += r;
			intsBytes += r * arrayBytes(intsLen, 4);
			cellObjs += r * cells;
			cellBytes += r * cells * 16L;
			rounds += r;
		}
	}

	static final class Worker implements Runnable {
		volatile boolean measure;

		@Override
		public void run() {
			if (!measure) {
				hotLoop(0, 0, 0, false);
				return;
			}
			hotLoop(BYTES_LEN, INTS_LEN, CELLS, true);
		}
	}

	public static void main(String[] args) throws Exception {
		if (args.length < 1) {
			System.err.println("usage: AllocSites GOFILE [SECONDS [LINGER [MINBYTES]]]");
			System.exit(2);
		}
		Path go = Path.of(args[0]);
		double secs = args.length > 1 ? Double.parseDouble(args[1]) : 5;
		double linger = args.length > 2 ? Double.parseDouble(args[2]) : 0;
		long minBytes = args.length > 3 ? Long.parseLong(args[3]) : 0;

		/* Cell loaded and initialized now, not by the first cellsBatch
		 * of the measured phase (class loading allocates too) */
		SINK[0] = new Cell(-1);
		/* warm-up: the same code with empty arrays and no cells (~20 MB
		 * in all, a handful of samples should a recorder be on already),
		 * on a thread of its own, then time for C2 to finish */
		for (int i = 0; i < 2; i++) {
			Thread t = new Thread(new Worker(), "alloc-warmup");
			t.start();
			t.join();
		}
		Thread.sleep(1000);
		System.out.println("READY " + ProcessHandle.current().pid());
		System.out.flush();
		while (!Files.exists(go))
			Thread.sleep(20);

		Worker w = new Worker();
		w.measure = true;
		Thread t = new Thread(w, "alloc-worker");
		long t0 = System.nanoTime();
		t.start();
		Thread.sleep((long) (secs * 1000));
		/* on a busy host: on until MINBYTES (a sample count the shares
		 * can be judged by), 12 times SECONDS at most */
		while (progress * ROUND_BYTES < minBytes &&
		       System.nanoTime() - t0 < (long) (secs * 12e9))
			Thread.sleep(50);
		stop = true;
		t.join();
		long ms = (System.nanoTime() - t0) / 1_000_000;
		System.out.println("SITE bytesSite byte[] " + bytesObjs + " " + bytesBytes);
		System.out.println("SITE intsSite int[] " + intsObjs + " " + intsBytes);
		System.out.println("SITE cellsBatch AllocSites$Cell " + cellObjs + " " + cellBytes);
		System.out.println("DONE " + rounds + " rounds " + ms + " ms");
		System.out.flush();
		if (linger > 0)
			Thread.sleep((long) (linger * 1000));
	}
}
