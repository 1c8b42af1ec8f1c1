#!/bin/sh
# record -o x.asgst -o x.json, then report -i x.asgst after the process has
# exited: the same stacks as the live decode. Bad raw files (truncated,
# crafted chunks) and outputs get one-line errors; an unwritable output
# keeps the recording in a raw file.
. "$(dirname "$0")/lib.sh"
need_bpf

"$ASGST" record -q -F 499 -o "$TMP/r.asgst" -o "$TMP/live.json" -- \
	"$WL/native_chain" 2 1 > /dev/null || fail "record failed"
"$ASGST" report -q -i "$TMP/r.asgst" -o "$TMP/rep.json" || fail "report failed"
python3 - "$TMP/live.json" "$TMP/rep.json" <<'PY' || fail "report differs from the live decode"
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a["samples"] > 100, a["samples"]
for k in ("frequency_hz", "duration_ns", "samples", "lost"):
    assert a[k] == b[k], (k, a[k], b[k])
key = lambda s: json.dumps(s, sort_keys=True)
assert sorted(map(key, a["stacks"])) == sorted(map(key, b["stacks"])), "stacks"
print("INFO: report == live: %d samples, %d stacks" % (a["samples"], len(a["stacks"])))
PY
# a JVM (agent at start, JIT code, a JNI library): report after it exited
need_jdk17
"$ASGST" record -q --stats -F 199 -o "$TMP/j.asgst" -o "$TMP/jlive.json" -- \
	"$JDK17/bin/java" -agentpath:"$AGENT" -Djava.library.path="$WL" \
	-cp "$WL/classes" Demo 3 > /dev/null 2> "$TMP/j.err" ||
	{ cat "$TMP/j.err"; fail "record of the JVM failed"; }
"$ASGST" report -q -i "$TMP/j.asgst" -o "$TMP/jrep.json" || fail "report of the JVM failed"
# the stack memo (profile/stack_memo.h) and the walk's native tails
# (decode/walk.h) spare work and change nothing: they served samples of
# this run (its JIT busy warming up), and the file decoded without them
# (ASGST_STACK_MEMO=0) gives the same bytes
hits=$(sed -n 's/.*stack_memo_hits=\([0-9]*\).*/\1/p' "$TMP/j.err")
tails=$(sed -n 's/.*walk_tail_hits=\([0-9]*\).*/\1/p' "$TMP/j.err")
[ "${hits:-0}" -gt 0 ] || { cat "$TMP/j.err"; fail "the stack memo served no sample"; }
[ "${tails:-0}" -gt 0 ] || { cat "$TMP/j.err"; fail "no native tail was replayed"; }
ASGST_STACK_MEMO=0 "$ASGST" report -q -i "$TMP/j.asgst" -o "$TMP/jrep0.json" ||
	fail "report of the JVM without the stack memo failed"
cmp -s "$TMP/jrep.json" "$TMP/jrep0.json" ||
	fail "the JVM's report with the stack memo differs from the one without"
echo "INFO: stack memo: $hits samples served live, $tails native tails replayed; the report the same without them"
# the sampler's records reach the ring packed (5.19 and later): beyond its
# window a record carries its header and the pcs taken, not the room kept
# for the deepest stacks (368 + 1528 bytes); and --stats has the program
# time the runs that took a sample
wb=$(sed -n 's/.*window_bytes_per_sample=\([0-9]*\).*/\1/p' "$TMP/j.err")
rb=$(sed -n 's/.*record_bytes_per_sample=\([0-9]*\).*/\1/p' "$TMP/j.err")
ns=$(sed -n 's/.*bpf_ns_per_sample=\([0-9]*\).*/\1/p' "$TMP/j.err")
[ "${ns:-0}" -gt 0 ] || { cat "$TMP/j.err"; fail "the sampler did not time its samples (bpf_ns_per_sample)"; }
[ "${wb:-0}" -gt 0 ] && [ "${rb:-0}" -gt "${wb:-0}" ] ||
	{ cat "$TMP/j.err"; fail "no window or record bytes in --stats"; }
