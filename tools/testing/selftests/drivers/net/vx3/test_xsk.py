# SPDX-License-Identifier: GPL-2.0
"""AF_XDP sockets on the driver, in copy and zero-copy mode.

vx3-xsk (built by mkinitramfs.sh, libbpf) binds an AF_XDP socket to RX
queue 0 of NIC 1 (Debian's QEMU delivers every frame there) with
XDP_COPY; for RX it attaches vx3_xdp.bpf.c's xdp_xsk in driver mode,
which redirects UDP to port 9999 into the XSKMAP entry of the frame's
RX queue. Payloads are lib/xdppeer.py's (a sequence number and bytes
derived from it), checked at the receiving end.

copy_rx
    The peer sends 1000 datagrams (64, 200 and 1400 bytes); the socket
    must receive every one the device did not drop for want of a posted
    buffer (rx_missed_errors), each intact and once.
copy_tx
    The socket sends 1000 datagrams of 1000 bytes to the peer through its
    TX ring (the driver's ndo_start_xmit, dev_direct_xmit); every frame
    must complete, and the peer's UDP socket must receive each intact,
    but for what its own receive buffer dropped (UdpRcvbufErrors of the
    peer's namespace, which the guest cannot cause).
copy_tx_csum, zc_tx_csum (zc: vx3)
    AF_XDP TX metadata: 1000 datagrams whose UDP checksum field holds
    only the pseudo-header sum. Sent without metadata, the peer's UDP
    must drop them (UdpInCsumErrors: it checks, and they are wrong as
    written); sent with XDP_TXMD_FLAGS_CHECKSUM (csum_start at the UDP
    header, csum_offset 6), every one must arrive intact. In copy mode
    the AF_XDP core makes the request a CHECKSUM_PARTIAL skb; in
    zero-copy vx3 puts it into the TX descriptor (offload mode CSUM,
    hlen = csum_start, msscof = csum_start + csum_offset). QEMU parses
    the headers itself and ignores hlen and msscof, so only the mode is
    seen here; the fields are those of the stack's checksum offload
    (vx3_tx_csum_fields()).
zc_rx, zc_tx (vx3)
    The same with XDP_ZEROCOPY: the kernel must report the bind as
    zero-copy (XDP_OPTIONS), the device must not run out of buffers (the
    fill ring holds more than is sent), every datagram arrives once and
    intact, and vx3's counters match: rx0_xdp_redirect exactly for RX,
    the device's completions (ip -s link) for TX. zc_rx also pings the
    peer: the program passes the replies, which vx3 copies into skbs
    (rx0_xsk_copied).
zc_xdp_tx, zc_xdp_drop (vx3)
    A zero-copy socket with 64 frames lends queue 0 its buffers while
    vx3_xdp.bpf.c's xdp_tx (reflects UDP to port 9999 with a tail) or
    xdp_drop acts on 300 datagrams: every one must be counted under
    rx0_xdp_tx or rx0_xdp_drop, missed by the device or dropped by the
    host's tap, more than 64 of them (the frames go back to the pool),
    and each reflected one must reach the peer intact.
zc_fill_starved (vx3)
    A zero-copy socket gives 64 buffers and stops refilling for 10 s:
    of a first burst the device must drop what did not fit
    (rx_missed_errors, and vx3 counts xsk_fill_empty); once the socket
    refills, a second burst must arrive whole, without a drop. The
    socket must receive every datagram the device did not drop; a drop
    in the first burst's window may also have been another frame (the
    peer's tap counts what it sent toward the guest then). The socket
    makes no system call during the stall (VX3_XSK_STALL_SLEEP): with
    need_wakeup asked for, the driver must leave the empty queue alone
    meanwhile (at most IDLE_POLLS_MAX polls in 2 s, counted by
    xsk_fill_empty, from the guest's own transmits on that vector), not
    poll it from a timer.
zc_resize (vx3)
    With a zero-copy socket bound, the RX ring goes to 256 (the queues
    are replaced, the pool kept); the socket must then receive every
    datagram the device did not drop, intact and once.
zc_default_lro (vx3)
    vx3 reloaded, nothing changed: LRO is on, as by default. A zero-copy
    socket bound the way libxdp and xdpsock do it (bind, then attach the
    program) must be zero-copy and receive 100 datagrams; LRO must read
    off while it is bound (an aggregate does not fit one frame) and on
    again once the socket is gone, as the user had it.
zc_no_rx_queue (vx3)
    With one combined and one TX-only channel, queue 1 is a TX queue
    without an RX queue: the AF_XDP core asks vx3 for it, and vx3 must
    refuse the bind with its reason in the kernel log ("no RX queue 1")
    and keep working. The request carries no extack (struct netdev_bpf
    has one only for XDP_SETUP_PROG): on the debug kernel, whose stack
    variables are pattern-initialised, a driver that writes its reason
    through bpf->extack faults here.
zc_refused (vx3)
    A zero-copy bind must fail while the MTU does not fit the socket's
    4 KiB frames (MTU 9000: the AF_XDP core refuses it with EINVAL before
    asking the driver); at MTU 1500 it must work. While the socket is
    bound, LRO must not go on and the MTU not beyond the frame (3900),
    with vx3's reason in the log.
zc_churn (vx3)
    Under a peer's traffic: zero-copy receivers killed while bound (the
    pool goes while frames arrive), a sender killed with frames in flight,
    the interface set down and up with a socket bound, and at the end the
    module removed with a socket open. The interface must pass traffic
    after each step and the guest log stay clean (any WARN, BUG or
    refcount message fails the case). The peer sends 1000 datagrams a
    second (FLOOD_PPS): at its full paced rate (about 4000) the debug
    kernel spent all of vCPU 0 on receiving (KASAN and lockdep stack
    traces, the program) while vCPU 1 idled, and an `ip link set xdp off`
    whose task sat on vCPU 0 took minutes.
"""

