/* SPDX-License-Identifier: GPL-2.0-only */
/* vx3: VMXNET3 device interface (revision 1, UPT version 1)
 *
 * Registers, commands, the DriverShared area, queue descriptors and ring
 * descriptors. Everything the device reads or writes is little-endian;
 * descriptor fields are extracted with GENMASK()/FIELD_GET() from __le32
 * words, never with C bitfields.
 */
#ifndef _VX3_HW_H_
#define _VX3_HW_H_

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/types.h>

/* BAR0 ("PT") registers: 32-bit, on an 8-byte stride */
#define VX3_BAR0			0
#define VX3_REG_IMR(i)			(0x000 + 8 * (i))
#define VX3_REG_TXPROD(q)		(0x600 + 8 * (q))
#define VX3_REG_RXPROD(q)		(0x800 + 8 * (q))
#define VX3_REG_RXPROD2(q)		(0xa00 + 8 * (q))

/* BAR1 ("VD") registers */
#define VX3_BAR1			1
#define VX3_REG_VRRS			0x00
#define VX3_REG_UVRS			0x08
#define VX3_REG_DSAL			0x10
#define VX3_REG_DSAH			0x18
#define VX3_REG_CMD			0x20
#define VX3_REG_MACL			0x28
#define VX3_REG_MACH			0x30
#define VX3_REG_ICR			0x38
#define VX3_REG_ECR			0x40

#define VX3_REV_1			BIT(0)
#define VX3_UPT_1			BIT(0)

/* Commands written to VX3_REG_CMD (u32: they do not fit an int) */
#define VX3_CMD_ACTIVATE_DEV		0xcafe0000U
#define VX3_CMD_QUIESCE_DEV		0xcafe0001U
#define VX3_CMD_RESET_DEV		0xcafe0002U
#define VX3_CMD_UPDATE_RX_MODE		0xcafe0003U
#define VX3_CMD_UPDATE_MAC_FILTERS	0xcafe0004U
#define VX3_CMD_UPDATE_VLAN_FILTERS	0xcafe0005U
#define VX3_CMD_UPDATE_RSSIDT		0xcafe0006U
#define VX3_CMD_UPDATE_PMCFG		0xcafe0008U
#define VX3_CMD_UPDATE_FEATURE		0xcafe0009U
#define VX3_CMD_GET_STATS		0xf00d0001U
#define VX3_CMD_GET_LINK		0xf00d0002U
#define VX3_CMD_GET_PERM_MAC_LO		0xf00d0003U
#define VX3_CMD_GET_PERM_MAC_HI		0xf00d0004U

#define VX3_LINK_UP			BIT(0)
#define VX3_LINK_SPEED			GENMASK(31, 16)

/* Event cause bits in vx3_shared.ecr and VX3_REG_ECR */
#define VX3_ECR_RQERR			BIT(0)
#define VX3_ECR_TQERR			BIT(1)
#define VX3_ECR_LINK			BIT(2)
#define VX3_ECR_DIC			BIT(3)
#define VX3_ECR_DEBUG			BIT(4)

/* Interrupt indices (= MSI-X table entries) the device accepts */
#define VX3_MAX_INTRS			25

/* Interrupt moderation levels of vx3_shared.mod_levels: 0 (none) to 7
 * (the most), or left to the device, which adapts it to the load
 */
#define VX3_IML_NONE			0
#define VX3_IML_ADAPTIVE		8

/* Queue and ring limits */
#define VX3_MAX_TX_QUEUES		8
#define VX3_MAX_RX_QUEUES		8
#define VX3_RING_ALIGN			512
#define VX3_RING_SIZE_ALIGN		32
#define VX3_TX_RING_MAX			4096
#define VX3_RX_RING_MAX			4096
#define VX3_RX_COMP_RING_MAX		8192
#define VX3_MIN_MTU			60
#define VX3_MAX_MTU			9000

/* uptFeatures */
#define VX3_F_RXCSUM			BIT_ULL(0)
#define VX3_F_RSS			BIT_ULL(1)
#define VX3_F_RXVLAN			BIT_ULL(2)
#define VX3_F_LRO			BIT_ULL(3)

