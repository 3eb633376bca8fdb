// SPDX-License-Identifier: GPL-2.0-only
/* vx3: AF_XDP zero-copy
 *
 * An RX queue with an AF_XDP buffer pool posts the pool's frames as its
 * ring 0 head buffers and leaves ring 1 empty: a frame must fit one
 * buffer, which the MTU check and LRO being off guarantee for what the
 * device builds itself (a longer frame of a peer ends with err = 1 and is
 * dropped). The XDP program runs on the pool's xdp_buff; XDP_REDIRECT to
 * the XSKMAP hands it to the socket without a copy. XDP_PASS copies the
 * frame into a new skb, XDP_TX copies it into an xdp_frame for the XDP
 * ring; the pool's buffer goes back to the pool either way.
 *
 * The queue's XDP ring doubles as the socket's TX ring: the NAPI poll
 * takes descriptors from the socket's TX ring and posts the frames where
 * they are in the UMEM; their completions are counted back to the socket
 * in order with the ring's other frames.
 *
 * Adding or removing a pool replaces the queues like any other
 * configuration change (vx3_reconfigure()): the pool is part of
 * struct vx3_cfg.
 */

#include <linux/bitfield.h>
#include <linux/bpf_trace.h>
#include <linux/filter.h>
#include <linux/if_vlan.h>
#include <net/xdp.h>
#include <net/xdp_sock_drv.h>

#include "vx3.h"

/* Buffers asked of the pool at once while filling ring 0 */
#define VX3_XSK_ALLOC_BATCH	32

/**
 * vx3_xsk_buf_len() - bytes of a frame one AF_XDP buffer holds
 * @pool: the pool
 *
 * Return: the length ring 0 descriptors are posted with.
 */
u32 vx3_xsk_buf_len(struct xsk_buff_pool *pool)
{
	return min_t(u32, xsk_pool_get_rx_frame_size(pool), VX3_RXD_MAX_LEN);
}

/* A frame of @mtu fits one of the pool's buffers, with two VLAN tags (vx3
 * strips none) and room for an FCS: what the AF_XDP core asks at bind
 */
static bool vx3_xsk_mtu_fits(struct xsk_buff_pool *pool, u32 mtu)
{
	return mtu + ETH_HLEN + 2 * VLAN_HLEN + ETH_FCS_LEN <=
	       vx3_xsk_buf_len(pool);
}

/**
 * vx3_xsk_any() - whether a configuration has an AF_XDP pool
 * @cfg: the configuration
 *
 * Return: true if any RX queue of @cfg takes its buffers from a pool.
 */
bool vx3_xsk_any(const struct vx3_cfg *cfg)
{
	u32 i;

	for (i = 0; i < VX3_MAX_RXQ; i++)
		if (cfg->xsk_pool[i])
			return true;
	return false;
}

/**
 * vx3_xsk_check_mtu() - whether an MTU suits every AF_XDP pool
 * @priv: driver private data
 * @mtu: the MTU
 *
 * Return: true if a frame of @mtu fits the buffers of every pool.
 */
bool vx3_xsk_check_mtu(const struct vx3_priv *priv, u32 mtu)
{
	u32 i;

	for (i = 0; i < VX3_MAX_RXQ; i++)
		if (priv->cfg.xsk_pool[i] &&
		    !vx3_xsk_mtu_fits(priv->cfg.xsk_pool[i], mtu))
			return false;
	return true;
}

static int vx3_xsk_enable(struct vx3_priv *priv, struct xsk_buff_pool *pool,
			  u16 qid, struct netlink_ext_ack *extack)
{
	struct net_device *netdev = priv->netdev;
	struct vx3_cfg cfg = priv->cfg;
	int err;

	if (qid >= VX3_MAX_RXQ || qid >= priv->cfg.num_rxq) {
		NL_SET_ERR_MSG_FMT_MOD(extack, "no RX queue %u", qid);
		return -EINVAL;
	}
	if (priv->cfg.xsk_pool[qid]) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "RX queue %u has an AF_XDP pool already",
				       qid);
		return -EBUSY;
	}
	if (!vx3_xsk_mtu_fits(pool, netdev->mtu)) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "MTU %u does not fit the AF_XDP frame of %u bytes",
				       netdev->mtu, vx3_xsk_buf_len(pool));
		return -EINVAL;
	}

	err = xsk_pool_dma_map(pool, &priv->pdev->dev, 0);
	if (err) {
		NL_SET_ERR_MSG_MOD(extack,
				   "cannot map the AF_XDP UMEM for DMA");
		return err;
	}
	/* The device does not aggregate for the new queues
	 * (vx3_write_shared()); LRO is off from now on until the last pool
	 * goes, and on again then if the user has it on
	 * (vx3_fix_features()).
	 */
	cfg.xsk_pool[qid] = pool;
	err = vx3_reconfigure(priv, &cfg, extack);
	if (err) {
		xsk_pool_dma_unmap(pool, 0);
		return err;
	}
	netdev_update_features(netdev);
	return 0;
}

