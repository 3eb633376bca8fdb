# SPDX-License-Identifier: GPL-2.0
"""Allocation failures on the debug kernel (fault injection, vx3 only).

Needs the debug kernel's FAILSLAB, FAIL_PAGE_ALLOC and their debugfs
controls, and /proc/<pid>/fail-nth (KERNELS = ("debug",)).

pp_alloc_traffic
    RX buffer allocation failures under traffic: with the rings at
    32/32/64 (a page pool of 64 pages, so that the data a socket holds
    keeps the refills going to the page allocator) and iperf running
    peer -> guest with lro on, fail_page_alloc fails atomic page
    allocations (those that cannot sleep: vx3's NAPI refills, but also
    the stack's) in three bursts of 200 at probability 20 %. vx3 must
    count its failures (the qstats rx-alloc-fail total grows, by at most
    the number injected; ethtool -S does not repeat it), the
    carrier stays up (carrier_changes unchanged), aggregates land in body
    buffers again once the injection stops (rx0_body_bufs and
    rx0_lro_packets grow), and 16 MiB of TCP from the peer arrive intact
    (SHA-256). Not fail_function on page_pool_alloc_pages(): vx3's head
    buffers come from page_pool_alloc_frag(), which on 6.12 reaches the
    pages through page_pool_alloc_netmems() (no injection point), and on
    this kernel (kprobes on int3, no ftrace) fail_function's probability
    draw takes the batched entropy lock in the int3 handler, an NMI-like
    context: lockdep reports "inconsistent lock state" at the first
    injection and turns itself off.

both_configs_fail
    A reconfiguration whose new configuration and old one both fail to
    start: failslab and fail_page_alloc fail every allocation made under
    vx3_up() (the stack trace filter set to that function's text, found
    in /proc/kallsyms; probability 100), so the new queues and then the
    old ones cannot get their interrupts or RX buffers. `ip link set mtu
    1400` must fail, and the interface must stay up (IFF_UP; not closed
    behind the user's back) without carrier, at MTU 1500, while vx3
    tries again ("trying again later" at least twice within 4 s). Once
    the injection stops the interface must have its carrier back within
    45 s ("queues restarted"), ping, and take the MTU change then.

fail_nth_rings, fail_nth_channels, fail_nth_mtu, fail_nth_features,
fail_nth_open, fail_nth_probe (not in make check)
    make check's debug lane runs only pp_alloc_traffic: under TCG with
    KASAN a step takes 10-30 s and a path 15-30 minutes, more than make
    check's budget. Run the sweep with
    make vmtest VMTEST_ARGS="--kernel debug --driver vx3 -t faultinject".
    One configuration path each: ethtool -G (rx/rx-jumbo/tx 32/32/64 ->
    32/32/128), ethtool -L tx 0 -> 1, MTU 1500 -> 1400, ethtool -K lro on
    -> off (vx3 allocates nothing on a feature change: the path checks
    that no step injects and the command works), ip link set up
    (after down) and binding the PCI device to vx3 (sysfs bind: probe).
    failslab and fail_page_alloc fail GFP_KERNEL allocations of any order
    here, but only where a fail-nth counter says so (probability 0), each
    with a stack trace in dmesg (verbose 2); the runner's dmesg scan
    accepts the "Call Trace" of those reports and of the allocation
    failure warnings they cause (vm.dmesg_reports_ok) and nothing else.
    User pages (__GFP_HIGHMEM) are left alone: the fault handler retries
    them, and they would be most of a command's checks.
    Only allocations with a vx3 frame in their stack trace count and fail
    (the stack trace filter's require-start/-end set to vx3's module
    text), so a sweep fails the driver's own allocations one by one and
    not the tool's (ethtool hung once on its own failed netlink
    allocation) nor the core's. (Counting the core's too, the features
    path found only the core's and ethtool's own behaviour: a failed
    netlink reply allocation after the change, an ethtool that exits 0
    with the features unchanged.)
    The command runs under vx3-failnth N (the child writes N to
    /proc/self/fail-nth and execs the command; the parent reads the
    counter of the zombie back: injected or not), N counting up until a
    run injects nothing, which must then succeed (at most 400 steps,
    VX3_FAILNTH_CAP for a shorter try; the cap bounds the run time, the
    command then runs once more without injection); a first step that
    injects nothing fails the path. N starts at the count of a run of
    the same tool that changes nothing (N large, the counter read back:
    the checks it makes under vx3 frames, 0 where vx3 has nothing to do)
    less 5, at least 1. After each step that injected:
      - the command failed with an error message (errno, or the extended
        ACK where the path has one) and the old configuration is in
        effect: ethtool -g/-l/-k, MTU, link down (open), device unbound
        (probe); or
      - it succeeded (vx3 degraded legitimately, or the failure hit
        something after the change): the new configuration is in effect
        and works; it is then set back without injection.
    On a running interface the carrier must be up, the interface must
    have exactly one live page pool per RX queue (none while down) and
    the link counters must not jump (a failed reconfiguration must not count the
    old queues twice: at most 30 packets per step, while the running
    queues have counted more: a TCP stream before the first step, 50
    pings after each reconfiguration back); every few steps, and after
    each degraded success, a ping must pass. open and probe: a clean
    run every few steps must work. The site of each injection (first
    vx3 frame of its stack trace, else the first frame outside the
    allocators), the error messages and the time each path took are
    printed.
    The cap must lie past the command's count: a clean mtu change makes
    252-284 counted checks (three runs; the number depends on what the
    page pool holds), so the sweep ends near there; the cap was 200,
    which stopped it short, and is 400 now. Most checks past the driver's
    own are the debug kernel's bookkeeping under vx3 frames, each a
    __GFP_NOWARN allocation with a silent fallback that fault injection
    does not report (site "?"). Steps 50-109 of the mtu path, the stack
    of each injection dumped by a throw-away kretprobe on
    should_fail_ex(): 27 kmemleak object records (kmemleak falls back to
    its pool), 22 DMA-API debug cacheline tree nodes for the pages the
    page pool maps (radix_tree_node_alloc falls back to its per-CPU
    preload), 3 nodes of the page pool's DMA index xarray (retried), 2
    ref_tracker (linkwatch) and 1 NAPI skb cache fill; the command
    succeeded after each of those. The other 5 failed it cleanly: 3 page
    pool bulk allocations of the first buffers of a ring (no buffer
    posted: -ENOMEM) and 2 coherent ring allocations. The whole mtu
    sweep (VX3_FAILNTH_CAP=2000): steps 1..246, the last injecting
    nothing (that run made 240 checks); 21 failed cleanly, 224
    succeeded; no splat, every state check held, kmemleak clean after
    rmmod; 50 minutes beside other VMs. Swept to their end the same way
    on 2026-12-02 (debug kernel 6.12.118, two sweeps side by side):
    rings (`ethtool -G eth0 rx 32 rx-jumbo 32 tx 128`) steps 1..241, the
    clean run making 238 checks: 28 failed cleanly, 212 succeeded, 29
    minutes; channels (`ethtool -L eth0 tx 1`) steps 1..286, the clean
    run making 284: 38 failed cleanly, 247 succeeded, 32 minutes. No
    splat, every state check held, kmemleak clean after rmmod; both end
    below the default cap of 400. On 2026-12-03, the same way: open
    (`ip link set eth0 up` after down) steps 1..308, the clean run making
    307 checks: 22 failed cleanly (-ENOMEM: 9 in vx3_tx_ring_alloc, 6 in
    vx3_rx_queue_alloc, 4 in vx3_up, 3 in vx3_alloc_qset), 285 succeeded
    (the debug kernel's NOWARN bookkeeping, site "?"), 50 minutes beside
    other VMs; no splat, kmemleak clean after rmmod. probe (sysfs bind,
    the device held enabled, see _Probe): steps 1..824 in 113 minutes,
    not to its end (stopped inside register_netdev()'s per-queue sysfs
    objects): 181 failed cleanly (-ENOMEM in probe, the device left
    unbound; 4 of them in vx3_alloc_netdev), 643 succeeded (the debug
    kernel's bookkeeping and the irq descriptors' sysfs files, whose
    failure the core ignores); no splat. Without the hold its first
    attempt found the ACPICA use-after-free described at _Probe.
"""

