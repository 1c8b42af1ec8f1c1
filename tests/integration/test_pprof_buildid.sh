#!/bin/sh
# pprof mappings carry the build-id of the file the process mapped, read
# through its own root and mounts, never the host's file at the same path:
# a process in a mount namespace of its own has a library of its own bind-
# mounted over a path where the host has another (build-ids 0x11.. and
# 0x22..); record -p writes the mapping's build-id as 22.., not 11...
. "$(dirname "$0")/lib.sh"
need_bpf
[ -x "$ASGST" ] || fail "$ASGST not built (make all)"
for t in cc unshare protoc python3; do
	command -v $t >/dev/null || skip_or_fail "$t missing"
done

cat > "$TMP/lib.c" <<'EOF'
volatile unsigned long sink;
__attribute__((noinline)) void bid_spin(void)
{
	for (;;)
		sink++;
}
EOF
cat > "$TMP/victim.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	void (*spin)(void) = h ? (void (*)(void))dlsym(h, "bid_spin") : NULL;

	if (!spin)
		return 1;
	printf("READY\n");
	fflush(stdout);
	spin();
	return 0;
}
EOF
HOSTID=1111111111111111111111111111111111111111
CTRID=2222222222222222222222222222222222222222
cc -O1 -g -shared -fPIC -Wl,--build-id=0x$HOSTID -o "$TMP/libbid.so" "$TMP/lib.c" &&
	cc -O1 -g -shared -fPIC -Wl,--build-id=0x$CTRID -o "$TMP/libbid.ctr.so" "$TMP/lib.c" &&
	cc -O1 -o "$TMP/victim" "$TMP/victim.c" -ldl || fail "cannot build the victim"

# the victim sees its own library at the host library's path
unshare -m --propagation private sh -c '
	mount --bind "$1" "$2" || exit 1
	exec "$3" "$2"' sh "$TMP/libbid.ctr.so" "$TMP/libbid.so" "$TMP/victim" \
	> "$TMP/victim.out" 2>&1 &
VPID=$!
bg "$VPID"
wait_file "$TMP/victim.out" 50 && sleep 0.2
grep -q READY "$TMP/victim.out" || { cat "$TMP/victim.out"; fail "victim did not start"; }

timeout 60 "$ASGST" record -p "$VPID" -F 199 -d 2 --no-attach \
	-o "$TMP/v.pb.gz" -o "$TMP/v.json" 2> "$TMP/rec.err" ||
	{ cat "$TMP/rec.err"; fail "record failed"; }
gunzip -c "$TMP/v.pb.gz" | protoc --decode_raw > "$TMP/v.txt" || fail "pprof decode"
python3 - "$TMP/v.json" <<'PY' || fail "no sample in bid_spin"
import json, sys
d = json.load(open(sys.argv[1]))
n = sum(s["count"] for s in d["stacks"]
        if any(f.get("symbol") == "bid_spin" for f in s["frames"]))
print("INFO: %d samples in bid_spin" % n)
sys.exit(0 if n > 0 else 1)
PY
grep -q "\"$CTRID\"" "$TMP/v.txt" ||
	fail "the pprof does not carry the build-id of the library the process mapped ($CTRID)"
grep -q "\"$HOSTID\"" "$TMP/v.txt" &&
	fail "the pprof carries the build-id of the host's file at that path ($HOSTID)"
echo "INFO: pprof mapping build-id $CTRID (the process's file), not $HOSTID (the host's)"
echo "PASS"