static int vx3_xsk_disable(struct vx3_priv *priv, u16 qid,
			   struct netlink_ext_ack *extack)
{
	struct xsk_buff_pool *pool = priv->cfg.xsk_pool[qid];
	struct net_device *netdev = priv->netdev;
	struct vx3_cfg cfg = priv->cfg;
	int err;

	if (!pool)
		return 0;
	cfg.xsk_pool[qid] = NULL;
	err = vx3_reconfigure(priv, &cfg, extack);
	if (err) {
		/* The core frees the pool whatever vx3 answers: the queues
		 * that use it cannot stay. The interface stays up without
		 * queues and opens them again without the pool later.
		 */
		netdev_err(netdev, "cannot replace the queues of AF_XDP queue %u (%d), trying again later\n",
			   qid, err);
		vx3_close_queues(priv);
		priv->cfg = cfg;
		vx3_retry_later(priv);
	}
	xsk_pool_dma_unmap(pool, 0);
	netdev_update_features(netdev);
	return 0;
}

/**
 * vx3_xsk_setup_pool() - ndo_bpf XDP_SETUP_XSK_POOL
 * @priv: driver private data
 * @pool: the pool to use on @qid, NULL to stop using one
 * @qid: the RX queue
 *
 * The queues are replaced by ones that take their buffers from the pool
 * (or from the page_pool again), new ones first: on failure the old ones
 * keep running. Removing a pool cannot fail; if the new queues cannot be
 * started then, the interface stays up without queues and tries again
 * (vx3_retry_later()).
 *
 * The request the AF_XDP core passes carries no extack (struct
 * netdev_bpf has one for XDP_SETUP_PROG only): the reason for a refusal
 * is logged.
 *
 * Context: rtnl held.
 * Return: 0 or a negative errno.
 */
int vx3_xsk_setup_pool(struct vx3_priv *priv, struct xsk_buff_pool *pool,
		       u16 qid)
{
	struct netlink_ext_ack extack = {};
	int err;

	if (!pool)
		return qid < VX3_MAX_RXQ ? vx3_xsk_disable(priv, qid, &extack) :
					   0;
	err = vx3_xsk_enable(priv, pool, qid, &extack);
	if (err)
		netdev_err(priv->netdev, "AF_XDP zero-copy refused on queue %u: %s\n",
			   qid, extack._msg ?: "no reason given");
	return err;
}

/**
 * vx3_xsk_wakeup() - ndo_xsk_wakeup: poll an AF_XDP queue
 * @netdev: the net_device
 * @qid: the queue
 * @flags: XDP_WAKEUP_RX and/or XDP_WAKEUP_TX
 *
 * One NAPI poll fills ring 0 from the fill ring and sends what the TX
 * ring holds; it is scheduled unless it runs already. While the queues
 * are being replaced there is nothing to poll: the new ones are polled
 * once they start.
 *
 * Return: 0, -ENETDOWN if the interface is down, -EINVAL if @qid has no
 * pool.
 */
int vx3_xsk_wakeup(struct net_device *netdev, u32 qid, u32 flags)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	struct vx3_rx_queue *rxq;
	struct vx3_qset *qs;
	int err = 0;

	if (!netif_running(netdev))
		return -ENETDOWN;

	rcu_read_lock();
	qs = rcu_dereference(priv->xdp_qs);
	if (!qs)
		goto out;
	if (qid >= qs->num_rxq || !qs->vec[qid]->rx[0].xsk_pool) {
		err = -EINVAL;
		goto out;
	}
	rxq = &qs->vec[qid]->rx[0];
	if (!napi_if_scheduled_mark_missed(rxq->napi)) {
		local_bh_disable();
		napi_schedule(rxq->napi);
		local_bh_enable();
	}
