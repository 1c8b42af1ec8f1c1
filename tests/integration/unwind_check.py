#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check native stacks of one process in a JSON recording.

  unwind_check.py FILE (--pid PID | --comm RE [--not-pid PID])
                  [--min-whole PCT] [--min-samples N]
                  [--leaf RE --chain RE,+RE,*RE,...] [--order RE,RE,...]
                  [--measure NAME] [--errors-explained]

--unreadable-max PCT: stacks whose user stack could not be read at all (an
exec was replacing the process's memory) are left out of the whole figure,
counted apart, and may be at most PCT percent of all.
--comm: the stacks of every process whose command matches RE (short-lived
children of a command), but --not-pid's.
whole: the walk had no error and its outermost user frame is where a
thread's stack begins (_start, or clone3/clone for other threads).
--leaf/--chain: of the samples whose innermost user frame matches --leaf,
the user frames from the innermost on match the chain consecutively (+RE:
one or more frames, *RE: any number); at least --min-whole percent of them must.
--order: the names occur in this order (innermost first), not
consecutively, in --min-whole percent of all samples.
--errors-explained: every stack that is not whole has an error code and a
reason frame (an unknown frame saying why).
Prints MEASURE lines; exit 1 when a check fails.
"""
import argparse
import json
import re
import sys

OUTERMOST = ("_start", "__clone3", "__clone", "clone", "clone3",
             # Go: a goroutine's first frame, a thread's (raw clone), and
             # the g0 stack a goroutine's stack growth switches to
             "runtime.goexit.abi0", "runtime.clone.abi0",
             "runtime.morestack.abi0", "runtime.rt0_go.abi0")


def user_frames(st):
    return [f for f in st["frames"] if f["type"] != "kernel"]


def names(fr):
    return [f.get("symbol") or "" for f in fr]


def chain_ok(nm, chain):
    i = 0
    for pat in chain:
        rep = pat[0] if pat[0] in "+*" else ""
        rx = re.compile(pat[1:] if rep else pat)
        if rep != "*":
            if i >= len(nm) or not rx.fullmatch(nm[i]):
                return False
            i += 1
        while rep and i < len(nm) and rx.fullmatch(nm[i]):
            i += 1
    return True


def order_ok(nm, order):
    i = 0
    for n in nm:
        if i < len(order) and re.fullmatch(order[i], n):
            i += 1
    return i == len(order)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--pid", type=int)
    ap.add_argument("--comm")
    ap.add_argument("--not-pid", type=int, default=-1)
    ap.add_argument("--min-whole", type=float, default=99.0)
    ap.add_argument("--min-samples", type=int, default=50)
    ap.add_argument("--leaf")
    ap.add_argument("--chain")
    ap.add_argument("--order")
    ap.add_argument("--measure", default="stacks")
    ap.add_argument("--errors-explained", action="store_true")
    ap.add_argument("--no-whole-check", action="store_true")
    ap.add_argument("--unreadable-max", type=float)
    a = ap.parse_args()
    if (a.pid is None) == (a.comm is None):
        ap.error("give one of --pid and --comm")
    d = json.load(open(a.file))
    total = whole = 0
    leaf_n = leaf_ok = order_n = 0
    bad = {}
    unexplained = 0
    unreadable = 0
    for st in d["stacks"]:
        if st.get("event", "cpu") != "cpu":
            continue
        if a.pid is not None and st["pid"] != a.pid:
            continue
        if a.comm is not None and (st["pid"] == a.not_pid or
                                   not re.fullmatch(a.comm, st["comm"])):
            continue
        fr = user_frames(st)
        if not fr:
            continue
        c = st["count"]
        if (a.unreadable_max is not None and st.get("error") and
                (fr[-1].get("reason") or "").startswith(
                    "the user stack could not be read")):
            unreadable += c
            continue
        total += c
        nm = names(fr)
        err = st.get("error")
        is_whole = not err and nm[-1] in OUTERMOST
        if is_whole:
            whole += c
        else:
            key = (err["name"] if err else "no error",
                   fr[-1].get("reason") or nm[-1])
            bad[key] = bad.get(key, 0) + c
            if not err or not fr[-1].get("reason"):
                unexplained += c
        if a.leaf and re.fullmatch(a.leaf, nm[0]):
            leaf_n += c
            if chain_ok(nm, a.chain.split(",")):
                leaf_ok += c
        if a.order and order_ok(nm, a.order.split(",")):
            order_n += c
    rc = 0
    pct = 100.0 * whole / total if total else 0.0
    print("MEASURE: %s: whole %.2f %% of %d samples" % (a.measure, pct, total))
    if a.unreadable_max is not None:
        up = 100.0 * unreadable / (total + unreadable) if total else 0.0
        print("MEASURE: %s: %d samples (%.2f %%) with no user stack to read "
              "(an exec under way), left out" % (a.measure, unreadable, up))
        if up > a.unreadable_max:
            print("FAIL: %.2f %% with no user stack, more than %.1f %%"
                  % (up, a.unreadable_max))
            rc = 1
    for k, v in sorted(bad.items(), key=lambda x: -x[1])[:5]:
        print("INFO: not whole: %d x %s: %s" % (v, k[0], k[1]))
    if total < a.min_samples:
        print("FAIL: %d samples of %s, expected >= %d" %
              (total, "pid %d" % a.pid if a.pid is not None
               else "commands %s" % a.comm, a.min_samples))
        rc = 1
    if not a.no_whole_check and pct < a.min_whole:
        print("FAIL: whole %.2f %% < %.1f %%" % (pct, a.min_whole))
        rc = 1
    if a.leaf:
        lp = 100.0 * leaf_ok / leaf_n if leaf_n else 0.0
        print("MEASURE: %s: exact chain in %.2f %% of %d samples in the leaf"
              % (a.measure, lp, leaf_n))
        if leaf_n < a.min_samples / 2 or lp < a.min_whole:
            print("FAIL: chain %s" % a.chain)
            rc = 1
    if a.order:
        op = 100.0 * order_n / total if total else 0.0
        print("MEASURE: %s: %s in order in %.2f %%" % (a.measure, a.order, op))
        if op < a.min_whole:
            print("FAIL: order %s" % a.order)
            rc = 1
    if a.errors_explained and unexplained:
        print("FAIL: %d samples neither whole nor with an error and reason"
              % unexplained)
        rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
