// SPDX-License-Identifier: GPL-2.0-only
/* vx3: VMXNET3 PCI probe, device activation, interrupts and resets */

#include <linux/bitfield.h>
#include <linux/etherdevice.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/pci.h>
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

/**
 * vx3_cmd_noread() - run a device command that has no result
 * @priv: driver private data
 * @cmd: VX3_CMD_* code
 *
 * The command register is not read back: some implementations complain
 * about reads after commands without a result. The caller holds cmd_lock.
 */
void vx3_cmd_noread(struct vx3_priv *priv, u32 cmd)
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
 * vx3_max_txq() - the number of TX queues the interrupt setup allows
 * @priv: driver private data
 *
 * Return: 1 with MSI or INTx, else one per MSI-X vector but the event one.
 */
u32 vx3_max_txq(const struct vx3_priv *priv)
{
	if (priv->intr_mode != VX3_INTR_MSIX)
		return 1;
	return min_t(u32, priv->num_irqs - 1, VX3_MAX_TX_QUEUES);
}

/**
 * vx3_schedule_reset() - reset the device from process context
 * @priv: driver private data
 *
 * Used when the device breaks the ring protocol, reports a queue error or
 * stops completing transmits. Safe in any context.
 */
void vx3_schedule_reset(struct vx3_priv *priv)
{
	schedule_work(&priv->reset_work);
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
	rqd = (const struct vx3_rx_queue_desc *)&tqd[qs->num_vec];

	spin_lock_irqsave(&priv->cmd_lock, flags);
	if (priv->active) {
		vx3_cmd_noread(priv, VX3_CMD_GET_STATS);
		for (i = 0; i < qs->num_vec; i++) {
			hw->tx_errors +=
				le64_to_cpu(tqd[i].stats[VX3_HW_TX_ERRORS]);
			hw->tx_discards +=
				le64_to_cpu(tqd[i].stats[VX3_HW_TX_DISCARDS]);
		}
		hw->rx_out_of_buf +=
			le64_to_cpu(rqd->stats[VX3_HW_RX_OUT_OF_BUF]);
	}
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
}

static void vx3_update_link(struct vx3_priv *priv)
{
	u32 link = vx3_cmd(priv, VX3_CMD_GET_LINK);

	if (link & VX3_LINK_UP) {
		WRITE_ONCE(priv->link_speed, FIELD_GET(VX3_LINK_SPEED, link));
		if (!netif_carrier_ok(priv->netdev))
			netif_info(priv, link, priv->netdev, "link up, %u Mb/s\n",
				   priv->link_speed);
		netif_carrier_on(priv->netdev);
	} else {
		if (netif_carrier_ok(priv->netdev))
			netif_info(priv, link, priv->netdev, "link down\n");
		netif_carrier_off(priv->netdev);
	}
}

static void vx3_handle_events(struct vx3_priv *priv)
{
	u32 ecr;

	ecr = le32_to_cpu(READ_ONCE(priv->shared->ecr));
	if (!ecr)
		return;
	/* The device clears the acknowledged bits in DriverShared itself */
	writel(ecr, priv->bar1 + VX3_REG_ECR);

	if (ecr & VX3_ECR_LINK)
		vx3_update_link(priv);
	if (ecr & (VX3_ECR_RQERR | VX3_ECR_TQERR)) {
		netdev_err(priv->netdev, "device reported a queue error (%#x)\n",
			   ecr);
		vx3_schedule_reset(priv);
	}
}

static irqreturn_t vx3_msix_queue_irq(int irq, void *data)
{
	struct vx3_vector *vec = data;

	napi_schedule_irqoff(&vec->napi);
	return IRQ_HANDLED;
}

static irqreturn_t vx3_msix_event_irq(int irq, void *data)
{
	struct vx3_priv *priv = data;

	vx3_handle_events(priv);
	vx3_irq_unmask(priv, priv->event_idx);
	return IRQ_HANDLED;
}

/* MSI and INTx: one index for everything; NAPI unmasks it when done */
static irqreturn_t vx3_shared_irq(int irq, void *data)
{
	struct vx3_vector *vec = data;
	struct vx3_priv *priv = vec->priv;

	if (priv->intr_mode == VX3_INTR_INTX &&
	    !readl(priv->bar1 + VX3_REG_ICR))
		return IRQ_NONE;

	vx3_handle_events(priv);
	napi_schedule_irqoff(&vec->napi);
	return IRQ_HANDLED;
}

