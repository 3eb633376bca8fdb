# SPDX-License-Identifier: GPL-2.0
"""Test-side helpers: context passed to every case, skips, timeouts."""

import contextlib
import functools
import hashlib
import os
import re
import signal
import time

from lib.vm import CmdTimeout, FirmwareArtefact, VMCrash, VMError


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


def _vcpus(vm):
    """Each vCPU's state from HMP info registers: a dict with the CPU
    number, CS selector and base, instruction pointer, linear address of
    the next instruction (CS base + IP), CR0 and the HLT flag."""
    regs = vm.monitor("info registers -a")
    cpus = []
    for block in re.split(r"^CPU#", regs, flags=re.M)[1:]:
        f = dict(re.findall(r"\b(RIP|EIP|CR0|HLT)=(\S+)", block))
        cs = re.search(r"^CS =(\S+) (\S+)", block, re.M)
        ip = int(f.get("RIP", f.get("EIP", "0")), 16)
        base = int(cs.group(2), 16) if cs else 0
        cpus.append({"cpu": block.split()[0], "cs": cs.group(1) if cs else "?",
                     "base": base, "ip": ip, "linear": base + ip,
                     "cr0": f.get("CR0", "?"), "hlt": f.get("HLT", "?")})
    return cpus


def vcpu_states(vm):
    """Where the vCPUs are, for the message of a guest that stopped
    answering: QEMU's run state, its last QMP events and each vCPU's
    CS:IP, linear address, CR0 and HLT flag."""
    try:
        status = qmp_status(vm)
        events = [e["event"] for e in vm.qmp_events[-8:]]
        cpus = _vcpus(vm)
    except (VMError, OSError) as e:
        return f"vCPU state not readable: {e}"
    return (f"QEMU status {status}, last QMP events {events}, " +
            "; ".join(f"cpu{c['cpu']}: CS:IP {c['cs']}:{c['ip']:#x} "
                      f"(linear {c['linear']:#x}) CR0 {c['cr0']} HLT "
                      f"{c['hlt']}" for c in cpus))


# SeaBIOS's S3 resume on q35 (seabios 1.16, QEMU 7.2) makes its PCI
# config accesses through the MMCONFIG window, which the machine reset at
# wakeup switched off: QEMU logs each one as a rejected access (the
# guest errors that test_pm.py and test_wol.py allow). The first is
# smm_setup()'s read of the LPC bridge's device ID, the last
# make_bios_readonly()'s write of the host bridge's PAM registers; then
# SeaBIOS jumps to the OS's waking vector.
FW_RESUME_FIRST = "Invalid read at addr 0xB00F8002,"
FW_RESUME_LAST = "Invalid write at addr 0xB0000094,"


def firmware_resume_death(vm, since=0):
    """Why the guest's firmware died in the S3 resume that began after
    byte `since` of the guest errors log, or None.

    Under QEMU 7.2's multi-threaded TCG, SeaBIOS's resume has died in
    make check (twice, in test_wol.py; once in ~80 runs of that file
    alone on a loaded host) right after it had brought up the second
    vCPU, at the first write of pci_resume(), before the OS got the CPU
    back: the guest reset the machine (QEMU exits, -no-reboot) or hung.
    No driver code runs then and QEMU has reset the device: that is the
    emulator's or the firmware's failure, not the driver's. It counts as
    one only with all of: the guest errors log shows this resume's first
    firmware access and not its last; and QEMU exited on a guest reset,
    or every vCPU is at a linear address below 1 MiB (the BIOS).
    """
    try:
        with open(vm.guest_errors_log, "rb") as f:
            f.seek(since)
            text = f.read().decode(errors="replace")
    except OSError:
        return None
    start = text.find(FW_RESUME_FIRST)
    if start < 0 or text.find(FW_RESUME_LAST, start) >= 0:
        return None
    last = [ln for ln in text[start:].splitlines()
            if ln.startswith("Invalid ")][-1]
    if vm.proc.poll() is not None:
        reason = vm.shutdown_reason()
        if reason != "guest-reset":
            return None
        state = "QEMU exited: the guest reset the machine (SHUTDOWN " \
                "guest-reset, -no-reboot)"
    else:
        try:
            cpus = _vcpus(vm)
        except (VMError, OSError):
            return None
        if not cpus or any(c["linear"] >= 0x100000 for c in cpus):
            return None
        state = "the vCPUs are in the BIOS: " + ", ".join(
            f"cpu{c['cpu']} at {c['linear']:#x}" for c in cpus)
    return (f"SeaBIOS's S3 resume stopped after \"{last}\", before the "
            f"OS's waking vector; {state}")


@contextlib.contextmanager
def firmware_resume_guard(ctx):
    """Around one S3 cycle, from before the suspend until the guest
    answers again: an error in it that firmware_resume_death() explains
    becomes FirmwareArtefact, on which run.py runs the case once more on
    a new VM."""
    try:
        since = os.path.getsize(ctx.vm.guest_errors_log)
    except OSError:
        since = 0
    try:
        yield
    except (VMError, AssertionError) as e:
        why = firmware_resume_death(ctx.vm, since)
        if why is None or isinstance(e, FirmwareArtefact):
            raise
        raise FirmwareArtefact(f"{why} ({str(e).splitlines()[0]})") from e


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
    while True:
        if vm.agent_hello(wait=5):
            # A guest that thaws from a hibernation image may close its
            # port once more after the hello: the command finds the
            # connection closed, with QEMU still running (check_qemu()
            # raises if it is not), and the harness connects anew.
            try:
                vm.run("true", timeout=10)
                return reconnects
            except VMCrash:
                vm.check_qemu()
        if time.monotonic() > deadline:
            raise VMError(f"the guest agent did not answer within "
                          f"{timeout}s ({reconnects} reconnection(s) of "
                          f"the control channel); {vcpu_states(vm)}")
        vm.reconnect_ctl()
        reconnects += 1


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
