# SPDX-License-Identifier: GPL-2.0
"""The kernel's AF_XDP conformance test, xskxceiver, on the driver.

tools/testing/selftests/bpf/xskxceiver of Debian's linux-source-7.3,
built on the host by upstream-bpf-tool.sh xskxceiver and run in the
guest from the host's / over virtio-9p (chrooted), the way test_xsk.sh
runs it on a physical device ("-i IFACE": one interface for both ends,
its TX and RX sockets sharing one UMEM on queue 0). One patch
(upstream-patches/xskxceiver/) lengthens three waits that assume hardware
speed: the receive loop's 3 s for a whole test and the 1 ms STAT_RX_FULL
and STAT_FILL_EMPTY wait before they read their counters; what the tests
check is unchanged.

A physical device in that mode has to bring the frames back: test_xsk.sh
expects the NIC to be in loopback. The VMXNET3 interface has no loopback
mode, so the peer's tap reflects every frame the guest sends straight
back to it (tc u32 + mirred on the tap's ingress; the tap's queue to
QEMU 10000 frames long). The guest sends nothing else: IPv6 is off and
the interface has no address. The tool's frames go to
55:44:33:22:11:01, a group address the device drops unless the
interface is promiscuous, as it is here. The guest reserves 64 huge
pages for the unaligned-chunk tests.

One case per mode, each all the tool's tests:

skb           XDP_COPY on the generic (skb) XDP path
drv           XDP_COPY on the driver's XDP
zc            XDP_ZEROCOPY (vx3)
zc_busy_poll  XDP_ZEROCOPY with busy polling (-b: SO_PREFER_BUSY_POLL,
              SO_BUSY_POLL, SO_BUSY_POLL_BUDGET; vx3)

Every test's verdict is a diagnostic line (PASS, SKIP, FAIL, or NOT RUN
with the reason from NOT_RUN); a case fails if a test fails or the tool
fails without a verdict. A mode with tests left out runs the tool once
per test (-t). After a failure the case prints the tool's messages and
the frames the rig lost meanwhile (the peer's tap, the device's missed
frames). Not in make check, for the time budget (about 2.5 minutes on
vx3, all four modes):

  ./run.py --driver vx3 -t xskxceiver --summary
  ./run.py --driver vmxnet3 -t xskxceiver --summary   (copy modes)
"""

import json
import os
import re
import subprocess

from lib.nic import diag, link_stats
from lib.test import vx3_only
from lib.vm import mount_host_root_script

NICS = 1
HOST_ROOT = True
HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_SH = os.path.join(HERE, "upstream-bpf-tool.sh")
GUEST_ROOT = "/host"
# One run of the tool, all tests of one mode
RUN_TIMEOUT = 1800
CASE_TIMEOUT = RUN_TIMEOUT + 120
# ok 3 PASS: ZC SEND_RECEIVE, ok 4 # SKIP SKIP: ..., not ok 5 FAIL: ...
# Tests left out, per mode, with the reason
NOT_RUN = {
    "skb": {
        "XDP_ADJUST_TAIL_SHRINK_MULTI_BUFF":
            "kernel bug (7.3.4), not the driver's: generic XDP copies a "
            "non-linear skb into system page_pool pages, and "
            "bpf_xdp_adjust_tail() frees the frag it drops as "
            "MEM_TYPE_PAGE_SHARED (the generic rxq's type), so the guest "
            "logs \"BUG: Bad page state ... page_pool leak\"",
    },
}
RESULT_RE = re.compile(r"^(ok|not ok) \d+ (?:# (SKIP) )?"
                       r"(?:(?:PASS|FAIL|SKIP): )?(.*)$", re.M)


def host_setup(host):
    r = subprocess.run([BUILD_SH, "xskxceiver"], capture_output=True,
                       text=True)
    if r.returncode != 0 or not r.stdout.strip():
        raise RuntimeError(f"{BUILD_SH} xskxceiver exited {r.returncode}:\n"
                           f"{r.stderr.strip()}")
    host.state["tool"] = os.path.join(r.stdout.strip().splitlines()[-1],
                                      "xskxceiver")


def setup(ctx):
    vm = ctx.vm
    ctx.load_driver()
    ifn = ctx.ifname(1)
    vm.check(mount_host_root_script(GUEST_ROOT), timeout=120)
    # Zero-copy needs LRO off; nothing but the tool's frames on the wire
    vm.run(f"ethtool -K {ifn} lro off")
    # The unaligned-chunk tests map their UMEM from 2 MiB huge pages
    vm.check("echo 64 > /proc/sys/vm/nr_hugepages")
    vm.check(f"sysctl -qw net.ipv6.conf.{ifn}.disable_ipv6=1 && "
             f"ip link set {ifn} promisc on && ip link set {ifn} up")
    tap = vm.tap(1)
    # The reflected frames queue on the tap until QEMU reads them: a long
    # queue, so that a burst the guest sends is not dropped there
    vm.peer_check(1, f"ip link set dev {tap} txqueuelen 10000 && "
                     f"tc qdisc add dev {tap} clsact && "
                     f"tc filter add dev {tap} ingress protocol all u32 "
                     f"match u32 0 0 action mirred egress redirect dev {tap}")


