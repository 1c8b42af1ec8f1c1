#!/bin/sh
# Off-CPU recording on a context-switch-heavy C workload
# (tests/workloads/ctxswitch.c: two threads ping-ponging a byte over pipes
# on one CPU, ~140k switches/s here). record -e offcpu -p PID keeps up: the ping-pong
# threads' off-CPU stacks hold their chain and kernel frames, offcpu_ns > 0,
# their off-CPU time and switch-outs match what the threads measured
# themselves (they start after the sampler and end before the recording),
# what is missing is counted as lost (JSON "lost" = the summary line's);
# blocked reads are not "preempted", threads that only spin are;
# -e cpu,offcpu gives both kinds in one run, also in pprof. Those runs
# take every switch's stack (--offcpu-sample 1), which the checks of
# exact counts need; with the default sampling (a stack 1 in N switch-outs,
# weighed N times, each thread's stacks scaled to its exact sums) the
# threads' off-CPU time is still within 85-115 % of their own measure,
# their switch-outs within 15 %, their known chain still >= 90 % of their
# time, and report of the raw file gives the live numbers; the shares of
# their stacks beside the every-switch run's are printed (two runs differ
# by themselves: runtime_check.py offcpu-sampled). The shares are checked
# on one run recorded by two recorders at once (runtime_check.py
# offcpu-pair): the default sampling against every switch's stack, each
# stack and group of stacks with >= 1 % of cs-ping's off-CPU time in the
# full recording (its time plus, per switch-out, what the sampled
# recorder's intervals hold beyond the full one's: each program's own
# time at the switch) within 5 percentage points of it in the sampled one.
. "$(dirname "$0")/lib.sh"
need_bpf
[ -x "$ASGST" ] || fail "$ASGST not built (make all)"
[ -x "$WL/ctxswitch" ] || fail "$WL/ctxswitch not built (make workloads)"
command -v python3 > /dev/null || skip_or_fail "python3 not found"
RCHECK="python3 $TOP/tests/integration/runtime_check.py"

"$ASGST" record -e sideways -p $$ -d 1 -o "$TMP/x.json" 2> "$TMP/err"
[ $? -eq 2 ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] ||
	{ cat "$TMP/err"; fail "-e sideways: want exit 2 and one line"; }

# The ping-pong pair shares CPU 0: every switch is then a direct hand-over.
# A thread woken on another, idle CPU is charged CPU time from before it is
# switched in on a 6.18 kernel in a VM (its clock starts at the wake-up's
# run-queue time, ~9 us ahead of the switch here), so its own wall - CPU
# falls short of the time it was off the CPU by that much a wake-up, and
# the threads' figures would not be a reference for the recording's.
# run NAME SECONDS SPINNERS: start ctxswitch waiting for its go file,
# record it with $RARGS (until it exits), let its threads run SECONDS once
# the sampler is on; sets WPID
run() {
	"$WL/ctxswitch" "$2" "$3" "$TMP/$1.go" 0 > "$TMP/$1.out" &
	WPID=$!
	bg $WPID
	wait_file "$TMP/$1.out" 50 && sleep 0.1
	grep -q '^READY' "$TMP/$1.out" || fail "ctxswitch did not start"
	"$ASGST" record -p "$WPID" -d $(($2 + 30)) $RARGS > "$TMP/$1.log" 2>&1 &
	_r=$!
	wait_link "$_r" "$TMP/$1.log" ||
		fail "record $1: the sampler never attached"
	sleep 0.3
	touch "$TMP/$1.go"
	wait $_r || { cat "$TMP/$1.log"; fail "record $1 failed"; }
	grep '^asgst-bpf: .* samples,' "$TMP/$1.log" | sed 's/^/INFO: record: /'
	grep -q '^DONE' "$TMP/$1.out" || { cat "$TMP/$1.out"; fail "ctxswitch did not finish"; }
	sed -n 's/^DONE /INFO: workload: /p' "$TMP/$1.out"
}
check() { # name extra-args...
	_n=$1; shift
	$RCHECK offcpu "$TMP/$_n.json" --pid "$WPID" --workload "$TMP/$_n.out" \
		--summary "$TMP/$_n.log" "$@" || rc=1
	wait "$WPID" 2>/dev/null
}

rc=0
# off-CPU only: the ping-pong pair alone, every switch's stack
RARGS="--stats -e offcpu --offcpu-sample 1 -o $TMP/off.json"
run off 5 0
check off
FULL_PID=$WPID

