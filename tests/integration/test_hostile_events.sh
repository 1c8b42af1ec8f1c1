#!/bin/sh
# JVM events (record -e alloc,lock) among users the recorder must not
# trust. Each JVM is nobody's, in a mount namespace of its own whose /tmp
# and /dev/shm are fresh tmpfs (its code map is there), the agent loaded
# with -agentpath from a copy nobody can read:
# 1. a flood: LD_PRELOAD=libprobeflood.so calls the agent's
#    asgst_probe_event in a tight loop with hostile arguments (kinds 1, 2
#    and garbage, class pointers NULL, unmapped, kernel, a 1 MiB string
#    with no NUL, strings running into an unreadable page, huge sizes).
#    record -a -e cpu,alloc,lock -d 5 beside native_chain (a bystander)
#    must end normally and write its file; the flooder is throttled to the
#    kernel's budget (2,000 events a 100 ms, counted in the recording's
#    duration, and some over it counted); the bystander keeps its CPU
#    samples (>= 50 % of what its CPU time owes at -F: the host may be
#    loaded); the flooder's classes are at most 127 chars, each a run of
#    what it pointed to (or empty), and the JVM lives;
# 2. another build: the agent with one byte appended, and one of the same
#    size with a byte of .comment changed, both named libasgst-agent.so:
#    record -e cpu,alloc -p PID says once that the agent library is not
#    this asgst-bpf's, puts no uprobe (agent_files_probed=0) and records
#    CPU samples;
# 3. the request is a lock, never a write: after the recordings nothing
#    new of root's is in any JVM's /tmp or /dev/shm, and each code map's
#    owner and mode are as before.
. "$(dirname "$0")/lib.sh"
need_bpf
need_jdk17
for t in cc setpriv unshare python3 objcopy readelf find; do
	command -v $t >/dev/null || skip_or_fail "$t missing"
done
[ -x "$ASGST" ] && [ -r "$AGENT" ] || fail "not built: $ASGST, $AGENT (make tests-build)"
FLOODLIB="$WL/libprobeflood.so"
[ -r "$FLOODLIB" ] || fail "no $FLOODLIB (make workloads)"
[ -x "$WL/native_chain" ] || fail "no $WL/native_chain (make workloads)"
J="$JDK17/bin/java"
NOBODY=65534

# what nobody runs and reads: outside /tmp, which its namespace replaces
PUB=$(mktemp -d /var/tmp/asgst-hostile-ev.XXXXXX) || fail "mktemp in /var/tmp"
trap 'cleanup_all; rm -rf "$PUB"' EXIT
chmod 755 "$PUB"
mkdir "$PUB/agent" "$PUB/appended" "$PUB/comment"
cp "$AGENT" "$PUB/agent/libasgst-agent.so"
cp "$FLOODLIB" "$PUB/"
cp -a "$WL/classes" "$PUB/"
# another build, by size: one byte more
cp "$AGENT" "$PUB/appended/libasgst-agent.so"
printf 'x' >> "$PUB/appended/libasgst-agent.so"
# another build of the same size: one byte of .comment (not loaded) other
cp "$AGENT" "$PUB/comment/libasgst-agent.so"
off=$(readelf -W -S "$AGENT" | awk '$2 == ".comment" { print $5 }')
[ -n "$off" ] || fail "the agent has no .comment section"
python3 - "$PUB/comment/libasgst-agent.so" "$((0x$off))" <<'EOF' || fail "cannot change a byte of .comment"
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    b = f.read(1)
    f.seek(int(sys.argv[2]))
    f.write(bytes([b[0] ^ 0x20]))
EOF
chmod -R a+rX "$PUB" || fail "cannot stage files for nobody"
cmp -s "$AGENT" "$PUB/comment/libasgst-agent.so" && fail "the changed copy is the same"
[ "$(stat -c %s "$AGENT")" = "$(stat -c %s "$PUB/comment/libasgst-agent.so")" ] ||
	fail "the changed copy is not of the same size"

