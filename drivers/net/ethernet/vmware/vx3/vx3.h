/* SPDX-License-Identifier: GPL-2.0-only */
/* vx3: driver structures for the VMXNET3 NIC */
#ifndef _VX3_H_
#define _VX3_H_

#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>
#include <net/xdp.h>

#include "vx3_hw.h"

struct xsk_buff_pool;

#define VX3_DRV_NAME			"vx3"

#define VX3_RING_MIN			32
/* Each RX queue has an XDP ring among the device's TX queues, after the
 * stack's: with one RX queue the stack gets seven TX queues, with four
 * (the most) four.
 */
#define VX3_MAX_STACK_TXQ		(VX3_MAX_TX_QUEUES - 1)
#define VX3_MAX_RXQ			(VX3_MAX_TX_QUEUES / 2)
#define VX3_TX_RING_DEFAULT		512
#define VX3_RX_RING_DEFAULT		2048
#define VX3_RX_BODY_RING_DEFAULT	1024

/* RX buffers: a head buffer is a page_pool fragment holding the headroom,
 * the frame and the skb_shared_info that napi_build_skb() puts behind it;
 * a body buffer is a whole page. While an XDP program is attached the
 * headroom is XDP_PACKET_HEADROOM, else the skb's own.
 */
#define VX3_RX_HEADROOM			(NET_SKB_PAD + NET_IP_ALIGN)
#define VX3_RX_XDP_HEADROOM		XDP_PACKET_HEADROOM
#define VX3_RX_SHINFO_SIZE \
	SKB_DATA_ALIGN(sizeof(struct skb_shared_info))
#define VX3_RX_BODY_LEN			PAGE_SIZE

/* Buffers per packet: the head buffer plus one body page per frag */
#define VX3_RX_MAX_SG			(MAX_SKB_FRAGS + 1)
#define VX3_RX_COPYBREAK_DEFAULT	0
#define VX3_RX_COPYBREAK_MAX		VX3_RXD_MAX_LEN
#define VX3_RX_REFILL_BATCH		16

/* Descriptors the largest packet may take: a TSO packet's most
 * (vx3_features_check() has the core copy a packet that would take more)
 */
#define VX3_TX_DESC_NEEDED		VX3_TX_MAX_DESC_TSO
#define VX3_TX_WAKE_THRESH		(2 * VX3_TX_DESC_NEEDED)

/* An RX queue without head buffers is refilled again after this long */
#define VX3_RX_REFILL_RETRY		msecs_to_jiffies(10)

/**
 * vx3_ring_gen() - the generation bit of a ring position
 * @count: free-running position (producer or consumer count)
 * @size: ring entries, a power of two
 *
 * Both sides start with generation 1 and flip it at every wrap.
 *
 * Return: true on even laps, false on odd ones.
 */
static inline bool vx3_ring_gen(u32 count, u32 size)
{
	return !(count & size);
}

/**
 * vx3_qdesc_rx() - the RX queue descriptors in a queue descriptor table
 * @qdesc: the table
 * @num_dev_txq: number of device TX queues in front of them
 *
 * Return: the descriptor of RX queue 0, followed by the others.
 */
static inline struct vx3_rx_queue_desc *vx3_qdesc_rx(void *qdesc,
						     u32 num_dev_txq)
{
	return qdesc + num_dev_txq * sizeof(struct vx3_tx_queue_desc);
}

/**
 * struct vx3_cfg - a queue and buffer configuration
 * @num_txq: number of stack TX queues (one NAPI vector each)
 * @num_rxq: number of RX queues, on the first @num_txq vectors
 * @tx_ring: TX ring entries (power of two), the XDP ring's as well
 * @rx_ring: RX ring 0 (head) and ring 1 (body) entries (powers of two)
 * @mtu: MTU the RX buffers are sized for
 * @xdp: an XDP program is attached: XDP headroom, bidirectional mappings
 * @rss_types: VX3_RSS_HASH_* packet types and fields hashed
 * @rss_key: Toeplitz key
 * @rss_indir: the user's indirection table, an RX queue per entry, once
 *	       set (vx3_rss_indir())
 * @xsk_pool: AF_XDP zero-copy buffer pool of each RX queue, or NULL; it
 *	      feeds the queue's ring 0 and sends on its XDP ring
 */
