# SPDX-License-Identifier: GPL-2.0
"""Receive-side scaling on the rig's QEMU, whose vmxnet3 model does RSS.

Debian's QEMU delivers every frame to RX queue 0. The rig's QEMU
(scripts/vx3-qemu.sh) carries scripts/qemu/patches/0002-hw-net-vmxnet3-
Implement-receive-side-scaling: when the driver negotiates UPT1_F_RSS
with more than one RX queue, the model reads the RSS configuration
(DriverShared rssConfDesc: hash types, Toeplitz key, indirection table)
at activation, the table again on UPDATE_RSSIDT, and per frame puts the
Toeplitz hash of the fields the hash types select, and its type, into
the completion of queue indTable[hash % indTableSize], raising that
queue's vector (../shared/vmxnet3-device.md section 19).

These cases check the model against the interface and a driver that has
used RSS on VMware hosts for years (the in-tree vmxnet3), before vx3's
own RSS is trusted to it; a driver without RSS (ethtool -x refused) skips.
The guest's view comes from a tc ingress program (vx3_rxhash.bpf.c):
per flow, skb->hash (the completion's rssHash, as the driver set it) and
the RX queue. The configuration the device uses is read from guest
memory through QEMU's gdbstub (lib/devside.py), at the address the
driver registered before ACTIVATE.

spread_and_hash
    From peer 1: UDP datagrams and TCP SYNs from 32 source ports each to
    the guest, over IPv4 and IPv6, and pings. Every flow's hash must be
    the Toeplitz hash of (source, destination address[, source,
    destination port]) under the device's key, ports included exactly
    when the hash types enable that protocol (TCP/IPv4, TCP/IPv6; UDP and
    ICMP hash on the addresses); every flow must arrive on queue
    indTable[hash % indTableSize], all its packets alike; and every RX
    queue's interrupt vector must have fired (each queue got flows).
table_one_queue
    `ethtool -X <if> weight 0 1`: the driver writes a table naming queue
    1 only and sends UPDATE_RSSIDT; the same flows must all arrive on
    queue 1, with the same hashes. `ethtool -X <if> default` restores.
key_change (vx3)
    `ethtool -X <if> hkey <40 new bytes>`: the key takes effect at an
    activation (vx3 activates the device again with the same queues,
    from its device work, after the ethtool core has dropped rss_lock);
    within 10 s the device's configuration holds the new key, every flow
    hashes under it, and `ethtool -x` reports it. The old key is
    restored afterwards.
tcp_fields (vx3)
    `ethtool -N <if> rx-flow-hash tcp4 sd`: TCP over IPv4 hashes over
    the addresses only (the device's TCP/IPv4 hash type cleared, within
    10 s), TCP over IPv6 still over its ports; `sdfn` restores.
rxhash_off
    With the rxhash feature off the driver sets no skb->hash: the tc
    program reads 0 for every flow (the queues stay as the table says).
lro_every_queue (vx3)
    At MTU 9000 (guest and peer tap) with LRO on, 16 TCP streams from the
    peer (iperf -P 16: 16 source ports, spread by the 4-tuple hash) for
    4 s: every RX queue must build LRO aggregates of its own
    (rxN_lro_packets), with no ring protocol error (rxN_drop_bad) and
    no reset, and the transfer must move data. The streams and packets
    per queue (the tc program's view) are printed beside.
xdp_every_queue (vx3)
    With an XDP program attached (vx3_xdp.bpf.c xdp_pass: each queue
    gets the program and its own page pool's XDP headroom), the test
    flows must pass the program on every RX queue (rxN_xdp_pass) and
    still hash and spread as the table says (the skb built after
    XDP_PASS carries the device's hash).
xdp_rxhash_kfunc
    An XDP program (vx3_xdphash.bpf.c) loaded bound to the device
    (vx3-xdpbound: Debian 12's bpftool cannot) calls
    bpf_xdp_metadata_rx_hash() for every frame:
    for every test flow it must return 0, the Toeplitz hash the device
    computed (as spread_and_hash checks it) and the hash type of the
    fields hashed (XDP_RSS_TYPE_L4_IPV4_TCP / L4_IPV6_TCP where the hash
    types include the ports, L3_IPV4 / L3_IPV6 otherwise), the same for
    all its frames, on the queue the table names. A driver whose kfunc
    returns -EOPNOTSUPP for every frame (no xmo_rx_hash: the in-tree
    vmxnet3) skips.
channels_traffic (vx3)
    16 TCP streams from the peer (iperf -P 16, reporting every 2 s) while
    `ethtool -L` goes to one combined channel and back: with each channel
    count every RX queue of that count must receive (netdev qstats per
    queue), and after the last change every one of the 16 connections
    must still move data (none reset or stalled); iperf must end without
    error, and the test flows must hash and spread as the device's table
    says afterwards.
bad_input (vx3)
    Requests the device cannot do fail and leave RSS as it was: a hash
    function other than Toeplitz, UDP over IPv4 hashed over ports, and
    channel counts whose TX queues and XDP rings (one per RX queue)
    exceed the device's eight TX queues. Afterwards the flows still hash
    and spread as before.
"""

