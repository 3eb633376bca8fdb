// SPDX-License-Identifier: GPL-2.0-only
/* vx3: XDP: the XDP ring and what uses it
 *
 * XDP_TX and frames redirected to vx3 leave on the XDP ring: a device TX
 * queue of its own, behind the stack's queues, completed by the NAPI
 * context of the RX queue (and by a producer that finds it full). The
 * device has eight TX queues and a vx3 interface at most seven stack
 * ones, so the ring always exists while the interface is up: XDP_TX never
 * takes a stack queue's lock or its BQL budget, and ndo_xdp_xmit works
 * with or without a program. Its producers (XDP_TX from the RX poll,
 * ndo_xdp_xmit from any CPU) and its completion take the ring's xdp_lock.
 */

#include <linux/bpf.h>
#include <linux/bpf_trace.h>
#include <linux/filter.h>
#include <net/page_pool/helpers.h>
#include <net/xdp.h>

#include "vx3.h"

/**
 * vx3_xdp_max_mtu() - the largest MTU a single-buffer program can take
 *
 * Return: the MTU whose VLAN-tagged frames still fit one head buffer
 * behind XDP_PACKET_HEADROOM.
 */
u32 vx3_xdp_max_mtu(void)
{
	return vx3_rx_head_buf_len(VX3_MAX_MTU, VX3_RX_XDP_HEADROOM) -
	       VLAN_ETH_HLEN;
}

/**
 * vx3_xdp_stat_add() - add to an RX queue counter
 * @rxq: the RX queue
 * @idx: the counter
 * @val: what to add
 *
 * Context: the queue's NAPI poll, or with it disabled.
 */
void vx3_xdp_stat_add(struct vx3_rx_queue *rxq, enum vx3_rx_stat idx,
		      u64 val)
{
	u64_stats_update_begin(&rxq->stats.syncp);
	u64_stats_add(&rxq->stats.cnt[idx], val);
	u64_stats_update_end(&rxq->stats.syncp);
}

/* Called with the XDP ring's xdp_lock held */
static void vx3_xdp_tx_stat_add(struct vx3_tx_ring *tx, enum vx3_tx_stat idx,
				u64 val)
{
	u64_stats_update_begin(&tx->stats.syncp);
	u64_stats_add(&tx->stats.cnt[idx], val);
	u64_stats_update_end(&tx->stats.syncp);
}

/**
 * vx3_xdp_start() - start a packet for the XDP program with its head buffer
 * @rxq: the RX queue
 * @b: the ring 0 slot; its buffer moves into @rxq->xdp
 * @len: bytes the device wrote into it
 */
void vx3_xdp_start(struct vx3_rx_queue *rxq, struct vx3_rx_buf *b, u32 len)
{
	void *va = page_address(b->page) + b->offset;

	page_pool_dma_sync_for_cpu(rxq->pp, b->page,
				   b->offset + rxq->headroom, len);
	net_prefetch(va + rxq->headroom);
	xdp_init_buff(&rxq->xdp, rxq->ring[0].truesize, &rxq->xdp_rxq);
	xdp_prepare_buff(&rxq->xdp, va, rxq->headroom, len, true);
	b->page = NULL;
	rxq->in_xdp = true;
}

/**
 * vx3_xdp_add_frag() - add a body buffer to the packet for the program
 * @rxq: the RX queue, with a packet started by vx3_xdp_start()
 * @b: the ring 1 slot; its buffer moves into @rxq->xdp
 * @len: bytes the device wrote into it
 *
 * Return: false if the packet has no room for another frag.
 */
