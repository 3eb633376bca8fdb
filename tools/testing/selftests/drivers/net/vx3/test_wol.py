# SPDX-License-Identifier: GPL-2.0
"""Wake-on-LAN: ethtool wol g, armed in the device across an S3 cycle.

On the rig's vmxnet3 with a PCI power management capability (variant
s3-wol: x-wol=on, and x-strict=on); test_lifecycle.py's wol_not_capable
checks that vx3 offers nothing on a function without PME.

The device learns the wake-up events from its power management
configuration (struct Vmxnet3_PMConf: wakeUpEvents u16, numFilters u8,
pad, filters), which DriverShared's pmConfDesc (confVer u32 @0x298,
confLen u32 @0x29C, confPA u64 @0x2A0) points to and which the device
reads on command UPDATE_PMCFG (0xCAFE0008). QEMU only logs it, so the
cases read it from the device side (lib/devside.py: the MMIO trace gives
the commands and the DriverShared address, the gdbstub guest memory).
One S3 cycle per boot (see test_pm.py).

settings
    ethtool shows "Supports Wake-on: g" and "Wake-on: d" after probe;
    wol u (not offered) is refused; wol g reads back as "Wake-on: g" and
    the PCI device's power/wakeup says enabled. Nothing is armed while the
    machine runs (no UPDATE_PMCFG, no magic-packet flag in the device).
s3_armed
    With wol g (from settings; the case sets it on a new VM, when run.py
    runs it again after a firmware death, lib/test.py
    firmware_resume_guard()): echo mem > /sys/power/state; while the guest is in S3 (QMP status
    "suspended", read without stopping or continuing the VM, as the
    gdbstub serves packets to a stopped VM) the trace must show
    UPDATE_PMCFG with DSAL/DSAH = the DriverShared address written since
    the last RESET_DEV (which makes the device forget it), and
    DriverShared's pmConfDesc must point to a configuration of version 1,
    920 bytes, with wakeUpEvents = MAGIC and no filters; and the device
    must be active when it is told (an ACTIVATE_DEV since the last
    RESET_DEV or QUIESCE_DEV): a device looks at frames only while it is
    active, so one armed after a reset never wakes. Then system_wakeup:
    the driver disarms (another UPDATE_PMCFG on the active device,
    wakeUpEvents 0), ethtool still says "Wake-on: g", and ping works both
    ways.
freeze_not_armed
    With wol g, hibernation with /sys/power/pm_test = devices (the
    drivers' .freeze, 5 s, then their resume callbacks; no image is
    written, see test_pm.py): .freeze only stops the device while the
    image would be made, so nothing may be armed. The one UPDATE_PMCFG
    of the cycle must be the disarm after the device is activated again;
    then ping works.
off
    ethtool -s wol d: "Wake-on: d", power/wakeup disabled, and the device
    is told at once (UPDATE_PMCFG with wakeUpEvents 0).
"""

import re
import struct
import time

import lib.devside as ds
from lib.nic import diag, ping, setup_nic, wait_carrier
from lib.test import (firmware_resume_guard, pm_finished, pm_start,
                      qmp_status, wait_agent)

NICS = 1
DRIVERS = ("vx3",)
# A PCI PM capability with PME: the rig's vmxnet3 with x-wol=on
# (scripts/qemu/patches/0003); vx3 offers Wake-on-LAN only there
VARIANTS = ("s3-wol",)
QEMU_PATCHED = True

CMD_ACTIVATE_DEV = 0xCAFE0000
CMD_QUIESCE_DEV = 0xCAFE0001
CMD_RESET_DEV = 0xCAFE0002
CMD_UPDATE_PMCFG = 0xCAFE0008
PM_CONF_DESC = 0x298
PM_CONF_VER = 1
PM_CONF_LEN = 920
PM_WAKE_MAGIC = 0x1

# QEMU's guest errors of every S3 cycle, whatever the NIC driver: the
# q35 MMCONFIG window is off after system_wakeup (see test_pm.py)
MMCONFIG_ERR = re.compile(r"^Invalid (read|write) at addr 0xB[0-9A-F]{7}, "
                          r"size \d+, region '\(null\)', reason: rejected")


def setup(ctx):
    vm = ctx.vm
    vm.guest_errors_ok = MMCONFIG_ERR
    states = vm.check("cat /sys/power/state").split()
    if "mem" not in states:
        ctx.skip(f"the guest offers no suspend to RAM: /sys/power/state "
                 f"= {' '.join(states)}")
    dev = ds.DeviceSide(vm)
    # Before the link comes up: DSAL/DSAH and ACTIVATE happen then
    dev.start_trace()
    ctx.state["dev"] = dev
    setup_nic(ctx)
    dev.attach()


