# Sourced by tests/integration/test_agent_*.sh after lib.sh.
# cm_text_check LABEL MAP [worker]: the map as `asgst-bpf codemap` prints it
# (the merger's strict reader) holds the workload's methods, compiled code
# with the inline chain inner <- middle, the interpreter and call stub, and
# the main (and worker) thread. "worker" = agent loaded at start.
cm_text_check() {
	[ -x "$ASGST" ] || fail "$ASGST not built (make all)"
	_t="$TMP/$1.txt"
	"$ASGST" codemap "$2" > "$_t" 2>&1 || { head -5 "$_t"; fail "$1: asgst-bpf codemap rejects the map"; }
	grep -q '^summary .* status=ok' "$_t" || fail "$1: codemap summary not ok"
	grep -q '^vm jdk=' "$_t" || fail "$1: no vm line"
	for _m in inner middle outer spin; do
		grep -q "^method 0x[0-9a-f]* AgentWorkload $_m (I)I AgentWorkload.java lines=[1-9]" "$_t" ||
			[ $_m = spin ] || fail "$1: method AgentWorkload.$_m missing or without lines"
	done
	grep -Eq '^code .* level=[1-4] frame=[1-9][0-9]* .* AgentWorkload\.' "$_t" ||
		fail "$1: no compiled AgentWorkload code with level and frame size"
	# code compiled before a late attach has PcDescs only at safepoints
	# (DebugNonSafepoints was off then): there, any two-level chain will do
	if [ "${3:-}" = worker ]; then
		grep -Eq '^  pc \+0x[0-9a-f]+: AgentWorkload\.inner@[0-9]+ <- AgentWorkload\.middle@[0-9]+' "$_t" ||
			fail "$1: no inline chain inner <- middle"
	else
		grep -Eq '^  pc \+0x[0-9a-f]+: AgentWorkload\.[a-zA-Z$]+@[0-9]+ <- AgentWorkload\.' "$_t" ||
			fail "$1: no inline chain in the workload's code"
	fi
	grep -q '^stub .* "Interpreter" kind=interpreter' "$_t" || fail "$1: no Interpreter stub"
	grep -q '^stub .* kind=call_stub' "$_t" || fail "$1: no call_stub"
	grep -q '^thread [1-9][0-9]* "main" jt=0x' "$_t" || fail "$1: no main thread"
	if [ "${3:-}" = worker ]; then
		grep -Eq '^thread [1-9][0-9]* "asgst-worker" jt=0x[0-9a-f]+ start=[0-9]+ end=[0-9]+' "$_t" ||
			fail "$1: no start/end of the asgst-worker thread"
	fi
	echo "INFO: $1: asgst-bpf codemap: $(grep '^summary' "$_t")"
}

# agent_run_check JAVA_HOME LABEL: runs AgentWorkload with the agent from
# the start, snapshots the code map while the JVM runs, checks it (with the
# asgst-bpf codemap dump when that command exists, and always with the
# independent Python parser) and that it is mode 0600, then checks the map
# is removed at exit.
agent_run_check() {
	_jh=$1; _lb=$2
	[ -f "$AGENT" ] || fail "agent not built: $AGENT (run make)"
	[ -f "$WL/classes/AgentWorkload.class" ] || fail "workload not built (make workloads)"
	command -v python3 >/dev/null || skip "python3 missing"
	_out="$TMP/$_lb.out"
	"$_jh/bin/java" -agentpath:"$AGENT"=loglevel=info -cp "$WL/classes" \
		AgentWorkload 6 > "$_out" 2>&1 &
	_pid=$!; bg $_pid
	_map=$(cm_map "$_pid")
	_n=300
	while ! grep -qs READY "$_out" && [ $_n -gt 0 ] && kill -0 $_pid 2>/dev/null; do
		sleep 0.1; _n=$((_n - 1))
	done
	grep -q READY "$_out" || { cat "$_out"; fail "$_lb: workload did not get READY"; }
	[ -f "$_map" ] || fail "$_lb: no code map at $_map"
	# the worker thread ends and the plugin's code unloads ~1.5 s after READY
	sleep 3
	# only its owner (and root, the recorder) reads the map
	_mode=$(stat -c %a "$_map")
	[ "$_mode" = 600 ] || fail "$_lb: code map $_map is mode $_mode, not 600"
	cp "$_map" "$TMP/$_lb.map" || fail "$_lb: cannot copy $_map"
	cm_text_check "$_lb" "$TMP/$_lb.map" worker
	python3 "$TOP/tests/integration/codemap_check.py" check "$TMP/$_lb.map" --deopt \
		> "$TMP/$_lb.check" 2>&1
	_rc=$?
	sed "s/^INFO: /INFO: $_lb: /" "$TMP/$_lb.check"
	[ $_rc -eq 0 ] || fail "$_lb: code map check failed"
	wait $_pid
	_rc=$?
	[ $_rc -eq 0 ] || { cat "$_out"; fail "$_lb: JVM exit status $_rc with the agent"; }
	[ ! -e "$_map" ] || fail "$_lb: code map $_map left after the JVM exited"
	grep -qi 'error' "$_out" && { cat "$_out"; fail "$_lb: agent logged an error"; }
	echo "INFO: $_lb: ok, map removed at exit"
}
