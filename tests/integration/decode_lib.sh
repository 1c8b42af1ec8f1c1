# Shared by tests/integration/test_decode_*.sh (sourced after lib.sh).
# start_java JDK LOG ARGS...: start a JVM in the background, wait for its
# "READY" line; sets JPID.
start_java() {
	_jdk=$1; _log=$2; shift 2
	"$_jdk/bin/java" "$@" > "$_log" 2>&1 &
	JPID=$!
	bg "$JPID"
	_n=300
	while ! grep -q '^READY' "$_log" 2>/dev/null; do
		kill -0 "$JPID" 2>/dev/null || { cat "$_log"; fail "JVM exited early"; }
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || { cat "$_log"; fail "JVM not ready in 30 s"; }
		sleep 0.1
	done
}

# record_json PID OUT [SECONDS]: asgst-bpf record -p PID -f json
record_json() {
	"$ASGST" record -p "$1" -f json -o "$2" -d "${3:-5}" > "$2.log" 2>&1 ||
		{ cat "$2.log"; fail "asgst-bpf record failed"; }
	cat "$2.log" | sed 's/^/INFO: record: /' | tail -n 3
}

need_decode_tools() {
	need_bpf
	[ -x "$ASGST" ] || fail "$ASGST not built (make all)"
	[ -f "$AGENT" ] || fail "$AGENT not built (make all)"
	[ -f "$WL/classes/Chain.class" ] || fail "workloads not built (make workloads)"
	command -v python3 >/dev/null || skip_or_fail "python3 not found"
}

CHECK="python3 $TOP/tests/integration/decode_check.py"
