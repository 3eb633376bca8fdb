# SPDX-License-Identifier: GPL-2.0
"""Native XDP on vx3: every verdict, multi-buffer, XDP_TX, redirect and
ndo_xdp_xmit, and configuration changes with a program attached.

The programs are vx3_xdp.bpf.c (built by mkinitramfs.sh with clang),
loaded with bpftool loadall and attached with ip link ... xdpdrv. They
act on UDP to port 9999 only and count those packets (and bytes) in
their own map; each case checks the program's count, the driver's
ethtool -S counters for that verdict (rx0_xdp_*; xdp_* summed over the
XDP rings, as ndo_xdp_xmit picks one by CPU)
and the traffic itself (lib/xdppeer.py: sequence-numbered payloads,
checked at the receiver):

  pass, drop, aborted  1000 datagrams: the program saw all, the driver
                       counted the verdict for each, the guest's UDP
                       stack saw them (pass) or not (drop, aborted)
  tx                   reflection on the XDP ring, the program having
                       stripped and restored the Ethernet header (head
                       shrink, grow) and appended "VX3!" (tail grow):
                       every reflected payload arrives with the marker
  redirect             NIC 1 -> devmap -> NIC 2 (ndo_xdp_xmit of vx3)
                       -> peer 2, every payload intact
  veth_xmit            a guest veth's XDP redirects into vx3 (frames
                       from another driver's memory through ndo_xdp_xmit)
  cpumap               NIC 1 -> XDP_REDIRECT into a cpumap: CPU 1's
                       kthread builds skbs on vx3's page pool frames for
                       the guest's UDP stack, every payload intact (the
                       pages return to the pool from another CPU)
  multibuf             MTU 9000: a program without frags support is
                       refused (extack) and so is the MTU change under
                       one; frags-aware pass and reflect of 8000-byte
                       datagrams, a TCP transfer intact through XDP_PASS,
                       LRO off under a single-buffer program
  reconfig_traffic     attach/detach and ring, channel and MTU changes
                       with a program attached, under TCP traffic
  rmmod_attached       rmmod with a program attached (and traffic)

vx3 only: the in-tree vmxnet3 has XDP too, but not these counters; the
two are compared by make bench.
"""

import json
import os
import re
import time

from lib.nic import (Traffic, diag, ethtool_stats, expect_flowing, ifindex,
                     kv, link_stats, only_vx3, qstats, tap_dropped,
                     tcp_integrity, tool, wait_listen)

NICS = 2
HERE = os.path.dirname(os.path.abspath(__file__))
PEER = f"/usr/bin/python3 {HERE}/lib/xdppeer.py"
OBJ = "/usr/lib/vx3/vx3_xdp.bpf.o"
PROGS = "/sys/fs/bpf/vx3"
MAPS = "/sys/fs/bpf/vx3m"
COUNT = 1000


def setup(ctx):
    vm = ctx.vm
    ctx.load_driver()
    ctx.config_ip(1)
    ctx.config_ip(2)
    # The peers know the guest's MAC from the start: a datagram to an
    # unresolved neighbour waits in the peer's ARP queue, which overflows
    # (unresolved_discards) when the guest is slow to answer (the debug
    # kernel) or drops the ARP (xdp_drop_all): frames no NIC counter sees.
    for n in (1, 2):
        vm.peer_check(n, f"ip neigh replace {vm.guest_ip4(n)} lladdr "
                         f"{vm.mac(n)} dev {vm.tap(n)} nud permanent")
    if ctx.driver != "vx3":
        return
    vm.check(f"mount -t bpf bpf /sys/fs/bpf 2>/dev/null; "
             f"bpftool prog loadall {OBJ} {PROGS} pinmaps {MAPS}")


def _attach(ctx, n, prog):
    """Attach a pinned program to NIC n; returns (rc, output)."""
    return ctx.vm.run(f"ip -force link set dev {ctx.ifname(n)} xdpdrv "
                      f"pinned {PROGS}/{prog}")


def _attach_ok(ctx, n, prog):
    rc, out = _attach(ctx, n, prog)
    ctx.expect(rc == 0, f"attaching {prog} to NIC {n} failed:\n{out}")


def _detach(ctx, n):
    ctx.vm.check(f"ip link set dev {ctx.ifname(n)} xdpdrv off")