def _tests(ctx):
    """Return: {name: number} of the tool's tests (its -l list)."""
    if "tests" not in ctx.state:
        # -l exits with the kselftest code of no test run (3)
        out = ctx.vm.run(f"chroot {GUEST_ROOT} "
                         f"{ctx.host.state['tool']} -l")[1]
        tests = {m.group(2): int(m.group(1)) for m in
                 re.finditer(r"^(\d+): (\S+)$", out, re.M)}
        ctx.expect(tests, f"xskxceiver -l listed no test:\n{out[-2000:]}")
        ctx.state["tests"] = tests
    return ctx.state["tests"]


def _drops(ctx):
    """Return: where the rig drops frames: the peer's tap (its queue to
    QEMU) and the device (no RX buffer posted: rx_missed_errors)."""
    tap = json.loads(ctx.vm.peer_check(
        1, f"ip -j -s link show dev {ctx.vm.tap(1)}"))[0]["stats64"]
    guest = link_stats(ctx.vm, ctx.ifname(1))
    return {"tap_tx_dropped": tap["tx"]["dropped"],
            "device_rx_missed": guest["rx_missed_errors"]}


def _run_tool(ctx, args, tests):
    """Return: (exit code, {test: (kind, text)}) of one run of the tool."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    # A run that failed may leave its program attached or its MTU set
    vm.run(f"ip link set dev {ifn} xdpgeneric off; "
           f"ip link set dev {ifn} xdpdrv off; ip link set dev {ifn} mtu 1500")
    d0 = _drops(ctx)
    rc, out = vm.run(f"cd /tmp && chroot {GUEST_ROOT} /usr/bin/env -i "
                     f"PATH=/usr/sbin:/usr/bin:/sbin:/bin "
                     f"{ctx.host.state['tool']} {args}", timeout=RUN_TIMEOUT)
    d1 = _drops(ctx)
    res = {}
    for verdict, skip, what in RESULT_RE.findall(out):
        kind = "fail" if verdict == "not ok" else "skip" if skip else "pass"
        # "ZC BUSY-POLL STAT_RX_FULL": the word that names a test
        name = next((w for w in what.split() if w in tests), what)
        res[name] = (kind, what)
    if any(k == "fail" for k, _ in res.values()):
        diag(f"  frames lost on the rig during the run: "
             f"{ {k: d1[k] - d0[k] for k in d1} }")
        # The tool's own messages around a failure
        for ln in [ln for ln in out.splitlines()
                   if not RESULT_RE.match(ln)][-30:]:
            diag(f"  {ln}")
    ctx.expect(res, f"xskxceiver {args} printed no test result (exit "
                    f"{rc}):\n{out[-3000:]}")
    if rc and not any(k == "fail" for k, _ in res.values()):
        ctx.expect(False, f"xskxceiver {args} exited {rc}:\n{out[-3000:]}")
    return rc, res


def _run(ctx, mode, busy_poll=False):
    ifn = ctx.ifname(1)
    args = f"-i {ifn} -i {ifn} -m {mode}" + (" -b" if busy_poll else "")
    diag(f"{ctx.host.state['tool']} {args}")
    left_out = NOT_RUN.get(mode, {})
    tests = _tests(ctx)
    ctx.expect(set(left_out) <= set(tests), f"tests to leave out not in the "
               f"tool's list: {set(left_out) - set(tests)}")
    if left_out:
        # One run per test, the ones left out not among them
        res = {}
        for name, num in sorted(tests.items(), key=lambda t: t[1]):
            if name not in left_out:
                res.update(_run_tool(ctx, f"{args} -t {num}", tests)[1])
    else:
        res = _run_tool(ctx, args, tests)[1]
    counts = {"pass": 0, "skip": 0, "fail": 0}
    for name, (kind, what) in res.items():
        counts[kind] += 1
        diag(f"{kind.upper()}: {what}")
    for name, why in left_out.items():
        diag(f"NOT RUN: {mode.upper()} {name}: {why}")
    diag(f"xskxceiver {args.split(' -m ')[1]}: {counts['pass']} passed, "
         f"{counts['skip']} skipped, {counts['fail']} failed, "
         f"{len(left_out)} not run")
    failed = [what for kind, what in res.values() if kind == "fail"]
    ctx.expect(not failed, f"{len(failed)} xskxceiver tests failed: "
                           f"{', '.join(failed)}")


def test_skb(ctx):
    _run(ctx, "skb")


def test_drv(ctx):
    _run(ctx, "drv")


@vx3_only
def test_zc(ctx):
    _run(ctx, "zc")


@vx3_only
def test_zc_busy_poll(ctx):
    _run(ctx, "zc", busy_poll=True)
