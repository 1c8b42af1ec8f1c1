#!/bin/sh
# record --push to a Pyroscope ingest receiver (pyroscope_receiver.py:
# POST /ingest as Pyroscope documents it, basic auth and a tenant
# required), each pushed pprof read by go tool pprof:
#  - labels and equality: record -a with a JVM and a native loop in a
#    podman container and the same pair on the host; every period's
#    pushed profiles equal, frame for frame and value for value, the JSON
#    the same recording wrote for that period; the container's series are
#    named after the container, the host's JVM after its main class, the
#    host's loop after its executable; no label per pid or thread;
#  - every event (-e cpu,offcpu,alloc,lock of a JVM): each its profile
#    type, equal to the JSON;
#  - the receiver down for 30 s, then up: the profiles within the queue's
#    bound arrive (equal to their periods' JSON), the older ones are
#    dropped and counted, and queued = sent + dropped + rejected;
#  - a receiver answering in 10 s: profiles still arrive (within a 15 s
#    request limit), the sampler loses nothing, the queue stays within its
#    bound and the recorder's peak memory within that bound (and 16 MiB)
#    of a recording without --push;
#  - wrong credentials: rejected, not retried, said in one line;
#  - the receiver itself takes what Grafana's Node.js SDK pushes (a real
#    Pyroscope client), as Pyroscope would.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/attach_lib.sh"
need_bpf
need_jdk17
need_built
command -v podman >/dev/null && command -v runc >/dev/null ||
	skip_or_fail "podman or runc missing (apt-get install podman runc)"
command -v go >/dev/null || skip_or_fail "go not found (apt-get install golang-go)"
J="$JDK17/bin/java"
RECV="$TOP/tests/integration/pyroscope_receiver.py"
CHECK="$TOP/tests/integration/push_check.py"
NAME="asgst-push-$$"
PODMAN="podman --runtime runc --cgroup-manager cgroupfs"
trap 'for p in $_bg_pids; do kill "$p" 2>/dev/null; done
	$PODMAN rm -f -t 0 "$NAME" >/dev/null 2>&1; wait 2>/dev/null
	rm -rf "$TMP"' EXIT
export HOME="$TMP" GOCACHE="$TMP/gocache" PPROF_TMPDIR="$TMP"
export ASGST_PUSH_USER=asgst ASGST_PUSH_PASSWORD=s3cret ASGST_PUSH_TENANT=team-a

