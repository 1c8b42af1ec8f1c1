#!/bin/sh
# CPython frames from the kernel: pychain.py's known chain
# (a method, recursion, a lambda, a generator, zlib.compress under them)
# recorded with -p from Debian's python3.11 and pyenv's 3.11.7: the chain
# whole, names and lines right in >= 99 % of the busy thread's samples,
# and its innermost functions within a total variation distance of 0.05
# of the program's own view (sys._current_frames from a second thread);
# record -a sees it too; pythreads.py under record --: each thread's
# Python frames its own; pyext.py: json's C encoder and hashlib under the
# Python functions that call them; a debug build (python3.11d) is refused with one
# line and recorded with native frames only; report of each raw file
# (and of each --switch-output period) names the frames as record did.
. "$(dirname "$0")/lib.sh"
need_bpf
DEB_PY=${DEB_PY:-/usr/bin/python3.11}
PYENV_PY=${PYENV_PY:-/root/.pyenv/versions/3.11.7/bin/python3.11}
DBG_PY=${DBG_PY:-/usr/bin/python3.11d}
CHECK="python3 $TOP/tests/integration/python_check.py"
PCHECK="python3 $TOP/tests/integration/profile_check.py"
[ -x "$DEB_PY" ] || skip_or_fail "$DEB_PY not found (make deps: python3.11)"
pys="$DEB_PY"
if [ -x "$PYENV_PY" ]; then
	pys="$pys $PYENV_PY"
else
	[ "${CI:-}" = "true" ] && fail "$PYENV_PY not found (CI=true: required)"
	echo "INFO: $PYENV_PY not found: Debian's python3.11 only"
fi
# the scripts where any user can read them (the checkout may be 0700)
stage_public "$TOP/tests/workloads/python" || fail "staging the scripts"
CHAIN="$TMP/pub/python/pychain.py"
THREADS="$TMP/pub/python/pythreads.py"

# start PY SCRIPT SECS OUT...: the program in the background; its pid
# (a file of its own: the background shell opens it later than this one
# looks, and a reused file would still say the last program's pid)
start() {
	_py=$1; shift
	_out=$(mktemp "$TMP/start.XXXXXX")
	"$_py" "$@" > "$_out" 2>&1 &
	bg $!
	_n=300
	while ! grep -q '^ready ' "$_out" && [ $_n -gt 0 ]; do
		sleep 0.1; _n=$((_n - 1))
	done
	sed -n 's/^ready //p' "$_out"
	cp "$_out" "$TMP/start.out"
}

rc=0
i=0
for py in $pys; do
	i=$((i + 1))
	label="$("$py" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
	pid=$(start "$py" "$CHAIN" 10 "$TMP/self$i.json")
	[ -n "$pid" ] || fail "$py: pychain.py did not start: $(cat "$TMP/start.out")"
	sleep 0.3
	"$ASGST" record -q -p "$pid" -F 199 -d 7 -o "$TMP/p$i.json" \
		-o "$TMP/p$i.collapsed" -o "$TMP/p$i.pb.gz" -o "$TMP/p$i.asgst" \
		|| fail "$py: record -p failed"
	wait_pid=0
	while kill -0 "$pid" 2>/dev/null && [ $wait_pid -lt 100 ]; do
		sleep 0.1; wait_pid=$((wait_pid + 1))
	done
	[ -s "$TMP/self$i.json" ] || fail "$py: no view of its own"
	$PCHECK "$TMP/p$i.json" --schema || fail "$py: schema"
	$CHECK "$TMP/p$i.json" chain --pid "$pid" --script "$CHAIN" \
		--self "$TMP/self$i.json" --label "$label" --min 0.99 \
		--min-samples 200 || rc=1
	grep -q ';Runner.run_\[p\];recurse_\[p\];' "$TMP/p$i.collapsed" ||
		fail "$py: collapsed output without _[p] frames"
	# report names the frames from the recording as record did
	"$ASGST" report -q -i "$TMP/p$i.asgst" -o "$TMP/r$i.collapsed" ||
		fail "$py: report failed"
	sort "$TMP/p$i.collapsed" > "$TMP/p$i.sorted"
	sort "$TMP/r$i.collapsed" > "$TMP/r$i.sorted"
	cmp -s "$TMP/p$i.sorted" "$TMP/r$i.sorted" ||
		fail "$py: report differs from record: $(diff "$TMP/p$i.sorted" "$TMP/r$i.sorted" | head -4)"
	echo "INFO: $label: report of the raw file gives the same $(wc -l < "$TMP/r$i.sorted") stacks"
	# pprof: Python Functions with their files, Lines with line numbers
	if command -v go > /dev/null && [ -n "$(go env GOROOT 2>/dev/null)" ]; then
		go tool pprof -lines -traces "$TMP/p$i.pb.gz" 2> /dev/null |
			grep -q 'recurse .*pychain.py:[0-9]' ||
			fail "$py: pprof without Python functions, files and lines"
	fi
