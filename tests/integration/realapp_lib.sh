# Shared by tests/integration/test_realapp_*.sh (sourced after lib.sh):
# real Java applications from Debian's packages, profiled by late attach
# with stock JVM flags; realapp_check.py says how many of their stacks
# decode whole.
#
# REALAPP_SECONDS: how long each CPU recording lasts (default 20).
# REALAPP_EVENT_SECONDS: how long each -e alloc,lock recording lasts
# (default 4).
# REALAPP_WINDOW: record's --stack-window (default: record's own).
# REALAPP_KEEP=DIR: keep each recording's raw file and JSON there (to
# decode it again with `asgst-bpf report`).
REALAPP_SECONDS=${REALAPP_SECONDS:-20}
REALAPP_EVENT_SECONDS=${REALAPP_EVENT_SECONDS:-4}
RCHECK="python3 $TOP/tests/integration/realapp_check.py"
ECHECK="python3 $TOP/tests/integration/realapp_events_check.py"

need_realapp_tools() {
	need_bpf
	[ -x "$ASGST" ] || fail "$ASGST not built (make all)"
	[ -f "$AGENT" ] || fail "$AGENT not built (make all)"
	command -v python3 >/dev/null || skip_or_fail "python3 not found"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_up PID SECONDS CMD...: until CMD succeeds; fail if PID exits
wait_up() {
	_p=$1 _n=$(($2 * 10)); shift 2
	until "$@" >/dev/null 2>&1; do
		kill -0 "$_p" 2>/dev/null || return 1
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || return 1
		sleep 0.1
	done
}

# realapp_record NAME PID: record PID by late attach for REALAPP_SECONDS;
# the JSON is $TMP/NAME.json
realapp_record() {
	_name=$1 _pid=$2
	"$ASGST" record -p "$_pid" -F 199 -d "$REALAPP_SECONDS" -q --stats \
		${REALAPP_WINDOW:+--stack-window "$REALAPP_WINDOW"} \
		-o "$TMP/$_name.json" -o "$TMP/$_name.asgst" \
		> "$TMP/$_name.rec.log" 2>&1 ||
		{ cat "$TMP/$_name.rec.log"; fail "$_name: record failed"; }
	grep -E 'bpf_ns_per_sample|window_bytes_per_sample' \
		"$TMP/$_name.rec.log" | sed "s/^/INFO: $_name: /"
	if [ -n "${REALAPP_KEEP:-}" ]; then
		mkdir -p "$REALAPP_KEEP"
		cp "$TMP/$_name.asgst" "$TMP/$_name.json" "$REALAPP_KEEP/"
	fi
}

# realapp_events NAME PID REGEX: record PID's sampled allocations and
# contended monitors (-e alloc,lock, late attach) for REALAPP_EVENT_SECONDS
# into $TMP/NAME-ev.json, then realapp_events_check.py on it (REGEX: the
# app's own threads, which must allocate); 1 when the check fails
realapp_events() {
	_name=$1-ev _pid=$2
	"$ASGST" record -p "$_pid" -e alloc,lock -d "$REALAPP_EVENT_SECONDS" \
		-q --stats -o "$TMP/$_name.json" > "$TMP/$_name.rec.log" 2>&1 ||
		{ cat "$TMP/$_name.rec.log"; fail "$_name: record -e alloc,lock failed"; }
	grep -E 'allocation and .* lock events' "$TMP/$_name.rec.log" |
		sed "s/^/INFO: $_name: /"
	if [ -n "${REALAPP_KEEP:-}" ]; then
		mkdir -p "$REALAPP_KEEP"
		cp "$TMP/$_name.json" "$REALAPP_KEEP/"
	fi
	$ECHECK "$TMP/$_name.json" --name "$_name" --thread "$3"
}

# stop_app PID: end a JVM this test started
stop_app() {
	kill "$1" 2>/dev/null
	_n=50
	while kill -0 "$1" 2>/dev/null && [ "$_n" -gt 0 ]; do
		sleep 0.1
		_n=$((_n - 1))
	done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
