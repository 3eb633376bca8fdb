// SPDX-License-Identifier: GPL-2.0-only
/* vx3: transmit path and TX completion */

#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/netdevice.h>
#include <net/ip6_checksum.h>
#include <net/netdev_queues.h>
#include <net/tcp.h>
#include <net/xdp.h>
#include <net/xdp_sock_drv.h>

#include "vx3.h"

/**
 * vx3_tx_free_desc() - descriptors a producer may fill
 * @tx: the ring
 *
 * One entry always stays unused: TXPROD carries the index of the next
 * descriptor to fill, and on a full ring that index would equal the
 * device's own, which a host comparing indices takes for an empty ring.
 *
 * Return: entries neither posted nor waiting for their completion, less
 * the one kept unused.
 */
u32 vx3_tx_free_desc(const struct vx3_tx_ring *tx)
{
	return tx->size - 1 - (READ_ONCE(tx->head) - READ_ONCE(tx->tail));
}

/**
 * vx3_tx_ring_alloc() - allocate a TX ring, its completion ring and state
 * @priv: driver private data
 * @tx: the ring
 * @qid: device TX queue index
 * @size: entries, a power of two
 * @xdp: the XDP ring, which has no stack queue
 *
 * Return: 0 or -ENOMEM.
 */
int vx3_tx_ring_alloc(struct vx3_priv *priv, struct vx3_tx_ring *tx,
		      u16 qid, u32 size, bool xdp)
{
	struct device *dev = &priv->pdev->dev;

	tx->dev = dev;
	tx->qid = qid;
	tx->size = size;
	tx->txq = xdp ? NULL : netdev_get_tx_queue(priv->netdev, qid);
	tx->doorbell = priv->bar0 + VX3_REG_TXPROD(qid);
	spin_lock_init(&tx->xdp_lock);
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
 * @qd: its queue descriptor
 *
 * Every descriptor gets generation 0 (not owned by the device), both
 * sides start at position 0 with generation 1.
 */
void vx3_tx_ring_reset(struct vx3_tx_ring *tx, struct vx3_tx_queue_desc *qd)
{
	tx->qd = qd;
	memset(tx->desc, 0, tx->size * sizeof(*tx->desc));
	memset(tx->comp, 0, tx->size * sizeof(*tx->comp));
	memset(tx->buf, 0, tx->size * sizeof(*tx->buf));
	tx->head = 0;
	tx->tail = 0;
	tx->comp_head = 0;
}

static void vx3_tx_unmap(struct vx3_tx_ring *tx, struct vx3_tx_buf *b)
{
	if (b->map == VX3_TX_MAP_PAGE)
		dma_unmap_page(tx->dev, b->dma, b->len, DMA_TO_DEVICE);
	else if (b->map == VX3_TX_MAP_SINGLE)
		dma_unmap_single(tx->dev, b->dma, b->len, DMA_TO_DEVICE);
	b->map = VX3_TX_MAP_NONE;
}

/* Free the packet an EOP descriptor completes; returns its length. Frames
 * of this RX queue's own page_pool go back to its cache while in its NAPI
 * poll (budget not 0); a stopped ring's skbs are dropped, not consumed.
 * An AF_XDP frame stays in the UMEM: the caller counts its completion.
 */
static u32 vx3_tx_free_packet(struct vx3_tx_buf *b, int budget)
{
	u32 len;

	if (b->type == VX3_TX_SKB) {
		len = b->skb->len;
		if (budget < 0)
			dev_kfree_skb_any_reason(b->skb,
						 SKB_DROP_REASON_DEV_READY);
		else
			napi_consume_skb(b->skb, budget);
	} else if (b->type == VX3_TX_XSK) {
		len = b->len;
	} else {
		len = xdp_get_frame_len(b->frame);
		if (b->type == VX3_TX_XDP_TX && budget > 0)
			xdp_return_frame_rx_napi(b->frame);
		else
			xdp_return_frame(b->frame);
	}
	b->skb = NULL;
	return len;
}

/**
 * vx3_tx_ring_drain() - free every packet still on a stopped TX ring
 * @tx: the ring; the device no longer touches it
 */
void vx3_tx_ring_drain(struct vx3_tx_ring *tx)
{
	u32 mask = tx->size - 1, xsk = 0;

	while (tx->tail != tx->head) {
		struct vx3_tx_buf *b = &tx->buf[tx->tail & mask];

		vx3_tx_unmap(tx, b);
		if (b->skb && b->type == VX3_TX_XSK)
			xsk++;
		if (b->skb)
			vx3_tx_free_packet(b, -1);
		tx->tail++;
	}
	/* The socket gets its frames back, as if sent */
	if (xsk)
		xsk_tx_completed(tx->xsk_pool, xsk);
	if (tx->txq)
		netdev_tx_reset_queue(tx->txq);
}

/* Called by the xmit path only (under the queue's xmit lock) */
static void vx3_tx_stat_inc(struct vx3_tx_ring *tx, enum vx3_tx_stat idx)
{
	u64_stats_update_begin(&tx->stats.syncp);
	u64_stats_inc(&tx->stats.cnt[idx]);
	u64_stats_update_end(&tx->stats.syncp);
}

/**
 * vx3_tx_desc_count() - descriptors a packet takes
 * @skb: the packet
 *
 * Return: one descriptor per VX3_TXD_MAX_LEN bytes of the head and of
 * each frag, rounded up.
 */
u32 vx3_tx_desc_count(const struct sk_buff *skb)
{
	u32 n = DIV_ROUND_UP(skb_headlen(skb), VX3_TXD_MAX_LEN);
	u32 i;

	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++)
		n += DIV_ROUND_UP(skb_frag_size(&skb_shinfo(skb)->frags[i]),
				  VX3_TXD_MAX_LEN);
	return n;
}

