#!/bin/sh
# The agent's JVM events on request (codemap_format.h, "Event requests"),
# on JDK 17 and 25 (test_jdks), agent loaded at start and late-attached:
# a helper takes the recorder's OFD read locks on the code map (allocations
# at CM_CTL_ALLOC + 524288, locks at CM_CTL_LOCK); within 2 s the header
# says CM_F_ALLOC_ON and CM_F_LOCK_ON and the probe asgst_probe_event is
# called for both kinds (counted with a perf uprobe); the helper killed,
# both go off within 2 s and the probe is quiet; asked again they come
# back, and the interval follows the request that remains. Then, with a map that
# compacts (CodeChurn, compactmin=64k), a helper that follows each new
# generation as a recorder does keeps the request through the renames.
# On JDK 25, allocations in virtual threads are sampled too.
. "$(dirname "$0")/lib.sh"
need_root
need_jdk17
[ -f "$AGENT" ] || fail "agent not built: $AGENT (run make)"
[ -x "$ASGST" ] || fail "$ASGST not built (make all)"
for _c in EventsSmoke CodeChurn; do
	[ -f "$WL/classes/$_c.class" ] || fail "workload $_c not built (make workloads)"
done
command -v python3 >/dev/null || skip_or_fail "python3 missing"
command -v perf >/dev/null || skip_or_fail "perf missing (linux-perf)"

# the helper: a recorder's requests. ctl.py MAP REQ... (alloc=N, lock)
# takes the locks on an O_RDONLY open of MAP, prints LOCKED and holds them;
# with --follow it moves to the file at MAP 0.5 s after a compaction renames
# a new generation over it, as the recorder does once it has read the old
# one to its end. F_OFD_SETLK is 37 (<fcntl.h>;
# Python's fcntl module does not name it).
cat > "$TMP/ctl.py" <<'EOF'
import fcntl, os, struct, sys, time
F_OFD_SETLK = 37
CTL_ALLOC = 1 << 40
CTL_LOCK = (1 << 40) + (1 << 33)
path, follow = sys.argv[1], "--follow" in sys.argv
reqs = [a for a in sys.argv[2:] if a != "--follow"]
# a recorder reads the old generation to its end before it moves: the
# agent must find the request there meanwhile
LAG = 0.5

def take(p):
    fd = os.open(p, os.O_RDONLY)
    for r in reqs:
        at = CTL_LOCK if r == "lock" else CTL_ALLOC + int(r.split("=")[1])
        fl = struct.pack("hhxxxxqqixxxx", fcntl.F_RDLCK, os.SEEK_SET, at, 1, 0)
        fcntl.fcntl(fd, F_OFD_SETLK, fl)
    return fd

fd = take(path)
print("LOCKED", flush=True)
moves = 0
seen = None
while True:
    time.sleep(0.05)
    if not follow:
        continue
    try:
        st = os.stat(path)
    except FileNotFoundError:
        continue
    if st.st_ino == os.fstat(fd).st_ino:
        seen = None
        continue
    if seen is None:
        seen = time.monotonic()
    if time.monotonic() - seen >= LAG:
        # the new generation first, then the old one goes
        seen = None
        nfd = take(path)
        os.close(fd)
        fd = nfd
        moves += 1
        print("MOVED", moves, flush=True)
EOF

# flags MAP: the header's flags word (offset 20), in decimal
flags() {
	python3 -c 'import struct,sys
try:
    d = open(sys.argv[1], "rb").read(24)
    print(struct.unpack_from("<I", d, 20)[0])
except Exception:
    print(0)' "$1"
}
F_EVENTS=32; F_ALLOC_ON=64; F_LOCK_ON=128

# wait_flags MAP MASK WANT TENTHS: until flags & MASK == WANT; the tenths
# it took on stdout, 1 when it never came
wait_flags() {
	_t=0
	while [ $_t -le "$4" ]; do
		[ $(( $(flags "$1") & $2 )) -eq "$3" ] && { echo $_t; return 0; }
		sleep 0.1; _t=$((_t + 1))
	done
	return 1
}

# a uprobe on the probe, its first argument (kind) kept for filters;
# a group of this test's own, removed at exit
GRP="asgstev$$"
perf probe -q -x "$AGENT" --add "$GRP:hit$$=asgst_probe_event kind=%di:u32" \
	> "$TMP/probe.out" 2>&1 || { cat "$TMP/probe.out"; skip_or_fail "perf probe cannot put a uprobe on $AGENT"; }
trap 'perf probe -q -d "$GRP:*" >/dev/null 2>&1; cleanup_all' EXIT

# hits PID SECS: "ALLOC LOCK", the probe's calls in PID for SECS seconds
hits() {
	perf stat -x, -o "$TMP/stat.csv" -e "$GRP:hit$$" --filter 'kind==1' \
		-e "$GRP:hit$$" --filter 'kind==2' -p "$1" sleep "$2" \
		> /dev/null 2>&1
	awk -F, '/^[0-9]/ { printf "%s ", $1 } /^<not counted>/ { printf "0 " }' \
		"$TMP/stat.csv"
}

