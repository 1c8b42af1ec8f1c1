#!/bin/sh
# Files a target controls, made hostile at every path record opens for it:
# a FIFO, a link to a device, a file cut and rewritten while it is read, at
# - a stripped program's .gnu_debuglink target (the program run by nobody),
# - a build-id debug file under /usr/lib/debug/.build-id inside a chroot,
# - the program's own path (a FIFO mounted over it in its mount namespace),
# - the code map /dev/shm/asgst-PID-PIDNS.map of a fake JVM (libjvm.so
#   mapped, and its map once it is there),
#   plus a forged map owned by another user.
# Each `record -p PID -d 2` must end on its own (timeout 30 must not have to
# kill it), write the target's samples and, where a file is refused, say
# why in one line. Outputs, and the fallback raw file, are mode 600.
. "$(dirname "$0")/lib.sh"
need_bpf
for t in cc objcopy readelf setpriv chroot unshare nsenter python3; do
	command -v $t >/dev/null || skip_or_fail "$t missing"
done
umask 022
chmod 755 "$TMP"
U="$TMP/u"
mkdir "$U"
chown nobody "$U"

# ---- victims ------------------------------------------------------------------
cat > "$TMP/victim.c" <<'EOF'
#include <stdio.h>
#include <unistd.h>
volatile unsigned long sink;
__attribute__((noinline)) void hv_spin(void)
{
	for (unsigned long i = 0; i < 100000000ul; i++)
		sink += i;
}
int main(void)
{
	printf("READY %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		hv_spin();
}
EOF
# a fake JVM: any process with a libjvm.so mapped is taken for one
cat > "$TMP/libjvm.c" <<'EOF'
int fake_jvm_marker(void) { return 42; }
EOF
CF="-O1 -g -fno-omit-frame-pointer -Wl,--build-id=sha1"
cc $CF "$TMP/victim.c" -o "$TMP/victim.full" || fail "cc victim"
# a big debug file: reading it takes long enough to be cut meanwhile
head -c $((48 << 20)) /dev/urandom > "$TMP/pad.bin"
objcopy --only-keep-debug "$TMP/victim.full" "$TMP/victim.dbg0" || fail "objcopy"
objcopy --add-section .asgst_pad="$TMP/pad.bin" "$TMP/victim.dbg0" "$U/victim.debug" ||
	fail "objcopy pad"
( cd "$U" && objcopy --strip-all --add-gnu-debuglink=victim.debug \
	"$TMP/victim.full" victim ) || fail "objcopy debuglink"
cp "$U/victim.debug" "$TMP/victim.debug.good"
chown nobody "$U/victim" "$U/victim.debug"
cc -shared -fPIC "$TMP/libjvm.c" -o "$TMP/libjvm.so" || fail "cc libjvm"

# start CMD... in the background as a victim; sets VPID
start_victim() {
	_out="$TMP/v.$$.$(date +%s%N)"
	"$@" > "$_out" 2>&1 &
	bg $!
	_n=100
	while ! grep -q READY "$_out" 2>/dev/null && [ $_n -gt 0 ]; do
		sleep 0.1; _n=$((_n - 1))
	done
	VPID=$(sed -n 's/^READY //p' "$_out")
	[ -n "$VPID" ] || fail "victim $* did not start: $(cat "$_out")"
	sleep 0.2
}

# cut FILE and write it again from SRC, as fast as it goes, in the background
cutter() {
	( while :; do cat "$2" > "$1"; truncate -s 1000 "$1"; : > "$1"; done ) \
		2>/dev/null &
	CUTTER=$!
	bg $CUTTER
}

# rec NAME PID [ARGS]: record -p PID -d 2 within 30 s, samples of PID written
rec() {
	_name=$1 _pid=$2
	shift 2
	_t0=$(date +%s%N)
	timeout -k 5 30 "$ASGST" record -p "$_pid" -F 199 -d 2 --no-attach \
		-o "$TMP/$_name.json" "$@" 2> "$TMP/$_name.err"
	_rc=$?
	_ms=$(( ($(date +%s%N) - _t0) / 1000000 ))
	case $_rc in
	124|137) fail "$_name: record hung, killed by timeout after ${_ms} ms: $(cat "$TMP/$_name.err")" ;;
	0) ;;
	*) fail "$_name: record failed ($_rc): $(cat "$TMP/$_name.err")" ;;
	esac
	_n=$(python3 -c "
import json, sys
d = json.load(open('$TMP/$_name.json'))
print(sum(s['count'] for s in d['stacks'] if s['pid'] == $_pid))")
	echo "INFO: $_name: ended in $_ms ms, $_n samples of pid $_pid"
	[ "${_n:-0}" -gt 0 ] || fail "$_name: no samples of pid $_pid"
}

