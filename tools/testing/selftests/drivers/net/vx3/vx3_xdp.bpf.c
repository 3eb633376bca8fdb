// SPDX-License-Identifier: GPL-2.0
/* XDP programs of the vx3 VM tests (test_xdp.py) and benchmark.
 *
 * Every program counts what it sees in vx3_cnt (per verdict: packets and
 * bytes), so a test compares the program's own counts with the driver's.
 * Programs act on UDP packets to port VX3_PORT only (or on all packets
 * where the name says so) and pass everything else, so ARP, neighbour
 * discovery and the test's own control traffic keep working.
 *
 * Sections (sec name = program name):
 *   xdp_pass, xdp_drop, xdp_aborted: that verdict for test packets
 *   xdp_drop_all: drop everything (benchmark: 64-byte drop rate)
 *   xdp_tx: reflect test packets (MACs, IPs and ports swapped), with
 *           head shrink and grow and a tail grow on the way (see there)
 *   xdp_tx_all: reflect every IPv4 UDP packet (benchmark)
 *   xdp_redirect: redirect test packets through the devmap vx3_ports
 *           (key 0) with the MACs from vx3_cfg; xdp_redirect_all for the
 *           benchmark's forwarding
 *   xdp_cpumap: redirect test packets into the cpumap vx3_cpus (CPU 1),
 *           whose kthread builds the skbs for the stack
 *   xdp_pass_mb, xdp_tx_mb: frags-aware ("xdp.frags") pass and reflect
 *   xdp_xsk: redirect test packets to the AF_XDP socket of their RX queue
 *           in the XSKMAP vx3_xsks (vx3-xsk), pass them if it has none;
 *           xdp_xsk_all: every packet (benchmark)
 */

#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define VX3_PORT	9999
#define VX3_TAIL	4

/* CNT_XSK: written by vx3-xsk's bench modes, not by a program: frames
 * the AF_XDP socket handled (bench.py reads it beside the programs' counts)
 */
enum { CNT_PKTS, CNT_BYTES, CNT_TAILFAIL, CNT_XSK, CNT_NUM };

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CNT_NUM);
	__type(key, __u32);
	__type(value, __u64);
} vx3_cnt SEC(".maps");

/* Key 0: destination MAC, key 1: source MAC for redirected frames */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} vx3_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} vx3_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} vx3_cpus SEC(".maps");

/* Key: RX queue, value: the AF_XDP socket bound to it */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} vx3_xsks SEC(".maps");

static __always_inline void count(__u32 idx, __u64 val)
{
	__u64 *c = bpf_map_lookup_elem(&vx3_cnt, &idx);

	if (c)
		__sync_fetch_and_add(c, val);
}

/* The UDP header of a test packet (IPv4 without options), or NULL */
static __always_inline struct udphdr *test_udp(struct xdp_md *ctx, bool all)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);
	struct udphdr *uh = (void *)(iph + 1);

	if ((void *)(uh + 1) > end)
		return NULL;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || iph->ihl != 5 ||
	    iph->protocol != IPPROTO_UDP)
		return NULL;
	if (!all && uh->dest != bpf_htons(VX3_PORT))
		return NULL;
	return uh;
}

static __always_inline int verdict(struct xdp_md *ctx, int act, bool all)
{
	if (!test_udp(ctx, all))
		return XDP_PASS;
	count(CNT_PKTS, 1);
	count(CNT_BYTES, bpf_xdp_get_buff_len(ctx));
	return act;
}

SEC("xdp") int xdp_pass(struct xdp_md *ctx)
{
	return verdict(ctx, XDP_PASS, false);
}

SEC("xdp.frags") int xdp_pass_mb(struct xdp_md *ctx)
{
	return verdict(ctx, XDP_PASS, false);
}

SEC("xdp") int xdp_drop(struct xdp_md *ctx)
{
	return verdict(ctx, XDP_DROP, false);
}

SEC("xdp") int xdp_drop_all(struct xdp_md *ctx)
{
	count(CNT_PKTS, 1);
	count(CNT_BYTES, bpf_xdp_get_buff_len(ctx));
	return XDP_DROP;
}

SEC("xdp") int xdp_aborted(struct xdp_md *ctx)
{
	return verdict(ctx, XDP_ABORTED, false);
}

static __always_inline void swap_mac(struct ethhdr *eth)
{
	unsigned char tmp[ETH_ALEN];

	__builtin_memcpy(tmp, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, tmp, ETH_ALEN);
}

