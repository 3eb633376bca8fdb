// SPDX-License-Identifier: GPL-2.0-only
/* vx3: receive path on page_pool page segments
 *
 * Ring 0 holds head buffers: page_pool fragments sized for the headroom,
 * a full frame and the skb_shared_info, so the head buffer itself becomes
 * the skb (napi_build_skb()). Ring 1 holds body pages, attached as frags
 * for jumbo frames and for the device's aggregates (LRO).
 */

#include <linux/bitfield.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/if_vlan.h>
#include <net/ip.h>
#include <net/page_pool/helpers.h>
#include <net/xdp_sock_drv.h>

#include "vx3.h"

/**
 * vx3_rx_head_truesize() - memory taken by one head buffer
 * @mtu: the MTU the buffer should hold a frame of
 * @headroom: bytes in front of the frame
 *
 * Return: a power of two of at most PAGE_SIZE.
 */
static u32 vx3_rx_head_truesize(u32 mtu, u32 headroom)
{
	u32 size = SKB_DATA_ALIGN(headroom + mtu + VLAN_ETH_HLEN) +
		   VX3_RX_SHINFO_SIZE;

	/* Under XDP a head buffer is a page, as a body buffer is:
	 * bpf_xdp_adjust_tail() grows a multi-buffer frame only where the
	 * frame size (a head buffer's) is the frag size (a body buffer's)
	 */
	if (headroom == VX3_RX_XDP_HEADROOM)
		return PAGE_SIZE;
	return min_t(u32, roundup_pow_of_two(size), PAGE_SIZE);
}

/**
 * vx3_rx_head_buf_len() - bytes of a frame one head buffer holds
 * @mtu: the MTU the buffer should hold a frame of
 * @headroom: bytes in front of the frame
 *
 * Return: the length the device is given for a head buffer; longer
 * frames continue in body buffers.
 */
u32 vx3_rx_head_buf_len(u32 mtu, u32 headroom)
{
	return min_t(u32, vx3_rx_head_truesize(mtu, headroom) - headroom -
		     VX3_RX_SHINFO_SIZE, VX3_RXD_MAX_LEN);
}

/* Called in NAPI context, or with NAPI disabled: the only writer */
static void vx3_rx_stat_inc(struct vx3_rx_queue *rxq, enum vx3_rx_stat idx)
{
	u64_stats_update_begin(&rxq->stats.syncp);
	u64_stats_inc(&rxq->stats.cnt[idx]);
	u64_stats_update_end(&rxq->stats.syncp);
}

static void vx3_rx_refill_timer(struct timer_list *t)
{
	struct vx3_rx_queue *rxq = timer_container_of(rxq, t, refill_timer);

	napi_schedule(rxq->napi);
}

static void vx3_rx_ring_free(struct vx3_rx_queue *rxq, struct vx3_rx_ring *r)
{
	struct device *dev = &rxq->priv->pdev->dev;

	if (r->desc)
		dma_free_coherent(dev, r->size * sizeof(*r->desc), r->desc,
				  r->desc_dma);
	kvfree(r->buf);
	r->desc = NULL;
	r->buf = NULL;
}

static int vx3_rx_ring_alloc(struct vx3_rx_queue *rxq, struct vx3_rx_ring *r,
			     u32 size)
{
	struct device *dev = &rxq->priv->pdev->dev;

	r->size = size;
	r->buf = kvcalloc(size, sizeof(*r->buf), GFP_KERNEL);
	r->desc = dma_alloc_coherent(dev, size * sizeof(*r->desc),
				     &r->desc_dma, GFP_KERNEL);
	if (!r->buf || !r->desc)
		return -ENOMEM;
	return 0;
}

/**
 * vx3_rx_queue_alloc() - allocate an RX queue: rings, completions, page_pool
 * @priv: driver private data
 * @rxq: the queue
 * @napi: the NAPI context that will poll it
 * @qid: RX queue index
 * @xdp_txq: device TX queue index of its XDP ring
 * @cfg: ring sizes, MTU and whether XDP is on
 *
 * Context: rtnl held.
 * Return: 0 or a negative errno; on error nothing stays allocated.
 */
