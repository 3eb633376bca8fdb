#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install (idempotently) everything vx3's build, static checks, VM tests and
# benchmarks need on a Debian 12 host, and extract checkpatch/kernel-doc from
# the Debian linux-source package into a cache outside the repository.
#
# Usage: scripts/vx3-deps.sh              install what is missing
#        scripts/vx3-deps.sh --check      exit 0 if nothing is missing
#        scripts/vx3-deps.sh --debug-kernel  install only what
#                                         scripts/vx3-debug-kernel.sh needs
#        scripts/vx3-deps.sh --kver       print the target kernel's version
#        scripts/vx3-deps.sh --lts-kver   print the 6.12 LTS kernel's version
#        scripts/vx3-deps.sh --kdir KVER  print KVER's build tree
#        scripts/vx3-deps.sh --image KVER print KVER's bzImage
#        scripts/vx3-deps.sh --modroot KVER  print the root of KVER's
#                                         lib/modules/ ("" for /)
#        scripts/vx3-deps.sh --srcdir     print the extracted linux-source dir
#        scripts/vx3-deps.sh --sparse     print the sparse binary to use
#
# Two kernel lines (README):
# - the target, the newest kernel Debian ships: Linux 7.3 from the suite
#   trixie-backports (VX3_KERNEL_ABI=7.3.4+deb13, package version
#   VX3_KERNEL_PKGVER=7.3.4-1~bpo13+1: the version the suite was tested
#   with; set both to pick another). The suite is added to apt with
#   Pin-Priority 1, so that nothing on this Debian 12 machine is installed
#   or upgraded from it unless asked for by version. linux-source-7.3
#   (binutils and xz-utils only) is installed; the image, modules and
#   headers packages need trixie's libc and gcc-14 and are only unpacked
#   (dpkg -x) into $VX3_CACHE/kernel/<kver>/root. The build tree is
#   linux-source-7.3 with the headers package's .config and Module.symvers
#   after make modules_prepare ($VX3_CACHE/kernel/<kver>/build, linked from
#   /lib/modules/<kver>/build, where make, dkms and patched.sh look).
#   7.3's headers use __typeof_unqual__, which bookworm's sparse 0.6.4
#   cannot parse (the kernel then skips C=2 with a warning), so sparse
#   0.6.5~rc1 (VX3_SPARSE_VER) is built from Debian's source package (sid)
#   into $VX3_CACHE/sparse-<version>/; the source index comes from a
#   private apt configuration there, not from the system's sources.
# - the LTS line of DKMS users: the newest linux-image-6.12.*+deb12-amd64-
#   unsigned for which linux-headers-<same> exists, installed, with the
#   headers metapackage linux-headers-6.12-amd64, which satisfies the
#   vx3-dkms package's dependency on one (test_dkms.py installs it here).

set -euo pipefail

VX3_CACHE=${VX3_CACHE:-/var/cache/vx3}
LTS_SERIES=6.12
NEW_SERIES=7.3
NEW_ABI=${VX3_KERNEL_ABI:-7.3.4+deb13}
NEW_PKGVER=${VX3_KERNEL_PKGVER:-7.3.4-1~bpo13+1}
NEW_KVER=$NEW_ABI-amd64
NEW_SUITE=trixie-backports
NEW_DIR=$VX3_CACHE/kernel/$NEW_KVER
NEW_PKGS="linux-base-$NEW_KVER linux-binary-$NEW_KVER linux-modules-$NEW_KVER
linux-headers-$NEW_KVER linux-headers-$NEW_ABI-common"
APT_SOURCES=/etc/apt/sources.list.d/vx3-$NEW_SUITE.sources
APT_PIN=/etc/apt/preferences.d/vx3-$NEW_SUITE
SPARSE_VER=${VX3_SPARSE_VER:-0.6.5~rc1-2}
SPARSE_DIR=$VX3_CACHE/sparse-$SPARSE_VER
# checkpatch.pl and kernel-doc: the target kernel's
SRC_TAR=/usr/src/linux-source-$NEW_SERIES.tar.xz
SRC_DIR=$VX3_CACHE/linux-source-$NEW_SERIES

