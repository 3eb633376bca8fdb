# SPDX-License-Identifier: GPL-2.0
"""Lifecycle: module load/unload, PCI unbind/bind, down/up, link state.

carrier_at_open
    After `ip link set up` the carrier is 1 and operstate up; after down,
    operstate down; up again brings the carrier back.
rmmod_idle
    20 x (rmmod; modprobe; address, up, carrier), pings every 5th round.
    The interface must disappear with the module and come back bound to
    the driver. vx3: every page pool of the removed device must be gone
    (netdev netlink page-pool-get) within 5 s of rmmod; vmxnet3's pools
    are not bound to its net_device and not listed.
rmmod_traffic
    5 x rmmod while iperf runs both ways (counters checked to grow right
    before each), then modprobe; the iperf clients reconnect. At the end,
    with the traffic stopped and no TCP socket left in the guest, no
    destroyed page pool may still hold pages (vx3).
unbind_bind
    sysfs unbind/bind of the PCI device, 2 x idle and once under traffic;
    the interface comes back and passes traffic.
updown_traffic
    50 x `ip link set down; ip link set up` under iperf both ways; then
    traffic flows again. vx3: afterwards, once no TCP socket is left, the
    device has exactly one live page pool per RX queue and no destroyed
    pool holds pages.
set_link
    QEMU monitor `set_link nic1 off/on`: carrier and operstate follow,
    pings fail while off and work again after on; a repeated `on` does
    not flap the carrier (carrier_changes unchanged); a link switched off
    while the interface is down is reported as down at open, and comes up
    with `set_link on`.
wol_not_capable (vx3)
    On Debian's vmxnet3 model (no PCI power management capability, so
    no PME) vx3 offers no Wake-on-LAN: ethtool shows "Supports
    Wake-on: d" and `ethtool -s wol g` fails. test_wol.py and
    test_wake.py cover a function that can wake.

No dmesg warning may appear in any case (checked by the harness after each
case: WARNING, BUG, page_pool shutdown stalls, ...).

Before pools are expected gone, every guest CPU pings over loopback
(lib/nic.py flush_skb_defer()): a socket that frees a received skb on
another CPU defers it to the CPU that allocated it, which frees it at its
next NET_RX softirq; an idle CPU could otherwise hold a page of a
destroyed pool indefinitely (seen once in 7.3: "inflight 1" after
updown_traffic).
"""

import re
import time

from lib.nic import (FLUSH_SKB_DEFER, Traffic, diag, expect_flowing,
                     flush_skb_defer, ifindex, page_pools, ping, setup_nic,
                     wait_carrier, wait_no_tcp)
from lib.test import vx3_only

NICS = 1


def setup(ctx):
    setup_nic(ctx)


def _bring_up_script(ctx):
    """Guest shell lines: wait for NIC 1 to (re)appear bound to the driver,
    configure it, wait for carrier; print its name and ifindex."""
    vm, drv = ctx.vm, ctx.driver
    return (
        f"n=; for i in $(seq 100); do for a in /sys/class/net/*/address; do "
        f"grep -qs {vm.mac(1)} $a && n=$(basename ${{a%/address}}); done; "
        f"[ -n \"$n\" ] && break; sleep 0.1; done; "
        f"[ -n \"$n\" ] || {{ echo 'NIC did not come back'; exit 3; }}; "
        f"d=$(basename $(readlink /sys/class/net/$n/device/driver)); "
        f"[ $d = {drv} ] || {{ echo \"$n bound to $d\"; exit 4; }}; "
        f"ip addr add {vm.guest_ip4(1)}/24 dev $n && "
        f"ip -6 addr add {vm.guest_ip6(1)}/64 dev $n nodad && "
        f"ip link set $n up || exit 5; "
        f"for i in $(seq 150); do [ $(cat /sys/class/net/$n/carrier) = 1 ] "
        f"&& break; sleep 0.1; done; "
        f"[ $(cat /sys/class/net/$n/carrier) = 1 ] || "
        f"{{ echo \"$n: no carrier\"; exit 6; }}; "
        f"echo ifname=$n ifindex=$(cat /sys/class/net/$n/ifindex); ")


def _wait_gone_script(ctx):
    return (f"for i in $(seq 100); do grep -qs {ctx.vm.mac(1)} "
            f"/sys/class/net/*/address || break; sleep 0.1; done; "
            f"if grep -qs {ctx.vm.mac(1)} /sys/class/net/*/address; then "
            f"echo 'interface still present'; exit 2; fi; ")


def _parse_up(ctx, out):
    line = [ln for ln in out.splitlines() if ln.startswith("ifname=")]
    ctx.expect(line, f"no interface after bring-up:\n{out}")
    name, idx = (w.split("=")[1] for w in line[-1].split())
    ctx.state["if1"] = name
    return int(idx)


