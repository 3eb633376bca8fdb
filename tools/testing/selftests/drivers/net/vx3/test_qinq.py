# SPDX-License-Identifier: GPL-2.0
"""Stacked VLANs (802.1ad + 802.1Q) and LRO aggregates of tagged flows.

The host may have no 8021q, so the peer is the guest itself: NIC 2 is
moved into a guest network namespace ("pe") and the two taps are bridged
in peer namespace 1 (tap 2 is moved there; both taps get MTU 9000 so the
host bridge forwards double-tagged full-size frames). Every frame between
the two stacks crosses the wire tap 1 <-> tap 2 and is received by the
driver under test, on NIC 1 or NIC 2.

features
    vx3 does not offer RX VLAN tag stripping (rx-vlan-offload off
    [fixed]): the device strips 802.1ad outer tags too and does not say
    which TPID it removed.
qinq_filter_on, qinq_filter_off
    On both sides an 802.1ad VLAN 100 with an 802.1Q VLAN 200 on top
    (10.200.0.0/24). Pings of 56 and 1472 bytes (1522-byte double-tagged
    frames) and 2 MiB of TCP each way (SHA-256 at both ends) must pass,
    with the device VLAN filter on (the 802.1ad VID must be in the
    device's filter) and off. A driver that lets the device strip the
    outer tag and reports it as 802.1Q, or leaves 802.1ad VIDs out of the
    filter, loses every frame.
vlan_lro
    An 802.1Q VLAN 300 on both sides, rx-vlan-offload off where it can be
    changed, aggregation on (default) on NIC 1: 16 MiB of TCP from "pe"
    to the guest arrive intact. The device hands up tagged aggregates of
    up to 64 KiB: the driver must make them GSO packets (or drop and
    count them), never pass an oversized non-GSO skb to the stack. On vx3
    rx0_lro_packets must grow or the driver must count the drops; the
    guest dmesg must stay clean (checked by the harness).
"""

from lib.hwgro import AGG_FEATURE, delta, ethtool_stats, note
from lib.nic import parse_features
from lib.test import vx3_only
from lib.vm import sh

NICS = 2
# vmxnet3 (in-tree) reports the stripped 802.1ad tag as 802.1Q: the stack
# drops every double-tagged frame (see qinq_* and the report).
DRIVERS = ("vx3",)

NS = "pe"
QINQ_NET = "10.200.0"
VLAN_NET = "10.30.0"


def _nsx(side):
    """Command prefix of side 1 (the guest's main namespace) or 2 (pe)."""
    # /usr/sbin/ip: in background jobs busybox ip (no netns) may come first
    return "" if side == 1 else f"/usr/sbin/ip netns exec {NS} "


def setup(ctx):
    vm = ctx.vm
    ctx.load_driver()
    if1, if2 = ctx.ifname(1), ctx.ifname(2)
    # Host: bridge tap 1 and tap 2 in namespace 1
    ns1, ns2 = vm.netns(1), vm.netns(2)
    sh(["ip", "-n", ns2, "link", "set", vm.tap(2), "netns", ns1])
    ctx.state["tap2_moved"] = True
    sh(["ip", "-n", ns1, "link", "add", "qbr", "type", "bridge"])
    for n in (1, 2):
        sh(["ip", "-n", ns1, "link", "set", vm.tap(n), "mtu", "9000",
            "master", "qbr", "up"])
    sh(["ip", "-n", ns1, "link", "set", "qbr", "up"])
    # Guest: NIC 2 into namespace pe
    vm.check(f"modprobe 8021q; ip netns add {NS} && "
             f"ip link set {if2} netns {NS} && "
             f"ip -n {NS} link set lo up && ip -n {NS} link set {if2} up && "
             f"ip link set {if1} up")
    for side, ifn in ((1, if1), (2, if2)):
        vm.check(f"{_nsx(side)}sh -c 'for i in $(seq 150); do "
                 f"[ $(cat /sys/class/net/{ifn}/carrier) = 1 ] && exit 0; "
                 f"sleep 0.1; done; exit 1'")


