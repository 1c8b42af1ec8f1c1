#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Checks asgst-bpf JSON profiles of the decoder workloads.

  decode_check.py MODE JSON --javap JAVAP --classes DIR [--min PCT]
                  [--jstack FILE] [--levels SPEC]

MODE chain: thread "chain" of tests/workloads/Chain.java must hold the exact
chain leaf, c22 .. c01, Chain$Worker.run, [Thread.runWith], Thread.run with
each caller's bci equal to its call site's (from javap at test time).
MODE jni: thread "jni" of JniChain.java: jc_leaf .. Java_JniChain_nativeChain
(non_java), JniChain.nativeChain (java_native), j3, j2, j1, JniChain$Jni.run,
Thread.run.  MODE jnicb: thread "jnicb": javaLeaf, the C frames
jcb_b, jcb_a, Java_JniChain_nativeCallback between it and the java_native
JniChain.nativeCallback, then k2, k1, JniChain$Cb.run, Thread.run.

--levels: "compiled" (chain frames C1/C2, some inlined), "interp" (all 0,
none inlined), "c1" (chain frames level 1..3).
Prints INFO/MEASURE lines; exit 0 when the share of good samples >= --min.
"""
import argparse
import collections
import json
import re
import subprocess
import sys

JAVA_TYPES = ("java", "java_inlined", "java_native")


def javap_calls(javap, cp, cls):
    """{method name: [(bci, 'Class.method'), ...]} of the invokes in cls"""
    args = [javap, "-c", "-p"]
    if cp:
        args += ["-cp", cp]
    # javap is the oracle, not what is tested: a JVM that a signal killed
    # (under QEMU's emulation it has aborted once) is run again, twice at
    # most; its own errors stand
    for attempt in range(3):
        r = subprocess.run(args + [cls], capture_output=True, text=True)
        if r.returncode >= 0:
            break
        print("INFO: %s died with signal %d: %s" %
              (" ".join(args + [cls]), -r.returncode,
               " | ".join(r.stderr.splitlines()[:3])))
    r.check_returncode()
    out = r.stdout
    calls = collections.defaultdict(list)
    cur = None
    for line in out.splitlines():
        m = re.match(r"^  (?:[\w$<>\[\].,]+ )*([\w$<>]+)\((.*)\)[^;]*;$", line)
        if m:
            cur = m.group(1)
            continue
        m = re.match(r"^\s+(\d+): invoke\w+\s+#\d+(?:,\s*\d+)?\s+// "
                     r"(?:Interface)?Method ([\w/$.]+\.)?([\w$<>\"]+):", line)
        if m and cur:
            calls[cur].append((int(m.group(1)), m.group(3)))
    return calls


def call_bci(calls, caller, callee):
    bcis = [b for b, name in calls.get(caller, []) if name == callee]
    return bcis[0] if len(bcis) == 1 else None


def expected_chain(args):
    """[(class, method, expected bci or None)] callee first"""
    calls = javap_calls(args.javap, args.classes, "Chain")
    exp = [("Chain", "leaf", None)]
    for i in range(22, 0, -1):
        callee = "leaf" if i == 22 else "c%02d" % (i + 1)
        exp.append(("Chain", "c%02d" % i, call_bci(calls, "c%02d" % i,
                                                    callee)))
    wcalls = javap_calls(args.javap, args.classes, "Chain$Worker")
    exp.append(("Chain$Worker", "run", call_bci(wcalls, "run", "c01")))
    return exp


def thread_tail(args):
    """Thread.run (and runWith on JDK 21+) with call-site bcis"""
    calls = javap_calls(args.javap, None, "java.lang.Thread")
    tail = []
    if "runWith" in calls and call_bci(calls, "run", "runWith") is not None:
        tail.append(("java.lang.Thread", "runWith",
                     call_bci(calls, "runWith", "run")))
        tail.append(("java.lang.Thread", "run",
                     call_bci(calls, "run", "runWith")))
    else:
        tail.append(("java.lang.Thread", "run", call_bci(calls, "run", "run")))
    return tail


def jframes(stack):
    return [f for f in stack["frames"] if f["type"] in JAVA_TYPES]


def check_java(frames, exp, why):
    if len(frames) != len(exp):
        why["java frame count %d != %d" % (len(frames), len(exp))] += 1
        return False
    for i, (f, (cls, meth, bci)) in enumerate(zip(frames, exp)):
        if f.get("class") != cls or f.get("method") != meth:
            why["frame %d is %s.%s, expected %s.%s" %
                (i, f.get("class"), f.get("method"), cls, meth)] += 1
            return False
        if i > 0 and bci is not None and f.get("bci") != bci:
            why["%s.%s bci %s != call site %d" %
                (cls, meth, f.get("bci"), bci)] += 1
            return False
    return True


def check_levels(frames, spec, why, inl):
    chain = frames[:-1]
    for f in chain:
        lvl, t = f.get("comp_level"), f["type"]
        if t == "java_inlined":
            inl[0] += 1
        if spec == "interp" and (lvl != 0 or t == "java_inlined"):
            why["%s.%s level %s type %s under -Xint" %
                (f["class"], f["method"], lvl, t)] += 1
            return False
        if spec == "c1" and f["class"] == "Chain" and lvl not in (1, 2, 3):
            why["%s.%s level %s, expected C1" % (f["class"], f["method"],
                                                  lvl)] += 1
            return False
        if spec == "compiled" and f["class"] == "Chain" and \
                lvl not in (1, 2, 3, 4):
            why["%s.%s level %s, expected compiled" %
                (f["class"], f["method"], lvl)] += 1
            return False
    # an inlined frame shares the level of the compiled frame holding it
    for a, b in zip(frames, frames[1:]):
        if a["type"] == "java_inlined" and a["comp_level"] != b["comp_level"]:
            why["inlined frame level differs from its holder"] += 1
            return False
    if frames and frames[-1]["type"] != "java":
        why["outermost frame is %s" % frames[-1]["type"]] += 1
        return False
    return True


def natives_between(stack, first_java_idx, second_java_idx):
    fr = stack["frames"]
    return [f.get("symbol") for f in fr[first_java_idx + 1:second_java_idx]
            if f["type"] == "non_java"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["chain", "jni", "jnicb"])
    ap.add_argument("json")
    ap.add_argument("--javap", required=True)
    ap.add_argument("--classes", required=True)
    ap.add_argument("--min", type=float, default=98.0)
    ap.add_argument("--jstack")
    ap.add_argument("--levels", default="any")
    args = ap.parse_args()

    with open(args.json) as fh:
        prof = json.load(fh)
    thread = {"chain": "chain", "jni": "jni", "jnicb": "jnicb"}[args.mode]
    tail = thread_tail(args)
    if args.mode == "chain":
        exp = expected_chain(args) + tail
    elif args.mode == "jni":
        calls = javap_calls(args.javap, args.classes, "JniChain")
        wc = javap_calls(args.javap, args.classes, "JniChain$Jni")
        exp = [("JniChain", "nativeChain", None),
               ("JniChain", "j3", call_bci(calls, "j3", "nativeChain")),
               ("JniChain", "j2", call_bci(calls, "j2", "j3")),
               ("JniChain", "j1", call_bci(calls, "j1", "j2")),
               ("JniChain$Jni", "run", call_bci(wc, "run", "j1"))] + tail
        cexp = ["jc_leaf", "jc_c", "jc_b", "jc_a",
                "Java_JniChain_nativeChain"]
    else:
        calls = javap_calls(args.javap, args.classes, "JniChain")
        wc = javap_calls(args.javap, args.classes, "JniChain$Cb")
        exp = [("JniChain", "javaLeaf", None),
               ("JniChain", "nativeCallback", None),
               ("JniChain", "k2", call_bci(calls, "k2", "nativeCallback")),
               ("JniChain", "k1", call_bci(calls, "k1", "k2")),
               ("JniChain$Cb", "run", call_bci(wc, "run", "k1"))] + tail
        cexp = ["jcb_b", "jcb_a", "Java_JniChain_nativeCallback"]
    for cls, meth, bci in exp[1:]:
        if bci is None and meth not in ("nativeChain", "nativeCallback"):
            print("FAIL: javap gave no single call site for %s.%s" %
                  (cls, meth))
            return 1

    total = good = 0
    why = collections.Counter()
    inl = [0]
    good_java = []
    errors = collections.Counter()
    for st in prof["stacks"]:
        if st.get("thread") != thread:
            continue
        n = st["count"]
        total += n
        if st.get("error"):
            errors[st["error"]["name"]] += n
            why["error " + st["error"]["name"]] += n
            continue
        fr = jframes(st)
        w1 = collections.Counter()
        ok = check_java(fr, exp, w1)
        if ok and args.mode == "chain":
            ok = check_levels(fr, args.levels, w1, inl)
        if ok and args.mode == "jni":
            if fr[0]["type"] != "java_native":
                w1["nativeChain frame is %s" % fr[0]["type"]] += 1
                ok = False
            else:
                idx = st["frames"].index(fr[0])
                syms = [f.get("symbol") for f in st["frames"][:idx]
                        if f["type"] == "non_java"]
                if syms != cexp:
                    w1["C frames %s" % syms] += 1
                    ok = False
        if ok and args.mode == "jnicb":
            i0 = st["frames"].index(fr[0])
            i1 = st["frames"].index(fr[1])
            syms = natives_between(st, i0, i1)
            tailsyms = [s for s in syms if s in cexp]
            if fr[1]["type"] != "java_native" or tailsyms != cexp:
                w1["between javaLeaf and nativeCallback: %s" % syms] += 1
                ok = False
        if ok:
            good += n
            good_java.append(fr)
        else:
            for k in w1:
                why[k] += n
    if not total:
        print("FAIL: no samples of thread %r in %s" % (thread, args.json))
        return 1
    pct = 100.0 * good / total
    print("MEASURE: %s: %.2f %% of %d samples of thread %s hold the exact "
          "chain (%s)" % (args.mode, pct, total, thread, args.levels))
    for k, v in why.most_common(5):
        print("INFO: bad: %d x %s" % (v, k))
    if args.mode == "chain" and args.levels in ("compiled", "c1") and \
            good and not inl[0]:
        print("FAIL: no java_inlined frame in any good sample")
        return 1

    if args.jstack:
        # the JVM's own view (Thread.getStackTrace, no hidden frames)
        views = []
        with open(args.jstack) as fh:
            for line in fh:
                if line.startswith("JSTACK "):
                    views.append([e.rsplit(":", 1) for e in
                                  line[7:].strip().split(";")])
        if not views:
            print("FAIL: the workload printed no JSTACK line")
            return 1
        agree = 0
        for v in views:
            for fr in good_java[:50]:
                vis = [f for f in fr if f["method"] != "runWith"]
                names = ["%s.%s" % (f["class"], f["method"]) for f in vis]
                if names != [e[0] for e in v]:
                    continue
                lines = [str(f["line"]) for f in vis[1:]]
                if lines == [e[1] for e in v[1:]]:
                    agree += 1
                    break
        print("MEASURE: cross-check: %d of %d Thread.getStackTrace views "
              "match decoded stacks frame for frame (class, method, caller "
              "lines)" % (agree, len(views)))
        if agree != len(views):
            print("FAIL: decoded frames disagree with Thread.getStackTrace")
            return 1
    if pct < args.min:
        print("FAIL: %.2f %% < %.1f %%" % (pct, args.min))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
