// SPDX-License-Identifier: GPL-2.0
/*
 * vx3-xsk - AF_XDP socket traffic with verified payloads
 *
 *   vx3-xsk rx IFNAME QUEUE MODE COUNT IDLE_MS [FILL STALL_MS]
 *   vx3-xsk tx IFNAME QUEUE MODE COUNT SIZE DST_MAC SRC_IP DST_IP
 *
 * MODE: "copy" (XDP_COPY, the program in driver mode), "zc" (XDP_ZEROCOPY,
 * driver mode) or "skb" (XDP_COPY, the program in generic mode).
 *
 * rx: attaches xdp_xsk of /usr/lib/vx3/vx3_xdp.bpf.o to IFNAME (UDP to
 * port 9999 goes to the socket of its RX queue), binds a socket to QUEUE,
 * prints "ready", and receives until COUNT datagrams arrived or none came
 * for IDLE_MS. Each payload must be lib/xdppeer.py's: a 4-byte sequence
 * number and bytes derived from it. The program is detached at the end.
 * FILL (default 2048) frames go on the fill ring at the start; for
 * STALL_MS (default 0) after "ready" received frames are not given back
 * to the fill ring (a socket that stops refilling), then all at once.
 * With VX3_XSK_STALL_SLEEP set in the environment the socket also makes
 * no system call during the stall (it sleeps instead of waking the queue
 * when need_wakeup asks for it), so nothing but the device and the
 * driver itself polls the queue then.
 * With VX3_XSK_PROG set in the environment, rx attaches that program of
 * the object instead of xdp_xsk (an XDP_TX or XDP_DROP one: the socket
 * then only lends the queue its buffers).
 *
 * tx: sends COUNT UDP datagrams of SIZE payload bytes from port 9998 to
 * DST_IP:9999 (Ethernet to DST_MAC) through the socket's TX ring, with
 * xdppeer.py's payloads, and waits for every completion. The UDP checksum
 * is 0 (none), unless VX3_XSK_TXMD in the environment says:
 *   csum    the UMEM has TX metadata, every frame asks for checksum
 *           offload (XDP_TXMD_FLAGS_CHECKSUM, csum_start at the UDP
 *           header, csum_offset 6) and its checksum field holds the
 *           pseudo-header sum, as the offload wants it
 *   pseudo  the same frames without metadata: their checksum is wrong
 *
 * bench: the AF_XDP cells of bench/bench.py, for SECONDS or until SIGINT:
 *   rxdrop  xdp_xsk_all sends every frame of QUEUE to the socket, which
 *           gives it straight back to the fill ring
 *   l2fwd   the same, and each frame goes back out of the TX ring with its
 *           MAC addresses swapped; completed frames return to the fill ring
 *   txonly  UDP frames of SIZE bytes (SIZE + 4 on the wire, SIZE at least
 *           60) from SRC_IP to DST_IP, to DST_MAC, as fast as the TX ring
 *           takes them
 * The bench socket has rings of 4096 descriptors and 8192 UMEM frames,
 * 4096 of them on the fill ring: more than vx3's RX ring 0 posts (2048),
 * so that frames on their way back through the socket do not leave the
 * ring short. The socket waits in poll() whenever it has nothing to do.
 * With VX3_XSK_CNT naming a pinned vx3_cnt (bench.py's), the program counts
 * into that map and the socket keeps the frames it handled (received and
 * freed, forwarded and completed, sent and completed) in its key CNT_XSK.
 *
 * All end with one line of JSON (rx: received, bad, dup; tx: sent,
 * completed; bench: done, the socket's XDP_STATISTICS; all: zc, 1 if the
 * kernel reports the bind as zero-copy) and exit 0 unless a system call
 * failed.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

/* AF_XDP TX metadata (Linux 6.8 and later; Debian 12's headers are 6.1) */
#ifndef XDP_UMEM_TX_METADATA_LEN
#define XDP_UMEM_TX_METADATA_LEN	(1 << 2)
#endif
#ifndef XDP_TX_METADATA
#define XDP_TX_METADATA			(1 << 1)
#endif
#ifndef XDP_TXMD_FLAGS_CHECKSUM
#define XDP_TXMD_FLAGS_CHECKSUM		(1 << 1)
#endif