# closes the gdbstub connection and stops the trace
teardown = ds.teardown


def _ethtool_wol(ctx):
    out = ctx.vm.check(f"ethtool {ctx.ifname(1)}")
    sup = re.search(r"^\s*Supports Wake-on:\s*(\S+)", out, re.M)
    cur = re.search(r"^\s*Wake-on:\s*(\S+)", out, re.M)
    ctx.expect(sup and cur, f"ethtool shows no Wake-on lines:\n{out}")
    return sup.group(1), cur.group(1)


def _wakeup_sysfs(ctx):
    return ctx.vm.check(f"cat /sys/class/net/{ctx.ifname(1)}/device/power/"
                        f"wakeup 2>/dev/null || echo none").strip()


def _pm_cmds(dev, since, active=None):
    """The UPDATE_PMCFG commands after mark `since`, each with the
    DriverShared address registered (DSAL/DSAH) when it was written, or
    None if RESET_DEV made the device forget it. With a list `active`,
    whether the device was active then (ACTIVATE_DEV since the last
    RESET_DEV or QUIESCE_DEV) is appended to it for each."""
    dev.poll()
    lo = hi = None
    on = False
    res = []
    for w in dev.writes:
        if w.bar != 1:
            continue
        if w.off == ds.REG_DSAL:
            lo, hi = w.val, None
        elif w.off == ds.REG_DSAH and lo is not None:
            hi = w.val
        elif w.off == ds.REG_CMD and w.val == CMD_ACTIVATE_DEV:
            on = True
        elif w.off == ds.REG_CMD and w.val == CMD_QUIESCE_DEV:
            on = False
        elif w.off == ds.REG_CMD and w.val == CMD_RESET_DEV:
            lo = hi = None	# the device forgets DriverShared
            on = False
        elif w.off == ds.REG_CMD and w.val == CMD_UPDATE_PMCFG:
            if w.seq > since:
                res.append(None if hi is None else lo | hi << 32)
                if active is not None:
                    active.append(on)
    return res


def _pm_conf(dev, spa):
    """(confVer, confLen, confPA, wakeUpEvents, numFilters) as the device
    reads them; the VM must be stopped."""
    ver, ln, pa = struct.unpack("<IIQ", dev.read(spa + PM_CONF_DESC, 16))
    if not pa:
        return ver, ln, pa, None, None
    ev, nf = struct.unpack("<HB", dev.read(pa, 3))
    return ver, ln, pa, ev, nf


def _expect_conf(ctx, conf, events, what):
    ver, ln, pa, ev, nf = conf
    diag(f"{what}: pmConfDesc ver {ver} len {ln} PA {pa:#x}, wakeUpEvents "
         f"{ev}, numFilters {nf}")
    ctx.expect(ver == PM_CONF_VER and ln == PM_CONF_LEN and pa,
               f"{what}: pmConfDesc is ver {ver} len {ln} PA {pa:#x}, not "
               f"ver {PM_CONF_VER} len {PM_CONF_LEN} at a buffer")
    ctx.expect(ev == events and nf == 0,
               f"{what}: wakeUpEvents {ev:#x} numFilters {nf}, expected "
               f"{events:#x} and 0")


def test_settings(ctx):
    vm, dev, ifn = ctx.vm, ctx.state["dev"], ctx.ifname(1)
    sup, cur = _ethtool_wol(ctx)
    ctx.expect(sup == "g" and cur == "d",
               f"after probe: Supports Wake-on: {sup}, Wake-on: {cur}; "
               f"expected g and d")
    rc, out = vm.run(f"ethtool -s {ifn} wol u")
    ctx.expect(rc != 0, f"ethtool -s wol u (not offered) succeeded: {out}")
    since = dev.mark()
    vm.check(f"ethtool -s {ifn} wol g")
    sup, cur = _ethtool_wol(ctx)
    ctx.expect(cur == "g", f"after wol g: Wake-on: {cur}")
    wk = _wakeup_sysfs(ctx)
    ctx.expect(wk == "enabled", f"after wol g: power/wakeup is {wk!r}")
    ctx.expect(not _pm_cmds(dev, since),
               "wol g armed the device while the machine runs")
    with dev.halted():
        conf = _pm_conf(dev, dev.shared_pa())
    ctx.expect(not conf[3], f"wake events armed while running: {conf}")


