# SPDX-License-Identifier: GPL-2.0
"""Statistics: ip -s link counters, netdev qstats, monotonic totals.

rx_counters, tx_counters
    500 UDP datagrams of 1000 bytes (1042-byte frames) from the peer to a
    verifying receiver in the guest, and the other way. The link counters
    must grow by at least what arrived (rx: the datagrams the receiver
    verified; tx: all datagrams sent) and by at most that plus 30 packets
    of background traffic; bytes accordingly, counting whole Ethernet
    frames without FCS (Documentation/networking/statistics.rst): at least
    1042 per datagram, at most that plus 30 full frames.
qstats_match (vx3 only: vmxnet3 has no netdev queue stats)
    netdev netlink qstats: the device totals equal the ip -s link totals
    (rx/tx packets and bytes, read on an idle link), the per-queue sums
    never exceed them, and over a burst of traffic the per-queue sums
    grow exactly as much as the totals.
monotonic (vx3 only: vmxnet3's counters restart at every activation)
    Counters never decrease across down/up, an MTU change, a ring resize
    and a TX channel change; traffic after each step is counted, and the
    qstats totals still equal ip -s link (the counters of freed queues are
    folded into the base).
rx_missed
    Out-of-buffer drops: RX ring shrunk to 32 buffers (ethtool -G rx 32)
    and a UDP flood from the peer (vx3-udp, no rate limit). vx3: the
    device's pktsRxOutOfBuf are rx_missed_errors only - rx_missed_errors
    grows, rx_dropped grows by less (the same drops must not be counted
    twice, Documentation/networking/statistics.rst), and the netdev qstats
    device totals report them as rx-hw-drop-overruns (equal to
    rx_missed_errors) and carry tx-hw-drops. vmxnet3 (reference): the
    deltas are printed.
ethtool_no_qstats_dup (vx3 only)
    ethtool -S repeats no counter that the netdev qstats report: no per
    queue name rx<N>_<x> or tx<N>_<x> where x is a per-queue qstats
    counter of that direction (rx-alloc-fail -> alloc_fail, alloc_fails;
    tx-stop -> stop, stops; ...) or one of its usual driver spellings
    (tx-hw-gso-packets -> tso, tx-needs-csum -> csum). Traffic runs first,
    so that every counter vx3 keeps is reported.
tx_device_drops
    Packets the device fails to send: the guest sends RAW_COUNT 14-byte
    frames with the IPv4 EtherType and no IPv4 header (vx3-udp raw,
    packet socket, qdisc bypassed); QEMU's vmxnet3 cannot parse them,
    counts them in pktsTxError and completes them. vx3: ip -s link
    tx_errors and the qstats tx-hw-drops total grow by at least
    RAW_COUNT (if not, the rig made no device drop and the case fails
    rather than checking nothing), tx_packets counts them as completed
    (grows by at least RAW_COUNT) and the qstats totals still equal ip
    -s link: rtnl and qstats share one tx_packets definition (vx3.rst).
    vmxnet3 (reference): the deltas are printed.
qstats_while_down (vx3 only)
    qstats-get (device totals) while the interface is down works and
    reports the totals from before the down (equal to ip -s link while
    down; at most SLACK frames the stack sent between the read before
    and the down); per-queue stats are empty.
    Kept last: a driver that dereferences its absent queues here oopses
    with rtnl held.
"""

import re
import time

import shlex

from lib.nic import (diag, ethtool_stats, ifindex, link_stats, only_vx3,
                     ping, qstats, reset_nic, rings, setup_nic, tool,
                     udp_integrity, wait_carrier)

NICS = 1

COUNT = 500
SIZE = 1000
SLACK = 30
FRAME_OVERHEAD = 14 + 20 + 8
MAX_FRAME = 1514

QSTATS_KEYS = {"rx-packets": "rx_packets", "rx-bytes": "rx_bytes",
               "tx-packets": "tx_packets", "tx-bytes": "tx_bytes"}


def setup(ctx):
    setup_nic(ctx)


def _burst(ctx, rx, port):
    """COUNT datagrams of SIZE bytes; returns how many arrived intact."""
    r = udp_integrity(ctx, rx, COUNT, SIZE, SIZE, 1000, port=port)
    ctx.expect(r["ok"] > 0, f"no datagram arrived: {r}")
    return r["ok"]


