#!/bin/sh
# A big JVM: tests/workloads/BigJvm.java defines 24,000 generated classes
# (168,000 methods) and keeps them loaded, then runs Chain's hot call chain.
# `record -p` attaches the agent late (stock flags), on JDK 17 and on the
# JDK 25 under /usr/lib/jvm. Checked: the code map's used bytes (write_pos)
# <= 16 MiB with every method in it and nothing dropped, the chain thread's
# stacks whole in >= 98 % of its samples, the reader's own memory for the
# map (reader_bytes of `asgst-bpf codemap`: what its allocations hold)
# <= 120 bytes a method, and the recorder's peak RSS printed beside that
# of a recording of the same JVM without the generated classes (BigJvm 0),
# taken in the same run.
#
# BIG_CLASSES=N changes the class count. MEASURE lines: map bytes,
# bytes/method, reader bytes/method, recorder RSS, whole %.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_jdk17
need_decode_tools
[ -f "$WL/classes/BigJvm.class" ] || fail "workloads not built (make workloads)"

CLASSES=${BIG_CLASSES:-24000}
LIMIT=$((16 * 1048576))
READER_MAX=120		# reader bytes a method (~86 measured)

# start_big JDK LOG N: BigJvm with N classes, its "READY" awaited (loading
# 24,000 classes takes a while on a busy machine)
start_big() {
	"$1/bin/java" -cp "$WL/classes" BigJvm "$3" 120 > "$2" 2>&1 &
	JPID=$!
	bg "$JPID"
	_n=1200
	while ! grep -q '^READY' "$2" 2>/dev/null; do
		kill -0 "$JPID" 2>/dev/null || { cat "$2"; fail "JVM exited early"; }
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || { cat "$2"; fail "JVM not ready in 120 s"; }
		sleep 0.1
	done
}

# the code map's header field at byte offset $2 (u64) of pid $1's map
map_field() {
	python3 -c 'import struct, sys
with open(sys.argv[1], "rb") as f:
    print(struct.unpack_from("<Q", f.read(64), int(sys.argv[2]))[0])' \
		"$(cm_map "$1" "$1")" "$2"
}

# record_big LABEL PID: record 15 s late-attached, with --stats
record_big() {
	"$ASGST" record -p "$2" -f json -o "$TMP/$1.json" -d 15 --stats \
		> "$TMP/$1.rec" 2>&1 || { cat "$TMP/$1.rec"; fail "$1: record failed"; }
	# another recorder on this host (record -a) may have attached its own
	# agent build first: then this test says so rather than measure it
	grep -q "$(realpath "$AGENT")" "/proc/$2/maps" ||
		fail "$1: the JVM runs another agent ($(grep -o '/[^ ]*libasgst-agent.so' "/proc/$2/maps" | head -n 1)), not $AGENT"
	sed -n 's/.*peak_rss_kib=\([0-9]*\).*/\1/p' "$TMP/$1.rec" | head -n 1
}

rc=0
jdks=$(test_jdks) || rc=1
for jdk in $jdks; do
	v=$(basename "$jdk")

	# the baseline: the same JVM without the generated classes
	start_big "$jdk" "$TMP/$v-small.out" 0
	sleep 1
	rss0=$(record_big "$v-small" "$JPID")
	kill "$JPID" 2>/dev/null
	wait "$JPID" 2>/dev/null

	start_big "$jdk" "$TMP/$v.out" "$CLASSES"
	grep '^LOADED' "$TMP/$v.out" | sed "s/^/INFO: $v: /"
	# the chain compiled and settled (READY comes at its warm-up)
	sleep 3
	rss=$(record_big "$v" "$JPID")
	sed "s/^/INFO: $v: record: /" "$TMP/$v.rec" | grep -v '^INFO: [^ ]*: record: stats' | tail -n 3
	"$ASGST" codemap "$JPID" > "$TMP/$v.map.txt" 2>&1 ||
		{ head -3 "$TMP/$v.map.txt"; fail "$v: asgst-bpf codemap rejects the map"; }
	wp=$(map_field "$JPID" 32)
	dropped=$(map_field "$JPID" 48)
	gen=$(sed -n 's/^header .* generation=\([0-9]*\).*/\1/p' "$TMP/$v.map.txt")
	nm=$(grep -c '^method ' "$TMP/$v.map.txt")
	big=$(grep -c '^method [^ ]* big\.G' "$TMP/$v.map.txt")
	mem=$(sed -n 's/^summary .* reader_bytes=\([0-9]*\).*/\1/p' "$TMP/$v.map.txt")
	echo "MEASURE: $v codemap_used_bytes=$wp methods=$nm generated_methods=$big bytes_per_method=$((wp / (nm > 0 ? nm : 1))) generation=$gen dropped=$dropped reader_bytes=${mem:-?} reader_bytes_per_method=$(( ${mem:-0} / (nm > 0 ? nm : 1) ))"
	echo "MEASURE: $v recorder_peak_rss_kib=$rss baseline_rss_kib=$rss0 extra_kib=$((rss - rss0)) classes=$CLASSES"
	[ "$wp" -le "$LIMIT" ] ||
		{ echo "FAIL: $v: the code map uses $wp bytes, over 16 MiB"; rc=1; }
	[ -n "$mem" ] && [ "$((mem / (nm > 0 ? nm : 1)))" -le "$READER_MAX" ] ||
		{ echo "FAIL: $v: the reader holds ${mem:-?} bytes for $nm methods, over $READER_MAX a method"; rc=1; }
	[ "$dropped" = 0 ] ||
		{ echo "FAIL: $v: the map dropped $dropped records"; rc=1; }
	[ "$big" -ge $((CLASSES * 7)) ] ||
		{ echo "FAIL: $v: $big generated methods in the map, not $((CLASSES * 7))"; rc=1; }
	$CHECK chain "$TMP/$v.json" --javap "$jdk/bin/javap" \
		--classes "$WL/classes" --levels compiled --min 98 \
		--jstack "$TMP/$v.out" > "$TMP/$v.check" 2>&1 || rc=1
	sed "s/^/$v: /" "$TMP/$v.check"
	kill "$JPID" 2>/dev/null
	wait "$JPID" 2>/dev/null
done
exit $rc