done

# -a: the same chain among every process's samples
pid=$(start "$DEB_PY" "$CHAIN" 8)
sleep 0.3
"$ASGST" record -q -a -F 199 -d 5 -o "$TMP/a.json" || fail "record -a failed"
$CHECK "$TMP/a.json" chain --pid "$pid" --script "$CHAIN" --label "record -a" \
	--min 0.99 --min-samples 50 || rc=1

# threads under record --: each its own frames
"$ASGST" record -q -F 199 -o "$TMP/t.json" -- "$DEB_PY" "$THREADS" 6 \
	> "$TMP/t.out" || fail "record -- pythreads.py failed"
tpid=$(sed -n 's/^ready //p' "$TMP/t.out")
[ -n "$tpid" ] || fail "pythreads.py did not run: $(cat "$TMP/t.out")"
$CHECK "$TMP/t.json" threads --pid "$tpid" --script "$THREADS" \
	--threads "$TMP/t.out" --label "record --" --min 0.99 --min-samples 50 || rc=1

# pyimports.py imports modules again and again: importlib's
# _call_with_frames_removed runs a module's body (<module>), _gcd_import,
# a path hook, or __import__ (C), which runs _find_and_load,
# _handle_fromlist or _lock_unlock_module; never another function. The
# module's
# code object is freed once the body has run and its memory soon holds
# another: a frame of module-level code named after a function's code
# found at its address (or the reverse) is left unnamed instead (the
# sampler tells the two kinds apart by the frame's locals). A function
# freed and its memory reused by another function stays possible: <= 1 %.
"$ASGST" record -q -F 499 -o "$TMP/i.json" -- "$DEB_PY" \
	"$TMP/pub/python/pyimports.py" 4 > "$TMP/i.out" || fail "record -- pyimports.py failed"
ipid=$(sed -n 's/^ready //p' "$TMP/i.out")
[ -n "$ipid" ] || fail "pyimports.py did not run: $(cat "$TMP/i.out")"
python3 - "$TMP/i.json" "$ipid" <<'PY' || rc=1
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
ok = {"<module>", "_gcd_import", "path_hook_for_FileFinder",
      "_find_and_load", "_handle_fromlist", "_lock_unlock_module"}
n = good = unnamed = 0
other = {}
for s in d["stacks"]:
    if s["pid"] != pid:
        continue
    py = [f for f in s["frames"] if f["type"] == "python"]
    for i in range(1, len(py)):
        if py[i].get("function") != "_call_with_frames_removed":
            continue
        fn = py[i - 1].get("function")
        n += s["count"]
        if fn is None:
            unnamed += s["count"]
        elif fn in ok:
            good += s["count"]
        else:
            other[fn] = other.get(fn, 0) + s["count"]