def _expect_growth(ctx, a, b, d, n):
    """Counters of direction d grew by n packets of SIZE (+ slack)."""
    dp = b[f"{d}_packets"] - a[f"{d}_packets"]
    db = b[f"{d}_bytes"] - a[f"{d}_bytes"]
    ctx.expect(n <= dp <= n + SLACK,
               f"{d}_packets grew by {dp} for {n} datagrams "
               f"(allowed {n}..{n + SLACK})")
    lo = n * (SIZE + FRAME_OVERHEAD)
    hi = lo + SLACK * MAX_FRAME
    ctx.expect(lo <= db <= hi, f"{d}_bytes grew by {db} for {n} frames "
               f"of {SIZE + FRAME_OVERHEAD} bytes (allowed {lo}..{hi}; "
               f"statistics.rst: Ethernet frame length without FCS)")


def test_rx_counters(ctx):
    reset_nic(ctx)
    vm, ifn = ctx.vm, ctx.ifname(1)
    a = link_stats(vm, ifn)
    n = _burst(ctx, True, 5801)
    b = link_stats(vm, ifn)
    diag(f"{ctx.driver}: {n} of {COUNT} datagrams arrived; rx_packets "
         f"+{b['rx_packets'] - a['rx_packets']}, rx_bytes "
         f"+{b['rx_bytes'] - a['rx_bytes']}")
    _expect_growth(ctx, a, b, "rx", n)


def test_tx_counters(ctx):
    reset_nic(ctx)
    vm, ifn = ctx.vm, ctx.ifname(1)
    a = link_stats(vm, ifn)
    _burst(ctx, False, 5802)
    b = link_stats(vm, ifn)
    diag(f"{ctx.driver}: tx_packets +{b['tx_packets'] - a['tx_packets']}, "
         f"tx_bytes +{b['tx_bytes'] - a['tx_bytes']}")
    _expect_growth(ctx, a, b, "tx", COUNT)


def _queue_sums(vm, idx):
    sums = dict.fromkeys(QSTATS_KEYS, 0)
    for q in qstats(vm, idx, queue=True):
        for k in sums:
            sums[k] += q.get(k, 0)
    return sums


def _totals_match(ctx, what):
    """qstats totals == ip -s link, read while the link is idle (retried
    when a stray packet moved the counters between the reads)."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    idx = ifindex(vm, ifn)
    for _ in range(5):
        a = link_stats(vm, ifn)
        q = qstats(vm, idx)
        s = _queue_sums(vm, idx)
        b = link_stats(vm, ifn)
        if a == b:
            break
        time.sleep(0.5)
    else:
        raise AssertionError(f"{what}: counters never stood still")
    for k, lk in QSTATS_KEYS.items():
        ctx.expect(q.get(k) == a[lk],
                   f"{what}: qstats {k}={q.get(k)} but ip -s link "
                   f"{lk}={a[lk]}\nqstats: {q}")
        ctx.expect(s[k] <= q[k], f"{what}: per-queue {k} sum {s[k]} "
                   f"exceeds the device total {q[k]}")
    return q, s


@only_vx3("vmxnet3 implements no netdev queue stats (qstats)")
def test_qstats_match(ctx):
    reset_nic(ctx)
    q1, s1 = _totals_match(ctx, "idle")
    _burst(ctx, True, 5803)
    _burst(ctx, False, 5804)
    q2, s2 = _totals_match(ctx, "after traffic")
    for k in QSTATS_KEYS:
        ctx.expect(q2[k] - q1[k] == s2[k] - s1[k],
                   f"{k}: device total grew by {q2[k] - q1[k]}, the "
                   f"per-queue sum by {s2[k] - s1[k]}")
        ctx.expect(q2[k] > q1[k], f"{k} did not grow with traffic")


def _ops(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    cur = rings(vm, ifn)[1]

    def updown():
        vm.check(f"ip link set {ifn} down && ip link set {ifn} up")

    def mtu():
        vm.check(f"ip link set {ifn} mtu 9000 && ip link set {ifn} mtu 1500")

    def ring():
        vm.check(f"ethtool -G {ifn} rx 256 tx 256 && ethtool -G {ifn} "
                 f"rx {cur['RX']} tx {cur['TX']}")

    def chan():
        vm.check(f"ethtool -L {ifn} tx 3")

    return [("down/up", updown), ("MTU change", mtu), ("ring resize", ring),
            ("channel change", chan)]


@only_vx3("vmxnet3 reports the device's counters, which QEMU zeroes at "
          "every activation (down/up, MTU, rings)")
def test_monotonic(ctx):
    reset_nic(ctx)
    vm, ifn = ctx.vm, ctx.ifname(1)
    port = 5810
    _burst(ctx, False, port)
    a = link_stats(vm, ifn)
    for name, op in _ops(ctx):
        port += 1
        op()
        wait_carrier(ctx)
        ping(ctx)
        b = link_stats(vm, ifn)
        down = {k: (a[k], b[k]) for k in a if b[k] < a[k]}
        ctx.expect(not down, f"counters went down across {name}: {down}")
        n = _burst(ctx, True, port)
        a = link_stats(vm, ifn)
        ctx.expect(a["rx_packets"] - b["rx_packets"] >= n,
                   f"after {name}: {n} datagrams arrived but rx_packets "
                   f"grew by {a['rx_packets'] - b['rx_packets']}")
        _totals_match(ctx, f"after {name}")


def _idle_stats(ctx):
    """(ip -s link, qstats totals or None) read while the link is idle."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    idx = ifindex(vm, ifn)
    for _ in range(10):
        a = link_stats(vm, ifn)
        q = qstats(vm, idx) if ctx.driver == "vx3" else None
        if link_stats(vm, ifn) == a:
            return a, q
        time.sleep(0.5)
    raise AssertionError("counters never stood still")


