#!/usr/bin/env python3
"""Checks on an asgst-bpf JSON profile (format v1, docs/formats.md).

  profile_check.py FILE --pid PID --chain a,b,c [--min 0.98]
      the user frames (kernel frames skipped) of PID's samples must start
      with the chain (callee first, native symbols or Class.method names);
      prints MEASURE: the matching fraction; exit 1 below --min.
  profile_check.py FILE --pid PID --kernel [--min 0.5]
      at least --min of PID's samples have a symbolized kernel frame.
  profile_check.py FILE --schema
      validate the whole file against the v1 schema.
"""
import argparse
import json
import sys


def frame_name(f):
    t = f.get("type")
    if t in ("java", "java_inlined", "java_native"):
        return "%s.%s" % (f.get("class"), f.get("method"))
    return f.get("symbol") or ("%s+%s" % (f.get("module"), f.get("offset")))


def check_schema(doc):
    assert doc["format"] == "asgst-bpf", "format"
    assert doc["version"] == 1, "version"
    for k in ("frequency_hz", "duration_ns", "samples", "lost"):
        assert isinstance(doc[k], int) and doc[k] >= 0, k
    total = 0
    for s in doc["stacks"]:
        for k in ("pid", "tid", "count"):
            assert isinstance(s[k], int) and s[k] >= 0, k
        assert isinstance(s["comm"], str) and isinstance(s["thread"], str)
        assert s["kind"] in ("java", "jvm", "native"), s["kind"]
        err = s["error"]
        assert err is None or (isinstance(err["code"], int) and
                               isinstance(err["name"], str)), err
        seen_user = False
        for f in s["frames"]:
            t = f["type"]
            assert t in ("kernel", "non_java", "java", "java_inlined",
                         "java_native", "python", "unknown"), t
            if t == "python":
                assert f["function"] is None or isinstance(f["function"], str)
                assert f["file"] is None or isinstance(f["file"], str)
                assert isinstance(f["line"], int)
            if t == "kernel":
                assert not seen_user, "kernel frame after a user frame"
                assert isinstance(f["symbol"], str)
            else:
                seen_user = True
            if t == "non_java":
                assert f["pc"].startswith("0x")
            if t in ("java", "java_inlined", "java_native"):
                for k in ("class", "method", "signature"):
                    assert isinstance(f[k], str), k
                for k in ("bci", "line", "comp_level"):
                    assert isinstance(f[k], int), k
            if t == "unknown":
                assert isinstance(f["reason"], str)
        total += s["count"]
    assert total <= doc["samples"], "more stack counts than samples"
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--pid", type=int)
    ap.add_argument("--tid", type=int)
    ap.add_argument("--chain")
    ap.add_argument("--kernel", action="store_true")
    ap.add_argument("--schema", action="store_true")
    ap.add_argument("--min", type=float, default=0.98)
    ap.add_argument("--min-samples", type=int, default=20)
    a = ap.parse_args()
    with open(a.file) as fh:
        doc = json.load(fh)
    if a.schema:
        n = check_schema(doc)
        print("INFO: schema ok, %d samples in %d stacks" %
              (n, len(doc["stacks"])))
        return 0
    stacks = [s for s in doc["stacks"]
              if (a.pid is None or s["pid"] == a.pid) and
              (a.tid is None or s["tid"] == a.tid)]
    total = sum(s["count"] for s in stacks)
    if total < a.min_samples:
        print("FAIL: only %d samples for pid %s (want >= %d)" %
              (total, a.pid, a.min_samples))
        return 1
    good = 0
    worst = {}
    for s in stacks:
        frames = s["frames"]
        if a.kernel:
            ok = any(f["type"] == "kernel" and f.get("symbol") and
                     not f["symbol"].startswith("0x") for f in frames)
        else:
            chain = a.chain.split(",")
            user = [frame_name(f) for f in frames if f["type"] != "kernel"]
            ok = user[:len(chain)] == chain
            if not ok:
                key = ";".join(user[:len(chain) + 2])
                worst[key] = worst.get(key, 0) + s["count"]
        if ok:
            good += s["count"]
    frac = good / total
    what = "kernel frames" if a.kernel else "exact chain"
    print("MEASURE: %s in %d/%d samples (%.2f%%)" %
          (what, good, total, 100 * frac))
    for k, v in sorted(worst.items(), key=lambda kv: -kv[1])[:3]:
        print("INFO: mismatch x%d: %s" % (v, k))
    if frac < a.min:
        print("FAIL: %.2f%% < %.2f%%" % (100 * frac, 100 * a.min))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
