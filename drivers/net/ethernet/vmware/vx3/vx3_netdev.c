// SPDX-License-Identifier: GPL-2.0-only
/* vx3: net_device operations, features, receive filters and statistics */

#include <linux/bitfield.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/unaligned.h>
#include <net/tcp.h>
#include <net/netdev_queues.h>

#include "vx3.h"

static int vx3_set_rx_mode_async(struct net_device *netdev,
				 struct netdev_hw_addr_list *uc,
				 struct netdev_hw_addr_list *mc)
{
	vx3_write_rx_filters(netdev_priv(netdev), mc);
	return 0;
}

static void vx3_vlan_filter_update(struct net_device *netdev, __be16 proto,
				   u16 vid, bool add)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	if (proto == htons(ETH_P_8021AD))
		assign_bit(vid, priv->active_svlans, add);
	else
		assign_bit(vid, priv->active_vlans, add);
	vx3_write_vlan_filter(priv);
}

static int vx3_vlan_rx_add_vid(struct net_device *netdev, __be16 proto,
			       u16 vid)
{
	vx3_vlan_filter_update(netdev, proto, vid, true);
	return 0;
}

static int vx3_vlan_rx_kill_vid(struct net_device *netdev, __be16 proto,
				u16 vid)
{
	vx3_vlan_filter_update(netdev, proto, vid, false);
	return 0;
}

static netdev_features_t vx3_fix_features(struct net_device *netdev,
					  netdev_features_t features)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	/* The device aggregates only with RX checksum offload on, and an
	 * XDP program without frags support cannot take its aggregates.
	 */
	if (!(features & NETIF_F_RXCSUM) ||
	    (priv->xdp_prog && !priv->xdp_prog->aux->xdp_has_frags))
		features &= ~NETIF_F_LRO;
	/* Nor can an AF_XDP zero-copy queue, whose frames are one buffer */
	if ((features & NETIF_F_LRO) && vx3_xsk_any(&priv->cfg)) {
		netdev_warn_once(netdev, "LRO stays off while an AF_XDP zero-copy socket is bound\n");
		features &= ~NETIF_F_LRO;
	}
	return features;
}

static int vx3_set_features(struct net_device *netdev,
			    netdev_features_t features)
{
	netdev_features_t changed = netdev->features ^ features;
	struct vx3_priv *priv = netdev_priv(netdev);

	if (changed & (NETIF_F_RXCSUM | NETIF_F_LRO))
		vx3_write_features(priv, features);
	/* The core removes the VLAN IDs only after this returns, with the
	 * old features still set: the table follows priv->vlan_filter.
	 */
	if (changed & NETIF_F_HW_VLAN_CTAG_FILTER) {
		priv->vlan_filter = !!(features & NETIF_F_HW_VLAN_CTAG_FILTER);
		vx3_write_vlan_filter(priv);
	}
	return 0;
}

static netdev_features_t vx3_features_check(struct sk_buff *skb,
					    struct net_device *netdev,
					    netdev_features_t features)
{
	u32 max_desc = VX3_TX_MAX_DESC;
	bool gso = skb_is_gso(skb);

	/* The interface's limits: a checksum field in the first 1024 bytes,
	 * a 10-bit header length and a 14-bit MSS for TSO
	 */
	if (skb->ip_summed == CHECKSUM_PARTIAL &&
	    skb_checksum_start_offset(skb) + skb->csum_offset >
	    VX3_TX_MAX_CSUM_END)
		features &= ~(NETIF_F_CSUM_MASK | NETIF_F_GSO_MASK);
	if (gso &&
	    (skb_shinfo(skb)->gso_size > FIELD_MAX(VX3_TXD_MSSCOF) ||
	     skb_tcp_all_headers(skb) > FIELD_MAX(VX3_TXD_HLEN)))
		features &= ~NETIF_F_GSO_MASK;
	/* and at most 16 descriptors for a packet, 24 for a packet the
	 * device segments; a segment of the stack's GSO may take as many as
	 * the whole. The core linearises a longer packet, or segments it
	 * into linear packets.
	 */
	if (gso && net_gso_ok(features, skb_shinfo(skb)->gso_type))
		max_desc = VX3_TX_MAX_DESC_TSO;
	if (vx3_tx_desc_count(skb) > max_desc)
		features &= ~(NETIF_F_SG | NETIF_F_GSO_MASK);
	return vlan_features_check(skb, features);
}

