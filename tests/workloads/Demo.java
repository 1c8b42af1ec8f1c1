// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The bundled demo (make demo): three threads with a recognisable mix.
 *   "compute"  Java compute: a small call tree that C2 compiles and inlines
 *   "jni"      a native method whose C code (libdemo.so) spins in C frames
 *   "io"       many small writes and reads of a temporary file (syscalls)
 * Usage: java -Djava.library.path=DIR Demo [seconds]
 */
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.File;

public class Demo {
	static volatile boolean stop;
	static volatile long sink;

	static native long nativeWork(int rounds);

	/* ---- compute ---- */
	static long mix(long x) {
		x ^= x << 13;
		x ^= x >>> 7;
		return x ^ (x << 17);
	}
	static long hashRange(long seed, int n) {
		long h = seed;
		for (int i = 0; i < n; i++)
			h = mix(h + i);
		return h;
	}
	static double polynomial(double x) {
		double r = 0;
		for (int i = 0; i < 64; i++)
			r = r * x + i;
		return r;
	}
	static void computeLoop() {
		long acc = 1;
		while (!stop) {
			acc += hashRange(acc, 2000);
			acc += (long)polynomial(acc & 0xff);
		}
		sink = acc;
	}

	/* ---- JNI ---- */
	static void jniLoop() {
		while (!stop)
			sink += nativeWork(200000);
	}

	/* ---- syscalls ---- */
	static void ioLoop() throws IOException {
		File f = File.createTempFile("asgst-demo", ".bin");
		f.deleteOnExit();
		byte[] buf = new byte[512];
		try (RandomAccessFile raf = new RandomAccessFile(f, "rw")) {
			while (!stop) {
				raf.seek(0);
				for (int i = 0; i < 64; i++)
					raf.write(buf);
				raf.seek(0);
				for (int i = 0; i < 64; i++)
					raf.read(buf);
			}
		}
		f.delete();
	}

	public static void main(String[] args) throws Exception {
		int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
		System.loadLibrary("demo");
		Thread[] t = {
			new Thread(Demo::computeLoop, "compute"),
			new Thread(Demo::jniLoop, "jni"),
			new Thread(() -> {
				try {
					ioLoop();
				} catch (IOException e) {
					throw new RuntimeException(e);
				}
			}, "io"),
		};
		for (Thread x : t)
			x.start();
		System.out.println("READY " + ProcessHandle.current().pid());
		System.out.flush();
		Thread.sleep(seconds * 1000L);
		stop = true;
		for (Thread x : t)
			x.join();
	}
}
