#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Compares asgst-bpf's pprof, as `go tool pprof` reads it, with the JSON of
the same recording, stack by stack and frame for frame.

  pprof_gotool_check.py JSON RAW TRACES [--thread NAME] [--min-shared N]

RAW: `go tool pprof -symbolize=none -raw FILE.pb.gz` (the profile exactly as
encoded: every Location's Lines, every Sample's location ids and labels).
Every JSON stack must be a pprof sample with the same labels, the same
frames in the same order (function name and line, 0 when unknown) and the
same count; pprof merges samples whose locations and labels are equal, so
JSON stacks that differ only in what pprof does not carry (bci, comp level,
pcs) are summed first.

TRACES: `go tool pprof -sample_index=samples -traces FILE.pb.gz` (what a
pprof user sees, symbolized as pprof does by default): the Java frames of
every sample must be the JSON's, in order, with "(inline)" exactly on the
frames inlined into the next one.

--thread: the thread whose JIT-compiled chain is measured: samples, how
many hold the whole chain, and how many distinct inline chains share their
outermost compiled method with another (what made pprof mix them up);
--min-shared: fail unless at least that many such chains were recorded.

Prints MEASURE: lines; exit 1 on any mismatch.
"""
import argparse
import collections
import json
import os
import re
import sys

JAVA_TYPES = ("java", "java_inlined", "java_native")
LABEL_KEYS = ("pid", "tid", "kind", "comm", "thread", "state", "error",
              "virtual_thread", "pinned")

# `go tool pprof -raw`: "   12: 0x0 [M=3 ][[F] ]Name File:Line s=Start[(SystemName)]"
LOC_RE = re.compile(r"^\s*(\d+): (0x[0-9a-f]+) (?:M=\d+ )?(?:\[F\] )?(.*)$")
# a file name may hold spaces where CPython makes one up
# ("<frozen importlib._bootstrap>")
LINE_RE = re.compile(r"^(.*?) (<[^<>]*>|\S*):(-?\d+) s=(-?\d+)(?:\((.*)\))?$")
LABEL_RE = re.compile(r"(\w+):\[(.*?)\](?= \w+:\[|$)")


ADDRS = {}	# location id -> address, filled by parse_raw


def parse_raw(path):
    """[(values, [location ids], {label: value})], {id: [(name, line)]}"""
    samples, locs = [], {}
    section = cur = loc = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line in ("Samples:", "Locations", "Mappings"):
                section = line
                continue
            if section == "Samples:":
                m = re.match(r"^((?:\s+-?\d+)+): ?([\d ]*)$", line)
                if m:
                    cur = ([int(v) for v in m.group(1).split()],
                           [int(v) for v in m.group(2).split()], {})
                    samples.append(cur)
                elif cur is not None and line.startswith(" " * 16):
                    cur[2].update(LABEL_RE.findall(line.strip()))
            elif section == "Locations":
                m = LOC_RE.match(line)
                if m:
                    loc = int(m.group(1))
                    locs[loc] = []
                    ADDRS[loc] = int(m.group(2), 16)
                    rest = m.group(3)
                else:
                    rest = line.strip()
                if not rest:
                    continue
                lm = LINE_RE.match(rest)
                if not lm or loc is None:
                    raise SystemExit("FAIL: cannot parse pprof location: %r" % line)
                locs[loc].append((lm.group(1), int(lm.group(3))))
    return samples, locs


def parse_traces(path):
    """[(count, {label: value}, [(name, inline)])] from pprof -traces"""
    traces, cur = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("-----------+"):
                cur = {"labels": {}, "count": None, "frames": []}
                traces.append(cur)
                continue
            if cur is None or not line.strip():
                continue
            m = re.match(r"^\s*(\w+):  (.*)$", line)
            if cur["count"] is None and m:
                cur["labels"][m.group(1)] = m.group(2)
                continue
            m = re.match(r"^\s*(\d+)   (.*)$", line)
            if cur["count"] is None and m:
                cur["count"] = int(m.group(1))
                name = m.group(2)
            elif cur["count"] is not None and line.startswith(" " * 13):
                name = line[13:]
            else:
                continue
            inline = name.endswith(" (inline)")
            if inline:
                name = name[:-len(" (inline)")]
            cur["frames"].append((name, inline))
    return [(t["count"], t["labels"], t["frames"]) for t in traces
            if t["count"] is not None]


def java_name(fr):
    m = fr.get("method") or fr.get("symbol") or "[unknown]"
    return "%s.%s" % (fr["class"], m) if fr.get("class") else m


def frame_of(fr):
    """(name, line) of a JSON frame in our pprof (docs/formats.md)"""
    t = fr["type"]
    if t in JAVA_TYPES:
        line = fr.get("line", -1)
        return (java_name(fr), line if line > 0 else 0)
    if t == "kernel":
        return (fr.get("symbol") or fr.get("pc"), 0)
    if t == "python":
        # a Function by its qualified name, the Line its line
        line = fr.get("line", -1)
        return (fr.get("function") or "[unknown]", line if line > 0 else 0)
    if t == "non_java":
        # a line where the module's DWARF gave one (docs/formats.md)
        if fr.get("symbol"):
            return (fr["symbol"], fr.get("line", 0))
        if fr.get("module"):
            return ("%s+%s" % (os.path.basename(fr["module"]), fr["offset"]),
                    fr.get("line", 0))
        return (fr["pc"], fr.get("line", 0))
    r = fr.get("reason")
    return ("[unknown: %s]" % r if r else "[unknown]", 0)


def labels_of(s):
    lb = {"pid": str(s["pid"]), "tid": str(s["tid"]), "kind": s["kind"],
          "comm": s["comm"] or "[unknown]",
          "thread": s["thread"] or s["comm"] or "[unknown]"}
    if s["kind"] == "java":
        lb["state"] = s.get("state", "unknown")
    if s.get("error"):
        lb["error"] = s["error"]["name"]
    if s.get("virtual_thread"):
        lb["virtual_thread"] = "true"
    if s.get("pinned"):
        lb["pinned"] = "true"
    return lb


def lkey(labels):
    return tuple((k, labels.get(k)) for k in LABEL_KEYS)


def java_view(frames):
    """the Java frames as -traces shows them: inlined into the next frame?"""
    out = []
    for i, fr in enumerate(frames):
        if fr["type"] not in JAVA_TYPES:
            continue
        nxt = frames[i + 1]["type"] if i + 1 < len(frames) else None
        out.append((java_name(fr), fr["type"] == "java_inlined" and
                    nxt in ("java", "java_inlined")))
    return tuple(out)


def runs(frames):
    """the inline chains of a stack: (names..., outermost compiled method)"""
    out, cur = [], []
    for fr in frames:
        if fr["type"] == "java_inlined":
            cur.append(java_name(fr))
        elif fr["type"] == "java" and cur:
            out.append(tuple(cur + [java_name(fr)]))
            cur = []
        else:
            cur = []
    return out


def report(what, want, got):
    bad = [k for k in set(want) | set(got) if want.get(k, 0) != got.get(k, 0)]
    for k in sorted(bad, key=repr)[:3]:
        print("INFO: %s mismatch: json %d, pprof %d: %s" % (
            what, want.get(k, 0), got.get(k, 0),
            ";".join("%s:%s" % f for f in k[1])[:1500]))
    # JSON samples whose stack the pprof does not have
    return len(bad), sum(max(0, want.get(k, 0) - got.get(k, 0)) for k in bad)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("raw")
    ap.add_argument("traces")
    ap.add_argument("--thread", default=None)
    ap.add_argument("--min-shared", type=int, default=0)
    a = ap.parse_args()
    doc = json.load(open(a.json, encoding="utf-8"))
    samples, locs = parse_raw(a.raw)
    rc = 0

    # -raw: every frame of every stack
    want, got = collections.Counter(), collections.Counter()
    want_frames = got_frames = 0
    for s in doc["stacks"]:
        want[(lkey(labels_of(s)), tuple(frame_of(f) for f in s["frames"]))] += s["count"]
        want_frames += s["count"] * len(s["frames"])
    for vals, ids, labels in samples:
        frames = []
        for i in ids:
            if i not in locs:
                print("FAIL: sample refers to location %d, not in the profile" % i)
                return 1
            frames.extend(locs[i])
        got[(lkey(labels), tuple(frames))] += vals[0]
        got_frames += vals[0] * len(frames)
    bad, bad_n = report("-raw", want, got)

    # compiled Java frames: the JSON's code address is the address of a
    # pprof Location whose lines hold that frame
    by_addr = collections.defaultdict(set)
    for loc, frames in locs.items():
        if ADDRS.get(loc):
            by_addr[ADDRS[loc]].update(frames)
    with_pc = missing = compiled = 0
    for s in doc["stacks"]:
        for f in s["frames"]:
            if f["type"] not in ("java", "java_inlined"):
                continue
            if f.get("comp_level", -1) > 0:
                compiled += s["count"]
            if "pc" not in f:
                continue
            with_pc += s["count"]
            if frame_of(f) not in by_addr.get(int(f["pc"], 16), ()):
                missing += s["count"]
    print("MEASURE: pprof_addresses compiled_java_frames=%d with_pc=%d "
          "not_at_their_address=%d java_locations_with_address=%d" %
          (compiled, with_pc, missing, len(by_addr)))
    if missing or (compiled and not with_pc):
        print("FAIL: compiled Java frames without their code address in the pprof")
        rc = 1
    print("MEASURE: pprof_raw stacks=%d samples json=%d pprof=%d "
          "frames json=%d pprof=%d" % (len(want), sum(want.values()),
                                       sum(got.values()), want_frames, got_frames))
    print("MEASURE: pprof_raw mismatched_stacks=%d mismatched_samples=%d" %
          (bad, bad_n))
    if bad or sum(want.values()) != sum(got.values()):
        rc = 1

    # -traces: the Java frames as pprof shows them, inlining marked
    jnames = {java_name(f) for s in doc["stacks"] for f in s["frames"]
              if f["type"] in JAVA_TYPES}
    want, got = collections.Counter(), collections.Counter()
    for s in doc["stacks"]:
        want[(lkey(labels_of(s)), java_view(s["frames"]))] += s["count"]
    traces = parse_traces(a.traces)
    for count, labels, frames in traces:
        got[(lkey(labels), tuple(f for f in frames if f[0] in jnames))] += count
    bad, bad_n = report("-traces", want, got)
    print("MEASURE: pprof_traces stacks=%d samples json=%d pprof=%d "
          "java_frames=%d" % (len(want), sum(want.values()), sum(got.values()),
                              sum(n * len(k[1]) for k, n in want.items())))
    print("MEASURE: pprof_traces mismatched_stacks=%d mismatched_samples=%d" %
          (bad, bad_n))
    if bad or sum(want.values()) != sum(got.values()):
        rc = 1

    if a.thread:
        th = [s for s in doc["stacks"] if s["thread"] == a.thread]
        n = sum(s["count"] for s in th)
        deepest = max((len(java_view(s["frames"])) for s in th), default=0)
        full = sum(s["count"] for s in th if len(java_view(s["frames"])) == deepest)
        # what the pprof of each stack holds, by the -raw samples of the thread
        pfull = sum(vals[0] for vals, ids, labels in samples
                    if labels.get("thread") == a.thread and
                    sum(1 for i in ids for ln in locs[i] if ln[0] in jnames) == deepest)
        chains = {r for s in th for r in runs(s["frames"])}
        outer = collections.Counter(r[-1] for r in chains)
        shared = sum(1 for r in chains if outer[r[-1]] > 1)
        print("MEASURE: thread %s samples=%d java_frames_max=%d "
              "whole_chain json=%d pprof=%d" % (a.thread, n, deepest, full, pfull))
        print("MEASURE: thread %s inline_chains=%d sharing_outer_method=%d" %
              (a.thread, len(chains), shared))
        if n == 0:
            print("FAIL: no samples of thread %s" % a.thread)
            rc = 1
        if full != pfull:
            rc = 1
        if shared < a.min_shared:
            print("FAIL: %d inline chains share their outermost method, want >= %d"
                  % (shared, a.min_shared))
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
