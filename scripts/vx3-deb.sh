#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make deb`: build the Debian package vx3-dkms (packaging/, see
# packaging/README) into build/vx3-dkms_<version>_all.deb with debhelper
# and dh_dkms. The source tree is staged under build/deb/ (the driver
# sources, the compat header, dkms.conf, vx3-policy, vx3.conf, debian/);
# nothing is written into the repository outside build/. The version is
# debian/changelog's.
#
# Usage: scripts/vx3-deb.sh     prints the path of the .deb on success

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PKG=$ROOT/packaging
DRV=drivers/net/ethernet/vmware/vx3
OUT=$ROOT/build

for t in dpkg-buildpackage dh dh_dkms; do
	command -v $t >/dev/null || {
		echo "vx3-deb: $t missing; as root: apt-get install" \
			"debhelper dh-dkms dkms" >&2
		exit 1
	}
done

ver=$(dpkg-parsechangelog -l "$PKG/debian/changelog" -S Version)
mkdir -p "$OUT/deb"
STAGE=$(mktemp -d "$OUT/deb/stage.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
SRC=$STAGE/vx3-dkms-${ver%-*}

mkdir -p "$SRC/$DRV"
cp -a "$PKG/debian" "$PKG/compat" "$PKG/dkms.conf" "$PKG/vx3-policy" \
	"$PKG/vx3.conf" "$SRC/"
# Sources only (an in-place build leaves objects next to them)
cp "$ROOT/$DRV/Makefile" "$ROOT/$DRV"/*.[ch] "$SRC/$DRV/"
rm -f "$SRC/$DRV"/*.mod.c

(cd "$SRC" && dpkg-buildpackage -b --no-sign -d) >"$STAGE/build.log" 2>&1 || {
	tail -n 40 "$STAGE/build.log" >&2
	echo "vx3-deb: dpkg-buildpackage failed" >&2
	exit 1
}
deb=vx3-dkms_${ver}_all.deb
# Only the new one: ./build/vx3-dkms_*.deb names one package
rm -f "$OUT"/vx3-dkms_*.deb
mv -f "$STAGE/$deb" "$OUT/$deb"
cp "$STAGE/build.log" "$OUT/deb/build.log"
echo "$OUT/$deb"