import collections
import json
import os
import re
import time

from lib.nic import (channels, diag, ethtool_stats, ethtool_table, features,
                     ifindex, link_stats, parse_features, parse_kv, ping,
                     qstats, rings, setup_nic, tcp_integrity, wait_carrier)

NICS = 1
DRIVERS = ("vx3",)
KERNELS = ("debug",)

DBG = "/sys/kernel/debug"
PROBE_N = 100000        # larger than any command's number of checks
MARGIN = 5              # steps before a no-op run's count
CAP = int(os.environ.get("VX3_FAILNTH_CAP", "400"))  # steps per path
PING_EVERY = 4          # verify traffic every PING_EVERY failed steps
RETRY_EVERY = 8         # open/probe: a clean retry every RETRY_EVERY steps
JUMP = 30               # rx/tx packets a step may add (pings, ARP, ND)
REFILL = 50             # pings after a reconfiguration: the new queues'
                        # counters exceed JUMP
BURSTS = 3              # pp_alloc_traffic: bursts of BURST failures
BURST = 200
BURST_PROB = 20         # percent of the atomic page allocations

BASE_RINGS = (32, 32, 64)
ALT_RINGS = (32, 32, 128)
ALT_MTU = 1400

# Reports the injections provoke on purpose: fault injection's own (with
# verbose 2 a stack trace) and the allocation failure warnings of code
# that does not pass __GFP_NOWARN.
REPORTS_OK = re.compile(r"FAULT_INJECTION: forcing a failure|"
                        r"page allocation failure: order:|"
                        r"vmalloc error: size|SLUB: Unable to allocate")
FAILNTH_RE = re.compile(r"^vx3-failnth: n=(\d+) left=(-?\d+) injected=(\d) "
                        r"status=(\d+)$", re.M)