int vx3_rx_queue_alloc(struct vx3_priv *priv, struct vx3_rx_queue *rxq,
		       struct napi_struct *napi, u16 qid, u16 xdp_txq,
		       const struct vx3_cfg *cfg)
{
	struct device *dev = &priv->pdev->dev;
	struct page_pool_params pp = {
		.order		= 0,
		.flags		= PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV,
		.pool_size	= cfg->rx_ring[0] + cfg->rx_ring[1],
		.nid		= dev_to_node(dev),
		.dev		= dev,
		.napi		= napi,
		.netdev		= priv->netdev,
		.queue_idx	= qid,
		/* XDP_TX sends from the buffers it received into */
		.dma_dir	= cfg->xdp ? DMA_BIDIRECTIONAL :
					     DMA_FROM_DEVICE,
		.offset		= 0,
		.max_len	= PAGE_SIZE,
	};
	u32 headroom = cfg->xdp ? VX3_RX_XDP_HEADROOM : VX3_RX_HEADROOM;
	int err;

	rxq->priv = priv;
	rxq->netdev = priv->netdev;
	rxq->napi = napi;
	rxq->qid = qid;
	rxq->num_rxq = cfg->num_rxq;
	rxq->mtu = cfg->mtu;
	rxq->headroom = headroom;
	rxq->xdp_prog = priv->xdp_prog;
	rxq->xsk_pool = cfg->xsk_pool[qid];
	u64_stats_init(&rxq->stats.syncp);
	timer_setup(&rxq->refill_timer, vx3_rx_refill_timer, 0);

	rxq->ring[0].btype = VX3_RXD_BTYPE_HEAD;
	rxq->ring[0].truesize = vx3_rx_head_truesize(cfg->mtu, headroom);
	rxq->ring[0].buf_len = vx3_rx_head_buf_len(cfg->mtu, headroom);
	if (rxq->xsk_pool)
		rxq->ring[0].buf_len = vx3_xsk_buf_len(rxq->xsk_pool);
	rxq->ring[1].btype = VX3_RXD_BTYPE_BODY;
	rxq->ring[1].truesize = PAGE_SIZE;
	rxq->ring[1].buf_len = min_t(u32, VX3_RX_BODY_LEN, VX3_RXD_MAX_LEN);
	rxq->ring[0].prod = priv->bar0 + VX3_REG_RXPROD(qid);
	rxq->ring[1].prod = priv->bar0 + VX3_REG_RXPROD2(qid);

	err = vx3_rx_ring_alloc(rxq, &rxq->ring[0], cfg->rx_ring[0]);
	if (err)
		goto err_free;
	err = vx3_rx_ring_alloc(rxq, &rxq->ring[1], cfg->rx_ring[1]);
	if (err)
		goto err_free;

	/* One completion per posted buffer: the ring can never overflow */
	rxq->comp_size = roundup_pow_of_two(cfg->rx_ring[0] + cfg->rx_ring[1]);
	rxq->comp = dma_alloc_coherent(dev, rxq->comp_size * sizeof(*rxq->comp),
				       &rxq->comp_dma, GFP_KERNEL);
	if (!rxq->comp) {
		err = -ENOMEM;
		goto err_free;
	}

	rxq->pp = page_pool_create(&pp);
	if (IS_ERR(rxq->pp)) {
		err = PTR_ERR(rxq->pp);
		rxq->pp = NULL;
		goto err_free;
	}

	/* Body pages are whole pages: frags may grow to PAGE_SIZE. Since
	 * 6.13 a NAPI instance has its ID only from napi_enable() on, and
	 * xdp_rxq_info no longer records one (the argument is unused: AF_XDP
	 * takes the ID from the queue's NAPI, netif_queue_set_napi() in
	 * vx3_up()). On 6.12, which reads it for AF_XDP busy polling,
	 * netif_napi_add() has assigned the ID already.
	 */
	err = __xdp_rxq_info_reg(&rxq->xdp_rxq, priv->netdev, qid,
				 napi->napi_id, PAGE_SIZE);
	if (err)
		goto err_free;
	/* An AF_XDP queue's head buffers are the pool's; its page_pool
	 * stays for ring 1, which it leaves empty
	 */
	if (rxq->xsk_pool)
		err = xdp_rxq_info_reg_mem_model(&rxq->xdp_rxq,
						 MEM_TYPE_XSK_BUFF_POOL, NULL);
	else
		err = xdp_rxq_info_reg_mem_model(&rxq->xdp_rxq,
						 MEM_TYPE_PAGE_POOL, rxq->pp);
	if (err)
		goto err_free;

	err = vx3_tx_ring_alloc(priv, &rxq->xdp_tx, xdp_txq, cfg->tx_ring,
				true);
	if (err)
		goto err_free;
	rxq->xdp_tx.xsk_pool = rxq->xsk_pool;
	return 0;

err_free:
	vx3_rx_queue_free(rxq);
	return err;
}

