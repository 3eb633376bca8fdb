// SPDX-License-Identifier: GPL-2.0-only
/* vx3: NAPI vectors, the queues they own, and polling */

#include <linux/dma-mapping.h>
#include <linux/netdevice.h>
#include <linux/slab.h>

#include "vx3.h"

static int vx3_poll(struct napi_struct *napi, int budget)
{
	struct vx3_vector *vec = container_of(napi, struct vx3_vector, napi);
	struct vx3_priv *priv = vec->priv;
	bool bad = false, more = false;
	int work = 0;
	u32 i;

	/* TX completions are cleaned whatever the budget, even from
	 * netpoll (budget 0); RX and the XDP ring (whose lock netpoll could
	 * find held on its CPU) only with a budget.
	 */
	if (!vx3_tx_clean(&vec->tx, budget))
		bad = true;
	for (i = 0; budget && i < vec->num_rx; i++)
		if (!vx3_xdp_tx_clean(&vec->rx[i], budget))
			bad = true;
	for (i = 0; budget && i < vec->num_rx && !bad; i++)
		work += vx3_rx_clean(&vec->rx[i], budget, &bad);
	/* An AF_XDP socket's frames go out on the XDP ring */
	for (i = 0; budget && i < vec->num_rx && !bad; i++)
		if (vec->rx[i].xsk_pool && vx3_xsk_xmit(&vec->rx[i], budget))
			more = true;

	if (unlikely(bad)) {
		/* Leave the interrupt masked; the reset restarts the rings */
		vx3_schedule_reset(priv);
		if (!budget)
			return 0;
		work = min(work, budget - 1);
		napi_complete_done(napi, work);
		return work;
	}

	if (work >= budget || more)
		return budget;
	/* False while a busy poller owns the instance, or while
	 * defer-hard-irqs keeps the interrupt off and its timer polls
	 * instead: the interrupt then stays masked.
	 */
	if (napi_complete_done(napi, work))
		vx3_irq_unmask(priv, vec->intr_idx);
	return work;
}

/* The caller waits for an RCU grace period (synchronize_net()) between
 * this and freeing the vector.
 */
static void vx3_free_vector_queues(struct vx3_vector *vec)
{
	u32 i;

	for (i = 0; i < vec->num_rx; i++)
		vx3_rx_queue_free(&vec->rx[i]);
	vx3_tx_ring_free(&vec->tx);
	__netif_napi_del(&vec->napi);
}

/* Vector @idx of @cfg->num_txq: TX queue @idx, and if @idx is below
 * @cfg->num_rxq RX queue @idx with its XDP ring, device TX queue
 * @cfg->num_txq + @idx
 */
static struct vx3_vector *vx3_alloc_vector(struct vx3_priv *priv,
					   const struct vx3_cfg *cfg, u16 idx)
{
	u32 num_rx = idx < cfg->num_rxq ? 1 : 0;
	struct vx3_vector *vec;
	int err;

	vec = kzalloc_flex(*vec, rx, num_rx, GFP_KERNEL);
	if (!vec)
		return NULL;
	vec->num_rx = num_rx;
	vec->priv = priv;
	vec->irq = -1;
	vec->intr_idx = priv->intr_mode == VX3_INTR_MSIX ? idx : 0;
	/* Vector @idx keeps config slot @idx across queue sets: its NAPI ID
	 * and what netdev-genl napi-set changed (defer-hard-irqs,
	 * gro-flush-timeout, irq-suspend-timeout, threaded) and the IRQ
	 * affinity survive a reconfiguration, which replaces every vector.
	 * The old vector is disabled (its settings saved) before the new one
	 * is enabled (and restores them).
	 */
	netif_napi_add_config(priv->netdev, &vec->napi, vx3_poll, idx);

	err = vx3_tx_ring_alloc(priv, &vec->tx, idx, cfg->tx_ring, false);
	if (err) {
		vec->num_rx = 0;
		goto err_free;
	}
	if (num_rx) {
		err = vx3_rx_queue_alloc(priv, &vec->rx[0], &vec->napi, idx,
					 cfg->num_txq + idx, cfg);
		if (err) {
			vec->num_rx = 0;
			goto err_free;
		}
	}
	return vec;

err_free:
	vx3_free_vector_queues(vec);
	synchronize_net();
	kfree(vec);
	return NULL;
}

/**
 * vx3_free_qset() - free a stopped queue set
 * @priv: driver private data
 * @qs: the queue set, may be NULL
 */
