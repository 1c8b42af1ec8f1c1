#!/bin/sh
# As test_decode_chain.sh, on JDK 25 (stock flags, -Xint, C1 only; agent at
# start): the chain includes java.lang.Thread.runWith there (a @Hidden frame
# that Thread.getStackTrace omits and ASGST shows).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_jdk25
need_decode_tools

run() { # label levels java-flags...
	_label=$1; _lv=$2; shift 2
	start_java "$JDK25" "$TMP/$_label.out" -agentpath:"$AGENT" "$@" \
		-cp "$WL/classes" Chain 60
	sleep 1
	record_json "$JPID" "$TMP/$_label.json" 8
	$CHECK chain "$TMP/$_label.json" --javap "$JDK25/bin/javap" \
		--classes "$WL/classes" --levels "$_lv" --min 98 \
		--jstack "$TMP/$_label.out" || rc=1
	kill "$JPID" 2>/dev/null
	wait "$JPID" 2>/dev/null
}

rc=0
run jdk25 compiled
run jdk25-xint interp -Xint
run jdk25-c1 c1 -XX:TieredStopAtLevel=1
exit $rc