bool vx3_xdp_add_frag(struct vx3_rx_queue *rxq, struct vx3_rx_buf *b,
		      u32 len)
{
	struct xdp_buff *xdp = &rxq->xdp;
	struct skb_shared_info *sinfo;

	if (!len)
		return true;
	/* An AF_XDP frame is one buffer */
	if (rxq->xsk_pool)
		return false;
	sinfo = xdp_get_shared_info_from_buff(xdp);
	if (!xdp_buff_has_frags(xdp)) {
		sinfo->nr_frags = 0;
		sinfo->xdp_frags_size = 0;
		xdp_buff_set_frags_flag(xdp);
	}
	if (sinfo->nr_frags >= MAX_SKB_FRAGS)
		return false;

	page_pool_dma_sync_for_cpu(rxq->pp, b->page, b->offset, len);
	__skb_fill_page_desc_noacc(sinfo, sinfo->nr_frags++, b->page,
				   b->offset, len);
	sinfo->xdp_frags_size += len;
	if (page_is_pfmemalloc(b->page))
		xdp_buff_set_frag_pfmemalloc(xdp);
	b->page = NULL;
	vx3_xdp_stat_add(rxq, VX3_RXS_BODY_BUFS, 1);
	return true;
}

/**
 * vx3_xdp_free() - return the buffers of the packet for the program
 * @rxq: the RX queue, with a packet started by vx3_xdp_start()
 * @napi: called from the queue's NAPI poll: recycle into the pool's cache
 */
void vx3_xdp_free(struct vx3_rx_queue *rxq, bool napi)
{
	struct xdp_buff *xdp = &rxq->xdp;
	struct skb_shared_info *sinfo;
	u32 i;

	if (rxq->xsk_pool) {
		vx3_xsk_free(rxq);
		return;
	}
	if (xdp_buff_has_frags(xdp)) {
		sinfo = xdp_get_shared_info_from_buff(xdp);
		for (i = 0; i < sinfo->nr_frags; i++)
			page_pool_put_full_page(rxq->pp,
						skb_frag_page(&sinfo->frags[i]),
						napi);
	}
	page_pool_put_full_page(rxq->pp, virt_to_page(xdp->data_hard_start),
				napi);
	rxq->in_xdp = false;
}

/* XDP_PASS: the skb is built on the buffers, where the program left the
 * packet (data, data_end, metadata, frags).
 */
static struct sk_buff *vx3_xdp_build_skb(struct vx3_rx_queue *rxq)
{
	struct xdp_buff *xdp = &rxq->xdp;
	u32 metalen = xdp->data - xdp->data_meta;
	u32 nr_frags = 0, frags_size = 0;
	struct skb_shared_info *sinfo;
	struct sk_buff *skb;

	/* napi_build_skb() clears these fields of the shared info */
	sinfo = xdp_get_shared_info_from_buff(xdp);
	if (xdp_buff_has_frags(xdp)) {
		nr_frags = sinfo->nr_frags;
		frags_size = sinfo->xdp_frags_size;
	}

	skb = napi_build_skb(xdp->data_hard_start, xdp->frame_sz);
	if (!skb)
		return NULL;
	skb_reserve(skb, xdp->data - xdp->data_hard_start);
	__skb_put(skb, xdp->data_end - xdp->data);
	if (metalen)
		skb_metadata_set(skb, metalen);
	skb_mark_for_recycle(skb);
	if (nr_frags)
		xdp_update_skb_frags_info(skb, nr_frags, frags_size,
					  nr_frags * rxq->ring[1].truesize,
					  xdp_buff_get_skb_flags(xdp));
	rxq->in_xdp = false;
	vx3_xdp_stat_add(rxq, VX3_RXS_BUILD_SKB, 1);
	return skb;
}

/**
 * vx3_xdp_post() - put one frame on the XDP ring
 * @tx: the XDP ring, its xdp_lock held
 * @frame: the frame
 * @type: VX3_TX_XDP_TX or VX3_TX_XDP_XMIT
 *
 * Every piece of the frame takes one descriptor per VX3_TXD_MAX_LEN
 * bytes. An XDP_TX frame lives in this queue's page_pool, mapped
 * bidirectionally: it is only synced. A frame from ndo_xdp_xmit is
 * mapped here and unmapped at completion.
 *
 * Return: 0, -EMSGSIZE if the frame takes more descriptors than the
 * device allows a packet, -ENOSPC if the ring is full or -ENOMEM if a
 * mapping failed (counted as map_err).
 */
