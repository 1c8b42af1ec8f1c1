#!/bin/sh
# Attach among users the recorder must not trust. A local user (nobody) in
# a user + mount namespace of its own mounts a root-owned host directory
# over its /tmp and over its cwd, and hides the folder the agent library is
# in under a tmpfs, so that an attach would have to write the trigger file
# and a copy of the agent into that host directory:
# - a fake JVM: a renamed libz mapped as libjvm.so, a SIGQUIT handler, a
#   thread named "Signal Dispatch". record -a must not signal it (it is not
#   HotSpot) nor write anything for it; one such fake maps a forged code
#   map of 300,000 thread records: capped, said, the recorder's memory
#   bounded;
# - a real JVM run the same way: `attach` must do what it writes with the
#   user's rights, so nothing lands in the host directory (the attach then
#   fails in one line, or the agent is staged where the user may write);
# and record -a beside them decodes a real JVM of root's whole, as usual.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"
need_bpf
need_jdk17
need_built
for t in cc setpriv unshare python3; do
	command -v $t >/dev/null || skip_or_fail "$t missing"
done
J="$JDK17/bin/java"
LIBZ=$(ls /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -n 1)
[ -n "$LIBZ" ] || skip_or_fail "no libz.so.1 to play libjvm.so"

# what nobody runs and reads
mkdir -p "$TMP/stage/fake"
cp "$LIBZ" "$TMP/stage/fake/libjvm.so"
cp "$WL/fake_jvm" "$TMP/stage/fakejvm" || fail "no $WL/fake_jvm (make workloads)"
# nobody's files outside /tmp, which its namespace covers with the host
# directory
PUB=$(mktemp -d /var/tmp/asgst-hostile.XXXXXX) || fail "mktemp in /var/tmp"
trap 'cleanup_all; rm -rf "$PUB"' EXIT
chmod 755 "$PUB"
cp -a "$TMP/stage/fake" "$TMP/stage/fakejvm" "$WL/classes" "$PUB/" &&
	chmod -R a+rX "$PUB" || fail "cannot stage files for nobody"
mkdir -m 777 "$PUB/marks"
# the root-owned host directory an attacker would like root to write into
HOSTDIR="$PUB/hostdir"
mkdir -m 755 "$HOSTDIR"
echo keep > "$HOSTDIR/keep"
AGENT_DIR=$(dirname "$AGENT")

# as_nobody_ns OUT CMD...: CMD as nobody in a user + mount namespace whose
# /tmp and cwd are the root-owned host directory and where the agent's
# folder is hidden (when nobody can reach it at all)
as_nobody_ns() {
	_out=$1; shift
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		unshare -Urm --propagation private sh -c '
		h=$1 a=$2; shift 2
		mount --bind "$h" /tmp || exit 91
		[ -d "$a" ] && { mount -t tmpfs none "$a" 2>/dev/null || true; }
		cd /tmp && exec "$@"' sh "$HOSTDIR" "$AGENT_DIR" "$@" \
		> "$_out" 2>&1 &
	NS_PID=$!
	bg "$NS_PID"
}

# wait for READY in OUT; the pid of the process (the exec'ed shell)
wait_ready() {
	_n=200
	while ! grep -q READY "$1" 2>/dev/null && [ "$_n" -gt 0 ]; do
		kill -0 "$NS_PID" 2>/dev/null || break
		sleep 0.1; _n=$((_n - 1))
	done
	grep -q READY "$1" || { cat "$1"; fail "$2 did not start"; }
}

hostdir_clean() {
	_extra=$(ls -A "$HOSTDIR" | grep -v '^keep$')
	[ -z "$_extra" ] || { ls -la "$HOSTDIR"; fail "$1: root wrote into the host directory: $_extra"; }
	[ "$(cat "$HOSTDIR/keep")" = keep ] || fail "$1: host file changed"
}

