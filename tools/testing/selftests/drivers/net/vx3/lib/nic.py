# SPDX-License-Identifier: GPL-2.0
"""Helpers of the NIC tests (lifecycle, datapath, reconfig, stats).

Guest side: iperf, busybox (nc, sha256sum, ping, netstat), ethtool, ip, tc and
the static test tools vx3-nl (netdev netlink: qstats, page pools) and
vx3-udp (UDP integrity). Peer side (the host, inside the peer namespace):
iperf, socat, busybox ping, python3 and vx3-udp from build/vx3-tools/
(both tools are built by mkinitramfs.sh).

NIC 1 is used throughout; its peer is the tap in namespace 1.
"""

import functools
import json
import os
import re
import shlex
import tempfile
import threading
import time

from lib.test import Skip, write_random
from lib.vm import CmdFailed

# Frame overhead of an ICMP echo: Ethernet + IP + ICMP header
ICMP4_OVERHEAD = 14 + 20 + 8
ICMP6_OVERHEAD = 14 + 40 + 8


def diag(msg):
    """Print a TAP diagnostic (informational, not a result)."""
    for line in str(msg).rstrip().splitlines():
        print(f"# {line}", flush=True)


def only_vx3(reason):
    """Decorator: skip the case for other drivers, saying why."""
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(ctx):
            if ctx.driver != "vx3":
                raise Skip(f"vx3 only: {reason}")
            return fn(ctx)
        return wrapper
    return deco


def tool(vm, name):
    """Host path of a test tool built by mkinitramfs.sh (vx3-udp, vx3-nl)."""
    return os.path.join(os.path.dirname(os.path.abspath(vm.initrd)),
                        "vx3-tools", name)


def parse_kv(out, tag):
    """Lines "TAG k=v k=v ..." of vx3-nl/vx3-udp output as a list of dicts."""
    res = []
    for line in out.splitlines():
        words = line.split()
        if not words or words[0] != tag:
            continue
        d = {}
        for w in words[1:]:
            k, _, v = w.partition("=")
            d[k] = int(v) if v.isdigit() else v
        res.append(d)
    return res


def kv(line):
    """One "k=v k=v" line as a dict of ints."""
    return {k: int(v) for k, _, v in
            (w.partition("=") for w in line.split()) if v.isdigit()}


# --- state readers -------------------------------------------------------


def ifindex(vm, ifn):
    return int(vm.check(f"cat /sys/class/net/{ifn}/ifindex").strip())


def qstats(vm, idx, queue=False):
    """netdev qstats of ifindex idx: device totals, or a list per queue."""
    out = vm.check(f"vx3-nl {'qstats-queue' if queue else 'qstats'} {idx}")
    objs = parse_kv(out, "qstats")
    if queue:
        return objs
    if len(objs) != 1:
        raise AssertionError(f"expected one qstats object:\n{out}")
    return objs[0]


def page_pools(vm):
    return parse_kv(vm.check("vx3-nl page-pools"), "page-pool")


def link_stats(vm, ifn):
    """The rtnl_link_stats64 of ifn (ip -s link) as a flat dict."""
    j = json.loads(vm.check(f"ip -j -s -s link show dev {ifn}"))[0]
    s = j["stats64"]
    return {f"{d}_{k}": v for d in ("rx", "tx") for k, v in s[d].items()}


def udp_drops(vm):
    """The guest's UDP receive-buffer drops (/proc/net/snmp RcvbufErrors)."""
    rows = [ln.split() for ln in
            vm.check("grep '^Udp:' /proc/net/snmp").splitlines()]
    return int(rows[1][rows[0].index("RcvbufErrors")])


def tap_dropped(vm, n):
    """Frames that tun dropped on their way to QEMU (tap n's tx_dropped:
    its queue toward QEMU was full), before the device saw them."""
    return int(vm.peer_check(
        n, f"cat /sys/class/net/{vm.tap(n)}/statistics/tx_dropped"))


def tap_sent(vm, n):
    """Frames tap n passed on toward QEMU (its tx_packets): the test's and
    any other the peer sent (neighbour discovery, for one)."""
    return int(vm.peer_check(
        n, f"cat /sys/class/net/{vm.tap(n)}/statistics/tx_packets"))


