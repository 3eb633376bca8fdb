#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vx3-lts-patch.sh KERNELRELEASE DIR: what 6.12 needs beyond vx3_compat.h,
# as source patches (vx3-<line>.patch, next to this script), applied to the
# driver sources in DIR when KERNELRELEASE is of that line; nothing for
# 7.3. Run by dkms.conf's PRE_BUILD in the build tree (a fresh copy of the
# sources per kernel) and by make modules-lts on its copy.
set -e
here=$(dirname "$0")
case "$1" in
6.12.*)	patch -s -p1 -d "$2" <"$here/vx3-6.12.patch" ;;
esac
