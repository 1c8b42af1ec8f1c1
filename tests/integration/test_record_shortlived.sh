#!/bin/sh
# Processes that live a few milliseconds: a command starting 25 children a
# second, each a new exec that ends within ~8 ms (half burn the CPU in
# churn_burn, half are /bin/true, which spend their life in the dynamic
# loader). They are gone before /proc/PID/maps could be read; their maps
# come from the kernel's side-band records (mmap2, exec, fork, exit), as
# perf's do. Checks: the children's stacks whole (to the program's or the
# dynamic loader's _start) in >= 97 % of samples, churn_burn's chain exact
# in >= 97 %, every other stack with an error and its reason; the maps of
# the gone processes kept in the raw recording (report names them too);
# the same under a parent that was running before the recording began
# (recorded by --cgroup: its maps come from /proc at its first fork);
# beside perf --call-graph dwarf on the same command, where perf works.
. "$(dirname "$0")/lib.sh"
need_bpf
CHECK="python3 $TOP/tests/integration/unwind_check.py"
[ -x "$WL/churn" ] || fail "$WL/churn not built (make workloads)"
CHAIN='churn_burn,main,__libc_start_call_main,__libc_start_main.*,_start'

"$ASGST" record -q -F 999 --stats -o "$TMP/s.json" -o "$TMP/s.asgst" \
	-- "$WL/churn" 25 6 8 > "$TMP/n" 2> "$TMP/err" ||
	{ cat "$TMP/err"; fail "record -- churn"; }
n=$(cat "$TMP/n")
sb=$(grep '^stats: sideband=' "$TMP/err")
echo "INFO: $n children; $sb"
[ "${n:-0}" -ge 100 ] || fail "churn started ${n:-no} children"
case "$sb" in
*sideband=on*) ;;
*) fail "no side-band records: $(grep -i side-band "$TMP/err")" ;;
esac
from=$(echo "$sb" | sed -n 's/.*maps_from_sideband=\([0-9]*\).*/\1/p')
# most children are gone before their first sample is decoded
[ "${from:-0}" -ge $((n / 4)) ] ||
	fail "maps of only ${from:-0} of $n children came from the side-band"

check() {	# file measure
	$CHECK "$1" --comm 'exe|true' --min-samples 150 --min-whole 97 \
		--unreadable-max 10 --measure "$2" --leaf churn_burn \
		--chain "$CHAIN" --errors-explained > "$TMP/check.txt"
	rc=$?
	cat "$TMP/check.txt"
	[ $rc -eq 0 ] || fail "$2"
}
check "$TMP/s.json" "short-lived children"
# the same from the raw file: the gone processes' maps went into it
"$ASGST" report -q -i "$TMP/s.asgst" -f json -o "$TMP/r.json" ||
	fail "report -i s.asgst"
check "$TMP/r.json" "short-lived children, from the raw file"

# a parent older than the recording, its cgroup recorded
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG2" ] || skip_or_fail "no cgroup v2 mounted"
CG="$CG2/asgst-shortlived-$$"
mkdir "$CG" || fail "cannot create $CG"
trap 'for p in $_bg_pids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rmdir "$CG" 2>/dev/null; rm -rf "$TMP"' EXIT
CG="$CG" WLC="$WL/churn" sh -c 'echo $$ > "$CG/cgroup.procs" || exit 1
	exec "$WLC" 40 12 8' > /dev/null &
bg $!
sleep 2
"$ASGST" record -q -F 999 -d 6 --cgroup "$CG" -o "$TMP/cg.json" ||
	fail "record --cgroup"
$CHECK "$TMP/cg.json" --comm 'exe|true|churn' --min-samples 150 \
	--min-whole 97 --unreadable-max 10 --measure "children of an older parent" \
	--leaf churn_burn --chain "$CHAIN" --errors-explained ||
	fail "children of a parent older than the recording"

# perf --call-graph dwarf on the same command, where perf works here
if command -v perf > /dev/null 2>&1 &&
   perf record -q -o "$TMP/probe.data" -e cpu-clock -- true > /dev/null 2>&1; then
	perf record -q -e cpu-clock -F 999 --call-graph dwarf \
		-o "$TMP/perf.data" -- "$WL/churn" 25 6 8 > /dev/null 2>&1
	perf script -i "$TMP/perf.data" > "$TMP/perf.txt" 2>/dev/null
	# a sample: a header line (command first), its frames indented, a
	# blank line; a churn_burn sample is whole when its last user frame
	# is _start
	pw=$(awk 'BEGIN { n = 0; w = 0 }
		function done() { if (burn) { n++; if (last ~ /^_start\+/) w++ }
				  last = ""; burn = 0 }
		/^[^ \t]/ { done(); comm = $1; next }
		/^[ \t]*$/ { done(); next }
		/^[ \t]/ { if ($3 !~ /kernel/) last = $2
			   if (comm == "exe" && $2 ~ /^churn_burn\+/) burn = 1
			   next }
		END { done(); printf "%.2f %d", n ? 100 * w / n : 0, n }' \
		"$TMP/perf.txt")
	echo "MEASURE: perf --call-graph dwarf: churn_burn to _start in ${pw% *} % of ${pw#* } samples"
	ours=$(sed -n 's/.*exact chain in \([0-9.]*\) %.*/\1/p' "$TMP/check.txt")
	[ "${pw#* }" -ge 50 ] || fail "perf recorded ${pw#* } churn_burn samples"
	awk -v o="$ours" -v p="${pw% *}" 'BEGIN { exit !(o + 1 >= p) }' ||
		fail "asgst-bpf $ours %, perf ${pw% *} %"
else
	echo "INFO: perf record does not work here: no comparison with perf"
fi
echo "PASS: short-lived processes"
