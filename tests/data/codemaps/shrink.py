# Keep a real agent map under ~1 MiB: every record except METHOD records,
# which are kept only when a CODE record's method pool references them, the
# class is the workload's, or among the first 300. Bytes of kept records are
# unchanged; write_pos is set to the new end and the file ends there.
import struct, sys
src, dst = sys.argv[1], sys.argv[2]
d = open(src, 'rb').read()
wp = struct.unpack_from('<Q', d, 32)[0]
recs = []; off = 4096
while off < wp:
    t, l = struct.unpack_from('<II', d, off); recs.append((t, d[off:off+l])); off += l
need = set()
for t, r in recs:
    if t == 3:
        n_pcs, n_m = struct.unpack_from('<II', r, 72)
        for i in range(n_m): need.add(struct.unpack_from('<Q', r, 80 + 8*i)[0])
out = []; nm = 0
for t, r in recs:
    if t == 2:
        mp = struct.unpack_from('<Q', r, 16)[0]
        cl = r[48+2:48+2+struct.unpack_from('<H', r, 48)[0]]
        nm += 1
        if not (mp in need or cl.startswith(b'Loop') or cl == b'java.lang.Thread' or nm <= 300): continue
    out.append(r)
body = b''.join(out)
h = bytearray(d[:4096]); struct.pack_into('<Q', h, 32, 4096 + len(body))
open(dst, 'wb').write(bytes(h) + body)
print(dst, len(out), 'of', len(recs), 'records', 4096 + len(body), 'bytes')
