// SPDX-License-Identifier: GPL-2.0
/*
 * vx3-udp - UDP payload integrity test: a sender and a verifying receiver
 *
 *   vx3-udp send ADDR PORT COUNT MIN MAX SEED [PPS]
 *   vx3-udp recv PORT COUNT MIN MAX SEED IDLE_MS [GROUP]
 *   vx3-udp hold-tstamp
 *   vx3-udp raw IFNAME COUNT LEN
 *   vx3-udp napi PORT MS BUSY_POLL_US
 *
 * The sender sends COUNT datagrams, sequence numbers 0..COUNT-1. The size
 * of datagram n (MIN..MAX bytes, MIN >= 16) and its whole content are
 * functions of (SEED, n): a 16-byte header (magic, seed, sequence number,
 * length) followed by pseudo-random bytes. PPS limits the rate (0: none).
 *
 * The receiver (IPv4 and IPv6; with GROUP, IPv4 only, member of that
 * multicast group) recomputes every datagram it gets from its
 * sequence number and compares it byte for byte, so a corrupted,
 * truncated, misdirected or duplicated datagram is detected; lost ones are
 * only counted (UDP may drop). It stops after COUNT good datagrams, after
 * IDLE_MS of silence once data has arrived, after 60 s without any, or on
 * SIGTERM. It prints
 *
 *   received=N ok=N corrupt=N dup=N lost=N bytes=N
 *
 * (bytes: payload bytes of good datagrams) and the first few problems;
 * it exits 1 if any datagram was corrupt or duplicated.
 *
 * raw sends COUNT broadcast frames of LEN bytes (14..60, no FCS) with
 * EtherType IPv4 but no room for an IPv4 header out of IFNAME through a
 * packet socket, bypassing the qdisc, and prints "sent=N". A device that
 * parses its TX packets cannot parse these: it fails to send them.
 *
 * napi receives datagrams of any content on PORT for MS milliseconds
 * from the first one (or until 60 s without any, or SIGTERM), with
 * blocking recv() calls. BUSY_POLL_US > 0 makes them busy poll the NAPI
 * instance the datagrams came through (SO_BUSY_POLL, SO_PREFER_BUSY_POLL:
 * with the instance's defer-hard-irqs and gro-flush-timeout set, its
 * interrupt stays off while the socket polls). It prints
 *
 *   received=N napi-id=ID
 *
 * ID: SO_INCOMING_NAPI_ID, the NAPI instance of the last datagram.
 *
 * splice connects to ADDR:PORT over TCP and sends FILE in pieces of
 * PIECE bytes, each at the start of a page of its own, handed to the
 * socket with vmsplice() and splice(): every piece becomes a frag of its
 * own in the socket's skbs (pieces of different pages do not coalesce),
 * so a packet carries as many frags as fit. It prints "sent=N".
 *
 * hold-tstamp keeps one socket with SO_TIMESTAMP open until killed. The
 * guest's /init runs it so that the kernel's netstamp_needed_key stays
 * enabled: iperf's sockets would otherwise switch that static key on and
 * off, and under QEMU's multi-threaded TCG the live code patching of a
 * static key can hit a vCPU inside the patched receive path ("Oops:
 * int3" in __netif_receive_skb_core), an emulator artefact that no
 * driver causes.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAGIC		0x76783355u	/* "vx3U" */
#define HDR_LEN		16
#define MAX_DGRAM	65507
#define START_MS	60000
#define MAX_REPORTS	10

static volatile sig_atomic_t stop;

struct params {
	uint32_t count;
	uint32_t min;
	uint32_t max;
	uint32_t seed;
};

static void die(const char *what)
{
	fprintf(stderr, "vx3-udp: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: vx3-udp send ADDR PORT COUNT MIN MAX SEED [PPS]\n"
		"       vx3-udp recv PORT COUNT MIN MAX SEED IDLE_MS [GROUP]\n"
		"       vx3-udp hold-tstamp\n"
		"       vx3-udp raw IFNAME COUNT LEN\n"
		"       vx3-udp napi PORT MS BUSY_POLL_US\n"
		"       vx3-udp splice ADDR PORT FILE PIECE\n");
	exit(2);
}

static uint32_t arg_u32(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v > UINT32_MAX)
		usage();
	return v;
}

/* splitmix64: a well-mixed 64-bit value for every input */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint32_t dgram_len(const struct params *p, uint32_t n)
{
	return p->min + mix(((uint64_t)p->seed << 32) | n) %
			(p->max - p->min + 1);
}

