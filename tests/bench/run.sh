#!/bin/sh
# make bench: costs of asgst-bpf, each as a figure and as a ratio against a
# baseline measured in the same run. Needs root. BENCH_QUICK=1 shortens the
# long runs (for trying it out; the figures in docs/sampler.md use the full
# lengths).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
A="$BUILD/asgst-bpf"
WL="$BUILD/workloads"
T=$(mktemp -d /tmp/asgst-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
LONG=30; RSS_SECS=60
[ "${BENCH_QUICK:-}" = 1 ] && { LONG=5; RSS_SECS=10; }
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (sudo make bench)"; exit 1; }

stat_field() { sed -n "s/.*$2=\([0-9.]*\).*/\1/p" "$1" | tail -n 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

echo "== sampler: in-kernel cost per sample (record --stats: bpf_ns_per_sample)"
# A sample's cost is the program's own time of the runs that took one
# (--stats has it timed, bpf_ns_per_sample); the floor is bpf_stats' mean
# over runs that take none (bpf_ns_per_run).
# floor: the same program on the same busy thread, which is not a target:
# it only finds that out (a cache lookup) and returns. What that costs is
# the price of running any program on this CPU at this rate (cold caches
# at 99 Hz), not of what a sample takes.
# Runs interleaved, ROUNDS of each (median): the host's speed drifts.
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ROUNDS=${ROUNDS:-3}
[ "${BENCH_QUICK:-}" = 1 ] && ROUNDS=1
sleep 3600 & idle0=$!
for hz in 99 999; do
	fs=""; ns=""; ws=""; wb=""; r=0
	while [ $r -lt "$ROUNDS" ]; do
		"$WL/native_chain" 6 1 > /dev/null &
		sleep 0.3
		"$A" record -q --stats -F $hz -p $idle0 -d 5 -o "$T/f.json" 2> "$T/floor"
		wait $!
		"$A" record -q --stats -F $hz --stack-window 0 -o "$T/a.json" -- \
			"$WL/native_chain" 5 1 > /dev/null 2> "$T/nowin"
		"$A" record -q --stats -F $hz --stack-window 16384 -o "$T/b.json" -- \
			"$WL/native_chain" 5 1 > /dev/null 2> "$T/win"
		fs="$fs $(stat_field "$T/floor" bpf_ns_per_run)"
		ns="$ns $(stat_field "$T/nowin" bpf_ns_per_sample)"
		ws="$ws $(stat_field "$T/win" bpf_ns_per_sample)"
		wb=$(stat_field "$T/win" window_bytes_per_sample)
		r=$((r + 1))
	done
	f=$(echo $fs | med); n=$(echo $ns | med); w=$(echo $ws | med)
	echo "  ${hz} Hz (median of $ROUNDS:$ns |$ws |$fs): no window ${n} ns/sample (baseline 1.00), 16 KiB window ${w} ns/sample (ratio $(ratio "$w" "$n"); ${wb} window bytes/sample); a filtered-out sample (the floor) ${f} ns (ratio $(ratio "$f" "$n")); the window sample less the floor $(awk -v a="$w" -v b="$f" 'BEGIN { printf "%d", a - b }') ns"
done
kill $idle0 2>/dev/null

# a JVM (tests/workloads/Chain.java: a 23-deep Java chain and an
# allocating thread), warmed up, recorded with its default 16 KiB window
JAVA=${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
if [ -x "$JAVA" ]; then
	"$JAVA" -cp "$WL/classes" Chain 40 > "$T/jvm.out" &
	jpid=$!
	i=0
	while ! grep -q READY "$T/jvm.out" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1; i=$((i + 1))
	done
	for hz in 99 999; do
		"$A" record -q --stats -F $hz -p $jpid -d 5 -o "$T/j.json" 2> "$T/jvm"
		k=$(python3 -c "
import json
d = json.load(open('$T/j.json'))
n = sum(s['count'] for s in d['stacks'])
k = sum(s['count'] for s in d['stacks'] if s['frames'] and s['frames'][0]['type'] == 'kernel')
print('%d of %d' % (k, n))")
		echo "  JVM at ${hz} Hz: $(stat_field "$T/jvm" bpf_ns_per_sample) ns/sample ($(stat_field "$T/jvm" bpf_ns_per_run) a run of the program, a sample taken or not), $(stat_field "$T/jvm" window_bytes_per_sample) window bytes/sample, $(stat_field "$T/jvm" record_bytes_per_sample) record bytes/sample, $k samples in the kernel (a kernel stack to unwind)"
	done
	kill $jpid 2>/dev/null; wait $jpid 2>/dev/null
else
	echo "  JVM: skipped (no JDK 17 at $JAVA)"
fi

# a CPython thread (tests/workloads/python/pychain.py, 14 Python frames
# deep) beside native_chain, both with the default window, in the kernel
# and in the recorder (its decode CPU per sample after the warm-up)
PY=/usr/bin/python3.11
if [ -x "$PY" ]; then
	for hz in 99 999; do
		"$PY" "$TOP/tests/workloads/python/pychain.py" 7 > "$T/py.out" &
		ppid=$!
		i=0
		while ! grep -q '^ready' "$T/py.out" 2>/dev/null && [ $i -lt 100 ]; do
			sleep 0.1; i=$((i + 1))
		done
		"$A" record -q --stats -F $hz -p $ppid -d 5 -o "$T/py.json" 2> "$T/py"
		wait $ppid
		"$A" record -q --stats -F $hz -o "$T/n.json" -- \
			"$WL/native_chain" 5 1 > /dev/null 2> "$T/nat"
		echo "  Python at ${hz} Hz: $(stat_field "$T/py" bpf_ns_per_sample) ns/sample in the kernel (native_chain $(stat_field "$T/nat" bpf_ns_per_sample), ratio $(ratio "$(stat_field "$T/py" bpf_ns_per_sample)" "$(stat_field "$T/nat" bpf_ns_per_sample)")), $(stat_field "$T/py" window_bytes_per_sample) window and frame bytes/sample, decode $(stat_field "$T/py" steady_decode_cpu_ns_per_sample) CPU ns/sample (native_chain $(stat_field "$T/nat" steady_decode_cpu_ns_per_sample))"
	done
else
	echo "  Python: skipped (no $PY)"
fi

echo "== lost samples: 999 Hz, all CPUs, busy workload, ${LONG}s"
ncpu=$(nproc)
"$WL/native_chain" $((LONG + 2)) "$ncpu" > /dev/null &
sleep 0.5
"$A" record -q --stats -a -F 999 -d $LONG -o "$T/lost.json" 2> "$T/lost"
s=$(python3 -c "import json; d=json.load(open('$T/lost.json')); print(d['samples'], d['lost'])")
echo "  samples lost: $s (samples, lost)"
echo "  the recorder in that run: $(stat_field "$T/lost" recorder_cpu_ns_per_sample) ns CPU/sample (whole run), $(stat_field "$T/lost" steady_cpu_ns_per_sample) steady, decode $(stat_field "$T/lost" steady_decode_cpu_ns_per_sample) ns CPU/sample steady"
wait

echo "== peak memory of record -a (${RSS_SECS}s) vs record -p of one idle process (baseline)"
sleep $((RSS_SECS + 5)) & idle=$!
"$A" record -q --stats -p $idle -d $RSS_SECS -o "$T/idle.json" 2> "$T/idle" &
"$WL/native_chain" $RSS_SECS 1 > /dev/null &
"$A" record -q --stats -a -d $RSS_SECS -o "$T/all.json" 2> "$T/all"
wait
b=$(stat_field "$T/idle" peak_rss_kib); m=$(stat_field "$T/all" peak_rss_kib)
echo "  record -a: ${m} KiB peak RSS; baseline ${b} KiB; ratio $(ratio "$m" "$b")"
echo "  decode cost in the -a run: $(stat_field "$T/all" decode_ns_per_sample) ns/sample wall, $(stat_field "$T/all" " decode_cpu_ns_per_sample") ns/sample CPU"

for b in "$BUILD"/bench/bench_*; do
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"
	"$b"
done
for s in "$TOP"/tests/bench/bench_*.sh; do
	[ -f "$s" ] || continue
	echo "== $(basename "$s" .sh)"
	BUILD="$BUILD" sh "$s"
done
