#!/bin/sh
# Boot Debian 12's kernel (linux-image-6.1.0-N-amd64) under QEMU's TCG and
# run tests/kernels/checks.sh in it. The package is fetched with
# apt-get download into $BUILD/kernels and kept there; nothing is installed.
# The guest is a busybox initramfs made here: it loads the 9p and virtio
# modules of the same package, mounts the host's root read-only over 9p
# (the build output is reachable at its host path, also a checkout under
# /tmp, bound over the guest's own tmpfs there) with tmpfs on /tmp and
# /dev/shm and this run's output folder writable over a second 9p share,
# chroots into it and runs the checks, then powers off.
#
#   vm.sh OUTDIR [CHECK...]
# OUTDIR gets checks.sh's results and logs, console.log (the serial
# console: boot messages, the guest's shell) and "elapsed" (seconds from
# starting QEMU until it exits). Exit 0 when every check passed, 1 when one
# failed or the guest did not finish, 77 when QEMU, busybox-static or the
# kernel package cannot be had (a failure under CI=true).
# KERNEL_PKG= another package (default: what linux-image-amd64 depends on,
# else the newest linux-image-6.1.0-N-amd64); VM_SMP= vCPUs (2), VM_MEM=
# MiB (2048), VM_TIMEOUT= seconds before QEMU is killed (900).
. "$(dirname "$0")/../integration/lib.sh"
OUT=$1
shift
case "$OUT" in /*) ;; *) OUT="$(pwd)/$OUT" ;; esac
CHECKS=$*
KDIR="$BUILD/kernels"
SMP=${VM_SMP:-2}
MEM=${VM_MEM:-2048}
VM_TIMEOUT=${VM_TIMEOUT:-900}

QEMU=$(command -v qemu-system-x86_64) ||
	skip_or_fail "qemu-system-x86_64 not found (make deps: qemu-system-x86)"
BUSYBOX=/bin/busybox
# the static one: the initramfs holds no libc
[ -x "$BUSYBOX" ] && ! ldd "$BUSYBOX" > /dev/null 2>&1 ||
	skip_or_fail "a static /bin/busybox is needed (make deps: busybox-static)"

# the newest Debian 12 kernel package apt knows: what the metapackage
# depends on, else the highest N
kernel_pkg() {
	[ -n "${KERNEL_PKG:-}" ] && { echo "$KERNEL_PKG"; return; }
	_p=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-6\.1\.0-[0-9]*-amd64\)$/\1/p' | head -n 1)
	[ -n "$_p" ] || _p=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null |
		sed 's/ .*//' | sort -t- -k5,5n | tail -n 1)
	echo "$_p"
}

mkdir -p "$KDIR" "$OUT" || fail "cannot create $KDIR or $OUT"
PKG=$(kernel_pkg)
deb=""
if [ -n "$PKG" ]; then
	deb=$(ls "$KDIR/${PKG}_"*.deb 2>/dev/null | tail -n 1)
	if [ -z "$deb" ]; then
		# apt's sandbox user cannot write the build folder: download in a
		# folder of our own, then move it. Stale package lists name a
		# version the mirror has dropped: once more after an update.
		( cd "$TMP" && apt-get download -q "$PKG" > "$TMP/apt.log" 2>&1 ) ||
			{ [ "$(id -u)" -eq 0 ] && apt-get update -qq > /dev/null 2>&1 &&
			  ( cd "$TMP" && apt-get download -q "$PKG" > "$TMP/apt.log" 2>&1 ); } ||
			cat "$TMP/apt.log"
		ls "$TMP/${PKG}_"*.deb > /dev/null 2>&1 && mv "$TMP/${PKG}_"*.deb "$KDIR/"
		deb=$(ls "$KDIR/${PKG}_"*.deb 2>/dev/null | tail -n 1)
	fi
fi
# offline: any package fetched before
[ -n "$deb" ] || deb=$(ls "$KDIR"/linux-image-6.1.0-*-amd64_*.deb 2>/dev/null | tail -n 1)
[ -n "$deb" ] || skip_or_fail "no Debian 12 kernel package: apt-get download ${PKG:-linux-image-6.1.0-N-amd64} failed"
PKG=$(basename "$deb" | sed 's/_.*//')
root="$KDIR/$PKG"
if [ ! -d "$root/boot" ]; then
	# in a folder of this run's: another run may unpack it too
	rm -rf "$root.$$"
	dpkg -x "$deb" "$root.$$" || fail "dpkg -x $deb failed"
	mv -T "$root.$$" "$root" 2>/dev/null || rm -rf "$root.$$"
	[ -d "$root/boot" ] || fail "unpacking $deb into $root failed"