def teardown(ctx):
    vm = ctx.vm
    vm.run(f"ip netns del {NS}")
    if ctx.state.get("tap2_moved"):
        sh(["ip", "-n", vm.netns(1), "link", "del", "qbr"], check=False)
        sh(["ip", "-n", vm.netns(1), "link", "set", vm.tap(2), "netns",
            vm.netns(2)], check=False)


def _ifn(ctx, side):
    return ctx.ifname(side)


def _features(ctx, side):
    return parse_features(ctx.vm.check(f"{_nsx(side)}ethtool -k "
                                       f"{_ifn(ctx, side)}"))


@vx3_only
def test_features(ctx):
    f = _features(ctx, 1)
    ctx.expect(f.get("rx-vlan-offload") == (False, True),
               f"vx3 must not offer RX VLAN stripping: rx-vlan-offload "
               f"{f.get('rx-vlan-offload')} (want off [fixed])")
    ctx.expect(f.get("rx-vlan-filter", (False,))[0],
               f"rx-vlan-filter is not on: {f.get('rx-vlan-filter')}")
    note(f"vx3 rx-vlan-stag-filter: {f.get('rx-vlan-stag-filter')}")


def _make_qinq(ctx):
    for side in (1, 2):
        x, ifn = _nsx(side), _ifn(ctx, side)
        ctx.vm.check(f"{x}ip link add link {ifn} name qa100 type vlan "
                     f"proto 802.1ad id 100 && "
                     f"{x}ip link add link qa100 name qq200 type vlan "
                     f"proto 802.1Q id 200 && "
                     f"{x}ip addr add {QINQ_NET}.{side}/24 dev qq200 && "
                     f"{x}ip link set qa100 up && {x}ip link set qq200 up")


def _del_links(ctx, *names):
    for side in (1, 2):
        for name in names:
            ctx.vm.run(f"{_nsx(side)}ip link del {name} 2>/dev/null")


def _ping(ctx, net, src, dst):
    for size in (56, 1472):
        rc, out = ctx.vm.run(f"{_nsx(src)}ping -c 3 -i 0.2 -W 3 -s {size} "
                             f"{net}.{dst}", timeout=60)
        if rc != 0 or "3 packets received" not in out:
            # The first request may wait for ARP: once more
            rc, out = ctx.vm.run(f"{_nsx(src)}ping -c 3 -i 0.2 -W 3 "
                                 f"-s {size} {net}.{dst}", timeout=60)
        ctx.expect(rc == 0 and "3 packets received" in out,
                   f"ping -s {size} side {src} -> {net}.{dst} failed:\n"
                   f"{out.strip()}")


def _tcp(ctx, net, src, dst, nbytes, port):
    """nbytes of random data from side src to side dst over TCP; the
    SHA-256 must match."""
    vm = ctx.vm
    want = vm.check(f"head -c {nbytes} /dev/urandom >/tmp/q.bin && "
                    f"sha256sum /tmp/q.bin", timeout=120).split()[0]
    sumf = f"/tmp/q.sha.{port}"
    # busybox nc shuts its sending side down at EOF of its stdin, and the
    # other nc exits when it sees that: the receiver's stdin is a FIFO
    # held open until the end
    fifo = f"/tmp/q.fifo.{port}"
    job = vm.bg(f"rm -f {sumf} {fifo}; mkfifo {fifo}; "
                f"({_nsx(dst)}nc -l -p {port} <{fifo} >/tmp/q.rcv; "
                f"sha256sum </tmp/q.rcv >{sumf}.t; wc -c </tmp/q.rcv "
                f">>{sumf}.t; rm -f /tmp/q.rcv; mv {sumf}.t {sumf}) & "
                f"exec 3>{fifo}; wait")
    try:
        rc, _ = vm.run(f"{_nsx(dst)}sh -c 'for i in $(seq 100); do "
                       f"netstat -ltn | grep -q \":{port} \" && exit 0; "
                       f"sleep 0.1; done; exit 1'")
        ctx.expect(rc == 0, f"nc -l -p {port} did not listen")
        rc, out = vm.run(f"{_nsx(src)}timeout 90 nc {net}.{dst} {port} "
                         f"</tmp/q.bin", timeout=120)
        ctx.expect(rc == 0, f"TCP side {src} -> {net}.{dst}: nc exited "
                   f"{rc}: {out.strip()}")
        rc, out = vm.run(f"for i in $(seq 300); do [ -s {sumf} ] && "
                         f"cat {sumf} && exit 0; sleep 0.1; done; exit 1")
    finally:
        job.stop()
    words = out.split() if rc == 0 else []
    got = words[0] if words else None
    ctx.expect(got == want, f"TCP side {src} -> {net}.{dst}: {nbytes} "
               f"bytes sent, {words[-1] if words else 'none'} received, "
               f"sha256 {got or 'none'} != {want}")


