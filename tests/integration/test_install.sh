#!/bin/sh
# make install into a DESTDIR: the binary, the agent where the binary looks
# for it, the man page, the systemd unit (its ExecStart the installed
# binary, not enabled) and /etc/default/asgst-bpf (0600, kept by a second
# install once edited). The unit passes systemd-analyze verify without a
# word, and its ExecStart, with the default file's example expanded as
# systemd expands it, gets through record's option parser. docs/fleet.md
# shows the DaemonSet of dist/kubernetes/daemonset.yaml.
. "$(dirname "$0")/lib.sh"
[ -x "$ASGST" ] || fail "no $ASGST (make BUILD=... all first)"

D="$TMP/dest"
PREFIX=/usr/local
UNIT="$D$PREFIX/lib/systemd/system/asgst-bpf.service"
DEF="$D/etc/default/asgst-bpf"
BIN="$D$PREFIX/bin/asgst-bpf"

# inst: make install into $D; its output in $TMP/install.log
inst() {
	make -C "$TOP" --no-print-directory BUILD="$BUILD" DESTDIR="$D" \
		PREFIX="$PREFIX" install > "$TMP/install.log" 2>&1 ||
		{ cat "$TMP/install.log"; fail "make install"; }
}

# mode FILE: its permission bits in octal
mode() { stat -c %a "$1"; }

inst
for f in "$BIN" "$D$PREFIX/lib/asgst-bpf/libasgst-agent.so" \
	 "$D$PREFIX/share/man/man1/asgst-bpf.1" "$UNIT" "$DEF"; do
	[ -f "$f" ] || fail "make install did not put ${f#"$D"}"
done
[ -x "$BIN" ] || fail "the installed binary is not executable"
# the recorder finds the agent at ../lib/asgst-bpf/ beside its binary
# (attach.c): that is where it must be
[ -f "$(dirname "$BIN")/../lib/asgst-bpf/libasgst-agent.so" ] ||
	fail "the agent is not at bin/../lib/asgst-bpf/"
cmp -s "$ASGST" "$BIN" || fail "the installed binary is not the built one"
[ "$(mode "$DEF")" = 600 ] || fail "default file mode $(mode "$DEF"), want 600"
[ "$(mode "$UNIT")" = 644 ] || fail "unit mode $(mode "$UNIT"), want 644"
echo "INFO: installed: bin, agent, man page, unit, default file (0600)"

# the unit runs the installed binary, and nothing enables it
exec_line=$(grep '^ExecStart=' "$UNIT")
[ "$(echo "$exec_line" | wc -l)" -eq 1 ] || fail "not one ExecStart line"
prog=$(echo "$exec_line" | sed 's/^ExecStart=//; s/ .*//')
[ "$prog" = "$PREFIX/bin/asgst-bpf" ] ||
	fail "ExecStart runs $prog, want $PREFIX/bin/asgst-bpf"
[ -x "$D$prog" ] || fail "ExecStart's $prog is not in DESTDIR"
grep -q '@[A-Z]*@' "$UNIT" && fail "a template placeholder is left in the unit"
# credentials come from the environment, never argv (ps shows argv)
echo "$exec_line" | grep -Eq 'ASGST_PUSH_(USER|PASSWORD|TOKEN|TENANT)' &&
	fail "ExecStart puts credentials on the command line"
grep -q '^EnvironmentFile=-/etc/default/asgst-bpf$' "$UNIT" ||
	fail "the unit does not read /etc/default/asgst-bpf"
[ -z "$(find "$D" -path '*.wants*' 2>/dev/null)" ] ||
	fail "make install enabled the unit"
grep -q 'systemctl enable --now asgst-bpf' "$TMP/install.log" ||
	fail "make install does not say how to enable the unit"
echo "INFO: ExecStart=${exec_line#ExecStart=}"

# a second install keeps the admin's edited file, mode and all
echo "ASGST_PUSH_URL=http://edited.example:4040" >> "$DEF"
chmod 640 "$DEF"
sum=$(cksum < "$DEF")
echo "# stale" >> "$UNIT"
inst
[ "$(cksum < "$DEF")" = "$sum" ] || fail "a second install replaced the edited default file"
[ "$(mode "$DEF")" = 640 ] || fail "a second install changed the default file's mode"
grep -q 'open to group or others' "$TMP/install.log" ||
	fail "no warning about a default file others may read"
