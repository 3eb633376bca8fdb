#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the kernel's XDP feature checker, tools/testing/selftests/bpf/
# xdp_features, from Debian's linux-source-7.3 (unmodified), once, into
#
#   $VX3_CACHE/xdp-features/<package version>-<hash>/
#
# and print that directory (its xdp_features is what test_upstream.py
# test_xdp_features runs in the guest, from the host's / over 9p). The hash
# covers this script (the recipe), upstream-patches/xdp-features/*.patch
# and the versions of clang, bpftool and gcc.
#
# The recipe is the one of the selftests' Makefile for that target, minus
# what xdp_features does not use (vmlinux.h, bpftool and resolve_btfids
# from source, test_progs):
#
#   libbpf       tools/lib/bpf of the same tree (Debian's libbpf 1.1 has no
#                bpf_xdp_query_opts.feature_flags), static, installed
#                headers; EXTRA_CFLAGS '-g -O0' (the Makefile's default
#                OPT_FLAGS)
#   BPF object   progs/xdp_features.c with Debian's clang, --target=bpf
#                -mcpu=v3 -O2 -g (BTF), the Makefile's BPF_CFLAGS and
#                clang's system include dirs (-idirafter)
#   skeleton     Debian's bpftool: gen object three times (the second and
#                third must be identical), gen skeleton
#   binary       network_helpers.c + xdp_features.c with gcc and the
#                Makefile's CFLAGS (-Werror), linked with that libbpf.a,
#                -lelf -lz -lrt -lpthread (no libpcap traffic monitor)
#
# Source fixes, if ever needed, are patch files in
# upstream-patches/xdp-features/ (applied to the extracted copy, never
# weakening what the tool checks); there are none today.
#
# Usage: upstream-xdp-features.sh          build if needed, print the dir
#        upstream-xdp-features.sh --path   print the dir if built, else
#                                          exit 1 (builds nothing)
#
# Concurrent callers wait for each other (flock); the build happens in a
# temporary directory renamed into place. Its log is build.log there; on
# failure the log's tail goes to stderr.

set -euo pipefail

VX3_CACHE=${VX3_CACHE:-/var/cache/vx3}
SRC_SERIES=7.3
SRC_PKG=linux-source-$SRC_SERIES
SRC_TAR=/usr/src/$SRC_PKG.tar.xz
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PATCHDIR=$HERE/upstream-patches/xdp-features
CACHE=$VX3_CACHE/xdp-features
# What the build reads, tree layout kept (libbpf's Makefile finds
# scripts/bpf_doc.py and tools/include relative to the tree root).
MEMBERS="tools/lib/bpf tools/include tools/arch/x86/include tools/scripts
tools/build tools/testing/selftests/bpf scripts/bpf_doc.py"

die() { echo "upstream-xdp-features: $*" >&2; exit 1; }

for t in clang bpftool gcc make tar xz flock patch python3; do
	command -v "$t" >/dev/null ||
		die "$t missing (scripts/vx3-deps.sh installs the build deps)"
done
[ -f "$SRC_TAR" ] || die "$SRC_TAR missing (apt-get install $SRC_PKG)"
ver=$(dpkg-query -W -f='${Version}' "$SRC_PKG" 2>/dev/null) ||
	die "$SRC_PKG not installed"

