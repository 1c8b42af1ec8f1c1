#!/bin/sh
# The HTML flame graph's first screen: a real recording of a JVM whose
# stacks are over 300 frames deep (DeepStacks.java beside this script: one
# thread in shallow hot methods, one in a deep recursion), written as HTML,
# opened by headless Chromium in a 1400x900 window. firstscreen_probe.js,
# put into a copy of the page before the page's script, records the labels
# the page draws on its canvas and, after load, which of them are on screen
# (document.elementFromPoint at the label hits the canvas: in the viewport,
# not covered); --dump-dom prints that. firstscreen_check.py then wants,
# without any scrolling: the root 'all' and the label of every box with at
# least 10 % of the samples within 20 levels of the root; and the far end
# of the deep stacks drawn and visible once scrolled to. Also the root on
# the first screen of the icicle and the reversed views.
# ASGST_HTML_SHOT=FILE.png keeps a screenshot of the first screen.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/decode_lib.sh"
need_bpf
need_jdk17
HERE=$TOP/tests/integration
[ -x "$ASGST" ] || fail "$ASGST not built (make all)"
[ -f "$AGENT" ] || fail "$AGENT not built (make all)"
command -v python3 >/dev/null || skip_or_fail "python3 not found"
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || skip_or_fail "chromium not installed (apt-get install chromium)"

"$JDK17/bin/javac" -d "$TMP/classes" "$HERE/DeepStacks.java" || fail "javac DeepStacks.java"
start_java "$JDK17" "$TMP/java.out" -agentpath:"$AGENT" -cp "$TMP/classes" DeepStacks 60 300
sleep 1
# the default 16 KiB window holds about 150 of these frames
"$ASGST" record -q -p "$JPID" -F 199 -d 4 --stack-window 64k \
	-o "$TMP/deep.html" -o "$TMP/deep.collapsed" || fail "asgst-bpf record failed"
kill "$JPID" 2>/dev/null
wait "$JPID" 2>/dev/null
[ -s "$TMP/deep.html" ] && [ -s "$TMP/deep.collapsed" ] || fail "record wrote no profile"

# the page with the probe before its own script (the line "<script>")
awk -v probe="$HERE/firstscreen_probe.js" '
	$0 == "<script>" && !done {
		print "<script>"
		while ((getline l < probe) > 0) print l
		print "</script>"
		done = 1
	}
	{ print }
	END { if (!done) exit 1 }' "$TMP/deep.html" > "$TMP/probe.html" ||
	fail "no <script> line in the page to put the probe before"

chromium() { # URL-HASH OUTPUT-OPTION...
	_url=$1; shift
	_prof=$(mktemp -d "$TMP/chromium.XXXXXX")
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--disable-background-networking --disable-component-update \
		--disable-sync --no-first-run --user-data-dir="$_prof" \
		--window-size=1400,900 --virtual-time-budget=20000 \
		"$@" "file://$_url" 2>>"$TMP/chromium.err"
	rm -rf "$_prof"
}

rc=0
for view in "" icicle=1 reverse=1; do
	chromium "$TMP/probe.html#$view" --dump-dom > "$TMP/dom.html"
	if [ -z "$view" ]; then
		python3 "$HERE/firstscreen_check.py" "$TMP/deep.collapsed" "$TMP/dom.html" ||
			{ echo "FAIL: first screen of the flame graph"; rc=1; }
	else
		python3 "$HERE/firstscreen_check.py" --root-only "$TMP/deep.collapsed" "$TMP/dom.html" ||
			{ echo "FAIL: first screen of the $view view"; rc=1; }
	fi
done
if [ -n "${ASGST_HTML_SHOT:-}" ]; then
	chromium "$TMP/deep.html" --hide-scrollbars --screenshot="$ASGST_HTML_SHOT" > /dev/null
	echo "INFO: screenshot in $ASGST_HTML_SHOT"
fi
[ "$rc" -eq 0 ] || exit 1
echo "PASS: the HTML page opens on the root and the widest frames of a profile 300 frames deep"
exit 0
