#!/usr/bin/env python3
"""Checks on the Python frames of an asgst-bpf JSON profile (docs/formats.md).

  python_check.py FILE --pid PID --script PY chain [--self SELF.json]
      tests/workloads/python/pychain.py's busy (main) thread: every sample
      holds its Python chain whole and in order (<module>, main,
      Runner.run, recurse x4, consume, its lambda, then gen, spin or
      squeeze, or a prefix of it), contiguous (no interpreter C frame
      between two Python frames), each frame's file the script and its
      line inside its function (an outer frame's on a call); the zlib C
      frames under squeeze. With --self: the distribution of the
      innermost Python function against the program's own view
      (sys._current_frames), total variation distance <= --tvd. --frame-file:
      the script's path in the frames when it is not PY (a container's).
  python_check.py FILE --pid PID --script PY threads --threads OUT
      pythreads.py: each thread (named in OUT, "thread NAME TID") holds
      only its own functions (work_NAME, step_NAME, burn, threading's).
Prints MEASURE: lines; exit 1 when a check fails.
"""
import argparse
import ast
import collections
import json
import sys


def functions(script):
    """qualname -> (first line, last line, lines holding a call)"""
    tree = ast.parse(open(script).read())
    out = {}

    def visit(node, prefix):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.ClassDef, ast.Lambda)):
                name = "<lambda>" if isinstance(ch, ast.Lambda) else ch.name
                q = prefix + name
                calls = {c.lineno for c in ast.walk(ch)
                         if isinstance(c, ast.Call)}
                if not isinstance(ch, ast.ClassDef):
                    out.setdefault(q, []).append(
                        (ch.lineno, ch.end_lineno, calls))
                sub = q + "." if isinstance(ch, ast.ClassDef) else \
                    q + ".<locals>."
                visit(ch, sub)
            else:
                visit(ch, prefix)
    visit(tree, "")
    mod_calls = {c.lineno for c in ast.walk(tree) if isinstance(c, ast.Call)}
    out["<module>"] = [(1, 10 ** 9, mod_calls)]
    return out


def line_ok(funcs, f, inner):
    """f's line lies in its function; an outer frame's is on a call"""
    for lo, hi, calls in funcs.get(f["function"], []):
        if lo <= f["line"] <= hi and (inner or f["line"] in calls):
            return True
    return False


def samples(doc, pid, tid=None):
    for s in doc["stacks"]:
        if s["pid"] == pid and (tid is None or s["tid"] == tid) and \
                s["event"] == "cpu":
            yield s


def py_frames(s):
    return [f for f in s["frames"] if f["type"] == "python"]


def contiguous(s):
    """no non-Python frame between two Python frames"""
    idx = [i for i, f in enumerate(s["frames"]) if f["type"] == "python"]
    return not idx or idx[-1] - idx[0] + 1 == len(idx)


HEAD = ["<module>", "main", "Runner.run", "recurse", "recurse", "recurse",
        "recurse", "consume", "consume.<locals>.<lambda>"]
TAILS = [["gen", "spin"], ["squeeze"]]


def chain_ok(names):
    """root first: a prefix of HEAD + one of TAILS, at least to Runner.run"""
    if len(names) < 3:
        return False
    return any(names == (HEAD + t)[:len(names)] for t in TAILS)