struct vx3_cfg {
	u32 num_txq;
	u32 num_rxq;
	u32 tx_ring;
	u32 rx_ring[2];
	u32 mtu;
	bool xdp;
	u16 rss_types;
	u8 rss_key[VX3_RSS_KEY_SIZE];
	u8 rss_indir[VX3_RSS_IND_TABLE_SIZE];
	struct xsk_buff_pool *xsk_pool[VX3_MAX_RXQ];
};

/* Counters are arrays of u64_stats_t indexed by these enums, so that
 * readers, the base totals and ethtool -S can walk them without knowing
 * each one by name.
 */

/* TX counters kept by the xmit path */
enum vx3_tx_stat {
	VX3_TXS_TSO,		/* TSO packets queued */
	VX3_TXS_CSUM,		/* packets queued with checksum offload */
	VX3_TXS_STOPS,		/* times the queue was stopped */
	VX3_TXS_DOORBELLS,	/* TXPROD writes */
	VX3_TXS_MAP_ERR,	/* packets dropped: DMA mapping failed */
	VX3_TXS_DROPS,		/* packets dropped for other reasons */
	VX3_TXS_XDP_TX,		/* XDP ring: XDP_TX frames queued */
	VX3_TXS_XDP_XMIT,	/* XDP ring: ndo_xdp_xmit frames queued */
	VX3_TXS_XSK_XMIT,	/* XDP ring: AF_XDP zero-copy frames queued */
	VX3_TXS_NUM
};

/* TX counters kept by the completion path */
enum vx3_txc_stat {
	VX3_TXCS_PACKETS,	/* packets completed by the device */
	VX3_TXCS_BYTES,		/* their bytes */
	VX3_TXCS_WAKES,		/* times the queue was woken */
	VX3_TXCS_BAD_COMP,	/* completions not ending the oldest packet */
	VX3_TXCS_NUM
};

/* RX counters, all kept in NAPI context */
enum vx3_rx_stat {
	VX3_RXS_PACKETS,	/* packets passed to the stack */
	VX3_RXS_BYTES,		/* their bytes, Ethernet header included */
	VX3_RXS_BUILD_SKB,	/* heads that became the skb */
	VX3_RXS_COPIED,		/* heads copied into a new skb */
	VX3_RXS_BODY_BUFS,	/* body buffers attached as frags */
	VX3_RXS_LRO_PACKETS,	/* device aggregates passed up as GSO skbs */
	VX3_RXS_LRO_SEGS,	/* TCP segments those carried */
	VX3_RXS_LRO_BYTES,	/* bytes of those aggregates */
	VX3_RXS_CSUM_OK,	/* packets whose checksum the device checked */
	VX3_RXS_CSUM_NONE,	/* packets without one */
	VX3_RXS_ALLOC_FAIL,	/* buffer or skb allocation failures */
	VX3_RXS_SKIPPED,	/* descriptors the device passed over */
	VX3_RXS_DROP_ERR,	/* packets the device marked as errored */
	VX3_RXS_DROP_FRAGS,	/* packets with more buffers than skb frags */
	VX3_RXS_DROP_OVERSIZE,	/* aggregates vx3 cannot describe as GSO */
	VX3_RXS_DROP_BAD,	/* completions that broke the ring protocol */
	VX3_RXS_DROP_NOMEM,	/* packets dropped for lack of an skb */
	/* XDP verdicts: each packet counter is followed by its bytes */
	VX3_RXS_XDP_PASS,
	VX3_RXS_XDP_PASS_BYTES,
	VX3_RXS_XDP_DROP,
	VX3_RXS_XDP_DROP_BYTES,
	VX3_RXS_XDP_TX,
	VX3_RXS_XDP_TX_BYTES,
	VX3_RXS_XDP_REDIRECT,
	VX3_RXS_XDP_REDIRECT_BYTES,
	VX3_RXS_XDP_ABORTED,
	VX3_RXS_XDP_ABORTED_BYTES,
	VX3_RXS_XDP_TX_ERR,	/* XDP_TX frames dropped: XDP ring full */
	VX3_RXS_XDP_REDIRECT_ERR, /* XDP_REDIRECT frames the target refused */
	VX3_RXS_XSK_COPIED,	/* AF_XDP buffers copied into an skb */
	VX3_RXS_XSK_ALLOC_FAIL,	/* AF_XDP fill ring found empty */
	VX3_RXS_NUM
};

