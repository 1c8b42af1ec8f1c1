#!/bin/sh
# Two podman containers that share one /dev/shm (IPC namespace: the second
# joins the first's, as a pod's containers do), each with a JVM as pid 1
# (JDK 17, tests/workloads/Chain.java). Their code maps must not meet:
# each JVM's map is named by its pid namespace, both are there side by
# side, and record -a decodes both JVMs' Java frames, each from its own
# map (the chain thread's Chain frames in nearly every sample of both).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"
need_bpf
need_jdk17
need_built
command -v podman >/dev/null && command -v runc >/dev/null ||
	skip_or_fail "podman or runc missing (apt-get install podman runc)"
J="$JDK17/bin/java"
A="asgst-shm-a-$$"
B="asgst-shm-b-$$"
PODMAN="podman --runtime runc --cgroup-manager cgroupfs"
trap 'for p in $_bg_pids; do kill "$p" 2>/dev/null; done
	$PODMAN rm -f -t 0 "$A" "$B" >/dev/null 2>&1; wait 2>/dev/null
	rm -rf "$TMP"' EXIT

mkdir "$TMP/a" "$TMP/b"
run_ctr() { # NAME OUTDIR IPC
	timeout 120 $PODMAN run -d --name "$1" --ipc "$3" \
		--ulimit nofile=4096:4096 --ulimit nproc=4096:4096 \
		-v "$WL:/asgst-wl:ro" -v "$2:/out" --rootfs /:O \
		sh -c "exec $J -cp /asgst-wl/classes Chain 120 > /out/chain.out 2>&1" \
		> "$TMP/run.out" 2>&1 ||
		{ cat "$TMP/run.out"; fail "podman could not start $1"; }
}
run_ctr "$A" "$TMP/a" shareable
run_ctr "$B" "$TMP/b" "container:$A"
for d in a b; do
	n=300
	while ! grep -q READY "$TMP/$d/chain.out" 2>/dev/null && [ "$n" -gt 0 ]; do
		sleep 0.1; n=$((n - 1))
	done
	grep -q READY "$TMP/$d/chain.out" || { cat "$TMP/$d/chain.out"; fail "JVM in $d did not start"; }
done
PA=$(podman inspect -f '{{.State.Pid}}' "$A")
PB=$(podman inspect -f '{{.State.Pid}}' "$B")
for p in "$PA" "$PB"; do
	[ "$(awk '$1 == "NSpid:" { print $NF }' "/proc/$p/status")" = 1 ] ||
		fail "JVM $p is not pid 1 in its container"
done
[ "$(stat -L -c %i "/proc/$PA/ns/ipc")" = "$(stat -L -c %i "/proc/$PB/ns/ipc")" ] ||
	fail "the containers do not share their IPC namespace"
echo "INFO: JVMs $PA ($A) and $PB ($B), both pid 1, one /dev/shm"

for p in "$PA" "$PB"; do
	run_bounded "$ASGST" attach "$p"
	[ "$RC" -eq 0 ] || { cat "$TMP/out"; fail "attach to $p failed"; }
	echo "INFO: $(cat "$TMP/out")"
done
MA=$(cm_map "$PA" 1)
MB=$(cm_map "$PB" 1)
[ "$MA" != "$MB" ] || fail "both JVMs' maps have one name: $MA"
wait_file "$MA" 100 || fail "no map $MA"
wait_file "$MB" 100 || fail "no map $MB"
# one /dev/shm: both maps seen from either container
[ -e "/proc/$PA/root/dev/shm/$(basename "$MB")" ] ||
	fail "the second JVM's map is not in the shared /dev/shm"
ls "/proc/$PA/root/dev/shm/" | grep '^asgst-1' | sed 's/^/INFO: shared \/dev\/shm: /'
sleep 1
"$ASGST" record -a -F 199 -d 5 -o "$TMP/all.json" 2> "$TMP/rec.err" ||
	{ cat "$TMP/rec.err"; fail "record -a failed"; }
grep -v "^stats" "$TMP/rec.err" | sed 's/^/INFO: record: /'
python3 - "$TMP/all.json" "$PA" "$PB" <<'EOF' || fail "the two JVMs' Java frames"
import json, sys
doc = json.load(open(sys.argv[1]))
ok = True
for pid in map(int, sys.argv[2:]):
    st = [s for s in doc["stacks"] if s["pid"] == pid and
          s.get("thread") == "chain" and s.get("event", "cpu") == "cpu"]
    n = sum(s["count"] for s in st)
    java = sum(s["count"] for s in st
               if any(f.get("type") in ("java", "java_inlined") and
                      f.get("class", "").startswith("Chain")
                      for f in s["frames"]))
    print("MEASURE: JVM %d: thread chain: %d samples, %d (%.1f %%) with "
          "Chain's Java frames" % (pid, n, java, 100.0 * java / max(n, 1)))
    ok = ok and n >= 20 and java >= 0.95 * n
sys.exit(0 if ok else 1)
EOF
echo "PASS"
