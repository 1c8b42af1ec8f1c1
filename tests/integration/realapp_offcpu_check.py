#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Checks sampled off-CPU stacks of a real application against every
switch's, seen by two recorders at once (realapp_lib.sh, realapp_offcpu).

  realapp_offcpu_check.py JSON --full JSON --thread REGEX
      --summary LOG --full-summary LOG [--tol POINTS] [--frames N]
      [--name NAME]

JSON: record -e cpu,offcpu with the default off-CPU sampling; --full:
record -e cpu,offcpu --offcpu-sample 1, its sampler attached first, of the
same JVM over the same load (both attached before the load starts and
stopped together after it ends). The server threads are those whose name
matches REGEX; a thread's pool is its name less its trailing number
(http-nio-127.0.0.1-PORT-exec-3 is in http-nio-127.0.0.1-PORT-exec-).

Whether one recording is the truth for the other (exit 3 when not, the
shares then not compared):
  - the full recording took every stack (--stats offcpu_every_mean 1.0)
    and lost at most 1 % of them;
  - the server threads' off-CPU time and switch-outs in the sampled
    recording within 97-103 % of the full one's: both sum the same
    intervals, but for what a recorder's program at a switch does for
    the other's (the full one's stack taken of a server thread leaving
    the CPU lies in the interval the sampled one ends there) and what
    began before the second recorder attached.
