#!/bin/sh
# Virtual threads on JDK 25: CPU-bound virtual threads that yield
# after every call of a known chain (tests/workloads/jdk25/VtYield.java) on
# three carriers (one is held by the never-yielding thread). In >= 95 % of
# the carriers' samples with a yielding virtual thread mounted the stack
# holds the virtual thread's chain, its older frames (decoded from the heap
# stack chunk, "frozen": true, or a "cont_returnBarrier" gap frame where
# they are not), the Continuation.enterSpecial boundary ("vthread_entry":
# true) and the
# carrier's frames down to ForkJoinWorkerThread.run, frame for frame as
# jstack shows them; a virtual thread that never yields (never frozen) has
# the same without any gap; a platform thread running the same chain has
# no boundary; --vthreads virtual / carrier cut at enterSpecial; --state
# in_java keeps only in_java stacks (JVMTI ALIVE|RUNNABLE).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_bpf
need_jdk25
[ -x "$ASGST" ] || fail "$ASGST not built (make all)"
[ -f "$AGENT" ] || fail "$AGENT not built (make all)"
command -v python3 > /dev/null || skip_or_fail "python3 not found"
RCHECK="python3 $TOP/tests/integration/runtime_check.py"

mkdir -p "$TMP/classes"
"$JDK25/bin/javac" -g -d "$TMP/classes" "$TOP/tests/workloads/jdk25/VtYield.java" ||
	fail "javac VtYield"

# usage errors first (exit 2, one line)
"$ASGST" record --vthreads sideways -p $$ -d 1 -o "$TMP/x.json" 2> "$TMP/err"
[ $? -eq 2 ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] ||
	{ cat "$TMP/err"; fail "--vthreads sideways: want exit 2 and one line"; }
"$ASGST" record --state sleepy -p $$ -d 1 -o "$TMP/x.json" 2> "$TMP/err"
[ $? -eq 2 ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] ||
	{ cat "$TMP/err"; fail "--state sleepy: want exit 2 and one line"; }

# chain frames not inlined into each other; longEntry interpreted (see
# VtYield.java: it keeps the LONG threads' older frames frozen)
start_java "$JDK25" "$TMP/vy.out" -agentpath:"$AGENT" \
	-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,VtYield::* \
	-XX:CompileCommand=exclude,VtYield::longEntry \
	-Djdk.virtualThreadScheduler.parallelism=3 \
	-cp "$TMP/classes" VtYield 120
sleep 1

rec() { # name seconds extra-args...
	_n=$1; _s=$2; shift 2
	"$ASGST" record -p "$JPID" -F 199 -d "$_s" "$@" -o "$TMP/$_n.json" \
		> "$TMP/$_n.log" 2>&1 || { cat "$TMP/$_n.log"; fail "record $_n failed"; }
	sed 's/^/INFO: record: /' "$TMP/$_n.log" | tail -n 1
}

# merged (the default), with the JVM's own view of the carriers taken
# during the recording
rec merged 8 &
recpid=$!
js=""
for i in 1 2 3 4; do
	sleep 1.5
	"$JDK25/bin/jstack" "$JPID" > "$TMP/jstack$i.txt" 2>/dev/null &&
		js="$js $TMP/jstack$i.txt"
done
wait $recpid || fail "record merged failed"
[ -n "$js" ] || fail "jstack failed"
rc=0
$RCHECK vthreads "$TMP/merged.json" --pid "$JPID" --jstack $js || rc=1

rec virtual 5 --vthreads virtual
$RCHECK vthreads "$TMP/virtual.json" --pid "$JPID" --view virtual || rc=1
rec carrier 5 --vthreads carrier
$RCHECK vthreads "$TMP/carrier.json" --pid "$JPID" --view carrier || rc=1

# --state: CPU-bound Java code is in_java; the filter keeps only those,
# and the chain (of both the carriers and plat) is still there
rec state 4 --state in_java
python3 - "$TMP/state.json" "$JPID" <<'PY' || rc=1
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
st = [s for s in d["stacks"] if s["pid"] == pid]
bad = [s.get("state") for s in st if s.get("state") != "in_java"]
bits = [s.get("jvmti_state") for s in st
        if not isinstance(s.get("jvmti_state"), int) or
        s["jvmti_state"] & 5 != 5]
leaf = sum(s["count"] for s in st if any(
    f.get("class") == "VtYield" and f.get("method") == "leaf"
    for f in s["frames"]))
tot = sum(s["count"] for s in st)
print("MEASURE: --state in_java: %d stacks, %d samples, %d in VtYield.leaf, "
      "%d of another state" % (len(st), tot, leaf, len(bad)))
if bad:
    print("FAIL: --state in_java kept states %s" % sorted(set(map(str, bad))))
    sys.exit(1)
if bits:
    print("FAIL: in_java stacks with jvmti_state %s (want ALIVE|RUNNABLE)" %
          sorted(set(map(str, bits))))
    sys.exit(1)
if leaf < 0.8 * tot or leaf < 50:
    print("FAIL: --state in_java lost the in_java chain samples")
    sys.exit(1)
PY
kill "$JPID" 2>/dev/null
wait "$JPID" 2>/dev/null
exit $rc
