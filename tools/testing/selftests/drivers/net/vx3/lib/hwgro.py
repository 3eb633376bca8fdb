# SPDX-License-Identifier: GPL-2.0
"""Helpers of the LRO tests (test_hwgro.py, test_forward.py, test_qinq.py).

The device aggregates TCP streams (uptFeatures LRO). vx3 and the in-tree
vmxnet3 both offer that as lro (NETIF_F_LRO), which the stack turns off
when forwarding is enabled or the device joins a bridge. vx3 counts the
aggregates in ethtool -S rx<q>_lro_packets/_segs/_bytes (LRO_COUNTERS).
Transfers move a random file over TCP and compare its SHA-256 at both
ends; captures record the frame sizes a peer namespace receives.
"""

import os
import re
import signal
import struct
import time

from lib.test import write_random

# Driver -> (ethtool -K name, ethtool -k name) of the device's aggregation
AGG_FEATURE = {
    "vx3": ("lro", "large-receive-offload"),
    "vmxnet3": ("lro", "large-receive-offload"),
}

# vx3 ethtool -S counters of queue 0's aggregates
LRO_PACKETS, LRO_SEGS, LRO_BYTES = LRO_COUNTERS = (
    "rx0_lro_packets", "rx0_lro_segs", "rx0_lro_bytes")

# Ethernet header plus a VLAN tag: what a frame may carry beyond the MTU
L2_MAX = 18

# vx3 counters that count packets the driver dropped
VX3_DROP_RE = re.compile(r"^(rx\d+_drop_\w+|tx\d+_drops|tx\d+_map_err)$")


def note(text):
    """Print text as TAP comment lines (shown in the make check output)."""
    for line in str(text).rstrip().splitlines():
        print(f"# {line}", flush=True)


def set_agg(ctx, ifn, on):
    """Turn the device's aggregation on or off on guest interface ifn."""
    name = AGG_FEATURE[ctx.driver][0]
    ctx.vm.check(f"ethtool -K {ifn} {name} {'on' if on else 'off'}")


def agg_state(ctx, ifn):
    """The `ethtool -k` line of the aggregation (large-receive-offload)."""
    name = AGG_FEATURE[ctx.driver][1]
    out = ctx.vm.check(f"ethtool -k {ifn}")
    m = re.search(rf"^{re.escape(name)}: .*$", out, re.M)
    ctx.expect(m is not None, f"ethtool -k {ifn} has no {name} line:\n{out}")
    return m.group(0).strip()


def agg_on(ctx, ifn):
    """True if the device's aggregation is on on guest interface ifn."""
    return agg_state(ctx, ifn).split()[1] == "on"


def ethtool_stats(vm, ifn):
    """vx3 `ethtool -S` counters as a dict (names without spaces only)."""
    out = vm.check(f"ethtool -S {ifn}")
    return {k: int(v) for k, v in re.findall(r"^\s*(\w+): (\d+)$", out, re.M)}


def dev_stats(vm, ifn):
    """The standard counters of /sys/class/net/IFN/statistics (as ip -s)."""
    out = vm.check(f"cd /sys/class/net/{ifn}/statistics && grep . *")
    return {k: int(v) for k, v in re.findall(r"^(\w+):(\d+)$", out, re.M)}


def delta(before, after):
    return {k: v - before.get(k, 0) for k, v in after.items()}


def drops(ctx, d_dev, d_eth):
    """Driver-level drop counters that rose, from dev_stats()/ethtool_stats()
    deltas: rx_dropped and tx_dropped for every driver, plus vx3's per-queue
    drop counters."""
    bad = {k: d_dev[k] for k in ("rx_dropped", "tx_dropped") if d_dev[k]}
    if ctx.driver == "vx3":
        bad.update({k: v for k, v in d_eth.items()
                    if v and VX3_DROP_RE.match(k)})
    return bad


def make_payload(vm, size, name="payload"):
    """Write size random bytes to a host file; returns (path, sha256 hex).

    The file lives in the VM's socket directory, which vm.close() empties on
    every exit path.
    """
    path = os.path.join(vm.sockdir, name)
    with open(path, "wb") as f:
        digest = write_random(f, size)
    return path, digest


