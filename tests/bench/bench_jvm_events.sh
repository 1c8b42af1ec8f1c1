#!/bin/sh
# What JVM events (record -e alloc, -e lock) cost. Part of make bench, not
# of the tests: it prints, it asserts nothing about times.
#
# 1. -e alloc: one warmed-up JVM (tests/workloads/AllocBench.java, one
#    thread allocating ~1 GB/s with work between the allocations)
#    started with -agentpath (the agent's load is not in the comparison),
#    its operations over spans of SECONDS_PER_RUN: unprofiled (agent
#    idle: the baseline), under record -e alloc -p (default interval,
#    512 KiB) and under record -e alloc --alloc-interval 64k; the three
#    interleaved in ROUNDS rounds (order rotated each round), medians. The
#    same JVM throughout, so its JIT's choices are the same in every span.
#    Throughput by wall time (what a user sees; on a shared host as noisy
#    as the host) and by the allocating thread's own CPU time (the
#    agent's callback, the uprobe's traps and the BPF program run on that
#    thread; other work on the host hardly changes it). Then the cost of
#    an event: in the kernel (bpf_ns_per_jvm_event of --stats), the
#    recorder's decode CPU an event (decode_cpu_ns_per_sample: -e alloc
#    alone records nothing else), and the JVM thread's (its CPU an
#    operation with less without, over the events an operation).
# 2. -e lock: LockHold (three waiters and a holder on one monitor) alone
#    and under record -e lock, ROUNDS each interleaved: the contended
#    entries a second (the waiters' own count) as a ratio, the events a
#    second and their in-kernel cost.
#
# ROUNDS (default 5) x SECONDS_PER_RUN (default 10); BENCH_QUICK=1: 2 x 4.
. "$(dirname "$0")/../integration/lib.sh"
need_bpf
need_jdk17
[ -x "$ASGST" ] || fail "$ASGST not built"
[ -f "$AGENT" ] || fail "agent not built: $AGENT"
[ -f "$WL/classes/AllocBench.class" ] || fail "AllocBench not built (make workloads)"
R=${ROUNDS:-5}; S=${SECONDS_PER_RUN:-10}
[ "${BENCH_QUICK:-}" = 1 ] && { R=2; S=4; }
JAVA="$JDK17/bin/java"
SETTLE=1	# s from a recorder's start to the span measured
now_ms() { date +%s%3N; }
stat_field() { sed -n "s/.* $2=\([0-9.]*\).*/\1/p" "$1" | tail -n 1; }
med() { echo "$@" | tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.4f", a / b; else print "n/a" }'; }
wait_line() { # FILE PATTERN: wait up to 60 s for a line
	_i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -lt 600 ] || return 1
		sleep 0.1
	done
}

# --- 1. -e alloc ---------------------------------------------------------
# the JVM runs all the rounds: per span SETTLE + S + 1.5 s at most
total=$((R * 3 * (S + SETTLE + 3) + 10))
"$JAVA" -Xms1g -Xmx1g -agentpath:"$AGENT" -cp "$WL/classes" AllocBench "$total" \
	> "$TMP/ab.out" 2> "$TMP/ab.err" &
jpid=$!; bg $jpid
wait_line "$TMP/ab.out" '^READY' || fail "AllocBench not ready: $(cat "$TMP/ab.err")"
bpo=$(sed -n 's/^READY [0-9]* //p' "$TMP/ab.out")
sleep 2	# the ticker started, the heap sized
: > "$TMP/spans"
span() { # NAME ROUND [--alloc-interval X]
	_n=$1; _r=$2; shift 2
	if [ "$_n" = base ]; then
		_a=$(now_ms); sleep "$S"; _b=$(now_ms)
		echo "$_n $_r $_a $_b 0 0" >> "$TMP/spans"
		return
	fi
	_s=$(now_ms)
	"$ASGST" record -q --stats -e alloc "$@" -p $jpid \
		-d $((SETTLE + S + 1)) -o "$TMP/$_n.$_r.json" 2> "$TMP/$_n.$_r.stats" &
	_p=$!
	sleep "$SETTLE"; _a=$(now_ms); sleep "$S"; _b=$(now_ms)
	wait $_p || fail "record -e alloc $* failed: $(cat "$TMP/$_n.$_r.stats")"
	echo "$_n $_r $_a $_b $_s $(now_ms)" >> "$TMP/spans"
	sleep 1	# the agent turns sampling off within 100 ms
}
i=0
while [ $i -lt "$R" ]; do
	case $((i % 3)) in
	0) order="base def i64k" ;;
	1) order="def i64k base" ;;
	*) order="i64k base def" ;;
	esac
	for n in $order; do
		case $n in
		base) span base $i ;;
		def) span def $i ;;
		i64k) span i64k $i --alloc-interval 64k ;;
		esac
	done
	i=$((i + 1))