FRAME_RE = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:\? )?([\w.]+)\+0x\w+/0x\w+"
                      r"(\s+\[\w+\])?")
STALE_FRAME = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?\? ")
ALLOC_FRAME = re.compile(r"fail|alloc|slab|kmalloc|kmem|kzalloc|kcalloc|"
                         r"dump_stack|pcpu|vmalloc|page_frag|get_free|"
                         r"dma_direct|kasan|__kmalloc|memdup|kstrdup|"
                         r"^new_slab|^allocate_slab")


def setup(ctx):
    vm = ctx.vm
    rc, _ = vm.run(f"test -d {DBG}/failslab && test -d {DBG}/fail_page_alloc"
                   f" && test -w /proc/self/fail-nth")
    if rc != 0:
        ctx.skip("no failslab/fail_page_alloc debugfs or fail-nth "
                 "(FAULT_INJECTION_DEBUG_FS)")
    setup_nic(ctx)
    vm.dmesg_reports_ok = REPORTS_OK
    ctx.state["bdf"] = vm.check(
        f"basename $(readlink /sys/class/net/{ctx.ifname(1)}/device)").strip()


def _fi_mode(vm, nth):
    """nth: failslab and fail_page_alloc fail GFP_KERNEL allocations of any
    order, but only where a fail-nth counter says so (probability 0), and
    report each with a stack trace. Else: only allocations that cannot
    sleep (GFP_ATOMIC, GFP_NOWAIT), quietly, once a probability is set.
    User pages (__GFP_HIGHMEM) never fail: a command's page faults would
    be most of its checks, and the fault handler just retries them.
    Address space randomization is off while nth."""
    gfp_wait, verbose = ("N", 2) if nth else ("Y", 0)
    # Without address space randomization a command's page table
    # allocations, and so the position of its kernel part in the count,
    # are the same from run to run
    vm.check(f"sysctl -qw kernel.randomize_va_space={0 if nth else 2}")
    vm.check(f"for a in failslab fail_page_alloc; do d={DBG}/$a; "
             f"echo 0 > $d/probability && echo {verbose} > $d/verbose && "
             f"echo {gfp_wait} > $d/ignore-gfp-wait && echo 1 > $d/interval "
             f"&& echo 0 > $d/space || exit 1; done; "
             f"echo Y > {DBG}/fail_page_alloc/ignore-gfp-highmem && "
             f"echo 0 > {DBG}/fail_page_alloc/min-order")


def teardown(ctx):
    _fi_mode(ctx.vm, False)
    _fi_filter(ctx.vm, vx3_only=False)


# --- helpers ---------------------------------------------------------------


def _failnth(vm, n, cmd, timeout=120):
    """Run cmd with fail-nth n; returns (rc, left, injected, output)."""
    rc, out = vm.run(f"vx3-failnth {n} {cmd} 2>&1", timeout=timeout)
    return _failnth_result(out, cmd) + (rc,)


def _failnth_result(out, cmd):
    m = FAILNTH_RE.search(out)
    if not m:
        raise AssertionError(f"no vx3-failnth result for `{cmd}`:\n{out}")
    rest = FAILNTH_RE.sub("", out).strip()
    return int(m.group(4)), int(m.group(2)), m.group(3) == "1", rest


def _fi_filter(vm, vx3_only=True):
    """failslab and fail_page_alloc consider only allocations whose stack
    trace (32 frames) has a frame in vx3's module text
    (FAULT_INJECTION_STACKTRACE_FILTER: require-start/-end), and so does
    the fail-nth counter: a sweep fails the driver's allocations one by
    one, not the tool's or the core's around them. vx3_only=False puts
    the filter back to its default (every stack)."""
    start, end = 0, (1 << 64) - 1
    if vx3_only:
        out = vm.check("grep '^vx3 ' /proc/modules")
        f = out.split()
        start = int(f[5], 16)
        end = start + int(f[1])
        if not start:
            raise AssertionError(f"no address for vx3 in /proc/modules: "
                                 f"{out}")
    vm.check(f"for a in failslab fail_page_alloc; do d={DBG}/$a; "
             f"echo {start:#x} > $d/require-start && "
             f"echo {end:#x} > $d/require-end && "
             f"echo 32 > $d/stacktrace-depth || exit 1; done")


def _checks(vm, noop):
    """Fault injection checks a run of noop makes (it must change nothing)."""
    _, left, injected, out, _ = _failnth(vm, PROBE_N, noop)
    if injected or left <= 0:
        raise AssertionError(f"`{noop}`: fail-nth {PROBE_N} left {left}:\n"
                             f"{out}")
    return PROBE_N - left


def _sections(out):
    """Output split at "@@NAME" lines: {NAME: text}; before the first: ""."""
    sec, cur = {"": []}, ""
    for ln in out.splitlines():
        if ln.startswith("@@"):
            cur = ln[2:].strip()
            sec[cur] = []
        else:
            sec[cur].append(ln)
    return {k: "\n".join(v) for k, v in sec.items()}