static int vx3_set_mac_address(struct net_device *netdev, void *p)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	int err;

	err = eth_prepare_mac_addr_change(netdev, p);
	if (err)
		return err;
	eth_commit_mac_addr_change(netdev, p);
	vx3_write_mac(priv);
	return 0;
}

/**
 * vx3_stats_fetch() - read a consistent snapshot of a counter array
 * @cnt: the counters
 * @syncp: their writer's sync
 * @out: @n values
 * @n: number of counters
 */
void vx3_stats_fetch(const u64_stats_t *cnt,
		     const struct u64_stats_sync *syncp, u64 *out,
		     unsigned int n)
{
	unsigned int start, i;

	do {
		start = u64_stats_fetch_begin(syncp);
		for (i = 0; i < n; i++)
			out[i] = u64_stats_read(&cnt[i]);
	} while (u64_stats_fetch_retry(syncp, start));
}

/* Add a queue's counters to totals */
static void vx3_stats_sum(u64 *sum, const u64_stats_t *cnt,
			  const struct u64_stats_sync *syncp, unsigned int n)
{
	u64 val[VX3_STATS_MAX];
	unsigned int i;

	vx3_stats_fetch(cnt, syncp, val, n);
	for (i = 0; i < n; i++)
		sum[i] += val[i];
}

static void vx3_stats_add_tx(const struct vx3_tx_ring *tx,
			     struct vx3_base_stats *t)
{
	vx3_stats_sum(t->tx, tx->stats.cnt, &tx->stats.syncp, VX3_TXS_NUM);
	vx3_stats_sum(t->txc, tx->cstats.cnt, &tx->cstats.syncp,
		      VX3_TXCS_NUM);
}

/* Add the counters of the XDP rings of @qs to @t: the stack does not know
 * them as queues, so they count in the device's base totals.
 */
static void vx3_stats_add_xdp(struct vx3_qset *qs, struct vx3_base_stats *t)
{
	u32 i;

	for (i = 0; qs && i < qs->num_rxq; i++)
		vx3_stats_add_tx(&qs->vec[i]->rx[0].xdp_tx, t);
}

/* Add the counters of every queue of @qs to @t */
static void vx3_stats_add_qset(struct vx3_qset *qs, struct vx3_base_stats *t)
{
	u32 i, r;

	for (i = 0; qs && i < qs->num_vec; i++) {
		struct vx3_vector *vec = qs->vec[i];

		vx3_stats_add_tx(&vec->tx, t);
		for (r = 0; r < vec->num_rx; r++)
			vx3_stats_sum(t->rx, vec->rx[r].stats.cnt,
				      &vec->rx[r].stats.syncp, VX3_RXS_NUM);
	}
	vx3_stats_add_xdp(qs, t);
}

/* Totals of the freed queues plus those of @qs; caller holds stats_lock */
static void vx3_stats_totals(struct vx3_priv *priv, struct vx3_qset *qs,
			     struct vx3_base_stats *t)
{
	*t = priv->base;
	vx3_stats_add_qset(qs, t);
}

/**
 * vx3_swap_qset() - make a queue set the one statistics are read from
 * @priv: driver private data
 * @qs: the new queue set, or NULL
 *
 * The counters of the old set move into the base counters, so totals
 * never go backwards across reconfiguration. The old set must be down.
 *
 * Return: the old queue set, or NULL.
 */
struct vx3_qset *vx3_swap_qset(struct vx3_priv *priv, struct vx3_qset *qs)
{
	struct vx3_qset *old = priv->qs;

	spin_lock_bh(&priv->stats_lock);
	vx3_stats_totals(priv, old, &priv->base);
	priv->qs = qs;
	spin_unlock_bh(&priv->stats_lock);
	return old;
}

/**
 * vx3_unswap_qset() - go back to the queue set a failed switch replaced
 * @priv: driver private data
 * @old: the queue set vx3_swap_qset() replaced, stopped since then
 * @base: the base counters from before that swap
 *
 * The counters of @old go on from where they stopped, so they leave the
 * base again; what the set that failed to start counted (allocation
 * failures while posting its RX buffers) stays in.
 *
 * Return: the queue set that failed to start.
 */
