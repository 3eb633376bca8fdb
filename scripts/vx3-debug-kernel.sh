#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once, cached) the vx3 debug guest kernel: Debian's linux-source-7.3
# configured as allnoconfig + kvm_guest.config + the fragment
# tools/testing/selftests/drivers/net/vx3/config.debug (KASAN, lockdep,
# kmemleak, DEBUG_NET, DMA-API debug, UBSAN, fault injection, ...), plus
# vx3.ko built against it.
#
# Usage: scripts/vx3-debug-kernel.sh            build what is missing, print
#                                               the cache dir and the release
#        scripts/vx3-debug-kernel.sh --path     print the cache dir if the
#                                               kernel is ready (exit 1 if not)
#        scripts/vx3-debug-kernel.sh --module   (re)build vx3.ko if the driver
#                                               sources changed; kernel must
#                                               be ready; print vx3.ko's path
#        scripts/vx3-debug-kernel.sh --key      print the cache key
#
# Cache layout ($VX3_CACHE/debug-kernel/, VX3_CACHE=/var/cache/vx3):
#   KEY/                     KEY = <linux-source version>-<hash>, the hash over
#                            the fragment, the gcc version and this script's
#                            build recipe (the functions in RECIPE below)
#     .ready                 marker, written last (contains the release)
#     kernelrelease          e.g. 7.3.4-vx3debug
#     bzImage                the guest kernel
#     config                 its .config
#     merge_config.log       merge_config.sh output (dropped options)
#     build.log              the kernel build's output
#     linux/                 the built source tree (M= builds use it)
#     modroot/lib/modules/R/ make modules_install INSTALL_MOD_PATH=modroot
#                            (build, source -> ../../../../linux)
#     vx3/                   copy of the driver sources, vx3.ko, .srchash
#   current -> KEY           the newest ready build
#   .tmp.KEY.PID/            a build in progress; renamed to KEY when done,
#                            removed by the next run if PID is gone
#                            (renamed to .trash.*, deleted in the background)
#   lock                     flock: one builder at a time
#
# A second run with the same key does nothing. An interrupted build leaves
# only a .tmp dir, which the next run removes.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VX3_CACHE=${VX3_CACHE:-/var/cache/vx3}
DK=$VX3_CACHE/debug-kernel
SRC_SERIES=7.3
SRC_TAR=/usr/src/linux-source-$SRC_SERIES.tar.xz
FRAG=$ROOT/tools/testing/selftests/drivers/net/vx3/config.debug
VX3_SRC=$ROOT/drivers/net/ethernet/vmware/vx3
# One job more than CPUs: at -j$(nproc) a fifth of the CPU time sat idle
# (I/O, the single-threaded links and modpost).
JOBS=${JOBS:-$(($(nproc) + 1))}

log() { echo "vx3-debug-kernel: $*" >&2; }
die() { log "$*"; exit 1; }

# ---------------------------------------------------------------- RECIPE
# The functions from here to END RECIPE define the kernel that is built;
# their text is part of the cache key (declare -f), the rest of the script
# is not (so that e.g. --module changes do not cost a kernel rebuild).

recipe_configure() { # in the source tree
	local frag=$1
	make -s ARCH=x86_64 mrproper
	# merge_config.sh (not -m) runs allnoconfig (-n) on the merged
	# fragments and warns about every requested value that did not survive.
	# -n: allnoconfig fills in the rest, so only what is asked for is
	# built (options behind CONFIG_EXPERT keep their defaults).
	ARCH=x86_64 scripts/kconfig/merge_config.sh -n -O . \
		kernel/configs/kvm_guest.config "$frag" >merge_config.log 2>&1 || {
		cat merge_config.log >&2
		return 1
	}
	make -s ARCH=x86_64 olddefconfig
}

# No ccache: every file includes the configuration, so a new key misses
# the cache for every file, and a miss costs ccache's own preprocessor
# pass on top of the compile (net/core/skbuff.c: 9.1 s with gcc, 10.7 s
# through an empty ccache) -- minutes of a fresh make check for nothing.
recipe_build() { # in the source tree
	make ARCH=x86_64 KBUILD_BUILD_TIMESTAMP="vx3-debug" \
		KBUILD_BUILD_USER=vx3 KBUILD_BUILD_HOST=vx3 \
		-j"$JOBS" bzImage modules
}

