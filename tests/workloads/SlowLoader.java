/*
 * A system class loader (-Djava.system.class.loader=SlowLoader) that takes
 * its time to be made: the JVM stays in its start phase meanwhile, with
 * its attach listener up but no JVMTI environment to hand an agent, for
 * -Dslowloader.ms (default 3000) milliseconds.
 */
public class SlowLoader extends ClassLoader {
	public SlowLoader(ClassLoader parent) {
		super(parent);
		try {
			Thread.sleep(Long.getLong("slowloader.ms", 3000));
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
		}
	}
}
