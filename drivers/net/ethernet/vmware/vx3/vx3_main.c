// SPDX-License-Identifier: GPL-2.0-only
/* vx3: VMXNET3 PCI probe, device activation, interrupts and resets */

#include <linux/bitfield.h>
#include <linux/etherdevice.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/pci.h>

#include "vx3.h"

/**
 * vx3_max_txq() - the number of stack TX queues the device allows
 * @priv: driver private data
 *
 * Return: 1 with MSI or INTx, else one per MSI-X vector but the event
 * one, and at most one less than the device has: with one RX queue, the
 * last is its XDP ring (each further RX queue takes one more).
 */
u32 vx3_max_txq(const struct vx3_priv *priv)
{
	if (priv->intr_mode != VX3_INTR_MSIX)
		return 1;
	return min_t(u32, priv->num_irqs - 1, VX3_MAX_STACK_TXQ);
}

/* The device's link state, read only while it is active: between the
 * quiesce and the activation of a reconfiguration or a reset a late
 * link event is ignored, and vx3_up() reads the state again.
 */
static bool vx3_read_link(struct vx3_priv *priv, u32 *link)
{
	unsigned long flags;
	bool active;

	spin_lock_irqsave(&priv->cmd_lock, flags);
	active = priv->active;
	if (active) {
		writel(VX3_CMD_GET_LINK, priv->bar1 + VX3_REG_CMD);
		*link = readl(priv->bar1 + VX3_REG_CMD);
	}
	spin_unlock_irqrestore(&priv->cmd_lock, flags);
	return active;
}

static void vx3_update_link(struct vx3_priv *priv)
{
	u32 link;

	if (!vx3_read_link(priv, &link))
		return;
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

	/* The device writes ecr before it raises the interrupt that got us
	 * here: read it only after that.
	 */
	dma_rmb();
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
	int err, irq;
	u32 i;

	if (priv->intr_mode != VX3_INTR_MSIX)
		handler = vx3_shared_irq;
	if (priv->intr_mode == VX3_INTR_INTX)
		flags = IRQF_SHARED;

	for (i = 0; i < qs->num_vec; i++) {
		struct vx3_vector *vec = qs->vec[i];

		irq = pci_irq_vector(priv->pdev, i);
		vec->irq = irq;
		snprintf(vec->name, sizeof(vec->name), "%s-%s-%u",
			 netdev->name, vec->num_rx ? "rxtx" : "tx", i);
		err = request_irq(irq, handler, flags, vec->name, vec);
		if (err)
			goto err_free;
		netif_napi_set_irq(&vec->napi, vec->irq);
	}

	if (priv->intr_mode == VX3_INTR_MSIX) {
		irq = pci_irq_vector(priv->pdev, priv->event_idx);
		err = request_irq(irq, vx3_msix_event_irq, 0, netdev->name,
				  priv);
		if (err)
			goto err_free;
	}
	return 0;

err_free:
	/* @i queue vectors have an IRQ: all if the event one failed */
	netdev_err(netdev, "cannot request IRQ %d: %d\n", irq, err);
	vx3_free_irqs(priv, qs, i, false);
	return err;
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

	vx3_write_queue_descs(priv, qs);
	err = vx3_qset_reset(qs);
	if (err)
		return err;

	err = netif_set_real_num_queues(netdev, qs->num_vec, qs->num_rxq);
	if (err)
		return err;

	err = vx3_request_irqs(priv, qs);
	if (err)
		return err;

	err = vx3_activate(priv, qs);
	if (err)
		goto err_irqs;
	for (i = 0; i < qs->num_rxq; i++)
		vx3_rx_queue_write_prod(&qs->vec[i]->rx[0]);

	for (i = 0; i < qs->num_vec; i++) {
		struct vx3_vector *vec = qs->vec[i];

		napi_enable(&vec->napi);
		netif_queue_set_napi(netdev, i, NETDEV_QUEUE_TYPE_TX,
				     &vec->napi);
		if (vec->num_rx)
			netif_queue_set_napi(netdev, i, NETDEV_QUEUE_TYPE_RX,
					     &vec->napi);
	}

	for (i = 0; i < qs->num_vec; i++)
		vx3_irq_unmask(priv, qs->vec[i]->intr_idx);
	if (priv->intr_mode == VX3_INTR_MSIX)
		vx3_irq_unmask(priv, priv->event_idx);
	/* An AF_XDP queue may have found the fill ring empty, and its socket
	 * may have queued frames while no queue ran: poll it once
	 */
	for (i = 0; i < qs->num_rxq; i++) {
		if (!qs->vec[i]->rx[0].xsk_pool)
			continue;
		local_bh_disable();
		napi_schedule(&qs->vec[i]->napi);
		local_bh_enable();
	}

	vx3_update_link(priv);
	rcu_assign_pointer(priv->xdp_qs, qs);
	/* Wake, not just start: packets the qdisc held while the device
	 * was reset or reconfigured go out without waiting for a new one.
	 */
	netif_tx_wake_all_queues(netdev);
	return 0;

err_irqs:
	vx3_reset_dev(priv);
	vx3_free_irqs(priv, qs, qs->num_vec,
		      priv->intr_mode == VX3_INTR_MSIX);
	vx3_qset_drain(qs);
	return err;
}

