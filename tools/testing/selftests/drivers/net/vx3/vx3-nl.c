// SPDX-License-Identifier: GPL-2.0
/*
 * vx3-nl - netdev netlink: queue statistics, page pools, NAPI instances
 *
 * The test guest has no Python and no YNL; this is a minimal raw generic
 * netlink client for the "netdev" family, built statically.
 *
 *   vx3-nl qstats [IFINDEX]        device totals (qstats-get dump)
 *   vx3-nl qstats-queue [IFINDEX]  per-queue stats (scope queue)
 *   vx3-nl page-pools              page pools (page-pool-get dump)
 *   vx3-nl napis [IFINDEX]         NAPI instances (napi-get dump)
 *   vx3-nl queues [IFINDEX]        queues and their NAPI (queue-get dump)
 *   vx3-nl napi-set ID NAME=VALUE...
 *                                  napi-set: defer-hard-irqs,
 *                                  gro-flush-timeout, irq-suspend-timeout,
 *                                  threaded (0 off, 1 on, 2 busy-poll)
 *
 * Output: one line per object, a tag followed by key=value pairs named as
 * in Documentation/netlink/specs/netdev.yaml, e.g.
 *
 *   qstats ifindex=2 rx-packets=10 rx-bytes=1234 tx-packets=3 ...
 *   qstats ifindex=2 queue-type=tx queue-id=0 tx-packets=3 ...
 *   page-pool id=5 ifindex=2 napi-id=8193 inflight=1536 inflight-mem=...
 *   napi ifindex=2 id=8193 irq=25 defer-hard-irqs=0 gro-flush-timeout=0 ...
 *   queue id=0 ifindex=2 type=rx napi-id=8193
 *
 * A page pool whose net_device is gone has no ifindex (the kernel moves it
 * to the loopback device) and, once destroyed, a detach-time.
 * Errors go to stderr with the kernel's extended ACK message; exit 1.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netdev.h>
#include <linux/netlink.h>

#define BUF_SIZE	65536

/* NAPI attributes and napi-set by number (netdev.yaml; uapi values never
 * change): the guest kernel's netdev.h is the one built against, and
 * 6.12's ends at NETDEV_A_NAPI_PID and has no NETDEV_CMD_NAPI_SET.
 */
enum {
	VX3_NAPI_IFINDEX = 1,
	VX3_NAPI_ID,
	VX3_NAPI_IRQ,
	VX3_NAPI_PID,
	VX3_NAPI_DEFER_HARD_IRQS,
	VX3_NAPI_GRO_FLUSH_TIMEOUT,
	VX3_NAPI_IRQ_SUSPEND_TIMEOUT,
	VX3_NAPI_THREADED,
	VX3_NAPI_MAX = VX3_NAPI_THREADED
};

#define VX3_CMD_NAPI_SET	14