bad = sum(other.values())
print("MEASURE: imports: %d frames called by _call_with_frames_removed: "
      "%d a module body or an import, %d unnamed, %d another function %s"
      % (n, good, unnamed, bad, sorted(other.items(), key=lambda x: -x[1])[:4]))
if good < 50 or bad > 0.01 * (good + bad):
    print("FAIL: imports: fewer than 50 named, or more than 1 % named "
          "after another function")
    sys.exit(1)
PY

# json's C encoder and hashlib (OpenSSL) under the Python functions that
# called them
"$ASGST" record -q -F 199 -o "$TMP/x.json" -- "$DEB_PY" "$TMP/pub/python/pyext.py" 4 \
	> "$TMP/x.out" || fail "record -- pyext.py failed"
xpid=$(sed -n 's/^ready //p' "$TMP/x.out")
python3 - "$TMP/x.json" "$xpid" <<'PY' || rc=1
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
want = {"encode": ("encoder_",), "digest": ("sha256", "SHA256", "EVP_")}
seen = {k: [0, 0] for k in want}
for s in d["stacks"]:
    if s["pid"] != pid or s["tid"] != pid:
        continue
    py = [i for i, f in enumerate(s["frames"]) if f["type"] == "python"]
    if not py:
        continue
    # the innermost Python frame that is one of ours, and what is under it
    for i in py:
        fn = s["frames"][i]["function"]
        if fn in want:
            under = [f.get("symbol") or "" for f in s["frames"][:i]
                     if f["type"] == "non_java"]
            seen[fn][0] += s["count"]
            if any(p in u for u in under for p in want[fn]):
                seen[fn][1] += s["count"]
            break
rc = 0
for fn, (n, ok) in seen.items():
    pct = 100.0 * ok / n if n else 0
    print("MEASURE: %s: its C extension under it in %.1f %% of %d samples"
          % (fn, pct, n))
    if n < 10 or pct < 90:
        print("FAIL: %s" % fn)
        rc = 1
sys.exit(rc)
PY

# --switch-output: each period's raw file names its Python frames by
# itself (the code objects read in earlier periods written again)
mkdir "$TMP/swo"
"$ASGST" record -q -F 99 --switch-output 2s -o "$TMP/swo/p.asgst" \
	-o "$TMP/swo/p.collapsed" -- "$DEB_PY" "$CHAIN" 5 > /dev/null ||
	fail "record --switch-output failed"
np=0
for f in "$TMP"/swo/p.*.asgst; do
	b=${f%.asgst}
	"$ASGST" report -q -i "$f" -o "$b.r.collapsed" || fail "report $f failed"
	sort "$b.collapsed" > "$b.s1"; sort "$b.r.collapsed" > "$b.s2"
	cmp -s "$b.s1" "$b.s2" || fail "report of period $f differs from record"
	grep -q '_\[p\]' "$b.s2" || fail "no Python frames in period $f"
	np=$((np + 1))
done
[ $np -ge 2 ] || fail "only $np periods"
echo "INFO: --switch-output: $np periods, each reported as recorded"

# a layout not verified: one line, native frames only
if [ -x "$DBG_PY" ]; then
	"$ASGST" record -F 99 -d 2 -o "$TMP/d.json" -- "$DBG_PY" "$CHAIN" 2 \
		> /dev/null 2> "$TMP/d.err" || fail "record -- python3.11d failed"
	grep -q 'layout is not verified, native frames only' "$TMP/d.err" ||
		fail "no refusal for the debug build: $(cat "$TMP/d.err")"
	n=$(grep -c 'not verified' "$TMP/d.err")
	[ "$n" -eq 1 ] || fail "the refusal said $n times"
	grep -q '"type":"python"' "$TMP/d.json" && fail "Python frames from a refused layout"
	echo "INFO: $(grep 'not verified' "$TMP/d.err")"
else
	skip_or_fail "$DBG_PY not found (make deps: python3.11-dbg)"
fi
exit $rc
