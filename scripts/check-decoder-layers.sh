#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Check the decoder's layering (user/decode/walk.h) on its compiled
# objects, so the check sees the calls the compiler kept:
#   walk.c      walk     may call nothing in the decoder
#   resolve.c   resolve  may call nothing in the decoder (names the
#                        finished frames; only decode.c calls it)
#   decode_*.c  stepper  may call walk, and other steppers without a cycle
#   decode.c    decode   may call walk, the steppers and resolve
# An edge A -> B is an undefined symbol of A.o defined in B.o.
#
# usage: scripts/check-decoder-layers.sh [BUILD]   (default $BUILD, build)
# Prints one line per file (its layer and what it calls), then
# "decoder layers: ok", or FAIL lines and exit 1.

BUILD=${1:-${BUILD:-build}}
dir=$BUILD/obj/user/decode

fail() {
	echo "FAIL: $*"
	echo "decoder layers: FAIL"
	exit 1
}

command -v nm >/dev/null 2>&1 || fail "nm not found (binutils)"
set -- "$dir"/*.o
[ -e "$1" ] || fail "no objects in $dir (build first: make BUILD=$BUILD all)"

tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# defs: "symbol file" of every global definition; uses: "file symbol"
: >"$tmp/defs"
: >"$tmp/uses"
for o in "$@"; do
	f=$(basename "$o" .o).c
	nm --defined-only "$o" >"$tmp/nm" || fail "nm --defined-only $o"
	awk -v f="$f" 'NF == 3 && $2 ~ /^[A-TV-Z]$/ { print $3, f }' \
		"$tmp/nm" >>"$tmp/defs"
	nm -u "$o" >"$tmp/nm" || fail "nm -u $o"
	awk -v f="$f" 'NF { print f, $NF }' "$tmp/nm" >>"$tmp/uses"
	echo "$f" >>"$tmp/files"
done

# graph lines ("rank file layer -> callees"), layer violations (FAIL
# lines) and stepper -> stepper edges ("from to symbols")
awk -v files="$tmp/files" -v graph="$tmp/graph" -v bad="$tmp/bad" \
    -v steps="$tmp/steps" '
function layer(f) {
	if (f == "walk.c")
		return "walk"
	if (f == "resolve.c")
		return "resolve"
	if (f == "decode.c")
		return "decode"
	if (f ~ /^decode_.*\.c$/)
		return "stepper"
	return "unknown"
}
# " a b c" sorted by layer, then name
function by_layer(list,    n, v, key, i, j, t, out) {
	n = split(list, v, " ")
	for (i = 1; i <= n; i++)
		key[v[i]] = rank[layer(v[i])] v[i]
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && key[v[j - 1]] > key[v[j]]; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	out = ""
	for (i = 1; i <= n; i++)
		out = out " " v[i]
	return out
}
BEGIN {
	rank["walk"] = 0; rank["resolve"] = 1; rank["stepper"] = 2
	rank["decode"] = 3; rank["unknown"] = 4
	may["stepper", "walk"] = 1; may["stepper", "stepper"] = 1
	may["decode", "walk"] = 1; may["decode", "stepper"] = 1
	may["decode", "resolve"] = 1
	nf = 0
	while ((getline f <files) > 0)
		order[nf++] = f
}
FNR == NR { def[$1] = $2; next }
{
	from = $1; sym = $2
	if (!(sym in def) || def[sym] == from)
		next
	to = def[sym]
	if (!((from, to) in edge)) {
		edge[from, to] = sym
		callees[from] = callees[from] " " to
	} else {
		edge[from, to] = edge[from, to] "," sym
	}
	lf = layer(from); lt = layer(to)
	if (lf == "unknown")
		next	# reported once below
	if (!((lf, lt) in may))
		printf "FAIL: %s (%s) calls %s, defined in %s (%s): %s may not call %s\n",
		       from, lf, sym, to, lt, lf, lt >bad
}
END {
	for (i = 0; i < nf; i++) {
		f = order[i]
		l = layer(f)
		if (l == "unknown")
			printf "FAIL: %s has no layer (add it to %s)\n", f,
			       "scripts/check-decoder-layers.sh" >bad
		c = " (nothing in the decoder)"
		if (f in callees)
			c = by_layer(callees[f])
		printf "%d %-18s %-8s ->%s\n", rank[l], f, l, c >graph
	}
	for (k in edge) {
		split(k, p, SUBSEP)
		if (layer(p[1]) == "stepper" && layer(p[2]) == "stepper")
			print p[1], p[2], edge[k] >steps
	}
}' "$tmp/defs" "$tmp/uses" || fail "awk"

sort -k1,1n -k2,2 "$tmp/graph" | cut -d' ' -f2-

status=0
if [ -s "$tmp/bad" ]; then
	sort "$tmp/bad"
	status=1
fi

# a cycle among the steppers: tsort names the files in it
if [ -s "$tmp/steps" ]; then
	cut -d' ' -f1,2 "$tmp/steps" | tsort >/dev/null 2>"$tmp/tsort"
	if [ -s "$tmp/tsort" ]; then
		loop=$(sed -n 's/^tsort: \([^ ]*\.c\)$/\1/p' "$tmp/tsort" |
		       sort -u | tr '\n' ' ')
		loop=${loop% }
		echo "FAIL: cycle among the steppers: ${loop:-$(cat "$tmp/tsort")}"
		for f in $loop; do
			awk -v f="$f" -v l=" $loop " \
			    '$1 == f && index(l, " " $2 " ") {
				printf "FAIL:   %s -> %s: %s\n", $1, $2, $3 }' \
			    "$tmp/steps"
		done
		status=1
	fi
fi

if [ "$status" -ne 0 ]; then
	echo "decoder layers: FAIL"
	exit 1
fi
echo "decoder layers: ok"
