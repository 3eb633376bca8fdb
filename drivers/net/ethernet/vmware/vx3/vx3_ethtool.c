// SPDX-License-Identifier: GPL-2.0-only
/* vx3: ethtool operations */

#include <linux/build_bug.h>
#include <linux/ethtool.h>
#include <linux/log2.h>
#include <linux/netdevice.h>
#include <linux/netlink.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>
#include <linux/string.h>
#include <linux/u64_stats_sync.h>

#include "vx3.h"

/* The RX completion ring needs an entry for every buffer of RX rings 0 and
 * 1; with both rings at their maximum it is exactly full, so no accepted
 * ring size can overflow it.
 */
static_assert(2 * VX3_RX_RING_MAX <= VX3_RX_COMP_RING_MAX);

/* Smallest TX ring that can still be woken: a stopped queue waits until
 * VX3_TX_WAKE_THRESH descriptors are free, which a smaller ring never
 * reaches.
 */
static u32 vx3_tx_ring_min(void)
{
	return max_t(u32, VX3_RING_MIN,
		     roundup_pow_of_two(VX3_TX_WAKE_THRESH + 1));
}

/* Driver-specific counters of ethtool -S, by index into the counter
 * arrays. What netdev_stat_ops reports (packets, bytes, checksum
 * verdicts, allocation failures, TSO, checksum offload, queue stops and
 * wakes) is deliberately absent here.
 */
static const char * const vx3_rx_stat_names[VX3_RXS_NUM] = {
	[VX3_RXS_BUILD_SKB]	= "build_skb",
	[VX3_RXS_COPIED]	= "copied",
	[VX3_RXS_BODY_BUFS]	= "body_bufs",
	[VX3_RXS_LRO_PACKETS]	= "lro_packets",
	[VX3_RXS_LRO_SEGS]	= "lro_segs",
	[VX3_RXS_LRO_BYTES]	= "lro_bytes",
	[VX3_RXS_SKIPPED]	= "skipped",
	[VX3_RXS_DROP_ERR]	= "drop_err",
	[VX3_RXS_DROP_FRAGS]	= "drop_frags",
	[VX3_RXS_DROP_OVERSIZE]	= "drop_oversize",
	[VX3_RXS_DROP_BAD]	= "drop_bad",
	[VX3_RXS_DROP_NOMEM]	= "drop_nomem",
	[VX3_RXS_XDP_PASS]	= "xdp_pass",
	[VX3_RXS_XDP_PASS_BYTES] = "xdp_pass_bytes",
	[VX3_RXS_XDP_DROP]	= "xdp_drop",
	[VX3_RXS_XDP_DROP_BYTES] = "xdp_drop_bytes",
	[VX3_RXS_XDP_TX]	= "xdp_tx",
	[VX3_RXS_XDP_TX_BYTES]	= "xdp_tx_bytes",
	[VX3_RXS_XDP_REDIRECT]	= "xdp_redirect",
	[VX3_RXS_XDP_REDIRECT_BYTES] = "xdp_redirect_bytes",
	[VX3_RXS_XDP_ABORTED]	= "xdp_aborted",
	[VX3_RXS_XDP_ABORTED_BYTES] = "xdp_aborted_bytes",
	[VX3_RXS_XDP_TX_ERR]	= "xdp_tx_err",
	[VX3_RXS_XDP_REDIRECT_ERR] = "xdp_redirect_err",
	[VX3_RXS_XSK_COPIED]	= "xsk_copied",
	[VX3_RXS_XSK_ALLOC_FAIL] = "xsk_fill_empty",
};

static const char * const vx3_tx_stat_names[VX3_TXS_NUM] = {
	[VX3_TXS_DOORBELLS]	= "doorbells",
	[VX3_TXS_MAP_ERR]	= "map_err",
	[VX3_TXS_DROPS]		= "drops",
};

static const char * const vx3_txc_stat_names[VX3_TXCS_NUM] = {
	[VX3_TXCS_BAD_COMP]	= "bad_comp",
};

/* The XDP ring ("xdp0_"): not a stack queue, so qstats has no entry of
 * its own for it (only the device totals include its packets and bytes):
 * they are listed here as well.
 */
