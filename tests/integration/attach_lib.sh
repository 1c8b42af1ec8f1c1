# Helpers for the attach tests (sourced after lib.sh).

# start_jvm JAVA OUT ARGS...: start a JVM in the background, wait for READY;
# sets JVM_PID. Fails the test when it never gets ready.
start_jvm() {
	_java=$1 _out=$2
	shift 2
	"$_java" "$@" >"$_out" 2>&1 &
	JVM_PID=$!
	bg "$JVM_PID"
	_n=200
	while ! grep -q READY "$_out" 2>/dev/null && [ "$_n" -gt 0 ]; do
		kill -0 "$JVM_PID" 2>/dev/null || break
		sleep 0.1
		_n=$((_n - 1))
	done
	grep -q READY "$_out" || { cat "$_out"; fail "JVM ($*) did not start"; }
}

# number of distinct asgst agent libraries mapped by PID
agent_libs() {
	awk '$6 ~ /(libasgst-agent|asgst-agent-[0-9]+)\.so$/ { print $6 }' \
		"/proc/$1/maps" | sort -u | wc -l
}

# run CMD... bounded (60 s), output in $TMP/out, status in $RC; a hang
# is a failure
run_bounded() {
	timeout 60 "$@" >"$TMP/out" 2>&1
	RC=$?
	[ "$RC" -ne 124 ] || { cat "$TMP/out"; fail "'$*' hung (killed after 60 s)"; }
}

# the error of a failed command: exactly one line, non-zero status
expect_one_line_error() {
	_what=$1 _pattern=$2
	[ "$RC" -ne 0 ] || { cat "$TMP/out"; fail "$_what: succeeded"; }
	[ "$(wc -l <"$TMP/out")" -eq 1 ] ||
		{ cat "$TMP/out"; fail "$_what: error is not one line"; }
	grep -q -- "$_pattern" "$TMP/out" ||
		{ cat "$TMP/out"; fail "$_what: error lacks '$_pattern'"; }
	echo "INFO: $_what: $(cat "$TMP/out")"
}

need_built() {
	[ -x "$ASGST" ] || fail "$ASGST not built (make BUILD=$BUILD)"
	[ -f "$AGENT" ] || fail "$AGENT not built (make BUILD=$BUILD)"
	[ -f "$WL/classes/SleepLoop.class" ] ||
		fail "$WL/classes/SleepLoop.class not built (make BUILD=$BUILD workloads)"
}

# basic_attach JAVA: late attach, map, attaching twice, jvms
basic_attach() {
	_java=$1
	start_jvm "$_java" "$TMP/jvm.out" -cp "$WL/classes" SleepLoop 60
	_pid=$JVM_PID
	[ "$(agent_libs "$_pid")" -eq 0 ] || fail "agent mapped before attach"

	run_bounded "$ASGST" attach "$_pid"
	[ "$RC" -eq 0 ] || { cat "$TMP/out" "$TMP/jvm.out"; fail "attach $_pid failed"; }
	grep -q "^attached agent to JVM $_pid" "$TMP/out" ||
		{ cat "$TMP/out"; fail "attach printed no success line"; }
	echo "INFO: $(cat "$TMP/out")"
	[ "$(agent_libs "$_pid")" -eq 1 ] || fail "agent not in the maps of $_pid"
	wait_file "$(cm_map "$_pid")" 100 ||
		{ cat "$TMP/jvm.out"; fail "$(cm_map "$_pid") not written"; }
	kill -0 "$_pid" || fail "JVM died after the attach"

	# twice: a no-op, still one agent
	run_bounded "$ASGST" attach "$_pid"
	[ "$RC" -eq 0 ] || { cat "$TMP/out"; fail "second attach failed"; }
	grep -q "already loaded" "$TMP/out" ||
		{ cat "$TMP/out"; fail "second attach did not say it was a no-op"; }
	# forced: goes through the JVM again, the agent must stay one
	run_bounded "$ASGST" attach --force "$_pid"
	[ "$RC" -eq 0 ] || { cat "$TMP/out" "$TMP/jvm.out"; fail "forced second attach failed"; }
	[ "$(agent_libs "$_pid")" -eq 1 ] || fail "a second agent got mapped"

	run_bounded "$ASGST" jvms
	[ "$RC" -eq 0 ] || { cat "$TMP/out"; fail "jvms failed"; }
	head -n 1 "$TMP/out" | grep -q "^PID *NSPID *ROOT *JDK *AGENT *MAP *COMMAND" ||
		{ cat "$TMP/out"; fail "jvms: no header"; }
	_line=$(awk -v p="$_pid" '$1 == p' "$TMP/out")
	[ -n "$_line" ] || { cat "$TMP/out"; fail "jvms does not list $_pid"; }
	echo "INFO: jvms: $_line"
	echo "$_line" | awk -v p="$_pid" '$2 == p && $3 == "/" && $5 == "yes" { ok = 1 }
		END { exit !ok }' || fail "jvms line wrong: $_line"
	echo "$_line" | grep -q "SleepLoop" || fail "jvms: no command: $_line"
	_ver=$("$_java" -XshowSettings:properties -version 2>&1 |
		awk '$1 == "java.version" { print $3 }')
	echo "$_line" | awk -v v="$_ver" '$4 == v { ok = 1 } END { exit !ok }' ||
		fail "jvms: JDK is not $_ver: $_line"
	# a map with records: records/size/age
	echo "$_line" | awk '$6 ~ /^[1-9][0-9]*\/[0-9.]+[BKMG]\// { ok = 1 }
		END { exit !ok }' || fail "jvms: no code-map state: $_line"
	kill "$_pid"
	wait "$_pid" 2>/dev/null
}

# starting_attach JAVA: attach while the JVM is still starting (its attach
# listener is up, its live phase not yet come): the attach waits for it,
# then loads the agent, which writes its map
starting_attach() {
	_java=$1
	"$_java" -Djava.system.class.loader=SlowLoader -Dslowloader.ms=4000 \
		-cp "$WL/classes" SleepLoop 60 >"$TMP/starting.out" 2>&1 &
	_pid=$!
	bg "$_pid"
	_n=100
	while ! grep -q "^Signal Dispatch" /proc/"$_pid"/task/*/comm 2>/dev/null &&
	      [ "$_n" -gt 0 ]; do
		sleep 0.05
		_n=$((_n - 1))
	done
	grep -q "^Signal Dispatch" /proc/"$_pid"/task/*/comm ||
		{ cat "$TMP/starting.out"; fail "starting JVM: no Signal Dispatcher thread"; }
	# still in the class loader: what is tested is an attach before main
	grep -q READY "$TMP/starting.out" &&
		fail "starting JVM already ran main: the attach comes too late to test"
	run_bounded "$ASGST" attach "$_pid"
	[ "$RC" -eq 0 ] || { cat "$TMP/out" "$TMP/starting.out"; fail "attach to a starting JVM failed"; }
	echo "INFO: starting JVM: $(cat "$TMP/out")"
	wait_file "$(cm_map "$_pid")" 100 ||
		{ cat "$TMP/starting.out"; fail "attached to a starting JVM, but its agent wrote no map"; }
	[ "$(agent_libs "$_pid")" -eq 1 ] || fail "starting JVM: not one agent mapped"
	grep -q "no JVMTI" "$TMP/starting.out" &&
		{ cat "$TMP/starting.out"; fail "starting JVM: the agent turned itself off"; }
	kill "$_pid"
	wait "$_pid" 2>/dev/null
}
