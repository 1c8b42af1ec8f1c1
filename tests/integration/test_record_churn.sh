#!/bin/sh
# record under process churn (25 short-lived processes a second, each a
# new exec, in a cgroup of their own, recorded with --cgroup: -a's pipeline
# without the host's other processes) for 60 s in 5 s periods, JSON and
# raw, the profile kept to the churn's stacks: memory stays flat and the
# state of exited processes is dropped.
#  - the recorder's RSS (but the BPF maps it maps, the ring buffer, whose
#    pages count once they are first read) at 20 s and at the end: growth
#    within a bound;
#  - --stats: every churned process the profile saw has been dropped by the
#    end (procs_dropped), the table and the symbolizer hold what is alive;
#  - each period's raw file decodes alone to its JSON's churn stacks: the
#    maps of processes that exited during the run are in it.
. "$(dirname "$0")/lib.sh"
need_bpf
[ -x "$WL/churn" ] || fail "$WL/churn not built (make workloads)"
. "$(dirname "$0")/churn_lib.sh"

GROWTH_MAX_KIB=${GROWTH_MAX_KIB:-4096}

# the churn in a cgroup of its own, recorded with --cgroup (the same
# pipeline as -a): the figures do not move with what else the host runs.
# Without cgroup v2, -a.
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CG=""
if [ -n "$CG2" ] && mkdir "$CG2/asgst-churn-$$" 2>/dev/null; then
	CG="$CG2/asgst-churn-$$"
	WHAT="--cgroup $CG"
	trap 'for p in $_bg_pids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rmdir "$CG" 2>/dev/null; rm -rf "$TMP"' EXIT
else
	WHAT="-a"
	echo "INFO: no cgroup v2 to put the churn in: record -a, the host's other processes included"
fi

# the profile keeps only the churn's burning stacks: what grows with the
# host's other processes is not measured, every process still goes through
# the process table, the symbolizer and the sampler's maps
# shellcheck disable=SC2086
"$ASGST" record $WHAT -F 199 -d 60 --switch-output=5s --stats -q \
	--include churn_burn -o "$TMP/p.json" -o "$TMP/p.asgst" 2> "$TMP/err" &
REC=$!
bg "$REC"
sleep 1
CG="$CG" WLC="$WL/churn" sh -c '[ -z "$CG" ] || echo $$ > "$CG/cgroup.procs" || exit 1
	exec "$WLC" 25 40 30' > "$TMP/nchurn" &
bg $!
sleep 19
rss20=$(rss_no_bpf_kib "$REC")
all20=$(rss_kib "$REC")
sleep 36
rss_end=$(rss_no_bpf_kib "$REC")
all_end=$(rss_kib "$REC")
wait "$REC" || { cat "$TMP/err"; fail "record failed"; }
[ -n "$rss20" ] && [ -n "$rss_end" ] || fail "could not read the recorder's RSS"
echo "MEASURE: RSS at 20 s $all20 KiB, at 56 s $all_end KiB; without the BPF maps $rss20 -> $rss_end KiB (growth $((rss_end - rss20)) KiB, bound $GROWTH_MAX_KIB); churned $(cat "$TMP/nchurn") processes"
grep '^stats: procs' "$TMP/err" | sed 's/^/INFO: /'
[ $((rss_end - rss20)) -le "$GROWTH_MAX_KIB" ] ||
	fail "RSS grew by $((rss_end - rss20)) KiB from 20 s to 56 s (bound $GROWTH_MAX_KIB)"

# each raw period decoded alone, as JSON next to the live one
for r in "$TMP"/p.*.asgst; do
	"$ASGST" report -q -i "$r" --include churn_burn \
		-o "${r%.asgst}.report.json" ||
		fail "report -i $r failed"
done

cat > "$TMP/check.py" <<'PY'
import glob, json, re, sys
tmp, errf = sys.argv[1], sys.argv[2]
err = open(errf).read()
m = re.search(r"^stats: procs_seen=(\d+) procs_live=(\d+) procs_dropped=(\d+) "
              r"pid_reuses=(\d+) sym_procs=(\d+) sym_modules=(\d+) "
              r"bpf_map_errors=(\d+)", err, re.M)
assert m, "no procs --stats line in: " + err
seen, live, dropped, reuses, sym_procs, mods, map_errors = map(int, m.groups())
churn = set()
total_burn = 0
for j in sorted(glob.glob(tmp + "/p.*.json")):
    if j.endswith(".report.json"):
        continue
    live_d = json.load(open(j))
    rep_d = json.load(open(j[:-5] + ".report.json"))
    def burn(d):
        return sum(s["count"] for s in d["stacks"]
                   if any(f.get("symbol") == "churn_burn" for f in s["frames"]))
    for s in live_d["stacks"]:
        if any(f.get("symbol") == "churn_burn" for f in s["frames"]):
            churn.add(s["pid"])
    b_live, b_rep = burn(live_d), burn(rep_d)
    total_burn += b_live
    print("MEASURE: %s: churn_burn samples live %d, from the raw file %d"
          % (j.rsplit("/", 1)[1], b_live, b_rep))
    assert b_live == b_rep, "%s: the raw file decodes %d churn_burn samples, live %d" % (j, b_rep, b_live)
print("MEASURE: processes seen %d, churned ones decoded %d, dropped %d, live at the end %d, symbolizer %d processes %d modules, map errors %d"
      % (seen, len(churn), dropped, live, sym_procs, mods, map_errors))
assert len(churn) >= 50, "only %d churned processes decoded" % len(churn)
assert total_burn > 0, "no churn_burn frame decoded"
# every churned process exited >= 15 s before the end: all dropped
assert dropped >= len(churn), "dropped %d < %d churned processes sampled" % (dropped, len(churn))
assert live <= seen - len(churn), "table holds %d of %d" % (live, seen)
assert sym_procs <= live + 8, "symbolizer keeps %d processes, %d alive" % (sym_procs, live)
assert map_errors == 0, "%d sampler map updates failed" % map_errors
PY
python3 "$TMP/check.py" "$TMP" "$TMP/err" || fail "churn check failed"
echo "PASS: memory bounded under churn"
