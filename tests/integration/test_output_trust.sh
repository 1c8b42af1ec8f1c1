#!/bin/sh
# Outputs in a directory other users write to (a sticky, world-writable
# one, like /tmp). A local user (nobody) puts things at root's -o paths
# first: a 0666 file of their own, a link to a root file, a FIFO. record
# (a profile and a raw file) and report -o refuse each with one stderr line
# and a non-zero exit, and leave it as it was (same inode, owner, mode and
# content; the link's target too). A fresh path gets a root-owned 0600
# file; root's own older file is replaced by a new one (a new inode, 0600);
# Ctrl-C puts what was recorded in place; no temporary file is left.
. "$(dirname "$0")/lib.sh"
need_bpf
command -v setpriv > /dev/null || skip_or_fail "setpriv missing"
command -v python3 > /dev/null || skip_or_fail "python3 missing"

as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

chmod 711 "$TMP" || fail "chmod $TMP"
S="$TMP/shared"
mkdir -m 1777 "$S" || fail "mkdir $S"

# root_600 FILE: a regular file of root's, mode 600
root_600() {
	[ -f "$1" ] && [ ! -L "$1" ] || fail "$1: no regular file"
	_o=$(stat -c '%u %a' "$1")
	[ "$_o" = "0 600" ] || fail "$1: owner and mode '$_o', not '0 600'"
}

json_ok() {
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" ||
		fail "$1: not a JSON profile"
}

no_tmp() {
	_t=$(ls -A "$S" | grep '^\.asgst-' || true)
	[ -z "$_t" ] || fail "temporary files left in $S: $_t"
}

# refused WHY PATH ARGS...: non-zero exit, one stderr line naming PATH,
# the refusal and WHY; the command is timed out (an open of a FIFO would
# block)
refused() {
	_w=$1; _p=$2; shift 2
	timeout -k 5 60 "$@" > "$TMP/out" 2> "$TMP/err"
	_rc=$?
	[ "$_rc" -ne 0 ] || fail "'$*' exited 0"
	[ "$_rc" -ne 124 ] && [ "$_rc" -ne 137 ] || fail "'$*' hung (timed out)"
	_n=$(wc -l < "$TMP/err")
	[ "$_n" -eq 1 ] || { cat "$TMP/err"; fail "'$*': $_n stderr lines, want 1"; }
	grep -qF -- "$_p" "$TMP/err" || { cat "$TMP/err"; fail "'$*': error does not name $_p"; }
	grep -q "refused" "$TMP/err" || { cat "$TMP/err"; fail "'$*': error does not say it refused"; }
	grep -qF -- "$_w" "$TMP/err" || { cat "$TMP/err"; fail "'$*': error does not say '$_w'"; }
	echo "INFO: $(cat "$TMP/err")"
}

# ---- fresh paths: root's 0600 files ---------------------------------------
"$ASGST" record -q -a -d 1 -o "$S/fresh.asgst" -o "$S/fresh.json" ||
	fail "record -o fresh.asgst -o fresh.json"
root_600 "$S/fresh.asgst"
root_600 "$S/fresh.json"
json_ok "$S/fresh.json"
"$ASGST" report -q -i "$S/fresh.asgst" -o "$S/report.json" ||
	fail "report -o report.json"
root_600 "$S/report.json"
json_ok "$S/report.json"
no_tmp

# ---- what the user put there first ----------------------------------------
echo root-secret > "$TMP/rootfile"
chmod 644 "$TMP/rootfile"
as_user sh -c '
	umask 0
	for x in json asgst; do
		echo user-data > "$1/user.$x"; chmod 666 "$1/user.$x"
		ln -s "$2" "$1/link.$x"
		mkfifo -m 666 "$1/fifo.$x"
	done' sh "$S" "$TMP/rootfile" || fail "the user could not plant files"
ls -la "$S" | sed 's/^/INFO: /'
before=$(stat -c '%n %i %u %a %F' "$S"/user.* "$S"/link.* "$S"/fifo.* \
	"$TMP/rootfile")

for kw in "user:owned by uid 65534" "link:symbolic link" "fifo:FIFO"; do
	k=${kw%%:*}; w=${kw#*:}
	refused "$w" "$S/$k.json" "$ASGST" record -a -d 1 -o "$S/$k.json"
	refused "$w" "$S/$k.asgst" "$ASGST" record -a -d 1 -o "$S/$k.asgst"
	refused "$w" "$S/$k.json" "$ASGST" report -i "$S/fresh.asgst" \
		-o "$S/$k.json"
	refused "$w" "$S/$k.json" "$ASGST" report -i "$S/fresh.asgst" \
		-f collapsed -o "$S/$k.json"
done

after=$(stat -c '%n %i %u %a %F' "$S"/user.* "$S"/link.* "$S"/fifo.* \
	"$TMP/rootfile")
[ "$before" = "$after" ] || fail "planted files changed: before
$before
after
$after"
for x in json asgst; do
	[ "$(cat "$S/user.$x")" = user-data ] || fail "user.$x was written into"
done
[ "$(cat "$TMP/rootfile")" = root-secret ] || fail "the link's target was written"
no_tmp

# ---- root's own older file: replaced, not written into ---------------------
echo old > "$S/root.json"
chmod 644 "$S/root.json"
ino=$(stat -c %i "$S/root.json")
"$ASGST" record -q -a -d 1 -o "$S/root.json" || fail "record over root.json"
root_600 "$S/root.json"
json_ok "$S/root.json"
[ "$(stat -c %i "$S/root.json")" != "$ino" ] || fail "root.json: the same inode was written into"
ino=$(stat -c %i "$S/report.json")
"$ASGST" report -q -i "$S/fresh.asgst" -o "$S/report.json" || fail "report over report.json"
root_600 "$S/report.json"
[ "$(stat -c %i "$S/report.json")" != "$ino" ] || fail "report.json: the same inode was written into"
no_tmp

# ---- Ctrl-C: what was recorded is put in place -----------------------------
# a program on the CPU meanwhile: an idle host gives record -a no samples
"$WL/native_chain" 30 > /dev/null &
busy=$!; bg $busy
"$ASGST" record -q -a -o "$S/int.json" -o "$S/int.asgst" 2> "$TMP/int.err" &
rp=$!; bg $rp
n=300
while ! ls -A "$S" | grep -q '^\.asgst-' && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
sleep 2
[ ! -e "$S/int.json" ] || fail "int.json is there before the recording ended"
kill -INT $rp
wait $rp || { cat "$TMP/int.err"; fail "record ended by SIGINT exited $?"; }
root_600 "$S/int.json"
root_600 "$S/int.asgst"
json_ok "$S/int.json"
"$ASGST" report -q -i "$S/int.asgst" -f collapsed > "$TMP/int.collapsed" ||
	fail "report of the interrupted recording"
kill $busy
grep -q native_chain "$TMP/int.collapsed" ||
	fail "the interrupted recording holds no stacks of the busy program"
no_tmp
echo "INFO: $(wc -l < "$TMP/int.collapsed") stacks in the interrupted recording"
exit 0