/* Room for a snapshot of any of the counter arrays */
#define VX3_STATS_MAX			VX3_RXS_NUM
static_assert((int)VX3_TXS_NUM <= (int)VX3_STATS_MAX &&
	      (int)VX3_TXCS_NUM <= (int)VX3_STATS_MAX);

/**
 * struct vx3_tx_stats - TX counters of the xmit path
 * @cnt: counters, indexed by enum vx3_tx_stat
 * @syncp: sync for 32-bit readers
 */
struct vx3_tx_stats {
	u64_stats_t cnt[VX3_TXS_NUM];
	struct u64_stats_sync syncp;
};

/**
 * struct vx3_tx_comp_stats - TX counters of the completion path
 * @cnt: counters, indexed by enum vx3_txc_stat
 * @syncp: sync for 32-bit readers
 */
struct vx3_tx_comp_stats {
	u64_stats_t cnt[VX3_TXCS_NUM];
	struct u64_stats_sync syncp;
};

/**
 * struct vx3_rx_stats - RX counters
 * @cnt: counters, indexed by enum vx3_rx_stat
 * @syncp: sync for 32-bit readers
 */
struct vx3_rx_stats {
	u64_stats_t cnt[VX3_RXS_NUM];
	struct u64_stats_sync syncp;
};

/* How the buffer that starts at a TX descriptor was mapped */
enum vx3_tx_map {
	VX3_TX_MAP_NONE,	/* nothing starts here, or a page_pool page */
	VX3_TX_MAP_SINGLE,	/* dma_map_single() */
	VX3_TX_MAP_PAGE,	/* skb_frag_dma_map() */
};

/* What an EOP descriptor completes */
enum vx3_tx_type {
	VX3_TX_SKB,		/* an skb of the stack */
	VX3_TX_XDP_TX,		/* an xdp_frame of this RX queue's page_pool */
	VX3_TX_XDP_XMIT,	/* an xdp_frame from ndo_xdp_xmit */
	VX3_TX_XSK,		/* an AF_XDP frame of the ring's xsk_pool */
};

/**
 * struct vx3_tx_buf - driver state of one TX descriptor
 * @skb: packet to free when the device completes this (EOP) descriptor
 * @frame: frame to return instead, on the XDP ring
 * @xsk: the AF_XDP pool the frame belongs to (its completion is counted)
 * @dma: DMA address of the mapping that starts at this descriptor
 * @len: length of that mapping
 * @map: enum vx3_tx_map: how to unmap it
 * @type: enum vx3_tx_type of the packet this EOP descriptor ends
 */
struct vx3_tx_buf {
	union {
		struct sk_buff *skb;
		struct xdp_frame *frame;
		struct xsk_buff_pool *xsk;
	};
	dma_addr_t dma;
	u32 len;
	u8 map;
	u8 type;
};

