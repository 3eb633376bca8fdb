// SPDX-License-Identifier: GPL-2.0-only
/* vx3: transmit path and TX completion */

#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/netdevice.h>
#include <net/ip6_checksum.h>
#include <net/netdev_queues.h>
#include <net/tcp.h>

#include "vx3.h"

static u32 vx3_tx_free_desc(const struct vx3_tx_ring *tx)
{
	return tx->size - (READ_ONCE(tx->head) - READ_ONCE(tx->tail));
}

/**
 * vx3_tx_ring_alloc() - allocate a TX ring, its completion ring and state
 * @priv: driver private data
 * @tx: the ring
 * @qid: TX queue index
 * @size: entries, a power of two
 *
 * Return: 0 or -ENOMEM.
 */
int vx3_tx_ring_alloc(struct vx3_priv *priv, struct vx3_tx_ring *tx,
		      u16 qid, u32 size)
{
	struct device *dev = &priv->pdev->dev;

	tx->dev = dev;
	tx->qid = qid;
	tx->size = size;
	tx->txq = netdev_get_tx_queue(priv->netdev, qid);
	tx->doorbell = priv->bar0 + VX3_REG_TXPROD(qid);
	u64_stats_init(&tx->stats.syncp);
	u64_stats_init(&tx->cstats.syncp);

	tx->buf = kvcalloc(size, sizeof(*tx->buf), GFP_KERNEL);
	tx->desc = dma_alloc_coherent(dev, size * sizeof(*tx->desc),
				      &tx->desc_dma, GFP_KERNEL);
	tx->comp = dma_alloc_coherent(dev, size * sizeof(*tx->comp),
				      &tx->comp_dma, GFP_KERNEL);
	if (!tx->buf || !tx->desc || !tx->comp) {
		vx3_tx_ring_free(tx);
		return -ENOMEM;
	}
	return 0;
}

/**
 * vx3_tx_ring_free() - free a TX ring allocated by vx3_tx_ring_alloc()
 * @tx: the ring, drained
 */
void vx3_tx_ring_free(struct vx3_tx_ring *tx)
{
	if (tx->comp)
		dma_free_coherent(tx->dev, tx->size * sizeof(*tx->comp),
				  tx->comp, tx->comp_dma);
	if (tx->desc)
		dma_free_coherent(tx->dev, tx->size * sizeof(*tx->desc),
				  tx->desc, tx->desc_dma);
	kvfree(tx->buf);
	tx->comp = NULL;
	tx->desc = NULL;
	tx->buf = NULL;
}

/**
 * vx3_tx_ring_reset() - prepare an empty TX ring for activation
 * @tx: the ring
 *
 * Every descriptor gets generation 0 (not owned by the device), both
 * sides start at position 0 with generation 1.
 */
void vx3_tx_ring_reset(struct vx3_tx_ring *tx)
{
	memset(tx->desc, 0, tx->size * sizeof(*tx->desc));
	memset(tx->comp, 0, tx->size * sizeof(*tx->comp));
	memset(tx->buf, 0, tx->size * sizeof(*tx->buf));
	tx->head = 0;
	tx->tail = 0;
	tx->comp_head = 0;
}

static void vx3_tx_unmap(struct vx3_tx_ring *tx, struct vx3_tx_buf *b)
{
	if (!b->len)
		return;
	if (b->page)
		dma_unmap_page(tx->dev, b->dma, b->len, DMA_TO_DEVICE);
	else
		dma_unmap_single(tx->dev, b->dma, b->len, DMA_TO_DEVICE);
	b->len = 0;
}

/**
 * vx3_tx_ring_drain() - free every packet still on a stopped TX ring
 * @tx: the ring; the device no longer touches it
 */
void vx3_tx_ring_drain(struct vx3_tx_ring *tx)
{
	u32 mask = tx->size - 1;

	while (tx->tail != tx->head) {
		struct vx3_tx_buf *b = &tx->buf[tx->tail & mask];

		vx3_tx_unmap(tx, b);
		if (b->skb) {
			dev_kfree_skb_any(b->skb);
			b->skb = NULL;
		}
		tx->tail++;
	}
	netdev_tx_reset_queue(tx->txq);
}

static u32 vx3_tx_desc_count(const struct sk_buff *skb)
{
	u32 n = DIV_ROUND_UP(skb_headlen(skb), VX3_TXD_MAX_LEN);
	u32 i;

	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++)
		n += DIV_ROUND_UP(skb_frag_size(&skb_shinfo(skb)->frags[i]),
				  VX3_TXD_MAX_LEN);
	return n;
}

/* Set up checksum or segmentation offload; returns the w3 bits of the
 * first descriptor and the MSS/checksum-offset field, or an error.
 */