static const char * const qstats_names[NETDEV_A_QSTATS_MAX + 1] = {
	[NETDEV_A_QSTATS_IFINDEX]		= "ifindex",
	[NETDEV_A_QSTATS_QUEUE_TYPE]		= "queue-type",
	[NETDEV_A_QSTATS_QUEUE_ID]		= "queue-id",
	[NETDEV_A_QSTATS_SCOPE]			= "scope",
	[NETDEV_A_QSTATS_RX_PACKETS]		= "rx-packets",
	[NETDEV_A_QSTATS_RX_BYTES]		= "rx-bytes",
	[NETDEV_A_QSTATS_TX_PACKETS]		= "tx-packets",
	[NETDEV_A_QSTATS_TX_BYTES]		= "tx-bytes",
	[NETDEV_A_QSTATS_RX_ALLOC_FAIL]		= "rx-alloc-fail",
	[NETDEV_A_QSTATS_RX_HW_DROPS]		= "rx-hw-drops",
	[NETDEV_A_QSTATS_RX_HW_DROP_OVERRUNS]	= "rx-hw-drop-overruns",
	[NETDEV_A_QSTATS_RX_CSUM_COMPLETE]	= "rx-csum-complete",
	[NETDEV_A_QSTATS_RX_CSUM_UNNECESSARY]	= "rx-csum-unnecessary",
	[NETDEV_A_QSTATS_RX_CSUM_NONE]		= "rx-csum-none",
	[NETDEV_A_QSTATS_RX_CSUM_BAD]		= "rx-csum-bad",
	[NETDEV_A_QSTATS_RX_HW_GRO_PACKETS]	= "rx-hw-gro-packets",
	[NETDEV_A_QSTATS_RX_HW_GRO_BYTES]	= "rx-hw-gro-bytes",
	[NETDEV_A_QSTATS_RX_HW_GRO_WIRE_PACKETS] = "rx-hw-gro-wire-packets",
	[NETDEV_A_QSTATS_RX_HW_GRO_WIRE_BYTES]	= "rx-hw-gro-wire-bytes",
	[NETDEV_A_QSTATS_RX_HW_DROP_RATELIMITS]	= "rx-hw-drop-ratelimits",
	[NETDEV_A_QSTATS_TX_HW_DROPS]		= "tx-hw-drops",
	[NETDEV_A_QSTATS_TX_HW_DROP_ERRORS]	= "tx-hw-drop-errors",
	[NETDEV_A_QSTATS_TX_CSUM_NONE]		= "tx-csum-none",
	[NETDEV_A_QSTATS_TX_NEEDS_CSUM]		= "tx-needs-csum",
	[NETDEV_A_QSTATS_TX_HW_GSO_PACKETS]	= "tx-hw-gso-packets",
	[NETDEV_A_QSTATS_TX_HW_GSO_BYTES]	= "tx-hw-gso-bytes",
	[NETDEV_A_QSTATS_TX_HW_GSO_WIRE_PACKETS] = "tx-hw-gso-wire-packets",
	[NETDEV_A_QSTATS_TX_HW_GSO_WIRE_BYTES]	= "tx-hw-gso-wire-bytes",
	[NETDEV_A_QSTATS_TX_HW_DROP_RATELIMITS]	= "tx-hw-drop-ratelimits",
	[NETDEV_A_QSTATS_TX_STOP]		= "tx-stop",
	[NETDEV_A_QSTATS_TX_WAKE]		= "tx-wake",
};

static const char * const page_pool_names[NETDEV_A_PAGE_POOL_MAX + 1] = {
	[NETDEV_A_PAGE_POOL_ID]			= "id",
	[NETDEV_A_PAGE_POOL_IFINDEX]		= "ifindex",
	[NETDEV_A_PAGE_POOL_NAPI_ID]		= "napi-id",
	[NETDEV_A_PAGE_POOL_INFLIGHT]		= "inflight",
	[NETDEV_A_PAGE_POOL_INFLIGHT_MEM]	= "inflight-mem",
	[NETDEV_A_PAGE_POOL_DETACH_TIME]	= "detach-time",
	[NETDEV_A_PAGE_POOL_DMABUF]		= "dmabuf",
};

static const char * const napi_names[VX3_NAPI_MAX + 1] = {
	[VX3_NAPI_IFINDEX]		= "ifindex",
	[VX3_NAPI_ID]			= "id",
	[VX3_NAPI_IRQ]			= "irq",
	[VX3_NAPI_PID]			= "pid",
	[VX3_NAPI_DEFER_HARD_IRQS]	= "defer-hard-irqs",
	[VX3_NAPI_GRO_FLUSH_TIMEOUT]	= "gro-flush-timeout",
	[VX3_NAPI_IRQ_SUSPEND_TIMEOUT]	= "irq-suspend-timeout",
	[VX3_NAPI_THREADED]		= "threaded",
};

/* Nested attributes (dmabuf, io-uring, xsk) print as attrN=0 */
static const char * const queue_names[NETDEV_A_QUEUE_NAPI_ID + 1] = {
	[NETDEV_A_QUEUE_ID]		= "id",
	[NETDEV_A_QUEUE_IFINDEX]	= "ifindex",
	[NETDEV_A_QUEUE_TYPE]		= "type",
	[NETDEV_A_QUEUE_NAPI_ID]	= "napi-id",
};