def _site(dmesg):
    """Where the injection after the last vx3-failnth mark in dmesg
    happened, from its stack trace: the first vx3 frame, else the first
    frame outside the allocators; "?" without a report (__GFP_NOWARN).
    Frames marked "? " (stale addresses on the stack) do not count."""
    lines = dmesg.splitlines()
    marks = [i for i, ln in enumerate(lines) if "vx3-failnth " in ln]
    lines = lines[marks[-1]:] if marks else []
    starts = [i for i, ln in enumerate(lines)
              if "FAULT_INJECTION: forcing a failure" in ln]
    if not starts:
        return "?"
    name = "?"
    for ln in lines[starts[-1]:]:
        if "</TASK>" in ln:
            break
        m = FRAME_RE.match(ln)
        if not m or STALE_FRAME.match(ln):
            continue
        if m.group(2):
            return m.group(1)
        if name == "?" and not ALLOC_FRAME.search(m.group(1)):
            name = m.group(1)
    return name


def _fill_counters(ctx):
    """A short TCP stream peer -> guest: the queues' counters are large,
    so that counting them twice shows."""
    vm = ctx.vm
    job = vm.bg("iperf -s -p 5611 >/dev/null 2>&1")
    try:
        vm.peer_check(1, f"iperf -c {vm.guest_ip4(1)} -p 5611 -t 3 "
                      f">/dev/null 2>&1 || (sleep 1; iperf -c "
                      f"{vm.guest_ip4(1)} -p 5611 -t 3 >/dev/null)",
                      timeout=60)
    finally:
        job.stop()


class Path:
    """One configuration path: cmd changes base -> alt, noop changes
    nothing. state(traffic) is a guest shell script that prints the state
    in @@-sections (with traffic: also a ping, and the page pools);
    check() asserts on its output; to_base() goes back without
    injection."""

    name = ""
    cmd = noop = ""
    cap = CAP
    retry = False
    # vx3 may allocate nothing on this path: then the first step injects
    # nothing, and the command must simply work
    may_not_allocate = False

    def __init__(self, ctx):
        self.ctx = ctx
        self.vm = ctx.vm
        self.ifn = ctx.ifname(1)

    def state(self, traffic):
        raise NotImplementedError

    def check(self, sec, alt):
        """Assert on the state sections: base (alt False) or alt."""
        raise NotImplementedError

    def verify(self, alt, traffic=True):
        out = self.vm.check(self.state(traffic), timeout=120)
        self.check(_sections(out), alt)

    def to_base(self):
        raise NotImplementedError

    def degraded(self):
        """After a run that injected but succeeded: the new configuration
        works; back to the old one."""
        self.verify(True)
        self.to_base()
        self.verify(False, traffic=False)

    def prepare(self):
        """Called after the no-op run, before the first step."""

    def after_failure(self, step):
        """Called after the step-th failed step, after check(): with
        retry set, a clean run every RETRY_EVERY failures must work."""
        if self.retry and step % RETRY_EVERY == 1:
            self.vm.check(self.cmd)
            self.verify(True)
            self.to_base()


def _report(errors, sites):
    for e, c in errors.most_common():
        diag(f"  {c:3d}x error: {e}")
    diag("  injection sites: " + ", ".join(
        f"{s} x{c}" for s, c in sites.most_common()))


def _step(ctx, path, n, traffic):
    """One injected run of path.cmd plus the state after it, one guest
    command. Returns (status, injected, output, sections, site)."""
    script = (f"echo vx3-failnth {n} > /dev/kmsg; "
              f"vx3-failnth {n} {path.cmd} 2>&1; echo @@STATE; "
              f"{path.state(traffic)}; echo @@DMESG; dmesg | tail -n 400")
    _, out = ctx.vm.run(script, timeout=180)
    sec = _sections(out)
    status, left, injected, rest = _failnth_result(sec[""], path.cmd)
    return status, left, injected, rest, sec, _site(sec.get("DMESG", ""))