# ---- the fake JVM: never signalled, nothing written ------------------------
as_nobody_ns "$TMP/fake.out" "$PUB/fakejvm" "$PUB/fake/libjvm.so" \
	"$PUB/marks/sigquit"
wait_ready "$TMP/fake.out" "fake JVM"
FAKE=$NS_PID
[ "$(stat -c %u "/proc/$FAKE")" = 65534 ] || fail "fake JVM is not nobody's"
grep -q '/fake/libjvm.so' "/proc/$FAKE/maps" || fail "fake libjvm.so not mapped"

run_bounded "$ASGST" attach "$FAKE"
expect_one_line_error "attach to the fake JVM" "not a HotSpot JVM"
hostdir_clean "attach to the fake JVM"
[ -e "$PUB/marks/sigquit" ] && fail "the fake JVM got a SIGQUIT"

# ---- a real JVM of nobody's, the host directory over its /tmp and cwd -----
as_nobody_ns "$TMP/njvm.out" "$J" -XX:+UseSerialGC -cp "$PUB/classes" \
	SleepLoop 60
wait_ready "$TMP/njvm.out" "nobody's JVM"
NJ=$(pgrep -P "$NS_PID" java || echo "$NS_PID")
[ "$(stat -c %u "/proc/$NJ")" = 65534 ] || fail "JVM $NJ is not nobody's"
run_bounded "$ASGST" attach "$NJ"
echo "INFO: attach to nobody's JVM with a root-owned /tmp: rc=$RC: $(head -n 1 "$TMP/out")"
if [ "$RC" -ne 0 ]; then
	expect_one_line_error "attach to nobody's JVM" "JVM $NJ"
fi
hostdir_clean "attach to nobody's JVM"
for f in /dev/shm/asgst-agent-65534.so; do
	[ -e "$f" ] || continue
	[ "$(stat -c %u "$f")" = 65534 ] || fail "$f is not nobody's"
done

# ---- record -a beside both and a flood of fake JVMs, with a JVM of root's:
# decoded whole, on time ------------------------------------------------------
for i in $(seq 1 16); do
	setpriv --reuid=65534 --regid=65534 --clear-groups "$PUB/fakejvm" \
		"$PUB/fake/libjvm.so" "$PUB/marks/sigquit" slow > /dev/null 2>&1 &
	bg $!
done
# and one whose code map is a flood: 200,000 threads that never end and
# 100,000 records of one tid, all of nobody's (a map the fake maps, so
# it is taken as its map)
setpriv --reuid=65534 --regid=65534 --clear-groups "$PUB/fakejvm" \
	"$PUB/fake/libjvm.so" "$PUB/marks/sigquit" slow map > /dev/null 2>&1 &
FLOOD=$!
bg $FLOOD
sleep 0.3
FMAP=$(cm_map "$FLOOD")
python3 - "$FMAP" "$FLOOD" <<'EOF' || fail "cannot write the forged code map"
import struct, sys
path, pid = sys.argv[1], int(sys.argv[2])
recs = []
def thread(tid, jt, flags, t):
    name = b"flood-%d" % tid
    body = struct.pack("<QII", jt, tid, flags) + struct.pack("<H", len(name)) + name
    n = (16 + len(body) + 7) & ~7
    return struct.pack("<IIQ", 6, n, t) + body + b"\0" * (n - 16 - len(body))
t = 1
for tid in range(1000, 201000):
    recs.append(thread(tid, 0x7f0000000000 + tid * 0x1000, 0, t)); t += 1
for i in range(100000):
    recs.append(thread(999, 0x7e0000000000 + i * 0x1000, i & 1, t)); t += 1
body = b"".join(recs)
hdr = struct.pack("<8sIIIIQQQQ", b"ASGSTCM\0", 3, 4096, pid, 0, 64 << 20,
                  4096 + len(body), 1, 0)
