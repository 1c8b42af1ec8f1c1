#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Check the layering of user/ (docs/architecture.md, folder map):
#  1. includes: a file of user/ includes only headers of its own layer or
#     of a layer of lower rank in LAYERS below; layers of one rank are
#     siblings and include none of each other's headers;
#  2. calls: the same rule on the compiled objects, so a declaration
#     written out by hand instead of included is seen too: an edge A -> B
#     is an undefined symbol of A.o defined in B.o ($BUILD/obj/user/...);
#  3. no circle between files on those edges: each strongly connected
#     component of more than one file is a circle;
#  4. the decoder's own layers (scripts/check-decoder-layers.sh).
#
# usage: scripts/check-layers.sh [-i] [-s SRC] [BUILD]
#   BUILD   the build folder (default $BUILD, build)
#   -s SRC  the tree whose user/ is checked (default: this checkout)
#   -i      includes only (1.; no objects needed)
# Prints one line per violation (FAIL: ...; a circle's edges follow it,
# indented), then "layers: ok", or "layers: FAIL" and exit 1.

# The order, lowest first. A unit is a folder of user/ or a file directly
# in user/ (by its name without .c/.h); bpf and agent are the contract
# headers found in bpf/ and agent/ (and the generated BPF skeleton).
LAYERS='
0 util
1 trace
1 bpf
1 agent
1 push
2 capture
3 symbols
3 jvm
4 python
4 decode
5 profile
6 output
7 recorder
8 cli
9 main
'

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
includes_only=0
while getopts is: opt; do
	case $opt in
	i) includes_only=1 ;;
	s) src=$OPTARG ;;
	*) echo "usage: $0 [-i] [-s SRC] [BUILD]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
BUILD=${1:-${BUILD:-build}}
case "$BUILD" in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac

fail() {
	echo "FAIL: $*"
	echo "layers: FAIL"
	exit 1
}

[ -d "$src/user" ] || fail "no user/ in $src"
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
echo "$LAYERS" >"$tmp/layers"
: >"$tmp/bad"

# ---- 1. includes ----------------------------------------------------------
cd "$src" || fail "cd $src"
find user bpf agent -type f 2>/dev/null | sort >"$tmp/files"
find user -type f \( -name '*.c' -o -name '*.h' \) | sort >"$tmp/sources"
[ -s "$tmp/sources" ] || fail "no sources in $src/user"
# "file:line:#include "x"" for every quoted include
grep -rHnE --include='*.[ch]' \
	'^[[:space:]]*#[[:space:]]*include[[:space:]]*"' user >"$tmp/includes"
[ $? -le 1 ] || fail "grep includes in $src/user"

awk -v layers="$tmp/layers" -v files="$tmp/files" \
    -v sources="$tmp/sources" -v self="scripts/check-layers.sh" '
