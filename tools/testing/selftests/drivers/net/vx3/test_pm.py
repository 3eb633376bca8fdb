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
    "suspended" and sends QMP system_wakeup. Afterwards the interface must
    be up with carrier, ping must pass both ways and iperf must move data
    both ways. A device left active while the PCI core turned bus
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
    that freeze/restore leave driver and device consistent.
"""

import re
import time

from lib.nic import diag, ping, setup_nic, wait_carrier
from lib.test import (iperf_bytes, iperf_guest_to_peer, iperf_peer_to_guest,
                      qmp_status, s3_finished, s3_start, wait_agent)

NICS = 1
VARIANTS = ("s3",)
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
    vm = ctx.vm
    vm.qmp("query-status")		# collect pending events
    since = len(vm.qmp_events)
    s3_start(vm)
    deadline = time.monotonic() + 60
    woken = None
    while time.monotonic() < deadline:
        st = qmp_status(vm)
        if st == "suspended":
            vm.qmp("system_wakeup")
            woken = "system_wakeup"
            break
        if _events(vm, "SUSPEND", since) and _events(vm, "WAKEUP", since):
            woken = "a wakeup source of the guest"
            break
        time.sleep(0.05)
    if woken is None and qmp_status(vm) == "suspended":
        vm.qmp("system_wakeup")
    ctx.expect(woken, "the guest did not enter S3 within 60s (no QMP "
               "SUSPEND event)")
    _wait_status(ctx, "running", 30)
    s3_finished(ctx)
    diag(f"{ctx.driver}: S3 suspend/resume done (woken by {woken})")


def test_s3_resume(ctx):
    _traffic(ctx, "before suspend")
    _suspend_resume(ctx)
    _traffic(ctx, "after S3 resume")


def test_hibernate_freeze_restore(ctx):
    vm = ctx.vm
    rc, modes = vm.run("cat /sys/power/pm_test /sys/power/disk")
    if rc != 0 or "devices" not in modes:
        ctx.skip(f"no hibernation test mode in the guest kernel: {modes}")
    _traffic(ctx, "before hibernation")
    try:
        vm.check("echo devices > /sys/power/pm_test")
        # Freeze, 5 s wait, restore; the write returns afterwards
        rc, out = vm.run("echo disk > /sys/power/state", timeout=120)
        ctx.expect(rc == 0, f"echo disk > /sys/power/state (pm_test "
                   f"devices) failed (rc={rc}): {out}")
    finally:
        wait_agent(ctx)
        vm.run("echo none > /sys/power/pm_test")
    diag(f"{ctx.driver}: hibernation freeze/restore (pm_test devices) "
         f"done")
    _traffic(ctx, "after hibernation freeze/restore")
