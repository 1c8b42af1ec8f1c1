#!/bin/sh
# JVM events: sampled allocations (record -e alloc) and contended monitors
# (record -e lock) against the truth the workloads count themselves, on
# JDK 17 and JDK 25 (test_jdks):
#  (a) record -e alloc -p PID (late attach) on tests/workloads/AllocSites:
#      each site's share of the sites' alloc_bytes within 10 % of the bytes
#      it allocated (bytesSite byte[] 60 %, intsSite int[] 20 %, cellsBatch
#      AllocSites$Cell 20 %), its class, the estimates scaled (bytes and
#      objects near the truth), >= 99 % of the worker's alloc stacks whole,
#      compiled sites (C1/C2) and an interpreted one (excluded from
#      compilation);
#  (b) the same with the agent loaded at JVM start (-agentpath) and
#      record -e cpu,alloc,lock --alloc-interval 262144 -- java ...: the
#      three kinds in one run, events and estimates at that interval;
#  (c) record -e lock -p PID on tests/workloads/LockHold: the waiters'
#      lock stacks name LockHold$Guard and LockHold.contend, and their
#      lock_ns sum to 90-110 % of the waits the waiters measured;
#  (d) the pprof of (a) and (c) read by go tool pprof (-raw: the values
#      equal the JSON's; -top -cum -sample_index=alloc_space / delay: the
#      shares and the wait as a pprof user sees them);
#  (e) once a -p recording ends, the JVM's code map says the events are off
#      (CM_F_ALLOC_ON, CM_F_LOCK_ON clear: the agent polls every 100 ms).
# The measured phase starts (the workload's go file) once the map says the
# requested events are on, and the recording ends after the workload
# printed its truth, so the recording covers exactly what the truth counts.
# No assertion on wall-clock figures: the waits are what the waiters
# measured, whatever the host's load made them.
. "$(dirname "$0")/lib.sh"
need_jdk17
need_bpf
[ -x "$ASGST" ] || fail "$ASGST not built (make all)"
[ -f "$AGENT" ] || fail "$AGENT not built (make all)"
for c in AllocSites LockHold; do
	[ -f "$WL/classes/$c.class" ] || fail "$WL/classes/$c.class not built (make workloads)"
done
command -v python3 > /dev/null || skip_or_fail "python3 not found"
CHECK="python3 $TOP/tests/integration/jvm_events_check.py"
# pprof's cache and temporary files stay in this test's directory
export HOME="$TMP" GOCACHE="$TMP/gocache" PPROF_TMPDIR="$TMP"
# go tool pprof for (d); without it the rest still runs (under CI=true it
# is required)
GO=1
if ! command -v go > /dev/null || ! go tool pprof -h > /dev/null 2>&1; then
	[ "${CI:-}" = "true" ] && fail "go tool pprof not found (CI=true: required; apt-get install golang-go)"
	echo "INFO: go tool pprof not found (apt-get install golang-go): the pprof checks are left out"
	GO=0
fi

SECS=5				# the workloads' measured phase
CM_F_EVENTS=32			# agent/codemap_format.h
CM_F_ALLOC_ON=64
CM_F_LOCK_ON=128
# cellsBatch stays interpreted; compiled code for the rest
ALLOC_FLAGS="-Xmx256m -XX:CompileCommand=quiet
 -XX:CompileCommand=exclude,AllocSites::cellsBatch
 -XX:CompileCommand=dontinline,AllocSites::cellsBatch"

# cm_flags MAP: the header's flags (struct cm_file_header: u32 at byte 20),
# after checking its writer_pid (u32 at byte 16) is PID; empty if unreadable
cm_flags() { # MAP PID
	[ "$(od -An -tu4 -j16 -N4 "$1" 2>/dev/null | tr -d ' ')" = "$2" ] || return 0
	od -An -tu4 -j20 -N4 "$1" 2>/dev/null | tr -d ' '
}

# wait_flags MAP PID MASK WANT TENTHS [RECPID]: until the map's flags & MASK
# are WANT; 1 after TENTHS tenths of a second or once RECPID has exited
wait_flags() {
	_n=$5
	while :; do
		_f=$(cm_flags "$1" "$2")
		[ -n "$_f" ] && [ $((_f & $3)) -eq "$4" ] && return 0
		[ "$_n" -gt 0 ] || return 1
		[ -z "${6:-}" ] || kill -0 "$6" 2>/dev/null || return 1
		sleep 0.1; _n=$((_n - 1))
	done
}

# wait_line FILE REGEX TENTHS [PID]: until FILE has a line matching REGEX;
# 1 after TENTHS tenths of a second or once PID has exited
wait_line() {
	_n=$3
	until grep -Eq "$2" "$1" 2>/dev/null; do
		[ "$_n" -gt 0 ] || return 1
		[ -z "${4:-}" ] || kill -0 "$4" 2>/dev/null || { grep -Eq "$2" "$1"; return; }
		sleep 0.1; _n=$((_n - 1))
	done
}

