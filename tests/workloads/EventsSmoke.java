import java.util.ArrayList;
import java.util.List;

/*
 * Allocates (byte[], String, int[][], Object[]) and contends one monitor,
 * for the agent's allocation and lock events. Args: seconds, then
 * "platform" (default) or "virtual" (JDK 21+: the work runs in virtual
 * threads, started by reflection so this compiles for release 17).
 * Prints READY once the work runs.
 */
public class EventsSmoke {
	static final Object LOCK = new Object();
	static volatile Object sink;
	static volatile boolean stop;

	static void allocate() {
		List<Object> keep = new ArrayList<>();
		int i = 0;
		while (!stop) {
			keep.add(new byte[1024 + (i & 1023)]);
			keep.add("s" + i);
			keep.add(new int[4][16]);
			keep.add(new Object[32]);
			if (keep.size() > 4096) {
				sink = keep;
				keep = new ArrayList<>();
				/* a virtual thread leaves its carrier to the others */
				Thread.yield();
			}
			i++;
		}
	}

	/* holds the monitor 2 ms, asleep, so the others wait for it */
	static void contend() {
		while (!stop) {
			synchronized (LOCK) {
				try {
					Thread.sleep(2);
				} catch (InterruptedException e) {
					return;
				}
			}
		}
	}

	static Thread start(Runnable r, boolean virtual) throws Exception {
		if (virtual)
			return (Thread) Thread.class
				.getMethod("startVirtualThread", Runnable.class)
				.invoke(null, r);
		Thread t = new Thread(r);
		t.setDaemon(true);
		t.start();
		return t;
	}

	public static void main(String[] args) throws Exception {
		int secs = args.length > 0 ? Integer.parseInt(args[0]) : 10;
		boolean virtual = args.length > 1 && args[1].equals("virtual");
		List<Thread> ts = new ArrayList<>();
		ts.add(start(EventsSmoke::allocate, virtual));
		for (int i = 0; i < 3; i++)
			ts.add(start(EventsSmoke::contend, virtual));
		System.out.println("READY");
		System.out.flush();
		Thread.sleep(secs * 1000L);
		stop = true;
		for (Thread t : ts)
			t.join(2000);
	}
}