/**
 * vx3_rx_queue_stop() - drop the packet a stopped RX queue was assembling
 * @rxq: the queue; the device no longer touches it
 */
void vx3_rx_queue_stop(struct vx3_rx_queue *rxq)
{
	timer_delete_sync(&rxq->refill_timer);
	if (rxq->skb) {
		kfree_skb_reason(rxq->skb, SKB_DROP_REASON_DEV_READY);
		rxq->skb = NULL;
	}
	if (rxq->in_xdp)
		vx3_xdp_free(rxq, false);
	rxq->discard = false;
	/* The pool's buffers go back to it: the next queue set, or this one
	 * started again, takes them from there
	 */
	if (rxq->xsk_pool)
		vx3_xsk_ring_free(rxq, &rxq->ring[0]);
}

/**
 * vx3_rx_queue_drain() - return every buffer of a stopped RX queue
 * @rxq: the queue; the device no longer touches it
 */
static void vx3_rx_queue_drain(struct vx3_rx_queue *rxq)
{
	u32 r, i;

	vx3_rx_queue_stop(rxq);

	for (r = 0; r < 2; r++) {
		struct vx3_rx_ring *ring = &rxq->ring[r];

		for (i = 0; ring->buf && i < ring->size; i++) {
			if (!ring->buf[i].page)
				continue;
			page_pool_put_full_page(rxq->pp, ring->buf[i].page,
						false);
			ring->buf[i].page = NULL;
		}
	}
}

/**
 * vx3_rx_queue_free() - free an RX queue allocated by vx3_rx_queue_alloc()
 * @rxq: the queue
 */
void vx3_rx_queue_free(struct vx3_rx_queue *rxq)
{
	struct device *dev = &rxq->priv->pdev->dev;

	/* Drained (vx3_qset_drain()) while its page_pool still exists */
	vx3_tx_ring_free(&rxq->xdp_tx);
	if (rxq->pp)
		vx3_rx_queue_drain(rxq);
	if (rxq->comp)
		dma_free_coherent(dev, rxq->comp_size * sizeof(*rxq->comp),
				  rxq->comp, rxq->comp_dma);
	rxq->comp = NULL;
	vx3_rx_ring_free(rxq, &rxq->ring[1]);
	vx3_rx_ring_free(rxq, &rxq->ring[0]);
	/* Drops the memory model's reference to the pool, if it took one;
	 * an allocation that failed earlier never registered it
	 */
	if (xdp_rxq_info_is_reg(&rxq->xdp_rxq))
		xdp_rxq_info_unreg(&rxq->xdp_rxq);
	page_pool_destroy(rxq->pp);
	rxq->pp = NULL;
}

/* Post buffers to every free slot of a ring. A slot that still holds a
 * buffer (copied, dropped or skipped packet) posts it again. When the
 * device asks for it (updateRxProd), it is told the new fill index.
 *
 * One slot always stays unposted: with every slot posted the fill index
 * would equal the device's consumer index, and a host that compares the
 * producer register with its own index would take the full ring for an
 * empty one.
 *
 * Allocations never sleep, also when vx3_rx_queue_reset() fills a ring in
 * process context: the page_pool records a new page's DMA mapping with
 * xa_alloc_bh(), and a sleeping gfp there allocates with BHs disabled
 * once the xarray needs a node. Nor do they warn: a failure is counted
 * in alloc_fail, and a ring left short is filled by NAPI and the refill
 * timer.
 */
