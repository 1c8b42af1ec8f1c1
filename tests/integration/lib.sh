# Sourced by tests/integration/test_*.sh. Conventions:
#   exit 0 = pass, 77 = skip (print "SKIP: reason" first), other = fail.
#   Under CI=true what the tests need (root, BPF, JDK 17, JDK 25) is
#   required: need_root / need_bpf / need_jdk17 / need_jdk25 and test_jdks
#   fail where they would skip.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
ASGST="$BUILD/asgst-bpf"
AGENT="$BUILD/libasgst-agent.so"
WL="$BUILD/workloads"
JDK17=${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}
JDK25=${JDK25:-$(ls -d /usr/lib/jvm/*25* 2>/dev/null | head -n 1)}
TMP=$(mktemp -d /tmp/asgst-test.XXXXXX)
trap 'cleanup_all' EXIT
_bg_pids=""

cleanup_all() {
	for p in $_bg_pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}

# cm_map PID [NSPID]: the path, from here, of JVM PID's code map
# (/dev/shm/asgst-NSPID-PIDNS.map in its root; PIDNS the inode of its pid
# namespace; NSPID its pid there, PID by default)
cm_map() {
	_ns=$(stat -L -c %i "/proc/$1/ns/pid" 2>/dev/null || echo 0)
	if [ -n "${2:-}" ]; then
		echo "/proc/$1/root/dev/shm/asgst-$2-$_ns.map"
	else
		echo "/dev/shm/asgst-$1-$_ns.map"
	fi
}

# stage_public SRC...: copies of files or folders for a process run as
# another user (nobody), who may not read the checkout (a clone in a 0700
# home or mktemp -d folder): put in $TMP/pub, readable by all, removed with
# $TMP at exit
stage_public() {
	if [ ! -d "$TMP/pub" ]; then
		chmod 711 "$TMP" && mkdir -m 755 "$TMP/pub" || return 1
	fi
	cp -a "$@" "$TMP/pub/" && chmod -R a+rX "$TMP/pub"
}

# remember a background pid so it is killed at exit
bg() { _bg_pids="$_bg_pids $1"; }

skip() {
	echo "SKIP: $*"
	exit 77
}

skip_or_fail() {
	if [ "${CI:-}" = "true" ]; then
		echo "FAIL: $* (CI=true: required, a skip is a failure)"
		exit 1
	fi
	skip "$*"
}

fail() {
	echo "FAIL: $*"
	exit 1
}

need_root() {
	[ "$(id -u)" -eq 0 ] || skip_or_fail "needs root"
}

need_bpf() {
	need_root
	[ -r /sys/kernel/btf/vmlinux ] || skip_or_fail "kernel has no BTF (/sys/kernel/btf/vmlinux)"
}

need_jdk17() {
	[ -x "$JDK17/bin/java" ] || skip_or_fail "JDK 17 not found at $JDK17"
}

# a JDK 25 under /usr/lib/jvm (JDK25=); under CI=true a missing one fails
need_jdk25() {
	[ -n "$JDK25" ] && [ -x "$JDK25/bin/java" ] || skip_or_fail "JDK 25 not present under /usr/lib/jvm"
}

# test_jdks: the JDKs a test runs on, one a line: JDK 17 (see need_jdk17),
# and the JDK 25 under /usr/lib/jvm (JDK25=) when present. Without it the
# test runs on JDK 17 alone and it is said on stderr; under CI=true that is
# a failure: status 1, JDK 17 still listed, so the test runs and fails:
#   jdks=$(test_jdks) || rc=1
#   for jdk in $jdks; do ...
test_jdks() {
	echo "$JDK17"
	if [ -n "$JDK25" ] && [ -x "$JDK25/bin/java" ]; then
		echo "$JDK25"
	elif [ "${CI:-}" = "true" ]; then
		echo "FAIL: JDK 25 not present under /usr/lib/jvm (CI=true: required)" >&2
		return 1
	else
		echo "INFO: JDK 25 not present under /usr/lib/jvm: JDK 17 only" >&2
	fi
}

# spoil_output PATH: once a recorder writes PATH's temporary file
# (.asgst-*.tmp beside it: the recording runs), a directory takes PATH, so
# the output cannot be put in place at the end. 1 when no such file came.
spoil_output() {
	_n=300
	while ! ls -A "$(dirname "$1")" | grep -q '^\.asgst-.*\.tmp$'; do
		[ $_n -gt 0 ] || return 1
		sleep 0.1; _n=$((_n - 1))
	done
	mkdir "$1"
}

# wait until FILE exists or N tenths of a second pass
wait_file() {
	_n=${2:-100}
	while [ ! -e "$1" ] && [ "$_n" -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
	[ -e "$1" ]
}

# wait_link PID LOG: until recorder PID's sampler has a BPF link open (its
# sched_switch tracepoint: -e offcpu; loading takes seconds on a busy
# host); 1, LOG printed, when the recorder exits or 30 s pass first
wait_link() {
	_n=300
	while ! grep -qs '^link_type:' /proc/$1/fdinfo/* && [ "$_n" -gt 0 ]; do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1; _n=$((_n - 1))
	done
	grep -qs '^link_type:' /proc/$1/fdinfo/* && return 0
	cat "$2"
	return 1
}