int vx3_xdp_post(struct vx3_tx_ring *tx, struct xdp_frame *frame,
		 enum vx3_tx_type type)
{
	u32 first = tx->head, pos = first, need, nr_frags = 0, i;
	struct skb_shared_info *sinfo = NULL;
	struct device *dev = tx->dev;
	enum vx3_tx_map map;
	dma_addr_t dma;
	u32 eop;

	need = DIV_ROUND_UP(frame->len, VX3_TXD_MAX_LEN);
	if (xdp_frame_has_frags(frame)) {
		sinfo = xdp_get_shared_info_from_frame(frame);
		nr_frags = sinfo->nr_frags;
		for (i = 0; i < nr_frags; i++)
			need += DIV_ROUND_UP(skb_frag_size(&sinfo->frags[i]),
					     VX3_TXD_MAX_LEN);
	}
	if (need > VX3_TX_MAX_DESC)
		return -EMSGSIZE;
	/* The device may have completed frames the RX queue's NAPI has not
	 * reclaimed yet (a redirect flood from another CPU outruns it), or
	 * the ring may hold frames still waiting for their doorbell (a poll
	 * of XDP_TX frames as long as the ring): ring for those and reclaim
	 * what the device completed before giving up. A broken completion is
	 * left for the NAPI poll, which resets the device.
	 */
	if (need > vx3_tx_free_desc(tx)) {
		vx3_tx_kick(tx);
		vx3_tx_clean(tx, 0);
	}
	if (need > vx3_tx_free_desc(tx))
		return -ENOSPC;

	for (i = 0; i <= nr_frags; i++) {
		skb_frag_t *frag = i ? &sinfo->frags[i - 1] : NULL;
		u32 len = frag ? skb_frag_size(frag) : frame->len;
		struct page *page;

		if (type == VX3_TX_XDP_TX) {
			page = frag ? skb_frag_page(frag) :
				      virt_to_page(frame->data);
			dma = page_pool_get_dma_addr(page) +
			      (frag ? skb_frag_off(frag) :
				      offset_in_page(frame->data));
			dma_sync_single_for_device(dev, dma, len,
						   DMA_BIDIRECTIONAL);
			map = VX3_TX_MAP_NONE;
		} else if (frag) {
			dma = skb_frag_dma_map(dev, frag, 0, len,
					       DMA_TO_DEVICE);
			map = VX3_TX_MAP_PAGE;
		} else {
			dma = dma_map_single(dev, frame->data, len,
					     DMA_TO_DEVICE);
			map = VX3_TX_MAP_SINGLE;
		}
		if (dma_mapping_error(dev, dma)) {
			vx3_tx_unwind(tx, first, pos);
			vx3_xdp_tx_stat_add(tx, VX3_TXS_MAP_ERR, 1);
			return -ENOMEM;
		}
		vx3_tx_post(tx, &pos, dma, len, map, 0, 0, first);
	}

	eop = (pos - 1) & (tx->size - 1);
	tx->desc[eop].w[3] |= cpu_to_le32(VX3_TXD_EOP | VX3_TXD_CQ);
	tx->buf[eop].frame = frame;
	tx->buf[eop].type = type;
	WRITE_ONCE(tx->head, pos);
	vx3_tx_publish(tx, first, 1, false);
	vx3_xdp_tx_stat_add(tx, type == VX3_TX_XDP_TX ? VX3_TXS_XDP_TX :
						      VX3_TXS_XDP_XMIT, 1);
	return 0;
}

/* XDP_TX: send the packet back out on the XDP ring */
static bool vx3_xdp_tx(struct vx3_rx_queue *rxq)
{
	struct vx3_tx_ring *tx = &rxq->xdp_tx;
	struct xdp_frame *frame;
	int err;

	frame = xdp_convert_buff_to_frame(&rxq->xdp);
	if (!frame)
		return false;

	spin_lock(&tx->xdp_lock);
	err = vx3_xdp_post(tx, frame, VX3_TX_XDP_TX);
	if (err && err != -ENOMEM)
		vx3_xdp_tx_stat_add(tx, VX3_TXS_DROPS, 1);
	spin_unlock(&tx->xdp_lock);
	return !err;
}