import json
import os
import threading
import time

from lib.nic import (diag, ethtool_stats, link_stats, rings, tap_dropped,
                     tap_sent,
                     wait_listen)
from lib.test import vx3_only

NICS = 1
HERE = os.path.dirname(os.path.abspath(__file__))
PEER = f"/usr/bin/python3 {HERE}/lib/xdppeer.py"
COUNT = 1000
# zc_fill_starved: polls of an empty AF_XDP queue in 2 s while its socket
# sleeps (the guest's own transmits poll the vector; a 100 Hz refill timer
# would poll 200 times)
IDLE_POLLS_MAX = 20
OUT = "/tmp/vx3-xsk.out"
FLOOD_PPS = 1000	# zc_churn's traffic


def setup(ctx):
    vm = ctx.vm
    ctx.load_driver()
    ctx.config_ip(1)
    # The peer knows the guest's MAC from the start (no ARP queue, see
    # test_xdp.py)
    vm.peer_check(1, f"ip neigh replace {vm.guest_ip4(1)} lladdr "
                     f"{vm.mac(1)} dev {vm.tap(1)} nud permanent")
    vm.check("mount -t bpf bpf /sys/fs/bpf 2>/dev/null; true")
    # Aggregates would break the copy-mode cases' per-frame accounting; a
    # zero-copy socket turns LRO off itself (test_zc_default_lro)
    vm.run(f"ethtool -K {ctx.ifname(1)} lro off")


def _result(out):
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if not lines:
        raise AssertionError(f"no result:\n{out}")
    return json.loads(lines[-1])


