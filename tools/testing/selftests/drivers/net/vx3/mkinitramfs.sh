#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the test guest's initramfs from this machine's binaries.
#
# Usage: mkinitramfs.sh KVER OUTPUT.cpio [VX3_KO]
#
# Modules come from DIR/lib/modules/KVER, DIR being VX3_MODROOT if set (a
# make modules_install INSTALL_MOD_PATH=DIR tree, e.g. the debug kernel's,
# scripts/vx3-debug-kernel.sh), else where scripts/vx3-deps.sh --modroot
# says: / for the installed 6.12, the unpacked packages for 7.3.
#
# Contents: busybox-static (with applet symlinks), dash as /bin/sh, iperf, mpstat, ethtool,
# ip, tc, bpftool, their shared libraries, vx3-nl, vx3-udp and vx3-failnth
# (built here, static), the BPF programs of vx3_xdp.bpf.c and
# vx3_rxhash.bpf.c and vx3_xdphash.bpf.c (clang), vx3-xdpbound and vx3-xsk
# (libbpf, with its libraries),
# guest/init + guest/agent.sh, and the modules
# vmxnet3, 8021q, bridge, veth and (if given and present) vx3, with their dependencies,
# decompressed (busybox modprobe cannot read .ko.xz) and indexed by depmod.
# With VX3_VMXNET3_KO=FILE set, FILE (the patched vmxnet3 of
# scripts/vmxnet3-series/, make vmxnet3-patched) replaces the kernel's
# vmxnet3.ko at its path, so that every modprobe vmxnet3 loads it.

set -euo pipefail

KVER=$1
OUT=$2
VX3_KO=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
# Debian's target kernel is unpacked, not installed (scripts/vx3-deps.sh)
MODROOT=${VX3_MODROOT-$("$HERE/../../../../../../scripts/vx3-deps.sh" --modroot "$KVER")}
MODDIR=$MODROOT/lib/modules/$KVER
# modinfo looks modules up in MODROOT (-b) instead of /
MODINFO_B=()
[ -z "$MODROOT" ] || MODINFO_B=(-b "$MODROOT")

[ -d "$MODDIR" ] || { echo "mkinitramfs: no $MODDIR" >&2; exit 1; }

STAGE=$(mktemp -d "${OUT%/*}/initramfs.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT

mkdir -p "$STAGE"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,etc,proc,sys,dev,tmp,run,root,var/log}
mkdir -p "$STAGE/lib/modules/$KVER"

# busybox first; real binaries below take precedence via PATH order.
cp /bin/busybox "$STAGE/bin/busybox"
for a in $(/bin/busybox --list); do
	[ "$a" = busybox ] || ln -sf busybox "$STAGE/bin/$a"
done

copy_with_libs() {
	local f=$1 lib
	install -D -m 0755 "$f" "$STAGE$f"
	for lib in $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true); do
		[ -e "$STAGE$lib" ] || install -D -m 0755 "$lib" "$STAGE$lib"
	done
}

# /bin/sh is dash: busybox's sh prefers its own applets (ip, ...) over the
# real binaries in PATH.
copy_with_libs /usr/bin/dash
ln -sf /usr/bin/dash "$STAGE/bin/sh"

for b in /usr/bin/iperf /usr/bin/mpstat /usr/sbin/ethtool /usr/sbin/ip /usr/sbin/tc \
	/usr/sbin/bpftool; do
	copy_with_libs "$b"
done
# More host binaries on request, e.g. VX3_EXTRA_BINS=/usr/bin/perf for
# the benchmark's guest profiles.
for b in ${VX3_EXTRA_BINS:-}; do
	copy_with_libs "$b"
done

