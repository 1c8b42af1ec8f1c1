#!/bin/sh
# The kernel matrix's checks, run on the kernel at hand: in a VM booted by
# tests/kernels/vm.sh, or on the host. Each check as its host test makes
# it, with the same python checkers:
#   load     the sampler (cpu, off-CPU, fork, JVM-event programs) loaded,
#            verified and attached; a failure keeps the verifier log
#   native   record -- native_chain: whole to _start, the frame-pointer
#            chain under nc_leaf (unwind_check.py, >= 98 %)
#   cfi      record -p cfi_qsort: -O2, no frame pointers, whole by CFI
#            (unwind_check.py, >= 99 %)
#   java-p   late attach: record -p on a running JDK 17 (Chain), the chain
#            whole (decode_check.py, >= 97 %)
#   java-cmd record -- java ... Chain, the same check
#   offcpu   record -e offcpu --offcpu-sample 1 -p ctxswitch (every
#            switch: runtime_check.py offcpu's exact counts; 1 s, not
#            0.2 s, from the sampler's attach to the recording's start)
#
#   checks.sh OUTDIR [CHECK...]   (default: all of them)
# OUTDIR gets one line a check in OUTDIR/results, "CHECK pass|fail FIGURE
# SECONDS" (FIGURE: whole %, or the off-CPU events recorded), its kernel
# release in OUTDIR/kernel, each check's log as OUTDIR/CHECK.log. Exit 1
# when any failed.
. "$(dirname "$0")/../integration/lib.sh"
OUT=$1
shift
CHECKS=${*:-load native cfi java-p java-cmd offcpu}
# the tree is read over 9p in the VM: the recorder refuses network file
# systems unless trusted
TRUST="--trust-fs 9p"
CHAIN=nc_leaf,nc_chain8,nc_chain7,nc_chain6,nc_chain5,nc_chain4,nc_chain3,nc_chain2,nc_chain1
: > "$OUT/results"
uname -r > "$OUT/kernel"
# a clock source without vDSO (HPET) puts the workloads' clock reads in
# the kernel: vm.sh asks for the TSC
cat /sys/devices/system/clocksource/clocksource0/current_clocksource \
	> "$OUT/clocksource" 2>/dev/null

# the first MEASURE line's percentage in a log
pct_of() {
	sed -n 's/^MEASURE:.*[ (]\([0-9][0-9.]*\) *%.*/\1/p' "$1" | head -n 1
}

check_load() {
	# every program the sampler has: cpu samples, off-CPU, the fork hook
	# (record -- CMD) and the JVM-event uprobe program (-e alloc)
	"$ASGST" record -q $TRUST -e cpu,offcpu,alloc -F 99 -o "$TMP/load.json" \
		-- sleep 1 2> "$TMP/load.err"
	rc=$?
	cat "$TMP/load.err"
	if [ $rc -ne 0 ]; then
		# the kernel's verifier log, kept beside the results: the file
		# the error names, else libbpf's messages of a second try
		vlog=$(sed -n 's/.*its verifier log is in \(.*\)$/\1/p' "$TMP/load.err")
		if [ -n "$vlog" ] && [ -f "$vlog" ]; then
			cp "$vlog" "$OUT/verifier.log"
		else
			ASGST_DEBUG=2 "$ASGST" record -q $TRUST -e cpu,offcpu,alloc \
				-o "$TMP/load2.json" -- true > "$OUT/verifier.log" 2>&1
		fi
		fail "the sampler did not load (verifier log: $OUT/verifier.log)"
	fi
	echo "MEASURE: loaded and attached (100 %)"
}

check_native() {
	"$ASGST" record -q $TRUST -F 199 -o "$TMP/c.json" -- \
		"$WL/native_chain" 4 1 > "$TMP/c.out" || fail "record -- native_chain failed"
	cpid=$(sed -n 's/^READY //p' "$TMP/c.out")
	[ -n "$cpid" ] || fail "native_chain did not run"
	python3 "$TOP/tests/integration/profile_check.py" "$TMP/c.json" --schema || fail "schema"
	# whole: to _start (clone3 for the second thread); of the samples in
	# nc_leaf, the chain. (Not the host test's share of all samples in
	# the exact chain: under TCG the start-up, ld.so's relocations, is a
	# larger part of the run.)
	python3 "$TOP/tests/integration/unwind_check.py" "$TMP/c.json" --pid "$cpid" \
		--measure native_chain --min-whole 98 --leaf nc_leaf --chain "$CHAIN" ||
		fail "native_chain"
}

