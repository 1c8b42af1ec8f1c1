#!/bin/sh
# record -p, record -- CMD and record -a on a native workload with a known
# frame-pointer chain: the exact chain in >= 98 % of its samples; a
# syscall-heavy workload shows symbolized kernel frames.
. "$(dirname "$0")/lib.sh"
need_bpf
CHAIN=nc_leaf,nc_chain8,nc_chain7,nc_chain6,nc_chain5,nc_chain4,nc_chain3,nc_chain2,nc_chain1
CHECK="python3 $TOP/tests/integration/profile_check.py"

# -p PID
"$WL/native_chain" 6 > "$TMP/nc.out" &
wpid=$!; bg $wpid
wait_file "$TMP/nc.out" || fail "workload did not start"
sleep 0.3
"$ASGST" record -q -p "$wpid" -F 199 -d 3 -o "$TMP/p.json" || fail "record -p failed"
$CHECK "$TMP/p.json" --schema || fail "schema"
$CHECK "$TMP/p.json" --pid "$wpid" --chain "$CHAIN,main" || fail "record -p chain"

# -- CMD (ends when the command exits), two extra threads
"$ASGST" record -q -F 199 -o "$TMP/c.json" -- "$WL/native_chain" 2 2 > "$TMP/c.out" \
	|| fail "record -- CMD failed"
cpid=$(sed -n 's/^READY //p' "$TMP/c.out")
[ -n "$cpid" ] || fail "command did not run"
$CHECK "$TMP/c.json" --pid "$cpid" --chain "$CHAIN" || fail "record -- chain"
threads=$(python3 -c "
import json,sys
d=json.load(open('$TMP/c.json'))
print(len({s['tid'] for s in d['stacks'] if s['pid']==$cpid}))")
echo "INFO: -- CMD saw $threads threads"
[ "$threads" -ge 3 ] || fail "expected samples from 3 threads, saw $threads"

# --stack-window: a window ends where the thread's frames end (here the
# main thread's initial stack pointer), not at the top of the stack
# mapping: 8 KiB of environment above it must not be copied per sample
pad=$(head -c 8192 /dev/zero | tr '\0' x)
PAD="$pad" "$ASGST" record -q --stats -F 199 --stack-window 16384 -o "$TMP/w.json" \
	-- "$WL/native_chain" 2 0 > "$TMP/w.out" 2> "$TMP/w.err" || fail "record --stack-window failed"
wpid2=$(sed -n 's/^READY //p' "$TMP/w.out")
$CHECK "$TMP/w.json" --pid "$wpid2" --chain "$CHAIN,main" || fail "record --stack-window chain"
wb=$(sed -n 's/.*window_bytes_per_sample=\([0-9]*\).*/\1/p' "$TMP/w.err")
wn=$(sed -n 's/.* windows=\([0-9]*\).*/\1/p' "$TMP/w.err")
echo "MEASURE: main-thread window $wb bytes per sample ($wn windows) under an 8 KiB environment"
[ -n "$wb" ] && [ "${wn:-0}" -gt 0 ] || fail "no window figures in --stats: $(cat "$TMP/w.err")"
[ "$wb" -lt 2048 ] || fail "window of $wb bytes: copied past the main thread's frames"
# the start-up's figures (docs/sampler.md, Start-up): the verifier checks
# the sampler's often-reached parts once, as global functions; inlined
# into every path it processed 97,700 instructions of it on 6.18
vi=$(sed -n 's/.*bpf_verified_insns=\([0-9]*\).*/\1/p' "$TMP/w.err")
su=$(sed -n 's/.*startup_cpu_ns=\([0-9]*\).*/\1/p' "$TMP/w.err")
lc=$(sed -n 's/.*bpf_load_cpu_ns=\([0-9]*\).*/\1/p' "$TMP/w.err")
echo "MEASURE: verifier processed ${vi:-?} instructions; start-up ${su:-?} ns CPU, of it the load ${lc:-?} ns"
[ -n "$vi" ] && [ "$vi" -gt 0 ] && [ "$vi" -lt 40000 ] ||
	fail "bpf_verified_insns=${vi:-none}: want 1-39999 (a part the verifier checks on every path again?)"
[ -n "$su" ] && [ -n "$lc" ] && [ "$lc" -gt 0 ] && [ "$su" -ge "$lc" ] ||
	fail "startup_cpu_ns=${su:-none} bpf_load_cpu_ns=${lc:-none}: want the load inside the start-up"

# -a sees it too
"$WL/native_chain" 4 > "$TMP/a.out" &
apid=$!; bg $apid
wait_file "$TMP/a.out"; sleep 0.3
"$ASGST" record -q -a -F 99 -d 2 -o "$TMP/a.json" || fail "record -a failed"
$CHECK "$TMP/a.json" --pid "$apid" --chain "$CHAIN,main" --min-samples 50 || fail "record -a chain"

# kernel frames of a syscall-heavy workload
"$ASGST" record -q -F 199 -o "$TMP/k.json" -- "$WL/syscall_heavy" 2 > "$TMP/k.out" \
	|| fail "record syscall workload failed"
kpid=$(sed -n 's/^READY //p' "$TMP/k.out")
$CHECK "$TMP/k.json" --pid "$kpid" --kernel --min 0.5 || fail "kernel frames"
python3 - "$TMP/k.json" "$kpid" <<'PY' || fail "no kernel syscall entry frame"
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
syms = {f["symbol"] for s in d["stacks"] if s["pid"] == pid
        for f in s["frames"] if f["type"] == "kernel"}
want = {"entry_SYSCALL_64_after_hwframe", "do_syscall_64"}
print("INFO: kernel symbols seen: %d, e.g. %s" % (len(syms), sorted(syms)[:5]))
sys.exit(0 if syms & want else 1)
PY
# collapsed output: root first, kernel frames suffixed
"$ASGST" record -q -F 199 -o "$TMP/k.collapsed" -- "$WL/syscall_heavy" 1 > /dev/null \
	|| fail "record collapsed failed"
# (sh_loop itself is often missing: libc's write() keeps no frame pointer,
# so a frame-pointer walk skips its caller; see docs/decoding.md)
grep -q '^syscall_heavy;.*main;.*_\[k\] [0-9][0-9]*$' "$TMP/k.collapsed" \
	|| { head -n 3 "$TMP/k.collapsed"; fail "collapsed lines not root-first with _[k]"; }
exit 0
