// SPDX-License-Identifier: GPL-2.0-only
/* vx3: device commands, the DriverShared area and the queue descriptors
 *
 * Everything the device learns about the driver's state goes through this
 * file: the DriverShared fields (features, receive filters, VLAN table),
 * the queue descriptor table, the MAC registers and the commands that make
 * the device read them.
 */

#include <linux/bitfield.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/unaligned.h>

#include "vx3.h"

/**
 * vx3_cmd() - run a device command that returns a result
 * @priv: driver private data
 * @cmd: VX3_CMD_* code
 *
 * Return: the value the device reports for @cmd.
 */
u32 vx3_cmd(struct vx3_priv *priv, u32 cmd)
{
	unsigned long flags;
	u32 val;

	spin_lock_irqsave(&priv->cmd_lock, flags);
	writel(cmd, priv->bar1 + VX3_REG_CMD);
	val = readl(priv->bar1 + VX3_REG_CMD);
	spin_unlock_irqrestore(&priv->cmd_lock, flags);

	return val;
}

/* Commands without a result are not read back: some implementations
 * complain about reads after them.
 */
static void vx3_cmd_noread(struct vx3_priv *priv, u32 cmd)
{
	lockdep_assert_held(&priv->cmd_lock);
	writel(cmd, priv->bar1 + VX3_REG_CMD);
}

/**
 * vx3_irq_unmask() - let the device raise an interrupt index again
 * @priv: driver private data
 * @idx: interrupt index
 */
void vx3_irq_unmask(struct vx3_priv *priv, u8 idx)
{
	writel(0, priv->bar0 + VX3_REG_IMR(idx));
}

/**
 * vx3_dev_init() - reset the device and select revision 1, UPT 1
 * @priv: driver private data
 *
 * Used at probe, before bus mastering is enabled, so that whatever
 * firmware or a previous kernel left running stops first, and on resume.
 *
 * Return: 0, or -ENODEV if the device does not offer revision 1.
 */
int vx3_dev_init(struct vx3_priv *priv)
{
	u32 rev, upt;

	writel(VX3_CMD_RESET_DEV, priv->bar1 + VX3_REG_CMD);
	priv->active = false;

	rev = readl(priv->bar1 + VX3_REG_VRRS);
	upt = readl(priv->bar1 + VX3_REG_UVRS);
	if (!(rev & VX3_REV_1) || !(upt & VX3_UPT_1)) {
		dev_err(&priv->pdev->dev,
			"device offers revision %#x, UPT %#x; need revision 1, UPT 1\n",
			rev, upt);
		return -ENODEV;
	}
	writel(VX3_REV_1, priv->bar1 + VX3_REG_VRRS);
	writel(VX3_UPT_1, priv->bar1 + VX3_REG_UVRS);
	return 0;
}

/**
 * vx3_read_perm_addr() - set the net_device's addresses from the device
 * @priv: driver private data
 */
void vx3_read_perm_addr(struct vx3_priv *priv)
{
	struct net_device *netdev = priv->netdev;
	u8 addr[ETH_ALEN];
	u32 lo, hi;

	lo = vx3_cmd(priv, VX3_CMD_GET_PERM_MAC_LO);
	hi = vx3_cmd(priv, VX3_CMD_GET_PERM_MAC_HI);
	put_unaligned_le32(lo, addr);
	put_unaligned_le16(hi, addr + 4);

	if (!is_valid_ether_addr(addr)) {
		dev_warn(&priv->pdev->dev,
			 "invalid permanent address %pM, using a random one\n",
			 addr);
		eth_hw_addr_random(netdev);
	} else {
		eth_hw_addr_set(netdev, addr);
	}
	ether_addr_copy(netdev->perm_addr, netdev->dev_addr);
}

/* Caller holds cmd_lock */
static void vx3_write_mac_locked(struct vx3_priv *priv)
{
	const u8 *addr = priv->netdev->dev_addr;

	writel(get_unaligned_le32(addr), priv->bar1 + VX3_REG_MACL);
	writel(get_unaligned_le16(addr + 4), priv->bar1 + VX3_REG_MACH);
}

/**
 * vx3_write_mac() - make the net_device's address the device's filter
 * @priv: driver private data
 */