static void vx3_free_irqs(struct vx3_priv *priv, struct vx3_qset *qs,
			  u32 nvec, bool event)
{
	u32 i;

	if (event)
		free_irq(pci_irq_vector(priv->pdev, priv->event_idx), priv);
	for (i = 0; i < nvec; i++) {
		netif_napi_set_irq(&qs->vec[i]->napi, -1);
		free_irq(qs->vec[i]->irq, qs->vec[i]);
	}
}

static int vx3_request_irqs(struct vx3_priv *priv, struct vx3_qset *qs)
{
	struct net_device *netdev = priv->netdev;
	irq_handler_t handler = vx3_msix_queue_irq;
	unsigned long flags = 0;
	int err;
	u32 i;

	if (priv->intr_mode != VX3_INTR_MSIX)
		handler = vx3_shared_irq;
	if (priv->intr_mode == VX3_INTR_INTX)
		flags = IRQF_SHARED;

	for (i = 0; i < qs->num_vec; i++) {
		struct vx3_vector *vec = qs->vec[i];

		vec->irq = pci_irq_vector(priv->pdev, i);
		snprintf(vec->name, sizeof(vec->name), "%s-%s-%u",
			 netdev->name, vec->num_rx ? "rxtx" : "tx", i);
		err = request_irq(vec->irq, handler, flags, vec->name, vec);
		if (err)
			goto err_free;
		netif_napi_set_irq(&vec->napi, vec->irq);
	}

	if (priv->intr_mode == VX3_INTR_MSIX) {
		err = request_irq(pci_irq_vector(priv->pdev, priv->event_idx),
				  vx3_msix_event_irq, 0, netdev->name, priv);
		if (err)
			goto err_free;
	}
	return 0;

err_free:
	netdev_err(netdev, "cannot request IRQ %d: %d\n",
		   pci_irq_vector(priv->pdev, i), err);
	vx3_free_irqs(priv, qs, i, false);
	return err;
}

static void vx3_write_queue_descs(struct vx3_priv *priv, struct vx3_qset *qs)
{
	struct vx3_tx_queue_desc *tqd = qs->qdesc;
	struct vx3_rx_queue_desc *rqd;
	u32 i, r;

	memset(qs->qdesc, 0, vx3_qdesc_size(qs->num_vec));
	for (i = 0; i < qs->num_vec; i++) {
		struct vx3_tx_ring *tx = &qs->vec[i]->tx;

		tqd[i].ring_pa = cpu_to_le64(tx->desc_dma);
		tqd[i].comp_ring_pa = cpu_to_le64(tx->comp_dma);
		tqd[i].ring_size = cpu_to_le32(tx->size);
		tqd[i].comp_ring_size = cpu_to_le32(tx->size);
		tqd[i].intr_idx = qs->vec[i]->intr_idx;
	}

	rqd = (struct vx3_rx_queue_desc *)&tqd[qs->num_vec];
	for (r = 0; r < 2; r++) {
		struct vx3_rx_queue *rxq = &qs->vec[0]->rx[0];

		rqd->ring_pa[r] = cpu_to_le64(rxq->ring[r].desc_dma);
		rqd->ring_size[r] = cpu_to_le32(rxq->ring[r].size);
	}
	rqd->comp_ring_pa = cpu_to_le64(qs->vec[0]->rx[0].comp_dma);
	rqd->comp_ring_size = cpu_to_le32(qs->vec[0]->rx[0].comp_size);
	rqd->intr_idx = qs->vec[0]->intr_idx;
}