def _iterate(ctx, path):
    """Fail every fault injection check of path.cmd once, in turn."""
    vm = ctx.vm
    t0 = time.monotonic()
    _fi_mode(vm, True)
    _fi_filter(vm)
    base = _checks(vm, path.noop)
    path.prepare()
    start = max(1, base - MARGIN)
    failed = degraded = 0
    errors = collections.Counter()
    sites = collections.Counter()
    for n in range(start, start + path.cap):
        status, left, injected, out, sec, site = _step(
            ctx, path, n, traffic=failed % PING_EVERY == 0)
        if not injected:
            # A sweep whose first step injects nothing tested nothing
            # (the noop's count was above the command's)
            ctx.expect(n > start or path.may_not_allocate,
                       f"{path.name}: the first step (fail-nth "
                       f"{n}, from the noop's {base} checks) injected "
                       f"nothing: `{path.cmd}` made {n - left} checks")
            ctx.expect(status == 0, f"{path.name}: fail-nth {n} injected "
                       f"nothing but `{path.cmd}` failed ({status}):\n{out}")
            path.check(sec, True)
            path.verify(True)
            dt = time.monotonic() - t0
            diag(f"{path.name}: `{path.cmd}`: no-op run {base} checks, "
                 f"steps {start}..{n} (the clean run made {n - left}): "
                 f"{failed} failed cleanly, {degraded} succeeded anyway; "
                 f"{dt:.0f}s")
            _report(errors, sites)
            return
        sites[site] += 1
        msg = " / ".join(ln.strip() for ln in out.splitlines()
                         if ln.strip())
        diag(f"{path.name} {n}: {'failed' if status else 'succeeded'}, "
             f"injected in {site}" + (f": {msg}" if status else ""))
        what = f"{path.name}: after fail-nth {n} ({site}, `{path.cmd}` "
        try:
            if status != 0:
                failed += 1
                what += f"failed: {msg})"
                ctx.expect(msg, "no error message")
                errors[f"{msg} ({status})"] += 1
                path.check(sec, False)
                path.after_failure(failed)
            else:
                degraded += 1
                what += "succeeded)"
                path.check(sec, True)
                path.degraded()
        except AssertionError as e:
            raise AssertionError(f"{what}: {e}") from None
    # The cap bounds the run time, it is no verdict: the command then
    # runs once without injection.
    vm.check(path.cmd)
    path.verify(True)
    dt = time.monotonic() - t0
    diag(f"{path.name}: `{path.cmd}`: no-op run {base} checks, steps "
         f"{start}..{start + path.cap - 1} all injected (cap reached): "
         f"{failed} failed cleanly, {degraded} succeeded anyway; "
         f"{dt:.0f}s")
    _report(errors, sites)


# --- pp_alloc_traffic --------------------------------------------------------


def _rx_counters(ctx):
    vm = ctx.vm
    e = ethtool_stats(vm, ctx.ifname(1))
    q = qstats(vm, ifindex(vm, ctx.ifname(1)))
    return e, q


def _times(vm):
    return int(vm.check(f"cat {DBG}/fail_page_alloc/times").strip())


