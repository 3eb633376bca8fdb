# SPDX-License-Identifier: GPL-2.0
"""NAPI: persistent per-NAPI configuration, NAPI IDs, busy polling, IRQ
affinity, threaded NAPI (vx3 only; 7.x kernels: on 6.12, which has no
napi-set, config_kept, busy_poll_irqs and irq_affinity skip).

The NAPI instances are read with netdev netlink (vx3-nl napis / queues /
napi-set); each is matched to its vector by its IRQ, whose action name is
DEV-rxtx-0 or DEV-tx-N (/sys/kernel/irq/IRQ/actions).

napi_ids
    queue-get: RX queue N and TX queue N name the NAPI ID of vector N
    (combined channel N), TX queues beyond the RX ones that of their own
    vector; napi-get lists one instance per vector, with distinct IDs and
    the vector's IRQ. A UDP receiver in the guest (vx3-udp napi) reads
    SO_INCOMING_NAPI_ID: the ID of RX queue 0 (Debian's QEMU receives on
    queue 0 only).
config_kept
    With two vectors (if the device has them: two combined channels, or
    one and a TX channel) napi-set gives each instance its own
    defer-hard-irqs, gro-flush-timeout and irq-suspend-timeout, and
    vector 1 threaded on. Every reconfiguration replaces all vectors:
    ethtool -G (rings and back), MTU 9000 and back, an XDP program
    attached and detached, and ethtool -L down to vector 0 alone and back.
    After each, napi-get must show the same ID and settings per vector
    (vector 1 again after it was gone: its config slot is kept), a
    thread (pid) for vector 1 only, and ping must pass.
busy_poll_irqs
    The peer sends 200 datagrams/s to a guest receiver for 3 s; the IRQs
    of vector 0 are counted (/sys/kernel/irq/IRQ/per_cpu_count). A plain
    receiver, no deferral: at least a fifth of the datagrams raise one
    (measured: three quarters; QEMU may deliver a few at once). A
    busy-polling receiver (SO_BUSY_POLL, SO_PREFER_BUSY_POLL) with
    vector 0 at defer-hard-irqs 2, gro-flush-timeout 200 us (napi-set;
    Documentation/networking/napi.rst): fewer than a fifth of the plain
    count and of the datagrams (measured: 2 to 5 % of the datagrams;
    with the interrupt unmasked whatever napi_complete_done() says, 62 %). Fails if the driver unmasks the interrupt
    when napi_complete_done() returns false (the busy poller owns the
    instance): then most datagrams raise one. (Deferral alone, without
    busy polling, also holds interrupts off under TCG's coarse timers:
    it is not the baseline.)
irq_affinity
    ethtool -L to the most vectors (one combined channel, every TX
    channel): vector N's IRQ is on CPU N modulo the
    number of CPUs (the core spreads them, netif_set_affinity_auto()).
    A user's affinity (vector 0 on the last CPU) is kept across
    ethtool -G, which replaces the vectors.
threaded_traffic
    Under iperf both ways: /sys/class/net/DEV/threaded 1 (every NAPI
    gets a thread: napi-get pid), a ring change while threaded (the new
    vectors are threaded), threaded 0 (no pid); then napi-set threaded 1
    on vector 0 alone and off again. Traffic must flow after every step;
    the harness fails the case on any dmesg splat.
"""

import re
import shlex
import time

from lib.nic import (Traffic, channels, diag, ensure_ip, expect_flowing,
                     guest_ok, ifindex, parse_kv, ping, reset_nic, rings,
                     setup_nic, tool, wait_listen)
from lib.test import Skip

NICS = 1
DRIVERS = ("vx3",)
KERNELS = ("stock", "debug")

# busy_poll_irqs: datagrams per second, 5 ms apart
PPS = 200

SETTINGS = ("defer-hard-irqs", "gro-flush-timeout", "irq-suspend-timeout")


