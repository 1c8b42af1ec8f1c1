#!/bin/sh
# make bench: what --inline (native inlined frames and source lines from
# DWARF) costs. Debian's python3.11 with python3.11-dbg, a busy Python
# program, 999 Hz, with and without --inline, interleaved: the decode's
# CPU per sample (steady state; the DWARF is read on a thread of its own,
# not in it), the recorder's CPU per sample (whole run, that thread
# included) and the DWARF read. Then libjvm with Debian's openjdk-17-dbg
# (unpacked, served by a local debuginfod): the memory its DWARF takes,
# the time to read it, and peak RSS with and without --inline.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
A="$BUILD/asgst-bpf"
WL="$BUILD/workloads"
T=$(mktemp -d /tmp/asgst-bench-inline.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
ROUNDS=${ROUNDS:-3}
SECS=8
[ "${BENCH_QUICK:-}" = 1 ] && { ROUNDS=1; SECS=4; }

stat_field() { sed -n "s/.*[ :]$2=\([0-9.]*\).*/\1/p" "$1" | head -n 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

PY=/usr/bin/python3.11
echo "== --inline: decode cost per sample (python3.11 + python3.11-dbg, 999 Hz, ${SECS}s, median of $ROUNDS)"
for m in plain inline; do eval "d_$m=''; r_$m=''"; done
dw=""; kib=""
r=0
while [ $r -lt "$ROUNDS" ]; do
	for m in plain inline; do
		opt="--python-native"; [ $m = inline ] && opt="$opt --inline"
		"$A" record -q --stats $opt -F 999 -o "$T/$m.json" -- \
			"$PY" "$TOP/tests/workloads/python/pybusy.py" $SECS > /dev/null 2> "$T/$m.err"
		eval "d_$m=\"\$d_$m $(stat_field "$T/$m.err" steady_decode_cpu_ns_per_sample)\""
		eval "r_$m=\"\$r_$m $(stat_field "$T/$m.err" steady_cpu_ns_per_sample)\""
	done
	dw="$dw $(stat_field "$T/inline.err" dwarf_read_ms)"
	kib=$(stat_field "$T/inline.err" dwarf_kib)
	r=$((r + 1))
done
dp=$(echo $d_plain | med); di=$(echo $d_inline | med)
rp=$(echo $r_plain | med); ri=$(echo $r_inline | med)
echo "  decode CPU/sample, steady:$d_plain |$d_inline: without ${dp} ns (baseline 1.00), --inline ${di} ns (ratio $(ratio "$di" "$dp"))"
echo "  recorder CPU/sample, steady (all its threads):$r_plain |$r_inline: without ${rp} ns (baseline 1.00), --inline ${ri} ns (ratio $(ratio "$ri" "$rp"))"
echo "  DWARF read (on the loader's thread):$dw ms; held: ${kib} KiB"

echo "== --inline: libjvm's DWARF (openjdk-17-dbg via a local debuginfod)"
. "$TOP/tests/integration/debug_pkgs.sh"
ROOT=$(openjdk_dbg_root "$BUILD/debug-pkgs" "$T") || {
	echo "  skipped: openjdk-17-dbg could not be fetched (apt-get download)"; exit 0; }
command -v debuginfod > /dev/null || { echo "  skipped: no debuginfod (make deps)"; exit 0; }
JAVA="$ROOT/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
LIBJVM="$ROOT/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"
JBID=$(readelf -n "$LIBJVM" | awk '/Build ID/ { print $3; exit }')
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
debuginfod -F "$ROOT/usr/lib/debug" -p "$port" -d "$T/db.sqlite" -t 0 > "$T/d.log" 2>&1 &
dpid=$!
trap 'kill $dpid $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
n=600
until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/buildid/$JBID/debuginfo")" = 200 ] ||
	[ $n -eq 0 ]; do sleep 0.1; n=$((n - 1)); done
"$JAVA" -cp "$WL/classes" AllocBench 80 > "$T/ab.out" 2>&1 &
jpid=$!
n=300
until grep -q READY "$T/ab.out" 2>/dev/null || [ $n -eq 0 ]; do sleep 0.1; n=$((n - 1)); done
"$A" record -q --stats -F 199 -d 20 -p $jpid -o "$T/j0.json" 2> "$T/j0.err"
DEBUGINFOD_CACHE_PATH="$T/cache" "$A" record -q --stats --inline \
	--debuginfod "http://127.0.0.1:$port" --debuginfod-timeout 60 -F 199 \
	-d 20 -p $jpid -o "$T/j1.json" 2> "$T/j1.err"
kill $jpid 2>/dev/null
b=$(stat_field "$T/j0.err" peak_rss_kib); m=$(stat_field "$T/j1.err" peak_rss_kib)
echo "  libjvm DWARF held: $(stat_field "$T/j1.err" dwarf_max_kib) KiB (units' scope trees made: $(stat_field "$T/j1.err" dwarf_index_kib) KiB, all modules), read in $(stat_field "$T/j1.err" dwarf_read_ms) ms (fetch $(stat_field "$T/j1.err" debuginfod_ms) ms); stacks held meanwhile: peak $(stat_field "$T/j1.err" inline_held_peak), let go unexpanded $(stat_field "$T/j1.err" inline_unready)"
echo "  peak RSS: without --inline ${b} KiB (baseline 1.00), --inline ${m} KiB (ratio $(ratio "$m" "$b"))"
echo "  decode CPU/sample, steady: without $(stat_field "$T/j0.err" steady_decode_cpu_ns_per_sample) ns, --inline $(stat_field "$T/j1.err" steady_decode_cpu_ns_per_sample) ns"
