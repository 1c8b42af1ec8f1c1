#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Compares what record --push sent to a Pyroscope receiver with the JSON
files the same recording wrote per period (-o out.json --switch-output).

  push_check.py RECV_DIR JSON... [--expect SERVICE,KEY=VALUE,...]...
                [--min-periods N] [--any-subset]

RECV_DIR: what pyroscope_receiver.py kept: NNNNNN.pb (the pprof, gunzipped)
and NNNNNN.json (name, labels, from, until, sampleRate, spyName,
sample_type_config). Each pprof is read with `go tool pprof -raw`.

Per period (a JSON file's name holds the UTC time it began, the pushes'
`from`), per series (service_name, process, container_id, pod_uid) and
event: the pushed profile equals the JSON's stacks of that series, frame
for frame and value for value (pprof has no pids or threads: the JSON's
stacks are summed over them first). Every pushed profile must be one
period's; every JSON series must have been pushed.

--events cpu,offcpu,...: each of these events has a pushed profile.

--expect SERVICE,k=v,...: some pushed series has service_name SERVICE and
these labels (k=!: the label is absent). --any-subset: the periods pushed
may be fewer than those written (a receiver that was down): those pushed
must still be equal.

Labels must never be per pid or thread. Prints MEASURE: lines; exit 1 on
any mismatch.
"""
import argparse
import calendar
import collections
import glob
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pprof_gotool_check import frame_of, parse_raw  # noqa: E402

ALLOWED = {"hostname", "process", "container_id", "pod_uid"}
TS_RE = re.compile(r"\.(\d{8}T\d{6}Z)\.json$")


def json_frame(fr):
    if fr["type"] == "class":
        return (fr.get("class") or "[unknown class]", 0)
    return frame_of(fr)


def event_of(meta, types):
    """cpu, offcpu, alloc or lock, by the value types and the config"""
    if types[:1] == ["samples"]:
        return "cpu"
    if types[:1] == ["alloc_objects"]:
        return "alloc"
    stc = meta.get("sample_type_config") or {}
    if isinstance(stc, str):
        stc = json.loads(stc)
    dn = stc.get("contentions", {}).get("display-name", "")
    return {"block_count": "offcpu", "mutex_count": "lock"}.get(dn, "?")


def sample_types(raw_path):
    with open(raw_path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    for i, ln in enumerate(lines):
        if ln == "Samples:" and i + 1 < len(lines):
            return [t.split("/")[0] for t in lines[i + 1].split()]
    return []


def load_pushed(recv):
    out = collections.defaultdict(collections.Counter)
    series_labels = []
    bad = 0
    for mp in sorted(glob.glob(os.path.join(recv, "*.json"))):
        meta = json.load(open(mp))
        pb = mp[:-5] + ".pb"
        raw = pb + ".raw"
        with open(raw, "w") as f:
            subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-raw",
                            pb], stdout=f, stderr=subprocess.DEVNULL,
                           check=True)
        labels = dict(meta.get("labels") or {})
        extra = set(labels) - ALLOWED - set(ARGS.static)
        if extra:
            print("FAIL: %s: labels not allowed (per pid or thread?): %s"
                  % (mp, sorted(extra)))
            bad += 1
        if meta.get("spyName") != "asgst-bpf":
            print("FAIL: %s: spyName %r" % (mp, meta.get("spyName")))
            bad += 1
        for k, v in ARGS.static.items():
            if labels.get(k) != v:
                print("FAIL: %s: label %s=%r, not %r" % (mp, k,
                                                       labels.get(k), v))
                bad += 1
        ev = event_of(meta, sample_types(raw))
        samples, locs = parse_raw(raw)
        key = (int(meta["from"]), meta["app"], labels.get("process"),
               labels.get("container_id"), labels.get("pod_uid"), ev)
        if key in out:
            print("FAIL: two pushes of one series and period: %r" % (key,))
            bad += 1
        for vals, ids, _ in samples:
            frames = tuple(fr for i in ids for fr in locs[i])
            c = out[key]
            c[(frames, 0)] += vals[0]
            c[(frames, 1)] += vals[1]
        series_labels.append((meta["app"], labels))
    return out, series_labels, bad


def load_json(paths):
    out = collections.defaultdict(collections.Counter)
    periods = set()
    for p in paths:
        m = TS_RE.search(p)
        if not m:
            raise SystemExit("FAIL: %s: no period time in its name" % p)
        t0 = calendar.timegm(time.strptime(m.group(1), "%Y%m%dT%H%M%SZ"))
        periods.add(t0)
        doc = json.load(open(p))
        period = 10**9 // doc["frequency_hz"] if doc.get("frequency_hz") else 0
        for s in doc["stacks"]:
            ev = s.get("event", "cpu")
            key = (t0, s.get("service"), s.get("process"),
                   s.get("container_id"), s.get("pod_uid"), ev)
            frames = tuple(json_frame(f) for f in s["frames"])
            if ev == "cpu":
                v = (s["count"], s["count"] * period)
            elif ev == "offcpu":
                v = (s["count"], s["offcpu_ns"])
            elif ev == "alloc":
                v = (s["alloc_count"], s["alloc_bytes"])
            else:
                v = (s["count"], s["lock_ns"])
            out[key][(frames, 0)] += v[0]
            out[key][(frames, 1)] += v[1]
    return out, periods


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("recv")
    ap.add_argument("json", nargs="+")
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--label", action="append", default=[])
    ap.add_argument("--min-periods", type=int, default=1)
    ap.add_argument("--any-subset", action="store_true")
    ap.add_argument("--events", default="")
    ARGS = ap.parse_args()
    ARGS.static = dict(kv.split("=", 1) for kv in ARGS.label)
    pushed, series_labels, rc = load_pushed(ARGS.recv)
    want, periods = load_json(ARGS.json)
    pushed_periods = {k[0] for k in pushed}
    print("MEASURE: push periods_written=%d periods_pushed=%d "
          "series_json=%d profiles_pushed=%d" % (
              len(periods), len(pushed_periods), len(want), len(pushed)))
    if len(pushed_periods) < ARGS.min_periods:
        print("FAIL: %d periods pushed, fewer than %d" %
              (len(pushed_periods), ARGS.min_periods))
        rc += 1
    stray = [k for k in pushed if k[0] not in periods]
    for k in stray[:3]:
        print("FAIL: a push of no period written: %r" % (k,))
    rc += len(stray)
    equal = mism = missing = 0
    values = 0
    for k in sorted(set(want) | set(pushed), key=repr):
        if k[0] not in pushed_periods and ARGS.any_subset:
            continue
        if k[0] not in periods:
            continue
        w, g = want.get(k), pushed.get(k)
        if w is None or g is None:
            print("FAIL: series %r: %s" % (k, "not pushed" if g is None
                                            else "pushed, not in the JSON"))
            missing += 1
            continue
        w = +w
        g = +g
        if w != g:
            mism += 1
            diff = [x for x in set(w) | set(g) if w.get(x, 0) != g.get(x, 0)]
            print("FAIL: series %r differs in %d (stack, value)s, e.g. json "
                  "%d pprof %d: %s" % (k, len(diff), w.get(diff[0], 0),
                                       g.get(diff[0], 0),
                                       ";".join("%s:%s" % f for f in
                                                diff[0][0])[:600]))
        else:
            equal += 1
            values += sum(v for (fr, i), v in w.items() if i == 0)
    print("MEASURE: push series_equal=%d series_differ=%d series_missing=%d "
          "events_compared=%d" % (equal, mism, missing, values))
    rc += mism + missing
    if not equal:
        print("FAIL: no series compared")
        rc += 1
    kinds = collections.Counter(k[5] for k in pushed)
    print("MEASURE: push profiles by event: %s" % dict(sorted(kinds.items())))
    for ev in filter(None, ARGS.events.split(",")):
        if not kinds.get(ev):
            print("FAIL: no %s profile pushed" % ev)
            rc += 1
    for e in ARGS.expect:
        parts = e.split(",")
        svc, want_l = parts[0], dict(p.split("=", 1) for p in parts[1:])
        ok = any(app == svc and all(
            (v == "!" and k not in lb) or lb.get(k) == v or
            (v == "*" and lb.get(k)) for k, v in want_l.items())
            for app, lb in series_labels)
        print("MEASURE: push expect %s %s" % (e, "found" if ok else "MISSING"))
        if not ok:
            print("FAIL: no pushed series %s; pushed: %s" % (
                e, sorted({(a, tuple(sorted(l.items())))
                           for a, l in series_labels})[:8]))
            rc += 1
    return 1 if rc else 0


if __name__ == "__main__":
    sys.exit(main())