import json
import os
import re
import socket
import struct
import threading
import time

import lib.devside as ds
from lib.nic import (channels, diag, ethtool_stats, ifindex, ping, qstats,
                     setup_nic)
from lib.test import iperf_bytes, vx3_only

NICS = 1
# the RSS model (run.py boots scripts/vx3-qemu.sh's QEMU)
QEMU_PATCHED = True

RSS_CONF_DESC = 0x288
UPT_FEATURES = 0x018
UPT1_F_RSS = 0x2
HASH_IPV4, HASH_TCP_IPV4, HASH_IPV6, HASH_TCP_IPV6 = 1, 2, 4, 8
HASH_FUNC_TOEPLITZ = 1
KEY_MAX, TABLE_MAX = 40, 128

OBJ = "/usr/lib/vx3/vx3_rxhash.bpf.o"
PIN = "/sys/fs/bpf/vx3_rxhash"
MAPS = "/sys/fs/bpf/vx3_rxhash_maps"
XDP_OBJ = "/usr/lib/vx3/vx3_xdphash.bpf.o"
XDP_MAPS = "/sys/fs/bpf/vx3_xdphash_maps"
# enum xdp_rss_hash_type (include/net/xdp.h)
XDP_RSS_L3_IPV4, XDP_RSS_L3_IPV6, XDP_RSS_L4, XDP_RSS_L4_TCP = 1, 2, 8, 16
EOPNOTSUPP = 95
SPORT, DPORT, NPORTS = 40000, 7000, 32

# Peer 1 sends one UDP datagram and one TCP SYN (the guest answers with
# RST) per source port, over IPv4 and IPv6
SENDER = r"""
import socket, sys
for fam, addr in ((socket.AF_INET, sys.argv[1]), (socket.AF_INET6, sys.argv[2])):
    for i in range(int(sys.argv[5])):
        sport, dport = int(sys.argv[3]) + i, int(sys.argv[4]) + i
        u = socket.socket(fam, socket.SOCK_DGRAM)
        u.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        u.bind(("", sport))
        u.sendto(b"vx3 rss", (addr, dport))
        u.close()
        t = socket.socket(fam, socket.SOCK_STREAM)
        t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        t.bind(("", sport))
        t.settimeout(3)
        try:
            t.connect((addr, dport))
        except OSError:
            pass
        t.close()
"""


def toeplitz(key, data):
    """The Toeplitz hash of data under key (Microsoft's RSS definition)."""
    k = int.from_bytes(key, "big")
    kbits = len(key) * 8
    n = len(data) * 8
    bits = int.from_bytes(data, "big")
    h = 0
    for i in range(n):
        if bits >> (n - 1 - i) & 1:
            h ^= (k >> (kbits - 32 - i)) & 0xFFFFFFFF
    return h