def _prog_count(ctx):
    """(packets, bytes) the programs counted."""
    out = ctx.vm.check(f"bpftool -j map dump pinned {MAPS}/vx3_cnt")
    vals = {}
    for e in json.loads(out):
        f = e.get("formatted", e)
        vals[int(f["key"])] = int(f["value"])
    return vals.get(0, 0), vals.get(1, 0)


def _udp_in(ctx):
    """Datagrams the guest's UDP stack received (delivered or not)."""
    rows = [ln.split() for ln in
            ctx.vm.check("grep '^Udp:' /proc/net/snmp").splitlines()]
    return sum(int(rows[1][rows[0].index(k)])
               for k in ("InDatagrams", "NoPorts", "InErrors"))


def _peer_send(ctx, n, dst, count, sizes, reflect=False, tail=None,
               timeout=120):
    cmd = f"{PEER} send {dst} {count} {sizes}"
    if reflect:
        cmd += " --reflect"
    if tail:
        cmd += f" --tail {tail}"
    out = ctx.vm.peer_check(n, cmd, timeout=timeout)
    return json.loads(out.strip().splitlines()[-1])


def _delta(a, b, key):
    return b.get(key, 0) - a.get(key, 0)


def _verdict_case(ctx, prog, stat, to_stack):
    vm, ifn = ctx.vm, ctx.ifname(1)
    _attach_ok(ctx, 1, prog)
    try:
        p0, s0, u0 = _prog_count(ctx), ethtool_stats(vm, ifn), _udp_in(ctx)
        m0 = link_stats(vm, ifn)["rx_missed_errors"]
        _peer_send(ctx, 1, vm.guest_ip4(1), COUNT, "64,200,1400")
        time.sleep(1)
        p1, s1, u1 = _prog_count(ctx), ethtool_stats(vm, ifn), _udp_in(ctx)
        missed = link_stats(vm, ifn)["rx_missed_errors"] - m0
    finally:
        _detach(ctx, 1)
    seen = p1[0] - p0[0]
    diag(f"{prog}: program saw {seen}, {stat} +{_delta(s0, s1, stat)}, "
         f"UDP stack +{u1 - u0}, device out of buffers +{missed}")
    # A slow guest (the debug kernel) may leave the device without RX
    # buffers: every datagram is seen by the program or counted missed
    ctx.expect(seen + missed == COUNT and seen >= COUNT // 2,
               f"{prog}: the program saw {seen} of {COUNT}, the device "
               f"missed {missed}")
    ctx.expect(_delta(s0, s1, stat) >= seen,
               f"{prog}: {stat} grew by {_delta(s0, s1, stat)}, the "
               f"program counted {seen}")
    ctx.expect(_delta(s0, s1, stat + "_bytes") >= p1[1] - p0[1],
               f"{prog}: {stat}_bytes grew by "
               f"{_delta(s0, s1, stat + '_bytes')}, the program counted "
               f"{p1[1] - p0[1]}")
    if to_stack:
        ctx.expect(u1 - u0 >= seen, f"{prog}: the UDP stack received "
                                    f"{u1 - u0} of {seen}")
    else:
        ctx.expect(u1 - u0 == 0, f"{prog}: {u1 - u0} dropped datagrams "
                                 f"reached the UDP stack")
    # Other traffic still passes
    rc, out = vm.run(f"ping -c 2 -W 5 {vm.peer_ip4(1)}", timeout=30)
    ctx.expect(rc == 0, f"{prog}: ping failed after the test:\n{out}")


@only_vx3("ethtool -S XDP counters")
def test_pass(ctx):
    _verdict_case(ctx, "xdp_pass", "rx0_xdp_pass", True)


@only_vx3("ethtool -S XDP counters")
def test_drop(ctx):
    _verdict_case(ctx, "xdp_drop", "rx0_xdp_drop", False)


@only_vx3("ethtool -S XDP counters")
def test_aborted(ctx):
    _verdict_case(ctx, "xdp_aborted", "rx0_xdp_aborted", False)