/* rxFilterConf.rxMode */
#define VX3_RXM_UCAST			BIT(0)
#define VX3_RXM_MCAST			BIT(1)
#define VX3_RXM_BCAST			BIT(2)
#define VX3_RXM_ALL_MULTI		BIT(3)
#define VX3_RXM_PROMISC			BIT(4)

/* driverInfo.gos */
#define VX3_GOS_BITS			GENMASK(1, 0)
#define VX3_GOS_BITS_32			1
#define VX3_GOS_BITS_64			2
#define VX3_GOS_TYPE			GENMASK(5, 2)
#define VX3_GOS_TYPE_LINUX		1

#define VX3_SHARED_MAGIC		0xbabefee1
#define VX3_VF_TABLE_WORDS		128

/**
 * struct vx3_conf_desc - where a variable-length configuration lives
 * @ver: version of the configuration's layout
 * @len: its length in bytes
 * @pa: its DMA address
 */
struct vx3_conf_desc {
	__le32 ver;
	__le32 len;
	__le64 pa;
};

/* RSS configuration, read at activation when VX3_F_RSS is set with more
 * than one RX queue; the indirection table again on VX3_CMD_UPDATE_RSSIDT
 */
#define VX3_RSS_CONF_VER		1
#define VX3_RSS_KEY_SIZE		40
#define VX3_RSS_IND_TABLE_SIZE		128
#define VX3_RSS_HASH_FUNC_TOEPLITZ	1

/* vx3_rss_conf.hash_type: the packets hashed, and over which fields */
#define VX3_RSS_HASH_IPV4		BIT(0)	/* IPv4 addresses */
#define VX3_RSS_HASH_TCP_IPV4		BIT(1)	/* and TCP ports */
#define VX3_RSS_HASH_IPV6		BIT(2)	/* IPv6 addresses */
#define VX3_RSS_HASH_TCP_IPV6		BIT(3)	/* and TCP ports */

/**
 * struct vx3_rss_conf - the RSS configuration the device reads
 * @hash_type: VX3_RSS_HASH_* packet types and fields to hash
 * @hash_func: VX3_RSS_HASH_FUNC_TOEPLITZ
 * @hash_key_size: bytes of @hash_key used
 * @ind_table_size: entries of @ind_table used
 * @hash_key: Toeplitz key
 * @ind_table: RX queue of each hash value modulo @ind_table_size
 */
struct vx3_rss_conf {
	__le16 hash_type;
	__le16 hash_func;
	__le16 hash_key_size;
	__le16 ind_table_size;
	u8 hash_key[VX3_RSS_KEY_SIZE];
	u8 ind_table[VX3_RSS_IND_TABLE_SIZE];
};

static_assert(offsetof(struct vx3_rss_conf, hash_key) == 8);
static_assert(sizeof(struct vx3_rss_conf) == 176);

/* Power management configuration, read on VX3_CMD_UPDATE_PMCFG */
#define VX3_PM_CONF_VER			1
#define VX3_PM_MAX_FILTERS		6
#define VX3_PM_MAX_PATTERN		128
#define VX3_PM_MAX_MASK			(VX3_PM_MAX_PATTERN / 8)

/* vx3_pm_conf.wake_events */
#define VX3_PM_WAKE_MAGIC		BIT(0)	/* magic packet */
#define VX3_PM_WAKE_FILTER		BIT(1)	/* a packet matching a filter */

/**
 * struct vx3_pm_filter - a wake-up pattern
 * @mask_len: bytes used in @mask
 * @pattern_len: bytes used in @pattern
 * @mask: bit i set: byte i of the frame must equal @pattern[i]
 * @pattern: the bytes to match, from the start of the frame
 * @pad: reserved
 */
struct vx3_pm_filter {
	u8 mask_len;
	u8 pattern_len;
	u8 mask[VX3_PM_MAX_MASK];
	u8 pattern[VX3_PM_MAX_PATTERN];
	u8 pad[6];
};

/**
 * struct vx3_pm_conf - the wake-up configuration the device reads
 * @wake_events: VX3_PM_WAKE_* events that wake the guest
 * @num_filters: valid entries in @filters
 * @pad: reserved
 * @filters: patterns for VX3_PM_WAKE_FILTER
 */
