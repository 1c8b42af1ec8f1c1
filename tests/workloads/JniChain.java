// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Decoder workload for JNI: thread "jni" runs
 *   Thread.run -> JniChain$Jni.run -> j1 -> j2 -> j3 -> nativeChain (native)
 *   -> Java_JniChain_nativeChain -> jc_a -> jc_b -> jc_c -> jc_leaf (C, hot)
 * and thread "jnicb" runs Java -> C -> Java:
 *   Thread.run -> JniChain$Cb.run -> k1 -> k2 -> nativeCallback (native)
 *   -> Java_JniChain_nativeCallback -> jcb_a -> jcb_b -> (JNI call)
 *   -> JniChain.javaLeaf (Java, hot)
 * C code in libjnichain.so (tests/workloads/libjnichain.c, frame pointers).
 *
 * Usage: java -Djava.library.path=DIR JniChain [seconds] [jni|cb|both]
 */
public class JniChain {
	static volatile boolean stop;
	static volatile long sink;

	static native int nativeChain(int x);
	static native int nativeCallback(int x);

	static int javaLeaf(int x) {
		int s = x;
		for (int i = 0; i < 1000000; i++) {
			s = s * 31 + i;
			s ^= s >>> 9;
		}
		return s;
	}

	static int j3(int x) { return nativeChain(x + 3) + 1; }
	static int j2(int x) { return j3(x ^ 2) + 2; }
	static int j1(int x) { return j2(x - 1) + 3; }
	static int k2(int x) { return nativeCallback(x + 2) + 1; }
	static int k1(int x) { return k2(x ^ 1) + 2; }

	static final class Jni implements Runnable {
		public void run() {
			long acc = 0;
			while (!stop)
				acc += j1((int)acc);
			sink = acc;
		}
	}

	static final class Cb implements Runnable {
		public void run() {
			long acc = 0;
			while (!stop)
				acc += k1((int)acc);
			sink = acc;
		}
	}

	public static void main(String[] args) throws Exception {
		int secs = args.length > 0 ? Integer.parseInt(args[0]) : 600;
		String mode = args.length > 1 ? args[1] : "both";
		System.loadLibrary("jnichain");
		if (!mode.equals("cb")) {
			Thread t = new Thread(new Jni(), "jni");
			t.setDaemon(true);
			t.start();
		}
		if (!mode.equals("jni")) {
			Thread t = new Thread(new Cb(), "jnicb");
			t.setDaemon(true);
			t.start();
		}
		Thread.sleep(1000);
		System.out.println("READY");
		System.out.flush();
		Thread.sleep(secs * 1000L);
		stop = true;
	}
}