# nobody_jvm OUT ENV... -- JAVA-ARGS...: a JVM of nobody's in a mount
# namespace with a tmpfs on /tmp and /dev/shm; JVM_PID its pid, once it
# printed READY
nobody_jvm() {
	_out=$1; shift
	unshare -m --propagation private sh -c '
		mount -t tmpfs -o mode=1777 none /tmp &&
		mount -t tmpfs -o mode=1777 none /dev/shm || exit 91
		exec setpriv --reuid=65534 --regid=65534 --clear-groups env "$@"' \
		sh "$@" > "$_out" 2>&1 &
	JVM_PID=$!
	bg "$JVM_PID"
	_n=300
	while ! grep -q READY "$_out" 2>/dev/null && [ "$_n" -gt 0 ]; do
		kill -0 "$JVM_PID" 2>/dev/null || break
		sleep 0.1; _n=$((_n - 1))
	done
	grep -q READY "$_out" || { cat "$_out"; fail "nobody's JVM did not start"; }
	[ "$(stat -c %u "/proc/$JVM_PID")" = $NOBODY ] ||
		fail "JVM $JVM_PID is not nobody's"
	wait_file "$(cm_map "$JVM_PID" "$JVM_PID")" 100 ||
		fail "JVM $JVM_PID wrote no code map"
}

# listing PID: every file in the JVM's /tmp and /dev/shm, owner and mode
listing() {
	find "/proc/$1/root/tmp" "/proc/$1/root/dev/shm" \
		-printf '%U %m %P %y\n' 2>/dev/null | sort
}

# unwritten NAME PID BEFORE MAPSTAT: nothing of another owner than nobody
# appeared, nothing of root's changed, the code map as it was
unwritten() {
	listing "$2" > "$TMP/$1.after"
	comm -13 "$3" "$TMP/$1.after" > "$TMP/$1.new"
	echo "INFO: $1: $(wc -l < "$TMP/$1.new") new entries in JVM $2's /tmp and /dev/shm, all nobody's"
	if awk -v u=$NOBODY '$1 != u' "$TMP/$1.new" | grep .; then
		fail "$1: a file not nobody's appeared in JVM $2's /tmp or /dev/shm"
	fi
	awk -v u=$NOBODY '$1 != u' "$3" > "$TMP/$1.others0"
	awk -v u=$NOBODY '$1 != u' "$TMP/$1.after" > "$TMP/$1.others1"
	cmp -s "$TMP/$1.others0" "$TMP/$1.others1" ||
		{ diff "$TMP/$1.others0" "$TMP/$1.others1"; fail "$1: root's entries changed"; }
	_ms=$(stat -c '%u %a' "$(cm_map "$2" "$2")")
	echo "INFO: $1: code map owner and mode: $_ms (before: $4)"
	[ "$_ms" = "$4" ] || fail "$1: the code map's owner or mode changed"
}

# ---- 1. a flood of the probe beside a bystander ----------------------------
nobody_jvm "$TMP/flood.out" FLOOD_AGENT="$PUB/agent/libasgst-agent.so" \
	LD_PRELOAD="$PUB/libprobeflood.so" \
	"$J" -XX:+UseSerialGC -agentpath:"$PUB/agent/libasgst-agent.so" \
	-cp "$PUB/classes" SleepLoop 60
FJ=$JVM_PID
_n=100
while ! grep -q "probeflood: flooding" "$TMP/flood.out" && [ $_n -gt 0 ]; do
	sleep 0.1; _n=$((_n - 1))
done
grep -q "probeflood: flooding" "$TMP/flood.out" ||
	{ cat "$TMP/flood.out"; fail "the flooder did not find asgst_probe_event"; }
FMAP=$(cm_map "$FJ" "$FJ")
FMS=$(stat -c '%u %a' "$FMAP")
[ "${FMS%% *}" = $NOBODY ] || fail "JVM $FJ's code map is not nobody's: $FMS"
listing "$FJ" > "$TMP/flood.before"
"$WL/native_chain" 30 > "$TMP/nc.out" &
BY=$!
bg $BY
wait_file "$TMP/nc.out" || fail "native_chain did not start"
sleep 0.3
# its CPU time (utime + stime, in ticks) around the recording: the samples
# it should have are F x that time, prorated to the recording's duration
cputicks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
CLK=$(getconf CLK_TCK)
c0=$(cputicks "$BY"); w0=$(date +%s%N)
F=99
timeout -k 5 120 "$ASGST" record -a -e cpu,alloc,lock -F $F -d 5 --stats \
	-o "$TMP/flood.json" > "$TMP/flood.log" 2>&1
RC=$?
case $RC in
124|137) cat "$TMP/flood.log"; fail "record -a hung beside the flood" ;;
0) ;;
*) cat "$TMP/flood.log"; fail "record -a beside the flood failed ($RC)" ;;
esac
c1=$(cputicks "$BY"); w1=$(date +%s%N)
[ -s "$TMP/flood.json" ] || fail "record -a wrote no file"
kill -0 "$FJ" 2>/dev/null || { cat "$TMP/flood.out"; fail "the flooding JVM died"; }
grep -E "allocation and .* lock events|^stats: alloc_events|gives no alloc/lock" "$TMP/flood.log" |
	sed 's/^/INFO: record: /'