def _rss_conf(dev):
    """The RSS configuration the device reads: dict, or None if the
    driver did not negotiate RSS or registered no configuration."""
    with dev.halted():
        spa = dev.shared_pa()
        feat, = struct.unpack("<I", dev.read(spa + UPT_FEATURES, 4))
        ver, ln, pa = struct.unpack("<IIQ", dev.read(spa + RSS_CONF_DESC,
                                                     16))
        if not feat & UPT1_F_RSS or not pa:
            return None
        raw = dev.read(pa, 8 + KEY_MAX + TABLE_MAX)
    htype, hfunc, ksize, tsize = struct.unpack("<HHHH", raw[:8])
    return {"ver": ver, "len": ln, "types": htype, "func": hfunc,
            "key": raw[8:8 + min(ksize, KEY_MAX)],
            "table": list(raw[8 + KEY_MAX:8 + KEY_MAX + min(tsize,
                                                             TABLE_MAX)])}


def _wait_rss_conf(ctx, what, pred, timeout=10):
    """The device's RSS configuration once pred(conf) holds; fails the
    test with what if it does not within timeout seconds."""
    dev = ctx.state["dev"]
    end = time.monotonic() + timeout
    while True:
        conf = _rss_conf(dev)
        if conf and pred(conf):
            return conf
        if time.monotonic() > end:
            ctx.expect(False, f"{what}: the device's RSS configuration is {conf}")
        time.sleep(0.5)


def setup(ctx):
    vm = ctx.vm
    dev = ds.DeviceSide(vm)
    # Before the link comes up: DSAL/DSAH and ACTIVATE happen then
    dev.start_trace()
    ctx.state["dev"] = dev
    setup_nic(ctx)
    # The sender binds its source ports; keep the peer's own connections
    # (iperf's streams) from taking them as ephemeral ports: one left in
    # TIME_WAIT made a bind fail with EADDRINUSE (make check, 2026-12-06)
    vm.peer_check(1, f"sysctl -qw net.ipv4.ip_local_reserved_ports="
                     f"{SPORT}-{SPORT + NPORTS - 1}")
    ifn = ctx.ifname(1)
    rc, out = vm.run(f"ethtool -x {ifn} 2>&1")
    if rc != 0:
        ctx.skip(f"no RSS in the driver: ethtool -x: "
                 f"{' '.join(out.split())}")
    nq = len(vm.check(f"ls -d /sys/class/net/{ifn}/queues/rx-*").split())
    if nq < 2:
        ctx.skip(f"the driver runs {nq} RX queue(s) with 2 vCPUs")
    ctx.state["nq"] = nq
    dev.attach()
    conf = _rss_conf(dev)
    ctx.expect(conf, "the driver has RX queues and ethtool -x, but did not "
               "negotiate UPT1_F_RSS with an rssConfDesc")
    diag(f"{ctx.driver}: {nq} RX queues; rssConfDesc ver {conf['ver']} len "
         f"{conf['len']}, hash types {conf['types']:#x}, function "
         f"{conf['func']}, key {len(conf['key'])} bytes, table "
         f"{len(conf['table'])} entries")
    ctx.expect(conf["func"] == HASH_FUNC_TOEPLITZ and
               len(conf["key"]) == KEY_MAX and conf["table"],
               f"unexpected RSS configuration: {conf}")
    vm.check(f"mount -t bpf bpf /sys/fs/bpf 2>/dev/null; "
             f"modprobe sch_ingress; modprobe cls_bpf; "
             f"bpftool prog load {OBJ} {PIN} pinmaps {MAPS} && "
             f"tc qdisc add dev {ifn} clsact && "
             f"tc filter add dev {ifn} ingress bpf da pinned {PIN}")
    # The peer knows the guest's MAC from the start (no ARP in the flows)
    ping(ctx)
    ping(ctx, v6=True)


# closes the gdbstub connection and stops the trace
teardown = ds.teardown


def _irqs(ctx):
    """Interrupt counts per vector of the NIC, by /proc/interrupts name."""
    out = ctx.vm.check(f"grep -E '{ctx.ifname(1)}' /proc/interrupts || true")
    res = {}
    for line in out.splitlines():
        f = line.split()
        counts = [int(x) for x in f[1:] if x.isdigit()]
        res[f[-1]] = sum(counts)
    return res