static struct vx3_qset *vx3_unswap_qset(struct vx3_priv *priv,
					struct vx3_qset *old,
					const struct vx3_base_stats *base)
{
	struct vx3_qset *new = priv->qs;

	spin_lock_bh(&priv->stats_lock);
	priv->base = *base;
	vx3_stats_add_qset(new, &priv->base);
	priv->qs = old;
	spin_unlock_bh(&priv->stats_lock);
	return new;
}

/**
 * vx3_open_queues() - allocate the queues of the configuration and start
 * @priv: driver private data
 *
 * Context: rtnl held.
 * Return: 0, or a negative errno with nothing allocated.
 */
int vx3_open_queues(struct vx3_priv *priv)
{
	struct vx3_qset *qs;
	int err;

	priv->cfg.mtu = priv->netdev->mtu;
	qs = vx3_alloc_qset(priv, &priv->cfg);
	if (!qs)
		return -ENOMEM;

	vx3_swap_qset(priv, qs);
	err = vx3_up(priv, qs);
	if (err) {
		vx3_swap_qset(priv, NULL);
		vx3_free_qset(priv, qs);
	}
	return err;
}

/**
 * vx3_close_queues() - stop the device and free the queues
 * @priv: driver private data
 *
 * Context: rtnl held.
 */
void vx3_close_queues(struct vx3_priv *priv)
{
	/* A failed reset has already taken the queues down */
	if (!priv->qs)
		return;
	vx3_down(priv, priv->qs);
	/* No event interrupt can turn the carrier on again now */
	netif_carrier_off(priv->netdev);
	vx3_free_qset(priv, vx3_swap_qset(priv, NULL));
}

static int vx3_open(struct net_device *netdev)
{
	return vx3_open_queues(netdev_priv(netdev));
}

static int vx3_stop(struct net_device *netdev)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	/* A reset asked for now finds the interface closed */
	timer_delete_sync(&priv->reset_timer);
	priv->retries = 0;
	vx3_close_queues(priv);
	return 0;
}

/**
 * vx3_reconfigure() - switch to a new queue and buffer configuration
 * @priv: driver private data
 * @cfg: the new configuration
 * @extack: netlink extended ACK for errors, may be NULL
 *
 * The new queues are allocated before the running ones are stopped; if
 * anything fails the old configuration keeps running. The interface is
 * not closed and the carrier stays as it is: the queues are swapped under
 * a quiesced datapath, and the link state read after the activation
 * decides.
 *
 * Context: rtnl held.
 * Return: 0 on success, negative errno on failure.
 */
int vx3_reconfigure(struct vx3_priv *priv, const struct vx3_cfg *cfg,
		    struct netlink_ext_ack *extack)
{
	struct net_device *netdev = priv->netdev;
	struct vx3_base_stats base;
	struct vx3_qset *new, *old;
	int err;

	if (!netif_running(netdev) || !priv->qs) {
		priv->cfg = *cfg;
		WRITE_ONCE(netdev->mtu, cfg->mtu);
		/* Up without queues (vx3_retry_later()): try the new one now */
		if (netif_running(netdev))
			vx3_schedule_reset(priv);
		return 0;
	}

	new = vx3_alloc_qset(priv, cfg);
	if (!new) {
		NL_SET_ERR_MSG_MOD(extack,
				   "not enough memory for the new queues, configuration unchanged");
		if (!extack)
			netdev_err(netdev, "not enough memory for the new queues, configuration unchanged\n");
		return -ENOMEM;
	}

	old = priv->qs;
	vx3_down(priv, old);
	WRITE_ONCE(netdev->mtu, cfg->mtu);
	/* Written under rtnl only: no stats_lock needed to read it here */
	base = priv->base;
	vx3_swap_qset(priv, new);
	err = vx3_up(priv, new);
	if (err) {
		WRITE_ONCE(netdev->mtu, priv->cfg.mtu);
		vx3_free_qset(priv, vx3_unswap_qset(priv, old, &base));
		if (vx3_up(priv, old)) {
			NL_SET_ERR_MSG_MOD(extack,
					   "cannot start the new configuration or the old one, retrying the old one");
			netdev_err(netdev, "cannot start the new configuration or the old one (%d), trying again later\n",
				   err);
			vx3_free_qset(priv, vx3_swap_qset(priv, NULL));
			vx3_retry_later(priv);
			return err;
		}
		NL_SET_ERR_MSG_MOD(extack,
				   "cannot start the new configuration, old one restored");
		netdev_err(netdev, "cannot start the new configuration (%d), old one restored\n",
			   err);
		return err;
	}