# expect NAME TEXT: the recorder said TEXT, on one line
expect() {
	grep -F -- "$2" "$TMP/$1.err" > "$TMP/$1.line" ||
		fail "$1: expected '$2' on stderr, got: $(cat "$TMP/$1.err")"
	echo "INFO: $1 said: $(head -n 1 "$TMP/$1.line")"
}

# the symbol of the victim's loop, seen through the debug file or not
has_sym() {
	python3 -c "
import json, sys
d = json.load(open('$TMP/$1.json'))
sys.exit(0 if any(f.get('symbol') == '$2' for s in d['stacks']
                  for f in s['frames']) else 1)"
}

# ---- a stripped program's .gnu_debuglink target ---------------------------------
DBG="$U/victim.debug"
start_victim setpriv --reuid=nobody --regid=nogroup --clear-groups "$U/victim"
rec link-good "$VPID"
has_sym link-good hv_spin || fail "link-good: hv_spin not symbolized from the debug file"
kill "$VPID"

rm -f "$DBG"; mkfifo "$DBG"; chown nobody "$DBG"
start_victim setpriv --reuid=nobody --regid=nogroup --clear-groups "$U/victim"
rec link-fifo "$VPID"
expect link-fifo "is a FIFO, not a regular file (refused)"
kill "$VPID"

rm -f "$DBG"; ln -s /dev/zero "$DBG"
start_victim setpriv --reuid=nobody --regid=nogroup --clear-groups "$U/victim"
rec link-dev "$VPID"
expect link-dev "is a character device, not a regular file (refused)"
kill "$VPID"

rm -f "$DBG"; ln -s /dev/tty "$DBG"
start_victim setpriv --reuid=nobody --regid=nogroup --clear-groups "$U/victim"
rec link-tty "$VPID"
expect link-tty "not a regular file (refused)"
kill "$VPID"

rm -f "$DBG"; cp "$TMP/victim.debug.good" "$DBG"
cutter "$DBG" "$TMP/victim.debug.good"
start_victim setpriv --reuid=nobody --regid=nogroup --clear-groups "$U/victim"
rec link-cut "$VPID"
kill "$VPID" "$CUTTER"
wait "$CUTTER" 2>/dev/null

# ---- a build-id debug file inside the process's root ------------------------------
R="$TMP/root"
mkdir -p "$R/dev"
cc -static $CF "$TMP/victim.c" -o "$TMP/victim.static.full" ||
	skip_or_fail "no static libc (cc -static)"
objcopy --only-keep-debug "$TMP/victim.static.full" "$TMP/static.dbg0"
objcopy --add-section .asgst_pad="$TMP/pad.bin" "$TMP/static.dbg0" \
	"$TMP/static.debug.good"