out:
	rcu_read_unlock();
	return err;
}

/**
 * vx3_xsk_refill() - post the pool's buffers to every free slot of ring 0
 * @rxq: the queue, with an AF_XDP pool
 * @r: its ring 0
 *
 * A slot that still holds a buffer (a descriptor the device passed over)
 * posts it again. When the fill ring runs dry the socket is asked to wake
 * the queue (need_wakeup) once it has refilled it.
 */
void vx3_xsk_refill(struct vx3_rx_queue *rxq, struct vx3_rx_ring *r)
{
	struct xdp_buff *bufs[VX3_XSK_ALLOC_BATCH];
	struct xsk_buff_pool *pool = rxq->xsk_pool;
	u32 mask = r->size - 1, start = r->fill;
	u32 got = 0, i = 0;
	bool empty = false;

	while (r->fill - r->used < r->size - 1) {
		struct vx3_rx_buf *b = &r->buf[r->fill & mask];
		struct vx3_desc *d = &r->desc[r->fill & mask];
		u32 w2;

		if (!b->xsk) {
			if (i == got) {
				got = min_t(u32, VX3_XSK_ALLOC_BATCH,
					    r->size - 1 - (r->fill - r->used));
				got = xsk_buff_alloc_batch(pool, bufs, got);
				i = 0;
				if (!got) {
					empty = true;
					break;
				}
			}
			b->xsk = bufs[i++];
		}

		w2 = FIELD_PREP(VX3_RXD_LEN, r->buf_len) |
		     FIELD_PREP(VX3_RXD_BTYPE, r->btype);
		if (vx3_ring_gen(r->fill, r->size))
			w2 |= VX3_RXD_GEN;
		d->addr = cpu_to_le64(xsk_buff_xdp_get_dma(b->xsk));
		d->w[3] = 0;
		dma_wmb();
		d->w[2] = cpu_to_le32(w2);
		r->fill++;
	}
	/* Slots further on still held buffers */
	while (i < got)
		xsk_buff_free(bufs[i++]);

	if (empty)
		vx3_xdp_stat_add(rxq, VX3_RXS_XSK_ALLOC_FAIL, 1);
	if (xsk_uses_need_wakeup(pool)) {
		if (empty)
			xsk_set_rx_need_wakeup(pool);
		else
			xsk_clear_rx_need_wakeup(pool);
	}
	if (r->fill != start && rxq->qd && READ_ONCE(rxq->qd->update_prod))
		writel(r->fill & mask, r->prod);
}

/**
 * vx3_xsk_ring_free() - give every buffer of a stopped ring to the pool
 * @rxq: the queue, with an AF_XDP pool; the device no longer touches it
 * @r: the ring
 */
void vx3_xsk_ring_free(struct vx3_rx_queue *rxq, struct vx3_rx_ring *r)
{
	u32 i;

	for (i = 0; r->buf && i < r->size; i++) {
		if (!r->buf[i].xsk)
			continue;
		xsk_buff_free(r->buf[i].xsk);
		r->buf[i].xsk = NULL;
	}
}

/**
 * vx3_xsk_start() - take a received AF_XDP buffer out of its slot
 * @rxq: the RX queue
 * @b: the ring 0 slot
 * @len: bytes the device wrote into it
 */
void vx3_xsk_start(struct vx3_rx_queue *rxq, struct vx3_rx_buf *b, u32 len)
{
	struct xdp_buff *xdp = b->xsk;

	xsk_buff_set_size(xdp, len);
	xsk_buff_dma_sync_for_cpu(xdp);
	net_prefetch(xdp->data);
	rxq->xsk_buf = xdp;
	rxq->in_xdp = true;
	b->xsk = NULL;
}

/**
 * vx3_xsk_free() - give the packet's AF_XDP buffer back to the pool
 * @rxq: the RX queue, with a packet started by vx3_xsk_start()
 */
void vx3_xsk_free(struct vx3_rx_queue *rxq)
{
	xsk_buff_free(rxq->xsk_buf);
	rxq->xsk_buf = NULL;
	rxq->in_xdp = false;
}

