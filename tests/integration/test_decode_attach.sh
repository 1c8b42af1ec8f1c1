#!/bin/sh
# Late attach: the JVM starts without the agent; `record -p` injects it
# (HotSpot attach protocol); the chain must then decode whole in >= 97 % of
# the chain thread's samples (JDK 17, and JDK 25 when present).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_jdk17
need_decode_tools

rc=0
jdks=$(test_jdks) || rc=1
for jdk in $jdks; do
	v=$(basename "$jdk")
	start_java "$jdk" "$TMP/$v.out" -cp "$WL/classes" Chain 60
	sleep 1
	record_json "$JPID" "$TMP/$v.json" 8
	echo "INFO: $v"
	$CHECK chain "$TMP/$v.json" --javap "$jdk/bin/javap" \
		--classes "$WL/classes" --levels compiled --min 97 || rc=1
	kill "$JPID" 2>/dev/null
	wait "$JPID" 2>/dev/null
done
exit $rc
