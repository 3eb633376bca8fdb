#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make deb`: build the Debian package vx3-dkms (packaging/, see
# packaging/README) into build/vx3-dkms_<version>_all.deb with debhelper
# and dh_dkms. The source tree is staged under build/deb/ (the driver
# sources, compat/, dkms.conf, vx3-policy, vx3.conf, vx3-load, the
# initramfs-tools hook, the dracut module, vx3-admin.rst, debian/);
# and the source package (build/deb/vx3-dkms_<version>.dsc, .tar.xz);
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
	"$PKG/vx3.conf" "$PKG/vx3-load" "$PKG/initramfs-tools" \
	"$PKG/dracut" "$PKG/vx3-admin.rst" "$SRC/"
# Sources only (an in-place build leaves objects next to them)
cp "$ROOT/$DRV/Makefile" "$ROOT/$DRV"/*.[ch] "$SRC/$DRV/"
rm -f "$SRC/$DRV"/*.mod.c

# The package's Maintainer and changelog trailer are the builder's
# identity, by the series' rules (scripts/vx3-series/README, "The poster's
# identity": VX3_POSTER, else git config user.name and user.email); a
# placeholder is refused unless VX3_DEB_DRY_RUN=1 asks for a package
# marked as not for distribution (UNRELEASED), as the tests build it.
ident=$(cd "$ROOT" && python3 -c '
import sys
sys.path.insert(0, "scripts/vx3-series")
import series
p = series.resolve_poster()
print(p.who)
print(p.placeholder or "")')
who=$(echo "$ident" | sed -n 1p)
why=$(echo "$ident" | sed -n 2p)
dist=
if [ -n "$why" ]; then
	if [ "${VX3_DEB_DRY_RUN:-0}" = 0 ]; then
		echo "vx3-deb: refusing to build a package maintained by a" \
			"placeholder: $who ($why). Set VX3_POSTER=\"Your Name" \
			"<your address>\" (or git config user.name and" \
			"user.email), or VX3_DEB_DRY_RUN=1 for a package marked" \
			"UNRELEASED, not for distribution." >&2
		exit 1
	fi
	dist=UNRELEASED
fi
sed -i "s|^Maintainer: .*|Maintainer: $who|" "$SRC/debian/control"
sed -i "s|^ -- Vx3 Developers <vx3-devel@example.org>  | -- $who  |" \
	"$SRC/debian/changelog"
[ -z "$dist" ] || sed -i "1s/) [a-z-]*;/) $dist;/" "$SRC/debian/changelog"

# The source package too (native: vx3-dkms_<version>.dsc and .tar.xz),
# before the binary build leaves its products in debian/
(cd "$STAGE" && dpkg-source -b "${SRC##*/}") >"$STAGE/source.log" 2>&1 || {
	cat "$STAGE/source.log" >&2
	echo "vx3-deb: dpkg-source failed" >&2
	exit 1
}
(cd "$SRC" && dpkg-buildpackage -b --no-sign -d) >"$STAGE/build.log" 2>&1 || {
	tail -n 40 "$STAGE/build.log" >&2
	echo "vx3-deb: dpkg-buildpackage failed" >&2
	exit 1
}
deb=vx3-dkms_${ver}_all.deb
# Only the new one: ./build/vx3-dkms_*.deb names one package
rm -f "$OUT"/vx3-dkms_*.deb
mv -f "$STAGE/$deb" "$OUT/$deb"
rm -f "$OUT"/deb/vx3-dkms_*.dsc "$OUT"/deb/vx3-dkms_*.tar.xz
mv -f "$STAGE"/vx3-dkms_*.dsc "$STAGE"/vx3-dkms_*.tar.xz "$OUT/deb/"
cp "$STAGE/build.log" "$OUT/deb/build.log"
echo "$OUT/$deb"