/* XDP_PASS, or no program: the stack gets a copy, metadata included */
static struct sk_buff *vx3_xsk_copy_skb(struct vx3_rx_queue *rxq)
{
	struct xdp_buff *xdp = rxq->xsk_buf;
	u32 metalen = xdp->data - xdp->data_meta;
	u32 len = xdp->data_end - xdp->data_meta;
	struct sk_buff *skb;

	skb = napi_alloc_skb(rxq->napi, len);
	if (!skb)
		return NULL;
	skb_put_data(skb, xdp->data_meta, len);
	if (metalen) {
		__skb_pull(skb, metalen);
		skb_metadata_set(skb, metalen);
	}
	vx3_xsk_free(rxq);
	vx3_xdp_stat_add(rxq, VX3_RXS_XSK_COPIED, 1);
	return skb;
}

/* XDP_TX: the frame is copied out of the pool's buffer (which goes back
 * to the pool) and sent on the XDP ring like a frame of ndo_xdp_xmit
 */
static bool vx3_xsk_tx(struct vx3_rx_queue *rxq)
{
	struct vx3_tx_ring *tx = &rxq->xdp_tx;
	struct xdp_frame *frame;
	int err;

	frame = xdp_convert_zc_to_xdp_frame(rxq->xsk_buf);
	if (!frame) {
		vx3_xsk_free(rxq);
		return false;
	}
	/* The conversion returned the buffer to the pool */
	rxq->xsk_buf = NULL;
	rxq->in_xdp = false;

	spin_lock(&tx->xdp_lock);
	err = vx3_xdp_post(tx, frame, VX3_TX_XDP_XMIT);
	if (err && err != -ENOMEM) {
		u64_stats_update_begin(&tx->stats.syncp);
		u64_stats_inc(&tx->stats.cnt[VX3_TXS_DROPS]);
		u64_stats_update_end(&tx->stats.syncp);
	}
	spin_unlock(&tx->xdp_lock);
	if (err)
		xdp_return_frame(frame);
	return !err;
}

/**
 * vx3_xsk_run() - run the XDP program on an AF_XDP buffer, act on it
 * @rxq: the RX queue, with a complete packet in @rxq->xsk_buf
 * @prog: the program, read once for this poll; may be NULL
 * @flush: collects what vx3_xdp_flush() has to do at the end of the poll
 *
 * Without a program the packet goes to the stack.
 *
 * Return: true with a copy in @rxq->skb, ready for delivery; false if
 * the packet was consumed (redirected, sent or dropped).
 */
bool vx3_xsk_run(struct vx3_rx_queue *rxq, struct bpf_prog *prog,
		 u32 *flush)
{
	struct xdp_buff *xdp = rxq->xsk_buf;
	enum vx3_rx_stat stat;
	u32 act = XDP_PASS;
	u32 len;

	if (prog)
		act = bpf_prog_run_xdp(prog, xdp);
	len = xdp->data_end - xdp->data;

	switch (act) {
	case XDP_PASS:
		rxq->skb = vx3_xsk_copy_skb(rxq);
		if (!rxq->skb) {
			vx3_xsk_free(rxq);
			vx3_xdp_stat_add(rxq, VX3_RXS_DROP_NOMEM, 1);
			return false;
		}
		if (prog) {
			vx3_xdp_stat_add(rxq, VX3_RXS_XDP_PASS, 1);
			vx3_xdp_stat_add(rxq, VX3_RXS_XDP_PASS_BYTES, len);
		}
		return true;
	case XDP_REDIRECT:
		if (!xdp_do_redirect(rxq->netdev, xdp, prog)) {
			rxq->xsk_buf = NULL;
			rxq->in_xdp = false;
			*flush |= VX3_XDP_FLUSH_REDIRECT;
			stat = VX3_RXS_XDP_REDIRECT;
			break;
		}
		vx3_xdp_stat_add(rxq, VX3_RXS_XDP_REDIRECT_ERR, 1);
		vx3_xsk_free(rxq);
		return false;
	case XDP_TX:
		if (vx3_xsk_tx(rxq)) {
			*flush |= VX3_XDP_FLUSH_TX;
			stat = VX3_RXS_XDP_TX;
			break;
		}
		trace_xdp_exception(rxq->netdev, prog, act);
		vx3_xdp_stat_add(rxq, VX3_RXS_XDP_TX_ERR, 1);
		return false;
	default:
		bpf_warn_invalid_xdp_action(rxq->netdev, prog, act);
		fallthrough;
	case XDP_ABORTED:
		trace_xdp_exception(rxq->netdev, prog, act);
		stat = VX3_RXS_XDP_ABORTED;
		vx3_xsk_free(rxq);
		break;
	case XDP_DROP:
		stat = VX3_RXS_XDP_DROP;
		vx3_xsk_free(rxq);
		break;
	}

	vx3_xdp_count(rxq, stat, len);
	return false;
}

