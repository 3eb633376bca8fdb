# SPDX-License-Identifier: GPL-2.0
"""Wake-on-LAN end to end: a magic packet wakes a suspended guest.

Boot variant "s3-wol" (lib/vm.py): ACPI S3 and the rig's vmxnet3 with
x-wol=on and x-strict=on (scripts/qemu/patches/0003-*): the device has a PCI power
management capability with PME from D0 and D3hot, reads the wake-up
events of struct Vmxnet3_PMConf (DriverShared pmConfDesc) on
UPDATE_PMCFG while it is active, and while the machine is suspended a
magic packet for its current MAC address (6 bytes 0xff, then the address
16 times, anywhere in the frame) wakes the machine up as QMP
system_wakeup would (QMP WAKEUP event). A device that is not active (reset
or quiesced) wakes nothing, whatever it was told.

magic
    ethtool -s DEV wol g, then echo mem > /sys/power/state (lib/test.py
    pm_start()). While the guest is suspended, the peer namespace sends on
    the tap (raw socket, EtherType 0x0842, broadcast) first a magic packet
    for another MAC address: the guest must still be suspended 3 s later;
    then the magic packet for the NIC's address, twice a second: QMP must
    say "running" within WAKE_S seconds without any system_wakeup, the
    write to /sys/power/state completes and ping works both ways.
    The in-tree vmxnet3 arms the wake in its .suspend on the active device
    and passes, and so does vx3 since it arms the active device too. A
    driver that resets the device (RESET_DEV) before its UPDATE_PMCFG, as
    vx3 did before, leaves nothing armed: the guest stays suspended, the
    case wakes it with system_wakeup, checks that it carries traffic, and
    fails. The variant runs the device in strict mode as well (x-strict:
    that UPDATE_PMCFG on an inactive device, and any other breach of the
    interface over the suspend cycle, is a guest error).
    One S3 cycle per boot (see test_pm.py).
"""

import re
import shlex
import time

from lib.nic import diag, ping, setup_nic, wait_carrier
from lib.test import (firmware_resume_guard, pm_finished, pm_start,
                      qmp_status)

NICS = 1
DRIVERS = ("vmxnet3", "vx3")
VARIANTS = ("s3-wol",)
# x-wol is the rig's QEMU's (scripts/qemu/patches/0003-*)
QEMU_PATCHED = True

# Seconds from the first magic packet to the machine running
WAKE_S = 20

# QEMU's guest errors of every S3 cycle, whatever the NIC driver: the
# q35 MMCONFIG window is off after the wakeup (see test_pm.py)
MMCONFIG_ERR = re.compile(r"^Invalid (read|write) at addr 0xB[0-9A-F]{7}, "
                          r"size \d+, region '\(null\)', reason: rejected")

# Peer side: COUNT magic packets for MAC on IFACE, every INTERVAL seconds
MAGIC_PY = r"""
import socket, sys, time
ifn, mac, count, interval = sys.argv[1:5]
mac = bytes.fromhex(mac.replace(":", ""))
src = open("/sys/class/net/%s/address" % ifn).read().strip()
frame = (b"\xff" * 6 + bytes.fromhex(src.replace(":", "")) + b"\x08\x42" +
         b"\xff" * 6 + mac * 16)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifn, 0))
for i in range(int(count)):
    s.send(frame)
    time.sleep(float(interval))
"""


def setup(ctx):
    vm = ctx.vm
    vm.guest_errors_ok = MMCONFIG_ERR
    setup_nic(ctx)
    states = vm.check("cat /sys/power/state").split()
    if "mem" not in states:
        ctx.skip(f"the guest offers no suspend to RAM: /sys/power/state "
                 f"= {' '.join(states)}")


def _magic_cmd(vm, mac, count, interval=0.5):
    return (f"python3 -c {shlex.quote(MAGIC_PY)} {vm.tap(1)} {mac} "
            f"{count} {interval}")


def _wait_status(vm, want, timeout):
    deadline = time.monotonic() + timeout
    while True:
        st = qmp_status(vm)
        if st == want or time.monotonic() > deadline:
            return st
        time.sleep(0.1)


def test_magic(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    rc, out = vm.run(f"ethtool -s {ifn} wol g")
    ctx.expect(rc == 0, f"ethtool -s {ifn} wol g failed: {out}")
    wk = vm.check(f"cat /sys/class/net/{ifn}/device/power/wakeup").strip()
    mac = vm.check(f"cat /sys/class/net/{ifn}/address").strip()
    other = mac[:-2] + f"{int(mac[-2:], 16) ^ 0xff:02x}"
    diag(f"{ctx.driver}: wol g, power/wakeup {wk}, MAC {mac}")
    ping(ctx)

    vm.qmp("query-status")		# collect pending events
    since = len(vm.qmp_events)
    woken = False
    with firmware_resume_guard(ctx):
        pm_start(vm)
        st = _wait_status(vm, "suspended", 60)
        ctx.expect(st == "suspended", f"the guest did not enter S3 within "
                   f"60s (status {st})")
        vm.peer_check(1, _magic_cmd(vm, other, 2))
        time.sleep(3)
        st = qmp_status(vm)
        ctx.expect(st == "suspended", f"a magic packet for {other}, not "
                   f"the NIC's {mac}, left the guest {st!r}")
        sender = vm.peer_bg(1, _magic_cmd(vm, mac, 4 * WAKE_S))
        try:
            t0 = time.monotonic()
            st = _wait_status(vm, "running", WAKE_S)
            woken = st == "running"
            dt = time.monotonic() - t0
        finally:
            sender.stop()
        if not woken:
            vm.qmp("system_wakeup")
            st = _wait_status(vm, "running", 30)
            ctx.expect(st == "running", f"not running 30s after "
                       f"system_wakeup: {st}")
        reconnects = pm_finished(ctx)
    events = [e["event"] for e in vm.qmp_events[since:]
              if e.get("event") in ("SUSPEND", "WAKEUP")]
    diag(f"{ctx.driver}: QMP events {events}; control channel reconnected "
         f"{reconnects} time(s)")
    wait_carrier(ctx, timeout=30)
    ping(ctx, wait=30)
    ping(ctx, peer=True)
    ctx.expect(woken, f"a magic packet for {mac} did not wake the guest "
               f"in {WAKE_S}s (status {st})")
    diag(f"{ctx.driver}: woken by the magic packet {dt:.1f}s after the "
         f"first was sent")