static __always_inline void csum_fix(struct iphdr *iph)
{
	__u32 sum = 0;
	__u16 *p = (__u16 *)iph;
	int i;

	iph->check = 0;
#pragma unroll
	for (i = 0; i < 10; i++)
		sum += p[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	iph->check = ~sum;
}

/* Swap addresses and ports of a test packet in place */
static __always_inline int reflect(struct xdp_md *ctx, bool all)
{
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct udphdr *uh;
	struct iphdr *iph;
	__be32 a;
	__be16 p;

	uh = test_udp(ctx, all);
	if (!uh)
		return XDP_PASS;
	iph = (void *)(eth + 1);
	swap_mac(eth);
	a = iph->saddr;
	iph->saddr = iph->daddr;
	iph->daddr = a;
	p = uh->source;
	uh->source = uh->dest;
	uh->dest = p;
	count(CNT_PKTS, 1);
	count(CNT_BYTES, bpf_xdp_get_buff_len(ctx));
	return XDP_TX;
}

SEC("xdp") int xdp_tx_all(struct xdp_md *ctx)
{
	return reflect(ctx, true);
}

SEC("xdp.frags") int xdp_tx_mb(struct xdp_md *ctx)
{
	return reflect(ctx, false);
}

/* xdp_tx: the reflection with both ends of the buffer moved. The
 * Ethernet header is stripped (head shrink) and written back in front
 * (head grow); "VX3!" is appended (tail grow) and the IP and UDP lengths
 * cover it, so the peer receives its payload followed by the marker.
 */
SEC("xdp") int xdp_tx(struct xdp_md *ctx)
{
	struct ethhdr eth_copy;
	struct udphdr *uh;
	struct iphdr *iph;
	void *data, *end;
	__u32 len;
	char *tail;

	if (!test_udp(ctx, false))
		return XDP_PASS;
	data = (void *)(long)ctx->data;
	__builtin_memcpy(&eth_copy, data, sizeof(eth_copy));

	if (bpf_xdp_adjust_head(ctx, sizeof(struct ethhdr)))
		goto fail;
	if (bpf_xdp_adjust_head(ctx, -(int)sizeof(struct ethhdr)))
		goto fail;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + sizeof(struct ethhdr) > end)
		goto fail;
	__builtin_memcpy(data, &eth_copy, sizeof(eth_copy));

	len = end - data;
	if (bpf_xdp_adjust_tail(ctx, VX3_TAIL))
		goto fail;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (len > 4096 || data + len + VX3_TAIL > end)
		goto fail;
	tail = data + len;
	tail[0] = 'V';
	tail[1] = 'X';
	tail[2] = '3';
	tail[3] = '!';

	iph = data + sizeof(struct ethhdr);
	uh = (void *)(iph + 1);
	if ((void *)(uh + 1) > end)
		goto fail;
	iph->tot_len = bpf_htons(bpf_ntohs(iph->tot_len) + VX3_TAIL);
	uh->len = bpf_htons(bpf_ntohs(uh->len) + VX3_TAIL);
	uh->check = 0;
	csum_fix(iph);
	return reflect(ctx, false);
fail:
	count(CNT_TAILFAIL, 1);
	return XDP_ABORTED;
}

static __always_inline int redirect(struct xdp_md *ctx, bool all)
{
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	__u32 k0 = 0, k1 = 1;
	__u64 *dst, *src;

	if (!test_udp(ctx, all))
		return XDP_PASS;
	dst = bpf_map_lookup_elem(&vx3_cfg, &k0);
	src = bpf_map_lookup_elem(&vx3_cfg, &k1);
	if (!dst || !src)
		return XDP_ABORTED;
	__builtin_memcpy(eth->h_dest, dst, ETH_ALEN);
	__builtin_memcpy(eth->h_source, src, ETH_ALEN);
	count(CNT_PKTS, 1);
	count(CNT_BYTES, bpf_xdp_get_buff_len(ctx));
	return bpf_redirect_map(&vx3_ports, 0, 0);
}

SEC("xdp") int xdp_redirect(struct xdp_md *ctx)
{
	return redirect(ctx, false);
}

SEC("xdp") int xdp_redirect_all(struct xdp_md *ctx)
{
	return redirect(ctx, true);
}

SEC("xdp") int xdp_cpumap(struct xdp_md *ctx)
{
	if (!test_udp(ctx, false))
		return XDP_PASS;
	count(CNT_PKTS, 1);
	count(CNT_BYTES, bpf_xdp_get_buff_len(ctx));
	return bpf_redirect_map(&vx3_cpus, 1, 0);
}

SEC("xdp") int xdp_xsk(struct xdp_md *ctx)
{
	if (!test_udp(ctx, false))
		return XDP_PASS;
	count(CNT_PKTS, 1);
	count(CNT_BYTES, bpf_xdp_get_buff_len(ctx));
	return bpf_redirect_map(&vx3_xsks, ctx->rx_queue_index, XDP_PASS);
}

SEC("xdp") int xdp_xsk_all(struct xdp_md *ctx)
{
	count(CNT_PKTS, 1);
	count(CNT_BYTES, bpf_xdp_get_buff_len(ctx));
	return bpf_redirect_map(&vx3_xsks, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
