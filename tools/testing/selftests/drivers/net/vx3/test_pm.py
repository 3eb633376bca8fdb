# SPDX-License-Identifier: GPL-2.0
"""Power management: the NIC works again after suspend and hibernation.

Boot variant "s3" (lib/vm.py) enables ACPI S3 on the q35 machine
(-global ICH9-LPC.disable_s3=0). QEMU resets the whole machine on
system_wakeup, the vmxnet3 device included: it forgets DriverShared, its
rings and the MAC. A driver without suspend/resume callbacks is left with
a dead NIC (no RX, no TX completions); a correct one re-activates the
device in .resume (and .restore).

s3_resume
    Traffic first (ping, iperf both ways), then `echo mem >
    /sys/power/state` in the guest (in the background: the guest stops
    under the command); the harness waits until QMP query-status says
    "suspended" and sends QMP system_wakeup. The peer pings the guest
    every 10 ms all the while, so that frames reach the tap while the
    device cannot receive them: after the driver's reset or quiesce at
    suspend, while QEMU is suspended and between the reset at wakeup and
    the driver's ACTIVATE_DEV. Afterwards the interface must be up with
    carrier, ping must pass both ways and iperf must move data both ways;
    if not, the case prints the tap's counters in the peer namespace and
    the guest's (ip -s link, ethtool -S, /proc/interrupts).
    Debian's QEMU 7.2 fails this for every driver: its vmxnet3 model
    queues the frames it cannot receive, the tap backend stops reading
    until the model flushes that queue, and the model never does; RX stays
    dead. scripts/qemu/patches/0001-hw-net-vmxnet3-Flush-queued-packets-*
    fixes that: this file boots the rig's QEMU, Debian's source with
    that patch (QEMU_PATCHED, scripts/vx3-qemu.sh).
    After the resume the 7.3 guest has opened its virtio-serial port anew
    and the harness's connection hears nothing: lib/test.py wait_agent()
    connects again (lib/vm.py reconnect_ctl()). A device left active while the PCI core turned bus
    mastering off shows as QEMU "Invalid read at addr <RAM address>"
    guest errors (the harness fails the case on them).
    One S3 cycle per boot: in QEMU 7.2 a second `echo mem` in the same
    boot returns at once without the machine suspending (no QMP SUSPEND
    event; seen with vmxnet3 and vx3 alike), so it tests nothing.
hibernate_freeze_restore
    Hibernation with /sys/power/pm_test = devices: the kernel runs the
    drivers' .freeze callbacks, waits 5 s and then their .restore
    callbacks (PMSG_RESTORE, as after loading an image) without writing
    an image (the guest has no disk or swap to hibernate to and to resume
    from, so a full hibernation cannot be done here). The NIC must carry
    traffic afterwards. QEMU does not reset the device here: this checks
    that freeze/restore leave driver and device consistent. The write
    runs detached (lib/test.py pm_start()) and the harness asks for its
    result in short commands, on a new control channel connection when
    the old one went silent or closed across the freeze.
"""

import re
import time

from lib.nic import diag, ping, setup_nic, wait_carrier
from lib.test import (firmware_resume_guard, iperf_bytes, iperf_guest_to_peer,
                      iperf_peer_to_guest, pm_finished, pm_start, qmp_status,
                      wait_agent)

NICS = 1
VARIANTS = ("s3",)
# The device model fix above (run.py boots scripts/vx3-qemu.sh's QEMU)
QEMU_PATCHED = True
IPERF_SECONDS = 2


# After system_wakeup QEMU has reset the q35 host bridge (its MMCONFIG
# window, PCIEXBAR, is disabled again) and SeaBIOS's S3 resume path does
# not re-enable it: the guest kernel's PCI config accesses through
# MMCONFIG (0xB0000000 on q35) hit nothing until it falls back. Those are
# QEMU's "Invalid read/write ... region '(null)'" guest errors of every
# S3 cycle, whatever the NIC driver; nothing else is tolerated.
MMCONFIG_ERR = re.compile(r"^Invalid (read|write) at addr 0xB[0-9A-F]{7}, "
                          r"size \d+, region '\(null\)', reason: rejected")


def setup(ctx):
    ctx.vm.guest_errors_ok = MMCONFIG_ERR
    setup_nic(ctx)
    states = ctx.vm.check("cat /sys/power/state").split()
    if "mem" not in states:
        ctx.skip(f"the guest offers no suspend to RAM: /sys/power/state "
                 f"= {' '.join(states)}")