Checked (exit 1):
  - both recordings have cpu and off-CPU stacks of the server threads;
  - the sampled recording took fewer stacks than switch-outs (--stats
    offcpu_every_mean > 1: else the comparison says nothing);
  - per group of the server threads' off-CPU stacks, by pool and the
    innermost --frames (default 3) Java frames: every group with >= 1 %
    of their off-CPU time (offcpu_ns over the server threads' total) in
    the full recording has its share in the sampled one within --tol
    (default 5) percentage points. The difference is also printed
    relative to the full share.
Prints MEASURE lines: the groups, their shares and differences.
"""
import argparse
import collections
import json
import re
import sys

from realapp_check import JAVA

failures = []
unmet = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def unmet_setup(msg):
    print("UNMET: " + msg)
    unmet.append(msg)


def stats(path):
    with open(path) as fh:
        txt = fh.read()
    out = {}
    for k in ("offcpu_switches", "offcpu_stacks", "offcpu_every_mean"):
        m = re.findall(r"\b%s=([0-9.]+)" % k, txt)
        if m:
            out[k] = float(m[-1])
    return out


def pool(thread):
    return re.sub(r"\d+$", "", thread or "")


def top_java(s, n):
    fr = [f for f in s["frames"] if f["type"] in JAVA]
    if not fr:
        return ("(no Java frame)",)
    return tuple("%s.%s" % (f.get("class") or f.get("symbol"),
                            f.get("method")) for f in fr[:n])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--full", required=True)
    ap.add_argument("--thread", required=True)
    ap.add_argument("--summary", required=True)
    ap.add_argument("--full-summary", required=True)
    ap.add_argument("--tol", type=float, default=5.0)
    ap.add_argument("--frames", type=int, default=3)
    ap.add_argument("--name", default="app")
    a = ap.parse_args()
    rx = re.compile(a.thread)
    with open(a.json) as fh:
        doc = json.load(fh)
    with open(a.full) as fh:
        full = json.load(fh)
    ss, sf = stats(a.summary), stats(a.full_summary)
    if "offcpu_every_mean" not in ss or "offcpu_every_mean" not in sf:
        fail("%s: no offcpu_every_mean in the --stats lines" % a.name)
        return 1
    print("MEASURE: %s: switch-outs seen %d sampled, %d full; N %.1f on "
          "average sampled (%d stacks), %.1f full (%d stacks, %d lost)" %
          (a.name, ss.get("offcpu_switches", 0),
           sf.get("offcpu_switches", 0), ss["offcpu_every_mean"],
           ss.get("offcpu_stacks", 0), sf["offcpu_every_mean"],
           sf.get("offcpu_stacks", 0), full.get("offcpu_lost", 0)))
    if sf["offcpu_every_mean"] != 1.0:
        unmet_setup("%s: the full recording's N is %.1f, not 1" %
                    (a.name, sf["offcpu_every_mean"]))
    flost = full.get("offcpu_lost", 0)
    if flost > 0.01 * max(1, full.get("offcpu_samples", 0)):
        unmet_setup("%s: the full recording lost %d of %d stacks" %
                    (a.name, flost, full.get("offcpu_samples", 0)))
    if ss["offcpu_every_mean"] <= 1.0:
        fail("%s: the sampled recording took every switch's stack (N "
             "%.1f): nothing to compare" % (a.name, ss["offcpu_every_mean"]))

    def server(d, ev):
        return [s for s in d["stacks"] if s.get("event") == ev and
                rx.search(s.get("thread") or "")]
    ms, mf = server(doc, "offcpu"), server(full, "offcpu")
    for d, n in ((doc, "sampled"), (full, "full")):
        if not server(d, "cpu"):
            fail("%s: no cpu stacks of the server threads (%s)" %
                 (a.name, n))
    if not ms or not mf:
        fail("%s: no off-CPU stacks of the server threads (sampled %d, "
             "full %d)" % (a.name, len(ms), len(mf)))
        return 1
    ns, nf = sum(s["offcpu_ns"] for s in ms), sum(s["offcpu_ns"] for s in mf)
    cs, cf = sum(s["count"] for s in ms), sum(s["count"] for s in mf)
    threads = sorted({s["thread"] for s in mf})
    print("MEASURE: %s: server threads (%d, pools %s): off-CPU %.3f s "
          "sampled = %.1f %% of %.3f s full; %d switch-outs = %.1f %% of %d"
          % (a.name, len(threads), sorted({pool(t) for t in threads}),
             ns / 1e9, 100 * ns / nf, nf / 1e9, cs, 100 * cs / cf, cf))
    if not 0.97 <= ns / nf <= 1.03:
        unmet_setup("%s: the server threads' off-CPU time %.1f %% of the "
                    "full recording's: not the same intervals" %
                    (a.name, 100 * ns / nf))
    if not 0.97 <= cs / cf <= 1.03:
        unmet_setup("%s: the server threads' switch-outs %d, the full "
                    "recording %d" % (a.name, cs, cf))
    if unmet:
        print("INFO: %s: one recording is not the truth for the other: "
              "shares not compared" % a.name)
        return 1 if failures else 3
    gs, gf = collections.Counter(), collections.Counter()
    for s in ms:
        gs[(pool(s["thread"]),) + top_java(s, a.frames)] += s["offcpu_ns"]
    for s in mf:
        gf[(pool(s["thread"]),) + top_java(s, a.frames)] += s["offcpu_ns"]
    worst, checked = 0.0, 0
    for k in sorted(gf, key=lambda k: -gf[k]):
        shf, sh = gf[k] / nf, gs[k] / ns
        if shf < 0.01:
            continue
        checked += 1
        d = sh - shf
        worst = max(worst, abs(d))
        label = "%s %s" % (k[0], " <- ".join(k[1:]))
        print("MEASURE: %s: %s: share %.2f %% sampled, %.2f %% full "
              "(%+.2f points, %+.1f %% relative)" %
              (a.name, label, 100 * sh, 100 * shf, 100 * d, 100 * d / shf))
        if abs(d) > a.tol / 100:
            fail("%s: %s: share %.2f %% sampled, %.2f %% full: %.2f points "
                 "apart (> %g)" % (a.name, label, 100 * sh, 100 * shf,
                                   100 * abs(d), a.tol))
    print("MEASURE: %s: largest share difference %.2f points (%d groups of "
          ">= 1 %% in the full recording; tolerance %g)" %
          (a.name, 100 * worst, checked, a.tol))
    if not checked:
        fail("%s: no group of >= 1 %%" % a.name)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
