#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Checks asgst-bpf's JVM event profiles (record -e alloc / -e lock) of
tests/workloads/AllocSites.java and LockHold.java against the truth the
workloads count themselves.

  jvm_events_check.py alloc JSON --pid PID --workload OUT --events EVS
      [--interval BYTES] [--tol PCT] [--min-whole PCT] [--pprof-raw RAW]
      [--pprof-top TOP]
  jvm_events_check.py lock JSON --pid PID --workload OUT --events EVS
      [--min-ratio R] [--max-ratio R] [--pprof-raw RAW] [--pprof-top TOP]

The JSON contract (docs/formats.md, JSON version 1 plus the JVM events):
every stack has "event" ("cpu", "offcpu", "alloc", "lock"); an alloc stack
has "alloc_count" (estimated objects), "alloc_bytes" (estimated bytes) and
"alloc_class", a lock stack "lock_ns" (summed wait) and "lock_class"; their
frames[0] is {"type": "class", "class": <that class>}, the Java frames
(callee first) and native frames follow as in cpu stacks. --events: the
comma list given to record -e; the top-level "events" must be that set and
no stack may be of another event; with cpu among them, thread alloc-worker
must have >= 20 cpu samples too.

alloc: OUT has "SITE <method> <class> <objects> <bytes>" lines (exact
counts). A site's stacks are the alloc stacks of PID's thread alloc-worker
with a Java frame AllocSites.<method> (the warm-up thread runs the same
sites before the truth's phase). Checked:
  - each site's share of the sites' summed alloc_bytes is within --tol %
    (relative, default 10) of its share of the truth's bytes;
  - >= 99 % of each site's events have its class;
  - the estimates scale: the sites' summed alloc_bytes is 0.6 .. 1.5 x the
    bytes they allocated, each site's alloc_count 0.6 .. 1.5 x its objects
    (losing events or not scaling by the interval is far outside), and
    the sites' events 0.6 .. 1.5 x their bytes / --interval (the
    --alloc-interval given to record, default 512 KiB);
  - >= --min-whole % (default 99) of the alloc events of thread
    alloc-worker are whole (no error, no unknown frame, outermost Java
    frame the thread's root: Thread.run / runWith; the rule of
    realapp_check.py) and >= 97 % of the sites' events hold the exact chain
    site, AllocSites.hotLoop, AllocSites$Worker.run, Thread.run;
  - bytesSite and intsSite frames compiled (comp level 1-4) in >= 50 % of
    their events (the JIT compiles them in the first fraction of a second),
    cellsBatch interpreted (comp level 0, the test excludes it from
    compilation) in >= 99 % of its.
lock: OUT has "WAITER <thread> <entries> <wait ns> <max ns>" lines. The
waiter stacks are the lock stacks of PID with a Java frame LockHold.contend.
Checked: lock_class LockHold$Guard in >= 99 % of their events; their summed
lock_ns within --min-ratio .. --max-ratio (default 0.9 .. 1.1) of the
waiters' own measured total, each waiter's within 0.85 .. 1.1 of its own;
no more contended entries than entries; >= 99 % whole and >= 97 % the
exact chain LockHold.contend, LockHold$Waiter.run, Thread.run.

--pprof-raw: `go tool pprof -symbolize=none -raw FILE.pb.gz` of the same
recording: its sample types must hold alloc_objects/count and
alloc_space/bytes (alloc) or contentions/count and delay/nanoseconds
(lock), and each one's sum equal the JSON's sum of alloc_count, alloc_bytes,
lock stacks' count, lock_ns; the per-site (per-waiter-method) sums too.
--pprof-top: `go tool pprof -top -cum -sample_index=alloc_space` (or
delay) of it: its total equals the JSON's (within display rounding) and the
sites' cum shares are within --tol of the truth's (the waiter method's cum
within the ratio bounds of the measured wait).

