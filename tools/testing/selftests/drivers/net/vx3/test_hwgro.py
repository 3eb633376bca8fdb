# SPDX-License-Identifier: GPL-2.0
"""LRO: the device's TCP aggregates on the receive path.

Both drivers offer the device's aggregation as lro (NETIF_F_LRO); vx3
offers no rx-gro-hw (the aggregates are not HW-GRO: no MSS, no segment
boundaries). The peer namespace sends a random file to the guest over TCP
(IPv4 and IPv6) with lro on and off; the SHA-256 must match at both ends.
On vx3 the aggregate counters (rx0_lro_*) must rise while on and stay
still while off, where no frame may exceed the MTU (no body buffer is used
at MTU 1500), and the netdev qstats must report no rx-hw-gro-* counters.
For every driver the stack must see packets larger than the MTU on
average while on and none while off (rx_bytes / rx_packets). Aggregation
is then toggled 16 times, and MTU and ring sizes changed, under an iperf
stream, which must keep flowing; aggregates completing around a switch
must still carry GSO metadata (TCP's "suspect GRO implementation" warning
fails the case, lib/vm.py BAD_DMESG).

forward_disables_lro
    net.ipv4.ip_forward=1 turns lro off (the core's dev_disable_lro()),
    and so does net.ipv6.conf.all.forwarding=1 (each from lro on).
bridge_disables_lro
    Enslaving the NIC to a bridge turns lro off; with the guest address
    on the bridge, ping and 16 MiB of TCP from the peer through the
    bridge work (intact, no aggregates on vx3).

Aggregate sizes and iperf throughput are printed as TAP comments, never
asserted.
"""

import re
import time

from lib.test import iperf_peer_to_guest
from lib.hwgro import (L2_MAX, LRO_BYTES, LRO_COUNTERS, LRO_PACKETS,
                       LRO_SEGS, agg_on, agg_state, delta, dev_stats, drops,
                       ethtool_stats, iperf_rate, make_payload, note,
                       send_to_guest, set_agg)
from lib.nic import ifindex, parse_features, qstats

NICS = 1
PAYLOAD = 16 << 20
MTU = 1500
IPERF_SECONDS = 3


def setup(ctx):
    ctx.load_driver()
    ctx.config_ip(1)
    ctx.state["payload"] = make_payload(ctx.vm, PAYLOAD)
    ctx.state["port"] = 5100


def _port(ctx):
    ctx.state["port"] += 1
    return ctx.state["port"]