void vx3_free_qset(struct vx3_priv *priv, struct vx3_qset *qs)
{
	u32 i;

	if (!qs)
		return;
	for (i = 0; i < qs->num_vec; i++)
		vx3_free_vector_queues(qs->vec[i]);
	/* One grace period for every NAPI instance deleted above */
	synchronize_net();
	for (i = 0; i < qs->num_vec; i++)
		kfree(qs->vec[i]);
	if (qs->qdesc)
		dma_free_coherent(&priv->pdev->dev, qs->qdesc_size, qs->qdesc,
				  qs->qdesc_dma);
	kfree(qs);
}

/* Bytes of the queue descriptor table: @num_dev_txq TX queue descriptors,
 * then those of the @num_rxq RX queues
 */
static size_t vx3_qdesc_size(u32 num_dev_txq, u32 num_rxq)
{
	return num_dev_txq * sizeof(struct vx3_tx_queue_desc) +
	       num_rxq * sizeof(struct vx3_rx_queue_desc);
}

/**
 * vx3_alloc_qset() - allocate every queue of a configuration
 * @priv: driver private data
 * @cfg: the configuration; its queue counts are valid for the device
 *	(vx3_max_txq(), VX3_MAX_RXQ, at most one RX queue per TX queue)
 *
 * Return: the queue set, or NULL if memory ran out.
 */
struct vx3_qset *vx3_alloc_qset(struct vx3_priv *priv,
				const struct vx3_cfg *cfg)
{
	u32 nvec = cfg->num_txq;
	struct vx3_qset *qs;

	qs = kzalloc_obj(*qs, GFP_KERNEL);
	if (!qs)
		return NULL;
	qs->cfg = *cfg;
	qs->num_rxq = cfg->num_rxq;

	qs->qdesc_size = vx3_qdesc_size(nvec + qs->num_rxq, qs->num_rxq);
	qs->qdesc = dma_alloc_coherent(&priv->pdev->dev, qs->qdesc_size,
				       &qs->qdesc_dma, GFP_KERNEL);
	if (!qs->qdesc)
		goto err_free;

	for (qs->num_vec = 0; qs->num_vec < nvec; qs->num_vec++) {
		qs->vec[qs->num_vec] = vx3_alloc_vector(priv, cfg,
							qs->num_vec);
		if (!qs->vec[qs->num_vec])
			goto err_free;
	}
	return qs;

err_free:
	vx3_free_qset(priv, qs);
	return NULL;
}

/**
 * vx3_qset_reset() - prepare a queue set for activation
 * @qs: the queue set, its queue descriptors written
 *
 * Return: 0, or -ENOMEM if RX buffers could not be posted.
 */
int vx3_qset_reset(struct vx3_qset *qs)
{
	struct vx3_tx_queue_desc *tqd = qs->qdesc;
	struct vx3_rx_queue_desc *rqd;
	u32 i, r;
	int err;

	/* The XDP rings follow the stack's TX queues; RX queue i and its
	 * XDP ring are on vector i
	 */
	rqd = vx3_qdesc_rx(qs->qdesc, qs->num_vec + qs->num_rxq);
	for (i = 0; i < qs->num_vec; i++) {
		vx3_tx_ring_reset(&qs->vec[i]->tx, &tqd[i]);
		for (r = 0; r < qs->vec[i]->num_rx; r++) {
			vx3_tx_ring_reset(&qs->vec[i]->rx[r].xdp_tx,
					  &tqd[qs->num_vec + i]);
			err = vx3_rx_queue_reset(&qs->vec[i]->rx[r], &rqd[i]);
			if (err)
				return err;
		}
	}
	return 0;
}

/**
 * vx3_qset_drain() - drop what a stopped queue set still holds in flight
 * @qs: the queue set
 *
 * Pending TX packets are freed. RX buffers stay posted in their slots so
 * the set can be started again; vx3_free_qset() returns them.
 */
void vx3_qset_drain(struct vx3_qset *qs)
{
	u32 i, r;

	for (i = 0; i < qs->num_vec; i++) {
		vx3_tx_ring_drain(&qs->vec[i]->tx);
		for (r = 0; r < qs->vec[i]->num_rx; r++) {
			vx3_tx_ring_drain(&qs->vec[i]->rx[r].xdp_tx);
			vx3_rx_queue_stop(&qs->vec[i]->rx[r]);
		}
	}
}