Prints INFO/MEASURE lines with the figures; exit 1 on any failure.
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
}
EVENT_FIELDS = {
    "alloc": ("alloc_count", "alloc_bytes", "alloc_class"),
    "lock": ("lock_ns", "lock_class"),
}
ALLOC_CHAIN = ["AllocSites.hotLoop", "AllocSites$Worker.run",
               "java.lang.Thread.run"]
LOCK_CHAIN = ["LockHold.contend", "LockHold$Waiter.run",
              "java.lang.Thread.run"]

failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def pct(a, b):
    return 100.0 * a / b if b else 0.0


def jname(f):
    return "%s.%s" % (f.get("class"), f.get("method"))


def jframes(s):
    return [f for f in s["frames"] if f["type"] in JAVA]


def has_method(s, name):
    return any(jname(f) == name for f in jframes(s))


def whole(s):
    """realapp_check.py's rule: no error, no unknown frame, the outermost
    Java frame is the thread's root"""
    if s.get("error"):
        return False, "error " + s["error"].get("name", "?")
    unk = [f for f in s["frames"] if f["type"] == "unknown"]
    if unk:
        return False, "unknown frame (%s)" % unk[0].get("reason")
    jf = jframes(s)
    if not jf:
        return False, "no Java frame"
    if (jf[-1].get("class"), jf[-1].get("method")) not in ROOTS:
        return False, "outermost Java frame %s" % jname(jf[-1])
    return True, None


def chain_names(s):
    """Java frame names, Thread.runWith (JDK 21+) left out"""
    return [jname(f) for f in jframes(s)
            if jname(f) != "java.lang.Thread.runWith"]


def check_common(doc, pid, events):
    """events and the per-event fields of every stack; returns PID's
    stacks"""
    want = set(events)
    got = doc.get("events")
    if not isinstance(got, list) or set(got) != want:
        fail("JSON events %s, recorded -e %s" % (got, ",".join(events)))
    bad = collections.Counter()
    for s in doc["stacks"]:
        ev = s.get("event")
        if ev not in ("cpu", "offcpu", "alloc", "lock"):
            bad["event %r" % ev] += 1
            continue
        if ev not in want:
            bad["a %s stack in an -e %s recording" %
                (ev, ",".join(events))] += 1
        if not isinstance(s.get("count"), int) or s["count"] < 1:
            bad["%s stack with count %r" % (ev, s.get("count"))] += 1
        for e, fields in EVENT_FIELDS.items():
            for k in fields:
                if e == ev and k not in s:
                    bad["%s stack without %s" % (ev, k)] += 1
                elif e != ev and k in s:
                    bad["%s stack with %s" % (ev, k)] += 1
        fr = s["frames"]
        if ev in EVENT_FIELDS:
            cls = s.get(ev + "_class")
            if not isinstance(cls, str) or not cls:
                bad["%s stack with %s_class %r" % (ev, ev, cls)] += 1
            if not fr or fr[0].get("type") != "class" or \
                    fr[0].get("class") != cls:
                bad["%s stack whose frames[0] is %s, not the class frame "
                    "of %s" % (ev, fr[0] if fr else None, cls)] += 1
            if any(f.get("type") == "class" for f in fr[1:]):
                bad["%s stack with a class frame below the leaf" % ev] += 1
            ints = ("alloc_count", "alloc_bytes") if ev == "alloc" else \
                ("lock_ns",)
            for k in ints:
                if not isinstance(s.get(k), int) or s[k] <= 0:
                    bad["%s stack with %s %r" % (ev, k, s.get(k))] += 1
        elif any(f.get("type") == "class" for f in fr):
            bad["%s stack with a class frame" % ev] += 1
    for k, v in bad.most_common(8):
        fail("%d x %s" % (v, k))
    return [s for s in doc["stacks"] if s.get("pid") == pid]


# ---- go tool pprof -------------------------------------------------------

LOC_RE = re.compile(r"^\s*(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(?:\[F\] )?(.*)$")
LINE_RE = re.compile(r"^(.*?) (\S*):(-?\d+) s=(-?\d+)(?:\((.*)\))?$")


