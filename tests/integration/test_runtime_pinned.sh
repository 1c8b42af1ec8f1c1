#!/bin/sh
# Pinned carriers off-CPU on JDK 25, tests/workloads/jdk25/
# PinnedJni.java with record -e offcpu during a phase the workload measures:
#  - virtual threads sleeping in C inside a JNI method (libvtpin.so): >= 70
#    % of the time they slept (measured in C) reported "pinned": true with
#    their frames (sleepInC "downcall": "jni", jniB, jniA, jniLoop,
#    enterSpecial), state in_native. JFR has no event for this;
#  - virtual threads parking inside an FFM upcall (Java -> downcall -> C ->
#    upcall -> LockSupport.parkNanos): pinned as well, and JFR's
#    jdk.VirtualThreadPinned events (recorded in the same run) sum to the
#    same time within 10 % (see below);
#  - virtual threads in Thread.sleep unmount: never pinned;
#  - report --pinned on the raw recording: its format, and that it sums the
#    pinned stacks of the same recording by their innermost Java frame.
# Why 10 %: JFR times each park on the Java side (begin..commit around the
# carrier's park), we sum the carrier's off-CPU intervals (switch-out to
# next switch-in); both include the wake-up latency, they differ by the
# on-CPU part of the park path, tens of microseconds per 30 ms park (< 1 %).
# One park missed or misattributed per ten is what 10 % lets through.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_bpf
need_jdk25
[ -x "$ASGST" ] || fail "$ASGST not built (make all)"
[ -f "$AGENT" ] || fail "$AGENT not built (make all)"
[ -f "$WL/libvtpin.so" ] || fail "$WL/libvtpin.so not built (make workloads)"
command -v python3 > /dev/null || skip_or_fail "python3 not found"
RCHECK="python3 $TOP/tests/integration/runtime_check.py"
PHASE=6

mkdir -p "$TMP/classes"
"$JDK25/bin/javac" -g -d "$TMP/classes" "$TOP/tests/workloads/jdk25/PinnedJni.java" ||
	fail "javac PinnedJni"

# 2 JNI + 2 upcall pinners, 4 sleepers; 6 carriers so the sleepers still
# get one. The JVM outlives the recording (idle 8 s after the phase), then
# exits and JFR writes its file.
start_java "$JDK25" "$TMP/pin.out" -agentpath:"$AGENT" \
	--enable-native-access=ALL-UNNAMED -Djava.library.path="$WL" \
	-Djdk.virtualThreadScheduler.parallelism=6 \
	"-XX:StartFlightRecording:filename=$TMP/pin.jfr,dumponexit=true,jdk.VirtualThreadPinned#threshold=0ms" \
	-cp "$TMP/classes" PinnedJni "$TMP/go" $PHASE 8 2 2 4
"$ASGST" record -p "$JPID" -e offcpu -d $((PHASE + 6)) -o "$TMP/pin.json" \
	-o "$TMP/pin.asgst" > "$TMP/rec.log" 2>&1 &
recpid=$!
# the phase starts once the recording has the JVM's threads
sleep 3
touch "$TMP/go"
wait $recpid || { cat "$TMP/rec.log"; fail "record -e offcpu failed"; }
sed 's/^/INFO: record: /' "$TMP/rec.log" | tail -n 2
grep -q '^DONE' "$TMP/pin.out" || { cat "$TMP/pin.out"; fail "the phase did not end within the recording"; }
grep '^PHASE' "$TMP/pin.out" | sed 's/^/INFO: workload: /'

rc=0
"$ASGST" report -i "$TMP/pin.asgst" --pinned > "$TMP/pinned.txt" 2> "$TMP/rep.err" ||
	{ cat "$TMP/rep.err"; fail "report --pinned failed"; }
"$ASGST" report -q -i "$TMP/pin.asgst" -f json -o "$TMP/rep.json" ||
	fail "report -f json failed"
$RCHECK report-pinned "$TMP/pinned.txt" --json "$TMP/rep.json" \
	--live "$TMP/pin.json" \
	--phase "$TMP/pin.out" || rc=1

# JFR's view: written when the JVM exits
wait "$JPID" 2>/dev/null
[ -s "$TMP/pin.jfr" ] || fail "JFR wrote no recording"
"$JDK25/bin/jfr" print --json --events jdk.VirtualThreadPinned "$TMP/pin.jfr" \
	> "$TMP/pin.jfr.json" || fail "jfr print failed"
$RCHECK pinned "$TMP/pin.json" --pid "$JPID" --phase "$TMP/pin.out" \
	--jfr-json "$TMP/pin.jfr.json" || rc=1
exit $rc
