#!/bin/sh
# Attach from the host into JVMs in new pid + mount namespaces with their
# own /tmp and /dev/shm: the socket and the map live in the JVM's mounts,
# its pid there is 1. Once with the agent's path hidden inside (a tmpfs
# over the build dir: the agent must be copied in), once with it visible.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"
need_root
need_jdk17
need_built
command -v unshare >/dev/null || skip_or_fail "unshare (util-linux) missing"
J="$JDK17/bin/java"
AGENT_REAL=$(readlink -f "$AGENT")

# ns_jvm OUT HIDE: a JVM as pid 1 of new pid + mount namespaces; sets
# JVM_PID (host pid) and UNSHARE_PID
ns_jvm() {
	_out=$1 _hide=$2
	unshare --pid --fork --mount-proc --mount sh -c '
		set -e
		mount -t tmpfs tmpfs /dev/shm
		cp -r "$1" /dev/shm/classes
		# a build dir under /tmp (a clone there) stays visible when asked
		case "$2" in /tmp/*) if [ "$4" != hide ]; then
			mkdir /dev/shm/.build; mount --bind "$2" /dev/shm/.build; fi ;; esac
		mount -t tmpfs tmpfs /tmp
		mv /dev/shm/classes /tmp/classes
		if [ -d /dev/shm/.build ]; then
			mkdir -p "$2"; mount --move /dev/shm/.build "$2"; rmdir /dev/shm/.build
		fi
		if [ "$4" = hide ] && [ -d "$2" ]; then mount -t tmpfs tmpfs "$2"; fi
		exec "$3" -cp /tmp/classes SleepLoop 60' sh \
		"$WL/classes" "$BUILD" "$J" "$_hide" >"$_out" 2>&1 &
	UNSHARE_PID=$!
	bg "$UNSHARE_PID"
	_n=200
	while ! grep -q READY "$_out" 2>/dev/null && [ "$_n" -gt 0 ]; do
		kill -0 "$UNSHARE_PID" 2>/dev/null || break
		sleep 0.1
		_n=$((_n - 1))
	done
	grep -q READY "$_out" || { cat "$_out"; fail "namespaced JVM did not start"; }
	JVM_PID=$(pgrep -P "$UNSHARE_PID" | head -n 1)
	[ -n "$JVM_PID" ] || fail "no JVM under unshare $UNSHARE_PID"
	bg "$JVM_PID"
}

# ---- agent hidden inside: copied into the JVM's /tmp ------------------------
ns_jvm "$TMP/ns1.out" hide
P=$JVM_PID
NSPID=$(awk '$1 == "NStgid:" { print $NF }' "/proc/$P/status")
echo "INFO: namespaced JVM: host pid $P, pid $NSPID inside"
[ "$NSPID" -ne "$P" ] || fail "JVM is not in its own pid namespace"
[ -e "/proc/$P/root$AGENT_REAL" ] && fail "agent still visible inside (hiding failed)"
[ -e "/proc/$P/root/tmp/.java_pid$NSPID" ] && fail "listener up before the attach"

run_bounded "$ASGST" attach "$P"
[ "$RC" -eq 0 ] || { cat "$TMP/out" "$TMP/ns1.out"; fail "attach into the namespaced JVM failed"; }
echo "INFO: $(cat "$TMP/out")"
grep -q "$(cm_map "$P" "$NSPID")" "$TMP/out" ||
	fail "attach did not name the map's host path"
# the socket came up in the JVM's /tmp, not ours
[ -S "/proc/$P/root/tmp/.java_pid$NSPID" ] || fail "no listener socket in the JVM's /tmp"
COPY="/tmp/asgst-agent-$(id -u).so"
[ -f "/proc/$P/root$COPY" ] || fail "agent was not copied into the JVM's /tmp"
cmp -s "/proc/$P/root$COPY" "$AGENT_REAL" || fail "the copy differs from the agent"
awk -v c="$COPY" '$6 == c { ok = 1 } END { exit !ok }' "/proc/$P/maps" ||
	fail "the JVM did not map the copy $COPY"
[ "$(agent_libs "$P")" -eq 1 ] || fail "not exactly one agent mapped"
wait_file "$(cm_map "$P" "$NSPID")" 100 ||
	{ cat "$TMP/ns1.out"; fail "no map in the JVM's /dev/shm"; }
echo "INFO: map $(stat -c %s "$(cm_map "$P" "$NSPID")") bytes in the JVM's /dev/shm"

# twice: a no-op; forced: the same copy, still one agent
run_bounded "$ASGST" attach "$P"
[ "$RC" -eq 0 ] && grep -q "already loaded" "$TMP/out" ||
	{ cat "$TMP/out"; fail "second attach was not a no-op"; }
run_bounded "$ASGST" attach --force "$P"
[ "$RC" -eq 0 ] || { cat "$TMP/out"; fail "forced attach failed"; }
[ "$(agent_libs "$P")" -eq 1 ] || fail "forced attach mapped a second agent"

run_bounded "$ASGST" jvms
L=$(awk -v p="$P" '$1 == p' "$TMP/out")
echo "INFO: jvms: $L"
echo "$L" | awk -v n="$NSPID" '$2 == n && $3 != "/" && $5 == "yes" { ok = 1 }
	END { exit !ok }' || { cat "$TMP/out"; fail "jvms line wrong: $L"; }
echo "$L" | awk '$6 ~ /^[1-9][0-9]*\// { ok = 1 } END { exit !ok }' ||
	fail "jvms: the map has no records: $L"

# decoded from the host: the code map names the workload's class
run_bounded "$ASGST" codemap "$P"
[ "$RC" -eq 0 ] || { head -n 5 "$TMP/out"; fail "codemap $P failed"; }
grep -q "SleepLoop" "$TMP/out" || fail "the map read from the host lacks SleepLoop"
kill "$P"

# ---- agent visible inside: its path is passed as is ---------------------------
ns_jvm "$TMP/ns2.out" show
P=$JVM_PID
run_bounded "$ASGST" attach "$P"
[ "$RC" -eq 0 ] || { cat "$TMP/out" "$TMP/ns2.out"; fail "attach (agent visible) failed"; }
awk -v c="$AGENT_REAL" '$6 == c { ok = 1 } END { exit !ok }' "/proc/$P/maps" ||
	fail "the JVM did not map $AGENT_REAL itself"
[ -e "/proc/$P/root$COPY" ] && fail "agent copied although visible"
kill "$P"
echo "PASS"
