#!/bin/sh
# record --cgroup: only the tasks of one cgroup v2 are recorded (filtered
# in the kernel), the chain of a workload moved into it is exact.
. "$(dirname "$0")/lib.sh"
need_bpf
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG2" ] || skip "no cgroup v2 hierarchy mounted"
CG="$CG2/asgst-test-$$"
mkdir "$CG" || skip "cannot create a cgroup under $CG2"
trap 'for p in $_bg_pids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rmdir "$CG" 2>/dev/null; rm -rf "$TMP"' EXIT

"$WL/native_chain" 6 > "$TMP/in.out" &
inpid=$!; bg $inpid
"$WL/native_chain" 6 > "$TMP/out.out" &
outpid=$!; bg $outpid
wait_file "$TMP/in.out"; wait_file "$TMP/out.out"
echo "$inpid" > "$CG/cgroup.procs" || fail "cannot move $inpid into $CG"
sleep 0.3
"$ASGST" record -q --cgroup "$CG" -F 199 -d 2 -o "$TMP/cg.json" || fail "record --cgroup failed"
python3 "$TOP/tests/integration/profile_check.py" "$TMP/cg.json" --pid "$inpid" \
	--chain nc_leaf,nc_chain8,nc_chain7 || fail "chain of the process in the cgroup"
python3 - "$TMP/cg.json" "$inpid" <<'PY' || fail "samples from outside the cgroup"
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
other = {s["pid"] for s in d["stacks"]} - {pid}
print("INFO: pids recorded: %s" % sorted({s["pid"] for s in d["stacks"]}))
sys.exit(1 if other else 0)
PY
exit 0