#define OBJ		"/usr/lib/vx3/vx3_xdp.bpf.o"
#define SPORT		9998
#define DPORT		9999
#define NFRAMES		4096	/* UMEM frames (bench: twice as many) */
#define FRAME		4096
#define NDESC		2048	/* descriptors per ring (bench: twice) */
#define HDRS		(ETH_HLEN + sizeof(struct iphdr) + sizeof(struct udphdr))
#define CNT_XSK		3	/* vx3_xdp.bpf.c's vx3_cnt key of the socket */

struct ring {
	__u32 *prod;
	__u32 *cons;
	__u32 *flags;
	void *desc;
	__u32 mask;
};

struct xsk {
	int fd;
	unsigned char *umem;
	struct ring rx, tx, fill, comp;
	__u32 txmd_len;		/* TX metadata before each TX frame */
	__u32 ndesc;		/* descriptors per ring */
	__u32 nframes;		/* UMEM frames */
};

/* struct xdp_umem_reg with tx_metadata_len, struct xsk_tx_metadata */
struct umem_reg {
	__u64 addr;
	__u64 len;
	__u32 chunk_size;
	__u32 headroom;
	__u32 flags;
	__u32 tx_metadata_len;
};

struct tx_md {
	__u64 flags;
	__u16 csum_start;
	__u16 csum_offset;
	__u32 pad;
	__u64 launch_time;
};

enum txmd { TXMD_NONE, TXMD_CSUM, TXMD_PSEUDO };

static void die(const char *what)
{
	fprintf(stderr, "vx3-xsk: %s: %s\n", what, strerror(errno));
	exit(1);
}

static __u32 load_acq(__u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store_rel(__u32 *p, __u32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static void map_ring(int fd, struct ring *r, const struct xdp_ring_offset *o,
		     size_t desc_size, off_t pgoff, __u32 n)
{
	void *m = mmap(NULL, o->desc + n * desc_size,
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		       fd, pgoff);

	if (m == MAP_FAILED)
		die("mmap ring");
	r->prod = m + o->producer;
	r->cons = m + o->consumer;
	r->flags = m + o->flags;
	r->desc = m + o->desc;
	r->mask = n - 1;
}

static void xsk_open(struct xsk *x, unsigned int ifindex, __u32 queue,
		     __u16 bind_flags)
{
	struct umem_reg reg = {};
	struct xdp_mmap_offsets off;
	struct sockaddr_xdp sxdp = {};
	socklen_t len = sizeof(off);
	int n = x->ndesc;

	x->umem = mmap(NULL, (size_t)x->nframes * FRAME, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (x->umem == MAP_FAILED)
		die("mmap umem");
	x->fd = socket(AF_XDP, SOCK_RAW, 0);
	if (x->fd < 0)
		die("socket(AF_XDP)");
	reg.addr = (__u64)(uintptr_t)x->umem;
	reg.len = (__u64)x->nframes * FRAME;
	reg.chunk_size = FRAME;
	if (x->txmd_len) {
		reg.flags = XDP_UMEM_TX_METADATA_LEN;
		reg.tx_metadata_len = x->txmd_len;
	}
	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)))
		die("XDP_UMEM_REG");
	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof(n)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &n,
		       sizeof(n)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_RX_RING, &n, sizeof(n)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_TX_RING, &n, sizeof(n)))
		die("ring sizes");
	if (getsockopt(x->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &len))
		die("XDP_MMAP_OFFSETS");
	map_ring(x->fd, &x->rx, &off.rx, sizeof(struct xdp_desc),
		 XDP_PGOFF_RX_RING, n);
	map_ring(x->fd, &x->tx, &off.tx, sizeof(struct xdp_desc),
		 XDP_PGOFF_TX_RING, n);
	map_ring(x->fd, &x->fill, &off.fr, sizeof(__u64),
		 XDP_UMEM_PGOFF_FILL_RING, n);
	map_ring(x->fd, &x->comp, &off.cr, sizeof(__u64),
		 XDP_UMEM_PGOFF_COMPLETION_RING, n);
	sxdp.sxdp_family = AF_XDP;
	sxdp.sxdp_ifindex = ifindex;
	sxdp.sxdp_queue_id = queue;
	sxdp.sxdp_flags = bind_flags | XDP_USE_NEED_WAKEUP;
	if (bind(x->fd, (struct sockaddr *)&sxdp, sizeof(sxdp)))
		die("bind");
}

