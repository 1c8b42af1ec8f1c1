#!/bin/sh
# Files on a FUSE file system whose server stops answering (hang_fuse.py:
# a read-only view of a folder that answers until a trigger file appears,
# then sleeps on every request). Mounted by nobody when /etc/fuse.conf
# lets users mount with allow_other and /dev/fuse is open to them, else by
# root (root's recorder cannot reach another user's FUSE mount without
# allow_other at all: the kernel refuses it without asking the server):
# - a victim run by nobody dlopens libhv.so from the mount and spins in it
#   and in its own hv_spin; with --trust-fs TYPE, while the server answers,
#   the library is read (hvlib_spin named); the server then hangs. `record -p` and
#   `record -a` must end on their own (timeout 60 must not have to kill
#   them), name the refused library in one line, and keep the victim's
#   samples with hv_spin named;
# - a victim spinning in anonymous code (a perf map is looked for): its
#   /tmp/perf-PID.map a link into the mount (refused as a link), and,
#   chrooted, its /tmp a link to the mount, so the map's path leads into
#   it through a directory link (refused as on FUSE).
. "$(dirname "$0")/lib.sh"
need_bpf
for t in cc setpriv fusermount3 timeout chroot python3; do
	command -v $t >/dev/null || skip_or_fail "$t missing (scripts/deps.sh installs it)"
done
PY=/usr/bin/python3
$PY -c 'import fuse' 2>/dev/null || skip_or_fail "python3-fuse missing (scripts/deps.sh installs it)"
[ -c /dev/fuse ] || skip_or_fail "no /dev/fuse"
[ "$(uname -m)" = x86_64 ] || skip "the anonymous code victim is x86-64 code"
umask 022
chmod 755 "$TMP"
R="$TMP/root"		# the chroot; the mount is its /fuse
MNT="$R/fuse"
SRC="$TMP/src"		# what the mount shows
TRIG="$TMP/hang"	# the server hangs once this exists
mkdir -p "$R" "$MNT" "$SRC"
SERVER=""
umount_all() {
	# the server gone, every request waiting on it fails (ENOTCONN)
	[ -n "$SERVER" ] && kill -9 "$SERVER" 2>/dev/null
	fusermount3 -u -z "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	cleanup_all
}
trap umount_all EXIT

# ---- victims --------------------------------------------------------------------
cat > "$TMP/libhv.c" <<'EOF'
volatile unsigned long lsink;
void hvlib_spin(void)
{
	for (unsigned long i = 0; i < 20000000ul; i++)
		lsink += i;
}
EOF
cat > "$TMP/hvv.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
volatile unsigned long sink;
__attribute__((noinline)) void hv_spin(void)
{
	for (unsigned long i = 0; i < 20000000ul; i++)
		sink += i;
}
int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	void (*f)(void) = h ? (void (*)(void))dlsym(h, "hvlib_spin") : NULL;

	if (!f) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	printf("READY %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		hv_spin();
		f();
	}
}
EOF
# a loop in anonymous executable memory: mov ecx, 1<<25; dec ecx; jnz; ret
cat > "$TMP/jitv.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
volatile unsigned long sink;
__attribute__((noinline)) void hv_spin(void)
{
	for (unsigned long i = 0; i < 20000000ul; i++)
		sink += i;
}
static const unsigned char code[] = { 0xb9, 0x00, 0x00, 0x00, 0x02, 0xff,
				      0xc9, 0x75, 0xfc, 0xc3 };
int main(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	memcpy(p, code, sizeof(code));
	printf("READY %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		hv_spin();
		((void (*)(void))p)();
	}
}
EOF
CF="-O1 -g -fno-omit-frame-pointer"
cc $CF -shared -fPIC "$TMP/libhv.c" -o "$SRC/libhv.so" || fail "cc libhv"
cc $CF "$TMP/hvv.c" -o "$TMP/hvv" -ldl || fail "cc hvv"
cc $CF -static "$TMP/jitv.c" -o "$TMP/jitv" || skip_or_fail "no static libc (cc -static)"
cp "$TMP/jitv" "$R/jitv"
echo "0 1 nothing" > "$SRC/perf.map"
chmod -R a+rX "$SRC" "$R"
cp "$TOP/tests/integration/hang_fuse.py" "$TMP/hang_fuse.py"
chmod 755 "$TMP/hang_fuse.py"

# ---- the server --------------------------------------------------------------------
if grep -qs '^[[:space:]]*user_allow_other' /etc/fuse.conf &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -w /dev/fuse; then
	MOUNTER=nobody
	chown nobody "$MNT"
	set -- setpriv --reuid=65534 --regid=65534 --clear-groups
else
	MOUNTER=root
	set --
fi
HF_SRC="$SRC" HF_TRIGGER="$TRIG" "$@" $PY "$TMP/hang_fuse.py" "$MNT" -f \
	-o ro,allow_other,attr_timeout=0,entry_timeout=0,negative_timeout=0 \
	> "$TMP/server.log" 2>&1 &
SERVER=$!
_n=100
while ! grep -qF " $MNT " /proc/self/mountinfo && [ $_n -gt 0 ]; do
	sleep 0.1; _n=$((_n - 1))
done
grep -F " $MNT " /proc/self/mountinfo | sed 's/^/INFO: mount: /'
timeout -k 2 5 test -s "$MNT/libhv.so" ||
	fail "the FUSE mount did not come up: $(cat "$TMP/server.log")"
