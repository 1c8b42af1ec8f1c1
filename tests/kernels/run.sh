#!/bin/sh
# The kernel matrix (make test-kernels): tests/kernels/checks.sh on each
# kernel named, one line a kernel with its figures:
#   6.1   Debian 12's kernel, booted under QEMU's TCG (tests/kernels/vm.sh)
#   host  the kernel this machine runs
#   run.sh [KERNEL...]      (default: 6.1 host)
# Logs in $BUILD/kernels/out-KERNEL/. Exit 1 when a check failed on any
# kernel; a kernel that cannot be had (no QEMU, no package) is a SKIP line,
# and a failure under CI=true.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1
BUILD=${BUILD:-build}
export BUILD
KERNELS=${*:-6.1 host}

# figures KERNEL OUT SECONDS STATUS: the kernel's line
figures() {
	awk -v k="$1" -v kv="$(cat "$2/kernel" 2>/dev/null || echo "?")" \
	    -v secs="$3" -v st="$4" '
	{ r[$1] = $2; f[$1] = $3 }
	function fig(c, name) {
		if (!(c in r)) return ""
		return sprintf(", %s %s%s", name, f[c], r[c] == "pass" ? "" : " FAIL")
	}
	END {
		printf "%-5s %-4s %-18s load %s%s%s%s%s%s; %ds\n", k, st, kv,
		    ("load" in r) ? r["load"] : "-",
		    fig("native", "native whole"), fig("cfi", "CFI whole"),
		    fig("java-p", "Java -p whole"), fig("java-cmd", "Java -- whole"),
		    fig("offcpu", "off-CPU events"), secs
	}' "$2/results" 2>/dev/null
}

rc=0
lines=""
for k in $KERNELS; do
	out="$BUILD/kernels/out-$k"
	mkdir -p "$out"
	rm -f "$out/results" "$out/kernel"
	t0=$(date +%s)
	case "$k" in
	host)	sh tests/kernels/checks.sh "$out" > "$out/run.log" 2>&1 ;;
	6.1)	sh tests/kernels/vm.sh "$out" > "$out/run.log" 2>&1 ;;
	*)	echo "run.sh: unknown kernel $k (6.1 or host)" >&2; exit 2 ;;
	esac
	st=$?
	secs=$(( $(date +%s) - t0 ))
	case $st in
	0)	line=$(figures "$k" "$out" "$secs" PASS) ;;
	77)	line="$k SKIP $(sed -n 's/^SKIP: //p' "$out/run.log" | head -n 1)" ;;
	*)	line=$(figures "$k" "$out" "$secs" FAIL)
		[ -n "$line" ] || line="$k FAIL (no results; see $out/run.log)"
		tail -n 20 "$out/run.log" | sed 's/^/  | /'
		rc=1 ;;
	esac
	echo "$line"
	lines="$lines$line
"
done
echo
echo "== kernel matrix (logs: $BUILD/kernels/out-*/; seconds: from start to end, a VM's boot included)"
printf '%s' "$lines"
exit $rc