thr=$(sed -n 's/.*jvm_events_throttled=\([0-9]*\).*/\1/p' "$TMP/flood.log")
lost=$(sed -n 's/.*jvm_events_lost=\([0-9]*\).*/\1/p' "$TMP/flood.log")
probed=$(sed -n 's/.*agent_files_probed=\([0-9]*\).*/\1/p' "$TMP/flood.log")
echo "MEASURE: flood: jvm_events_throttled=${thr:-?} jvm_events_lost=${lost:-?} agent_files_probed=${probed:-?}"
[ -n "$lost" ] || fail "no jvm_events_lost in --stats"
grep -q "over a JVM's budget" "$TMP/flood.log" || fail "no closing line with the budget's count"
[ "${thr:-0}" -gt 0 ] || fail "the flood was not throttled"
[ "${probed:-0}" -ge 1 ] || fail "no agent file probed: the flood met no uprobe"
python3 - "$TMP/flood.json" "$FJ" "$BY" "$F" "$(( (c1 - c0) * 1000000000 / CLK ))" \
	"$((w1 - w0))" "${thr:-0}" <<'EOF' || fail "flood: JSON check"
import json, math, sys
doc = json.load(open(sys.argv[1]))
fj, by, freq, cpu_ns, wall_ns, thr = (int(a) for a in sys.argv[2:8])
ok = True
dur = doc["duration_ns"]
print("MEASURE: recording %.3f s, %d samples, %d lost; JSON alloc_events=%d "
      "lock_events=%d jvm_events_lost=%d jvm_events_throttled=%d" % (
          dur / 1e9, doc["samples"], doc["lost"], doc.get("alloc_events", -1),
          doc.get("lock_events", -1), doc.get("jvm_events_lost", -1),
          doc.get("jvm_events_throttled", -1)))
if doc.get("jvm_events_throttled", 0) <= 0:
    print("FAIL: the JSON says no event over the budget")
    ok = False
# the budget: 2,000 a window of 100 ms; windows start at an event, so a
# recording of D holds at most floor(D / 100 ms) + 1 of them. Slack: the
# uprobe is on a little before the recording's clock starts (a JVM is
# primed before sampling starts) and events are taken until the sampler
# stops after it ends: 5 windows more; and a window's worth for the
# budget's race across CPUs (the flooder's 4 threads on 2 CPUs here)
ev = [s for s in doc["stacks"] if s["pid"] == fj and
      s.get("event") in ("alloc", "lock")]
n = sum(s["count"] for s in ev)
windows = math.floor(dur / 1e8) + 1
bound = 2000 * (windows + 5) + 2000
fl = [s for s in ev if s.get("thread") == "probeflood"]
nfl = sum(s["count"] for s in fl)
print("MEASURE: flooding JVM %d: %d alloc+lock events (%d of threads "
      "probeflood) in %d windows of 100 ms (%.0f a window against 2,000), "
      "bound %d; %d more over the budget" % (fj, n, nfl, windows, n / windows,
                                             bound, thr))
if n > bound:
    print("FAIL: %d events over the budget's bound %d" % (n, bound))
    ok = False
if nfl == 0:
    print("FAIL: no event of the flooding thread recorded")
    ok = False
# the classes: at most 127 chars, and only what the pointer held: a run of
# M (1 MiB string), P (from a page's middle), Q (60 bytes before an
# unreadable page), or nothing
runs = {"M": 127, "P": 127, "Q": 60}
seen = {}
for s in fl:
    c = s.get("alloc_class", s.get("lock_class", ""))
    f0 = s["frames"][0] if s["frames"] else {}
    if f0.get("type") == "class" and f0.get("class", "") != c:
        print("FAIL: frames[0] class %r, event class %r" % (f0.get("class"), c))
        ok = False
    seen[c[:1] + str(len(c))] = seen.get(c[:1] + str(len(c)), 0) + s["count"]
    good = c == "" or (c[0] in runs and c == c[0] * len(c) and
                       len(c) <= runs[c[0]])
    if not good:
        print("FAIL: class %r (%d chars) of the flooder" % (c[:200], len(c)))
        ok = False
