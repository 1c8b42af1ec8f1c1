#!/bin/sh
# record --switch-output: a busy native workload recorded in 5 s periods
# gives one complete file per period and output, and the periods add up to
# the whole recording: their samples to the sampler's count, their stacks'
# counts to the samples decoded (--stats), each collapsed file to its JSON,
# and each period's raw file decodes alone (report) to its JSON's stacks.
# Also: %t and --switch-max-files, SIGTERM writing the last period, off-CPU
# stacks across periods, and a JVM whose code map each raw file needs.
. "$(dirname "$0")/lib.sh"
need_bpf
[ -x "$WL/native_chain" ] || fail "$WL/native_chain not built (make workloads)"
CHAIN=nc_leaf,nc_chain8,nc_chain7,nc_chain6,nc_chain5,nc_chain4,nc_chain3,nc_chain2,nc_chain1

# check.py PREFIX ERRFILE MIN_FILES: the period files PREFIX.TIME.json and
# PREFIX.TIME.collapsed against the recording's closing lines on stderr
cat > "$TMP/check.py" <<'PY'
import glob, json, os, re, sys
prefix, errf, min_files = sys.argv[1], sys.argv[2], int(sys.argv[3])
err = open(errf).read()
m = re.search(r"^asgst-bpf: (\d+) samples, (\d+) lost, (\d+) stacks, .* (\d+) periods of", err, re.M)
assert m, "no summary line in: " + err
total, lost, periods = int(m.group(1)), int(m.group(2)), int(m.group(4))
dec = re.search(r" decoded=(\d+) ", err)
assert dec, "no --stats line"
decoded = int(dec.group(1))
js = sorted(glob.glob(prefix + ".*.json"))
cs = sorted(glob.glob(prefix + ".*.collapsed"))
assert not os.path.exists(prefix + ".json"), "an unswitched file was written"
assert len(js) >= min_files, "%d JSON files, want %d+" % (len(js), min_files)
assert len(js) == len(cs) == periods, (len(js), len(cs), periods)
stamps = []
sum_samples = sum_lost = sum_counts = 0
for j, c in zip(js, cs):
    st = re.fullmatch(re.escape(prefix) + r"\.(\d{8}T\d{6}Z)\.json", j)
    assert st, "bad name " + j
    assert c == prefix + "." + st.group(1) + ".collapsed", (j, c)
    stamps.append(st.group(1))
    d = json.load(open(j))
    assert d["format"] == "asgst-bpf" and d["version"] == 1
    counts = sum(s["count"] for s in d["stacks"])
    ccounts = 0
    for line in open(c):
        ccounts += int(line.rsplit(" ", 1)[1])
    assert ccounts == counts, "%s: collapsed %d, JSON %d" % (c, ccounts, counts)
    chain = sum(s["count"] for s in d["stacks"]
                if [f.get("symbol") for f in s["frames"]
                    if f["type"] == "non_java"][:9] == sys.argv[4].split(","))
    print("MEASURE: %s: %.2f s, samples=%d lost=%d decoded=%d (chain %d) stacks=%d"
          % (os.path.basename(j), d["duration_ns"] / 1e9, d["samples"],
             d["lost"], counts, chain, len(d["stacks"])))
    sum_samples += d["samples"]
    sum_lost += d["lost"]
    sum_counts += counts
assert stamps == sorted(set(stamps)), "time stamps not distinct and rising"
print("MEASURE: %d periods: samples %d (recording %d), lost %d (%d), "
      "decoded %d (--stats %d)" % (len(js), sum_samples, total, sum_lost,
                                   lost, sum_counts, decoded))
assert sum_samples == total, "samples over the periods %d != %d" % (sum_samples, total)
assert sum_lost == lost
assert sum_counts == decoded, "decoded over the periods %d != %d" % (sum_counts, decoded)
assert decoded + lost >= total * 0.98, "samples not decoded"
PY

