#!/bin/sh
# Ending a recording: SIGINT and SIGTERM stop it cleanly with the output
# written; a -p target that exits ends it, with its samples kept.
. "$(dirname "$0")/lib.sh"
need_bpf
CHECK="python3 $TOP/tests/integration/profile_check.py"

for sig in INT TERM; do
	"$WL/native_chain" 20 > "$TMP/w.out" &
	wpid=$!; bg $wpid
	wait_file "$TMP/w.out"; sleep 0.3
	"$ASGST" record -q -p "$wpid" -F 199 -o "$TMP/$sig.json" 2> "$TMP/$sig.err" &
	rpid=$!
	sleep 2
	kill -$sig $rpid
	wait $rpid
	rc=$?
	kill $wpid 2>/dev/null
	[ "$rc" -eq 0 ] || { cat "$TMP/$sig.err"; fail "SIG$sig: record exited $rc"; }
	$CHECK "$TMP/$sig.json" --schema || fail "SIG$sig: output not valid"
	$CHECK "$TMP/$sig.json" --pid "$wpid" --chain nc_leaf,nc_chain8 || fail "SIG$sig: samples"
	grep -q "samples, 0 lost" "$TMP/$sig.err" || { cat "$TMP/$sig.err"; fail "SIG$sig: no summary line"; }
done

# the target exits after 1.5 s: the recording ends by itself, samples kept
"$WL/native_chain" 1.5 > "$TMP/x.out" &
xpid=$!; bg $xpid
wait_file "$TMP/x.out"
start=$(date +%s)
timeout 20 "$ASGST" record -p "$xpid" -F 199 -o "$TMP/exit.json" 2> "$TMP/exit.err" \
	|| { cat "$TMP/exit.err"; fail "record -p of an exiting process failed"; }
end=$(date +%s)
[ $((end - start)) -lt 10 ] || fail "record did not end when its target exited"
grep -q "target processes exited" "$TMP/exit.err" || fail "no notice that the target exited"
$CHECK "$TMP/exit.json" --pid "$xpid" --chain nc_leaf,nc_chain8 || fail "exited target's samples"
exit 0