struct vx3_pm_conf {
	__le16 wake_events;
	u8 num_filters;
	u8 pad[5];
	struct vx3_pm_filter filters[VX3_PM_MAX_FILTERS];
};

static_assert(sizeof(struct vx3_conf_desc) == 16);
static_assert(sizeof(struct vx3_pm_filter) == 152);
static_assert(offsetof(struct vx3_pm_conf, filters) == 8);
static_assert(sizeof(struct vx3_pm_conf) == 920);

/**
 * struct vx3_shared - the DriverShared area the device reads at activation
 * @magic: VX3_SHARED_MAGIC
 * @pad: reserved
 * @drv_version: driver version, informational
 * @gos: guest OS description, VX3_GOS_*
 * @rev_spt: device revisions the driver supports
 * @upt_spt: UPT versions the driver supports
 * @upt_features: VX3_F_* offloads
 * @dd_pa: driver data address, unused
 * @queue_desc_pa: DMA address of the queue descriptor table
 * @dd_len: driver data length, unused
 * @queue_desc_len: size of the queue descriptor table in bytes
 * @mtu: MTU, 60..9000
 * @max_rx_sg: maximum number of RX buffers per packet
 * @num_tx_queues: number of TX queues
 * @num_rx_queues: number of RX queues
 * @rsvd1: reserved
 * @auto_mask: non-zero: the device masks an interrupt index when it fires
 * @num_intrs: number of interrupt vectors in use
 * @event_intr_idx: interrupt index for events
 * @mod_levels: interrupt moderation level of each index (VX3_IML_*)
 * @intr_ctrl: interrupt control, unused
 * @rsvd2: reserved
 * @rx_mode: VX3_RXM_* receive filter mode
 * @mf_table_len: multicast table length in bytes
 * @pad2: reserved
 * @mf_table_pa: DMA address of the multicast table
 * @vf_table: VLAN filter bitmap
 * @rss_conf: location of the RSS configuration
 * @pm_conf: location of the power management configuration
 * @plugin_conf: plugin configuration descriptor, unused
 * @ecr: event cause bits, written by the device
 * @rsvd3: reserved
 */
struct vx3_shared {
	__le32 magic;
	__le32 pad;
	__le32 drv_version;
	__le32 gos;
	__le32 rev_spt;
	__le32 upt_spt;
	__le64 upt_features;
	__le64 dd_pa;
	__le64 queue_desc_pa;
	__le32 dd_len;
	__le32 queue_desc_len;
	__le32 mtu;
	__le16 max_rx_sg;
	u8 num_tx_queues;
	u8 num_rx_queues;
	__le32 rsvd1[4];
	u8 auto_mask;
	u8 num_intrs;
	u8 event_intr_idx;
	u8 mod_levels[VX3_MAX_INTRS];
	__le32 intr_ctrl;
	__le32 rsvd2[2];
	__le32 rx_mode;
	__le16 mf_table_len;
	__le16 pad2;
	__le64 mf_table_pa;
	__le32 vf_table[VX3_VF_TABLE_WORDS];
	struct vx3_conf_desc rss_conf;
	struct vx3_conf_desc pm_conf;
	__le32 plugin_conf[4];
	__le32 ecr;
	__le32 rsvd3[5];
};

static_assert(offsetof(struct vx3_shared, upt_features) == 0x18);
static_assert(offsetof(struct vx3_shared, mtu) == 0x38);
static_assert(offsetof(struct vx3_shared, auto_mask) == 0x50);
static_assert(offsetof(struct vx3_shared, intr_ctrl) == 0x6c);
static_assert(offsetof(struct vx3_shared, rx_mode) == 0x78);
static_assert(offsetof(struct vx3_shared, vf_table) == 0x88);
static_assert(offsetof(struct vx3_shared, rss_conf) == 0x288);
static_assert(offsetof(struct vx3_shared, pm_conf) == 0x298);
static_assert(offsetof(struct vx3_shared, ecr) == 0x2b8);
static_assert(sizeof(struct vx3_shared) == 0x2d0);