void vx3_write_mac(struct vx3_priv *priv)
{
	unsigned long flags;

	spin_lock_irqsave(&priv->cmd_lock, flags);
	vx3_write_mac_locked(priv);
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
}

/* The device aggregates (LRO) only together with RX checksum offload; RSS
 * stays as the last activation set it. Caller holds cmd_lock.
 */
static u64 vx3_upt_features(struct vx3_priv *priv, netdev_features_t features)
{
	u64 upt = 0;

	if (features & NETIF_F_RXCSUM)
		upt |= VX3_F_RXCSUM;
	if ((features & NETIF_F_LRO) && (features & NETIF_F_RXCSUM))
		upt |= VX3_F_LRO;
	if (priv->rss_on)
		upt |= VX3_F_RSS;
	return upt;
}

/**
 * vx3_write_features() - give the device the offloads of a feature set
 * @priv: driver private data
 * @features: the net_device features about to be set
 */
void vx3_write_features(struct vx3_priv *priv, netdev_features_t features)
{
	unsigned long flags;

	spin_lock_irqsave(&priv->cmd_lock, flags);
	priv->shared->upt_features =
		cpu_to_le64(vx3_upt_features(priv, features));
	if (priv->active)
		vx3_cmd_noread(priv, VX3_CMD_UPDATE_FEATURE);
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
}

/* The device filters on the outer tag's VLAN ID, whatever its TPID: the
 * table is the union of the 802.1Q and 802.1ad IDs. Caller holds cmd_lock.
 */
static void vx3_write_vlan_table(struct vx3_priv *priv)
{
	__le32 *vf = priv->shared->vf_table;
	u32 i;

	for (i = 0; i < VX3_VF_TABLE_WORDS; i++) {
		u32 word = U32_MAX;

		if (priv->vlan_filter)
			word = bitmap_read(priv->active_vlans, i * 32, 32) |
			       bitmap_read(priv->active_svlans, i * 32, 32);
		vf[i] = cpu_to_le32(word);
	}
	/* VLAN 0 carries priority tagged frames */
	vf[0] |= cpu_to_le32(BIT(0));
	if (priv->active)
		vx3_cmd_noread(priv, VX3_CMD_UPDATE_VLAN_FILTERS);
}

/**
 * vx3_write_vlan_filter() - give the device the VLAN table
 * @priv: driver private data
 */
void vx3_write_vlan_filter(struct vx3_priv *priv)
{
	unsigned long flags;

	spin_lock_irqsave(&priv->cmd_lock, flags);
	vx3_write_vlan_table(priv);
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
}

/**
 * vx3_write_rx_filters() - program rx mode, multicast and VLAN filters
 * @priv: driver private data
 * @mc: the multicast addresses to receive
 *
 * Context: rtnl held, from the core's rx mode work (with a snapshot of the
 * address list) or an activation (with the list, under its lock).
 */
void vx3_write_rx_filters(struct vx3_priv *priv,
			  struct netdev_hw_addr_list *mc)
{
	struct net_device *netdev = priv->netdev;
	u32 mode = VX3_RXM_UCAST | VX3_RXM_BCAST;
	struct netdev_hw_addr *ha;
	unsigned long flags;
	u32 n = 0;