static const char * const vx3_xdp_tx_stat_names[VX3_TXS_NUM] = {
	[VX3_TXS_DOORBELLS]	= "doorbells",
	[VX3_TXS_MAP_ERR]	= "map_err",
	[VX3_TXS_DROPS]		= "drops",
	[VX3_TXS_XDP_TX]	= "xdp_tx",
	[VX3_TXS_XDP_XMIT]	= "xmit",
	[VX3_TXS_XSK_XMIT]	= "xsk_xmit",
};

static const char * const vx3_xdp_txc_stat_names[VX3_TXCS_NUM] = {
	[VX3_TXCS_PACKETS]	= "packets",
	[VX3_TXCS_BYTES]	= "bytes",
	[VX3_TXCS_BAD_COMP]	= "bad_comp",
};

#define VX3_DEV_NSTATS	1	/* resets */

/* Entries of @names that ethtool -S lists */
static u32 vx3_stat_count(const char * const *names, u32 n)
{
	u32 i, count = 0;

	for (i = 0; i < n; i++)
		count += !!names[i];
	return count;
}

/* Queues listed by ethtool -S: the running ones of @qs while up, else the
 * configured ones (their counters read as 0).
 *
 * The ethtool core calls get_sset_count, get_strings and get_ethtool_stats
 * with rtnl held, and sizes its buffer from get_sset_count under the same
 * hold. priv->qs is replaced only under rtnl as well (open, close,
 * reconfiguration), so the three callbacks see the same queues within one
 * request and their counts, names and values cannot disagree.
 */
static u32 vx3_stats_num_txq(const struct vx3_priv *priv,
			     const struct vx3_qset *qs)
{
	return qs ? qs->num_vec : priv->cfg.num_txq;
}

static u32 vx3_stats_num_rxq(const struct vx3_priv *priv,
			     const struct vx3_qset *qs)
{
	return qs ? qs->num_rxq : priv->cfg.num_rxq;
}

static struct vx3_rx_queue *vx3_stats_rxq(struct vx3_qset *qs, u32 q)
{
	if (!qs || q >= qs->num_rxq)
		return NULL;
	return &qs->vec[q]->rx[0];
}

static struct vx3_tx_ring *vx3_stats_txq(struct vx3_qset *qs, u32 q)
{
	if (!qs || q >= qs->num_vec)
		return NULL;
	return &qs->vec[q]->tx;
}

static void vx3_get_drvinfo(struct net_device *netdev,
			    struct ethtool_drvinfo *info)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	strscpy(info->driver, VX3_DRV_NAME);
	strscpy(info->bus_info, pci_name(priv->pdev));
}

static u32 vx3_get_msglevel(struct net_device *netdev)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	return priv->msg_enable;
}

static void vx3_set_msglevel(struct net_device *netdev, u32 level)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	priv->msg_enable = level;
}

static int vx3_get_link_ksettings(struct net_device *netdev,
				  struct ethtool_link_ksettings *cmd)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	/* The core hands in zeroed link modes: none are advertised */
	if (netif_carrier_ok(netdev)) {
		cmd->base.speed = READ_ONCE(priv->link_speed);
		cmd->base.duplex = DUPLEX_FULL;
	} else {
		cmd->base.speed = SPEED_UNKNOWN;
		cmd->base.duplex = DUPLEX_UNKNOWN;
	}
	cmd->base.port = PORT_OTHER;
	cmd->base.autoneg = AUTONEG_DISABLE;

	return 0;
}

static void vx3_get_ringparam(struct net_device *netdev,
			      struct ethtool_ringparam *ring,
			      struct kernel_ethtool_ringparam *kring,
			      struct netlink_ext_ack *extack)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	ring->rx_max_pending = VX3_RX_RING_MAX;
	ring->rx_jumbo_max_pending = VX3_RX_RING_MAX;
	ring->tx_max_pending = VX3_TX_RING_MAX;
	ring->rx_pending = priv->cfg.rx_ring[0];
	ring->rx_jumbo_pending = priv->cfg.rx_ring[1];
	ring->tx_pending = priv->cfg.tx_ring;
}