def ethtool_stats(vm, ifn):
    """ethtool -S as {name: value}. vx3's per-queue counters (rxN_NAME,
    xdpN_NAME of RX queue N's XDP ring, txN_NAME) are also summed over the
    queues as rx_NAME, xdp_NAME and tx_NAME: ndo_xdp_xmit picks an XDP
    ring by CPU, and the rig's RSS model spreads RX over the queues."""
    res = {}
    for line in vm.check(f"ethtool -S {ifn}").splitlines()[1:]:
        k, _, v = line.strip().partition(":")
        if v.strip().isdigit():
            res[k.strip()] = int(v)
    sums = {}
    for k, v in res.items():
        m = re.match(r"^(rx|xdp|tx)\d+_(\w+)$", k)
        if m:
            key = f"{m.group(1)}_{m.group(2)}"
            sums[key] = sums.get(key, 0) + v
    res.update(sums)
    return res


def ethtool_table(out):
    """Parse `ethtool -g/-l` output into (maximums, current)."""
    maxi, cur, d = {}, {}, None
    for line in out.splitlines():
        if line.startswith("Pre-set maximums"):
            d = maxi
        elif line.startswith("Current hardware settings"):
            d = cur
        elif d is not None and ":" in line:
            k, _, v = line.partition(":")
            v = v.strip()
            d[k.strip()] = int(v) if v.isdigit() else v
    return maxi, cur


def rings(vm, ifn):
    return ethtool_table(vm.check(f"ethtool -g {ifn}"))


def channels(vm, ifn):
    return ethtool_table(vm.check(f"ethtool -l {ifn}"))


def parse_features(out):
    """ethtool -k output as {name: (on, fixed)}."""
    res = {}
    for line in out.splitlines():
        k, _, v = line.strip().partition(":")
        v = v.split()
        if v and v[0] in ("on", "off"):
            res[k] = (v[0] == "on", "[fixed]" in line)
    return res


def features(vm, ifn):
    return parse_features(vm.check(f"ethtool -k {ifn}"))


def copybreak(vm, ifn):
    out = vm.check(f"ethtool --get-tunable {ifn} rx-copybreak")
    return int(out.split(":")[1])


# --- setup ------------------------------------------------------------------


def setup_nic(ctx):
    """Load the driver, keep IPv6 addresses across down/up (the tests take
    the interface down a lot), configure NIC 1 and wait for its carrier."""
    ctx.vm.check("sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1")
    ctx.load_driver()
    ctx.config_ip(1)
    wait_carrier(ctx)


def ensure_ip(ctx):
    """(Re-)add NIC 1's addresses: IPv6 ones vanish below MTU 1280 (and
    cannot be added there)."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    vm.check(f"ip addr replace {vm.guest_ip4(1)}/24 dev {ifn} && "
             f"if [ $(cat /sys/class/net/{ifn}/mtu) -ge 1280 ]; then "
             f"ip -6 addr replace {vm.guest_ip6(1)}/64 dev {ifn} nodad; fi")


def reset_nic(ctx):
    """Back to the state setup_nic() made, whatever a failed case left:
    up, MTU 1500, no promisc/allmulti, no cached path MTUs, addresses,
    carrier."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    vm.check(f"ip link set {ifn} up mtu 1500 promisc off allmulticast off")
    # A case at MTU 68 leaves a locked path MTU of 68 towards the peer for
    # 10 minutes (min_pmtu clamps to the smaller of 552 and the old MTU):
    # TCP then sends 48-byte segments in IP fragments. Forget it.
    vm.check("ip route flush cache && ip -6 route flush cache")
    ensure_ip(ctx)
    wait_carrier(ctx)


# --- waiting and connectivity --------------------------------------------