static void vx3_write_shared(struct vx3_priv *priv, struct vx3_qset *qs)
{
	struct vx3_shared *sh = priv->shared;
	unsigned long flags;
	u32 gos;

	gos = FIELD_PREP(VX3_GOS_BITS, IS_ENABLED(CONFIG_64BIT) ?
			 VX3_GOS_BITS_64 : VX3_GOS_BITS_32) |
	      FIELD_PREP(VX3_GOS_TYPE, VX3_GOS_TYPE_LINUX);

	spin_lock_irqsave(&priv->cmd_lock, flags);
	sh->magic = cpu_to_le32(VX3_SHARED_MAGIC);
	sh->gos = cpu_to_le32(gos);
	sh->rev_spt = cpu_to_le32(VX3_REV_1);
	sh->upt_spt = cpu_to_le32(VX3_UPT_1);
	sh->upt_features =
		cpu_to_le64(vx3_upt_features(priv->netdev->features));
	sh->queue_desc_pa = cpu_to_le64(qs->qdesc_dma);
	sh->queue_desc_len = cpu_to_le32(vx3_qdesc_size(qs->num_vec));
	sh->mtu = cpu_to_le32(qs->cfg.mtu);
	sh->max_rx_sg = cpu_to_le16(VX3_RX_MAX_SG);
	sh->num_tx_queues = qs->num_vec;
	sh->num_rx_queues = 1;
	sh->auto_mask = 1;
	sh->num_intrs = priv->num_irqs;
	sh->event_intr_idx = priv->event_idx;
	sh->intr_ctrl = 0;
	sh->mf_table_pa = cpu_to_le64(priv->mf_table_dma);
	sh->ecr = 0;
	spin_unlock_irqrestore(&priv->cmd_lock, flags);

	/* The receive filters take the address list lock themselves */
	netif_addr_lock_bh(priv->netdev);
	vx3_write_rx_filters(priv);
	netif_addr_unlock_bh(priv->netdev);
}

