#!/bin/sh
# make bench: the live cost of a sample, what the recorder spends, at
# 999 Hz: its own CPU a sample (getrusage: user + system, all its work,
# over the whole run and in the steady state after the warm-up), the
# decode's CPU a sample, and the in-kernel cost (the program's own time of
# the runs that took a sample; and bpf_stats' mean over all runs, a
# sample taken or not), from
# record --stats. Configurations, interleaved, ROUNDS of each (median and
# min-max spread):
#   native  the baseline: native_chain, 2 busy threads, record -p
#   jvm     tests/workloads/Chain.java (2 busy threads), warmed up, agent
#           attached before the first measured run, record -p
#   churn   record -a --no-attach (the JVMs of others on the host are left
#           alone) while churn starts 50 processes a second (each a new
#           exec: new maps and modules, a process to drop once it exits)
#   base    (BENCH_BASE=/path/to/another/asgst-bpf, or BENCH_BASE_REF=a git
#           ref of this repository, built here) the JVM run with that
#           binary, for a before/after in the same run
# The JVM's figures are printed beside their targets: recorder <= 2.5 us a
# sample, decode <= 1.5 us, in-kernel <= 1 us, start-up <= 50 ms of CPU
# before the first sample (startup_cpu_ns).
# Then every CPU busy and the whole host recorded for ALL_SECS (30): the
# samples lost, if any
# Then the JVM recorded with a raw file as well (-o x.asgst): the
# recorder's CPU a sample against the jvm runs' (target: at most 2x, whole
# run and steady) and the file's bytes a sample; the replay of that file
# (report -i, its whole CPU a sample) and bench_decode (the decoder alone
# on captured samples) beside the live decode figure.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
A="$BUILD/asgst-bpf"
WL="$BUILD/workloads"
BASE=${BENCH_BASE:-}
T=$(mktemp -d /tmp/asgst-bench-live.XXXXXX)
cleanup_base() {
	[ -d "$T/base-src" ] && git -C "$TOP" worktree remove --force "$T/base-src"
}
trap 'kill $(jobs -p) 2>/dev/null; cleanup_base; rm -rf "$T"' EXIT
ROUNDS=${ROUNDS:-3}
SECS=${LIVE_SECS:-15}
[ "${BENCH_QUICK:-}" = 1 ] && { ROUNDS=1; SECS=6; }
[ "$(id -u)" -eq 0 ] || { echo "bench_live: needs root"; exit 1; }
JAVA=${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java

stat_field() { sed -n "s/.*[ :]$2=\([0-9.]*\).*/\1/p" "$1" | head -n 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
spread() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "%s-%s", a[1], a[NR]}'; }
# the summary line: "asgst-bpf: N samples, M lost, ..."
summary() { sed -n "s/^asgst-bpf: \([0-9]*\) samples, \([0-9]*\) lost.*/\1 \2/p" "$1" | tail -n 1; }

# one run of configuration $1 ($2: the binary), its figures appended
FIELDS="recorder_cpu_ns_per_sample steady_cpu_ns_per_sample decode_cpu_ns_per_sample steady_decode_cpu_ns_per_sample bpf_ns_per_sample bpf_ns_per_run startup_cpu_ns"
one() {
	c=$1; bin=$2; shift 2
	"$bin" record -q --stats -F 999 -d "$SECS" -o "$T/$c.json" "$@" \
		2> "$T/$c.err"
	for f in $FIELDS; do
		v=$(stat_field "$T/$c.err" $f)
		# a binary from before bpf_ns_per_run named bpf_stats' mean
		# over all runs bpf_ns_per_sample: it has no per-sample figure
		case $f in
		bpf_ns_per_sample)
			grep -q bpf_ns_per_run= "$T/$c.err" || v="" ;;
		bpf_ns_per_run)
			[ -n "$v" ] || v=$(stat_field "$T/$c.err" bpf_ns_per_sample) ;;
		esac
		eval "${c}_$f=\"\${${c}_$f:-} $v\""
	done
	s=$(summary "$T/$c.err")
	eval "${c}_samples=\"\${${c}_samples:-} ${s% *}\"; ${c}_lost=\"\${${c}_lost:-} ${s#* }\""
	# what the run spent beyond its samples at the steady cost and its
	# outputs: the start-up
	o=$(stat_field "$T/$c.err" output_cpu_ns)
	v=$(awk -v a="$(stat_field "$T/$c.err" recorder_cpu_ns)" -v o="$o" \
		-v s="$(stat_field "$T/$c.err" steady_cpu_ns_per_sample)" \
		-v n="$(stat_field "$T/$c.err" records)" \
		'BEGIN { printf "%d", (a - o - s * n) / 1e6 }')
	eval "${c}_fixed=\"\${${c}_fixed:-} $v\"; ${c}_out=\"\${${c}_out:-} $((o / 1000000))\""
}

