/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vx3 compat layer for kernels older than the one vx3 is written against
 * (packaging/README, "Kernel lines").
 *
 * The driver is written against the newest kernel (Linux 7.3) and carries
 * no LINUX_VERSION_CODE. dkms.conf (and make modules-lts) force-include
 * this file into every vx3 object with KCPPFLAGS="-include
 * .../vx3_compat.h". What the kernel has is not concluded from its version
 * (distribution kernels backport): vx3-compat-prepare.sh reads the
 * kernel's headers and writes vx3_compat_features.h next to this file,
 * VX3_HAVE_<API> for each API of 7.3 they have; this file supplies the
 * others. On 7.3 it defines nothing. Tested on 6.12 (which has none of
 * them) and 7.3 (all).
 */
#ifndef _VX3_COMPAT_H
#define _VX3_COMPAT_H

#include "vx3_compat_features.h"

#include <linux/netdevice.h>
#include <linux/timer.h>
#include <net/xdp.h>
#include <net/xdp_sock_drv.h>

#ifndef VX3_HAVE_TIMER_CONTAINER_OF
/* from_timer(), renamed in 6.16 */
#define timer_container_of(var, callback_timer, timer_fieldname) \
	from_timer(var, callback_timer, timer_fieldname)
#endif

#ifndef VX3_HAVE_XDP_BUFF_GET_SKB_FLAGS
/* The skb flags of an xdp_buff's frags: only pfmemalloc before */
static inline u32 vx3_compat_xdp_buff_get_skb_flags(const struct xdp_buff *xdp)
{
	return xdp_buff_is_frag_pfmemalloc(xdp);
}

#define xdp_buff_get_skb_flags vx3_compat_xdp_buff_get_skb_flags
#endif

#ifndef VX3_HAVE_XDP_UPDATE_SKB_FRAGS_INFO
/* xdp_update_skb_shared_info(), renamed and given the xdp_buff flags
 * instead of a pfmemalloc bool
 */
static inline void
vx3_compat_xdp_update_skb_frags_info(struct sk_buff *skb, u8 nr_frags,
				     unsigned int size, unsigned int truesize,
				     u32 pfmemalloc)
{
	xdp_update_skb_shared_info(skb, nr_frags, size, truesize, pfmemalloc);
}

#define xdp_update_skb_frags_info vx3_compat_xdp_update_skb_frags_info
#endif

#ifndef VX3_HAVE_NAPI_ADD_CONFIG
/* Persistent per-NAPI configuration (struct napi_config) came with 6.13.
 * On 6.12 every NAPI instance gets a new ID in netif_napi_add() and the
 * per-device defaults (sysfs gro_flush_timeout, napi_defer_hard_irqs,
 * threaded); 6.12 has no per-NAPI settings (netdev-genl napi-set) that a
 * reconfiguration could lose.
 */
static inline void
vx3_compat_netif_napi_add_config(struct net_device *dev,
				 struct napi_struct *napi,
				 int (*poll)(struct napi_struct *, int),
				 int index)
{
	netif_napi_add(dev, napi, poll);
}

#define netif_napi_add_config vx3_compat_netif_napi_add_config
#endif

#ifndef VX3_HAVE_SET_AFFINITY_AUTO
/* Core-managed IRQ affinity of NAPI instances came with 6.15; on 6.12 the
 * queue IRQs stay where the IRQ core and irqbalance put them.
 */
static inline void netif_set_affinity_auto(struct net_device *dev)
{
}
#endif

#ifndef VX3_HAVE_XSK_BUFF_RAW_GET_CTX
/* 6.12 has no xsk_buff_raw_get_ctx() (an AF_XDP TX descriptor's DMA
 * address and TX metadata in one call)
 */
struct xdp_desc_ctx {
	dma_addr_t dma;
	struct xsk_tx_metadata *meta;
};

static inline struct xdp_desc_ctx
xsk_buff_raw_get_ctx(struct xsk_buff_pool *pool, u64 addr, u32 options)
{
	struct xdp_desc_ctx ctx = {
		.dma = xsk_buff_raw_get_dma(pool, addr),
		.meta = xsk_buff_get_metadata(pool, addr, options),
	};

	return ctx;
}
#endif

#ifndef VX3_HAVE_XSK_TX_METADATA_REQUEST_POOL
/* 6.12's xsk_tx_metadata_request() takes the metadata itself, not the pool
 * and a pointer to the metadata pointer: it validates the metadata in
 * xsk_buff_get_metadata().
 */
static inline void
vx3_compat_xsk_tx_metadata_request(const struct xsk_buff_pool *pool,
				   struct xsk_tx_metadata **pmeta,
				   const struct xsk_tx_metadata_ops *ops,
				   void *priv)
{
	xsk_tx_metadata_request(*pmeta, ops, priv);
}

#define xsk_tx_metadata_request vx3_compat_xsk_tx_metadata_request
#endif

#endif /* _VX3_COMPAT_H */