def _wait_path(ctx, v6=False):
    """Wait for carrier and for the peer to reach the guest."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    addr = vm.guest_ip6(1) if v6 else vm.guest_ip4(1)
    rc, _ = vm.run(f"for i in $(seq 150); do "
                   f"[ $(cat /sys/class/net/{ifn}/carrier) = 1 ] && "
                   f"exit 0; sleep 0.1; done; exit 1")
    ctx.expect(rc == 0, f"{ifn}: no carrier after 15s")
    rc, _ = vm.peer(1, f"for i in $(seq 20); do busybox ping -c 1 -W 1 "
                       f"{addr} >/dev/null && exit 0; done; exit 1",
                    timeout=60)
    ctx.expect(rc == 0, f"peer cannot reach {addr}")


def _snapshot(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    eth = ethtool_stats(vm, ifn) if ctx.driver == "vx3" else {}
    return dev_stats(vm, ifn), eth


def _transfer(ctx, on, v6):
    """Set the aggregation, send the payload; returns the counter deltas
    (dev_stats, ethtool -S) after checking integrity and drops."""
    ifn = ctx.ifname(1)
    set_agg(ctx, ifn, on)
    ctx.expect(agg_on(ctx, ifn) == on,
               f"aggregation did not turn {'on' if on else 'off'}: "
               f"{agg_state(ctx, ifn)}")
    _wait_path(ctx, v6)
    path, sha = ctx.state["payload"]
    dev0, eth0 = _snapshot(ctx)
    ok, got, dt, detail = send_to_guest(ctx, 1, path, v6, _port(ctx))
    dev1, eth1 = _snapshot(ctx)
    ctx.expect(ok, f"transfer to the guest failed: {detail}")
    ctx.expect(got == sha, f"payload corrupted: sent sha256 {sha}, guest "
                           f"got {got or 'nothing'} ({detail.strip()})")
    d_dev, d_eth = delta(dev0, dev1), delta(eth0, eth1)
    bad = drops(ctx, d_dev, d_eth)
    ctx.expect(not bad, f"driver drops during the transfer: {bad}")
    ctx.expect(d_dev["rx_bytes"] >= PAYLOAD,
               f"guest {ifn} counted {d_dev['rx_bytes']} rx bytes for a "
               f"{PAYLOAD}-byte transfer")
    fam = "ipv6" if v6 else "ipv4"
    note(f"{ctx.driver} {fam} {agg_state(ctx, ifn)}: {PAYLOAD >> 20} MiB in "
         f"{dt:.1f}s, rx_bytes/rx_packets "
         f"{d_dev['rx_bytes'] // max(d_dev['rx_packets'], 1)}")
    return d_dev, d_eth


def _check_on(ctx, d_dev, d_eth, fam):
    ratio = d_dev["rx_bytes"] / max(d_dev["rx_packets"], 1)
    ctx.expect(ratio > MTU + L2_MAX,
               f"aggregation on, but the stack received {ratio:.0f} bytes "
               f"per packet on average (MTU {MTU}): no aggregates")
    if ctx.driver != "vx3":
        return
    ctx.expect(LRO_PACKETS in d_eth, f"no ethtool -S {LRO_PACKETS}")
    pkts, segs = d_eth[LRO_PACKETS], d_eth[LRO_SEGS]
    ctx.expect(pkts > 0, f"lro on, but {LRO_PACKETS} did not "
                         f"rise (+{pkts}, segs +{segs})")
    ctx.expect(segs > pkts, f"{LRO_SEGS} rose by {segs} for {pkts} "
                            f"aggregates: not > 1 segment each")
    note(f"vx3 {fam} lro on: {pkts} aggregates, {segs} segments, "
         f"average {segs / pkts:.1f} segments and "
         f"{d_eth[LRO_BYTES] // pkts} bytes per aggregate")


def _check_off(ctx, d_dev, d_eth):
    ratio = d_dev["rx_bytes"] / max(d_dev["rx_packets"], 1)
    ctx.expect(ratio <= MTU + L2_MAX,
               f"aggregation off, but the stack received {ratio:.0f} bytes "
               f"per packet on average (MTU {MTU})")
    if ctx.driver != "vx3":
        return
    missing = [k for k in LRO_COUNTERS if k not in d_eth]
    ctx.expect(not missing, f"no ethtool -S {missing}")
    rose = {k: d_eth[k] for k in LRO_COUNTERS + ("rx0_body_bufs",)
            if d_eth[k]}
    # At MTU 1500 every frame fits its head buffer: a body buffer means a
    # frame larger than the MTU.
    ctx.expect(not rose, f"lro off, but counters rose: {rose}")


def _iperf(ctx, label):
    """Measure peer -> guest TCP throughput (printed, not asserted)."""
    out = iperf_peer_to_guest(ctx, IPERF_SECONDS)
    rate = iperf_rate(out)
    ctx.expect(rate > 0, f"iperf moved no data:\n{out}")
    note(f"{ctx.driver} iperf peer->guest {label}: {rate / 1e6:.0f} Mbit/s")


def test_default_on(ctx):
    """lro is on after probe; vx3 offers no rx-gro-hw (NETIF_F_GRO_HW) and
    reports no qstats rx-hw-gro-* counters: LRO aggregates are not HW-GRO
    by the qstats definition."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    ctx.expect(agg_on(ctx, ifn), f"not on by default: {agg_state(ctx, ifn)}")
    if ctx.driver == "vx3":
        f = parse_features(vm.check(f"ethtool -k {ifn}"))
        ctx.expect(f.get("rx-gro-hw") == (False, True),
                   f"vx3 must not offer rx-gro-hw: {f.get('rx-gro-hw')}")
        q = qstats(vm, ifindex(vm, ifn))
        gro = {k: v for k, v in q.items() if k.startswith("rx-hw-gro")}
        ctx.expect(not gro, f"vx3 reports qstats HW-GRO counters: {gro}")


