#!/bin/sh
# A JVM under JIT churn (tests/workloads/CodeChurn.java: fresh class
# loaders load, compile (C1, C2), deoptimise and unload code all the time)
# keeps a bounded code map: the agent compacts it into new generations and
# the recorder follows them. Checked with the agent loaded at start and
# attached late: the churning main thread's stacks whole and named in
# >= 99 % of samples, no record dropped, at least one generation followed,
# the map size printed (<= 16 MiB), the JVM alive.
#
# SOAK_SECONDS=N (make soak: 600): one long recording with the agent at
# start instead (a new output file every minute); the map size and the
# recorder's RSS are sampled every 5 s and must stay flat over the last
# third of the run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_jdk17
need_decode_tools
[ -f "$WL/classes/CodeChurn.class" ] || fail "workloads not built (make workloads)"

SOAK=${SOAK_SECONDS:-0}
CHECK_CHURN="python3 $TOP/tests/integration/churn_check.py"

# sample PID RECORDER_PID OUT: "seconds map_bytes rss_kib" every 5 s
# while the recorder runs
sample() {
	_t=0
	while kill -0 "$2" 2>/dev/null; do
		_m=$(stat -c %s "$(cm_map "$1")" 2>/dev/null || echo 0)
		_r=$(awk '/^VmRSS:/ { print $2 }' "/proc/$2/status" 2>/dev/null)
		[ -n "$_r" ] && echo "$_t $_m $_r" >> "$3"
		sleep 5
		_t=$((_t + 5))
	done
}

# record_churn LABEL PID SECONDS [ARGS]: record, then check the samples
# and the map
record_churn() {
	_lb=$1; _p=$2; _d=$3
	shift 3
	: > "$TMP/$_lb.series"
	# the generation before: the recording must see at least one more
	_g0=$("$ASGST" codemap "$_p" 2>/dev/null | sed -n 's/^header .* generation=\([0-9]*\).*/\1/p')
	_g0=${_g0:-0}
	# a 64 KiB stack window: stacks deep in the JVM's own C++ (class
	# loading, deoptimisation) are longer than the default 16 KiB, and a
	# window too short is the sampler's limit, not the code map's
	"$ASGST" record -p "$_p" -F 499 -d "$_d" -o "$TMP/$_lb.json" \
		--stack-window 64k --stats "$@" > "$TMP/$_lb.rec" 2>&1 &
	_rp=$!
	bg "$_rp"
	sample "$_p" "$_rp" "$TMP/$_lb.series" &
	_sp=$!
	wait "$_rp" || { cat "$TMP/$_lb.rec"; fail "$_lb: record failed"; }
	wait "$_sp" 2>/dev/null
	sed "s/^/INFO: $_lb: record: /" "$TMP/$_lb.rec" | tail -n 4
	kill -0 "$_p" 2>/dev/null || fail "$_lb: the JVM died"
	# another recorder on this host (record -a) may have attached its own
	# agent build first: then this test says so rather than measure it
	grep -q "$(realpath "$AGENT")" "/proc/$_p/maps" ||
		fail "$_lb: the JVM runs another agent ($(grep -o '/[^ ]*libasgst-agent.so' "/proc/$_p/maps" | head -n 1)), not $AGENT"
	$CHECK_CHURN whole "$TMP/$_lb".*json --pid "$_p" --min 99 |
		sed "s/^/$_lb: /" | tee "$TMP/$_lb.whole"
	grep -q "^$_lb: FAIL" "$TMP/$_lb.whole" && rc=1
	"$ASGST" codemap "$_p" > "$TMP/$_lb.map.txt" 2>&1 ||
		{ head -3 "$TMP/$_lb.map.txt"; fail "$_lb: asgst-bpf codemap rejects the map"; }
	_h=$(grep '^header ' "$TMP/$_lb.map.txt")
	_drop=$(echo "$_h" | sed -n 's/.* dropped=\([0-9]*\).*/\1/p')
	_gen=$(echo "$_h" | sed -n 's/.* generation=\([0-9]*\).*/\1/p')
	_wp=$(echo "$_h" | sed -n 's/.* write_pos=\([0-9]*\).*/\1/p')
	_sz=$(stat -c %s "$(cm_map "$_p")")
	echo "INFO: $_lb: map generation $_g0 -> $_gen while recording, write_pos $_wp bytes, file $_sz bytes ($((_sz / 1048576)) MiB), dropped $_drop"
	[ "$_drop" = 0 ] || { echo "FAIL: $_lb: $_drop records dropped"; rc=1; }
	[ "${_gen:-0}" -gt "$_g0" ] ||
		{ echo "FAIL: $_lb: the map was not compacted while recording"; rc=1; }
	[ "$_sz" -le $((16 * 1048576)) ] || { echo "FAIL: $_lb: map over 16 MiB"; rc=1; }
	"$ASGST" jvms > "$TMP/$_lb.jvms" 2>&1
	grep "^$_p " "$TMP/$_lb.jvms" | sed "s/^/INFO: $_lb: jvms: /"
	grep -A1 "^$_p " "$TMP/$_lb.jvms" | grep -q 'lost=' &&
		{ echo "FAIL: $_lb: jvms says the map lost records"; rc=1; }
	kill -0 "$_p" 2>/dev/null || fail "$_lb: the JVM died"
}

