#!/bin/sh
# C code without frame pointers under Java: JniChain's "jni" thread calls
# C code built without them, twice:
# - $WL/nofp/libjnichain.so has no CFI either, so its frames cannot be
#   walked at all: the sampler copies the thread's JavaFrameAnchor (last
#   Java sp/pc) from its JavaThread and the decoder resumes there, after a
#   marker for the C frames it could not walk;
# - $WL/cfi/libjnichain.so has CFI (.eh_frame, as every distribution
#   builds): its frames are unwound by it, jc_leaf up to the JNI function,
#   with no marker.
# In >= 95 % of the thread's samples in the C leaf the native-method frame
# and its Java callers must come out whole and the state be in_native.
# JDK 17, and 25 when present.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_bpf
need_jdk17
need_decode_tools
for lib in nofp cfi; do
	[ -f "$WL/$lib/libjnichain.so" ] || fail "$WL/$lib/libjnichain.so not built"
done

rc=0
jdks=$(test_jdks) || rc=1
for lib in nofp cfi; do
for jdk in $jdks; do
	v=$(basename "$jdk")-$lib
	start_java "$jdk" "$TMP/$v.out" -agentpath:"$AGENT" \
		-Djava.library.path="$WL/$lib" -cp "$WL/classes" JniChain 60 jni
	sleep 1
	record_json "$JPID" "$TMP/$v.json" 6
	python3 - "$TMP/$v.json" "$v" "$lib" <<'PY' || rc=1
import json, sys
d = json.load(open(sys.argv[1]))
want = ["nativeChain", "j3", "j2", "j1", "run"]
cfi = sys.argv[3] == "cfi"
c_chain = ["jc_leaf", "jc_c", "jc_b", "jc_a", "Java_JniChain_nativeChain"]
tot = ok = native = 0
bad = {}
for s in d["stacks"]:
    if s["thread"] != "jni":
        continue
    tot += s["count"]
    fr = [f for f in s["frames"] if f["type"] != "kernel"]
    # only the samples taken in the C code (not in Java or the wrapper)
    if not fr or fr[0]["type"] != "non_java" or fr[0].get("symbol") != "jc_leaf":
        continue
    native += s["count"]
    java = [f for f in fr if f["type"].startswith("java")]
    names = [f.get("method") for f in java][:len(want)]
    why = None
    if s["error"]:
        why = "error " + s["error"]["name"]
    elif names != want:
        why = "java frames %s" % names
    elif java[0]["type"] != "java_native":
        why = "no java_native barrier"
    elif s["state"] != "in_native":
        why = "state " + s["state"]
    elif cfi and any(f.get("symbol") == "[native frames without frame pointers]" for f in fr):
        why = "a marker although the C frames have CFI"
    elif cfi and [f.get("symbol") for f in fr[:len(c_chain)]] != c_chain:
        why = "C frames %s" % [f.get("symbol") for f in fr[:len(c_chain)]]
    elif not cfi and not any(f.get("symbol") == "[native frames without frame pointers]" for f in fr):
        why = "no marker for the unwalkable C frames"
    if why:
        bad[why] = bad.get(why, 0) + s["count"]
    else:
        ok += s["count"]
if not native:
    print("FAIL: %s: no sample of thread jni in jc_leaf (of %d)" % (sys.argv[2], tot))
    sys.exit(1)
pct = 100.0 * ok / native
print("MEASURE: %s: %.2f %% of %d samples in C without frame pointers keep the Java chain (%s)" %
      (sys.argv[2], pct, native, "C frames by CFI" if cfi else "anchor"))
for k, v in sorted(bad.items(), key=lambda kv: -kv[1])[:5]:
    print("INFO: bad: %d x %s" % (v, k))
sys.exit(0 if pct >= 95.0 else 1)
PY
	kill "$JPID" 2>/dev/null
	wait "$JPID" 2>/dev/null
done
done
exit $rc