static int vx3_set_ringparam(struct net_device *netdev,
			     struct ethtool_ringparam *ring,
			     struct kernel_ethtool_ringparam *kring,
			     struct netlink_ext_ack *extack)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	u32 tx_min = vx3_tx_ring_min();
	struct vx3_cfg cfg = priv->cfg;

	/* The core has checked the maxima reported by vx3_get_ringparam()
	 * (and rx-mini, whose maximum is 0); the minima are vx3's.
	 */
	if (ring->rx_pending < VX3_RING_MIN) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "rx ring size must be at least %u",
				       VX3_RING_MIN);
		return -EINVAL;
	}
	if (ring->rx_jumbo_pending < VX3_RING_MIN) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "rx-jumbo ring size must be at least %u",
				       VX3_RING_MIN);
		return -EINVAL;
	}
	if (ring->tx_pending < tx_min) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "tx ring size must be at least %u",
				       tx_min);
		return -EINVAL;
	}

	/* The rings are powers of two; the maxima are too, so rounding up
	 * stays in range.
	 */
	cfg.rx_ring[0] = roundup_pow_of_two(ring->rx_pending);
	cfg.rx_ring[1] = roundup_pow_of_two(ring->rx_jumbo_pending);
	cfg.tx_ring = roundup_pow_of_two(ring->tx_pending);

	if (cfg.rx_ring[0] == priv->cfg.rx_ring[0] &&
	    cfg.rx_ring[1] == priv->cfg.rx_ring[1] &&
	    cfg.tx_ring == priv->cfg.tx_ring)
		return 0;

	return vx3_reconfigure(priv, &cfg, extack);
}

/* Channels: combined channel n is vector n with TX queue n and RX queue n;
 * the TX queues after the RX ones are TX-only channels. Each RX queue
 * has an XDP ring among the device's TX queues as well.
 */
static u32 vx3_max_combined(const struct vx3_priv *priv)
{
	return min_t(u32, vx3_max_txq(priv), VX3_MAX_RXQ);
}

static void vx3_get_channels(struct net_device *netdev,
			     struct ethtool_channels *ch)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	ch->max_combined = vx3_max_combined(priv);
	ch->max_tx = vx3_max_txq(priv) - 1;
	ch->combined_count = priv->cfg.num_rxq;
	ch->tx_count = priv->cfg.num_txq - priv->cfg.num_rxq;
}

static int vx3_set_channels(struct net_device *netdev,
			    struct ethtool_channels *ch)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	struct vx3_cfg cfg = priv->cfg;

	/* The core has checked each count against the maxima reported by
	 * vx3_get_channels() (no rx or other channels) and refused a
	 * configuration without RX, or with fewer RX queues than the
	 * user's indirection table names, with the reason in extack. The
	 * sums are vx3's to check; this callback has no extack.
	 */
	cfg.num_rxq = ch->combined_count;
	cfg.num_txq = ch->combined_count + ch->tx_count;
	if (cfg.num_txq > vx3_max_txq(priv)) {
		netdev_err(netdev, "%u combined and %u tx channels: at most %u TX queues in all\n",
			   ch->combined_count, ch->tx_count,
			   vx3_max_txq(priv));
		return -EINVAL;
	}
	if (cfg.num_txq + cfg.num_rxq > VX3_MAX_TX_QUEUES) {
		netdev_err(netdev, "%u combined and %u tx channels: the device has %u TX queues, for TX queues and one XDP ring per RX queue\n",
			   ch->combined_count, ch->tx_count,
			   VX3_MAX_TX_QUEUES);
		return -EINVAL;
	}
	if (cfg.num_txq == priv->cfg.num_txq &&
	    cfg.num_rxq == priv->cfg.num_rxq)
		return 0;

	return vx3_reconfigure(priv, &cfg, NULL);
}

static u32 vx3_get_rx_ring_count(struct net_device *netdev)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	return priv->cfg.num_rxq;
}

static u32 vx3_get_rxfh_key_size(struct net_device *netdev)
{
	return VX3_RSS_KEY_SIZE;
}

static u32 vx3_get_rxfh_indir_size(struct net_device *netdev)
{
	return VX3_RSS_IND_TABLE_SIZE;
}

static int vx3_get_rxfh(struct net_device *netdev,
			struct ethtool_rxfh_param *rxfh)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	u32 i;

	rxfh->hfunc = ETH_RSS_HASH_TOP;
	if (rxfh->key)
		memcpy(rxfh->key, priv->cfg.rss_key, VX3_RSS_KEY_SIZE);
	if (rxfh->indir)
		for (i = 0; i < VX3_RSS_IND_TABLE_SIZE; i++)
			rxfh->indir[i] = vx3_rss_indir(priv, &priv->cfg, i);
	return 0;
}