static void put32(unsigned char *b, uint32_t v)
{
	b[0] = v >> 24;
	b[1] = v >> 16;
	b[2] = v >> 8;
	b[3] = v;
}

/* Datagram n: header, then a pseudo-random stream seeded by (seed, n) */
static uint32_t make_dgram(const struct params *p, uint32_t n,
			   unsigned char *buf)
{
	uint32_t len = dgram_len(p, n), i;
	uint64_t s = mix(((uint64_t)n << 32) | p->seed), r = 0;

	put32(buf, MAGIC);
	put32(buf + 4, p->seed);
	put32(buf + 8, n);
	put32(buf + 12, len);
	for (i = HDR_LEN; i < len; i++) {
		if (!((i - HDR_LEN) & 7)) {
			s += 0x9e3779b97f4a7c15ull;
			r = mix(s);
		}
		buf[i] = r;
		r >>= 8;
	}
	return len;
}

static void check_params(const struct params *p)
{
	if (p->min < HDR_LEN || p->max < p->min || p->max > MAX_DGRAM)
		usage();
}

static int do_send(int argc, char **argv)
{
	static unsigned char buf[MAX_DGRAM];
	unsigned long long bytes = 0;
	struct sockaddr_storage ss = {};
	struct sockaddr_in6 *s6 = (void *)&ss;
	struct sockaddr_in *s4 = (void *)&ss;
	struct timespec t0, now;
	struct params p;
	uint32_t n, pps;
	socklen_t slen;
	uint16_t port;
	double due;
	int fd;

	if (argc != 8 && argc != 9)
		usage();
	p.count = arg_u32(argv[4]);
	p.min = arg_u32(argv[5]);
	p.max = arg_u32(argv[6]);
	p.seed = arg_u32(argv[7]);
	pps = argc == 9 ? arg_u32(argv[8]) : 0;
	check_params(&p);

	port = htons(arg_u32(argv[3]));
	if (inet_pton(AF_INET, argv[2], &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = port;
		slen = sizeof(*s4);
	} else if (inet_pton(AF_INET6, argv[2], &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = port;
		slen = sizeof(*s6);
	} else {
		usage();
	}
	fd = socket(ss.ss_family, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket");
	if (connect(fd, (struct sockaddr *)&ss, slen))
		die("connect");

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (n = 0; n < p.count; n++) {
		uint32_t len = make_dgram(&p, n, buf);

		if (pps) {
			due = (double)n / pps;
			for (;;) {
				double el;

				clock_gettime(CLOCK_MONOTONIC, &now);
				el = (now.tv_sec - t0.tv_sec) +
				     (now.tv_nsec - t0.tv_nsec) / 1e9;
				if (el >= due)
					break;
				usleep((due - el) * 1e6);
			}
		}
		/* A refused send (e.g. ICMP unreachable before the receiver
		 * is up) is a loss like any other.
		 */
		if (send(fd, buf, len, 0) == (ssize_t)len)
			bytes += len;
	}
	printf("sent=%u bytes=%llu\n", p.count, bytes);
	return 0;
}

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void report(unsigned int *reports, const char *fmt, uint32_t a,
		   uint32_t b)
{
	if (++*reports > MAX_REPORTS)
		return;
	printf(fmt, a, b);
	printf("\n");
}

static void on_term(int sig)
{
	stop = 1;
}

static int do_recv(int argc, char **argv)
{
	static unsigned char buf[MAX_DGRAM + 1], want[MAX_DGRAM];
	struct sockaddr_in6 sa = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	struct sockaddr_in sa4 = { .sin_family = AF_INET };
	struct ip_mreqn mreq = {};
	unsigned long long received = 0, ok = 0, corrupt = 0, dup = 0;
	struct sigaction sact = { .sa_handler = on_term };
	unsigned long long bytes = 0;
	unsigned int reports = 0;
	long long last, idle_ms;
	int fd, zero = 0, rcvbuf = 4 << 20;
	struct pollfd pfd;
	unsigned char *seen;
	struct params p;
	ssize_t len;

	if (argc != 8 && argc != 9)
		usage();
	sa.sin6_port = htons(arg_u32(argv[2]));
	sa4.sin_port = sa.sin6_port;
	p.count = arg_u32(argv[3]);
	p.min = arg_u32(argv[4]);
	p.max = arg_u32(argv[5]);
	p.seed = arg_u32(argv[6]);
	idle_ms = arg_u32(argv[7]);
	check_params(&p);
	seen = calloc(p.count ? p.count : 1, 1);
	if (!seen)
		die("calloc");

	if (argc == 9) {
		if (inet_pton(AF_INET, argv[8], &mreq.imr_multiaddr) != 1)
			usage();
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0)
			die("socket");
		if (bind(fd, (struct sockaddr *)&sa4, sizeof(sa4)))
			die("bind");
		if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq,
			       sizeof(mreq)))
			die("IP_ADD_MEMBERSHIP");
	} else {
		fd = socket(AF_INET6, SOCK_DGRAM, 0);
		if (fd < 0)
			die("socket");
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
			       sizeof(zero)))
			die("IPV6_V6ONLY");
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
			die("bind");
	}
	/* As root, beyond rmem_max: fewer drops at the socket */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	/* No SA_RESTART: poll() returns on SIGTERM */
	sigaction(SIGTERM, &sact, NULL);
	printf("listening\n");
	fflush(stdout);

	pfd.fd = fd;
	pfd.events = POLLIN;
	last = ms_now();
	while (ok < p.count && !stop) {
		uint32_t n, wlen;
		long long left;

		left = (received ? idle_ms : START_MS) - (ms_now() - last);
		if (left <= 0)
			break;
		if (poll(&pfd, 1, left) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (!(pfd.revents & POLLIN))
			continue;
		len = recv(fd, buf, sizeof(buf), MSG_TRUNC);
		if (len < 0) {
			if (errno == EINTR)
				continue;
			die("recv");
		}
		last = ms_now();
		received++;
		n = len >= HDR_LEN ? (uint32_t)buf[8] << 24 | buf[9] << 16 |
				     buf[10] << 8 | buf[11] : UINT32_MAX;
		if (n >= p.count) {
			corrupt++;
			report(&reports, "bad datagram: %u bytes, sequence %u",
			       (uint32_t)len, n);
			continue;
		}
		wlen = make_dgram(&p, n, want);
		if ((size_t)len != wlen || memcmp(buf, want, wlen)) {
			uint32_t i = 0;

			while (i < wlen && i < (size_t)len && buf[i] == want[i])
				i++;
			corrupt++;
			report(&reports, "corrupt datagram %u: first bad byte %u",
			       n, i);
			if ((size_t)len != wlen)
				report(&reports, "length %u, expected %u",
				       (uint32_t)len, wlen);
			continue;
		}
		if (seen[n]) {
			dup++;
			report(&reports, "duplicate datagram %u (%u bytes)", n,
			       wlen);
			continue;
		}
		seen[n] = 1;
		ok++;
		bytes += wlen;
	}
	printf("received=%llu ok=%llu corrupt=%llu dup=%llu lost=%llu bytes=%llu\n",
	       received, ok, corrupt, dup, p.count - ok, bytes);
	return corrupt || dup;
}