# the same with the default sampling, and its raw file decoded again
RARGS="--stats -e offcpu -o $TMP/def.json -o $TMP/def.asgst"
run def 5 0
"$ASGST" report -q -i "$TMP/def.asgst" -o "$TMP/rep.json" ||
	{ rc=1; echo "FAIL: report -i def.asgst"; }
$RCHECK offcpu-sampled "$TMP/def.json" --pid "$WPID" \
	--workload "$TMP/def.out" --summary "$TMP/def.log" \
	--full "$TMP/off.json" --full-pid "$FULL_PID" \
	--full-workload "$TMP/off.out" --report "$TMP/rep.json" || rc=1
wait "$WPID" 2>/dev/null

# One run seen by two recorders at once, each with its own sampler:
# every switch's stack (full, attached first) and the default sampling
# (pair). ctxswitch's fork mode: cs-pong runs in a child process that
# neither records, every 16th round cs-ping waits long (cs_exchange_slow:
# cs-pong answers after 100 us), the other rounds briefly. Both programs
# run at each switch, the first attached first: the full one takes
# cs-ping's stack before the sampled one reads the clock, and at cs-ping's
# switch-in the task leaving the CPU is cs-pong or another untraced task,
# so the two sum the same intervals, but for each program's own time at
# the switch, and the full recording is the truth for the sampled one
# (runtime_check.py offcpu-pair says what is checked).
# The recorders run on CPU 1: their own decoding on CPU 0 would put their
# time slices among cs-ping's waits.
# The check says when one recording was not the truth for the other
# (exit 3: the full recorder lost stacks, or the two totals differ by more
# than 10 %); that run is made once more, the shares never.
PAIR_SECONDS=${PAIR_SECONDS:-8}
PIN=""
[ "$(nproc)" -ge 2 ] && command -v taskset > /dev/null && PIN="taskset -c 1"
pair() { # NAME
	"$WL/ctxswitch" "$PAIR_SECONDS" 0 "$TMP/$1.go" 0 fork 16 > "$TMP/$1.out" &
	WPID=$!
	bg $WPID
	wait_file "$TMP/$1.out" 50 && sleep 0.1
	grep -q '^READY' "$TMP/$1.out" || fail "ctxswitch did not start"
	$PIN "$ASGST" record -p "$WPID" -d $((PAIR_SECONDS + 30)) --stats \
		-e offcpu --offcpu-sample 1 --ring-buffer 256 \
		-o "$TMP/$1-full.json" > "$TMP/$1-full.log" 2>&1 &
	_full=$!
	wait_link "$_full" "$TMP/$1-full.log" ||
		fail "record $1-full: the sampler never attached"
	$PIN "$ASGST" record -p "$WPID" -d $((PAIR_SECONDS + 30)) --stats \
		-e offcpu -o "$TMP/$1.json" > "$TMP/$1.log" 2>&1 &
	_pair=$!
	wait_link "$_pair" "$TMP/$1.log" ||
		fail "record $1: the sampler never attached"
	sleep 0.3
	touch "$TMP/$1.go"
	wait $_full || { cat "$TMP/$1-full.log"; fail "record $1-full failed"; }
	wait $_pair || { cat "$TMP/$1.log"; fail "record $1 failed"; }
	grep -q '^DONE' "$TMP/$1.out" || { cat "$TMP/$1.out"; fail "ctxswitch did not finish"; }
	sed -n 's/^DONE /INFO: workload: /p' "$TMP/$1.out"
	$RCHECK offcpu-pair "$TMP/$1.json" --full "$TMP/$1-full.json" \
		--workload "$TMP/$1.out" --summary "$TMP/$1.log" \
		--full-summary "$TMP/$1-full.log"
	_prc=$?
	wait "$WPID" 2>/dev/null
	return $_prc
}
pair pair1
case $? in
0) ;;
3)	echo "INFO: pair1: one recording was not the truth for the other: once more"
	pair pair2 || { rc=1; echo "FAIL: offcpu-pair, twice"; } ;;
*) rc=1 ;;
esac

# two spinners as well: 4 runnable threads on this machine's 2 CPUs
RARGS="--stats -e offcpu --offcpu-sample 1 -o $TMP/spin.json"
run spin 3 2
check spin --spin

# both kinds in one run, JSON and pprof from the same recording
RARGS="--stats -e cpu,offcpu --offcpu-sample 1 -F 199 -o $TMP/both.json -o $TMP/both.pb.gz"
run both 3 0
check both --both --pprof "$TMP/both.pb.gz"
exit $rc