static int vx3_activate(struct vx3_priv *priv)
{
	const u8 *addr = priv->netdev->dev_addr;
	unsigned long flags;
	u32 ret;

	/* Descriptor rings and DriverShared are written before the device
	 * is told where they are.
	 */
	wmb();
	spin_lock_irqsave(&priv->cmd_lock, flags);
	writel(lower_32_bits(priv->shared_dma), priv->bar1 + VX3_REG_DSAL);
	writel(upper_32_bits(priv->shared_dma), priv->bar1 + VX3_REG_DSAH);
	writel(VX3_CMD_ACTIVATE_DEV, priv->bar1 + VX3_REG_CMD);
	ret = readl(priv->bar1 + VX3_REG_CMD);
	if (!ret) {
		/* Activation restores the permanent address */
		writel(get_unaligned_le32(addr), priv->bar1 + VX3_REG_MACL);
		writel(get_unaligned_le16(addr + 4), priv->bar1 + VX3_REG_MACH);
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

static void vx3_reset_dev(struct vx3_priv *priv)
{
	unsigned long flags;

	spin_lock_irqsave(&priv->cmd_lock, flags);
	writel(VX3_CMD_QUIESCE_DEV, priv->bar1 + VX3_REG_CMD);
	writel(VX3_CMD_RESET_DEV, priv->bar1 + VX3_REG_CMD);
	priv->active = false;
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
}

/**
 * vx3_up() - start the device on a queue set
 * @priv: driver private data
 * @qs: queues to run; their buffers are (re)posted from index 0
 *
 * Context: rtnl held.
 * Return: 0 on success, or a negative errno with everything undone.
 */
int vx3_up(struct vx3_priv *priv, struct vx3_qset *qs)
{
	struct net_device *netdev = priv->netdev;
	int err;
	u32 i;

	err = vx3_qset_reset(qs);
	if (err)
		return err;

	err = netif_set_real_num_tx_queues(netdev, qs->num_vec);
	if (err)
		return err;

	err = vx3_request_irqs(priv, qs);
	if (err)
		return err;

	vx3_write_queue_descs(priv, qs);
	vx3_write_shared(priv, qs);
	err = vx3_activate(priv);
	if (err)
		goto err_irqs;

	for (i = 0; i < qs->num_vec; i++) {
		struct vx3_vector *vec = qs->vec[i];

		napi_enable(&vec->napi);
		netif_queue_set_napi(netdev, i, NETDEV_QUEUE_TYPE_TX,
				     &vec->napi);
		if (vec->num_rx)
			netif_queue_set_napi(netdev, 0, NETDEV_QUEUE_TYPE_RX,
					     &vec->napi);
	}

	for (i = 0; i < qs->num_vec; i++)
		vx3_irq_unmask(priv, qs->vec[i]->intr_idx);
	if (priv->intr_mode == VX3_INTR_MSIX)
		vx3_irq_unmask(priv, priv->event_idx);

	vx3_update_link(priv);
	netif_tx_start_all_queues(netdev);
	return 0;

err_irqs:
	vx3_reset_dev(priv);
	vx3_free_irqs(priv, qs, qs->num_vec,
		      priv->intr_mode == VX3_INTR_MSIX);
	vx3_qset_drain(qs);
	return err;
}

/**
 * vx3_down() - stop the device and its queues
 * @priv: driver private data
 * @qs: the running queue set
 *
 * After this the device does no DMA and raises no interrupt; the queues
 * keep their RX buffers so they can be started again or freed.
 *
 * Context: rtnl held.
 */
void vx3_down(struct vx3_priv *priv, struct vx3_qset *qs)
{
	struct net_device *netdev = priv->netdev;
	u32 i;

	netif_carrier_off(netdev);

	/* The device clears its counters at the next activation */
	spin_lock_bh(&priv->stats_lock);
	vx3_read_hw_stats(priv, qs, &priv->hw_base);
	vx3_reset_dev(priv);
	spin_unlock_bh(&priv->stats_lock);

	/* NAPI goes first: a TX completion would wake a stopped queue. A
	 * packet queued meanwhile waits on the ring and is freed below.
	 */
	for (i = 0; i < qs->num_vec; i++) {
		struct vx3_vector *vec = qs->vec[i];

		napi_disable(&vec->napi);
		netif_queue_set_napi(netdev, i, NETDEV_QUEUE_TYPE_TX, NULL);
		if (vec->num_rx)
			netif_queue_set_napi(netdev, 0, NETDEV_QUEUE_TYPE_RX,
					     NULL);
	}
	netif_tx_disable(netdev);
	vx3_free_irqs(priv, qs, qs->num_vec,
		      priv->intr_mode == VX3_INTR_MSIX);
	vx3_qset_drain(qs);
}

static void vx3_reset_task(struct work_struct *work)
{
	struct vx3_priv *priv = container_of(work, struct vx3_priv,
					     reset_work);
	struct net_device *netdev = priv->netdev;
	int err;

	rtnl_lock();
	if (!netif_running(netdev) || !priv->qs)
		goto out;

	netdev_warn(netdev, "resetting the device\n");
	priv->resets++;
	vx3_down(priv, priv->qs);
	err = vx3_up(priv, priv->qs);
	if (err) {
		netdev_err(netdev, "reset failed (%d), closing\n", err);
		vx3_free_qset(priv, vx3_swap_qset(priv, NULL));
		dev_close(netdev);
	}
out:
	rtnl_unlock();
}

static int vx3_alloc_irqs(struct vx3_priv *priv)
{
	struct pci_dev *pdev = priv->pdev;
	int n;

	n = pci_alloc_irq_vectors(pdev, 2, VX3_MAX_TX_QUEUES + 1,
				  PCI_IRQ_MSIX);
	if (n > 0) {
		priv->intr_mode = VX3_INTR_MSIX;
		priv->num_irqs = n;
		priv->event_idx = n - 1;
		return 0;
	}

	n = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_INTX);
	if (n < 0)
		return n;
	priv->intr_mode = pdev->msi_enabled ? VX3_INTR_MSI : VX3_INTR_INTX;
	priv->num_irqs = 1;
	priv->event_idx = 0;
	return 0;
}

static int vx3_check_version(struct vx3_priv *priv)
{
	u32 rev = readl(priv->bar1 + VX3_REG_VRRS);
	u32 upt = readl(priv->bar1 + VX3_REG_UVRS);

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

static void vx3_read_perm_addr(struct vx3_priv *priv)
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

static int vx3_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct net_device *netdev;
	struct vx3_priv *priv;
	int err;

	err = pcim_enable_device(pdev);
	if (err)
		return dev_err_probe(&pdev->dev, err, "cannot enable device\n");

	netdev = vx3_alloc_netdev(pdev);
	if (!netdev)
		return -ENOMEM;
	priv = netdev_priv(netdev);
	INIT_WORK(&priv->reset_work, vx3_reset_task);

	priv->bar0 = pcim_iomap_region(pdev, VX3_BAR0, VX3_DRV_NAME);
	if (IS_ERR(priv->bar0)) {
		err = dev_err_probe(&pdev->dev, PTR_ERR(priv->bar0),
				    "cannot map BAR0\n");
		goto err_free_netdev;
	}
	priv->bar1 = pcim_iomap_region(pdev, VX3_BAR1, VX3_DRV_NAME);
	if (IS_ERR(priv->bar1)) {
		err = dev_err_probe(&pdev->dev, PTR_ERR(priv->bar1),
				    "cannot map BAR1\n");
		goto err_free_netdev;
	}

	/* Stop whatever firmware or a previous kernel left running before
	 * the device may master the bus again.
	 */
	writel(VX3_CMD_RESET_DEV, priv->bar1 + VX3_REG_CMD);

	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(32));
	if (err) {
		dev_err(&pdev->dev, "no usable DMA configuration\n");
		goto err_free_netdev;
	}
	pci_set_master(pdev);

	err = vx3_check_version(priv);
	if (err)
		goto err_clear_master;

	priv->shared = dma_alloc_coherent(&pdev->dev, sizeof(*priv->shared),
					  &priv->shared_dma, GFP_KERNEL);
	priv->mf_table = dma_alloc_coherent(&pdev->dev,
					    VX3_MF_TABLE_ENTRIES * ETH_ALEN,
					    &priv->mf_table_dma, GFP_KERNEL);
	if (!priv->shared || !priv->mf_table) {
		err = -ENOMEM;
		goto err_free_dma;
	}

	vx3_read_perm_addr(priv);

	err = vx3_alloc_irqs(priv);
	if (err) {
		dev_err(&pdev->dev, "cannot allocate interrupts: %d\n", err);
		goto err_free_dma;
	}
	priv->cfg.num_txq = min_t(u32, vx3_max_txq(priv),
				  netif_get_num_default_rss_queues());

	pci_set_drvdata(pdev, netdev);
	netif_carrier_off(netdev);
	err = register_netdev(netdev);
	if (err) {
		dev_err(&pdev->dev, "cannot register net device: %d\n", err);
		goto err_free_irqs;
	}

	netdev_info(netdev, "VMXNET3 at %s, %pM, %s with %d vector(s)\n",
		    pci_name(pdev), netdev->dev_addr,
		    priv->intr_mode == VX3_INTR_MSIX ? "MSI-X" :
		    priv->intr_mode == VX3_INTR_MSI ? "MSI" : "INTx",
		    priv->num_irqs);
	return 0;

err_free_irqs:
	pci_free_irq_vectors(pdev);
err_free_dma:
	if (priv->mf_table)
		dma_free_coherent(&pdev->dev, VX3_MF_TABLE_ENTRIES * ETH_ALEN,
				  priv->mf_table, priv->mf_table_dma);
	if (priv->shared)
		dma_free_coherent(&pdev->dev, sizeof(*priv->shared),
				  priv->shared, priv->shared_dma);
err_clear_master:
	pci_clear_master(pdev);
err_free_netdev:
	free_netdev(netdev);
	return err;
}