def setup(ctx):
    setup_nic(ctx)
    vm = ctx.vm
    ctx.state["ifindex"] = ifindex(vm, ctx.ifname(1))
    napis = parse_kv(vm.check(f"vx3-nl napis {ctx.state['ifindex']}"),
                     "napi")
    # 6.12 (the debug kernel until it moves on) reports no settings
    ctx.state["napi_set"] = bool(napis) and "defer-hard-irqs" in napis[0]
    vm.check("mount -t bpf bpf /sys/fs/bpf 2>/dev/null; "
             "[ -e /sys/fs/bpf/napi ] || bpftool prog loadall "
             "/usr/lib/vx3/vx3_xdp.bpf.o /sys/fs/bpf/napi "
             "pinmaps /sys/fs/bpf/napim")


def _need_napi_set(ctx):
    """Skip on 6.12 (the debug kernel until it moves on): no napi-set,
    no napi_config, no core-managed IRQ affinity."""
    if not ctx.state["napi_set"]:
        raise Skip("this kernel has no per-NAPI configuration (napi-set) "
                   "and no core-managed IRQ affinity")


def _vectors(ctx):
    """{vector index: napi-get object} of NIC 1, each with "name" (its IRQ
    action name)."""
    vm = ctx.vm
    out = vm.check(f"vx3-nl napis {ctx.state['ifindex']} | while read -r "
                   f"l; do echo \"$l\"; irq=${{l##* irq=}}; "
                   f"irq=${{irq%% *}}; echo \"action $(cat "
                   f"/sys/kernel/irq/$irq/actions)\"; done")
    vecs = {}
    napi = None
    for line in out.splitlines():
        if line.startswith("napi "):
            napi = parse_kv(line, "napi")[0]
        elif line.startswith("action ") and napi is not None:
            napi["name"] = line.split(None, 1)[1].strip()
            m = re.search(r"-(?:rxtx|tx)-(\d+)$", napi["name"])
            ctx.expect(m, f"NAPI {napi} has an IRQ that is no vx3 queue "
                       f"vector:\n{out}")
            idx = int(m.group(1))
            ctx.expect(idx not in vecs, f"two NAPI instances for vector "
                       f"{idx}:\n{out}")
            vecs[idx] = napi
            napi = None
    return vecs


def _queues(ctx):
    """{("rx"|"tx", id): napi-id} of NIC 1 (queue-get)."""
    out = ctx.vm.check(f"vx3-nl queues {ctx.state['ifindex']}")
    return {(q["type"], q["id"]): q.get("napi-id")
            for q in parse_kv(out, "queue")}


def _channels(ctx):
    """(maximum, current) channels, each {"Combined": n, "TX": n}: a
    combined channel is a vector with an RX and a TX queue, a TX channel
    one with a TX queue only."""
    return channels(ctx.vm, ctx.ifname(1))


def _set_channels(ctx, combined, tx):
    guest_ok(ctx, f"ethtool -L {ctx.ifname(1)} combined {combined} tx {tx}")


def test_napi_ids(ctx):
    reset_nic(ctx)
    vm = ctx.vm
    vecs = _vectors(ctx)
    queues = _queues(ctx)
    diag(f"vectors: { {i: (v['id'], v['name']) for i, v in vecs.items()} }"
         f"; queues: {queues}")
    ctx.expect(sorted(vecs) == list(range(len(vecs))) and vecs,
               f"vectors {sorted(vecs)} are not 0..N-1")
    ids = [v["id"] for v in vecs.values()]
    ctx.expect(len(set(ids)) == len(ids) and min(ids) > 0,
               f"NAPI IDs not distinct and valid: {ids}")
    _, cur = _channels(ctx)
    want = {("rx", i): vecs[i]["id"] for i in range(cur["Combined"])}
    want.update({("tx", i): v["id"] for i, v in vecs.items()})
    ctx.expect(queues == want, f"queue-get {queues}, expected {want}")

    port = 5841
    job = vm.bg(f"exec vx3-udp napi {port} 1000 0")
    try:
        ctx.expect(wait_listen(vm.run, port, udp=True),
                   "guest vx3-udp did not listen")
        vm.peer_check(1, f"{shlex.quote(tool(vm, 'vx3-udp'))} send "
                      f"{vm.guest_ip4(1)} {port} 400 64 64 1 200",
                      timeout=60)
    finally:
        out = job.stop()
    res = parse_kv("r " + out.strip().splitlines()[-1], "r")[0]
    ctx.expect(res.get("received", 0) > 0, f"no datagram arrived:\n{out}")
    ctx.expect(res.get("napi-id") == vecs[0]["id"],
               f"SO_INCOMING_NAPI_ID {res.get('napi-id')}, RX queue 0 has "
               f"NAPI {vecs[0]['id']}")


