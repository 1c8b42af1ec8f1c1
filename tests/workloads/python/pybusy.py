# A busy CPython program for native inlining checks: a Python loop, zlib
# and json's C encoder, for SECONDS (argv[1]). test_native_inline and
# bench_inline record it with the interpreter's own C frames kept.
import json
import sys
import time
import zlib


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def mid(n):
    return leaf(n) + len(zlib.compress(b"x" * 20000)) + \
        len(json.dumps({"a": list(range(50))}))


end = time.time() + float(sys.argv[1])
while time.time() < end:
    mid(20000)
