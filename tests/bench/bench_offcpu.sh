#!/bin/sh
# Overhead of off-CPU recording on a context-switch-heavy workload
# (tests/workloads/ctxswitch.c, two threads ping-ponging over pipes, both
# bound to CPU 0 so that the rate does not depend on their placement):
# switches/s of the workload alone (the baseline), under record -e cpu
# (99 Hz), under record -e offcpu (the default sampling: a stack 1 in N
# switch-outs) and under record -e offcpu --offcpu-sample 1 (every
# switch's stack, as before the sampling), as ratios against the baseline
# of the same run (runs interleaved, median of ROUNDS, the spread as the
# lowest and highest), beside the target (>= 0.8 with the default) and the
# every-switch figure; the off-CPU time the default sampling gives each
# ping-pong thread against what the thread measured itself (wall less CPU
# time, its share of the capture time added, as test_offcpu does), beside
# its target (0.85-1.15); and the off-CPU events lost. On a host where other
# work shares CPU 0 the wall-clock rates move with it, so the same ratios
# are also given per CPU-second of the pair (switches / the two threads'
# own CPU time, which holds the sampler's program but not what other
# programs ran), median of the rounds' ratios. Part of make bench, not of
# the tests.
# ROUNDS (default 3) x SECONDS_PER_RUN (default 5) per configuration;
# BENCH_QUICK=1: 1 x 3.
. "$(dirname "$0")/../integration/lib.sh"
need_root
[ -x "$ASGST" ] || fail "$ASGST not built"
[ -x "$WL/ctxswitch" ] || fail "$WL/ctxswitch not built (make workloads)"
R=${ROUNDS:-3}; S=${SECONDS_PER_RUN:-5}
[ "${BENCH_QUICK:-}" = 1 ] && { R=1; S=3; }
rate() { sed -n 's/^DONE .*switches_per_s=\([0-9]*\).*/\1/p' "$1"; }
# switches per CPU-second of the ping-pong pair
cpurate() {
	awk '/^THREAD cs-p/ { for (i = 1; i <= NF; i++) if ($i ~ /^cpu_ns=/) { sub(/cpu_ns=/, "", $i); c += $i } }
	     /^DONE/ { for (i = 1; i <= NF; i++) if ($i ~ /^switches=/) { sub(/switches=/, "", $i); n = $i } }
	     END { if (c > 0) printf "%.0f", n / (c / 1e9) }' "$1"
}
rr() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.4f", a / b; else print 0 }'; }
base=""; cpu=""; off=""; all=""; roff=""; rall=""; tratio=""; lost=0; events=0; est=0; switches=0
i=0
while [ $i -lt "$R" ]; do
	"$WL/ctxswitch" "$S" 0 - 0 > "$TMP/b.out"
	"$ASGST" record -q -e cpu -o "$TMP/c.json" -- "$WL/ctxswitch" "$S" 0 - 0 > "$TMP/c.out" 2> "$TMP/c.err" ||
		fail "record -e cpu failed"
	"$ASGST" record -q -e offcpu -o "$TMP/o.json" -- "$WL/ctxswitch" "$S" 0 - 0 > "$TMP/o.out" 2> "$TMP/o.err" ||
		fail "record -e offcpu failed"
	"$ASGST" record -q -e offcpu --offcpu-sample 1 -o "$TMP/a.json" -- "$WL/ctxswitch" "$S" 0 - 0 > "$TMP/a.out" 2> "$TMP/a.err" ||
		fail "record -e offcpu --offcpu-sample 1 failed"
	b=$(rate "$TMP/b.out"); c=$(rate "$TMP/c.out"); o=$(rate "$TMP/o.out")
	e=$(rate "$TMP/a.out")
	cb=$(cpurate "$TMP/b.out")
	roff="$roff $(rr "$(cpurate "$TMP/o.out")" "$cb")"
	rall="$rall $(rr "$(cpurate "$TMP/a.out")" "$cb")"
	[ -n "$b" ] && [ -n "$c" ] && [ -n "$o" ] && [ -n "$e" ] ||
		fail "a run printed no DONE line"
	set -- $(python3 -c "
import json, re
d = json.load(open('$TMP/o.json'))
off = [s for s in d['stacks'] if s.get('event') == 'offcpu']
n = sum(s['count'] for s in off) or 1
# per ping-pong thread: (off-CPU ns + its share of the capture time)
# over (wall - CPU time), as the thread measured them
r = []
for ln in open('$TMP/o.out'):
    m = re.match(r'THREAD cs-p\S+ (\d+) switches=\d+ cpu_ns=(\d+) wall_ns=(\d+)', ln)
    if m:
        tid, c, w = (int(x) for x in m.groups())
        mine = [s for s in off if s['tid'] == tid]
        ns = sum(s['offcpu_ns'] for s in mine)
        cap = d.get('offcpu_capture_ns', 0) * sum(s['count'] for s in mine) / n
        r.append('%.4f' % ((ns + cap) / (w - c)) if w > c else '0')
print(d['offcpu_lost'], d['offcpu_samples'],
      sum(s['count'] for s in off), ','.join(r) or 'none')")
	[ $# -eq 4 ] || fail "no offcpu_lost / offcpu_samples in the JSON"
	[ "$4" != none ] || fail "no THREAD lines of cs-ping / cs-pong"
	tratio="$tratio $(echo "$4" | tr ',' ' ')"
	sw=$(sed -n 's/^DONE .* switches=\([0-9]*\) .*/\1/p' "$TMP/o.out")
	echo "INFO: round $i: switches/s alone $b, record -e cpu $c, record -e offcpu $o ($2 off-CPU stacks recorded + $1 lost of the workload's $sw switches), every switch $e; off-CPU time per thread / its own measure $4"
	base="$base $b"; cpu="$cpu $c"; off="$off $o"; all="$all $e"
	lost=$((lost + $1)); events=$((events + $2)); est=$((est + $3))
	switches=$((switches + sw))
	i=$((i + 1))
done
med() { echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.4f", a / b; else print "n/a" }'; }
lo() { echo "$@" | tr ' ' '\n' | grep . | sort -n | head -n 1; }
hi() { echo "$@" | tr ' ' '\n' | grep . | sort -n | tail -n 1; }
mb=$(med $base); mc=$(med $cpu); mo=$(med $off); ma=$(med $all)
echo "MEASURE: switches/s alone median $mb (spread $(lo $base)..$(hi $base)), record -e offcpu $mo ($(lo $off)..$(hi $off)), every switch $ma ($(lo $all)..$(hi $all)), record -e cpu $mc ($(lo $cpu)..$(hi $cpu))"
echo "MEASURE: offcpu_switch_rate_ratio $(ratio "$mo" "$mb") (target >= 0.8; every switch, as before the sampling: $(ratio "$ma" "$mb")) (median switches/s under record -e offcpu $mo / alone $mb)"
echo "MEASURE: offcpu_cpu_time_ratio $(med $roff) (target >= 0.8; every switch: $(med $rall)) (switches per CPU-second of the pair under record -e offcpu / alone, median of the rounds' $roff)"
echo "MEASURE: offcpu_thread_time_ratio median $(med $tratio) (spread $(lo $tratio)..$(hi $tratio); target 0.85-1.15) (default sampling: a ping-pong thread's off-CPU time, its capture share added, over its wall - CPU time; every thread of every round)"
echo "MEASURE: offcpu_all_switch_rate_ratio $(ratio "$ma" "$mb") (--offcpu-sample 1: median $ma / alone $mb)"
echo "MEASURE: cpu_switch_rate_ratio $(ratio "$mc" "$mb") (median switches/s under record -e cpu $mc / alone $mb)"
echo "MEASURE: offcpu_lost $lost of $((lost + events)) off-CPU stacks (default sampling) ($(awk -v l=$lost -v e=$events 'BEGIN { if (l + e) printf "%.2f", 100 * l / (l + e); else print 0 }') %); the switches they stand for (each stack's N) = $(awk -v e=$est -v s=$switches 'BEGIN { if (s) printf "%.2f", 100 * e / s; else print "n/a" }') % of the workload's own switch count"
echo PASS