done
kill $jpid 2>/dev/null; wait $jpid 2>/dev/null
# per span from the ticks (T epoch_ms ops cpu_ns) inside it: ops a second
# of wall time, ops a second of the allocating thread's CPU time, and the
# ops over the whole recording (its start to its end: for events per op)
python3 - "$TMP/ab.out" "$TMP/spans" > "$TMP/rates" <<'EOF' || fail "no rates"
import sys
ticks = [tuple(int(x) for x in l.split()[1:4]) for l in open(sys.argv[1])
         if l.startswith('T ')]
def between(a, b):
    inside = [t for t in ticks if a <= t[0] <= b]
    if len(inside) < 2:
        sys.exit('span %d-%d: no ticks' % (a, b))
    return inside[0], inside[-1]
for l in open(sys.argv[2]):
    n, r, a, b, s, e = l.split()
    (t0, o0, c0), (t1, o1, c1) = between(int(a), int(b))
    rec = 0
    if n != 'base':
        (_, o0r, _), (_, o1r, _) = between(int(s), int(e))
        rec = o1r - o0r
    print(n, r, '%.0f' % ((o1 - o0) * 1000.0 / (t1 - t0)),
          '%.0f' % ((o1 - o0) * 1e9 / (c1 - c0)), rec)
EOF
rates() { awk -v n="$1" -v c="${2:-3}" '$1 == n { printf " %s", $c }' "$TMP/rates"; }
fields() { # NAME FIELD: the field of every round's --stats
	for f in "$TMP/$1".*.stats; do printf ' %s' "$(stat_field "$f" "$2")"; done
}
echo "INFO: ops/s per round: unprofiled$(rates base) | -e alloc (512k)$(rates def) | -e alloc --alloc-interval 64k$(rates i64k)"
echo "INFO: ops per CPU-second of the allocating thread per round: unprofiled$(rates base 4) | -e alloc (512k)$(rates def 4) | -e alloc --alloc-interval 64k$(rates i64k 4)"
mb=$(med $(rates base)); cb=$(med $(rates base 4))
gbs=$(awk -v o="$mb" -v b="$bpo" 'BEGIN { printf "%.2f", o * b / 1e9 }')
echo "INFO: unprofiled: $mb ops/s, $bpo bytes an op: $gbs GB/s allocated, $(awk -v c="$cb" 'BEGIN { printf "%.0f", 1e9 / c }') ns of the thread's CPU an op"
for n in def i64k; do
	case $n in def) iv=512k ;; *) iv=64k ;; esac
	mw=$(med $(rates $n)); cw=$(med $(rates $n 4))
	# events an op: the recording's events over the ops done from the
	# recorder's start to its end
	epo=""
	for j in $(awk -v n=$n '$1 == n { print $2 }' "$TMP/spans"); do
		e=$(stat_field "$TMP/$n.$j.stats" alloc_events)
		o=$(awk -v n=$n -v j=$j '$1 == n && $2 == j { print $5 }' "$TMP/rates")
		epo="$epo $(awk -v e="$e" -v o="$o" 'BEGIN { if (o > 0) printf "%.6f", e / o; else print 0 }')"
	done
	me=$(med $epo)
	evs=$(awk -v e="$me" -v o="$mw" 'BEGIN { printf "%.0f", e * o }')
	bpf=$(med $(fields $n bpf_ns_per_jvm_event))
	dec=$(med $(fields $n decode_cpu_ns_per_sample))
	rec=$(med $(fields $n recorder_cpu_ns_per_sample))
	thr=$(med $(fields $n jvm_events_throttled)); lost=$(med $(fields $n jvm_events_lost))
	# the JVM's cost an event: CPU an op with less CPU an op without, over
	# the events an op (the allocating thread's own time: the callback,
	# the trap, the BPF program, the JVM's sampling slow path)
	jvm=$(awk -v b="$cb" -v w="$cw" -v e="$me" 'BEGIN { if (e > 0 && b > 0 && w > 0) printf "%.0f", (1e9 / w - 1e9 / b) / e; else print "n/a" }')
	echo "MEASURE: alloc_throughput_ratio_$iv $(ratio "$mw" "$mb") (median ops/s under record -e alloc --alloc-interval $iv $mw / unprofiled $mb; wall time, as noisy as the host)"
	echo "MEASURE: alloc_cpu_throughput_ratio_$iv $(ratio "$cw" "$cb") (median ops per CPU-second of the allocating thread under record $cw / unprofiled $cb)"
	echo "MEASURE: alloc_events_per_s_$iv $evs ($me events an op, per round:$epo; throttled $thr, lost $lost, medians)"
	echo "MEASURE: alloc_cost_per_event_$iv in-kernel ${bpf} ns, recorder decode CPU ${dec} ns (recorder CPU in all ${rec} ns), JVM thread ${jvm} ns (its CPU an op with less without, over the events an op; the in-kernel time is part of it)"
