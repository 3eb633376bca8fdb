// SPDX-License-Identifier: GPL-2.0
/* XDP program of test_rss.py, loaded bound to the device by vx3-xdpbound
 * (the XDP RX metadata kfuncs need a device-bound program): for every
 * IPv4 and IPv6 flow the guest receives, what bpf_xdp_metadata_rx_hash()
 * returns, the driver's xmo_rx_hash.
 *
 * vx3_xdphash maps a flow to the kfunc's result for its first packet
 * (hash, hash type or the error) and its RX queue, the packet count, and
 * how many later packets got another result. Every verdict is XDP_PASS.
 */

#include "vx3_flow.bpf.h"

struct vx3_xdp_seen {
	__u32 hash;
	__u32 type;
	__s32 err;
	__u32 queue;
	__u64 packets;
	__u64 other;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct vx3_flow);
	__type(value, struct vx3_xdp_seen);
} vx3_xdphash SEC(".maps");

/* The kernel's enum xdp_rss_hash_type (include/net/xdp.h): the kfunc's
 * prototype must match the kernel's BTF, and Debian 12's uapi headers do
 * not have the enum.
 */
enum xdp_rss_hash_type {
	XDP_RSS_TYPE_NONE = 0,
};

extern int bpf_xdp_metadata_rx_hash(const struct xdp_md *ctx, __u32 *hash,
				    enum xdp_rss_hash_type *rss_type) __ksym;

SEC("xdp") int xdp_rxhash(struct xdp_md *ctx)
{
	void *end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	enum xdp_rss_hash_type type = 0;
	struct vx3_xdp_seen *s, n = {};
	struct vx3_flow f = {};
	__u32 hash = 0;
	int err;

	if (flow_of(data, end, &f))
		return XDP_PASS;
	err = bpf_xdp_metadata_rx_hash(ctx, &hash, &type);
	s = bpf_map_lookup_elem(&vx3_xdphash, &f);
	if (!s) {
		n.hash = hash;
		n.type = type;
		n.err = err;
		n.queue = ctx->rx_queue_index;
		n.packets = 1;
		bpf_map_update_elem(&vx3_xdphash, &f, &n, BPF_NOEXIST);
		return XDP_PASS;
	}
	__sync_fetch_and_add(&s->packets, 1);
	if (s->hash != hash || s->type != type || s->err != err)
		__sync_fetch_and_add(&s->other, 1);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