/* Stop polling, interrupt handling and transmitting on a running queue
 * set; the device is left as it is.
 */
static void vx3_stop_datapath(struct vx3_priv *priv, struct vx3_qset *qs)
{
	struct net_device *netdev = priv->netdev;
	u32 i;

	/* NAPI goes first: a TX completion would wake a stopped queue. A
	 * packet queued meanwhile waits on the ring and is freed with it.
	 */
	for (i = 0; i < qs->num_vec; i++) {
		struct vx3_vector *vec = qs->vec[i];

		napi_disable(&vec->napi);
		netif_queue_set_napi(netdev, i, NETDEV_QUEUE_TYPE_TX, NULL);
		if (vec->num_rx)
			netif_queue_set_napi(netdev, i, NETDEV_QUEUE_TYPE_RX,
					     NULL);
	}
	/* With the carrier on, the watchdog checks stopped queues: their
	 * last transmit may be long ago on an idle link, so they start the
	 * timeout afresh now.
	 */
	for (i = 0; i < netdev->num_tx_queues; i++)
		txq_trans_cond_update(netdev_get_tx_queue(netdev, i));
	netif_tx_disable(netdev);
	vx3_free_irqs(priv, qs, qs->num_vec,
		      priv->intr_mode == VX3_INTR_MSIX);
}

/**
 * vx3_down() - stop the device and its queues
 * @priv: driver private data
 * @qs: the running queue set
 *
 * After this the device does no DMA and raises no interrupt; the queues
 * keep their RX buffers so they can be started again or freed. The
 * carrier is left alone: a reconfiguration swaps the queues under it,
 * and a close or a reset turns it off.
 *
 * Context: rtnl held.
 */
void vx3_down(struct vx3_priv *priv, struct vx3_qset *qs)
{
	/* No ndo_xdp_xmit may post to an XDP ring once it is drained */
	RCU_INIT_POINTER(priv->xdp_qs, NULL);
	synchronize_net();

	/* The device clears its counters at the next activation */
	spin_lock_bh(&priv->stats_lock);
	vx3_read_hw_stats(priv, qs, &priv->hw_base);
	vx3_reset_dev(priv);
	spin_unlock_bh(&priv->stats_lock);

	vx3_stop_datapath(priv, qs);
	vx3_qset_drain(qs);
}

/**
 * vx3_schedule_reset() - ask for a reset of the device
 * @priv: driver private data
 *
 * The reset runs in vx3_work(). The request goes through @priv->reset_timer
 * because netdev_work_sched() cannot be called in hard IRQ context, where
 * the device's error events are found.
 *
 * Context: any.
 */
void vx3_schedule_reset(struct vx3_priv *priv)
{
	mod_timer(&priv->reset_timer, jiffies);
}

/**
 * vx3_retry_later() - keep a running interface that lost its queues up
 * @priv: driver private data, @priv->qs already freed
 *
 * The device refused every configuration it was given. The interface is
 * not closed behind the user's back: it stays up without carrier, and
 * vx3_work() tries to open the queues again, after 1, 2, 4, 8 and 16 s and
 * then every 32 s, until it succeeds or the interface is closed.
 *
 * Context: rtnl held.
 */