/**
 * struct dump_kind - how to print the objects of one dump
 * @tag: first word of each output line
 * @names: attribute names by type
 * @max: highest attribute type in @names
 */
struct dump_kind {
	const char *tag;
	const char * const *names;
	int max;
};

static const struct dump_kind qstats_kind = {
	.tag	= "qstats",
	.names	= qstats_names,
	.max	= NETDEV_A_QSTATS_MAX,
};

static const struct dump_kind page_pool_kind = {
	.tag	= "page-pool",
	.names	= page_pool_names,
	.max	= NETDEV_A_PAGE_POOL_MAX,
};

static const struct dump_kind napi_kind = {
	.tag	= "napi",
	.names	= napi_names,
	.max	= VX3_NAPI_MAX,
};

static const struct dump_kind queue_kind = {
	.tag	= "queue",
	.names	= queue_names,
	.max	= NETDEV_A_QUEUE_NAPI_ID,
};

static unsigned int seq;

static void usage(void)
{
	fprintf(stderr,
		"usage: vx3-nl qstats [IFINDEX]\n"
		"       vx3-nl qstats-queue [IFINDEX]\n"
		"       vx3-nl page-pools\n"
		"       vx3-nl napis [IFINDEX]\n"
		"       vx3-nl queues [IFINDEX]\n"
		"       vx3-nl napi-set ID NAME=VALUE...\n");
	exit(2);
}

static void die(const char *what)
{
	fprintf(stderr, "vx3-nl: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Append an attribute to the message in @buf */
static void put_attr(struct nlmsghdr *nlh, unsigned short type,
		     const void *data, unsigned short len)
{
	struct nlattr *nla = (struct nlattr *)((char *)nlh +
					       NLMSG_ALIGN(nlh->nlmsg_len));

	nla->nla_type = type;
	nla->nla_len = NLA_HDRLEN + len;
	memcpy((char *)nla + NLA_HDRLEN, data, len);
	nlh->nlmsg_len = NLMSG_ALIGN(nlh->nlmsg_len) + NLA_ALIGN(nla->nla_len);
}

static struct nlmsghdr *start_msg(char *buf, unsigned short family,
				  unsigned short flags, unsigned char cmd)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct genlmsghdr *genl;

	memset(buf, 0, NLMSG_SPACE(GENL_HDRLEN));
	nlh->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++seq;
	genl = NLMSG_DATA(nlh);
	genl->cmd = cmd;
	genl->version = 1;
	return nlh;
}

static void send_msg(int fd, struct nlmsghdr *nlh)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (sendto(fd, nlh, nlh->nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0)
		die("sendto");
}

/* Print the extended ACK message that follows an error, if any */
static void print_extack(const struct nlmsghdr *nlh, const void *tlvs,
			 int err)
{
	const char *msg = NULL;
	const struct nlattr *nla;
	int left;

	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		left = (int)nlh->nlmsg_len - (int)((const char *)tlvs -
						    (const char *)nlh);
		for (nla = tlvs; left >= NLA_HDRLEN && nla->nla_len >= NLA_HDRLEN &&
		     nla->nla_len <= left;
		     left -= NLA_ALIGN(nla->nla_len),
		     nla = (const void *)((const char *)nla +
					  NLA_ALIGN(nla->nla_len)))
			if ((nla->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG)
				msg = (const char *)nla + NLA_HDRLEN;
	}
	fprintf(stderr, "vx3-nl: %s%s%s\n", strerror(-err),
		msg ? ": " : "", msg ? msg : "");
}

/* Error (or ACK) message; returns its error code (0 for an ACK) */
static int handle_error(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = NLMSG_DATA(nlh);
	const char *tlvs = (const char *)e + sizeof(*e);

	if (!e->error)
		return 0;
	/* Without NLM_F_CAPPED the whole request follows the header */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		tlvs += e->msg.nlmsg_len - sizeof(e->msg);
	print_extack(nlh, tlvs, e->error);
	return e->error;
}

/* End of a dump: it may carry the dump's error code and an extended ACK */
static int handle_done(const struct nlmsghdr *nlh)
{
	const int *err = NLMSG_DATA(nlh);

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*err)) || !*err)
		return 0;
	print_extack(nlh, err + 1, *err);
	return *err;
}