static void vx3_rx_ring_refill(struct vx3_rx_queue *rxq, struct vx3_rx_ring *r)
{
	u32 mask = r->size - 1, start = r->fill;

	if (rxq->xsk_pool) {
		if (r->btype == VX3_RXD_BTYPE_HEAD)
			vx3_xsk_refill(rxq, r);
		return;
	}

	while (r->fill - r->used < r->size - 1) {
		struct vx3_rx_buf *b = &r->buf[r->fill & mask];
		struct vx3_desc *d = &r->desc[r->fill & mask];
		u32 headroom = 0;
		dma_addr_t dma;
		u32 w2;

		if (!b->page) {
			u32 size = r->truesize;

			/* A fragment for buffers of up to half a page, a page
			 * of its own for larger ones (no fragment bookkeeping
			 * per buffer). The size is a power of two: what comes
			 * back is exactly @size, the ring's truesize.
			 */
			b->page = page_pool_dev_alloc(rxq->pp, &b->offset,
						      &size);
			if (!b->page) {
				vx3_rx_stat_inc(rxq, VX3_RXS_ALLOC_FAIL);
				break;
			}
		}
		if (r->btype == VX3_RXD_BTYPE_HEAD)
			headroom = rxq->headroom;

		dma = page_pool_get_dma_addr(b->page) + b->offset + headroom;
		w2 = FIELD_PREP(VX3_RXD_LEN, r->buf_len) |
		     FIELD_PREP(VX3_RXD_BTYPE, r->btype);
		if (vx3_ring_gen(r->fill, r->size))
			w2 |= VX3_RXD_GEN;

		d->addr = cpu_to_le64(dma);
		d->w[3] = 0;
		dma_wmb();
		d->w[2] = cpu_to_le32(w2);
		r->fill++;
	}

	if (r->fill != start && rxq->qd && READ_ONCE(rxq->qd->update_prod))
		writel(r->fill & mask, r->prod);
}

/**
 * vx3_rx_queue_write_prod() - tell the device the fill index of each ring
 * @rxq: the queue, just activated
 *
 * Written once after activation, and then only when the device asks for
 * it through updateRxProd.
 */
void vx3_rx_queue_write_prod(struct vx3_rx_queue *rxq)
{
	u32 r;

	for (r = 0; r < 2; r++)
		writel(rxq->ring[r].fill & (rxq->ring[r].size - 1),
		       rxq->ring[r].prod);
}

/**
 * vx3_rx_queue_reset() - post buffers to an RX queue from position 0
 * @rxq: the queue; the device is not active
 * @qd: its queue descriptor
 *
 * Buffers still held from an earlier activation are posted again. A
 * queue with an AF_XDP pool takes what the fill ring has; an empty one
 * is filled when the queue is polled.
 *
 * Return: 0, or -ENOMEM if not a single head buffer could be posted.
 */
int vx3_rx_queue_reset(struct vx3_rx_queue *rxq,
		       struct vx3_rx_queue_desc *qd)
{
	u32 r;

	vx3_rx_queue_stop(rxq);
	rxq->qd = qd;
	/* Only the queue set that runs sets where the pool's buffers point */
	if (rxq->xsk_pool)
		xsk_pool_set_rxq_info(rxq->xsk_pool, &rxq->xdp_rxq);
	for (r = 0; r < 2; r++) {
		struct vx3_rx_ring *ring = &rxq->ring[r];

		memset(ring->desc, 0, ring->size * sizeof(*ring->desc));
		ring->fill = 0;
		ring->used = 0;
		vx3_rx_ring_refill(rxq, ring);
	}
	memset(rxq->comp, 0, rxq->comp_size * sizeof(*rxq->comp));
	rxq->comp_head = 0;

	return rxq->ring[0].fill || rxq->xsk_pool ? 0 : -ENOMEM;
}

/* Give a buffer the CPU has synced back to the device, to be posted again */
static void vx3_rx_buf_sync_for_device(struct vx3_rx_queue *rxq,
				       struct vx3_rx_buf *b, u32 offset,
				       u32 len)
{
	dma_sync_single_range_for_device(&rxq->priv->pdev->dev,
					 page_pool_get_dma_addr(b->page),
					 b->offset + offset, len,
					 page_pool_get_dma_dir(rxq->pp));
}