kv=$(uname -r)
if [ "${kv%%.*}" -gt 5 ] || { [ "${kv%%.*}" -eq 5 ] &&
	[ "$(echo "$kv" | cut -d. -f2)" -ge 19 ]; }; then
	[ $((rb - wb)) -lt 1200 ] || fail "records not packed: $rb bytes a record for $wb of window"
	echo "INFO: records packed: $rb bytes a record, $wb of them window; $ns ns in the kernel a sample"
fi
python3 - "$TMP/jlive.json" "$TMP/jrep.json" <<'PY' || fail "JVM report differs from the live decode"
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
key = lambda s: json.dumps(s, sort_keys=True)
ka, kb = sorted(map(key, a["stacks"])), sorted(map(key, b["stacks"]))
if ka != kb:
    # what differs, to tell a decode that depends on time from a bug
    for k in sorted(set(ka) ^ set(kb))[:4]:
        print("INFO: only in %s: %s" % ("live" if k in ka else "report", k[:1500]))
assert ka == kb, "stacks"
java = sum(s["count"] for s in b["stacks"]
           if any(f["type"] == "java" for f in s["frames"]))
assert java > 100, "only %d samples with Java frames" % java
print("INFO: JVM report == live: %d stacks, %d samples with Java frames"
      % (len(b["stacks"]), java))
PY

# JVM events: allocation and lock stacks (the agent's probe, version-3
# records) replay as they were decoded live. Without cpu samples: one
# taken while the sampler's own uprobe program ran has its frames in the
# kernel, which report names from the kallsyms of its own time, where
# that program is gone.
"$ASGST" record -q -e alloc,lock -o "$TMP/e.asgst" -o "$TMP/elive.json" -- \
	"$JDK17/bin/java" -agentpath:"$AGENT" -cp "$WL/classes" \
	EventsSmoke 3 > /dev/null || fail "record -e alloc,lock failed"
"$ASGST" report -q -i "$TMP/e.asgst" -o "$TMP/erep.json" || fail "report of the JVM events failed"
python3 - "$TMP/elive.json" "$TMP/erep.json" <<'PY' || fail "JVM events' report differs from the live decode"
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
key = lambda s: json.dumps(s, sort_keys=True)
assert sorted(map(key, a["stacks"])) == sorted(map(key, b["stacks"])), "stacks"
for k in ("events", "alloc_events", "lock_events", "alloc_interval",
          "jvm_events_lost", "jvm_events_throttled"):
    assert a[k] == b[k], (k, a[k], b[k])
ev = {}
for s in b["stacks"]:
    ev[s["event"]] = ev.get(s["event"], 0) + s["count"]
assert ev.get("alloc", 0) > 100 and set(ev) <= {"alloc", "lock"}, ev
print("INFO: JVM events' report == live: %s" % ev)
PY