# the tree before, built from a git ref, when asked for
if [ -z "$BASE" ] && [ -n "${BENCH_BASE_REF:-}" ]; then
	git -C "$TOP" worktree add -q --detach "$T/base-src" "$BENCH_BASE_REF" &&
		make -C "$T/base-src" -j"$(nproc)" BUILD="$T/base-build" all \
			> "$T/base-build.log" 2>&1 &&
		BASE="$T/base-build/asgst-bpf" ||
		echo "  base: building $BENCH_BASE_REF failed (see $T/base-build.log)"
fi
jpid=""
if [ -x "$JAVA" ] && [ -d "$WL/classes" ]; then
	"$JAVA" -cp "$WL/classes" Chain $((ROUNDS * (SECS + 4) * 4 + 60)) \
		> "$T/jvm.out" &
	jpid=$!
	i=0
	while ! grep -q READY "$T/jvm.out" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1; i=$((i + 1))
	done
	# the agent attached and the JIT warm before anything is measured
	"$A" record -q -F 999 -p $jpid -d 4 -o "$T/warm.json" 2> /dev/null
else
	echo "  JVM: skipped (no JDK 17 at $JAVA)"
fi

CONFS="native churn"
[ -n "$jpid" ] && CONFS="native jvm churn"
[ -n "$jpid" ] && [ -n "$BASE" ] && [ -x "$BASE" ] && CONFS="$CONFS base"
echo "== live cost at 999 Hz: $CONFS, $ROUNDS rounds of ${SECS}s, interleaved"
r=0
while [ $r -lt "$ROUNDS" ]; do
	for c in $CONFS; do
		case $c in
		native)
			"$WL/native_chain" $((SECS + 3)) 2 > /dev/null &
			p=$!
			sleep 0.3
			one native "$A" -p $p
			wait $p ;;
		jvm)	one jvm "$A" -p $jpid ;;
		base)	one base "$BASE" -p $jpid ;;
		churn)
			"$WL/churn" 50 $((SECS + 3)) > /dev/null &
			p=$!
			sleep 0.3
			one churn "$A" -a --no-attach
			wait $p ;;
		esac
	done
	r=$((r + 1))
done

# a figure of configuration c: "median (min-max)"
fig() { eval "v=\"\$${1}_$2\""; echo "$(echo $v | med) ($(echo $v | spread))"; }
figm() { eval "v=\"\$${1}_$2\""; echo $v | med; }
for c in $CONFS; do
	echo "  $c: samples $(fig $c samples), lost $(fig $c lost)"
	echo "    recorder CPU ns/sample: whole run $(fig $c recorder_cpu_ns_per_sample), steady $(fig $c steady_cpu_ns_per_sample); start-up (CPU before the first sample) $(fig $c startup_cpu_ns) ns; the run beyond its samples $(fig $c fixed) ms, writing the outputs $(fig $c out) ms"
	echo "    decode CPU ns/sample: whole run $(fig $c decode_cpu_ns_per_sample), steady $(fig $c steady_decode_cpu_ns_per_sample)"
	echo "    in-kernel ns/sample: $(fig $c bpf_ns_per_sample); a run of the program, a sample taken or not (idle, another process): $(fig $c bpf_ns_per_run)"
done
# a figure of the JVM runs beside its target and the tree before's
tfig() {
	v=$(figm jvm $1); b=""
	[ -n "$BASE" ] && [ -n "$jpid" ] && b=$(figm base $1)
	printf "    %-34s %8s (target %s%s)\n" "$2" "$(awk -v v="$v" -v d="$3" \
		'BEGIN { if (v == "") print "n/a"; else printf "%.2f", v / d }')" \
		"$4" "$([ -n "$b" ] && awk -v v="$b" -v d="$3" \
		'BEGIN { printf "; the tree before: %.2f", v / d }')"
}
if [ -n "$jpid" ]; then
	echo "  jvm against the targets (medians):"
	tfig steady_cpu_ns_per_sample "recorder CPU a sample, us" 1000 "<= 2.5"
	tfig steady_decode_cpu_ns_per_sample "decode CPU a sample, us" 1000 "<= 1.5"
	tfig bpf_ns_per_sample "in-kernel a sample, us" 1000 "<= 1.0"
	tfig bpf_ns_per_run "in-kernel a run (any), us" 1000 "-"
	tfig startup_cpu_ns "start-up CPU, ms" 1000000 "<= 50"
fi
for c in $CONFS; do
	[ $c = native ] && continue
	printf "  %s / native (baseline 1.00):" $c
	for f in recorder_cpu_ns_per_sample steady_cpu_ns_per_sample steady_decode_cpu_ns_per_sample bpf_ns_per_sample bpf_ns_per_run; do
		printf " %s %s" "${f%_ns_per_sample}" \
			"$(ratio "$(figm $c $f)" "$(figm native $f)")"
	done
	echo
