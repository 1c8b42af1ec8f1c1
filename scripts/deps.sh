#!/bin/sh
# Install what the build and the tests need and is missing (Debian/apt).
# Idempotent and quiet when everything is present.
set -eu

PKGS="make gcc g++ clang llvm libbpf-dev libelf-dev libdw-dev zlib1g-dev libcmocka-dev
bpftool pkg-config openjdk-17-jdk-headless libclang-rt-14-dev python3
libjson-c-dev libcurl4-openssl-dev binutils util-linux procps protobuf-compiler chromium golang-go
podman runc fuse3 python3-fuse linux-perf
tomcat10-common libtomcat10-java jruby libh2-java nodejs
qemu-system-x86 busybox-static python3.11 python3.11-dev python3.11-dbg
libdebuginfod-dev debuginfod"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "asgst-bpf: missing packages:$missing; run 'sudo make deps' (needs root)" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