def parse_raw(path):
    """(types, [(values, [location ids])], {id: [function names]})"""
    types, samples, locs = [], [], {}
    section = loc = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().splitlines()
    for i, line in enumerate(lines):
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            if line == "Samples:" and i + 1 < len(lines):
                types = [t.replace("[dflt]", "")
                         for t in lines[i + 1].split()]
            continue
        if section == "Samples:":
            m = re.match(r"^((?:\s+-?\d+)+): ?([\d ]*)$", line)
            if m:
                samples.append(([int(v) for v in m.group(1).split()],
                                [int(v) for v in m.group(2).split()]))
        elif section == "Locations":
            m = LOC_RE.match(line)
            if m:
                loc = int(m.group(1))
                locs[loc] = []
                rest = m.group(2)
            else:
                rest = line.strip()
            if not rest or loc is None:
                continue
            lm = LINE_RE.match(rest)
            locs[loc].append(lm.group(1) if lm else rest)
    return types, samples, locs


UNITS = {"B": 1, "kB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3,
         "TB": 1024 ** 4, "PB": 1024 ** 5,
         "ns": 1, "us": 1e3, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9,
         "mins": 60e9, "hrs": 3600e9, "days": 86400e9, "": 1}


def quantity(txt):
    m = re.match(r"^(-?[\d.]+(?:e[+-]?\d+)?)([A-Za-z\u00b5]*)$", txt)
    if not m or m.group(2) not in UNITS:
        raise ValueError("pprof quantity %r" % txt)
    return float(m.group(1)) * UNITS[m.group(2)]