/**
 * vx3_tx_csum_fields() - ask the device to insert an L4 checksum
 * @start: where the checksum starts (the L4 header), from the frame's start
 * @offset: where the checksum field is, from @start
 * @len: the frame's length
 * @w2: gets the checksum offset field of the descriptors
 * @w3: gets their offload mode and checksum start
 *
 * The device checksums TCP and UDP only, with the L4 header in the first
 * 1023 bytes and the checksum field in the first 1024.
 *
 * Return: false, with @w2 and @w3 untouched, if the device cannot do it.
 */
bool vx3_tx_csum_fields(u32 start, u32 offset, u32 len, u32 *w2, u32 *w3)
{
	if (offset != offsetof(struct tcphdr, check) &&
	    offset != offsetof(struct udphdr, check))
		return false;
	if (start > FIELD_MAX(VX3_TXD_HLEN) ||
	    start + offset > VX3_TX_MAX_CSUM_END ||
	    start + offset + sizeof(__sum16) > len)
		return false;
	*w2 |= FIELD_PREP(VX3_TXD_MSSCOF, start + offset);
	*w3 |= FIELD_PREP(VX3_TXD_OM, VX3_OM_CSUM) |
	       FIELD_PREP(VX3_TXD_HLEN, start);
	return true;
}

/* Set up checksum or segmentation offload; returns the w3 bits of the
 * first descriptor and the MSS/checksum-offset field, or an error.
 */
static int vx3_tx_offload(struct sk_buff *skb, u32 *w2, u32 *w3)
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
		return 0;
	}

	if (skb->ip_summed != CHECKSUM_PARTIAL)
		return 0;

	start = skb_checksum_start_offset(skb);
	if (!vx3_tx_csum_fields(start, skb->csum_offset, skb->len, w2, w3))
		return skb_checksum_help(skb);
	return 0;
}

/**
 * vx3_tx_post() - post one DMA mapping as one or more descriptors
 * @tx: the ring
 * @pos: the descriptor to write first; advanced past the last one
 * @dma: DMA address of the buffer
 * @len: its length
 * @map: how it was mapped (unmapped when the packet completes)
 * @w2: w2 bits of every descriptor (offload fields)
 * @w3: w3 bits of every descriptor
 * @first: the packet's first descriptor
 *
 * The first descriptor of the packet keeps its old generation until the
 * whole packet is written; see vx3_tx_publish().
 */
