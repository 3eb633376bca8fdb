#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the in-tree vmxnet3 driver of vx3-base (Debian's linux-source-7.3)
# with the patch series of scripts/vmxnet3-series/ applied (net/, then
# net-next/; VMXNET3_PATCHES=N: the first N of them), out of tree,
# into build/vmxnet3-patched/<kernelrelease>/vmxnet3.ko for
#   - Debian's kernel: KDIR (default /lib/modules/$KVER/build), whose
#     release is KVER;
#   - the debug kernel, if it is built (scripts/vx3-debug-kernel.sh --path):
#     its tree linux/ and its kernelrelease file.
# The VM harness loads exactly these paths (run.py --driver
# vmxnet3-patched). Only what changed is rebuilt.
#
# Usage: scripts/vmxnet3-series/patched.sh   (make vmxnet3-patched)

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SERIES_DIR=$ROOT/scripts/vmxnet3-series
# series.py's tree ($VX3_SERIES_CACHE/linux, per base kernel)
TREE=$(/usr/bin/python3 "$ROOT/scripts/vx3-series/series.py" tree)
DRV=drivers/net/vmxnet3
# VMXNET3_PATCHED_OUT: another output directory (bench-series.sh)
OUT=${VMXNET3_PATCHED_OUT:-$ROOT/build/vmxnet3-patched}
KVER=${KVER:-$("$ROOT/scripts/vx3-deps.sh" --kver)}
KDIR=${KDIR:-/lib/modules/$KVER/build}

log() { echo "vmxnet3-patched: $*" >&2; }
die() { log "$*"; exit 1; }

if ! git -C "$TREE" rev-parse -q --verify "vx3-base^{commit}" >/dev/null; then
	# only the tree is needed: a dry run, whatever the identity
	log "no vx3-base in $TREE: running series.py make --dry-run once"
	/usr/bin/python3 "$ROOT/scripts/vx3-series/series.py" make --dry-run \
		>/dev/null
fi

# The patched sources: the base driver, git apply of every patch. Not
# under build/: inside a git work tree (the vx3 checkout) git apply skips
# every path outside the current directory without a word and succeeds
# with nothing applied, which is how this script once built the stock
# driver as "patched". Each patch must also change the tree.
src=$(mktemp -d "${TMPDIR:-/tmp}/vmxnet3-patched.XXXXXX")
trap 'rm -rf "$src"' EXIT
git -C "$TREE" archive vx3-base "$DRV" | tar -x -C "$src"
tree_sum() { (cd "$src" && find . -type f -print0 | sort -z | xargs -0 md5sum); }
# The net series (fixes), then net-next's on top of it; VMXNET3_PATCHES=N
# stops after the first N of them (a build at one patch of the series)
patches=("$SERIES_DIR"/net/[0-9][0-9][0-9][0-9]-*.patch
	"$SERIES_DIR"/net-next/[0-9][0-9][0-9][0-9]-*.patch)
for p in "${patches[@]}"; do
	[ -e "$p" ] || die "no patches in $(dirname "$p")"
done
n=${VMXNET3_PATCHES:-${#patches[@]}}
[[ "$n" =~ ^[0-9]+$ && "$n" -le ${#patches[@]} ]] ||
	die "VMXNET3_PATCHES=$n: the series has ${#patches[@]} patches"
for p in "${patches[@]:0:$n}"; do
	before=$(tree_sum)
	(cd "$src" && git apply --whitespace=nowarn "$p") ||
		die "$(basename "$p") does not apply"
	[ "$(tree_sum)" != "$before" ] || die "$(basename "$p") changed nothing"
done

# The kernel series (7.3) of vx3-base, whose vmxnet3 the patches are for
mkvar() { sed -n "s/^$1 = //p" | head -n1; }
base_makefile=$(git -C "$TREE" show vx3-base:Makefile)
BASE_SERIES=$(mkvar VERSION <<<"$base_makefile").$(mkvar PATCHLEVEL <<<"$base_makefile")

# build KDIR RELEASE [make args...]: build/vmxnet3-patched/RELEASE/vmxnet3.ko
# The driver of one kernel series does not build on another: a kernel
# tree of another series (a debug kernel still built from an older base)
# is an error that says so.
build() {
	local kdir=$1 rel=$2 dir f ver
	shift 2
	ver=$(make -s -C "$kdir" "$@" kernelversion 2>/dev/null) || ver=unknown
	[[ "$ver" == "$BASE_SERIES" || "$ver" == "$BASE_SERIES".* ||
		"$ver" == "$BASE_SERIES"-* ]] ||
		die "$kdir is Linux $ver, the series is for $BASE_SERIES" \
			"(vx3-base): rebuild that kernel from linux-source-$BASE_SERIES"
	dir=$OUT/$rel/obj
	mkdir -p "$dir"
	# Copy only what changed, so that make rebuilds only that
	for f in "$src/$DRV"/*; do
		cmp -s "$f" "$dir/$(basename "$f")" || cp "$f" "$dir/"
	done
	for f in "$dir"/*.[ch] "$dir"/Makefile; do
		[ -e "$src/$DRV/$(basename "$f")" ] || rm -f "$f"
	done
	log "building vmxnet3.ko for $rel against $kdir"
	if ! nice -n 19 make -C "$kdir" "$@" M="$dir" CONFIG_VMXNET3=m W=1 \
		modules >"$OUT/$rel/build.log" 2>&1; then
		cat "$OUT/$rel/build.log" >&2
		die "build for $rel failed"
	fi
	grep -i "warning" "$OUT/$rel/build.log" >&2 || true
	cp "$dir/vmxnet3.ko" "$OUT/$rel/vmxnet3.ko"
	echo "$OUT/$rel/vmxnet3.ko"
}

[ -e "$KDIR/Makefile" ] || die "no kernel headers in $KDIR: run make deps"
build "$KDIR" "$KVER"

if [ "${VMXNET3_PATCHED_DEBUG:-yes}" = no ]; then
	log "VMXNET3_PATCHED_DEBUG=no: not for the debug kernel"
elif dk=$("$ROOT/scripts/vx3-debug-kernel.sh" --path 2>/dev/null); then
	build "$dk/linux" "$(cat "$dk/kernelrelease")" ARCH=x86_64
else
	log "the debug kernel is not built (make debug-kernel): skipped"
fi