# receiver DIR [OPTIONS]: a receiver on a port of its own, its port in
# $PORT, its pid in $RPID
receiver() {
	_d=$1
	shift
	mkdir -p "$_d"
	python3 "$RECV" --port "${RPORT:-0}" --dir "$_d" --basic asgst:s3cret \
		--tenant team-a "$@" > "$_d.port" 2> "$_d.log" &
	RPID=$!
	bg $RPID
	_n=100
	while ! [ -s "$_d.port" ] && [ "$_n" -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
	PORT=$(head -n 1 "$_d.port")
	[ -n "$PORT" ] || { cat "$_d.log"; fail "the receiver did not start"; }
}

# stat NAME FILE: a figure of --stats' "stats: push_..." line
stat() {
	sed -n "s/.* $1=\([0-9]*\).*/\1/p; s/^stats: $1=\([0-9]*\).*/\1/p" "$2" | head -n 1
}

# ---- the container and the host's pair --------------------------------------
mkdir "$TMP/ctr"
timeout 120 $PODMAN run -d --name "$NAME" \
	--ulimit "nofile=4096:4096" --ulimit "nproc=4096:4096" \
	-v "$WL:/asgst-wl:ro" -v "$TMP/ctr:/out" --rootfs /:O sh -c "
	$J -cp /asgst-wl/classes Chain 300 > /out/chain.out 2>&1 &
	exec /asgst-wl/native_chain 300 > /out/nc.out" > "$TMP/run.out" 2>&1 ||
	{ cat "$TMP/run.out"; fail "podman could not start the container"; }
ID=$(podman inspect -f '{{.Id}}' "$NAME")
echo "$ID" | grep -Eq '^[0-9a-f]{64}$' || fail "podman inspect gave no id: $ID"
n=300
while ! grep -q READY "$TMP/ctr/chain.out" 2>/dev/null && [ "$n" -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
grep -q READY "$TMP/ctr/chain.out" || { cat "$TMP/ctr/chain.out"; fail "the container's JVM did not start"; }
"$WL/native_chain" 300 > "$TMP/hnc.out" &
HNC=$!; bg $HNC
start_jvm "$J" "$TMP/hjvm.out" -cp "$WL/classes" Chain 300
HJVM=$JVM_PID
wait_file "$TMP/hnc.out"

# ---- labels, and each period's profiles equal to its JSON -------------------
receiver "$TMP/r1"
"$ASGST" record -q -a -F 199 -d 7 --switch-output 2s -o "$TMP/a.json" \
	--push "http://127.0.0.1:$PORT" --label env=test --stats \
	2> "$TMP/a.err" || { cat "$TMP/a.err" "$TMP/r1.log"; fail "record --push failed"; }
grep "push" "$TMP/a.err"
[ "$(stat push_sent "$TMP/a.err")" = "$(ls "$TMP/r1" | grep -c '\.json$')" ] ||
	{ cat "$TMP/a.err" "$TMP/r1.log"; fail "sent is not what the receiver got"; }
python3 "$CHECK" "$TMP/r1" "$TMP"/a.*.json --label env=test --min-periods 3 \
	--expect "$NAME,process=java,container_id=$ID" \
	--expect "$NAME,process=native_chain,container_id=$ID" \
	--expect "Chain,process=java,container_id=!" \
	--expect "native_chain,process=native_chain,container_id=!" ||
	{ cat "$TMP/r1.log"; fail "pushed profiles differ from the JSON, or their labels"; }
kill $RPID

# ---- every event: cpu, offcpu, alloc, lock ----------------------------------
# a JVM that allocates and contends a monitor (tests/workloads/EventsSmoke):
# its four profile types pushed, each equal to the JSON
start_jvm "$J" "$TMP/ev.out" -cp "$WL/classes" EventsSmoke 300
EVJ=$JVM_PID
receiver "$TMP/re"
"$ASGST" record -q -p "$EVJ" -e cpu,offcpu,alloc,lock -F 199 -d 9 \
	--switch-output 3s -o "$TMP/e.json" --push "http://127.0.0.1:$PORT" \
	--stats 2> "$TMP/e.err" || { cat "$TMP/e.err"; fail "record -e cpu,offcpu,alloc,lock --push failed"; }
grep "push:" "$TMP/e.err"
python3 "$CHECK" "$TMP/re" "$TMP"/e.*.json --min-periods 2 \
	--events cpu,offcpu,alloc,lock --expect "EventsSmoke,process=java" ||
	{ cat "$TMP/re.log"; fail "the JVM's cpu, offcpu, alloc and lock profiles differ from the JSON"; }
kill $RPID
kill "$EVJ"

# ---- the receiver down for 30 s, then up ------------------------------------
# a port nothing listens on, then the receiver on it; a queue of 12 KiB
# holds a few periods of the host loop's profiles
RPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$ASGST" record -q -p "$HNC" -F 199 -d 120 --switch-output 1s \
	-o "$TMP/d.json" --push "http://127.0.0.1:$RPORT" --push-queue 12k \
	--stats 2> "$TMP/d.err" &
REC=$!
bg $REC
sleep 30
UP=$(date +%s)
receiver "$TMP/r2"
# the next try comes within the backoff's cap (10 s); then the queue and
# a few periods more arrive, and the recording is stopped as a service is
n=600
while [ "$(ls "$TMP/r2" | grep -c '\.json$')" -lt 12 ] && [ "$n" -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
kill -INT $REC
wait $REC || { cat "$TMP/d.err"; fail "record --push (receiver down) failed"; }
RPORT=
grep "push" "$TMP/d.err"
q=$(stat push_enqueued "$TMP/d.err"); s=$(stat push_sent "$TMP/d.err")
df=$(stat push_dropped_full "$TMP/d.err"); de=$(stat push_dropped_end "$TMP/d.err")
rj=$(stat push_rejected "$TMP/d.err"); qd=$(stat push_queued "$TMP/d.err")
got=$(ls "$TMP/r2" | grep -c '\.json$')
echo "INFO: down 30 s: queued $q, sent $s, dropped $df (full) + $de (end), rejected $rj, left $qd; received $got"
[ -n "$q" ] && [ "$q" -gt 30 ] || fail "fewer periods queued than recorded"
[ "$got" -ge 12 ] || fail "the receiver got $got profiles within 60 s of coming up"
[ "$q" -eq $((s + df + de + rj + qd)) ] || fail "queued $q is not sent + dropped + rejected + left"
[ "$df" -gt 0 ] || fail "nothing dropped with the queue full while the receiver was down"
[ "$s" -eq "$got" ] || fail "sent $s, the receiver got $got"
[ "$rj" -eq 0 ] || fail "profiles rejected"
# the queue kept the newest: periods from before the receiver came up
early=$(python3 -c 'import glob, json, sys
print(sum(1 for p in glob.glob(sys.argv[1] + "/*.json")
          if json.load(open(p))["from"] < int(sys.argv[2]) - 2))' "$TMP/r2" "$UP")
echo "INFO: $early profiles of periods before the receiver came up arrived"
[ "$early" -gt 0 ] || fail "no period recorded while the receiver was down arrived"
python3 "$CHECK" "$TMP/r2" "$TMP"/d.*.json --any-subset --min-periods 5 \
	--expect "native_chain,process=native_chain" ||
	fail "profiles pushed after the receiver came up differ from the JSON"
kill $RPID

# ---- a receiver answering in 10 s: nothing lost, memory bounded ------------
"$ASGST" record -q -p "$HNC,$HJVM" -F 999 -d 10 --stats -o "$TMP/b.json" \
	2> "$TMP/b.err" || { cat "$TMP/b.err"; fail "record (no push) failed"; }
receiver "$TMP/r3" --delay 10
"$ASGST" record -q -p "$HNC,$HJVM" -F 999 -d 10 --switch-output 1s \
	--push "http://127.0.0.1:$PORT" --push-queue 1m --push-timeout 15 \
	--stats -o "$TMP/s.json" 2> "$TMP/s.err" ||
	{ cat "$TMP/s.err"; fail "record --push (slow receiver) failed"; }
grep -E "push|samples" "$TMP/s.err"
lost=$(sed -n 's/^asgst-bpf: [0-9]* samples, \([0-9]*\) lost.*/\1/p' "$TMP/s.err")
[ "$lost" = 0 ] || fail "the sampler lost $lost samples with a slow receiver"
qmax=$(stat push_queue_bytes_max "$TMP/s.err")
[ -n "$qmax" ] && [ "$qmax" -le 1048576 ] || fail "the queue grew past its bound: $qmax"
# answers within the request's time limit arrive, late as they are
[ "$(stat push_sent "$TMP/s.err")" -gt 0 ] || fail "nothing sent to a receiver answering in 10 s"
rss() { sed -n 's/.*peak_rss_kib=\([0-9]*\).*/\1/p' "$1" | head -n 1; }
b=$(rss "$TMP/b.err"); p=$(rss "$TMP/s.err")
echo "INFO: peak RSS: $b KiB without --push, $p KiB with a 1 MiB queue and a 10 s receiver"
[ -n "$b" ] && [ -n "$p" ] || fail "--stats gives no peak_rss_kib"
[ "$p" -le $((b + 1024 + 16384)) ] ||
	fail "peak RSS $p KiB is more than the queue's bound and 16 MiB over $b KiB"
kill $RPID

# ---- wrong credentials: rejected, said --------------------------------------
receiver "$TMP/r4"
ASGST_PUSH_PASSWORD=wrong "$ASGST" record -q -p "$HNC" -d 3 \
	--switch-output 1s --push "http://127.0.0.1:$PORT" 2> "$TMP/w.err" ||
	{ cat "$TMP/w.err"; fail "record --push (wrong password) failed"; }
cat "$TMP/w.err"
grep -q "rejected" "$TMP/w.err" && grep -q "last failure: HTTP 401" "$TMP/w.err" ||
	fail "a 401 was not said"
grep -Eq "^asgst-bpf: push: [1-9][0-9]* profiles queued, 0 sent .* [1-9][0-9]* rejected" "$TMP/w.err" ||
	fail "profiles refused with 401 were not counted as rejected"
[ "$(ls "$TMP/r4" | grep -c '\.json$')" -eq 0 ] || fail "the receiver kept a profile without auth"
# credentials never on the command line: --push-auth FILE, refused when
# others may read it
printf 'ASGST_PUSH_PASSWORD=s3cret\n' > "$TMP/auth"
chmod 644 "$TMP/auth"
run_bounded "$ASGST" record -a -d 1 --push "http://127.0.0.1:$PORT" --push-auth "$TMP/auth"
expect_one_line_error "a readable credentials file" "$TMP/auth"
kill $RPID

# ---- the receiver against a real Pyroscope client --------------------------
# Grafana's Node.js SDK (the npm registry's @pyroscope/nodejs, kept in the
# build folder) pushes a wall profile of a busy function the way the
# language SDKs do (a raw gzipped pprof body, its own labels, basic auth,
# a tenant): the receiver these checks rely on takes it as Pyroscope would
command -v node >/dev/null && command -v npm >/dev/null ||
	skip_or_fail "node or npm missing (apt-get install nodejs npm)"
NPMD="$BUILD/npm-pyroscope"
if [ ! -d "$NPMD/node_modules/@pyroscope/nodejs" ]; then
	mkdir -p "$NPMD" && (cd "$NPMD" && timeout 300 npm install --no-audit \
		--no-fund --silent @pyroscope/nodejs@0.6.4) > "$TMP/npm.log" 2>&1 ||
		{ cat "$TMP/npm.log"; skip_or_fail "npm could not install @pyroscope/nodejs"; }
fi
receiver "$TMP/r5"
cat > "$TMP/sdk.js" <<JS
const P = require('$NPMD/node_modules/@pyroscope/nodejs');
P.init({ serverAddress: 'http://127.0.0.1:$PORT', appName: 'sdk-app',
	 basicAuthUser: 'asgst', basicAuthPassword: 's3cret',
	 tenantID: 'team-a', flushIntervalMs: 1000, tags: { env: 'test' } });
P.start();
let x = 0;
const t0 = Date.now();
function busy_sdk_loop() { while (Date.now() - t0 < 3000) x += Math.sqrt(x + 1); }
busy_sdk_loop();
setTimeout(async () => { await P.stop(); process.exit(0); }, 1500);
JS
timeout 60 node "$TMP/sdk.js" > "$TMP/sdk.out" 2>&1 || { cat "$TMP/sdk.out"; fail "the Node.js SDK failed"; }
kill $RPID
n=$(ls "$TMP/r5" | grep -c '\.json$')
[ "$n" -gt 0 ] || { cat "$TMP/r5.log"; fail "the receiver kept none of the SDK's profiles"; }
# each profile alone: the SDK sends a wall and a heap profile, which
# pprof does not merge
: > "$TMP/sdk.top"
for f in "$TMP"/r5/*.pb; do
	go tool pprof -top "$f" >> "$TMP/sdk.top" 2>&1 ||
		{ cat "$TMP/sdk.top"; fail "go tool pprof cannot read the SDK's profile $f as the receiver kept it"; }
done
grep -q busy_sdk_loop "$TMP"/sdk.top ||
	{ cat "$TMP/sdk.top"; fail "the SDK's busy function is not in its profile"; }
python3 - "$TMP/r5/000001.json" <<'PY' || fail "the receiver read the SDK's request wrong"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["app"] == "sdk-app" and m["labels"].get("env") == "test", m
assert m["spyName"] == "nodespy" and m["profile_gzipped"], m
PY
echo "INFO: the receiver took $n profiles from @pyroscope/nodejs 0.6.4, read by go tool pprof"
echo "PASS"
