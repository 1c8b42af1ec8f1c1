#!/bin/sh
# Native stacks without frame pointers, unwound by the binaries' CFI:
# -O2 programs through a libc callback (main thread and a second thread),
# C++ with std::sort, inlining and exceptions, a frame-pointer chain whose
# leaf sets up no frame, a function stopped in its epilogue, a shared
# library's static destructor at exit, Debian's python3 interpreter, a Go
# program; whole
# (to _start or clone3, Go's goexit or clone) in >= 99 % of samples, the
# chains as the programs make them, and beside perf --call-graph dwarf on
# the same binary where perf works here.
# Bad input: garbage and truncated CFI, a binary replaced while recording.
. "$(dirname "$0")/lib.sh"
need_bpf
CHECK="python3 $TOP/tests/integration/unwind_check.py"
CFI="$WL/cfi"
PY=/usr/bin/python3
[ -x "$PY" ] || skip_or_fail "Debian's python3 is not installed (make deps)"

# record -p PID for 3 s of a program started in the background
rec() {	# out prog args...
	out=$1; shift
	"$@" > "$TMP/$out.out" 2>&1 &
	rpid=$!; bg $rpid
	sleep 0.5
	"$ASGST" record -q -p "$rpid" -F 199 -d 3 -o "$TMP/$out.json" \
		|| fail "record -p $*"
}

# a libc callback chain, -O2, main thread and a second thread
rec qsort "$CFI/cfi_qsort" 6 t
$CHECK "$TMP/qsort.json" --pid $rpid --measure "cfi_qsort (-O2)" \
	--leaf 'nf_leaf.*' \
	--chain 'nf_leaf.*,nf_cmp,+msort_with_tmp.*,qsort_r,nf_run,main|nf_thread' \
	|| fail "cfi_qsort"
qpid=$rpid
python3 - "$TMP/qsort.json" $qpid <<'PY' || fail "cfi_qsort: both threads whole"
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
ends = {}
for st in d["stacks"]:
    fr = [f for f in st["frames"] if f["type"] != "kernel"]
    if st["pid"] == pid and fr and not st["error"]:
        ends[fr[-1].get("symbol")] = ends.get(fr[-1].get("symbol"), 0) + st["count"]
print("INFO: outermost frames %s" % ends)
sys.exit(0 if ends.get("_start", 0) > 20 and ends.get("__clone3", 0) > 20 else 1)
PY

# the same program by frame pointers only: what CFI adds
"$CFI/cfi_qsort" 4 > /dev/null &
fpid=$!; bg $fpid
sleep 0.5
"$ASGST" record -q --unwind fp -p $fpid -F 199 -d 2 -o "$TMP/fp.json" \
	|| fail "record --unwind fp"
$CHECK "$TMP/fp.json" --pid $fpid --no-whole-check --measure "cfi_qsort, --unwind fp" \
	> "$TMP/fp.txt" || fail "--unwind fp recording"
cat "$TMP/fp.txt"
fpw=$(sed -n 's/.*whole \([0-9.]*\) %.*/\1/p' "$TMP/fp.txt")
awk -v w="$fpw" 'BEGIN { exit !(w < 50) }' || \
	fail "frame pointers alone gave $fpw % whole on an -O2 program: the test does not test CFI"
# a program with frame pointers under --unwind fp: no window is asked for,
# its stacks are the kernel's frame-pointer walk, without an error
"$WL/native_chain" 4 2 > /dev/null &
fpid=$!; bg $fpid
sleep 0.3
"$ASGST" record -q --unwind fp -p $fpid -F 199 -d 2 -o "$TMP/fpc.json" \
	|| fail "record --unwind fp (native_chain)"
