#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Container labels of one recording, in its JSON and its pprof.

  container_check.py JSON RAW --id ID --in PID,... --out PID,...
                     [--only] [--java PID] [--min N]

RAW: `go tool pprof -symbolize=none -raw FILE.pb.gz` of the same recording.
--in: the host pids of the container's processes (as podman top hpid says);
--out: host processes recorded beside it (all of them busy on a CPU).
Every stack of an --in pid must carry container_id ID, no other stack may;
each --in pid needs at least --min samples, and without --only each --out pid too (they were recorded,
without the label). --only (record --container): no stack of any other
process at all. --java: that pid's stacks include decoded Java frames.
The pprof must say the same: per pid the same sample count, and the
container_id label on exactly the container's samples.

Prints MEASURE: lines; exit 1 on any mismatch.
"""
import argparse
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pprof_gotool_check import parse_raw  # noqa: E402


def pids(s):
    return {int(p) for p in s.split(",") if p}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("raw")
    ap.add_argument("--id", required=True)
    ap.add_argument("--in", dest="inside", type=pids, required=True)
    ap.add_argument("--out", dest="outside", type=pids, default=set())
    ap.add_argument("--only", action="store_true")
    ap.add_argument("--java", type=int)
    ap.add_argument("--min", type=int, default=5)
    a = ap.parse_args()
    bad = []

    doc = json.load(open(a.json))
    jcount = collections.Counter()
    labelled = collections.Counter()
    java_frames = 0
    for s in doc["stacks"]:
        pid, cid = s["pid"], s.get("container_id")
        jcount[pid] += s["count"]
        if cid is not None:
            labelled[pid] += s["count"]
        if pid in a.inside and cid != a.id:
            bad.append("JSON: pid %d (in the container) has container_id %r"
                       % (pid, cid))
        if pid not in a.inside and cid == a.id:
            bad.append("JSON: pid %d (%s, not in the container) carries the "
                       "container's id" % (pid, s["comm"]))
        if a.only and pid not in a.inside:
            bad.append("JSON: --container recorded pid %d (%s), not the "
                       "container's" % (pid, s["comm"]))
        if pid == a.java and any(f["type"] in ("java", "java_inlined")
                                 for f in s["frames"]):
            java_frames += s["count"]
    for pid in sorted(a.inside):
        if jcount[pid] < a.min:
            bad.append("JSON: container pid %d has %d samples (< %d)"
                       % (pid, jcount[pid], a.min))
    for pid in sorted(a.outside):
        if a.only and jcount[pid]:
            bad.append("JSON: host pid %d recorded by --container" % pid)
        if not a.only and jcount[pid] < a.min:
            bad.append("JSON: host pid %d has %d samples (< %d): the -a "
                       "recording missed it" % (pid, jcount[pid], a.min))
    if a.java is not None and java_frames < a.min:
        bad.append("JSON: the container's JVM %d has %d samples with Java "
                   "frames" % (a.java, java_frames))

    samples, _ = parse_raw(a.raw)
    pcount = collections.Counter()
    plabelled = collections.Counter()
    for vals, _, labels in samples:
        pid = int(labels.get("pid", "-1"))
        cid = labels.get("container_id")
        pcount[pid] += vals[0]
        if cid is not None:
            plabelled[pid] += vals[0]
        if pid in a.inside and cid != a.id:
            bad.append("pprof: pid %d (in the container) has container_id "
                       "label %r" % (pid, cid))
        if pid not in a.inside and cid == a.id:
            bad.append("pprof: pid %d (not in the container) carries the "
                       "container's id" % pid)
    if pcount != jcount:
        bad.append("pprof and JSON differ in samples per pid: %s"
                   % sorted(set(pcount.items()) ^ set(jcount.items()))[:6])

    inside = sum(jcount[p] for p in a.inside)
    total = sum(jcount.values())
    print("MEASURE: %d of %d samples in the container (%s), %d in its JVM "
          "with Java frames; host pids %s: %s samples; labelled stacks: "
          "JSON %d, pprof %d" % (
              inside, total, ",".join("%d:%d" % (p, jcount[p])
                                      for p in sorted(a.inside)),
              java_frames, sorted(a.outside),
              [jcount[p] for p in sorted(a.outside)],
              sum(labelled.values()), sum(plabelled.values())))
    for b in bad[:20]:
        print("FAIL: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