	priv->cfg = *cfg;
	vx3_free_qset(priv, old);
	return 0;
}

static int vx3_change_mtu(struct net_device *netdev, int new_mtu)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	struct vx3_cfg cfg = priv->cfg;

	if (priv->xdp_prog && !priv->xdp_prog->aux->xdp_has_frags &&
	    new_mtu > vx3_xdp_max_mtu()) {
		netdev_err(netdev, "MTU %d is too large for the attached XDP program without frags support (at most %u)\n",
			   new_mtu, vx3_xdp_max_mtu());
		return -EINVAL;
	}

	if (!vx3_xsk_check_mtu(priv, new_mtu)) {
		netdev_err(netdev, "MTU %d does not fit the frames of a bound AF_XDP zero-copy socket\n",
			   new_mtu);
		return -EINVAL;
	}

	cfg.mtu = new_mtu;
	return vx3_reconfigure(priv, &cfg, NULL);
}

static void vx3_tx_timeout(struct net_device *netdev, unsigned int txqueue)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	netdev_err(netdev, "TX queue %u timed out\n", txqueue);
	vx3_schedule_reset(priv);
}

static void vx3_get_stats64(struct net_device *netdev,
			    struct rtnl_link_stats64 *stats)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	struct vx3_hw_stats hw;
	struct vx3_base_stats t;

	spin_lock_bh(&priv->stats_lock);
	vx3_read_hw_stats(priv, priv->qs, &hw);
	vx3_stats_totals(priv, priv->qs, &t);
	spin_unlock_bh(&priv->stats_lock);

	stats->rx_packets = t.rx[VX3_RXS_PACKETS];
	stats->rx_bytes = t.rx[VX3_RXS_BYTES];
	/* Each drop is counted once: errors the device or its completions
	 * report, frames too long for the MTU, packets vx3 had no memory or
	 * frags for, XDP_REDIRECT frames their target refused (an XDP_TX
	 * frame the XDP ring could not take is in tx_dropped); the device's
	 * own buffer exhaustion is rx_missed_errors.
	 */
	stats->rx_length_errors = t.rx[VX3_RXS_DROP_OVERSIZE];
	stats->rx_errors = t.rx[VX3_RXS_DROP_ERR] + t.rx[VX3_RXS_DROP_BAD] +
			   t.rx[VX3_RXS_DROP_OVERSIZE];
	stats->rx_dropped = t.rx[VX3_RXS_DROP_NOMEM] +
			    t.rx[VX3_RXS_DROP_FRAGS] +
			    t.rx[VX3_RXS_XDP_REDIRECT_ERR];
	stats->rx_missed_errors = hw.rx_out_of_buf;

	/* What the device completed, as in the queue statistics; that
	 * includes the packets it failed to send, which it counts per device
	 * and not per queue: they are in tx_errors and tx_dropped as well.
	 */
	stats->tx_packets = t.txc[VX3_TXCS_PACKETS];
	stats->tx_bytes = t.txc[VX3_TXCS_BYTES];
	stats->tx_dropped = t.tx[VX3_TXS_MAP_ERR] + t.tx[VX3_TXS_DROPS] +
			    hw.tx_discards;
	stats->tx_errors = hw.tx_errors;
}

static void vx3_fill_queue_stats_rx(struct netdev_queue_stats_rx *stats,
				    const u64 *c)
{
	stats->packets = c[VX3_RXS_PACKETS];
	stats->bytes = c[VX3_RXS_BYTES];
	stats->alloc_fail = c[VX3_RXS_ALLOC_FAIL];
	stats->csum_unnecessary = c[VX3_RXS_CSUM_OK];
	stats->csum_none = c[VX3_RXS_CSUM_NONE];
}