print("MEASURE: flooder classes (first char + length: events): %s" %
      ", ".join("%s: %d" % kv for kv in sorted(seen.items())))
longest = max((len(s.get("alloc_class", s.get("lock_class", ""))) for s in fl),
              default=0)
print("MEASURE: longest flooder class %d chars (bound 127)" % longest)
# the bystander: one busy thread, F samples a second of its CPU time. The
# host may be loaded (its share of a CPU is what it is): what it is owed is
# F x its CPU time over the recorder's run, prorated to the recording's
# duration; a flood that filled the ring or starved the sampler takes
# its samples away
bs = [s for s in doc["stacks"] if s["pid"] == by and s.get("event", "cpu") == "cpu"]
nb = sum(s["count"] for s in bs)
leaf = sum(s["count"] for s in bs
           if any(f.get("symbol") == "nc_leaf" for f in s["frames"]))
full = freq * dur / 1e9
owed = freq * cpu_ns / 1e9 * min(1.0, dur / max(wall_ns, 1))
print("MEASURE: bystander native_chain %d: %d cpu samples: %.0f %% of %d Hz x "
      "%.2f s, %.0f %% of the %.0f its CPU time (%.2f s of %.2f s) owes; %d "
      "(%.1f %%) in nc_leaf" % (by, nb, 100.0 * nb / full, freq, dur / 1e9,
                               100.0 * nb / max(owed, 1), owed, cpu_ns / 1e9,
                               wall_ns / 1e9, leaf, 100.0 * leaf / max(nb, 1)))
if nb < 20 or nb < 0.5 * owed:
    print("FAIL: the bystander has %d samples, under 50 %% of the %.0f owed "
          "(or under 20)" % (nb, owed))
    ok = False
if leaf < 0.95 * nb:
    print("FAIL: the bystander's stacks are not whole")
    ok = False
sys.exit(0 if ok else 1)
EOF
kill "$BY" 2>/dev/null
unwritten flood "$FJ" "$TMP/flood.before" "$FMS"
kill "$FJ"

# ---- 2. another build of the agent: refused, not probed -------------------
for v in appended comment; do
	nobody_jvm "$TMP/$v.out" "$J" -XX:+UseSerialGC \
		-agentpath:"$PUB/$v/libasgst-agent.so" -cp "$PUB/classes" Chain 60
	VJ=$JVM_PID
	VMS=$(stat -c '%u %a' "$(cm_map "$VJ" "$VJ")")
	listing "$VJ" > "$TMP/$v.before"
	timeout -k 5 60 "$ASGST" record -p "$VJ" -e cpu,alloc -F $F -d 2 --stats \
		-o "$TMP/$v.json" > "$TMP/$v.log" 2>&1
	RC=$?
	[ "$RC" -eq 0 ] || { cat "$TMP/$v.log"; fail "$v: record failed ($RC)"; }
	msg="JVM $VJ gives no alloc/lock events: its agent library is not this asgst-bpf's (another build)"
	n=$(grep -c -F "$msg" "$TMP/$v.log")
	echo "INFO: $v: $(grep -F "JVM $VJ gives" "$TMP/$v.log" | head -n 1)"
	[ "$n" -eq 1 ] || { cat "$TMP/$v.log"; fail "$v: said $n times, not once: $msg"; }
	probed=$(sed -n 's/.*agent_files_probed=\([0-9]*\).*/\1/p' "$TMP/$v.log")
	[ "$probed" = 0 ] || { cat "$TMP/$v.log"; fail "$v: agent_files_probed=${probed:-?}, not 0"; }
	nc=$(python3 -c "
import json
d = json.load(open('$TMP/$v.json'))
print(sum(s['count'] for s in d['stacks'] if s['pid'] == $VJ and s.get('event', 'cpu') == 'cpu'))")
	ne=$(python3 -c "
import json
d = json.load(open('$TMP/$v.json'))
print(sum(s['count'] for s in d['stacks'] if s.get('event') in ('alloc', 'lock')))")
	echo "MEASURE: $v: agent_files_probed=$probed, JVM $VJ: $nc cpu samples, $ne alloc/lock events"
	[ "${nc:-0}" -ge 20 ] || fail "$v: $nc CPU samples of JVM $VJ"
	[ "${ne:-1}" -eq 0 ] || fail "$v: $ne alloc/lock events from an agent of another build"
	unwritten "$v" "$VJ" "$TMP/$v.before" "$VMS"
	kill "$VJ"
done
echo "PASS"
exit 0
