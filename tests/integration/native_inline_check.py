#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Inlined native frames of a recording against addr2line and perf.

native_inline_check.py JSON PROG PID [--perf PERF_SCRIPT_TXT] [--min N]
(PID 0: the samples of PROG's process name)

For every sample of PID, its frames in PROG are cut into one group per pc
(the inlined frames, innermost first, then the frame they are inlined
into) and each group is compared with what `addr2line -i -f -C` and
`llvm-addr2line -i -f -C` say for the same pc (a process for each pc) (the sampled pc for the
first frame after the kernel's, else the return address - 1, as perf and
addr2line do for callers): as many frames, each the same function, file
(name) and line. Functions are compared by their unqualified name without
template arguments or parameters: the readers spell types differently
(`unsigned long` / `long unsigned int`, a lambda's name), not the
function. With --perf, the output of `perf script` of a `perf record
--call-graph dwarf` of the same program: the same comparison per pc where
perf sampled the same pc (keyed by symbol + offset), and the share of
samples whose whole stack in PROG (every frame, inlined ones included) is
one perf also shows.
"""
import argparse
import json
import os
import re
import subprocess
import sys


_demangled = {}


def demangle(name):
    """c++filt of a mangled name (perf may give inlined ones mangled)"""
    if name not in _demangled:
        _demangled[name] = subprocess.run(
            ["c++filt", name], capture_output=True,
            text=True).stdout.strip() or name
    return _demangled[name]


def key(name):
    """unqualified name, no template arguments, parameters or return type,
    no suffix of GCC's clones (.constprop.0, .lto_priv.0, .isra.0,
    .part.0, .cold: the symbol table's name, not the DWARF's)"""
    if not name:
        return ""
    if name.endswith("@plt") and len(name) > 4:
        return key(name[:-4]) + "@plt"
    name = re.sub(r"(\.(constprop|lto_priv|isra|part|cold)(\.\d+)?)+$", "",
                  name)
    if name.startswith("_Z"):
        name = demangle(name)
    s = name.replace("operator()", "operator@@")
    out, depth = [], 0
    for ch in s:
        if ch in "<({[":
            depth += 1
        elif ch in ">)}]":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    toks = "".join(out).split()
    while toks and toks[-1] in ("const", "volatile", "&", "&&", "noexcept"):
        toks.pop()
    s = toks[-1] if toks else ""
    s = s.split("::")[-1]
    return s.replace("operator@@", "operator()")


def groups(frames, prog):
    """(lookup address, [(name, file, line)...], symbol, offset) per pc"""
    out, cur, first = [], [], True
    for f in frames:
        if f["type"] == "kernel":
            continue
        if f["type"] != "non_java":
            first = False
            cur = []
            continue
        cur.append(f)
        if f.get("inlined"):
            continue
        if f.get("module") and os.path.realpath(f["module"]) == prog:
            off = int(f["offset"], 16)
            out.append((off if first else off - 1,
                        [(g.get("symbol") or "", g.get("file") or "",
                          g.get("line") or 0) for g in cur],
                        f.get("symbol") or "", off))
        else:
            out.append(None)
        cur = []
        first = False
    return out


def oracle(tool, prog, addrs):
    """addr -> [(name, file, line)...] from tool -a -i -f -C, one process
    for each address: binutils' addr2line answers some addresses
    differently after others (a state kept between queries)"""
    res = {}
    for ad in addrs:
        res.update(oracle_batch(tool, prog, [ad]))
    return res


def oracle_batch(tool, prog, addrs):
    """the same, one process for all"""
    if not addrs:
        return {}
    text = subprocess.run([tool, "-a", "-i", "-f", "-C", "-e", prog],
                          input="".join("0x%x\n" % a for a in addrs),
                          capture_output=True, text=True, check=True).stdout
    res, cur, lines = {}, None, text.split("\n")
    i = 0
    while i < len(lines):
        ln = lines[i]
        if re.fullmatch(r"0x[0-9a-f]+", ln):
            cur = int(ln, 16)
            res[cur] = []
            i += 1
            continue
        if cur is None or not ln:
            i += 1
            continue
        loc = lines[i + 1] if i + 1 < len(lines) else "??:0"
        loc = re.sub(r" \(discriminator \d+\)$", "", loc)
        f, _, l = loc.rpartition(":")
        res[cur].append((ln, f, int(l) if l.isdigit() else 0))
        i += 2
    return res


def plt_stubs(prog):
    """[(start, end, name)] of the PLT stubs objdump labels "<name@plt>"
    (no DWARF names them: addr2line says "??", llvm-addr2line the symbol
    before them, _init); an IFUNC's is "*ABS*+0xRESOLVER@plt" there"""
    starts = []
    for ln in subprocess.run(["objdump", "-d", prog], capture_output=True,
                             text=True, check=True).stdout.splitlines():
        m = re.fullmatch(r"([0-9a-f]+) <(.+@plt)>:", ln)
        if m:
            starts.append((int(m.group(1), 16), m.group(2)))
    starts.sort()
    return [(a, min(a + 16, starts[i + 1][0]) if i + 1 < len(starts)
             else a + 16, n) for i, (a, n) in enumerate(starts)]


def plt_oracle(orc, stubs):
    """objdump's name for the pcs in a PLT stub that the tool could not
    place in a source file"""
    for ad, theirs in orc.items():
        stub = next((n for a, e, n in stubs if a <= ad < e), None)
        if stub and len(theirs) == 1 and theirs[0][1] in ("??", ""):
            orc[ad] = [(stub, "??", 0)]
    return orc


def b2l_quirk(ours, theirs):
    """binutils' addr2line names the innermost function as the outermost
    (the frame's own) at some pcs: all else equal?"""
    if not theirs or len(ours) != len(theirs) or len(ours) < 2 or \
            key(theirs[0][0]) != key(theirs[-1][0]):
        return False
    return same([(theirs[0][0],) + tuple(ours[0][1:])] + list(ours[1:]),
                theirs)


def same(ours, theirs):
    if len(ours) != len(theirs):
        return False
    # "??" is the tool's "not known": no file, or no function in the
    # DWARF (a function python3.11's debug info has lines but no
    # subprogram for, which ours names from the symbol table): the name is
    # then not compared, the file and line still are. A PLT stub has
    # objdump's name (plt_oracle); one of an IFUNC is its IFUNC's in ours
    for (n1, f1, l1), (n2, f2, l2) in zip(ours, theirs):
        if n2.startswith("*ABS*+") and n2.endswith("@plt"):
            n2 = n1 if n1.endswith("@plt") else n2
        # line 0, where the DWARF has no line (crtstuff.c's functions):
        # the file the tools give then comes from the symbol table's FILE
        # symbols, not the DWARF ours reads; ours must know no line either
        if l2 == 0 and l1 == 0 and not f1:
            f2 = ""
        if (n2 != "??" and key(n1) != key(n2)) or \
                os.path.basename(f1) != \
                os.path.basename(f2 if f2 != "??" else "") or l1 != l2:
            return False
    return True


def perf_stacks(path, prog, comm):
    """perf script text -> [[group...]] a sample each; group (address
    looked up, [names innermost first]) for a pc in PROG, None for others.
    perf prints a caller at its return address - 1 (the address it looks
    up), module-relative, and each function inlined there on a line of
    its own with the same address before it (" (inlined)", no module);
    where binutils' addr2line (which perf asks) names the innermost
    function as the outer one, perf prints that as the frame first"""
    stacks, cur, inl = [], None, []
    base = os.path.basename(prog)
    # perf prints file offsets; ours are addresses in the file (vaddr)
    loads = []
    for ln in subprocess.run(["readelf", "-lW", prog], capture_output=True,
                             text=True).stdout.splitlines():
        f = ln.split()
        if f and f[0] == "LOAD":
            loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))

    def vaddr(off):
        for o, v, sz in loads:
            if o <= off < o + sz:
                return off - o + v
        return off

    def flush_inl(ip):
        # inlined lines not followed by their frame: the frame is one
        # perf names by its DWARF only (a symbol of another name)
        if inl and inl[0][0] != ip:
            cur.append(None)
            inl.clear()

    for ln in open(path, errors="replace"):
        ln = ln.rstrip("\n")
        if not ln.strip():
            if cur is not None:
                flush_inl(None)
                stacks.append(cur)
            cur, inl = None, []
            continue
        if not ln.startswith((" ", "\t")):
            cur = [] if ln.split()[0] == comm[:15] else None
            inl = []
            continue
        if cur is None:
            continue
        m = re.match(r"\s+([0-9a-f]+) (.*) \((.*)\)$", ln)
        if not m:
            continue
        ip, sym, dso = vaddr(int(m.group(1), 16)), m.group(2), m.group(3)
        sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
        flush_inl(ip)
        if dso == "inlined":
            inl.append((ip, sym))
            continue
        if os.path.basename(dso) != base:
            cur.append(None)
        elif inl and cur and cur[-1] and cur[-1][0] == ip:
            # binutils named the innermost function as the frame's own:
            # perf printed it as the frame first, then the inlined ones
            cur[-1] = (ip, cur[-1][1] + [n for _, n in inl] + [sym])
        else:
            cur.append((ip, [n for _, n in inl] + [sym]))
        inl = []
    if cur is not None:
        flush_inl(None)
        stacks.append(cur)
    return stacks


