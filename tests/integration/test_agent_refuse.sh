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

refuse_at_start "$JDK17/bin/java" jdk17-start 17
refuse_on_attach "$JDK17/bin/java" jdk17-attach 17
if [ -n "$JDK25" ] && [ -x "$JDK25/bin/java" ]; then
	refuse_at_start "$JDK25/bin/java" jdk25-start 25
	refuse_on_attach "$JDK25/bin/java" jdk25-attach 25
elif [ "${CI:-}" = "true" ]; then
	fail "JDK 25 not present under /usr/lib/jvm (CI=true: required)"
fi
echo "PASS"
