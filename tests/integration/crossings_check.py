#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Checks the Java <-> C crossings in asgst-bpf profiles of the workloads
tests/workloads/JniChain.java and tests/workloads/jdk25/FfmChain.java.

  crossings_check.py MODE JSON --javap JAVAP --classes DIR [--min PCT]
                     [--collapsed FILE] [--html FILE]

Per sample of the mode's thread (every sample counts, failed walks too):

MODE jni     thread "jni": C chain jc_leaf .. Java_JniChain_nativeChain,
             java_native JniChain.nativeChain with "downcall": "jni", then
             j3, j2, j1, JniChain$Jni.run, Thread tail; state in_native.
MODE jnicb   thread "jnicb": javaLeaf, the call_stub with "upcall": "jni",
             jcb_b, jcb_a, Java_JniChain_nativeCallback, java_native
             nativeCallback ("downcall": "jni"), k2, k1, JniChain$Cb.run,
             Thread tail; state in_java.
MODE ffm     thread "ffm": C chain (ffm_chain, fc_a, fc_b, fc_leaf[, spin
             [, ffm_sink]]), the java_native nep_invoker_blob frame with
             "downcall": "ffm", then the method-handle glue
             (java.lang.invoke.*, jdk.internal.foreign.*), p3, p2, p1,
             FfmChain$Plain.run, Thread tail; state in_native.
MODE ffmcrit thread "ffmcrit": the same with fk_*, q3..q1, FfmChain$Crit,
             "downcall": "ffm_critical"; state in_java.
MODE ffmup   thread "ffmup": upLeaf, glue, the non_java upcall_stub with
             "upcall": "ffm", fu_b, fu_a, ffm_callback, nep_invoker_blob
             ("downcall": "ffm"), glue, u2, u1, FfmChain$Up.run, Thread
             tail; state in_java: one stack, Java -> C -> Java.