void vx3_retry_later(struct vx3_priv *priv)
{
	u32 shift = min(priv->retries, VX3_RETRY_MAX_SHIFT);

	netif_carrier_off(priv->netdev);
	priv->retries++;
	mod_timer(&priv->reset_timer, jiffies + (HZ << shift));
}

/**
 * vx3_schedule_restart() - apply the RSS key and hash types of the user
 * @priv: driver private data, the new ones in @priv->cfg
 *
 * The device reads them at activation: the running queue set takes them
 * into its configuration, and vx3_work() activates the device again.
 *
 * Context: rtnl held.
 */
void vx3_schedule_restart(struct vx3_priv *priv)
{
	struct vx3_qset *qs = priv->qs;

	if (!qs)
		return;
	memcpy(qs->cfg.rss_key, priv->cfg.rss_key, sizeof(qs->cfg.rss_key));
	qs->cfg.rss_types = priv->cfg.rss_types;
	/* Without RSS the device reads neither */
	if (qs->num_rxq > 1)
		netdev_work_sched(priv->netdev, VX3_WORK_RESTART);
}

static void vx3_reset_timer(struct timer_list *t)
{
	struct vx3_priv *priv = timer_container_of(priv, t, reset_timer);

	netdev_work_sched(priv->netdev, VX3_WORK_RESET);
}

/**
 * vx3_work() - reset or restart the device (ndo_work)
 * @netdev: the interface
 * @events: VX3_WORK_* bits
 *
 * A reset (an error of the device or of a queue) and a restart (a new RSS
 * key or hash types, which the device reads at activation) stop the
 * running queues and activate the device again with the same ones. An
 * interface that lost its queues (vx3_retry_later()) gets them again.
 *
 * Context: rtnl held, from the core's netdev work.
 */
void vx3_work(struct net_device *netdev, unsigned long events)
{
	struct vx3_priv *priv = netdev_priv(netdev);
	int err;

	if (!netif_running(netdev))
		return;

	if (!priv->qs) {
		err = vx3_open_queues(priv);
		if (err) {
			netdev_err(netdev, "cannot restart the queues (%d), trying again later\n",
				   err);
			vx3_retry_later(priv);
			return;
		}
		netdev_info(netdev, "queues restarted after %u attempt(s)\n",
			    priv->retries);
		priv->retries = 0;
		return;
	}

	if (events & VX3_WORK_RESET) {
		netdev_warn(netdev, "resetting the device\n");
		priv->resets++;
	}
	vx3_down(priv, priv->qs);
	/* A device error may take the link down; vx3_up() reads it again */
	if (events & VX3_WORK_RESET)
		netif_carrier_off(netdev);
	err = vx3_up(priv, priv->qs);
	if (err) {
		netdev_err(netdev, "cannot activate the device again (%d), trying again later\n",
			   err);
		vx3_free_qset(priv, vx3_swap_qset(priv, NULL));
		vx3_retry_later(priv);
	}
}