def test_pp_alloc_traffic(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    ctx.expect(features(vm, ifn)["large-receive-offload"][0], "lro is off")
    # A page pool of 64 pages (one per ring slot): received data held by
    # the socket is more than it can recycle, so refills keep reaching
    # the page allocator.
    _small_rings(ctx)
    _fi_mode(vm, False)
    fpa = f"{DBG}/fail_page_alloc"
    carrier0 = vm.check(f"cat /sys/class/net/{ifn}/carrier_changes").strip()
    e0, q0 = _rx_counters(ctx)
    job = vm.bg("iperf -s -p 5601 >/dev/null 2>&1", nice=True)
    peer = vm.peer_bg(1, f"while :; do iperf -c {vm.guest_ip4(1)} -p 5601 "
                      f"-t 3600 >/dev/null 2>&1; sleep 0.5; done")
    injected = 0
    try:
        time.sleep(3)
        e1, _ = _rx_counters(ctx)
        ctx.expect(e1["rx0_body_bufs"] > e0["rx0_body_bufs"],
                   "no aggregate used a body buffer before the injection")
        for burst in range(BURSTS):
            vm.check(f"echo {BURST} > {fpa}/times && "
                     f"echo {BURST_PROB} > {fpa}/probability")
            deadline = time.monotonic() + 20
            while _times(vm) > 0 and time.monotonic() < deadline:
                time.sleep(0.5)
            vm.check(f"echo 0 > {fpa}/probability")
            left = _times(vm)
            injected += BURST - left
            _, q = _rx_counters(ctx)
            diag(f"burst {burst}: {BURST - left} atomic page allocations "
                 f"failed; qstats rx-alloc-fail {q.get('rx-alloc-fail')}")
            time.sleep(2)
        e2, q2 = _rx_counters(ctx)
        d = {k: e2[k] - e0[k] for k in e2 if k.startswith("rx0_")}
        d_q = q2.get("rx-alloc-fail", 0) - q0.get("rx-alloc-fail", 0)
        diag(f"{injected} failures injected: qstats rx-alloc-fail +{d_q}, "
             + ", ".join(f"{k} +{v}" for k, v in d.items() if v))
        ctx.expect(0 < d_q <= injected,
                   f"qstats rx-alloc-fail grew by {d_q} for "
                   f"{injected} failed page allocations")
        carrier = vm.check(f"cat /sys/class/net/{ifn}/carrier_changes")
        ctx.expect(carrier.strip() == carrier0,
                   f"carrier changed ({carrier0} -> {carrier.strip()})")
        wait_carrier(ctx)
        # Recovery: aggregates land in body buffers again
        deadline = time.monotonic() + 30
        while True:
            time.sleep(2)
            e3, _ = _rx_counters(ctx)
            if e3["rx0_body_bufs"] > e2["rx0_body_bufs"] and \
               e3["rx0_lro_packets"] > e2["rx0_lro_packets"]:
                break
            ctx.expect(time.monotonic() < deadline,
                       f"no aggregate received for 30 s after the "
                       f"injection stopped: {e2} -> {e3}")
    finally:
        vm.run(f"echo 0 > {fpa}/probability")
        peer.stop()
        job.stop()
    tcp_integrity(ctx, 16 << 20, rx=True)


# --- fail_nth paths ----------------------------------------------------------


def _set_rings(ctx, r):
    ctx.vm.check(f"ethtool -G {ctx.ifname(1)} rx {r[0]} rx-jumbo {r[1]} "
                 f"tx {r[2]}")


def _cur_rings(ctx):
    _, cur = rings(ctx.vm, ctx.ifname(1))
    return cur.get("RX"), cur.get("RX Jumbo"), cur.get("TX")


def _netdev_state(vm, ifn, traffic):
    d = f"/sys/class/net/{ifn}"
    s = (f"echo @@FLAGS; cat {d}/flags; echo @@MTU; cat {d}/mtu; "
         f"echo @@CARRIER; cat {d}/carrier; echo @@IFINDEX; cat {d}/ifindex; "
         f"echo @@G; ethtool -g {ifn}; echo @@L; ethtool -l {ifn}; "
         f"echo @@K; ethtool -k {ifn}; echo @@J; ip -j -s link show dev {ifn}"
         f"; echo @@PP; vx3-nl page-pools; echo @@RXQ; ls -d {d}/queues/rx-* "
         f"| wc -l")
    if traffic:
        s += (f"; echo @@PING; ping -c 1 -w 15 {vm.peer_ip4(1)} "
              f">/dev/null 2>&1 && echo ok")
    return s


def _expect_netdev(ctx, sec, up):
    """Flags, carrier, live page pools and (if pinged and up) the ping of
    a _netdev_state() output: up and working, or down."""
    flags = int(sec["FLAGS"].strip(), 16)
    ctx.expect(bool(flags & 1) == up, f"interface flags {flags:#x}, "
               f"expected {'up' if up else 'down'}")
    idx = int(sec["IFINDEX"].strip())
    live = [p for p in parse_kv(sec["PP"], "page-pool")
            if p.get("ifindex") == idx and "detach-time" not in p]
    want = int(sec["RXQ"].strip()) if up else 0
    ctx.expect(len(live) == want, f"{len(live)} live page pool(s), "
               f"expected {want} (one per RX queue while up): {live}")
    if up:
        ctx.expect(sec["CARRIER"].strip() == "1", "no carrier")
    # A down interface has nothing to ping with (open's failed steps)
    if up and "PING" in sec:
        ctx.expect(sec["PING"].strip() == "ok", "ping to the peer failed")


class _Reconfig(Path):
    """Paths on a running interface: the old configuration must keep
    running after a failure, the counters must not jump."""

    base = alt = None

    def state(self, traffic):
        return _netdev_state(self.vm, self.ifn, traffic)

    def prepare(self):
        _fill_counters(self.ctx)
        st = link_stats(self.vm, self.ifn)
        self.cnt = (st["rx_packets"], st["tx_packets"])
        # After a degraded step the queues are new: give them more
        # packets than a step may add, so that counting them twice shows
        self.refill = (f"ping -c {REFILL} -i 0.02 -w 20 -q "
                       f"{self.vm.peer_ip4(1)} >/dev/null")

    def value(self, sec):
        raise NotImplementedError

    def check(self, sec, alt):
        ctx = self.ctx
        want = self.alt if alt else self.base
        got = self.value(sec)
        ctx.expect(got == want, f"configuration is {got}, expected {want}")
        _expect_netdev(ctx, sec, True)
        st = json.loads(sec["J"])[0]["stats64"]
        cnt = (st["rx"]["packets"], st["tx"]["packets"])
        if self.cnt is not None:
            d = [a - b for a, b in zip(cnt, self.cnt)]
            ctx.expect(0 <= d[0] <= JUMP and 0 <= d[1] <= JUMP,
                       f"rx/tx packets changed by {d[0]}/{d[1]} (at most "
                       f"{JUMP} expected): counted twice or lost")
        self.cnt = cnt

    def to_base(self):
        self.vm.check(self.noop)

    def degraded(self):
        # One guest command: alt works, back to base, base is in effect
        out = self.vm.check(f"{self.state(True)}; echo @@TOBASE; "
                            f"{self.noop} >/dev/null; {self.refill}; "
                            f"echo @@BASE; {self.state(False)}", timeout=180)
        alt, _, base = out.partition("@@TOBASE")
        self.check(_sections(alt), True)
        # The pings are counted: the base state starts a new baseline
        self.cnt = None
        self.check(_sections(base.partition("@@BASE")[2]), False)


class _Rings(_Reconfig):
    name = "rings"
    base, alt = BASE_RINGS, ALT_RINGS

    def __init__(self, ctx):
        super().__init__(ctx)
        r = ALT_RINGS
        self.cmd = (f"ethtool -G {self.ifn} rx {r[0]} rx-jumbo {r[1]} "
                    f"tx {r[2]}")
        r = BASE_RINGS
        self.noop = (f"ethtool -G {self.ifn} rx {r[0]} rx-jumbo {r[1]} "
                     f"tx {r[2]}")

    def value(self, sec):
        cur = ethtool_table(sec["G"])[1]
        return cur.get("RX"), cur.get("RX Jumbo"), cur.get("TX")


class _Channels(_Reconfig):
    name = "channels"
    base, alt = 0, 1

    def __init__(self, ctx):
        super().__init__(ctx)
        self.cmd = f"ethtool -L {self.ifn} tx 1"
        self.noop = f"ethtool -L {self.ifn} tx 0"

    def value(self, sec):
        return ethtool_table(sec["L"])[1].get("TX")


class _Mtu(_Reconfig):
    name = "mtu"
    base, alt = 1500, ALT_MTU

    def __init__(self, ctx):
        super().__init__(ctx)
        self.cmd = f"ip link set {self.ifn} mtu {ALT_MTU}"
        self.noop = f"ip link set {self.ifn} mtu 1500"

    def value(self, sec):
        return int(sec["MTU"].strip())


class _Features(_Reconfig):
    name = "features"
    # vx3_set_features() writes the device's feature word and allocates
    # nothing: the sweep shows that (no step injects) and that the
    # command works; if vx3 ever allocates here, it sweeps those
    may_not_allocate = True
    base, alt = True, False

    def __init__(self, ctx):
        super().__init__(ctx)
        self.cmd = f"ethtool -K {self.ifn} lro off"
        self.noop = f"ethtool -K {self.ifn} lro on"

    def value(self, sec):
        return parse_features(sec["K"])["large-receive-offload"][0]


def _small_rings(ctx):
    if _cur_rings(ctx) != BASE_RINGS:
        _set_rings(ctx, BASE_RINGS)
    wait_carrier(ctx)


def _fn_range(vm, name):
    """[start, end) of vx3's function name: from its /proc/kallsyms
    address to the next vx3 text symbol's."""
    syms = sorted((int(f[0], 16), f[2]) for f in
                  (ln.split() for ln in vm.check(
                      "grep '\\[vx3\\]$' /proc/kallsyms").splitlines())
                  if f[1] in "tT")
    for i, (addr, sym) in enumerate(syms):
        if sym == name and i + 1 < len(syms):
            return addr, syms[i + 1][0]
    raise AssertionError(f"no {name} between vx3's symbols in /proc/kallsyms")


def test_both_configs_fail(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    wait_carrier(ctx)
    start, end = _fn_range(vm, "vx3_up")
    log = vm.dmesg()
    tries0 = log.count("trying again later")
    restarts0 = log.count("queues restarted")
    vm.check(f"for a in failslab fail_page_alloc; do d={DBG}/$a; "
             f"echo {start:#x} > $d/require-start && "
             f"echo {end:#x} > $d/require-end && "
             f"echo 32 > $d/stacktrace-depth && echo N > $d/task-filter && "
             f"echo N > $d/ignore-gfp-wait && echo 1 > $d/verbose && "
             f"echo 1 > $d/interval && echo 0 > $d/space && "
             f"echo -1 > $d/times && echo 100 > $d/probability || exit 1; "
             f"done; echo 0 > {DBG}/fail_page_alloc/min-order")
    try:
        rc, out = vm.run(f"ip link set {ifn} mtu {ALT_MTU} 2>&1")
        ctx.expect(rc != 0, f"the MTU change succeeded with every "
                   f"allocation under vx3_up() failing:\n{out}")
        diag(f"ip link set mtu: {out.strip()}")
        time.sleep(4)
        link = json.loads(vm.check(f"ip -j link show dev {ifn}"))[0]
        ctx.expect("UP" in link["flags"], f"the interface was closed: "
                   f"flags {link['flags']}")
        ctx.expect(link["operstate"] != "UP", "carrier without queues")
        ctx.expect(link["mtu"] == 1500, f"MTU {link['mtu']}, not the old "
                   f"1500")
        tries = vm.dmesg().count("trying again later") - tries0
        ctx.expect(tries >= 2, f"{tries} failed attempt(s) logged in 4 s, "
                   f"expected the reconfiguration's and a retry's")
    finally:
        _fi_mode(vm, False)
        _fi_filter(vm, vx3_only=False)
        # Back to the defaults for the cases after this one
        vm.check(f"for a in failslab fail_page_alloc; do "
                 f"echo 1 > {DBG}/$a/times || exit 1; done")
    wait_carrier(ctx, timeout=45)
    ctx.expect(vm.dmesg().count("queues restarted") > restarts0,
               "no restart logged")
    ping(ctx, wait=30)
    vm.check(f"ip link set {ifn} mtu {ALT_MTU}")
    try:
        wait_carrier(ctx)
        ping(ctx, wait=30)
    finally:
        vm.check(f"ip link set {ifn} mtu 1500")


def test_fail_nth_rings(ctx):
    _small_rings(ctx)
    _iterate(ctx, _Rings(ctx))
    _set_rings(ctx, BASE_RINGS)


def test_fail_nth_channels(ctx):
    _small_rings(ctx)
    maxi, _ = channels(ctx.vm, ctx.ifname(1))
    if not maxi.get("TX"):
        ctx.skip("no TX-only channel (MSI or INTx)")
    # The base: vx3 starts with as many TX queues as default RSS queues
    # (two on two vCPUs), and the path's noop must change nothing
    ctx.vm.check(f"ethtool -L {ctx.ifname(1)} tx 0")
    _iterate(ctx, _Channels(ctx))
    ctx.vm.check(f"ethtool -L {ctx.ifname(1)} tx 0")


def test_fail_nth_mtu(ctx):
    _small_rings(ctx)
    _iterate(ctx, _Mtu(ctx))
    ctx.vm.check(f"ip link set {ctx.ifname(1)} mtu 1500")


def test_fail_nth_features(ctx):
    _small_rings(ctx)
    _iterate(ctx, _Features(ctx))
    ctx.vm.check(f"ethtool -K {ctx.ifname(1)} lro on")


class _Open(Path):
    name = "open"
    retry = True

    def __init__(self, ctx):
        super().__init__(ctx)
        self.cmd = f"ip link set {self.ifn} up"
        self.noop = self.cmd            # while up: no change

    def prepare(self):
        self.to_base()

    def state(self, traffic):
        return _netdev_state(self.vm, self.ifn, traffic)

    def check(self, sec, alt):
        _expect_netdev(self.ctx, sec, alt)

    def verify(self, alt, traffic=True):
        if alt:
            wait_carrier(self.ctx)
        super().verify(alt, traffic=alt and traffic)

    def to_base(self):
        self.vm.check(f"ip link set {self.ifn} down")


def test_fail_nth_open(ctx):
    _small_rings(ctx)
    try:
        _iterate(ctx, _Open(ctx))
    finally:
        ctx.vm.run(f"ip link set {ctx.ifname(1)} up")
    wait_carrier(ctx)


class _Probe(Path):
    """Binding the device to vx3. The device is held enabled (sysfs
    enable) through the sweep, so that vx3's pcim_enable_device() only
    counts the enable and does not run the PCI core's first enable: that
    evaluates the ACPI _PRT method (INTx routing, which vx3 does not use
    with MSI-X), hundreds of allocations of the AML interpreter that fail
    silently, and one of them (utdelete.c "Could not update object
    reference count") leaves an ACPI object a reference short, which the
    _PRT evaluation of the next pci_disable_device() reads after it was
    freed (KASAN slab-use-after-free in acpi_ns_get_attached_object()):
    ACPICA's bug, not the driver's, found by this sweep."""

    name = "probe"
    retry = True

    def __init__(self, ctx):
        super().__init__(ctx)
        bdf = ctx.state["bdf"]
        self.dev = f"/sys/bus/pci/devices/{bdf}"
        self.cmd = f"/bin/sh -c 'echo {bdf} > /sys/bus/pci/drivers/vx3/bind'"
        self.noop = self.cmd            # while bound: -EBUSY
        self.unbind = f"echo {bdf} > /sys/bus/pci/drivers/vx3/unbind"

    def prepare(self):
        self.to_base()
        self.vm.check(f"echo 1 > {self.dev}/enable")

    def state(self, traffic):
        return (f"echo @@DRV; basename $(readlink {self.dev}/driver) "
                f"2>/dev/null; echo @@NET; ls {self.dev}/net 2>/dev/null; "
                f"true")

    def check(self, sec, alt):
        drv, net = sec["DRV"].strip(), sec["NET"].split()
        if not alt:
            self.ctx.expect(not drv and not net, f"device bound to {drv!r}, "
                            f"net devices {net}")
            return
        self.ctx.expect(drv == "vx3" and len(net) == 1,
                        f"device bound to {drv!r}, net devices {net}")

    def verify(self, alt, traffic=True):
        super().verify(alt)
        if alt:
            ctx = self.ctx
            ctx.state["if1"] = self.vm.check(f"ls {self.dev}/net").split()[0]
            ctx.config_ip(1)
            wait_carrier(ctx)
            ping(ctx, count=1, wait=15)

    def to_base(self):
        self.vm.check(self.unbind)


def test_fail_nth_probe(ctx):
    bdf = ctx.state["bdf"]
    dev = f"/sys/bus/pci/devices/{bdf}"
    try:
        _iterate(ctx, _Probe(ctx))
    finally:
        # Drop the hold (unbound: the enable count is the hold's alone)
        # and bind as at boot, first enable included
        ctx.vm.run(f"if [ -e {dev}/driver ]; then echo {bdf} > "
                   f"/sys/bus/pci/drivers/vx3/unbind; fi; "
                   f"if [ $(cat {dev}/enable) != 0 ]; then echo 0 > "
                   f"{dev}/enable; fi; "
                   f"echo {bdf} > /sys/bus/pci/drivers/vx3/bind")
    ctx.expect(ctx.vm.check(f"cat {dev}/enable").strip() == "1",
               "enable count is not 1 with vx3 bound: the hold leaked")
    ctx.state["if1"] = ctx.vm.check(f"ls {dev}/net").split()[0]
    ctx.config_ip(1)
    wait_carrier(ctx)
    # A new net device: default rings
    ctx.expect(_cur_rings(ctx) != BASE_RINGS, "rings kept across rebind")
    tcp_integrity(ctx, 4 << 20, rx=True)