/**
 * struct vx3_tx_queue_desc - TX queue descriptor (256 bytes)
 * @num_deferred: packets published since the last TXPROD write
 * @threshold: the device wants TXPROD once @num_deferred reaches this
 * @rsvd0: reserved
 * @ring_pa: DMA address of the TX descriptor ring
 * @data_ring_pa: TX data ring, unused in revision 1
 * @comp_ring_pa: DMA address of the TX completion ring
 * @dd_pa: driver data, unused
 * @rsvd1: reserved
 * @ring_size: TX ring entries
 * @data_ring_size: unused
 * @comp_ring_size: TX completion ring entries
 * @dd_len: unused
 * @intr_idx: interrupt index for this queue's completions
 * @pad: reserved
 * @status: queue status, not written by every implementation
 * @stats: UPT1 TX statistics, written on VX3_CMD_GET_STATS
 * @rsvd2: reserved
 */
struct vx3_tx_queue_desc {
	__le32 num_deferred;
	__le32 threshold;
	__le64 rsvd0;
	__le64 ring_pa;
	__le64 data_ring_pa;
	__le64 comp_ring_pa;
	__le64 dd_pa;
	__le64 rsvd1;
	__le32 ring_size;
	__le32 data_ring_size;
	__le32 comp_ring_size;
	__le32 dd_len;
	u8 intr_idx;
	u8 pad[7];
	__le32 status[2];
	__le64 stats[10];
	u8 rsvd2[88];
};

/* UPT1 TX statistics, indices into vx3_tx_queue_desc.stats */
enum vx3_hw_tx_stat {
	VX3_HW_TX_TSO_PKTS,
	VX3_HW_TX_TSO_BYTES,
	VX3_HW_TX_UCAST_PKTS,
	VX3_HW_TX_UCAST_BYTES,
	VX3_HW_TX_MCAST_PKTS,
	VX3_HW_TX_MCAST_BYTES,
	VX3_HW_TX_BCAST_PKTS,
	VX3_HW_TX_BCAST_BYTES,
	VX3_HW_TX_ERRORS,
	VX3_HW_TX_DISCARDS,
};

/**
 * struct vx3_rx_queue_desc - RX queue descriptor (256 bytes)
 * @update_prod: the device wants RXPROD/RXPROD2 writes when buffers are posted
 * @pad0: reserved
 * @rsvd0: reserved
 * @ring_pa: DMA addresses of RX ring 0 (head buffers) and 1 (body buffers)
 * @comp_ring_pa: DMA address of the RX completion ring
 * @dd_pa: driver data, unused
 * @rsvd1: reserved
 * @ring_size: entries of RX rings 0 and 1
 * @comp_ring_size: RX completion ring entries
 * @dd_len: unused
 * @intr_idx: interrupt index for this queue
 * @pad: reserved
 * @status: queue status, not written by every implementation
 * @stats: UPT1 RX statistics, written on VX3_CMD_GET_STATS
 * @rsvd2: reserved
 */
struct vx3_rx_queue_desc {
	u8 update_prod;
	u8 pad0[7];
	__le64 rsvd0;
	__le64 ring_pa[2];
	__le64 comp_ring_pa;
	__le64 dd_pa;
	__le64 rsvd1;
	__le32 ring_size[2];
	__le32 comp_ring_size;
	__le32 dd_len;
	u8 intr_idx;
	u8 pad[7];
	__le32 status[2];
	__le64 stats[10];
	u8 rsvd2[88];
};

/* UPT1 RX statistics, indices into vx3_rx_queue_desc.stats */
enum vx3_hw_rx_stat {
	VX3_HW_RX_LRO_PKTS,
	VX3_HW_RX_LRO_BYTES,
	VX3_HW_RX_UCAST_PKTS,
	VX3_HW_RX_UCAST_BYTES,
	VX3_HW_RX_MCAST_PKTS,
	VX3_HW_RX_MCAST_BYTES,
	VX3_HW_RX_BCAST_PKTS,
	VX3_HW_RX_BCAST_BYTES,
	VX3_HW_RX_OUT_OF_BUF,
	VX3_HW_RX_ERRORS,
};