def _s3_cycle(ctx, dev, spa, since):
    """Suspend, read the PM configuration while in S3, wake the guest up
    and wait until it answers. Returns the configuration read and the
    UPDATE_PMCFG commands after mark `since` until the wakeup."""
    vm = ctx.vm
    pm_start(vm)
    deadline = time.monotonic() + 60
    while qmp_status(vm) != "suspended":
        ctx.expect(time.monotonic() < deadline,
                   f"the guest did not enter S3 within 60s (status "
                   f"{qmp_status(vm)})")
        time.sleep(0.05)
    try:
        # The VM is stopped: the gdbstub serves packets without ^C, and
        # a 'c' must not start a suspended machine
        dev.running = False
        conf = _pm_conf(dev, spa)
        cmds = _pm_cmds(dev, since)
    finally:
        dev.running = True
        vm.qmp("system_wakeup")
    deadline = time.monotonic() + 30
    while qmp_status(vm) != "running":
        ctx.expect(time.monotonic() < deadline, f"not running 30s after "
                   f"system_wakeup: {qmp_status(vm)}")
        time.sleep(0.2)
    pm_finished(ctx)
    return conf, cmds


def test_s3_armed(ctx):
    vm, dev = ctx.vm, ctx.state["dev"]
    if _ethtool_wol(ctx)[1] != "g":
        # a new VM (run.py's second run of this case): settings' wol g
        vm.check(f"ethtool -s {ctx.ifname(1)} wol g")
    spa = dev.shared_pa()
    vm.qmp("query-status")
    since = dev.mark()
    with firmware_resume_guard(ctx):
        conf, cmds = _s3_cycle(ctx, dev, spa, since)
    diag(f"UPDATE_PMCFG while suspending, DriverShared registered: "
         f"{[hex(c) if c is not None else c for c in cmds]} "
         f"(DriverShared {spa:#x})")
    ctx.expect(cmds and cmds[-1] == spa,
               f"no UPDATE_PMCFG with DriverShared {spa:#x} registered "
               f"while suspending: {cmds}")
    _expect_conf(ctx, conf, PM_WAKE_MAGIC, "in S3")

    active = []
    after = _pm_cmds(dev, since, active)[len(cmds):]
    diag(f"device active at each UPDATE_PMCFG since the suspend: {active}")
    ctx.expect(active[len(cmds) - 1],
               "the wake-up events were armed on an inactive device (reset "
               "or quiesced since its last activation): it looks at no "
               "frame")
    ctx.expect(after, "no UPDATE_PMCFG on resume (not disarmed)")
    ctx.expect(active[-1], "disarmed on an inactive device after resume")
    with dev.halted():
        conf = _pm_conf(dev, spa)
    _expect_conf(ctx, conf, 0, "after resume")
    ctx.expect(_ethtool_wol(ctx)[1] == "g", "resume lost wol g")
    wait_carrier(ctx, timeout=30)
    ping(ctx, wait=30)
    ping(ctx, peer=True)


def test_freeze_not_armed(ctx):
    vm, dev = ctx.vm, ctx.state["dev"]
    rc, modes = vm.run("cat /sys/power/pm_test /sys/power/disk")
    if rc != 0 or "devices" not in modes:
        ctx.skip(f"no hibernation test mode in the guest kernel: {modes}")
    if _ethtool_wol(ctx)[1] != "g":
        vm.check(f"ethtool -s {ctx.ifname(1)} wol g")
    since = dev.mark()
    vm.check("echo devices > /sys/power/pm_test")
    try:
        pm_start(vm, "disk")
        pm_finished(ctx, timeout=120)
    finally:
        wait_agent(ctx)
        vm.run("echo none > /sys/power/pm_test")
    active = []
    cmds = _pm_cmds(dev, since, active)
    diag(f"UPDATE_PMCFG in a freeze/resume cycle: {len(cmds)}, device "
         f"active at each: {active}")
    ctx.expect(len(cmds) == 1 and active == [True],
               f"freeze armed the device for a hibernation image: "
               f"{len(cmds)} UPDATE_PMCFG (the disarm after the activation "
               f"expected only), active at each: {active}")
    wait_carrier(ctx, timeout=30)
    ping(ctx, wait=30)


def test_off(ctx):
    vm, dev, ifn = ctx.vm, ctx.state["dev"], ctx.ifname(1)
    since = dev.mark()
    vm.check(f"ethtool -s {ifn} wol d")
    ctx.expect(_ethtool_wol(ctx)[1] == "d", "wol d did not read back")
    wk = _wakeup_sysfs(ctx)
    ctx.expect(wk == "disabled", f"after wol d: power/wakeup is {wk!r}")
    cmds = _pm_cmds(dev, since)
    ctx.expect(cmds, "wol d did not tell the device (no UPDATE_PMCFG)")
    with dev.halted():
        conf = _pm_conf(dev, dev.shared_pa())
    _expect_conf(ctx, conf, 0, "after wol d")
