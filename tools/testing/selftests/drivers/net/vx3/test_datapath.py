# SPDX-License-Identifier: GPL-2.0
"""Datapath: frame sizes across the RX buffer edges, payload integrity.

The peer's tap runs at MTU 9000 throughout, so it can send the guest frames
larger than the guest's MTU 1500 (the device does not enforce the MTU on
receive), and the guest's RX path sees every size whatever its MTU.

vx3's RX buffers: a head buffer (ring 0) holding 1664 bytes of frame at MTU
1500 and 3712 bytes at MTU 9000, then body pages of 4096 bytes (ring 1).
The head buffer is a page_pool fragment of the next power of two above
headroom + MTU + VLAN Ethernet header + skb_shared_info, at most a page:
2048 or 4096 bytes less 64 of headroom (NET_SKB_PAD; NET_IP_ALIGN is 0 on
x86) and 320 of skb_shared_info.

ping_mtu1500, ping_mtu9000
    ICMP echo v4 and v6, both directions, with frames of 60 bytes and
    around the buffer edges (MTU 1500: 1514, 1664, 1665 and an 8000-byte
    fragmented ping; MTU 9000: 3712, 3713, 7808, 7809, 9014 = maximum
    payload 8972 / 8952). Every ping must get all its replies.
rx_split_mtu1500, rx_split_mtu9000 (vx3 only: driver counters)
    20 exactly-sized UDP/IPv4 frames from the peer at each edge; the
    driver's rx0_body_bufs must grow by (verified datagrams) x (body
    buffers the size needs): 0 up to the head size, then one per started
    4096 bytes.
tcp_integrity_mtu1500, tcp_integrity_mtu9000
    32 MiB (MTU 1500, IPv4) and 16 MiB (MTU 9000, IPv6) of random data over
    TCP each way; SHA-256 compared at both ends (peer -> guest exercises
    LRO aggregates).
udp_integrity_mtu1500, udp_integrity_mtu9000
    vx3-udp datagrams of random sizes (16..4000 bytes at MTU 1500, i.e.
    partly IP-fragmented; 16..8972 at MTU 9000) each way, every arrived
    datagram verified byte for byte; corruption or duplication fails,
    losses are reported (TAP diagnostics), not asserted.
"""

import os
import shlex

from lib.nic import (ICMP4_OVERHEAD, ICMP6_OVERHEAD, diag, ethtool_stats, kv,
                     link_stats, only_vx3, ping, ping_sizes, setup_nic,
                     tcp_integrity, tool, udp_drops, udp_integrity,
                     wait_carrier)

NICS = 1

HEAD_1500 = 1664
HEAD_9000 = 3712
BODY = 4096
MAX_FRAME_9000 = 9000 + 14

UDP4_OVERHEAD = 14 + 20 + 8
UDP6_OVERHEAD = 14 + 40 + 8


def setup(ctx):
    setup_nic(ctx)
    vm = ctx.vm
    vm.peer_check(1, f"ip link set {vm.tap(1)} mtu 9000")


def _set_mtu(ctx, mtu):
    ctx.vm.check(f"ip link set {ctx.ifname(1)} mtu {mtu}")
    wait_carrier(ctx)
    # An MTU change re-creates vx3's queues: wait until traffic passes.
    ping(ctx)


def _ping_frames(ctx, frames):
    """Echo frames of these sizes (the smallest ping for frames below the
    minimum) both ways, IPv4 and IPv6."""
    for v6, over in ((False, ICMP4_OVERHEAD), (True, ICMP6_OVERHEAD)):
        sizes = [max(frame - over, 0) for frame in frames]
        ping_sizes(ctx, sizes, v6=v6, peer=True)
        ping_sizes(ctx, sizes, v6=v6)


def test_ping_mtu1500(ctx):
    _set_mtu(ctx, 1500)
    _ping_frames(ctx, (60, 1514, HEAD_1500, HEAD_1500 + 1))
    ping_sizes(ctx, [8000], peer=True)
    ping_sizes(ctx, [8000], v6=True)


