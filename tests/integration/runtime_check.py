#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Checks asgst-bpf profiles of the runtime workloads: virtual threads,
pinned carriers, off-CPU stacks.

  runtime_check.py vthreads JSON --pid PID [--view merged|virtual|carrier]
                   [--jstack FILE ...] [--min PCT]
      tests/workloads/jdk25/VtYield.java. Carrier samples: cpu stacks of
      ForkJoinPool worker threads with "virtual_thread": true. In >= --min
      % of them (and >= --min - 5 % of each kind: LONG, SHORT, NOYIELD
      virtual threads; no gap in NOYIELD's, which never yields) the merged
      stack must be: VtYield.leaf, c4, c3, c2, c1, the loop frame
      (longLoop / shortLoop / noYieldLoop), more virtual-thread frames,
      then either the rest down to Continuation.enter or one
      "cont_returnBarrier" frame
      with "gap": "frozen"; the java_native Continuation.enterSpecial with
      "vthread_entry": true; the carrier's frames from Continuation.run
      through VirtualThread.runContinuation to ForkJoinWorkerThread.run
      (or Thread.run) at the bottom. --view virtual: only the virtual
      thread's part (nothing after enterSpecial); --view carrier: only the
      carrier's (nothing before enterSpecial). Also: the carriers carry a
      virtual thread in >= 85 % of their samples (the workload keeps more
      runnable virtual threads than carriers); no stack outside a mounted
      virtual thread has an enterSpecial frame; the platform thread "plat"
      has the same chain, down to Thread.run, without enterSpecial and
      with "virtual_thread": false. --jstack (jstack output taken during
      the recording): the decoded merged stacks must equal the JVM's own
      view of carrier + mounted virtual thread, frame for frame (a gap
      stack: the part above the gap a prefix of the JVM's).

  runtime_check.py pinned JSON --pid PID --phase WORKLOAD_OUT
                   [--jfr-json FILE] [--min-share PCT] [--jfr-tol PCT]
      tests/workloads/jdk25/PinnedJni.java with record -e offcpu. The
      "PHASE ..." line of WORKLOAD_OUT gives the time its JNI threads slept
      in C (measured in C) and its upcall threads parked. Pinned off-CPU
      time of stacks with PinnedJni.sleepInC ("downcall": "jni"), jniB,
      jniA, jniLoop and enterSpecial >= --min-share % (default 70) of the C
      sleep time (and <= 115 %); likewise for the park inside the FFM
      upcall (PinnedJni.upcallPark, upB, upA, upLoop); the JNI stacks in
      state in_native (JVMTI ALIVE|RUNNABLE|IN_NATIVE), the parks in state
      blocked; the Thread.sleep threads (sleepA/sleepB) never
      parked on a pinned carrier, and pinned < 1 % of their sleep time
      (brief JVM-lock waits while mounted); every pinned stack has a
      virtual thread mounted and is not preempted, <= 5 % of the pinned
      time lacks the enterSpecial frame; all pinned time <= 115 % of what
      the workload blocked pinned. --jfr-json (jfr print
      --json --events jdk.VirtualThreadPinned): JFR's summed durations and
      our pinned time of the upcall stacks within --jfr-tol % (default 10).

  runtime_check.py report-pinned TXT --json JSON [--live JSON]
                   [--phase WORKLOAD_OUT]
      `report --pinned` output: '#' lines and PINNED_NS<TAB>COUNT<TAB>FRAME
      lines sorted by PINNED_NS descending, a final "# total pinned_ns=N"
      (and count=N) equal to their sums; the lines must equal what the JSON
      decode of the same raw file gives: pinned stacks summed by the frame
      that pinned them (docs/cli.md: the outermost JNI / FFM downcall
      frame above enterSpecial, else the innermost Java frame), and with
      --live those of the live recording's JSON (docs/cli.md: report
      decodes a raw file to the same stacks as the live decode); with
      --phase, PinnedJni.sleepInC >= 70 % of the C sleep time and the FFM
      downcall frame (nep_invoker_blob) >= 70 % of the upcall park time.

  runtime_check.py offcpu JSON --pid PID --workload WORKLOAD_OUT
                   [--summary LOG] [--spin] [--both] [--pprof FILE]
      tests/workloads/ctxswitch.c, whose threads ran inside the recording,
      with record -e offcpu (or cpu,offcpu: --both). Per ping-pong thread:
      off-CPU stacks with the chain cs_sys_read|cs_sys_write, cs_exchange,
      cs_ping_loop|cs_pong_loop, cs_ping_thread|cs_pong_thread and kernel
      frames in >= 90 % of its off-CPU time, offcpu_ns > 0; its off-CPU
      time at most 110 % of what the thread measured (its THREAD line:
      wall - CPU time), and at least 90 % of it (less the lost share) with
      its share of offcpu_capture_ns added (the profiler's time taking its
      stacks: in no offcpu_ns, and in the CPU time of whichever task ran
      next, this one or another); its
      switch-outs likewise against its getrusage count; no thread off-CPU
      longer than the recording; JSON offcpu_samples / offcpu_lost /
      samples / lost equal to the summary lines', whose --stats line says
      no off-CPU stack went without its END (nor an END without its stack)
      when nothing was lost; lost <= 50 % of the
      events. Switch-outs blocked in a pipe read (schedule called by
      it) "preempted": false in >= 95 % of them; the switch-outs marked
      "preempted" as many as the thread's involuntary switches (its
      ru_nivcsw, within the lost share); with
      --spin, the cs-spin threads' off-CPU stacks (cs_spin) "preempted":
      true. --both: cpu and offcpu stacks of the chain in one run, cpu
      stacks without offcpu_ns. --pprof: the pprof file of the same run has
      an offcpu/nanoseconds sample type whose values sum to the JSON's
      offcpu_ns, and its cpu values to the cpu samples x period.
  runtime_check.py offcpu-sampled JSON --pid PID --workload WORKLOAD_OUT
                   --full JSON --full-pid PID --full-workload WORKLOAD_OUT
                   [--summary LOG] [--report JSON]
      the same workload recorded with the default off-CPU sampling (a
      stack 1 in N switch-outs, weighed N times, each thread's stacks
      scaled to its exact sums) and, in another run, with every switch
      (--offcpu-sample 1). Per ping-pong thread, its chain (as in offcpu)
      in >= 90 % of its off-CPU time, its off-CPU time (the weighted
      offcpu_ns) within 85-115 % of what it measured itself (wall - CPU
      time, the capture's share added as in offcpu), its stacks' counts
      within 15 % of the switch-outs it counted (getrusage). Printed, not
      checked: the share of each group of its stacks (ping/pong, in the
      read or the write) against the every-switch run's, in points and
      relative: two runs of the ping-pong differ by themselves (the
      every-switch capture slows it down 3 times, other programs' time
      slices make some of its waits milliseconds long), so the shares are
      checked by offcpu-pair, on one run seen by two recorders.
      --summary: its --stats line says N > 1 on average. --report: the
      report of the same recording's raw file has the same off-CPU
      stacks, counts and offcpu_ns.
  runtime_check.py offcpu-pair JSON --full JSON --workload WORKLOAD_OUT
                   --summary LOG --full-summary LOG [--tol POINTS]
      one run of ctxswitch in its fork mode with SLOW rounds (cs-ping in
      the recorded process, cs-pong in a child that is not recorded; most
      rounds a brief wait in cs_exchange's read, every SLOW-th a long one
      in cs_exchange_slow's) recorded at the same time by two recorders:
      JSON with the default sampling, --full with every switch's stack
      (--offcpu-sample 1), its sampler attached first. Each recorder
      leaves out of an interval only its own time taking a stack; the full
      one's capture happens before the sampled one's program reads the
      clock at the switch-out, and at the switch-in the task leaving is
      cs-pong or another untraced task, whose stack neither takes. So the
      two sum the same intervals but for each program's own time at a
      switch (the full one's after its clock read at the switch-in, in
      the sampled one's interval; the sampled one's captures, in the full
      one's), which falls on a switch-out whatever its stack: EXTRA, the
      difference of the two exact totals over the switch-outs (printed).
      The truth for the sampled recording: each stack's offcpu_ns in the
      full one + EXTRA x its count. Whether it is one (when not: UNMET
      lines, exit 3, the shares not compared): both recorders saw the
      same switch-outs (--stats offcpu_switches within 1 %), the full one
      took every stack (offcpu_every_mean 1.0) and lost at most 1 % of
      them, cs-ping's off-CPU time in the sampled recording within
      90-110 % of the full one's and its switch-outs within 97-103 %.
      Checked: the sampled one took fewer stacks (N > 1 on average);
      no cs-pong stack in either; then the shares of cs-ping's off-CPU
      time (offcpu_ns over its total; the truth's over its total) per
      stack (kernel and user frames, "preempted") and per group of stacks
      with the same user frames: every stack and group with >= 1 % of the
      truth within --tol (default 5) percentage points of it in the
      sampled one; the difference also printed relative to the truth's
      share, and the full recording's share as it is.
Prints INFO/MEASURE lines; exit 0 when every check passes.
"""
import argparse
import collections
import gzip
import json
import re
import sys

JAVA_TYPES = ("java", "java_inlined", "java_native")
CHAIN = ["VtYield.leaf", "VtYield.c4", "VtYield.c3", "VtYield.c2",
         "VtYield.c1"]
LOOPS = {"VtYield.longLoop": "long", "VtYield.shortLoop": "short",
         "VtYield.noYieldLoop": "noyield"}
CONT = "jdk.internal.vm.Continuation"
ENTER_SPECIAL = CONT + ".enterSpecial"
CARRIER_TOP = CONT + ".run"
CARRIER_MID = "java.lang.VirtualThread.runContinuation"
CARRIER_ROOTS = ("java.util.concurrent.ForkJoinWorkerThread.run",
                 "java.lang.Thread.run")
VT_ROOT = "java.lang.VirtualThread.run"
VT_BOTTOM = CONT + ".enter"

failures = []
unmet = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def unmet_setup(msg):
    """offcpu-pair: one recording is not the truth for the other (exit 3)"""
    print("UNMET: " + msg)
    unmet.append(msg)


def norm_class(c):
    """hidden classes (lambdas, lambda forms): drop the address suffix,
    which the JVM prints as /0x..., the agent may give as .0x... or +0x..."""
    if c is None:
        return None
    return re.sub(r"[/.+]0x[0-9a-fA-F]+$", "", c)


def fname(f):
    t = f.get("type")
    if t in JAVA_TYPES:
        if f.get("class") is None:
            return f.get("symbol") or "?"
        return "%s.%s" % (norm_class(f["class"]), f.get("method"))
    return f.get("symbol") or "?"


def is_entry(f):
    return f.get("vthread_entry") is True


def is_gap(f):
    return f.get("gap") == "frozen"


def load(path):
    with open(path) as fh:
        return json.load(fh)


def pct(a, b):
    return 100.0 * a / b if b else 0.0


# ---- virtual threads ------------------------------------------------------

def carrier_tids(stacks):
    tids = set()
    for s in stacks:
        # "thread": the Java thread name, else the task's (cut to 15
        # characters: "ForkJoinPool-1-")
        if s.get("thread", "").startswith("ForkJoinPool-") or \
                s.get("comm", "").startswith("ForkJoinPool-"):
            tids.add(s["tid"])
    return tids


def check_entry_frame(f, why):
    if f["type"] != "java_native" or fname(f) != ENTER_SPECIAL:
        why["vthread_entry frame is %s %s" % (f["type"], fname(f))] += 1
        return False
    return True


def vt_part_ok(fr, why):
    """fr: the frames above enterSpecial (callee first). Returns the kind
    (long/short) and whether a gap was seen, or None."""
    java = [f for f in fr if f["type"] in JAVA_TYPES]
    names = [fname(f) for f in java]
    if names[:5] != CHAIN or len(names) < 6 or names[5] not in LOOPS:
        why["virtual-thread part starts %s" % ";".join(names[:7])] += 1
        return None
    kind = LOOPS[names[5]]
    gaps = [i for i, f in enumerate(fr) if is_gap(f)]
    if len(gaps) > 1:
        why["%d gap frames" % len(gaps)] += 1
        return None
    if gaps:
        g = fr[gaps[0]]
        if g["type"] != "non_java" or g.get("symbol") != "cont_returnBarrier":
            why["gap frame is %s %s" % (g["type"], fname(g))] += 1
            return None
        if any(f["type"] in JAVA_TYPES for f in fr[gaps[0] + 1:]):
            why["Java frames between the gap and enterSpecial"] += 1
            return None
        last_chain = fr.index(java[5])
        if gaps[0] < last_chain:
            why["gap inside the chain"] += 1
            return None
        return kind, True
    if names[-1] != VT_BOTTOM or VT_ROOT not in names:
        why["no gap, but the virtual thread's frames end at %s" %
            names[-1]] += 1
        return None
    return kind, False


def carrier_part_ok(fr, why):
    names = [fname(f) for f in fr if f["type"] in JAVA_TYPES]
    if not names or names[0] != CARRIER_TOP:
        why["carrier part starts %s" % (names[:1],)] += 1
        return False
    if CARRIER_MID not in names:
        why["carrier part without %s" % CARRIER_MID] += 1
        return False
    if names[-1] not in CARRIER_ROOTS:
        why["carrier part ends at %s" % names[-1]] += 1
        return False
    return True


def parse_jstack(paths):
    """{kind: [(mounted names, carrier names)]} of carriers whose mounted
    virtual thread was in VtYield.leaf"""
    views = collections.defaultdict(list)
    for p in paths:
        cur = None
        sect = None
        with open(p) as fh:
            for line in fh:
                if line.startswith('"'):
                    cur = {"carrier": [], "mounted": []}
                    sect = None
                    if "ForkJoinPool" in line:
                        sect = "carrier"
                    continue
                if cur is None:
                    continue
                if "Mounted virtual thread" in line:
                    sect = "mounted"
                    continue
                m = re.match(r"\s+at (\S+)\(", line)
                if m and sect:
                    cls, _, meth = m.group(1).rpartition(".")
                    cur[sect].append("%s.%s" % (norm_class(cls), meth))
                if line.strip() == "" and cur and cur["mounted"]:
                    mt = cur["mounted"]
                    if mt[:5] == CHAIN and len(mt) > 5 and mt[5] in LOOPS:
                        views[LOOPS[mt[5]]].append((mt, cur["carrier"]))
                    cur = None
    return views


def cmd_vthreads(a):
    doc = load(a.json)
    stacks = [s for s in doc["stacks"] if s["pid"] == a.pid]
    if not stacks:
        fail("no stacks of pid %d" % a.pid)
        return
    ctids = carrier_tids(stacks)
    # virtual_thread true / an entry frame only on carriers with a mount
    for s in stacks:
        has_entry = any(is_entry(f) for f in s["frames"])
        if has_entry and s.get("virtual_thread") is not True:
            fail("a stack of %s has an enterSpecial entry frame but "
                 "virtual_thread %s" % (s["thread"], s.get("virtual_thread")))
            break
    cpu = [s for s in stacks if s.get("event", "cpu") == "cpu"]
    car = [s for s in cpu if s["tid"] in ctids]
    ncar = sum(s["count"] for s in car)
    vt = [s for s in car if s.get("virtual_thread") is True]
    nvt = sum(s["count"] for s in vt)
    print("MEASURE: vthreads/%s: %d carrier samples on %d carrier threads, "
          "%.1f %% with a virtual thread mounted" %
          (a.view, ncar, len(ctids), pct(nvt, ncar)))
    if ncar < 50:
        fail("only %d samples of carrier threads" % ncar)
        return
    if pct(nvt, ncar) < 85:
        fail("%.1f %% of carrier samples have virtual_thread true; the "
             "carriers always have a runnable virtual thread" % pct(nvt, ncar))
    views = parse_jstack(a.jstack or [])
    good = collections.Counter()
    total = collections.Counter()
    gaps = collections.Counter()
    frozen = collections.Counter()
    why = collections.Counter()
    xgood = collections.Counter()
    xtotal = collections.Counter()
    for s in vt:
        fr = s["frames"]
        n = s["count"]
        w = collections.Counter()
        # the kind by the loop frame, whatever else is wrong
        kind = "all" if a.view == "carrier" else next(
            (LOOPS[x] for x in (fname(f) for f in fr
                                if f["type"] in JAVA_TYPES) if x in LOOPS),
            "?")
        ok = True
        if any(f["type"] == "unknown" for f in fr):
            w["unknown frame: %s" % [f.get("reason") for f in fr
                                     if f["type"] == "unknown"][0]] += 1
            ok = False
        ent = [i for i, f in enumerate(fr) if is_entry(f)]
        if ok and a.view == "carrier":
            rest = fr
            if len(ent) > 1 or (ent and ent[0] != 0):
                w["frames above enterSpecial in the carrier view: %s" %
                  ";".join(fname(f) for f in fr[:3])] += 1
                ok = False
            elif ent:
                ok = check_entry_frame(fr[0], w)
                rest = fr[1:]
            elif not fr or fname(fr[0]) != CARRIER_TOP:
                w["carrier view starts at %s" %
                  (fname(fr[0]) if fr else None)] += 1
                ok = False
            if ok and any(fname(f).startswith("VtYield.") for f in fr):
                w["virtual-thread frames in the carrier view"] += 1
                ok = False
            if ok:
                ok = carrier_part_ok(rest, w)
        elif ok:
            if len(ent) != 1:
                w["%d entry frames" % len(ent)] += 1
                ok = False
            else:
                e = ent[0]
                ok = check_entry_frame(fr[e], w)
                r = vt_part_ok(fr[:e], w) if ok else None
                if r is None:
                    ok = False
                else:
                    kind, gap = r
                    if gap:
                        gaps[kind] += n
                    # frames read from the heap stack chunk at sample time
                    if any(f.get("frozen") for f in fr[:e]):
                        frozen[kind] += n
                if ok and a.view == "virtual":
                    if fr[e + 1:]:
                        w["frames after enterSpecial in the virtual view: "
                          "%s" % ";".join(fname(f) for f in fr[e + 1:e + 3])
                          ] += 1
                        ok = False
                elif ok:
                    ok = carrier_part_ok(fr[e + 1:], w)
                if ok and a.view == "merged" and kind in views:
                    xtotal[kind] += n
                    jn = [fname(f) for f in fr if f["type"] in JAVA_TYPES]
                    ei = jn.index(ENTER_SPECIAL)
                    # the virtual thread's part as jstack showed one of its
                    # kind, the carrier's as it showed any carrier (which
                    # path a carrier took into the continuation varies)
                    vt_ok = any((gap and len(jn[:ei]) < len(mt) and
                                 mt[:ei] == jn[:ei]) or
                                (not gap and jn[:ei] == mt)
                                for mt, _ in views[kind])
                    car_ok = any(jn[ei + 1:] == ca
                                 for v in views.values() for _, ca in v)
                    if vt_ok and car_ok:
                        xgood[kind] += n
                    else:
                        why["differs from jstack: %s" % ";".join(jn)] += n
        total[kind] += n
        if ok:
            good[kind] += n
        for k in w:
            why[k] += n
    # the headline: the yielding ones (the never-yielding one is checked
    # on its own below)
    ng = sum(v for k, v in good.items() if k != "noyield")
    nt = sum(v for k, v in total.items() if k != "noyield")
    print("MEASURE: vthreads/%s: %.2f %% of %d carrier samples with a "
          "%svirtual thread hold the chain, the enterSpecial boundary and the "
          "carrier's root" % (a.view, pct(ng, nt), nt,
                              "" if a.view == "carrier" else "yielding "))
    for k in sorted(total):
        print("INFO: vthreads/%s: kind %s: %d samples, %.2f %% good, %.1f %% "
              "of them with a frozen gap" % (a.view, k, total[k],
                                             pct(good[k], total[k]),
                                             pct(gaps[k], good[k])))
    for k, v in why.most_common(6):
        print("INFO: bad: %d x %s" % (v, k))
    if pct(ng, nt) < a.min:
        fail("%.2f %% < %.1f %% of carrier samples" % (pct(ng, nt), a.min))
    if a.view != "carrier":
        for k in ("long", "short", "noyield"):
            if total[k] < 20:
                fail("only %d samples of %s virtual threads" % (total[k], k))
            elif pct(good[k], total[k]) < a.min - 5:
                fail("%s virtual threads: %.2f %% good" %
                     (k, pct(good[k], total[k])))
        # the LONG threads' older frames stay frozen (an interpreted
        # frame keeps them from being thawed whole): decoded from the
        # heap stack chunk, not a gap
        print("MEASURE: vthreads/%s: long: %.1f %% of good samples with "
              "frames decoded from the heap stack chunk, %.1f %% with a "
              "frozen gap" % (a.view, pct(frozen["long"], good["long"]),
                              pct(gaps["long"], good["long"])))
        if pct(frozen["long"], good["long"]) < 90:
            fail("long virtual threads: only %.1f %% of samples show their "
                 "frozen frames" % pct(frozen["long"], good["long"]))
        if pct(frozen["noyield"], good["noyield"]) >= 1:
            fail("%.1f %% of the never-yielding virtual thread's stacks "
                 "have frames from a heap chunk" %
                 pct(frozen["noyield"], good["noyield"]))
        # never yielded, never frozen: a gap there is made up
        if pct(gaps["noyield"], good["noyield"]) >= 1:
            fail("%.1f %% of the never-yielding virtual thread's stacks "
                 "have a frozen gap" % pct(gaps["noyield"], good["noyield"]))
    if a.view == "merged" and a.jstack:
        for k in ("long", "short", "noyield"):
            if k not in views:
                print("INFO: jstack caught no %s virtual thread in leaf" % k)
                continue
            print("MEASURE: vthreads: %s: %.2f %% of %d good samples equal "
                  "the JVM's view (jstack) frame for frame" %
                  (k, pct(xgood[k], xtotal[k]), xtotal[k]))
            if pct(xgood[k], xtotal[k]) < a.min:
                fail("%s: decoded stacks differ from jstack's" % k)
    # the platform thread runs the same chain without a virtual thread
    plat = [s for s in cpu if s.get("thread") == "plat" or
            s.get("comm") == "plat"]
    np_ = sum(s["count"] for s in plat)
    pgood = 0
    for s in plat:
        names = [fname(f) for f in s["frames"] if f["type"] in JAVA_TYPES]
        if s.get("virtual_thread") is not False or \
                any(is_entry(f) for f in s["frames"]):
            fail("platform thread plat: virtual_thread %s / entry frame" %
                 s.get("virtual_thread"))
            break
        if names[:6] == CHAIN + ["VtYield.platLoop"] and \
                names[-1] == "java.lang.Thread.run":
            pgood += s["count"]
    print("MEASURE: vthreads/%s: platform thread: %.2f %% of %d samples "
          "hold the chain down to Thread.run" % (a.view, pct(pgood, np_), np_))
    if np_ < 20 or pct(pgood, np_) < a.min:
        fail("platform thread plat: %d of %d samples good" % (pgood, np_))


# ---- pinned ---------------------------------------------------------------

def parse_phase(path):
    with open(path) as fh:
        for line in fh:
            if line.startswith("PHASE "):
                return {k: int(v) for k, v in
                        (kv.split("=") for kv in line.split()[1:])}
    return None


def java_names(s):
    return [fname(f) for f in s["frames"] if f["type"] in JAVA_TYPES]


def in_order(names, want):
    """want appears in names as a subsequence, in this order"""
    it = iter(names)
    return all(any(n == w for n in it) for w in want)


def pinning_frame_name(s):
    """docs/cli.md: the outermost JNI or FFM downcall between the virtual
    thread's top and its entry, else its innermost Java frame; named
    class.method as the JSON has them (symbol for a stub)"""
    inner = cross = None
    for f in s["frames"]:
        if is_entry(f):
            break
        if f["type"] in JAVA_TYPES:
            inner = inner or f
            if f["type"] == "java_native" and f.get("downcall"):
                cross = f
    f = cross or inner
    if f is None:
        return "[no Java frame]"
    if f.get("class"):
        return "%s.%s" % (f["class"], f["method"])
    return f.get("symbol") or "[unknown]"


def jfr_total(path):
    with open(path) as fh:
        doc = json.load(fh)
    tot = 0.0
    n = 0
    with_jni = 0
    for e in doc["recording"]["events"]:
        if e["type"] != "jdk.VirtualThreadPinned":
            continue
        m = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?",
                         e["values"]["duration"])
        h, mi, se = m.groups()
        tot += int(h or 0) * 3600 + int(mi or 0) * 60 + float(se or 0)
        n += 1
        st = e["values"].get("stackTrace") or {}
        if any(fr["method"]["name"] == "sleepInC"
               for fr in st.get("frames", [])):
            with_jni += 1
    return int(tot * 1e9), n, with_jni


def cmd_pinned(a):
    doc = load(a.json)
    ph = parse_phase(a.phase)
    if not ph:
        fail("the workload printed no PHASE line")
        return
    stacks = [s for s in doc["stacks"] if s["pid"] == a.pid]
    print("INFO: pinned: workload: %s" % " ".join(
        "%s=%d" % kv for kv in sorted(ph.items())))
    cpu = [s for s in stacks if s.get("event") != "offcpu"]
    if cpu:
        fail("%d stacks with event %s in an -e offcpu recording" %
             (len(cpu), cpu[0].get("event")))
    off = [s for s in stacks if s.get("event") == "offcpu"]
    if not off:
        fail("no offcpu stacks")
        return
    for s in off:
        if not isinstance(s.get("offcpu_ns"), int) or s["offcpu_ns"] < 0:
            fail("offcpu stack without offcpu_ns: %s" % s.get("offcpu_ns"))
            return
    pinned = [s for s in off if s.get("pinned") is True]
    allpin = sum(s["offcpu_ns"] for s in pinned)
    # pinned: blocked (not preempted) with a virtual thread mounted
    bad = [s for s in pinned if s.get("virtual_thread") is not True or
           s.get("preempted") is not False]
    if bad:
        fail("%d pinned stacks without a mounted virtual thread or marked "
             "preempted, e.g. %s" % (len(bad),
                                     ";".join(java_names(bad[0])[:6])))
    # the walk should reach the boundary on (almost) all of them
    noent = sum(s["offcpu_ns"] for s in pinned
                if not any(is_entry(f) for f in s["frames"]))
    print("INFO: pinned: %.2f %% of the pinned time in stacks without the "
          "enterSpecial frame" % pct(noent, allpin))
    if pct(noent, allpin) > 5:
        fail("%.1f %% of the pinned time without the enterSpecial frame" %
             pct(noent, allpin))

    def pinned_by(chain, label, measured, innermost):
        """pinned stacks with the chain (at the top of the Java frames if
        innermost, else in this order with anything between), then
        enterSpecial"""
        good = [s for s in pinned if
                (java_names(s)[:len(chain)] == chain if innermost else True)
                and in_order(java_names(s), chain + [ENTER_SPECIAL])]
        ns = sum(s["offcpu_ns"] for s in good)
        any_ns = sum(s["offcpu_ns"] for s in off
                     if chain[0] in java_names(s))
        print("MEASURE: pinned: %s: %.1f %% of the %.3f s the workload "
              "blocked there reported pinned with its frames (%.3f s; "
              "%.3f s of off-CPU stacks hold %s at all)" %
              (label, pct(ns, measured), measured / 1e9, ns / 1e9,
               any_ns / 1e9, chain[0]))
        if measured <= 0:
            fail("%s: the workload blocked 0 ns" % label)
        elif pct(ns, measured) < a.min_share:
            fail("%s: %.1f %% < %.0f %% pinned" % (label, pct(ns, measured),
                                                   a.min_share))
        elif pct(ns, measured) > 115:
            fail("%s: %.1f %% > 115 %% of the blocked time" %
                 (label, pct(ns, measured)))
        return good, ns

    jni, jni_ns = pinned_by(["PinnedJni.sleepInC", "PinnedJni.jniB",
                             "PinnedJni.jniA", "PinnedJni.jniLoop"],
                            "JNI sleep in C", ph["jni_c_sleep_ns"], True)
    nodc = [s for s in jni if s["frames"] and not any(
        f["type"] == "java_native" and fname(f) == "PinnedJni.sleepInC" and
        f.get("downcall") == "jni" for f in s["frames"])]
    if nodc:
        fail("%d pinned JNI stacks without the java_native sleepInC frame "
             "with \"downcall\": \"jni\"" % len(nodc))
    nat = sum(s["offcpu_ns"] for s in jni if s.get("state") == "in_native")
    print("MEASURE: pinned: JNI sleep: %.1f %% of its pinned time in state "
          "in_native" % pct(nat, jni_ns))
    if jni_ns and pct(nat, jni_ns) < 95:
        fail("JNI sleep in C: state in_native in %.1f %% < 95 %%" %
             pct(nat, jni_ns))
    # JVMTI bits: ALIVE | RUNNABLE | IN_NATIVE
    jb = sum(s["offcpu_ns"] for s in jni
             if isinstance(s.get("jvmti_state"), int) and
             s["jvmti_state"] & 0x400005 == 0x400005)
    if jni_ns and pct(jb, jni_ns) < 95:
        fail("JNI sleep in C: jvmti_state ALIVE|RUNNABLE|IN_NATIVE in %.1f "
             "%% < 95 %%" % pct(jb, jni_ns))
    cfr = sum(s["offcpu_ns"] for s in jni
              if [fname(f) for f in s["frames"] if f["type"] == "non_java"
                  ][:3] == ["vp_sleep_leaf", "vp_sleep_mid",
                            "Java_PinnedJni_sleepInC"])
    print("INFO: pinned: JNI sleep: %.1f %% of it with the C frames "
          "vp_sleep_leaf, vp_sleep_mid, Java_PinnedJni_sleepInC" %
          pct(cfr, jni_ns))
    up, up_ns = pinned_by(["PinnedJni.upcallPark", "PinnedJni.upB",
                           "PinnedJni.upA", "PinnedJni.upLoop"],
                          "park in an FFM upcall", ph["upcall_park_ns"],
                          False)
    # Unsafe.park blocks in the VM (ThreadBlockInVM): _thread_blocked
    blk = sum(s["offcpu_ns"] for s in up if s.get("state") == "blocked")
    print("MEASURE: pinned: park in an upcall: %.1f %% of its pinned time in "
          "state blocked" % pct(blk, up_ns))
    if up_ns and pct(blk, up_ns) < 95:
        fail("park in an upcall: state blocked in %.1f %% < 95 %%" %
             pct(blk, up_ns))

    # Thread.sleep unmounts: the sleep itself is never pinned (no parking
    # on the carrier under sleepB); the carrier may still block a few
    # microseconds on a JVM lock while a sleeper is mounted (compile
    # queue, inline caches), which is pinned and allowed, but next to the
    # time they slept that is nothing
    sl = [s for s in off if "PinnedJni.sleepB" in java_names(s) or
          "PinnedJni.sleepA" in java_names(s)]
    slp = [s for s in sl if s.get("pinned") is True]
    slp_ns = sum(s["offcpu_ns"] for s in slp)
    parked = [s for s in slp if in_order(java_names(s), [
        "java.lang.VirtualThread.parkOnCarrierThread", "PinnedJni.sleepB"])]
    print("INFO: pinned: Thread.sleep stacks: %d off-CPU stacks (%.3f s), "
          "%d pinned (%.6f s, %d parked on the carrier); the workload slept "
          "%.3f s in Java" % (len(sl), sum(s["offcpu_ns"] for s in sl) / 1e9,
                              len(slp), slp_ns / 1e9, len(parked),
                              ph["java_sleep_ns"] / 1e9))
    if parked:
        fail("%d Thread.sleep stacks parked on their carrier and pinned (a "
             "sleeping virtual thread unmounts)" % len(parked))
    if pct(slp_ns, ph["java_sleep_ns"]) > 1:
        fail("Thread.sleep stacks pinned for %.1f %% of the sleep time" %
             pct(slp_ns, ph["java_sleep_ns"]))
    if ph["java_sleep_calls"] < 10:
        fail("the Java sleepers slept only %d times" % ph["java_sleep_calls"])
    blocked = ph["jni_c_sleep_ns"] + ph["upcall_park_ns"]
    print("MEASURE: pinned: all pinned time %.3f s = %.1f %% of the %.3f s "
          "the workload blocked pinned" % (allpin / 1e9, pct(allpin, blocked),
                                           blocked / 1e9))
    if pct(allpin, blocked) > 115:
        fail("more pinned time than the workload blocked pinned")
    # unmounted carriers wait for work: off-CPU, not pinned
    ctids = carrier_tids(stacks)
    idle = sum(s["offcpu_ns"] for s in off if s["tid"] in ctids and
               s.get("virtual_thread") is False)
    print("INFO: pinned: carriers off-CPU with no virtual thread: %.3f s" %
          (idle / 1e9))
    if not idle:
        fail("no off-CPU time of carriers without a mounted virtual thread "
             "(they idle between the sleepers' turns)")
    if a.jfr_json:
        jns, jn, jjni = jfr_total(a.jfr_json)
        print("MEASURE: pinned: JFR jdk.VirtualThreadPinned: %d events, "
              "%.3f s; asgst-bpf upcall park pinned %.3f s (%.1f %% of "
              "JFR's); JFR events in the JNI sleep: %d (%d JNI calls)" %
              (jn, jns / 1e9, up_ns / 1e9, pct(up_ns, jns), jjni,
               ph["jni_calls"]))
        if jn == 0:
            fail("JFR recorded no jdk.VirtualThreadPinned event")
        elif abs(pct(up_ns, jns) - 100) > a.jfr_tol:
            fail("pinned park time differs from JFR's by more than %.0f %%" %
                 a.jfr_tol)


def cmd_report_pinned(a):
    with open(a.txt) as fh:
        lines = fh.read().splitlines()
    rows = []
    total = None
    tcount = None
    for ln in lines:
        if ln.startswith("#"):
            m = re.match(r"# total pinned_ns=(\d+)(?: count=(\d+))?$", ln)
            if m:
                total = int(m.group(1))
                tcount = m.group(2) and int(m.group(2))
            continue
        m = re.match(r"^(\d+)\t(\d+)\t(\S.*)$", ln)
        if not m:
            fail("report --pinned: malformed line %r" % ln)
            return
        rows.append((int(m.group(1)), int(m.group(2)), m.group(3)))
    if not lines or not re.match(r"# total pinned_ns=\d+( count=\d+)?$",
                                 lines[-1]):
        fail("report --pinned: last line is not '# total pinned_ns=N'")
    if total is None:
        return
    print("INFO: report --pinned: %d frames, total %d ns" % (len(rows),
                                                              total))
    for r in rows[:5]:
        print("INFO:   %d\t%d\t%s" % r)
    if [r[0] for r in rows] != sorted((r[0] for r in rows), reverse=True):
        fail("report --pinned: lines not sorted by PINNED_NS descending")
    if sum(r[0] for r in rows) != total:
        fail("report --pinned: lines sum to %d, total says %d" %
             (sum(r[0] for r in rows), total))
    if tcount is not None and sum(r[1] for r in rows) != tcount:
        fail("report --pinned: counts sum to %d, total says %d" %
             (sum(r[1] for r in rows), tcount))
    got = {r[2]: [r[0], r[1]] for r in rows}
    for path, what in ((a.json, "the JSON report of the same raw file"),
                       (a.live, "the live recording's JSON")):
        if not path:
            continue
        exp = collections.defaultdict(lambda: [0, 0])
        for s in load(path)["stacks"]:
            if s.get("pinned") is True:
                k = pinning_frame_name(s)
                exp[k][0] += s["offcpu_ns"]
                exp[k][1] += s["count"]
        expd = dict(exp)
        if got != expd:
            for k in sorted(set(got) | set(expd)):
                if got.get(k) != expd.get(k):
                    print("INFO: report --pinned %s: %s, %s says %s" %
                          (k, got.get(k), what, expd.get(k)))
            fail("report --pinned lines differ from the pinned stacks of %s "
                 "(pinned_ns %d vs %d)" % (what, total,
                                           sum(v[0] for v in expd.values())))
    if a.phase:
        ph = parse_phase(a.phase)
        ns = got.get("PinnedJni.sleepInC", [0])[0]
        print("MEASURE: report --pinned: PinnedJni.sleepInC %.1f %% of the "
              "C sleep time" % pct(ns, ph["jni_c_sleep_ns"]))
        if pct(ns, ph["jni_c_sleep_ns"]) < 70:
            fail("report --pinned: PinnedJni.sleepInC below 70 %")
        # the upcall park is pinned by the FFM downcall under the upcall
        dc = [k for k in got if "nep_invoker" in k]
        ns = sum(got[k][0] for k in dc)
        print("MEASURE: report --pinned: %s %.1f %% of the upcall park time" %
              (",".join(dc) or "no FFM downcall frame",
               pct(ns, ph["upcall_park_ns"])))
        if pct(ns, ph["upcall_park_ns"]) < 70:
            fail("report --pinned: the FFM downcall frame below 70 % of the "
                 "upcall park time")


# ---- off-CPU: ctxswitch ----------------------------------------------------

def read_threads(path):
    """THREAD lines of ctxswitch:
    {name: (tid, switches, cpu_ns, wall_ns, steal_ns, involuntary)}"""
    th = {}
    with open(path) as fh:
        for ln in fh:
            m = re.match(r"THREAD (\S+) (\d+) switches=(\d+) cpu_ns=(\d+) "
                         r"wall_ns=(\d+) steal_ns=(\d+) involuntary=(\d+)",
                         ln)
            if m:
                th[m.group(1)] = tuple(int(m.group(i)) for i in range(2, 8))
    return th


def user_names(s):
    return [fname(f) for f in s["frames"] if f["type"] != "kernel"]


def contains_seq(names, want):
    return any(names[i:i + len(want)] == want
               for i in range(len(names) - len(want) + 1))


def kernel_names(s):
    return [fname(f) for f in s["frames"] if f["type"] == "kernel"]


PIPE_K = ("pipe_read", "anon_pipe_read", "pipe_wait", "pipe_wait_readable")


def pb_fields(buf):
    """(field, wiretype, value) of one protobuf message"""
    i = 0
    out = []

    def varint():
        nonlocal i
        v = 0
        sh = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7f) << sh
            sh += 7
            if not b & 0x80:
                return v
    while i < len(buf):
        key = varint()
        fld, wt = key >> 3, key & 7
        if wt == 0:
            out.append((fld, wt, varint()))
        elif wt == 2:
            n = varint()
            out.append((fld, wt, buf[i:i + n]))
            i += n
        elif wt == 1:
            out.append((fld, wt, buf[i:i + 8]))
            i += 8
        elif wt == 5:
            out.append((fld, wt, buf[i:i + 4]))
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
    return out


def pb_varints(buf):
    vals = []
    i = 0
    while i < len(buf):
        v = 0
        sh = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7f) << sh
            sh += 7
            if not b & 0x80:
                break
        if v >= 1 << 63:
            v -= 1 << 64
        vals.append(v)
    return vals


def read_pprof(path):
    with gzip.open(path) as fh:
        top = pb_fields(fh.read())
    strings = [v.decode() for f, w, v in top if f == 6]
    types = []
    samples = []
    period = 0
    for f, w, v in top:
        if f == 1:
            d = dict((ff, vv) for ff, ww, vv in pb_fields(v))
            types.append((strings[d.get(1, 0)], strings[d.get(2, 0)]))
        elif f == 2:
            vals = []
            for ff, ww, vv in pb_fields(v):
                if ff == 2:
                    vals += pb_varints(vv) if ww == 2 else [vv]
            samples.append(vals)
        elif f == 12:
            period = v
    return types, samples, period


def cmd_offcpu(a):
    doc = load(a.json)
    th = read_threads(a.workload)
    if "cs-ping" not in th or "cs-pong" not in th:
        fail("the workload printed no THREAD lines for cs-ping / cs-pong")
        return
    stacks = [s for s in doc["stacks"] if s["pid"] == a.pid]
    off = [s for s in stacks if s.get("event") == "offcpu"]
    cpu = [s for s in stacks if s.get("event") == "cpu"]
    dur = doc["duration_ns"]
    noff = sum(s["count"] for s in off)
    # off-CPU stacks are counted apart from cpu samples (docs/formats.md)
    lost = doc.get("offcpu_lost", 0)
    lost_share = lost / (noff + lost) if noff + lost else 0.0
    want_ev = ["cpu", "offcpu"] if a.both else ["offcpu"]
    if doc.get("events") != want_ev:
        fail("JSON events %s, recorded %s" % (doc.get("events"), want_ev))
    if doc.get("offcpu_samples") != sum(s["count"] for s in doc["stacks"]
                                         if s.get("event") == "offcpu"):
        fail("JSON offcpu_samples %s != the off-CPU stacks' counts %d" %
             (doc.get("offcpu_samples"), noff))
    capt = doc.get("offcpu_capture_ns")
    if not isinstance(capt, int) or capt <= 0:
        fail("JSON offcpu_capture_ns %s: want the ns spent taking the "
             "off-CPU stacks" % capt)
        capt = 0
    allrec = doc.get("offcpu_samples") or 1
    cap_mean = capt / allrec
    print("MEASURE: offcpu: %d off-CPU switch-outs recorded, %d lost "
          "(%.2f %%), %.2f s recording, %.0f recorded switch-outs/s, "
          "%.2f us to take each stack" %
          (noff, lost, 100 * lost_share, dur / 1e9, noff / (dur / 1e9),
           cap_mean / 1e3))
    if a.summary:
        with open(a.summary) as fh:
            txt = fh.read()
        sm = re.findall(r"asgst-bpf: (\d+) off-CPU stacks, (\d+) lost", txt)
        sc = re.findall(r"asgst-bpf: (\d+) samples, (\d+) lost", txt)
        # --stats: every off-CPU stack found its END, every END its stack
        # (an END is lost only with a full ring, counted in offcpu_lost)
        st = re.findall(r"offcpu_no_end=(\d+) offcpu_stray_end=(\d+)", txt)
        if not st:
            fail("no offcpu_no_end / offcpu_stray_end in the --stats line")
        else:
            print("INFO: offcpu: --stats: %s" % re.findall(
                r"offcpu_no_switch_in=\d+.*", txt)[-1])
            if lost == 0 and st[-1] != ("0", "0"):
                fail("off-CPU stacks without END %s, ENDs without stack %s, "
                     "with nothing lost" % st[-1])
        # the decode queue's held samples found without walking the
        # copied off-CPU stacks between them again and again
        wk = re.findall(r"ring_walked=(\d+)", txt)
        rs = re.findall(r"stats: records=(\d+)", txt)
        if not wk or not rs:
            fail("no ring_walked / records in the --stats lines")
        elif int(wk[-1]) > int(rs[-1]):
            fail("the decode queue walked %s times for %s records: a "
                 "record looked at more than once" % (wk[-1], rs[-1]))
        if not sm or not sc:
            fail("no off-CPU / sample summary lines in %s" % a.summary)
        else:
            if (int(sm[-1][0]), int(sm[-1][1])) != \
                    (doc.get("offcpu_samples"), lost):
                fail("summary says %s off-CPU stacks, %s lost; JSON %s, %s" %
                     (sm[-1][0], sm[-1][1], doc.get("offcpu_samples"), lost))
            if (int(sc[-1][0]), int(sc[-1][1])) != (doc["samples"],
                                                     doc["lost"]):
                fail("summary says %s samples, %s lost; JSON %d, %d" %
                     (sc[-1][0], sc[-1][1], doc["samples"], doc["lost"]))
    # keeping up: most events recorded. Losses come in bursts here (the
    # two threads on one CPU switch ~200k/s, twice the rate of other
    # placements), so the bound is loose; that every switch-out is recorded
    # or counted as lost is checked per thread below
    if lost_share > 0.5:
        fail("%.1f %% of the off-CPU events lost: not keeping up" %
             (100 * lost_share))
    if not a.both and cpu:
        fail("%d cpu stacks in an -e offcpu recording" % len(cpu))
    for s in off:
        if not isinstance(s.get("offcpu_ns"), int) or s["offcpu_ns"] <= 0:
            fail("an off-CPU stack of %s has offcpu_ns %s" %
                 (s["thread"], s.get("offcpu_ns")))
            break
        if "preempted" not in s:
            fail("an off-CPU stack without \"preempted\"")
            break
    for s in cpu:
        if "offcpu_ns" in s:
            fail("a cpu stack has offcpu_ns")
            break
    for role in ("ping", "pong"):
        tid, nsw, cpu_ns, wall_ns, steal_ns, nivcsw = th["cs-" + role]
        mine = [s for s in off if s["tid"] == tid]
        tot = sum(s["offcpu_ns"] for s in mine)
        cnt = sum(s["count"] for s in mine)
        chain_ok = 0
        kern_ok = 0
        blocked = 0
        blocked_n = 0
        blocked_pre = 0
        blocked_pre_n = 0
        pre_n = 0
        why = collections.Counter()
        for s in mine:
            u = user_names(s)
            k = kernel_names(s)
            if len(u) >= 4 and u[0] in ("cs_sys_read", "cs_sys_write") and \
                    u[1:4] == ["cs_exchange", "cs_%s_loop" % role,
                               "cs_%s_thread" % role]:
                chain_ok += s["offcpu_ns"]
            else:
                why[";".join(u[:5])] += s["offcpu_ns"]
            if any("schedule" in x for x in k):
                kern_ok += s["offcpu_ns"]
            if s.get("preempted") is True:
                pre_n += s["count"]
            # blocked in the read: schedule() called by the pipe read
            # itself (a preemption inside it comes through
            # preempt_schedule* or cond_resched instead)
            if u[:1] == ["cs_sys_read"] and any(
                    k[i] == "schedule" and k[i + 1] in PIPE_K
                    for i in range(len(k) - 1)):
                blocked += s["offcpu_ns"]
                blocked_n += s["count"]
                if s.get("preempted") is not False:
                    blocked_pre += s["offcpu_ns"]
                    blocked_pre_n += s["count"]
        print("MEASURE: offcpu: %s: %d switch-outs, %.3f s off-CPU; %.1f %% "
              "of it with the chain, %.1f %% with kernel frames "
              "(schedule)" % (role, cnt, tot / 1e9, pct(chain_ok, tot),
                              pct(kern_ok, tot)))
        for k, v in why.most_common(3):
            print("INFO: offcpu: %s: not the chain: %.3f s %s" %
                  (role, v / 1e9, k))
        if not tot:
            fail("%s: no off-CPU stacks" % role)
            continue
        if pct(chain_ok, tot) < 90:
            fail("%s: chain in %.1f %% < 90 %% of off-CPU time" %
                 (role, pct(chain_ok, tot)))
        if pct(kern_ok, tot) < 90:
            fail("%s: kernel frames in %.1f %% < 90 %%" %
                 (role, pct(kern_ok, tot)))
        # "preempted" is the kernel's involuntary switch: the thread was
        # runnable when it left the CPU. A read can rightly be one: woken
        # before its schedule() ran, it leaves the CPU runnable and may
        # then wait a whole time slice behind a spinner, so a few such
        # switches can be a large share of the blocked time. Counted, the
        # switch-outs are checked against the thread's own ru_nivcsw.
        print("MEASURE: offcpu: %s: %d of its %d switch-outs blocked in a "
              "pipe read marked preempted (%.2f %%; %.1f %% of %.3f s)" %
              (role, blocked_pre_n, blocked_n, pct(blocked_pre_n, blocked_n),
               pct(blocked_pre, blocked), blocked / 1e9))
        if pct(blocked_pre_n, blocked_n) > 5 or not blocked:
            fail("%s: %d of %d switch-outs blocked in a pipe read marked "
                 "preempted" % (role, blocked_pre_n, blocked_n))
        print("MEASURE: offcpu: %s: %d switch-outs marked preempted, the "
              "thread counted %d involuntary (ru_nivcsw)" %
              (role, pre_n, nivcsw))
        if not 0.9 * nivcsw - lost - 10 <= pre_n <= 1.05 * nivcsw + 10:
            fail("%s: %d switch-outs marked preempted, the kernel counted "
                 "%d involuntary switches of the thread (lost share %.1f %%)"
                 % (role, pre_n, nivcsw, 100 * lost_share))
        # the thread itself measured its life: off-CPU = wall - cpu. The
        # profiler's own time taking its stacks (offcpu_capture_ns, here
        # its share of the switch-outs times the mean) is in no offcpu_ns;
        # the scheduler charges it to whichever task comes next, which may
        # be this thread or the idle task. So the truth lies between the
        # off-CPU time alone and the off-CPU time plus the capture.
        # Time the hypervisor stole while the thread ran is in its wall
        # time but not in its CPU time (paravirtual time accounting) nor
        # off the CPU: up to the host's steal meanwhile (all CPUs) is
        # taken off the lower bound, nothing off the upper one.
        exp = wall_ns - cpu_ns
        cap = cnt * cap_mean
        print("MEASURE: offcpu: %s: off-CPU %.3f s + %.3f s taking its "
              "stacks = %.1f %% of the %.3f s it measured (wall - thread "
              "CPU time); %d switch-outs = %.1f %% of its %d (getrusage)" %
              (role, tot / 1e9, cap / 1e9, pct(tot + cap, exp), exp / 1e9,
               cnt, pct(cnt, nsw), nsw))
        print("MEASURE: offcpu: %s: the host stole %.3f s of its CPUs "
              "meanwhile" % (role, steal_ns / 1e9))
        lo = 0.9 * (1 - lost_share)
        if not lo * (exp - steal_ns) <= tot + cap or tot > 1.1 * exp:
            fail("%s: off-CPU time %.3f s (+ %.3f s capture) outside "
                 "%.0f..110 %% of %.3f s" %
                 (role, tot / 1e9, cap / 1e9, 100 * lo, exp / 1e9))
        # every switch-out is recorded or lost (the lost ones may all be
        # this thread's: a full ring drops whatever comes)
        if not 0.9 * nsw - lost <= cnt <= 1.05 * nsw + 10:
            fail("%s: %d switch-outs recorded, the thread counted %d "
                 "(lost share %.1f %%)" % (role, cnt, nsw, 100 * lost_share))
    # no thread can be off-CPU longer than the recording (but for the
    # --slack seconds between the sampler's attach and the recording's
    # start: longer in a VM without KVM)
    per = collections.Counter()
    for s in off:
        per[s["tid"]] += s["offcpu_ns"]
    for tid, ns in per.items():
        if ns > dur + a.slack * 1e9:
            fail("tid %d off-CPU %.3f s in a %.3f s recording" %
                 (tid, ns / 1e9, dur / 1e9))
    print("INFO: offcpu: all threads: %.3f s off-CPU in %d threads, "
          "recording %.3f s" % (sum(per.values()) / 1e9, len(per), dur / 1e9))
    if a.spin:
        sp = [s for s in off if s.get("thread", "").startswith("cs-spin")]
        tot = sum(s["offcpu_ns"] for s in sp)
        pre = sum(s["offcpu_ns"] for s in sp if s.get("preempted") is True)
        ch = sum(s["offcpu_ns"] for s in sp
                 if user_names(s)[:2] == ["cs_spin", "cs_spin_thread"])
        print("MEASURE: offcpu: spinners: %.3f s off-CPU, %.1f %% preempted, "
              "%.1f %% with cs_spin, cs_spin_thread" %
              (tot / 1e9, pct(pre, tot), pct(ch, tot)))
        if not tot:
            fail("spinners: no off-CPU stacks (more runnable threads than "
                 "CPUs: they must be preempted)")
        else:
            if pct(pre, tot) < 95:
                fail("spinners: preempted in %.1f %% < 95 %%" % pct(pre, tot))
            if pct(ch, tot) < 90:
                fail("spinners: chain in %.1f %% < 90 %%" % pct(ch, tot))
    if a.both:
        for role in ("ping", "pong"):
            tid = th["cs-" + role][0]
            want = ["cs_exchange", "cs_%s_loop" % role, "cs_%s_thread" % role]
            n = sum(s["count"] for s in cpu if s["tid"] == tid and
                    contains_seq(user_names(s), want))
            print("MEASURE: offcpu: -e cpu,offcpu: %s: %d cpu samples in "
                  "the chain" % (role, n))
            if n < 10:
                fail("%s: %d cpu samples of the chain with -e cpu,offcpu" %
                     (role, n))
    if a.pprof:
        types, samples, period = read_pprof(a.pprof)
        print("INFO: pprof sample types %s, period %d, %d samples" %
              (types, period, len(samples)))
        if ("offcpu", "nanoseconds") not in types:
            fail("pprof: no offcpu/nanoseconds sample type")
            return
        if any(len(v) != len(types) for v in samples):
            fail("pprof: a sample without one value per sample type")
            return
        oi = types.index(("offcpu", "nanoseconds"))
        osum = sum(v[oi] for v in samples)
        jsum = sum(s["offcpu_ns"] for s in doc["stacks"]
                   if s.get("event") == "offcpu")
        print("MEASURE: pprof: offcpu values sum %d, JSON offcpu_ns %d" %
              (osum, jsum))
        if osum != jsum:
            fail("pprof offcpu values != JSON offcpu_ns")
        if ("cpu", "nanoseconds") in types:
            ci = types.index(("cpu", "nanoseconds"))
            csum = sum(v[ci] for v in samples)
            ncpu = sum(s["count"] for s in doc["stacks"]
                       if s.get("event") == "cpu")
            if csum != ncpu * period:
                fail("pprof cpu values %d != %d cpu samples x period %d" %
                     (csum, ncpu, period))


def offcpu_groups(doc, pid, th):
    """{(role, leaf): ns} of the ping-pong threads' off-CPU stacks (leaf:
    cs_sys_read, cs_sys_write or other; blocked or preempted alike), and
    {role: (ns, count)}"""
    groups = collections.Counter()
    per = {}
    for role in ("ping", "pong"):
        tid = th["cs-" + role][0]
        ns = cnt = 0
        for s in doc["stacks"]:
            if s["pid"] != pid or s["tid"] != tid or \
                    s.get("event") != "offcpu":
                continue
            u = user_names(s)
            leaf = u[0] if u and u[0] in ("cs_sys_read", "cs_sys_write") \
                else "other"
            groups[(role, leaf)] += s["offcpu_ns"]
            ns += s["offcpu_ns"]
            cnt += s["count"]
        per[role] = (ns, cnt)
    return groups, per


def offcpu_key(s):
    return (s["tid"], s.get("preempted"),
            tuple((f["type"], fname(f)) for f in s["frames"]))


def cmd_offcpu_sampled(a):
    doc, full = load(a.json), load(a.full)
    th, thf = read_threads(a.workload), read_threads(a.full_workload)
    for t, w in ((th, a.workload), (thf, a.full_workload)):
        if "cs-ping" not in t or "cs-pong" not in t:
            fail("%s: no THREAD lines for cs-ping / cs-pong" % w)
            return
    g, per = offcpu_groups(doc, a.pid, th)
    gf, _ = offcpu_groups(full, a.full_pid, thf)
    capt = doc.get("offcpu_capture_ns") or 0
    stacks = doc.get("offcpu_samples") or 1
    for role in ("ping", "pong"):
        tid, nsw, cpu_ns, wall_ns, steal_ns, nivcsw = th["cs-" + role]
        ns, cnt = per[role]
        exp = wall_ns - cpu_ns
        chain = sum(s["offcpu_ns"] for s in doc["stacks"]
                    if s["pid"] == a.pid and s["tid"] == tid and
                    s.get("event") == "offcpu" and
                    user_names(s)[:1] in (["cs_sys_read"], ["cs_sys_write"])
                    and user_names(s)[1:4] == [
                        "cs_exchange", "cs_%s_loop" % role,
                        "cs_%s_thread" % role])
        print("MEASURE: offcpu-sampled: %s: the chain in %.1f %% of its "
              "off-CPU time" % (role, pct(chain, ns)))
        if pct(chain, ns) < 90:
            fail("%s: the chain in %.1f %% < 90 %% of its off-CPU time" %
                 (role, pct(chain, ns)))
        # the capture's time: in no offcpu_ns, charged to whichever task
        # runs next (as in offcpu); its share by the switch-outs
        cap = capt * cnt / max(1, sum(s["count"] for s in doc["stacks"]
                                      if s.get("event") == "offcpu"))
        print("MEASURE: offcpu-sampled: %s: off-CPU %.3f s (+ %.3f s "
              "taking stacks) = %.1f %% of the %.3f s it measured; %d "
              "switch-outs estimated = %.1f %% of its %d (getrusage)" %
              (role, ns / 1e9, cap / 1e9, pct(ns + cap, exp), exp / 1e9,
               cnt, pct(cnt, nsw), nsw))
        if not 0.85 * (exp - steal_ns) <= ns + cap or ns > 1.15 * exp:
            fail("%s: off-CPU %.3f s outside 85-115 %% of %.3f s" %
                 (role, ns / 1e9, exp / 1e9))
        if not 0.85 * nsw <= cnt <= 1.15 * nsw:
            fail("%s: %d switch-outs estimated, the thread counted %d" %
                 (role, cnt, nsw))
    tot, totf = sum(g.values()), sum(gf.values())
    if not tot or not totf:
        fail("no off-CPU time of the ping-pong threads")
        return
    worst = 0.0
    for k in sorted(set(g) | set(gf)):
        sh, shf = g[k] / tot, gf[k] / totf
        rel = (sh - shf) / shf if shf else float("inf")
        print("MEASURE: offcpu-sampled: %s %s: share %.2f %% sampled, "
              "%.2f %% every switch (%+.2f points, %+.1f %% relative)" %
              (k[0], k[1], 100 * sh, 100 * shf, 100 * (sh - shf),
               100 * rel))
        if shf >= 0.01:
            worst = max(worst, abs(sh - shf))
    print("MEASURE: offcpu-sampled: largest share difference %.2f points "
          "(groups >= 1 %%; %s 5), %d stacks taken" %
          (100 * worst, "within" if worst <= 0.05 else "NOT within", stacks))
    if a.summary:
        with open(a.summary) as fh:
            m = re.findall(r"offcpu_switches=(\d+) offcpu_stacks=(\d+) "
                           r"offcpu_every_mean=([0-9.]+) "
                           r"offcpu_every_now=(\d+)", fh.read())
        if not m:
            fail("no offcpu_switches .. offcpu_every_now in --stats")
        else:
            print("INFO: offcpu-sampled: --stats: %d switch-outs, %d stacks, "
                  "N %.1f on average, %d now" %
                  (int(m[-1][0]), int(m[-1][1]), float(m[-1][2]),
                   int(m[-1][3])))
            if float(m[-1][2]) <= 1:
                fail("the default took every switch's stack (N %s)" %
                     m[-1][2])
    if a.report:
        rep = load(a.report)
        live = collections.Counter()
        back = collections.Counter()
        for d, c in ((doc, live), (rep, back)):
            for s in d["stacks"]:
                if s.get("event") == "offcpu":
                    c[offcpu_key(s)] += 0
                    c[offcpu_key(s) + ("count",)] += s["count"]
                    c[offcpu_key(s) + ("ns",)] += s["offcpu_ns"]
        print("MEASURE: offcpu-sampled: report of the raw file: %d off-CPU "
              "stacks, %d live" % (len(back) // 3, len(live) // 3))
        if live != back:
            fail("report of the raw file: off-CPU stacks differ from live")


def pair_stats(path):
    """the last --stats figures of a recording's log: {name: float}"""
    with open(path) as fh:
        txt = fh.read()
    out = {}
    for k in ("offcpu_switches", "offcpu_stacks", "offcpu_every_mean",
              "offcpu_every_now", "offcpu_capture_ns"):
        m = re.findall(r"\b%s=([0-9.]+)" % k, txt)
        if m:
            out[k] = float(m[-1])
    return out


def cmd_offcpu_pair(a):
    doc, full = load(a.json), load(a.full)
    th = read_threads(a.workload)
    if "cs-ping" not in th:
        fail("%s: no THREAD line for cs-ping" % a.workload)
        return
    tid = th["cs-ping"][0]
    ss, sf = pair_stats(a.summary), pair_stats(a.full_summary)
    for k in ("offcpu_switches", "offcpu_every_mean"):
        if k not in ss or k not in sf:
            fail("no %s in the --stats lines" % k)
            return
    print("MEASURE: offcpu-pair: switch-outs seen: %d sampled, %d full; "
          "N %.1f on average sampled (%d stacks), %.1f full (%d stacks, "
          "%d lost)" %
          (ss["offcpu_switches"], sf["offcpu_switches"],
           ss["offcpu_every_mean"], ss.get("offcpu_stacks", 0),
           sf["offcpu_every_mean"], sf.get("offcpu_stacks", 0),
           full.get("offcpu_lost", 0)))
    if abs(ss["offcpu_switches"] - sf["offcpu_switches"]) > \
            0.01 * sf["offcpu_switches"]:
        unmet_setup("the two recorders saw %d and %d switch-outs: not "
                    "the same switches" %
                    (ss["offcpu_switches"], sf["offcpu_switches"]))
    if sf["offcpu_every_mean"] != 1.0:
        unmet_setup("the full recording's N is %.1f, not 1" %
                    sf["offcpu_every_mean"])
    if ss["offcpu_every_mean"] <= 1.0:
        fail("the sampled recording took every switch's stack (N %.1f)" %
             ss["offcpu_every_mean"])
    flost = full.get("offcpu_lost", 0)
    if flost > 0.01 * max(1, full.get("offcpu_samples", 0)):
        unmet_setup("the full recording lost %d of %d stacks: not the "
                    "whole truth" % (flost, full.get("offcpu_samples", 0)))

    def mine(d):
        return [s for s in d["stacks"] if s.get("event") == "offcpu" and
                s["tid"] == tid]
    for d, n in ((doc, "sampled"), (full, "full")):
        if any(s.get("thread") == "cs-pong" for s in d["stacks"]):
            fail("%s: cs-pong stacks, but its process was not a target" % n)
    ms, mf = mine(doc), mine(full)
    ns, nf = sum(s["offcpu_ns"] for s in ms), sum(s["offcpu_ns"] for s in mf)
    cs, cf = sum(s["count"] for s in ms), sum(s["count"] for s in mf)
    if not ns or not nf:
        fail("no off-CPU time of cs-ping (sampled %d ns, full %d ns)" %
             (ns, nf))
        return
    print("MEASURE: offcpu-pair: cs-ping: off-CPU %.3f s sampled = %.1f %% "
          "of %.3f s full; %d switch-outs = %.1f %% of %d (getrusage %d)" %
          (ns / 1e9, pct(ns, nf), nf / 1e9, cs, pct(cs, cf), cf,
           th["cs-ping"][1]))
    # what the sampled recorder's intervals hold beyond the full one's, per
    # switch-out: the full program's own time at cs-ping's switch-in after
    # it read the clock (its END record, the leaving task's lookups), less
    # the sampled program's captures (in the full one's intervals); both
    # fall on a switch-out whatever its stack
    extra = (ns - nf) / cf if cf else 0.0
    print("MEASURE: offcpu-pair: the sampled recording's intervals hold "
          "%+.0f ns a switch-out beyond the full one's (%+.1f %% of its "
          "mean %.0f ns)" % (extra, 100 * extra * cf / nf, nf / cf))
    if not 90 <= pct(ns, nf) <= 110:
        unmet_setup("cs-ping: off-CPU %.1f %% of the full recording's: "
                    "the two recorders did not see the same intervals" %
                    pct(ns, nf))
    if not 97 <= pct(cs, cf) <= 103:
        unmet_setup("cs-ping: %d switch-outs, the full recording %d" %
                    (cs, cf))
    if unmet:
        print("INFO: offcpu-pair: the two recordings did not see the same "
              "intervals: shares not compared")
        return
    for what, key in (
            ("stack", lambda s: (s.get("preempted"),) +
             tuple((f["type"], fname(f)) for f in s["frames"])),
            ("user frames", lambda s: tuple(user_names(s)))):
        gs, gf, graw = (collections.Counter(), collections.Counter(),
                         collections.Counter())
        for s in ms:
            gs[key(s)] += s["offcpu_ns"]
        for s in mf:
            graw[key(s)] += s["offcpu_ns"]
            # the truth for the sampled recording: the full one's time
            # and, per switch-out, what the sampled intervals hold beyond
            gf[key(s)] += s["offcpu_ns"] + extra * s["count"]
        worst, checked = 0.0, 0
        for k in sorted(gf, key=lambda k: -gf[k]):
            shf, sh = gf[k] / ns, gs[k] / ns
            if shf < 0.01:
                continue
            checked += 1
            d = sh - shf
            worst = max(worst, abs(d))
            # root first, as collapsed shows it
            names = [x[1] if isinstance(x, tuple) else x
                     for x in reversed(k) if not isinstance(x, bool)]
            label = ";".join(n for n in names if n is not None)
            if k and k[0] is True:
                label += " (preempted)"
            print("MEASURE: offcpu-pair: %s %s: share %.2f %% sampled, "
                  "%.2f %% full (%+.2f points, %+.1f %% relative; %.2f %% "
                  "in the full recording as it is)" %
                  (what, label, 100 * sh, 100 * shf, 100 * d,
                   100 * d / shf, 100 * graw[k] / nf))
            if abs(d) > a.tol / 100:
                fail("cs-ping: %s %s: share %.2f %% sampled, %.2f %% full: "
                     "%.2f points apart (> %g)" %
                     (what, label, 100 * sh, 100 * shf, 100 * abs(d),
                      a.tol))
        print("MEASURE: offcpu-pair: largest share difference per %s "
              "%.2f points (%d of >= 1 %% of the truth; "
              "tolerance %g)" % (what, 100 * worst, checked, a.tol))
        if checked < 2:
            fail("cs-ping: %d %s groups of >= 1 %%: want its two waits" %
                 (checked, what))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("vthreads")
    p.add_argument("json")
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--view", default="merged",
                   choices=["merged", "virtual", "carrier"])
    p.add_argument("--jstack", nargs="*")
    p.add_argument("--min", type=float, default=95.0)
    p = sub.add_parser("pinned")
    p.add_argument("json")
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--phase", required=True)
    p.add_argument("--jfr-json")
    p.add_argument("--min-share", type=float, default=70.0)
    p.add_argument("--jfr-tol", type=float, default=10.0)
    p = sub.add_parser("report-pinned")
    p.add_argument("txt")
    p.add_argument("--json", required=True)
    p.add_argument("--live")
    p.add_argument("--phase")
    p = sub.add_parser("offcpu")
    p.add_argument("json")
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--workload", required=True)
    p.add_argument("--summary")
    p.add_argument("--spin", action="store_true")
    p.add_argument("--both", action="store_true")
    p.add_argument("--pprof")
    p.add_argument("--slack", type=float, default=0.2)
    p = sub.add_parser("offcpu-sampled")
    p.add_argument("json")
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--workload", required=True)
    p.add_argument("--full", required=True)
    p.add_argument("--full-pid", type=int, required=True)
    p.add_argument("--full-workload", required=True)
    p.add_argument("--summary")
    p.add_argument("--report")
    p = sub.add_parser("offcpu-pair")
    p.add_argument("json")
    p.add_argument("--full", required=True)
    p.add_argument("--workload", required=True)
    p.add_argument("--summary", required=True)
    p.add_argument("--full-summary", required=True)
    p.add_argument("--tol", type=float, default=5.0)
    a = ap.parse_args()
    {"vthreads": cmd_vthreads, "pinned": cmd_pinned,
     "report-pinned": cmd_report_pinned, "offcpu": cmd_offcpu,
     "offcpu-sampled": cmd_offcpu_sampled,
     "offcpu-pair": cmd_offcpu_pair}[a.cmd](a)
    return 1 if failures else 3 if unmet else 0


if __name__ == "__main__":
    sys.exit(main())