static_assert(offsetof(struct vx3_tx_queue_desc, ring_size) == 0x38);
static_assert(offsetof(struct vx3_tx_queue_desc, intr_idx) == 0x48);
static_assert(offsetof(struct vx3_tx_queue_desc, stats) == 0x58);
static_assert(sizeof(struct vx3_tx_queue_desc) == 256);
static_assert(offsetof(struct vx3_rx_queue_desc, ring_size) == 0x38);
static_assert(offsetof(struct vx3_rx_queue_desc, intr_idx) == 0x48);
static_assert(offsetof(struct vx3_rx_queue_desc, stats) == 0x58);
static_assert(sizeof(struct vx3_rx_queue_desc) == 256);

/**
 * struct vx3_desc - a 16-byte ring entry: TX or RX descriptor, or completion
 * @addr: buffer DMA address (TX and RX descriptors)
 * @w: the four little-endian words w0..w3
 *
 * Field positions below are given per word, as the device defines them.
 */
struct vx3_desc {
	union {
		__le64 addr;
		__le32 w[4];
	};
};

static_assert(sizeof(struct vx3_desc) == 16);

/* Generation bit: the same position in every ring entry type that has it */
#define VX3_TXD_GEN			BIT(14)		/* TX descriptor w2 */
#define VX3_RXD_GEN			BIT(31)		/* RX descriptor w2 */
#define VX3_COMP_GEN			BIT(31)		/* completions, w3 */

/* TX descriptor, w2 */
#define VX3_TXD_LEN			GENMASK(13, 0)
#define VX3_TXD_DTYPE			BIT(16)
#define VX3_TXD_MSSCOF			GENMASK(31, 18)
/* TX descriptor, w3 */
#define VX3_TXD_HLEN			GENMASK(9, 0)
#define VX3_TXD_OM			GENMASK(11, 10)
#define VX3_TXD_EOP			BIT(12)
#define VX3_TXD_CQ			BIT(13)
#define VX3_TXD_TI			BIT(15)
#define VX3_TXD_TCI			GENMASK(31, 16)

#define VX3_OM_NONE			0
#define VX3_OM_CSUM			2
#define VX3_OM_TSO			3

/* A TX descriptor carries at most 16 KiB; length 0 encodes 16384 */
#define VX3_TXD_MAX_LEN			16384

/* A packet takes at most 16 descriptors, a TSO packet 24; a checksum
 * field (checksum offload) ends at most 1024 bytes into the frame
 */
#define VX3_TX_MAX_DESC			16
#define VX3_TX_MAX_DESC_TSO		24
#define VX3_TX_MAX_CSUM_END		1024

/* TX completion, w0 */
#define VX3_TXC_IDX			GENMASK(11, 0)

/* RX descriptor, w2 */
#define VX3_RXD_LEN			GENMASK(13, 0)
#define VX3_RXD_BTYPE			BIT(14)
#define VX3_RXD_BTYPE_HEAD		0
#define VX3_RXD_BTYPE_BODY		1
#define VX3_RXD_MAX_LEN			16383

/* RX completion, w0 */
#define VX3_RXC_IDX			GENMASK(11, 0)
#define VX3_RXC_EOP			BIT(14)
#define VX3_RXC_SOP			BIT(15)
#define VX3_RXC_RQID			GENMASK(25, 16)
#define VX3_RXC_RSS_TYPE		GENMASK(29, 26)
#define VX3_RXC_CNC			BIT(30)
/* RX completion, w1: the RSS hash (rssHash) */
/* VX3_RXC_RSS_TYPE values: what the hash was computed over */
#define VX3_RSS_TYPE_NONE		0
#define VX3_RSS_TYPE_IPV4		1
#define VX3_RSS_TYPE_TCP_IPV4		2
#define VX3_RSS_TYPE_IPV6		3
#define VX3_RSS_TYPE_TCP_IPV6		4
/* RX completion, w2 */
#define VX3_RXC_LEN			GENMASK(13, 0)
#define VX3_RXC_ERR			BIT(14)
#define VX3_RXC_TS			BIT(15)
#define VX3_RXC_TCI			GENMASK(31, 16)
/* RX completion, w3 */
#define VX3_RXC_TUC			BIT(16)
#define VX3_RXC_UDP			BIT(17)
#define VX3_RXC_TCP			BIT(18)
#define VX3_RXC_IPC			BIT(19)
#define VX3_RXC_V6			BIT(20)
#define VX3_RXC_V4			BIT(21)

#endif /* _VX3_HW_H_ */
