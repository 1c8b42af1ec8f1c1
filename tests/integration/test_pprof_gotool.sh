#!/bin/sh
# pprof read back by `go tool pprof` (Debian's golang-go): JDK 17 running
# tests/workloads/Chain.java, recorded from its start so C1 and then C2
# compile the chain and inline different runs of it in different samples
# (chains that end at the same compiled method), written as JSON and pprof
# from the one recording. Every stack of `go tool pprof -raw` must be the
# JSON's, frame for frame (names and lines in order) with the same count,
# and the Java frames of `-traces` (what pprof users see, "(inline)"
# marked) too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_jdk17
need_decode_tools
command -v go > /dev/null || skip_or_fail "go not found (apt-get install golang-go)"
go tool pprof -h > /dev/null 2>&1 || skip_or_fail "go tool pprof does not run"

"$ASGST" record -q -F 499 -o "$TMP/c.json" -o "$TMP/c.pb.gz" -- \
	"$JDK17/bin/java" -agentpath:"$AGENT" -cp "$WL/classes" Chain 6 \
	> "$TMP/java.out" 2>&1 || { tail -n 5 "$TMP/java.out"; fail "record failed"; }
# pprof's cache and temporary files stay in this test's directory
export HOME="$TMP" GOCACHE="$TMP/gocache" PPROF_TMPDIR="$TMP"
# -symbolize=none: the profile as we encoded it (pprof would otherwise
# re-symbolize and shorten the names of mappings without has_functions)
go tool pprof -symbolize=none -raw "$TMP/c.pb.gz" > "$TMP/c.raw" 2> "$TMP/raw.err" ||
	{ cat "$TMP/raw.err"; fail "go tool pprof -raw could not read the profile"; }
go tool pprof -sample_index=samples -traces "$TMP/c.pb.gz" > "$TMP/c.traces" \
	2> "$TMP/traces.err" ||
	{ cat "$TMP/traces.err"; fail "go tool pprof -traces could not read the profile"; }
python3 "$TOP/tests/integration/pprof_gotool_check.py" "$TMP/c.json" \
	"$TMP/c.raw" "$TMP/c.traces" --thread chain --min-shared 2 ||
	fail "go tool pprof does not see the stacks of the JSON"
echo "PASS: go tool pprof reads every stack of the JSON, frame for frame"