/* A new table goes to the running device (UPDATE_RSSIDT). A new key takes
 * effect at an activation: vx3_work() activates the device again with the
 * same queues, after the ethtool core has dropped its rss_lock (stopping
 * NAPI takes the instance lock, which the core takes before rss_lock).
 */
static int vx3_set_rxfh(struct net_device *netdev,
			struct ethtool_rxfh_param *rxfh,
			struct netlink_ext_ack *extack)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	u32 i;

	/* The core has checked the key size, the table size and that every
	 * entry names an RX queue, and allows no further contexts.
	 */
	if (rxfh->hfunc != ETH_RSS_HASH_NO_CHANGE &&
	    rxfh->hfunc != ETH_RSS_HASH_TOP) {
		NL_SET_ERR_MSG_MOD(extack,
				   "the device hashes with Toeplitz only");
		return -EOPNOTSUPP;
	}
	if (rxfh->input_xfrm != RXH_XFRM_NO_CHANGE && rxfh->input_xfrm) {
		NL_SET_ERR_MSG_MOD(extack,
				   "the device has no input transformation");
		return -EOPNOTSUPP;
	}

	if (rxfh->indir) {
		for (i = 0; i < VX3_RSS_IND_TABLE_SIZE; i++)
			priv->cfg.rss_indir[i] = rxfh->indir[i];
		vx3_write_rss_indir(priv);
	}
	if (rxfh->key &&
	    memcmp(priv->cfg.rss_key, rxfh->key, VX3_RSS_KEY_SIZE)) {
		memcpy(priv->cfg.rss_key, rxfh->key, VX3_RSS_KEY_SIZE);
		vx3_schedule_restart(priv);
	}
	return 0;
}

/* The fields hashed per flow type: IP addresses for every IP packet, TCP
 * ports too where the user keeps them (the default)
 */
static u32 vx3_rss_fields(const struct vx3_cfg *cfg, u32 flow_type)
{
	u16 l3, l4;

	switch (flow_type) {
	case TCP_V4_FLOW:
	case UDP_V4_FLOW:
	case SCTP_V4_FLOW:
	case AH_ESP_V4_FLOW:
	case IPV4_FLOW:
		l3 = VX3_RSS_HASH_IPV4;
		l4 = flow_type == TCP_V4_FLOW ? VX3_RSS_HASH_TCP_IPV4 : 0;
		break;
	case TCP_V6_FLOW:
	case UDP_V6_FLOW:
	case SCTP_V6_FLOW:
	case AH_ESP_V6_FLOW:
	case IPV6_FLOW:
		l3 = VX3_RSS_HASH_IPV6;
		l4 = flow_type == TCP_V6_FLOW ? VX3_RSS_HASH_TCP_IPV6 : 0;
		break;
	default:
		return 0;
	}
	if (cfg->rss_types & l4)
		return RXH_IP_SRC | RXH_IP_DST | RXH_L4_B_0_1 | RXH_L4_B_2_3;
	if (cfg->rss_types & l3)
		return RXH_IP_SRC | RXH_IP_DST;
	return 0;
}

static int vx3_get_rxfh_fields(struct net_device *netdev,
			       struct ethtool_rxfh_fields *fields)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	fields->data = vx3_rss_fields(&priv->cfg, fields->flow_type);
	return 0;
}

/* TCP over IPv4 or IPv6 hashes over addresses and ports, or addresses
 * only; every other IP packet over its addresses. The hash types take
 * effect at an activation, like the key (vx3_set_rxfh()).
 */
static int vx3_set_rxfh_fields(struct net_device *netdev,
			       const struct ethtool_rxfh_fields *fields,
			       struct netlink_ext_ack *extack)
{
	const u32 l3 = RXH_IP_SRC | RXH_IP_DST;
	const u32 l4 = l3 | RXH_L4_B_0_1 | RXH_L4_B_2_3;
	struct vx3_priv *priv = netdev_priv(netdev);
	u16 bit = 0;

