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

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct vx3_flow {
	__u8 saddr[16];
	__u8 daddr[16];
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 family;
	__u8 pad[2];
};

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

static int ports(struct vx3_flow *f, void *l4, void *end)
{
	__be16 *p = l4;

	if (f->proto != IPPROTO_TCP && f->proto != IPPROTO_UDP)
		return 0;
	if ((void *)(p + 2) > end)
		return -1;
	f->sport = bpf_ntohs(p[0]);
	f->dport = bpf_ntohs(p[1]);
	return 0;
}

SEC("tc") int rxhash(struct __sk_buff *skb)
{
	void *end = (void *)(long)skb->data_end;
	void *data = (void *)(long)skb->data;
	struct vx3_seen *s, n = {};
	struct ethhdr *eth = data;
	struct vx3_flow f = {};

	if ((void *)(eth + 1) > end)
		return TC_ACT_OK;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end)
			return TC_ACT_OK;
		__builtin_memcpy(f.saddr, &ip->saddr, 4);
		__builtin_memcpy(f.daddr, &ip->daddr, 4);
		f.proto = ip->protocol;
		f.family = 4;
		if (!(ip->frag_off & bpf_htons(0x3fff)) &&
		    ports(&f, (void *)ip + (ip->ihl & 0xf) * 4, end))
			return TC_ACT_OK;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return TC_ACT_OK;
		__builtin_memcpy(f.saddr, &ip6->saddr, 16);
		__builtin_memcpy(f.daddr, &ip6->daddr, 16);
		f.proto = ip6->nexthdr;
		f.family = 6;
		if (ports(&f, ip6 + 1, end))
			return TC_ACT_OK;
	} else {
		return TC_ACT_OK;
	}

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