# pprof from the same file: native mappings carry their build-ids
if command -v protoc > /dev/null; then
	"$ASGST" report -q -i "$TMP/r.asgst" -o "$TMP/rep.pb.gz" || fail "report pprof"
	want=$(readelf -n "$WL/native_chain" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
	gunzip -c "$TMP/rep.pb.gz" | protoc --decode_raw > "$TMP/rep.pb.txt" || fail "pprof decode"
	grep -q "^6: \"$want\"\$" "$TMP/rep.pb.txt" || fail "build-id $want not in the pprof strings"
	echo "INFO: pprof mapping build-id $want present"
else
	skip_or_fail "protoc (protobuf-compiler) missing"
fi
# other formats and filters from the same file
"$ASGST" report -q -i "$TMP/r.asgst" -f collapsed --include nc_leaf -o "$TMP/rep.collapsed" \
	|| fail "report collapsed"
grep -q 'nc_chain1;.*nc_leaf [0-9]*$' "$TMP/rep.collapsed" || fail "collapsed chain"
"$ASGST" report -q -i "$TMP/r.asgst" -f top | grep -q nc_leaf || fail "report top"

expect_err() {
	word=$1; shift
	"$@" > "$TMP/out" 2> "$TMP/err"
	rc=$?
	[ "$rc" -ne 0 ] || fail "'$*' exited 0"
	[ "$(wc -l < "$TMP/err")" -eq 1 ] || { cat "$TMP/err"; fail "'$*': not one line"; }
	grep -qi -- "$word" "$TMP/err" || { cat "$TMP/err"; fail "'$*': no '$word'"; }
	echo "INFO: $(cat "$TMP/err")"
}
size=$(stat -c %s "$TMP/r.asgst")
head -c $((size / 2)) "$TMP/r.asgst" > "$TMP/trunc.asgst"
expect_err "truncated" "$ASGST" report -i "$TMP/trunc.asgst" -o "$TMP/x.json"
printf 'garbage garbage garbage garbage' > "$TMP/garbage.asgst"
expect_err "not an asgst-bpf raw file" "$ASGST" report -i "$TMP/garbage.asgst"
python3 -c "
d=bytearray(open('$TMP/r.asgst','rb').read()); d[8]=9
open('$TMP/v9.asgst','wb').write(d)"
expect_err "version 9" "$ASGST" report -i "$TMP/v9.asgst"
python3 -c "
import struct
d=bytearray(open('$TMP/r.asgst','rb').read()); struct.pack_into('<Q', d, 16+8, 1<<40)
open('$TMP/big.asgst','wb').write(d)"
expect_err "does not fit" "$ASGST" report -i "$TMP/big.asgst"
# crafted chunks after a good file's own: each length checked against what
# is left of its chunk (a comm longer than the chunk once wrapped around)
cat > "$TMP/craft.py" <<'PY'
import struct, sys
good, out, kind = sys.argv[1], sys.argv[2], sys.argv[3]
def chunk(t, pay):
    return struct.pack("<IIQ", t, 0, len(pay)) + pay + b"\0" * (-len(pay) % 8)
proc = lambda comm_len, maps_len, rest: \
    struct.pack("<IIIIQQ", 4242, 0, comm_len, 0, maps_len, 0) + rest
c = {
    "comm": chunk(2, proc(40, 1 << 40, b"")),
    "maps": chunk(2, proc(4, 1000, b"abcd" + b"x" * 10)),
    "commbig": chunk(2, proc(1 << 31, 0, b"")),
    "cmoff": chunk(3, struct.pack("<IIQ", 4242, 0, (1 << 32) - 8) + b"y" * 64),
    "cmshort": chunk(3, b"\1\2\3"),
    "meta": chunk(5, b"\0" * 8),
    "stacks": chunk(4, b"\xff" * 40),
}[kind]
open(out, "wb").write(open(good, "rb").read() + c)
PY
for k in comm:"process chunk: comm" maps:"process chunk: maps" \
	commbig:"process chunk: comm" cmoff:"code-map chunk" \
	cmshort:"code-map chunk" meta:"meta chunk" stacks:"corrupt stacks"; do
	python3 "$TMP/craft.py" "$TMP/r.asgst" "$TMP/craft.asgst" "${k%%:*}" ||
		fail "craft ${k%%:*}"
	expect_err "${k#*:}" "$ASGST" report -i "$TMP/craft.asgst" -o "$TMP/x.json"
done
expect_err "cannot read" "$ASGST" report -i "$TMP/nonexistent.asgst"
expect_err "bad regular expression" "$ASGST" report -i "$TMP/r.asgst" --thread '[x'
expect_err "cannot write" "$ASGST" report -i "$TMP/r.asgst" -o /nonexistent/x.json

# an output that cannot be written at the end: the recording is kept
mkdir "$TMP/spoil"
TMPDIR="$TMP" "$ASGST" record -q -F 199 -o "$TMP/spoil/out.json" -- \
	"$WL/native_chain" 1 > /dev/null 2> "$TMP/full.err" &
rp=$!; bg $rp
spoil_output "$TMP/spoil/out.json" || fail "the recorder wrote no file"
wait $rp && fail "an output taken by a directory was written"
cat "$TMP/full.err"
kept=$(sed -n 's/.*the recording is kept in \([^ ]*\) .*/\1/p' "$TMP/full.err")
[ -f "$kept" ] || fail "no kept raw file named"
"$ASGST" report -q -i "$kept" -f collapsed | grep -q 'nc_leaf [0-9]*$' \
	|| fail "kept raw file does not hold the stacks"
exit 0
