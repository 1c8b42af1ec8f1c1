#!/bin/sh
# Late attach to a running JVM, attaching twice and `jvms`, and attach to a
# JVM still starting, on JDK 17 and JDK 25 (test_jdks, "return code: N"
# replies there); then on JDK 17 the
# failures: not a JVM, attach disabled, a JVM exiting during the attach.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"
need_root
need_jdk17
need_built
J="$JDK17/bin/java"

rc=0
jdks=$(test_jdks) || rc=1
for jdk in $jdks; do
	echo "INFO: $(basename "$jdk")"
	basic_attach "$jdk/bin/java"
	starting_attach "$jdk/bin/java"
done

# a JVM of another user (nobody), cwd /: the trigger is created for it and
# the connect made with its uid/gid
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	stage_public "$WL/classes" || fail "cannot stage the classes for nobody"
	(cd / && exec setpriv --reuid=nobody --regid="$(id -g nobody)" \
		--clear-groups "$J" -cp "$TMP/pub/classes" SleepLoop 60) \
		>"$TMP/nobody.out" 2>&1 &
	NB=$!
	bg "$NB"
	n=200
	while ! grep -q READY "$TMP/nobody.out" && [ "$n" -gt 0 ]; do
		sleep 0.1; n=$((n - 1))
	done
	grep -q READY "$TMP/nobody.out" || { cat "$TMP/nobody.out"; fail "JVM as nobody did not start"; }
	[ "$(stat -c %U "/proc/$NB")" = nobody ] || fail "JVM $NB does not run as nobody"
	run_bounded "$ASGST" attach "$NB"
	[ "$RC" -eq 0 ] || { cat "$TMP/out" "$TMP/nobody.out"; fail "attach to nobody's JVM failed"; }
	[ "$(agent_libs "$NB")" -eq 1 ] || fail "agent not mapped by nobody's JVM"
	[ "$(stat -c %U "/tmp/.java_pid$NB")" = nobody ] || fail "listener socket not nobody's"
	[ -e "/.attach_pid$NB" ] && fail "trigger file left in /"
	wait_file "$(cm_map "$NB")" 100 || fail "nobody's JVM wrote no map"
	kill "$NB"
else
	echo "INFO: no 'nobody' user or setpriv: other-user attach not tested"
fi

# a stale socket of an earlier JVM with the same pid (bound, nobody
# listening): removed, the listener triggered afresh
if command -v python3 >/dev/null; then
	start_jvm "$J" "$TMP/stale.out" -cp "$WL/classes" SleepLoop 60
	SP=$JVM_PID
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()' \
		"/tmp/.java_pid$SP" || fail "cannot plant a stale socket"
	run_bounded "$ASGST" attach "$SP"
	[ "$RC" -eq 0 ] || { cat "$TMP/out"; fail "attach over a stale socket failed"; }
	[ "$(agent_libs "$SP")" -eq 1 ] || fail "agent not mapped after a stale socket"
	kill "$SP"
fi

# not a JVM
sleep 100 &
SP=$!
bg "$SP"
run_bounded "$ASGST" attach "$SP"
expect_one_line_error "non-JVM" "not a HotSpot JVM"
kill "$SP"

# no such process
run_bounded "$ASGST" attach 2147483600
expect_one_line_error "no such process" "no such process"

# attach disabled: refused up front, without a SIGQUIT (no thread dump)
start_jvm "$J" "$TMP/dis.out" -XX:+DisableAttachMechanism -cp "$WL/classes" \
	SleepLoop 60
DP=$JVM_PID
run_bounded "$ASGST" attach "$DP"
expect_one_line_error "DisableAttachMechanism" "DisableAttachMechanism"
sleep 0.5
grep -q "Full thread dump" "$TMP/dis.out" && fail "a SIGQUIT reached the disabled JVM"
"$ASGST" jvms | awk -v p="$DP" '$1 == p && $5 == "no-att" { ok = 1 } END { exit !ok }' ||
	fail "jvms does not show $DP as attach-disabled"
kill "$DP"

# disabled where we cannot see it (a -XX:Flags file): the bounded wait
echo "+DisableAttachMechanism" >"$TMP/flags"
start_jvm "$J" "$TMP/dis2.out" -XX:Flags="$TMP/flags" -cp "$WL/classes" \
	SleepLoop 60
DP=$JVM_PID
run_bounded "$ASGST" attach "$DP"
expect_one_line_error "DisableAttachMechanism in a flags file" \
	"did not start its attach listener"
[ -e "/proc/$DP/cwd/.attach_pid$DP" ] && fail "trigger file left behind"
[ -e "/tmp/.attach_pid$DP" ] && fail "trigger file left behind in /tmp"

# a JVM exiting while we wait for its listener: noticed, not waited out
start_jvm "$J" "$TMP/dis3.out" -XX:Flags="$TMP/flags" -cp "$WL/classes" \
	SleepLoop 60
DP=$JVM_PID
(sleep 1; kill -9 "$DP") &
run_bounded "$ASGST" attach "$DP"
expect_one_line_error "JVM exiting during attach" "exited during attach"
wait "$DP" 2>/dev/null

# a JVM with a 1 s life: every attempt succeeds or fails cleanly, never hangs
start_jvm "$J" "$TMP/short.out" -cp "$WL/classes" SleepLoop 1
SP=$JVM_PID
ok=0 failed=0
while kill -0 "$SP" 2>/dev/null; do
	run_bounded "$ASGST" attach --force -q "$SP"
	if [ "$RC" -eq 0 ]; then
		ok=$((ok + 1))
	else
		[ "$RC" -eq 1 ] || { cat "$TMP/out"; fail "attach exit status $RC"; }
		[ "$(wc -l <"$TMP/out")" -eq 1 ] || { cat "$TMP/out"; fail "error not one line"; }
		failed=$((failed + 1))
		last=$(cat "$TMP/out")
	fi
done
echo "INFO: short-lived JVM: $ok attaches ok, $failed failed (last: ${last:-none})"
[ $((ok + failed)) -gt 0 ] || fail "no attach attempt on the short-lived JVM"
[ "$rc" -eq 0 ] || exit 1
echo "PASS"
