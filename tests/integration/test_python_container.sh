#!/bin/sh
# CPython in a podman container, recorded with record -a from the host:
# pychain.py run by the host's /usr/bin/python3.11 in a container of the
# host's root (--rootfs /:O), the script bind-mounted at /py. Its busy
# thread's Python chain whole, names and lines right (the file as the
# container names it) in >= 99 % of the samples, its leaf functions
# within a TVD of 0.05 of its own view, its stacks labelled with the
# container's id.
. "$(dirname "$0")/lib.sh"
need_bpf
[ -x "$ASGST" ] || fail "$ASGST not built"
command -v podman >/dev/null && command -v runc >/dev/null ||
	skip_or_fail "podman or runc missing (apt-get install podman runc)"
[ -x /usr/bin/python3.11 ] || skip_or_fail "/usr/bin/python3.11 not found (make deps)"
NAME="asgst-pytest-$$"
PODMAN="podman --runtime runc --cgroup-manager cgroupfs"
trap 'for p in $_bg_pids; do kill "$p" 2>/dev/null; done
	$PODMAN rm -f -t 0 "$NAME" >/dev/null 2>&1; wait 2>/dev/null
	rm -rf "$TMP"' EXIT
export HOME="$TMP"
mkdir "$TMP/ctr"
# (--rootfs is a flag: "/:O", the host's root as an overlay, is the
# image's place, after every option; limits a CI runner may set)
timeout 120 $PODMAN run -d --name "$NAME" \
	--ulimit nofile=4096:4096 --ulimit nproc=4096:4096 \
	-v "$TOP/tests/workloads/python:/py:ro" -v "$TMP/ctr:/out" --rootfs /:O \
	/usr/bin/python3.11 /py/pychain.py 12 /out/self.json \
	> "$TMP/run.out" 2>&1 ||
	{ cat "$TMP/run.out"; fail "podman could not start the container"; }
ID=$(podman inspect -f '{{.Id}}' "$NAME")
echo "$ID" | grep -Eq '^[0-9a-f]{64}$' || fail "podman inspect gave no id: $ID"
n=150
while ! podman logs "$NAME" 2>/dev/null | grep -q '^ready' && [ $n -gt 0 ]; do
	sleep 0.1; n=$((n - 1))
done
podman top "$NAME" hpid args > "$TMP/top" || fail "podman top failed"
P=$(awk '/pychain/ { print $1 }' "$TMP/top" | head -n 1)
[ -n "$P" ] || { cat "$TMP/top"; podman logs "$NAME"; fail "the container's python not found"; }
echo "INFO: container ${ID%"${ID#????????????}"}: python is host pid $P, $(podman logs "$NAME" | head -n 1) inside"
sleep 0.5
"$ASGST" record -q -a -F 199 -d 6 -o "$TMP/a.json" || fail "record -a failed"
n=200
while [ ! -s "$TMP/ctr/self.json" ] && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
[ -s "$TMP/ctr/self.json" ] || fail "no view of its own from the container"
rc=0
python3 "$TOP/tests/integration/python_check.py" "$TMP/a.json" chain --pid "$P" \
	--script "$TOP/tests/workloads/python/pychain.py" --frame-file /py/pychain.py \
	--self "$TMP/ctr/self.json" --label "container, record -a" \
	--min 0.99 --min-samples 150 || rc=1
python3 - "$TMP/a.json" "$P" "$ID" <<'PY' || rc=1
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
ids = {s.get("container_id") for s in d["stacks"] if s["pid"] == pid}
if ids != {sys.argv[3]}:
    print("FAIL: container ids of its stacks: %s" % ids)
    sys.exit(1)
print("INFO: its stacks carry the container's id")
PY
exit $rc
