#!/bin/sh
# Decoder accuracy on JDK 17 and JDK 25 (test_jdks), stock flags, agent
# loaded at start: the "chain" thread of tests/workloads/Chain.java (22 small
# methods, C2 inlines some) must decode to the exact chain, leaf to
# java.lang.Thread.run (on JDK 25 through java.lang.Thread.runWith, a
# @Hidden frame that Thread.getStackTrace omits and ASGST shows), with
# types, comp levels and each caller's bci = its call site's (javap), in
# >= 98 % of its samples; cross-checked with Thread.getStackTrace. Then the
# same under -Xint (all interpreted) and -XX:TieredStopAtLevel=1 (C1).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_jdk17
need_decode_tools

run() { # jdk label levels java-flags...
	_jdk=$1; _label=$2; _lv=$3; shift 3
	start_java "$_jdk" "$TMP/$_label.out" -agentpath:"$AGENT" "$@" \
		-cp "$WL/classes" Chain 60
	sleep 1
	echo "INFO: $_label"
	record_json "$JPID" "$TMP/$_label.json" 8
	$CHECK chain "$TMP/$_label.json" --javap "$_jdk/bin/javap" \
		--classes "$WL/classes" --levels "$_lv" --min 98 \
		--jstack "$TMP/$_label.out" || rc=1
	kill "$JPID" 2>/dev/null
	wait "$JPID" 2>/dev/null
}

rc=0
jdks=$(test_jdks) || rc=1
for jdk in $jdks; do
	v=$(basename "$jdk")
	run "$jdk" "$v" compiled
	run "$jdk" "$v-xint" interp -Xint
	run "$jdk" "$v-c1" c1 -XX:TieredStopAtLevel=1
done
exit $rc
