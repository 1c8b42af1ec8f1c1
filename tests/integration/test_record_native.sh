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