	if (netdev->flags & IFF_PROMISC) {
		mode |= VX3_RXM_PROMISC;
	} else if ((netdev->flags & IFF_ALLMULTI) ||
		   netdev_hw_addr_list_count(mc) > VX3_MF_TABLE_ENTRIES) {
		mode |= VX3_RXM_ALL_MULTI;
	} else if (!netdev_hw_addr_list_empty(mc)) {
		mode |= VX3_RXM_MCAST;
		netdev_hw_addr_list_for_each(ha, mc)
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

static void vx3_write_tx_queue_desc(struct vx3_tx_queue_desc *tqd,
				    const struct vx3_tx_ring *tx, u8 intr_idx)
{
	tqd->ring_pa = cpu_to_le64(tx->desc_dma);
	tqd->comp_ring_pa = cpu_to_le64(tx->comp_dma);
	tqd->ring_size = cpu_to_le32(tx->size);
	tqd->comp_ring_size = cpu_to_le32(tx->size);
	tqd->intr_idx = intr_idx;
}

/**
 * vx3_write_queue_descs() - describe a queue set's rings to the device
 * @priv: driver private data
 * @qs: the queue set; the device is not active
 *
 * The stack's TX queues come first, then the XDP rings, then the RX
 * queues; an RX queue and its XDP ring raise the interrupt of the vector
 * that polls them. Also clears the fields the device and driver exchange
 * at run time (txNumDeferred, txThreshold, updateRxProd).
 */
void vx3_write_queue_descs(struct vx3_priv *priv, struct vx3_qset *qs)
{
	struct vx3_tx_queue_desc *tqd = qs->qdesc;
	struct vx3_rx_queue_desc *rqd;
	u32 i, r;

	memset(qs->qdesc, 0, qs->qdesc_size);
	for (i = 0; i < qs->num_vec; i++)
		vx3_write_tx_queue_desc(&tqd[i], &qs->vec[i]->tx,
					qs->vec[i]->intr_idx);

	rqd = vx3_qdesc_rx(qs->qdesc, qs->num_vec + qs->num_rxq);
	for (i = 0; i < qs->num_rxq; i++) {
		struct vx3_rx_queue *rxq = &qs->vec[i]->rx[0];
		u8 intr_idx = qs->vec[i]->intr_idx;

		vx3_write_tx_queue_desc(&tqd[qs->num_vec + i], &rxq->xdp_tx,
					intr_idx);
		for (r = 0; r < 2; r++) {
			rqd[i].ring_pa[r] = cpu_to_le64(rxq->ring[r].desc_dma);
			rqd[i].ring_size[r] = cpu_to_le32(rxq->ring[r].size);
		}
		rqd[i].comp_ring_pa = cpu_to_le64(rxq->comp_dma);
		rqd[i].comp_ring_size = cpu_to_le32(rxq->comp_size);
		rqd[i].intr_idx = intr_idx;
	}
}

/**
 * vx3_rss_indir() - an entry of a configuration's indirection table
 * @priv: driver private data
 * @cfg: the configuration
 * @i: the entry
 *
 * The user's table once set; else the default, which spreads the entries
 * evenly over the configuration's RX queues and so follows a channel
 * change. (The core keeps channel counts that a set table names queues
 * of.)
 *
 * Return: the RX queue of entry @i.
 */
u32 vx3_rss_indir(const struct vx3_priv *priv, const struct vx3_cfg *cfg,
		  u32 i)
{
	if (netif_is_rxfh_configured(priv->netdev))
		return cfg->rss_indir[i];
	return ethtool_rxfh_indir_default(i, cfg->num_rxq);
}

/**
 * vx3_write_rss_indir() - give the device the user's indirection table
 * @priv: driver private data
 *
 * Writes the table of @priv->cfg, which the user has just set (the core
 * marks the table as the user's only after this), also into the running
 * queue set's configuration. While RSS runs the device reads it again on
 * UPDATE_RSSIDT; otherwise the next activation takes it.
 *
 * Context: rtnl held.
 */
void vx3_write_rss_indir(struct vx3_priv *priv)
{
	unsigned long flags;
	u32 i;

	if (priv->qs)
		memcpy(priv->qs->cfg.rss_indir, priv->cfg.rss_indir,
		       sizeof(priv->cfg.rss_indir));
	spin_lock_irqsave(&priv->cmd_lock, flags);
	for (i = 0; i < VX3_RSS_IND_TABLE_SIZE; i++)
		priv->rss_conf->ind_table[i] = priv->cfg.rss_indir[i];
	if (priv->active && priv->rss_on)
		vx3_cmd_noread(priv, VX3_CMD_UPDATE_RSSIDT);
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
}

/* RSS with more than one RX queue, over the fields the user chose (by
 * default every packet type the device can hash, TCP over its ports as
 * well); caller holds cmd_lock
 */
static void vx3_write_rss_conf(struct vx3_priv *priv, struct vx3_qset *qs)
{
	struct vx3_rss_conf *rss = priv->rss_conf;
	struct vx3_shared *sh = priv->shared;
	u32 i;

	priv->rss_on = qs->num_rxq > 1;
	if (!priv->rss_on) {
		memset(&sh->rss_conf, 0, sizeof(sh->rss_conf));
		return;
	}
	rss->hash_type = cpu_to_le16(qs->cfg.rss_types);
	rss->hash_func = cpu_to_le16(VX3_RSS_HASH_FUNC_TOEPLITZ);
	rss->hash_key_size = cpu_to_le16(VX3_RSS_KEY_SIZE);
	rss->ind_table_size = cpu_to_le16(VX3_RSS_IND_TABLE_SIZE);
	memcpy(rss->hash_key, qs->cfg.rss_key, VX3_RSS_KEY_SIZE);
	for (i = 0; i < VX3_RSS_IND_TABLE_SIZE; i++)
		rss->ind_table[i] = vx3_rss_indir(priv, &qs->cfg, i);
	sh->rss_conf.ver = cpu_to_le32(VX3_RSS_CONF_VER);
	sh->rss_conf.len = cpu_to_le32(sizeof(*rss));
	sh->rss_conf.pa = cpu_to_le64(priv->rss_conf_dma);
}

/* Caller holds cmd_lock */
static void vx3_write_shared(struct vx3_priv *priv, struct vx3_qset *qs)
{
	netdev_features_t features = priv->netdev->features;
	struct vx3_shared *sh = priv->shared;
	u32 gos, i;

	/* A queue with an AF_XDP pool takes frames of one buffer: the device
	 * does not aggregate for such a queue set, also before
	 * netdev_update_features() has turned LRO off
	 */
	if (vx3_xsk_any(&qs->cfg))
		features &= ~NETIF_F_LRO;

	gos = FIELD_PREP(VX3_GOS_BITS, IS_ENABLED(CONFIG_64BIT) ?
			 VX3_GOS_BITS_64 : VX3_GOS_BITS_32) |
	      FIELD_PREP(VX3_GOS_TYPE, VX3_GOS_TYPE_LINUX);

	sh->magic = cpu_to_le32(VX3_SHARED_MAGIC);
	sh->gos = cpu_to_le32(gos);
	sh->rev_spt = cpu_to_le32(VX3_REV_1);
	sh->upt_spt = cpu_to_le32(VX3_UPT_1);
	vx3_write_rss_conf(priv, qs);
	sh->upt_features = cpu_to_le64(vx3_upt_features(priv, features));
	sh->queue_desc_pa = cpu_to_le64(qs->qdesc_dma);
	sh->queue_desc_len = cpu_to_le32(qs->qdesc_size);
	sh->mtu = cpu_to_le32(qs->cfg.mtu);
	sh->max_rx_sg = cpu_to_le16(VX3_RX_MAX_SG);
	sh->num_tx_queues = qs->num_vec + qs->num_rxq;
	sh->num_rx_queues = qs->num_rxq;
	sh->auto_mask = 1;
	sh->num_intrs = priv->num_irqs;
	sh->event_intr_idx = priv->event_idx;
	/* A host that moderates interrupts picks the rate for each index
	 * from the load; with level 0 it would raise one per packet
	 */
	for (i = 0; i < VX3_MAX_INTRS; i++)
		sh->mod_levels[i] = i < sh->num_intrs ?
				    VX3_IML_ADAPTIVE : VX3_IML_NONE;
	sh->intr_ctrl = 0;
	sh->mf_table_pa = cpu_to_le64(priv->mf_table_dma);
	sh->ecr = 0;
}

/**
 * vx3_activate() - fill DriverShared and activate the device on a queue set
 * @priv: driver private data
 * @qs: the queue set, its descriptors written and its rings reset
 *
 * Return: 0, or -EIO if the device refused the configuration.
 */
int vx3_activate(struct vx3_priv *priv, struct vx3_qset *qs)
{
	unsigned long flags;
	u32 ret;

	spin_lock_irqsave(&priv->cmd_lock, flags);
	vx3_write_shared(priv, qs);
	spin_unlock_irqrestore(&priv->cmd_lock, flags);

	/* The address list as it is now; later changes come through the
	 * core's rx mode work (ndo_set_rx_mode_async)
	 */
	netif_addr_lock_bh(priv->netdev);
	vx3_write_rx_filters(priv, &priv->netdev->mc);
	netif_addr_unlock_bh(priv->netdev);

	/* writel() orders the rings and DriverShared before the device is
	 * told where they are.
	 */
	spin_lock_irqsave(&priv->cmd_lock, flags);
	writel(lower_32_bits(priv->shared_dma), priv->bar1 + VX3_REG_DSAL);
	writel(upper_32_bits(priv->shared_dma), priv->bar1 + VX3_REG_DSAH);
	writel(VX3_CMD_ACTIVATE_DEV, priv->bar1 + VX3_REG_CMD);
	ret = readl(priv->bar1 + VX3_REG_CMD);
	if (!ret) {
		/* Activation restores the permanent address */
		vx3_write_mac_locked(priv);
		priv->active = true;
	}
	spin_unlock_irqrestore(&priv->cmd_lock, flags);

	if (ret) {
		netdev_err(priv->netdev, "device refused activation (%#x)\n",
			   ret);
		return -EIO;
	}
	return 0;
}

/**
 * vx3_reset_dev() - stop the device: no more DMA, no more interrupts
 * @priv: driver private data
 */
void vx3_reset_dev(struct vx3_priv *priv)
{
	unsigned long flags;

	spin_lock_irqsave(&priv->cmd_lock, flags);
	writel(VX3_CMD_QUIESCE_DEV, priv->bar1 + VX3_REG_CMD);
	writel(VX3_CMD_RESET_DEV, priv->bar1 + VX3_REG_CMD);
	priv->active = false;
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
}

/**
 * vx3_write_pm_conf() - arm or disarm the device's wake-up events
 * @priv: driver private data
 * @arm: true: wake on the events of @priv->wol; false: on none
 *
 * Writes the power management configuration and its descriptor in
 * DriverShared; an active device is told to read them (UPDATE_PMCFG).
 * Only an active device looks at frames, and the interface defines the
 * command for one: an inactive device reads the configuration at its
 * next activation.
 */
void vx3_write_pm_conf(struct vx3_priv *priv, bool arm)
{
	struct vx3_pm_conf *pm = priv->pm_conf;
	struct vx3_shared *sh = priv->shared;
	unsigned long flags;
	u16 events = 0;

	if (arm && (priv->wol & WAKE_MAGIC))
		events |= VX3_PM_WAKE_MAGIC;

	spin_lock_irqsave(&priv->cmd_lock, flags);
	memset(pm, 0, sizeof(*pm));
	pm->wake_events = cpu_to_le16(events);
	sh->pm_conf.ver = cpu_to_le32(VX3_PM_CONF_VER);
	sh->pm_conf.len = cpu_to_le32(sizeof(*pm));
	sh->pm_conf.pa = cpu_to_le64(priv->pm_conf_dma);
	if (priv->active)
		vx3_cmd_noread(priv, VX3_CMD_UPDATE_PMCFG);
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
}

/**
 * vx3_read_hw_stats() - device counters since the driver was loaded
 * @priv: driver private data
 * @qs: the running queue set, or NULL
 * @hw: filled with the counters of earlier activations plus, while the
 *	device is active, those of the current one
 */
void vx3_read_hw_stats(struct vx3_priv *priv, struct vx3_qset *qs,
		       struct vx3_hw_stats *hw)
{
	const struct vx3_tx_queue_desc *tqd;
	const struct vx3_rx_queue_desc *rqd;
	unsigned long flags;
	u32 i;

	*hw = priv->hw_base;
	if (!qs)
		return;
	tqd = qs->qdesc;
	rqd = vx3_qdesc_rx(qs->qdesc, qs->num_vec + qs->num_rxq);

	spin_lock_irqsave(&priv->cmd_lock, flags);
	if (priv->active) {
		vx3_cmd_noread(priv, VX3_CMD_GET_STATS);
		for (i = 0; i < qs->num_vec + qs->num_rxq; i++) {
			hw->tx_errors +=
				le64_to_cpu(tqd[i].stats[VX3_HW_TX_ERRORS]);
			hw->tx_discards +=
				le64_to_cpu(tqd[i].stats[VX3_HW_TX_DISCARDS]);
		}
		for (i = 0; i < qs->num_rxq; i++)
			hw->rx_out_of_buf +=
				le64_to_cpu(rqd[i].stats[VX3_HW_RX_OUT_OF_BUF]);
	}
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
}
