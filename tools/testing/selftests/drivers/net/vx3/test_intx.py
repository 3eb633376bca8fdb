# SPDX-License-Identifier: GPL-2.0
"""Legacy interrupts: the driver falls back to INTx when MSI is disabled.

The guest boots with pci=nomsi, so neither MSI-X nor MSI can be enabled and
the driver must run on the shared INTx line: one vector, one TX queue, the
interrupt cause register (ICR) telling its interrupts from others, events
(link changes) handled on the same line. Traffic both ways and a link flap
prove the line is serviced and unmasked again after every NAPI poll.
"""

import time

from lib.test import iperf_bytes, vx3_only

APPEND = "pci=nomsi"
IPERF_SECONDS = 4


def setup(ctx):
    ctx.load_driver()
    ctx.config_ip(1)


@vx3_only
def test_mode(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    out = vm.check("dmesg | grep 'vx3 .*VMXNET3 at' | tail -n 1")
    ctx.expect("INTx with 1 vector" in out,
               f"driver did not fall back to INTx:\n{out}")
    out = vm.check(f"ethtool -l {ifn}")
    maxima = out.split("Current")[0]
    tx_max = [ln.split(":")[1].strip() for ln in maxima.splitlines()
              if ln.startswith("TX:")]
    ctx.expect(tx_max in (["0"], ["n/a"]),
               f"more than one TX queue offered on INTx:\n{out}")
    out = vm.check(f"grep '{ifn}' /proc/interrupts")
    ctx.expect("IO-APIC" in out, f"{ifn} is not on an IO-APIC line:\n{out}")


def test_traffic(ctx):
    vm = ctx.vm
    irqs0 = _irq_count(ctx)
    vm.check(f"ping -c 3 -W 5 {vm.peer_ip4(1)}", timeout=30)
    srv = vm.bg("exec iperf -s -p 5003")
    try:
        time.sleep(1)
        rc, out = vm.peer(1, f"iperf -c {vm.guest_ip4(1)} -p 5003 "
                          f"-t {IPERF_SECONDS} -y C",
                          timeout=IPERF_SECONDS + 60)
    finally:
        srv.stop()
    ctx.expect(rc == 0 and iperf_bytes(out) > 0,
               f"peer -> guest TCP failed (rc={rc}):\n{out}")
    srv = vm.peer_bg(1, "exec iperf -s -p 5004")
    try:
        time.sleep(1)
        rc, out = vm.run(f"iperf -c {vm.peer_ip4(1)} -p 5004 "
                         f"-t {IPERF_SECONDS} -y C",
                         timeout=IPERF_SECONDS + 60)
    finally:
        srv.stop()
    ctx.expect(rc == 0 and iperf_bytes(out) > 0,
               f"guest -> peer TCP failed (rc={rc}):\n{out}")
    ctx.expect(_irq_count(ctx) > irqs0, "no interrupt was counted")


def test_link_events(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    for state, want in (("off", "0"), ("on", "1"), ("off", "0"), ("on", "1")):
        vm.monitor(f"set_link nic1 {state}")
        rc, out = vm.run(f"for i in $(seq 50); do "
                         f"[ $(cat /sys/class/net/{ifn}/carrier) = {want} ] "
                         f"&& exit 0; sleep 0.1; done; "
                         f"cat /sys/class/net/{ifn}/carrier; exit 1")
        ctx.expect(rc == 0, f"carrier did not become {want} after "
                   f"set_link {state}: {out}")
    vm.check(f"ping -c 2 -W 5 {vm.peer_ip4(1)}", timeout=30)


def _irq_count(ctx):
    out = ctx.vm.check(f"grep '{ctx.ifname(1)}' /proc/interrupts")
    return sum(int(f) for line in out.splitlines()
               for f in line.split()[1:] if f.isdigit())