/* Turn a head buffer into an skb: copied into a new small skb up to
 * rx-copybreak (the buffer is then posted again), else the buffer itself
 * becomes the skb. A buffer that stays in its slot is synced back to the
 * device.
 */
static struct sk_buff *vx3_rx_head_skb(struct vx3_rx_queue *rxq,
				       struct vx3_rx_buf *b, u32 len)
{
	void *va = page_address(b->page) + b->offset;
	struct vx3_rx_ring *r = &rxq->ring[0];
	struct sk_buff *skb;

	page_pool_dma_sync_for_cpu(rxq->pp, b->page,
				   b->offset + rxq->headroom, len);

	if (len <= READ_ONCE(rxq->priv->copybreak)) {
		skb = napi_alloc_skb(rxq->napi, len);
		if (skb) {
			skb_copy_to_linear_data(skb, va + rxq->headroom, len);
			__skb_put(skb, len);
			/* Body pages may follow as frags */
			skb_mark_for_recycle(skb);
			vx3_rx_stat_inc(rxq, VX3_RXS_COPIED);
		}
		vx3_rx_buf_sync_for_device(rxq, b, rxq->headroom, len);
		return skb;
	}

	net_prefetch(va + rxq->headroom);
	skb = napi_build_skb(va, r->truesize);
	if (!skb) {
		vx3_rx_buf_sync_for_device(rxq, b, rxq->headroom, len);
		return NULL;
	}
	skb_reserve(skb, rxq->headroom);
	__skb_put(skb, len);
	skb_mark_for_recycle(skb);
	b->page = NULL;
	vx3_rx_stat_inc(rxq, VX3_RXS_BUILD_SKB);
	return skb;
}

/* Attach a body buffer; false if the skb has no room for another frag */
static bool vx3_rx_add_body(struct vx3_rx_queue *rxq, struct sk_buff *skb,
			    struct vx3_rx_buf *b, u32 len)
{
	struct skb_shared_info *sh = skb_shinfo(skb);

	if (!len)
		return true;
	if (sh->nr_frags >= MAX_SKB_FRAGS)
		return false;

	page_pool_dma_sync_for_cpu(rxq->pp, b->page, b->offset, len);
	skb_add_rx_frag(skb, sh->nr_frags, b->page, b->offset, len,
			rxq->ring[1].truesize);
	b->page = NULL;
	vx3_rx_stat_inc(rxq, VX3_RXS_BODY_BUFS);
	return true;
}

/* The device's aggregate of one TCP flow becomes a GSO skb, so that TCP
 * estimates the sender's MSS right. A revision-1 completion has no MSS:
 * the device's segments were at most MTU sized, so the MSS is taken as
 * the MTU less the IP and TCP headers. That guess is why revision 1
 * offers NETIF_F_LRO (which the core turns off for forwarding) and not
 * NETIF_F_GRO_HW.
 *
 * Return: true if @skb now carries GSO metadata.
 */
