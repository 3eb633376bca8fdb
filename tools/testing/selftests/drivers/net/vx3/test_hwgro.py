# SPDX-License-Identifier: GPL-2.0
"""HW-GRO: the device's TCP aggregates on the receive path.

The peer namespace sends a random file to the guest over TCP (IPv4 and
IPv6) with the device's aggregation on and off; the SHA-256 must match at
both ends. On vx3 (rx-gro-hw) the aggregate counters must rise while on and
stay still while off, where no frame may exceed the MTU (no body buffer is
used at MTU 1500). For every driver (vmxnet3: lro) the stack must see
packets larger than the MTU on average while on and none while off
(rx_bytes / rx_packets). Aggregation is then toggled, and MTU and ring
sizes changed, under an iperf stream, which must keep flowing.

Aggregate sizes and iperf throughput are printed as TAP comments, never
asserted.
"""

import re
import time

from lib.test import iperf_peer_to_guest
from lib.hwgro import (L2_MAX, agg_on, agg_state, delta, dev_stats, drops,
                       ethtool_stats, iperf_rate, make_payload, note,
                       send_to_guest, set_agg)

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
    pkts, segs = d_eth["rx0_hw_gro_packets"], d_eth["rx0_hw_gro_segs"]
    ctx.expect(pkts > 0, f"rx-gro-hw on, but rx0_hw_gro_packets did not "
                         f"rise (+{pkts}, segs +{segs})")
    ctx.expect(segs > pkts, f"rx0_hw_gro_segs rose by {segs} for {pkts} "
                            f"aggregates: not > 1 segment each")
    note(f"vx3 {fam} rx-gro-hw on: {pkts} aggregates, {segs} segments, "
         f"average {segs / pkts:.1f} segments and "
         f"{d_eth['rx0_hw_gro_bytes'] // pkts} bytes per aggregate")


def _check_off(ctx, d_dev, d_eth):
    ratio = d_dev["rx_bytes"] / max(d_dev["rx_packets"], 1)
    ctx.expect(ratio <= MTU + L2_MAX,
               f"aggregation off, but the stack received {ratio:.0f} bytes "
               f"per packet on average (MTU {MTU})")
    if ctx.driver != "vx3":
        return
    rose = {k: d_eth[k] for k in ("rx0_hw_gro_packets", "rx0_hw_gro_segs",
                                  "rx0_hw_gro_bytes", "rx0_body_bufs")
            if d_eth[k]}
    # At MTU 1500 every frame fits its head buffer: a body buffer means a
    # frame larger than the MTU.
    ctx.expect(not rose, f"rx-gro-hw off, but counters rose: {rose}")


def _iperf(ctx, label):
    """Measure peer -> guest TCP throughput (printed, not asserted)."""
    out = iperf_peer_to_guest(ctx, IPERF_SECONDS)
    rate = iperf_rate(out)
    ctx.expect(rate > 0, f"iperf moved no data:\n{out}")
    note(f"{ctx.driver} iperf peer->guest {label}: {rate / 1e6:.0f} Mbit/s")


def test_default_on(ctx):
    """The device's aggregation is on after probe; vx3 never offers LRO."""
    ifn = ctx.ifname(1)
    ctx.expect(agg_on(ctx, ifn), f"not on by default: {agg_state(ctx, ifn)}")
    if ctx.driver == "vx3":
        out = ctx.vm.check(f"ethtool -k {ifn}")
        ctx.expect("large-receive-offload: off [fixed]" in out,
                   f"vx3 must not offer NETIF_F_LRO:\n{out}")


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
        for on in (False, True, False, True):
            set_agg(ctx, ifn, on)
            time.sleep(0.5)
        ctx.expect(_carrier_changes(ctx) == cc,
                   f"toggling {agg_state(ctx, ifn).split(':')[0]} flapped "
                   f"the link (carrier_changes {cc} -> "
                   f"{_carrier_changes(ctx)})")
        if ctx.driver == "vx3":
            now = ethtool_stats(vm, ifn)["resets"]
            ctx.expect(now == resets, f"rx-gro-hw toggles reset the device "
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
