#!/bin/sh
# Debug files from debuginfod, read off the decode path (record --inline
# --debuginfod URL), against Debian's own debuginfod server on a loopback
# port serving a folder this test fills:
#  1. a stripped C++ program (-O2 -g, known inlining) whose debug file only
#     the server has: its frames get names, inlined functions and lines,
#     per pc all equal to llvm-addr2line on the unstripped binary, with
#     every sample's (the stacks decoded while the file came were held);
#  2. a server that accepts and answers nothing for 30 s, and one that
#     is not there: the recording ends before that (the end waits 5 s at
#     most), its output written, the frames named as well as they can be;
#  3. libjvm with Debian's openjdk-17-dbg (the package and its matching
#     openjdk-17-jre-headless unpacked into $BUILD/debug-pkgs, nothing
#     installed): a JVM's C++ frames get their inlined functions; the
#     memory its DWARF takes is printed.
. "$(dirname "$0")/lib.sh"
need_bpf
CHECK="python3 $TOP/tests/integration/native_inline_check.py"
PROG="$WL/inline/inline_chain"
[ -x "$PROG" ] || fail "$PROG not built (make workloads)"
for t in debuginfod llvm-addr2line objcopy curl; do
	command -v $t > /dev/null 2>&1 || skip_or_fail "$t is not installed (make deps)"
