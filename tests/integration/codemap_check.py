#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Independent parser of the code map (agent/codemap_format.h), used by the
agent tests as a cross-check of the C reader. Usage:
  codemap_check.py dump MAP            print a summary
  codemap_check.py check MAP [--deopt] assert what AgentWorkload must produce
Exit 0 when every assertion holds, 1 with "FAIL: ..." lines otherwise."""
import struct, sys

HDR = struct.Struct("<8sIIIIQQQQ128s")
REC = struct.Struct("<IIQ")
# cm_vm_consts: 41 int32 fields then 7 + 16 uint64
VM_INTS = ("blob_name blob_size blob_frame_size blob_frame_complete "
           "blob_frame_complete_sz blob_code_begin blob_code_offset blob_kind "
           "blob_header_size nm_method nm_comp_level nm_entry_bci "
           "nm_verified_entry_point nm_verified_entry_offset method_const "
           "sizeof_const_method sizeof_method jt_anchor jt_thread_state "
           "jt_osthread jt_cont_entry jt_vthread jt_stack_base jt_stack_size "
           "osthread_thread_id anchor_last_sp anchor_last_pc anchor_last_fp "
           "jcw_anchor upcall_frame_data upcall_fd_jfa if_method if_bcp "
           "if_sender_sp if_locals entry_frame_call_wrapper "
           "thread_state_in_java thread_state_in_native thread_state_in_vm "
           "thread_state_blocked pad0").split()
VM_U64 = ("call_stub_return interp_begin interp_end code_low code_high "
          "cont_return_barrier cont_return_pc").split()


class Bad(Exception):
    pass


def cmstr(b, o, end):
    if o + 2 > end:
        raise Bad("string length past record end")
    n = struct.unpack_from("<H", b, o)[0]
    if o + 2 + n > end:
        raise Bad("string past record end")
    return b[o + 2:o + 2 + n].decode("utf-8", "replace"), o + 2 + n


def pad(o, a):
    return (o + a - 1) // a * a


def varint(b, o, end):
    """LEB128 (version 3): (value, next offset)"""
    v = 0
    for i in range(10):
        if o >= end:
            raise Bad("varint past record end")
        c = b[o]
        o += 1
        v |= (c & 0x7f) << (7 * i)
        if not c & 0x80:
            if v >> 64:
                raise Bad("varint over 64 bits")
            return v, o
    raise Bad("varint longer than 10 bytes")


def unzigzag(v):
    return (v >> 1) ^ -(v & 1)


def parse(path):
    b = open(path, "rb").read()
    if len(b) < 4096:
        raise Bad("file shorter than the header")
    magic, ver, hsz, pid, flags, maxsz, wpos, start, dropped, reason = HDR.unpack_from(b, 0)
    if magic != b"ASGSTCM\0" or ver not in (1, 2, 3) or hsz != 4096:
        raise Bad("bad magic/version/header size")
    if wpos > len(b) or wpos < 4096:
        raise Bad("write_pos out of range")
    m = dict(pid=pid, flags=flags, write_pos=wpos, dropped=dropped,
             reason=reason.split(b"\0")[0].decode(), vm=None, methods={},
             codes=[], unloads=[], stubs=[], threads=[], version=ver)
    strs, classes = {}, {}  # version 3 ids
    o = 4096
    while o < wpos:
        if o + 16 > wpos:
            raise Bad("record header past write_pos")
        typ, ln, t = REC.unpack_from(b, o)
        if ln < 16 or ln % 8 or o + ln > wpos:
            raise Bad("bad record length %d at %d" % (ln, o))
        end = o + ln
        p = o + 16
        if typ == 1:
            major, _ = struct.unpack_from("<II", b, p)
            p += 8
            ints = struct.unpack_from("<%di" % len(VM_INTS), b, p)
            p = pad(p + 4 * len(VM_INTS), 8)
            u = struct.unpack_from("<%dQ" % len(VM_U64), b, p)
            p += 8 * (len(VM_U64) + 16)
            ver, p = cmstr(b, p, end)
            vm = dict(zip(VM_INTS, ints))
            vm.update(zip(VM_U64, u))
            vm["jdk_major"] = major
            vm["vm_version"] = ver
            m["vm"] = vm
        elif typ == 2:
            meth, cmeth, mods, fl, nl, _ = struct.unpack_from("<QQIIII", b, p)
            p += 32
            cls, p = cmstr(b, p, end)
            name, p = cmstr(b, p, end)
            sig, p = cmstr(b, p, end)
            src, p = cmstr(b, p, end)
            p = pad(p, 4)
            if p + 8 * nl > end:
                raise Bad("line table past record end")
            lines = [struct.unpack_from("<II", b, p + 8 * i) for i in range(nl)]
            m["methods"][meth] = dict(cls=cls, name=name, sig=sig, src=src,
                                      lines=lines, mods=mods, flags=fl,
                                      const_method=cmeth)
        elif typ == 3:
            (start_, end_, blob, meth, ve, kind, lvl, fs, fc, npcs,
             nm) = struct.unpack_from("<QQQQQIiiiII", b, p)
            p += 64
            if p + 8 * nm > end:
                raise Bad("method pool past record end")
            pool = list(struct.unpack_from("<%dQ" % nm, b, p))
            p += 8 * nm
            pcs = []
            for _ in range(npcs):
                if p + 8 > end:
                    raise Bad("pcdesc past record end")
                off, depth = struct.unpack_from("<II", b, p)
                p += 8
                if depth < 1 or p + 8 * depth > end:
                    raise Bad("bad pcdesc depth")
                fr = []
                for i in range(depth):
                    idx, bci = struct.unpack_from("<Ii", b, p)
                    p += 8
                    if idx >= nm:
                        raise Bad("method index out of the pool")
                    fr.append((pool[idx], bci))
                pcs.append((off, fr))
            m["codes"].append(dict(start=start_, end=end_, blob=blob,
                                   method=meth, ve=ve, kind=kind, level=lvl,
                                   frame_size=fs, frame_complete=fc, pcs=pcs,
                                   t=t))
        elif typ == 4:
            s, meth = struct.unpack_from("<QQ", b, p)
            m["unloads"].append(dict(start=s, method=meth, t=t))
        elif typ == 5:
            s, e, blob, kind, fs, fc, _ = struct.unpack_from("<QQQIiiI", b, p)
            p += 40
            name, p = cmstr(b, p, end)
            m["stubs"].append(dict(start=s, end=e, blob=blob, kind=kind,
                                   frame_size=fs, frame_complete=fc, name=name))
        elif typ == 6:
            jt, tid, fl = struct.unpack_from("<QII", b, p)
            p += 16
            name, p = cmstr(b, p, end)
            m["threads"].append(dict(jt=jt, tid=tid, flags=fl, name=name))
        elif typ == 7:
            f = struct.unpack_from("<8i2IQ2i", b, p)
            m["cont"] = dict(zip(("entry_cont", "cont_tail", "chunk_size",
                                  "chunk_sp", "chunk_argsize", "chunk_bottom",
                                  "chunk_stack", "entry_size", "oop_size",
                                  "oop_shift", "oop_base", "chunk_parent",
                                  "pad"), f))
        elif typ == 8:  # STRINGS: id, len, bytes
            cnt, _ = struct.unpack_from("<II", b, p)
            p += 8
            for _ in range(cnt):
                sid, p = varint(b, p, end)
                n, p = varint(b, p, end)
                if p + n > end:
                    raise Bad("string past record end")
                txt = b[p:p + n].decode("utf-8", "replace")
                if strs.get(sid, txt) != txt:
                    raise Bad("string id %d defined again" % sid)
                strs[sid] = txt
                p += n
        elif typ == 9:  # CLASSES: id, name string, source string
            cnt, _ = struct.unpack_from("<II", b, p)
            p += 8
            for _ in range(cnt):
                cid, p = varint(b, p, end)
                nsid, p = varint(b, p, end)
                ssid, p = varint(b, p, end)
                if nsid not in strs or (ssid and ssid not in strs):
                    raise Bad("class %d names an undefined string" % cid)
                classes[cid] = (strs[nsid], strs[ssid] if ssid else "")
        elif typ == 10:  # METHODS
            base, cnt, _ = struct.unpack_from("<QII", b, p)
            p += 16
            for _ in range(cnt):
                d, p = varint(b, p, end)
                z, p = varint(b, p, end)
                cid, p = varint(b, p, end)
                nid, p = varint(b, p, end)
                gid, p = varint(b, p, end)
                mods, p = varint(b, p, end)
                fl, p = varint(b, p, end)
                nl, p = varint(b, p, end)
                if cid not in classes or nid not in strs or gid not in strs:
                    raise Bad("method names an undefined id")
                lines, bci, line = [], 0, 0
                for _ in range(nl):
                    zb, p = varint(b, p, end)
                    zl, p = varint(b, p, end)
                    bci += unzigzag(zb)
                    line += unzigzag(zl)
                    lines.append((bci, line))
                meth = base + d
                cls, src = classes[cid]
                m["methods"][meth] = dict(
                    cls=cls, name=strs[nid], sig=strs[gid], src=src,
                    lines=lines, mods=mods, flags=fl,
                    const_method=(meth + unzigzag(z)) & (2**64 - 1))
        else:
            raise Bad("unknown record type %d" % typ)
        o = end
    return m


def mname(m, meth):
    x = m["methods"].get(meth)
    return "%s.%s" % (x["cls"], x["name"]) if x else "?0x%x" % meth


def dump(m):
    print("flags=0x%x write_pos=%d dropped=%d methods=%d codes=%d unloads=%d "
          "stubs=%d threads=%d" % (m["flags"], m["write_pos"], m["dropped"],
                                   len(m["methods"]), len(m["codes"]),
                                   len(m["unloads"]), len(m["stubs"]),
                                   len(m["threads"])))
    vm = m["vm"]
    if vm:
        print("vm jdk=%d %s" % (vm["jdk_major"], vm["vm_version"]))
        print("  " + " ".join("%s=%s" % (k, vm[k] if isinstance(vm[k], int) and vm[k] < 1 << 32 else hex(vm[k]))
                              for k in VM_INTS + VM_U64))
    for c in m["codes"]:
        n = mname(m, c["method"])
        if "AgentWorkload" in n:
            print("code %s kind=%d level=%d fs=%d fc=%d pcs=%d size=%d blob=%s" % (
                n, c["kind"], c["level"], c["frame_size"], c["frame_complete"],
                len(c["pcs"]), c["end"] - c["start"], hex(c["blob"])))
    for s in m["stubs"][:400]:
        print("stub %-50s kind=%d fs=%d blob=%s" % (s["name"], s["kind"], s["frame_size"], hex(s["blob"])))
    for t in m["threads"]:
        print("thread %d %r flags=%d jt=%s" % (t["tid"], t["name"], t["flags"], hex(t["jt"])))
    for u in m["unloads"]:
        print("unload %s" % mname(m, u["method"]))


def check_attach(m):
    """after a late attach: classes loaded before it, compiled code from
    GenerateEvents, threads that already ran"""
    errs = []
    W = "AgentWorkload"
    if not m["vm"] or not (m["flags"] & 1):
        errs.append("no VM record / not ready")
    names = set((x["cls"], x["name"]) for x in m["methods"].values())
    for n in ("inner", "middle", "outer", "spin", "main"):
        if (W, n) not in names:
            errs.append("METHOD %s.%s missing" % (W, n))
    ours = [c for c in m["codes"] if mname(m, c["method"]).startswith(W)]
    if not [c for c in ours if c["blob"] and 0 < c["frame_size"] < 1000 and 1 <= c["level"] <= 4]:
        errs.append("no plausible CODE record of the workload")
    if not [c for c in ours if len(set(f[0] for _, fr in c["pcs"] for f in fr)) > 1]:
        errs.append("no inline chains in the workload's code")
    kinds = set(s["kind"] for s in m["stubs"])
    if not {1, 2} <= kinds:
        errs.append("Interpreter/call_stub STUB missing")
    if "main" not in set(t["name"] for t in m["threads"]):
        errs.append("THREAD main missing")
    for e in errs:
        print("FAIL: " + e)
    print("INFO: methods=%d codes=%d (workload %d) stubs=%d threads=%d" % (
        len(m["methods"]), len(m["codes"]), len(ours), len(m["stubs"]), len(m["threads"])))
    return 1 if errs else 0


def check(m, want_deopt):
    errs = []
    W = "AgentWorkload"
    vm = m["vm"]
    if not vm:
        errs.append("no VM record")
    else:
        if not (m["flags"] & 1):
            errs.append("CM_F_READY not set")
        for k in ("blob_frame_size", "nm_method", "method_const", "jt_anchor",
                  "osthread_thread_id", "jcw_anchor"):
            if vm[k] < 0:
                errs.append("VM constant %s absent" % k)
        for k in ("call_stub_return", "interp_begin", "code_low", "code_high"):
            if not vm[k]:
                errs.append("VM address %s is 0" % k)
        if vm["interp_end"] <= vm["interp_begin"]:
            errs.append("interpreter range empty")
        if vm["jdk_major"] >= 21 and not vm["cont_return_barrier"]:
            errs.append("cont_return_barrier unknown on JDK %d" % vm["jdk_major"])
        # the virtual-thread layout (CONT record): JDK 21+ only
        c = m.get("cont")
        if vm["jdk_major"] < 21 and c:
            errs.append("CONT record on JDK %d" % vm["jdk_major"])
        if vm["jdk_major"] >= 21:
            if not c:
                errs.append("no CONT record on JDK %d" % vm["jdk_major"])
            elif not (c["oop_size"] in (4, 8) and c["chunk_stack"] >= 16 and
                      c["chunk_stack"] % 8 == 0 and c["entry_size"] % 16 == 0 and
                      (c["chunk_bottom"] >= 0) != (c["chunk_argsize"] >= 0) and
                      c["entry_cont"] + 8 <= c["entry_size"] and
                      min(c["cont_tail"], c["chunk_size"], c["chunk_sp"],
                          c["chunk_parent"]) >= 8):
                errs.append("implausible CONT record %r" % c)
    byname = {}
    for meth, x in m["methods"].items():
        byname.setdefault((x["cls"], x["name"]), []).append(meth)
    for n in ("inner", "middle", "outer", "spin", "main", "shapes"):
        ms = byname.get((W, n))
        if not ms:
            errs.append("METHOD %s.%s missing" % (W, n))
            continue
        x = m["methods"][ms[0]]
        if x["src"] != W + ".java" or not x["lines"] or not x["sig"].startswith("("):
            errs.append("METHOD %s.%s: bad source/lines/signature %r %r %d" % (
                W, n, x["src"], x["sig"], len(x["lines"])))
    if (W + "$Square", "area") not in byname:
        errs.append("METHOD AgentWorkload$Square.area missing")
    ours = [c for c in m["codes"] if mname(m, c["method"]).startswith(W)]
    if not ours:
        errs.append("no CODE record for the workload")
    for c in m["codes"]:
        # native wrappers of MethodHandle intrinsics jump: frame size 0
        lo = 0 if c["kind"] == 2 else 1
        if c["blob"] and not (lo <= c["frame_size"] < 1000 and 0 <= c["level"] <= 4):
            errs.append("implausible CODE %s fs=%d level=%d" % (
                mname(m, c["method"]), c["frame_size"], c["level"]))
    levels = set(c["level"] for c in ours)
    if not levels & {1, 2, 3, 4}:
        errs.append("no comp level 1..4 for the workload: %s" % levels)
    if not [c for c in ours if c["blob"]]:
        errs.append("no workload CODE record with a blob")
    nat = [c for c in m["codes"] if c["kind"] == 2]
    if not nat or any(c["level"] not in (0, -1) for c in nat if c["blob"]):
        errs.append("native wrappers missing or with a comp level")
    # inline chains: inner inlined into middle, and middle into outer or spin
    inner = set(byname.get((W, "inner"), []))
    middle = set(byname.get((W, "middle"), []))
    outer = set(byname.get((W, "outer"), []))
    spin = set(byname.get((W, "spin"), []))
    chain_ok = chain2 = False
    for c in ours:
        for off, fr in c["pcs"]:
            ms = [f[0] for f in fr]
            for i in range(len(ms) - 1):
                if ms[i] in inner and ms[i + 1] in middle:
                    chain_ok = True
                if ms[i] in middle and ms[i + 1] in (outer | spin):
                    chain2 = True
            if fr[-1][0] != c["method"] and not c["kind"] == 2:
                errs.append("outermost inline frame of %s is %s" % (
                    mname(m, c["method"]), mname(m, fr[-1][0])))
                break
    if not chain_ok:
        errs.append("no inline chain inner <- middle")
    if not chain2:
        errs.append("no inline chain middle <- outer/spin")
    kinds = set(s["kind"] for s in m["stubs"])
    names = set(s["name"] for s in m["stubs"])
    if 1 not in kinds or "Interpreter" not in names:
        errs.append("no Interpreter STUB")
    if 2 not in kinds:
        errs.append("no call_stub STUB")
    if 3 not in kinds:
        errs.append("no adapter STUB")
    tn = set(t["name"] for t in m["threads"])
    for n in ("main", "asgst-worker"):
        if n not in tn:
            errs.append("THREAD %s missing" % n)
    for t in m["threads"]:
        if t["name"] in ("main", "asgst-worker") and (not t["tid"] or not t["jt"]):
            errs.append("THREAD %s without tid or JavaThread*" % t["name"])
    if not [t for t in m["threads"] if t["name"] == "asgst-worker" and t["flags"] & 1]:
        errs.append("no THREAD end for asgst-worker")
    if want_deopt:
        sh = set(byname.get((W, "shapes"), []))
        if not m["unloads"] and vm and vm["jdk_major"] < 21:
            # JDK 17 posts CompiledMethodUnload when the sweeper flushes,
            # which a short run with little code-cache churn never reaches
            print("INFO: no UNLOAD record on JDK %d (flushed by the sweeper later)" % vm["jdk_major"])
        elif not m["unloads"]:
            errs.append("no UNLOAD record")
        elif not [u for u in m["unloads"] if u["method"] in sh]:
            print("INFO: UNLOAD records present (%d), none for shapes()" % len(m["unloads"]))
    for e in errs:
        print("FAIL: " + e)
    print("INFO: methods=%d codes=%d (workload %d, levels %s) unloads=%d stubs=%d threads=%d" % (
        len(m["methods"]), len(m["codes"]), len(ours), sorted(levels),
        len(m["unloads"]), len(m["stubs"]), len(m["threads"])))
    return 1 if errs else 0


if __name__ == "__main__":
    try:
        mp = parse(sys.argv[2])
    except (Bad, struct.error, OSError) as e:
        print("FAIL: map %s: %s" % (sys.argv[2], e))
        sys.exit(1)
    if sys.argv[1] == "dump":
        dump(mp)
        sys.exit(0)
    if sys.argv[1] == "attach":
        sys.exit(check_attach(mp))
    sys.exit(check(mp, "--deopt" in sys.argv))