/**
 * vx3_xdp_count() - count a packet the program consumed
 * @rxq: the RX queue
 * @stat: the verdict's packet counter; its byte counter follows it
 * @len: the packet's length
 *
 * Packets the stack never sees still count as received.
 *
 * Context: the queue's NAPI poll.
 */
void vx3_xdp_count(struct vx3_rx_queue *rxq, enum vx3_rx_stat stat,
		   u32 len)
{
	u64_stats_update_begin(&rxq->stats.syncp);
	u64_stats_inc(&rxq->stats.cnt[stat]);
	u64_stats_add(&rxq->stats.cnt[stat + 1], len);
	u64_stats_inc(&rxq->stats.cnt[VX3_RXS_PACKETS]);
	u64_stats_add(&rxq->stats.cnt[VX3_RXS_BYTES], len);
	u64_stats_update_end(&rxq->stats.syncp);
}

/**
 * vx3_xdp_run() - run the XDP program on the packet and act on its verdict
 * @rxq: the RX queue, with a complete packet in @rxq->xdp
 * @prog: the program, read once for this poll
 * @flush: collects what vx3_xdp_flush() has to do at the end of the poll
 *
 * A program without frags support never sees a multi-buffer packet: such
 * a packet (a peer's frame longer than the MTU) is dropped.
 *
 * Return: true for XDP_PASS with the skb in @rxq->skb, ready for delivery;
 * false if the packet was consumed (sent, redirected or dropped).
 */
bool vx3_xdp_run(struct vx3_rx_queue *rxq, struct bpf_prog *prog,
		 u32 *flush)
{
	struct xdp_buff *xdp = &rxq->xdp;
	enum vx3_rx_stat stat;
	u32 act, len;

	if (xdp_buff_has_frags(xdp) && !prog->aux->xdp_has_frags) {
		vx3_xdp_free(rxq, true);
		vx3_xdp_stat_add(rxq, VX3_RXS_DROP_OVERSIZE, 1);
		return false;
	}

	act = bpf_prog_run_xdp(prog, xdp);
	len = xdp_get_buff_len(xdp);

	switch (act) {
	case XDP_PASS:
		rxq->skb = vx3_xdp_build_skb(rxq);
		if (!rxq->skb) {
			vx3_xdp_free(rxq, true);
			vx3_xdp_stat_add(rxq, VX3_RXS_DROP_NOMEM, 1);
			return false;
		}
		vx3_xdp_stat_add(rxq, VX3_RXS_XDP_PASS, 1);
		vx3_xdp_stat_add(rxq, VX3_RXS_XDP_PASS_BYTES, len);
		return true;
	case XDP_TX:
		if (vx3_xdp_tx(rxq)) {
			rxq->in_xdp = false;
			*flush |= VX3_XDP_FLUSH_TX;
			stat = VX3_RXS_XDP_TX;
			break;
		}
		trace_xdp_exception(rxq->netdev, prog, act);
		vx3_xdp_stat_add(rxq, VX3_RXS_XDP_TX_ERR, 1);
		vx3_xdp_free(rxq, true);
		return false;
	case XDP_REDIRECT:
		if (!xdp_do_redirect(rxq->netdev, xdp, prog)) {
			rxq->in_xdp = false;
			*flush |= VX3_XDP_FLUSH_REDIRECT;
			stat = VX3_RXS_XDP_REDIRECT;
			break;
		}
		vx3_xdp_stat_add(rxq, VX3_RXS_XDP_REDIRECT_ERR, 1);
		vx3_xdp_free(rxq, true);
		return false;
	default:
		bpf_warn_invalid_xdp_action(rxq->netdev, prog, act);
		fallthrough;
	case XDP_ABORTED:
		trace_xdp_exception(rxq->netdev, prog, act);
		stat = VX3_RXS_XDP_ABORTED;
		vx3_xdp_free(rxq, true);
		break;
	case XDP_DROP:
		stat = VX3_RXS_XDP_DROP;
		vx3_xdp_free(rxq, true);
		break;
	}

	vx3_xdp_count(rxq, stat, len);
	return false;
}