rc=0
if [ "$SOAK" -gt 0 ]; then
	start_java "$JDK17" "$TMP/soak.out" \
		-agentpath:"$AGENT"=loglevel=info -cp "$WL/classes" \
		CodeChurn $((SOAK + 60))
	sleep 10
	# a new profile every minute, as one recording for days would run:
	# what grows with the distinct stacks seen is the profile's, not the
	# code map's
	record_churn soak "$JPID" "$SOAK" --switch-output 60s
	$CHECK_CHURN series "$TMP/soak.series" --max-map 16 \
		--max-rss-growth 4 | sed 's/^/soak: /' | tee "$TMP/soak.flat"
	grep -q '^soak: FAIL' "$TMP/soak.flat" && rc=1
	grep -c 'code map generation' "$TMP/soak.out" |
		sed 's/^/INFO: soak: compactions by the agent: /'
	kill "$JPID" 2>/dev/null
	wait "$JPID" 2>/dev/null
	exit $rc
fi

# agent at start; compactmin=1m: several generations in a short run
start_java "$JDK17" "$TMP/start.out" \
	-agentpath:"$AGENT"=loglevel=info,compactmin=1m -cp "$WL/classes" \
	CodeChurn 60
sleep 8
record_churn start "$JPID" 15 -o "$TMP/start.asgst"
# the raw recording holds the map across the hand-overs: report decodes it
# as the live run did
"$ASGST" report -i "$TMP/start.asgst" -o "$TMP/start-report.json" \
	> "$TMP/report.log" 2>&1 || { cat "$TMP/report.log"; fail "report failed"; }
live=$(sed -n 's/.* \([0-9]*\) stacks.*/\1/p' "$TMP/start.rec" | head -n 1)
again=$(sed -n 's/.* \([0-9]*\) stacks.*/\1/p' "$TMP/report.log" | head -n 1)
echo "INFO: start: report of the raw recording: $again stacks, live $live"
[ -n "$live" ] && [ "$live" = "$again" ] ||
	{ echo "FAIL: start: report gives $again stacks, the live run $live"; rc=1; }
# code loaded and unloaded all along, generations handed over: the stack
# memo (profile/stack_memo.h) must change nothing of the decode
ASGST_STACK_MEMO=0 "$ASGST" report -i "$TMP/start.asgst" \
	-o "$TMP/start-report0.json" > "$TMP/report0.log" 2>&1 ||
	{ cat "$TMP/report0.log"; fail "report without the stack memo failed"; }
cmp -s "$TMP/start-report.json" "$TMP/start-report0.json" ||
	{ echo "FAIL: start: the report with the stack memo differs from the one without"; rc=1; }
$CHECK_CHURN whole "$TMP/start-report.json" --pid "$JPID" --min 99 |
	sed 's/^/start-report: /' | tee "$TMP/rep.whole"
grep -q "^start-report: FAIL" "$TMP/rep.whole" && rc=1
grep 'code map generation' "$TMP/start.out" | tail -n 2 | sed 's/^/INFO: start: agent: /'
kill "$JPID" 2>/dev/null
wait "$JPID" 2>/dev/null

# attached late by record (default compaction threshold)
start_java "$JDK17" "$TMP/late.out" -cp "$WL/classes" CodeChurn 60
sleep 3
record_churn late "$JPID" 20
kill "$JPID" 2>/dev/null
wait "$JPID" 2>/dev/null
exit $rc