def _bodies(frame, head):
    return 0 if frame <= head else -(-(frame - head) // BODY)


def _rx_split(ctx, frames, head):
    """Send 20 UDP datagrams per frame size; check rx0_body_bufs."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    seed = int.from_bytes(os.urandom(3), "big")
    ports = [5520 + k for k in range(len(frames))]
    sizes = [frame - UDP4_OVERHEAD for frame in frames]
    # A verifying receiver per frame size, all listening from the start
    job = vm.bg("".join(f"vx3-udp recv {p} 20 {n} {n} {seed} 2000 "
                        f">/tmp/split.{p} 2>&1 & " for p, n in
                        zip(ports, sizes)) + "wait")
    try:
        rc, out = vm.run("for i in $(seq 100); do n=$(netstat -lun | grep -c "
                         "':55[2-9][0-9] '); [ $n -ge " + str(len(ports)) +
                         " ] && exit 0; sleep 0.1; done; netstat -lun; exit 1")
        ctx.expect(rc == 0, f"guest vx3-udp receivers did not start:\n{out}")
        bufs = ethtool_stats(vm, ifn)["rx0_body_bufs"]
        for frame, port, size in zip(frames, ports, sizes):
            vm.peer_check(1, f"{shlex.quote(tool(vm, 'vx3-udp'))} send "
                          f"{vm.guest_ip4(1)} {port} 20 {size} {size} "
                          f"{seed} 500")
            out = vm.check(f"for i in $(seq 50); do grep -q received= "
                           f"/tmp/split.{port} && break; sleep 0.1; done; "
                           f"cat /tmp/split.{port}; ethtool -S {ifn} | "
                           f"grep rx0_body_bufs")
            res = [ln for ln in out.splitlines()
                   if ln.startswith("received=")]
            ctx.expect(res, f"no result for {frame}-byte frames:\n{out}")
            r = kv(res[0])
            now = int(out.split("rx0_body_bufs:")[1].split()[0])
            got, bufs = now - bufs, now
            want = r["ok"] * _bodies(frame, head)
            ctx.expect(r["corrupt"] == 0 and r["dup"] == 0 and r["ok"] > 0,
                       f"{frame}-byte frames: {out}")
            ctx.expect(got == want,
                       f"{frame}-byte frames (head buffer {head}): "
                       f"rx0_body_bufs grew by {got}, expected {want} "
                       f"({r['ok']} datagrams x {_bodies(frame, head)} "
                       f"body buffers)")
    finally:
        job.stop()


@only_vx3("checks vx3's RX buffer layout with its rx0_body_bufs counter")
def test_rx_split_mtu1500(ctx):
    _set_mtu(ctx, 1500)
    _rx_split(ctx, (1514, HEAD_1500, HEAD_1500 + 1, 5000), HEAD_1500)


def test_tcp_integrity_mtu1500(ctx):
    _set_mtu(ctx, 1500)
    n = 32 << 20
    tcp_integrity(ctx, n, rx=True, port=5401)
    tcp_integrity(ctx, n, rx=False, port=5402)


def _udp_both(ctx, lo, hi, v6):
    vm, ifn = ctx.vm, ctx.ifname(1)
    for rx in (True, False):
        a, sa = link_stats(vm, ifn), udp_drops(vm)
        r = udp_integrity(ctx, rx, 4000, lo, hi, 2000, v6=v6,
                          port=5510 if rx else 5511)
        b, sb = link_stats(vm, ifn), udp_drops(vm)
        drops = ", ".join(f"{k} +{b[k] - a[k]}" for k in
                          ("rx_dropped", "rx_missed_errors", "tx_dropped")
                          if b.get(k, 0) != a.get(k, 0))
        diag(f"{ctx.driver} UDP {'peer -> guest' if rx else 'guest -> peer'}"
             f" {lo}..{hi} bytes, v{6 if v6 else 4}: {r['ok']} of 4000 "
             f"verified, {r['lost']} lost (guest socket drops "
             f"+{sb - sa}{', ' + drops if drops else ''})")
        ctx.expect(r["ok"] > 0, f"no UDP datagram arrived: {r}")


def test_udp_integrity_mtu1500(ctx):
    _set_mtu(ctx, 1500)
    _udp_both(ctx, 16, 4000, v6=False)


def test_ping_mtu9000(ctx):
    _set_mtu(ctx, 9000)
    _ping_frames(ctx, (60, HEAD_9000, HEAD_9000 + 1, HEAD_9000 + BODY,
                       HEAD_9000 + BODY + 1, MAX_FRAME_9000))


@only_vx3("checks vx3's RX buffer layout with its rx0_body_bufs counter")
def test_rx_split_mtu9000(ctx):
    _set_mtu(ctx, 9000)
    _rx_split(ctx, (HEAD_9000, HEAD_9000 + 1, HEAD_9000 + BODY,
                    HEAD_9000 + BODY + 1, MAX_FRAME_9000), HEAD_9000)


def test_tcp_integrity_mtu9000(ctx):
    _set_mtu(ctx, 9000)
    n = 16 << 20
    tcp_integrity(ctx, n, rx=True, v6=True, port=5403)
    tcp_integrity(ctx, n, rx=False, v6=True, port=5404)


def test_udp_integrity_mtu9000(ctx):
    _set_mtu(ctx, 9000)
    _udp_both(ctx, 16, 8972, v6=True)