Each Java caller's bci must be its call site's (javap at test time). With
--collapsed / --html the same share of the thread's samples must show the
crossing in the frame names there (" [jni]", " [ffm]", " [ffm critical]",
" [upcall jni]", " [upcall ffm]"). Prints INFO/MEASURE lines; exit 0 when
every share >= --min.
"""
import argparse
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_check import javap_calls, call_bci, thread_tail  # noqa: E402

JAVA_TYPES = ("java", "java_inlined", "java_native")
GLUE = ("java.lang.invoke.", "jdk.internal.foreign.")


def is_glue(f):
    return f["type"] in ("java", "java_inlined") and \
        (f.get("class") or "").startswith(GLUE)


def spec_for(args):
    tail = thread_tail(args)
    if args.mode in ("jni", "jnicb"):
        calls = javap_calls(args.javap, args.classes, "JniChain")
    else:
        calls = javap_calls(args.javap, args.classes, "FfmChain")
    m = args.mode
    if m == "jni":
        wc = javap_calls(args.javap, args.classes, "JniChain$Jni")
        return dict(
            thread="jni", state="in_native",
            top_c=["Java_JniChain_nativeChain", "jc_a", "jc_b", "jc_c",
                   "jc_leaf"], top_c_opt=["jc_sink"],
            seq=[("barrier_jni", "JniChain", "nativeChain", "jni"),
                 ("j", "JniChain", "j3", call_bci(calls, "j3", "nativeChain")),
                 ("j", "JniChain", "j2", call_bci(calls, "j2", "j3")),
                 ("j", "JniChain", "j1", call_bci(calls, "j1", "j2")),
                 ("j", "JniChain$Jni", "run", call_bci(wc, "run", "j1"))],
            tail=tail,
            names=["JniChain.nativeChain [jni]"])
    if m == "jnicb":
        wc = javap_calls(args.javap, args.classes, "JniChain$Cb")
        return dict(
            thread="jnicb", state="in_java", top_java=("JniChain", "javaLeaf"),
            seq=[("upcall", "call_stub", "jni",
                  ["jcb_b", "jcb_a", "Java_JniChain_nativeCallback"]),
                 ("barrier_jni", "JniChain", "nativeCallback", "jni"),
                 ("j", "JniChain", "k2", call_bci(calls, "k2",
                                                   "nativeCallback")),
                 ("j", "JniChain", "k1", call_bci(calls, "k1", "k2")),
                 ("j", "JniChain$Cb", "run", call_bci(wc, "run", "k1"))],
            tail=tail,
            names=["call_stub [upcall jni]", "JniChain.nativeCallback [jni]"])
    if m in ("ffm", "ffmcrit"):
        crit = m == "ffmcrit"
        p = "q" if crit else "p"
        cls = "FfmChain$Crit" if crit else "FfmChain$Plain"
        wc = javap_calls(args.javap, args.classes, cls)
        kind = "ffm_critical" if crit else "ffm"
        cs = (["ffm_crit_chain", "fk_a", "fk_b", "fk_leaf"] if crit else
              ["ffm_chain", "fc_a", "fc_b", "fc_leaf"])
        return dict(
            thread=m, state="in_java" if crit else "in_native",
            top_c=cs, top_c_opt=["spin", "ffm_sink"],
            seq=[("barrier_ffm", kind), ("glue",),
                 ("j", "FfmChain", p + "3",
                  call_bci(calls, p + "3", "invokeExact")),
                 ("j", "FfmChain", p + "2", call_bci(calls, p + "2", p + "3")),
                 ("j", "FfmChain", p + "1", call_bci(calls, p + "1", p + "2")),
                 ("j", cls, "run", call_bci(wc, "run", p + "1"))],
            tail=tail,
            names=["nep_invoker_blob [ffm critical]" if crit else
                   "nep_invoker_blob [ffm]"])
    wc = javap_calls(args.javap, args.classes, "FfmChain$Up")
    return dict(
        thread="ffmup", state="in_java", top_java=("FfmChain", "upLeaf"),
        seq=[("glue",),
             ("upcall", "upcall_stub", "ffm", ["fu_b", "fu_a", "ffm_callback"]),
             ("barrier_ffm", "ffm"), ("glue",),
             ("j", "FfmChain", "u2", call_bci(calls, "u2", "invokeExact")),
             ("j", "FfmChain", "u1", call_bci(calls, "u1", "u2")),
             ("j", "FfmChain$Up", "run", call_bci(wc, "run", "u1"))],
        tail=tail,
        names=["upcall_stub [upcall ffm]", "nep_invoker_blob [ffm]"])


def user_frames(st):
    return [f for f in st["frames"] if f["type"] != "kernel"]


def check_stack(st, sp):
    """None when the stack is right, else why not"""
    if st.get("error"):
        return "error " + st["error"]["name"]
    if st.get("state") != sp["state"]:
        return "state %s" % st.get("state")
    fr = user_frames(st)
    i = 0
    if "top_c" in sp:
        # the C chain above the barrier, callee first
        k = 0
        while k < len(fr) and fr[k]["type"] == "non_java":
            k += 1
        syms = [f.get("symbol") for f in fr[:k]][::-1]
        want = sp["top_c"]
        if syms[:len(want)] != want or \
                syms[len(want):] != sp["top_c_opt"][:len(syms) - len(want)]:
            return "C frames above the barrier %s" % syms[::-1]
        i = k
    else:
        cls, meth = sp["top_java"]
        if not fr or fr[0].get("class") != cls or fr[0].get("method") != meth:
            f0 = fr[0] if fr else {}
            return "top frame %s.%s" % (f0.get("class"), f0.get("method"))
        i = 1
    for tok in sp["seq"] + [("j", c, m, b) for c, m, b in sp["tail"]]:
        if tok[0] == "glue":
            while i < len(fr) and is_glue(fr[i]):
                i += 1
            continue
        if i >= len(fr):
            return "stack ends before %s" % (tok,)
        f = fr[i]
        if tok[0] == "j":
            _, cls, meth, bci = tok
            if f["type"] not in ("java", "java_inlined") or \
                    f.get("class") != cls or f.get("method") != meth:
                return "frame %d is %s %s.%s, expected %s.%s" % (
                    i, f["type"], f.get("class"), f.get("method"), cls, meth)
            if bci is not None and f.get("bci") != bci:
                return "%s.%s bci %s != call site %d" % (cls, meth,
                                                         f.get("bci"), bci)
            if f.get("downcall") or f.get("upcall"):
                return "%s.%s marked as a crossing" % (cls, meth)
            i += 1
        elif tok[0] == "barrier_jni":
            _, cls, meth, kind = tok
            if f["type"] != "java_native" or f.get("class") != cls or \
                    f.get("method") != meth:
                return "frame %d is %s %s.%s, expected the java_native " \
                    "%s.%s" % (i, f["type"], f.get("class"), f.get("method"),
                               cls, meth)
            if f.get("downcall") != kind:
                return "%s downcall %s" % (meth, f.get("downcall"))
            i += 1
        elif tok[0] == "barrier_ffm":
            kind = tok[1]
            if f["type"] != "java_native" or f.get("class") is not None or \
                    f.get("symbol") != "nep_invoker_blob":
                return "frame %d is %s %s/%s, expected the java_native " \
                    "nep_invoker_blob" % (i, f["type"], f.get("class"),
                                          f.get("symbol"))
            if f.get("downcall") != kind:
                return "nep_invoker_blob downcall %s, expected %s" % (
                    f.get("downcall"), kind)
            i += 1
        elif tok[0] == "upcall":
            _, sym, kind, between = tok
            if f["type"] != "non_java" or f.get("symbol") != sym:
                return "frame %d is %s %s, expected %s" % (
                    i, f["type"], f.get("symbol") or f.get("method"), sym)
            if f.get("upcall") != kind:
                return "%s upcall %s" % (sym, f.get("upcall"))
            i += 1
            # the C frames up to the barrier: the JVM's own (JavaCalls,
            # jni_*) may come first, the workload's must end the run
            syms = []
            while i < len(fr) and fr[i]["type"] == "non_java":
                syms.append(fr[i].get("symbol"))
                i += 1
            if syms[len(syms) - len(between):] != between:
                return "C frames between %s and the barrier %s" % (sym, syms)
    # the thread's own root: its first entry, not a crossing
    rest = fr[i:]
    if any(f["type"] != "non_java" for f in rest):
        return "frames after Thread.run: %s" % [f["type"] for f in rest]
    if any(f.get("upcall") or f.get("downcall") for f in rest):
        return "the thread's root frames are marked as a crossing"
    return None


def share_names(path, parse, sp):
    """share of the thread's samples whose frame names show the crossing"""
    good = total = 0
    for names, count in parse(path, sp):
        total += count
        if all(n in names for n in sp["names"]):
            good += count
    return good, total