def test_rx_missed(ctx):
    reset_nic(ctx)
    vm, ifn = ctx.vm, ctx.ifname(1)
    cur = rings(vm, ifn)[1]
    udp = shlex.quote(tool(vm, "vx3-udp"))
    try:
        vm.check(f"ethtool -G {ifn} rx 32")
        wait_carrier(ctx)
        ping(ctx)
        a, qa = _idle_stats(ctx)
        missed = 0
        for i in range(5):
            vm.peer_check(1, f"{udp} send {vm.guest_ip4(1)} 5890 20000 "
                             f"1000 1000 {i + 1}", timeout=120)
            b = link_stats(vm, ifn)
            missed = b["rx_missed_errors"] - a["rx_missed_errors"]
            if missed > 100:
                break
        time.sleep(1)
        b, qb = _idle_stats(ctx)
    finally:
        vm.check(f"ethtool -G {ifn} rx {cur['RX']}")
        wait_carrier(ctx)
    d = {k: b[k] - a[k] for k in ("rx_packets", "rx_missed_errors",
                                  "rx_dropped", "rx_errors",
                                  "rx_over_errors", "rx_fifo_errors")}
    diag(f"{ctx.driver}: UDP flood into a 32-buffer RX ring: {d}")
    if ctx.driver != "vx3":
        return
    missed = d["rx_missed_errors"]
    ctx.expect(missed > 0, f"no out-of-buffer drop counted in "
               f"rx_missed_errors after the flood: {d}")
    ctx.expect(d["rx_dropped"] < missed,
               f"rx_dropped grew by {d['rx_dropped']} with "
               f"{missed} rx_missed_errors: the device's out-of-buffer "
               f"drops are counted twice")
    diag(f"vx3 qstats after the flood: {qb}")
    for k in ("rx-hw-drop-overruns", "tx-hw-drops"):
        ctx.expect(k in qb, f"qstats has no {k}: {qb}")
    ctx.expect(qb["rx-hw-drop-overruns"] == b["rx_missed_errors"],
               f"qstats rx-hw-drop-overruns {qb['rx-hw-drop-overruns']} "
               f"!= rx_missed_errors {b['rx_missed_errors']}")
    grew = qb["rx-hw-drop-overruns"] - qa.get("rx-hw-drop-overruns", 0)
    ctx.expect(grew == missed, f"qstats rx-hw-drop-overruns grew by "
               f"{grew}, rx_missed_errors by {missed}")


# Usual ethtool -S spellings of qstats counters besides the qstats name
QSTATS_ALIASES = {"tx-hw-gso-packets": ("tso", "tso_packets"),
                  "tx-hw-gso-bytes": ("tso_bytes",),
                  "tx-needs-csum": ("csum", "csum_partial"),
                  "rx-csum-unnecessary": ("csum_ok",)}
ETHTOOL_QUEUE_RE = re.compile(r"^(rx|tx)\d+_(\w+)$")


def _qstats_spellings(key):
    """ethtool -S names a per-queue qstats counter could go by."""
    base = key.split("-", 1)[1].replace("-", "_")
    return {base, base + "s", *QSTATS_ALIASES.get(key, ())}