# events_check JAVA_HOME LABEL start|attach
events_check() {
	_jh=$1; _lb=$2; _how=$3; _out="$TMP/$_lb.out"
	_opts=loglevel=info
	if [ "$_how" = start ]; then
		"$_jh/bin/java" -agentpath:"$AGENT"=$_opts -cp "$WL/classes" \
			EventsSmoke 60 > "$_out" 2>&1 &
	else
		"$_jh/bin/java" -cp "$WL/classes" EventsSmoke 60 > "$_out" 2>&1 &
	fi
	_pid=$!; bg $_pid
	_n=300
	while ! grep -qs READY "$_out" && [ $_n -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
	grep -q READY "$_out" || { cat "$_out"; fail "$_lb: workload not READY"; }
	if [ "$_how" = attach ]; then
		"$ASGST" attach -q $_pid $_opts > "$TMP/$_lb.att" 2>&1 ||
			{ cat "$TMP/$_lb.att"; fail "$_lb: attach failed"; }
	fi
	_map=$(cm_map $_pid)
	wait_file "$_map" 100 || { cat "$_out"; fail "$_lb: no code map at $_map"; }
	wait_flags "$_map" $F_EVENTS $F_EVENTS 50 > /dev/null ||
		{ cat "$_out"; fail "$_lb: the agent does not say CM_F_EVENTS"; }
	[ $(( $(flags "$_map") & (F_ALLOC_ON | F_LOCK_ON) )) -eq 0 ] ||
		fail "$_lb: events on before any request"
	set -- $(hits $_pid 1)
	[ "${1:-x}" = 0 ] && [ "${2:-x}" = 0 ] ||
		fail "$_lb: probe called without a request (alloc ${1:-?}, lock ${2:-?})"

	python3 "$TMP/ctl.py" "$_map" alloc=524288 lock > "$TMP/$_lb.ctl" 2>&1 &
	_h=$!; bg $_h
	_on=$(wait_flags "$_map" $((F_ALLOC_ON | F_LOCK_ON)) $((F_ALLOC_ON | F_LOCK_ON)) 20) ||
		{ cat "$_out" "$TMP/$_lb.ctl"; fail "$_lb: CM_F_ALLOC_ON|CM_F_LOCK_ON not set within 2 s"; }
	set -- $(hits $_pid 2)
	_a=${1:-0}; _l=${2:-0}
	[ "$_a" -gt 0 ] || fail "$_lb: no allocation probe hits while asked"
	[ "$_l" -gt 0 ] || fail "$_lb: no lock probe hits while asked"
	grep -q 'allocation events on: one sample every 524288 bytes' "$_out" ||
		{ cat "$_out"; fail "$_lb: no info line for allocations on"; }

	kill -9 $_h; wait $_h 2>/dev/null
	_off=$(wait_flags "$_map" $((F_ALLOC_ON | F_LOCK_ON)) 0 20) ||
		{ cat "$_out"; fail "$_lb: events still on 2 s after the request went"; }
	# the last poll may still be in flight: the events are off from here
	sleep 0.3
	set -- $(hits $_pid 1)
	[ "${1:-x}" = 0 ] && [ "${2:-x}" = 0 ] ||
		fail "$_lb: probe still called after the request went (alloc ${1:-?}, lock ${2:-?})"
	grep -q 'allocation events off' "$_out" && grep -q 'lock events off' "$_out" ||
		{ cat "$_out"; fail "$_lb: no info lines for events off"; }
	# asked again (the capability was given back), then at another
	# interval: a second recorder's stays when the first one goes
	python3 "$TMP/ctl.py" "$_map" alloc=1048576 > "$TMP/$_lb.ctl2" 2>&1 &
	_h=$!; bg $_h
	wait_flags "$_map" $F_ALLOC_ON $F_ALLOC_ON 20 > /dev/null ||
		{ cat "$_out"; fail "$_lb: allocation events not on again when asked again"; }
	python3 "$TMP/ctl.py" "$_map" alloc=262144 > "$TMP/$_lb.ctl3" 2>&1 &
	_h3=$!; bg $_h3
	_n=20
	while ! grep -qs LOCKED "$TMP/$_lb.ctl3" && [ $_n -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
	sleep 0.3
	kill -9 $_h; wait $_h 2>/dev/null
	_n=20
	while ! grep -q 'one sample every 262144 bytes now' "$_out" && [ $_n -gt 0 ]; do
		sleep 0.1; _n=$((_n - 1))
	done
	grep -q 'one sample every 262144 bytes now' "$_out" ||
		{ cat "$_out"; fail "$_lb: the interval did not follow the remaining request"; }
	[ $(( $(flags "$_map") & F_ALLOC_ON )) -ne 0 ] ||
		fail "$_lb: allocation events off while a request remains"
	kill -9 $_h3; wait $_h3 2>/dev/null
	wait_flags "$_map" $F_ALLOC_ON 0 20 > /dev/null ||
		fail "$_lb: allocation events still on 2 s after the last request went"
	kill $_pid; wait $_pid 2>/dev/null
	grep -Eq '^asgst-agent.* (warn|error):' "$_out" && { cat "$_out"; fail "$_lb: agent warned"; }
	echo "INFO: $_lb: on within $((_on * 100 + 100)) ms, 2 s: $_a allocation and $_l lock probe hits, off within $((_off * 100 + 100)) ms"
}

# compact_check JAVA_HOME LABEL: the request survives generations
compact_check() {
	_jh=$1; _lb=$2; _out="$TMP/$_lb.out"
	"$_jh/bin/java" -agentpath:"$AGENT"=loglevel=info,compactmin=64k \
		-cp "$WL/classes" CodeChurn 60 > "$_out" 2>&1 &
	_pid=$!; bg $_pid
	_n=300
	while ! grep -qs READY "$_out" && [ $_n -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
	grep -q READY "$_out" || { cat "$_out"; fail "$_lb: CodeChurn not READY"; }
	_map=$(cm_map $_pid)
	wait_flags "$_map" $F_EVENTS $F_EVENTS 50 > /dev/null ||
		fail "$_lb: the agent does not say CM_F_EVENTS"
	python3 "$TMP/ctl.py" "$_map" alloc=4096 --follow > "$TMP/$_lb.ctl" 2>&1 &
	_h=$!; bg $_h
	wait_flags "$_map" $F_ALLOC_ON $F_ALLOC_ON 20 > /dev/null ||
		fail "$_lb: CM_F_ALLOC_ON not set within 2 s"
	_g0=$(grep -c 'code map generation' "$_out")
	_n=300
	while [ $(( $(grep -c 'code map generation' "$_out") - _g0 )) -lt 2 ] && [ $_n -gt 0 ]; do
		sleep 0.1; _n=$((_n - 1))
	done
	_gens=$(( $(grep -c 'code map generation' "$_out") - _g0 ))
	[ $_gens -ge 2 ] || { cat "$_out"; fail "$_lb: fewer than 2 compactions in 30 s"; }
	[ $(( $(flags "$_map") & F_ALLOC_ON )) -ne 0 ] ||
		fail "$_lb: CM_F_ALLOC_ON lost in a new generation"
	grep -q 'allocation events off' "$_out" &&
		{ cat "$_out"; fail "$_lb: allocation events went off across a compaction"; }
	set -- $(hits $_pid 2)
	[ "${1:-0}" -gt 0 ] || fail "$_lb: no allocation probe hits after the compactions"
	_moves=$(grep -c MOVED "$TMP/$_lb.ctl")
	kill -9 $_h; wait $_h 2>/dev/null
	wait_flags "$_map" $F_ALLOC_ON 0 20 > /dev/null ||
		fail "$_lb: allocation events still on 2 s after the request went"
	[ "$(grep -c 'allocation events on' "$_out")" -eq 1 ] ||
		{ cat "$_out"; fail "$_lb: allocation events turned on more than once"; }
	kill $_pid; wait $_pid 2>/dev/null
	echo "INFO: $_lb: request kept through $_gens generations (helper moved $_moves times), $1 allocation probe hits in 2 s after them"
}

# vthread_check JAVA_HOME LABEL (JDK 21+): allocations in virtual threads
# are sampled; their contended enters, which JDK 25 does not post for a
# virtual thread that unmounts to wait, are only counted
vthread_check() {
	_jh=$1; _lb=$2; _out="$TMP/$_lb.out"
	"$_jh/bin/java" -agentpath:"$AGENT"=loglevel=info -cp "$WL/classes" \
		EventsSmoke 60 virtual > "$_out" 2>&1 &
	_pid=$!; bg $_pid
	_n=300
	while ! grep -qs READY "$_out" && [ $_n -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
	grep -q READY "$_out" || { cat "$_out"; fail "$_lb: workload not READY"; }
	_map=$(cm_map $_pid)
	wait_flags "$_map" $F_EVENTS $F_EVENTS 50 > /dev/null ||
		fail "$_lb: the agent does not say CM_F_EVENTS"
	python3 "$TMP/ctl.py" "$_map" alloc=524288 lock > "$TMP/$_lb.ctl" 2>&1 &
	_h=$!; bg $_h
	wait_flags "$_map" $((F_ALLOC_ON | F_LOCK_ON)) $((F_ALLOC_ON | F_LOCK_ON)) 20 > /dev/null ||
		fail "$_lb: events not on within 2 s"
	set -- $(hits $_pid 2)
	[ "${1:-0}" -gt 0 ] || fail "$_lb: no allocation probe hits from virtual threads"
	kill -9 $_h; wait $_h 2>/dev/null
	kill $_pid; wait $_pid 2>/dev/null
	echo "INFO: $_lb: virtual threads, 2 s: $1 allocation and ${2:-0} lock probe hits"
}

rc=0
jdks=$(test_jdks) || rc=1
for jdk in $jdks; do
	v=$(basename "$jdk")
	events_check "$jdk" "$v-start" start
	events_check "$jdk" "$v-attach" attach
	compact_check "$jdk" "$v-compact"
	[ "$jdk" = "$JDK17" ] || vthread_check "$jdk" "$v-virtual"
done
[ "$rc" -eq 0 ] || exit 1
echo "PASS"
