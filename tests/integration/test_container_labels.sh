#!/bin/sh
# Container labels and record --container, with a real container: podman
# with runc (cgroupfs manager) over the host's root, running a JVM (JDK 17,
# tests/workloads/Chain.java) and a native loop. Beside it on the host, the
# same two programs.
#  - record -a: the container's stacks carry its id as podman reports it
#    (JSON container_id, pprof label container_id), the host's do not;
#  - record --container PREFIX: only the container's processes, also one
#    started in it (podman exec) after the recording began;
#  - the same with that process moved to a cgroup of its own: the kernel
#    then samples every process and only the container's are kept.
# The pprof is read by go tool pprof -raw.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"
need_bpf
need_jdk17
need_built
command -v podman >/dev/null && command -v runc >/dev/null ||
	skip_or_fail "podman or runc missing (apt-get install podman runc)"
command -v go >/dev/null || skip_or_fail "go not found (apt-get install golang-go)"
J="$JDK17/bin/java"
NAME="asgst-test-$$"
# podman's default limits (1048576 files, 4194304 processes) are above
# what a CI runner without CAP_SYS_RESOURCE may set: ask for what the JVM
# needs, below podman's own process limit (32768)
NOFILE=4096
NPROC=4096
PODMAN="podman --runtime runc --cgroup-manager cgroupfs"
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CGT="$CG2/asgst-test-$$"
trap 'for p in $_bg_pids; do kill "$p" 2>/dev/null; done
	$PODMAN rm -f -t 0 "$NAME" >/dev/null 2>&1; wait 2>/dev/null
	[ -n "$CG2" ] && rmdir "$CGT"/*/* "$CGT"/* "$CGT" 2>/dev/null; rm -rf "$TMP"' EXIT
export HOME="$TMP" GOCACHE="$TMP/gocache" PPROF_TMPDIR="$TMP"

# the container: the workloads bind-mounted, the JVM and the loop writing
# their READY lines to $TMP (mounted as /out)
mkdir "$TMP/ctr"
# (--rootfs is a flag: "/:O", the host's root as an overlay, is the
# image's place, after every option)
timeout 120 $PODMAN run -d --name "$NAME" \
	--ulimit "nofile=$NOFILE:$NOFILE" --ulimit "nproc=$NPROC:$NPROC" \
	-v "$WL:/asgst-wl:ro" -v "$TMP/ctr:/out" --rootfs /:O sh -c "
	$J -cp /asgst-wl/classes Chain 120 > /out/chain.out 2>&1 &
	exec /asgst-wl/native_chain 120 > /out/nc.out" > "$TMP/run.out" 2>&1 ||
	{ cat "$TMP/run.out"; fail "podman could not start the container"; }
ID=$(podman inspect -f '{{.Id}}' "$NAME")
echo "$ID" | grep -Eq '^[0-9a-f]{64}$' || fail "podman inspect gave no id: $ID"
wait_file "$TMP/ctr/nc.out" 100
n=300
while ! grep -q READY "$TMP/ctr/chain.out" 2>/dev/null && [ "$n" -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
grep -q READY "$TMP/ctr/chain.out" || { cat "$TMP/ctr/chain.out"; fail "the container's JVM did not start"; }
# host pids of its processes, as podman sees them
podman top "$NAME" hpid args > "$TMP/top" || fail "podman top failed"
CNC=$(awk '/native_chain/ { print $1 }' "$TMP/top")
CJVM=$(awk '/Chain/ && !/native_chain/ { print $1 }' "$TMP/top")
[ -n "$CNC" ] && [ -n "$CJVM" ] || { cat "$TMP/top"; fail "container processes not found"; }
echo "INFO: container $ID: native_chain $CNC, JVM $CJVM"

# the host's own pair
"$WL/native_chain" 120 > "$TMP/hnc.out" &
HNC=$!; bg $HNC
start_jvm "$J" "$TMP/hjvm.out" -cp "$WL/classes" Chain 120
HJVM=$JVM_PID
wait_file "$TMP/hnc.out"

# ---- -a: labels on the container's stacks only ------------------------------
"$ASGST" record -q -a -F 199 -d 4 -o "$TMP/a.json" -o "$TMP/a.pb.gz" \
	-o "$TMP/a.asgst" 2> "$TMP/a.err" || { cat "$TMP/a.err"; fail "record -a failed"; }
go tool pprof -symbolize=none -raw "$TMP/a.pb.gz" > "$TMP/a.raw" 2> "$TMP/raw.err" ||
	{ cat "$TMP/raw.err"; fail "go tool pprof -raw could not read the profile"; }
python3 "$TOP/tests/integration/container_check.py" "$TMP/a.json" "$TMP/a.raw" \
	--id "$ID" --in "$CNC,$CJVM" --out "$HNC,$HJVM" --java "$CJVM" ||
	fail "record -a: container labels"
# the raw recording keeps them: report gives the same labels per process
"$ASGST" report -q -i "$TMP/a.asgst" -o "$TMP/r.json" 2> "$TMP/r.err" ||
	{ cat "$TMP/r.err"; fail "report of the raw recording failed"; }
python3 - "$TMP/a.json" "$TMP/r.json" "$ID" <<'PY' || fail "report: container labels"
import json, sys
def labels(path):
    out = {}
    for s in json.load(open(path))["stacks"]:
        out.setdefault(s["pid"], set()).add((s.get("container_id"), s.get("pod_uid")))
    return out
live, rep = labels(sys.argv[1]), labels(sys.argv[2])
cid = sys.argv[3]
inside = [p for p, l in live.items() if (cid, None) in l]
same = [p for p in live if p in rep and live[p] == rep[p]]
print("INFO: report: %d of %d processes with the live labels, %d in the container" %
      (len(same), len(live), len(inside)))
sys.exit(0 if inside and all(rep.get(p) == live[p] for p in inside) else 1)
PY

# ---- --container PREFIX: its processes only, a later one too ----------------
PREFIX=$(echo "$ID" | cut -c1-12)
( sleep 1.5; podman exec "$NAME" sh -c 'echo $$ > /out/late.pid;
	exec /asgst-wl/native_chain 60 > /out/late.out' ) > "$TMP/exec.out" 2>&1 &
bg $!
"$ASGST" record --container "$PREFIX" -F 199 -d 5 -o "$TMP/c.json" \
	-o "$TMP/c.pb.gz" 2> "$TMP/c.err" || { cat "$TMP/c.err"; fail "record --container failed"; }
cat "$TMP/c.err"
grep -q "container $PREFIX: .* processes" "$TMP/c.err" ||
	fail "record --container did not say what it found"
[ -s "$TMP/ctr/late.pid" ] || { cat "$TMP/exec.out"; fail "podman exec did not run"; }
# the exec'd process's host pid: podman's list of the container's
# processes now, the one whose pid inside is the one it wrote
LATE_NS=$(cat "$TMP/ctr/late.pid")
podman top "$NAME" hpid > "$TMP/top2" || fail "podman top failed"
LATE=""
for p in $(awk 'NR > 1 { print $1 }' "$TMP/top2"); do
	[ "$(awk '$1 == "NSpid:" { print $NF }' "/proc/$p/status")" = "$LATE_NS" ] &&
		LATE=$p
done
[ -n "$LATE" ] || { cat "$TMP/top2"; fail "podman top does not list the exec'd process ($LATE_NS inside)"; }
echo "INFO: exec'd in the container: pid $LATE_NS inside, $LATE on the host"
go tool pprof -symbolize=none -raw "$TMP/c.pb.gz" > "$TMP/c.raw" 2> "$TMP/raw.err" ||
	{ cat "$TMP/raw.err"; fail "go tool pprof -raw could not read the profile"; }
python3 "$TOP/tests/integration/container_check.py" "$TMP/c.json" "$TMP/c.raw" \
	--id "$ID" --in "$CNC,$CJVM,$LATE" --out "$HNC,$HJVM" --java "$CJVM" \
	--only || fail "record --container: recorded processes"

# ---- a user's cgroup named after the container: not the container --------
# A cgroup subtree delegated to nobody (its directory and files are
# nobody's, as systemd delegates), in which nobody names a cgroup
# libpod-ID.scope and runs a busy loop. record --container must leave that
# process out, say so, and keep the kernel's filter on the runtime's cgroup.
if [ -n "$CG2" ] && id nobody >/dev/null 2>&1; then
	DG="$CGT/deleg"
	mkdir -p "$DG" && chown -R nobody "$DG" || fail "cannot delegate $DG"
	stage_public "$WL/native_chain" || fail "cannot stage native_chain"
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c '
		dg=$1 id=$2 exe=$3 out=$4
		while ! grep -q "^0::.*/deleg\$" /proc/self/cgroup; do sleep 0.05; done
		mkdir "$dg/libpod-$id.scope" &&
			echo $$ > "$dg/libpod-$id.scope/cgroup.procs" || exit 1
		exec "$exe" 60 > "$out"' sh "$DG" "$ID" "$TMP/pub/native_chain" \
		"$TMP/pub/user.out" &
	UNC=$!
	bg $UNC
	chmod 777 "$TMP/pub"
	echo "$UNC" > "$DG/cgroup.procs" || fail "cannot move $UNC into $DG"
	wait_file "$TMP/pub/user.out" 100 || fail "nobody's loop did not start"
	grep -q "libpod-$ID.scope" "/proc/$UNC/cgroup" ||
		{ cat "/proc/$UNC/cgroup"; fail "nobody's loop is not in its libpod-$ID.scope"; }
	"$ASGST" record --container "$PREFIX" -F 199 -d 3 -o "$TMP/u.json" \
		-o "$TMP/u.pb.gz" 2> "$TMP/u.err" || { cat "$TMP/u.err"; fail "record --container (a user's cgroup) failed"; }
	cat "$TMP/u.err"
	grep -q "1 processes left out: .* uid 65534's" "$TMP/u.err" ||
		fail "record --container did not leave out nobody's process"
	grep -q "every process is sampled" "$TMP/u.err" &&
		fail "nobody's cgroup widened the kernel's filter to every process"
	go tool pprof -symbolize=none -raw "$TMP/u.pb.gz" > "$TMP/u.raw" 2> "$TMP/raw.err" ||
		{ cat "$TMP/raw.err"; fail "go tool pprof -raw could not read the profile"; }
	python3 "$TOP/tests/integration/container_check.py" "$TMP/u.json" "$TMP/u.raw" \
		--id "$ID" --in "$CNC,$CJVM,$LATE" --out "$UNC,$HNC,$HJVM" --java "$CJVM" \
		--only || fail "record --container beside a user's cgroup: recorded processes"
	kill "$UNC"
	wait "$UNC" 2>/dev/null
	rmdir "$DG/libpod-$ID.scope" "$DG"
