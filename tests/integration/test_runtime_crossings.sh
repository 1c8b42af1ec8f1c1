#!/bin/sh
# Java <-> C crossings: the barrier frame says how Java called C
# and where C called back, the stack stays whole across them, and the
# thread state matches the crossing, in >= 95 % of each thread's samples
# (JSON, collapsed and HTML from one recording; crossings_check.py):
#  - JNI on JDK 17 and 25 (JniChain): "downcall": "jni" on the native
#    method, state in_native in its C code; Java -> C -> Java with
#    "upcall": "jni" on the call stub;
#  - FFM on JDK 25 (tests/workloads/jdk25/FfmChain.java): plain downcall
#    ("ffm", in_native), Linker.Option.critical ("ffm_critical", still
#    in_java), and Java -> downcall -> C -> upcall stub -> Java as one
#    stack ("upcall": "ffm").
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_jdk17
need_decode_tools
[ -f "$WL/libjnichain.so" ] || fail "$WL/libjnichain.so not built"
XCHECK="python3 $TOP/tests/integration/crossings_check.py"
MIN=95

rc=0
jdks=$(test_jdks) || rc=1
# record JPID into $TMP/$1.{json,collapsed,html}
record_all() {
	"$ASGST" record -p "$JPID" -d 8 -o "$TMP/$1.json" \
		-o "$TMP/$1.collapsed" -o "$TMP/$1.html" > "$TMP/$1.log" 2>&1 ||
		{ cat "$TMP/$1.log"; fail "asgst-bpf record failed"; }
	sed 's/^/INFO: record: /' "$TMP/$1.log" | tail -n 3
}
check() { # mode name javap classes
	$XCHECK "$1" "$TMP/$2.json" --javap "$3" --classes "$4" --min $MIN \
		--collapsed "$TMP/$2.collapsed" --html "$TMP/$2.html" || rc=1
}

for jdk in $jdks; do
	v=jni-$(basename "$jdk")
	start_java "$jdk" "$TMP/$v.out" -agentpath:"$AGENT" \
		-Djava.library.path="$WL" -cp "$WL/classes" JniChain 60
	sleep 1
	record_all "$v"
	echo "INFO: $v"
	check jni "$v" "$jdk/bin/javap" "$WL/classes"
	check jnicb "$v" "$jdk/bin/javap" "$WL/classes"
	kill "$JPID" 2>/dev/null
	wait "$JPID" 2>/dev/null
done

if [ -z "$JDK25" ] || [ ! -x "$JDK25/bin/java" ]; then
	echo "SKIP: FFM part: JDK 25 not present under /usr/lib/jvm"
	exit $rc
fi
[ -f "$WL/libffmchain.so" ] || fail "$WL/libffmchain.so not built"
mkdir -p "$TMP/ffm-classes"
"$JDK25/bin/javac" -g -d "$TMP/ffm-classes" \
	"$TOP/tests/workloads/jdk25/FfmChain.java" || fail "javac FfmChain"
v=ffm-$(basename "$JDK25")
start_java "$JDK25" "$TMP/$v.out" -agentpath:"$AGENT" \
	--enable-native-access=ALL-UNNAMED -cp "$TMP/ffm-classes" FfmChain \
	"$WL/libffmchain.so" 60
sleep 1
record_all "$v"
echo "INFO: $v"
for m in ffm ffmcrit ffmup; do
	check $m "$v" "$JDK25/bin/javap" "$TMP/ffm-classes"
done
kill "$JPID" 2>/dev/null
wait "$JPID" 2>/dev/null
exit $rc