def _set_filter(ctx, on):
    """rx-vlan-filter (and rx-vlan-stag-filter where changeable) on both
    NICs."""
    for side in (1, 2):
        f = _features(ctx, side)
        opts = [name for name in ("rx-vlan-filter", "rx-vlan-stag-filter")
                if name in f and not f[name][1]]
        state = "on" if on else "off"
        if opts:
            ctx.vm.check(f"{_nsx(side)}ethtool -K {_ifn(ctx, side)} " +
                         " ".join(f"{o} {state}" for o in opts))
        f = _features(ctx, side)
        note(f"{ctx.driver} side {side}: rx-vlan-filter "
             f"{f.get('rx-vlan-filter')}, rx-vlan-stag-filter "
             f"{f.get('rx-vlan-stag-filter')}, rx-vlan-offload "
             f"{f.get('rx-vlan-offload')}")
        ctx.expect("rx-vlan-filter" not in opts or
                   f["rx-vlan-filter"][0] == on,
                   f"rx-vlan-filter did not turn {state}")


def _qinq(ctx, filter_on, port):
    _set_filter(ctx, filter_on)
    _make_qinq(ctx)
    try:
        _ping(ctx, QINQ_NET, 1, 2)
        _ping(ctx, QINQ_NET, 2, 1)
        _tcp(ctx, QINQ_NET, 2, 1, 2 << 20, port)
        _tcp(ctx, QINQ_NET, 1, 2, 2 << 20, port + 1)
    finally:
        _del_links(ctx, "qq200", "qa100")
        _set_filter(ctx, True)


def test_qinq_filter_on(ctx):
    _qinq(ctx, True, 5910)


def test_qinq_filter_off(ctx):
    _qinq(ctx, False, 5920)


def test_vlan_lro(ctx):
    vm = ctx.vm
    if1 = _ifn(ctx, 1)
    f = _features(ctx, 1)
    if not f["rx-vlan-offload"][1]:
        vm.check(f"ethtool -K {if1} rxvlan off")
    agg = AGG_FEATURE[ctx.driver][1]
    note(f"{ctx.driver} {if1}: {agg} {f.get(agg)}, rx-vlan-offload "
         f"{_features(ctx, 1).get('rx-vlan-offload')}")
    for side in (1, 2):
        x, ifn = _nsx(side), _ifn(ctx, side)
        vm.check(f"{x}ip link add link {ifn} name vl300 type vlan id 300 "
                 f"&& {x}ip addr add {VLAN_NET}.{side}/24 dev vl300 && "
                 f"{x}ip link set vl300 up")
    try:
        _ping(ctx, VLAN_NET, 2, 1)
        a = ethtool_stats(vm, if1) if ctx.driver == "vx3" else {}
        _tcp(ctx, VLAN_NET, 2, 1, 16 << 20, 5930)
        if ctx.driver == "vx3":
            d = delta(a, ethtool_stats(vm, if1))
            lro = {k: v for k, v in d.items()
                   if v and ("lro" in k or "gro" in k or "drop" in k)}
            note(f"vx3 VLAN 300 TCP 16 MiB into {if1}: {lro}")
            if f.get(agg, (False,))[0]:
                ctx.expect(any(v for k, v in lro.items()),
                           f"{agg} on, but neither an aggregate nor a "
                           f"drop was counted on {if1}: {d}")
    finally:
        _del_links(ctx, "vl300")
        if not f["rx-vlan-offload"][1]:
            vm.run(f"ethtool -K {if1} rxvlan on")