/* What a frame's TX metadata asks of its descriptors */
struct vx3_xsk_tx_md {
	u32 len;
	u32 w2;
	u32 w3;
};

/* XDP_TXMD_FLAGS_CHECKSUM: a request the device cannot do is ignored and
 * the frame goes out as the socket wrote it, as with a device without
 * the offload (the core gives no way to report it).
 */
static void vx3_xsk_request_csum(u16 start, u16 offset, void *arg)
{
	struct vx3_xsk_tx_md *md = arg;

	vx3_tx_csum_fields(start, offset, md->len, &md->w2, &md->w3);
}

const struct xsk_tx_metadata_ops vx3_xsk_tx_metadata_ops = {
	.tmo_request_checksum = vx3_xsk_request_csum,
};

/**
 * vx3_xsk_xmit() - send what the AF_XDP socket's TX ring holds
 * @rxq: the RX queue, whose XDP ring has an AF_XDP pool
 * @budget: the most frames to take (NAPI budget, not 0)
 *
 * The frames are sent from the UMEM where they are, one descriptor per
 * VX3_TXD_MAX_LEN bytes, with the checksum offload their TX metadata
 * asks for; vx3_tx_clean() reports their completions to the socket.
 *
 * Return: true if @budget frames were taken and more may wait.
 */
bool vx3_xsk_xmit(struct vx3_rx_queue *rxq, int budget)
{
	struct vx3_tx_ring *tx = &rxq->xdp_tx;
	struct xsk_buff_pool *pool = tx->xsk_pool;
	u32 per_frame, max, n, i;
	struct xdp_desc *descs;

	/* Descriptors the longest frame takes */
	per_frame = DIV_ROUND_UP(xsk_pool_get_chunk_size(pool),
				 VX3_TXD_MAX_LEN);

	spin_lock(&tx->xdp_lock);
	max = min_t(u32, budget, vx3_tx_free_desc(tx) / per_frame);
	n = max ? xsk_tx_peek_release_desc_batch(pool, max) : 0;
	/* Read only now: a pool that an RX-only socket created gets its
	 * descriptor array when a socket with a TX ring binds to it
	 * (shared UMEM), possibly while this poll runs
	 */
	descs = pool->tx_descs;
	for (i = 0; i < n; i++) {
		struct vx3_xsk_tx_md md = { .len = descs[i].len };
		u32 first = tx->head, pos = first, eop;
		struct xdp_desc_ctx ctx;

		ctx = xsk_buff_raw_get_ctx(pool, descs[i].addr,
					   descs[i].options);
		xsk_tx_metadata_request(pool, &ctx.meta,
					&vx3_xsk_tx_metadata_ops, &md);
		xsk_buff_raw_dma_sync_for_device(pool, ctx.dma, descs[i].len);
		vx3_tx_post(tx, &pos, ctx.dma, descs[i].len, VX3_TX_MAP_NONE,
			    md.w2, md.w3, first);
		eop = (pos - 1) & (tx->size - 1);
		tx->desc[eop].w[3] |= cpu_to_le32(VX3_TXD_EOP | VX3_TXD_CQ);
		tx->buf[eop].xsk = pool;
		tx->buf[eop].type = VX3_TX_XSK;
		/* Reported to the socket at completion */
		tx->buf[eop].len = descs[i].len;
		WRITE_ONCE(tx->head, pos);
		vx3_tx_publish(tx, first, 1, false);
	}
	if (n) {
		u64_stats_update_begin(&tx->stats.syncp);
		u64_stats_add(&tx->stats.cnt[VX3_TXS_XSK_XMIT], n);
		u64_stats_update_end(&tx->stats.syncp);
		vx3_tx_kick(tx);
	}
	spin_unlock(&tx->xdp_lock);

	if (xsk_uses_need_wakeup(pool))
		xsk_set_tx_need_wakeup(pool);
	return n == budget;
}