	if (fields->data == vx3_rss_fields(&priv->cfg, fields->flow_type))
		return 0;
	if (fields->flow_type == TCP_V4_FLOW)
		bit = VX3_RSS_HASH_TCP_IPV4;
	else if (fields->flow_type == TCP_V6_FLOW)
		bit = VX3_RSS_HASH_TCP_IPV6;
	if (!bit || (fields->data != l3 && fields->data != l4)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "the device hashes TCP over IP addresses and optionally ports, other IP packets over addresses only");
		return -EINVAL;
	}

	priv->cfg.rss_types ^= bit;
	vx3_schedule_restart(priv);
	return 0;
}

static int vx3_get_tunable(struct net_device *netdev,
			   const struct ethtool_tunable *tuna, void *data)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	switch (tuna->id) {
	case ETHTOOL_RX_COPYBREAK:
		/* The core has checked type and length (u32) */
		*(u32 *)data = READ_ONCE(priv->copybreak);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int vx3_set_tunable(struct net_device *netdev,
			   const struct ethtool_tunable *tuna,
			   const void *data)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	u32 val;

	switch (tuna->id) {
	case ETHTOOL_RX_COPYBREAK:
		val = *(const u32 *)data;
		if (val > VX3_RX_COPYBREAK_MAX)
			return -EINVAL;
		WRITE_ONCE(priv->copybreak, val);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int vx3_get_sset_count(struct net_device *netdev, int sset)
{
	struct vx3_priv *priv = netdev_priv(netdev);

	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;

	ASSERT_RTNL();
	return vx3_stats_num_rxq(priv, priv->qs) *
	       (vx3_stat_count(vx3_rx_stat_names, VX3_RXS_NUM) +
		vx3_stat_count(vx3_xdp_tx_stat_names, VX3_TXS_NUM) +
		vx3_stat_count(vx3_xdp_txc_stat_names, VX3_TXCS_NUM)) +
	       vx3_stats_num_txq(priv, priv->qs) *
	       (vx3_stat_count(vx3_tx_stat_names, VX3_TXS_NUM) +
		vx3_stat_count(vx3_txc_stat_names, VX3_TXCS_NUM)) +
	       VX3_DEV_NSTATS;
}

static void vx3_put_stat_names(u8 **data, const char *dir, u32 q,
			       const char * const *names, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (names[i])
			ethtool_sprintf(data, "%s%u_%s", dir, q, names[i]);
}

static void vx3_get_strings(struct net_device *netdev, u32 sset, u8 *data)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	u32 num_rxq, num_txq, q;

	if (sset != ETH_SS_STATS)
		return;

	ASSERT_RTNL();
	num_rxq = vx3_stats_num_rxq(priv, priv->qs);
	for (q = 0; q < num_rxq; q++) {
		vx3_put_stat_names(&data, "rx", q, vx3_rx_stat_names,
				   VX3_RXS_NUM);
		vx3_put_stat_names(&data, "xdp", q, vx3_xdp_tx_stat_names,
				   VX3_TXS_NUM);
		vx3_put_stat_names(&data, "xdp", q, vx3_xdp_txc_stat_names,
				   VX3_TXCS_NUM);
	}

	num_txq = vx3_stats_num_txq(priv, priv->qs);
	for (q = 0; q < num_txq; q++) {
		vx3_put_stat_names(&data, "tx", q, vx3_tx_stat_names,
				   VX3_TXS_NUM);
		vx3_put_stat_names(&data, "tx", q, vx3_txc_stat_names,
				   VX3_TXCS_NUM);
	}

	ethtool_puts(&data, "resets");
}

/* Copy the listed counters of @cnt, guarded by @syncp; NULL counters
 * (queue not allocated) read as zeros.
 */
static void vx3_put_stats(u64 **data, const u64_stats_t *cnt,
			  const struct u64_stats_sync *syncp,
			  const char * const *names, u32 n)
{
	u64 val[VX3_STATS_MAX] = {};
	u32 i;

	if (cnt)
		vx3_stats_fetch(cnt, syncp, val, n);
	for (i = 0; i < n; i++)
		if (names[i])
			*(*data)++ = val[i];
}

static void vx3_get_ethtool_stats(struct net_device *netdev,
				  struct ethtool_stats *stats, u64 *data)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	struct vx3_rx_queue *rxq;
	struct vx3_tx_ring *tx;
	struct vx3_qset *qs;
	u32 num_rxq, num_txq, q;

	ASSERT_RTNL();
	qs = priv->qs;
	num_rxq = vx3_stats_num_rxq(priv, qs);
	for (q = 0; q < num_rxq; q++) {
		rxq = vx3_stats_rxq(qs, q);
		vx3_put_stats(&data, rxq ? rxq->stats.cnt : NULL,
			      rxq ? &rxq->stats.syncp : NULL,
			      vx3_rx_stat_names, VX3_RXS_NUM);
		tx = rxq ? &rxq->xdp_tx : NULL;
		vx3_put_stats(&data, tx ? tx->stats.cnt : NULL,
			      tx ? &tx->stats.syncp : NULL,
			      vx3_xdp_tx_stat_names, VX3_TXS_NUM);
		vx3_put_stats(&data, tx ? tx->cstats.cnt : NULL,
			      tx ? &tx->cstats.syncp : NULL,
			      vx3_xdp_txc_stat_names, VX3_TXCS_NUM);
	}

	num_txq = vx3_stats_num_txq(priv, qs);
	for (q = 0; q < num_txq; q++) {
		tx = vx3_stats_txq(qs, q);
		vx3_put_stats(&data, tx ? tx->stats.cnt : NULL,
			      tx ? &tx->stats.syncp : NULL,
			      vx3_tx_stat_names, VX3_TXS_NUM);
		vx3_put_stats(&data, tx ? tx->cstats.cnt : NULL,
			      tx ? &tx->cstats.syncp : NULL,
			      vx3_txc_stat_names, VX3_TXCS_NUM);
	}

	/* Bumped by the reset work, under rtnl like this read */
	*data = priv->resets;
}