def wait_carrier(ctx, up=True, timeout=15):
    """Wait until NIC 1's carrier (and operstate) is up, or down."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    want_c, want_o = ("1", "up") if up else ("0", "down")
    rc, out = vm.run(
        f"for i in $(seq {timeout * 10}); do "
        f"c=$(cat /sys/class/net/{ifn}/carrier 2>/dev/null || echo 0); "
        f"o=$(cat /sys/class/net/{ifn}/operstate); "
        f"[ \"$c\" = {want_c} ] && [ $o = {want_o} ] && exit 0; "
        f"sleep 0.1; done; echo carrier=$c operstate=$o; exit 1",
        timeout=timeout + 30)
    ctx.expect(rc == 0, f"{ifn}: carrier/operstate not {want_c}/{want_o} "
               f"after {timeout}s: {out.strip()}")


def ping(ctx, v6=False, size=56, count=3, wait=20, peer=False, need=None):
    """Ping between guest and peer on NIC 1 until `need` (default: all
    `count`) replies arrive in one run (retried for up to `wait` seconds:
    after a reconfiguration the link may need a moment); raises
    AssertionError with the output if not. peer=True pings from the peer
    to the guest. A ping beside a bulk flow that fills the device's RX
    rings can lose a reply to the device's out-of-buffer drops: such
    callers ask for fewer than all.
    """
    cmd = _ping_cmd(ctx, v6, size, count, peer)
    need = count if need is None else need
    deadline = time.monotonic() + wait
    while True:
        rc, out = _ping_run(ctx, cmd, peer, count * 3 + 30)
        m = re.search(r"transmitted, (\d+) (?:packets )?received", out)
        if m and int(m.group(1)) >= need:
            return out
        if time.monotonic() > deadline:
            who = "peer -> guest" if peer else "guest -> peer"
            raise AssertionError(f"{who} {cmd}: fewer than {need} of "
                                 f"{count} replies:\n{out.strip()}")
        time.sleep(1)


def _ping_cmd(ctx, v6, size, count, peer):
    vm = ctx.vm
    dst = (vm.guest_ip6(1) if v6 else vm.guest_ip4(1)) if peer else \
        (vm.peer_ip6(1) if v6 else vm.peer_ip4(1))
    return (f"ping -{6 if v6 else 4} -c {count} -i 0.2 -W 3 -s {size} "
            f"{dst}")


def _ping_run(ctx, cmd, peer, timeout):
    if peer:
        return ctx.vm.peer(1, "busybox " + cmd, timeout=timeout)
    return ctx.vm.run(cmd, timeout=timeout)


def ping_sizes(ctx, sizes, v6=False, peer=False, count=2):
    """Ping with each ICMP payload size in one command; a size that lost
    replies is retried once on its own (see ping())."""
    script = "; ".join(f"{'busybox ' if peer else ''}"
                       f"{_ping_cmd(ctx, v6, s, count, peer)} >/dev/null "
                       f"2>&1 || echo FAILED {s}" for s in sizes)
    timeout = 60 + 3 * count * len(sizes)
    if peer:
        _, out = ctx.vm.peer(1, script, timeout=timeout)
    else:
        _, out = ctx.vm.run(script, timeout=timeout)
    for line in out.splitlines():
        if line.startswith("FAILED "):
            ping(ctx, v6=v6, size=int(line.split()[1]), count=count,
                 wait=5, peer=peer)


def wait_listen(run, port, udp=False):
    """True once something listens on port (run: vm.run or a peer run)."""
    flag = "-lun" if udp else "-ltn"
    rc, _ = run(f"for i in $(seq 100); do netstat {flag} 2>/dev/null | "
                f"grep -q ':{port} ' && exit 0; sleep 0.1; done; exit 1")
    return rc == 0


# --- traffic ---------------------------------------------------------------


class Traffic:
    """Background TCP traffic both ways through NIC 1 until stop(): iperf
    servers on both sides and clients that reconnect in a loop whenever a
    connection breaks (or the server is not up yet). One guest and one peer
    background job; check with expect_flowing().

    The guest's iperf processes run at nice 19: unthrottled, they kept the
    guest's CPU busy enough that every command of a test waited seconds
    for it (on the debug kernel 4-7 s per agent call, 10-25 s per ethtool
    step; at nice 19 about 1 s and 1-5 s, with megabytes still flowing
    both ways between two steps). The NIC's RX and TX paths still run
    from the interrupt and softirq, at full priority.
    """

    def __init__(self, ctx, port=5301, parallel=1):
        self.ctx = ctx
        self.port = port
        self.parallel = parallel
        self.jobs = []

    def start(self):
        vm, p = self.ctx.vm, self.port
        self.jobs.append(vm.peer_bg(
            1, f"iperf -s -p {p} >/dev/null 2>&1 & "
            f"while :; do iperf -c {vm.guest_ip4(1)} -p {p + 1} -t 3600 "
            f">/dev/null 2>&1; sleep 0.5; done"))
        self.jobs.append(vm.bg(
            f"iperf -s -p {p + 1} >/dev/null 2>&1 & "
            f"while :; do iperf -c {vm.peer_ip4(1)} -p {p} -t 3600 "
            f"-P {self.parallel} >/dev/null 2>&1; sleep 0.5; done",
            nice=True))
        return self

    def stop(self):
        """Kill both jobs (their whole process groups)."""
        for j in reversed(self.jobs):
            j.stop()
        self.jobs = []

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


# What "flowing" means: both directions carry data, not just a few
# control packets (a handful of SYNs answered by RSTs when a server is
# not running would grow the packet counters too).
FLOWING_BYTES = 64 << 10


def expect_flowing(ctx, what="traffic", timeout=20):
    """Assert that NIC 1's RX and TX byte counters both grow by
    FLOWING_BYTES within timeout seconds."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    a = link_stats(vm, ifn)
    deadline = time.monotonic() + timeout
    while True:
        time.sleep(0.3)
        b = link_stats(vm, ifn)
        if b["rx_bytes"] - a["rx_bytes"] >= FLOWING_BYTES and \
           b["tx_bytes"] - a["tx_bytes"] >= FLOWING_BYTES:
            return
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{what}: {ifn} did not move {FLOWING_BYTES} bytes each way "
                f"in {timeout}s: rx +{b['rx_bytes'] - a['rx_bytes']} B, "
                f"tx +{b['tx_bytes'] - a['tx_bytes']} B")