fi

# ---- the container over two cgroups: every process sampled, its own kept ----
# The exec'd process moved to a cgroup v2 of its own, still named after the
# container: no cgroup but the root holds the container's processes alone,
# so the kernel samples everything and the pipeline keeps (and attaches to)
# the container's processes only.
if [ -n "$CG2" ]; then
	mkdir -p "$CGT/libpod-$ID" && echo "$LATE" > "$CGT/libpod-$ID/cgroup.procs" ||
		fail "cannot move $LATE into $CGT/libpod-$ID"
	"$ASGST" record --container "$PREFIX" -F 199 -d 3 -o "$TMP/s.json" \
		-o "$TMP/s.pb.gz" 2> "$TMP/s.err" || { cat "$TMP/s.err"; fail "record --container (split) failed"; }
	cat "$TMP/s.err"
	grep -q "every process is sampled" "$TMP/s.err" ||
		fail "record --container chose a cgroup that does not hold the container's processes"
	go tool pprof -symbolize=none -raw "$TMP/s.pb.gz" > "$TMP/s.raw" 2> "$TMP/raw.err" ||
		{ cat "$TMP/raw.err"; fail "go tool pprof -raw could not read the profile"; }
	python3 "$TOP/tests/integration/container_check.py" "$TMP/s.json" "$TMP/s.raw" \
		--id "$ID" --in "$CNC,$CJVM,$LATE" --out "$HNC,$HJVM" --java "$CJVM" \
		--only || fail "record --container, sampling every process: recorded processes"
fi

# ---- errors: one line, exit 2 -----------------------------------------------
run_bounded "$ASGST" record --container 0123456789abcdef0123 -d 1 -o "$TMP/x.json"
[ "$RC" -eq 2 ] || fail "unknown container: exit $RC, not 2"
expect_one_line_error "unknown container" "no running process is in a container"
run_bounded "$ASGST" record --container abc -d 1
[ "$RC" -eq 2 ] || fail "short prefix: exit $RC, not 2"
expect_one_line_error "short prefix" "12 to 64 hex digits"
echo "PASS"
