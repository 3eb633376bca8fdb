/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vx3 compat layer for the LTS kernel line (packaging/README).
 *
 * The driver is written against the newest kernel (Linux 7.3) and carries
 * no LINUX_VERSION_CODE. Older kernels that DKMS users run get here what
 * their headers lack or call differently; dkms.conf (and make modules-lts)
 * force-include this file into every vx3 object with
 * KCPPFLAGS="-include .../vx3_compat.h". On the newest kernel it defines
 * nothing. Tested on 6.12 (make check's lts lane).
 */
#ifndef _VX3_COMPAT_H
#define _VX3_COMPAT_H

#include <linux/version.h>

/* The 6.12 LTS line: the only older line dkms.conf admits */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
#include <linux/netdevice.h>
#include <linux/timer.h>
#include <net/xdp.h>
#include <net/xdp_sock_drv.h>

/* from_timer(), renamed in 6.16 */
#define timer_container_of(var, callback_timer, timer_fieldname) \
	from_timer(var, callback_timer, timer_fieldname)

/* xdp_update_skb_shared_info(), renamed and given the xdp_buff flags
 * instead of a pfmemalloc bool
 */
static inline u32 vx3_compat_xdp_buff_get_skb_flags(const struct xdp_buff *xdp)
{
	return xdp_buff_is_frag_pfmemalloc(xdp);
}

#define xdp_buff_get_skb_flags vx3_compat_xdp_buff_get_skb_flags

static inline void
vx3_compat_xdp_update_skb_frags_info(struct sk_buff *skb, u8 nr_frags,
				     unsigned int size, unsigned int truesize,
				     u32 pfmemalloc)
{
	xdp_update_skb_shared_info(skb, nr_frags, size, truesize, pfmemalloc);
}

#define xdp_update_skb_frags_info vx3_compat_xdp_update_skb_frags_info

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

/* Core-managed IRQ affinity of NAPI instances came with 6.15; on 6.12 the
 * queue IRQs stay where the IRQ core and irqbalance put them.
 */
static inline void netif_set_affinity_auto(struct net_device *dev)
{
}

/* 6.12 has no xsk_buff_raw_get_ctx() (an AF_XDP TX descriptor's DMA
 * address and TX metadata in one call), and its xsk_tx_metadata_request()
 * takes the metadata itself, not the pool and a pointer to the metadata
 * pointer: it validates the metadata in xsk_buff_get_metadata().
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
