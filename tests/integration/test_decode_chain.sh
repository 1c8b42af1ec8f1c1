#!/bin/sh
# Decoder accuracy on JDK 17, stock flags, agent loaded at start: the
# "chain" thread of tests/workloads/Chain.java (22 small methods, C2 inlines
# some) must decode to the exact chain, leaf to java.lang.Thread.run, with
# types, comp levels and each caller's bci = its call site's (javap), in
# >= 98 % of its samples; cross-checked with Thread.getStackTrace. Then the
# same under -Xint (all interpreted) and -XX:TieredStopAtLevel=1 (C1).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_jdk17
need_decode_tools

run() { # label levels java-flags...
	_label=$1; _lv=$2; shift 2
	start_java "$JDK17" "$TMP/$_label.out" -agentpath:"$AGENT" "$@" \
		-cp "$WL/classes" Chain 60
	sleep 1
	record_json "$JPID" "$TMP/$_label.json" 8
	$CHECK chain "$TMP/$_label.json" --javap "$JDK17/bin/javap" \
		--classes "$WL/classes" --levels "$_lv" --min 98 \
		--jstack "$TMP/$_label.out" || rc=1
	kill "$JPID" 2>/dev/null
	wait "$JPID" 2>/dev/null
}

rc=0
run jdk17 compiled
run jdk17-xint interp -Xint
run jdk17-c1 c1 -XX:TieredStopAtLevel=1
exit $rc