with open(path, "wb") as f:
    f.write(hdr + b"\0" * (4096 - len(hdr)) + body)
print("INFO: forged code map of %d records, %d bytes" % (len(recs), 4096 + len(body)))
EOF
chown nobody "$FMAP"
start_jvm "$J" "$TMP/root.out" -cp "$WL/classes" Chain 60
RJ=$JVM_PID
# its agent in before the recording: its first seconds of JIT code are
# then known when record -a starts (what is measured is that the others
# do not disturb its decode)
run_bounded "$ASGST" attach "$RJ"
[ "$RC" -eq 0 ] || { cat "$TMP/out"; fail "attach to root's JVM failed"; }
wait_file "$(cm_map "$RJ")" 100 || fail "root's JVM wrote no map"
sleep 1
rm -f "$PUB/marks/sigquit"
timeout 120 "$ASGST" record -a -F 199 -d 6 --stats -o "$TMP/all.json" > "$TMP/rec.log" 2>&1
RC=$?
[ "$RC" -ne 124 ] || { cat "$TMP/rec.log"; fail "record -a hung"; }
[ "$RC" -eq 0 ] || { cat "$TMP/rec.log"; fail "record -a failed ($RC)"; }
grep -v "is not a HotSpot JVM" "$TMP/rec.log" | sed 's/^/INFO: record: /'
n=$(grep -c "is not a HotSpot JVM" "$TMP/rec.log")
echo "MEASURE: record -a: $n processes refused as not HotSpot, none signalled"
[ "$n" -ge 17 ] || fail "record -a: $n of the 17 fake JVMs said refused"
hostdir_clean "record -a"
[ -e "$PUB/marks/sigquit" ] && fail "record -a signalled the fake JVM"
kill -0 "$FAKE" || fail "the fake JVM died"
grep -q "code map of JVM $FLOOD exceeds" "$TMP/rec.log" ||
	fail "record -a did not say the flood's code map exceeds a cap"
capped=$(sed -n 's/.*codemap_capped=\([0-9]*\).*/\1/p' "$TMP/rec.log")
rss=$(sed -n 's/.*peak_rss_kib=\([0-9]*\).*/\1/p' "$TMP/rec.log")
echo "MEASURE: record -a beside the flood: codemap_capped=${capped:-?}, peak RSS ${rss:-?} KiB (bound 1 GiB)"
[ "${capped:-0}" -gt 0 ] || fail "no code-map record capped"
[ -n "$rss" ] && [ "$rss" -lt 1048576 ] || fail "recorder peak RSS ${rss:-?} KiB over 1 GiB"
python3 - "$TMP/all.json" "$RJ" "$FAKE" <<'EOF' || fail "record -a: JSON check"
import json, sys
doc = json.load(open(sys.argv[1]))
rj, fake = int(sys.argv[2]), int(sys.argv[3])
st = [s for s in doc["stacks"] if s["pid"] == rj and
      s.get("thread") == "chain" and s.get("event", "cpu") == "cpu"]
n = sum(s["count"] for s in st)
chain = sum(s["count"] for s in st
            if any(f.get("type") in ("java", "java_inlined") and
                   f.get("class", "").startswith("Chain") for f in s["frames"]))
fk = sum(s["count"] for s in doc["stacks"] if s["pid"] == fake)
print("MEASURE: root's JVM %d: thread chain: %d samples, %d (%.1f %%) with Chain's Java "
      "frames; the fake JVM %d samples" % (rj, n, chain,
                                          100.0 * chain / max(n, 1), fk))
for s in [s for s in st if not any(
        f.get("type") in ("java", "java_inlined") and
        f.get("class", "").startswith("Chain") for f in s["frames"])][:3]:
    print("INFO: not whole: %s" % json.dumps(s["frames"][:6]))
ok = n >= 20 and chain >= 0.95 * n and fk > 0
sys.exit(0 if ok else 1)
EOF
echo "PASS"