def _wait_host_file(path, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                text = f.read()
            if text.endswith("\n"):
                return text
        except OSError:
            pass
        time.sleep(0.2)
    return None


def _sha_of(text):
    m = re.match(r"^([0-9a-f]{64})\b", text or "")
    return m.group(1) if m else None


def send_to_guest(ctx, n, path, v6, port, timeout=180):
    """Send a host file from peer namespace n to the guest over TCP.

    The guest pipes the stream into sha256sum. Returns (ok, sha, seconds,
    detail): ok is False if the sender failed; sha is the guest's digest
    (None if it never finished).
    """
    vm = ctx.vm
    sumf = f"/tmp/hwgro-sha.{port}"
    vm.check(f"rm -f {sumf}")
    job = vm.bg(f"nc -l -p {port} | sha256sum > {sumf}.tmp && "
                f"mv {sumf}.tmp {sumf}")
    try:
        rc, out = vm.run(f"for i in $(seq 100); do netstat -ltn | "
                         f"grep -q ':{port} ' && exit 0; sleep 0.1; done; "
                         f"exit 1")
        ctx.expect(rc == 0, f"guest nc -l -p {port} did not listen")
        dst = f"TCP6:[{vm.guest_ip6(n)}]" if v6 else f"TCP:{vm.guest_ip4(n)}"
        t0 = time.monotonic()
        rc, out = vm.peer(n, f"socat -u FILE:{path} {dst}:{port}",
                          timeout=timeout)
        dt = time.monotonic() - t0
        if rc != 0:
            return False, None, dt, f"socat exited {rc}: {out}"
        rc, out = vm.run(f"for i in $(seq 300); do [ -e {sumf} ] && "
                         f"cat {sumf} && exit 0; sleep 0.2; done; exit 1",
                         timeout=90)
        return True, _sha_of(out), dt, out
    finally:
        job.stop()


def send_between_peers(ctx, src, dst, path, v6, port, timeout=180,
                       mss=None):
    """Send a host file from peer namespace src to namespace dst over TCP
    (through the guest); the receiver advertises mss if given. Returns
    (ok, sha, seconds, detail) as send_to_guest()."""
    vm = ctx.vm
    sumf = os.path.join(vm.sockdir, f"sha.{port}")
    listen = "TCP6-LISTEN" if v6 else "TCP4-LISTEN"
    opts = f",mss={mss}" if mss else ""
    job = vm.peer_bg(dst, f"socat -u {listen}:{port},reuseaddr{opts} - | "
                          f"sha256sum > {sumf}")
    try:
        rc, out = vm.peer(dst, f"for i in $(seq 100); do ss -Hltn "
                               f"'sport = :{port}' | grep -q . && exit 0; "
                               f"sleep 0.1; done; exit 1")
        ctx.expect(rc == 0, f"socat in peer {dst} did not listen on {port}")
        to = (f"TCP6:[{vm.peer_ip6(dst)}]" if v6
              else f"TCP4:{vm.peer_ip4(dst)}")
        t0 = time.monotonic()
        # 64 KiB writes (socat's default is 8 KiB): every write fills
        # full-MSS segments even at MTU 9000. With 8 KiB writes an
        # application-limited sender (a busy host) sends each write as
        # one 8192-byte segment, and test_forward would take that for
        # the guest cutting segments smaller.
        rc, out = vm.peer(src, f"timeout {timeout} socat -b 65536 -u "
                               f"FILE:{path} {to}:{port}",
                          timeout=timeout + 30)
        dt = time.monotonic() - t0
        if rc == 124:
            return False, None, dt, f"not done after {timeout}s"
        if rc != 0:
            return False, None, dt, f"socat exited {rc}: {out}"
        text = _wait_host_file(sumf, 60)
        return True, _sha_of(text), dt, text or "(no digest)"
    finally:
        job.stop()


def iperf_rate(out):
    """Bits per second of an `iperf -y C` client summary (0 if none)."""
    rate = 0
    for line in out.splitlines():
        f = line.strip().split(",")
        if len(f) >= 9 and f[8].isdigit():
            rate = int(f[8])
    return rate


class Capture:
    """tcpdump of the TCP frames peer namespace n receives on its tap.

    The frames are what the guest transmitted: QEMU writes them into the
    tap, the namespace receives them.
    """

    def __init__(self, vm, n, tag):
        self.vm = vm
        self.path = os.path.join(vm.sockdir, f"{tag}.pcap")
        pidf = os.path.join(vm.sockdir, f"{tag}.pid")
        # -Z root: tcpdump writes into the root-owned socket directory
        self.job = vm.peer_bg(n, f"tcpdump -Z root -n -i {vm.tap(n)} -Q in "
                                 f"-U -B 16384 -s 64 -w {self.path} tcp & "
                                 f"echo $! > {pidf}; wait")
        self.pid = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.pid is None:
                try:
                    with open(pidf) as f:
                        self.pid = int(f.read())
                except (OSError, ValueError):
                    pass
            if self.pid is not None and os.path.exists(self.path):
                # The file exists once the capture is active
                return
            time.sleep(0.1)
        self.job.stop()
        raise AssertionError(f"tcpdump in peer {n} did not start")

    def stop(self):
        """Stop tcpdump; returns (frame lengths, tcpdump's summary)."""
        # tcpdump writes every frame it reads (-U): let it drain its
        # buffer, until the file stops growing.
        size, deadline = -1, time.monotonic() + 60
        while time.monotonic() < deadline:
            now = os.path.getsize(self.path)
            if now == size:
                break
            size = now
            time.sleep(1)
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        out = self.job.stop()
        summary = " / ".join(line.strip() for line in out.splitlines()
                             if "packets" in line)
        return pcap_frame_lengths(self.path), summary


def pcap_frame_lengths(path):
    """Original (wire) lengths of the frames in a pcap file.

    A record cut short at the end (tcpdump killed) ends the list.
    """
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        end = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        end = ">"
    else:
        raise AssertionError(f"{path}: not a pcap file")
    lengths = []
    off = 24
    while off + 16 <= len(data):
        _, _, incl, orig = struct.unpack(end + "IIII", data[off:off + 16])
        off += 16 + incl
        if off > len(data):
            break
        lengths.append(orig)
    return lengths