static void vx3_remove(struct pci_dev *pdev)
{
	struct net_device *netdev = pci_get_drvdata(pdev);
	struct vx3_priv *priv = netdev_priv(netdev);

	unregister_netdev(netdev);
	cancel_work_sync(&priv->reset_work);

	writel(VX3_CMD_RESET_DEV, priv->bar1 + VX3_REG_CMD);
	pci_free_irq_vectors(pdev);
	dma_free_coherent(&pdev->dev, VX3_MF_TABLE_ENTRIES * ETH_ALEN,
			  priv->mf_table, priv->mf_table_dma);
	dma_free_coherent(&pdev->dev, sizeof(*priv->shared), priv->shared,
			  priv->shared_dma);
	pci_clear_master(pdev);
	free_netdev(netdev);
}

static void vx3_shutdown(struct pci_dev *pdev)
{
	struct net_device *netdev = pci_get_drvdata(pdev);
	struct vx3_priv *priv = netdev_priv(netdev);

	rtnl_lock();
	netif_device_detach(netdev);
	if (netif_running(netdev))
		dev_close(netdev);
	rtnl_unlock();

	/* A kexec'd kernel finds a quiet device */
	writel(VX3_CMD_RESET_DEV, priv->bar1 + VX3_REG_CMD);
	pci_clear_master(pdev);
}

static const struct pci_device_id vx3_pci_tbl[] = {
	{ PCI_VDEVICE(VMWARE, PCI_DEVICE_ID_VMWARE_VMXNET3) },
	{ }
};
MODULE_DEVICE_TABLE(pci, vx3_pci_tbl);

static struct pci_driver vx3_driver = {
	.name		= VX3_DRV_NAME,
	.id_table	= vx3_pci_tbl,
	.probe		= vx3_probe,
	.remove		= vx3_remove,
	.shutdown	= vx3_shutdown,
};
module_pci_driver(vx3_driver);

MODULE_DESCRIPTION("VMware VMXNET3 Ethernet driver (vx3)");
MODULE_LICENSE("GPL");