static int vx3_tx_offload(struct vx3_tx_ring *tx, struct sk_buff *skb,
			  u32 *w2, u32 *w3)
{
	u32 start, hlen;
	int err;

	if (skb_is_gso(skb)) {
		err = skb_cow_head(skb, 0);
		if (err)
			return err;
		hlen = skb_tcp_all_headers(skb);
		/* The device wants the pseudo-header checksum without the
		 * length, as it sets the length of each segment itself.
		 */
		if (skb_shinfo(skb)->gso_type & SKB_GSO_TCPV4)
			tcp_hdr(skb)->check =
				~tcp_v4_check(0, ip_hdr(skb)->saddr,
					      ip_hdr(skb)->daddr, 0);
		else
			tcp_hdr(skb)->check =
				~tcp_v6_check(0, &ipv6_hdr(skb)->saddr,
					      &ipv6_hdr(skb)->daddr, 0);
		*w2 |= FIELD_PREP(VX3_TXD_MSSCOF, skb_shinfo(skb)->gso_size);
		*w3 |= FIELD_PREP(VX3_TXD_OM, VX3_OM_TSO) |
		       FIELD_PREP(VX3_TXD_HLEN, hlen);
		u64_stats_update_begin(&tx->stats.syncp);
		tx->stats.tso++;
		u64_stats_update_end(&tx->stats.syncp);
		return 0;
	}

	if (skb->ip_summed != CHECKSUM_PARTIAL)
		return 0;

	/* The device checksums TCP and UDP only */
	if (skb->csum_offset != offsetof(struct tcphdr, check) &&
	    skb->csum_offset != offsetof(struct udphdr, check))
		return skb_checksum_help(skb);

	start = skb_checksum_start_offset(skb);
	*w2 |= FIELD_PREP(VX3_TXD_MSSCOF, start + skb->csum_offset);
	*w3 |= FIELD_PREP(VX3_TXD_OM, VX3_OM_CSUM) |
	       FIELD_PREP(VX3_TXD_HLEN, start);
	u64_stats_update_begin(&tx->stats.syncp);
	tx->stats.csum++;
	u64_stats_update_end(&tx->stats.syncp);
	return 0;
}

/* Post one DMA mapping as one or more descriptors. The first descriptor
 * of the packet keeps its old generation until the whole packet is
 * written; see vx3_start_xmit().
 */
static void vx3_tx_post(struct vx3_tx_ring *tx, u32 *pos, dma_addr_t dma,
			u32 len, bool page, u32 w2, u32 w3, u32 first)
{
	u32 mask = tx->size - 1;
	struct vx3_tx_buf *b = &tx->buf[*pos & mask];

	b->dma = dma;
	b->len = len;
	b->page = page;

	while (len) {
		u32 chunk = min_t(u32, len, VX3_TXD_MAX_LEN);
		struct vx3_desc *d = &tx->desc[*pos & mask];
		bool gen = vx3_ring_gen(*pos, tx->size);

		if (*pos == first)
			gen = !gen;
		d->addr = cpu_to_le64(dma);
		d->w[3] = cpu_to_le32(w3);
		d->w[2] = cpu_to_le32(w2 |
				      FIELD_PREP(VX3_TXD_LEN,
						 chunk & VX3_TXD_LEN) |
				      (gen ? VX3_TXD_GEN : 0));
		dma += chunk;
		len -= chunk;
		(*pos)++;
	}
}

static void vx3_tx_unwind(struct vx3_tx_ring *tx, u32 from, u32 to)
{
	u32 mask = tx->size - 1;

	for (; from != to; from++)
		vx3_tx_unmap(tx, &tx->buf[from & mask]);
}

static void vx3_tx_drop(struct vx3_tx_ring *tx, struct sk_buff *skb,
			bool map_err)
{
	dev_kfree_skb_any(skb);
	u64_stats_update_begin(&tx->stats.syncp);
	if (map_err)
		tx->stats.map_err++;
	else
		tx->stats.drops++;
	u64_stats_update_end(&tx->stats.syncp);
}

/**
 * vx3_start_xmit() - queue a packet on a TX ring
 * @skb: the packet
 * @netdev: the net_device
 *
 * The packet is published whole: its descriptors are written with the
 * device's generation except the first one, which is flipped last. The
 * doorbell is rung once per batch (netdev_xmit_more()).
 *
 * Return: NETDEV_TX_OK, or NETDEV_TX_BUSY if the ring is full.
 */
