#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build one tool of the kernel's BPF selftests, tools/testing/selftests/
# bpf/, from Debian's linux-source-7.3, once, into
#
#   $VX3_CACHE/bpf-tools/<tool>/<package version>-<hash>/
#
# and print that directory. The guest runs the tool from the host's / over
# 9p. The tools:
#
#   xdp_features  the XDP feature checker (test_xdp_features.sh), which
#                 test_upstream.py test_xdp_features runs
#   xskxceiver    the AF_XDP conformance test (test_xsk.sh), which
#                 test_xskxceiver.py runs
#
# The hash covers this script (the recipe), upstream-patches/<tool>/*.patch
# and the versions of clang, bpftool and gcc.
#
# The recipe is the one of the selftests' Makefile for these targets, minus
# what they do not use (vmlinux.h, bpftool and resolve_btfids from source,
# test_progs):
#
#   libbpf       tools/lib/bpf of the same tree (Debian's libbpf 1.1 has no
#                bpf_xdp_query_opts.feature_flags), static, installed
#                headers; EXTRA_CFLAGS '-g -O0' (the Makefile's default
#                OPT_FLAGS)
#   BPF object   the tool's progs/*.c with Debian's clang, --target=bpf
#                -mcpu=v3 -O2 -g (BTF), the Makefile's BPF_CFLAGS and
#                clang's system include dirs (-idirafter)
#   skeleton     Debian's bpftool: gen object three times (the second and
#                third must be identical), gen skeleton
#   binary       the tool's C files with gcc and the Makefile's CFLAGS
#                (-Werror; lib.mk's -D_GNU_SOURCE= and the selftests
#                dir for kselftest.h), linked with that libbpf.a, -lelf -lz -lrt
#                -lpthread (no libpcap traffic monitor)
#
# Source changes are patch files in upstream-patches/<tool>/ (applied to
# the extracted copy, never weakening what the tool checks): xdp_features
# has none; xskxceiver has one, which lengthens three waits that assume
# hardware speed (the emulated device is slower).
#
# Usage: upstream-bpf-tool.sh TOOL          build if needed, print the dir
#        upstream-bpf-tool.sh TOOL --path   print the dir if built, else
#                                           exit 1 (builds nothing)
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
# What the build reads, tree layout kept (libbpf's Makefile finds
# scripts/bpf_doc.py and tools/include relative to the tree root).
MEMBERS="tools/lib/bpf tools/lib/find_bit.c tools/include
tools/arch/x86/include tools/scripts tools/build
tools/testing/selftests/bpf tools/testing/selftests/kselftest.h
scripts/bpf_doc.py"

die() { echo "upstream-bpf-tool: $*" >&2; exit 1; }

TOOL=${1:-}
# Per tool: its BPF program (progs/<name>.c, skeleton <name>.skel.h), its
# C files (relative to tools/testing/selftests/bpf) and a run that must
# print SMOKE_RE.
case "$TOOL" in
xdp_features)
	BPF_PROG=xdp_features
	SRCS="network_helpers.c xdp_features.c"
	SMOKE_ARGS=--help SMOKE_RE="Usage: xdp_features"
	;;
xskxceiver)
	BPF_PROG=xsk_xdp_progs
	SRCS="xskxceiver.c xsk.c network_helpers.c ../../../lib/find_bit.c
	      prog_tests/test_xsk.c"
	SMOKE_ARGS=-l SMOKE_RE="SEND_RECEIVE"
	;;
*)
	die "usage: $0 xdp_features|xskxceiver [--path]"
	;;
esac
shift
PATCHDIR=$HERE/upstream-patches/$TOOL
CACHE=$VX3_CACHE/bpf-tools/$TOOL

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
	local p=$BPF_PROG
	clang $sys -g -Wall -Werror -D__TARGET_ARCH_x86 -mlittle-endian \
		-I"$O/include" -I"$B" -I"$T/include/uapi" \
		-Wno-compare-distinct-pointer-types \
		-O2 --target=bpf -c "$B/progs/$p.c" -mcpu=v3 \
		-o "$O/$p.bpf.o"

	bpftool gen object "$O/$p.linked1.o" "$O/$p.bpf.o"
	bpftool gen object "$O/$p.linked2.o" "$O/$p.linked1.o"
	bpftool gen object "$O/$p.linked3.o" "$O/$p.linked2.o"
	cmp "$O/$p.linked2.o" "$O/$p.linked3.o"
	bpftool gen skeleton "$O/$p.linked3.o" name "$p" > "$O/$p.skel.h"
	rm -f "$O/$p".linked[123].o

	local cflags="-g -O0 -rdynamic -std=gnu11 -Wall -Werror
		-fno-omit-frame-pointer -Wno-unused-but-set-variable
		-I$B -I$O/include -I$T/lib -I$T/include -I$T/arch/x86/include
		-I$T/include/uapi -I$O -D_GNU_SOURCE= -I$T/testing/selftests"
	local srcs=() f
	for f in $SRCS; do srcs+=("$B/$f"); done
	# shellcheck disable=SC2086 # cflags is a word list
	gcc $cflags "${srcs[@]}" "$O/libbpf/libbpf.a" -lelf -lz -lrt \
		-lpthread -o "$O/$TOOL"
	"$O/$TOOL" $SMOKE_ARGS >"$O/smoke.out" 2>&1 || true
	grep -q "$SMOKE_RE" "$O/smoke.out"
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
# the upstream sources of the tool (and its test_*.sh) for reading.
rm -rf "$O/libbpf" "$O/include"
find "$S" -mindepth 1 -maxdepth 1 ! -name tools -exec rm -rf {} +
find "$S/tools" -mindepth 1 -maxdepth 1 ! -name testing -exec rm -rf {} +
chmod 755 "$TMP"
touch "$TMP/.vx3-ready"
mv -T "$TMP" "$DIR"
trap - EXIT
echo "$DIR"
