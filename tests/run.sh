#!/bin/sh
# Runs every test: cmocka unit tests, fuzz targets (FUZZ_SECONDS each,
# default 60), integration tests (tests/integration/test_*.sh). Prints the
# slowest tests, the total time and a closing line
# "N passed, N failed, N skipped"; exit 1 when any failed.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
BUILD=${BUILD:-build}
export BUILD
# a login shell's debuginfod servers (Debian sets one) are not the tests':
# those that fetch start their own
unset DEBUGINFOD_URLS
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
ONLY=${ONLY:-}
pass=0; fail=0; skipn=0; failed=""
LOG="$BUILD/test-logs"
mkdir -p "$LOG"
TIMES="$LOG/times"
: > "$TIMES"
t_all=$(date +%s)
t_start=$t_all

# took NAME: the seconds since t_start go to $TIMES
took() { echo "$(( $(date +%s) - t_start )) $1" >> "$TIMES"; }

result() { # name rc [note]
	case "$2" in
	0) pass=$((pass + 1)); echo "PASS  $1 ${3:-}" ;;
	77) skipn=$((skipn + 1)) ;;
	*) fail=$((fail + 1)); failed="$failed $1"; echo "FAIL  $1 ${3:-}(rc=$2, log: $LOG/$1.log)" ;;
	esac
}

selected() { [ -z "$ONLY" ] || echo "$1" | grep -Eq "$ONLY"; }

echo "== unit tests"
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	n=$(basename "$t")
	selected "$n" || continue
	t_start=$(date +%s)
	"$t" > "$LOG/$n.log" 2>&1
	rc=$?
	took "$n"
	grep -E '^\[  (PASSED|FAILED|SKIPPED) \]|^\[  FAILED  \]' "$LOG/$n.log" | sed "s/^/  $n: /"
	result "$n" "$rc"
done

# user/'s layers: includes, calls, no circle between files, the decoder's
# own layers (scripts/check-layers.sh runs check-decoder-layers.sh)
echo "== layering"
if selected check-layers; then
	t_start=$(date +%s)
	scripts/check-layers.sh "$BUILD" > "$LOG/check-layers.log" 2>&1
	rc=$?
	took check-layers
	sed "s/^/  /" "$LOG/check-layers.log"
	result check-layers "$rc"
fi

echo "== fuzz targets (up to ${FUZZ_SECONDS}s each)"
for f in "$BUILD"/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	n=$(basename "$f")
	selected "$n" || continue
	corpus="$BUILD/fuzz-corpus/$n"
	mkdir -p "$corpus"
	seeds="tests/fuzz/seeds/$n"
	[ -d "$seeds" ] || seeds=""
	# the code-map reader and the decoder parse the untrusted inputs and get
	# the full time; the small text parsers a third of it
	secs=$FUZZ_SECONDS
	case "$n" in fuzz_codemap|fuzz_decode) ;; *) secs=$(( (FUZZ_SECONDS + 2) / 3 )) ;; esac
	t_start=$(date +%s)
	"$f" -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 \
		"$corpus" $seeds > "$LOG/$n.log" 2>&1
	rc=$?
	took "$n"
	grep -E 'stat::number_of_executed_units' "$LOG/$n.log" | sed "s/^/  $n: /"
	result "$n" "$rc"
done

echo "== integration tests"
for t in tests/integration/test_*.sh; do
	[ -f "$t" ] || continue
	n=$(basename "$t" .sh)
	selected "$n" || continue
	start=$(date +%s)
	t_start=$start
	sh "$t" > "$LOG/$n.log" 2>&1
	rc=$?
	end=$(date +%s)
	took "$n"
	if [ "$rc" -eq 77 ]; then
		echo "SKIP  $n: $(grep -m1 '^SKIP:' "$LOG/$n.log" | sed 's/^SKIP: //')"
	fi
	grep -E '^(INFO|MEASURE):' "$LOG/$n.log" | sed "s/^/  $n: /"
	[ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && tail -n 15 "$LOG/$n.log" | sed "s/^/  | /"
	result "$n" "$rc" "($((end - start))s) "
done

echo
echo "== slowest"
sort -rn "$TIMES" | head -n 10 | awk '{ printf "  %5ds  %s\n", $1, $2 }'
t_all=$(( $(date +%s) - t_all ))
echo "total: ${t_all}s ($((t_all / 60))m$((t_all % 60))s) for $(wc -l < "$TIMES") tests"
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skipn skipped"
[ "$fail" -eq 0 ]