/**
 * struct vx3_tx_ring - a TX queue: descriptor ring and completion ring
 * @desc: TX descriptors
 * @comp: TX completions
 * @buf: per-descriptor driver state
 * @txq: the stack's queue; NULL for the XDP ring
 * @dev: DMA device
 * @qd: this queue's descriptor in the queue descriptor table
 * @doorbell: TXPROD register of this queue
 * @size: entries in @desc and @comp (power of two)
 * @head: descriptors produced (free running; xmit path)
 * @tail: descriptors completed (free running; completion path)
 * @comp_head: completions consumed (free running)
 * @qid: queue index
 * @desc_dma: DMA address of @desc
 * @comp_dma: DMA address of @comp
 * @xdp_lock: serializes the producers and the completion of the XDP ring
 *	      (XDP_TX, ndo_xdp_xmit, AF_XDP, NAPI); stack queues need none
 * @xsk_pool: the XDP ring also sends this AF_XDP pool's frames, or NULL
 * @stats: xmit-side counters
 * @cstats: completion-side counters
 */
struct vx3_tx_ring {
	struct vx3_desc *desc;
	struct vx3_desc *comp;
	struct vx3_tx_buf *buf;
	struct netdev_queue *txq;
	struct device *dev;
	struct vx3_tx_queue_desc *qd;
	u8 __iomem *doorbell;
	u32 size;
	u32 head;
	u32 tail;
	u32 comp_head;
	u16 qid;
	dma_addr_t desc_dma;
	dma_addr_t comp_dma;
	spinlock_t xdp_lock; /* XDP ring producers */
	struct xsk_buff_pool *xsk_pool;
	struct vx3_tx_stats stats;
	struct vx3_tx_comp_stats cstats;
};

/**
 * struct vx3_rx_buf - a buffer owned by an RX ring slot
 * @page: page_pool page, NULL if the slot is empty
 * @xsk: AF_XDP buffer instead, on a queue with an xsk_pool
 * @offset: offset of the buffer (headroom included) in @page
 */
struct vx3_rx_buf {
	union {
		struct page *page;
		struct xdp_buff *xsk;
	};
	u32 offset;
};

/**
 * struct vx3_rx_ring - RX ring 0 (head buffers) or 1 (body buffers)
 * @desc: RX descriptors
 * @buf: buffers, one per slot
 * @size: entries (power of two)
 * @fill: descriptors posted (free running)
 * @used: descriptors completed by the device (free running)
 * @buf_len: bytes the device may write into one buffer
 * @truesize: memory one buffer takes
 * @btype: VX3_RXD_BTYPE_HEAD or VX3_RXD_BTYPE_BODY
 * @prod: RXPROD or RXPROD2 register of this ring
 * @desc_dma: DMA address of @desc
 */
struct vx3_rx_ring {
	struct vx3_desc *desc;
	struct vx3_rx_buf *buf;
	u32 size;
	u32 fill;
	u32 used;
	u32 buf_len;
	u32 truesize;
	u32 btype;
	u8 __iomem *prod;
	dma_addr_t desc_dma;
};

/**
 * struct vx3_rx_queue - an RX queue: two buffer rings, a completion ring
 *			 and the page_pool that feeds them
 * @ring: ring 0 (head buffers) and ring 1 (body buffers)
 * @comp: RX completions
 * @comp_size: entries in @comp (power of two)
 * @comp_head: completions consumed (free running)
 * @comp_dma: DMA address of @comp
 * @pp: page_pool of this queue
 * @qd: this queue's descriptor in the queue descriptor table
 * @refill_timer: polls again when no head buffer could be posted
 * @priv: driver private data
 * @netdev: the net_device
 * @napi: NAPI context that polls this queue
 * @skb: packet under assembly across completions, or NULL
 * @discard: drop the buffers of the current packet until its EOP
 * @in_xdp: @xdp holds a packet under assembly
 * @qid: queue index
 * @num_rxq: number of RX queues configured (ring 1's rqID offset)
 * @mtu: MTU the buffers are sized for
 * @headroom: bytes in front of the frame in a head buffer
 * @xdp_prog: XDP program, read once per poll; NULL without one
 * @xdp: packet under assembly for the XDP program
 * @xsk_pool: AF_XDP zero-copy pool that feeds ring 0, or NULL
 * @xsk_buf: the AF_XDP buffer of the packet under assembly (@in_xdp)
 * @rss_hash: the device's RSS hash of that packet (its EOP completion)
 * @rss_type: what @rss_hash covers, VX3_RSS_TYPE_*
 * @xdp_rxq: XDP information of this queue (page_pool memory model)
 * @xdp_tx: the XDP ring, for XDP_TX and ndo_xdp_xmit
 * @stats: counters
 */