fi
VMLINUZ=$(ls "$root"/boot/vmlinuz-* | head -n 1)
KVER=${VMLINUZ##*/vmlinuz-}
MODS="$root/lib/modules/$KVER/kernel"
echo "INFO: kernel $PKG ($(basename "$deb")), $KVER"

# ---- the initramfs --------------------------------------------------------
IRD="$TMP/initramfs"
mkdir -p "$IRD/bin" "$IRD/proc" "$IRD/sys" "$IRD/dev" "$IRD/root" "$IRD/mod"
cp "$BUSYBOX" "$IRD/bin/busybox"

# mod_path NAME: the module's file in the package
mod_path() {
	find "$MODS" -name "$1.ko" -o -name "$(echo "$1" | tr _ -).ko" | head -n 1
}
# add_mod NAME: NAME after what it depends on (its .modinfo depends=) into
# load.order; built-in modules have no file and need no loading
add_mod() {
	grep -qx "$1" "$TMP/seen" 2>/dev/null && return 0
	echo "$1" >> "$TMP/seen"
	_f=$(mod_path "$1")
	[ -n "$_f" ] || return 0
	# (the list is expanded before the calls, which reuse _f and _d)
	for _d in $(strings -a "$_f" | sed -n 's/^depends=//p' | tr , ' '); do
		add_mod "$_d"
	done
	_f=$(mod_path "$1")
	cp "$_f" "$IRD/mod/" && basename "$_f" >> "$IRD/mod/load.order"
}
: > "$IRD/mod/load.order"
for m in virtio_pci 9pnet_virtio 9p; do
	add_mod "$m"
done
grep -q '^9p.ko$' "$IRD/mod/load.order" ||
	grep -q '^CONFIG_9P_FS=y' "$root/boot/config-$KVER" ||
	fail "no 9p module in $PKG"

# the guest's script: the values are this run's
cat > "$IRD/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in \$(cat /mod/load.order); do insmod /mod/\$m || echo "init: insmod \$m failed"; done
# msize: 9p's default of 8 KiB makes every read a round trip
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot /root ||
	{ echo "init: mounting the host's root failed"; poweroff -f; }
# the host's /tmp, kept in view before the guest's own tmpfs hides it: a
# checkout or build folder there (a CI clone) is bound back in its place
mkdir -p /hosttmp
mount -o bind /root/tmp /hosttmp
mount -t proc proc /root/proc
mount -t sysfs sys /root/sys
mount -t devtmpfs dev /root/dev
mount -t tmpfs tmp /root/tmp
for p in $TOP $BUILD; do
	case "\$p" in
	/tmp/*) mkdir -p "/root\$p" && mount -o bind "/hosttmp\${p#/tmp}" "/root\$p" ||
		{ echo "init: binding \$p failed"; poweroff -f; } ;;
	esac
done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /root$OUT ||
	{ echo "init: mounting $OUT failed"; poweroff -f; }
mkdir -p /root/dev/shm
mount -t tmpfs shm /root/dev/shm
mount -t cgroup2 cgroup2 /root/sys/fs/cgroup
mount -t tracefs tracefs /root/sys/kernel/tracing 2>/dev/null
echo "init: running the checks on \$(uname -r)"
chroot /root /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp \
	BUILD=$BUILD CI=${CI:-} JDK17=$JDK17 \
	/bin/sh $TOP/tests/kernels/checks.sh $OUT $CHECKS
echo \$? > /root$OUT/checks.rc
cat /proc/uptime > /root$OUT/uptime
sync
poweroff -f
INIT
chmod 755 "$IRD/init"
( cd "$IRD" && find . | "$BUSYBOX" cpio -o -H newc 2> /dev/null ) > "$TMP/initramfs.cpio" ||
	fail "making the initramfs failed"

# ---- boot -----------------------------------------------------------------
rm -f "$OUT/checks.rc" "$OUT/results" "$OUT/uptime" "$OUT/verifier.log"
t0=$(date +%s)
# no KVM (nested virtualization is not there on every host): TCG, one
# host thread per vCPU. The TSC as clock source: with TCG's default, HPET,
# every clock_gettime would be a system call, unlike on hardware.
timeout "$VM_TIMEOUT" "$QEMU" -accel tcg,thread=multi -cpu max -smp "$SMP" \
	-m "$MEM" -display none -no-reboot -monitor none \
	-serial "file:$OUT/console.log" \
	-kernel "$VMLINUZ" -initrd "$TMP/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 loglevel=4 clocksource=tsc tsc=reliable" \
	-fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap" \
	-device "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot" \
	-fsdev "local,id=out,path=$OUT,security_model=none,multidevs=remap" \
	-device "virtio-9p-pci,fsdev=out,mount_tag=out" \
	> "$TMP/qemu.log" 2>&1
qrc=$?
elapsed=$(( $(date +%s) - t0 ))
echo "$elapsed" > "$OUT/elapsed"
echo "INFO: QEMU ran ${elapsed}s (status $qrc)"
[ $qrc -ne 124 ] || fail "the guest did not finish in ${VM_TIMEOUT}s (console: $OUT/console.log)"
[ -s "$OUT/checks.rc" ] || { cat "$TMP/qemu.log"; tail -n 30 "$OUT/console.log";
	fail "the guest ran no checks (console: $OUT/console.log)"; }
cat "$OUT/results"
[ "$(cat "$OUT/checks.rc")" = 0 ]
