# SPDX-License-Identifier: GPL-2.0
"""Test-side helpers: context passed to every case, skips, timeouts."""

import functools
import hashlib
import os
import signal
import time

from lib.vm import CmdTimeout, VMCrash, VMError


class Skip(Exception):
    """Raise (or call ctx.skip()) to skip a case with a reason."""


class CaseTimeout:
    """Context manager: raise TimeoutError after `seconds` (main thread)."""

    def __init__(self, seconds):
        self.seconds = seconds

    def _fire(self, _signum, _frame):
        raise TimeoutError(f"case exceeded {self.seconds}s")

    def __enter__(self):
        self.old = signal.signal(signal.SIGALRM, self._fire)
        signal.alarm(self.seconds)
        return self

    def __exit__(self, *exc):
        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.old)


def only_driver(*drivers):
    """Decorator: skip the case unless the driver under test is listed."""
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(ctx):
            if ctx.driver not in drivers:
                raise Skip(f"only for {'/'.join(drivers)}")
            return fn(ctx)
        return wrapper
    return deco


vx3_only = only_driver("vx3")


class Ctx:
    """What a test case gets: the VM plus conveniences.

    ctx.vm      lib.vm.VM (run/check/bg/peer/peer_bg/monitor/dmesg/...)
    ctx.driver  "vx3" or "vmxnet3"
    ctx.patched True for run.py --driver vmxnet3-patched (ctx.driver is
                "vmxnet3": the in-tree driver with scripts/vmxnet3-series/)
    ctx.variant boot variant name
    ctx.state   dict shared by setup() and the cases of one file
    """

    def __init__(self, vm, driver, variant):
        self.vm = vm
        self.driver = driver
        self.variant = variant
        self.patched = False
        self.state = {}

    @staticmethod
    def skip(reason):
        raise Skip(reason)

    @staticmethod
    def expect(cond, msg):
        if not cond:
            raise AssertionError(msg)

    def ifname(self, n=1):
        return self.state.get(f"if{n}") or self.vm.ifname(n)

    def load_driver(self):
        """modprobe the driver under test; returns the guest ifnames."""
        vm = self.vm
        vm.check(f"modprobe {self.driver}")
        names = {}
        for n in range(1, vm.nics + 1):
            names[n] = vm.check(
                f"for i in $(seq 50); do for a in /sys/class/net/*/address; do "
                f"grep -q {vm.mac(n)} $a && basename ${{a%/address}} && exit 0; "
                f"done; sleep 0.1; done; exit 1").strip()
            drv = vm.check(f"basename $(readlink /sys/class/net/{names[n]}"
                           f"/device/driver)").strip()
            self.expect(drv == self.driver,
                        f"NIC {n} ({names[n]}) is bound to {drv!r}, "
                        f"not {self.driver!r}")
            self.state[f"if{n}"] = names[n]
        return names

    def config_ip(self, n=1):
        """Bring NIC n up with 198.18.n.2/24 and 2001:db8:n::2/64."""
        vm, ifn = self.vm, self.ifname(n)
        vm.check(f"ip addr add {vm.guest_ip4(n)}/24 dev {ifn} && "
                 f"ip -6 addr add {vm.guest_ip6(n)}/64 dev {ifn} nodad && "
                 f"ip link set {ifn} up")


def iperf_bytes(output):
    """Bytes transferred according to `iperf -y C` client output (0 if none)."""
    total = 0
    for line in output.splitlines():
        f = line.strip().split(",")
        if len(f) >= 9 and f[7].isdigit():
            total = max(total, int(f[7]))
    return total


def _wait_listen(run, port):
    rc, _ = run(f"for i in $(seq 50); do netstat -ltn 2>/dev/null | "
                f"grep -q ':{port} ' && exit 0; sleep 0.1; done; exit 1")
    return rc == 0


