#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rig's own QEMU: Debian's qemu source package, of the version of the
# installed qemu-system-x86 (bookworm: 7.2), with the patches of
# scripts/qemu/patches/ applied on top of Debian's, built once for
# x86_64-softmmu only and cached in $VX3_CACHE/qemu/<version>-<key>/.
# <key> hashes the patches, the configure options and the device list,
# so a new patch builds a new QEMU and an unchanged one is reused.
# Of QEMU's devices it has only what the rig's guests are made of
# (lib/vm.py): the q35 machine with its ISA serial port and its HPET
# (without it the 7.3 guest marks its TSC unstable, and after an S3
# resume a ping -W 3 gave no answer in 39 s: test_pm.py failed),
# virtio-serial and virtio-9p over virtio-pci, PCIe root ports,
# vmxnet3, and the Intel IOMMU of the "iommu" boot variant (for
# VX3_QEMU=<this binary>): 7.2 CPU-minutes to build on idle cores, where
# every x86 device took 11-13 in make check.
#
# The VM tests of a file that sets QEMU_PATCHED (test_pm.py, test_rss.py,
# test_upstream_rss.py, whose harness shares the host's / over virtio-9p:
# hence virtfs, with libattr and libcap-ng) boot with it
# (run.py builds it on first use); VX3_QEMU=<binary> overrides that for
# every file.
#
# Usage: scripts/vx3-qemu.sh           build if missing, print the binary
#        scripts/vx3-qemu.sh --path    print the binary (built or not)
#        scripts/vx3-qemu.sh --check   exit 0 if it is built
#
# The binary printed is a wrapper that runs the built qemu-system-x86_64
# with Debian's firmware directories (SeaBIOS, iPXE option ROMs, the
# linuxboot ROMs of qemu-system-data). Nothing is installed outside the
# cache but the build dependencies (meson, ninja, glib, pixman, libfdt,
# libattr, libcap-ng), here, when it is built, not by scripts/vx3-deps.sh
# (make check builds it in the background, beside the debug kernel, for
# its stock lane's S3 and RSS tests).

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VX3_CACHE=${VX3_CACHE:-/var/cache/vx3}
PATCHES=$ROOT/scripts/qemu/patches
CONFIGURE=(--target-list=x86_64-softmmu --without-default-features
	--without-default-devices --with-devices-x86_64=vx3-rig
	--disable-docs --disable-install-blobs --disable-werror
	--enable-trace-backends=log --enable-virtfs --enable-attr --enable-cap-ng
	--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu)
DEVICES="CONFIG_Q35=y CONFIG_SERIAL_ISA=y CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_SERIAL=y CONFIG_VIRTIO_9P=y CONFIG_PCIE_PORT=y
CONFIG_VMXNET3_PCI=y CONFIG_HPET=y CONFIG_VTD=y"
FIRMWARE=(-L /usr/share/seabios -L /usr/share/qemu -L /usr/lib/ipxe/qemu)
BUILD_DEPS="meson ninja-build pkg-config libglib2.0-dev libpixman-1-dev
libfdt-dev zlib1g-dev libattr1-dev libcap-ng-dev dpkg-dev patch"

log() { echo "vx3-qemu: $*" >&2; }

src_version() {
	dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null
}

ver=$(src_version) || { log "qemu-system-x86 is not installed (scripts/vx3-deps.sh)"; exit 1; }
key=$( { echo "${CONFIGURE[*]}" $DEVICES; cat "$PATCHES"/*.patch; } |
	sha256sum | cut -c1-12)
DIR=$VX3_CACHE/qemu/${ver#*:}-$key
BIN=$DIR/qemu-system-x86_64

case "${1:-}" in
--path)
	echo "$BIN"
	exit 0
	;;
--check)
	[ -x "$BIN" ]
	exit $?
	;;
"") ;;
*)
	echo "usage: $0 [--path|--check]" >&2
	exit 2
	;;
esac

if [ -x "$BIN" ]; then
	echo "$BIN"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || { log "not built yet, and building needs root"; exit 1; }
# One build at a time (two test runs may ask for it at once)
mkdir -p "$VX3_CACHE/qemu"
exec 9>"$VX3_CACHE/qemu/lock"
flock 9
if [ -x "$BIN" ]; then
	echo "$BIN"
	exit 0
fi

t0=$(date +%s)
log "building QEMU $ver with scripts/qemu/patches/ (once)"
need=
for p in $BUILD_DEPS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed" || need="$need $p"
done
if [ -n "$need" ]; then
	log "installing the build dependencies:$need"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends $need >/dev/null ||
		{ log "apt-get install$need failed"; exit 1; }
fi
# Debian's source index from a private apt configuration: the system's
# sources list binary packages only.
apt=$VX3_CACHE/apt-src-qemu
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
cat >"$apt/sources.list" <<EOT
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-updates main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main
EOT
o=(-o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts=-
	-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache")
apt-get "${o[@]}" update -q >/dev/null ||
	{ log "apt-get update of Debian's source index failed"; exit 1; }

tmp=$(mktemp -d "$VX3_CACHE/qemu/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
(cd "$tmp" && apt-get "${o[@]}" source --download-only -q "qemu=$ver" \
	>/dev/null 2>&1) || { log "Debian's source of qemu $ver not found"; exit 1; }
# Debian's patches applied (3.0 quilt), then ours
dpkg-source --no-check -x "$tmp"/qemu_*.dsc "$tmp/src" >/dev/null
for p in "$PATCHES"/*.patch; do
	patch -d "$tmp/src" -p1 -s <"$p" || { log "$(basename "$p") does not apply"; exit 1; }
done
# the device list, as the configs/devices file --with-devices-x86_64 names
printf '%s\n' $DEVICES >"$tmp/src/configs/devices/x86_64-softmmu/vx3-rig.mak"
mkdir "$tmp/build"
(cd "$tmp/build" && "$tmp/src/configure" "${CONFIGURE[@]}" \
	--prefix="$DIR/inst") >"$tmp/configure.log" 2>&1 || {
	tail -n 20 "$tmp/configure.log" >&2
	log "configure failed"
	exit 1
}
ninja -C "$tmp/build" -j"$(nproc)" qemu-system-x86_64 >"$tmp/build.log" 2>&1 || {
	tail -n 30 "$tmp/build.log" >&2
	log "build failed"
	exit 1
}
rm -rf "$DIR"
mkdir -p "$DIR"
cp "$tmp/build/qemu-system-x86_64" "$DIR/qemu-system-x86_64.bin"
cp "$tmp/src/COPYING" "$DIR/"
ls "$PATCHES" >"$DIR/patches"
cat >"$BIN" <<EOT
#!/bin/sh
# QEMU $ver + scripts/qemu/patches/ (scripts/vx3-qemu.sh)
exec "$DIR/qemu-system-x86_64.bin" ${FIRMWARE[*]} "\$@"
EOT
chmod 755 "$BIN"
log "built in $(($(date +%s) - t0)) s: $BIN"
echo "$BIN"
