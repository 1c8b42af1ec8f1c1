#!/bin/sh
# Inlined native frames and source lines from DWARF: a C++ program built
# -O2 -g (a template call chain inlined whole, a lambda inlined into
# std::sort), recorded with `record --inline -- prog`. Every sample's frames in the
# program, per pc, against llvm-addr2line -i -f (all equal: frames,
# functions, files, lines) and addr2line -i -f of the same pcs (equal but
# where binutils names the innermost function as the outer one), and
# against perf record --call-graph dwarf + perf script of the same binary
# (per pc sampled by both: equal, or what binutils' addr2line, which perf
# asks, says). The collapsed output marks the inlined frames _[i], pprof
# has one Location per pc with its inlined Lines, and report of the raw
# recording gives the same stacks. The same program stripped, its DWARF
# in a separate debug file: named and expanded the same. Debian's
# python3.11 with python3.11-dbg (its DWARF under /usr/lib/debug/.build-id)
# running a Python program (--python-native: the interpreter's own C
# frames kept, not folded into Python frames): per pc equal to llvm-addr2line and to perf,
# and CPython's inline chains (_PyEval_Vector and _PyEval_EvalFrame
# inlined in PyEval_EvalCode) whole in >= 99 % of the samples that run
# the interpreter.
. "$(dirname "$0")/lib.sh"
need_bpf
CHECK="python3 $TOP/tests/integration/native_inline_check.py"
PROG="$WL/inline/inline_chain"
[ -x "$PROG" ] || fail "$PROG not built (make workloads)"
for t in addr2line llvm-addr2line nm; do
	command -v $t > /dev/null 2>&1 || skip_or_fail "$t is not installed (make deps)"
done

"$ASGST" record -q --inline -F 499 -o "$TMP/r.json" -o "$TMP/r.collapsed" \
	-o "$TMP/r.pb.gz" -o "$TMP/r.asgst" -- "$PROG" 4 > /dev/null \
	|| fail "record -- inline_chain"

# perf --call-graph dwarf on the same binary, where perf works here
PERF=""
if command -v perf > /dev/null 2>&1 &&
   perf record -q -o "$TMP/probe.data" -e cpu-clock -- true > /dev/null 2>&1; then
	perf record -q -e cpu-clock -F 499 --call-graph dwarf \
		-o "$TMP/perf.data" -- "$PROG" 3 > /dev/null 2>&1 \
		|| fail "perf record"
	perf script -i "$TMP/perf.data" > "$TMP/perf.txt" 2>/dev/null \
		|| fail "perf script"
	PERF="--perf $TMP/perf.txt"
else
	skip_or_fail "perf record does not work here"
fi
$CHECK "$TMP/r.json" "$PROG" 0 $PERF || fail "inlined frames differ"

# collapsed: the chain, the inlined frames marked as inlined Java ones are
grep -q 'chain_outer;mix_\[i\];Step<4>::run_\[i\];Step<3>::run_\[i\]' \
	"$TMP/r.collapsed" || fail "collapsed: no chain_outer;mix_[i];Step<4>::run_[i]"
grep -q 'lambda.*_\[i\]' "$TMP/r.collapsed" || fail "collapsed: no inlined lambda"

# pprof: a pc's inlined functions are the Lines of its one Location
if command -v go > /dev/null 2>&1; then
	go tool pprof -symbolize=none -traces "$TMP/r.pb.gz" > "$TMP/traces.txt" \
		2>/dev/null || fail "go tool pprof -traces"
	grep -q 'Step<4>::run .*(inline)\|(inline).*Step<4>::run' "$TMP/traces.txt" ||
		grep -q '(inline)' "$TMP/traces.txt" || fail "pprof: no inlined Lines"
	echo "INFO: pprof -traces: $(grep -c '(inline)' "$TMP/traces.txt") inlined lines"
else
	skip_or_fail "go is not installed: pprof not read back"
fi

# report resolves again from the module files: the same stacks
"$ASGST" report -q --inline -i "$TMP/r.asgst" -o "$TMP/rep.json" || fail "report"
python3 - "$TMP/r.json" "$TMP/rep.json" <<'PY' || fail "report differs from the live decode"
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
key = lambda s: json.dumps(s, sort_keys=True)
assert sorted(map(key, a["stacks"])) == sorted(map(key, b["stacks"])), "stacks"
inl = sum(s["count"] for s in b["stacks"]
          if any(f.get("inlined") for f in s["frames"]))
assert inl > 100, inl
print("INFO: report == live: %d stacks, %d samples with inlined frames"
      % (len(b["stacks"]), inl))
PY

# stripped, its DWARF only in its debug file (.gnu_debuglink, beside it)
mkdir -p "$TMP/s"
objcopy --only-keep-debug "$PROG" "$TMP/s/inline_chain.debug"
objcopy --strip-all --add-gnu-debuglink="$TMP/s/inline_chain.debug" \
	"$PROG" "$TMP/s/inline_chain"
"$ASGST" record -q --inline -F 499 -o "$TMP/s.json" -- "$TMP/s/inline_chain" 3 \
	> /dev/null || fail "record of the stripped copy"
$CHECK "$TMP/s.json" "$PROG" 0 --module "$TMP/s/inline_chain" \
	|| fail "the stripped copy's inlined frames differ"

# Debian's python3.11, its debug file from python3.11-dbg
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip_or_fail "$PY is not installed (make deps)"
PYBID=$(readelf -n "$PY" | awk '/Build ID/ { print $3; exit }')
[ -f "/usr/lib/debug/.build-id/$(echo "$PYBID" | cut -c1-2)/$(echo "$PYBID" | cut -c3-).debug" ] ||
	skip_or_fail "python3.11-dbg is not installed (make deps)"
"$ASGST" record -q --inline --python-native -F 499 -o "$TMP/py.json" -- \
	"$PY" "$TOP/tests/workloads/python/pybusy.py" 4 \
	> /dev/null || fail "record -- python3.11"
PYPERF=""
if [ -n "$PERF" ]; then
	perf record -q -e cpu-clock -F 499 --call-graph dwarf \
		-o "$TMP/pyperf.data" -- "$PY" "$TOP/tests/workloads/python/pybusy.py" 3 > /dev/null 2>&1 \
		|| fail "perf record python3.11"
	perf script -i "$TMP/pyperf.data" > "$TMP/pyperf.txt" 2>/dev/null \
		|| fail "perf script python3.11"
	PYPERF="--perf $TMP/pyperf.txt"
fi
$CHECK "$TMP/py.json" "$PY" 0 --python $PYPERF ||
	fail "python3.11's inlined frames differ"
