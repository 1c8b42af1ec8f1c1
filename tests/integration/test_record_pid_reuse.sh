#!/bin/sh
# A recycled pid is a new process: process A (the churn workload burning in
# churn_burn) exits and B (native_chain, spinning in nc_leaf) is made to get
# its pid at once (kernel.ns_last_pid). Every sample of B must carry B's
# name and every sample of A A's: B inherits nothing of A (name, maps), the
# samples of each are told apart by A's exit and B's start time
# (/proc/PID/stat field 22), and --stats counts the reuse.
. "$(dirname "$0")/lib.sh"
need_bpf
[ -x "$WL/churn" ] || fail "$WL/churn not built (make workloads)"
[ -x "$WL/native_chain" ] || fail "$WL/native_chain not built (make workloads)"
[ -w /proc/sys/kernel/ns_last_pid ] ||
	fail "/proc/sys/kernel/ns_last_pid is not writable: cannot force a pid to be reused"
cp "$WL/churn" "$TMP/reuse_a" || fail "copy"

# A and B in a cgroup of their own, recorded with --cgroup; without cgroup
# v2, -a
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CG=""
if [ -n "$CG2" ] && mkdir "$CG2/asgst-reuse-$$" 2>/dev/null; then
	CG="$CG2/asgst-reuse-$$"
	WHAT="--cgroup $CG"
	trap 'for p in $_bg_pids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rmdir "$CG" 2>/dev/null; rm -rf "$TMP"' EXIT
else
	WHAT="-a"
fi

# shellcheck disable=SC2086
"$ASGST" record $WHAT -F 499 -d 16 --stats -q -o "$TMP/r.json" 2> "$TMP/err" &
REC=$!
bg "$REC"
sleep 1.5

# A burns 2 s and exits; B is forked right after with ns_last_pid set to
# A's pid - 1 (another fork on the host in between: try again)
cat > "$TMP/drive.sh" <<'SH'
[ -z "$CG" ] || echo $$ > "$CG/cgroup.procs" || exit 1
i=0
while [ $i -lt 5 ]; do
	"$A" --burn 2000 &
	a=$!
	wait $a
	echo $((a - 1)) > /proc/sys/kernel/ns_last_pid || exit 2
	"$B" 2 > /dev/null &
	b=$!
	if [ "$b" = "$a" ]; then
		wait $b
		echo "$a"
		exit 0
	fi
	kill $b
	wait $b
	i=$((i + 1))
done
exit 3
SH
pid=$(CG="$CG" A="$TMP/reuse_a" B="$WL/native_chain" sh "$TMP/drive.sh")
rc=$?
[ $rc -eq 0 ] || fail "could not make a process reuse a pid (drive.sh: $rc)"
wait "$REC" || { cat "$TMP/err"; fail "record failed"; }
grep '^stats: procs' "$TMP/err" | sed 's/^/INFO: /'

python3 - "$TMP/r.json" "$TMP/err" "$pid" <<'PY' || fail "the reused pid's samples are misnamed"
import json, re, sys
d = json.load(open(sys.argv[1]))
err = open(sys.argv[2]).read()
pid = int(sys.argv[3])
m = re.search(r"pid_reuses=(\d+)", err)
assert m, "no --stats line"
a_ok = a_bad = b_ok = b_bad = 0
for s in d["stacks"]:
    if s["pid"] != pid:
        continue
    syms = {f.get("symbol") for f in s["frames"]}
    if "churn_burn" in syms:
        if s["comm"] == "reuse_a":
            a_ok += s["count"]
        else:
            a_bad += s["count"]
    if "nc_leaf" in syms:
        if s["comm"] == "native_chain":
            b_ok += s["count"]
        else:
            b_bad += s["count"]
names = {}
for s in d["stacks"]:
    if s["pid"] == pid:
        k = (s["comm"], "nc_leaf" in {f.get("symbol") for f in s["frames"]}, "churn_burn" in {f.get("symbol") for f in s["frames"]})
        names[k] = names.get(k, 0) + s["count"]
print("INFO: pid %d by (comm, B frame, A frame): %s" % (pid, names))
print("MEASURE: pid %d: A's samples %d named A, %d not; B's %d named B, %d not; pid_reuses=%s"
      % (pid, a_ok, a_bad, b_ok, b_bad, m.group(1)))
assert a_ok >= 100, "A decoded in %d samples only" % a_ok
assert b_ok >= 100, "B decoded in %d samples (%d misnamed)" % (b_ok, b_bad)
# B's samples before the reuse was seen are told apart by its start time
# (10 ms ticks): a sample or two at the edge at most
assert b_bad <= 0.02 * (b_ok + b_bad), "%d of B's samples named after A" % b_bad
assert a_bad <= 0.02 * (a_ok + a_bad), "%d of A's samples named after B" % a_bad
assert int(m.group(1)) >= 1, "the reuse was not counted"
PY
echo "PASS: a reused pid starts afresh"