def _traffic(ctx, what):
    """Ping both ways and iperf both ways; asserts that all work."""
    wait_carrier(ctx, timeout=30)
    ping(ctx, wait=30)
    ping(ctx, peer=True)
    ping(ctx, v6=True)
    for fn, way in ((iperf_peer_to_guest, "peer -> guest"),
                    (iperf_guest_to_peer, "guest -> peer")):
        n = iperf_bytes(fn(ctx, IPERF_SECONDS))
        ctx.expect(n > 0, f"{what}: iperf {way} moved no data")


def _wait_status(ctx, want, timeout):
    deadline = time.monotonic() + timeout
    st = None
    while time.monotonic() < deadline:
        st = qmp_status(ctx.vm)
        if st == want:
            return
        time.sleep(0.2)
    raise AssertionError(f"QMP status is {st!r}, not {want!r} after "
                         f"{timeout}s")


def _events(vm, name, since):
    return [e for e in vm.qmp_events[since:] if e.get("event") == name]


def _suspend_resume(ctx):
    """One S3 cycle: suspend in the guest, wake it up through QMP.

    QEMU reports the guest's S3 entry as a SUSPEND event; a guest that a
    wakeup source (RTC, ACPI timer) woke by itself has already resumed
    (WAKEUP event) and needs no system_wakeup.
    """
    with firmware_resume_guard(ctx):
        vm = ctx.vm
        vm.qmp("query-status")		# collect pending events
        since = len(vm.qmp_events)
        pm_start(vm)
        deadline = time.monotonic() + 60
        woken = None
        while time.monotonic() < deadline:
            st = qmp_status(vm)
            if st == "suspended":
                vm.qmp("system_wakeup")
                woken = "system_wakeup"
                break
            if (_events(vm, "SUSPEND", since) and
                    _events(vm, "WAKEUP", since)):
                woken = "a wakeup source of the guest"
                break
            time.sleep(0.05)
        if woken is None and qmp_status(vm) == "suspended":
            vm.qmp("system_wakeup")
        ctx.expect(woken, "the guest did not enter S3 within 60s (no QMP "
                   "SUSPEND event)")
        _wait_status(ctx, "running", 30)
        reconnects = pm_finished(ctx)
        diag(f"{ctx.driver}: S3 suspend/resume done (woken by {woken}; "
             f"control channel reconnected {reconnects} time(s))")


def _rx_evidence(ctx):
    """Where frames to the guest stop: the tap's counters in the peer
    namespace (TX = towards QEMU), the guest's counters and interrupts."""
    vm, ifn = ctx.vm, ctx.ifname()
    _, tap = vm.peer(1, f"ip -s link show dev {vm.tap(1)}")
    _, guest = vm.run(f"ip -s link show dev {ifn}; ethtool -S {ifn} | "
                      f"grep -Ei 'rx|intr'; grep -E '{ifn}|vmxnet|vx3' "
                      f"/proc/interrupts", timeout=30)
    diag(f"peer tap:\n{tap}\nguest:\n{guest}")


def test_s3_resume(ctx):
    _traffic(ctx, "before suspend")
    # The peer pings the guest all through the S3 cycle: frames reach the
    # tap while the guest is suspended and between QEMU's device reset at
    # wakeup and the driver's re-activation, when the device model cannot
    # receive them (QEMU queues them and stops reading the tap until the
    # model flushes that queue).
    pinger = ctx.vm.peer_bg(1, f"exec ping -q -i 0.01 {ctx.vm.guest_ip4(1)}")
    try:
        _suspend_resume(ctx)
    finally:
        pinger.stop()
    try:
        _traffic(ctx, "after S3 resume")
    except AssertionError:
        _rx_evidence(ctx)
        raise


def test_hibernate_freeze_restore(ctx):
    vm = ctx.vm
    rc, modes = vm.run("cat /sys/power/pm_test /sys/power/disk")
    if rc != 0 or "devices" not in modes:
        ctx.skip(f"no hibernation test mode in the guest kernel: {modes}")
    _traffic(ctx, "before hibernation")
    vm.check("echo devices > /sys/power/pm_test")
    try:
        # Freeze, 5 s wait, restore; then the write returns
        pm_start(vm, "disk")
        reconnects = pm_finished(ctx, timeout=120)
    finally:
        wait_agent(ctx)
        vm.run("echo none > /sys/power/pm_test")
    diag(f"{ctx.driver}: hibernation freeze/restore (pm_test devices) "
         f"done (control channel reconnected {reconnects} time(s))")
    _traffic(ctx, "after hibernation freeze/restore")
