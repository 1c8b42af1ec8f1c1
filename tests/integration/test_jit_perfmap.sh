#!/bin/sh
# JIT symbols from the files runtimes write for perf, on real node (v20):
# - node --perf-basic-prof (/tmp/perf-PID.map) running tests/workloads/
#   jit_chain.js (loop -> pmTop -> pmMid -> pmLeaf): `record -p` must show
#   pmLeaf <- pmMid <- pmTop, in that order, in >= 90 % of the main
#   thread's samples, and every JIT name given must be the one the map has
#   for that pc (the newest entry covering it);
# - the same in a container (own pid and mount namespaces, a private /tmp):
#   the map is /tmp/perf-1.map inside the process's root, not the host's;
# - node --perf-prof: the jitdump it mmaps (jit-PID.dump), the same 90 %;
# - hostile maps put in place of node's: a FIFO, a huge map (names only
#   past the 64 MiB read limit), a malformed one naming the real code with
#   broken lines. `record -d 3` must end on its own (timeout 60 must not
#   have to kill it), keep the samples and native names, and the JIT frames
#   stay pcs: no name from those files.
. "$(dirname "$0")/lib.sh"
need_bpf
for t in node python3 timeout unshare; do
	command -v $t >/dev/null || fail "$t missing (scripts/deps.sh installs it)"
done
JS="$TOP/tests/workloads/jit_chain.js"
# node writes its V8 logs (isolate-*.log) to its cwd: not into the tree
cd "$TMP" || fail "cd"
NODE_FLAGS="--no-turbo-inlining"
maps_made=""
cleanup_maps() { for f in $maps_made; do rm -f "$f"; done; cleanup_all; }
trap cleanup_maps EXIT

# start_node TAG SECONDS FLAGS...: npid, once READY
start_node() {
	_tag=$1 _secs=$2
	shift 2
	node "$@" $NODE_FLAGS "$JS" "$_secs" > "$TMP/$_tag.out" 2>&1 &
	npid=$!
	bg $npid
	_n=300
	while ! grep -q '^READY' "$TMP/$_tag.out" && [ $_n -gt 0 ]; do
		sleep 0.1
		_n=$((_n - 1))
	done
	grep -q '^READY' "$TMP/$_tag.out" || fail "$_tag: node did not start: $(cat "$TMP/$_tag.out")"
}

# record TAG PID: TAG.json, TAG.err; fails when it does not end by itself
record() {
	timeout 60 "$ASGST" record -p "$2" -F 199 -d 3 -o "$TMP/$1.json" \
		2> "$TMP/$1.err"
	_rc=$?
	[ $_rc -ne 124 ] || fail "$1: record hung (killed by timeout 60)"
	[ $_rc -eq 0 ] || fail "$1: record failed ($_rc): $(cat "$TMP/$1.err")"
}

