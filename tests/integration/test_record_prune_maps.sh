#!/bin/sh
# The sampler's maps hold what is alive: a JVM recorded with -a (its stack
# window, its JavaThreads and continuation layout pushed to the kernel)
# exits while the recording goes on; a few seconds later none of the
# recorder's maps (targets, window_pids, jvm_conts, jthreads) has an entry
# of its pid any more, and none failed to update (--stats).
. "$(dirname "$0")/lib.sh"
need_bpf
need_jdk17
command -v bpftool > /dev/null || skip_or_fail "bpftool missing"

"$ASGST" record -a --unwind fp -F 99 -d 14 --stats -q -o "$TMP/r.json" \
	2> "$TMP/err" &
REC=$!
bg "$REC"
sleep 1
"$JDK17/bin/java" -agentpath:"$AGENT" -Djava.library.path="$WL" \
	-cp "$WL/classes" Demo 4 > /dev/null &
JVM=$!
bg "$JVM"
sleep 3

# dump_pids MAP: the pids the recorder's map MAP holds now (the recorder's
# maps by the ids in its fds' fdinfo: other recorders may run)
dump_pids() {
	for id in $(bpftool -j map show | python3 -c '
import glob, json, sys
rec, name = sys.argv[1], sys.argv[2]
ids = set()
for f in glob.glob("/proc/%s/fdinfo/*" % rec):
    try:
        for line in open(f):
            if line.startswith("map_id:"):
                ids.add(int(line.split()[1]))
    except OSError:
        pass
for m in json.load(sys.stdin):
    if m.get("name") == name and m["id"] in ids:
        print(m["id"])' "$REC" "$1"); do
		bpftool -j map dump id "$id" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    k = e.get("formatted", e).get("key")
    if isinstance(k, dict):
        print(k.get("tgid", ""))
    elif isinstance(k, int):
        print(k)
    elif isinstance(k, list):
        print(int.from_bytes(bytes(int(b, 16) for b in k[:4]), "little"))'
	done
}
during_w=$(dump_pids window_pids | grep -cx "$JVM")
during_t=$(dump_pids jthreads | grep -cx "$JVM")
wait "$JVM"
sleep 4
after=""
for m in targets window_pids jvm_conts jthreads; do
	n=$(dump_pids $m | grep -cx "$JVM")
	after="$after $m=$n"
done
wait "$REC" || { cat "$TMP/err"; fail "record failed"; }
grep '^stats: procs' "$TMP/err" | sed 's/^/INFO: /'
echo "MEASURE: JVM $JVM: while it ran window_pids=$during_w jthreads=$during_t entries; after it exited:$after"
[ "$during_w" -ge 1 ] && [ "$during_t" -ge 1 ] ||
	fail "the JVM's entries were never in the maps (window $during_w, threads $during_t): nothing to check"
case "$after" in *=[1-9]*) fail "entries of the exited JVM left:$after" ;; esac
grep -q 'bpf_map_errors=0' "$TMP/err" || fail "map updates failed"
echo "PASS: the sampler's maps pruned"
