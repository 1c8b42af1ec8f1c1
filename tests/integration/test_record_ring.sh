#!/bin/sh
# Samples wait for their decode in the ring buffer itself, where the kernel
# wrote them (user/capture/ring.c); past a quarter of the ring the oldest
# are copied out. Both ways must decode the same: the "chain" thread of
# Chain.java (JDK 17, agent at start, 999 Hz) to the exact chain in >= 98 %
# of its samples, with the default 32 MiB ring (records held, few if any
# copied) and with a 1 MiB ring (--ring-buffer 1: most copied out, the
# kernel still finding room: at most 1 % lost).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_root
need_jdk17
need_decode_tools

# stat NAME FILE: a figure of record --stats
stat() { sed -n "s/.*[ :]$1=\([0-9]*\).*/\1/p" "$2" | head -n 1; }

start_java "$JDK17" "$TMP/jvm.out" -agentpath:"$AGENT" -cp "$WL/classes" \
	Chain 60
sleep 1
rc=0
for mb in 32 1; do
	out="$TMP/ring$mb.json"
	"$ASGST" record -p "$JPID" -F 999 -d 6 --ring-buffer $mb --stats \
		-f json -o "$out" > "$out.log" 2>&1 ||
		{ cat "$out.log"; fail "record --ring-buffer $mb failed"; }
	copied=$(stat ring_copied "$out.log")
	n=$(sed -n 's/^asgst-bpf: \([0-9]*\) samples, \([0-9]*\) lost.*/\1 \2/p' \
		"$out.log" | tail -n 1)
	samples=${n% *}; lost=${n#* }
	echo "MEASURE: --ring-buffer $mb: $samples samples, $lost lost, $copied copied out of the ring"
	[ -n "$copied" ] && [ -n "$samples" ] && [ "$samples" -gt 0 ] ||
		{ cat "$out.log"; fail "no samples or no ring_copied figure"; }
	# a quarter of 1 MiB holds about 60 JVM samples: most are copied
	if [ $mb = 1 ] && [ "$copied" -lt $((samples / 2)) ]; then
		echo "FAIL: a 1 MiB ring copied out only $copied of $samples"
		rc=1
	fi
	if [ $((lost * 100)) -gt "$samples" ]; then
		echo "FAIL: --ring-buffer $mb lost $lost of $samples samples"
		rc=1
	fi
	$CHECK chain "$out" --javap "$JDK17/bin/javap" \
		--classes "$WL/classes" --levels compiled --min 98 \
		--jstack "$TMP/jvm.out" || rc=1
done
kill "$JPID" 2>/dev/null
wait "$JPID" 2>/dev/null
[ $rc -eq 0 ] && echo "PASS: records decode the same held in the ring or copied out"
exit $rc
