#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install (idempotently) everything vx3's build, static checks, VM tests and
# benchmarks need on a Debian 12 host, and extract checkpatch/kernel-doc from
# the Debian linux-source package into a cache outside the repository.
#
# Usage: scripts/vx3-deps.sh            install what is missing
#        scripts/vx3-deps.sh --check    exit 0 if nothing is missing (no changes)
#        scripts/vx3-deps.sh --kver     print the guest/module kernel version
#        scripts/vx3-deps.sh --srcdir   print the extracted linux-source dir
#
# The chosen kernel is the newest linux-image-6.12.*+deb12-amd64-unsigned for
# which linux-headers-<same> exists, so that vx3.ko and the guest kernel match.
# It is recorded in $VX3_CACHE/kver.

set -euo pipefail

VX3_CACHE=${VX3_CACHE:-/var/cache/vx3}
SRC_SERIES=6.12
SRC_TAR=/usr/src/linux-source-$SRC_SERIES.tar.xz
SRC_DIR=$VX3_CACHE/linux-source-$SRC_SERIES

BASE_PKGS="qemu-system-x86 linux-source-$SRC_SERIES sparse iperf sysstat
ethtool busybox-static cpio iproute2 gnuplot-nox netsniff-ng socat libc6-dev
python3 python3-docutils kmod xz-utils make gcc perl linux-perf
tcpdump
iperf3 iputils-ping python3-yaml jq
git flex bison bc libelf-dev libssl-dev ccache codespell python3-sphinx
python3-ply python3-git python3-pyflakes
debhelper dh-dkms dkms
clang libbpf-dev bpftool zlib1g-dev"

log() { echo "vx3-deps: $*" >&2; }

# Installed kernel versions that have /boot/vmlinuz and a build dir, newest
# first.
installed_kvers() {
	local d k
	for d in /lib/modules/"$SRC_SERIES".*+deb12-amd64; do
		[ -d "$d" ] || continue
		k=${d##*/}
		[ -f "/boot/vmlinuz-$k" ] && [ -e "$d/build/Makefile" ] && echo "$k"
	done | sort -rV
}

# Newest kernel version available from apt with both image and headers.
apt_kver() {
	local k
	apt-cache search --names-only \
		"^linux-image-$SRC_SERIES\\.[0-9]+\\+deb12-amd64-unsigned\$" 2>/dev/null |
		awk '{print $1}' | sed -e 's/^linux-image-//' -e 's/-unsigned$//' |
		sort -rV | while read -r k; do
			if apt-cache show "linux-headers-$k" >/dev/null 2>&1; then
				echo "$k"
				break
			fi
		done
}

pkg_installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

missing_pkgs() {
	local p
	for p in "$@"; do
		pkg_installed "$p" || echo "$p"
	done
}

lists_stale() {
	# No package lists at all, or older than a day.
	local f
	f=$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -1440 \
		-print -quit 2>/dev/null)
	[ -z "$f" ]
}

src_ready() {
	[ -f "$SRC_DIR/.vx3-extracted" ] &&
		[ -x "$SRC_DIR/scripts/checkpatch.pl" ] &&
		[ -f "$SRC_DIR/scripts/spelling.txt" ] &&
		[ -f "$SRC_DIR/scripts/const_structs.checkpatch" ] &&
		[ -e "$SRC_DIR/scripts/kernel-doc" ]
}

extract_src() {
	src_ready && return 0
	log "extracting scripts/ from $SRC_TAR into $SRC_DIR (once)"
	local tmp
	mkdir -p "$VX3_CACHE"
	tmp=$(mktemp -d "$VX3_CACHE/extract.XXXXXX")
	# checkpatch.pl reads scripts/spelling.txt, scripts/const_structs.checkpatch
	# and (without --no-tree) a tree root; kernel-doc is self-contained.
	tar -xJf "$SRC_TAR" -C "$tmp" \
		"linux-source-$SRC_SERIES/scripts" \
		"linux-source-$SRC_SERIES/Makefile" \
		"linux-source-$SRC_SERIES/COPYING" \
		"linux-source-$SRC_SERIES/MAINTAINERS" \
		"linux-source-$SRC_SERIES/Documentation/dev-tools/checkpatch.rst"
	rm -rf "$SRC_DIR"
	mv "$tmp/linux-source-$SRC_SERIES" "$SRC_DIR"
	rmdir "$tmp"
	touch "$SRC_DIR/.vx3-extracted"
}

all_ok() {
	local k
	k=$(installed_kvers | head -n1)
	[ -n "$k" ] || return 1
	[ -z "$(missing_pkgs $BASE_PKGS)" ] || return 1
	src_ready || return 1
}

record_kver() {
	local k
	k=$(installed_kvers | head -n1)
	mkdir -p "$VX3_CACHE" 2>/dev/null && echo "$k" >"$VX3_CACHE/kver" 2>/dev/null || true
	echo "$k"
}

case "${1:-}" in
--kver)
	k=$(installed_kvers | head -n1)
	[ -n "$k" ] || { log "no 6.12 Debian kernel with headers installed"; exit 1; }
	echo "$k"
	exit 0
	;;
--srcdir)
	echo "$SRC_DIR"
	exit 0
	;;
--check)
	all_ok
	exit $?
	;;
"") ;;
*)
	echo "usage: $0 [--check|--kver|--srcdir]" >&2
	exit 2
	;;
esac

if all_ok; then
	log "all dependencies present; kernel $(record_kver)"
	exit 0
fi

want_kver=$(installed_kvers | head -n1)
pkgs=$BASE_PKGS
if [ "$(id -u)" -ne 0 ]; then
	kpk="linux-image-$SRC_SERIES.<N>+deb12-amd64-unsigned linux-headers-$SRC_SERIES.<N>+deb12-amd64"
	[ -n "$want_kver" ] && kpk=""
	log "missing dependencies and not root; run as root:"
	miss=$(echo $(missing_pkgs $pkgs) $kpk)
	[ -n "$miss" ] && echo "  apt-get update && DEBIAN_FRONTEND=noninteractive" \
		"apt-get install -y --no-install-recommends $miss" >&2
	[ -n "$kpk" ] && echo "  (pick <N> with: apt-cache search linux-image-$SRC_SERIES)" >&2
	src_ready || echo "  then: $0   (extracts $SRC_TAR into $SRC_DIR)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
need=$(missing_pkgs $pkgs)
if [ -z "$want_kver" ] || [ -n "$need" ]; then
	if lists_stale; then
		log "apt-get update"
		apt-get update -q
	fi
	if [ -z "$want_kver" ]; then
		want_kver=$(apt_kver)
		if [ -z "$want_kver" ]; then
			apt-get update -q
			want_kver=$(apt_kver)
		fi
		[ -n "$want_kver" ] || { log "no linux-image-$SRC_SERIES.*+deb12-amd64-unsigned with headers in apt"; exit 1; }
		need="$need linux-image-$want_kver-unsigned linux-headers-$want_kver"
	fi
	log "installing: $(echo $need)"
	apt-get install -y -q --no-install-recommends $need
fi

extract_src
if ! all_ok; then
	log "dependencies still incomplete after install"
	exit 1
fi
log "all dependencies present; kernel $(record_kver)"