static bool vx3_rx_lro(struct vx3_rx_queue *rxq, struct sk_buff *skb,
		       unsigned int frame_len)
{
	unsigned int off = 0, nhlen, thlen, payload, mss;
	__be16 proto = skb->protocol;
	const struct tcphdr *th;
	u32 gso_type;
	int depth;

	/* With tag stripping off, up to two VLAN tags precede IP */
	for (depth = 0; eth_type_vlan(proto) && depth < 2; depth++) {
		const struct vlan_hdr *vh;

		if (!pskb_may_pull(skb, off + VLAN_HLEN))
			return false;
		vh = (const struct vlan_hdr *)(skb->data + off);
		proto = vh->h_vlan_encapsulated_proto;
		off += VLAN_HLEN;
	}

	if (proto == htons(ETH_P_IP)) {
		const struct iphdr *iph;

		if (!pskb_may_pull(skb, off + sizeof(*iph)))
			return false;
		iph = (const struct iphdr *)(skb->data + off);
		nhlen = iph->ihl * 4;
		if (nhlen < sizeof(*iph) || iph->protocol != IPPROTO_TCP ||
		    ip_is_fragment(iph))
			return false;
		gso_type = SKB_GSO_TCPV4;
	} else if (proto == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h;

		if (!pskb_may_pull(skb, off + sizeof(*ip6h)))
			return false;
		ip6h = (const struct ipv6hdr *)(skb->data + off);
		if (ip6h->nexthdr != IPPROTO_TCP)
			return false;
		nhlen = sizeof(*ip6h);
		gso_type = SKB_GSO_TCPV6;
	} else {
		return false;
	}

	if (!pskb_may_pull(skb, off + nhlen + sizeof(*th)))
		return false;
	th = (const struct tcphdr *)(skb->data + off + nhlen);
	thlen = th->doff * 4;
	if (thlen < sizeof(*th) || !pskb_may_pull(skb, off + nhlen + thlen))
		return false;
	th = (const struct tcphdr *)(skb->data + off + nhlen);

	if (rxq->mtu <= nhlen + thlen)
		return false;
	mss = rxq->mtu - nhlen - thlen;
	payload = skb->len - off - nhlen - thlen;
	/* One segment: a plain packet */
	if (payload <= mss)
		return false;

	if (th->cwr)
		gso_type |= SKB_GSO_TCP_ECN;
	skb_shinfo(skb)->gso_type = gso_type;
	skb_shinfo(skb)->gso_size = mss;
	skb_shinfo(skb)->gso_segs = DIV_ROUND_UP(payload, mss);

	u64_stats_update_begin(&rxq->stats.syncp);
	u64_stats_inc(&rxq->stats.cnt[VX3_RXS_LRO_PACKETS]);
	u64_stats_add(&rxq->stats.cnt[VX3_RXS_LRO_SEGS],
		      skb_shinfo(skb)->gso_segs);
	u64_stats_add(&rxq->stats.cnt[VX3_RXS_LRO_BYTES], frame_len);
	u64_stats_update_end(&rxq->stats.syncp);
	return true;
}

/* Drop the packet under assembly, if any, and count the drop once */
static void vx3_rx_drop(struct vx3_rx_queue *rxq, enum vx3_rx_stat idx,
			enum skb_drop_reason reason)
{
	if (rxq->skb) {
		kfree_skb_reason(rxq->skb, reason);
		rxq->skb = NULL;
	}
	if (rxq->in_xdp)
		vx3_xdp_free(rxq, true);
	vx3_rx_stat_inc(rxq, idx);
}

/* A packet is under assembly: its next buffer comes from ring 1 */
static bool vx3_rx_in_packet(const struct vx3_rx_queue *rxq)
{
	return rxq->skb || rxq->in_xdp || rxq->discard;
}

/* The device's RSS hash of a packet, with what it covers */
static void vx3_rx_hash(struct vx3_rx_queue *rxq, struct sk_buff *skb)
{
	switch (rxq->rss_type) {
	case VX3_RSS_TYPE_TCP_IPV4:
	case VX3_RSS_TYPE_TCP_IPV6:
		skb_set_hash(skb, rxq->rss_hash, PKT_HASH_TYPE_L4);
		break;
	case VX3_RSS_TYPE_IPV4:
	case VX3_RSS_TYPE_IPV6:
		skb_set_hash(skb, rxq->rss_hash, PKT_HASH_TYPE_L3);
		break;
	default:
		break;
	}
}

