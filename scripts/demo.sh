#!/bin/sh
# make demo: profile the bundled Java demo (Java compute, a JNI call into C,
# syscalls; tests/workloads/Demo.java) and say where the output is.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
OUT=${DEMO_OUT:-$BUILD/demo}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
SECS=${DEMO_SECONDS:-6}
mkdir -p "$OUT"
if [ "$(id -u)" -ne 0 ]; then
	echo "make demo: recording needs root: run 'sudo make demo'" >&2
	exit 1
fi
echo "demo: profiling a JVM (threads compute, jni, io) for ${SECS} s ..."
"$BUILD/asgst-bpf" record -q -F 199 \
	-o "$OUT/demo.html" -o "$OUT/demo.collapsed" -o "$OUT/demo.pb.gz" \
	-o "$OUT/demo.json" -- \
	"$JAVA_HOME/bin/java" -agentpath:"$BUILD/libasgst-agent.so" \
	-Djava.library.path="$BUILD/workloads" -cp "$BUILD/workloads/classes" \
	Demo "$SECS" > /dev/null
echo
echo "demo: the hottest frames:"
sort -t' ' -k2 -nr "$OUT/demo.collapsed" | head -n 5 | \
	awk '{ n = split($1, f, ";"); printf "  %6d  %s <- %s <- %s\n", $2, f[n], f[n-1], f[n-2] }'
echo
echo "demo: wrote"
echo "  $OUT/demo.html       interactive flame graph (open in a browser)"
echo "  $OUT/demo.collapsed  for flamegraph.pl --color=java"
echo "  $OUT/demo.pb.gz      pprof (go tool pprof, Pyroscope, Grafana)"
echo "  $OUT/demo.json       every decoded stack (docs/formats.md)"