def test_copy_rx(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    m0 = link_stats(vm, ifn)["rx_missed_errors"]
    job = vm.bg(f"exec vx3-xsk rx {ifn} 0 copy {COUNT} 5000 >{OUT} 2>&1")
    try:
        _wait_ready(ctx)
        sent = _result(vm.peer_check(
            1, f"{PEER} send {vm.guest_ip4(1)} {COUNT} "
               f"64,200,1400", timeout=120))
        rc, out = vm.run(f"for i in $(seq 300); do grep -q '^{{' {OUT} && "
                         f"break; sleep 0.1; done; cat {OUT}", timeout=60)
    finally:
        job.stop()
    res = _result(out)
    missed = link_stats(vm, ifn)["rx_missed_errors"] - m0
    diag(f"{ctx.driver}: copy mode RX: peer sent {sent['sent']}, socket "
         f"received {res}, device out of buffers +{missed}")
    ctx.expect(res["bad"] == 0 and res["dup"] == 0,
               f"corrupt or duplicate payloads: {res}")
    ctx.expect(res["received"] + missed >= COUNT,
               f"the socket received {res['received']} of {COUNT} "
               f"({missed} dropped by the device for want of buffers)")


def _peer_udp(ctx, counter):
    """A UDP counter of the peer's namespace (nstat: UdpRcvbufErrors,
    UdpInCsumErrors)."""
    out = ctx.vm.peer_check(1, f"nstat -az {counter}")
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == counter:
            return int(f[1])
    return 0


def _tx_send(ctx, mode, txmd=None, idle=8):
    """vx3-xsk tx sends COUNT frames in mode to the peer's receiver (with
    VX3_XSK_TXMD=txmd; the receiver stops after idle seconds without a
    datagram). Returns vx3-xsk's result, the receiver's, and
    how many datagrams the peer's receive buffer dropped and its UDP
    found with a bad checksum meanwhile."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    tap_mac = vm.peer_check(1, f"cat /sys/class/net/{vm.tap(1)}/address"
                            ).strip()
    e0 = _peer_udp(ctx, "UdpRcvbufErrors")
    c0 = _peer_udp(ctx, "UdpInCsumErrors")
    env = f"VX3_XSK_TXMD={txmd} " if txmd else ""
    res = []
    recv = threading.Thread(target=lambda: res.append(vm.peer(
        1, f"{PEER} recv {COUNT} {idle}", timeout=120)))
    recv.start()
    try:
        ctx.expect(wait_listen(lambda c: vm.peer(1, c), 9999, udp=True),
                   "the peer's receiver did not start")
        out = vm.check(f"{env}vx3-xsk tx {ifn} 0 {mode} {COUNT} 1000 "
                       f"{tap_mac} {vm.guest_ip4(1)} {vm.peer_ip4(1)}",
                       timeout=120)
    finally:
        recv.join()
    sent = _result(out)
    got = _result(res[0][1])
    dropped = _peer_udp(ctx, "UdpRcvbufErrors") - e0
    bad_csum = _peer_udp(ctx, "UdpInCsumErrors") - c0
    diag(f"{ctx.driver}: {mode} TX{' ' + txmd if txmd else ''}: {sent}; "
         f"peer received {got}, its receive buffer dropped {dropped}, "
         f"bad checksums {bad_csum}")
    ctx.expect(sent["sent"] == COUNT and sent["completed"] == COUNT,
               f"not every frame was sent and completed: {sent}")
    return sent, got, dropped, bad_csum


def _tx_case(ctx, mode, txmd=None):
    """Each frame of _tx_send() must complete and reach the peer intact
    but for what the peer's receive buffer dropped. Returns vx3-xsk's
    result."""
    sent, got, dropped, bad_csum = _tx_send(ctx, mode, txmd)
    ctx.expect(got["bad"] == 0, f"{got['bad']} corrupt payloads at the peer")
    ctx.expect(bad_csum == 0, f"{bad_csum} datagrams with a bad UDP "
                              f"checksum at the peer")
    ctx.expect(got["received"] + dropped >= COUNT,
               f"the peer received {got['received']} of {COUNT} ({dropped} "
               f"dropped by its receive buffer)")
    return sent


def _tx_csum_case(ctx, mode):
    """TX metadata: frames whose UDP checksum field holds only the
    pseudo-header sum. Without metadata the peer's UDP must drop them
    (UdpInCsumErrors: the peer checks, and the frames are wrong as
    written); with XDP_TXMD_FLAGS_CHECKSUM (csum_start at the UDP header,
    csum_offset 6) every one must arrive intact: the driver asked the
    device to finish the checksum."""
    _, got, _, bad_csum = _tx_send(ctx, mode, "pseudo", idle=3)
    ctx.expect(got["received"] == 0 and bad_csum >= COUNT * 9 // 10,
               f"without the checksum request the peer received "
               f"{got['received']} and counted {bad_csum} bad checksums of "
               f"{COUNT}: it does not check, or the frames are not wrong")
    return _tx_case(ctx, mode, "csum")


def test_copy_tx(ctx):
    _tx_case(ctx, "copy")


def test_copy_tx_csum(ctx):
    _tx_csum_case(ctx, "copy")


def _start_rx(ctx, mode, count, idle_ms, extra="", prog="xdp_xsk", env=""):
    """Start vx3-xsk rx on queue 0 in the background with program prog of
    vx3_xdp.bpf.c (env: more VAR=value settings), wait for "ready"."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    vm.check(f"rm -f {OUT}")
    job = vm.bg(f"{env} VX3_XSK_PROG={prog} exec vx3-xsk rx {ifn} 0 {mode} "
                f"{count} {idle_ms} {extra} >{OUT} 2>&1")
    try:
        _wait_ready(ctx)
    except BaseException:
        job.stop()
        raise
    return job


def _wait_ready(ctx):
    """Wait for vx3-xsk rx's "ready": up to 60 s, as loading the object,
    populating the UMEM and the bind's queue swap take several seconds
    on the debug kernel beside other guests."""
    rc, out = ctx.vm.run(f"for i in $(seq 600); do grep -q ready {OUT} && "
                         f"exit 0; sleep 0.1; done; cat {OUT}; exit 1",
                         timeout=120)
    ctx.expect(rc == 0, f"vx3-xsk rx did not get ready:\n{out}")


def _wait_result(ctx, secs=30):
    _, out = ctx.vm.run(f"for i in $(seq {secs * 10}); do "
                        f"grep -q '^{{' {OUT} && break; sleep 0.1; done; "
                        f"cat {OUT}", timeout=secs + 30)
    return _result(out)


def _send(ctx, count, start=0, sizes="64,200,1400"):
    vm = ctx.vm
    return _result(vm.peer_check(
        1, f"{PEER} send {vm.guest_ip4(1)} {count} {sizes} --start {start}",
        timeout=120))


def _ping(ctx):
    """At least one echo reply (zc_churn pings while the peer floods)."""
    vm = ctx.vm
    rc, out = vm.run(f"ping -c 5 -i 0.3 -W 3 {vm.peer_ip4(1)}", timeout=30)
    ctx.expect(rc == 0, f"no ping through {ctx.ifname(1)}:\n{out}")


@vx3_only
def test_zc_rx(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    m0 = link_stats(vm, ifn)["rx_missed_errors"]
    # COUNT + 1: the socket stays bound until it has been idle for 5 s,
    # while its queue's counters are read (a new queue set, as when the
    # socket goes, starts them from 0)
    job = _start_rx(ctx, "zc", COUNT + 1, 5000)
    try:
        s0 = ethtool_stats(vm, ifn)
        sent = _send(ctx, COUNT)
        # The program passes the echo replies: copied into skbs
        rc, out = vm.run(f"ping -c 3 -i 0.2 -W 2 {vm.peer_ip4(1)}",
                         timeout=30)
        ctx.expect(rc == 0, f"no ping with the socket bound:\n{out}")
        for _ in range(50):
            s1 = ethtool_stats(vm, ifn)
            if s1["rx0_xdp_redirect"] - s0["rx0_xdp_redirect"] >= COUNT:
                break
            time.sleep(0.2)
        res = _wait_result(ctx)
    finally:
        job.stop()
    missed = link_stats(vm, ifn)["rx_missed_errors"] - m0
    redir = s1["rx0_xdp_redirect"] - s0["rx0_xdp_redirect"]
    copied = s1["rx0_xsk_copied"] - s0["rx0_xsk_copied"]
    diag(f"zero-copy RX: peer sent {sent['sent']}, socket received {res}, "
         f"rx0_xdp_redirect +{redir}, rx0_xsk_copied +{copied}, device out "
         f"of buffers +{missed}")
    ctx.expect(res["zc"] == 1, f"the bind is not zero-copy: {res}")
    ctx.expect(res["bad"] == 0 and res["dup"] == 0,
               f"corrupt or duplicate payloads: {res}")
    ctx.expect(missed == 0, f"the device ran out of buffers ({missed}) "
               f"with {COUNT} frames for 2048 posted")
    ctx.expect(res["received"] == COUNT,
               f"the socket received {res['received']} of {COUNT}")
    ctx.expect(redir == COUNT,
               f"rx0_xdp_redirect counted {redir}, not {COUNT}")
    ctx.expect(copied >= 3, f"the 3 echo replies the program passed were "
               f"not all copied into skbs (rx0_xsk_copied +{copied})")


@vx3_only
def test_zc_tx(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    # The device totals: the queue counters of ethtool -S start from 0 in
    # the queue set that replaces the socket's when it goes
    t0 = link_stats(vm, ifn)["tx_packets"]
    sent = _tx_case(ctx, "zc")
    comp = link_stats(vm, ifn)["tx_packets"] - t0
    diag(f"zero-copy TX: device completed +{comp}")
    ctx.expect(sent["zc"] == 1, f"the bind is not zero-copy: {sent}")
    # The stack may send the odd neighbour solicitation meanwhile
    ctx.expect(COUNT <= comp <= COUNT + 10,
               f"the device completed {comp} packets for {COUNT} frames")


@vx3_only
def test_zc_tx_csum(ctx):
    sent = _tx_csum_case(ctx, "zc")
    ctx.expect(sent["zc"] == 1, f"the bind is not zero-copy: {sent}")


def _verdict_case(ctx, prog, stat, reflect):
    """A zero-copy socket with 64 frames lends queue 0 its buffers, prog
    acts on 300 datagrams: each must be counted under stat (or missed by
    the device, or dropped by the host's tap), more than 64 of them
    (the buffers go back to the pool), and if reflect every XDP_TX
    frame must come back intact with the program's tail."""
    vm, ifn = ctx.vm, ctx.ifname(1)
    count = 300
    # An idle timeout longer than the case: the socket receives nothing
    job = _start_rx(ctx, "zc", 1, 120000, "64 0", prog=prog)
    try:
        s0 = ethtool_stats(vm, ifn)
        m0 = link_stats(vm, ifn)["rx_missed_errors"]
        d0 = tap_dropped(vm, 1)
        res = _result(vm.peer_check(
            1, f"{PEER} send {vm.guest_ip4(1)} {count} 18,200,1400"
               + (" --reflect --tail VX3!" if reflect else ""),
            timeout=120))
        time.sleep(1)
        # Before the socket goes: a new queue set counts from 0
        s1 = ethtool_stats(vm, ifn)
        missed = link_stats(vm, ifn)["rx_missed_errors"] - m0
        host = tap_dropped(vm, 1) - d0
    finally:
        job.stop()
        vm.check(f"ip link set {ifn} xdp off")
    seen = s1[stat] - s0[stat]
    diag(f"{prog} on a zero-copy queue: {res}, {stat} +{seen}, device out "
         f"of buffers +{missed}, host tap dropped +{host}")
    ctx.expect(seen + missed + host == count and seen > 64,
               f"{prog}: {seen} of {count} counted in {stat} with 64 "
               f"frames in the pool, the device missed {missed}, the host "
               f"dropped {host}")
    if reflect:
        ctx.expect(res["bad"] == 0 and res["received"] == seen,
                   f"{prog}: {seen} sent back, the peer received {res}")
    _ping(ctx)


@vx3_only
def test_zc_xdp_tx(ctx):
    _verdict_case(ctx, "xdp_tx", "rx0_xdp_tx", True)


@vx3_only
def test_zc_xdp_drop(ctx):
    _verdict_case(ctx, "xdp_drop", "rx0_xdp_drop", False)


@vx3_only
def test_zc_fill_starved(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    half, fill, stall = 500, 64, 10000
    m0 = link_stats(vm, ifn)["rx_missed_errors"]
    job = _start_rx(ctx, "zc", 2 * half, 30000, f"{fill} {stall}",
                    env="VX3_XSK_STALL_SLEEP=1")
    # The stall runs from "ready" on
    t0 = time.monotonic()
    try:
        s0 = ethtool_stats(vm, ifn)
        sent0 = tap_sent(vm, 1)
        _send(ctx, half, 0)
        # Frames still on their way through the tap count in the burst
        time.sleep(1)
        m1 = link_stats(vm, ifn)["rx_missed_errors"]
        # Frames other than the burst's in that window (neighbour
        # discovery): one that found no buffer counts among the drops
        stray = tap_sent(vm, 1) - sent0 - half
        s1 = ethtool_stats(vm, ifn)
        elapsed = time.monotonic() - t0
        # The socket sleeps through the stall, need_wakeup set: nothing
        # should poll the queue now but the guest's own transmits (ND)
        time.sleep(2)
        idle_polls = (ethtool_stats(vm, ifn)["rx0_xsk_fill_empty"] -
                      s1["rx0_xsk_fill_empty"])
        elapsed2 = time.monotonic() - t0
        # The socket refills once the stall is over. Until then a stray
        # frame (neighbour discovery) also finds no buffer: count the
        # second burst's drops from after the refill
        time.sleep(max(0.0, stall / 1000 - elapsed) + 2)
        m_refill = link_stats(vm, ifn)["rx_missed_errors"]
        _send(ctx, half, half)
        res = _wait_result(ctx, 60)
    finally:
        job.stop()
    m2 = link_stats(vm, ifn)["rx_missed_errors"]
    empty = s1["rx0_xsk_fill_empty"] - s0["rx0_xsk_fill_empty"]
    diag(f"starved fill ring: first burst in {elapsed:.1f}s, device out of "
         f"buffers +{m1 - m0} ({stray} other frames then), +{m_refill - m1} "
         f"until the refill, then +{m2 - m_refill}, xsk_fill_empty "
         f"+{empty}, socket {res}; polls of the empty queue in 2 s of the "
         f"socket sleeping: {idle_polls}")
    if elapsed2 >= stall / 1000:
        ctx.skip(f"the first burst took {elapsed:.1f}s, longer than the "
                 f"stall")
    ctx.expect(res["zc"] == 1, f"the bind is not zero-copy: {res}")
    ctx.expect(res["bad"] == 0 and res["dup"] == 0,
               f"corrupt or duplicate payloads: {res}")
    ctx.expect(m1 - m0 >= half - fill,
               f"with {fill} buffers for {half} frames the device counted "
               f"only {m1 - m0} out of buffers")
    ctx.expect(empty > 0, "xsk_fill_empty did not count the empty fill ring")
    ctx.expect(idle_polls <= IDLE_POLLS_MAX,
               f"the empty queue was polled {idle_polls} times in 2 s while "
               f"its socket slept with need_wakeup set (a refill timer?)")
    ctx.expect(m2 == m_refill, f"the device still ran out of buffers "
               f"({m2 - m_refill}) after the socket refilled")
    # Every datagram the device did not drop reaches the socket; of the
    # drops, up to `stray` may have been other frames
    least = 2 * half - (m1 - m0)
    ctx.expect(least <= res["received"] <= least + max(stray, 0),
               f"the socket received {res['received']}, not {2 * half} "
               f"less the {m1 - m0} dropped (of which {max(stray, 0)} "
               f"may have been other frames)")


def _dmesg_mark(ctx):
    """Lines in the guest log so far (never cleared: the harness scans
    it after each case)."""
    return int(ctx.vm.check("dmesg | wc -l").strip())


def _dmesg_since(ctx, mark):
    return ctx.vm.check(f"dmesg | tail -n +{mark + 1}")


def _bind_fails(ctx, why, queue=0):
    vm, ifn = ctx.vm, ctx.ifname(1)
    mark = _dmesg_mark(ctx)
    rc, out = vm.run(f"timeout 20 vx3-xsk rx {ifn} {queue} zc 1 100")
    log = _dmesg_since(ctx, mark)
    ctx.expect(rc != 0 and "bind" in out,
               f"zero-copy bind with {why} did not fail:\n{out}")
    return out, log


@vx3_only
def test_zc_resize(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    rx = rings(vm, ifn)[1]["RX"]
    m0 = link_stats(vm, ifn)["rx_missed_errors"]
    job = _start_rx(ctx, "zc", COUNT, 5000)
    try:
        # The queues are replaced with the pool kept: ring 0 of the new
        # size takes the pool's frames
        vm.check(f"ethtool -G {ifn} rx 256")
        size = rings(vm, ifn)[1]["RX"]
        sent = _send(ctx, COUNT)
        res = _wait_result(ctx)
    finally:
        job.stop()
        vm.check(f"ethtool -G {ifn} rx {rx}; ip link set {ifn} xdp off")
    missed = link_stats(vm, ifn)["rx_missed_errors"] - m0
    diag(f"zero-copy RX after a ring resize to {size} with the socket "
         f"bound: peer sent {sent['sent']}, socket received {res}, device "
         f"out of buffers +{missed}")
    if res.get("received", 0) + missed != COUNT:
        st = ethtool_stats(vm, ifn)
        diag("counters after the resize: " + ", ".join(
            f"{k}={v}" for k, v in sorted(st.items())
            if v and k.startswith(("rx0", "xdp", "rx_"))))
    ctx.expect(size == 256, f"RX ring {size} after ethtool -G rx 256")
    ctx.expect(res["zc"] == 1, f"the bind is not zero-copy: {res}")
    ctx.expect(res["bad"] == 0 and res["dup"] == 0,
               f"corrupt or duplicate payloads: {res}")
    ctx.expect(res["received"] + missed == COUNT and res["received"] > 0,
               f"the socket received {res['received']} of {COUNT} "
               f"({missed} dropped by the device for want of buffers)")
    _ping(ctx)


def _lro(ctx):
    out = ctx.vm.check(f"ethtool -k {ctx.ifname(1)} | grep large-receive")
    return out.split(":")[1].split()[0]


@vx3_only
def test_zc_default_lro(ctx):
    vm = ctx.vm
    vm.check("ip link set xdp off dev " + ctx.ifname(1) + "; rmmod vx3")
    ctx.load_driver()
    ctx.config_ip(1)
    ifn = ctx.ifname(1)
    try:
        ctx.expect(_lro(ctx) == "on",
                   f"LRO is {_lro(ctx)} on a freshly loaded vx3")
        job = _start_rx(ctx, "zc", 100, 10000)
        try:
            bound = _lro(ctx)
            _send(ctx, 100)
            res = _wait_result(ctx)
        finally:
            job.stop()
        # The pool goes with the socket
        for _ in range(100):
            after = _lro(ctx)
            if after == "on":
                break
            time.sleep(0.1)
        diag(f"zero-copy bind on a fresh vx3: LRO {bound} while bound, "
             f"{after} after; {res}")
        ctx.expect(res["zc"] == 1, f"the bind is not zero-copy: {res}")
        ctx.expect(res["received"] == 100 and res["bad"] == 0,
                   f"the zero-copy socket got {res}")
        ctx.expect(bound == "off", f"LRO {bound} with a socket bound")
        ctx.expect(after == "on", f"LRO stayed {after} after the socket "
                   f"went, although the user has it on")
    finally:
        vm.run(f"ethtool -K {ifn} lro off")


@vx3_only
def test_zc_no_rx_queue(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    vm.check(f"ethtool -L {ifn} combined 1 tx 1")
    try:
        _, log = _bind_fails(ctx, "a TX-only queue", queue=1)
        diag(f"zero-copy bind to TX-only queue 1 refused: {log.strip()}")
        ctx.expect("no RX queue 1" in log,
                   f"no reason for refusing queue 1 in the log:\n{log}")
    finally:
        vm.check(f"ethtool -L {ifn} combined 1 tx 0")
    _ping(ctx)


@vx3_only
def test_zc_refused(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    try:
        vm.check(f"ethtool -K {ifn} lro off && ip link set {ifn} mtu 9000")
        out, _ = _bind_fails(ctx, "MTU 9000")
        ctx.expect("Invalid argument" in out,
                   f"the bind at MTU 9000 failed for another reason:\n{out}")
        vm.check(f"ip link set {ifn} mtu 1500")
        job = _start_rx(ctx, "zc", 100, 10000)
        try:
            vm.run(f"ethtool -K {ifn} lro on")
            lro = vm.check(f"ethtool -k {ifn} | grep large-receive")
            ctx.expect("large-receive-offload: off" in lro,
                       f"LRO went on with a socket bound: {lro}")
            # The request stands: LRO would go on once the socket goes
            vm.check(f"ethtool -K {ifn} lro off")
            _send(ctx, 100)
            res = _wait_result(ctx)
        finally:
            job.stop()
        ctx.expect(res["received"] == 100 and res["zc"] == 1,
                   f"the zero-copy socket at MTU 1500 got {res}")
        # A sender's socket, bound without an XDP program (whose own MTU
        # limit, 3502 without frags, would answer first)
        tap_mac = vm.peer_check(
            1, f"cat /sys/class/net/{vm.tap(1)}/address").strip()
        job = vm.bg(f"exec vx3-xsk tx {ifn} 0 zc 100000000 64 {tap_mac} "
                    f"{vm.guest_ip4(1)} {vm.peer_ip4(1)}")
        try:
            vm.check("sleep 1")
            mark = _dmesg_mark(ctx)
            rc, out = vm.run(f"ip link set {ifn} mtu 3900")
            log = _dmesg_since(ctx, mark)
        finally:
            txout = job.stop()
        ctx.expect(rc != 0, f"MTU 3900 was taken with a socket bound; the "
                   f"sender said:\n{txout}")
        ctx.expect("does not fit the frames of a bound AF_XDP" in log,
                   f"no reason for refusing MTU 3900 in the log:\n{log}")
        diag(f"zero-copy bind refused at MTU 9000, LRO and MTU 3900 "
             f"refused while bound; {res} at MTU 1500")
    finally:
        vm.run(f"ip link set {ifn} mtu 1500; ethtool -K {ifn} lro off")


@vx3_only
def test_zc_churn(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    tap_mac = vm.peer_check(1, f"cat /sys/class/net/{vm.tap(1)}/address"
                            ).strip()
    flood = vm.peer_bg(1, f"{PEER} send {vm.guest_ip4(1)} 1000000 "
                          f"64,1400 --rate {FLOOD_PPS}")
    try:
        for i in range(3):
            job = _start_rx(ctx, "zc", 1000000, 20000)
            vm.check("sleep 1")
            job.stop()
        tx = vm.bg(f"exec vx3-xsk tx {ifn} 0 zc 1000000 1000 {tap_mac} "
                   f"{vm.guest_ip4(1)} {vm.peer_ip4(1)}")
        vm.check("sleep 1")
        tx.stop()
        vm.check(f"ip link set {ifn} xdp off")
        _ping(ctx)

        job = _start_rx(ctx, "zc", 1000000, 20000)
        vm.check(f"ip link set {ifn} down; sleep 0.5; ip link set {ifn} up")
        vm.check("sleep 1")
        job.stop()
        vm.check(f"ip link set {ifn} xdp off")
        _ping(ctx)

        job = _start_rx(ctx, "zc", 1000000, 20000)
        try:
            vm.check(f"rmmod {ctx.driver}", timeout=60)
        finally:
            job.stop()
    finally:
        flood.stop()
    setup(ctx)
    _ping(ctx)