static void vx3_rx_deliver(struct vx3_rx_queue *rxq, u32 w0, u32 w3)
{
	struct net_device *netdev = rxq->netdev;
	struct sk_buff *skb = rxq->skb;
	unsigned int frame_len = skb->len;
	bool csum_ok;

	/* Byte counters count the frame from its Ethernet header on */
	skb->protocol = eth_type_trans(skb, netdev);

	csum_ok = (netdev->features & NETIF_F_RXCSUM) &&
		  !(w0 & VX3_RXC_CNC) && (w3 & VX3_RXC_TUC) &&
		  (w3 & (VX3_RXC_TCP | VX3_RXC_UDP));

	/* A TCP frame longer than the MTU (and two VLAN tags) is the
	 * device's aggregate: it goes up as GSO, so that TCP's estimate of
	 * the sender's MSS stays right. That holds for the aggregates that
	 * complete around an LRO switch too, while netdev->features does
	 * not say LRO yet or any more. While LRO is on, one that cannot be
	 * parsed is dropped; otherwise a long frame (a peer with a larger
	 * MTU) goes up as it is.
	 */
	if (skb->len > rxq->mtu + 2 * VLAN_HLEN && csum_ok &&
	    (w3 & VX3_RXC_TCP) && !vx3_rx_lro(rxq, skb, frame_len) &&
	    (netdev->features & NETIF_F_LRO)) {
		vx3_rx_drop(rxq, VX3_RXS_DROP_OVERSIZE,
			    SKB_DROP_REASON_PKT_TOO_BIG);
		return;
	}
	rxq->skb = NULL;

	if (csum_ok)
		skb->ip_summed = CHECKSUM_UNNECESSARY;
	else
		skb_checksum_none_assert(skb);
	skb_record_rx_queue(skb, rxq->qid);
	if (netdev->features & NETIF_F_RXHASH)
		vx3_rx_hash(rxq, skb);

	u64_stats_update_begin(&rxq->stats.syncp);
	u64_stats_inc(&rxq->stats.cnt[VX3_RXS_PACKETS]);
	u64_stats_add(&rxq->stats.cnt[VX3_RXS_BYTES], frame_len);
	u64_stats_inc(&rxq->stats.cnt[csum_ok ? VX3_RXS_CSUM_OK :
						VX3_RXS_CSUM_NONE]);
	u64_stats_update_end(&rxq->stats.syncp);

	napi_gro_receive(rxq->napi, skb);
}

/**
 * vx3_rx_clean() - process RX completions and refill the rings
 * @rxq: the queue
 * @budget: maximum number of packets to complete, delivered or dropped
 * @bad: set when the device broke the ring protocol; a reset is needed
 *
 * Head buffers come from ring 0 and start a packet; body buffers come
 * from ring 1 and continue one. The device uses each ring in order but
 * may pass over posted descriptors: a completion for a later index in
 * the posted window reclaims the ones before it, which are posted again.
 * A completion with another ring id, an index outside the posted window,
 * a length over the buffer or a broken SOP/EOP sequence is counted and
 * stops processing. While an XDP program is attached, a packet's buffers
 * are gathered into an xdp_buff for it instead (vx3_xdp.c), and an skb is
 * built only for XDP_PASS; the program is read once per poll.
 *
 * Return: the number of packets completed.
 */
