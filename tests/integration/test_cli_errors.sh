#!/bin/sh
# Bad input to record: each case is one line on stderr naming the problem,
# and a non-zero exit.
. "$(dirname "$0")/lib.sh"
[ -x "$ASGST" ] || fail "no $ASGST"

# expect_err WORD ARGS... : non-zero exit, one stderr line containing WORD
expect_err() {
	word=$1; shift
	"$@" > "$TMP/out" 2> "$TMP/err"
	rc=$?
	lines=$(wc -l < "$TMP/err")
	if [ "$rc" -eq 0 ]; then fail "'$*' exited 0"; fi
	if [ "$lines" -ne 1 ]; then cat "$TMP/err"; fail "'$*': $lines stderr lines, want 1"; fi
	grep -qi -- "$word" "$TMP/err" || { cat "$TMP/err"; fail "'$*': error does not mention '$word'"; }
	echo "INFO: $* -> $(cat "$TMP/err")"
}

sleep 30 & spid=$!; bg $spid
expect_err "unknown command" "$ASGST" frobnicate
expect_err "--bogus" "$ASGST" record --bogus -a
expect_err "-x" "$ASGST" record -x
expect_err "no process" "$ASGST" record -p 999999999 -d 1
expect_err "not a process id" "$ASGST" record -p abc -d 1
expect_err "not a process id" "$ASGST" record -p "$spid,-3" -d 1
expect_err "--offcpu-sample" "$ASGST" record -e offcpu --offcpu-sample 0 -a
expect_err "--offcpu-sample" "$ASGST" record -e offcpu --offcpu-sample 65536 -a
expect_err "frequency" "$ASGST" record -a -F 0 -d 1
expect_err "duration" "$ASGST" record -a -d -1
expect_err "duration" "$ASGST" record -a -d abc
expect_err "unknown format" "$ASGST" record -a -d 1 -f nosuch
expect_err "what to record" "$ASGST" record -d 1
expect_err "conflicts" "$ASGST" record -a -p "$spid" -d 1
expect_err "stack-window" "$ASGST" record -a --stack-window 100000 -d 1
expect_err "unknown event" "$ASGST" record -a -e wall -d 1
expect_err "no event" "$ASGST" record -a -e "" -d 1
expect_err "unknown state" "$ASGST" record -a --state running -d 1
expect_err "unknown view" "$ASGST" record -a --vthreads all -d 1
expect_err "unknown view" "$ASGST" report -i /nonexistent.asgst --vthreads x
if [ "$(id -u)" -eq 0 ]; then expect_err "cannot run" "$ASGST" record -d 1 -- /nonexistent/command; fi
if [ "$(id -u)" -eq 0 ]; then
	expect_err "cannot write" "$ASGST" record -a -d 1 -o /nonexistent-dir/x.json
	expect_err "cgroup" "$ASGST" record --cgroup /nonexistent-cgroup -d 1
	# not root: drop to nobody, running a copy nobody can read
	if command -v setpriv > /dev/null; then
		stage_public "$ASGST" || fail "cannot stage the binary for nobody"
		expect_err "root" setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$TMP/pub/asgst-bpf" record -a -d 1
	fi
else
	expect_err "root" "$ASGST" record -a -d 1
fi
# help and version work and exit 0
"$ASGST" --help | grep -q record || fail "--help"
"$ASGST" record --help | grep -q -- "--freq" || fail "record --help"
"$ASGST" record --help | grep -q -- "--event" || fail "record --help: -e"
"$ASGST" report --help | grep -q -- "--pinned" || fail "report --help: --pinned"
"$ASGST" --version | grep -q '^asgst-bpf [0-9]' || fail "--version"
exit 0
