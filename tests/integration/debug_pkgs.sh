# Sourced. openjdk_dbg_root DIR TMP: Debian's openjdk-17-dbg and the
# openjdk-17-jre-headless of the same version (a -dbg package matches only
# its own build), fetched with apt-get download and unpacked into
# DIR/openjdk-17-VERSION once; nothing is installed. Prints that folder;
# 1 when apt knows no such package or the download fails.
openjdk_dbg_root() {
	_v=$(apt-cache policy openjdk-17-dbg 2>/dev/null |
		awk '/Candidate:/ { print $2 }')
	[ -n "$_v" ] && [ "$_v" != "(none)" ] || return 1
	_root="$1/openjdk-17-$_v"
	if [ ! -x "$_root/usr/lib/jvm/java-17-openjdk-amd64/bin/java" ]; then
		mkdir -p "$1" "$2/deb" || return 1
		# apt's sandbox user cannot write the build folder: a folder
		# of our own first
		( cd "$2/deb" && apt-get download -q "openjdk-17-dbg=$_v" \
			"openjdk-17-jre-headless=$_v" > "$2/apt.log" 2>&1 ) ||
			{ cat "$2/apt.log" >&2; return 1; }
		rm -rf "$_root.$$"
		for _d in "$2"/deb/*.deb; do
			dpkg -x "$_d" "$_root.$$" || return 1
		done
		# another run may have unpacked it meanwhile
		mv -T "$_root.$$" "$_root" 2>/dev/null || rm -rf "$_root.$$"
	fi
	[ -x "$_root/usr/lib/jvm/java-17-openjdk-amd64/bin/java" ] || return 1
	echo "$_root"
}