def _napi_set(ctx, napi_id, **kw):
    args = " ".join(f"{k.replace('_', '-')}={v}" for k, v in kw.items())
    guest_ok(ctx, f"vx3-nl napi-set {napi_id} {args}")


def _expect_kept(ctx, want, what):
    vecs = _vectors(ctx)
    got = {i: {k: v.get(k) for k in ("id",) + SETTINGS}
           for i, v in vecs.items()}
    exp = {i: {k: w[k] for k in ("id",) + SETTINGS} for i, w in want.items()}
    ctx.expect(got == exp, f"after {what}: napi-get shows\n  {got}\n"
               f"expected\n  {exp}")
    threads = _threads(vecs)
    exp = {i: w["threaded"] for i, w in want.items()}
    ctx.expect(threads == exp, f"after {what}: NAPI threaded {threads}, "
               f"expected {exp}")


def test_config_kept(ctx):
    _need_napi_set(ctx)
    reset_nic(ctx)
    vm, ifn = ctx.vm, ctx.ifname(1)
    cmax, cur = _channels(ctx)
    # Two vectors: two combined channels, else one and a TX channel
    if cmax["Combined"] >= 2:
        two, one = (2, 0), (1, 0)
    else:
        two, one = (1, min(1, cmax["TX"])), (1, 0)
    nvec = sum(two)
    _set_channels(ctx, *two)
    vecs = _vectors(ctx)
    ctx.expect(len(vecs) == nvec, f"{len(vecs)} vectors, expected {nvec}: "
               f"{vecs}")
    want = {}
    for i, v in vecs.items():
        w = {"id": v["id"], "defer-hard-irqs": 10 + i,
             "gro-flush-timeout": 100000 * (i + 1),
             "irq-suspend-timeout": 5000000 * (i + 1),
             "threaded": i == 1}
        _napi_set(ctx, v["id"], defer_hard_irqs=w["defer-hard-irqs"],
                  gro_flush_timeout=w["gro-flush-timeout"],
                  irq_suspend_timeout=w["irq-suspend-timeout"],
                  threaded=int(w["threaded"]))
        want[i] = w
    _expect_kept(ctx, want, "napi-set")

    _, rcur = rings(vm, ifn)
    steps = [f"ethtool -G {ifn} rx 256 rx-jumbo 256 tx 256",
             f"ethtool -G {ifn} rx {rcur['RX']} rx-jumbo "
             f"{rcur['RX Jumbo']} tx {rcur['TX']}",
             f"ip link set {ifn} mtu 9000", f"ip link set {ifn} mtu 1500",
             f"ip link set dev {ifn} xdpdrv pinned /sys/fs/bpf/napi/xdp_pass",
             f"ip link set dev {ifn} xdpdrv off"]
    shrink = f"ethtool -L {ifn} combined {one[0]} tx {one[1]}"
    if nvec == 2:
        steps += [shrink, f"ethtool -L {ifn} combined {two[0]} tx {two[1]}"]
    else:
        diag("one vector only: ethtool -L not exercised")
    try:
        for cmd in steps:
            guest_ok(ctx, cmd)
            ensure_ip(ctx)
            if cmd == shrink:
                _expect_kept(ctx, {0: want[0]}, cmd)
            else:
                _expect_kept(ctx, want, cmd)
            ping(ctx)
    finally:
        vm.run(f"ip link set dev {ifn} xdpdrv off; ip link set {ifn} "
               f"mtu 1500")
        for i, w in want.items():
            vm.run(f"vx3-nl napi-set {w['id']} defer-hard-irqs=0 "
                   f"gro-flush-timeout=0 irq-suspend-timeout=0 threaded=0")
        vm.run(f"ethtool -L {ifn} combined {cur['Combined']} tx "
               f"{cur['TX']}")


