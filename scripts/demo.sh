#!/bin/sh
# make demo: profile the bundled demo workloads and say where the output is.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
OUT=${DEMO_OUT:-$BUILD/demo}
mkdir -p "$OUT"
if [ "$(id -u)" -ne 0 ]; then
	echo "make demo: recording needs root: run 'sudo make demo'" >&2
	exit 1
fi
echo "demo: profiling a native program (a known call chain) for 3 s ..."
"$BUILD/asgst-bpf" record -q -F 199 -o "$OUT/demo.json" -- \
	"$BUILD/workloads/native_chain" 3 1 > /dev/null
"$BUILD/asgst-bpf" record -q -F 199 -o "$OUT/demo.collapsed" -- \
	"$BUILD/workloads/syscall_heavy" 2 > /dev/null
echo
echo "demo: hottest stacks (collapsed, root first):"
sort -t' ' -k2 -nr "$OUT/demo.collapsed" 2>/dev/null | head -n 3 | cut -c1-200
echo
echo "demo: wrote"
echo "  $OUT/demo.json       (JSON v1, see docs/formats.md)"
echo "  $OUT/demo.collapsed  (for flamegraph.pl)"