struct vx3_rx_queue {
	struct vx3_rx_ring ring[2];
	struct vx3_desc *comp;
	u32 comp_size;
	u32 comp_head;
	dma_addr_t comp_dma;
	struct page_pool *pp;
	struct vx3_rx_queue_desc *qd;
	struct timer_list refill_timer;
	struct vx3_priv *priv;
	struct net_device *netdev;
	struct napi_struct *napi;
	struct sk_buff *skb;
	bool discard;
	bool in_xdp;
	u16 qid;
	u16 num_rxq;
	u32 mtu;
	u32 headroom;
	struct bpf_prog *xdp_prog;
	struct xdp_buff xdp;
	struct xsk_buff_pool *xsk_pool;
	struct xdp_buff *xsk_buf;
	u32 rss_hash;
	u8 rss_type;
	struct xdp_rxq_info xdp_rxq;
	struct vx3_tx_ring xdp_tx;
	struct vx3_rx_stats stats;
};

/**
 * struct vx3_vector - a NAPI context with the rings it polls
 * @napi: NAPI context
 * @priv: driver private data
 * @irq: Linux IRQ number
 * @intr_idx: device interrupt index (= MSI-X entry)
 * @name: IRQ name
 * @tx: the TX queue of this vector
 * @num_rx: number of RX queues in @rx (0 or 1: RX queue n is on vector n)
 * @rx: RX queue(s) of this vector
 */
struct vx3_vector {
	struct napi_struct napi;
	struct vx3_priv *priv;
	int irq;
	u8 intr_idx;
	char name[IFNAMSIZ + 16];
	struct vx3_tx_ring tx;
	u32 num_rx;
	struct vx3_rx_queue rx[] __counted_by(num_rx);
};

/**
 * struct vx3_qset - every queue of one configuration
 * @cfg: the configuration it was allocated for
 * @num_vec: number of vectors (= stack TX queues)
 * @num_rxq: number of RX queues, on vectors 0 to @num_rxq - 1; their XDP
 *	     rings follow the stack's TX queues in the device's
 * @qdesc_size: bytes allocated for @qdesc
 * @qdesc: queue descriptor table: TX queue descriptors, then RX
 * @qdesc_dma: DMA address of @qdesc
 * @vec: the vectors
 */
struct vx3_qset {
	struct vx3_cfg cfg;
	u32 num_vec;
	u32 num_rxq;
	size_t qdesc_size;
	void *qdesc;
	dma_addr_t qdesc_dma;
	struct vx3_vector *vec[VX3_MAX_STACK_TXQ];
};

enum vx3_intr_mode {
	VX3_INTR_MSIX,
	VX3_INTR_MSI,
	VX3_INTR_INTX,
};

/**
 * struct vx3_base_stats - counters of queues that no longer exist
 * @rx: RX queue totals
 * @tx: TX totals (xmit side)
 * @txc: TX totals (completion side)
 */
struct vx3_base_stats {
	u64 rx[VX3_RXS_NUM];
	u64 tx[VX3_TXS_NUM];
	u64 txc[VX3_TXCS_NUM];
};

/**
 * struct vx3_hw_stats - counters the device keeps (reset at activation)
 * @rx_out_of_buf: packets dropped because no RX buffer was posted
 * @tx_errors: packets the device could not parse or map
 * @tx_discards: packets the device's backend refused
 */
struct vx3_hw_stats {
	u64 rx_out_of_buf;
	u64 tx_errors;
	u64 tx_discards;
};