static int do_napi(int argc, char **argv)
{
	struct sockaddr_in6 sa = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	struct timeval tv = { .tv_usec = 100000 };
	struct sigaction sact = { .sa_handler = on_term };
	int fd, zero = 0, one = 1, budget = 64;
	unsigned long long received = 0;
	long long first = 0, start, ms;
	static unsigned char buf[MAX_DGRAM];
	unsigned int napi_id = 0;
	socklen_t optlen;
	uint32_t busy;

	if (argc != 5)
		usage();
	sa.sin6_port = htons(arg_u32(argv[2]));
	ms = arg_u32(argv[3]);
	busy = arg_u32(argv[4]);

	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket");
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)))
		die("IPV6_V6ONLY");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind");
	/* Wake up now and then to look at the clock */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		die("SO_RCVTIMEO");
	if (busy &&
	    (setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &busy, sizeof(busy)) ||
	     setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one,
			sizeof(one)) ||
	     setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget,
			sizeof(budget))))
		die("busy poll options");
	sigaction(SIGTERM, &sact, NULL);
	printf("listening\n");
	fflush(stdout);

	start = ms_now();
	while (!stop) {
		long long now = ms_now();

		if (first ? now - first >= ms : now - start >= START_MS)
			break;
		if (recv(fd, buf, sizeof(buf), 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			die("recv");
		}
		if (!received++)
			first = ms_now();
	}
	optlen = sizeof(napi_id);
	if (getsockopt(fd, SOL_SOCKET, SO_INCOMING_NAPI_ID, &napi_id, &optlen))
		die("SO_INCOMING_NAPI_ID");
	printf("received=%llu napi-id=%u\n", received, napi_id);
	return 0;
}