static void vx3_fill_queue_stats_tx(struct netdev_queue_stats_tx *stats,
				    const u64 *t, const u64 *c)
{
	stats->packets = c[VX3_TXCS_PACKETS];
	stats->bytes = c[VX3_TXCS_BYTES];
	stats->hw_gso_packets = t[VX3_TXS_TSO];
	stats->needs_csum = t[VX3_TXS_CSUM] + t[VX3_TXS_TSO];
	stats->stop = t[VX3_TXS_STOPS];
	stats->wake = c[VX3_TXCS_WAKES];
}

static void vx3_get_queue_stats_rx(struct net_device *netdev, int idx,
				   struct netdev_queue_stats_rx *stats)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	struct vx3_rx_queue *rxq;
	u64 c[VX3_RXS_NUM];

	/* Called under rtnl, which also guards priv->qs. The core asks for
	 * every real queue when it sums the device totals, also while the
	 * interface is down and has no queues: leave those undefined.
	 */
	if (!priv->qs || idx >= priv->qs->num_rxq)
		return;
	rxq = &priv->qs->vec[idx]->rx[0];
	vx3_stats_fetch(rxq->stats.cnt, &rxq->stats.syncp, c, VX3_RXS_NUM);
	vx3_fill_queue_stats_rx(stats, c);
}

static void vx3_get_queue_stats_tx(struct net_device *netdev, int idx,
				   struct netdev_queue_stats_tx *stats)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	u64 t[VX3_TXS_NUM], c[VX3_TXCS_NUM];
	struct vx3_tx_ring *tx;

	if (!priv->qs || idx >= priv->qs->num_vec)
		return;
	tx = &priv->qs->vec[idx]->tx;
	vx3_stats_fetch(tx->stats.cnt, &tx->stats.syncp, t, VX3_TXS_NUM);
	vx3_stats_fetch(tx->cstats.cnt, &tx->cstats.syncp, c, VX3_TXCS_NUM);
	vx3_fill_queue_stats_tx(stats, t, c);
}

/* Counters of freed queues, and the device's drops, which it counts per
 * device rather than per queue set
 */
static void vx3_get_base_stats(struct net_device *netdev,
			       struct netdev_queue_stats_rx *rx,
			       struct netdev_queue_stats_tx *tx)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	struct vx3_base_stats b = priv->base;
	struct vx3_hw_stats hw;

	/* Under rtnl, like every change of priv->qs and priv->base */
	vx3_stats_add_xdp(priv->qs, &b);
	vx3_fill_queue_stats_rx(rx, b.rx);
	vx3_fill_queue_stats_tx(tx, b.tx, b.txc);

	spin_lock_bh(&priv->stats_lock);
	vx3_read_hw_stats(priv, priv->qs, &hw);
	spin_unlock_bh(&priv->stats_lock);
	rx->hw_drops = hw.rx_out_of_buf;
	rx->hw_drop_overruns = hw.rx_out_of_buf;
	tx->hw_drops = hw.tx_errors + hw.tx_discards;
	tx->hw_drop_errors = hw.tx_errors;
}

static const struct netdev_stat_ops vx3_stat_ops = {
	.get_queue_stats_rx	= vx3_get_queue_stats_rx,
	.get_queue_stats_tx	= vx3_get_queue_stats_tx,
	.get_base_stats		= vx3_get_base_stats,
};

static const struct net_device_ops vx3_netdev_ops = {
	.ndo_open		= vx3_open,
	.ndo_stop		= vx3_stop,
	.ndo_start_xmit		= vx3_start_xmit,
	.ndo_features_check	= vx3_features_check,
	.ndo_get_stats64	= vx3_get_stats64,
	.ndo_set_rx_mode_async	= vx3_set_rx_mode_async,
	.ndo_work		= vx3_work,
	.ndo_set_mac_address	= vx3_set_mac_address,
	.ndo_validate_addr	= eth_validate_addr,
	.ndo_change_mtu		= vx3_change_mtu,
	.ndo_vlan_rx_add_vid	= vx3_vlan_rx_add_vid,
	.ndo_vlan_rx_kill_vid	= vx3_vlan_rx_kill_vid,
	.ndo_fix_features	= vx3_fix_features,
	.ndo_set_features	= vx3_set_features,
	.ndo_tx_timeout		= vx3_tx_timeout,
	.ndo_bpf		= vx3_bpf,
	.ndo_xdp_xmit		= vx3_xdp_xmit,
	.ndo_xsk_wakeup		= vx3_xsk_wakeup,
};