/**
 * struct vx3_priv - driver private data
 * @netdev: the net_device
 * @pdev: the PCI device
 * @bar0: BAR0 ("PT") registers
 * @bar1: BAR1 ("VD") registers
 * @cmd_lock: serializes commands and the DriverShared fields they read
 * @stats_lock: protects @qs and @base against statistics readers
 * @shared: DriverShared area
 * @shared_dma: DMA address of @shared
 * @mf_table: multicast filter table
 * @mf_table_dma: DMA address of @mf_table
 * @pm_conf: wake-up configuration the device reads
 * @pm_conf_dma: DMA address of @pm_conf
 * @rss_conf: RSS configuration the device reads
 * @rss_conf_dma: DMA address of @rss_conf
 * @rss_on: the device was activated with RSS (cmd_lock)
 * @wol: WAKE_* events the user enabled (rtnl)
 * @qs: queues of the running configuration, NULL while down
 * @wake_qs: queues the device receives into while Wake-on-LAN is armed
 *	     (suspended or powered off), freed at resume
 * @xdp_qs: the running queue set, for ndo_xdp_xmit; NULL while down
 * @xdp_prog: the attached XDP program (rtnl), or NULL
 * @cfg: configuration used at the next open
 * @copybreak: rx-copybreak: head buffers up to this length are copied
 * @intr_mode: MSI-X, MSI or INTx
 * @num_irqs: interrupt vectors allocated
 * @event_idx: interrupt index of device events
 * @active: the device is activated
 * @link_speed: link speed from the device, Mb/s
 * @active_vlans: 802.1Q VLAN IDs the stack asked for
 * @active_svlans: 802.1ad VLAN IDs the stack asked for
 * @vlan_filter: the device drops VLAN IDs in neither list
 * @reset_timer: asks for a reset from any context (an error found in
 *		 hard IRQ, or the next attempt to restart a failed device)
 * @retries: failed attempts to restart the queues since they last ran
 * @resets: number of resets performed
 * @base: counters of freed queues
 * @hw_base: device counters of earlier activations
 * @msg_enable: netif_msg level
 */
struct vx3_priv {
	struct net_device *netdev;
	struct pci_dev *pdev;
	u8 __iomem *bar0;
	u8 __iomem *bar1;
	spinlock_t cmd_lock; /* device commands and DriverShared updates */
	spinlock_t stats_lock; /* @qs and @base for statistics readers */
	struct vx3_shared *shared;
	dma_addr_t shared_dma;
	u8 *mf_table;
	dma_addr_t mf_table_dma;
	struct vx3_pm_conf *pm_conf;
	dma_addr_t pm_conf_dma;
	struct vx3_rss_conf *rss_conf;
	dma_addr_t rss_conf_dma;
	bool rss_on;
	u32 wol;
	struct vx3_qset *qs;
	struct vx3_qset *wake_qs;
	struct vx3_qset __rcu *xdp_qs;
	struct bpf_prog *xdp_prog;
	struct vx3_cfg cfg;
	u32 copybreak;
	enum vx3_intr_mode intr_mode;
	int num_irqs;
	u8 event_idx;
	bool active;
	u32 link_speed;
	unsigned long active_vlans[BITS_TO_LONGS(VLAN_N_VID)];
	unsigned long active_svlans[BITS_TO_LONGS(VLAN_N_VID)];
	bool vlan_filter;
	struct timer_list reset_timer;
	u32 retries;
	u64 resets;
	struct vx3_base_stats base;
	struct vx3_hw_stats hw_base;
	u32 msg_enable;
};

#define VX3_MF_TABLE_ENTRIES		64

/* Device work, run by vx3_work() under rtnl (netdev_work_sched()) */
#define VX3_WORK_RESET			BIT(0)	/* a device or queue error */
#define VX3_WORK_RESTART		BIT(1)	/* new RSS key or hash types */

/* A failed restart is tried again after 1 s, 2 s, 4 s, ... at most 32 s */
#define VX3_RETRY_MAX_SHIFT		5

/* Wake-on-LAN events vx3 offers */
#define VX3_WOL_SUPPORTED		WAKE_MAGIC