grep -q '^# stale' "$UNIT" && fail "a second install did not refresh the unit"
echo "INFO: a second install kept the edited default file and refreshed the unit"

# systemd-analyze verify: an unknown or bad line is only a warning (exit
# 0), so any output at all fails. Verified on a copy whose ExecStart is
# the DESTDIR's binary (it checks that the program exists); the man page
# from DESTDIR (it runs man for Documentation=).
if command -v systemd-analyze > /dev/null; then
	sed "s|^ExecStart=$PREFIX/bin/|ExecStart=$D$PREFIX/bin/|" "$UNIT" \
		> "$TMP/asgst-bpf.service"
	MANPATH="$D$PREFIX/share/man" systemd-analyze verify \
		"$TMP/asgst-bpf.service" > "$TMP/verify.log" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] || [ -s "$TMP/verify.log" ]; then
		cat "$TMP/verify.log"
		fail "systemd-analyze verify: rc=$rc, or it said something"
	fi
	echo "INFO: systemd-analyze verify: clean"
else
	# Debian's systemd package has it; not installed for a test
	echo "INFO: SKIP systemd-analyze verify: systemd-analyze not installed (Debian package systemd)"
	[ "${CI:-}" = "true" ] && fail "systemd-analyze needed under CI=true"
fi

# the DaemonSet shown in docs/fleet.md is dist/kubernetes/daemonset.yaml's
# (comments and layout aside)
if python3 -c 'import yaml' 2> /dev/null; then
	python3 - "$TOP" <<'PY' || fail "docs/fleet.md's DaemonSet differs from dist/kubernetes/daemonset.yaml"
import re, sys, yaml
top = sys.argv[1]
blocks = re.findall(r"```yaml\n(.*?)```", open(top + "/docs/fleet.md").read(), re.S)
ds = [d for d in yaml.safe_load_all(open(top + "/dist/kubernetes/daemonset.yaml"))
      if d and d.get("kind") == "DaemonSet"]
sys.exit(0 if len(blocks) == 1 and len(ds) == 1 and
         yaml.safe_load(blocks[0]) == ds[0] else 1)
PY
	echo "INFO: docs/fleet.md's DaemonSet is dist/kubernetes/daemonset.yaml's"
else
	echo "INFO: SKIP DaemonSet check: no python3 yaml module (Debian package python3-yaml)"
fi

# ExecStart through record's option parser. systemd expands ${VAR} to one
# argument and $VAR to its words; here with the default file's commented
# example (ASGST_OPTS) and a URL. record parses every option before it
# checks for root: run as a user, 1 "needs root" means all were taken, 2
# is a usage error.
if ! "$BIN" record --help | grep -q -- '--push'; then
	echo "INFO: SKIP option check: this build's record has no --push"
	[ "${CI:-}" = "true" ] && fail "record --push needed under CI=true"
	exit 0
fi
opts=$(sed -n 's/^#[[:space:]]*ASGST_OPTS=//p' "$DEF" | head -n 1)
[ -n "$opts" ] || fail "no ASGST_OPTS example in the default file"
url=http://127.0.0.1:4040
set -f
set --
for w in ${exec_line#ExecStart=}; do
	case "$w" in
	'${ASGST_PUSH_URL}') set -- "$@" "$url" ;;
	'$ASGST_OPTS') for o in $opts; do set -- "$@" "$o"; done ;;
	'$'*) fail "ExecStart uses $w, which this test does not know" ;;
	*) set -- "$@" "$w" ;;
	esac
done
set +f
shift	# the program: the DESTDIR's binary runs
echo "INFO: parsing: asgst-bpf $*"
if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv > /dev/null ||
		skip_or_fail "setpriv not found (to run the parser as nobody)"
	chmod 711 "$TMP"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN" "$@" \
		> "$TMP/parse.out" 2> "$TMP/parse.err"
else
	"$BIN" "$@" > "$TMP/parse.out" 2> "$TMP/parse.err"
fi
rc=$?
if [ "$rc" -ne 1 ] || ! grep -q 'needs root' "$TMP/parse.err"; then
	cat "$TMP/parse.err"
	fail "the unit's command line is not accepted by record (rc=$rc)"
fi
echo "INFO: record's parser takes the unit's command line"
exit 0
