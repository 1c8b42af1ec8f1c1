#!/bin/sh
# Debian 12's 6.1 kernel, booted under QEMU (TCG) by tests/kernels/vm.sh:
# the sampler loads and verifies there (all four programs), record -- of a
# native chain is whole, a JVM under record -- decodes whole. The reduced
# part of `make test-kernels` (docs/kernels.md); the package is fetched
# with apt-get download into $BUILD/kernels once. Timeouts are generous,
# no bound on the time it takes.
. "$(dirname "$0")/lib.sh"
need_root
need_jdk17
[ -x "$ASGST" ] || fail "$ASGST not built (make all)"
[ -x "$WL/native_chain" ] || fail "workloads not built (make workloads)"
command -v python3 > /dev/null || skip_or_fail "python3 not found"

out="$BUILD/kernels/out-test-6.1"
VM_TIMEOUT=${VM_TIMEOUT:-900} sh "$TOP/tests/kernels/vm.sh" "$out" load native java-cmd
rc=$?
[ $rc -eq 77 ] && exit 77
for c in load native java-cmd; do
	sed -n -e "s/^MEASURE: /MEASURE: 6.1: $c: /p" \
		-e "s/^FAIL: /INFO: 6.1: $c failed: /p" "$out/$c.log" 2>/dev/null
done
[ -s "$out/elapsed" ] && echo "INFO: boot to end $(cat "$out/elapsed") s"
[ $rc -eq 0 ] || fail "checks failed on 6.1 (logs: $out/)"
exit 0
