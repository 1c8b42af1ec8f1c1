#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Checks that real applications' Java stacks decode whole.

  realapp_check.py JSON --thread REGEX [--min PCT] [--name NAME]

A stack of a thread whose name matches REGEX is whole when the walk had no
error, no frame is `unknown`, and its outermost Java frame is the thread's
root: java.lang.Thread.run / runWith (or the JDK's other thread entries)
or a static main(String[]). Frames the walk stepped over without seeing
them (a `non_java` frame at pc 0: native code without frame pointers,
resumed at the thread's frame anchor) are allowed and counted.

With --thread-method PREFIX=CLASS (a workload whose threads PREFIX<NAME>
run CLASS.<NAME>, a trailing number dropped: sk-monitor2 runs
StubKinds.monitor), a stack without that frame is not whole either: the
walk skipped frames (a cross-check that needs no second profiler).

Prints MEASURE: the whole share and the count; INFO: the failures by error
and frame (the top user frame, and the frame the walk stopped after).
Exit 0 when the whole share >= --min.
"""
import argparse
import collections
import json
import re
import sys

JAVA = ("java", "java_inlined", "java_native")
ROOTS = {
    ("java.lang.Thread", "run"),
    ("java.lang.Thread", "runWith"),
    ("java.lang.VirtualThread", "run"),
    ("jdk.internal.misc.InnocuousThread", "run"),
}


def name(f):
    if f is None:
        return "-"
    t = f["type"]
    if t in JAVA:
        if f.get("class") is None and f.get("symbol"):
            return "%s [%s]" % (f["symbol"], t)
        return "%s.%s [%s]" % (f.get("class"), f.get("method"), t)
    if t == "unknown":
        return "unknown"
    if t == "non_java" and f.get("pc") == "0x0":
        return "(gap)"
    return "%s [%s]" % (f.get("symbol") or f.get("pc"), t)


def is_root(f):
    if (f.get("class"), f.get("method")) in ROOTS:
        return True
    return f.get("method") == "main" and \
        f.get("signature") == "([Ljava/lang/String;)V"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--thread", required=True)
    ap.add_argument("--min", type=float, default=0.0)
    ap.add_argument("--name", default="app")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--thread-method", default=None)
    args = ap.parse_args()
    rx = re.compile(args.thread)
    tm_prefix, tm_class = (args.thread_method.split("=", 1)
                           if args.thread_method else (None, None))
    with open(args.json) as fh:
        prof = json.load(fh)

    total = whole = gaps = 0
    depth = []
    bad = collections.Counter()
    for st in prof["stacks"]:
        if st.get("kind") != "java" or not rx.search(st.get("thread") or ""):
            continue
        n = st["count"]
        total += n
        fr = [f for f in st["frames"] if f["type"] != "kernel"]
        jf = [f for f in fr if f["type"] in JAVA]
        unk = [i for i, f in enumerate(fr) if f["type"] == "unknown"]
        err = st.get("error")
        missing = False
        thread = st.get("thread") or ""
        if tm_prefix and thread.startswith(tm_prefix):
            want = re.sub(r"\d+$", "", thread[len(tm_prefix):])
            missing = not any(f.get("class") == tm_class and
                              f.get("method") == want for f in jf)
        if not err and not unk and jf and is_root(jf[-1]) and not missing:
            whole += n
            depth += [len(jf)] * n
            if any(f["type"] == "non_java" and f.get("pc") == "0x0"
                   for f in fr):
                gaps += n
            continue
        top = fr[0] if fr else None
        if unk:
            stop = fr[unk[0] - 1] if unk[0] > 0 else None
            reason = fr[unk[0]].get("reason")
        elif missing and jf and is_root(jf[-1]):
            stop = jf[0]
            reason = "frames skipped: no %s.%s frame" % (tm_class, want)
        else:
            stop = jf[-1] if jf else None
            reason = "outermost Java frame is not a thread root"
        key = "%s | top %s | stopped after %s | %s" % (
            err["name"] if err else
            "frames skipped" if missing and not unk else "no error",
            name(top), name(stop),
            reason)
        bad[key] += n
    if not total:
        print("FAIL: %s: no Java samples of threads matching %r" %
              (args.name, args.thread))
        return 1
    pct = 100.0 * whole / total
    depth.sort()
    med = depth[len(depth) // 2] if depth else 0
    print("MEASURE: %s: whole %.2f %% of %d samples (threads /%s/), %d "
          "through a native gap; Java depth median %d, max %d" %
          (args.name, pct, total, args.thread, gaps, med,
           depth[-1] if depth else 0))
    errs = collections.Counter()
    for k, v in bad.items():
        errs[k.split(" | ")[0]] += v
    for k, v in errs.most_common():
        print("MEASURE: %s: %s %d (%.2f %%)" % (args.name, k, v,
                                                100.0 * v / total))
    for k, v in bad.most_common(args.top):
        print("INFO: %s: not whole: %d x %s" % (args.name, v, k))
    if pct < args.min:
        print("FAIL: %s: whole %.2f %% < %.2f %%" % (args.name, pct,
                                                      args.min))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
