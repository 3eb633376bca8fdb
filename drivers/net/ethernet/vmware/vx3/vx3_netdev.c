// SPDX-License-Identifier: GPL-2.0-only
/* vx3: net_device operations, features, receive filters and statistics */

#include <linux/bitfield.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/unaligned.h>
#include <net/tcp.h>
#include <net/netdev_queues.h>

#include "vx3.h"

/* The stats structures are u64 counters followed by their syncp */
#define VX3_NUM_STATS(type) (offsetof(type, syncp) / sizeof(u64))

/**
 * vx3_upt_features() - the device offloads matching a feature set
 * @features: netdev features
 *
 * The device aggregates (LRO) only together with RX checksum offload.
 *
 * Return: VX3_F_* bits for the DriverShared uptFeatures field.
 */
u64 vx3_upt_features(netdev_features_t features)
{
	u64 upt = 0;

	if (features & NETIF_F_RXCSUM)
		upt |= VX3_F_RXCSUM;
	if (features & NETIF_F_HW_VLAN_CTAG_RX)
		upt |= VX3_F_RXVLAN;
	if ((features & NETIF_F_GRO_HW) && (features & NETIF_F_RXCSUM))
		upt |= VX3_F_LRO;
	return upt;
}

/* Caller holds cmd_lock */
static void vx3_write_vlan_table(struct vx3_priv *priv)
{
	__le32 *vf = priv->shared->vf_table;
	u32 i;

	for (i = 0; i < VX3_VF_TABLE_WORDS; i++) {
		u32 word = U32_MAX;

		if (priv->vlan_filter)
			word = bitmap_read(priv->active_vlans, i * 32, 32);
		vf[i] = cpu_to_le32(word);
	}
	/* VLAN 0 carries priority tagged frames */
	vf[0] |= cpu_to_le32(BIT(0));
	if (priv->active)
		vx3_cmd_noread(priv, VX3_CMD_UPDATE_VLAN_FILTERS);
}

/**
 * vx3_write_rx_filters() - program rx mode, multicast and VLAN filters
 * @priv: driver private data
 *
 * Context: the address list lock of the net_device is held.
 */
void vx3_write_rx_filters(struct vx3_priv *priv)
{
	struct net_device *netdev = priv->netdev;
	u32 mode = VX3_RXM_UCAST | VX3_RXM_BCAST;
	struct netdev_hw_addr *ha;
	unsigned long flags;
	u32 n = 0;

	if (netdev->flags & IFF_PROMISC) {
		mode |= VX3_RXM_PROMISC;
	} else if ((netdev->flags & IFF_ALLMULTI) ||
		   netdev_mc_count(netdev) > VX3_MF_TABLE_ENTRIES) {
		mode |= VX3_RXM_ALL_MULTI;
	} else if (!netdev_mc_empty(netdev)) {
		mode |= VX3_RXM_MCAST;
		netdev_for_each_mc_addr(ha, netdev)
			ether_addr_copy(priv->mf_table + ETH_ALEN * n++,
					ha->addr);
	}

	spin_lock_irqsave(&priv->cmd_lock, flags);
	priv->shared->mf_table_len = cpu_to_le16(n * ETH_ALEN);
	priv->shared->rx_mode = cpu_to_le32(mode);
	vx3_write_vlan_table(priv);
	if (priv->active) {
		vx3_cmd_noread(priv, VX3_CMD_UPDATE_MAC_FILTERS);
		vx3_cmd_noread(priv, VX3_CMD_UPDATE_RX_MODE);
	}
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
}

static void vx3_set_rx_mode(struct net_device *netdev)
{
	vx3_write_rx_filters(netdev_priv(netdev));
}

static void vx3_vlan_filter_update(struct net_device *netdev, u16 vid,
				   bool add)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	unsigned long flags;

	assign_bit(vid, priv->active_vlans, add);
	spin_lock_irqsave(&priv->cmd_lock, flags);
	vx3_write_vlan_table(priv);
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
}

