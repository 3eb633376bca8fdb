#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vx3-dkms-prepare.sh KDIR VERSION DIR: dkms.conf's PRE_BUILD, run in the
# build tree (a fresh copy of the sources per kernel) before make:
# - what the kernel build tree KDIR lacks of 7.3's APIs
#   (vx3-compat-prepare.sh: compat/vx3_compat_features.h, source patches
#   applied to DIR);
# - the package version VERSION, which the driver in the kernel tree does
#   not carry (netdev drivers report none): MODULE_VERSION (modinfo,
#   /sys/module/vx3/version) and ethtool -i's version, stamped into DIR's
#   vx3_main.c and vx3_ethtool.c. A stamp that finds no place fails the
#   build.
set -e
here=$(dirname "$0")
"$here/vx3-compat-prepare.sh" "$1" "$3" "$here"
v=$(printf '%s' "$2" | tr -cd 'A-Za-z0-9.+~_-')
printf '\nMODULE_VERSION("%s");\n' "$v" >>"$3/vx3_main.c"
anchor='strscpy(info->driver, VX3_DRV_NAME);'
grep -qF "$anchor" "$3/vx3_ethtool.c" || {
	echo "vx3-dkms-prepare: no '$anchor' in vx3_ethtool.c" >&2
	exit 1
}
sed -i "s/^\\(\\t*\\)$anchor\$/&\\n\\1strscpy(info->version, \"$v\");/" \
	"$3/vx3_ethtool.c"
grep -qF "strscpy(info->version, \"$v\");" "$3/vx3_ethtool.c"