def collapsed_lines(path, sp):
    # the thread is not in the line: pick the lines by the thread's
    # own Java frames (FfmChain$Plain.run etc.)
    key = thread_key(sp)
    with open(path) as fh:
        for line in fh:
            stack, count = line.rstrip("\n").rsplit(" ", 1)
            names = [re.sub(r"_\[[jik]\]$", "", n) for n in stack.split(";")]
            if key in names:
                yield names, int(count)


def thread_key(sp):
    run = [t for t in sp["seq"] if t[0] == "j"][-1]
    return "%s.%s" % (run[1].replace(".", "/"), run[2])


def html_lines(path, sp):
    """root-to-leaf name paths of the flame graph's leaves, with counts"""
    with open(path) as fh:
        text = fh.read()
    m = re.search(r'<script id="fg-data" type="application/json">\n(.*?)\n'
                  r'</script>', text, re.S)
    data = json.loads(m.group(1))
    names, frames, enc = data["names"], data["frames"], data["nodes"]
    nums = decode_nums(enc)
    n = data["n"]
    parent = [0] * n
    fname = [None] * n
    paths = []
    for i in range(n):
        fr, dist, self_ = nums[5 * i], nums[5 * i + 1], nums[5 * i + 2]
        parent[i] = i - dist if i else -1
        fname[i] = names[frames[3 * fr]]
        if self_:
            p, path_ = i, []
            while p >= 0:
                path_.append(fname[p])
                p = parent[p]
            paths.append((path_, self_))
    key = thread_key(sp)
    for path_, count in paths:
        if key in path_:
            yield path_, count


# the page's number code (docs/formats.md, HTML): base-32 digits, most
# significant first, the last one from NUM_END, the others from NUM_MORE
NUM_MORE = "0123456789abcdefghijklmnopqrstuv"
NUM_END = "ABCDEFGHIJKLMNOPQRSTUVWXYZwxyz+/"


def decode_nums(s):
    out, v = [], 0
    for c in s:
        if c in NUM_MORE:
            v = v * 32 + NUM_MORE.index(c)
        else:
            out.append(v * 32 + NUM_END.index(c))
            v = 0
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["jni", "jnicb", "ffm", "ffmcrit",
                                     "ffmup"])
    ap.add_argument("json")
    ap.add_argument("--javap", required=True)
    ap.add_argument("--classes", required=True)
    ap.add_argument("--min", type=float, default=95.0)
    ap.add_argument("--collapsed")
    ap.add_argument("--html")
    args = ap.parse_args()

    sp = spec_for(args)
    for tok in sp["seq"]:
        if tok[0] == "j" and tok[3] is None:
            print("FAIL: javap gave no single call site for %s.%s" %
                  (tok[1], tok[2]))
            return 1
    with open(args.json) as fh:
        prof = json.load(fh)
    total = good = 0
    why = collections.Counter()
    for st in prof["stacks"]:
        if st.get("thread") != sp["thread"]:
            continue
        total += st["count"]
        w = check_stack(st, sp)
        if w is None:
            good += st["count"]
        else:
            why[w] += st["count"]
    if not total:
        print("FAIL: no samples of thread %r in %s" % (sp["thread"],
                                                        args.json))
        return 1
    rc = 0
    pct = 100.0 * good / total
    print("MEASURE: %s: %.2f %% of %d samples of thread %s: chain whole, "
          "crossings right, state %s" % (args.mode, pct, total, sp["thread"],
                                         sp["state"]))
    for k, v in why.most_common(5):
        print("INFO: bad: %d x %s" % (v, k))
    if pct < args.min:
        print("FAIL: %.2f %% < %.1f %%" % (pct, args.min))
        rc = 1
    for what, path, parse in (("collapsed", args.collapsed, collapsed_lines),
                              ("html", args.html, html_lines)):
        if not path:
            continue
        g, t = share_names(path, parse, sp)
        p = 100.0 * g / t if t else 0.0
        print("MEASURE: %s: %s: %.2f %% of %d samples named with %s" %
              (args.mode, what, p, t, " and ".join(repr(n) for n in
                                                  sp["names"])))
        if t < total * 0.9 or p < args.min:
            print("FAIL: %s names: %.2f %% of %d samples (JSON: %d)" %
                  (what, p, t, total))
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