static int vx3_vlan_rx_add_vid(struct net_device *netdev, __be16 proto,
			       u16 vid)
{
	vx3_vlan_filter_update(netdev, vid, true);
	return 0;
}

static int vx3_vlan_rx_kill_vid(struct net_device *netdev, __be16 proto,
				u16 vid)
{
	vx3_vlan_filter_update(netdev, vid, false);
	return 0;
}

static netdev_features_t vx3_fix_features(struct net_device *netdev,
					  netdev_features_t features)
{
	/* The device aggregates only with RX checksum offload on */
	if (!(features & NETIF_F_RXCSUM))
		features &= ~NETIF_F_GRO_HW;
	return features;
}

static int vx3_set_features(struct net_device *netdev,
			    netdev_features_t features)
{
	netdev_features_t changed = netdev->features ^ features;
	struct vx3_priv *priv = netdev_priv(netdev);
	unsigned long flags;

	spin_lock_irqsave(&priv->cmd_lock, flags);
	if (changed & (NETIF_F_RXCSUM | NETIF_F_GRO_HW |
		       NETIF_F_HW_VLAN_CTAG_RX)) {
		priv->shared->upt_features =
			cpu_to_le64(vx3_upt_features(features));
		if (priv->active)
			vx3_cmd_noread(priv, VX3_CMD_UPDATE_FEATURE);
	}
	/* The core removes the VLAN IDs only after this returns, with the
	 * old features still set: the table follows priv->vlan_filter.
	 */
	if (changed & NETIF_F_HW_VLAN_CTAG_FILTER) {
		priv->vlan_filter = !!(features & NETIF_F_HW_VLAN_CTAG_FILTER);
		vx3_write_vlan_table(priv);
	}
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
	return 0;
}

static netdev_features_t vx3_features_check(struct sk_buff *skb,
					    struct net_device *netdev,
					    netdev_features_t features)
{
	/* The descriptor holds a 10-bit header length and a 14-bit MSS */
	if (skb->ip_summed == CHECKSUM_PARTIAL &&
	    skb_checksum_start_offset(skb) > FIELD_MAX(VX3_TXD_HLEN))
		features &= ~(NETIF_F_CSUM_MASK | NETIF_F_GSO_MASK);
	if (skb_is_gso(skb) &&
	    (skb_shinfo(skb)->gso_size > FIELD_MAX(VX3_TXD_MSSCOF) ||
	     skb_tcp_all_headers(skb) > FIELD_MAX(VX3_TXD_HLEN)))
		features &= ~NETIF_F_GSO_MASK;
	return vlan_features_check(skb, features);
}

static int vx3_set_mac_address(struct net_device *netdev, void *p)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	unsigned long flags;
	int err;

	err = eth_prepare_mac_addr_change(netdev, p);
	if (err)
		return err;
	eth_commit_mac_addr_change(netdev, p);

	spin_lock_irqsave(&priv->cmd_lock, flags);
	writel(get_unaligned_le32(netdev->dev_addr),
	       priv->bar1 + VX3_REG_MACL);
	writel(get_unaligned_le16(netdev->dev_addr + 4),
	       priv->bar1 + VX3_REG_MACH);
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
	return 0;
}

static void vx3_stats_copy(void *dst, const void *src, size_t n)
{
	const u64 *s = src;
	u64 *d = dst;
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = s[i];
}

/* Add @n counters of @src to @dst and clear them in @src */
static void vx3_stats_move(void *dst, void *src, size_t n)
{
	u64 *d = dst, *s = src;
	size_t i;

	for (i = 0; i < n; i++) {
		d[i] += s[i];
		s[i] = 0;
	}
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
	u32 i, r;

	spin_lock_bh(&priv->stats_lock);
	for (i = 0; old && i < old->num_vec; i++) {
		struct vx3_vector *vec = old->vec[i];

		vx3_stats_move(&priv->base.tx, &vec->tx.stats,
			       VX3_NUM_STATS(struct vx3_tx_stats));
		vx3_stats_move(&priv->base.txc,
			       &vec->tx.cstats,
			       VX3_NUM_STATS(struct vx3_tx_comp_stats));
		for (r = 0; r < vec->num_rx; r++)
			vx3_stats_move(&priv->base.rx,
				       &vec->rx[r].stats,
				       VX3_NUM_STATS(struct vx3_rx_stats));
	}
	priv->qs = qs;
	spin_unlock_bh(&priv->stats_lock);
	return old;
}