@only_vx3("vmxnet3 implements no netdev queue stats (qstats)")
def test_ethtool_no_qstats_dup(ctx):
    reset_nic(ctx)
    vm, ifn = ctx.vm, ctx.ifname(1)
    idx = ifindex(vm, ifn)
    _burst(ctx, True, 5820)
    _burst(ctx, False, 5821)
    per_q = qstats(vm, idx, queue=True)
    keys = {d: set() for d in ("rx", "tx")}
    for q in per_q:
        for k in q:
            if k.startswith(("rx-", "tx-")):
                keys[k[:2]].add(k)
    ctx.expect(keys["rx"] and keys["tx"],
               f"no per-queue qstats for both directions: {per_q}")
    names = {d: {n: k for k in ks for n in _qstats_spellings(k)}
             for d, ks in keys.items()}
    dup = {}
    for name in ethtool_stats(vm, ifn):
        m = ETHTOOL_QUEUE_RE.match(name)
        if m and m.group(2) in names[m.group(1)]:
            dup[name] = names[m.group(1)][m.group(2)]
    ctx.expect(not dup, f"ethtool -S repeats qstats counters "
               f"(ethtool name: qstats name): {dup}")


RAW_COUNT = 100


def test_tx_device_drops(ctx):
    reset_nic(ctx)
    vm, ifn = ctx.vm, ctx.ifname(1)
    a, qa = _idle_stats(ctx)
    out = vm.check(f"vx3-udp raw {ifn} {RAW_COUNT} 14")
    ctx.expect(f"sent={RAW_COUNT}" in out, f"vx3-udp raw: {out}")
    time.sleep(1)
    b, qb = _idle_stats(ctx)
    d = {k: b[k] - a[k] for k in ("tx_packets", "tx_errors", "tx_dropped")}
    diag(f"{ctx.driver}: {RAW_COUNT} unparsable frames sent: {d}")
    if ctx.driver != "vx3":
        return
    hw = qb.get("tx-hw-drops", 0) - qa.get("tx-hw-drops", 0)
    diag(f"vx3: qstats tx-hw-drops +{hw}, tx-packets "
         f"+{qb['tx-packets'] - qa['tx-packets']}")
    ctx.expect(d["tx_errors"] >= RAW_COUNT,
               f"tx_errors grew by {d['tx_errors']} for {RAW_COUNT} frames "
               f"the device cannot parse: no device drop to check with")
    ctx.expect(hw >= RAW_COUNT, f"qstats tx-hw-drops grew by {hw} for "
               f"{RAW_COUNT} frames the device failed to send")
    ctx.expect(d["tx_packets"] >= RAW_COUNT,
               f"tx_packets grew by {d['tx_packets']}: the {RAW_COUNT} "
               f"frames the device completed (and failed) are not in it")
    _totals_match(ctx, "after device drops")


@only_vx3("vmxnet3 implements no netdev queue stats (qstats)")
def test_qstats_while_down(ctx):
    reset_nic(ctx)
    vm, ifn = ctx.vm, ctx.ifname(1)
    idx = ifindex(vm, ifn)
    q1, _ = _totals_match(ctx, "before down")
    vm.check(f"ip link set {ifn} down")
    try:
        rc, out = vm.run(f"vx3-nl qstats {idx}; echo rc=$?; "
                         f"vx3-nl qstats-queue {idx}", timeout=30)
        ctx.expect("rc=0" in out, f"qstats-get while down failed:\n{out}")
        q2 = [ln for ln in out.splitlines() if ln.startswith("qstats")]
        ctx.expect(len(q2) == 1, f"expected only the device totals while "
                   f"down:\n{out}")
        got = dict(w.split("=") for w in q2[0].split()[1:])
        down = link_stats(vm, ifn)
        for k, lk in QSTATS_KEYS.items():
            v = int(got.get(k, -1))
            ctx.expect(v == down[lk], f"while down qstats {k}={v} but "
                       f"ip -s link {lk}={down[lk]}")
            # The stack may still send a few frames (ND, MLD, ARP)
            # between the read above and the down.
            hi = q1[k] + SLACK * (MAX_FRAME if "bytes" in k else 1)
            ctx.expect(q1[k] <= v <= hi, f"while down qstats {k}={v}, "
                       f"before down {q1[k]} (allowed {q1[k]}..{hi})")
    finally:
        vm.run(f"ip link set {ifn} up", timeout=30)
