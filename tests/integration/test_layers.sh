#!/bin/sh
# scripts/check-layers.sh finds what it is for, in copies under $TMP (the
# checkout is never touched):
#  - a copy of user/ (with bpf/, agent/ headers) and a planted upward
#    include, user/util/planted.c including profile/profile.h: the check
#    fails, and the only line the plant adds names that include;
#  - a small tree built here (util, trace, profile, cli, main): clean it
#    passes; then each planted fault fails it with its line: a circle
#    between two files of util/, a call up the layers declared by hand
#    (no include), a folder of no layer, and a decoder stepper calling the
#    dispatcher (the decoder's own layers).
. "$(dirname "$0")/lib.sh"
CHECK="$TOP/scripts/check-layers.sh"
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || fail "no C compiler ($CC)"
command -v nm >/dev/null 2>&1 || fail "no nm (binutils)"

# check NAME ARGS...: runs the check, its output in $TMP/NAME.out, its
# exit status in RC
check() {
	_n=$1; shift
	sh "$CHECK" "$@" >"$TMP/$_n.out" 2>&1
	RC=$?
	sed "s/^/  $_n: /" "$TMP/$_n.out"
}

# expect_fail NAME PATTERN: the check NAME failed (exit 1, "layers: FAIL")
# with a violation line matching PATTERN (grep -E)
expect_fail() {
	[ "$RC" -eq 1 ] || fail "$1: exit $RC, want 1"
	[ "$(tail -n 1 "$TMP/$1.out")" = "layers: FAIL" ] || fail "$1: no 'layers: FAIL'"
	grep -Eq "^FAIL: $2" "$TMP/$1.out" || fail "$1: no violation line matching '$2'"
}

# ---- a copy of the real tree, one upward include planted ----------------
R="$TMP/real"
mkdir -p "$R" && cp -R "$TOP/user" "$TOP/bpf" "$TOP/agent" "$R/" ||
	fail "cannot copy the tree"
check real -i -s "$R"
[ "$(tail -n 1 "$TMP/real.out")" = "layers: $( [ "$RC" -eq 0 ] && echo ok || echo FAIL)" ] ||
	fail "real: last line does not match exit $RC"
printf '/* planted by test_layers.sh */\n#include "profile/profile.h"\n' \
	>"$R/user/util/planted.c"
check planted -i -s "$R"
expect_fail planted 'user/util/planted\.c:2: includes user/profile/profile\.h: util may not include profile'
grep '^FAIL' "$TMP/real.out" | sort >"$TMP/real.fail"
grep '^FAIL' "$TMP/planted.out" | sort >"$TMP/planted.fail"
added=$(comm -13 "$TMP/real.fail" "$TMP/planted.fail")
[ "$(echo "$added" | wc -l)" -eq 1 ] || fail "the plant added other lines: $added"
[ -z "$(comm -23 "$TMP/real.fail" "$TMP/planted.fail")" ] ||
	fail "the plant hid violations of the copy"
[ ! -e "$TOP/user/util/planted.c" ] || fail "planted in the checkout"
echo "INFO: planted include: $added"

# ---- a small tree and its objects ----------------------------------------
S="$TMP/small"
B="$TMP/small-build"

# put FILE TEXT: a source of the small tree (printf format, no args)
put() {
	mkdir -p "$(dirname "$S/$1")"
	printf "$2" >"$S/$1"
}

# build: every .c of the small tree to its object under $B/obj
build() {
	rm -rf "$B"
	(cd "$S" && find user -name '*.c') | while read -r _c; do
		mkdir -p "$(dirname "$B/obj/$_c")"
		"$CC" -c -O0 -I"$S/user" -o "$B/obj/${_c%.c}.o" "$S/$_c" ||
			exit 1
	done || fail "cannot build the small tree"
}

put user/util/u.h 'int u_a(void);\n'
put user/util/u.c '#include "util/u.h"\nint u_a(void) { return 1; }\n'
put user/trace.h '#include "util/u.h"\nint trace_t(void);\n'
put user/trace.c '#include "trace.h"\nint trace_t(void) { return u_a(); }\n'
put user/profile/profile.h '#include "trace.h"\nint p_fn(void);\n'
put user/profile/profile.c '#include "profile/profile.h"\nint p_fn(void) { return trace_t() + u_a(); }\n'
put user/cli/commands.h 'int cmd(void);\n'
put user/cli/cmd.c '#include "cli/commands.h"\n#include "profile/profile.h"\nint cmd(void) { return p_fn(); }\n'
put user/main.c '#include "cli/commands.h"\nint main(void) { return cmd(); }\n'
build
check clean -s "$S" "$B"
[ "$RC" -eq 0 ] || fail "clean: exit $RC, want 0"
[ "$(cat "$TMP/clean.out")" = "layers: ok" ] || fail "clean: output is not just 'layers: ok'"

# a circle: u.c -> v.c -> u.c
put user/util/u.c '#include "util/u.h"\nint v_b(void);\nint u_a(void) { return v_b(); }\n'
put user/util/v.c '#include "util/u.h"\nint v_b(void) { return u_a(); }\n'
build
check circle -s "$S" "$B"
expect_fail circle 'circle of 2 files: user/util/u\.c user/util/v\.c$'
grep -q '^ *user/util/u\.c -> user/util/v\.c: v_b$' "$TMP/circle.out" ||
	fail "circle: edge u.c -> v.c not shown"
rm "$S/user/util/v.c"
put user/util/u.c '#include "util/u.h"\nint u_a(void) { return 1; }\n'

# a call up the layers, declared by hand: no include to see
put user/util/w.c 'int p_fn(void);\nint w_c(void) { return p_fn(); }\n'
build
check upcall -s "$S" "$B"
expect_fail upcall 'user/util/w\.c calls p_fn, defined in user/profile/profile\.c: util may not call profile'
rm "$S/user/util/w.c"

# a folder of no layer
put user/extra/x.c 'int x_d(void) { return 0; }\n'
build
check nolayer -s "$S" "$B"
expect_fail nolayer 'user/extra/x\.c: extra has no layer'
rm -r "$S/user/extra"

# the decoder's own layers: walk.c may call nothing in the decoder
put user/decode/walk.c 'int dispatch(void);\nint walk_w(void) { return dispatch(); }\n'
put user/decode/decode.c 'int walk_w(void);\nint dispatch(void) { return 0; }\nint top(void) { return walk_w(); }\n'
build
check decoder -s "$S" "$B"
expect_fail decoder 'decoder: walk\.c \(walk\) calls dispatch'
# ... and the same circle, seen by the file check
expect_fail decoder 'circle of 2 files: user/decode/decode\.c user/decode/walk\.c$'
put user/decode/walk.c 'int walk_w(void) { return 0; }\n'
build
check decoder-ok -s "$S" "$B"
[ "$RC" -eq 0 ] || fail "decoder-ok: exit $RC, want 0"
echo "PASS"
