// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Big-JVM workload: defines COUNT generated classes (default 24000, seven
 * static methods each, like a large application's) through a few class
 * loaders, keeps them loaded, then runs Chain's hot call chain (thread
 * "chain", see Chain.java) for the decode check.
 *
 * The classes come from a small class-file writer here (no javac, no
 * bytecode library): class big.G<n>, source file G<n>.java, methods named
 * from a pool of verbs and nouns (names repeat across classes, as in real
 * code) with descriptors "(I...)I" from a pool of parameter types, each a
 * few lines long with a LineNumberTable.
 *
 * Usage: java BigJvm [classes] [seconds]   (defaults 24000, 600)
 * Prints "LOADED classes=N methods=M ms=T", then Chain's READY and JSTACK
 * lines.
 */
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public class BigJvm {
	static final String[] VERBS = {
		"get", "set", "is", "has", "find", "load", "save", "handle",
		"process", "build", "create", "update", "delete", "apply",
		"visit", "parse", "format", "compute", "check", "validate",
		"resolve", "convert", "read", "write", "open", "close", "init",
		"reset", "add", "remove",
	};
	static final String[] NOUNS = {
		"Name", "Value", "Id", "Count", "Size", "Type", "State",
		"Config", "Context", "Request", "Response", "Item", "Entry",
		"Node", "Key", "Index", "Status", "Owner", "Parent", "Child",
		"Handler", "Listener", "Source", "Target", "Result", "Error",
		"Message", "Event", "Session", "User", "Order", "Account",
		"Price", "Date", "Time", "Path", "Url", "Header", "Body", "Token",
	};
	static final String[] TYPES = {
		"I", "J", "Z", "Ljava/lang/String;", "Ljava/lang/Object;",
		"Ljava/util/List;", "Ljava/util/Map;", "[B", "D",
	};
	static final int METHODS = 7;
	/* keeps the classes (and their loaders) alive */
	static final List<Class<?>> KEEP = new ArrayList<>();

	static final class Loader extends ClassLoader {
		Loader() {
			super(BigJvm.class.getClassLoader());
		}

		Class<?> define(String name, byte[] b) {
			return defineClass(name, b, 0, b.length);
		}
	}

	/* a constant pool of Utf8 and Class entries */
	static final class Pool {
		final Map<String, Integer> utf = new LinkedHashMap<>();
		final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		final DataOutputStream out = new DataOutputStream(bytes);
		int next = 1;

		int utf8(String s) throws IOException {
			Integer i = utf.get(s);
			if (i != null)
				return i;
			out.writeByte(1);
			out.writeUTF(s);
			utf.put(s, next);
			return next++;
		}

		int klass(String internal) throws IOException {
			int n = utf8(internal);
			out.writeByte(7);
			out.writeShort(n);
			return next++;
		}
	}

	static int mix(int x) {
		x ^= x >>> 16;
		x *= 0x7feb352d;
		x ^= x >>> 15;
		return x & 0x7fffffff;
	}

	static byte[] classFile(int n) throws IOException {
		String internal = "big/G" + n;
		Pool cp = new Pool();
		int self = cp.klass(internal);
		int sup = cp.klass("java/lang/Object");
		int code = cp.utf8("Code");
		int lnt = cp.utf8("LineNumberTable");
		int sf = cp.utf8("SourceFile");
		int src = cp.utf8("G" + n + ".java");
		ByteArrayOutputStream mbytes = new ByteArrayOutputStream();
		DataOutputStream m = new DataOutputStream(mbytes);

		for (int j = 0; j < METHODS; j++) {
			int h = mix(n * METHODS + j);
			/* one method a class has a name of its own */
			String name = j == 0 ? "op" + n :
				VERBS[h % VERBS.length] +
				NOUNS[(h / VERBS.length) % NOUNS.length];
			StringBuilder desc = new StringBuilder("(I");
			int slots = 1;
			for (int k = 0, nk = (h >>> 12) % 4; k < nk; k++) {
				String t = TYPES[(h >>> (14 + 3 * k)) % TYPES.length];
				desc.append(t);
				slots += t.equals("J") || t.equals("D") ? 2 : 1;
			}
			desc.append(")I");
			int lines = 2 + (h >>> 20) % 6;
			int first = 10 + j * 12;

			m.writeShort(0x0009);	/* public static */
			m.writeShort(cp.utf8(name + (j == 0 ? "" : "$" + j)));
			m.writeShort(cp.utf8(desc.toString()));
			m.writeShort(1);
			/* x = x + c, a line each; return x */
			int codeLen = lines * 4 + 2;
			m.writeShort(code);
			m.writeInt(2 + 2 + 4 + codeLen + 2 + 2 + 6 + 2 + 4 * (lines + 1));
			m.writeShort(2);
			m.writeShort(slots);
			m.writeInt(codeLen);
			for (int k = 0; k < lines; k++) {
				m.writeByte(0x1a);		/* iload_0 */
				m.writeByte(0x04 + k % 5);	/* iconst_1..5 */
				m.writeByte(0x60);		/* iadd */
				m.writeByte(0x3b);		/* istore_0 */
			}
			m.writeByte(0x1a);
			m.writeByte(0xac);			/* ireturn */
			m.writeShort(0);			/* no handlers */
			m.writeShort(1);
			m.writeShort(lnt);
			m.writeInt(2 + 4 * (lines + 1));
			m.writeShort(lines + 1);
			for (int k = 0; k <= lines; k++) {
				m.writeShort(k * 4);
				m.writeShort(first + k);
			}
		}
		ByteArrayOutputStream f = new ByteArrayOutputStream();
		DataOutputStream o = new DataOutputStream(f);
		o.writeInt(0xCAFEBABE);
		o.writeShort(0);
		o.writeShort(52);
		o.writeShort(cp.next);
		cp.out.flush();
		o.write(cp.bytes.toByteArray());
		o.writeShort(0x0021);	/* public super */
		o.writeShort(self);
		o.writeShort(sup);
		o.writeShort(0);	/* interfaces */
		o.writeShort(0);	/* fields */
		o.writeShort(METHODS);
		m.flush();
		o.write(mbytes.toByteArray());
		o.writeShort(1);
		o.writeShort(sf);
		o.writeInt(2);
		o.writeShort(src);
		o.flush();
		return f.toByteArray();
	}

	public static void main(String[] args) throws Exception {
		int count = args.length > 0 ? Integer.parseInt(args[0]) : 24000;
		String secs = args.length > 1 ? args[1] : "600";
		long t0 = System.nanoTime();
		Loader[] loaders = new Loader[8];
		for (int i = 0; i < loaders.length; i++)
			loaders[i] = new Loader();
		long methods = 0;
		for (int n = 0; n < count; n++) {
			Loader l = loaders[n % loaders.length];
			Class<?> c = l.define("big.G" + n, classFile(n));
			/* linked (prepared) now, as a used class is */
			Class.forName(c.getName(), true, l);
			KEEP.add(c);
			methods += METHODS;
		}
		System.out.println("LOADED classes=" + count + " methods=" + methods +
				   " ms=" + (System.nanoTime() - t0) / 1000000);
		Chain.main(new String[] { secs });
	}
}
