# SPDX-License-Identifier: GPL-2.0
"""Life-cycle faults under traffic: PCIe hot-unplug and replug, and
reconfiguration churn from parallel loops.

hotunplug_traffic
    NIC 1 sits on its own PCIe root port. While iperf runs both ways, QMP
    device_del unplugs it (the guest's pciehp removes the device, so the
    driver's remove runs with traffic in flight): the interface must go
    away without a hang or a splat. device_add then plugs a NIC with the
    same MAC and backend into the same port; the driver probes it and it
    carries traffic. Done twice.
churn_integrity
    Three guest loops run in parallel for a bounded time: ip link
    down/up, ethtool -G ring sizes (and -L TX channels on vx3), and
    ethtool -K offloads. Meanwhile 8 MiB TCP transfers of random data
    alternate peer -> guest and guest -> peer, one after the other; each
    must arrive intact (SHA-256 at both ends). Traffic flows once the
    loops stop. The harness fails the case on any splat in dmesg.
    vx3: the offloads loop also sets a new RSS key (ethtool -X hkey,
    two keys in turn) and the TCP/IPv4 hash fields (ethtool -N
    rx-flow-hash tcp4 sd, sdfn), which activate the device again from
    its device work, racing the other loops' reconfigurations.

    The loops run for 40 s, or VX3_CHURN_SECONDS: `make soak` (not in
    make check) runs this file on the debug kernel with the churn lasting
    SOAK_MINUTES (default 30), and with bulk iperf traffic both ways
    (lib/nic.py Traffic, reconnecting whenever a reconfiguration breaks
    a connection) beside the integrity transfers.
rss_lock_order (vx3, debug kernel)
    A new RSS key and new TCP/IPv4 hash fields, then both back (after
    the churn's own): lockdep (/proc/lockdep) must have recorded no
    dependency from the ethtool core's rss_lock to a netdev instance
    lock. The core takes the instance lock first for drivers that use
    it, and lockdep has one class for every device's: an instance lock
    taken under rss_lock (as stopping NAPI takes it) is a lock inversion,
    reported as soon as any such driver did an RSS operation on the same
    boot. Needs two RX queues (RSS on; with one, a new key changes
    nothing in the device); skips without lockdep (Debian's kernel).
"""

import contextlib
import os
import threading
import time

from lib.nic import (Traffic, diag, expect_flowing, ping, setup_nic,
                     tcp_integrity, wait_carrier)

NICS = 1
# lib/vm.py: put every NIC on its own pcie-root-port (hotplug capable)
ROOT_PORTS = True

CHURN_SECONDS = int(os.environ.get("VX3_CHURN_SECONDS", "40"))
# Bulk traffic beside the integrity transfers only in a soak
SOAK = "VX3_CHURN_SECONDS" in os.environ
# Two RSS keys the churn sets in turn
KEYS = [":".join(f"{(i * m + 7) & 0xff:02x}" for i in range(40))
        for m in (37, 101)]


def setup(ctx):
    setup_nic(ctx)


def _nic_present(vm):
    rc, _ = vm.run(f"grep -qs {vm.mac(1)} /sys/class/net/*/address")
    return rc == 0