/* vx3_dev.c */
u32 vx3_cmd(struct vx3_priv *priv, u32 cmd);
void vx3_irq_unmask(struct vx3_priv *priv, u8 idx);
int vx3_dev_init(struct vx3_priv *priv);
void vx3_read_perm_addr(struct vx3_priv *priv);
void vx3_write_mac(struct vx3_priv *priv);
void vx3_write_features(struct vx3_priv *priv, netdev_features_t features);
void vx3_write_rx_filters(struct vx3_priv *priv,
			  struct netdev_hw_addr_list *mc);
void vx3_write_vlan_filter(struct vx3_priv *priv);
void vx3_write_queue_descs(struct vx3_priv *priv, struct vx3_qset *qs);
int vx3_activate(struct vx3_priv *priv, struct vx3_qset *qs);
void vx3_reset_dev(struct vx3_priv *priv);
void vx3_write_pm_conf(struct vx3_priv *priv, bool arm);
u32 vx3_rss_indir(const struct vx3_priv *priv, const struct vx3_cfg *cfg,
		  u32 i);
void vx3_write_rss_indir(struct vx3_priv *priv);
void vx3_read_hw_stats(struct vx3_priv *priv, struct vx3_qset *qs,
		       struct vx3_hw_stats *hw);

/* vx3_main.c */
int vx3_up(struct vx3_priv *priv, struct vx3_qset *qs);
void vx3_down(struct vx3_priv *priv, struct vx3_qset *qs);
void vx3_schedule_reset(struct vx3_priv *priv);
void vx3_schedule_restart(struct vx3_priv *priv);
void vx3_retry_later(struct vx3_priv *priv);
void vx3_work(struct net_device *netdev, unsigned long events);
u32 vx3_max_txq(const struct vx3_priv *priv);

/* vx3_netdev.c */
struct net_device *vx3_alloc_netdev(struct pci_dev *pdev);
int vx3_reconfigure(struct vx3_priv *priv, const struct vx3_cfg *cfg,
		    struct netlink_ext_ack *extack);
struct vx3_qset *vx3_swap_qset(struct vx3_priv *priv, struct vx3_qset *qs);
int vx3_open_queues(struct vx3_priv *priv);
void vx3_close_queues(struct vx3_priv *priv);
void vx3_stats_fetch(const u64_stats_t *cnt,
		     const struct u64_stats_sync *syncp, u64 *out,
		     unsigned int n);

/* vx3_napi.c */
struct vx3_qset *vx3_alloc_qset(struct vx3_priv *priv,
				const struct vx3_cfg *cfg);
void vx3_free_qset(struct vx3_priv *priv, struct vx3_qset *qs);
int vx3_qset_reset(struct vx3_qset *qs);
void vx3_qset_drain(struct vx3_qset *qs);

/* vx3_tx.c */
int vx3_tx_ring_alloc(struct vx3_priv *priv, struct vx3_tx_ring *tx,
		      u16 qid, u32 size, bool xdp);
void vx3_tx_ring_free(struct vx3_tx_ring *tx);
void vx3_tx_ring_reset(struct vx3_tx_ring *tx, struct vx3_tx_queue_desc *qd);
void vx3_tx_ring_drain(struct vx3_tx_ring *tx);
bool vx3_tx_clean(struct vx3_tx_ring *tx, int budget);
netdev_tx_t vx3_start_xmit(struct sk_buff *skb, struct net_device *netdev);
u32 vx3_tx_free_desc(const struct vx3_tx_ring *tx);
u32 vx3_tx_desc_count(const struct sk_buff *skb);
bool vx3_tx_csum_fields(u32 start, u32 offset, u32 len, u32 *w2, u32 *w3);
void vx3_tx_post(struct vx3_tx_ring *tx, u32 *pos, dma_addr_t dma, u32 len,
		 enum vx3_tx_map map, u32 w2, u32 w3, u32 first);