static unsigned long long attr_uint(const struct nlattr *nla)
{
	const char *p = (const char *)nla + NLA_HDRLEN;
	uint64_t v64;
	uint32_t v32;
	uint16_t v16;

	switch (nla->nla_len - NLA_HDRLEN) {
	case 8:
		memcpy(&v64, p, 8);
		return v64;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 1:
		return *(const uint8_t *)p;
	}
	return 0;
}

static void print_object(const struct nlmsghdr *nlh,
			 const struct dump_kind *kind)
{
	const struct nlattr *nla;
	unsigned long long v;
	int left, type;

	printf("%s", kind->tag);
	left = (int)nlh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	nla = (const struct nlattr *)((const char *)NLMSG_DATA(nlh) +
				      GENL_HDRLEN);
	for (; left >= NLA_HDRLEN && nla->nla_len >= NLA_HDRLEN &&
	     nla->nla_len <= left;
	     left -= NLA_ALIGN(nla->nla_len),
	     nla = (const void *)((const char *)nla + NLA_ALIGN(nla->nla_len))) {
		type = nla->nla_type & NLA_TYPE_MASK;
		v = attr_uint(nla);
		if (kind == &qstats_kind && type == NETDEV_A_QSTATS_QUEUE_TYPE)
			printf(" queue-type=%s",
			       v == NETDEV_QUEUE_TYPE_RX ? "rx" : "tx");
		else if (kind == &queue_kind && type == NETDEV_A_QUEUE_TYPE)
			printf(" type=%s",
			       v == NETDEV_QUEUE_TYPE_RX ? "rx" : "tx");
		else if (type <= kind->max && kind->names[type])
			printf(" %s=%llu", kind->names[type], v);
		else
			printf(" attr%d=%llu", type, v);
	}
	printf("\n");
}

/*
 * Receive the answers to the last request until the end of a dump (or the
 * ACK of a plain request). Objects are printed as @kind, or, for a family
 * lookup (@kind NULL), the family id is returned.
 */
static int receive(int fd, const struct dump_kind *kind)
{
	static char buf[BUF_SIZE];
	const struct nlmsghdr *nlh;
	const struct nlattr *nla;
	int family = -1, left;
	ssize_t len;

	for (;;) {
		len = recv(fd, buf, sizeof(buf), 0);
		if (len < 0)
			die("recv");
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, len);
		     nlh = NLMSG_NEXT(nlh, len)) {
			if (nlh->nlmsg_seq != seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				if (handle_error(nlh))
					exit(1);
				return family;
			}
			if (nlh->nlmsg_type == NLMSG_DONE) {
				if (handle_done(nlh))
					exit(1);
				return family;
			}
			if (kind) {
				print_object(nlh, kind);
				continue;
			}
			left = (int)nlh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
			nla = (const void *)((const char *)NLMSG_DATA(nlh) +
					     GENL_HDRLEN);
			for (; left >= NLA_HDRLEN && nla->nla_len >= NLA_HDRLEN &&
			     nla->nla_len <= left;
			     left -= NLA_ALIGN(nla->nla_len),
			     nla = (const void *)((const char *)nla +
						  NLA_ALIGN(nla->nla_len)))
				if (nla->nla_type == CTRL_ATTR_FAMILY_ID)
					family = (int)attr_uint(nla);
		}
	}
}

static int resolve_family(int fd, const char *name)
{
	char buf[256];
	struct nlmsghdr *nlh;
	int family;

	nlh = start_msg(buf, GENL_ID_CTRL, NLM_F_ACK, CTRL_CMD_GETFAMILY);
	put_attr(nlh, CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
	send_msg(fd, nlh);
	family = receive(fd, NULL);
	if (family < 0) {
		fprintf(stderr, "vx3-nl: no generic netlink family %s\n", name);
		exit(1);
	}
	return family;
}

/* A generic netlink socket with extended ACKs; *family: netdev's id */
static int open_netdev(int *family)
{
	int fd, one = 1;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		die("socket");
	if (setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)))
		die("NETLINK_EXT_ACK");
	*family = resolve_family(fd, NETDEV_FAMILY_NAME);
	return fd;
}