static int payload_ok(const unsigned char *p, __u32 len, __u32 *seq)
{
	__u32 i;

	if (len < 4)
		return 0;
	*seq = (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
	for (i = 4; i < len; i++)
		if (p[i] != (unsigned char)(*seq + i - 4))
			return 0;
	return 1;
}

static int is_zc(struct xsk *x)
{
	struct xdp_options opts = {};
	socklen_t len = sizeof(opts);

	if (getsockopt(x->fd, SOL_XDP, XDP_OPTIONS, &opts, &len))
		die("XDP_OPTIONS");
	return !!(opts.flags & XDP_OPTIONS_ZEROCOPY);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int do_rx(struct xsk *x, unsigned int ifindex, __u32 queue,
		 __u32 xdp_flags, __u64 count, int idle_ms, __u32 fill,
		 int stall_ms)
{
	unsigned long long received = 0, bad = 0, dup = 0;
	__u64 *held, nheld = 0;
	long long stall_end;
	struct bpf_object *obj;
	struct bpf_program *prog;
	unsigned char *seen;
	__u32 i, prod;
	int stall_sleep = !!getenv("VX3_XSK_STALL_SLEEP");
	long long last;
	int map;

	obj = bpf_object__open_file(OBJ, NULL);
	if (!obj || bpf_object__load(obj))
		die(OBJ);
	prog = bpf_object__find_program_by_name(obj, getenv("VX3_XSK_PROG") ?:
						"xdp_xsk");
	map = bpf_object__find_map_fd_by_name(obj, "vx3_xsks");
	if (!prog || map < 0)
		die("xdp_xsk / vx3_xsks");
	if (bpf_map_update_elem(map, &queue, &x->fd, 0))
		die("XSKMAP update");
	if (bpf_xdp_attach(ifindex, bpf_program__fd(prog), xdp_flags, NULL))
		die("XDP attach");

	/* Half the UMEM on the fill ring at most, the rest never used */
	if (fill > x->ndesc)
		fill = x->ndesc;
	for (i = 0; i < fill; i++)
		((__u64 *)x->fill.desc)[i] = (__u64)i * FRAME;
	store_rel(x->fill.prod, fill);
	seen = calloc(count + 1, 1);
	held = calloc(x->ndesc, sizeof(*held));
	if (!seen || !held)
		die("calloc");
	printf("ready\n");
	fflush(stdout);

	last = now_ms();
	stall_end = last + stall_ms;
	while (received < count && now_ms() - last < idle_ms) {
		struct pollfd pfd = { .fd = x->fd, .events = POLLIN };
		__u32 cons = *x->rx.cons, fprod = *x->fill.prod;
		int stalled = now_ms() < stall_end;

		if (!stalled && nheld) {
			while (nheld)
				((__u64 *)x->fill.desc)[fprod++ &
							x->fill.mask] =
					held[--nheld];
			store_rel(x->fill.prod, fprod);
		}
		prod = load_acq(x->rx.prod);
		if (prod == cons && stalled && stall_sleep) {
			usleep(50000);
			continue;
		}
		if (prod == cons) {
			if (*x->fill.flags & XDP_RING_NEED_WAKEUP)
				recvfrom(x->fd, NULL, 0, MSG_DONTWAIT, NULL,
					 NULL);
			poll(&pfd, 1, 50);
			continue;
		}
		for (; cons != prod; cons++) {
			struct xdp_desc *d = (struct xdp_desc *)x->rx.desc +
					     (cons & x->rx.mask);
			const unsigned char *f = x->umem + d->addr;
			__u32 seq;

			if (d->len < HDRS ||
			    !payload_ok(f + HDRS, d->len - HDRS, &seq) ||
			    seq >= count) {
				bad++;
			} else if (seen[seq]) {
				dup++;
			} else {
				seen[seq] = 1;
				received++;
			}
			if (stalled)
				held[nheld++] = d->addr & ~(__u64)(FRAME - 1);
			else
				((__u64 *)x->fill.desc)[fprod++ &
							x->fill.mask] =
					d->addr & ~(__u64)(FRAME - 1);
		}
		store_rel(x->rx.cons, cons);
		store_rel(x->fill.prod, fprod);
		last = now_ms();
	}
	bpf_xdp_detach(ifindex, xdp_flags, NULL);
	bpf_object__close(obj);
	printf("{\"received\": %llu, \"bad\": %llu, \"dup\": %llu, \"zc\": %d}\n",
	       received, bad, dup, is_zc(x));
	return 0;
}

static __u16 csum_fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

static __u16 ip_csum(const void *hdr, size_t len)
{
	const __u16 *p = hdr;
	__u32 sum = 0;

	for (; len > 1; len -= 2)
		sum += *p++;
	return ~csum_fold(sum);
}

/* The UDP pseudo-header sum, folded, not inverted: what a checksum field
 * holds for the device to finish (CHECKSUM_PARTIAL)
 */
static __u16 udp_pseudo(in_addr_t saddr, in_addr_t daddr, __u16 ulen)
{
	__u32 sum = (saddr & 0xffff) + (saddr >> 16) + (daddr & 0xffff) +
		    (daddr >> 16) + htons(IPPROTO_UDP) + htons(ulen);

	return csum_fold(sum);
}

static __u32 build_frame(unsigned char *f, const unsigned char *dst,
			 const unsigned char *src, in_addr_t saddr,
			 in_addr_t daddr, __u32 seq, __u32 size,
			 enum txmd txmd)
{
	struct iphdr *ip = (void *)(f + ETH_HLEN);
	struct udphdr *uh = (void *)(ip + 1);
	unsigned char *p = (void *)(uh + 1);
	__u32 i;

	memcpy(f, dst, ETH_ALEN);
	memcpy(f + ETH_ALEN, src, ETH_ALEN);
	f[12] = ETH_P_IP >> 8;
	f[13] = ETH_P_IP & 0xff;
	memset(ip, 0, sizeof(*ip));
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons(sizeof(*ip) + sizeof(*uh) + size);
	ip->saddr = saddr;
	ip->daddr = daddr;
	ip->check = ip_csum(ip, sizeof(*ip));
	uh->source = htons(SPORT);
	uh->dest = htons(DPORT);
	uh->len = htons(sizeof(*uh) + size);
	uh->check = txmd == TXMD_NONE ? 0 :
		    udp_pseudo(saddr, daddr, sizeof(*uh) + size);
	if (txmd == TXMD_CSUM) {
		struct tx_md *md = (void *)(f - sizeof(*md));

		memset(md, 0, sizeof(*md));
		md->flags = XDP_TXMD_FLAGS_CHECKSUM;
		md->csum_start = ETH_HLEN + sizeof(*ip);
		md->csum_offset = offsetof(struct udphdr, check);
	}
	p[0] = seq >> 24;
	p[1] = seq >> 16;
	p[2] = seq >> 8;
	p[3] = seq;
	for (i = 4; i < size; i++)
		p[i] = seq + i - 4;
	return HDRS + size;
}

static void if_mac(const char *ifname, unsigned char *mac)
{
	struct ifreq ifr = {};
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (s < 0 || ioctl(s, SIOCGIFHWADDR, &ifr))
		die("SIOCGIFHWADDR");
	memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	close(s);
}

static int do_tx(struct xsk *x, const char *ifname, __u64 count, __u32 size,
		 const char *dmac, const char *sip, const char *dip,
		 enum txmd txmd)
{
	unsigned char dst[ETH_ALEN], src[ETH_ALEN];
	__u64 sent = 0, done = 0, free_n = x->nframes;
	__u64 *free_frames;
	long long last;
	__u32 i;

	if (sscanf(dmac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &dst[0], &dst[1],
		   &dst[2], &dst[3], &dst[4], &dst[5]) != 6 ||
	    size < 4 || x->txmd_len + HDRS + size > FRAME) {
		fprintf(stderr, "vx3-xsk: bad MAC or size\n");
		return 2;
	}
	if_mac(ifname, src);
	free_frames = malloc(x->nframes * sizeof(*free_frames));
	if (!free_frames)
		die("malloc");
	/* A frame starts after its metadata */
	for (i = 0; i < x->nframes; i++)
		free_frames[i] = (__u64)i * FRAME + x->txmd_len;

	last = now_ms();
	while (done < count && now_ms() - last < 5000) {
		__u32 cprod = load_acq(x->comp.prod), ccons = *x->comp.cons;
		__u32 tprod = *x->tx.prod;
		__u32 room = x->ndesc - (tprod - load_acq(x->tx.cons));

		for (; ccons != cprod; ccons++, done++)
			free_frames[free_n++] =
				((__u64 *)x->comp.desc)[ccons & x->comp.mask];
		if (ccons != *x->comp.cons) {
			store_rel(x->comp.cons, ccons);
			last = now_ms();
		}
		for (; sent < count && free_n && room; sent++, room--) {
			struct xdp_desc *d = (struct xdp_desc *)x->tx.desc +
					     (tprod++ & x->tx.mask);

			d->addr = free_frames[--free_n];
			d->len = build_frame(x->umem + d->addr, dst, src,
					     inet_addr(sip), inet_addr(dip),
					     sent, size, txmd);
			d->options = txmd == TXMD_CSUM ? XDP_TX_METADATA : 0;
		}
		store_rel(x->tx.prod, tprod);
		if (*x->tx.flags & XDP_RING_NEED_WAKEUP &&
		    sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
		    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS)
			die("sendto");
		if (done < sent)
			usleep(100);
	}
	printf("{\"sent\": %llu, \"completed\": %llu, \"zc\": %d}\n",
	       (unsigned long long)sent, (unsigned long long)done, is_zc(x));
	return 0;
}

enum bench_act { BENCH_RXDROP, BENCH_L2FWD, BENCH_TXONLY };

static volatile sig_atomic_t stop;

static void on_sigint(int sig)
{
	stop = 1;
}

struct bench {
	struct xsk *x;
	enum bench_act act;
	int cnt;		/* pinned vx3_cnt, or -1 */
	__u64 base;		/* its CNT_XSK at the start */
	__u64 done;
	__u64 *free_frames;	/* txonly: frames not on the TX ring */
	__u64 free_n;
	__u32 len;		/* txonly: frame length */
};

static void bench_publish(struct bench *b)
{
	__u32 key = CNT_XSK;
	__u64 v = b->base + b->done;

	if (b->cnt >= 0 && bpf_map_update_elem(b->cnt, &key, &v, 0))
		die("vx3_cnt update");
}

static void kick_tx(struct xsk *x)
{
	if (*x->tx.flags & XDP_RING_NEED_WAKEUP &&
	    sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
	    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS &&
	    errno != ENETDOWN)
		die("sendto");
}

/* Completed TX frames: back to the fill ring (l2fwd) or the free list */
static __u32 bench_complete(struct bench *b)
{
	struct xsk *x = b->x;
	__u32 cprod = load_acq(x->comp.prod), ccons = *x->comp.cons;
	__u32 fprod = *x->fill.prod, n = cprod - ccons;

	for (; ccons != cprod; ccons++) {
		__u64 addr = ((__u64 *)x->comp.desc)[ccons & x->comp.mask];

		if (b->act == BENCH_TXONLY)
			b->free_frames[b->free_n++] = addr;
		else
			((__u64 *)x->fill.desc)[fprod++ & x->fill.mask] =
				addr & ~(__u64)(FRAME - 1);
	}
	if (!n)
		return 0;
	store_rel(x->comp.cons, ccons);
	store_rel(x->fill.prod, fprod);
	b->done += n;
	return n;
}

/* Received frames: freed (rxdrop) or forwarded (l2fwd) */
static __u32 bench_receive(struct bench *b)
{
	struct xsk *x = b->x;
	__u32 cons = *x->rx.cons, prod = load_acq(x->rx.prod);
	__u32 fprod = *x->fill.prod, tprod = *x->tx.prod;
	__u32 room = x->ndesc - (tprod - load_acq(x->tx.cons));
	__u32 n = prod - cons;

	for (; cons != prod; cons++) {
		struct xdp_desc *d = (struct xdp_desc *)x->rx.desc +
				     (cons & x->rx.mask);
		unsigned char *f = x->umem + d->addr, mac[ETH_ALEN];
		struct xdp_desc *t;

		if (b->act == BENCH_RXDROP || !room || d->len < ETH_HLEN) {
			((__u64 *)x->fill.desc)[fprod++ & x->fill.mask] =
				d->addr & ~(__u64)(FRAME - 1);
			continue;
		}
		memcpy(mac, f, ETH_ALEN);
		memcpy(f, f + ETH_ALEN, ETH_ALEN);
		memcpy(f + ETH_ALEN, mac, ETH_ALEN);
		t = (struct xdp_desc *)x->tx.desc + (tprod++ & x->tx.mask);
		*t = *d;
		room--;
	}
	if (!n)
		return 0;
	store_rel(x->rx.cons, cons);
	store_rel(x->fill.prod, fprod);
	if (b->act == BENCH_RXDROP) {
		b->done += n;
		return n;
	}
	store_rel(x->tx.prod, tprod);
	kick_tx(x);
	return n;
}

/* txonly: every free frame onto the TX ring */
static __u32 bench_send(struct bench *b)
{
	struct xsk *x = b->x;
	__u32 tprod = *x->tx.prod, n = 0;
	__u32 room = x->ndesc - (tprod - load_acq(x->tx.cons));

	for (; b->free_n && room; room--, n++) {
		struct xdp_desc *d = (struct xdp_desc *)x->tx.desc +
				     (tprod++ & x->tx.mask);

		d->addr = b->free_frames[--b->free_n];
		d->len = b->len;
		d->options = 0;
	}
	if (n)
		store_rel(x->tx.prod, tprod);
	kick_tx(x);
	return n;
}

static void print_stats(struct bench *b, const char *act)
{
	struct xdp_statistics st = {};
	socklen_t len = sizeof(st);

	if (getsockopt(b->x->fd, SOL_XDP, XDP_STATISTICS, &st, &len))
		die("XDP_STATISTICS");
	printf("{\"act\": \"%s\"", act);
	printf(", \"done\": %llu", (unsigned long long)b->done);
	printf(", \"rx_dropped\": %llu", (unsigned long long)st.rx_dropped);
	printf(", \"rx_invalid_descs\": %llu",
	       (unsigned long long)st.rx_invalid_descs);
	printf(", \"tx_invalid_descs\": %llu",
	       (unsigned long long)st.tx_invalid_descs);
	printf(", \"rx_ring_full\": %llu", (unsigned long long)st.rx_ring_full);
	printf(", \"rx_fill_ring_empty_descs\": %llu",
	       (unsigned long long)st.rx_fill_ring_empty_descs);
	printf(", \"tx_ring_empty_descs\": %llu",
	       (unsigned long long)st.tx_ring_empty_descs);
	printf(", \"zc\": %d}\n", is_zc(b->x));
}

static int do_bench(struct xsk *x, const char *ifname, unsigned int ifindex,
		    __u32 queue, __u32 xdp_flags, const char *act, int secs,
		    char **addrs)
{
	const char *cnt_path = getenv("VX3_XSK_CNT");
	struct bench b = { .x = x, .cnt = -1 };
	struct bpf_object *obj = NULL;
	long long end, publish = 0;
	__u32 key = CNT_XSK, i;

	if (!strcmp(act, "rxdrop"))
		b.act = BENCH_RXDROP;
	else if (!strcmp(act, "l2fwd"))
		b.act = BENCH_L2FWD;
	else if (!strcmp(act, "txonly") && addrs)
		b.act = BENCH_TXONLY;
	else
		return 2;
	if (cnt_path) {
		b.cnt = bpf_obj_get(cnt_path);
		if (b.cnt < 0 || bpf_map_lookup_elem(b.cnt, &key, &b.base))
			die(cnt_path);
	}
	signal(SIGINT, on_sigint);
	signal(SIGTERM, on_sigint);

	if (b.act == BENCH_TXONLY) {
		unsigned char dst[ETH_ALEN], src[ETH_ALEN];

		b.len = strtoul(addrs[0], NULL, 0);
		if (b.len < HDRS + 18 || b.len > FRAME ||
		    sscanf(addrs[1], "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &dst[0],
			   &dst[1], &dst[2], &dst[3], &dst[4], &dst[5]) != 6)
			return 2;
		if_mac(ifname, src);
		b.free_frames = malloc(x->nframes * sizeof(*b.free_frames));
		if (!b.free_frames)
			die("malloc");
		for (i = 0; i < x->nframes; i++) {
			b.free_frames[i] = (__u64)i * FRAME;
			build_frame(x->umem + b.free_frames[i], dst, src,
				    inet_addr(addrs[2]), inet_addr(addrs[3]), i,
				    b.len - HDRS, TXMD_NONE);
		}
		b.free_n = x->nframes;
	} else {
		struct bpf_program *prog;
		struct bpf_map *m;
		int map;

		obj = bpf_object__open_file(OBJ, NULL);
		if (!obj)
			die(OBJ);
		m = bpf_object__find_map_by_name(obj, "vx3_cnt");
		if (!m || (b.cnt >= 0 && bpf_map__reuse_fd(m, b.cnt)) ||
		    bpf_object__load(obj))
			die(OBJ);
		prog = bpf_object__find_program_by_name(obj, "xdp_xsk_all");
		map = bpf_object__find_map_fd_by_name(obj, "vx3_xsks");
		if (!prog || map < 0)
			die("xdp_xsk_all / vx3_xsks");
		if (bpf_map_update_elem(map, &queue, &x->fd, 0))
			die("XSKMAP update");
		if (bpf_xdp_attach(ifindex, bpf_program__fd(prog), xdp_flags,
				   NULL))
			die("XDP attach");
		/* The fill ring full, half the UMEM: the rest for l2fwd's TX */
		for (i = 0; i < x->ndesc; i++)
			((__u64 *)x->fill.desc)[i] = (__u64)i * FRAME;
		store_rel(x->fill.prod, x->ndesc);
	}
	printf("ready\n");
	fflush(stdout);

	end = now_ms() + secs * 1000LL;
	while (!stop && now_ms() < end) {
		struct pollfd pfd = { .fd = x->fd };
		__u32 n = bench_complete(&b);

		if (b.act == BENCH_TXONLY)
			n += bench_send(&b);
		else
			n += bench_receive(&b);
		if (now_ms() >= publish) {
			bench_publish(&b);
			publish = now_ms() + 100;
		}
		if (n)
			continue;
		/* Nothing to do: wait for frames, or for TX ring room */
		if (b.act != BENCH_TXONLY &&
		    *x->fill.flags & XDP_RING_NEED_WAKEUP)
			recvfrom(x->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		pfd.events = b.act == BENCH_TXONLY ? POLLOUT : POLLIN;
		poll(&pfd, 1, b.act == BENCH_TXONLY ? 1 : 100);
	}
	bench_publish(&b);
	if (obj) {
		bpf_xdp_detach(ifindex, xdp_flags, NULL);
		bpf_object__close(obj);
	}
	print_stats(&b, act);
	return 0;
}

static const char usage[] =
	"usage: vx3-xsk rx IFNAME QUEUE MODE COUNT IDLE_MS [FILL STALL_MS]\n"
	"       vx3-xsk tx IFNAME QUEUE MODE COUNT SIZE DST_MAC SRC_IP DST_IP\n"
	"       vx3-xsk bench IFNAME QUEUE MODE rxdrop|l2fwd SECONDS\n"
	"       vx3-xsk bench IFNAME QUEUE MODE txonly SECONDS SIZE DST_MAC SRC_IP DST_IP\n";

int main(int argc, char **argv)
{
	const char *md = getenv("VX3_XSK_TXMD");
	__u32 xdp_flags = XDP_FLAGS_DRV_MODE;
	enum txmd txmd = TXMD_NONE;
	struct xsk x = {};
	unsigned int ifindex;
	__u16 bind_flags;
	__u32 queue;

	if (argc < 7 ||
	    (strcmp(argv[1], "rx") && strcmp(argv[1], "tx") &&
	     strcmp(argv[1], "bench")) ||
	    (!strcmp(argv[1], "tx") && argc != 10) ||
	    (!strcmp(argv[1], "rx") && argc != 7 && argc != 9) ||
	    (!strcmp(argv[1], "bench") && argc != 7 && argc != 11)) {
		fputs(usage, stderr);
		return 2;
	}
	ifindex = if_nametoindex(argv[2]);
	if (!ifindex)
		die(argv[2]);
	queue = strtoul(argv[3], NULL, 0);
	if (!strcmp(argv[4], "zc")) {
		bind_flags = XDP_ZEROCOPY;
	} else if (!strcmp(argv[4], "copy")) {
		bind_flags = XDP_COPY;
	} else if (!strcmp(argv[4], "skb")) {
		bind_flags = XDP_COPY;
		xdp_flags = XDP_FLAGS_SKB_MODE;
	} else {
		fprintf(stderr, "vx3-xsk: mode is copy, zc or skb\n");
		return 2;
	}
	if (md && !strcmp(md, "csum")) {
		txmd = TXMD_CSUM;
		x.txmd_len = sizeof(struct tx_md);
	} else if (md && !strcmp(md, "pseudo")) {
		txmd = TXMD_PSEUDO;
	} else if (md) {
		fprintf(stderr, "vx3-xsk: VX3_XSK_TXMD is csum or pseudo\n");
		return 2;
	}
	x.ndesc = NDESC;
	x.nframes = NFRAMES;
	if (!strcmp(argv[1], "bench")) {
		x.ndesc *= 2;
		x.nframes *= 2;
	}
	xsk_open(&x, ifindex, queue, bind_flags);
	if (!strcmp(argv[1], "bench")) {
		int rc = do_bench(&x, argv[2], ifindex, queue, xdp_flags,
				  argv[5], atoi(argv[6]),
				  argc == 11 ? argv + 7 : NULL);

		if (rc == 2)
			fputs(usage, stderr);
		return rc;
	}
	if (!strcmp(argv[1], "rx"))
		return do_rx(&x, ifindex, queue, xdp_flags,
			     strtoull(argv[5], NULL, 0), atoi(argv[6]),
			     argc == 9 ? strtoul(argv[7], NULL, 0) : x.ndesc,
			     argc == 9 ? atoi(argv[8]) : 0);
	return do_tx(&x, argv[2], strtoull(argv[5], NULL, 0),
		     strtoul(argv[6], NULL, 0), argv[7], argv[8], argv[9], txmd);
}
