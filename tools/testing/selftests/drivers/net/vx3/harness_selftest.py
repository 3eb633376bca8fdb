#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-only checks of the harness's emulator-artefact classifiers.

run.py boots or runs a case once more when a failure is the emulator's
or the firmware's, never the driver's (lib.vm.tcg_boot_artefact,
lib.vm.boot_stall_artefact, lib.test.firmware_resume_death). A classifier
that says yes too often hides driver bugs, one that never does leaves CI
red on QEMU: both are checked here on log excerpts like those the
failures left, and the boot-stall watchdog on a guest that never
answers. Also the guest command line a KASAN kernel boots with
(lib.vm.VM.kernel_append), and what the traffic helpers call flowing
(lib.nic.expect_flowing) and how the guest's side of the traffic is
started (lib.vm.VM.bg with nice). Also test_upstream_rss.py's judgement
of the upstream RSS scripts' failures as device limits or the rig's
rate (_limit, _toeplitz_verdicts), on outputs like the scripts'. No VM,
a few seconds; make check runs it with the static checks.
"""

import json
import os
import shlex
import socket
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib import test as testlib  # noqa: E402
from lib import nic as niclib  # noqa: E402
from lib import vm as vmlib  # noqa: E402
import test_upstream_rss as urss  # noqa: E402
from test_rss import toeplitz  # noqa: E402

INT3_BOOT = """\
Freeing unused kernel image (initmem) memory: 1932K
Oops: int3: 0000 [#1] SMP NOPTI
CPU: 1 UID: 0 PID: 1 Comm: swapper/0 Not tainted 7.3.4+deb13-amd64
Modules linked in:
Kernel panic - not syncing: Fatal exception in interrupt
"""

INT3_DRIVER = INT3_BOOT.replace("Modules linked in:",
                                "Modules linked in: vx3 page_pool")

STALL_EARLY = """\
tsc: Detected 2694.882 MHz processor
Spectre V2 : Vulnerable
Spectre V1 : Vulnerable: __user pointer sanitization and usercopy barriers
"""

STALL_LATE = STALL_EARLY + f"""\
Run /init as init process
{vmlib.AGENT_STARTED}
vx3-agent: using /dev/vport0p1
"""

RESUME_START = "Invalid write at addr 0xB0000094, size 1, region '(null)'\n"
RESUME_DEATH = (f"{testlib.FW_RESUME_FIRST} size 2, region '(null)'\n"
                "Invalid write at addr 0xB00F8040, size 4, region '(null)'\n")
RESUME_OK = RESUME_DEATH + f"{testlib.FW_RESUME_LAST} size 1\n"


def registers(*cpus):
    """HMP "info registers -a" text, one vCPU per (CS base, IP) pair: the
    real-mode form (EIP) below 1 MiB, the long-mode one (RIP) above."""
    out = []
    for n, (base, ip) in enumerate(cpus):
        sel = base >> 4 if base < 0x100000 else 0x10
        pc = f"EIP={ip:08x}" if base + ip < 0x100000 else f"RIP={ip:016x}"
        out.append(f"CPU#{n}\nEAX=00000000 EBX=00000000\n"
                   f"{pc} EFL=00000002 [-------] CPL=0 II=0 A20=1 SMM=0 "
                   f"HLT=0\nCS ={sel:04x} {base:08x} 0000ffff 00009b00\n"
                   f"CR0=00000010 CR2=00000000\n")
    return "".join(out)


class FakeProc:
    def __init__(self, rc):
        self.rc = rc

    def poll(self):
        return self.rc


class FakeVM:
    """What firmware_resume_death() reads of a VM."""

    def __init__(self, errors_log, rc=None, reason=None, regs=""):
        self.guest_errors_log = errors_log
        self.proc = FakeProc(rc)
        self.reason = reason
        self.regs = regs

    def shutdown_reason(self):
        return self.reason

    def monitor(self, cmd):
        assert cmd == "info registers -a", cmd
        return self.regs


class BootArtefacts(unittest.TestCase):
    def test_int3_before_any_driver(self):
        self.assertTrue(vmlib.tcg_boot_artefact(INT3_BOOT))

    def test_int3_with_the_driver_loaded(self):
        self.assertFalse(vmlib.tcg_boot_artefact(INT3_DRIVER))

    def test_no_oops(self):
        self.assertFalse(vmlib.tcg_boot_artefact(STALL_LATE))

    def test_stall_before_init(self):
        stall = vmlib.BootStall("silent")
        self.assertTrue(vmlib.boot_stall_artefact(stall, STALL_EARLY))

    def test_stall_after_the_agent_started(self):
        stall = vmlib.BootStall("silent")
        self.assertFalse(vmlib.boot_stall_artefact(stall, STALL_LATE))

    def test_other_boot_errors(self):
        for err in (vmlib.VMError("guest agent did not answer within 900s"),
                    vmlib.VMCrash("QEMU exited")):
            self.assertFalse(vmlib.boot_stall_artefact(err, STALL_EARLY))


class BootWatchdog(unittest.TestCase):
    """VM._ctl_connect() on a guest whose console stops and whose agent
    never answers: BootStall after BOOT_STALL_S, not the boot timeout."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.sockets = socket.socketpair()
        self.stall = vmlib.BOOT_STALL_S
        vmlib.BOOT_STALL_S = 1

    def tearDown(self):
        vmlib.BOOT_STALL_S = self.stall
        for s in self.sockets:
            s.close()
        self.dir.cleanup()

    def connect(self, console_text):
        vm = vmlib.VM("0", "/dev/null", kernel="/dev/null",
                      logdir=self.dir.name, boot_timeout=30)
        with open(vm.console_log, "w") as f:
            f.write(console_text)
        vm._connect_unix = lambda path: self.sockets[0]
        vm._ctl_reader = lambda: None
        t0 = time.monotonic()
        with self.assertRaises(vmlib.VMError) as cm:
            vm._ctl_connect("unused")
        return cm.exception, time.monotonic() - t0

    def test_silent_console(self):
        err, took = self.connect(STALL_EARLY)
        self.assertIsInstance(err, vmlib.BootStall)
        self.assertLess(took, 10)
        self.assertIn("Spectre V1", str(err))


class FirmwareResume(unittest.TestCase):
    def setUp(self):
        fd, self.log = tempfile.mkstemp()
        os.close(fd)

    def tearDown(self):
        os.unlink(self.log)

    def vm(self, errors, **kw):
        with open(self.log, "w") as f:
            f.write(RESUME_START + errors)
        return FakeVM(self.log, **kw)

    def test_guest_reset_in_the_firmware(self):
        vm = self.vm(RESUME_DEATH, rc=0, reason="guest-reset")
        why = testlib.firmware_resume_death(vm, len(RESUME_START))
        self.assertIn("0xB00F8040", why)

    def test_hang_in_the_bios(self):
        vm = self.vm(RESUME_DEATH, regs=registers((0xf0000, 0x1a2b), (0x9f000, 0)))
        self.assertIsNotNone(testlib.firmware_resume_death(vm))

    def test_the_os_got_the_cpu_back(self):
        vm = self.vm(RESUME_OK, rc=0, reason="guest-reset")
        self.assertIsNone(testlib.firmware_resume_death(vm))

    def test_a_vcpu_in_the_kernel(self):
        vm = self.vm(RESUME_DEATH, regs=registers((0xf0000, 0x1a2b),
                                                  (0, 0xffffffff81000000)))
        self.assertIsNone(testlib.firmware_resume_death(vm))

    def test_panic_not_reset(self):
        vm = self.vm(RESUME_DEATH, rc=0, reason="guest-panic")
        self.assertIsNone(testlib.firmware_resume_death(vm))

    def test_no_resume_in_this_cycle(self):
        vm = self.vm(RESUME_DEATH, rc=0, reason="guest-reset")
        since = os.path.getsize(self.log)
        self.assertIsNone(testlib.firmware_resume_death(vm, since))


class KernelAppend(unittest.TestCase):
    """The debug (KASAN) kernel boots without slub_debug and page_poison,
    and with every other option of its variant."""

    def append(self, variant, kasan):
        return vmlib.VM("k", "i", variant=variant, kasan=kasan,
                        runid="000000").kernel_append().split()

    def test_debian_kernel_keeps_them(self):
        for v in vmlib.VARIANTS:
            a = self.append(v, False)
            self.assertIn("slub_debug=FZP", a, v)
            self.assertIn("page_poison=1", a, v)

    def test_kasan_kernel_drops_only_them(self):
        for v, var in vmlib.VARIANTS.items():
            a = self.append(v, True)
            want = [x for x in var["append"].split()
                    if not x.startswith(("slub_debug=", "page_poison="))]
            self.assertEqual(a[-len(want):] if want else [], want, v)
            self.assertFalse([x for x in a if x.startswith(
                ("slub_debug", "page_poison"))], v)
            self.assertIn("console=ttyS0", a, v)


class CountersVM:
    """ip -j -s -s link show: every call adds (packets, bytes) each way."""

    def __init__(self, step_pkts, step_bytes):
        self.step = (step_pkts, step_bytes)
        self.n = 0

    def check(self, cmd, timeout=60):
        self.n += 1
        p, b = (self.n * x for x in self.step)
        d = {"packets": p, "bytes": b}
        return json.dumps([{"stats64": {"rx": d, "tx": d}}])


class Ctx:
    def __init__(self, vm):
        self.vm = vm

    def ifname(self, n):
        return "eth0"


class Flowing(unittest.TestCase):
    """expect_flowing() wants data both ways, not a few packets."""

    def test_control_packets_only(self):
        # what a missing server looks like: SYN and RST, a few a second
        ctx = Ctx(CountersVM(3, 180))
        with self.assertRaises(AssertionError):
            niclib.expect_flowing(ctx, timeout=1)

    def test_data(self):
        ctx = Ctx(CountersVM(50, 70000))
        niclib.expect_flowing(ctx, timeout=1)


class NiceBg(unittest.TestCase):
    """VM.bg(nice=True) renices the job's shell before its command, and
    the job fails if that fails (busybox has renice, not nice)."""

    def test_prefix(self):
        seen = []
        v = vmlib.VM("k", "i", runid="000000")
        v.check = lambda cmd, timeout=60: seen.append(cmd) or "123"
        v.bg("exec iperf -s", nice=True)
        v.bg("exec iperf -s")
        self.assertIn(shlex.quote("renice -n 19 -p $$ >/dev/null || exit 1; "
                                  "exec iperf -s"), seen[0])
        self.assertNotIn("renice", seen[1])


TB = "# Exception| Traceback (most recent call last):\n"


def cmd_failure(cmd, stderr):
    return (TB + "# Exception| net.lib.py.utils.CmdExitFailure: Command "
            f"failed\n# Exception| CMD: {cmd}\n# Exception|   EXIT: 1\n"
            f"# Exception|   STDERR: {stderr}\n")


def nl_failure(frame, call, msg):
    return (TB + f'# Exception|   File "x.py", line 1, in {frame}\n'
            f"# Exception|     {call}\n"
            "# Exception| net.ynl.pyynl.lib.ynl.NlError: Netlink error: "
            f"{msg}\n")


HITLESS = ("# Check| At rss_ctx.py, line 377, in test_hitless_key_update:\n"
           "# Check|     ksft_lt((t1 - t0).total_seconds(), 0.15)\n"
           "# Check failed 0.154021 >= 0.15 \n")


class UpstreamRssLimits(unittest.TestCase):
    """A failed subcase is a device limit only if it died of exactly
    that; anything else, or anything more, stays a failure."""

    def test_limits(self):
        yes = [cmd_failure("ethtool -X eth0 context new",
                           "Cannot set RX flow hash configuration: "
                           "Operation not supported"),
               nl_failure("test_rss_ctx_add",
                          "ctx = cfg.ethnl.rss_create_act({...})",
                          "Operation not supported"),
               nl_failure("set_rss", "cfg.ethnl.rss_set({...})",
                          "vx3: the device hashes TCP over IP addresses "
                          "and optionally ports, other IP packets over "
                          "addresses only: Invalid argument"),
               cmd_failure("ethtool -L eth0 combined 5",
                           "netlink error: requested channel count "
                           "exceeds maximum (offset 36)"),
               HITLESS]
        for block in yes:
            self.assertTrue(urss._limit(block, 4), block)

    def test_not_limits(self):
        no = [
            # within the maximum: the driver refused a count it offers
            cmd_failure("ethtool -L eth0 combined 3",
                        "netlink error: requested channel count exceeds "
                        "maximum (offset 36)"),
            # a field set refused without a message
            nl_failure("set_rss", "cfg.ethnl.rss_set({...})",
                       "Invalid argument"),
            # a context refused, then something else failed too
            cmd_failure("ethtool -X eth0 context new",
                        "Operation not supported") +
            "# Check failed 1 != 2\n",
            # the key update also dropped packets
            HITLESS + "# Check failed 3 != 0\n",
            # another exception
            TB + "# Exception| KeyError: 'rss-hash-key'\n"]
        for block in no:
            self.assertIsNone(urss._limit(block, 4), block)


class ToeplitzVerdicts(unittest.TestCase):
    """hw/toeplitz.py: a UDP subcase is a skip only if its frames do not
    carry the address hash (an L3 hash AF_PACKET replaced); too few
    frames pass only if every one was verified."""

    KEY = bytes(range(1, 41))
    SA, DA = "198.18.1.1", "198.18.1.2"

    def frames(self, hashes):
        return "\n".join(f"# Exception|  cpu 0: rx_hash 0x{h:08x} [saddr "
                         f"{self.SA} daddr {self.DA} sport 4000 dport 5000]"
                         f" != expected 0x1" for h in hashes)

    def verdict(self, name, text, udp_ports=False, key=KEY):
        res = [(False, name, "")]
        return urss._toeplitz_verdicts(res, {name: text}, key,
                                       {"udp4": udp_ports,
                                        "udp6": udp_ports})[0]

    def test_udp(self):
        addr = toeplitz(self.KEY, socket.inet_aton(self.SA) +
                        socket.inet_aton(self.DA))
        ok, _, dr = self.verdict("toeplitz.test.udp_ipv4",
                                 self.frames([addr ^ 1, addr ^ 2]))
        self.assertTrue(ok)
        self.assertTrue(dr.startswith("SKIP"))
        with self.assertRaises(AssertionError):
            self.verdict("toeplitz.test.rss_udp_ipv4",
                         self.frames([addr ^ 1, addr]))
        with self.assertRaises(AssertionError):
            self.verdict("toeplitz.test.udp_ipv4", "count: pass=0")
        # the driver says it hashes the ports: the receiver's verdict
        self.assertFalse(self.verdict("toeplitz.test.udp_ipv4",
                                      self.frames([addr ^ 1]),
                                      udp_ports=True)[0])
        # no key reported: nothing to judge by
        self.assertFalse(self.verdict("toeplitz.test.udp_ipv4",
                                      self.frames([addr ^ 1]), key=None)[0])

    def test_too_few(self):
        few = "toeplitz: too few frames for verification\n"
        self.assertTrue(self.verdict("toeplitz.test.tcp_ipv4",
                                     "count: pass=9 nohash=0 fail=0\n" +
                                     few)[0])
        self.assertFalse(self.verdict("toeplitz.test.tcp_ipv4",
                                      "count: pass=8 nohash=0 fail=1\n" +
                                      few)[0])
        self.assertFalse(self.verdict("toeplitz.test.tcp_ipv4",
                                      "count: pass=0 nohash=0 fail=0\n" +
                                      few)[0])
        self.assertFalse(self.verdict("toeplitz.test.tcp_ipv4",
                                      "count: pass=40 nohash=0 fail=2\n")[0])


if __name__ == "__main__":
    unittest.main(verbosity=1)