def iperf_guest_to_peer(ctx, seconds, port=5001):
    """TCP from the guest to peer 1 for seconds; returns `iperf -y C`
    client output after checking that the client succeeded."""
    vm = ctx.vm
    srv = vm.peer_bg(1, f"exec iperf -s -p {port}")
    try:
        ctx.expect(_wait_listen(lambda c: vm.peer(1, c), port),
                   "peer iperf server did not start")
        rc, out = vm.run(f"iperf -c {vm.peer_ip4(1)} -p {port} "
                         f"-t {seconds} -y C", timeout=seconds + 60)
    finally:
        srv.stop()
    ctx.expect(rc == 0, f"guest iperf client failed (rc={rc}):\n{out}")
    return out


def iperf_peer_to_guest(ctx, seconds, port=5002):
    """TCP from peer 1 to the guest for seconds; returns `iperf -y C`
    client output after checking that the client succeeded."""
    vm = ctx.vm
    srv = vm.bg(f"exec iperf -s -p {port}")
    try:
        ctx.expect(_wait_listen(vm.run, port),
                   "guest iperf server did not start")
        rc, out = vm.peer(1, f"iperf -c {vm.guest_ip4(1)} -p {port} "
                          f"-t {seconds} -y C", timeout=seconds + 60)
    finally:
        srv.stop()
    ctx.expect(rc == 0, f"peer iperf client failed (rc={rc}):\n{out}")
    return out


def write_random(f, nbytes):
    """Write nbytes random bytes to the binary file f; returns their
    SHA-256 in hex."""
    h = hashlib.sha256()
    left = nbytes
    while left:
        chunk = os.urandom(min(left, 1 << 20))
        h.update(chunk)
        f.write(chunk)
        left -= len(chunk)
    return h.hexdigest()


def qmp_status(vm):
    """QEMU's run state (QMP query-status): "running", "suspended", ..."""
    return vm.qmp("query-status")["status"]


def wait_agent(ctx, timeout=60):
    """Wait until the guest agent answers again after a suspend.

    If it does not answer on the control channel's connection within a
    few seconds, the harness connects anew (lib/vm.py reconnect_ctl():
    after an S3 resume the 7.3 guest reopens its virtio-serial port and
    the old host connection hears nothing) and asks again, until timeout
    seconds have passed. Returns the number of reconnections.
    """
    vm = ctx.vm
    deadline = time.monotonic() + timeout
    reconnects = 0
    while not vm.agent_hello(wait=5):
        if time.monotonic() > deadline:
            raise VMError(f"the guest agent did not answer within "
                          f"{timeout}s ({reconnects} reconnection(s) of "
                          f"the control channel)")
        vm.reconnect_ctl()
        reconnects += 1
    vm.run("true", timeout=10)
    return reconnects


def pm_start(vm, state="mem"):
    """Start `echo <state> > /sys/power/state` in the guest, detached, half
    a second from now, so that no guest command is in flight when the
    guest stops under it; pm_finished() reads how it ended."""
    vm.check(f"rm -f /tmp/pm.done; setsid sh -c 'sleep 0.5; "
             f"echo {state} > /sys/power/state; echo rc=$? > /tmp/pm.done' "
             f">/tmp/pm.log 2>&1 </dev/null &")


def pm_finished(ctx, timeout=60):
    """After the wakeup: the guest agent answers and the transition that
    pm_start() began returned 0 within timeout seconds. Returns how often
    the control channel was connected anew (wait_agent()).

    Each look for the result is a short command of its own: one that the
    guest's freeze stops, or whose answer the control channel loses with
    the suspend, is asked again on a fresh connection.
    """
    vm = ctx.vm
    deadline = time.monotonic() + timeout
    reconnects = 0
    while True:
        reconnects += wait_agent(ctx, timeout=timeout)
        try:
            rc, out = vm.run("[ -e /tmp/pm.done ] && cat /tmp/pm.done "
                             "/tmp/pm.log", timeout=10)
        except (CmdTimeout, VMCrash):
            vm.check_qemu()
            rc, out = 1, "(answer lost)"
        if rc == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    ctx.expect(rc == 0 and "rc=0" in out,
               f"the write to /sys/power/state did not complete within "
               f"{timeout}s:\n{out}")
    return reconnects