done

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_server DIR BUILD_ID: debuginfod over DIR on a free port (killed at
# exit), waits until it serves BUILD_ID; sets SERVER_URL. Not called in a
# $(...): its pid must reach this shell's list.
start_server() {
	_port=$(free_port)
	debuginfod -F "$1" -p "$_port" -d "$TMP/db-$_port.sqlite" -t 0 \
		> "$TMP/debuginfod-$_port.log" 2>&1 &
	bg $!
	_n=600
	while [ $_n -gt 0 ]; do
		_c=$(curl -s -o /dev/null -w '%{http_code}' \
			"http://127.0.0.1:$_port/buildid/$2/debuginfo" || true)
		[ "$_c" = 200 ] && break
		sleep 0.1; _n=$((_n - 1))
	done
	[ "$_c" = 200 ] || { tail -n 5 "$TMP/debuginfod-$_port.log"; return 1; }
	SERVER_URL="http://127.0.0.1:$_port"
}

build_id() {
	readelf -n "$1" | awk '/Build ID/ { print $3; exit }'
}

# 1. the stripped program, its debug file only on the server
mkdir -p "$TMP/srv" "$TMP/bin"
objcopy --only-keep-debug "$PROG" "$TMP/srv/inline_chain.debug" ||
	fail "objcopy --only-keep-debug"
objcopy --strip-all "$PROG" "$TMP/bin/inline_chain" || fail "objcopy --strip-all"
BID=$(build_id "$TMP/bin/inline_chain")
[ -n "$BID" ] || fail "no build-id in the stripped program"
nm "$TMP/bin/inline_chain" 2>&1 | grep -q chain_outer &&
	fail "the stripped copy still has its symbols"
start_server "$TMP/srv" "$BID" || fail "debuginfod did not serve $BID"
URL=$SERVER_URL
echo "INFO: debuginfod at $URL serves $BID"

DEBUGINFOD_CACHE_PATH="$TMP/cache" "$ASGST" record -q --inline --stats \
	--debuginfod "$URL" -F 499 -o "$TMP/s.json" -o "$TMP/s.collapsed" \
	-- "$TMP/bin/inline_chain" 3 > /dev/null 2> "$TMP/s.err" ||
	{ cat "$TMP/s.err"; fail "record of the stripped program"; }
grep -q 'debuginfod_fetched=1 ' "$TMP/s.err" ||
	{ grep debuginfod "$TMP/s.err"; fail "no debug file fetched"; }
grep -q 'inline_unready=0 ' "$TMP/s.err" ||
	{ grep inline_ "$TMP/s.err"; fail "stacks let go before their debug file came"; }
$CHECK "$TMP/s.json" "$PROG" 0 --module "$TMP/bin/inline_chain" ||
	fail "the fetched debug file's names, inlined frames and lines differ"
grep -q 'main;chain_outer;mix_\[i\];Step<4>::run_\[i\]' "$TMP/s.collapsed" ||
	fail "collapsed: no main;chain_outer;mix_[i];Step<4>::run_[i]"

# 2. a server that holds the request 30 s, then one that is not there
cat > "$TMP/hang.py" <<'PY'
import socket, sys, threading, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
def hold(c):
    time.sleep(30)
    try:
        c.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    except OSError:
        pass
while True:
    c, _ = s.accept()
    print("accepted", flush=True)
    threading.Thread(target=hold, args=(c,), daemon=True).start()
PY
python3 "$TMP/hang.py" > "$TMP/hang.out" 2>&1 &
bg $!
wait_file "$TMP/hang.out" 50
sleep 0.3
HPORT=$(head -n 1 "$TMP/hang.out")
[ -n "$HPORT" ] || fail "the hanging server did not start"
DEAD=$(free_port)
for url in "http://127.0.0.1:$HPORT" "http://127.0.0.1:$DEAD"; do
	rm -rf "$TMP/cache2"
	t0=$(date +%s)
	DEBUGINFOD_CACHE_PATH="$TMP/cache2" "$ASGST" record -q --inline --stats \
		--debuginfod "$url" -F 499 -d 2 -o "$TMP/h.collapsed" \
		-- "$TMP/bin/inline_chain" 60 > /dev/null 2> "$TMP/h.err" ||
		{ cat "$TMP/h.err"; fail "record with the server at $url"; }
	t1=$(date +%s)
	# the server answers after 30 s: the recording did not wait for it
	[ $((t1 - t0)) -lt 25 ] ||
		fail "record -d 2 with the server at $url took $((t1 - t0)) s"
	grep -q 'debuginfod_fetches=[1-9]' "$TMP/h.err" ||
		{ grep debuginfod "$TMP/h.err"; fail "no fetch asked of $url"; }
	grep -q 'debuginfod_fetched=0 ' "$TMP/h.err" ||
		fail "a debug file from $url"
	grep -q 'inline_chain+0x' "$TMP/h.collapsed" ||
		fail "the unnamed frames are not module+offset"
	[ "$(awk '{ s += $NF } END { print s + 0 }' "$TMP/h.collapsed")" -gt 100 ] ||
		fail "too few samples written with the server at $url"
	echo "INFO: server at $url: record -d 2 ended in $((t1 - t0)) s, output written"
done
grep -q accepted "$TMP/hang.out" || fail "the hanging server was never asked"

# 3. libjvm's frames with Debian's openjdk-17-dbg
need_jdk17
. "$TOP/tests/integration/debug_pkgs.sh"
ROOT=$(openjdk_dbg_root "$BUILD/debug-pkgs" "$TMP") ||
	skip_or_fail "openjdk-17-dbg and its JRE could not be unpacked (apt-get download)"
JAVA="$ROOT/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
LIBJVM="$ROOT/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"
[ -x "$JAVA" ] || fail "$JAVA not unpacked"
JBID=$(build_id "$LIBJVM")
[ -f "$ROOT/usr/lib/debug/.build-id/$(echo "$JBID" | cut -c1-2)/$(echo "$JBID" | cut -c3-).debug" ] ||
	fail "$ROOT has no debug file for its libjvm ($JBID)"
start_server "$ROOT/usr/lib/debug" "$JBID" ||
	fail "debuginfod did not serve libjvm's debug file"
JURL=$SERVER_URL
"$JAVA" -cp "$WL/classes" AllocBench 40 > "$TMP/ab.out" 2>&1 &
JPID=$!
bg $JPID
n=300
until grep -q READY "$TMP/ab.out" 2>/dev/null || [ $n -eq 0 ]; do
	sleep 0.1; n=$((n - 1))
done
grep -q READY "$TMP/ab.out" || { cat "$TMP/ab.out"; fail "AllocBench did not start"; }
DEBUGINFOD_CACHE_PATH="$TMP/cache3" "$ASGST" record -q --inline --stats \
	--debuginfod "$JURL" --debuginfod-timeout 60 -F 199 -d 20 -p "$JPID" \
	-o "$TMP/j.json" > /dev/null 2> "$TMP/j.err" ||
	{ cat "$TMP/j.err"; fail "record of the JVM"; }
kill "$JPID" 2>/dev/null
grep -E 'dwarf_|debuginfod_' "$TMP/j.err" | sed 's/^/INFO: /'
python3 - "$TMP/j.json" "$LIBJVM" <<'PY' || fail "libjvm's frames have no inlined functions"
import json, sys
d = json.load(open(sys.argv[1]))
lib = sys.argv[2]
jvm = inl = 0
names = set()
for s in d["stacks"]:
    fr = s["frames"]
    if not any(f.get("module") == lib for f in fr):
        continue
    jvm += s["count"]
    i = [f for f in fr if f.get("module") == lib and f.get("inlined")]
    if i:
        inl += s["count"]
        names.update(f["symbol"] for f in i if f.get("symbol"))
    assert all(f.get("file") and f.get("line", 0) > 0 for f in i), "inlined frame without file:line"
print("INFO: libjvm: %d samples with its frames, %d with inlined ones (%d functions, e.g. %s)"
      % (jvm, inl, len(names), ", ".join(sorted(names)[:4])))
assert jvm > 50, jvm
assert inl > 0 and len(names) >= 5, (inl, len(names))
PY
echo "PASS"