def parse_top(path):
    """(type, total, {name: cum}) of `go tool pprof -top -cum`"""
    typ, total, cum = None, None, {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\n")
            m = re.match(r"^Type: (\S+)", line)
            if m:
                typ = m.group(1)
            m = re.search(r"of (\S+) total", line)
            if m:
                total = quantity(m.group(1))
            m = re.match(r"^\s*(\S+)\s+[\d.]+%\s+[\d.]+%\s+(\S+)\s+[\d.]+%"
                         r"\s+(.*)$", line)
            if m:
                cum[m.group(3).strip()] = quantity(m.group(2))
    return typ, total, cum


def pprof_sums(raw, want_types, groups):
    """sums of the sample types in want_types over all samples and over the
    samples whose locations hold a function of each group; None when the
    types are missing"""
    types, samples, locs = parse_raw(raw)
    print("INFO: pprof: sample types %s, %d samples" % (types, len(samples)))
    idx = []
    for t in want_types:
        if t not in types:
            fail("pprof: no sample type %s (has %s)" % (t, types))
            return None
        idx.append(types.index(t))
    if any(len(v) != len(types) for v, _ in samples):
        fail("pprof: a sample without one value per sample type")
        return None
    tot = [0] * len(idx)
    per = {g: [0] * len(idx) for g in groups}
    for vals, ids in samples:
        names = set()
        for i in ids:
            if i not in locs:
                fail("pprof: a sample refers to location %d, not in the "
                     "profile" % i)
                return None
            names.update(locs[i])
        for j, k in enumerate(idx):
            tot[j] += vals[k]
            for g in groups:
                if g in names:
                    per[g][j] += vals[k]
    return tot, per


# ---- alloc ---------------------------------------------------------------

def read_sites(path):
    sites = []
    with open(path) as fh:
        for line in fh:
            p = line.split()
            if len(p) == 5 and p[0] == "SITE":
                sites.append((p[1], p[2], int(p[3]), int(p[4])))
    return sites


def cmd_alloc(a):
    doc = json.load(open(a.json))
    sites = read_sites(a.workload)
    if len(sites) != 3:
        fail("the workload printed %d SITE lines, not 3" % len(sites))
        return
    stacks = check_common(doc, a.pid, a.events.split(","))
    alloc = [s for s in stacks if s.get("event") == "alloc"]
    nev = sum(s["count"] for s in alloc)
    print("MEASURE: alloc: %d allocation events in %d stacks of pid %d, "
          "%.1f MB estimated" % (nev, len(alloc), a.pid,
                                 sum(s.get("alloc_bytes", 0)
                                     for s in alloc) / 1e6))
    if nev < 300:
        fail("only %d allocation events of pid %d" % (nev, a.pid))
        return
    truth_bytes = sum(x[3] for x in sites)
    got = {}
    for meth, cls, objs, nbytes in sites:
        name = "AllocSites." + meth
        # the worker's: the warm-up thread ran the sites with empty arrays
        # before the truth's phase (recorded when the agent was on from
        # the start)
        mine = [s for s in alloc if has_method(s, name) and
                s.get("thread") == "alloc-worker"]
        other = sum(s["count"] for s in alloc if has_method(s, name) and
                    s.get("thread") != "alloc-worker")
        if other:
            print("INFO: alloc: %s: %d events on other threads (warm-up) "
                  "left out" % (meth, other))
        ev = sum(s["count"] for s in mine)
        by = sum(s["alloc_bytes"] for s in mine)
        ob = sum(s["alloc_count"] for s in mine)
        right = sum(s["count"] for s in mine if s["alloc_class"] == cls)
        wrong = collections.Counter()
        for s in mine:
            if s["alloc_class"] != cls:
                wrong[s["alloc_class"]] += s["count"]
        lv = collections.Counter()
        chain = 0
        chain_bad = collections.Counter()
        for s in mine:
            f = next((f for f in jframes(s) if jname(f) == name), None)
            lv[f.get("comp_level")] += s["count"]
            names = chain_names(s)
            if names == [name] + ALLOC_CHAIN:
                chain += s["count"]
            else:
                chain_bad[";".join(names[:6])] += s["count"]
        got[meth] = (ev, by, ob, right, lv, chain)
        print("MEASURE: alloc: %s: %d events, %.1f MB, %d objects "
              "estimated; truth %.1f MB, %d objects (%s); class %s in "
              "%.2f %%; comp levels %s; exact chain %.2f %%" %
              (meth, ev, by / 1e6, ob, nbytes / 1e6, objs, cls, cls,
               pct(right, ev), dict(sorted(lv.items())), pct(chain, ev)))
        for k, v in wrong.most_common(3):
            print("INFO: alloc: %s: %d events of class %s" % (meth, v, k))
        for k, v in chain_bad.most_common(3):
            print("INFO: alloc: %s: not the chain: %d x %s" % (meth, v, k))
        if ev < 50:
            fail("%s: only %d events" % (meth, ev))
            continue
        if pct(right, ev) < 99:
            fail("%s: class %s in %.2f %% < 99 %% of its events" %
                 (meth, cls, pct(right, ev)))
        if pct(chain, ev) < 97:
            fail("%s: the exact chain in %.2f %% < 97 %% of its events" %
                 (meth, pct(chain, ev)))
        comp = sum(v for k, v in lv.items() if k in (1, 2, 3, 4))
        if meth == "cellsBatch":
            if pct(lv[0], ev) < 99:
                fail("%s (excluded from compilation) interpreted in only "
                     "%.2f %% of its events" % (meth, pct(lv[0], ev)))
        elif pct(comp, ev) < 50:
            fail("%s compiled in only %.2f %% of its events" %
                 (meth, pct(comp, ev)))
        r = ob / objs if objs else 0
        if not 0.6 <= r <= 1.5:
            fail("%s: %d objects estimated, %d allocated (x %.3f)" %
                 (meth, ob, objs, r))
    sum_by = sum(g[1] for g in got.values())
    if not sum_by:
        fail("no alloc_bytes at any site")
        return
    for meth, cls, objs, nbytes in sites:
        share = pct(got[meth][1], sum_by)
        tshare = pct(nbytes, truth_bytes)
        print("MEASURE: alloc: %s: %.2f %% of the sites' bytes, truth "
              "%.2f %% (%+.1f %% off)" % (meth, share, tshare,
                                          pct(share - tshare, tshare)))
        # the sampling's own spread: ~ binomial over the sites' events
        nsites = sum(g[0] for g in got.values())
        p = tshare / 100.0
        sd = 100.0 * ((1 - p) / (p * nsites)) ** 0.5 if nsites else 0
        print("INFO: alloc: %s: sampling spread of the share +- %.1f %% "
              "(relative, one sigma, %d events at the sites)" %
              (meth, sd, nsites))
        if abs(share - tshare) > a.tol / 100.0 * tshare:
            fail("%s: share %.2f %% not within %.0f %% of the truth's "
                 "%.2f %%" % (meth, share, a.tol, tshare))
    r = sum_by / truth_bytes
    print("MEASURE: alloc: the sites' estimated bytes are x %.3f of the "
          "bytes they allocated (%.1f MB of %.1f MB)" %
          (r, sum_by / 1e6, truth_bytes / 1e6))
    if not 0.6 <= r <= 1.5:
        fail("the sites' alloc_bytes are x %.3f of the truth: not scaled "
             "by the sampling interval, or events lost" % r)
    # one event per interval bytes on average (objects far smaller than it)
    nsites = sum(g[0] for g in got.values())
    r = nsites * a.interval / truth_bytes
    print("MEASURE: alloc: %d events at the sites for %.1f MB: one per %.0f "
          "bytes, asked one per %d (x %.3f)" %
          (nsites, truth_bytes / 1e6, truth_bytes / nsites, a.interval, r))
    if not 0.6 <= r <= 1.5:
        fail("events x %.3f of one per --alloc-interval %d bytes" %
             (r, a.interval))

    # whole stacks: the worker thread's allocation events
    tot = good = 0
    why = collections.Counter()
    for s in alloc:
        if s.get("thread") != "alloc-worker":
            continue
        tot += s["count"]
        ok, w = whole(s)
        if ok:
            good += s["count"]
        else:
            why[w] += s["count"]
    allj = [s for s in alloc if s.get("kind") == "java"]
    allw = sum(s["count"] for s in allj if whole(s)[0])
    print("MEASURE: alloc: whole %.2f %% of %d events of thread "
          "alloc-worker (%.2f %% of all %d Java-thread alloc events)" %
          (pct(good, tot), tot, pct(allw, sum(s["count"] for s in allj)),
           sum(s["count"] for s in allj)))
    for k, v in why.most_common(4):
        print("INFO: alloc: not whole: %d x %s" % (v, k))
    if not tot or pct(good, tot) < a.min_whole:
        fail("whole alloc stacks %.2f %% < %.1f %%" %
             (pct(good, tot), a.min_whole))
    if "cpu" in a.events.split(","):
        # -e cpu,alloc,...: the worker's cpu samples are there too
        nc = sum(s["count"] for s in stacks if s.get("event") == "cpu" and
                 s.get("thread") == "alloc-worker")
        print("MEASURE: alloc: %d cpu samples of thread alloc-worker in the "
              "same recording" % nc)
        if nc < 20:
            fail("only %d cpu samples of alloc-worker with -e %s" %
                 (nc, a.events))

    if a.pprof_raw:
        groups = ["AllocSites." + m for m, _, _, _ in sites]
        r = pprof_sums(a.pprof_raw, ["alloc_objects/count",
                                     "alloc_space/bytes"], groups)
        if r:
            tot, per = r
            # the whole profile's alloc values (all pids)
            jtot = [sum(s["alloc_count"] for s in doc["stacks"]
                        if s.get("event") == "alloc"),
                    sum(s["alloc_bytes"] for s in doc["stacks"]
                        if s.get("event") == "alloc")]
            print("MEASURE: pprof: alloc_objects %d, alloc_space %d; JSON "
                  "alloc_count %d, alloc_bytes %d" %
                  (tot[0], tot[1], jtot[0], jtot[1]))
            if tot != jtot:
                fail("pprof alloc values differ from the JSON's")
            for m, _, _, _ in sites:
                g = "AllocSites." + m
                js = [s for s in doc["stacks"] if s.get("event") == "alloc"
                      and has_method(s, g)]
                jv = [sum(s["alloc_count"] for s in js),
                      sum(s["alloc_bytes"] for s in js)]
                if per[g] != jv:
                    fail("pprof: %s: alloc_objects, alloc_space %s, JSON "
                         "%s" % (g, per[g], jv))
    if a.pprof_top:
        typ, total, cum = parse_top(a.pprof_top)
        jb = sum(s["alloc_bytes"] for s in doc["stacks"]
                 if s.get("event") == "alloc")
        print("INFO: pprof -top: type %s, total %s, JSON %d bytes" %
              (typ, total, jb))
        if typ != "alloc_space":
            fail("pprof -top -sample_index=alloc_space shows type %s" % typ)
        elif total is None or abs(total - jb) > 0.01 * jb:
            fail("pprof -top total %s != JSON's %d bytes" % (total, jb))
        else:
            sc = {m: cum.get("AllocSites." + m) for m, _, _, _ in sites}
            if None in sc.values():
                fail("pprof -top -cum lacks a site: %s" % sc)
                return
            st = sum(sc.values())
            for meth, cls, objs, nbytes in sites:
                share = pct(sc[meth], st)
                tshare = pct(nbytes, truth_bytes)
                print("MEASURE: pprof -top: %s: cum %.3g bytes, %.2f %% of "
                      "the sites', truth %.2f %%" %
                      (meth, sc[meth], share, tshare))
                if abs(share - tshare) > a.tol / 100.0 * tshare:
                    fail("pprof -top: %s share %.2f %% not within %.0f %% "
                         "of the truth's %.2f %%" %
                         (meth, share, a.tol, tshare))


# ---- lock ----------------------------------------------------------------

def read_waiters(path):
    w = {}
    with open(path) as fh:
        for line in fh:
            p = line.split()
            if len(p) == 5 and p[0] == "WAITER":
                w[p[1]] = (int(p[2]), int(p[3]), int(p[4]))
    return w


def cmd_lock(a):
    doc = json.load(open(a.json))
    waiters = read_waiters(a.workload)
    if len(waiters) != 3:
        fail("the workload printed %d WAITER lines, not 3" % len(waiters))
        return
    stacks = check_common(doc, a.pid, a.events.split(","))
    lock = [s for s in stacks if s.get("event") == "lock"]
    mine = [s for s in lock if has_method(s, "LockHold.contend")]
    hold = [s for s in lock if has_method(s, "LockHold.hold")]
    ev = sum(s["count"] for s in mine)
    ns = sum(s["lock_ns"] for s in mine)
    truth = sum(v[1] for v in waiters.values())
    entries = sum(v[0] for v in waiters.values())
    print("MEASURE: lock: %d lock events in %d stacks of pid %d; "
          "LockHold.contend: %d events, %.3f s waited; holder (LockHold."
          "hold): %d events, %.3f s" %
          (sum(s["count"] for s in lock), len(lock), a.pid, ev, ns / 1e9,
           sum(s["count"] for s in hold),
           sum(s["lock_ns"] for s in hold) / 1e9))
    if ev < 20:
        fail("only %d contended entries of LockHold.contend recorded" % ev)
        return
    cls = collections.Counter()
    for s in mine:
        cls[s["lock_class"]] += s["count"]
    print("INFO: lock: classes of LockHold.contend's stacks: %s" %
          dict(cls))
    if pct(cls["LockHold$Guard"], ev) < 99:
        fail("lock_class LockHold$Guard in %.2f %% < 99 %% of the waiters' "
             "events" % pct(cls["LockHold$Guard"], ev))
    r = ns / truth if truth else 0
    print("MEASURE: lock: recorded wait %.3f s = x %.3f of the %.3f s the "
          "waiters measured themselves; %d contended entries recorded of "
          "%d entries" % (ns / 1e9, r, truth / 1e9, ev, entries))
    if not a.min_ratio <= r <= a.max_ratio:
        fail("recorded wait x %.3f of the measured, not within %.2f .. "
             "%.2f" % (r, a.min_ratio, a.max_ratio))
    if ev > entries:
        fail("%d contended entries recorded, the waiters entered %d times" %
             (ev, entries))
    for name, (n, wns, mx) in sorted(waiters.items()):
        t = [s for s in mine if s.get("thread") == name]
        tns = sum(s["lock_ns"] for s in t)
        tev = sum(s["count"] for s in t)
        print("MEASURE: lock: %s: %d events, %.3f s = x %.3f of its own "
              "%.3f s (%d entries, longest wait %.1f ms)" %
              (name, tev, tns / 1e9, tns / wns if wns else 0, wns / 1e9, n,
               mx / 1e6))
        if not wns or not 0.85 <= tns / wns <= a.max_ratio:
            fail("%s: recorded %.3f s of its measured %.3f s" %
                 (name, tns / 1e9, wns / 1e9))
    good = chain = 0
    why = collections.Counter()
    for s in mine:
        ok, w = whole(s)
        if ok:
            good += s["count"]
        else:
            why[w] += s["count"]
        if chain_names(s) == LOCK_CHAIN:
            chain += s["count"]
        else:
            why["not the chain: " + ";".join(chain_names(s)[:5])] += \
                s["count"]
    print("MEASURE: lock: whole %.2f %%, exact chain %.2f %% of the %d "
          "waiter events" % (pct(good, ev), pct(chain, ev), ev))
    for k, v in why.most_common(4):
        print("INFO: lock: %d x %s" % (v, k))
    if pct(good, ev) < a.min_whole:
        fail("whole lock stacks %.2f %% < %.1f %%" %
             (pct(good, ev), a.min_whole))
    if pct(chain, ev) < 97:
        fail("the exact chain in %.2f %% < 97 %% of the waiter events" %
             pct(chain, ev))

    if a.pprof_raw:
        r = pprof_sums(a.pprof_raw, ["contentions/count",
                                     "delay/nanoseconds"],
                       ["LockHold.contend"])
        if r:
            tot, per = r
            alll = [s for s in doc["stacks"] if s.get("event") == "lock"]
            jtot = [sum(s["count"] for s in alll),
                    sum(s["lock_ns"] for s in alll)]
            print("MEASURE: pprof: contentions %d, delay %d ns; JSON %d, %d"
                  % (tot[0], tot[1], jtot[0], jtot[1]))
            if tot != jtot:
                fail("pprof lock values differ from the JSON's")
            if per["LockHold.contend"] != [ev, ns]:
                fail("pprof: LockHold.contend: %s, JSON %s" %
                     (per["LockHold.contend"], [ev, ns]))
    if a.pprof_top:
        typ, total, cum = parse_top(a.pprof_top)
        jns = sum(s["lock_ns"] for s in doc["stacks"]
                  if s.get("event") == "lock")
        c = cum.get("LockHold.contend")
        print("INFO: pprof -top: type %s, total %s, JSON %d ns; "
              "LockHold.contend cum %s" % (typ, total, jns, c))
        if typ != "delay":
            fail("pprof -top -sample_index=delay shows type %s" % typ)
        elif total is None or abs(total - jns) > 0.01 * jns:
            fail("pprof -top total %s != JSON's %d ns" % (total, jns))
        elif c is None or not a.min_ratio <= c / truth <= a.max_ratio:
            fail("pprof -top: LockHold.contend cum %s, the waiters measured "
                 "%d ns" % (c, truth))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("alloc", "lock"):
        p = sub.add_parser(name)
        p.add_argument("json")
        p.add_argument("--pid", type=int, required=True)
        p.add_argument("--workload", required=True)
        p.add_argument("--events", required=True)
        p.add_argument("--min-whole", type=float, default=99.0)
        p.add_argument("--pprof-raw")
        p.add_argument("--pprof-top")
        if name == "alloc":
            p.add_argument("--tol", type=float, default=10.0)
            p.add_argument("--interval", type=int, default=512 * 1024)
        else:
            p.add_argument("--min-ratio", type=float, default=0.9)
            p.add_argument("--max-ratio", type=float, default=1.1)
    a = ap.parse_args()
    {"alloc": cmd_alloc, "lock": cmd_lock}[a.cmd](a)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
