// SPDX-License-Identifier: GPL-2.0
/* tc ingress program of test_rss.py: for every IPv4 and IPv6 flow the
 * guest receives, the receive hash the driver set (skb->hash, from the
 * completion's rssHash) and the RX queue it came in on.
 *
 * vx3_rxhash maps a flow (addresses, ports for TCP and UDP, protocol) to
 * the hash and queue of its first packet, the packet count, and how many
 * later packets came with another hash or on another queue. The program
 * never changes a verdict.
 */

#include <linux/pkt_cls.h>
#include "vx3_flow.bpf.h"

struct vx3_seen {
	__u32 hash;
	__u32 queue;
	__u64 packets;
	__u64 other_hash;
	__u64 other_queue;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct vx3_flow);
	__type(value, struct vx3_seen);
} vx3_rxhash SEC(".maps");

SEC("tc") int rxhash(struct __sk_buff *skb)
{
	void *end = (void *)(long)skb->data_end;
	void *data = (void *)(long)skb->data;
	struct vx3_seen *s, n = {};
	struct vx3_flow f = {};

	if (flow_of(data, end, &f))
		return TC_ACT_OK;
	s = bpf_map_lookup_elem(&vx3_rxhash, &f);
	if (!s) {
		n.hash = skb->hash;
		n.queue = skb->queue_mapping;
		n.packets = 1;
		bpf_map_update_elem(&vx3_rxhash, &f, &n, BPF_NOEXIST);
		return TC_ACT_OK;
	}
	__sync_fetch_and_add(&s->packets, 1);
	if (s->hash != skb->hash)
		__sync_fetch_and_add(&s->other_hash, 1);
	if (s->queue != skb->queue_mapping)
		__sync_fetch_and_add(&s->other_queue, 1);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