void vx3_tx_unwind(struct vx3_tx_ring *tx, u32 first, u32 pos);
void vx3_tx_publish(struct vx3_tx_ring *tx, u32 first, u32 pkts, bool kick);
void vx3_tx_kick(struct vx3_tx_ring *tx);

/* vx3_rx.c */
int vx3_rx_queue_alloc(struct vx3_priv *priv, struct vx3_rx_queue *rxq,
		       struct napi_struct *napi, u16 qid, u16 xdp_txq,
		       const struct vx3_cfg *cfg);
void vx3_rx_queue_free(struct vx3_rx_queue *rxq);
int vx3_rx_queue_reset(struct vx3_rx_queue *rxq,
		       struct vx3_rx_queue_desc *qd);
void vx3_rx_queue_write_prod(struct vx3_rx_queue *rxq);
void vx3_rx_queue_stop(struct vx3_rx_queue *rxq);
int vx3_rx_clean(struct vx3_rx_queue *rxq, int budget, bool *bad);
u32 vx3_rx_head_buf_len(u32 mtu, u32 headroom);

/* vx3_xdp.c */
int vx3_bpf(struct net_device *netdev, struct netdev_bpf *bpf);
int vx3_xdp_xmit(struct net_device *netdev, int n, struct xdp_frame **frames,
		 u32 flags);
u32 vx3_xdp_max_mtu(void);
void vx3_xdp_start(struct vx3_rx_queue *rxq, struct vx3_rx_buf *b, u32 len);
bool vx3_xdp_add_frag(struct vx3_rx_queue *rxq, struct vx3_rx_buf *b,
		      u32 len);
void vx3_xdp_free(struct vx3_rx_queue *rxq, bool napi);
bool vx3_xdp_run(struct vx3_rx_queue *rxq, struct bpf_prog *prog,
		 u32 *flush);
bool vx3_xdp_tx_clean(struct vx3_rx_queue *rxq, int budget);
void vx3_xdp_flush(struct vx3_rx_queue *rxq, u32 flush);
void vx3_xdp_count(struct vx3_rx_queue *rxq, enum vx3_rx_stat stat,
		   u32 len);
int vx3_xdp_post(struct vx3_tx_ring *tx, struct xdp_frame *frame,
		 enum vx3_tx_type type);
void vx3_xdp_stat_add(struct vx3_rx_queue *rxq, enum vx3_rx_stat idx,
		      u64 val);
extern const struct xdp_metadata_ops vx3_xdp_metadata_ops;

/* What an RX poll has to flush before it ends */
#define VX3_XDP_FLUSH_TX	BIT(0)
#define VX3_XDP_FLUSH_REDIRECT	BIT(1)

/* vx3_xsk.c */
int vx3_xsk_setup_pool(struct vx3_priv *priv, struct xsk_buff_pool *pool,
		       u16 qid);
int vx3_xsk_wakeup(struct net_device *netdev, u32 qid, u32 flags);
bool vx3_xsk_check_mtu(const struct vx3_priv *priv, u32 mtu);
bool vx3_xsk_any(const struct vx3_cfg *cfg);
u32 vx3_xsk_buf_len(struct xsk_buff_pool *pool);
void vx3_xsk_refill(struct vx3_rx_queue *rxq, struct vx3_rx_ring *r);
void vx3_xsk_ring_free(struct vx3_rx_queue *rxq, struct vx3_rx_ring *r);
void vx3_xsk_start(struct vx3_rx_queue *rxq, struct vx3_rx_buf *b, u32 len);
void vx3_xsk_free(struct vx3_rx_queue *rxq);
bool vx3_xsk_run(struct vx3_rx_queue *rxq, struct bpf_prog *prog,
		 u32 *flush);
bool vx3_xsk_xmit(struct vx3_rx_queue *rxq, int budget);
extern const struct xsk_tx_metadata_ops vx3_xsk_tx_metadata_ops;

/* vx3_ethtool.c */
extern const struct ethtool_ops vx3_ethtool_ops;

#endif /* _VX3_H_ */