def expect_bql_drained(ctx):
    """Assert that BQL's inflight bytes of every TX queue of NIC 1 return
    to 0 within 10 s (no completion lost, no byte counted twice)."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    rc, _ = vm.run(f"test -e /sys/class/net/{ifn}/queues/tx-0/"
                   f"byte_queue_limits/inflight")
    ctx.expect(rc == 0, "no byte_queue_limits in sysfs: the guest kernel "
               "lacks CONFIG_BQL")
    rc, out = vm.run(
        f"for i in $(seq 100); do n=0; for q in /sys/class/net/{ifn}/queues/"
        f"tx-*/byte_queue_limits/inflight; do "
        f"[ $(cat $q) = 0 ] || n=$((n+1)); done; [ $n = 0 ] && exit 0; "
        f"sleep 0.1; done; grep . /sys/class/net/{ifn}/queues/tx-*/"
        f"byte_queue_limits/inflight; exit 1")
    ctx.expect(rc == 0, f"BQL inflight does not return to 0:\n{out}")


# A received skb that a socket frees on another CPU waits on the defer
# list of the CPU that allocated it (skb_attempt_defer_free()) until that
# CPU's next NET_RX softirq; on an idle CPU its page_pool page can wait
# there indefinitely, keeping a destroyed pool alive. A ping over loopback
# from every CPU runs that softirq everywhere.
FLUSH_SKB_DEFER = ("for c in $(seq 0 $(($(nproc) - 1))); do taskset -c $c "
                   "ping -q -c 1 -W 1 127.0.0.1 >/dev/null 2>&1; done; ")


def flush_skb_defer(vm):
    """Have every CPU free the skbs other CPUs deferred to it."""
    vm.check(FLUSH_SKB_DEFER)


def wait_no_tcp(ctx, timeout=60):
    """Wait until the guest has no TCP sockets left (orphans included)."""
    rc, out = ctx.vm.run(
        f"for i in $(seq {timeout}); do "
        f"n=$(netstat -tan | grep -c '^tcp'); [ $n = 0 ] && exit 0; "
        f"sleep 1; done; netstat -tan; exit 1", timeout=timeout + 30)
    return rc == 0, out


# --- integrity -------------------------------------------------------------


def tcp_integrity(ctx, nbytes, rx, v6=False, port=5401):
    """Move nbytes of random data over one TCP connection and compare the
    SHA-256 at both ends. rx=True: peer -> guest (driver RX), else
    guest -> peer (driver TX).
    """
    (_tcp_rx if rx else _tcp_tx)(ctx, nbytes, v6, port)


def _tcp_rx(ctx, nbytes, v6, port):
    vm = ctx.vm
    gaddr = f"[{vm.guest_ip6(1)}]" if v6 else vm.guest_ip4(1)
    with tempfile.NamedTemporaryFile(prefix="vx3-rx-") as f:
        digest = write_random(f, nbytes)
        f.flush()
        job = vm.bg(f"rm -f /tmp/rx.sha; nc -l -p {port} | sha256sum "
                    f">/tmp/rx.sha.t && mv /tmp/rx.sha.t /tmp/rx.sha")
        try:
            # socat retries until the guest's nc listens
            vm.peer_check(1, f"socat -u FILE:{f.name} "
                          f"TCP{'6' if v6 else '4'}:{gaddr}:{port},"
                          f"retry=100,interval=0.1", timeout=300)
            # socat is done when the data is in its socket: the rest
            # may still be retransmitted after a link flap (test_churn),
            # with TCP's backoff
            rc, out = vm.run("for i in $(seq 1200); do "
                             "[ -s /tmp/rx.sha ] && cat /tmp/rx.sha && "
                             "exit 0; sleep 0.1; done; exit 1", timeout=180)
        finally:
            job.stop()
    ctx.expect(rc == 0, "guest receiver did not finish")
    got = out.split()[0]
    ctx.expect(got == digest,
               f"peer -> guest TCP data corrupted ({nbytes} bytes, "
               f"v{'6' if v6 else '4'}): sha256 {got} != {digest}")


class PeerSha256:
    """A TCP receiver on peer 1 (socat, one process per connection) that
    records the SHA-256 of each connection's data once its sender closed.
    As a context manager: listening on entry, stopped on exit. A
    connection the guest gave up on (the peer may have accepted it)
    neither blocks a retry nor passes for it."""

    def __init__(self, ctx, port, v6=False):
        self.ctx, self.port, self.v6 = ctx, port, v6

    def __enter__(self):
        vm = self.ctx.vm
        self.tmp = tempfile.TemporaryDirectory(prefix="vx3-sha-")
        d = self.tmp.name
        self.job = vm.peer_bg(1, f"exec socat -u TCP{'6' if self.v6 else '4'}"
                                 f"-LISTEN:{self.port},reuseaddr,fork "
                                 f"SYSTEM:'sha256sum >{d}/h.$$.t && "
                                 f"mv {d}/h.$$.t {d}/h.$$'")
        try:
            self.ctx.expect(wait_listen(lambda c: vm.peer(1, c), self.port),
                            "peer socat did not listen")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        self.job.stop()
        self.tmp.cleanup()

    def digests(self):
        d = self.tmp.name
        return [open(os.path.join(d, f)).read().split()[0]
                for f in sorted(os.listdir(d)) if not f.endswith(".t")]

    def wait_for(self, want, timeout=120):
        """The digests once want is among them, or at timeout."""
        got = self.digests()
        deadline = time.monotonic() + timeout
        while want not in got and time.monotonic() < deadline:
            time.sleep(0.5)
            got = self.digests()
        return got


def _tcp_tx(ctx, nbytes, v6, port):
    vm = ctx.vm
    paddr = vm.peer_ip6(1) if v6 else vm.peer_ip4(1)
    want = vm.check(f"head -c {nbytes} /dev/urandom >/tmp/tx.bin && "
                    f"sha256sum /tmp/tx.bin", timeout=120).split()[0]
    with PeerSha256(ctx, port, v6) as rcv:
        # A connect or a send can fail while the link is being
        # reconfigured (no route yet): nc then tries again
        rc, out = vm.run(f"for i in $(seq 50); do nc {paddr} {port} "
                         f"</tmp/tx.bin && exit 0; sleep 0.2; done; "
                         f"exit 1", timeout=300)
        ctx.expect(rc == 0, f"guest nc failed (rc={rc}): {out.strip()}")
        # nc is done when the data is in its socket (see _tcp_rx)
        got = rcv.wait_for(want)
    ctx.expect(want in got,
               f"guest -> peer TCP data corrupted ({nbytes} bytes, "
               f"v{'6' if v6 else '4'}): sha256 of the "
               f"{len(got)} connection(s) the peer saw end {got} != {want}")


def udp_integrity(ctx, rx, count, lo, hi, pps, v6=False, port=5501,
                  group=None):
    """Send `count` UDP datagrams of lo..hi bytes at `pps` per second with
    vx3-udp and verify every datagram that arrived (rx=True: peer ->
    guest; group: to this IPv4 multicast group, which the receiver joins).
    Corrupted or duplicated datagrams fail; losses are returned (dict with
    received/ok/corrupt/dup/lost/bytes) for the caller to report.
    """
    vm = ctx.vm
    seed = int.from_bytes(os.urandom(3), "big")
    dst = (vm.guest_ip6(1) if v6 else vm.guest_ip4(1)) if rx else \
        (vm.peer_ip6(1) if v6 else vm.peer_ip4(1))
    dst = group or dst
    args = f"{count} {lo} {hi} {seed}"
    recv = f"recv {port} {args} 2000" + (f" {group}" if group else "")
    send = f"send {dst} {port} {args} {pps}"
    budget = count / pps + 120
    if rx:
        # Not pidof vx3-udp: it finds /init's vx3-udp hold-tstamp too, and
        # killing that lets the netstamp static key be patched under
        # traffic again (the TCG "Oops: int3", README)
        done = f"/tmp/udp-done.{port}"
        job = vm.bg(f"rm -f {done}; vx3-udp {recv}; touch {done}")
        try:
            ctx.expect(wait_listen(vm.run, port, udp=True),
                       "guest vx3-udp did not listen")
            vm.peer_check(1, f"{shlex.quote(tool(vm, 'vx3-udp'))} {send}",
                          timeout=budget)
            # Ends by itself once all arrived or after 2 s of silence
            vm.run(f"for i in $(seq 50); do [ -e {done} ] && exit 0; "
                   "sleep 0.1; done; exit 1")
        finally:
            out = job.stop()
        rc, _ = vm.run("ps | grep -q '[v]x3-udp hold-tstamp'")
        ctx.expect(rc == 0, "/init's vx3-udp hold-tstamp is gone: the "
                   "netstamp static key may be patched under traffic")
    else:
        res = {}

        def receiver():
            res["r"] = vm.peer(1, f"{shlex.quote(tool(vm, 'vx3-udp'))} "
                               f"{recv}", timeout=budget)
        t = threading.Thread(target=receiver, daemon=True)
        t.start()
        ctx.expect(wait_listen(lambda c: vm.peer(1, c), port, udp=True),
                   "peer vx3-udp did not listen")
        vm.check(f"vx3-udp {send}", timeout=budget)
        t.join(budget)
        ctx.expect("r" in res, "peer vx3-udp receiver did not finish")
        out = res["r"][1]
    lines = [ln for ln in out.splitlines() if ln.startswith("received=")]
    ctx.expect(lines, f"no vx3-udp result:\n{out}")
    r = kv(lines[0])
    way = "peer -> guest" if rx else "guest -> peer"
    ctx.expect(r["corrupt"] == 0 and r["dup"] == 0,
               f"{way} UDP ({lo}..{hi} bytes): {r['corrupt']} corrupted, "
               f"{r['dup']} duplicated datagrams:\n{out}")
    return r


def guest_ok(ctx, cmd, timeout=60):
    """vm.check with the command in the assertion message."""
    try:
        return ctx.vm.check(cmd, timeout=timeout)
    except CmdFailed as e:
        raise AssertionError(str(e)) from None