def _dump(ctx, path):
    """The flows of a pinned vx3_rxhash.bpf.c map: list of dicts, the
    flow (family, saddr, daddr bytes, proto, sport, dport) and what the
    map holds for it."""
    out = ctx.vm.check(f"bpftool -j map dump pinned {path}")
    res = []
    for e in json.loads(out):
        f = e["formatted"]
        k = f["key"]
        alen = 4 if k["family"] == 4 else 16
        res.append(dict(f["value"], family=k["family"], proto=k["proto"],
                        saddr=bytes(k["saddr"][:alen]),
                        daddr=bytes(k["daddr"][:alen]),
                        sport=k["sport"], dport=k["dport"]))
    return res


def _flows(ctx):
    """The flows the tc program saw since the last clear: list of dicts
    (family, saddr, daddr bytes, proto, sport, dport, hash, queue,
    packets, other_hash, other_queue)."""
    res = _dump(ctx, f"{MAPS}/vx3_rxhash")
    for f in res:
        f["queue"] -= 1
    return res


def _clear(ctx):
    """Forget the flows seen: the program is loaded again with a new map."""
    ifn = ctx.ifname(1)
    ctx.vm.check(f"tc filter del dev {ifn} ingress; rm -rf {PIN} {MAPS}; "
                 f"bpftool prog load {OBJ} {PIN} pinmaps {MAPS} && "
                 f"tc filter add dev {ifn} ingress bpf da pinned {PIN}")


def _send(ctx):
    vm = ctx.vm
    vm.peer_check(1, f"python3 -c '{SENDER}' {vm.guest_ip4(1)} "
                     f"{vm.guest_ip6(1)} {SPORT} {DPORT} {NPORTS}",
                  timeout=120)
    ping(ctx, count=5)
    ping(ctx, v6=True, count=5)


def _expected_hash(conf, fl):
    tcp = fl["proto"] == socket.IPPROTO_TCP
    if fl["family"] == 4:
        l3, l4 = HASH_IPV4, HASH_TCP_IPV4
    else:
        l3, l4 = HASH_IPV6, HASH_TCP_IPV6
    data = fl["saddr"] + fl["daddr"]
    if tcp and conf["types"] & l4:
        data += struct.pack(">HH", fl["sport"], fl["dport"])
    elif not conf["types"] & l3:
        return 0
    return toeplitz(conf["key"], data)


def _peers(ctx):
    vm = ctx.vm
    return {socket.inet_pton(socket.AF_INET, vm.peer_ip4(1)),
            socket.inet_pton(socket.AF_INET6, vm.peer_ip6(1))}


def _flow_name(f):
    return (f"IPv{f['family']} proto {f['proto']} "
            f"{f['sport']}->{f['dport']}")


def _check_flows(ctx, conf, want_queue=None):
    """Every test flow with the hash the device should have computed, on
    the queue its table names (or want_queue); returns the flows per
    queue."""
    peers = _peers(ctx)
    flows = [f for f in _flows(ctx) if f["saddr"] in peers]
    tests = [f for f in flows if f["proto"] in (socket.IPPROTO_TCP,
                                                socket.IPPROTO_UDP) and
             SPORT <= f["sport"] < SPORT + NPORTS]
    ctx.expect(len(tests) == 4 * NPORTS,
               f"the guest saw {len(tests)} of the {4 * NPORTS} test flows")
    table = conf["table"]
    bad = []
    per_q = {}
    for f in flows:
        want = _expected_hash(conf, f)
        q = table[want % len(table)] if want_queue is None else want_queue
        per_q[f["queue"]] = per_q.get(f["queue"], 0) + 1
        if (f["hash"] != want or f["queue"] != q or f["other_hash"] or
                f["other_queue"]):
            bad.append(f"{_flow_name(f)}: hash {f['hash']:#010x} "
                       f"(Toeplitz {want:#010x}), queue {f['queue']} (want "
                       f"{q}), {f['packets']} packets, {f['other_hash']} "
                       f"with another hash, {f['other_queue']} on another "
                       f"queue")
    diag(f"{ctx.driver}: {len(flows)} flows from the peer, per RX queue "
         f"{dict(sorted(per_q.items()))}; {len(bad)} wrong")
    ctx.expect(not bad, "flows with a wrong hash or queue:\n" +
               "\n".join(bad[:20]))
    return per_q


