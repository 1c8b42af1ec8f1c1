#!/bin/sh
# make bench: native unwinding by CFI against frame pointers, on a 30-frame
# stack without frame pointers (cfi_deep, -O2) at 999 Hz: in-kernel ns per
# sample, record bytes per sample (the stack window), decode CPU per
# sample (steady state) and how many stacks come out whole; the baseline is --unwind fp (the
# kernel's frame-pointer walk, no window) in the same run, interleaved.
# Then the user-space side for the largest binary here (libjvm.so):
# bench_cfi (table ready time, memory, row lookups).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
A="$BUILD/asgst-bpf"
WL="$BUILD/workloads"
T=$(mktemp -d /tmp/asgst-bench-unwind.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
ROUNDS=${ROUNDS:-3}
SECS=6
[ "${BENCH_QUICK:-}" = 1 ] && { ROUNDS=1; SECS=3; }

stat_field() { sed -n "s/.*[ :]$2=\([0-9.]*\).*/\1/p" "$1" | head -n 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
whole() {	# json pid -> percent of samples whole (to _start or clone3)
	python3 "$TOP/tests/integration/unwind_check.py" "$1" --pid "$2" \
		--no-whole-check --min-samples 0 |
		sed -n 's/.*whole \([0-9.]*\) %.*/\1/p'
}

echo "== native unwinding: CFI against frame pointers (cfi_deep: 30 frames, -O2, 999 Hz)"
for m in fp cfi; do eval "k_$m=''; b_$m=''; d_$m=''; w_$m=''"; done
r=0
while [ $r -lt "$ROUNDS" ]; do
	for m in fp cfi; do
		"$WL/cfi/cfi_deep" $((SECS + 2)) > /dev/null &
		p=$!
		sleep 0.3
		"$A" record -q --stats --unwind $m -F 999 -p $p -d $SECS \
			-o "$T/$m.json" 2> "$T/$m.err"
		wait $p
		k=$(stat_field "$T/$m.err" bpf_ns_per_sample)
		b=$(stat_field "$T/$m.err" window_bytes_per_sample)
		d=$(stat_field "$T/$m.err" steady_decode_cpu_ns_per_sample)
		w=$(whole "$T/$m.json" $p)
		eval "k_$m=\"\$k_$m $k\"; b_$m=\"\$b_$m $b\"; d_$m=\"\$d_$m $d\"; w_$m=\"\$w_$m $w\""
	done
	r=$((r + 1))
done
hdr=$(awk 'BEGIN { print 232 + 8 * 64 }')	# header + a full kernel stack
for m in fp cfi; do
	eval "k=\$(echo \$k_$m | med); b=\$(echo \$b_$m | med); d=\$(echo \$d_$m | med); w=\$(echo \$w_$m | med); ks=\"\$k_$m\""
	eval "K_$m=$k; B_$m=$b; D_$m=$d"
	echo "  --unwind $m (median of $ROUNDS:$ks): in-kernel ${k} ns/sample, window ${b} bytes/sample (records <= $((b + hdr)) bytes), decode CPU ${d} ns/sample (steady state), whole ${w} %"
done
echo "  CFI / fp: in-kernel $(ratio "$K_cfi" "$K_fp"), decode $(ratio "$D_cfi" "$D_fp"), window bytes $B_cfi vs $B_fp"

echo "== CFI tables in user space: the largest binary (libjvm.so)"
jvm=""
for j in "${JAVA_HOME:-}" /usr/lib/jvm/default-java /usr/lib/jvm/java-17-openjdk-amd64; do
	[ -n "$j" ] && [ -f "$j/lib/server/libjvm.so" ] && { jvm="$j/lib/server/libjvm.so"; break; }
done
if [ -n "$jvm" ] && [ -x "$BUILD/bench/bench_cfi" ]; then
	"$BUILD/bench/bench_cfi" "$jvm" 7
else
	echo "  no libjvm.so or bench_cfi: skipped"
fi