# check JSON PID MODE [MAPFILE]: MODE named (the chain, checked against
# MAPFILE: a perf map or a jitdump) or stays (hostile: no JIT names)
check() {
	python3 - "$@" <<'PY'
import json, re, struct, sys
path, pid, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d = json.load(open(path))
main = [s for s in d["stacks"] if s["pid"] == pid and s["tid"] == pid]
total = sum(s["count"] for s in main)
if total < 100:
    print("FAIL: only %d samples of the main thread" % total); sys.exit(1)
CHAIN = ["pmLeaf", "pmMid", "pmTop"]		# callee first

def sym(f):
    return f.get("symbol") or ""

def chain_ok(frames):
    at = []
    for name in CHAIN:
        idx = [i for i, f in enumerate(frames)
               if re.search(r"\b%s\b" % name, sym(f))]
        if not idx:
            return False
        at.append(idx[0])
    return at == sorted(at) and at[0] == min(i for i, f in enumerate(frames)
                                             if f["type"] != "kernel")

def load_entries(mapfile):
    """[(start, end, name)] in file order"""
    ents = []
    raw = open(mapfile, "rb").read()
    if raw[:4] == struct.pack("<I", 0x4A695444):
        off = struct.unpack_from("<I", raw, 8)[0]
        index = {}
        while off + 16 <= len(raw):
            rid, size = struct.unpack_from("<II", raw, off)
            if size < 16 or off + size > len(raw):
                break
            if rid == 0:
                _, _, _, addr, ln, idx = struct.unpack_from("<IIQQQQ", raw, off + 16)
                name = raw[off + 56:raw.index(b"\0", off + 56)].decode("utf-8", "replace")
                ents.append((addr, addr + ln, name)); index[idx] = name
            elif rid == 1:
                _, _, _, old, new, ln, idx = struct.unpack_from("<IIQQQQQ", raw, off + 16)
                ents.append((old, old + ln, None))
                ents.append((new, new + ln, index.get(idx)))
            elif rid == 3:
                break
            off += size
        return ents
    for line in raw.decode("utf-8", "replace").split("\n"):
        m = re.match(r"^(?:0x)?([0-9a-fA-F]+)\s+(?:0x)?([0-9a-fA-F]+)\s+(.+?)\s*$", line)
        if m and int(m.group(2), 16):
            s = int(m.group(1), 16)
            ents.append((s, s + int(m.group(2), 16), m.group(3)))
    return ents

if mode == "named":
    ents = load_entries(sys.argv[4])
    named = sum(s["count"] for s in main if chain_ok(s["frames"]))
    anyjs = sum(s["count"] for s in main
                if any(re.search(r"\bpm(Leaf|Mid|Top)\b", sym(f)) for f in s["frames"]))
    # every JIT name must be the newest map entry covering its pc
    checked = wrong = 0
    for s in d["stacks"]:
        if s["pid"] != pid:
            continue
        for f in s["frames"]:
            mod = f.get("module") or ""
            if not (mod.endswith(".map") or mod.endswith(".dump")) or not f.get("symbol"):
                continue
            pc = int(f["pc"], 16)
            want = None
            for a, b, n in reversed(ents):
                if a <= pc < b:
                    want = n
                    break
            checked += 1
            if want != f["symbol"]:
                wrong += 1
                if wrong <= 3:
                    print("INFO: pc %#x named %r, the map says %r" % (pc, f["symbol"], want))
    print("MEASURE: %s: chain pmLeaf<-pmMid<-pmTop named in order in %.1f %% of %d main-thread samples (any pm* frame named: %.1f %%); %d JIT frames checked against the map, %d wrong"
          % (path.split("/")[-1], 100.0 * named / total, total, 100.0 * anyjs / total, checked, wrong))
    sys.exit(0 if named >= 0.9 * total and wrong == 0 and checked > 0 else 1)

# hostile: no name from the file, the JIT code stays pcs, the rest goes on
jit = sum(1 for s in main for f in s["frames"]
          if re.search(r"pm(Leaf|Mid|Top)|BAD_|BEYOND_", sym(f)))
unnamed_leaf = sum(s["count"] for s in main
                   if [f for f in s["frames"] if f["type"] != "kernel"][:1]
                   and not sym([f for f in s["frames"] if f["type"] != "kernel"][0]))
native = sum(s["count"] for s in main
             if any(sym(f).startswith("node::") for f in s["frames"]))
print("MEASURE: %s: %d main-thread samples, top frame a bare pc in %.1f %%, node:: frames named in %.1f %%, JIT names from the file: %d"
      % (path.split("/")[-1], total, 100.0 * unnamed_leaf / total, 100.0 * native / total, jit))
sys.exit(0 if jit == 0 and unnamed_leaf >= 0.9 * total and native >= 0.9 * total else 1)
PY
}

# ---- the perf map, on the host ------------------------------------------------
start_node basic 12 --perf-basic-prof
maps_made="$maps_made /tmp/perf-$npid.map"
record basic "$npid"
check "$TMP/basic.json" "$npid" named "/tmp/perf-$npid.map" || fail "perf map: JS chain not named"
kill "$npid" 2>/dev/null

# ---- in a container: its own pid (1) and a private /tmp -----------------------
# (the script comes on stdin: the tree may itself be under the /tmp that
# the private one hides)
unshare --pid --fork --mount --propagation private sh -c \
	'mount -t tmpfs tmpfs /tmp && exec node --perf-basic-prof "$@"' sh \
	$NODE_FLAGS - 12 < "$JS" > "$TMP/ns.out" 2>&1 &