static int vx3_alloc_irqs(struct vx3_priv *priv)
{
	struct pci_dev *pdev = priv->pdev;
	int n;

	n = pci_alloc_irq_vectors(pdev, 2, VX3_MAX_STACK_TXQ + 1,
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
	timer_setup(&priv->reset_timer, vx3_reset_timer, 0);

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
	err = vx3_dev_init(priv);
	if (err)
		goto err_free_netdev;

	/* Every address the device takes is 64 bits wide */
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err) {
		dev_err(&pdev->dev, "no usable DMA configuration\n");
		goto err_free_netdev;
	}
	pci_set_master(pdev);

	priv->shared = dmam_alloc_coherent(&pdev->dev, sizeof(*priv->shared),
					   &priv->shared_dma, GFP_KERNEL);
	priv->mf_table = dmam_alloc_coherent(&pdev->dev,
					     VX3_MF_TABLE_ENTRIES * ETH_ALEN,
					     &priv->mf_table_dma, GFP_KERNEL);
	priv->pm_conf = dmam_alloc_coherent(&pdev->dev, sizeof(*priv->pm_conf),
					    &priv->pm_conf_dma, GFP_KERNEL);
	priv->rss_conf = dmam_alloc_coherent(&pdev->dev,
					     sizeof(*priv->rss_conf),
					     &priv->rss_conf_dma, GFP_KERNEL);
	if (!priv->shared || !priv->mf_table || !priv->pm_conf ||
	    !priv->rss_conf) {
		err = -ENOMEM;
		goto err_clear_master;
	}

	vx3_read_perm_addr(priv);

	/* Managed by pcim_enable_device(): freed when the driver unbinds */
	err = vx3_alloc_irqs(priv);
	if (err) {
		dev_err(&pdev->dev, "cannot allocate interrupts: %d\n", err);
		goto err_clear_master;
	}
	/* One combined channel (a TX and an RX queue on one vector) per
	 * default RSS queue, as far as the device has queues and vectors
	 */
	priv->cfg.num_rxq = min_t(u32, vx3_max_txq(priv),
				  netif_get_num_default_rss_queues());
	priv->cfg.num_rxq = min_t(u32, priv->cfg.num_rxq, VX3_MAX_RXQ);
	priv->cfg.num_txq = priv->cfg.num_rxq;
	netdev_rss_key_fill(priv->cfg.rss_key, sizeof(priv->cfg.rss_key));
	priv->cfg.rss_types = VX3_RSS_HASH_IPV4 | VX3_RSS_HASH_TCP_IPV4 |
			      VX3_RSS_HASH_IPV6 | VX3_RSS_HASH_TCP_IPV6;
	/* The core spreads the queue vectors over the CPUs (vector i on the
	 * i-th CPU near the device), follows the user's changes of their
	 * affinity and sets it again on every vector that replaces one
	 * (netif_napi_set_irq(), napi_enable()). Not with MSI or INTx: the
	 * one line may be shared, and an affinity notifier belongs to the
	 * line.
	 */
	if (priv->intr_mode == VX3_INTR_MSIX)
		netif_set_affinity_auto(netdev);

	pci_set_drvdata(pdev, netdev);
	netif_carrier_off(netdev);
	err = register_netdev(netdev);
	if (err) {
		dev_err(&pdev->dev, "cannot register net device: %d\n", err);
		goto err_clear_master;
	}

	netdev_info(netdev, "VMXNET3 at %s, %pM, %s with %d vector(s)\n",
		    pci_name(pdev), netdev->dev_addr,
		    priv->intr_mode == VX3_INTR_MSIX ? "MSI-X" :
		    priv->intr_mode == VX3_INTR_MSI ? "MSI" : "INTx",
		    priv->num_irqs);
	return 0;

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

	/* No new request; unregistering drops the pending work */
	timer_shutdown_sync(&priv->reset_timer);
	unregister_netdev(netdev);

	writel(VX3_CMD_RESET_DEV, priv->bar1 + VX3_REG_CMD);
	pci_clear_master(pdev);
	free_netdev(netdev);
}

/* Wake-on-LAN is armed on an active device, which is the one that looks
 * at frames: the datapath stops (no poll, no interrupt, no transmit),
 * and the queues stay allocated, for the device to receive into, until
 * resume resets the device and frees them (@priv->wake_qs). Their
 * counters and the device's move into the base totals now.
 */
static void vx3_arm_wol(struct vx3_priv *priv)
{
	struct vx3_qset *qs;
	int i;

	RCU_INIT_POINTER(priv->xdp_qs, NULL);
	synchronize_net();
	for (i = 0; i < priv->num_irqs; i++)
		writel(1, priv->bar0 + VX3_REG_IMR(i));
	vx3_stop_datapath(priv, priv->qs);
	netif_carrier_off(priv->netdev);
	qs = vx3_swap_qset(priv, NULL);
	spin_lock_bh(&priv->stats_lock);
	vx3_read_hw_stats(priv, qs, &priv->hw_base);
	spin_unlock_bh(&priv->stats_lock);
	priv->wake_qs = qs;
	vx3_write_pm_conf(priv, true);
}

/* Whether suspend or power-off arms Wake-on-LAN: the user asked for it,
 * the PCI function may wake the machine, and the interface is up (a
 * device that was never activated looks at no frame)
 */
