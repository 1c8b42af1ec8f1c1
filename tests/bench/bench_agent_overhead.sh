#!/bin/sh
# Throughput of a CPU-bound JVM with and without the agent (same machine,
# runs interleaved), a ratio against the run without (the baseline); part
# of make bench, not of the tests.
# ROUNDS (default 3) x SECONDS (default 4) per configuration.
. "$(dirname "$0")/../integration/lib.sh"
need_jdk17
[ -f "$AGENT" ] || fail "agent not built: $AGENT"
R=${ROUNDS:-5}; S=${SECONDS_PER_RUN:-4}
ops() { # extra java args...
	"$JDK17/bin/java" "$@" -cp "$WL/classes" AgentWorkload "$S" bench 2>&1 |
		sed -n 's/^OPS //p'
}
base=""; with=""
i=0
while [ $i -lt "$R" ]; do
	b=$(ops); a=$(ops -agentpath:"$AGENT")
	[ -n "$b" ] && [ -n "$a" ] || fail "a bench run printed no OPS"
	echo "INFO: round $i: without $b ops/s, with agent $a ops/s"
	base="$base $b"; with="$with $a"
	i=$((i + 1))
done
med() { echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mb=$(med $base); ma=$(med $with)
echo "MEASURE: agent_throughput_ratio $(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.4f", a / b}') (median ops/s with $ma / without $mb)"
echo PASS