def collapse(chain):
    """binutils' chain as perf shows it: perf ends the chain at the first
    function named as the frame's own (the outermost)"""
    names = [key(n) for n, _, _ in chain]
    if names and names[-1] in names[:-1]:
        return names[:names.index(names[-1]) + 1]
    return names


def python_chains(stacks, total):
    """CPython's frames as perf shows them with its debug info: where
    PyEval_EvalCode runs the interpreter, _PyEval_Vector and
    _PyEval_EvalFrame are inlined in it;
    where Py_RunMain runs the script (PyEval_EvalCode under it), not
    where it finalizes (Py_FinalizeEx, called from Py_RunMain itself),
    pymain_run_python is inlined in it"""
    ev = main = ev_ok = main_ok = 0
    for c, gs in stacks:
        names = [[key(n) for n, _, _ in g[1]] for g in gs]
        runs = any(g[-1] == "PyEval_EvalCode" for g in names)
        for g in names:
            # its call into the interpreter (whose activation the Python
            # frames stand for, or _PyEval_EvalFrameDefault's own frame)
            if g[-1] == "PyEval_EvalCode":
                ev += c
                ev_ok += c if g == ["_PyEval_EvalFrame", "_PyEval_Vector",
                                    "PyEval_EvalCode"] else 0
                break
        for g in names:
            if g[-1] == "Py_RunMain" and runs:
                main += c
                main_ok += c if "pymain_run_python" in g[:-1] else 0
                break
    print("MEASURE: CPython: %d of %d samples run the interpreter from "
          "PyEval_EvalCode, %.1f %% of them with _PyEval_Vector and "
          "_PyEval_EvalFrame inlined there; %d in Py_RunMain running it, "
          "%.1f %% with pymain_run_python inlined" %
          (ev, total, 100.0 * ev_ok / ev if ev else 0, main,
           100.0 * main_ok / main if main else 0))
    if ev < total * 0.5 or main < ev * 0.5 or ev_ok < ev * 0.99 or \
            main_ok < main * 0.99:
        print("FAIL: CPython's inline chains are not whole in >= 99 %")
        return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("prog")
    ap.add_argument("pid", type=int)
    ap.add_argument("--perf")
    ap.add_argument("--module", help="the frames' module, when not PROG "
                    "(a stripped copy of it)")
    ap.add_argument("--min", type=int, default=100)
    ap.add_argument("--min-equal", type=float, default=99.0)
    ap.add_argument("--python", action="store_true", help="PROG is "
                    "CPython: its known inline chains, not the C++ "
                    "program's; addr2line asked once for all pcs")
    a = ap.parse_args()
    prog = os.path.realpath(a.prog)
    mod = os.path.realpath(a.module) if a.module else prog
    d = json.load(open(a.json))
    comm = os.path.basename(mod)[:15]
    stacks = [(st["count"], groups(st["frames"], mod))
              for st in d["stacks"]
              if st["pid"] == a.pid or (not a.pid and st["comm"] == comm)]
    stacks = [(c, [g for g in gs if g]) for c, gs in stacks]
    stacks = [(c, gs) for c, gs in stacks if gs]
    total = sum(c for c, _ in stacks)
    addrs = sorted({g[0] for _, gs in stacks for g in gs})
    ok = True
    stubs = plt_stubs(prog)
    for tool in (("llvm-addr2line",) if a.python else
                 ("addr2line", "llvm-addr2line")):
        orc = plt_oracle((oracle_batch if a.python else oracle)(
            tool, prog, addrs), stubs)
        eq = pcs_eq = quirk = 0
        bad = []
        for c, gs in stacks:
            good = True
            for g in gs:
                if same(g[1], orc.get(g[0], [])):
                    continue
                good = False
                if b2l_quirk(g[1], orc.get(g[0], [])):
                    quirk += c
                else:
                    bad.append((g[0], g[1], orc.get(g[0])))
            eq += c if good else 0
        for ad in addrs:
            ours = next(g[1] for _, gs in stacks for g in gs if g[0] == ad)
            pcs_eq += same(ours, orc.get(ad, []))
        pct = 100.0 * eq / total if total else 0
        print("MEASURE: %s -i -f: %d samples, %d pcs: %.1f %% of samples "
              "and %d of %d pcs equal (frames, functions, files, lines)%s"
              % (tool, total, len(addrs), pct, pcs_eq, len(addrs),
                 "; the others differ only where it names the innermost "
                 "function as the outermost one" if tool == "addr2line"
                 and not bad else ""))
        if bad:
            print("FAIL: %s: %d pcs differ otherwise" % (tool, len(
                {b[0] for b in bad})))
            ok = False
        seen = set()
        for ad, ours, theirs in bad:
            if ad in seen or len(seen) >= 3:
                continue
            seen.add(ad)
            print("INFO: %s differs at 0x%x:\n  ours   %s\n  theirs %s" %
                  (tool, ad, [(key(n), os.path.basename(f), l)
                              for n, f, l in ours],
                   [(key(n), os.path.basename(f), l)
                    for n, f, l in theirs or []]))
        if tool == "llvm-addr2line" and pct < a.min_equal:
            print("FAIL: %.1f %% equal to %s, want >= %.1f" %
                  (pct, tool, a.min_equal))
            ok = False
    if total < a.min:
        print("FAIL: %d samples of pid %d in %s" % (total, a.pid, prog))
        ok = False
    if a.python:
        ok = python_chains(stacks, total) and ok
    # the known inlining is there: the template chain and the lambda
    keys = [[key(n) for n, _, _ in g[1]] for _, gs in stacks for g in gs]
    tmpl = sum(c for c, gs in stacks
               if any([key(n) for n, _, _ in g[1]][-3:] ==
                      ["run", "mix", "chain_outer"] for g in gs))
    lam = sum(c for c, gs in stacks
              if any(any("lambda" in n for n, _, _ in g[1][:-1])
                     for g in gs) and
              any(key(g[2]) == "sort_round" for g in gs))
    if not a.python:
        print("MEASURE: %d samples in Step<N>::run inlined in mix inlined "
              "in chain_outer, %d in the lambda inlined under sort_round"
              % (tmpl, lam))
    if not a.python and (tmpl < total * 0.2 or lam < 5):
        print("FAIL: the known inline chains are missing (%s...)" % keys[:3])
        ok = False
    if a.perf:
        ps = perf_stacks(a.perf, prog, os.path.basename(prog))
        b2l = ({} if a.python else oracle("addr2line", prog, addrs))
        b2l_batch = oracle_batch("addr2line", prog, addrs)
        # per address looked up: perf's chain against ours; where they
        # differ, is perf's what binutils' addr2line says (perf asks it)?
        perf_pc = {}
        for gs in ps:
            for g in gs:
                if g:
                    perf_pc.setdefault(g[0], [key(n) for n in g[1]])
        ours_pc = {g[0]: [key(n) for n, _, _ in g[1]]
                   for _, gs in stacks for g in gs}
        common = eqp = as_b2l = 0
        for ad, v in ours_pc.items():
            pv = perf_pc.get(ad)
            if pv is None:
                continue
            common += 1
            if pv == v:
                eqp += 1
            elif any(pv in ([key(n) for n, _, _ in o.get(ad, [])],
                            collapse(o.get(ad, [])))
                     for o in (b2l, b2l_batch)):
                as_b2l += 1
            else:
                print("INFO: perf differs at 0x%x:\n  ours %s\n  perf %s"
                      % (ad, v, pv))
        # whole stacks in PROG, as names
        pset = set()
        for gs in ps:
            pset.add(tuple(key(n) for g in gs if g for n in g[1]))
        inset = sum(c for c, gs in stacks
                    if tuple(key(n) for g in gs for n, _, _ in g[1]) in pset)
        print("MEASURE: perf --call-graph dwarf: %d samples; %d pcs sampled "
              "by both: %d with the same inline chain, %d where perf shows "
              "what binutils' addr2line says and llvm-addr2line does not; "
              "%.1f %% of our samples have a whole stack perf shows too"
              % (len(ps), common, eqp, as_b2l,
                 100.0 * inset / total if total else 0))
        if len(ps) < 50 or common < 5 or eqp + as_b2l != common:
            print("FAIL: perf's inline chains differ")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