BASE_PKGS="qemu-system-x86 sparse iperf sysstat
ethtool busybox-static cpio iproute2 gnuplot-nox netsniff-ng socat libc6-dev
python3 python3-docutils kmod xz-utils make gcc perl linux-perf
tcpdump
iperf3 iputils-ping python3-yaml python3-jsonschema jq bpftrace
git flex bison bc libelf-dev libssl-dev ccache codespell python3-sphinx
python3-ply python3-git python3-pyflakes
debhelper dh-dkms dkms linux-headers-6.12-amd64
clang libbpf-dev bpftool zlib1g-dev"

# What scripts/vx3-debug-kernel.sh needs (with linux-source-7.3). On a
# machine that lacks dependencies make check installs these first
# (--debug-kernel) and starts the debug kernel's build, which then runs
# while the rest downloads and unpacks.
KBUILD_PKGS="make gcc libc6-dev flex bison bc libelf-dev libssl-dev xz-utils
perl kmod cpio python3"

log() { echo "vx3-deps: $*" >&2; }

# Installed kernel versions that have /boot/vmlinuz and a build dir, newest
# first.
installed_kvers() {
	local d k
	for d in /lib/modules/"$LTS_SERIES".*+deb12-amd64; do
		[ -d "$d" ] || continue
		k=${d##*/}
		[ -f "/boot/vmlinuz-$k" ] && [ -e "$d/build/Makefile" ] && echo "$k"
	done | sort -rV
}

# Newest kernel version available from apt with both image and headers.
apt_kver() {
	local k
	apt-cache search --names-only \
		"^linux-image-$LTS_SERIES\\.[0-9]+\\+deb12-amd64-unsigned\$" 2>/dev/null |
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
		"linux-source-$NEW_SERIES/scripts" \
		"linux-source-$NEW_SERIES/tools/lib/python" \
		"linux-source-$NEW_SERIES/tools/docs" \
		"linux-source-$NEW_SERIES/Makefile" \
		"linux-source-$NEW_SERIES/COPYING" \
		"linux-source-$NEW_SERIES/MAINTAINERS" \
		"linux-source-$NEW_SERIES/Documentation/dev-tools/checkpatch.rst"
	rm -rf "$SRC_DIR"
	mv "$tmp/linux-source-$NEW_SERIES" "$SRC_DIR"
	rmdir "$tmp"
	touch "$SRC_DIR/.vx3-extracted"
}

# ------------------------------------------------- the target kernel (7.3)
new_ready() {
	[ -f "$NEW_DIR/.ready" ] &&
		[ "$(readlink "/lib/modules/$NEW_KVER/build")" = "$NEW_DIR/build" ] &&
		pkg_installed "linux-source-$NEW_SERIES" &&
		[ -f "$APT_SOURCES" ] && [ -f "$APT_PIN" ]
}

# The suite, pinned so that only what is asked for by version comes from it.
add_suite() {
	if [ ! -f "$APT_SOURCES" ]; then
		log "adding $NEW_SUITE to apt ($APT_SOURCES, pinned at 1)"
		cat >"$APT_PIN" <<-EOT
		# vx3 (scripts/vx3-deps.sh): Debian's newest kernel comes from
		# $NEW_SUITE; nothing else is installed or upgraded from it.
		Package: *
		Pin: release n=$NEW_SUITE
		Pin-Priority: 1
		EOT
		cat >"$APT_SOURCES" <<-EOT
		# vx3 (scripts/vx3-deps.sh): linux-source-$NEW_SERIES and the
		# $NEW_KVER kernel packages; pinned by $APT_PIN.
		Types: deb
		URIs: http://deb.debian.org/debian
		Suites: $NEW_SUITE
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOT
		apt-get update -q
	fi
	apt-cache show "linux-source-$NEW_SERIES=$NEW_PKGVER" >/dev/null 2>&1 ||
		apt-get update -q
	apt-cache show "linux-source-$NEW_SERIES=$NEW_PKGVER" >/dev/null 2>&1 || {
		log "linux-source-$NEW_SERIES $NEW_PKGVER is not in apt: is $NEW_SUITE"
		log "reachable (apt-get update) and that version still there"
		log "(VX3_KERNEL_ABI / VX3_KERNEL_PKGVER pick another)?"
		return 1
	}
}

prepare_new() {
	local p tmp
	add_suite || return 1
	pkg_installed "linux-source-$NEW_SERIES" ||
		apt-get install -y -q --no-install-recommends \
			"linux-source-$NEW_SERIES=$NEW_PKGVER" || return 1
	[ -f "$NEW_DIR/.ready" ] || {
		log "unpacking $NEW_KVER and making its build tree (once)"
		rm -rf "$NEW_DIR"
		mkdir -p "$NEW_DIR/debs"
		tmp=$(mktemp -d "$NEW_DIR/tmp.XXXXXX")
		# apt-get download writes into the current directory as _apt
		chmod 755 "$tmp"
		(cd "$tmp" && for p in $NEW_PKGS; do
			apt-get download -q "$p=$NEW_PKGVER" || exit 1
		done) || return 1
		mv "$tmp"/*.deb "$NEW_DIR/debs/"
		for p in "$NEW_DIR"/debs/*.deb; do
			dpkg -x "$p" "$NEW_DIR/root" || return 1
		done
		# what the package's postinst would do (modinfo, modprobe)
		depmod -b "$NEW_DIR/root/usr" "$NEW_KVER" || return 1
		tar -xJf "$SRC_TAR" -C "$tmp" --strip-components=1 || return 1
		p=$NEW_DIR/root/usr/src/linux-headers-$NEW_KVER
		cp "$p/.config" "$p/Module.symvers" "$tmp/"
		# the release the image reports (make kernelrelease)
		echo "+${NEW_KVER#*+}" >"$tmp/localversion-vx3"
		# Debian built it with gcc-14; olddefconfig re-detects gcc-12's
		# features (compiler capabilities only: no structure changes).
		make -s -C "$tmp" olddefconfig >/dev/null &&
			make -s -C "$tmp" -j"$(nproc)" modules_prepare \
				>"$NEW_DIR/modules_prepare.log" 2>&1 || {
			tail -n 20 "$NEW_DIR/modules_prepare.log" >&2
			return 1
		}
		[ "$(make -s -C "$tmp" kernelrelease)" = "$NEW_KVER" ] || {
			log "build tree reports $(make -s -C "$tmp" kernelrelease)"
			return 1
		}
		mv "$tmp" "$NEW_DIR/build"
		echo "$NEW_KVER" >"$NEW_DIR/.ready"
	}
	mkdir -p "/lib/modules/$NEW_KVER"
	ln -sfn "$NEW_DIR/build" "/lib/modules/$NEW_KVER/build"
}

# ------------------------------------------- sparse for the 7.3 headers
sparse_ready() {
	[ -x "$SPARSE_DIR/sparse" ]
}

build_sparse() {
	local apt tmp
	sparse_ready && return 0
	log "building sparse $SPARSE_VER from Debian's source (once)"
	apt=$VX3_CACHE/apt-src
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
	cat >"$apt/sources.list" <<-EOT
	deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main
	EOT
	local o=(-o Dir::Etc::sourcelist="$apt/sources.list"
		-o Dir::Etc::sourceparts=- -o Dir::State::Lists="$apt/lists"
		-o Dir::Cache="$apt/cache")
	apt-get "${o[@]}" update -q >/dev/null || return 1
	tmp=$(mktemp -d "$VX3_CACHE/sparse.XXXXXX")
	chmod 755 "$tmp"
	(cd "$tmp" && apt-get "${o[@]}" source --download-only -q \
		"sparse=$SPARSE_VER" >/dev/null) || {
		log "sparse $SPARSE_VER source not found (VX3_SPARSE_VER picks another)"
		return 1
	}
	tar -xzf "$tmp"/sparse_*.orig.tar.gz -C "$tmp" || return 1
	make -s -C "$tmp"/sparse-*/ -j"$(nproc)" sparse >"$tmp/build.log" 2>&1 || {
		tail -n 20 "$tmp/build.log" >&2
		return 1
	}
	rm -rf "$SPARSE_DIR"
	mkdir -p "$SPARSE_DIR"
	cp "$tmp"/sparse-*/sparse "$tmp"/sparse-*/LICENSE "$SPARSE_DIR/"
	rm -rf "$tmp"
}

# --debug-kernel: the compiler, the kernel's build tools and linux-source
install_kbuild() {
	local need
	need=$(missing_pkgs $KBUILD_PKGS)
	if [ -n "$need" ]; then
		lists_stale && apt-get update -q
		log "installing for the debug kernel: $(echo $need)"
		apt-get install -y -q --no-install-recommends $need || return 1
	fi
	add_suite || return 1
	pkg_installed "linux-source-$NEW_SERIES" ||
		apt-get install -y -q --no-install-recommends \
			"linux-source-$NEW_SERIES=$NEW_PKGVER"
}

all_ok() {
	local k
	k=$(installed_kvers | head -n1)
	[ -n "$k" ] || return 1
	[ -z "$(missing_pkgs $BASE_PKGS)" ] || return 1
	new_ready || return 1
	sparse_ready || return 1
	src_ready || return 1
}

record_kver() {
	mkdir -p "$VX3_CACHE" 2>/dev/null &&
		echo "$NEW_KVER" >"$VX3_CACHE/kver" 2>/dev/null || true
	echo "$NEW_KVER, LTS $(installed_kvers | head -n1)"
}

case "${1:-}" in
--kver)
	echo "$NEW_KVER"
	exit 0
	;;
--lts-kver)
	k=$(installed_kvers | head -n1)
	[ -n "$k" ] || { log "no 6.12 Debian kernel with headers installed"; exit 1; }
	echo "$k"
	exit 0
	;;