static int vx3_open(struct net_device *netdev)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	struct vx3_qset *qs;
	int err;

	priv->cfg.mtu = netdev->mtu;
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

static int vx3_stop(struct net_device *netdev)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	/* A failed reset has already taken the queues down */
	if (!priv->qs)
		return 0;
	vx3_down(priv, priv->qs);
	vx3_free_qset(priv, vx3_swap_qset(priv, NULL));
	return 0;
}

/**
 * vx3_reconfigure() - switch to a new queue and buffer configuration
 * @priv: driver private data
 * @cfg: the new configuration
 * @extack: netlink extended ACK for errors, may be NULL
 *
 * The new queues are allocated before the running ones are stopped; if
 * anything fails the old configuration keeps running.
 *
 * Context: rtnl held.
 * Return: 0 on success, negative errno on failure.
 */
int vx3_reconfigure(struct vx3_priv *priv, const struct vx3_cfg *cfg,
		    struct netlink_ext_ack *extack)
{
	struct net_device *netdev = priv->netdev;
	struct vx3_qset *new, *old;
	int err;

	if (!netif_running(netdev) || !priv->qs) {
		priv->cfg = *cfg;
		WRITE_ONCE(netdev->mtu, cfg->mtu);
		return 0;
	}

	new = vx3_alloc_qset(priv, cfg);
	if (!new) {
		NL_SET_ERR_MSG_MOD(extack,
				   "not enough memory for the new queues, configuration unchanged");
		return -ENOMEM;
	}

	old = priv->qs;
	vx3_down(priv, old);
	WRITE_ONCE(netdev->mtu, cfg->mtu);
	vx3_swap_qset(priv, new);
	err = vx3_up(priv, new);
	if (err) {
		NL_SET_ERR_MSG_MOD(extack,
				   "device refused the new configuration, old one restored");
		WRITE_ONCE(netdev->mtu, priv->cfg.mtu);
		vx3_swap_qset(priv, old);
		vx3_free_qset(priv, new);
		if (vx3_up(priv, old)) {
			netdev_err(netdev, "cannot restart the old configuration\n");
			vx3_free_qset(priv, vx3_swap_qset(priv, NULL));
			dev_close(netdev);
		}
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

	cfg.mtu = new_mtu;
	return vx3_reconfigure(priv, &cfg, NULL);
}

static void vx3_tx_timeout(struct net_device *netdev, unsigned int txqueue)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	netdev_err(netdev, "TX queue %u timed out\n", txqueue);
	vx3_schedule_reset(priv);
}

static void vx3_read_rx_stats(struct vx3_rx_stats *dst,
			      const struct vx3_rx_stats *src)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&src->syncp);
		vx3_stats_copy(dst, src, VX3_NUM_STATS(struct vx3_rx_stats));
	} while (u64_stats_fetch_retry(&src->syncp, start));
}

static void vx3_read_tx_stats(struct vx3_tx_stats *dst,
			      struct vx3_tx_comp_stats *cdst,
			      const struct vx3_tx_ring *tx)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&tx->stats.syncp);
		vx3_stats_copy(dst, &tx->stats,
			       VX3_NUM_STATS(struct vx3_tx_stats));
	} while (u64_stats_fetch_retry(&tx->stats.syncp, start));
	do {
		start = u64_stats_fetch_begin(&tx->cstats.syncp);
		vx3_stats_copy(cdst, &tx->cstats,
			       VX3_NUM_STATS(struct vx3_tx_comp_stats));
	} while (u64_stats_fetch_retry(&tx->cstats.syncp, start));
}

