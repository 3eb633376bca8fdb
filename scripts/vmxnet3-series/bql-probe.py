#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What BQL does in make bench's TCP cells (numbers, not a test).

Runs bench.py (same options) with the guest's default qdisc set to
fq_codel, and around every measured window records, for guest NIC 1: the
root qdisc's requeues, each TX queue's byte_queue_limits (limit,
inflight, stall_cnt) before and after, the RTT of pings from peer 1 to
the guest every 20 ms through the window (median, 90th percentile), and
the sender's cwnd and snd_wnd from four `ss -tin` samples. Written to
bql-probe.txt in the current directory, one line per cell in the log.

  scripts/vmxnet3-series/bql-probe.py --exp rx,tx --reps 1 --seconds 10 \
      --p1-seconds 10 --tx-seconds 10 --patched yes --outdir DIR

On QEMU the device transmits inside the doorbell write, so BQL has no
backlog to bound there: the RTTs show that, not BQL's benefit on a
VMware host.
"""
import importlib.util
import os
import re
import statistics
import subprocess
import sys
import threading
import time

B = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                 "tools/testing/selftests/drivers/net/vx3/bench/bench.py")
sys.path.insert(0, os.path.dirname(B))
spec = importlib.util.spec_from_file_location("benchmod", B)
bm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bm)

OUT = open("bql-probe.txt", "a")
orig_measure = bm.Bench.measure
orig_boot = bm.Bench.boot


def boot(self, initrd, kv):
    orig_boot(self, initrd, kv)
    self.vm.check("sysctl -w net.core.default_qdisc=fq_codel")


def snap(self, i):
    return self.vm.check(
        f"tc -s qdisc show dev {i}; for q in /sys/class/net/{i}/queues/tx-*; do "
        f"echo $q $(cat $q/byte_queue_limits/limit $q/byte_queue_limits/inflight "
        f"$q/byte_queue_limits/stall_cnt 2>/dev/null); done; "
        f"cat /sys/class/net/{i}/statistics/tx_packets")


def requeues(txt):
    """The root qdisc's requeues (mq: the sum of its children)."""
    m = re.search(r"requeues (\d+)\)", txt)
    return int(m.group(1)) if m else 0


def measure(self, sampler, secs, guest_cmd=None):
    i = self.ifn[1]
    pre = snap(self, i)
    ping = subprocess.Popen(["ip", "netns", "exec", self.vm.netns(1), "ping",
                             "-i", "0.02", "-w", str(secs), self.vm.guest_ip4(1)],
                            stdout=subprocess.PIPE, text=True)
    ss = []

    def sample():
        for _ in range(4):
            time.sleep(secs / 5)
            ss.append(subprocess.run(
                ["ip", "netns", "exec", self.vm.netns(1), "ss", "-tin",
                 "dst", self.vm.guest_ip4(1)], capture_output=True,
                text=True).stdout)
    t = threading.Thread(target=sample)
    t.start()
    r = orig_measure(self, sampler, secs, guest_cmd)
    t.join()
    wnds = []
    for o in ss:
        for m in re.finditer(r"cwnd:(\d+).*?snd_wnd:(\d+)", o):
            wnds.append((int(m.group(1)), int(m.group(2))))
    wnds.sort()
    out, _ = ping.communicate(timeout=secs + 30)
    post = snap(self, i)
    rtts = [float(x) for x in re.findall(r"time=([\d.]+)", out)]
    sent = re.search(r"(\d+) packets transmitted, (\d+) received", out)
    med = statistics.median(rtts) if rtts else None
    p90 = sorted(rtts)[int(len(rtts) * 0.9)] if rtts else None
    drv = self.drv
    OUT.write(f"windows (cwnd, snd_wnd) {wnds[:3]} .. {wnds[-3:]}\n"
              f"ss: {ss[1] if len(ss) > 1 else ''}\n")
    OUT.write(f"=== drv {drv} {sys.argv[1:]}\nping sent/recv {sent.groups() if sent else None} "
              f"rtt median {med} p90 {p90} ms\nrequeues {requeues(pre)} -> {requeues(post)}\n"
              f"--- pre\n{pre}\n--- post\n{post}\n")
    OUT.flush()
    bm.log(f"probe {drv}: rtt median {med} p90 {p90} ms, requeues "
           f"+{requeues(post) - requeues(pre)}")
    return r


bm.Bench.measure = measure
bm.Bench.boot = boot
sys.exit(bm.main())