--kdir)
	echo "/lib/modules/${2:?KVER}/build"
	exit 0
	;;
--image)
	if [ "${2:?KVER}" = "$NEW_KVER" ]; then
		echo "$NEW_DIR/root/usr/lib/modules/$NEW_KVER/vmlinuz"
	else
		echo "/boot/vmlinuz-$2"
	fi
	exit 0
	;;
--modroot)
	if [ "${2:?KVER}" = "$NEW_KVER" ]; then
		echo "$NEW_DIR/root/usr"
	else
		echo ""
	fi
	exit 0
	;;
--srcdir)
	echo "$SRC_DIR"
	exit 0
	;;
--sparse)
	echo "$SPARSE_DIR/sparse"
	exit 0
	;;
--check)
	all_ok
	exit $?
	;;
--debug-kernel)
	[ "$(id -u)" -eq 0 ] || { log "installing needs root"; exit 1; }
	export DEBIAN_FRONTEND=noninteractive
	install_kbuild
	exit $?
	;;
"") ;;
*)
	echo "usage: $0 [--check|--debug-kernel|--kver|--lts-kver|--kdir K|--image K|--modroot K|--srcdir|--sparse]" >&2
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
	kpk="linux-image-$LTS_SERIES.<N>+deb12-amd64-unsigned linux-headers-$LTS_SERIES.<N>+deb12-amd64"
	[ -n "$want_kver" ] && kpk=""
	log "missing dependencies and not root; run as root:"
	miss=$(echo $(missing_pkgs $pkgs) $kpk)
	[ -n "$miss" ] && echo "  apt-get update && DEBIAN_FRONTEND=noninteractive" \
		"apt-get install -y --no-install-recommends $miss" >&2
	[ -n "$kpk" ] && echo "  (pick <N> with: apt-cache search linux-image-$LTS_SERIES)" >&2
	src_ready || echo "  then: $0   (extracts $SRC_TAR into $SRC_DIR)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# The LTS kernel is a guest kernel, booted with the rig's own initramfs
# (mkinitramfs.sh): Debian's kernel hook need not build one for it
# (/etc/kernel/postinst.d/initramfs-tools skips it with INITRD=No).
export INITRD=No
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
		[ -n "$want_kver" ] || { log "no linux-image-$LTS_SERIES.*+deb12-amd64-unsigned with headers in apt"; exit 1; }
		need="$need linux-image-$want_kver-unsigned linux-headers-$want_kver"
	fi
	log "installing: $(echo $need)"
	apt-get install -y -q --no-install-recommends $need
fi

prepare_new || { log "the $NEW_KVER kernel could not be set up"; exit 1; }
build_sparse || { log "sparse $SPARSE_VER could not be built"; exit 1; }
extract_src
if ! all_ok; then
	log "dependencies still incomplete after install"
	exit 1
fi
log "all dependencies present; kernel $(record_kver)"