static void vx3_get_stats64(struct net_device *netdev,
			    struct rtnl_link_stats64 *stats)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	struct vx3_tx_comp_stats txc;
	struct vx3_hw_stats hw;
	struct vx3_rx_stats rx;
	struct vx3_tx_stats tx;
	struct vx3_qset *qs;
	u32 i, r;

	spin_lock_bh(&priv->stats_lock);
	vx3_read_hw_stats(priv, priv->qs, &hw);
	rx = priv->base.rx;
	tx = priv->base.tx;
	txc = priv->base.txc;
	qs = priv->qs;
	for (i = 0; qs && i < qs->num_vec; i++) {
		struct vx3_vector *vec = qs->vec[i];
		struct vx3_tx_comp_stats c;
		struct vx3_tx_stats t;

		vx3_read_tx_stats(&t, &c, &vec->tx);
		vx3_stats_move(&tx, &t,
			       VX3_NUM_STATS(struct vx3_tx_stats));
		vx3_stats_move(&txc, &c,
			       VX3_NUM_STATS(struct vx3_tx_comp_stats));
		for (r = 0; r < vec->num_rx; r++) {
			struct vx3_rx_stats s;

			vx3_read_rx_stats(&s, &vec->rx[r].stats);
			vx3_stats_move(&rx, &s,
				       VX3_NUM_STATS(struct vx3_rx_stats));
		}
	}
	spin_unlock_bh(&priv->stats_lock);

	stats->rx_packets = rx.packets;
	stats->rx_bytes = rx.bytes;
	stats->rx_dropped = rx.drop_err + rx.drop_frags + rx.drop_bad +
			    rx.drop_nomem;
	stats->rx_errors = rx.drop_err + rx.drop_bad;
	stats->rx_missed_errors = hw.rx_out_of_buf;
	stats->tx_packets = txc.packets;
	stats->tx_bytes = txc.bytes;
	stats->tx_dropped = tx.map_err + tx.drops + hw.tx_discards;
	stats->tx_errors = hw.tx_errors;
}

static void vx3_get_queue_stats_rx(struct net_device *netdev, int idx,
				   struct netdev_queue_stats_rx *stats)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	struct vx3_rx_stats s;

	/* Called under rtnl, which also guards priv->qs. The core asks for
	 * every real queue when it sums the device totals, also while the
	 * interface is down and has no queues: leave those undefined.
	 */
	if (!priv->qs || idx >= priv->qs->vec[0]->num_rx)
		return;
	vx3_read_rx_stats(&s, &priv->qs->vec[0]->rx[idx].stats);
	stats->packets = s.packets;
	stats->bytes = s.bytes;
	stats->alloc_fail = s.alloc_fail;
	stats->csum_unnecessary = s.csum_unnecessary;
	stats->csum_none = s.csum_none;
	stats->hw_gro_packets = s.hw_gro_packets;
	stats->hw_gro_bytes = s.hw_gro_bytes;
	stats->hw_gro_wire_packets = s.hw_gro_segs;
}

static void vx3_get_queue_stats_tx(struct net_device *netdev, int idx,
				   struct netdev_queue_stats_tx *stats)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	struct vx3_tx_comp_stats c;
	struct vx3_tx_stats t;

	if (!priv->qs || idx >= priv->qs->num_vec)
		return;
	vx3_read_tx_stats(&t, &c, &priv->qs->vec[idx]->tx);
	stats->packets = c.packets;
	stats->bytes = c.bytes;
	stats->hw_gso_packets = t.tso;
	stats->needs_csum = t.csum + t.tso;
	stats->stop = t.stops;
	stats->wake = c.wakes;
}