def _own_pools(ctx, idx, pools):
    return [p for p in pools if p.get("ifindex") == idx]


def _expect_pools_gone(ctx, ids, what):
    """Destroyed pools (ids) must disappear within 5 s (no pages left)."""
    flush_skb_defer(ctx.vm)
    deadline = time.monotonic() + 5
    while True:
        left = [p for p in page_pools(ctx.vm) if p["id"] in ids]
        if not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: page pools of the removed device "
                                 f"still exist: {left}")
        time.sleep(0.5)


def test_carrier_at_open(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    wait_carrier(ctx)
    vm.check(f"ip link set {ifn} down")
    wait_carrier(ctx, up=False)
    vm.check(f"ip link set {ifn} up")
    wait_carrier(ctx)
    ping(ctx)


def _reload_script(ctx, idx, pools):
    """Guest shell: rmmod, interface gone, (vx3, pools: every page pool of
    ifindex idx gone within 5 s), modprobe, bring NIC 1 up again."""
    drv = ctx.driver
    s = ""
    if pools:
        s += (f"ids=$(vx3-nl page-pools | grep ' ifindex={idx} ' | "
              f"sed 's/^page-pool id=\\([0-9]*\\) .*/\\1/'); "
              f"[ -n \"$ids\" ] || {{ echo 'no page pool of ifindex {idx} "
              f"is visible over netlink'; vx3-nl page-pools; exit 9; }}; ")
    s += f"rmmod {drv} || exit 1; " + _wait_gone_script(ctx)
    if pools:
        s += FLUSH_SKB_DEFER
        s += ("for t in $(seq 50); do pp=$(vx3-nl page-pools); left=; "
              "for id in $ids; do echo \"$pp\" | grep -q \"^page-pool "
              "id=$id \" && left=\"$left $id\"; done; [ -z \"$left\" ] && "
              "break; sleep 0.1; done; if [ -n \"$left\" ]; then "
              "echo \"page pools of the removed device left:\"; "
              "echo \"$pp\"; exit 10; fi; ")
    return s + f"modprobe {drv} || exit 1; " + _bring_up_script(ctx)


def _reload(ctx, what, pools=False):
    """rmmod + modprobe + bring-up in one guest command; returns the new
    ifindex."""
    vm = ctx.vm
    idx = int(vm.check(f"cat /sys/class/net/{ctx.ifname(1)}/ifindex"))
    rc, out = vm.run(_reload_script(ctx, idx, pools), timeout=120)
    ctx.expect(rc == 0, f"{what}: rmmod/modprobe {ctx.driver} failed "
               f"(rc={rc}):\n{out}")
    return _parse_up(ctx, out)


def test_rmmod_idle(ctx):
    # vmxnet3's page pools are not tied to its net_device: not listed.
    for i in range(20):
        _reload(ctx, f"round {i}", pools=ctx.driver == "vx3")
        if i % 5 == 4:
            ping(ctx)
            ping(ctx, v6=True, peer=True)


def test_rmmod_traffic(ctx):
    vm = ctx.vm
    removed = set()
    with Traffic(ctx, port=5310):
        for i in range(5):
            idx = ifindex(vm, ctx.ifname(1))
            removed |= {p["id"] for p in
                        _own_pools(ctx, idx, page_pools(vm))}
            expect_flowing(ctx, f"round {i}: traffic before rmmod")
            _reload(ctx, f"round {i}, under traffic")
        ping(ctx)
    if ctx.driver == "vx3":
        ctx.expect(removed, "no page pool was visible over netlink")
    _expect_drained(ctx, removed, "after rmmod under traffic")


def _expect_drained(ctx, ids, what):
    """Once the guest's TCP sockets are gone (they may hold received
    pages), pools with these ids must be gone as well."""
    ok, out = wait_no_tcp(ctx)
    ctx.expect(ok, f"{what}: TCP sockets do not go away:\n{out}")
    _expect_pools_gone(ctx, ids, what)


def test_unbind_bind(ctx):
    vm, drv = ctx.vm, ctx.driver
    pci = vm.check(f"basename $(readlink /sys/class/net/{ctx.ifname(1)}"
                   f"/device)").strip()
    sysdrv = f"/sys/bus/pci/drivers/{drv}"
    for i in range(3):
        traffic = Traffic(ctx, port=5330 + 2 * i) if i == 2 else None
        if traffic:
            traffic.start()
            expect_flowing(ctx, f"round {i}: traffic before unbind")
        try:
            rc, out = vm.run(f"echo {pci} >{sysdrv}/unbind || exit 1; " +
                             _wait_gone_script(ctx) +
                             f"if [ -e /sys/bus/pci/devices/{pci}/driver ]; "
                             f"then echo 'still bound'; exit 7; fi; "
                             f"echo {pci} >{sysdrv}/bind || exit 8; " +
                             _bring_up_script(ctx), timeout=90)
        finally:
            if traffic:
                traffic.stop()
        ctx.expect(rc == 0, f"round {i}: unbind/bind of {pci} failed "
                   f"(rc={rc}):\n{out}")
        _parse_up(ctx, out)
        ping(ctx)


def test_updown_traffic(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    idx = int(vm.check(f"cat /sys/class/net/{ifn}/ifindex"))
    with Traffic(ctx, port=5350):
        expect_flowing(ctx, "traffic before down/up")
        rc, out = vm.run(f"for i in $(seq 50); do ip link set {ifn} down "
                         f"&& ip link set {ifn} up || exit 1; done",
                         timeout=300)
        ctx.expect(rc == 0, f"down/up loop failed:\n{out}")
        wait_carrier(ctx)
        ping(ctx)
        expect_flowing(ctx, "traffic after 50 x down/up")
    pools = page_pools(vm)
    own = _own_pools(ctx, idx, pools)
    if ctx.driver == "vx3":
        live = [p for p in own if "detach-time" not in p]
        rxq = len(vm.check(f"ls -d /sys/class/net/{ifn}/queues/rx-*")
                  .split())
        ctx.expect(len(live) == rxq, f"expected {rxq} live page pool(s) "
                   f"of ifindex {idx}, one per RX queue, got: {own}")
        destroyed = {p["id"] for p in pools} - {p["id"] for p in live}
        diag(f"vx3: {len(destroyed)} destroyed pools still draining "
             f"after down/up")
        _expect_drained(ctx, destroyed, "after 50 x down/up")


def _carrier_changes(ctx):
    return int(ctx.vm.check(f"cat /sys/class/net/{ctx.ifname(1)}"
                            f"/carrier_changes"))


def _expect_no_ping(ctx):
    rc, out = ctx.vm.run(f"ping -c 2 -i 0.2 -W 1 {ctx.vm.peer_ip4(1)}",
                         timeout=30)
    ctx.expect(rc != 0, f"ping passed while the link was off:\n{out}")


def test_set_link(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    wait_carrier(ctx)
    try:
        vm.monitor("set_link nic1 off")
        wait_carrier(ctx, up=False)
        _expect_no_ping(ctx)
        vm.monitor("set_link nic1 on")
        wait_carrier(ctx)
        ping(ctx)

        # A link event without a change must not flap the carrier.
        n = _carrier_changes(ctx)
        vm.monitor("set_link nic1 on")
        time.sleep(2)
        wait_carrier(ctx)
        ctx.expect(_carrier_changes(ctx) == n,
                   f"carrier_changes went from {n} to "
                   f"{_carrier_changes(ctx)} on a redundant set_link on")

        # Link lost while the interface is down: open must see it.
        vm.check(f"ip link set {ifn} down")
        vm.monitor("set_link nic1 off")
        vm.check(f"ip link set {ifn} up")
        time.sleep(2)
        wait_carrier(ctx, up=False)
        vm.monitor("set_link nic1 on")
        wait_carrier(ctx)
        ping(ctx)
        ping(ctx, v6=True, peer=True)
    finally:
        vm.monitor("set_link nic1 on")


@vx3_only
def test_wol_not_capable(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    bdf = vm.check(f"basename $(readlink /sys/class/net/{ifn}/device)").strip()
    cfg = bytes.fromhex(vm.check(f"od -An -tx1 -v /sys/bus/pci/devices/"
                                 f"{bdf}/config").replace(" ", "")
                        .replace("\n", ""))
    caps, pos = [], cfg[0x34] if cfg[0x06] & 0x10 else 0
    while pos and len(caps) < 48:
        caps.append(cfg[pos])
        pos = cfg[pos + 1]
    diag(f"PCI capabilities: {[hex(c) for c in caps]}")
    if 0x01 in caps:
        ctx.skip("this vmxnet3 model has a PCI power management capability")
    out = vm.check(f"ethtool {ifn}")
    sup = re.search(r"Supports Wake-on: (\w+)", out)
    ctx.expect(sup and sup.group(1) == "d", f"Wake-on-LAN offered by a "
               f"function without PME: {sup and sup.group(0)}")
    rc, out = vm.run(f"ethtool -s {ifn} wol g")
    ctx.expect(rc != 0, f"ethtool -s wol g succeeded without PME: {out}")
