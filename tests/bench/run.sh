#!/bin/sh
# make bench: costs of asgst-bpf, each as a figure and as a ratio against a
# baseline measured in the same run. Needs root. BENCH_QUICK=1 shortens the
# long runs (for trying it out; the issue figures use the full lengths).
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

echo "== sampler: in-kernel cost per sample (bpf_stats run_time_ns / run_cnt)"
for hz in 99 999; do
	"$A" record -q --stats -F $hz --stack-window 0 -o "$T/a.json" -- \
		"$WL/native_chain" 5 1 > /dev/null 2> "$T/nowin"
	"$A" record -q --stats -F $hz --stack-window 16384 -o "$T/b.json" -- \
		"$WL/native_chain" 5 1 > /dev/null 2> "$T/win"
	n=$(stat_field "$T/nowin" bpf_ns_per_sample)
	w=$(stat_field "$T/win" bpf_ns_per_sample)
	echo "  ${hz} Hz: no window ${n} ns/sample (baseline 1.00), 16 KiB window ${w} ns/sample (ratio $(ratio "$w" "$n"))"
done

echo "== lost samples: 999 Hz, all CPUs, busy workload, ${LONG}s"
ncpu=$(nproc)
"$WL/native_chain" $((LONG + 2)) "$ncpu" > /dev/null &
sleep 0.5
"$A" record -q --stats -a -F 999 -d $LONG -o "$T/lost.json" 2> "$T/lost"
s=$(python3 -c "import json; d=json.load(open('$T/lost.json')); print(d['samples'], d['lost'])")
echo "  samples lost: $s (samples, lost)"
wait

echo "== peak memory of record -a (${RSS_SECS}s) vs record -p of one idle process (baseline)"
sleep $((RSS_SECS + 5)) & idle=$!
"$A" record -q --stats -p $idle -d $RSS_SECS -o "$T/idle.json" 2> "$T/idle" &
"$WL/native_chain" $RSS_SECS 1 > /dev/null &
"$A" record -q --stats -a -d $RSS_SECS -o "$T/all.json" 2> "$T/all"
wait
b=$(stat_field "$T/idle" peak_rss_kib); m=$(stat_field "$T/all" peak_rss_kib)
echo "  record -a: ${m} KiB peak RSS; baseline ${b} KiB; ratio $(ratio "$m" "$b")"
echo "  decode cost in the -a run: $(stat_field "$T/all" decode_ns_per_sample) ns/sample"

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
