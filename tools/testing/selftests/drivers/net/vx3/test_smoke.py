# SPDX-License-Identifier: GPL-2.0
"""Smoke test: load the driver, link, ping v4/v6 both ways, iperf both ways.

Asserts only that things work and bytes move, never timings.
"""

from lib.nic import ifindex, page_pools
from lib.test import iperf_bytes, iperf_guest_to_peer, iperf_peer_to_guest

NICS = 1
# Also with every DMA bounced (swiotlb=force) and behind an IOMMU.
VARIANTS = ("default", "swiotlb", "iommu")
IPERF_SECONDS = 5


def setup(ctx):
    ctx.load_driver()
    ctx.config_ip(1)


def test_link(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    rc, out = vm.run(f"for i in $(seq 100); do "
                     f"[ $(cat /sys/class/net/{ifn}/carrier) = 1 ] && "
                     f"[ $(cat /sys/class/net/{ifn}/operstate) = up ] && "
                     f"exit 0; sleep 0.1; done; ip link show {ifn}; exit 1")
    ctx.expect(rc == 0, f"{ifn}: no carrier / not up after 10s:\n{out}")
    speed = vm.run(f"cat /sys/class/net/{ifn}/speed")[1].strip()
    vm.peer_check(1, f"ip link show {vm.tap(1)} | grep -q LOWER_UP")
    ctx.expect(speed.lstrip("-").isdigit(), f"unreadable speed {speed!r}")


def _ping_both(ctx, fam, gip, pip):
    # busybox ping on both sides: the host may have no iputils-ping.
    vm = ctx.vm
    rc, out = vm.run(f"ping {fam} -c 3 -W 5 {pip}", timeout=30)
    ctx.expect(rc == 0, f"guest -> peer ping {pip} failed:\n{out}")
    rc, out = vm.peer(1, f"busybox ping {fam} -c 3 -W 5 {gip}", timeout=30)
    ctx.expect(rc == 0, f"peer -> guest ping {gip} failed:\n{out}")


def test_ping4(ctx):
    vm = ctx.vm
    _ping_both(ctx, "-4", vm.guest_ip4(1), vm.peer_ip4(1))


def test_ping6(ctx):
    vm = ctx.vm
    _ping_both(ctx, "-6", vm.guest_ip6(1), vm.peer_ip6(1))


def test_page_pools(ctx):
    """One live page pool per RX queue, bound to the netdev (page-pool
    netlink): vx3's design and that of the patched vmxnet3, whose series
    binds the queues' pools to the netdev. The stock vmxnet3 binds none.
    For the patched driver this also shows that the module under test is
    the patched one (a patch that did not apply once built the stock
    driver as "patched" without a word)."""
    if ctx.driver == "vmxnet3" and not ctx.patched:
        ctx.skip("the stock vmxnet3 binds no page pool to its netdev")
    vm, ifn = ctx.vm, ctx.ifname(1)
    idx = ifindex(vm, ifn)
    live = [p for p in page_pools(vm)
            if p.get("ifindex") == idx and "detach-time" not in p]
    rxq = len(vm.check(f"ls -d /sys/class/net/{ifn}/queues/rx-*").split())
    ctx.expect(len(live) == rxq, f"{ifn}: {len(live)} live page pool(s) "
               f"for {rxq} RX queue(s): {live}")


def test_iperf_tx(ctx):
    """Guest transmits to the peer (driver TX path)."""
    out = iperf_guest_to_peer(ctx, IPERF_SECONDS)
    n = iperf_bytes(out)
    ctx.expect(n > 0, f"guest -> peer TCP moved no bytes:\n{out}")


def test_iperf_rx(ctx):
    """Peer transmits to the guest (driver RX path)."""
    out = iperf_peer_to_guest(ctx, IPERF_SECONDS)
    n = iperf_bytes(out)
    ctx.expect(n > 0, f"peer -> guest TCP moved no bytes:\n{out}")