static void vx3_get_base_stats(struct net_device *netdev,
			       struct netdev_queue_stats_rx *rx,
			       struct netdev_queue_stats_tx *tx)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	const struct vx3_base_stats *b = &priv->base;

	rx->packets = b->rx.packets;
	rx->bytes = b->rx.bytes;
	rx->alloc_fail = b->rx.alloc_fail;
	rx->csum_unnecessary = b->rx.csum_unnecessary;
	rx->csum_none = b->rx.csum_none;
	rx->hw_gro_packets = b->rx.hw_gro_packets;
	rx->hw_gro_bytes = b->rx.hw_gro_bytes;
	rx->hw_gro_wire_packets = b->rx.hw_gro_segs;

	tx->packets = b->txc.packets;
	tx->bytes = b->txc.bytes;
	tx->hw_gso_packets = b->tx.tso;
	tx->needs_csum = b->tx.csum + b->tx.tso;
	tx->stop = b->tx.stops;
	tx->wake = b->txc.wakes;
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
	.ndo_set_rx_mode	= vx3_set_rx_mode,
	.ndo_set_mac_address	= vx3_set_mac_address,
	.ndo_validate_addr	= eth_validate_addr,
	.ndo_change_mtu		= vx3_change_mtu,
	.ndo_vlan_rx_add_vid	= vx3_vlan_rx_add_vid,
	.ndo_vlan_rx_kill_vid	= vx3_vlan_rx_kill_vid,
	.ndo_fix_features	= vx3_fix_features,
	.ndo_set_features	= vx3_set_features,
	.ndo_tx_timeout		= vx3_tx_timeout,
};

static void vx3_init_base_stats(struct vx3_base_stats *b)
{
	u64_stats_init(&b->rx.syncp);
	u64_stats_init(&b->tx.syncp);
	u64_stats_init(&b->txc.syncp);
}

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

	netdev = alloc_etherdev_mqs(sizeof(*priv), VX3_MAX_TX_QUEUES, 1);
	if (!netdev)
		return NULL;
	SET_NETDEV_DEV(netdev, &pdev->dev);

	priv = netdev_priv(netdev);
	priv->netdev = netdev;
	priv->pdev = pdev;
	spin_lock_init(&priv->cmd_lock);
	spin_lock_init(&priv->stats_lock);
	vx3_init_base_stats(&priv->base);
	priv->msg_enable = netif_msg_init(-1, NETIF_MSG_DRV | NETIF_MSG_PROBE |
					  NETIF_MSG_LINK);
	priv->copybreak = VX3_RX_COPYBREAK_DEFAULT;
	priv->cfg.num_txq = 1;
	priv->cfg.tx_ring = VX3_TX_RING_DEFAULT;
	priv->cfg.rx_ring[0] = VX3_RX_RING_DEFAULT;
	priv->cfg.rx_ring[1] = VX3_RX_BODY_RING_DEFAULT;
	priv->cfg.mtu = ETH_DATA_LEN;

	netdev->netdev_ops = &vx3_netdev_ops;
	netdev->stat_ops = &vx3_stat_ops;
	vx3_set_ethtool_ops(netdev);
	netdev->watchdog_timeo = 5 * HZ;
	netdev->min_mtu = ETH_MIN_MTU;
	netdev->max_mtu = VX3_MAX_MTU;
	netdev->priv_flags |= IFF_LIVE_ADDR_CHANGE;

	netdev->hw_features = NETIF_F_SG | NETIF_F_IP_CSUM | NETIF_F_IPV6_CSUM |
			      NETIF_F_TSO | NETIF_F_TSO6 | NETIF_F_RXCSUM |
			      NETIF_F_GRO_HW | NETIF_F_HW_VLAN_CTAG_TX |
			      NETIF_F_HW_VLAN_CTAG_RX |
			      NETIF_F_HW_VLAN_CTAG_FILTER;
	netdev->features = netdev->hw_features | NETIF_F_HIGHDMA;
	netdev->vlan_features = NETIF_F_SG | NETIF_F_IP_CSUM |
				NETIF_F_IPV6_CSUM | NETIF_F_TSO |
				NETIF_F_TSO6 | NETIF_F_HIGHDMA;
	priv->vlan_filter = !!(netdev->features & NETIF_F_HW_VLAN_CTAG_FILTER);
	return netdev;
}