def check_chain(doc, a):
    funcs = functions(a.script)
    total = whole = named = frames = 0
    leaf = collections.Counter()
    squeeze = squeeze_c = 0
    bad = collections.Counter()
    for s in samples(doc, a.pid, a.pid):
        n = s["count"]
        total += n
        py = py_frames(s)
        names = [f["function"] for f in reversed(py)]
        lines_good = all(f["file"] == (a.frame_file or a.script) and
                         line_ok(funcs, f, i == 0)
                         for i, f in enumerate(py))
        frames += n * len(py)
        named += n * sum(1 for f in py if f["function"])
        if chain_ok(names) and contiguous(s) and lines_good:
            whole += n
        else:
            bad[";".join("%s:%s" % (f["function"], f["line"])
                         for f in reversed(py))] += n
        if py:
            leaf[py[0]["function"]] += n
        if py and py[0]["function"] == "squeeze":
            squeeze += n
            under = s["frames"][:s["frames"].index(py[0])]
            if any(f.get("symbol") and ("compress" in f["symbol"] or
                                        "deflate" in f["symbol"])
                   for f in under):
                squeeze_c += n
    if not total:
        print("FAIL: no samples of the busy thread")
        return 1
    pct = 100.0 * whole / total
    print("MEASURE: %s: Python chain whole, names and lines right in "
          "%.2f %% of %d samples" % (a.label, pct, total))
    for k, v in bad.most_common(3):
        print("INFO: not whole (%d): %s" % (v, k))
    rc = 0
    if total < a.min_samples:
        print("FAIL: %d samples, wanted %d" % (total, a.min_samples))
        rc = 1
    if pct < a.min * 100:
        print("FAIL: whole in %.2f %% < %.0f %%" % (pct, a.min * 100))
        rc = 1
    zpct = 100.0 * squeeze_c / squeeze if squeeze else 0
    print("MEASURE: %s: zlib's C frames under squeeze in %.1f %% of %d "
          "samples" % (a.label, zpct, squeeze))
    if squeeze < 10 or zpct < 90:
        print("FAIL: zlib.compress not seen under squeeze")
        rc = 1
    if a.self:
        view = json.load(open(a.self))
        looks = sum(view["looks"].values())
        own = view["cpu_ns"]  # CPU time by the function it saw
        ot, lt = sum(own.values()), sum(leaf.values())
        keys = set(own) | set(leaf)
        tvd = 0.5 * sum(abs(own.get(k, 0) / ot - leaf.get(k, 0) / lt)
                        for k in keys)
        print("MEASURE: %s: leaf functions: TVD %.4f against the "
              "program's own view (%d looks; ours %s, its %s)" %
              (a.label, tvd, looks, dict(leaf.most_common(4)),
               dict(collections.Counter(own).most_common(4))))
        if tvd > a.tvd:
            print("FAIL: TVD %.4f > %.2f" % (tvd, a.tvd))
            rc = 1
    return rc


def check_threads(doc, a):
    tids = {}
    for line in open(a.threads):
        p = line.split()
        if len(p) == 3 and p[0] == "thread":
            tids[int(p[2])] = p[1]
    common = {"burn", "Thread.run", "Thread._bootstrap_inner",
              "Thread._bootstrap"}
    rc = 0
    if len(tids) != 3:
        print("FAIL: threads not named: %s" % tids)
        return 1
    for tid, name in sorted(tids.items()):
        own = {"work_" + name, "step_" + name} | common
        total = mine = 0
        for s in samples(doc, a.pid, tid):
            n = s["count"]
            total += n
            fs = {f["function"] for f in py_frames(s)}
            if fs and fs <= own and "work_" + name in fs and contiguous(s):
                mine += n
        pct = 100.0 * mine / total if total else 0
        print("MEASURE: %s: thread %s: its own Python frames in %.2f %% of "
              "%d samples" % (a.label, name, pct, total))
        if total < a.min_samples or pct < a.min * 100:
            print("FAIL: thread %s" % name)
            rc = 1
    return rc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("mode", choices=("chain", "threads"))
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--script", required=True)
    ap.add_argument("--self")
    ap.add_argument("--frame-file", help="the script's path as the frames name "
                    "it (inside a container), when not --script")
    ap.add_argument("--threads")
    ap.add_argument("--label", default="python")
    ap.add_argument("--min", type=float, default=0.99)
    ap.add_argument("--tvd", type=float, default=0.05)
    ap.add_argument("--min-samples", type=int, default=100)
    a = ap.parse_args()
    doc = json.load(open(a.file))
    rc = check_chain(doc, a) if a.mode == "chain" else check_threads(doc, a)
    sys.exit(rc)


if __name__ == "__main__":
    main()