def _totals(ctx):
    """qstats device totals and stats64 of NIC 1, read with nothing sent
    or received in between (qstats read again until it did not move)."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    idx = ifindex(vm, ifn)
    for _ in range(10):
        q = qstats(vm, idx)
        link = link_stats(vm, ifn)
        if qstats(vm, idx) == q:
            break
    return q, link


def _reflect_case(ctx, prog, sizes, tail, count=300):
    vm, ifn = ctx.vm, ctx.ifname(1)
    _attach_ok(ctx, 1, prog)
    try:
        s0 = ethtool_stats(vm, ifn)
        m0 = link_stats(vm, ifn)["rx_missed_errors"]
        d0 = tap_dropped(ctx.vm, 1)
        res = _peer_send(ctx, 1, vm.guest_ip4(1), count, sizes,
                         reflect=True, tail=tail)
        time.sleep(1)
        s1 = ethtool_stats(vm, ifn)
        missed = link_stats(vm, ifn)["rx_missed_errors"] - m0
        host = tap_dropped(ctx.vm, 1) - d0
        # Before the detach, which moves the ring's counters into the base
        q, link = _totals(ctx)
    finally:
        _detach(ctx, 1)
    seen = _delta(s0, s1, "rx0_xdp_tx")
    diag(f"{prog}: {res}, rx0_xdp_tx +{seen}, "
         f"xdp_xdp_tx +{_delta(s0, s1, 'xdp_xdp_tx')}, xdp_packets "
         f"+{_delta(s0, s1, 'xdp_packets')}, rx0_xdp_tx_err "
         f"+{_delta(s0, s1, 'rx0_xdp_tx_err')}, device out of buffers "
         f"+{missed}, host tap dropped +{host}")
    ctx.expect(res["bad"] == 0, f"{prog}: {res['bad']} reflected payloads "
                                f"were wrong")
    # A slow guest (the debug kernel) may leave the device without RX
    # buffers, and then QEMU stops reading the tap, whose queue may
    # overflow: every packet is reflected, counted missed by the device or
    # dropped by the host's tap, and every reflected one comes back
    ctx.expect(seen + missed + host == count and seen >= count // 2,
               f"{prog}: {seen} of {count} reflected, the device missed "
               f"{missed}, the host's tap dropped {host}")
    ctx.expect(res["received"] == seen,
               f"{prog}: {res['received']} of {seen} reflected came back")
    for k in ("xdp_xdp_tx", "xdp_packets"):
        ctx.expect(_delta(s0, s1, k) >= seen,
                   f"{prog}: {k} grew by {_delta(s0, s1, k)}, expected "
                   f"{seen}")
    # The XDP ring is no stack queue: its packets are in the device totals
    for k in ("packets", "bytes"):
        ctx.expect(q[f"tx-{k}"] == link[f"tx_{k}"] and
                   q[f"rx-{k}"] == link[f"rx_{k}"],
                   f"{prog}: qstats {k} {q[f'rx-{k}']}/{q[f'tx-{k}']} "
                   f"differ from stats64 {link[f'rx_{k}']}/{link[f'tx_{k}']}")


@only_vx3("ethtool -S XDP counters")
def test_tx(ctx):
    _reflect_case(ctx, "xdp_tx", "18,200,1400", "VX3!")


def _mac(ctx, ifn, peer=None):
    cmd = f"cat /sys/class/net/{ifn}/address"
    out = ctx.vm.peer_check(peer, cmd) if peer else ctx.vm.check(cmd)
    return out.strip()


def _set_redirect(ctx, target_ifn, dst_mac, src_mac):
    """devmap key 0 -> target, MACs for the redirected frames."""
    vm = ctx.vm
    idx = int(vm.check(f"cat /sys/class/net/{target_ifn}/ifindex"))

    def le(v, n):
        return " ".join(str((v >> (8 * i)) & 0xFF) for i in range(n))

    def mac8(m):
        return " ".join(str(int(x, 16)) for x in m.split(":")) + " 0 0"
    vm.check(f"bpftool map update pinned {MAPS}/vx3_ports key {le(0, 4)} "
             f"value {le(idx, 4)} && "
             f"bpftool map update pinned {MAPS}/vx3_cfg key {le(0, 4)} "
             f"value {mac8(dst_mac)} && "
             f"bpftool map update pinned {MAPS}/vx3_cfg key {le(1, 4)} "
             f"value {mac8(src_mac)}")


def _receiver(ctx, n, count):
    """Start xdppeer recv in peer n; returns the background job."""
    job = ctx.vm.peer_bg(n, f"{PEER} recv {count} 10")
    time.sleep(1.5)
    return job


def _received(job):
    out = job.stop()
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"received": 0, "bad": 0, "output": out}


@only_vx3("ethtool -S XDP counters")
def test_redirect(ctx):
    """NIC 1 -> XDP_REDIRECT (devmap) -> NIC 2's ndo_xdp_xmit -> peer 2,
    which has the guest's NIC 1 address so that its stack takes them."""
    vm = ctx.vm
    if1, if2 = ctx.ifname(1), ctx.ifname(2)
    _set_redirect(ctx, if2, _mac(ctx, vm.tap(2), peer=2), _mac(ctx, if2))
    vm.peer_check(2, f"ip addr add {vm.guest_ip4(1)}/32 dev {vm.tap(2)}")
    _attach_ok(ctx, 1, "xdp_redirect")
    try:
        job = _receiver(ctx, 2, COUNT)
        s0 = ethtool_stats(vm, if1), ethtool_stats(vm, if2)
        _peer_send(ctx, 1, vm.guest_ip4(1), COUNT, "64,1000,1472")
        time.sleep(1)
        s1 = ethtool_stats(vm, if1), ethtool_stats(vm, if2)
        res = _received(job)
    finally:
        _detach(ctx, 1)
        vm.peer(2, f"ip addr del {vm.guest_ip4(1)}/32 dev {vm.tap(2)}")
    redir = _delta(s0[0], s1[0], "rx0_xdp_redirect")
    xmit = _delta(s0[1], s1[1], "xdp_xmit")
    diag(f"redirect: {res}, NIC 1 rx0_xdp_redirect +{redir}, "
         f"rx0_xdp_redirect_err "
         f"+{_delta(s0[0], s1[0], 'rx0_xdp_redirect_err')}, NIC 2 "
         f"xdp_xmit +{xmit}, xdp_drops +{_delta(s0[1], s1[1], 'xdp_drops')}")
    ctx.expect(res.get("bad") == 0, f"redirect: corrupted payloads: {res}")
    ctx.expect(res.get("received") == COUNT,
               f"redirect: peer 2 received {res.get('received')} of "
               f"{COUNT}")
    ctx.expect(redir >= COUNT and xmit >= COUNT,
               f"redirect: rx0_xdp_redirect +{redir}, xdp_xmit +{xmit}, "
               f"expected {COUNT} each")