# Test helpers, static: vx3-nl (netdev netlink dumps), vx3-udp (UDP
# integrity) and vx3-failnth (fail-nth fault injection). The peer side runs them from vx3-tools/ next to OUTPUT.
# netdev.h is the guest kernel's: the host's linux-libc-dev may lack it.
TOOLS=${OUT%/*}/vx3-tools
mkdir -p "$TOOLS/include/linux"
cp "$MODDIR/source/include/uapi/linux/netdev.h" "$TOOLS/include/linux/netdev.h.$$"
mv -f "$TOOLS/include/linux/netdev.h.$$" "$TOOLS/include/linux/netdev.h"
for t in vx3-nl vx3-udp vx3-failnth; do
	gcc -O2 -Wall -static -I"$TOOLS/include" -o "$TOOLS/$t.$$" "$HERE/$t.c"
	mv -f "$TOOLS/$t.$$" "$TOOLS/$t"
	install -m 0755 "$TOOLS/$t" "$STAGE/usr/bin/$t"
done

# vx3-xdpbound (device-bound XDP programs, for test_rss.py's RX hash
# kfunc) and vx3-xsk (AF_XDP sockets, test_xsk.py) link libbpf: built
# here, dynamically, and copied with their libraries.
for t in vx3-xdpbound vx3-xsk; do
	gcc -O2 -Wall -o "$TOOLS/$t.$$" "$HERE/$t.c" -lbpf
	mv -f "$TOOLS/$t.$$" "$TOOLS/$t"
	install -D -m 0755 "$TOOLS/$t" "$STAGE/usr/bin/$t"
	for lib in $(ldd "$TOOLS/$t" | grep -o '/[^ ]*'); do
		[ -e "$STAGE$lib" ] || install -D -m 0755 "$lib" "$STAGE$lib"
	done
done

# XDP programs of test_xdp.py and the benchmark, with BTF (libbpf maps)
mkdir -p "$STAGE/usr/lib/vx3"
clang -O2 -g -Wall -target bpf -I/usr/include/x86_64-linux-gnu \
	-c "$HERE/vx3_xdp.bpf.c" -o "$STAGE/usr/lib/vx3/vx3_xdp.bpf.o"
# tc and XDP programs of test_rss.py: the receive hash and queue per flow
for p in vx3_rxhash vx3_xdphash; do
	clang -O2 -g -Wall -target bpf -I/usr/include/x86_64-linux-gnu \
		-c "$HERE/$p.bpf.c" -o "$STAGE/usr/lib/vx3/$p.bpf.o"
done

# Modules: resolve dependencies with modinfo, decompress, depmod.
declare -A seen=()
add_mod() { # name-or-path
	local m=$1 path deps d rel vm
	if [ -f "$m" ]; then
		path=$m
		rel=extra/$(basename "$m")
	elif [ "$m" = vmxnet3 ] && [ -n "${VX3_VMXNET3_KO:-}" ]; then
		path=$VX3_VMXNET3_KO
		rel=kernel/drivers/net/vmxnet3/vmxnet3.ko
		vm=$(modinfo -F vermagic "$path" | awk '{print $1}')
		if [ "$vm" != "$KVER" ]; then
			echo "mkinitramfs: $path is built for $vm, not $KVER" >&2
			exit 1
		fi
	else
		path=$(modinfo "${MODINFO_B[@]}" -k "$KVER" -n "$m")
		case "$path" in
		/*) ;;
		*) return 0 ;;	# (builtin)
		esac
		rel=${path#"$MODDIR"/}
	fi
	[ -z "${seen[$path]:-}" ] || return 0
	seen[$path]=1
	deps=$(modinfo -F depends "$path" | tr ',' ' ')
	for d in $deps; do
		add_mod "$d"
	done
	rel=${rel%.xz}
	mkdir -p "$STAGE/lib/modules/$KVER/$(dirname "$rel")"
	case "$path" in
	*.xz) xz -dc "$path" >"$STAGE/lib/modules/$KVER/$rel" ;;
	*) cp "$path" "$STAGE/lib/modules/$KVER/$rel" ;;
	esac
}

# VX3_EXTRA_MODS: more modules by name, resolved in MODDIR like the others
# (test_dkms.py: vx3 as DKMS installed it, updates/dkms/vx3.ko.xz).
# veth: test_xdp.py (ndo_xdp_xmit from a veth).
# 9pnet_virtio and 9p: the host's / over virtio-9p (lib/vm.py host_root,
# test_upstream.py); modules in Debian's kernel, built into the debug one.
for m in vmxnet3 8021q bridge veth virtio_console virtio_pci 9pnet_virtio 9p \
	${VX3_EXTRA_MODS:-}; do
	add_mod "$m"
done
# What test_upstream.py's scripts need loaded (its setup() modprobes them
# from here: the scripts run in the host's /, where no modules of the
# guest kernel are): macsec.py a macsec link, netpoll_basic.py netconsole
# and configfs, so_txtime.py the prio, fq and etf qdiscs and the fw
# filter, psp.py and the nk_*.py scripts clsact and tc BPF filters
# (test_rss.py too).
# Where a kernel lacks one (not even built in), the script reports it.
for m in macsec netconsole configfs sch_prio sch_fq sch_etf sch_ingress \
	cls_fw cls_bpf; do
	if modinfo "${MODINFO_B[@]}" -k "$KVER" -n "$m" >/dev/null 2>&1; then
		add_mod "$m"
	fi
done
if [ -n "$VX3_KO" ] && [ -f "$VX3_KO" ]; then
	vm=$(modinfo -F vermagic "$VX3_KO" | awk '{print $1}')
	if [ "$vm" != "$KVER" ]; then
		echo "mkinitramfs: $VX3_KO is built for $vm, not $KVER; not included" >&2
	else
		add_mod "$VX3_KO"
	fi
fi
cp "$MODDIR"/modules.builtin* "$MODDIR"/modules.order "$STAGE/lib/modules/$KVER/" 2>/dev/null || true
depmod -b "$STAGE" "$KVER"
# Nothing autoloads NIC drivers: there is no udev/mdev in the guest and
# /init clears the uevent helper, so tests choose the driver.

# VX3_EXTRA_FILES="SRC[=DEST] ...": host files copied into the guest (at
# DEST, default SRC), e.g. a modprobe.d file (test_dkms.py).
for f in ${VX3_EXTRA_FILES:-}; do
	install -D -m "$(stat -c %a "${f%%=*}")" "${f%%=*}" "$STAGE${f#*=}"
done
install -m 0755 "$HERE/guest/init" "$STAGE/init"
install -m 0755 "$HERE/guest/agent.sh" "$STAGE/bin/vx3-agent"
echo "root:x:0:0:root:/root:/bin/sh" >"$STAGE/etc/passwd"
echo "root:x:0:" >"$STAGE/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$STAGE/etc/hosts"
echo vx3-guest >"$STAGE/etc/hostname"

(cd "$STAGE" && find . -print0 | sort -z |
	cpio --null -o -H newc --quiet -R 0:0) >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "# mkinitramfs: $OUT ($(du -h "$OUT" | cut -f1))" >&2