static int hold_tstamp(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int one = 1;

	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &one, sizeof(one))) {
		perror("hold-tstamp");
		return 1;
	}
	for (;;)
		pause();
}

static int do_raw(int argc, char **argv)
{
	unsigned char frame[ETH_ZLEN] = {};
	struct sockaddr_ll sll = {};
	uint32_t count, len, n;
	int fd, one = 1;

	if (argc != 5)
		usage();
	count = arg_u32(argv[3]);
	len = arg_u32(argv[4]);
	if (len < ETH_HLEN || len > ETH_ZLEN)
		usage();
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_IP);
	sll.sll_ifindex = if_nametoindex(argv[2]);
	if (!sll.sll_ifindex)
		die(argv[2]);
	sll.sll_halen = ETH_ALEN;
	memset(sll.sll_addr, 0xff, ETH_ALEN);

	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0)
		die("socket");
	if (setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)))
		die("PACKET_QDISC_BYPASS");
	/* Broadcast from a locally administered address, IPv4 EtherType */
	memset(frame, 0xff, ETH_ALEN);
	frame[ETH_ALEN] = 0x02;
	frame[2 * ETH_ALEN] = ETH_P_IP >> 8;
	frame[2 * ETH_ALEN + 1] = ETH_P_IP & 0xff;
	for (n = 0; n < count; n++) {
		if (sendto(fd, frame, len, 0, (struct sockaddr *)&sll,
			   sizeof(sll)) != (ssize_t)len) {
			if (errno == ENOBUFS || errno == EAGAIN) {
				usleep(1000);
				n--;
				continue;
			}
			die("sendto");
		}
	}
	printf("sent=%u\n", n);
	return 0;
}

/* Pieces handed to the pipe per vmsplice() (a pipe holds 16 buffers) */
#define SPLICE_BATCH	16

static int do_splice(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	long page = sysconf(_SC_PAGESIZE);
	uint32_t piece, npieces, i;
	unsigned char *pages;
	int fd, sock, pfd[2];
	uint64_t sent = 0;
	ssize_t len;

	if (argc != 6)
		usage();
	piece = arg_u32(argv[5]);
	if (!piece || piece > page ||
	    inet_pton(AF_INET, argv[2], &sin.sin_addr) != 1)
		usage();
	sin.sin_port = htons(arg_u32(argv[3]));
	fd = open(argv[4], O_RDONLY);
	if (fd < 0)
		die(argv[4]);
	len = lseek(fd, 0, SEEK_END);
	if (len <= 0 || lseek(fd, 0, SEEK_SET))
		die("lseek");
	npieces = (len + piece - 1) / piece;
	pages = mmap(NULL, (size_t)npieces * page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED)
		die("mmap");
	for (i = 0; i < npieces; i++)
		if (read(fd, pages + (size_t)i * page, piece) < 0)
			die("read");
	sock = socket(AF_INET, SOCK_STREAM, 0);
	if (sock < 0 || connect(sock, (struct sockaddr *)&sin, sizeof(sin)))
		die("connect");
	if (pipe(pfd))
		die("pipe");

	for (i = 0; i < npieces; ) {
		struct iovec iov[SPLICE_BATCH];
		ssize_t in, out, want = 0;
		uint32_t n, k;

		for (n = 0; n < SPLICE_BATCH && i + n < npieces; n++) {
			k = i + n;
			iov[n].iov_base = pages + (size_t)k * page;
			iov[n].iov_len = k == npieces - 1 ?
					 len - (uint64_t)k * piece : piece;
			want += iov[n].iov_len;
		}
		/* The pipe is empty: it takes all of them */
		in = vmsplice(pfd[1], iov, n, 0);
		if (in != want)
			die("vmsplice");
		for (out = 0; out < in; ) {
			ssize_t r = splice(pfd[0], NULL, sock, NULL, in - out,
					   SPLICE_F_MORE);

			if (r <= 0)
				die("splice");
			out += r;
		}
		sent += in;
		i += n;
	}
	close(sock);
	printf("sent=%llu\n", (unsigned long long)sent);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "send"))
		return do_send(argc, argv);
	if (!strcmp(argv[1], "recv"))
		return do_recv(argc, argv);
	if (!strcmp(argv[1], "hold-tstamp"))
		return hold_tstamp();
	if (!strcmp(argv[1], "raw"))
		return do_raw(argc, argv);
	if (!strcmp(argv[1], "napi"))
		return do_napi(argc, argv);
	if (!strcmp(argv[1], "splice"))
		return do_splice(argc, argv);
	usage();
	return 2;
}
