#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Checks a real application's JVM event profile (record -e alloc,lock).

  realapp_events_check.py JSON --thread REGEX [--min-whole PCT]
      [--name NAME] [--top N]

Checked, over the stacks of the recording:
  - the top-level "events" is ["alloc", "lock"] and every stack is one of
    those events;
  - every alloc / lock stack has its class: alloc_class / lock_class a
    non-empty string, frames[0] {"type": "class"} of that class and no
    other class frame;
  - the estimates: each alloc stack's alloc_bytes > 0 and alloc_count >=
    its count (a sampled object stands for at least itself), each lock
    stack's lock_ns > 0; the alloc_bytes summed > 0;
  - the app's threads (names matching REGEX: request workers, the SQL
    engine's thread) have alloc stacks;
  - >= --min-whole % (default 99) of the alloc events of Java threads are
    whole, by realapp_check.py's rule (no error, no unknown frame, the
    outermost Java frame the thread's root).
Lock stacks are optional (no contention is not a failure).

Prints MEASURE: the whole share, the top allocation sites (the first Java
frame under the class frame, with the class) by their share of the summed
alloc_bytes, and the top lock sites by their share of lock_ns (or that there
was no contention). Exit 1 on any failure.
"""
import argparse
import collections
import json
import re
import sys

from realapp_check import JAVA, is_root, name

failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def site(s):
    """the first Java frame under the class frame"""
    for f in s["frames"][1:]:
        if f["type"] in JAVA:
            return "%s.%s" % (f.get("class") or f.get("symbol"),
                              f.get("method"))
    return "(no Java frame)"


def whole(s):
    fr = [f for f in s["frames"] if f["type"] not in ("kernel", "class")]
    if s.get("error"):
        return "error " + str(s["error"].get("name"))
    unk = [f for f in fr if f["type"] == "unknown"]
    if unk:
        return "unknown frame (%s)" % unk[0].get("reason")
    jf = [f for f in fr if f["type"] in JAVA]
    if not jf:
        return "no Java frame"
    if not is_root(jf[-1]):
        return "outermost Java frame %s" % name(jf[-1])
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--thread", required=True)
    ap.add_argument("--min-whole", type=float, default=99.0)
    ap.add_argument("--name", default="app")
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args()
    rx = re.compile(a.thread)
    with open(a.json) as fh:
        doc = json.load(fh)
    nm = a.name

    ev = doc.get("events")
    if not isinstance(ev, list) or set(ev) != {"alloc", "lock"}:
        fail("%s: JSON events %r, recorded -e alloc,lock" % (nm, ev))
    bad = collections.Counter()
    alloc, lock = [], []
    for s in doc["stacks"]:
        e = s.get("event")
        if e not in ("alloc", "lock"):
            bad["a %r stack" % e] += 1
            continue
        (alloc if e == "alloc" else lock).append(s)
        cls = s.get(e + "_class")
        fr = s["frames"]
        if not isinstance(cls, str) or not cls:
            bad["%s stack with %s_class %r" % (e, e, cls)] += 1
        if not fr or fr[0].get("type") != "class" or \
                fr[0].get("class") != cls:
            bad["%s stack whose frames[0] is %s, not the class frame of "
                "%s" % (e, ("%s %s" % (fr[0].get("type"), fr[0].get("class")))
                        if fr else None, cls)] += 1
        if any(f.get("type") == "class" for f in fr[1:]):
            bad["%s stack with a class frame below the leaf" % e] += 1
        n = s.get("count")
        if not isinstance(n, int) or n < 1:
            bad["%s stack with count %r" % (e, n)] += 1
            continue
        if e == "alloc":
            b, c = s.get("alloc_bytes"), s.get("alloc_count")
            if not isinstance(b, int) or b <= 0:
                bad["alloc stack with alloc_bytes %r" % b] += 1
            if not isinstance(c, int) or c < n:
                bad["alloc stack with alloc_count %r < count %d" %
                    (c, n)] += 1
        elif not isinstance(s.get("lock_ns"), int) or s["lock_ns"] <= 0:
            bad["lock stack with lock_ns %r" % s.get("lock_ns")] += 1
    for k, v in bad.most_common(8):
        fail("%s: %d x %s" % (nm, v, k))

    events = sum(s["count"] for s in alloc)
    abytes = sum(s.get("alloc_bytes") or 0 for s in alloc)
    aobjs = sum(s.get("alloc_count") or 0 for s in alloc)
    print("MEASURE: %s: %d alloc events in %d stacks, %.1f MB and %d "
          "objects estimated; %d lock events in %d stacks" %
          (nm, events, len(alloc), abytes / 1e6, aobjs,
           sum(s["count"] for s in lock), len(lock)))
    if abytes <= 0:
        fail("%s: alloc_bytes summed %d" % (nm, abytes))

    app = [s for s in alloc if rx.search(s.get("thread") or "")]
    napp = sum(s["count"] for s in app)
    print("MEASURE: %s: %d alloc events (%.1f %% of the bytes) in threads "
          "/%s/" % (nm, napp,
                    100.0 * sum(s["alloc_bytes"] for s in app) / abytes
                    if abytes else 0.0, a.thread))
    if not napp:
        fail("%s: no alloc stacks of threads matching /%s/ (threads: %s)" %
             (nm, a.thread, sorted({s.get("thread") for s in alloc})[:12]))

    java = [s for s in alloc if s.get("kind") == "java"]
    tot = sum(s["count"] for s in java)
    why = collections.Counter()
    for s in java:
        w = whole(s)
        if w:
            why["%s | thread %s | site %s" %
                (w, re.sub(r"\d+", "N", s.get("thread") or "-"),
                 site(s))] += s["count"]
    ok = tot - sum(why.values())
    pct = 100.0 * ok / tot if tot else 0.0
    print("MEASURE: %s: alloc whole %.2f %% of %d events of Java threads" %
          (nm, pct, tot))
    for k, v in why.most_common(6):
        print("INFO: %s: alloc not whole: %d x %s" % (nm, v, k))
    if not tot:
        fail("%s: no alloc stacks of Java threads" % nm)
    elif pct < a.min_whole:
        fail("%s: alloc whole %.2f %% < %.2f %%" % (nm, pct, a.min_whole))

    sites = collections.Counter()
    for s in alloc:
        sites[(site(s), s.get("alloc_class"))] += s.get("alloc_bytes") or 0
    for i, ((m, c), b) in enumerate(sites.most_common(a.top)):
        print("MEASURE: %s: alloc site %2d: %5.1f %% %s [%s]" %
              (nm, i + 1, 100.0 * b / abytes if abytes else 0.0, m, c))

    lns = sum(s.get("lock_ns") or 0 for s in lock)
    if not lock:
        print("INFO: %s: no contended monitor entered" % nm)
    lsites = collections.Counter()
    for s in lock:
        lsites[(site(s), s.get("lock_class"))] += s.get("lock_ns") or 0
    for i, ((m, c), t) in enumerate(lsites.most_common(a.top)):
        print("MEASURE: %s: lock site %2d: %5.1f %% of %.1f ms %s [%s]" %
              (nm, i + 1, 100.0 * t / lns if lns else 0.0, lns / 1e6, m, c))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