python3 - "$TMP/fpc.json" $fpid <<'PY' || fail "native_chain under --unwind fp"
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
n = err = chain = 0
for st in d["stacks"]:
    fr = [f.get("symbol") or "" for f in st["frames"] if f["type"] != "kernel"]
    if st["pid"] != pid or not fr:
        continue
    n += st["count"]
    err += st["count"] if st["error"] else 0
    chain += st["count"] if "nc_leaf" in fr and "nc_chain1" in fr else 0
print("MEASURE: native_chain, --unwind fp: %d samples, %d with an error, "
      "%d through nc_leaf..nc_chain1" % (n, err, chain))
assert n >= 50 and err == 0 and chain >= 0.9 * n
PY

# frame pointers everywhere but in the leaf: c3 must not be skipped
rec leaf "$CFI/cfi_leaf" 6
$CHECK "$TMP/leaf.json" --pid $rpid --measure "cfi_leaf (frameless leaf)" \
	--leaf leaf --chain 'leaf,c3,c2,c1,main,__libc_start_call_main' || fail "cfi_leaf"

# stopped in an epilogue after "pop %rbp", where the CFI puts the saved rbp
# below sp (outside the window): the caller is found through rbp
rec epilogue "$CFI/cfi_epilogue" 6
$CHECK "$TMP/epilogue.json" --pid $rpid --measure "cfi_epilogue (ret after pop %rbp)" \
	--leaf tiny --chain 'tiny,spin,c1,main,__libc_start_call_main' || fail "cfi_epilogue"

# a shared library's static destructor at exit: crtstuff's
# __do_global_dtors_aux has no CFI, only a frame pointer, and ld.so's
# _dl_fini below it keeps no frame pointer; exit's call of
# __run_exit_handlers is its last instruction, so its return address is
# past exit's end and is named by the call
rec exit "$CFI/cfi_exit" 6
$CHECK "$TMP/exit.json" --pid $rpid --measure "cfi_exit (a static destructor at exit)" \
	--leaf 'Spin::~Spin' \
	--chain 'Spin::~Spin,__cxa_finalize,__do_global_dtors_aux,_dl_call_fini,_dl_fini,__run_exit_handlers,exit,__libc_start_call_main,__libc_start_main,_start' \
	|| fail "cfi_exit"

# C++: std::sort's inlined templates, a comparator, exceptions
rec cxx "$CFI/cfi_cxx" 6
$CHECK "$TMP/cxx.json" --pid $rpid --measure "cfi_cxx (C++ -O2)" \
	--leaf weigh --chain 'weigh,by_weight,*std::.*,Sorter::sort_all,run,main' || fail "cfi_cxx"
python3 - "$TMP/cxx.json" $rpid <<'PY' || fail "cfi_cxx: exception frames"
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
n = 0
for st in d["stacks"]:
    nm = [f.get("symbol") or "" for f in st["frames"] if f["type"] != "kernel"]
    if st["pid"] == pid and "Checker::check" in nm and not st["error"]:
        i = nm.index("Checker::check")
        if nm[i + 1:i + 3] == ["run", "main"] and nm[-1] == "_start":
            n += st["count"]
print("INFO: %d samples while throwing/catching, whole through Checker::check" % n)
sys.exit(0 if n > 0 else 1)
PY

