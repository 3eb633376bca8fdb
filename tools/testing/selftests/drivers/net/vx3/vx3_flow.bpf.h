/* SPDX-License-Identifier: GPL-2.0 */
/* The flow of a received frame, for the programs of test_rss.py
 * (vx3_rxhash.bpf.c, vx3_xdphash.bpf.c): addresses, ports for TCP and
 * UDP, protocol.
 */
#ifndef VX3_FLOW_BPF_H
#define VX3_FLOW_BPF_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
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

static __always_inline int ports(struct vx3_flow *f, void *l4, void *end)
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

/* The flow of the frame data..end: 0, or -1 if it is not IPv4 or IPv6
 * or too short
 */
static __always_inline int flow_of(void *data, void *end, struct vx3_flow *f)
{
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > end)
		return -1;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end)
			return -1;
		__builtin_memcpy(f->saddr, &ip->saddr, 4);
		__builtin_memcpy(f->daddr, &ip->daddr, 4);
		f->proto = ip->protocol;
		f->family = 4;
		if (ip->frag_off & bpf_htons(0x3fff))
			return 0;
		return ports(f, (void *)ip + (ip->ihl & 0xf) * 4, end);
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return -1;
		__builtin_memcpy(f->saddr, &ip6->saddr, 16);
		__builtin_memcpy(f->daddr, &ip6->daddr, 16);
		f->proto = ip6->nexthdr;
		f->family = 6;
		return ports(f, ip6 + 1, end);
	}
	return -1;
}

#endif