int vx3_rx_clean(struct vx3_rx_queue *rxq, int budget, bool *bad)
{
	struct bpf_prog *prog = READ_ONCE(rxq->xdp_prog);
	u32 cmask = rxq->comp_size - 1;
	u32 consumed = 0, flush = 0;
	int done = 0;

	while (done < budget) {
		struct vx3_desc *c = &rxq->comp[rxq->comp_head & cmask];
		__le32 gen = vx3_ring_gen(rxq->comp_head, rxq->comp_size) ?
			     cpu_to_le32(VX3_COMP_GEN) : 0;
		u32 w0, w2, w3, rqid, idx, len, skip;
		struct vx3_rx_ring *r;
		struct vx3_rx_buf *b;
		bool sop, eop;

		/* An aggregate takes many body buffers: give buffers back
		 * to the device while the poll goes on, once the previous
		 * completion's buffer has been dealt with.
		 */
		if (consumed >= VX3_RX_REFILL_BATCH) {
			vx3_rx_ring_refill(rxq, &rxq->ring[0]);
			vx3_rx_ring_refill(rxq, &rxq->ring[1]);
			consumed = 0;
		}

		if ((READ_ONCE(c->w[3]) & cpu_to_le32(VX3_COMP_GEN)) != gen)
			break;
		dma_rmb();

		w0 = le32_to_cpu(c->w[0]);
		w2 = le32_to_cpu(c->w[2]);
		w3 = le32_to_cpu(c->w[3]);
		rqid = FIELD_GET(VX3_RXC_RQID, w0);
		idx = FIELD_GET(VX3_RXC_IDX, w0);
		len = FIELD_GET(VX3_RXC_LEN, w2);
		sop = w0 & VX3_RXC_SOP;
		eop = w0 & VX3_RXC_EOP;

		if (rqid == rxq->qid && sop && !vx3_rx_in_packet(rxq))
			r = &rxq->ring[0];
		else if (rqid == rxq->qid + rxq->num_rxq && !sop &&
			 vx3_rx_in_packet(rxq))
			r = &rxq->ring[1];
		else
			goto bad;
		skip = (idx - r->used) & (r->size - 1);
		if (idx >= r->size || skip >= r->fill - r->used ||
		    len > r->buf_len)
			goto bad;
		if (skip) {
			u64_stats_update_begin(&rxq->stats.syncp);
			u64_stats_add(&rxq->stats.cnt[VX3_RXS_SKIPPED], skip);
			u64_stats_update_end(&rxq->stats.syncp);
			r->used += skip;
			consumed += skip;
		}
		b = &r->buf[idx];
		r->used++;
		rxq->comp_head++;
		consumed++;

		if (sop) {
			if (len < ETH_HLEN) {
				vx3_rx_drop(rxq, VX3_RXS_DROP_ERR,
					    SKB_DROP_REASON_PKT_TOO_SMALL);
				rxq->discard = true;
			} else if (rxq->xsk_pool) {
				vx3_xsk_start(rxq, b, len);
			} else if (prog) {
				vx3_xdp_start(rxq, b, len);
			} else {
				rxq->skb = vx3_rx_head_skb(rxq, b, len);
				if (!rxq->skb)
					vx3_rx_drop(rxq, VX3_RXS_DROP_NOMEM,
						    SKB_DROP_REASON_NOMEM);
				rxq->discard = !rxq->skb;
			}
		} else if ((rxq->skb &&
			    !vx3_rx_add_body(rxq, rxq->skb, b, len)) ||
			   (rxq->in_xdp && !vx3_xdp_add_frag(rxq, b, len))) {
			vx3_rx_drop(rxq, VX3_RXS_DROP_FRAGS,
				    SKB_DROP_REASON_PKT_TOO_BIG);
			rxq->discard = true;
		}

		if (!eop)
			continue;

		done++;
		if (rxq->discard) {
			rxq->discard = false;
			continue;
		}
		if (w2 & VX3_RXC_ERR) {
			vx3_rx_drop(rxq, VX3_RXS_DROP_ERR,
				    SKB_DROP_REASON_DEV_HDR);
			continue;
		}
		rxq->rss_type = FIELD_GET(VX3_RXC_RSS_TYPE, w0);
		rxq->rss_hash = le32_to_cpu(c->w[1]);
		if (rxq->in_xdp && rxq->xsk_pool) {
			if (!vx3_xsk_run(rxq, prog, &flush))
				continue;
		} else if (rxq->in_xdp && !vx3_xdp_run(rxq, prog, &flush)) {
			continue;
		}
		vx3_rx_deliver(rxq, w0, w3);
	}

	vx3_xdp_flush(rxq, flush);
	vx3_rx_ring_refill(rxq, &rxq->ring[0]);
	vx3_rx_ring_refill(rxq, &rxq->ring[1]);
	/* Without head buffers the device drops every packet and need not
	 * raise an interrupt: try again a little later, without spinning.
	 * An AF_XDP socket that uses need_wakeup was asked to wake the
	 * queue (vx3_xsk_refill()), and does so whenever it waits.
	 */
	if (rxq->ring[0].fill == rxq->ring[0].used &&
	    !(rxq->xsk_pool && xsk_uses_need_wakeup(rxq->xsk_pool)))
		mod_timer(&rxq->refill_timer, jiffies + VX3_RX_REFILL_RETRY);
	return done;

bad:
	vx3_rx_drop(rxq, VX3_RXS_DROP_BAD, SKB_DROP_REASON_DEV_HDR);
	rxq->discard = false;
	vx3_xdp_flush(rxq, flush);
	*bad = true;
	return done;
}