# run_p NAME JDK MASK CLASS JVMARGS -- RECORD-ARGS...: start CLASS on JDK
# (lingering 300 s after its truth), record it with -p PID and the
# arguments, go once the map has MASK on, end the recording (SIGTERM) when
# the workload printed DONE, then the map must have MASK off again; sets
# JPID (left running: end it with stop_jvm)
run_p() {
	_nm=$1 _jdk=$2 _mask=$3 _cls=$4 _jargs=$5
	shift 6
	# shellcheck disable=SC2086
	# AllocSites: on until about 6000 events at the default interval
	# (a share of 20 % then has a sampling spread of 2.6 %, the +-10 %
	# judged is four of it), however busy the host
	_min=
	[ "$_cls" = AllocSites ] && _min=$((6000 * 524288))
	# shellcheck disable=SC2086
	"$_jdk/bin/java" $_jargs -cp "$WL/classes" "$_cls" "$TMP/$_nm.go" \
		"$SECS" 300 $_min > "$TMP/$_nm.out" 2>&1 &
	JPID=$!
	bg "$JPID"
	wait_line "$TMP/$_nm.out" '^READY' 600 "$JPID" ||
		{ cat "$TMP/$_nm.out"; fail "$_nm: $_cls did not start"; }
	"$ASGST" record -p "$JPID" -d 300 "$@" > "$TMP/$_nm.log" 2>&1 &
	_rp=$!
	bg "$_rp"
	_map=$(cm_map "$JPID")
	# the recorder attaches the agent, which sees the request within 100 ms
	wait_flags "$_map" "$JPID" $((_mask | CM_F_EVENTS)) \
		$((_mask | CM_F_EVENTS)) 900 "$_rp" ||
		{ cat "$TMP/$_nm.log"; fail "$_nm: the code map $_map never had flags $_mask on (flags: $(cm_flags "$_map" "$JPID"))"; }
	echo "INFO: $_nm: map flags $(cm_flags "$_map" "$JPID") while recording"
	touch "$TMP/$_nm.go"
	wait_line "$TMP/$_nm.out" '^DONE' $(((SECS + 120) * 10)) "$JPID" ||
		{ cat "$TMP/$_nm.out"; fail "$_nm: $_cls did not finish"; }
	kill -0 "$JPID" 2>/dev/null || fail "$_nm: the JVM exited after its truth"
	kill -TERM "$_rp"
	wait "$_rp" || { cat "$TMP/$_nm.log"; fail "$_nm: record failed"; }
	tail -n 1 "$TMP/$_nm.log" | sed "s/^/INFO: $_nm: record: /"
	# (e) the recorder's request is gone: the agent turns the events off
	wait_flags "$_map" "$JPID" "$_mask" 0 100 ||
		fail "$_nm: 10 s after the recording ended the map's flags are $(cm_flags "$_map" "$JPID"): events still on"
	echo "INFO: $_nm: map flags $(cm_flags "$_map" "$JPID") after the recording"
}

stop_jvm() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# pprof_read NAME INDEX: go tool pprof -raw and -top -cum (that sample
# index) of $TMP/NAME.pb.gz into NAME.raw, NAME.top; sets PP to the check's
# options for them (empty without go); rc=1 when pprof cannot read it
pprof_read() {
	PP=""
	[ "$GO" -eq 1 ] || return 0
	if ! go tool pprof -symbolize=none -raw "$TMP/$1.pb.gz" > "$TMP/$1.raw" 2> "$TMP/$1.perr"; then
		cat "$TMP/$1.perr"
		echo "FAIL: $1: go tool pprof -raw could not read the profile"
		rc=1
		return 0
	fi
	if ! go tool pprof -symbolize=none -top -cum -nodecount=500 \
		-sample_index="$2" "$TMP/$1.pb.gz" > "$TMP/$1.top" 2> "$TMP/$1.perr"; then
		cat "$TMP/$1.perr"
		echo "FAIL: $1: go tool pprof -top -sample_index=$2 could not read the profile"
		rc=1
		return 0
	fi
	grep -E '^(Type|Showing nodes)' "$TMP/$1.top" | sed "s/^/INFO: $1: pprof -top: /"
	PP="--pprof-raw $TMP/$1.raw --pprof-top $TMP/$1.top"
}