def _wait(cond, timeout, step=0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return cond()


def _unplug(ctx):
    vm = ctx.vm
    # The wait below for QEMU to drop nic1 means nothing unless
    # query-pci shows it now
    ctx.expect(_listed(vm, "nic1"), "query-pci does not list nic1 before "
               "device_del")
    vm.qmp("device_del", id="nic1")
    # pciehp waits 5 s for a cancel of the attention button press
    ctx.expect(_wait(lambda: not _nic_present(vm), 60),
               "the interface is still there 60 s after device_del")
    ctx.expect(_wait(lambda: not _listed(vm, "nic1"), 30),
               "QEMU still lists nic1 after the guest removed it")


def _listed(vm, qdev_id):
    return any(d.get("qdev_id") == qdev_id for d in _pci_devices(vm))


def _pci_devices(vm):
    devs = []
    for bus in vm.qmp("query-pci"):
        for d in bus.get("devices", []):
            devs.append(d)
            for b in (d.get("pci_bridge", {}).get("devices") or []):
                devs.append(b)
    return devs


def _replug(ctx):
    vm = ctx.vm
    vm.qmp("device_add", driver="vmxnet3", id="nic1", netdev="n1",
           mac=vm.mac(1), bus="rp1")
    ctx.expect(_wait(lambda: _nic_present(vm), 60),
               "no interface 60 s after device_add")
    ifn = ctx.ifname(1)
    drv = vm.check(f"basename $(readlink /sys/class/net/{ifn}/device/"
                   f"driver)").strip()
    ctx.expect(drv == ctx.driver, f"replugged NIC bound to {drv}")
    ctx.config_ip(1)
    wait_carrier(ctx)


def test_hotunplug_traffic(ctx):
    for rnd in range(2):
        with Traffic(ctx, port=5720 + 10 * rnd, parallel=2):
            expect_flowing(ctx, f"traffic before unplug {rnd + 1}")
            _unplug(ctx)
        _replug(ctx)
        ping(ctx)
        with Traffic(ctx, port=5760 + 10 * rnd):
            expect_flowing(ctx, f"traffic after replug {rnd + 1}")


def _churn_script(ctx, seconds):
    """Guest shell: three loops in parallel for `seconds`, each failing
    the script if a command fails."""
    ifn = ctx.ifname(1)
    rings = ("for r in 256 64 1024 512; do "
             f"ethtool -G {ifn} rx $r tx $r || exit 11; sleep 0.3; done")
    if ctx.driver == "vx3":
        rings += (f"; ethtool -L {ifn} tx 1 || exit 12; sleep 0.3; "
                  f"ethtool -L {ifn} tx 0 || exit 13")
    offl = (f"for f in lro tso tx; do ethtool -K {ifn} $f off || exit 21; "
            f"sleep 0.3; ethtool -K {ifn} $f on || exit 22; sleep 0.3; done")
    if ctx.driver == "vx3":
        offl += (f"; for k in {' '.join(KEYS)}; do "
                 f"ethtool -X {ifn} hkey $k || exit 23; sleep 0.3; done; "
                 f"ethtool -N {ifn} rx-flow-hash tcp4 sd || exit 24; "
                 f"sleep 0.3; "
                 f"ethtool -N {ifn} rx-flow-hash tcp4 sdfn || exit 25")
    updown = (f"ip link set {ifn} down || exit 31; sleep 0.2; "
              f"ip link set {ifn} up || exit 32; sleep 1")
    loop = "end=$(($(date +%s) + {s})); while [ $(date +%s) -lt $end ]; " \
           "do {body}; done"
    parts = [loop.format(s=seconds, body=b) for b in (rings, offl, updown)]
    return ("pids=; " + " ".join(f"( {p} ) & pids=\"$pids $!\";"
                                 for p in parts) +
            " rc=0; for p in $pids; do wait $p || rc=$?; done; exit $rc")


def test_churn_integrity(ctx):
    vm = ctx.vm
    res = {}

    def churn():
        res["churn"] = vm.run(_churn_script(ctx, CHURN_SECONDS),
                              timeout=CHURN_SECONDS + 120)

    bulk = Traffic(ctx, port=5871) if SOAK else contextlib.nullcontext()
    t = threading.Thread(target=churn, daemon=True)
    with bulk:
        t.start()
        # 8 MiB transfers, alternately peer -> guest and guest -> peer,
        # one after the other for as long as the churn goes on (two at
        # least; ports 5791..5870)
        n = 0
        while t.is_alive() or n < 2:
            tcp_integrity(ctx, 8 << 20, rx=n % 2 == 0, port=5791 + n % 80)
            n += 1
        t.join(CHURN_SECONDS + 150)
    ctx.expect("churn" in res, "the churn loops did not finish")
    rc, out = res["churn"]
    ctx.expect(rc == 0, f"a churn loop failed (rc={rc}):\n{out}")
    wait_carrier(ctx)
    diag(f"{ctx.driver}: {n} transfers of 8 MiB intact during "
         f"{CHURN_SECONDS} s of churn")
    ping(ctx)
    with Traffic(ctx, port=5835):
        expect_flowing(ctx, "traffic after the churn")


def _lock_deps(text, name):
    """The classes lockdep saw taken directly under the class name, from
    /proc/lockdep's listing (a class line, then its " -> " lines)."""
    deps, cur = set(), None
    for line in text.splitlines():
        if line.startswith(" -> "):
            if cur == name:
                deps.add(line.split("] ", 1)[-1].strip())
        elif line.strip():
            cur = line.rsplit(": ", 1)[-1].strip()
    return deps


def test_rss_lock_order(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    if ctx.driver != "vx3":
        ctx.skip("vx3 only")
    if vm.run("test -r /proc/lockdep")[0]:
        ctx.skip("no lockdep in this kernel (the debug kernel has it)")
    nrx = int(vm.check(f"ls -d /sys/class/net/{ifn}/queues/rx-* | wc -l"))
    if nrx < 2:
        ctx.skip("one RX queue: RSS is off")
    for cmd in (f"-X {ifn} hkey {KEYS[0]}", f"-N {ifn} rx-flow-hash tcp4 sd",
                f"-N {ifn} rx-flow-hash tcp4 sdfn", f"-X {ifn} hkey {KEYS[1]}"):
        vm.check(f"ethtool {cmd}")
    wait_carrier(ctx)
    ping(ctx)
    # Each class line of rss_lock's class, and the " -> " lines under it
    text = vm.check("awk '!/^ -> /{p = /rss_lock$/} p' /proc/lockdep")
    ctx.expect("&dev->ethtool->rss_lock" in text,
               "lockdep lists no rss_lock class: /proc/lockdep's format "
               "changed, or the core took no rss_lock")
    deps = _lock_deps(text, "&dev->ethtool->rss_lock")
    diag(f"taken under rss_lock: {sorted(deps) or 'nothing'}")
    ctx.expect("&dev->lock" not in deps,
               "a netdev instance lock was taken under the ethtool core's "
               "rss_lock (the reverse of the core's order)")