void vx3_tx_post(struct vx3_tx_ring *tx, u32 *pos, dma_addr_t dma, u32 len,
		 enum vx3_tx_map map, u32 w2, u32 w3, u32 first)
{
	u32 mask = tx->size - 1;
	struct vx3_tx_buf *b = &tx->buf[*pos & mask];

	b->dma = dma;
	b->len = len;
	b->map = map;

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

/**
 * vx3_tx_unwind() - take back the descriptors of an unpublished packet
 * @tx: the ring
 * @first: the packet's first descriptor
 * @pos: the descriptor after its last one
 *
 * For a packet that could not be mapped whole: all but the first
 * descriptor were written with the device's generation, so they get the
 * other one again before anything reuses the slots.
 */
void vx3_tx_unwind(struct vx3_tx_ring *tx, u32 first, u32 pos)
{
	u32 mask = tx->size - 1;
	u32 p;

	for (p = first; p != pos; p++) {
		struct vx3_desc *d = &tx->desc[p & mask];

		vx3_tx_unmap(tx, &tx->buf[p & mask]);
		if (p == first)
			continue;
		if (vx3_ring_gen(p, tx->size))
			d->w[2] &= ~cpu_to_le32(VX3_TXD_GEN);
		else
			d->w[2] |= cpu_to_le32(VX3_TXD_GEN);
	}
	dma_wmb();
}

/* Tell the device where the published descriptors end: TXPROD takes the
 * index of the next free descriptor. The caller has set txNumDeferred to
 * 0 already.
 */
static void vx3_tx_doorbell(struct vx3_tx_ring *tx)
{
	writel(tx->head & (tx->size - 1), tx->doorbell);
	vx3_tx_stat_inc(tx, VX3_TXS_DOORBELLS);
}

/**
 * vx3_tx_kick() - ring the doorbell for packets published without one
 * @tx: the ring; called by its producer
 */
void vx3_tx_kick(struct vx3_tx_ring *tx)
{
	if (READ_ONCE(tx->qd->num_deferred)) {
		WRITE_ONCE(tx->qd->num_deferred, 0);
		vx3_tx_doorbell(tx);
	}
}

/**
 * vx3_tx_publish() - hand a written packet to the device
 * @tx: the ring; @tx->head already past the packet
 * @first: the packet's first descriptor
 * @pkts: packets it puts on the wire: its TSO segments, else 1
 * @kick: ring the doorbell (end of a batch)
 *
 * txNumDeferred counts the packets published since the last TXPROD write,
 * a TSO packet as its segments (the interface's definition); TXPROD (the
 * index of the next free descriptor) is written when the caller ends a
 * batch and whenever txNumDeferred reaches the device's txThreshold. The
 * first descriptor's generation flip is the last write before the
 * doorbell: the device may take the packet from then on.
 */
void vx3_tx_publish(struct vx3_tx_ring *tx, u32 first, u32 pkts, bool kick)
{
	struct vx3_desc *d = &tx->desc[first & (tx->size - 1)];
	u32 deferred, threshold;

	/* The device may write both words at any time; a txThreshold of 0
	 * would mean every packet
	 */
	deferred = le32_to_cpu(READ_ONCE(tx->qd->num_deferred)) + pkts;
	threshold = le32_to_cpu(READ_ONCE(tx->qd->threshold));
	kick |= deferred >= threshold;
	WRITE_ONCE(tx->qd->num_deferred, cpu_to_le32(kick ? 0 : deferred));

	dma_wmb();
	d->w[2] ^= cpu_to_le32(VX3_TXD_GEN);

	if (kick)
		vx3_tx_doorbell(tx);
}

/* Drop a packet; if it ended a batch, ring for the ones already published */
static void vx3_tx_drop(struct vx3_tx_ring *tx, struct sk_buff *skb,
			enum vx3_tx_stat idx, enum skb_drop_reason reason)
{
	dev_kfree_skb_any_reason(skb, reason);
	vx3_tx_stat_inc(tx, idx);
	if (!netdev_xmit_more())
		vx3_tx_kick(tx);
}

/**
 * vx3_start_xmit() - queue a packet on a TX ring
 * @skb: the packet
 * @netdev: the net_device
 *
 * The packet is published whole: its descriptors are written with the
 * device's generation except the first one. Everything the completion
 * path reads (the skb, the mappings, the ring head, BQL) is recorded
 * before that first descriptor's generation is flipped, because the
 * device may take the packet then, before any doorbell. A batch ends at
 * the end of every xmit_more batch and when BQL asks for a doorbell.
 *
 * Return: NETDEV_TX_OK; packets that cannot be sent are dropped.
 */
netdev_tx_t vx3_start_xmit(struct sk_buff *skb, struct net_device *netdev)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	u32 w2 = 0, w3 = 0, first, pos, eop, need, segs, i;
	struct vx3_tx_ring *tx;
	bool ring, stopped;
	dma_addr_t dma;
	u32 len;