rc=0
jdks=$(test_jdks) || rc=1
for jdk in $jdks; do
	v=$(basename "$jdk")

	# (a) late attach, -e alloc at the default interval
	run_p "alloc-$v" "$jdk" $CM_F_ALLOC_ON AllocSites "$ALLOC_FLAGS" -- \
		-e alloc -o "$TMP/alloc-$v.json" -o "$TMP/alloc-$v.pb.gz"
	echo "INFO: alloc-$v: $(grep '^DONE' "$TMP/alloc-$v.out")"
	stop_jvm "$JPID"
	pprof_read "alloc-$v" alloc_space
	# shellcheck disable=SC2086
	$CHECK alloc "$TMP/alloc-$v.json" --pid "$JPID" --events alloc \
		--workload "$TMP/alloc-$v.out" $PP || rc=1

	# (b) the agent from the JVM's start, the recorder starts the JVM:
	# cpu, alloc and lock in one run, one allocation sampled every 256 KiB
	n="all-$v"
	# shellcheck disable=SC2086
	"$ASGST" record -e cpu,alloc,lock --alloc-interval 262144 -d 300 \
		-o "$TMP/$n.json" -- \
		"$jdk/bin/java" -agentpath:"$AGENT" $ALLOC_FLAGS \
		-cp "$WL/classes" AllocSites "$TMP/$n.go" "$SECS" 0 \
		$((6000 * 262144)) \
		> "$TMP/$n.out" 2> "$TMP/$n.log" &
	rp=$!
	bg "$rp"
	wait_line "$TMP/$n.out" '^READY [0-9]+$' 600 "$rp" ||
		{ cat "$TMP/$n.log" "$TMP/$n.out"; fail "$n: AllocSites did not start under record"; }
	jp=$(sed -n 's/^READY \([0-9]*\)$/\1/p' "$TMP/$n.out")
	m=$(cm_map "$jp")
	wait_flags "$m" "$jp" $((CM_F_EVENTS | CM_F_ALLOC_ON | CM_F_LOCK_ON)) \
		$((CM_F_EVENTS | CM_F_ALLOC_ON | CM_F_LOCK_ON)) 900 "$rp" ||
		{ cat "$TMP/$n.log"; fail "$n: the code map $m never had alloc and lock on (flags: $(cm_flags "$m" "$jp"))"; }
	echo "INFO: $n: map flags $(cm_flags "$m" "$jp") while recording"
	touch "$TMP/$n.go"
	wait "$rp" || { cat "$TMP/$n.log"; fail "$n: record failed"; }
	tail -n 1 "$TMP/$n.log" | sed "s/^/INFO: $n: record: /"
	grep -q '^DONE' "$TMP/$n.out" || { cat "$TMP/$n.out"; fail "$n: AllocSites did not finish"; }
	$CHECK alloc "$TMP/$n.json" --pid "$jp" --events cpu,alloc,lock \
		--interval 262144 --workload "$TMP/$n.out" || rc=1

	# (c) late attach, -e lock
	run_p "lock-$v" "$jdk" $CM_F_LOCK_ON LockHold "-Xmx64m" -- \
		-e lock -o "$TMP/lock-$v.json" -o "$TMP/lock-$v.pb.gz"
	echo "INFO: lock-$v: $(grep '^DONE' "$TMP/lock-$v.out")"
	stop_jvm "$JPID"
	pprof_read "lock-$v" delay
	# shellcheck disable=SC2086
	$CHECK lock "$TMP/lock-$v.json" --pid "$JPID" --events lock \
		--workload "$TMP/lock-$v.out" $PP || rc=1

	# (f) JDK 21+: virtual threads allocating get their own stacks, as
	# in cpu samples (tests/workloads/EventsSmoke.java "virtual")
	[ "$("$jdk/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' |
		head -n 1)" -ge 21 ] || continue
	"$ASGST" record -q -e alloc -o "$TMP/vt-$v.json" -- "$jdk/bin/java" \
		-agentpath:"$AGENT" -cp "$WL/classes" EventsSmoke 3 virtual \
		> /dev/null 2> "$TMP/vt-$v.log" ||
		{ cat "$TMP/vt-$v.log"; fail "vt-$v: record failed"; }
	python3 - "$TMP/vt-$v.json" "vt-$v" <<'PY' || rc=1
import json, sys
d = json.load(open(sys.argv[1]))
alloc = [s for s in d["stacks"] if s["event"] == "alloc"
         and any(f.get("method") == "allocate" and f.get("class") == "EventsSmoke"
                 for f in s["frames"])]
n = sum(s["count"] for s in alloc)
vt = [s for s in alloc if s["virtual_thread"]]
nvt = sum(s["count"] for s in vt)
def whole(s):
    names = [f.get("method") for f in s["frames"]]
    return (not s["error"] and s["frames"][0]["type"] == "class"
            and "enterSpecial" in names
            and all(f["type"] != "unknown" for f in s["frames"]))
nwhole = sum(s["count"] for s in vt if whole(s))
print("MEASURE: %s: %d allocations in EventsSmoke.allocate, %d on virtual "
      "threads, %d of them whole to Continuation.enterSpecial (%.2f %%)"
      % (sys.argv[2], n, nvt, nwhole, 100.0 * nwhole / max(nvt, 1)))
assert n > 100, "too few allocation events in the virtual threads' work"
assert nvt >= 0.99 * n, "allocations not marked as a virtual thread's"
assert nwhole >= 0.99 * nvt, "virtual threads' allocation stacks not whole"
PY
done
[ "$rc" -eq 0 ] || exit 1
echo "PASS"