/**
 * vx3_xdp_tx_clean() - reclaim the XDP ring's completed frames
 * @rxq: the RX queue that owns the ring
 * @budget: NAPI budget (not 0)
 *
 * Called from the RX queue's NAPI poll; producers reclaim under the same
 * lock when the ring is full.
 *
 * Return: false if the device broke the completion protocol.
 */
bool vx3_xdp_tx_clean(struct vx3_rx_queue *rxq, int budget)
{
	struct vx3_tx_ring *tx = &rxq->xdp_tx;
	bool ok;

	spin_lock(&tx->xdp_lock);
	ok = vx3_tx_clean(tx, budget);
	spin_unlock(&tx->xdp_lock);
	return ok;
}

/**
 * vx3_xdp_flush() - end an RX poll's XDP work
 * @rxq: the RX queue
 * @flush: what vx3_xdp_run() collected during the poll
 *
 * Redirected frames are flushed to their targets once per poll, and the
 * XDP ring's doorbell rung once for the XDP_TX frames.
 */
void vx3_xdp_flush(struct vx3_rx_queue *rxq, u32 flush)
{
	struct vx3_tx_ring *tx = &rxq->xdp_tx;

	if (flush & VX3_XDP_FLUSH_REDIRECT)
		xdp_do_flush();
	if (flush & VX3_XDP_FLUSH_TX) {
		spin_lock(&tx->xdp_lock);
		vx3_tx_kick(tx);
		spin_unlock(&tx->xdp_lock);
	}
}

/**
 * vx3_xdp_xmit() - send frames redirected to vx3 (ndo_xdp_xmit)
 * @netdev: the net_device
 * @n: number of frames
 * @frames: the frames
 * @flags: XDP_XMIT_FLUSH to ring the doorbell
 *
 * Return: the number of frames queued (the caller frees the others), or
 * a negative errno if none could be.
 */
int vx3_xdp_xmit(struct net_device *netdev, int n, struct xdp_frame **frames,
		 u32 flags)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	struct vx3_tx_ring *tx;
	struct vx3_qset *qs;
	int sent, err = 0;

	if (unlikely(flags & ~XDP_XMIT_FLAGS_MASK))
		return -EINVAL;

	/* vx3_down() clears the pointer and waits for a grace period. The
	 * CPU picks the XDP ring: the same one for a CPU's whole bulk.
	 */
	rcu_read_lock();
	qs = rcu_dereference(priv->xdp_qs);
	if (!qs) {
		rcu_read_unlock();
		return -ENETDOWN;
	}
	tx = &qs->vec[smp_processor_id() % qs->num_rxq]->rx[0].xdp_tx;

	spin_lock(&tx->xdp_lock);
	for (sent = 0; sent < n; sent++) {
		err = vx3_xdp_post(tx, frames[sent], VX3_TX_XDP_XMIT);
		if (err)
			break;
	}
	/* A frame that could not be mapped counts as map_err only; the
	 * frames behind it are not tried and count as drops
	 */
	if (sent < n)
		vx3_xdp_tx_stat_add(tx, VX3_TXS_DROPS,
				    n - sent - (err == -ENOMEM));
	if (flags & XDP_XMIT_FLUSH)
		vx3_tx_kick(tx);
	spin_unlock(&tx->xdp_lock);
	rcu_read_unlock();
	return sent;
}

/* Attach, replace or detach the program. The program runs on the
 * page_pool buffers the device received into: the head buffer, with
 * XDP_PACKET_HEADROOM while a program is attached, and for jumbo frames
 * and aggregates body pages as frags of a multi-buffer xdp_buff. XDP_PASS
 * builds the skb on those buffers, as the path without a program does;
 * XDP_DROP returns them to the page_pool.
 *
 * Attaching or detaching changes the RX buffers (headroom, DMA
 * direction): the queues are replaced the way a ring size change replaces
 * them, new ones first. Replacing a program by another swaps the pointer
 * only.
 */