upid=$!
bg $upid
n=300
while ! grep -q '^READY' "$TMP/ns.out" && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
grep -q '^READY 1$' "$TMP/ns.out" || fail "container node did not start as pid 1: $(cat "$TMP/ns.out")"
cpid=$(pgrep -P "$upid" | head -n 1)
[ -n "$cpid" ] || fail "container node's host pid not found"
[ ! -e "/tmp/perf-1.map" ] || echo "INFO: the host has a /tmp/perf-1.map too (not read)"
record ns "$cpid"
cat "/proc/$cpid/root/tmp/perf-1.map" > "$TMP/ns.map" || fail "container map unreadable"
check "$TMP/ns.json" "$cpid" named "$TMP/ns.map" || fail "container perf map: JS chain not named"
kill "$upid" "$cpid" 2>/dev/null

# ---- jitdump (node --perf-prof writes jit-PID.dump in its cwd and mmaps it) ----
mkdir "$TMP/jd"
cd "$TMP/jd" || fail "cd"
start_node jd 12 --perf-prof
cd "$TMP" || fail "cd"
# node writes its jitdump through a 4 KiB stdio buffer: the optimized code
# of the chain reaches the file some time after it was compiled
n=200
while [ $n -gt 0 ] && ! { grep -aq 'JS:\*pmMid' "$TMP/jd/jit-$npid.dump" &&
	grep -aq 'JS:\*pmTop' "$TMP/jd/jit-$npid.dump"; }; do
	sleep 0.1
	n=$((n - 1))
done
[ $n -gt 0 ] || fail "node wrote no optimized code of the chain to its jitdump"
record jd "$npid"
grep -q "jit-$npid.dump" "/proc/$npid/maps" || fail "node did not map its jitdump"
check "$TMP/jd.json" "$npid" named "$TMP/jd/jit-$npid.dump" || fail "jitdump: JS chain not named"
kill "$npid" 2>/dev/null

# ---- hostile maps in place of node's own ----------------------------------
# hostile TAG: node runs, its map is moved aside (node writes on into it)
# and TAG's file put at /tmp/perf-PID.map
hostile() {
	start_node "$1" 12 --perf-basic-prof
	map="/tmp/perf-$npid.map"
	maps_made="$maps_made $map"
	mv "$map" "$TMP/$1.real.map" || fail "$1: no map to move"
	case "$1" in
	fifo)
		mkfifo "$map" ;;
	huge)
		# 65 MiB of lines naming other addresses, then the real code's
		# entries, named BEYOND_*, past the 64 MiB read limit
		python3 - "$map" "$TMP/$1.real.map" <<'PY'
import sys
with open(sys.argv[1], "w") as out:
    line = "%x 10 filler_" + "x" * 100 + "\n"
    n = 0
    while n < 65 << 20:
        s = line % (0x1000 + n)
        out.write(s)
        n += len(s)
    for l in open(sys.argv[2]):
        p = l.split(" ", 2)
        if len(p) == 3:
            out.write("%s %s BEYOND_%s" % (p[0], p[1], p[2]))
PY
		;;
	malformed)
		# the real code's addresses, each line broken another way
		python3 - "$map" "$TMP/$1.real.map" <<'PY'
import os, sys
out = open(sys.argv[1], "wb")
out.write(os.urandom(65536) + b"\n")
for l in open(sys.argv[2]):
    p = l.split(" ", 2)
    if len(p) != 3:
        continue
    a, s = p[0], p[1]
    for bad in ("%s BAD_nosize\n" % a, "%s 0 BAD_zero\n" % a,
                "%s ffffffffffffffff BAD_wraps\n" % a,
                "1%s %s BAD_17digits\n" % (a.rjust(16, "0"), s),
                "%sz %s BAD_nothex\n" % (a, s), "%s %s\n" % (a, s),
                "%s-%s BAD_dash\n" % (a, s)):
        out.write(bad.encode())
    out.write(("%s %s " % (a, s)).encode() + b"\0BAD_nul\n")
# a line of 2 MiB: longer than any read
out.write(b"BAD_" + b"x" * (2 << 20) + b"\n")
PY
		;;
	esac
	record "$1" "$npid"
	check "$TMP/$1.json" "$npid" stays || fail "$1: JIT frames not left as pcs"
	kill "$npid" 2>/dev/null
	rm -f "$map"
}

hostile fifo
grep -q "perf-$npid.map: is a FIFO" "$TMP/fifo.err" || fail "fifo: no warning: $(cat "$TMP/fifo.err")"
hostile huge
grep -q "more than 64 MiB" "$TMP/huge.err" || fail "huge: no warning: $(cat "$TMP/huge.err")"
hostile malformed
exit 0