done
if [ -n "$BASE" ] && [ -n "$jpid" ] && [ -x "$BASE" ]; then
	printf "  jvm / base (%s, baseline 1.00):" "$BASE"
	for f in recorder_cpu_ns_per_sample steady_cpu_ns_per_sample steady_decode_cpu_ns_per_sample bpf_ns_per_sample bpf_ns_per_run; do
		printf " %s %s" "${f%_ns_per_sample}" \
			"$(ratio "$(figm jvm $f)" "$(figm base $f)")"
	done
	echo
fi

# every CPU busy, the whole host recorded: does anything get lost
ALLS=${ALL_SECS:-30}
[ "${BENCH_QUICK:-}" = 1 ] && ALLS=6
ncpu=$(nproc)
echo "== every CPU busy ($ncpu busy threads besides the JVM), record -a --no-attach at 999 Hz for ${ALLS}s"
"$WL/native_chain" $((ALLS + 3)) "$ncpu" > /dev/null &
p=$!
sleep 0.3
"$A" record -q --stats -a --no-attach -F 999 -d "$ALLS" -o "$T/all.json" \
	2> "$T/all.err"
wait $p
s=$(summary "$T/all.err")
echo "  samples ${s% *}, lost ${s#* } ($(awk -v a="${s#* }" -v n="${s% *}" 'BEGIN { if (n > 0) printf "%.3f", 100 * a / (a + n); else print "n/a" }') %), copied out of the ring $(stat_field "$T/all.err" ring_copied); recorder CPU steady $(stat_field "$T/all.err" steady_cpu_ns_per_sample) ns/sample, decode $(stat_field "$T/all.err" steady_decode_cpu_ns_per_sample), in-kernel $(stat_field "$T/all.err" bpf_ns_per_sample)"

[ -n "$jpid" ] || exit 0
echo "== replay against live: the JVM recorded raw (${SECS}s), decoded again by report"
"$A" record -q --stats -F 999 -p $jpid -d "$SECS" -o "$T/r.asgst" \
	-o "$T/live.json" 2> "$T/r.err"
n=$(summary "$T/r.err"); n=${n% *}
# the report's own CPU, user + system, from getrusage of its parent
rep=$(python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(int((r.ru_utime + r.ru_stime) * 1e9))' "$A" report -i "$T/r.asgst" \
	-o "$T/replay.json")
live=$(stat_field "$T/r.err" steady_decode_cpu_ns_per_sample)
lrec=$(stat_field "$T/r.err" recorder_cpu_ns_per_sample)
lsteady=$(stat_field "$T/r.err" steady_cpu_ns_per_sample)
echo "  live (with the raw file written): recorder ${lrec} ns/sample (steady ${lsteady}), decode ${live} ns/sample (steady) over $n samples; the file $(awk -v b="$(stat -c %s "$T/r.asgst")" -v n="$n" 'BEGIN { if (n > 0) printf "%d", b / n; else print "n/a" }') bytes/sample"
# what the raw file adds: this run against the jvm runs' medians (no raw
# file), the recorder's whole CPU
echo "  raw file cost: recorder CPU with the raw file / without (the jvm runs): whole run $(ratio "$lrec" "$(figm jvm recorder_cpu_ns_per_sample)"), steady $(ratio "$lsteady" "$(figm jvm steady_cpu_ns_per_sample)") (target <= 2.00); steady decode $(ratio "$live" "$(figm jvm steady_decode_cpu_ns_per_sample)")"
echo "  replay: report -i, whole process $(awk -v a="$rep" -v n="$n" 'BEGIN { if (n > 0) printf "%d", a / n; else print "n/a" }') ns/sample (ratio to the live recorder $(ratio "$(awk -v a="$rep" -v n="$n" 'BEGIN { if (n > 0) print a / n }')" "$lrec"))"
if [ -x "$BUILD/bench/bench_decode" ]; then
	d=$(cd "$TOP" && "$BUILD/bench/bench_decode" tests/data/decode 50000 |
		sed -n 's/.*median \([0-9]*\) ns.*/\1/p')
	# the JVM runs' decode (no raw file written), median
	jl=$(figm jvm steady_decode_cpu_ns_per_sample)
	r=$(ratio "$jl" "$d")
	echo "  replay: bench_decode (decoder alone, captured samples) median ${d} ns/sample; the jvm runs' steady decode (median ${jl} ns) / bench_decode $r"
	if awk -v r="$r" 'BEGIN { exit !(r + 0 > 2) }'; then
		echo "  (more than 2x: bench_decode decodes the same few captured samples over and over, its code maps, symbols and records in the cache; live, each sample is decoded a delay after it came, in batches 0.2-0.3 s apart, its record, the code map's entries and the profile's stacks brought back from memory after the host's other work, and the live figure also holds the batches' work: code maps caught up, processes checked; see docs/sampler.md)"
	fi
fi
kill $jpid 2>/dev/null
wait $jpid 2>/dev/null
exit 0