def test_spread_and_hash(ctx):
    conf = _rss_conf(ctx.state["dev"])
    before = _irqs(ctx)
    _send(ctx)
    per_q = _check_flows(ctx, conf)
    nq = ctx.state["nq"]
    ctx.expect(sorted(per_q) == list(range(nq)),
               f"flows arrived on queues {sorted(per_q)}, not on all "
               f"{nq}")
    after = _irqs(ctx)
    fired = {n: after[n] - before.get(n, 0) for n in after}
    diag(f"{ctx.driver}: interrupts per vector during the flows: {fired}")
    rx_vecs = [n for n in fired if "rx" in n or "rxtx" in n]
    ctx.expect(len(rx_vecs) >= nq and all(fired[n] for n in rx_vecs),
               f"not every RX vector fired: {fired}")


def test_table_one_queue(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    vm.check(f"ethtool -X {ifn} weight 0 1")
    try:
        conf = _rss_conf(ctx.state["dev"])
        ctx.expect(set(conf["table"]) == {1},
                   f"after ethtool -X weight 0 1 the device's table is "
                   f"{conf['table']}")
        _clear(ctx)
        _send(ctx)
        _check_flows(ctx, conf, want_queue=1)
    finally:
        vm.check(f"ethtool -X {ifn} default")


def _key_hex(key):
    return ":".join(f"{b:02x}" for b in key)


def _ethtool_key(ctx):
    out = ctx.vm.check(f"ethtool -x {ctx.ifname(1)}")
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("RSS hash key:"):
            return bytes(int(x, 16) for x in lines[i + 1].split(":"))
    raise AssertionError(f"ethtool -x shows no key:\n{out}")


def _moved(ctx, conf, old_key):
    """How many of the flows seen would have been on another queue under
    old_key (same table and hash types)."""
    table = conf["table"]
    old = dict(conf, key=old_key)
    return sum(table[_expected_hash(conf, f) % len(table)] !=
               table[_expected_hash(old, f) % len(table)]
               for f in _flows(ctx))


@vx3_only
def test_key_change(ctx):
    vm, ifn, dev = ctx.vm, ctx.ifname(1), ctx.state["dev"]
    old = _rss_conf(dev)["key"]
    new = os.urandom(KEY_MAX)
    vm.check(f"ethtool -X {ifn} hkey {_key_hex(new)}")
    try:
        # The key comes with an activation, from vx3's device work
        conf = _wait_rss_conf(ctx, "the new key did not reach the device",
                              lambda c: c["key"] == new)
        ctx.expect(_ethtool_key(ctx) == new, "ethtool -x reports another "
                   "key than the one set")
        ping(ctx, wait=30)
        _clear(ctx)
        _send(ctx)
        _check_flows(ctx, conf)
        moved = _moved(ctx, conf, old)
        diag(f"{ctx.driver}: {moved} flows on another queue than under "
             f"the old key")
        ctx.expect(moved, "no flow changed its queue with the key")
    finally:
        vm.check(f"ethtool -X {ifn} hkey {_key_hex(old)}")
    _wait_rss_conf(ctx, "the old key did not come back",
                   lambda c: c["key"] == old)


@vx3_only
def test_tcp_fields(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    vm.check(f"ethtool -N {ifn} rx-flow-hash tcp4 sd")
    try:
        want = HASH_IPV4 | HASH_IPV6 | HASH_TCP_IPV6
        conf = _wait_rss_conf(ctx, f"after tcp4 sd the device does not "
                              f"hash types {want:#x}",
                              lambda c: c["types"] == want)
        out = vm.check(f"ethtool -n {ifn} rx-flow-hash tcp4")
        ctx.expect("L4 bytes" not in out, f"ethtool -n still shows ports "
                   f"for tcp4:\n{out}")
        ping(ctx, wait=30)
        _clear(ctx)
        _send(ctx)
        _check_flows(ctx, conf)
    finally:
        vm.check(f"ethtool -N {ifn} rx-flow-hash tcp4 sdfn")
    _wait_rss_conf(ctx, "TCP/IPv4 did not come back",
                   lambda c: c["types"] == 0xF)


def test_rxhash_off(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    vm.check(f"ethtool -K {ifn} rxhash off")
    try:
        _clear(ctx)
        _send(ctx)
        flows = [f for f in _flows(ctx)
                 if SPORT <= f["sport"] < SPORT + NPORTS]
        hashed = [f for f in flows if f["hash"]]
        diag(f"{ctx.driver}: rxhash off: {len(flows)} test flows, "
             f"{len(hashed)} with a hash")
        ctx.expect(flows and not hashed, f"{len(hashed)} of {len(flows)} "
                   f"flows carried a hash with rxhash off")
    finally:
        vm.check(f"ethtool -K {ifn} rxhash on")


def _expected_type(conf, fl):
    """The xdp_rss_hash_type of a flow's hash under conf."""
    if fl["family"] == 4:
        l3, l4, xl3 = HASH_IPV4, HASH_TCP_IPV4, XDP_RSS_L3_IPV4
    else:
        l3, l4, xl3 = HASH_IPV6, HASH_TCP_IPV6, XDP_RSS_L3_IPV6
    if fl["proto"] == socket.IPPROTO_TCP and conf["types"] & l4:
        return xl3 | XDP_RSS_L4 | XDP_RSS_L4_TCP
    return xl3 if conf["types"] & l3 else 0


def test_xdp_rxhash_kfunc(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    conf = _rss_conf(ctx.state["dev"])
    vm.check(f"rm -rf {XDP_MAPS} && vx3-xdpbound {XDP_OBJ} xdp_rxhash {ifn} "
             f"{XDP_MAPS}")
    try:
        ping(ctx, wait=30)
        _send(ctx)
        peers = _peers(ctx)
        flows = [f for f in _dump(ctx, f"{XDP_MAPS}/vx3_xdphash")
                 if f["saddr"] in peers]
    finally:
        vm.check(f"ip link set dev {ifn} xdpdrv off; rm -rf {XDP_MAPS}")
    tests = [f for f in flows if SPORT <= f["sport"] < SPORT + NPORTS]
    ctx.expect(len(tests) == 4 * NPORTS, f"the XDP program saw "
               f"{len(tests)} of the {4 * NPORTS} test flows")
    if all(f["err"] == -EOPNOTSUPP for f in flows):
        ctx.skip(f"{ctx.driver}: bpf_xdp_metadata_rx_hash() returns "
                 f"-EOPNOTSUPP for every frame (the driver has no "
                 f"xmo_rx_hash)")
    table = conf["table"]
    bad = []
    for f in flows:
        want, wtype = _expected_hash(conf, f), _expected_type(conf, f)
        q = table[want % len(table)]
        if (f["err"] or f["hash"] != want or f["type"] != wtype or
                f["other"] or f["queue"] != q):
            bad.append(f"{_flow_name(f)}: returned {f['err']}, "
                       f"hash {f['hash']:#010x} (Toeplitz {want:#010x}), "
                       f"type {f['type']:#x} (want {wtype:#x}), queue "
                       f"{f['queue']} (want {q}), {f['packets']} packets, "
                       f"{f['other']} with another result")
    diag(f"{ctx.driver}: the kfunc's result for {len(flows)} flows from "
         f"the peer; {len(bad)} wrong")
    ctx.expect(not bad, "flows with a wrong kfunc result:\n" +
               "\n".join(bad[:20]))


def _rx_queue_packets(ctx):
    """rx-packets per RX queue id (netdev qstats)."""
    vm = ctx.vm
    return {q["queue-id"]: q.get("rx-packets", 0)
            for q in qstats(vm, ifindex(vm, ctx.ifname(1)), queue=True)
            if q["queue-type"] == "rx"}


def _expect_all_receive(ctx, nq, what):
    """Every one of the nq RX queues receives within a few seconds."""
    a = _rx_queue_packets(ctx)
    deadline = time.monotonic() + 10
    while True:
        time.sleep(1)
        b = _rx_queue_packets(ctx)
        grew = {q: b[q] - a.get(q, 0) for q in b}
        if sorted(q for q in grew if grew[q] > 0) == list(range(nq)):
            diag(f"{ctx.driver}: {what}: packets per RX queue {grew}")
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not every one of {nq} RX queues "
                                 f"received: {grew}")


# iperf 2 -y C interval line: time,src,sport,dst,dport,id,start-end,bytes,bps
IPERF_CSV_RE = re.compile(r"^\d+,[^,]+,\d+,[^,]+,\d+,(\d+),"
                          r"([\d.]+)-([\d.]+),(\d+),", re.M)


@vx3_only
def test_channels_traffic(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    cur = channels(vm, ifn)[1]
    orig = (cur["Combined"], cur["TX"])
    nq, port, secs = ctx.state["nq"], 5941, 40
    srv = vm.bg(f"exec iperf -s -p {port}")
    res = []
    try:
        vm.run(f"for i in $(seq 50); do ss -Hltn 'sport = :{port}' | "
               f"grep -q . && exit 0; sleep 0.1; done")
        t0 = time.monotonic()
        client = threading.Thread(target=lambda: res.append(vm.peer(
            1, f"iperf -c {vm.guest_ip4(1)} -p {port} -t {secs} -i 2 "
               f"-P 16 -y C 2>&1", timeout=secs + 60)))
        client.start()
        try:
            _expect_all_receive(ctx, nq, f"combined {orig[0]} tx {orig[1]}")
            for c, t in ((1, 0), orig):
                vm.check(f"ethtool -L {ifn} combined {c} tx {t}")
                _expect_all_receive(ctx, c, f"after ethtool -L combined "
                                    f"{c} tx {t}")
            changed = time.monotonic() - t0
        finally:
            vm.run(f"ethtool -L {ifn} combined {orig[0]} tx {orig[1]}")
            client.join()
    finally:
        srv.stop()
    rc, out = res[0]
    ctx.expect(rc == 0 and "failed" not in out and "reset" not in out,
               f"iperf -P 16 failed (rc={rc}):\n{out[-2000:]}")
    ctx.expect(changed + 4 < secs, f"the changes took {changed:.0f} s of "
               f"the {secs} s transfer: no interval after them to check")
    late = {}
    for sid, start, end, nbytes in IPERF_CSV_RE.findall(out):
        if float(end) - float(start) <= 2.5 and float(start) >= changed:
            late[sid] = late.get(sid, 0) + int(nbytes)
    diag(f"{ctx.driver}: channel changes done {changed:.1f} s into the "
         f"transfer; bytes per connection after them: "
         f"{dict(sorted(late.items(), key=lambda x: int(x[0])))}")
    ctx.expect(len(late) == 16 and all(late.values()),
               f"not every one of the 16 connections moved data after the "
               f"channel changes: {late}")
    ping(ctx, wait=30)
    _clear(ctx)
    _send(ctx)
    _check_flows(ctx, _rss_conf(ctx.state["dev"]))


@vx3_only
def test_bad_input(ctx):
    vm, ifn, dev = ctx.vm, ctx.ifname(1), ctx.state["dev"]
    before = _rss_conf(dev)
    ch = vm.check(f"ethtool -l {ifn}")
    bad = []
    for cmd in (f"ethtool -X {ifn} hfunc xor",
                f"ethtool -N {ifn} rx-flow-hash udp4 sdfn",
                f"ethtool -L {ifn} combined 4 tx 3"):
        rc, out = vm.run(cmd + " 2>&1")
        diag(f"{cmd}: rc {rc}: {' '.join(out.split())}")
        # Debian 12's ethtool -N prints the error but exits 0
        if rc == 0 and "Cannot" not in out:
            bad.append(f"{cmd} succeeded")
    ctx.expect(not bad, "; ".join(bad))
    ctx.expect(vm.check(f"ethtool -l {ifn}") == ch,
               "a refused channel change changed the channels")
    after = _rss_conf(dev)
    ctx.expect(after == before, f"a refused request changed the device's "
               f"RSS configuration: {before} -> {after}")
    _clear(ctx)
    _send(ctx)
    _check_flows(ctx, after)


def _per_queue(st, name, nq):
    return [st.get(f"rx{q}_{name}", 0) for q in range(nq)]


@vx3_only
def test_lro_every_queue(ctx):
    vm, ifn, nq = ctx.vm, ctx.ifname(1), ctx.state["nq"]
    vm.peer_check(1, f"ip link set {vm.tap(1)} mtu 9000")
    vm.check(f"ip link set {ifn} mtu 9000 && ethtool -K {ifn} lro on")
    port = 5931
    srv = vm.bg(f"exec iperf -s -p {port}")
    try:
        ping(ctx, wait=30)
        vm.run(f"for i in $(seq 50); do ss -Hltn 'sport = :{port}' | "
               f"grep -q . && exit 0; sleep 0.1; done")
        _clear(ctx)
        s0 = ethtool_stats(vm, ifn)
        rc, out = vm.peer(1, f"iperf -c {vm.guest_ip4(1)} -p {port} -t 4 "
                          f"-P 16 -y C", timeout=90)
        s1 = ethtool_stats(vm, ifn)
        # The streams' packets per RX queue, as the tc program saw them
        # (aggregates count once)
        per_q = {}
        for f in _flows(ctx):
            if f["dport"] == port:
                n, p = per_q.get(f["queue"], (0, 0))
                per_q[f["queue"]] = (n + 1, p + f["packets"])
    finally:
        srv.stop()
        vm.run(f"ip link set {ifn} mtu 1500")
        vm.peer(1, f"ip link set {vm.tap(1)} mtu 1500")
    ctx.expect(rc == 0, f"peer iperf -P 16 failed (rc={rc}):\n{out}")
    lro = [b - a for a, b in zip(_per_queue(s0, "lro_packets", nq),
                                 _per_queue(s1, "lro_packets", nq))]
    bad = [b - a for a, b in zip(_per_queue(s0, "drop_bad", nq),
                                 _per_queue(s1, "drop_bad", nq))]
    moved = iperf_bytes(out)
    streams = "; ".join(f"queue {q}: {n} streams, {p} packets"
                        for q, (n, p) in sorted(per_q.items()))
    diag(f"{ctx.driver}: MTU 9000, LRO on, 16 streams: {moved} bytes "
         f"({streams}); LRO aggregates per RX queue {lro}; ring errors "
         f"{bad}; resets {s0.get('resets')} -> {s1.get('resets')}")
    ctx.expect(moved > 0, "the 16 streams moved no data")
    ctx.expect(all(lro), f"not every RX queue built LRO aggregates: {lro} "
               f"({streams})")
    ctx.expect(not any(bad) and s1.get("resets") == s0.get("resets"),
               f"ring protocol errors {bad} or a reset "
               f"({s0.get('resets')} -> {s1.get('resets')})")


@vx3_only
def test_xdp_every_queue(ctx):
    vm, ifn, nq = ctx.vm, ctx.ifname(1), ctx.state["nq"]
    vm.check("[ -e /sys/fs/bpf/rssx ] || bpftool prog loadall "
             "/usr/lib/vx3/vx3_xdp.bpf.o /sys/fs/bpf/rssx pinmaps "
             "/sys/fs/bpf/rssxm")
    vm.check(f"ip -force link set dev {ifn} xdpdrv pinned "
             f"/sys/fs/bpf/rssx/xdp_pass")
    try:
        conf = _rss_conf(ctx.state["dev"])
        ping(ctx, wait=30)
        s0 = ethtool_stats(vm, ifn)
        _clear(ctx)
        _send(ctx)
        s1 = ethtool_stats(vm, ifn)
        _check_flows(ctx, conf)
    finally:
        vm.check(f"ip link set dev {ifn} xdpdrv off")
    passed = [b - a for a, b in zip(_per_queue(s0, "xdp_pass", nq),
                                    _per_queue(s1, "xdp_pass", nq))]
    diag(f"{ctx.driver}: XDP_PASS per RX queue {passed}")
    ctx.expect(all(passed), f"not every RX queue ran the program: {passed}")
