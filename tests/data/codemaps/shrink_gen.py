# Keep a real pair of agent map generations (the old file as the agent left
# it, superseded, and the new one that replaced it) small: of the code the
# old file saw loaded and unloaded, only the last 100 blobs stay (with their
# UNLOAD records); METHOD records are kept only when a kept CODE record of
# either file references them, the class is the workload's, or the Method*
# is among the first 100 of the old file; the same Method*s in both. Bytes
# of kept records are unchanged; write_pos (and the new file's
# snapshot_end) are set to the new offsets.
import struct, sys
old_src, new_src, old_dst, new_dst = sys.argv[1:5]


def records(d):
    wp = struct.unpack_from('<Q', d, 32)[0]
    off, out = 4096, []
    while off < wp:
        t, l = struct.unpack_from('<II', d, off)
        out.append((off, t, d[off:off + l]))
        off += l
    return out


def method_class(r):
    return r[48 + 2:48 + 2 + struct.unpack_from('<H', r, 48)[0]]


files = [open(old_src, 'rb').read(), open(new_src, 'rb').read()]
recs = [records(d) for d in files]
# code loaded and unloaded within the old file: pairs (CODE, UNLOAD)
pending, pairs = {}, []


def cm_of(j):
    return struct.unpack_from('<Q', recs[0][j][2], 40)[0]


for i, (_, t, r) in enumerate(recs[0]):
    if t == 3:
        pending.setdefault(struct.unpack_from('<Q', r, 16)[0], []).append(i)
    elif t == 4:
        start, meth = struct.unpack_from('<QQ', r, 16)
        # the same code may have been reported twice (a late attach's
        # enumeration racing its load event): all of it goes together
        js = [j for j in pending.get(start, [])
              if not meth or cm_of(j) in (0, meth)]
        if js:
            for j in js:
                pending[start].remove(j)
            pairs.append((js[0], js, i))
drop = set()
for _, js, i in sorted(pairs)[:-100]:
    drop.update(js)
    drop.add(i)
recs[0] = [x for k, x in enumerate(recs[0]) if k not in drop]
keep = set()
for rs in recs:
    for _, t, r in rs:
        if t == 3:
            n_pcs, n_m = struct.unpack_from('<II', r, 72)
            for i in range(n_m):
                keep.add(struct.unpack_from('<Q', r, 80 + 8 * i)[0])
        elif t == 2 and method_class(r).startswith(b'CodeChurn'):
            keep.add(struct.unpack_from('<Q', r, 16)[0])
first = [struct.unpack_from('<Q', r, 16)[0] for _, t, r in recs[0] if t == 2]
keep.update(first[:100])
for d, rs, dst in zip(files, recs, (old_dst, new_dst)):
    snap = struct.unpack_from('<Q', d, 200)[0]
    body, new_snap = b'', 0
    for off, t, r in rs:
        if t == 2 and struct.unpack_from('<Q', r, 16)[0] not in keep:
            continue
        body += r
        if off < snap:
            new_snap = 4096 + len(body)
    h = bytearray(d[:4096])
    struct.pack_into('<Q', h, 32, 4096 + len(body))
    if snap:
        struct.pack_into('<Q', h, 200, new_snap)
    open(dst, 'wb').write(bytes(h) + body)
    print(dst, 4096 + len(body), 'bytes')