# the layer unit of a path of the tree ("" when it has none)
function unit(p,    n, a) {
	n = split(p, a, "/")
	if (a[1] == "bpf" || a[1] == "agent")
		return a[1]
	if (a[1] != "user")
		return ""
	if (n == 2) {
		sub(/\.[ch]$/, "", a[2])
		return a[2]
	}
	return a[2]
}
# p with "." and ".." folded
function norm(p,    n, a, i, k, o, s) {
	n = split(p, a, "/")
	k = 0
	for (i = 1; i <= n; i++) {
		if (a[i] == "." || a[i] == "")
			continue
		if (a[i] == ".." && k > 0) {
			k--
			continue
		}
		o[++k] = a[i]
	}
	s = o[1]
	for (i = 2; i <= k; i++)
		s = s "/" o[i]
	return s
}
# where #include "x" of file f is found: its folder, then the -I paths
# of the Makefile ($(BUILD): the BPF skeleton, bpf, agent, user)
function resolve(f, x,    d, p) {
	d = f
	sub(/\/[^\/]*$/, "", d)
	p = norm(d "/" x)
	if (p in have)
		return p
	if (x ~ /\.skel\.h$/)
		return "bpf/" x
	if (("bpf/" x) in have)
		return "bpf/" x
	if (("agent/" x) in have)
		return "agent/" x
	if (norm("user/" x) in have)
		return norm("user/" x)
	return ""
}
BEGIN {
	while ((getline l <layers) > 0)
		if (split(l, a, " ") == 2)
			rank[a[2]] = a[1]
	while ((getline l <files) > 0)
		have[l] = 1
	while ((getline f <sources) > 0) {
		u = unit(f)
		if (!(u in rank) && !(u in told)) {
			told[u] = 1
			printf "FAIL: %s: %s has no layer (add it to LAYERS in %s)\n",
			       f, u, self
		}
	}
}
{
	# file:line:#include "x" ...
	f = $0; sub(/:.*/, "", f)
	ln = $0; sub(/^[^:]*:/, "", ln); sub(/:.*/, "", ln)
	x = $0; sub(/^[^"]*"/, "", x); sub(/".*/, "", x)
	from = unit(f)
	if (!(from in rank))
		next	# said above
	to_path = resolve(f, x)
	if (to_path == "") {
		printf "FAIL: %s:%s: includes \"%s\", found in none of user/, bpf/, agent/\n",
		       f, ln, x
		next
	}
	to = unit(to_path)
	if (to == from)
		next
	if (!(to in rank)) {
		printf "FAIL: %s:%s: includes %s, of %s, which has no layer\n",
		       f, ln, to_path, to
		next
	}
	if (rank[to] < rank[from])
		next
	why = rank[to] == rank[from] ? "a sibling (same rank " rank[to] ")" \
	      : "above it (rank " rank[to] " > " rank[from] ")"
	printf "FAIL: %s:%s: includes %s: %s may not include %s, %s\n",
	       f, ln, to_path, from, to, why
}' "$tmp/includes" >>"$tmp/bad" || fail "awk (includes)"

# ---- 2. calls, 3. circles between files ------------------------------------
if [ "$includes_only" -eq 0 ]; then
	command -v nm >/dev/null 2>&1 || fail "nm not found (binutils)"
	# defs: "symbol file" of every global definition; uses: "file symbol"
	: >"$tmp/defs"
	: >"$tmp/uses"
	: >"$tmp/objs"
	grep '\.c$' "$tmp/sources" >"$tmp/csrcs"
	while read -r f; do
		o=$BUILD/obj/${f%.c}.o
		if [ ! -f "$o" ]; then
			echo "FAIL: $f: no object $o (build first: make BUILD=... all)" >>"$tmp/bad"
			continue
		fi
		echo "$f" >>"$tmp/objs"
		nm --defined-only "$o" >"$tmp/nm" || fail "nm --defined-only $o"
		awk -v f="$f" 'NF == 3 && $2 ~ /^[A-TV-Z]$/ { print $3, f }' \
			"$tmp/nm" >>"$tmp/defs"
		nm -u "$o" >"$tmp/nm" || fail "nm -u $o"
		awk -v f="$f" 'NF { print f, $NF }' "$tmp/nm" >>"$tmp/uses"
	done <"$tmp/csrcs"

	# calls against the layers; Tarjan's strongly connected components
	# over the file graph
	awk -v objs="$tmp/objs" -v layers="$tmp/layers" '
	function strong(v,    i, w, c, k) {
		index_of[v] = low[v] = ++counter
		stack[++sp] = v
		on[v] = 1
		for (i = 1; i <= nout[v]; i++) {
			w = out[v, i]
			if (!(w in index_of)) {
				strong(w)
				if (low[w] < low[v])
					low[v] = low[w]
			} else if (on[w] && index_of[w] < low[v]) {
				low[v] = index_of[w]
			}
		}
		if (low[v] != index_of[v])
			return
		k = 0
		do {
			w = stack[sp--]
			on[w] = 0
			member[++k] = w
		} while (w != v)
		if (k < 2)
			return
		sort_members(k)
		c = ""
		for (i = 1; i <= k; i++) {
			c = c " " member[i]
			comp[member[i]] = v
		}
		printf "FAIL: circle of %d files:%s\n", k, c
		for (i = 1; i <= k; i++)
			edges_in(member[i], v)
	}
	function sort_members(k,    i, j, t) {
		for (i = 2; i <= k; i++)
			for (j = i; j > 1 && member[j - 1] > member[j]; j--) {
				t = member[j]; member[j] = member[j - 1]; member[j - 1] = t
			}
	}
	# the edges from f to the files of its circle, with (some) symbols
	function edges_in(f, id,    i, w, n, s, a) {
		for (i = 1; i <= nout[f]; i++) {
			w = out[f, i]
			if (comp[w] != id)
				continue
			n = split(syms[f, w], a, ",")
			s = a[1] (n > 1 ? ", " a[2] : "") (n > 2 ? ", " a[3] : "")
			if (n > 3)
				s = s sprintf(" (+%d more)", n - 3)
			printf "        %s -> %s: %s\n", f, w, s
		}
	}
	function unit(p,    n, a) {
		n = split(p, a, "/")
		if (n == 2) {
			sub(/\.c$/, "", a[2])
			return a[2]
		}
		return a[2]
	}
	BEGIN {
		while ((getline l <layers) > 0)
			if (split(l, a, " ") == 2)
				rank[a[2]] = a[1]
		while ((getline f <objs) > 0)
			order[++nf] = f
	}
	FNR == NR { def[$1] = $2; next }
	{
		from = $1; sym = $2
		if (!(sym in def) || def[sym] == from)
			next
		to = def[sym]
		if (!((from, to) in syms)) {
			out[from, ++nout[from]] = to
			syms[from, to] = sym
		} else {
			syms[from, to] = syms[from, to] "," sym
		}
		uf = unit(from); ut = unit(to)
		if (uf == ut || !(uf in rank) || !(ut in rank) || rank[ut] < rank[uf])
			next	# (a file of no layer is said by the include check)
		why = "above it (rank " rank[ut] " > " rank[uf] ")"
		if (rank[ut] == rank[uf])
			why = "a sibling (same rank " rank[ut] ")"
		printf "FAIL: %s calls %s, defined in %s: %s may not call %s, %s\n",
		       from, sym, to, uf, ut, why
	}
	END {
		for (i = 1; i <= nf; i++)
			if (!(order[i] in index_of))
				strong(order[i])
	}' "$tmp/defs" "$tmp/uses" >>"$tmp/bad" || fail "awk (circles)"

	# ---- 4. the decoder's own layers ------------------------------------
	if [ -d user/decode ]; then
		"$here/check-decoder-layers.sh" "$BUILD" >"$tmp/decoder" 2>&1 ||
			sed -n 's/^FAIL: /FAIL: decoder: /p' "$tmp/decoder" >>"$tmp/bad"
		grep -q '^decoder layers: ok$' "$tmp/decoder" ||
			grep -q '^FAIL: decoder: ' "$tmp/bad" ||
			echo "FAIL: decoder: scripts/check-decoder-layers.sh said: $(tail -n 1 "$tmp/decoder")" >>"$tmp/bad"
	fi
fi

if [ -s "$tmp/bad" ]; then
	cat "$tmp/bad"
	echo "layers: FAIL"
	exit 1
fi
echo "layers: ok"