@only_vx3("ethtool -S XDP counters")
def test_veth_xmit(ctx):
    """Frames of a guest veth's XDP program, redirected into vx3 NIC 1
    (ndo_xdp_xmit with another driver's memory), reach peer 1."""
    vm, if1 = ctx.vm, ctx.ifname(1)
    vm.run("modprobe veth")
    vm.check("ip netns add vx3x && ip link add vx3a type veth peer name "
             "vx3b netns vx3x && ip addr add 10.99.0.1/24 dev vx3a && "
             "ip link set vx3a up && ip -n vx3x addr add 10.99.0.2/24 dev "
             "vx3b && ip -n vx3x link set vx3b up && ip -n vx3x link set "
             "lo up && ip -n vx3x route add 198.18.1.0/24 via 10.99.0.1 && "
             # XDP sees veth frames as sent: with checksum offload their
             # UDP checksum would be left to a device that never does it
             "ip netns exec vx3x ethtool -K vx3b tx off")
    try:
        _set_redirect(ctx, if1, _mac(ctx, vm.tap(1), peer=1), _mac(ctx, if1))
        _attach_ok_ifn(ctx, "vx3a", "xdp_redirect")
        udp = tool(vm, "vx3-udp")
        job = vm.peer_bg(1, f"{udp} recv 9999 300 16 1000 7 3000")
        time.sleep(1.5)
        s0 = ethtool_stats(vm, if1)
        vm.check("ip netns exec vx3x vx3-udp send 198.18.1.1 9999 300 16 "
                 "1000 7 500", timeout=120)
        # The receiver prints when all arrived or after 3 s of silence
        time.sleep(4)
        s1 = ethtool_stats(vm, if1)
        out = job.stop()
        res = kv(next((ln for ln in out.splitlines()
                       if ln.startswith("received=")), ""))
    finally:
        vm.run("ip link del vx3a; ip netns del vx3x")
    xmit = _delta(s0, s1, "xdp_xmit")
    diag(f"veth -> vx3: {res}, xdp_xmit +{xmit}, xdp_packets "
         f"+{_delta(s0, s1, 'xdp_packets')}")
    ctx.expect(res.get("corrupt", 1) == 0 and res.get("dup", 1) == 0,
               f"peer 1 received corrupt or duplicated datagrams: {res}")
    ctx.expect(res.get("ok", 0) == 300 and xmit >= 300,
               f"veth -> vx3: {res.get('ok')} of 300 arrived, xdp_xmit "
               f"+{xmit}")