	tx = &priv->qs->vec[skb_get_queue_mapping(skb)]->tx;

	/* vx3_features_check() made the core copy a longer chain */
	need = vx3_tx_desc_count(skb);
	if (unlikely(need > (skb_is_gso(skb) ? VX3_TX_MAX_DESC_TSO :
						VX3_TX_MAX_DESC))) {
		vx3_tx_drop(tx, skb, VX3_TXS_DROPS,
			    SKB_DROP_REASON_PKT_TOO_BIG);
		return NETDEV_TX_OK;
	}
	/* The queue is stopped while fewer than VX3_TX_DESC_NEEDED are free */
	if (WARN_ON_ONCE(need > vx3_tx_free_desc(tx))) {
		netif_tx_stop_queue(tx->txq);
		/* No later packet of this batch will ring for the ones
		 * already published: the queue is stopped now
		 */
		vx3_tx_kick(tx);
		vx3_tx_drop(tx, skb, VX3_TXS_DROPS, SKB_DROP_REASON_FULL_RING);
		return NETDEV_TX_OK;
	}

	if (vx3_tx_offload(skb, &w2, &w3)) {
		vx3_tx_drop(tx, skb, VX3_TXS_DROPS, SKB_DROP_REASON_NOMEM);
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
		vx3_tx_post(tx, &pos, dma, len, VX3_TX_MAP_SINGLE, w2, w3,
			    first);
	}

	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		skb_frag_t *frag = &skb_shinfo(skb)->frags[i];

		len = skb_frag_size(frag);
		dma = skb_frag_dma_map(tx->dev, frag, 0, len, DMA_TO_DEVICE);
		if (dma_mapping_error(tx->dev, dma))
			goto err_map;
		vx3_tx_post(tx, &pos, dma, len, VX3_TX_MAP_PAGE, w2, w3,
			    first);
	}

	eop = (pos - 1) & (tx->size - 1);
	tx->desc[eop].w[3] |= cpu_to_le32(VX3_TXD_EOP | VX3_TXD_CQ);
	tx->buf[eop].skb = skb;
	tx->buf[eop].type = VX3_TX_SKB;
	WRITE_ONCE(tx->head, pos);
	skb_tx_timestamp(skb);
	/* Read before the device may complete and free the skb */
	segs = skb_is_gso(skb) ? max_t(u32, skb_shinfo(skb)->gso_segs, 1) : 1;

	stopped = !netif_txq_maybe_stop(tx->txq, vx3_tx_free_desc(tx),
					VX3_TX_DESC_NEEDED,
					VX3_TX_WAKE_THRESH);
	if (stopped)
		vx3_tx_stat_inc(tx, VX3_TXS_STOPS);
	ring = __netdev_tx_sent_queue(tx->txq, skb->len, netdev_xmit_more());
	vx3_tx_publish(tx, first, segs, ring);

	/* Offloads count once the packet is the device's */
	if (FIELD_GET(VX3_TXD_OM, w3) == VX3_OM_TSO)
		vx3_tx_stat_inc(tx, VX3_TXS_TSO);
	else if (FIELD_GET(VX3_TXD_OM, w3) == VX3_OM_CSUM)
		vx3_tx_stat_inc(tx, VX3_TXS_CSUM);
	return NETDEV_TX_OK;

