#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vx3-compat-prepare.sh KDIR DIR [COMPATDIR]: fit the driver sources in
# DIR to the kernel build tree KDIR. What the kernel has is read from its
# headers, not concluded from its version: distribution kernels backport
# (packaging/README, "Kernel lines").
# - COMPATDIR/vx3_compat_features.h (COMPATDIR defaults to DIR, where
#   vx3_compat.h is): VX3_HAVE_<API> for each API of 7.3 that the headers
#   have; vx3_compat.h supplies the others.
# - The source patches (next to this script) for what no header can
#   supply, an ops member the kernel lacks, applied to DIR.
# Run by dkms.conf's PRE_BUILD (through vx3-dkms-prepare.sh) in the build
# tree, a fresh copy of the sources per kernel, and by make modules-lts
# and the static checks on their copies. Fails if a header is missing.
set -e
kdir=$1
dir=$2
cdir=${3:-$2}
here=$(dirname "$0")
# Debian's headers packages: the generated tree includes the common one
common=$(sed -n 's|^include \(/.*\)/Makefile$|\1|p' "$kdir/Makefile" |
	head -n 1)

header() {
	for d in "$kdir" "$kdir/source" $common; do
		if [ -f "$d/$1" ]; then
			echo "$d/$1"
			return 0
		fi
	done
	echo "vx3-compat-prepare: no $1 in $kdir" >&2
	return 1
}

# has HEADER ERE: whether the header has the API
has() {
	h=$(header "$1")
	grep -Eq "$2" "$h"
}

features() {
	echo "/* vx3-compat-prepare.sh: the APIs $kdir has */"
	while read -r name h re; do
		if has "$h" "$re"; then
			echo "#define VX3_HAVE_$name"
		else
			echo "/* no $name */"
		fi
	done <<-LIST
	TIMER_CONTAINER_OF include/linux/timer.h define timer_container_of
	XDP_BUFF_GET_SKB_FLAGS include/net/xdp.h xdp_buff_get_skb_flags\(
	XDP_UPDATE_SKB_FRAGS_INFO include/net/xdp.h ^xdp_update_skb_frags_info\(
	NAPI_ADD_CONFIG include/linux/netdevice.h ^netif_napi_add_config\(
	SET_AFFINITY_AUTO include/linux/netdevice.h netif_set_affinity_auto\(
	XSK_BUFF_RAW_GET_CTX include/net/xdp_sock_drv.h ^xsk_buff_raw_get_ctx\(
	XSK_TX_METADATA_REQUEST_POOL include/net/xdp_sock_drv.h ^xsk_tx_metadata_request\(const struct xsk_buff_pool
	LIST
}

out=$(features)
printf '%s\n' "$out" >"$cdir/vx3_compat_features.h"

has include/linux/ethtool.h '\(\*get_rx_ring_count\)' ||
	patch -s -p1 -d "$dir" <"$here/vx3-no-rx-ring-count.patch"
if ! has include/linux/netdevice.h '\(\*ndo_work\)' ||
	! has include/linux/netdevice.h '\(\*ndo_set_rx_mode_async\)'; then
	patch -s -p1 -d "$dir" <"$here/vx3-no-netdev-work.patch"
fi