/**
 * vx3_alloc_netdev() - allocate and set up the net_device
 * @pdev: the PCI device
 *
 * Return: the net_device with its private data initialised, or NULL.
 */
struct net_device *vx3_alloc_netdev(struct pci_dev *pdev)
{
	struct net_device *netdev;
	struct vx3_priv *priv;

	netdev = alloc_etherdev_mqs(sizeof(*priv), VX3_MAX_STACK_TXQ,
				    VX3_MAX_RXQ);
	if (!netdev)
		return NULL;
	SET_NETDEV_DEV(netdev, &pdev->dev);

	priv = netdev_priv(netdev);
	priv->netdev = netdev;
	priv->pdev = pdev;
	spin_lock_init(&priv->cmd_lock);
	spin_lock_init(&priv->stats_lock);
	priv->msg_enable = netif_msg_init(-1, NETIF_MSG_DRV | NETIF_MSG_PROBE |
					  NETIF_MSG_LINK);
	priv->copybreak = VX3_RX_COPYBREAK_DEFAULT;
	priv->cfg.num_txq = 1;
	priv->cfg.num_rxq = 1;
	priv->cfg.tx_ring = VX3_TX_RING_DEFAULT;
	priv->cfg.rx_ring[0] = VX3_RX_RING_DEFAULT;
	priv->cfg.rx_ring[1] = VX3_RX_BODY_RING_DEFAULT;
	priv->cfg.mtu = ETH_DATA_LEN;

	netdev->netdev_ops = &vx3_netdev_ops;
	netdev->stat_ops = &vx3_stat_ops;
	netdev->ethtool_ops = &vx3_ethtool_ops;
	netdev->xdp_metadata_ops = &vx3_xdp_metadata_ops;
	netdev->xsk_tx_metadata_ops = &vx3_xsk_tx_metadata_ops;
	netdev->watchdog_timeo = 5 * HZ;
	netdev->min_mtu = ETH_MIN_MTU;
	netdev->max_mtu = VX3_MAX_MTU;
	netdev->priv_flags |= IFF_LIVE_ADDR_CHANGE;

	/* Revision 1 reports no MSS for its aggregates: they cannot be
	 * resegmented into the original packets, so they are LRO, not
	 * GRO_HW. The device strips 802.1ad outer tags as well as 802.1Q
	 * ones without saying which: tag stripping is not offered. Its VLAN
	 * filter works on the outer tag of either kind. RXHASH passes on the
	 * device's RSS hash, which it computes with more than one RX queue.
	 */
	netdev->hw_features = NETIF_F_SG | NETIF_F_IP_CSUM | NETIF_F_IPV6_CSUM |
			      NETIF_F_TSO | NETIF_F_TSO6 | NETIF_F_RXCSUM |
			      NETIF_F_LRO | NETIF_F_HW_VLAN_CTAG_TX |
			      NETIF_F_HW_VLAN_CTAG_FILTER | NETIF_F_RXHASH;
	netdev->features = netdev->hw_features | NETIF_F_HIGHDMA |
			   NETIF_F_HW_VLAN_STAG_FILTER;
	netdev->vlan_features = NETIF_F_SG | NETIF_F_IP_CSUM |
				NETIF_F_IPV6_CSUM | NETIF_F_TSO |
				NETIF_F_TSO6 | NETIF_F_HIGHDMA;
	priv->vlan_filter = !!(netdev->features & NETIF_F_HW_VLAN_CTAG_FILTER);
	netdev->xdp_features = NETDEV_XDP_ACT_BASIC | NETDEV_XDP_ACT_REDIRECT |
			       NETDEV_XDP_ACT_NDO_XMIT | NETDEV_XDP_ACT_RX_SG |
			       NETDEV_XDP_ACT_NDO_XMIT_SG |
			       NETDEV_XDP_ACT_XSK_ZEROCOPY;
	return netdev;
}
