# Shared by tests/integration/test_realapp_*.sh (sourced after lib.sh):
# real Java applications from Debian's packages, profiled by late attach
# with stock JVM flags; realapp_check.py says how many of their stacks
# decode whole.
#
# REALAPP_SECONDS: how long each CPU recording lasts (default 20).
# REALAPP_EVENT_SECONDS: how long each -e alloc,lock recording lasts
# (default 4).
# REALAPP_OFFCPU_SECONDS: how long the load runs under the two -e
# cpu,offcpu recorders of realapp_offcpu (default 8).
# REALAPP_WINDOW: record's --stack-window (default: record's own).
# REALAPP_KEEP=DIR: keep each recording's raw file and JSON there (to
# decode it again with `asgst-bpf report`).
REALAPP_SECONDS=${REALAPP_SECONDS:-20}
REALAPP_EVENT_SECONDS=${REALAPP_EVENT_SECONDS:-4}
REALAPP_OFFCPU_SECONDS=${REALAPP_OFFCPU_SECONDS:-8}
RCHECK="python3 $TOP/tests/integration/realapp_check.py"
ECHECK="python3 $TOP/tests/integration/realapp_events_check.py"
OCHECK="python3 $TOP/tests/integration/realapp_offcpu_check.py"

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

# realapp_offcpu NAME PID REGEX LOAD...: the same load seen by two
# recorders of PID at once, -e cpu,offcpu with every switch's stack
# (--offcpu-sample 1, attached first: $TMP/NAME-off-full.json) and with
# the default sampling ($TMP/NAME-off.json). LOAD (a command that starts
# the load in the background, to last longer than REALAPP_OFFCPU_SECONDS)
# runs once both are on; REALAPP_OFFCPU_SECONDS later, the load still on,
# both are stopped together, so they see the same switches (a wait still
# under way at the end is weighed up to each recorder's own end: under
# load those are short). Then realapp_offcpu_check.py (REGEX: the server
# threads whose stacks' shares are compared). 0 when it passes, 3 when one
# recording was not the truth for the other (the check says why), else 1
realapp_offcpu() {
	_name=$1-off _pid=$2 _rx=$3
	shift 3
	"$ASGST" record -p "$_pid" -e cpu,offcpu --offcpu-sample 1 \
		--ring-buffer 256 -d 600 -q --stats -o "$TMP/$_name-full.json" \
		> "$TMP/$_name-full.log" 2>&1 &
	_full=$!
	wait_link "$_full" "$TMP/$_name-full.log" ||
		{ echo "FAIL: $_name-full: the sampler never attached"; return 1; }
	"$ASGST" record -p "$_pid" -e cpu,offcpu -d 600 -q --stats \
		-o "$TMP/$_name.json" > "$TMP/$_name.log" 2>&1 &
	_samp=$!
	wait_link "$_samp" "$TMP/$_name.log" || {
		echo "FAIL: $_name: the sampler never attached"
		kill -INT "$_full"
		return 1
	}
	sleep 1			# both have opened the JVM's code map
	"$@"
	sleep "$REALAPP_OFFCPU_SECONDS"
	kill -INT "$_full" "$_samp"
	wait "$_full" || { cat "$TMP/$_name-full.log"; echo "FAIL: $_name-full: record failed"; return 1; }
	wait "$_samp" || { cat "$TMP/$_name.log"; echo "FAIL: $_name: record failed"; return 1; }
	if [ -n "${REALAPP_KEEP:-}" ]; then
		mkdir -p "$REALAPP_KEEP"
		cp "$TMP/$_name.json" "$TMP/$_name-full.json" "$REALAPP_KEEP/"
	fi
	$OCHECK "$TMP/$_name.json" --full "$TMP/$_name-full.json" \
		--thread "$_rx" --summary "$TMP/$_name.log" \
		--full-summary "$TMP/$_name-full.log" --name "$_name"
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