def _irq_count(ctx, irq):
    out = ctx.vm.check(f"cat /sys/kernel/irq/{irq}/per_cpu_count")
    return sum(int(x) for x in out.strip().split(","))


def _rx_irqs(ctx, irq, port, busy_us):
    """(datagrams received, IRQs of vector 0, SO_INCOMING_NAPI_ID) for a
    3 s receive window of a PPS stream from the peer."""
    vm = ctx.vm
    pps, window_ms = PPS, 3000
    # The count is read around the receiver: the sender starts after the
    # first read and runs longer than the window.
    done = f"/tmp/napi-done.{port}"
    job = vm.bg(f"rm -f {done}; "
                f"a=$(tr , ' ' </sys/kernel/irq/{irq}/per_cpu_count); "
                f"vx3-udp napi {port} {window_ms} {busy_us}; "
                f"b=$(tr , ' ' </sys/kernel/irq/{irq}/per_cpu_count); "
                f"s=0; for x in $b; do s=$((s + x)); done; "
                f"for x in $a; do s=$((s - x)); done; echo irqs=$s; "
                f"touch {done}")
    try:
        ctx.expect(wait_listen(vm.run, port, udp=True),
                   "guest vx3-udp did not listen")
        peer = vm.peer_bg(1, f"exec {shlex.quote(tool(vm, 'vx3-udp'))} send "
                          f"{vm.guest_ip4(1)} {port} {pps * 8} 64 64 1 "
                          f"{pps}")
        try:
            # (pidof would find /init's vx3-udp hold-tstamp)
            vm.run(f"for i in $(seq 300); do [ -e {done} ] && exit 0; "
                   f"sleep 0.1; done; exit 1", timeout=60)
        finally:
            peer.stop()
    finally:
        out = job.stop()
    res = {}
    for line in out.splitlines():
        res.update(parse_kv("r " + line, "r")[0])
    ctx.expect("irqs" in res and "received" in res,
               f"no receiver result:\n{out}")
    return res["received"], res["irqs"], res["napi-id"]


def test_busy_poll_irqs(ctx):
    _need_napi_set(ctx)
    reset_nic(ctx)
    vec = _vectors(ctx)[0]
    try:
        plain = _rx_irqs(ctx, vec["irq"], 5851, 0)
        _napi_set(ctx, vec["id"], defer_hard_irqs=2,
                  gro_flush_timeout=200000)
        busy = _rx_irqs(ctx, vec["irq"], 5852, 50000)
    finally:
        ctx.vm.run(f"vx3-nl napi-set {vec['id']} defer-hard-irqs=0 "
                   f"gro-flush-timeout=0")
    diag(f"vector 0 IRQs in 3 s: plain receiver {plain[1]} for "
         f"{plain[0]} datagrams, busy-polling receiver {busy[1]} for "
         f"{busy[0]} datagrams")
    ctx.expect(plain[0] >= PPS and busy[0] >= PPS,
               f"too few datagrams arrived: {plain[0]}, {busy[0]}")
    ctx.expect(plain[2] == vec["id"] and busy[2] == vec["id"],
               f"SO_INCOMING_NAPI_ID {plain[2]}/{busy[2]}, vector 0 has "
               f"NAPI {vec['id']}")
    ctx.expect(plain[1] * 5 >= plain[0],
               f"plain receiver: only {plain[1]} IRQs for {plain[0]} "
               f"datagrams 5 ms apart (the check would be void)")
    ctx.expect(busy[1] * 5 < plain[1] and busy[1] * 5 < busy[0],
               f"busy polling: {busy[1]} IRQs for {busy[0]} datagrams "
               f"(plain: {plain[1]}): the interrupt was unmasked while the "
               f"busy poller owned the NAPI instance")


def _affinity(ctx, irq):
    return ctx.vm.check(f"cat /proc/irq/{irq}/smp_affinity_list").strip()