err_map:
	vx3_tx_unwind(tx, first, pos);
	vx3_tx_drop(tx, skb, VX3_TXS_MAP_ERR, SKB_DROP_REASON_NOMEM);
	return NETDEV_TX_OK;
}

/**
 * vx3_tx_clean() - free the packets the device has completed
 * @tx: the ring, a stack queue or the XDP ring
 * @budget: NAPI budget, 0 from netpoll
 *
 * The device completes packets in order: each completion names the EOP
 * descriptor of the oldest outstanding packet, the first EOP from @tx->tail.
 *
 * Return: false if the device reported a completion for any other
 * descriptor (outside the posted window, not an EOP, or the EOP of a
 * later packet); nothing past it is completed and the caller resets the
 * device.
 */
bool vx3_tx_clean(struct vx3_tx_ring *tx, int budget)
{
	u32 mask = tx->size - 1, tail = tx->tail;
	u32 pkts = 0, bytes = 0, xsk = 0;
	bool ok = true, woken;

	for (;;) {
		struct vx3_desc *c = &tx->comp[tx->comp_head & mask];
		__le32 gen = vx3_ring_gen(tx->comp_head, tx->size) ?
			     cpu_to_le32(VX3_COMP_GEN) : 0;
		u32 idx, head, end;

		if ((READ_ONCE(c->w[3]) & cpu_to_le32(VX3_COMP_GEN)) != gen)
			break;
		dma_rmb();

		/* The producer index is read after the completion: the
		 * device can complete a packet as soon as xmit published it.
		 * The oldest packet ends at the first EOP (the descriptor
		 * that holds the packet) from tail.
		 */
		idx = FIELD_GET(VX3_TXC_IDX, le32_to_cpu(READ_ONCE(c->w[0])));
		head = READ_ONCE(tx->head);
		for (end = tail; end != head; end++)
			if (tx->buf[end & mask].skb)
				break;
		if (end == head || (end & mask) != idx) {
			ok = false;
			break;
		}

		for (; tail != end; tail++)
			vx3_tx_unmap(tx, &tx->buf[tail & mask]);
		vx3_tx_unmap(tx, &tx->buf[idx]);
		if (tx->buf[idx].type == VX3_TX_XSK)
			xsk++;
		bytes += vx3_tx_free_packet(&tx->buf[idx], budget);
		pkts++;
		tail++;
		tx->comp_head++;
	}

	WRITE_ONCE(tx->tail, tail);
	/* In order with the socket's TX ring: its frames complete in the
	 * order vx3_xsk_xmit() posted them
	 */
	if (xsk)
		xsk_tx_completed(tx->xsk_pool, xsk);

	woken = tx->txq &&
		!netif_txq_completed_wake(tx->txq, pkts, bytes,
					  vx3_tx_free_desc(tx),
					  VX3_TX_WAKE_THRESH);

	u64_stats_update_begin(&tx->cstats.syncp);
	u64_stats_add(&tx->cstats.cnt[VX3_TXCS_PACKETS], pkts);
	u64_stats_add(&tx->cstats.cnt[VX3_TXCS_BYTES], bytes);
	if (woken)
		u64_stats_inc(&tx->cstats.cnt[VX3_TXCS_WAKES]);
	if (!ok)
		u64_stats_inc(&tx->cstats.cnt[VX3_TXCS_BAD_COMP]);
	u64_stats_update_end(&tx->cstats.syncp);
	return ok;
}