check_cfi() {
	"$WL/cfi/cfi_qsort" 8 t > "$TMP/q.out" 2>&1 &
	qpid=$!; bg $qpid
	sleep 1
	"$ASGST" record -q $TRUST -p "$qpid" -F 199 -d 4 -o "$TMP/q.json" ||
		fail "record -p cfi_qsort failed"
	python3 "$TOP/tests/integration/unwind_check.py" "$TMP/q.json" --pid "$qpid" \
		--measure "cfi_qsort (-O2)" --leaf 'nf_leaf.*' \
		--chain 'nf_leaf.*,nf_cmp,+msort_with_tmp.*,qsort_r,nf_run,main|nf_thread' ||
		fail "cfi_qsort"
}

# decode_check.py on the chain thread; "any" levels: under TCG the JIT may
# not have compiled the chain yet
java_chain() {
	python3 "$TOP/tests/integration/decode_check.py" chain "$1" \
		--javap "$JDK17/bin/javap" --classes "$WL/classes" --levels any --min 97
}

check_java_p() {
	need_jdk17
	"$JDK17/bin/java" -cp "$WL/classes" Chain 300 > "$TMP/j.out" 2>&1 &
	jpid=$!; bg $jpid
	n=1200
	until grep -q '^READY' "$TMP/j.out"; do
		kill -0 $jpid 2>/dev/null && [ $n -gt 0 ] || { cat "$TMP/j.out"; fail "JVM not ready"; }
		sleep 0.1; n=$((n - 1))
	done
	sleep 1
	"$ASGST" record $TRUST -p "$jpid" -f json -o "$TMP/jp.json" -d 8 ||
		fail "record -p JVM failed"
	java_chain "$TMP/jp.json" || fail "java chain (late attach)"
}

check_java_cmd() {
	need_jdk17
	"$ASGST" record $TRUST -f json -o "$TMP/jc.json" -- \
		"$JDK17/bin/java" -cp "$WL/classes" Chain 10 > "$TMP/jc.out" ||
		fail "record -- java failed"
	java_chain "$TMP/jc.json" || fail "java chain (record -- java)"
}

check_offcpu() {
	"$WL/ctxswitch" 3 0 "$TMP/go" 0 > "$TMP/o.out" &
	wpid=$!; bg $wpid
	wait_file "$TMP/o.out" 300 && sleep 0.2
	# a ring for all of it: under TCG the recorder decodes ~20x slower
	"$ASGST" record $TRUST -p "$wpid" -d 60 --stats -e offcpu --offcpu-sample 1 --ring-buffer 256 \
		-o "$TMP/off.json" > "$TMP/off.log" 2>&1 &
	r=$!
	# the threads start once the sched_switch link is open
	n=1200
	while ! grep -qs '^link_type:' /proc/$r/fdinfo/* && [ $n -gt 0 ]; do
		kill -0 $r 2>/dev/null || break
		sleep 0.1; n=$((n - 1))
	done
	sleep 0.3
	touch "$TMP/go"
	wait $r || { cat "$TMP/off.log"; fail "record -e offcpu failed"; }
	cat "$TMP/off.log"
	python3 "$TOP/tests/integration/runtime_check.py" offcpu "$TMP/off.json" \
		--pid "$wpid" --workload "$TMP/o.out" --summary "$TMP/off.log" --slack 1 ||
		fail "off-CPU checks"
}

rc=0
for c in $CHECKS; do
	fn=check_$(echo "$c" | tr - _)
	t0=$(date +%s)
	# a subshell a check, its own temporary folder and background
	# processes ended with it (traps are not inherited)
	(
		TMP=$(mktemp -d /tmp/asgst-kern.XXXXXX) || exit 1
		_bg_pids=""
		trap 'cleanup_all' EXIT
		$fn
	) > "$OUT/$c.log" 2>&1
	st=$?
	secs=$(( $(date +%s) - t0 ))
	case "$c" in
	offcpu) fig=$(sed -n 's/^MEASURE: offcpu: \([0-9]*\) off-CPU switch-outs recorded.*/\1/p' \
		"$OUT/$c.log" | head -n 1) ;;
	*) fig=$(pct_of "$OUT/$c.log"); fig=${fig:+$fig%} ;;
	esac
	if [ $st -eq 0 ]; then
		echo "$c pass ${fig:--} ${secs}s" >> "$OUT/results"
	else
		echo "$c fail ${fig:--} ${secs}s" >> "$OUT/results"
		rc=1
	fi
done
exit $rc