echo "INFO: FUSE server pid $SERVER, mounted by $MOUNTER"

# start CMD... in the background as a victim; sets VPID
start_victim() {
	_out="$TMP/v.$(date +%s%N)"
	"$@" > "$_out" 2>&1 &
	bg $!
	_n=100
	while ! grep -q READY "$_out" 2>/dev/null && [ $_n -gt 0 ]; do
		sleep 0.1; _n=$((_n - 1))
	done
	VPID=$(sed -n 's/^READY \([0-9]*\).*/\1/p' "$_out")
	[ -n "$VPID" ] || fail "victim $* did not start: $(cat "$_out")"
	sleep 0.3
}

# hang: from now on the server answers nothing; check that it does not
hang() {
	touch "$TRIG"
	if timeout -k 2 2 cat "$MNT/libhv.so" > /dev/null 2>&1; then
		fail "the FUSE server still answers"
	fi
}

# rec NAME PID [ARGS]: record within 60 s, samples of PID written
rec() {
	_name=$1 _pid=$2
	shift 2
	_t0=$(date +%s%N)
	timeout -k 5 60 "$ASGST" record -F 199 -d 3 --no-attach \
		-o "$TMP/$_name.json" "$@" 2> "$TMP/$_name.err"
	_rc=$?
	_ms=$(( ($(date +%s%N) - _t0) / 1000000 ))
	case $_rc in
	124|137) fail "$_name: record hung, killed by timeout after ${_ms} ms: $(cat "$TMP/$_name.err")" ;;
	0) ;;
	*) fail "$_name: record failed ($_rc): $(cat "$TMP/$_name.err")" ;;
	esac
	_n=$(python3 -c "
import json
d = json.load(open('$TMP/$_name.json'))
print(sum(s['count'] for s in d['stacks'] if s['pid'] == $_pid))")
	echo "INFO: $_name: ended in $_ms ms, $_n samples of pid $_pid"
	[ "${_n:-0}" -gt 0 ] || fail "$_name: no samples of pid $_pid"
}

# expect NAME TEXT...: one line of the recorder's holds every TEXT
expect() {
	_name=$1
	shift
	cp "$TMP/$_name.err" "$TMP/$_name.m"
	for _t in "$@"; do
		grep -F -- "$_t" "$TMP/$_name.m" > "$TMP/$_name.m2"
		mv "$TMP/$_name.m2" "$TMP/$_name.m"
	done
	[ -s "$TMP/$_name.m" ] ||
		fail "$_name: expected a line with '$*', got: $(cat "$TMP/$_name.err")"
	echo "INFO: $_name said: $(head -n 1 "$TMP/$_name.m")"
}

# has_sym NAME PID SYMBOL: a frame of PID's samples is named SYMBOL
has_sym() {
	python3 -c "
import json, sys
d = json.load(open('$TMP/$1.json'))
sys.exit(0 if any(f.get('symbol') == '$3' for s in d['stacks']
                  if s['pid'] == $2 for f in s['frames']) else 1)" ||
		fail "$1: no frame of pid $2 named $3"
}

# ---- a library on the mount ------------------------------------------------------
start_victim setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/hvv" "$MNT/libhv.so"
grep -qF "$MNT/libhv.so" "/proc/$VPID/maps" || fail "libhv.so is not mapped"
# while the server answers, --trust-fs with its type reads the library
FST=$(grep -F " $MNT " /proc/self/mountinfo | sed 's/.* - \([^ ]*\) .*/\1/')
[ -n "$FST" ] || fail "no file system type for $MNT"
rec lib-trusted "$VPID" -p "$VPID" --trust-fs "$FST"
has_sym lib-trusted "$VPID" hvlib_spin
grep -q "(refused)" "$TMP/lib-trusted.err" &&
	fail "lib-trusted: --trust-fs $FST still refused: $(cat "$TMP/lib-trusted.err")"
echo "INFO: --trust-fs $FST: libhv.so read, hvlib_spin named"
hang
rec lib "$VPID" -p "$VPID"
expect lib "$MNT/libhv.so" "FUSE" "(refused)"
has_sym lib "$VPID" hv_spin
rec lib-all "$VPID" -a
expect lib-all "$MNT/libhv.so" "FUSE" "(refused)"
has_sym lib-all "$VPID" hv_spin
kill -9 "$VPID"
rm -f "$TRIG"

# ---- perf maps leading into the mount ------------------------------------------------
start_victim setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/jitv"
ln -s "$MNT/perf.map" "/tmp/perf-$VPID.map"
hang
rec pm-link "$VPID" -p "$VPID"
rm -f "/tmp/perf-$VPID.map"
expect pm-link "perf-$VPID.map" "symbolic link (refused)"
has_sym pm-link "$VPID" hv_spin
kill -9 "$VPID"
rm -f "$TRIG"

# chrooted: its /tmp is the mount, reached through a directory link
ln -s /fuse "$R/tmp"
start_victim chroot --userspec=nobody:nogroup "$R" /jitv
cp "$SRC/perf.map" "$SRC/perf-$VPID.map"
hang
rec pm-dir "$VPID" -p "$VPID"
expect pm-dir "perf-$VPID.map" "FUSE" "(refused)"
has_sym pm-dir "$VPID" hv_spin
kill -9 "$VPID"
exit 0