static bool vx3_wol_armable(struct vx3_priv *priv)
{
	return priv->wol && device_may_wakeup(&priv->pdev->dev) &&
	       netif_running(priv->netdev) && priv->qs;
}

/* Suspend, freeze and poweroff: the queues are freed as by a close, unless
 * Wake-on-LAN keeps the device active (@wake); the device loses its state
 * (S3 resets it), so nothing else is kept.
 */
static int vx3_sleep(struct device *dev, bool wake)
{
	struct net_device *netdev = dev_get_drvdata(dev);
	struct vx3_priv *priv = netdev_priv(netdev);

	rtnl_lock();
	netif_device_detach(netdev);
	if (wake && vx3_wol_armable(priv))
		vx3_arm_wol(priv);
	else if (netif_running(netdev))
		vx3_close_queues(priv);
	priv->retries = 0;
	rtnl_unlock();
	/* The datapath is stopped: nothing asks for a reset any more, and
	 * the work finds the device detached; resume starts afresh
	 */
	timer_delete_sync(&priv->reset_timer);

	if (!priv->wake_qs)
		writel(VX3_CMD_RESET_DEV, priv->bar1 + VX3_REG_CMD);
	return 0;
}

/* Suspend to RAM and the hibernation's poweroff: the machine sleeps, and
 * Wake-on-LAN may wake it
 */
static int vx3_suspend(struct device *dev)
{
	return vx3_sleep(dev, true);
}

/* Freeze: the device only stops while the hibernation image is made, and
 * thaw or restore follows; nothing is armed
 */
static int vx3_freeze(struct device *dev)
{
	return vx3_sleep(dev, false);
}

/* Resume, thaw and restore: PCI state is back (bus mastering, MSI-X); the
 * device is set up from scratch and a running interface opened again.
 */
static int vx3_resume(struct device *dev)
{
	struct net_device *netdev = dev_get_drvdata(dev);
	struct vx3_priv *priv = netdev_priv(netdev);
	int err;

	/* Resets the device first, also when it fails */
	err = vx3_dev_init(priv);

	rtnl_lock();
	/* The queues the device kept receiving into while it was armed */
	if (priv->wake_qs) {
		vx3_qset_drain(priv->wake_qs);
		vx3_free_qset(priv, priv->wake_qs);
		priv->wake_qs = NULL;
	}
	if (err) {
		rtnl_unlock();
		return err;
	}
	/* Disarmed before the activation reads it, and told again after */
	vx3_write_pm_conf(priv, false);
	if (netif_running(netdev)) {
		err = vx3_open_queues(priv);
		if (err) {
			netdev_err(netdev, "cannot restart after resume (%d), trying again later\n",
				   err);
			vx3_retry_later(priv);
		} else if (priv->wol) {
			vx3_write_pm_conf(priv, false);
		}
	}
	netif_device_attach(netdev);
	rtnl_unlock();
	return 0;
}

static const struct dev_pm_ops vx3_pm_ops = {
	.suspend	= pm_sleep_ptr(vx3_suspend),
	.resume		= pm_sleep_ptr(vx3_resume),
	.freeze		= pm_sleep_ptr(vx3_freeze),
	.thaw		= pm_sleep_ptr(vx3_resume),
	.poweroff	= pm_sleep_ptr(vx3_suspend),
	.restore	= pm_sleep_ptr(vx3_resume),
};

static void vx3_shutdown(struct pci_dev *pdev)
{
	struct net_device *netdev = pci_get_drvdata(pdev);
	struct vx3_priv *priv = netdev_priv(netdev);

	rtnl_lock();
	netif_device_detach(netdev);
	/* Only a powered-off machine is woken; the rest reboots */
	if (system_state == SYSTEM_POWER_OFF && vx3_wol_armable(priv))
		vx3_arm_wol(priv);
	else if (netif_running(netdev))
		dev_close(netdev);
	rtnl_unlock();

	if (priv->wake_qs) {
		pci_wake_from_d3(pdev, true);
		return;
	}
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
	.driver.pm	= pm_sleep_ptr(&vx3_pm_ops),
};
module_pci_driver(vx3_driver);

MODULE_DESCRIPTION("VMware VMXNET3 Ethernet driver (vx3)");
MODULE_LICENSE("GPL");
