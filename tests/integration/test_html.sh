#!/bin/sh
# HTML flame graph in a real browser: headless Chromium opens the pages
# that tests/unit/test_write_html writes (the fixture profile and a
# 100 000-stack one), runs a search given in the URL hash, and the page
# writes its state (rendered boxes, matched percentage, timings) into
# <div id="state">, which --dump-dom prints. The expected percentages come
# from expect.txt, computed by the generator from the profile itself.
. "$(dirname "$0")/lib.sh"

GEN="$BUILD/tests/test_write_html"
[ -x "$GEN" ] || fail "$GEN not built (make tests-build)"
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || skip_or_fail "chromium not installed (apt-get install chromium)"

ASGST_HTML_OUT="$TMP" "$GEN" > "$TMP/gen.log" 2>&1 || { cat "$TMP/gen.log"; fail "generator failed"; }
[ -s "$TMP/fixture.html" ] && [ -s "$TMP/big.html" ] && [ -s "$TMP/expect.txt" ] ||
	fail "generator wrote no pages"

# state URL-HASH -> the attributes of the page's state element
state() {
	_prof=$(mktemp -d "$TMP/chromium.XXXXXX")
	timeout 300 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--disable-background-networking --disable-component-update \
		--disable-sync --no-first-run --user-data-dir="$_prof" \
		--window-size=1280,800 --virtual-time-budget=120000 \
		--dump-dom "file://$1" 2>"$TMP/chromium.err" |
		grep -o '<div id="state"[^>]*>' | head -n 1
	rm -rf "$_prof"
}

# attr NAME STATE-LINE
attr() { echo "$2" | sed -n "s/.* data-$1=\"\([^\"]*\)\".*/\1/p"; }

check() { # page query expected-pct expected-total extra-hash label
	s=$(state "$TMP/$1#search=$2$5")
	[ -n "$s" ] || { tail -n 5 "$TMP/chromium.err"; fail "$6: page did not render (no state element)"; }
	[ "$(attr ready "$s")" = 1 ] || fail "$6: page not ready: $s"
	rects=$(attr rects "$s")
	[ "${rects:-0}" -gt 0 ] || fail "$6: nothing drawn: $s"
	[ "$(attr total "$s")" = "$4" ] || fail "$6: total $(attr total "$s") != $4"
	pct=$(attr matched-pct "$s")
	[ "$pct" = "$3" ] || fail "$6: search '$2' matched $pct%, expected $3%"
	echo "INFO: $6: search '$2' matched $pct% ($(attr matched-samples "$s") samples), $rects boxes drawn"
	echo "MEASURE: html_$6 load_ms=$(attr load-ms "$s") script_ms=$(attr script-ms "$s") render_ms=$(attr render-ms "$s") tree_nodes=$(attr nodes "$s")"
}

read -r _ fq fpct ftotal <<EOF2
$(grep '^fixture ' "$TMP/expect.txt")
EOF2
read -r _ bq bpct btotal <<EOF2
$(grep '^big ' "$TMP/expect.txt")
EOF2

check fixture.html "$fq" "$fpct" "$ftotal" "" fixture
check fixture.html "$fq" "$fpct" "$ftotal" "&reverse=1&icicle=1" fixture_reverse
# a search that matches nothing
s=$(state "$TMP/fixture.html#search=no_such_frame_xyz")
[ "$(attr matched-pct "$s")" = "0.00" ] || fail "empty search reported $(attr matched-pct "$s")%"
check big.html "$bq" "$bpct" "$btotal" "" 100k_stacks
check big.html "$bq" "$bpct" "$btotal" "&reverse=1" 100k_stacks_reverse
echo "MEASURE: html_100k_stacks_bytes=$(wc -c < "$TMP/big.html")"
# self-contained: nothing the browser would fetch
if grep -Eq 'https?://|<link | src=' "$TMP/big.html"; then fail "page references an external resource"; fi
echo "PASS: HTML flame graph renders and search percentages match"
exit 0
