#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Checks of test_codemap_churn.sh.

whole JSON... --pid P --min PCT: the samples of P's thread "main" (CPU samples
  of a Java thread) whose stack is whole and named: no walk error, no
  unknown frame, every Java frame with its class and method, and the
  oldest Java frame CodeChurn.main. Prints the share and the most common
  failures; exit 1 below --min.
series FILE --max-map MIB --max-rss-growth MIB: FILE has lines
  "SECONDS MAP_BYTES RSS_KIB" taken while recording. Prints the map size
  over time; over the last third of the run the map must stay under
  --max-map and may not outgrow the middle third's peak by more than one
  compaction's worth, and the recorder's RSS may not grow by more than
  --max-rss-growth over the middle third's peak.
"""
import argparse
import collections
import json
import sys


def frame_name(f):
    t = f.get("type")
    if t in ("java", "java_inlined", "java_native"):
        return "%s.%s" % (f.get("class"), f.get("method"))
    if t == "unknown":
        return "unknown@%s(%s)" % (f.get("pc"), f.get("reason"))
    return f.get("symbol") or f.get("pc") or t


def stacks(paths):
    for p in paths:
        for s in json.load(open(p))["stacks"]:
            yield s


def whole(args):
    total = good = 0
    bad = collections.Counter()
    for s in stacks(args.json):
        if s["pid"] != args.pid or s.get("thread") != "main":
            continue
        if s.get("kind") != "java" or s.get("event", "cpu") != "cpu":
            continue
        n = s["count"]
        total += n
        fr = s["frames"]
        java = [f for f in fr if f["type"] in
                ("java", "java_inlined", "java_native")]
        why = None
        if s.get("error"):
            why = s["error"]["name"]
        elif any(f["type"] == "unknown" for f in fr):
            why = "unknown frame"
        elif any(not f.get("class") or not f.get("method") for f in java
                 if f.get("symbol") != "nep_invoker_blob"):
            why = "unnamed Java frame"
        elif not java or frame_name(java[-1]) != "CodeChurn.main":
            why = "does not end at CodeChurn.main"
        if why:
            top = next((frame_name(f) for f in fr if f["type"] != "kernel"),
                       "?")
            bad["%s (top %s)" % (why, top)] += n
        else:
            good += n
    if not total:
        print("FAIL: no samples of the main thread of pid %d" % args.pid)
        return 1
    pct = 100.0 * good / total
    print("INFO: main thread: %d samples, whole and named %.2f %%" %
          (total, pct))
    for k, v in bad.most_common(6):
        print("INFO:   %d x %s" % (v, k))
    if pct < args.min:
        print("FAIL: %.2f %% whole, want >= %.1f %%" % (pct, args.min))
        return 1
    return 0


def series(args):
    rows = []
    for line in open(args.file):
        p = line.split()
        if len(p) == 3:
            rows.append((float(p[0]), int(p[1]), int(p[2])))
    if len(rows) < 6:
        print("FAIL: only %d points in %s" % (len(rows), args.file))
        return 1
    step = max(1, len(rows) // 12)
    print("INFO: map size over time (s: MiB, recorder RSS MiB):")
    for t, m, r in rows[::step] + [rows[-1]]:
        print("INFO:   %6.0f: %6.2f  %7.1f" % (t, m / 2**20, r / 1024.0))
    third = len(rows) // 3
    mid, last = rows[third:2 * third], rows[2 * third:]
    mid_map = max(m for _, m, _ in mid)
    last_map = max(m for _, m, _ in last)
    mid_rss = max(r for _, _, r in mid)
    last_rss = max(r for _, _, r in last)
    print("INFO: map peak %.2f MiB in the middle third, %.2f MiB in the "
          "last; recorder RSS peak %.1f -> %.1f MiB" %
          (mid_map / 2**20, last_map / 2**20, mid_rss / 1024.0,
           last_rss / 1024.0))
    rc = 0
    if last_map > args.max_map * 2**20:
        print("FAIL: map %.2f MiB at steady state, want <= %d MiB" %
              (last_map / 2**20, args.max_map))
        rc = 1
    # a compaction halves the map: its peak may differ by one sawtooth
    if last_map > mid_map * 1.5 + 2**20:
        print("FAIL: the map grows: %.2f -> %.2f MiB" %
              (mid_map / 2**20, last_map / 2**20))
        rc = 1
    if last_rss - mid_rss > args.max_rss_growth * 1024:
        print("FAIL: recorder RSS grows by %.1f MiB, want <= %d" %
              ((last_rss - mid_rss) / 1024.0, args.max_rss_growth))
        rc = 1
    return rc


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("whole")
    w.add_argument("json", nargs="+")
    w.add_argument("--pid", type=int, required=True)
    w.add_argument("--min", type=float, default=99.0)
    s = sub.add_parser("series")
    s.add_argument("file")
    s.add_argument("--max-map", type=int, default=16)
    s.add_argument("--max-rss-growth", type=int, default=4)
    a = ap.parse_args()
    return whole(a) if a.cmd == "whole" else series(a)


if __name__ == "__main__":
    sys.exit(main())
