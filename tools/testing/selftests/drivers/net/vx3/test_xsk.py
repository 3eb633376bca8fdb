# SPDX-License-Identifier: GPL-2.0
"""AF_XDP sockets on the driver, in copy mode.

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
"""

import json
import os
import threading

from lib.nic import diag, link_stats, wait_listen

NICS = 1
HERE = os.path.dirname(os.path.abspath(__file__))
PEER = f"/usr/bin/python3 {HERE}/lib/xdppeer.py"
COUNT = 1000
OUT = "/tmp/vx3-xsk.out"


def setup(ctx):
    vm = ctx.vm
    ctx.load_driver()
    ctx.config_ip(1)
    # The peer knows the guest's MAC from the start (no ARP queue, see
    # test_xdp.py)
    vm.peer_check(1, f"ip neigh replace {vm.guest_ip4(1)} lladdr "
                     f"{vm.mac(1)} dev {vm.tap(1)} nud permanent")
    vm.check("mount -t bpf bpf /sys/fs/bpf 2>/dev/null; true")


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
        rc, out = vm.run(f"for i in $(seq 100); do grep -q ready {OUT} && "
                         f"exit 0; sleep 0.1; done; cat {OUT}; exit 1")
        ctx.expect(rc == 0, f"vx3-xsk rx did not get ready:\n{out}")
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


def _rcvbuf_errors(ctx):
    out = ctx.vm.peer_check(1, "nstat -az UdpRcvbufErrors")
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "UdpRcvbufErrors":
            return int(f[1])
    return 0


def test_copy_tx(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    tap_mac = vm.peer_check(1, f"cat /sys/class/net/{vm.tap(1)}/address"
                            ).strip()
    e0 = _rcvbuf_errors(ctx)
    res = []
    recv = threading.Thread(target=lambda: res.append(vm.peer(
        1, f"{PEER} recv {COUNT} 8", timeout=120)))
    recv.start()
    try:
        ctx.expect(wait_listen(lambda c: vm.peer(1, c), 9999, udp=True),
                   "the peer's receiver did not start")
        out = vm.check(f"vx3-xsk tx {ifn} 0 copy {COUNT} 1000 {tap_mac} "
                       f"{vm.guest_ip4(1)} {vm.peer_ip4(1)}", timeout=120)
    finally:
        recv.join()
    sent = _result(out)
    rc, pout = res[0]
    got = _result(pout)
    dropped = _rcvbuf_errors(ctx) - e0
    diag(f"{ctx.driver}: copy mode TX: {sent}; peer received {got}, its "
         f"receive buffer dropped {dropped}")
    ctx.expect(sent["sent"] == COUNT and sent["completed"] == COUNT,
               f"not every frame was sent and completed: {sent}")
    ctx.expect(got["bad"] == 0, f"{got['bad']} corrupt payloads at the peer")
    ctx.expect(got["received"] + dropped >= COUNT,
               f"the peer received {got['received']} of {COUNT} ({dropped} "
               f"dropped by its receive buffer)")