netdev_tx_t vx3_start_xmit(struct sk_buff *skb, struct net_device *netdev)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	u32 w2 = 0, w3 = 0, first, pos, eop, need, i;
	struct vx3_tx_ring *tx;
	struct vx3_desc *d;
	dma_addr_t dma;
	u32 len;

	tx = &priv->qs->vec[skb_get_queue_mapping(skb)]->tx;

	need = vx3_tx_desc_count(skb);
	if (unlikely(need > vx3_tx_free_desc(tx))) {
		if (need > tx->size) {
			vx3_tx_drop(tx, skb, false);
			return NETDEV_TX_OK;
		}
		netif_tx_stop_queue(tx->txq);
		u64_stats_update_begin(&tx->stats.syncp);
		tx->stats.busy++;
		u64_stats_update_end(&tx->stats.syncp);
		return NETDEV_TX_BUSY;
	}

	if (vx3_tx_offload(tx, skb, &w2, &w3)) {
		vx3_tx_drop(tx, skb, false);
		return NETDEV_TX_OK;
	}
	if (skb_vlan_tag_present(skb))
		w3 |= VX3_TXD_TI | FIELD_PREP(VX3_TXD_TCI,
					      skb_vlan_tag_get(skb));

	first = tx->head;
	pos = first;
	len = skb_headlen(skb);
	if (len) {
		dma = dma_map_single(tx->dev, skb->data, len, DMA_TO_DEVICE);
		if (dma_mapping_error(tx->dev, dma))
			goto err_map;
		vx3_tx_post(tx, &pos, dma, len, false, w2, w3, first);
	}

	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		skb_frag_t *frag = &skb_shinfo(skb)->frags[i];

		len = skb_frag_size(frag);
		dma = skb_frag_dma_map(tx->dev, frag, 0, len, DMA_TO_DEVICE);
		if (dma_mapping_error(tx->dev, dma))
			goto err_map;
		vx3_tx_post(tx, &pos, dma, len, true, w2, w3, first);
	}

	eop = (pos - 1) & (tx->size - 1);
	tx->desc[eop].w[3] |= cpu_to_le32(VX3_TXD_EOP | VX3_TXD_CQ);
	tx->buf[eop].skb = skb;

	/* Publish the packet: flip the first descriptor's generation last */
	d = &tx->desc[first & (tx->size - 1)];
	dma_wmb();
	d->w[2] ^= cpu_to_le32(VX3_TXD_GEN);

	WRITE_ONCE(tx->head, pos);
	skb_tx_timestamp(skb);

	if (!netif_txq_maybe_stop(tx->txq, vx3_tx_free_desc(tx),
				  VX3_TX_DESC_NEEDED, VX3_TX_WAKE_THRESH)) {
		u64_stats_update_begin(&tx->stats.syncp);
		tx->stats.stops++;
		u64_stats_update_end(&tx->stats.syncp);
	}
	if (__netdev_tx_sent_queue(tx->txq, skb->len, netdev_xmit_more()))
		writel(0, tx->doorbell);
	return NETDEV_TX_OK;

err_map:
	vx3_tx_unwind(tx, first, pos);
	vx3_tx_drop(tx, skb, true);
	/* Descriptors of an earlier batch may still wait for the doorbell */
	if (!netdev_xmit_more())
		writel(0, tx->doorbell);
	return NETDEV_TX_OK;
}

/**
 * vx3_tx_clean() - free the packets the device has completed
 * @tx: the ring
 * @budget: NAPI budget, 0 from netpoll
 *
 * Return: false if the device reported a completion for a descriptor that
 * is not the end of an outstanding packet; the caller resets the device.
 */
bool vx3_tx_clean(struct vx3_tx_ring *tx, int budget)
{
	u32 mask = tx->size - 1, tail = tx->tail;
	u32 pkts = 0, bytes = 0;
	bool ok = true;

	for (;;) {
		struct vx3_desc *c = &tx->comp[tx->comp_head & mask];
		__le32 gen = vx3_ring_gen(tx->comp_head, tx->size) ?
			     cpu_to_le32(VX3_COMP_GEN) : 0;
		u32 idx, dist;

		if ((c->w[3] & cpu_to_le32(VX3_COMP_GEN)) != gen)
			break;
		dma_rmb();

		/* The producer index is read after the completion: the
		 * device can complete a packet as soon as xmit published it.
		 */
		idx = FIELD_GET(VX3_TXC_IDX, le32_to_cpu(c->w[0]));
		dist = (idx - tail) & mask;
		if (idx >= tx->size || dist >= READ_ONCE(tx->head) - tail ||
		    !tx->buf[idx].skb) {
			ok = false;
			break;
		}

		for (; dist; dist--, tail++)
			vx3_tx_unmap(tx, &tx->buf[tail & mask]);
		vx3_tx_unmap(tx, &tx->buf[idx]);
		bytes += tx->buf[idx].skb->len;
		pkts++;
		napi_consume_skb(tx->buf[idx].skb, budget);
		tx->buf[idx].skb = NULL;
		tail++;
		tx->comp_head++;
	}

	WRITE_ONCE(tx->tail, tail);

	u64_stats_update_begin(&tx->cstats.syncp);
	tx->cstats.packets += pkts;
	tx->cstats.bytes += bytes;
	if (!ok)
		tx->cstats.bad_comp++;
	u64_stats_update_end(&tx->cstats.syncp);

	if (!netif_txq_completed_wake(tx->txq, pkts, bytes,
				      vx3_tx_free_desc(tx),
				      VX3_TX_WAKE_THRESH)) {
		u64_stats_update_begin(&tx->cstats.syncp);
		tx->cstats.wakes++;
		u64_stats_update_end(&tx->cstats.syncp);
	}
	return ok;
}