objcopy --strip-all "$TMP/victim.static.full" "$R/victim"
BID=$(readelf -n "$R/victim" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$BID" ] || fail "no build-id in the static victim"
BDIR="$R/usr/lib/debug/.build-id/$(echo "$BID" | cut -c1-2)"
BDBG="$BDIR/$(echo "$BID" | cut -c3-).debug"
mkdir -p "$BDIR"
[ ! -e "/usr/lib/debug/.build-id/$(echo "$BID" | cut -c1-2)/$(echo "$BID" | cut -c3-).debug" ] ||
	fail "the host has a debug file for the victim's build-id"
mknod "$R/dev/zero" c 1 5

cp "$TMP/static.debug.good" "$BDBG"
start_victim chroot --userspec=nobody:nogroup "$R" /victim
rec bid-good "$VPID"
has_sym bid-good hv_spin || fail "bid-good: hv_spin not symbolized by build-id"
kill "$VPID"

rm -f "$BDBG"; mkfifo "$BDBG"
start_victim chroot --userspec=nobody:nogroup "$R" /victim
rec bid-fifo "$VPID"
expect bid-fifo "is a FIFO, not a regular file (refused)"
kill "$VPID"

# /dev/zero of the chroot: a real device node there
rm -f "$BDBG"; ln -s /dev/zero "$BDBG"
start_victim chroot --userspec=nobody:nogroup "$R" /victim
rec bid-dev "$VPID"
expect bid-dev "is a character device, not a regular file (refused)"
kill "$VPID"

rm -f "$BDBG"; cp "$TMP/static.debug.good" "$BDBG"
cutter "$BDBG" "$TMP/static.debug.good"
start_victim chroot --userspec=nobody:nogroup "$R" /victim
rec bid-cut "$VPID"
kill "$VPID" "$CUTTER"
wait "$CUTTER" 2>/dev/null

# ---- the program's own path: a FIFO mounted over it -------------------------------
# (its maps still name the path; the mapped file is reached another way)
mkfifo "$TMP/over.fifo"
unshare -m --propagation private sh -c '
	"$1" & v=$!
	sleep 0.3
	mount --bind "$2" "$1" || exit 1
	wait $v' sh "$TMP/victim.full" "$TMP/over.fifo" > "$TMP/over.out" 2>&1 &
bg $!
_n=50
while ! grep -q READY "$TMP/over.out" 2>/dev/null && [ $_n -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
VPID=$(sed -n 's/^READY //p' "$TMP/over.out")
[ -n "$VPID" ] || fail "mounted-over victim did not start: $(cat "$TMP/over.out")"
sleep 0.5
nsenter -t "$VPID" -m test -p "$TMP/victim.full" ||
	fail "the FIFO is not mounted over the victim in its namespace"
rec self-fifo "$VPID"
has_sym self-fifo hv_spin || fail "self-fifo: the mapped file was not read"
kill "$VPID"

# ---- the code map of a fake JVM --------------------------------------------------
# write_map PATH PID: a valid map header written by "pid PID", no records
write_map() {
	python3 - "$1" "$2" <<'EOF'
import struct, sys
h = struct.pack("<8sIIIIQQQQ", b"ASGSTCM\0", 1, 4096, int(sys.argv[2]), 0,
                64 << 20, 4096, 0, 0)
open(sys.argv[1], "wb").write(h + b"\0" * (4096 - len(h)))
EOF
}
fake_jvm() {
	start_victim "$WL/fake_jvm" "$TMP/libjvm.so" - map
	MAP=$(cm_map "$VPID")
	rm -f "$MAP"
}

fake_jvm
write_map "$MAP" "$VPID"
rec map-good "$VPID"
if grep -F "code map" "$TMP/map-good.err"; then fail "map-good: a good map refused"; fi
kill "$VPID"; rm -f "$MAP"

fake_jvm
mkfifo "$MAP"
rec map-fifo "$VPID"
expect map-fifo "is a FIFO, not a regular file (refused)"
kill "$VPID"; rm -f "$MAP"

fake_jvm
ln -s /dev/zero "$MAP"
rec map-dev "$VPID"
expect map-dev "is a symbolic link (refused)"
kill "$VPID"; rm -f "$MAP"

fake_jvm
write_map "$TMP/map.good" "$VPID"
head -c $((1 << 20)) /dev/urandom >> "$TMP/map.good"
cutter "$MAP" "$TMP/map.good"
rec map-cut "$VPID"
kill "$VPID" "$CUTTER"
wait "$CUTTER" 2>/dev/null
rm -f "$MAP"

# forged: another user's map for a JVM running as root
fake_jvm
write_map "$MAP" "$VPID"
chown nobody "$MAP"
rec map-owner "$VPID"
expect map-owner "owned by uid $(id -u nobody), not by uid 0 the JVM runs as"
kill "$VPID"; rm -f "$MAP"

# ---- outputs are 0600 -------------------------------------------------------------
start_victim "$TMP/victim.full"
timeout -k 5 30 "$ASGST" record -q -p "$VPID" -F 99 -d 1 -o "$TMP/o.json" \
	-o "$TMP/o.asgst" || fail "record -o json -o asgst"
for f in o.json o.asgst; do
	m=$(stat -c %a "$TMP/$f")
	echo "INFO: $f mode $m"
	[ "$m" = 600 ] || fail "$f is mode $m, not 600"
done
# a link planted at the output path is refused, its target untouched
echo keep > "$TMP/victim.txt"
ln -s "$TMP/victim.txt" "$TMP/planted.json"
if timeout -k 5 30 "$ASGST" record -q -p "$VPID" -F 99 -d 1 \
	-o "$TMP/planted.json" 2> "$TMP/planted.err"; then
	:
fi
[ "$(cat "$TMP/victim.txt")" = keep ] || fail "wrote through a planted link"
grep -q "symbolic link" "$TMP/planted.err" ||
	fail "planted link: no reason given: $(cat "$TMP/planted.err")"
# the fallback raw file when the output cannot be written
mkdir "$TMP/fb" "$TMP/spoil"
TMPDIR="$TMP/fb" timeout -k 5 30 "$ASGST" record -q -p "$VPID" -F 99 -d 2 \
	-o "$TMP/spoil/out.json" 2> "$TMP/fb.err" &
rp=$!; bg $rp
spoil_output "$TMP/spoil/out.json" || fail "the recorder wrote no file"
wait $rp
kill "$VPID"
fb=$(ls "$TMP/fb"/asgst-bpf-*.asgst 2>/dev/null | head -n 1)
[ -n "$fb" ] || fail "no fallback recording in \$TMPDIR: $(cat "$TMP/fb.err")"
m=$(stat -c %a "$fb")
echo "INFO: fallback $(basename "$fb") mode $m"
[ "$m" = 600 ] || fail "fallback recording is mode $m, not 600"
exit 0