def test_on_ipv4(ctx):
    d_dev, d_eth = _transfer(ctx, True, False)
    _check_on(ctx, d_dev, d_eth, "ipv4")
    _iperf(ctx, agg_state(ctx, ctx.ifname(1)))


def test_on_ipv6(ctx):
    d_dev, d_eth = _transfer(ctx, True, True)
    _check_on(ctx, d_dev, d_eth, "ipv6")


def test_off_ipv4(ctx):
    d_dev, d_eth = _transfer(ctx, False, False)
    _check_off(ctx, d_dev, d_eth)
    _iperf(ctx, agg_state(ctx, ctx.ifname(1)))


def test_off_ipv6(ctx):
    d_dev, d_eth = _transfer(ctx, False, True)
    _check_off(ctx, d_dev, d_eth)


def _rx_bytes(ctx):
    ifn = ctx.ifname(1)
    return int(ctx.vm.check(f"cat /sys/class/net/{ifn}/statistics/rx_bytes"))


def _flowing(ctx, what, need=1 << 20, timeout=20):
    """Expect the iperf stream to move `need` bytes within timeout s."""
    start = _rx_bytes(ctx)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(1)
        if _rx_bytes(ctx) - start >= need:
            return
    ctx.expect(False, f"iperf stream stalled {what}: "
                      f"{_rx_bytes(ctx) - start} bytes in {timeout}s")


def _carrier_changes(ctx):
    ifn = ctx.ifname(1)
    return int(ctx.vm.check(f"cat /sys/class/net/{ifn}/carrier_changes"))


def _rings(ctx):
    out = ctx.vm.check(f"ethtool -g {ctx.ifname(1)}")
    cur = out.split("Current hardware settings:")[1]
    vals = {}
    for key, arg in (("RX", "rx"), ("RX Jumbo", "rx-jumbo"), ("TX", "tx")):
        for line in cur.splitlines():
            if line.startswith(key + ":"):
                vals[arg] = line.split(":", 1)[1].strip()
    return " ".join(f"{k} {v}" for k, v in vals.items())