recipe_install() { # in the source tree; $1 = INSTALL_MOD_PATH
	make -s ARCH=x86_64 INSTALL_MOD_PATH="$1" modules_install
}

# ------------------------------------------------------------ END RECIPE

src_version() {
	local v
	v=$(dpkg-query -W -f='${Version}' "linux-source-$SRC_SERIES" 2>/dev/null) ||
		v=$(stat -c %Y "$SRC_TAR")
	echo "${v//[^A-Za-z0-9.+-]/_}"
}

cache_key() {
	[ -f "$SRC_TAR" ] || die "$SRC_TAR missing (scripts/vx3-deps.sh installs linux-source-$SRC_SERIES)"
	[ -f "$FRAG" ] || die "$FRAG missing"
	local h
	h=$({
		cat "$FRAG"
		gcc -dumpfullversion
		declare -f recipe_configure recipe_build recipe_install
	} | sha256sum | cut -c1-12)
	echo "$(src_version)-$h"
}

# Every CONFIG_ line of the fragment must be in .config as written; every
# "# CONFIG_X is not set" must not be set.
verify_config() { # fragment .config
	local frag=$1 cfg=$2 line sym bad=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			if ! grep -qxF -- "$line" "$cfg"; then
				sym=${line%%=*}
				log "requested $line, got: $(grep -E "^(# )?${sym}[= ]" "$cfg" || echo "(absent)")"
				bad=1
			fi
			;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			if grep -q "^$sym=" "$cfg"; then
				log "requested $line, got: $(grep "^$sym=" "$cfg")"
				bad=1
			fi
			;;
		esac
	done <"$frag"
	return $bad
}

ready() { [ -f "$DK/$1/.ready" ]; }

reap_tmp() { # under the lock: remove .tmp dirs of dead builders
	local d pid
	for d in "$DK"/.tmp.*; do
		[ -d "$d" ] || continue
		pid=${d##*.}
		if ! kill -0 "$pid" 2>/dev/null; then
			log "removing interrupted build $d (in the background)"
			mv "$d" "$DK/.trash.${d##*/.tmp.}"
		fi
	done
	# Deleting a kernel tree takes minutes on a busy disk: do not wait.
	if compgen -G "$DK/.trash.*" >/dev/null; then
		(ionice -c3 nice rm -rf "$DK"/.trash.* &) </dev/null >/dev/null 2>&1
	fi
}

build_kernel() { # key
	local key=$1 tmp start krel
	tmp=$DK/.tmp.$key.$$
	start=$(date +%s)
	rm -rf "$tmp"
	mkdir -p "$tmp"
	log "building $key in $tmp (-j$JOBS, log: $tmp/build.log)"
	log "extracting $SRC_TAR"
	tar -xJf "$SRC_TAR" -C "$tmp"
	mv "$tmp/linux-source-$SRC_SERIES" "$tmp/linux"
	cp "$FRAG" "$tmp/config.debug"
	(
		cd "$tmp/linux"
		recipe_configure "$tmp/config.debug"
		mv merge_config.log "$tmp/"
		grep -i "warning\|override\|redefin" "$tmp/merge_config.log" >&2 || true
		verify_config "$tmp/config.debug" .config ||
			die "the fragment did not survive kconfig (see above); fix $FRAG"
		log "config verified: every option of ${FRAG#"$ROOT"/} is set as requested"
		log "compiling (this takes 10-20 minutes under load)"
		recipe_build >"$tmp/build.log" 2>&1 || {
			tail -n 40 "$tmp/build.log" >&2
			die "kernel build failed; full log: $tmp/build.log"
		}
		recipe_install "$tmp/modroot" >>"$tmp/build.log" 2>&1
		krel=$(make -s ARCH=x86_64 kernelrelease)
		echo "$krel" >"$tmp/kernelrelease"
		cp arch/x86/boot/bzImage "$tmp/bzImage"
		cp .config "$tmp/config"
		# Relative links survive the rename below.
		ln -sfn ../../../../linux "$tmp/modroot/lib/modules/$krel/build"
		ln -sfn ../../../../linux "$tmp/modroot/lib/modules/$krel/source"
	)
	krel=$(cat "$tmp/kernelrelease")
	echo "$krel" >"$tmp/.ready"
	rm -rf "${DK:?}/$key"
	mv "$tmp" "$DK/$key"
	ln -sfn "$key" "$DK/current.tmp" && mv -T "$DK/current.tmp" "$DK/current"
	log "built $krel in $(( $(date +%s) - start )) s"
}

src_files() { # the driver's sources, relative to VX3_SRC
	local f
	for f in Makefile Kbuild Kconfig *.c *.h; do
		[ ! -f "$VX3_SRC/$f" ] || echo "$f"
	done
}

src_hash() {
	(cd "$VX3_SRC" && src_files | LC_ALL=C sort | xargs sha256sum) |
		sha256sum | cut -c1-16
}

# vx3.ko against the debug tree, from a copy of the sources (so the stock
# build in drivers/.../vx3/ is not touched), rebuilt when they change.
build_module() { # key
	local dir=$DK/$1 h tmp
	[ -f "$VX3_SRC/Makefile" ] || { log "vx3 driver not present, skipped"; return 0; }
	h=$(src_hash)
	if [ -f "$dir/vx3/vx3.ko" ] && [ "$(cat "$dir/vx3/.srchash" 2>/dev/null)" = "$h" ]; then
		echo "$dir/vx3/vx3.ko"
		return 0
	fi
	tmp=$dir/.vx3.tmp.$$
	rm -rf "$tmp" "$dir"/.vx3.tmp.*
	mkdir -p "$tmp"
	(cd "$VX3_SRC" && src_files | xargs cp -p -t "$tmp/")
	log "building vx3.ko against $(cat "$dir/kernelrelease")"
	if ! make -C "$dir/linux" ARCH=x86_64 M="$tmp" CONFIG_VX3=m W=1 modules \
		>"$tmp/build.log" 2>&1; then
		cat "$tmp/build.log" >&2
		die "vx3.ko build failed"
	fi
	grep -i "warning" "$tmp/build.log" >&2 || true
	echo "$h" >"$tmp/.srchash"
	rm -rf "$dir/vx3.old"
	[ ! -d "$dir/vx3" ] || mv "$dir/vx3" "$dir/vx3.old"
	mv "$tmp" "$dir/vx3"
	rm -rf "$dir/vx3.old"
	echo "$dir/vx3/vx3.ko"
}

with_lock() {
	mkdir -p "$DK"
	exec 9>"$DK/lock"
	if ! flock -n 9; then
		log "waiting for another vx3-debug-kernel.sh (lock $DK/lock)"
		flock 9
	fi
}

key=$(cache_key)
case "${1:-}" in
--key)
	echo "$key"
	;;
--path)
	ready "$key" || { log "not built: run make debug-kernel"; exit 1; }
	echo "$DK/$key"
	;;
--module)
	ready "$key" || die "debug kernel $key not built: run make debug-kernel"
	with_lock
	build_module "$key"
	;;
"")
	if ready "$key"; then
		log "up to date: $DK/$key"
	else
		with_lock
		if ready "$key"; then
			log "built meanwhile by another run: $DK/$key"
		else
			reap_tmp
			build_kernel "$key"
		fi
	fi
	ko=$(build_module "$key")
	echo "path: $DK/$key"
	echo "kernelrelease: $(cat "$DK/$key/kernelrelease")"
	echo "bzImage: $DK/$key/bzImage"
	echo "modules: $DK/$key/modroot/lib/modules/$(cat "$DK/$key/kernelrelease")"
	[ -z "$ko" ] || echo "vx3.ko: $ko"
	;;
*)
	echo "usage: $0 [--path|--module|--key]" >&2
	exit 2
	;;
esac