# same_as_raw PREFIX [MIN_JAVA]: each PREFIX.TIME.asgst, decoded alone by
# report, gives exactly the stacks of PREFIX.TIME.json
same_as_raw() {
	_n=0
	for _j in "$1".*Z.json; do
		_r=${_j%.json}.asgst
		[ -f "$_r" ] || fail "no raw file beside $_j"
		"$ASGST" report -q -i "$_r" -o "${_j%.json}.rep" -f json \
			|| fail "report -i $_r failed"
		python3 - "$_j" "${_j%.json}.rep" "${2:-0}" <<'PY' || fail "$_r differs from $_j"
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
key = lambda s: json.dumps(s, sort_keys=True)
java = sum(s["count"] for s in b["stacks"]
           if any(f["type"] == "java" for f in s["frames"]))
print("MEASURE: raw %s: report %d samples in %d stacks (%d with Java frames), live the same: %s"
      % (sys.argv[1].rsplit("/", 1)[1].replace(".json", ".asgst"),
         sum(s["count"] for s in b["stacks"]), len(b["stacks"]), java,
         sorted(map(key, a["stacks"])) == sorted(map(key, b["stacks"]))))
assert sorted(map(key, a["stacks"])) == sorted(map(key, b["stacks"])), "stacks"
assert b["samples"] == a["samples"] and b["lost"] == a["lost"]
assert java >= int(sys.argv[3]), "only %d samples with Java frames" % java
PY
		_n=$((_n + 1))
	done
	[ "$(ls "$1".*Z.asgst | wc -l)" -eq "$_n" ] || fail "raw files without JSON"
}

# 17 s in 5 s periods: 5 + 5 + 5 + 2, the last one written at the end
"$ASGST" record --switch-output=5s -d 17 --stats -F 199 -o "$TMP/x.json" \
	-o "$TMP/x.collapsed" -o "$TMP/x.asgst" -- "$WL/native_chain" 40 1 \
	> /dev/null 2> "$TMP/x.err" || { cat "$TMP/x.err"; fail "record --switch-output failed"; }
python3 "$TMP/check.py" "$TMP/x" "$TMP/x.err" 3 "$CHAIN" || fail "5 s periods"
same_as_raw "$TMP/x"
n=$(ls "$TMP"/x.*.json | wc -l)
[ "$n" -eq 4 ] || fail "17 s in 5 s periods gave $n files, want 4"

# %t in the path, and only the newest two files kept
"$ASGST" record -q --switch-output=1s --switch-max-files=2 -d 4.5 \
	-o "$TMP/m-%t.collapsed" -- "$WL/native_chain" 10 > /dev/null \
	2> "$TMP/m.err" || { cat "$TMP/m.err"; fail "record --switch-max-files failed"; }
kept=$(ls "$TMP" | grep -c '^m-[0-9]\{8\}T[0-9]\{6\}Z\.collapsed$')
echo "INFO: --switch-max-files=2 kept: $(ls "$TMP" | grep '^m-' | tr '\n' ' ')"
[ "$kept" -eq 2 ] || fail "--switch-max-files=2 kept $kept files"
[ "$(ls "$TMP" | grep -c '^m-')" -eq 2 ] || fail "stray files for m-%t"

# SIGTERM ends the recording: the period under way is written too
"$ASGST" record --switch-output=2s --stats -o "$TMP/s.json" -o "$TMP/s.collapsed" \
	-- "$WL/native_chain" 30 > /dev/null 2> "$TMP/s.err" &
rpid=$!; bg $rpid
sleep 5.3
kill -TERM $rpid
wait $rpid || { cat "$TMP/s.err"; fail "record stopped by SIGTERM failed"; }
python3 "$TMP/check.py" "$TMP/s" "$TMP/s.err" 3 "$CHAIN" || fail "SIGTERM periods"

# off-CPU stacks: each is counted once, in the period where its thread
# ran again (or the last one), with its whole time off the CPU (every
# switch's stack: a sampled one would count N switches, not one record)
if [ -x "$WL/ctxswitch" ]; then
	"$ASGST" record -e cpu,offcpu --offcpu-sample 1 --switch-output=2s -d 5 --stats \
		-o "$TMP/o.json" -o "$TMP/o.collapsed" -o "$TMP/o.asgst" \
		-- "$WL/ctxswitch" 20 > /dev/null 2> "$TMP/o.err" \
		|| { cat "$TMP/o.err"; fail "record -e offcpu failed"; }
	python3 - "$TMP/o" "$TMP/o.err" <<'PY' || fail "off-CPU periods"
