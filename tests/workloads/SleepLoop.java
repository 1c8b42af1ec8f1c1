/*
 * Attach-test workload: prints READY, then stays alive for N seconds
 * (argument, default 60) doing a little work so some code gets compiled.
 */
public class SleepLoop {
	static long spin(long x) {
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	public static void main(String[] args) throws Exception {
		long secs = args.length > 0 ? Long.parseLong(args[0]) : 60;
		long end = System.nanoTime() + secs * 1_000_000_000L;
		long x = 1;

		System.out.println("READY");
		System.out.flush();
		while (System.nanoTime() < end) {
			x = spin(x);
			Thread.sleep(20);
		}
		if (x == 42)
			System.out.println("unlikely");
	}
}