# Debian's python3 (no frame pointers): to Py_BytesMain and _start (the
# eval loop's own activation is where its Python frames are put:
# test_python_stacks)
cat > "$TMP/loop.py" <<'PYL'
def f3(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def f2(n):
    return f3(n)
while True:
    f2(100000)
PYL
rec py "$PY" "$TMP/loop.py"
$CHECK "$TMP/py.json" --pid $rpid --measure "Debian python3" \
	--order 'PyEval_EvalCode,Py_RunMain,Py_BytesMain,__libc_start_call_main,_start' \
	|| fail "python3"
kill $rpid 2>/dev/null

# Go (Debian's golang-go): goroutines end under runtime.goexit, threads
# begin in runtime.clone without libc; frames by Go's own CFI
command -v go > /dev/null 2>&1 || skip_or_fail "go is not installed (make deps)"
GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GO111MODULE=off \
	go build -o "$TMP/gochain" "$TOP/tests/workloads/go/gochain.go" ||
	fail "go build gochain"
rec go "$TMP/gochain" 6
$CHECK "$TMP/go.json" --pid $rpid --measure "Go (goroutines)" \
	--leaf 'crypto/sha256\.block.*' \
	--chain 'crypto/sha256\.block.*,+crypto/sha256\..*,main.leaf,main.mid,main\.main.*,*runtime.main,runtime.goexit.*' \
	|| fail "Go"
kill $rpid 2>/dev/null

# perf --call-graph dwarf on the same binary, where perf works here
if command -v perf > /dev/null 2>&1 &&
   perf record -q -o "$TMP/probe.data" -e cpu-clock -- true > /dev/null 2>&1; then
	"$CFI/cfi_qsort" 5 > /dev/null &
	ppid=$!; bg $ppid
	sleep 0.5
	"$ASGST" record -q -p $ppid -F 199 -d 3 -o "$TMP/cmp.json" &
	apid=$!
	perf record -q -e cpu-clock -F 199 --call-graph dwarf -p $ppid \
		-o "$TMP/perf.data" -- sleep 3 > /dev/null 2>&1
	wait $apid || fail "record beside perf"
	perf script -i "$TMP/perf.data" > "$TMP/perf.txt" 2>/dev/null
	# a sample: a header line, its frames indented, a blank line; whole
	# when its last frame is where a thread's stack begins
	pw=$(awk 'BEGIN { n = 0; w = 0 }
		/^[ \t]*$/ { if (last != "") { n++; if (last ~ /^(_start|__clone3)\+/) w++ }
			     last = ""; next }
		/^[ \t]/ { last = $2; next }
		END { if (last != "") { n++; if (last ~ /^(_start|__clone3)\+/) w++ }
		      printf "%.2f %d", n ? 100 * w / n : 0, n }' "$TMP/perf.txt")
	echo "MEASURE: perf --call-graph dwarf: whole ${pw% *} % of ${pw#* } samples"
	$CHECK "$TMP/cmp.json" --pid $ppid --min-samples 20 --measure "asgst-bpf beside perf" \
		> "$TMP/cmp.txt" || { cat "$TMP/cmp.txt"; fail "beside perf"; }
	cat "$TMP/cmp.txt"
	ours=$(sed -n 's/.*whole \([0-9.]*\) %.*/\1/p' "$TMP/cmp.txt")
	[ "${pw#* }" -ge 20 ] || fail "perf recorded ${pw#* } samples"
	awk -v o="$ours" -v p="${pw% *}" 'BEGIN { exit !(o + 1 >= p) }' || \
		fail "asgst-bpf $ours % whole, perf ${pw% *} %"
else
	echo "INFO: perf record does not work here: no comparison with perf"
fi

# in a container: the binary exists only at its path inside the container
# (a bind mount), so it is read through the process's root
if command -v podman > /dev/null && command -v runc > /dev/null; then
	NAME="asgst-cfi-$$"
	PODMAN="podman --runtime runc --cgroup-manager cgroupfs"
	trap 'for p in $_bg_pids; do kill "$p" 2>/dev/null; done
		$PODMAN rm -f -t 0 "$NAME" > /dev/null 2>&1; wait 2>/dev/null
		rm -rf "$TMP"' EXIT
	timeout 120 $PODMAN run -d --name "$NAME" \
		--ulimit nofile=4096:4096 --ulimit nproc=4096:4096 \
		-v "$CFI:/cfi-wl:ro" --rootfs /:O /cfi-wl/cfi_qsort 60 t \
		> "$TMP/podman.out" 2>&1 ||
		{ cat "$TMP/podman.out"; fail "podman could not start the container"; }
	sleep 1
	cpid=$(podman top "$NAME" hpid | awk 'NR > 1 { print $1; exit }')
	[ -n "$cpid" ] || fail "the container's process not found"
	"$ASGST" record -q -p "$cpid" -F 199 -d 3 -o "$TMP/ctr.json" ||
		fail "record -p of the container's process"
	$CHECK "$TMP/ctr.json" --pid "$cpid" --measure "cfi_qsort in a container" \
		--leaf 'nf_leaf.*' \
		--chain 'nf_leaf.*,nf_cmp,+msort_with_tmp.*,qsort_r,nf_run,main|nf_thread' \
		|| fail "container"
	python3 - "$TMP/ctr.json" "$cpid" <<'PY' || fail "container: module path"
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
mods = {f.get("module") for s in d["stacks"] if s["pid"] == pid
        for f in s["frames"] if f.get("symbol") == "nf_run"}
print("INFO: nf_run from %s" % sorted(m for m in mods if m))
sys.exit(0 if mods == {"/cfi-wl/cfi_qsort"} else 1)
PY
	$PODMAN rm -f -t 0 "$NAME" > /dev/null 2>&1
elif [ "${CI:-}" = true ]; then
	fail "podman or runc missing (make deps installs them)"
else
	echo "INFO: podman or runc missing (make deps): no container run"
fi

# garbage CFI: the recording goes on, the frames it cannot walk end in an
# unknown frame with the reason
python3 - "$CFI/cfi_qsort" "$TMP/garbage" "$TMP/truncated" <<'PY' || fail "making bad binaries"
import struct, sys, shutil
src, garbage, trunc = sys.argv[1:4]
b = bytearray(open(src, "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
def sh(i):
    return struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize)
stro = sh(shstrndx)[4]
def name(i):
    o = stro + sh(i)[0]
    return bytes(b[o:b.index(0, o)]).decode()
g = bytearray(b)
for i in range(shnum):
    if name(i) in (".eh_frame", ".eh_frame_hdr"):
        off, size = sh(i)[4], sh(i)[5]
        for j in range(off + 8, off + size):
            g[j] = (j * 131 + 7) & 0xff
open(garbage, "wb").write(g)
t = bytearray(b)
for i in range(shnum):
    if name(i) == ".eh_frame":
        # the section claims far more than the file holds
        struct.pack_into("<Q", t, shoff + i * shentsize + 32, 1 << 40)
open(trunc, "wb").write(t)
PY
chmod +x "$TMP/garbage" "$TMP/truncated"
for b in garbage truncated; do
	"$TMP/$b" 4 > /dev/null &
	bpid=$!; bg $bpid
	sleep 0.5
	timeout 30 "$ASGST" record -q -p $bpid -F 199 -d 2 -o "$TMP/$b.json" \
		|| fail "record of a binary with $b CFI did not end cleanly"
	$CHECK "$TMP/$b.json" --pid $bpid --no-whole-check --errors-explained \
		--measure "$b CFI" || fail "$b CFI"
done

# a binary replaced (renamed over) while it is recorded
mkdir -p "$TMP/repl"
cp "$CFI/cfi_qsort" "$TMP/repl/prog"
"$TMP/repl/prog" 5 > /dev/null &
rpid=$!; bg $rpid
sleep 0.3
"$ASGST" record -q -p $rpid -F 199 -d 3 -o "$TMP/repl.json" &
apid=$!
sleep 1
cp "$CFI/cfi_leaf" "$TMP/repl/prog.new" && mv "$TMP/repl/prog.new" "$TMP/repl/prog"
wait $apid || fail "record while the binary was replaced"
$CHECK "$TMP/repl.json" --pid $rpid --measure "binary replaced while recorded" \
	--leaf 'nf_leaf.*' --chain 'nf_leaf.*,nf_cmp,+msort_with_tmp.*,qsort_r,nf_run,main' \
	|| fail "replaced binary"
exit 0