static int vx3_xdp_setup(struct vx3_priv *priv, struct bpf_prog *prog,
			 struct netlink_ext_ack *extack)
{
	struct net_device *netdev = priv->netdev;
	struct bpf_prog *old = priv->xdp_prog;
	struct vx3_cfg cfg = priv->cfg;
	int err;

	if (prog && !prog->aux->xdp_has_frags &&
	    netdev->mtu > vx3_xdp_max_mtu()) {
		/* At most NETLINK_MAX_FMTMSG_LEN characters */
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "MTU %u above %u needs an XDP program with frags support",
				       netdev->mtu, vx3_xdp_max_mtu());
		return -EOPNOTSUPP;
	}

	cfg.xdp = !!prog;
	cfg.mtu = netdev->mtu;
	priv->xdp_prog = prog;
	/* LRO is off while a program without frags support is attached: the
	 * device stops aggregating before the program sees a packet. What a
	 * detach or a frags-aware program allows again comes back after the
	 * old program stopped running, below.
	 */
	if (prog && !prog->aux->xdp_has_frags)
		netdev_update_features(netdev);
	if (cfg.xdp != priv->cfg.xdp) {
		err = vx3_reconfigure(priv, &cfg, extack);
		if (err) {
			priv->xdp_prog = old;
			netdev_update_features(netdev);
			return err;
		}
	} else if (priv->qs) {
		u32 i;

		for (i = 0; i < priv->qs->num_rxq; i++)
			WRITE_ONCE(priv->qs->vec[i]->rx[0].xdp_prog, prog);
	}
	if (old)
		bpf_prog_put(old);

	netdev_update_features(netdev);
	return 0;
}

/* bpf_xdp_metadata_rx_hash(): the device's RSS hash of the packet the
 * program runs on, from its EOP completion
 */
static int vx3_xdp_rx_hash(const struct xdp_md *ctx, u32 *hash,
			   enum xdp_rss_hash_type *rss_type)
{
	const struct xdp_buff *xdp = (const struct xdp_buff *)ctx;
	/* AF_XDP buffers are not rxq->xdp: go by the queue's rxq_info */
	const struct vx3_rx_queue *rxq =
		container_of(xdp->rxq, struct vx3_rx_queue, xdp_rxq);

	if (!(rxq->netdev->features & NETIF_F_RXHASH))
		return -ENODATA;
	switch (rxq->rss_type) {
	case VX3_RSS_TYPE_IPV4:
		*rss_type = XDP_RSS_TYPE_L3_IPV4;
		break;
	case VX3_RSS_TYPE_TCP_IPV4:
		*rss_type = XDP_RSS_TYPE_L4_IPV4_TCP;
		break;
	case VX3_RSS_TYPE_IPV6:
		*rss_type = XDP_RSS_TYPE_L3_IPV6;
		break;
	case VX3_RSS_TYPE_TCP_IPV6:
		*rss_type = XDP_RSS_TYPE_L4_IPV6_TCP;
		break;
	default:
		return -ENODATA;
	}
	*hash = rxq->rss_hash;
	return 0;
}

const struct xdp_metadata_ops vx3_xdp_metadata_ops = {
	.xmo_rx_hash	= vx3_xdp_rx_hash,
};

/**
 * vx3_bpf() - ndo_bpf: attach or detach an XDP program
 * @netdev: the net_device
 * @bpf: the command
 *
 * Context: rtnl held.
 * Return: 0 or a negative errno, with the reason in @bpf->extack for a
 * program, in the kernel log for an AF_XDP pool.
 */
int vx3_bpf(struct net_device *netdev, struct netdev_bpf *bpf)
{
	switch (bpf->command) {
	case XDP_SETUP_PROG:
		return vx3_xdp_setup(netdev_priv(netdev), bpf->prog,
				     bpf->extack);
	case XDP_SETUP_XSK_POOL:
		return vx3_xsk_setup_pool(netdev_priv(netdev),
					  bpf->xsk.pool, bpf->xsk.queue_id);
	default:
		return -EINVAL;
	}
}