hash=$( {
	cat "${BASH_SOURCE[0]}"
	for p in "$PATCHDIR"/*.patch; do
		if [ -f "$p" ]; then cat "$p"; fi
	done
	clang --version | head -n 1
	bpftool version | head -n 1
	gcc --version | head -n 1
} | sha256sum | cut -c1-12)
DIR=$CACHE/$ver-$hash

if [ "${1:-}" = --path ]; then
	[ -f "$DIR/.vx3-ready" ] || exit 1
	echo "$DIR"
	exit 0
fi
[ -f "$DIR/.vx3-ready" ] && { echo "$DIR"; exit 0; }

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
[ -f "$DIR/.vx3-ready" ] && { echo "$DIR"; exit 0; }

TMP=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
LOG=$TMP/build.log
S=$TMP/src
O=$TMP
B=$S/tools/testing/selftests/bpf
T=$S/tools

build() {
	set -x
	mkdir -p "$S" "$O/libbpf"
	local m members=()
	for m in $MEMBERS; do members+=("$SRC_PKG/$m"); done
	tar -xJf "$SRC_TAR" -C "$S" --strip-components=1 "${members[@]}"
	for p in "$PATCHDIR"/*.patch; do
		if [ -f "$p" ]; then patch -s -p1 --batch -d "$S" < "$p"; fi
	done

	make -C "$T/lib/bpf" -j"$(nproc)" EXTRA_CFLAGS='-g -O0' \
		OUTPUT="$O/libbpf/" DESTDIR="$O" prefix= \
		"$O/libbpf/libbpf.a" install_headers

	# CLANG_SYS_INCLUDES (the Makefile's get_sys_includes) + BPF_CFLAGS
	local sys
	sys=$(clang -v -E - </dev/null 2>&1 | sed -n \
		'/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
	# shellcheck disable=SC2086 # sys is a word list
	clang $sys -g -Wall -Werror -D__TARGET_ARCH_x86 -mlittle-endian \
		-I"$O/include" -I"$B" -I"$T/include/uapi" \
		-Wno-compare-distinct-pointer-types \
		-O2 --target=bpf -c "$B/progs/xdp_features.c" -mcpu=v3 \
		-o "$O/xdp_features.bpf.o"

	bpftool gen object "$O/xdp_features.linked1.o" "$O/xdp_features.bpf.o"
	bpftool gen object "$O/xdp_features.linked2.o" "$O/xdp_features.linked1.o"
	bpftool gen object "$O/xdp_features.linked3.o" "$O/xdp_features.linked2.o"
	cmp "$O/xdp_features.linked2.o" "$O/xdp_features.linked3.o"
	bpftool gen skeleton "$O/xdp_features.linked3.o" name xdp_features \
		> "$O/xdp_features.skel.h"
	rm -f "$O"/xdp_features.linked[123].o

	local cflags="-g -O0 -rdynamic -Wall -Werror -fno-omit-frame-pointer
		-I$B -I$O/include -I$T/lib -I$T/include -I$T/arch/x86/include
		-I$T/include/uapi -I$O"
	# shellcheck disable=SC2086 # cflags is a word list
	gcc $cflags -c "$B/network_helpers.c" -o "$O/network_helpers.o"
	# shellcheck disable=SC2086
	gcc $cflags "$B/xdp_features.c" "$O/network_helpers.o" \
		"$O/libbpf/libbpf.a" -lelf -lz -lrt -lpthread \
		-o "$O/xdp_features"
	"$O/xdp_features" --help >/dev/null
}

start=$(date +%s)
# In the background: set -e holds there (not in an if/|| condition).
build >"$LOG" 2>&1 &
if ! wait $!; then
	tail -n 40 "$LOG" >&2
	die "build failed (log above)"
fi
{
	echo "source: $SRC_PKG $ver ($SRC_TAR)"
	echo "patches: $(cd "$PATCHDIR" 2>/dev/null && ls -- *.patch 2>/dev/null || echo none)"
	echo "clang: $(clang --version | head -n 1)"
	echo "bpftool: $(bpftool version | head -n 1)"
	echo "gcc: $(gcc --version | head -n 1)"
	echo "build time: $(( $(date +%s) - start )) s"
} > "$TMP/BUILD-INFO"
# Only what the tests use is kept: the tool, its BPF object and skeleton,
# the upstream sources of the tool (and test_xdp_features.sh) for reading.
rm -rf "$O/libbpf" "$O/include" "$O/network_helpers.o"
find "$S" -mindepth 1 -maxdepth 1 ! -name tools -exec rm -rf {} +
find "$S/tools" -mindepth 1 -maxdepth 1 ! -name testing -exec rm -rf {} +
chmod 755 "$TMP"
touch "$TMP/.vx3-ready"
mv -T "$TMP" "$DIR"
trap - EXIT
echo "$DIR"
