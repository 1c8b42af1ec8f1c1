#!/bin/sh
# The agent fails closed on a JDK release whose layouts it does not know
# (JDK 26 changed what a jmethodID is): not to need a JDK 26, the agent's
# known range is narrowed below the running JDK with its jdkmax= option,
# which takes the same refusal path an unknown release takes. Checks, at
# start (-agentpath) and on a late attach, on JDK 17 and (where present)
# JDK 25:
#  - the JVM runs its workload to the end and exits 0;
#  - exactly one asgst-agent line on its stderr, naming the release;
#  - the map says disabled with the reason, `jvms` shows `off` and why;
#  - `record -p` says once that the agent is off and still records the
#    JVM's samples (native frames), ending on time.
# And a JVM recorded without its map (--no-attach): its Java threads'
# stacks say so, its VM threads' stacks (no Java in them) are whole.
. "$(dirname "$0")/lib.sh"
need_root
need_jdk17
[ -x "$ASGST" ] && [ -f "$AGENT" ] || fail "not built (make all)"
[ -f "$WL/classes/SleepLoop.class" ] && [ -f "$WL/classes/Chain.class" ] ||
	fail "workload not built (make workloads)"

# refuse_at_start JAVA LABEL MAJOR
refuse_at_start() {
	_java=$1; _lb=$2; _maj=$3
	_out="$TMP/$_lb.out"; _err="$TMP/$_lb.err"
	# Chain keeps a thread on the CPU, so a 2 s recording has samples to
	# show (SleepLoop is on the CPU too rarely to be sure of one)
	"$_java" -agentpath:"$AGENT"=jdkmax=$((_maj - 1)) -cp "$WL/classes" \
		Chain 4 > "$_out" 2> "$_err" &
	_pid=$!; bg $_pid
	wait_file "$_out" 100
	_n=100
	while ! grep -qs READY "$_out" && [ $_n -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
	grep -q READY "$_out" || { cat "$_err"; fail "$_lb: workload did not get READY"; }
	"$ASGST" jvms > "$TMP/$_lb.jvms" 2>&1 || fail "$_lb: jvms failed"
	grep -Eq "^$_pid .* off " "$TMP/$_lb.jvms" ||
		{ cat "$TMP/$_lb.jvms"; fail "$_lb: jvms does not show the map off"; }
	grep -q "agent off: JDK $_maj is not one this agent knows" "$TMP/$_lb.jvms" ||
		{ cat "$TMP/$_lb.jvms"; fail "$_lb: jvms does not say why"; }
	"$ASGST" codemap "$_pid" > "$TMP/$_lb.cm" 2>&1
	grep -q "disabled_reason=\"JDK $_maj is not one" "$TMP/$_lb.cm" ||
		{ cat "$TMP/$_lb.cm"; fail "$_lb: map has no disabled_reason"; }
	# record it: one line that the agent is off, samples still there
	"$ASGST" record -p "$_pid" -d 2 -F 199 -o "$TMP/$_lb.json" \
		> "$TMP/$_lb.rec" 2>&1 || { cat "$TMP/$_lb.rec"; fail "$_lb: record failed"; }
	[ "$(grep -c "the agent in JVM $_pid is off (JDK $_maj" "$TMP/$_lb.rec")" -eq 1 ] ||
		{ cat "$TMP/$_lb.rec"; fail "$_lb: record did not say once that the agent is off"; }
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); n=sum(s.get("count",1) for s in d["stacks"]); print("INFO: '"$_lb"': %d samples of the refused JVM" % n); sys.exit(0 if n > 0 else 1)' \
		"$TMP/$_lb.json" || fail "$_lb: no samples of the refused JVM"
	wait $_pid
	_rc=$?
	[ $_rc -eq 0 ] || { cat "$_err"; fail "$_lb: JVM exited $_rc"; }
	[ "$(grep -c "^asgst-agent\[" "$_err")" -eq 1 ] ||
		{ cat "$_err"; fail "$_lb: expected exactly one agent line on stderr"; }
	grep -q "asgst-agent.*JDK $_maj is not one this agent knows" "$_err" ||
		{ cat "$_err"; fail "$_lb: the agent's line does not name JDK $_maj"; }
	for _m in /dev/shm/asgst-"$_pid".map /dev/shm/asgst-"$_pid"-*.map; do
		[ ! -e "$_m" ] || fail "$_lb: map $_m left behind"
	done
	echo "INFO: $_lb: refused at start: $(grep "^asgst-agent\[" "$_err")"
}

# refuse_on_attach JAVA LABEL MAJOR: a late attach with the same option
refuse_on_attach() {
	_java=$1; _lb=$2; _maj=$3
	_out="$TMP/$_lb.out"; _err="$TMP/$_lb.err"
	"$_java" -cp "$WL/classes" SleepLoop 6 > "$_out" 2> "$_err" &
	_pid=$!; bg $_pid
	_n=100
	while ! grep -qs READY "$_out" && [ $_n -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
	grep -q READY "$_out" || fail "$_lb: workload did not get READY"
	"$ASGST" attach "$_pid" jdkmax=$((_maj - 1)) > "$TMP/$_lb.att" 2>&1 ||
		{ cat "$TMP/$_lb.att"; fail "$_lb: attach failed"; }
	"$ASGST" jvms > "$TMP/$_lb.jvms" 2>&1
	grep -q "agent off: JDK $_maj is not one this agent knows" "$TMP/$_lb.jvms" ||
		{ cat "$TMP/$_lb.jvms"; fail "$_lb: jvms does not say the agent is off"; }
	wait $_pid
	_rc=$?
	[ $_rc -eq 0 ] || { cat "$_err"; fail "$_lb: JVM exited $_rc after the refused attach"; }
	[ "$(grep -c "^asgst-agent\[" "$_err")" -eq 1 ] ||
		{ cat "$_err"; fail "$_lb: expected exactly one agent line on stderr"; }
	echo "INFO: $_lb: refused on attach: $(grep "^asgst-agent\[" "$_err")"
}

# no_map: a JVM recorded without its map (--no-attach). Its Java threads'
# stacks say ASGST_NO_CODEMAP (their Java frames are missing); its VM
# threads' (GC, compilers) walk by CFI to clone3 through libjvm and libc
# alone: nothing is missing there, so they are whole, with no error.
no_map() {
	"$JDK17/bin/java" -XX:+UseParallelGC -cp "$WL/classes" AllocBench 12 \
		> "$TMP/nomap.out" 2>&1 &
	_pid=$!; bg $_pid
	_n=200
	while ! grep -qs READY "$TMP/nomap.out" && [ $_n -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
	grep -q READY "$TMP/nomap.out" || fail "no-map: AllocBench did not get READY"
	"$ASGST" record -q --no-attach -p "$_pid" -d 4 -F 499 -o "$TMP/nomap.json" \
		|| fail "no-map: record failed"
	kill $_pid 2>/dev/null
	python3 - "$TMP/nomap.json" <<'PY' || fail "no-map: stacks"
import json, sys
d = json.load(open(sys.argv[1]))
java = java_nomap = vm = vm_whole = 0
for st in d["stacks"]:
    fr = [f for f in st["frames"] if f["type"] != "kernel"]
    err = (st["error"] or {}).get("name")
    c = st["count"]
    if st["thread"] == "alloc-bench":
        java += c
        java_nomap += c if err == "ASGST_NO_CODEMAP" else 0
    elif st["thread"].startswith(("GC Thread", "C1 Compiler", "C2 Compiler",
                                  "VM Thread")):
        vm += c
        if not err and fr and fr[-1].get("symbol") == "__clone3":
            vm_whole += c
print("MEASURE: no map: alloc-bench %d samples, %d say ASGST_NO_CODEMAP; "
      "VM threads %d samples, %d whole without an error"
      % (java, java_nomap, vm, vm_whole))
assert java >= 100 and java_nomap >= 0.99 * java, "Java frames missing, unsaid"
assert vm >= 5 and vm_whole >= 0.99 * vm, "VM threads' whole stacks marked"
PY
}

no_map
refuse_at_start "$JDK17/bin/java" jdk17-start 17
refuse_on_attach "$JDK17/bin/java" jdk17-attach 17
if [ -n "$JDK25" ] && [ -x "$JDK25/bin/java" ]; then
	refuse_at_start "$JDK25/bin/java" jdk25-start 25
	refuse_on_attach "$JDK25/bin/java" jdk25-attach 25
elif [ "${CI:-}" = "true" ]; then
	fail "JDK 25 not present under /usr/lib/jvm (CI=true: required)"
fi
echo "PASS"
