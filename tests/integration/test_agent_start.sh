#!/bin/sh
# Agent loaded with -agentpath at JVM start, on JDK 17 and JDK 25
# (test_jdks): methods, compiled code (frame sizes, comp levels, inline
# chains), stubs, threads, unloads. Then, on JDK 17, a map at its maximum
# size.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_common.sh"
need_jdk17
rc=0
jdks=$(test_jdks) || rc=1
for jdk in $jdks; do
	agent_run_check "$jdk" "$(basename "$jdk")"
done

# a small maximum (256k: compact methods fit the workload in 1m): the map
# stops at it, says it is full, counts the drops, and the JVM runs on
"$JDK17/bin/java" -agentpath:"$AGENT"=maxsize=256k,path="$TMP/small.map" \
	-cp "$WL/classes" AgentWorkload 2 > "$TMP/small.out" 2>&1 &
p=$!; bg $p
n=300
while ! grep -qs READY "$TMP/small.out" && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
cp "$TMP/small.map" "$TMP/small.copy" 2>/dev/null || fail "no map at path=$TMP/small.map"
wait $p || fail "JVM with maxsize=256k exited with $?"
sz=$(stat -c %s "$TMP/small.copy")
[ "$sz" -le 262144 ] || fail "map grew to $sz bytes past maxsize"
"$ASGST" codemap "$TMP/small.copy" > "$TMP/small.txt" 2>&1 || fail "full map rejected by the reader"
grep -q '^header .*flags=0x[0-9a-f]*(ready,full' "$TMP/small.txt" || fail "full map not flagged full"
grep -Eq '^header .* dropped=[1-9]' "$TMP/small.txt" || fail "full map counts no drops"
grep -q 'code map full' "$TMP/small.out" || fail "no warning when the map filled"
echo "INFO: maxsize=256k: map $sz bytes, $(grep -o 'dropped=[0-9]*' "$TMP/small.txt" | head -1)"
[ "$rc" -eq 0 ] || exit 1
echo "PASS"