import glob, json, re, sys
prefix, err = sys.argv[1], open(sys.argv[2]).read()
m = re.search(r"^asgst-bpf: (\d+) off-CPU stacks, (\d+) lost", err, re.M)
assert m, err
total, lost = int(m.group(1)), int(m.group(2))
decoded = int(re.search(r" decoded=(\d+) ", err).group(1))
js = sorted(glob.glob(prefix + ".*.json"))
assert len(js) >= 3, js
rec = cnt = alls = 0
for j in js:
    d = json.load(open(j))
    alls += sum(s["count"] for s in d["stacks"])
    n = sum(s["count"] for s in d["stacks"] if s["event"] == "offcpu")
    ns = sum(s["offcpu_ns"] for s in d["stacks"] if s["event"] == "offcpu")
    print("MEASURE: %s: offcpu_samples=%d, off-CPU stacks decoded %d, %.2f s off"
          % (j.rsplit("/", 1)[1], d["offcpu_samples"], n, ns / 1e9))
    rec += d["offcpu_samples"]
    cnt += n
print("MEASURE: off-CPU over %d periods: recorded %d (recording %d), decoded %d;"
      " all stacks decoded %d (--stats %d)" % (len(js), rec, total, cnt, alls,
                                            decoded))
assert rec == total, (rec, total)
assert alls == decoded, "decoded over the periods %d != %d" % (alls, decoded)
# the sampler is stopped before the last drain and the counters' read:
# every stack counted is decoded, even with records lost on the way
assert cnt == total, "off-CPU stacks decoded %d of %d" % (cnt, total)
PY
	# an off-CPU stack and its END are in the same period's raw file
	same_as_raw "$TMP/o"
fi

# a JVM (agent at start, JIT code), on and off the CPU: every period's raw
# file carries the code map as read so far, so the later ones decode Java
# frames alone
if [ -x "$JDK17/bin/java" ]; then
	"$ASGST" record -e cpu,offcpu --offcpu-sample 1 -F 199 --switch-output=2s --stats \
		-o "$TMP/j.json" -o "$TMP/j.asgst" -- \
		"$JDK17/bin/java" -agentpath:"$AGENT" -Djava.library.path="$WL" \
		-cp "$WL/classes" Demo 7 > /dev/null 2> "$TMP/j.err" \
		|| { cat "$TMP/j.err"; fail "record of the JVM failed"; }
	python3 - "$TMP/j" "$TMP/j.err" <<'PY' || fail "JVM periods"
import glob, json, re, sys
err = open(sys.argv[2]).read()
off = int(re.search(r"^asgst-bpf: (\d+) off-CPU stacks", err, re.M).group(1))
cpu = int(re.search(r"^asgst-bpf: (\d+) samples", err, re.M).group(1))
decoded = int(re.search(r" decoded=(\d+) ", err).group(1))
js = sorted(glob.glob(sys.argv[1] + ".*Z.json"))
ds = [json.load(open(j)) for j in js]
n = sum(s["count"] for d in ds for s in d["stacks"])
print("MEASURE: JVM: %d periods, samples %d (recording %d), off-CPU %d (%d), "
      "decoded %d (--stats %d)" % (len(ds), sum(d["samples"] for d in ds), cpu,
      sum(d["offcpu_samples"] for d in ds), off, n, decoded))
assert len(ds) >= 3, "JVM: %d periods, want 3+" % len(ds)
assert sum(d["samples"] for d in ds) == cpu
assert sum(d["offcpu_samples"] for d in ds) == off
assert n == decoded
PY
	same_as_raw "$TMP/j" 100
else
	echo "INFO: no JDK 17 at $JDK17: the JVM part is left out"
fi

# stdout cannot be switched: one line, exit 2
"$ASGST" record --switch-output=5s -a 2> "$TMP/e.err"
rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l < "$TMP/e.err")" -eq 1 ] \
	|| fail "--switch-output to stdout: exit $rc, $(cat "$TMP/e.err")"
exit 0
