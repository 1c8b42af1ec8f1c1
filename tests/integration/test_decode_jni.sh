#!/bin/sh
# JNI on JDK 17 (and 25 when present): Java -> native method -> C chain
# (thread "jni": C frames, the java_native frame and the Java callers,
# whole) and Java -> C -> Java (thread "jnicb": the Java leaf called back
# through JNI, the C frames and the entry frame between): >= 98 % each.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_jdk17
need_decode_tools
[ -f "$WL/libjnichain.so" ] || fail "$WL/libjnichain.so not built"

rc=0
jdks=$(test_jdks) || rc=1
for jdk in $jdks; do
	v=$(basename "$jdk")
	start_java "$jdk" "$TMP/$v.out" -agentpath:"$AGENT" \
		-Djava.library.path="$WL" -cp "$WL/classes" JniChain 60
	sleep 1
	record_json "$JPID" "$TMP/$v.json" 8
	echo "INFO: $v"
	$CHECK jni "$TMP/$v.json" --javap "$jdk/bin/javap" \
		--classes "$WL/classes" --min 98 || rc=1
	$CHECK jnicb "$TMP/$v.json" --javap "$jdk/bin/javap" \
		--classes "$WL/classes" --min 98 || rc=1
	kill "$JPID" 2>/dev/null
	wait "$JPID" 2>/dev/null
done
exit $rc