done

# --- 2. -e lock ----------------------------------------------------------
# LockHold waits for GOFILE, contends for S seconds, prints its counts;
# lock_run sets $rate: the waiters' entries a second (no subshell, so that
# fail ends the bench and the JVM is killed at exit)
lock_run() { # base|rec ROUND
	_o="$TMP/lk.$1.$2"
	rm -f "$_o.go"
	"$JAVA" -agentpath:"$AGENT" -cp "$WL/classes" LockHold "$_o.go" "$S" > "$_o.out" 2>&1 &
	_j=$!; bg $_j
	wait_line "$_o.out" '^READY' || fail "LockHold not ready: $(cat "$_o.out")"
	if [ "$1" = rec ]; then
		"$ASGST" record -q --stats -e lock -p $_j -o "$_o.json" 2> "$_o.stats" &
		_p=$!
		sleep "$SETTLE"
	fi
	touch "$_o.go"
	wait $_j
	[ "$1" = rec ] && { wait $_p || fail "record -e lock failed: $(cat "$_o.stats")"; }
	rate=$(awk -v s="$S" '$1 == "WAITER" { n += $3 } END { printf "%.1f", n / s }' "$_o.out")
}
lb=""; lr=""
i=0
while [ $i -lt "$R" ]; do
	if [ $((i % 2)) -eq 0 ]; then
		lock_run base $i; b=$rate; lock_run rec $i; w=$rate
	else
		lock_run rec $i; w=$rate; lock_run base $i; b=$rate
	fi
	lb="$lb $b"; lr="$lr $w"
	i=$((i + 1))
done
levs=""; lbpf=""; ldec=""
for f in "$TMP"/lk.rec.*.stats; do
	levs="$levs $(awk -v e="$(stat_field "$f" lock_events)" -v s="$S" 'BEGIN { printf "%.1f", e / s }')"
	lbpf="$lbpf $(stat_field "$f" bpf_ns_per_jvm_event)"
	ldec="$ldec $(stat_field "$f" decode_cpu_ns_per_sample)"
done
echo "INFO: LockHold contended entries/s per round: alone$lb | under record -e lock$lr"
echo "MEASURE: lock_entry_rate_ratio $(ratio "$(med $lr)" "$(med $lb)") (median contended entries/s under record -e lock $(med $lr) / alone $(med $lb))"
echo "MEASURE: lock_events_per_s $(med $levs) (per round:$levs)"
echo "MEASURE: lock_cost_per_event in-kernel $(med $lbpf) ns (per round:$lbpf), recorder decode CPU $(med $ldec) ns"
echo PASS
