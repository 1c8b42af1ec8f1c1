#!/bin/sh
# Late attach through jcmd JVMTI.agent_load (JDK 17, and 25 where present):
# the map appears with classes loaded before the attach, compiled code from
# GenerateEvents, existing threads; a second attach is a no-op; a bad option
# leaves the agent off and the JVM running.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_common.sh"
need_jdk17
[ -f "$AGENT" ] || fail "agent not built: $AGENT"
command -v python3 >/dev/null || skip "python3 missing"

attach_check() { # JAVA_HOME LABEL
	_jh=$1; _lb=$2; _out="$TMP/$_lb.out"
	"$_jh/bin/java" -cp "$WL/classes" AgentWorkload 12 > "$_out" 2>&1 &
	_pid=$!; bg $_pid
	_n=300
	while ! grep -qs READY "$_out" && [ $_n -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
	grep -q READY "$_out" || fail "$_lb: workload not READY"
	_map=$(cm_map "$_pid")
	# a bad option (jcmd itself parses key=value, so a bare word): one line on stderr, no map, JVM goes on
	"$_jh/bin/jcmd" $_pid JVMTI.agent_load "$AGENT" bogus > "$TMP/$_lb.j0" 2>&1
	sleep 0.5
	grep -q "asgst-agent: bad option 'bogus'" "$_out" || fail "$_lb: bad option not reported"
	[ ! -e "$_map" ] || fail "$_lb: map created despite a bad option"
	kill -0 $_pid || fail "$_lb: JVM died after a bad option"
	# the bad load counted as loaded? it must not: attach for real now
	"$_jh/bin/jcmd" $_pid JVMTI.agent_load "$AGENT" > "$TMP/$_lb.j1" 2>&1 ||
		{ cat "$TMP/$_lb.j1"; fail "$_lb: jcmd attach failed"; }
	wait_file "$_map" 50 || { cat "$_out"; fail "$_lb: no map after attach"; }
	"$_jh/bin/jcmd" $_pid JVMTI.agent_load "$AGENT" > "$TMP/$_lb.j2" 2>&1
	sleep 1.5
	grep -q "already loaded" "$_out" || fail "$_lb: second attach not reported as a no-op"
	cp "$_map" "$TMP/$_lb.map"
	cm_text_check "$_lb" "$TMP/$_lb.map"
	python3 "$TOP/tests/integration/codemap_check.py" attach "$TMP/$_lb.map" \
		> "$TMP/$_lb.check" 2>&1
	_rc=$?
	sed "s/^INFO: /INFO: $_lb: /" "$TMP/$_lb.check"
	[ $_rc -eq 0 ] || fail "$_lb: attach map check failed"
	wait $_pid || fail "$_lb: JVM exit status $? after attach"
	[ ! -e "$_map" ] || fail "$_lb: map left after exit"
	echo "INFO: $_lb: late attach ok"
}

attach_check "$JDK17" jdk17
if [ -n "$JDK25" ] && [ -x "$JDK25/bin/java" ]; then
	attach_check "$JDK25" jdk25
else
	echo "INFO: JDK 25 not present: its attach part skipped"
fi
echo PASS