@only_vx3("ethtool -S XDP counters")
def test_cpumap(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    n = 500
    # CPU 1's entry: queue size 1024 (the kthread of a slow debug guest
    # must not overflow it), no program (struct bpf_cpumap_val)
    vm.check(f"bpftool map update pinned {MAPS}/vx3_cpus key 1 0 0 0 "
             f"value 0 4 0 0 0 0 0 0")
    _attach_ok(ctx, 1, "xdp_cpumap")
    try:
        job = vm.bg(f"exec vx3-udp recv 9999 {n} 16 1400 11 3000")
        ctx.expect(wait_listen(vm.run, 9999, udp=True),
                   "guest vx3-udp did not listen")
        p0, s0 = _prog_count(ctx), ethtool_stats(vm, ifn)
        m0 = link_stats(vm, ifn)["rx_missed_errors"]
        vm.peer_check(1, f"{tool(vm, 'vx3-udp')} send {vm.guest_ip4(1)} "
                         f"9999 {n} 16 1400 11 250", timeout=120)
        # The receiver prints when all arrived or after 3 s of silence
        time.sleep(4)
        p1, s1 = _prog_count(ctx), ethtool_stats(vm, ifn)
        missed = link_stats(vm, ifn)["rx_missed_errors"] - m0
        out = job.stop()
    finally:
        _detach(ctx, 1)
        vm.run(f"bpftool map delete pinned {MAPS}/vx3_cpus key 1 0 0 0")
    res = kv(next((ln for ln in out.splitlines()
                   if ln.startswith("received=")), ""))
    seen = p1[0] - p0[0]
    redir = _delta(s0, s1, "rx0_xdp_redirect")
    diag(f"cpumap: {res}, program saw {seen}, rx0_xdp_redirect +{redir}, "
         f"rx0_xdp_redirect_err "
         f"+{_delta(s0, s1, 'rx0_xdp_redirect_err')}, device out of "
         f"buffers +{missed}")
    ctx.expect(res, f"cpumap: the guest's receiver got nothing (program "
                    f"saw {seen}, rx0_xdp_redirect +{redir})")
    ctx.expect(res.get("corrupt", 1) == 0 and res.get("dup", 1) == 0,
               f"cpumap: corrupt or duplicated datagrams: {res}")
    # A slow guest (the debug kernel) may leave the device without RX
    # buffers; what the program redirected must all reach the socket
    ctx.expect(seen + missed == n and seen >= n // 2 and redir >= seen and
               res.get("ok", 0) == seen,
               f"cpumap: the program saw {seen} of {n} (device missed "
               f"{missed}), rx0_xdp_redirect +{redir}, the guest's UDP "
               f"socket got {res.get('ok')}")


def _attach_ok_ifn(ctx, ifn, prog):
    rc, out = ctx.vm.run(f"ip link set dev {ifn} xdpdrv pinned "
                         f"{PROGS}/{prog}")
    ctx.expect(rc == 0, f"attaching {prog} to {ifn} failed:\n{out}")


def _set_mtu(ctx, mtu):
    vm = ctx.vm
    vm.check(f"ip link set {ctx.ifname(1)} mtu {mtu}")
    vm.peer_check(1, f"ip link set {vm.tap(1)} mtu {mtu}")


def _lro(ctx):
    out = ctx.vm.check(f"ethtool -k {ctx.ifname(1)}")
    return re.search(r"large-receive-offload: (\w+)", out).group(1)


@only_vx3("multi-buffer XDP")
def test_multibuf(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    # A single-buffer program takes no frames longer than a head buffer
    vm.check(f"ethtool -K {ifn} lro on")
    _attach_ok(ctx, 1, "xdp_pass")
    try:
        ctx.expect(_lro(ctx) == "off", "LRO stayed on under a program "
                                       "without frags support")
        rc, out = vm.run(f"ip link set {ifn} mtu 9000")
        ctx.expect(rc != 0, "MTU 9000 accepted under a single-buffer "
                            "program")
    finally:
        _detach(ctx, 1)
    ctx.expect(_lro(ctx) == "on", "LRO did not come back after detach")

    _set_mtu(ctx, 9000)
    try:
        rc, out = _attach(ctx, 1, "xdp_pass")
        diag(f"single-buffer program at MTU 9000: rc {rc}: {out.strip()}")
        ctx.expect(rc != 0 and "frags" in out,
                   f"single-buffer program accepted at MTU 9000, or no "
                   f"extack reason: rc {rc}: {out}")

        _attach_ok(ctx, 1, "xdp_pass_mb")
        ctx.expect(_lro(ctx) == "on", "LRO off under a frags-aware program")
        s0, p0, u0 = ethtool_stats(vm, ifn), _prog_count(ctx), _udp_in(ctx)
        _peer_send(ctx, 1, vm.guest_ip4(1), 200, "8000,5000,100")
        time.sleep(1)
        s1, p1, u1 = ethtool_stats(vm, ifn), _prog_count(ctx), _udp_in(ctx)
        diag(f"xdp_pass_mb: program saw {p1[0] - p0[0]} "
             f"({p1[1] - p0[1]} bytes), body_bufs "
             f"+{_delta(s0, s1, 'rx0_body_bufs')}, UDP +{u1 - u0}")
        ctx.expect(p1[0] - p0[0] == 200, f"frags program saw "
                                         f"{p1[0] - p0[0]} of 200")
        ctx.expect(_delta(s0, s1, "rx0_body_bufs") > 0,
                   "no body buffer: the frames were not multi-buffer")
        # 8000-byte datagrams: 8042-byte frames, with their frags counted
        ctx.expect(p1[1] - p0[1] >= 67 * 8042,
                   f"the program's bpf_xdp_get_buff_len() total "
                   f"{p1[1] - p0[1]} misses the frags")
        ctx.expect(u1 - u0 >= 200, f"UDP stack received {u1 - u0} of 200")
        tcp_integrity(ctx, 8 << 20, rx=True)
        _detach(ctx, 1)

        _reflect_case(ctx, "xdp_tx_mb", "8000,3000,64", None, count=100)
    finally:
        vm.run(f"ip link set {ifn} xdpdrv off")
        _set_mtu(ctx, 1500)


@only_vx3("ethtool -G/-L with XDP")
def test_reconfig_traffic(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    with Traffic(ctx, port=5720, parallel=2):
        expect_flowing(ctx, "traffic before attaching")
        try:
            # Attach and detach replace the queues, a program replacing
            # another only the pointer. One round: on the debug kernel,
            # where make check runs this case, each swap under traffic
            # takes 3-10 s, and the attach after a detach comes next.
            _attach_ok(ctx, 1, "xdp_pass")
            expect_flowing(ctx, "traffic with xdp_pass attached")
            _attach_ok(ctx, 1, "xdp_drop")
            _attach_ok(ctx, 1, "xdp_pass_mb")
            _detach(ctx, 1)
            expect_flowing(ctx, "traffic after detaching")
            _attach_ok(ctx, 1, "xdp_pass")
            for cmd in (f"ethtool -G {ifn} rx 256 rx-jumbo 256 tx 256",
                        f"ethtool -L {ifn} tx 0", f"ethtool -L {ifn} tx 1",
                        f"ip link set {ifn} mtu 3000",
                        f"ip link set {ifn} mtu 1500",
                        f"ethtool -G {ifn} rx 1024 rx-jumbo 1024 tx 512"):
                vm.check(cmd)
                expect_flowing(ctx, f"traffic after {cmd}")
            progs = vm.check(f"ip -d link show {ifn}")
            ctx.expect("xdp" in progs, f"program gone after the changes:\n"
                                       f"{progs}")
        finally:
            _detach(ctx, 1)
        expect_flowing(ctx, "traffic at the end")


@only_vx3("XDP program teardown at rmmod")
def test_rmmod_attached(ctx):
    vm = ctx.vm
    _attach_ok(ctx, 1, "xdp_tx_all")
    job = vm.peer_bg(1, f"{PEER} send {vm.guest_ip4(1)} 100000 64 "
                        f"--reflect")
    time.sleep(3)
    vm.check("rmmod vx3", timeout=120)
    job.stop()
    ctx.load_driver()
    ctx.config_ip(1)
    ctx.config_ip(2)
    rc, out = vm.run(f"ping -c 2 -W 5 {vm.peer_ip4(1)}", timeout=60)
    ctx.expect(rc == 0, f"no traffic after rmmod/modprobe:\n{out}")
