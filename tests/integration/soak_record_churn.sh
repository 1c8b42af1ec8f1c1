#!/bin/sh
# make soak: record -a for SOAK_SECONDS (default 600) under process churn
# (25 short-lived processes a second: /bin/true and a small C program that
# burns a few ms, each a new exec), in 60 s periods (--switch-output, the
# last two kept, collapsed and raw; SOAK_RECORD_OPTS: more record options,
# e.g. --no-attach where the host's JVMs must not get this build's agent).
# SOAK_SCOPE=cgroup: the churn in a
# cgroup of its own, recorded with --cgroup (the same pipeline, without
# what else a shared host runs). Prints the recorder's RSS at 1 minute
# and at the end, samples lost and crashes. Fails if RSS grew by more than
# SOAK_RSS_MAX_KIB (4096) after the first minute, if a sample was lost, if
# the recorder crashed or failed, or if the last raw period does not decode.
# RSS is counted without the BPF maps' shared pages (the ring buffer's
# fixed-size pages count once they are first read); both are printed.
# Each period's profiles are also pushed (--push) to a port nothing
# listens on, with a 256 KiB queue: it fills, the oldest are dropped,
# and the bound on growth is SOAK_RSS_MAX_KIB plus the queue's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/churn_lib.sh"
need_bpf
[ -x "$WL/churn" ] || fail "$WL/churn not built (make workloads)"
SECS=${SOAK_SECONDS:-600}
QUEUE_KIB=256
MAX_KIB=$((${SOAK_RSS_MAX_KIB:-4096} + QUEUE_KIB))
# a port nothing listens on: every push fails and is retried
DEAD=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
[ "$SECS" -ge 90 ] || fail "SOAK_SECONDS=$SECS: at least 90"

# SOAK_SCOPE=cgroup: the churn in a cgroup of its own, recorded with
# --cgroup (the same pipeline; what else the host runs left out)
WHAT="-a"
CG=""
if [ "${SOAK_SCOPE:-all}" = cgroup ]; then
	CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	CG="$CG2/asgst-soak-$$"
	mkdir "$CG" || fail "cannot create $CG"
	WHAT="--cgroup $CG"
	trap 'for p in $_bg_pids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rmdir "$CG" 2>/dev/null; rm -rf "$TMP"' EXIT
fi
# shellcheck disable=SC2086
"$ASGST" record $WHAT ${SOAK_RECORD_OPTS:-} -F 99 -d "$SECS" --switch-output=60s --switch-max-files=2 \
	--push "http://127.0.0.1:$DEAD" --push-queue "${QUEUE_KIB}k" --push-timeout 2 \
	--stats -q -o "$TMP/s.collapsed" -o "$TMP/s.asgst" 2> "$TMP/err" &
REC=$!
bg "$REC"
sleep 1
CG="$CG" WLC="$WL/churn" N=$((SECS - 6)) sh -c '[ -z "$CG" ] ||
	echo $$ > "$CG/cgroup.procs" || exit 1; exec "$WLC" 25 "$N"' > "$TMP/nchurn" &
bg $!
sleep 59
rss1=$(rss_no_bpf_kib "$REC"); all1=$(rss_kib "$REC")
echo "INFO: 60 s: RSS $all1 KiB, without the BPF maps $rss1 KiB (${WHAT%% *})"
# a line a minute while it runs
t=60
while [ $t -lt $((SECS - 60)) ]; do
	sleep 60
	t=$((t + 60))
	echo "INFO: $t s: RSS $(rss_kib "$REC") KiB, without the BPF maps $(rss_no_bpf_kib "$REC") KiB"
done
sleep $((SECS - t - 3))
rss2=$(rss_no_bpf_kib "$REC"); all2=$(rss_kib "$REC")
wait "$REC"
rc=$?
crashes=0
[ "$rc" -eq 0 ] || crashes=1
grep -qiE 'AddressSanitizer|runtime error|Segmentation|Aborted' "$TMP/err" && crashes=1
lost=$(sed -n 's/^asgst-bpf: [0-9]* samples, \([0-9]*\) lost.*/\1/p' "$TMP/err")
samples=$(sed -n 's/^asgst-bpf: \([0-9]*\) samples, .*/\1/p' "$TMP/err")
grep -E '^stats: (procs|push)' "$TMP/err" | sed 's/^/INFO: /'
[ -n "$rss1" ] && [ -n "$rss2" ] || { cat "$TMP/err"; fail "could not read the recorder's RSS"; }
growth=$((rss2 - rss1))
echo "MEASURE: soak ${SECS} s, $(cat "$TMP/nchurn" 2>/dev/null || echo '?') processes churned: RSS at 60 s $all1 KiB, at the end $all2 KiB; without the BPF maps $rss1 -> $rss2 KiB (growth $growth KiB, bound $MAX_KIB); samples ${samples:-?}, lost ${lost:-?}, crashes $crashes"
[ "$crashes" -eq 0 ] || { tail -n 20 "$TMP/err"; fail "the recorder crashed or failed (exit $rc)"; }
[ "${lost:-1}" -eq 0 ] || fail "$lost samples lost"
[ "$growth" -le "$MAX_KIB" ] || fail "RSS grew by $growth KiB after the first minute (bound $MAX_KIB)"
qmax=$(sed -n 's/.* push_queue_bytes_max=\([0-9]*\).*/\1/p' "$TMP/err")
[ -n "$qmax" ] && [ "$qmax" -le $((QUEUE_KIB * 1024)) ] ||
	fail "the push queue held $qmax bytes, over its $QUEUE_KIB KiB"
# the newest raw period decodes alone, exited processes named
last=$(ls "$TMP"/s.*.asgst | tail -n 1)
"$ASGST" report -q -i "$last" -f collapsed -o "$TMP/last.collapsed" ||
	fail "report -i $last failed"
grep -q 'churn_burn' "$TMP/last.collapsed" ||
	fail "the last raw period has no churn_burn frame: the maps of exited processes are missing"
echo "PASS: soak"