def test_toggle_under_traffic(ctx):
    """Aggregation on/off, MTU and ring changes under a peer -> guest
    stream; the stream keeps flowing and the data stays intact."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    set_agg(ctx, ifn, True)
    _wait_path(ctx)
    rings = _rings(ctx)
    srv = vm.bg("exec iperf -s -p 5003")
    cli = None
    try:
        rc, _ = vm.run("for i in $(seq 50); do netstat -ltn | "
                       "grep -q ':5003 ' && exit 0; sleep 0.1; done; exit 1")
        ctx.expect(rc == 0, "guest iperf server did not start")
        cli = vm.peer_bg(1, f"exec iperf -c {vm.guest_ip4(1)} -p 5003 "
                            f"-t 600 -i 5")
        _flowing(ctx, "before the changes")

        # A feature change is an UPDATE_FEATURE command, not a reset
        cc = _carrier_changes(ctx)
        if ctx.driver == "vx3":
            resets = ethtool_stats(vm, ifn)["resets"]
        # Aggregates complete around each switch: every one must still go
        # up with GSO metadata (else TCP warns "suspect GRO", a dmesg
        # failure)
        for on in (False, True) * 8:
            set_agg(ctx, ifn, on)
            time.sleep(0.3)
        ctx.expect(_carrier_changes(ctx) == cc,
                   f"toggling {agg_state(ctx, ifn).split(':')[0]} flapped "
                   f"the link (carrier_changes {cc} -> "
                   f"{_carrier_changes(ctx)})")
        if ctx.driver == "vx3":
            now = ethtool_stats(vm, ifn)["resets"]
            ctx.expect(now == resets, f"lro toggles reset the device "
                                      f"(resets {resets} -> {now})")
        _flowing(ctx, "after the feature toggles")

        for mtu in (9000, MTU):
            vm.check(f"ip link set {ifn} mtu {mtu}")
            time.sleep(1)
        vm.check(f"ethtool -G {ifn} rx 256 rx-jumbo 256 tx 256")
        time.sleep(1)
        vm.check(f"ethtool -G {ifn} {rings}")
        _flowing(ctx, "after the MTU and ring changes")
        ctx.expect(agg_on(ctx, ifn),
                   f"aggregation lost by the changes: {agg_state(ctx, ifn)}")
    finally:
        out = cli.stop() if cli else ""
        srv.stop()
    ctx.expect(not re.search(r"failed|refused|reset", out),
               f"iperf stream broke:\n{out}")

    d_dev, d_eth = _transfer(ctx, True, False)
    _check_on(ctx, d_dev, d_eth, "ipv4 after the changes")


def _restore_lro(ctx):
    """lro back on (the core never turns it on again by itself)."""
    ifn = ctx.ifname(1)
    set_agg(ctx, ifn, True)
    ctx.expect(agg_on(ctx, ifn), f"lro does not come back on after "
                                 f"forwarding/bridging ended: "
                                 f"{agg_state(ctx, ifn)}")


def test_forward_disables_lro(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    keys = ("net.ipv4.ip_forward", "net.ipv6.conf.all.forwarding")
    try:
        for key in keys:
            set_agg(ctx, ifn, True)
            ctx.expect(agg_on(ctx, ifn), f"lro not on: "
                                         f"{agg_state(ctx, ifn)}")
            vm.check(f"sysctl -qw {key}=1")
            state = agg_state(ctx, ifn)
            vm.check(f"sysctl -qw {key}=0")
            note(f"{ctx.driver} {key}=1: {state}")
            ctx.expect(not state.split()[1] == "on",
                       f"{key}=1 left lro on: {state}")
    finally:
        vm.run(" ; ".join(f"sysctl -qw {k}=0" for k in keys))
        _restore_lro(ctx)
    _wait_path(ctx)


def test_bridge_disables_lro(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    set_agg(ctx, ifn, True)
    addr = f"{vm.guest_ip4(1)}/24"
    try:
        vm.check(f"modprobe bridge && ip link add vbr0 type bridge && "
                 f"ip link set {ifn} master vbr0")
        state = agg_state(ctx, ifn)
        note(f"{ctx.driver} {ifn} in a bridge: {state}")
        ctx.expect(state.split()[1] != "on",
                   f"enslaving {ifn} to a bridge left lro on: {state}")
        vm.check(f"ip addr del {addr} dev {ifn} && "
                 f"ip addr add {addr} dev vbr0 && ip link set vbr0 up")
        _wait_path(ctx)
        path, sha = ctx.state["payload"]
        dev0, eth0 = _snapshot(ctx)
        ok, got, dt, detail = send_to_guest(ctx, 1, path, False, _port(ctx))
        dev1, eth1 = _snapshot(ctx)
        ctx.expect(ok, f"transfer through the bridge failed: {detail}")
        ctx.expect(got == sha, f"payload corrupted through the bridge: "
                               f"sent {sha}, got {got or 'nothing'}")
        d_dev, d_eth = delta(dev0, dev1), delta(eth0, eth1)
        note(f"{ctx.driver} through the bridge: {PAYLOAD >> 20} MiB in "
             f"{dt:.1f}s, rx_bytes/rx_packets "
             f"{d_dev['rx_bytes'] // max(d_dev['rx_packets'], 1)}")
        _check_off(ctx, d_dev, d_eth)
    finally:
        vm.run(f"ip link del vbr0; ip addr replace {addr} dev {ifn}")
        _restore_lro(ctx)
    _wait_path(ctx)