static void vx3_get_wol(struct net_device *netdev,
			struct ethtool_wolinfo *wol)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	struct device *dev = &priv->pdev->dev;

	/* Only a function that can signal PME wakes the machine: the PCI
	 * core makes it wakeup capable then (pci_pm_init())
	 */
	wol->supported = device_can_wakeup(dev) ? VX3_WOL_SUPPORTED : 0;
	/* What suspend arms: nothing while the PM core's wakeup setting
	 * (power/wakeup) is off
	 */
	wol->wolopts = device_may_wakeup(dev) ? priv->wol : 0;
}

/* The events are armed when the machine suspends or powers off, on the
 * active device (vx3_arm_wol()); turning them off also tells the device.
 */
static int vx3_set_wol(struct net_device *netdev,
		       struct ethtool_wolinfo *wol)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	int err;

	if (wol->wolopts & ~VX3_WOL_SUPPORTED ||
	    (wol->wolopts && !device_can_wakeup(&priv->pdev->dev)))
		return -EOPNOTSUPP;

	err = device_set_wakeup_enable(&priv->pdev->dev, !!wol->wolopts);
	if (err)
		return err;
	priv->wol = wol->wolopts;
	if (!priv->wol)
		vx3_write_pm_conf(priv, false);
	return 0;
}

const struct ethtool_ops vx3_ethtool_ops = {
	.supported_coalesce_params	= 0,
	.get_drvinfo			= vx3_get_drvinfo,
	.get_msglevel			= vx3_get_msglevel,
	.set_msglevel			= vx3_set_msglevel,
	.get_link			= ethtool_op_get_link,
	.get_link_ksettings		= vx3_get_link_ksettings,
	.get_ringparam			= vx3_get_ringparam,
	.set_ringparam			= vx3_set_ringparam,
	.get_channels			= vx3_get_channels,
	.set_channels			= vx3_set_channels,
	.get_rx_ring_count		= vx3_get_rx_ring_count,
	.get_rxfh_key_size		= vx3_get_rxfh_key_size,
	.get_rxfh_indir_size		= vx3_get_rxfh_indir_size,
	.get_rxfh			= vx3_get_rxfh,
	.set_rxfh			= vx3_set_rxfh,
	.get_rxfh_fields		= vx3_get_rxfh_fields,
	.set_rxfh_fields		= vx3_set_rxfh_fields,
	.get_tunable			= vx3_get_tunable,
	.set_tunable			= vx3_set_tunable,
	.get_sset_count			= vx3_get_sset_count,
	.get_strings			= vx3_get_strings,
	.get_ethtool_stats		= vx3_get_ethtool_stats,
	.get_wol			= vx3_get_wol,
	.set_wol			= vx3_set_wol,
};