static unsigned long long arg_ull(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		usage();
	return v;
}

/* Append NAME=VALUE of napi-set to the request */
static void put_napi_setting(struct nlmsghdr *nlh, const char *arg)
{
	const char *eq = strchr(arg, '=');
	unsigned long long v;
	uint32_t v32;
	int type;

	if (!eq)
		usage();
	for (type = VX3_NAPI_DEFER_HARD_IRQS; type <= VX3_NAPI_MAX; type++)
		if (strlen(napi_names[type]) == (size_t)(eq - arg) &&
		    !strncmp(arg, napi_names[type], eq - arg))
			break;
	if (type > VX3_NAPI_MAX)
		usage();
	v = arg_ull(eq + 1);
	if (type == VX3_NAPI_GRO_FLUSH_TIMEOUT ||
	    type == VX3_NAPI_IRQ_SUSPEND_TIMEOUT) {
		put_attr(nlh, type, &v, sizeof(v));
	} else {
		v32 = v;
		put_attr(nlh, type, &v32, sizeof(v32));
	}
}

static int napi_set(int argc, char **argv)
{
	static char buf[1024];
	struct nlmsghdr *nlh;
	int fd, family, i;
	uint32_t id;

	if (argc < 4 || argc > 8)
		usage();
	id = arg_ull(argv[2]);
	fd = open_netdev(&family);
	nlh = start_msg(buf, family, NLM_F_ACK, VX3_CMD_NAPI_SET);
	put_attr(nlh, VX3_NAPI_ID, &id, sizeof(id));
	for (i = 3; i < argc; i++)
		put_napi_setting(nlh, argv[i]);
	send_msg(fd, nlh);
	receive(fd, &napi_kind);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const struct dump_kind *kind;
	uint32_t ifindex = 0;
	struct nlmsghdr *nlh;
	unsigned char cmd;
	int fd;
	unsigned short ifindex_attr;
	uint32_t scope = 0;
	char buf[256];
	int family;

	if (argc >= 2 && !strcmp(argv[1], "napi-set"))
		return napi_set(argc, argv);
	if (argc < 2 || argc > 3)
		usage();
	/* The IFINDEX attribute of each dump request */
	ifindex_attr = NETDEV_A_QSTATS_IFINDEX;
	if (!strcmp(argv[1], "qstats") || !strcmp(argv[1], "qstats-queue")) {
		kind = &qstats_kind;
		cmd = NETDEV_CMD_QSTATS_GET;
		if (!strcmp(argv[1], "qstats-queue"))
			scope = NETDEV_QSTATS_SCOPE_QUEUE;
		if (argc == 3)
			ifindex = strtoul(argv[2], NULL, 0);
	} else if (!strcmp(argv[1], "page-pools") && argc == 2) {
		kind = &page_pool_kind;
		cmd = NETDEV_CMD_PAGE_POOL_GET;
	} else if (!strcmp(argv[1], "napis")) {
		kind = &napi_kind;
		cmd = NETDEV_CMD_NAPI_GET;
		ifindex_attr = VX3_NAPI_IFINDEX;
		if (argc == 3)
			ifindex = strtoul(argv[2], NULL, 0);
	} else if (!strcmp(argv[1], "queues")) {
		kind = &queue_kind;
		cmd = NETDEV_CMD_QUEUE_GET;
		ifindex_attr = NETDEV_A_QUEUE_IFINDEX;
		if (argc == 3)
			ifindex = strtoul(argv[2], NULL, 0);
	} else {
		usage();
	}

	fd = open_netdev(&family);
	nlh = start_msg(buf, family, NLM_F_DUMP, cmd);
	if (ifindex)
		put_attr(nlh, ifindex_attr, &ifindex, sizeof(ifindex));
	if (scope)
		put_attr(nlh, NETDEV_A_QSTATS_SCOPE, &scope, sizeof(scope));
	send_msg(fd, nlh);
	receive(fd, kind);
	if (fflush(stdout))
		die("stdout");
	close(fd);
	return 0;
}