def test_irq_affinity(ctx):
    _need_napi_set(ctx)
    reset_nic(ctx)
    vm, ifn = ctx.vm, ctx.ifname(1)
    ncpu = int(vm.check("nproc").strip())
    cmax, cur = _channels(ctx)
    _set_channels(ctx, 1, cmax["TX"])
    try:
        vecs = _vectors(ctx)
        got = {i: _affinity(ctx, v["irq"]) for i, v in vecs.items()}
        want = {i: str(i % ncpu) for i in vecs}
        diag(f"{ncpu} CPUs, IRQ affinity per vector: {got}")
        ctx.expect(got == want, f"IRQ affinity per vector {got}, "
                   f"expected {want}")
        last = str(ncpu - 1)
        guest_ok(ctx, f"echo {last} > /proc/irq/{vecs[0]['irq']}"
                 f"/smp_affinity_list")
        _, rcur = rings(vm, ifn)
        for tx in (256, rcur["TX"]):
            guest_ok(ctx, f"ethtool -G {ifn} tx {tx}")
            vecs = _vectors(ctx)
            got = {i: _affinity(ctx, v["irq"]) for i, v in vecs.items()}
            want[0] = last
            ctx.expect(got == want, f"after ethtool -G tx {tx}: IRQ "
                       f"affinity {got}, expected {want} (vector 0 set "
                       f"to CPU {last} by the user)")
        guest_ok(ctx, f"echo 0 > /proc/irq/{vecs[0]['irq']}"
                 f"/smp_affinity_list")
        ping(ctx)
    finally:
        vm.run(f"ethtool -L {ifn} combined {cur['Combined']} tx "
               f"{cur['TX']}")


def _threads(vecs):
    """{vector: threaded}: napi-get's threaded attribute (7.x), and a
    threaded instance must name its thread (pid)."""
    res = {}
    for i, v in vecs.items():
        on = bool(v.get("threaded", "pid" in v))
        res[i] = on and "pid" in v if on else False
    return res


def test_threaded_traffic(ctx):
    reset_nic(ctx)
    vm, ifn = ctx.vm, ctx.ifname(1)
    sysfs = f"/sys/class/net/{ifn}/threaded"
    _, rcur = rings(vm, ifn)
    try:
        with Traffic(ctx, port=5855):
            expect_flowing(ctx, "traffic before threaded NAPI")
            guest_ok(ctx, f"echo 1 > {sysfs}")
            t = _threads(_vectors(ctx))
            ctx.expect(all(t.values()), f"threaded 1: NAPI threads {t}")
            expect_flowing(ctx, "traffic with threaded NAPI")
            guest_ok(ctx, f"ethtool -G {ifn} tx 256")
            t = _threads(_vectors(ctx))
            ctx.expect(all(t.values()), f"threaded 1, after a ring change: "
                       f"NAPI threads {t}")
            expect_flowing(ctx, "traffic with threaded NAPI after ethtool -G")
            guest_ok(ctx, f"echo 0 > {sysfs}")
            # 6.12 keeps the stopped threads (pid) and has no threaded
            # attribute to tell
            t = _threads(_vectors(ctx))
            ctx.expect(not ctx.state["napi_set"] or not any(t.values()),
                       f"threaded 0: NAPI threads {t}")
            expect_flowing(ctx, "traffic after threaded NAPI off")
            if ctx.state["napi_set"]:
                vec = _vectors(ctx)[0]
                _napi_set(ctx, vec["id"], threaded=1)
                t = _threads(_vectors(ctx))
                ctx.expect(t[0] and not any(v for i, v in t.items() if i),
                           f"napi-set threaded 1 on vector 0: threads {t}")
                expect_flowing(ctx, "traffic with vector 0 threaded")
                _napi_set(ctx, vec["id"], threaded=0)
                expect_flowing(ctx, "traffic with vector 0 threaded off")
            time.sleep(1)
    finally:
        vm.run(f"echo 0 > {sysfs}; ethtool -G {ifn} tx {rcur['TX']}")
