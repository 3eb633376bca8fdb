#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""vx3 benchmarks against the in-tree vmxnet3 driver, in one QEMU/TCG guest.

    bench.py [--reps 3] [--seconds 20] [--parallel 32]
             [--exp rx,tx,fwd,xdp,xsk]
             [--pin none|vcpu|split] [--patched auto|yes|no] [--smoke]
             [--profile] [--outdir DIR]

Experiment "rx" (the build_skb patch): iperf 2 from the peer namespace to
`iperf -s` in the guest, cells device aggregation (`ethtool -K DEV lro`)
{off, on} x {vx3 copy path (rx-copybreak 16383), vx3 build_skb path
(rx-copybreak 0), vmxnet3}, with -P PARALLEL and -P 1. Experiment "tx":
guest to peer, vx3 vs vmxnet3. Every TCP cell also reports the sender's
retransmissions and the goodput over the window, and the cost per GB of
goodput beside the cost per GB on the tap.
Experiment "fwd" (the no-recycling patch): the guest routes 64-byte UDP
frames from trafgen in peer 1 to peer 2.
Experiment "xdp": the same frames met by a native XDP program on the
guest's NIC 1, vx3 vs vmxnet3: XDP_DROP (xdp_drop_all), XDP_TX back to
peer 1 (xdp_tx_all) and XDP_REDIRECT through a devmap to NIC 2 and peer 2
(xdp_redirect_all), beside the stack forwarding of "fwd" (run in the same
repetitions when both are selected).
Experiment "xsk": AF_XDP sockets (vx3-xsk's bench mode) on queue 0 of
the guest's NIC 1: rxdrop (trafgen's frames into the socket and straight
back to its fill ring), txonly (frames from the socket to peer 1) and
l2fwd (trafgen's frames back out to peer 1, MACs swapped), on vx3 in
zero-copy and copy mode and on vmxnet3 in copy mode (its only one), with
64- and 1518-byte frames (--xsk-sizes).
Experiment "rss" (not in the default set): multi-flow receive, iperf -P
PARALLEL from the peer with LRO on, on the rig's QEMU whose vmxnet3
model does RSS (scripts/vx3-qemu.sh; the whole run boots it): vx3 with
1, 2, 4, 8 combined channels (ethtool -L, up to what ethtool -l
offers) against vmxnet3, whose RX queue count is fixed by the vCPUs
(run once per --smp). Beside the cost per GB it reports how the
load splits: interrupts per queue vector, CPU time per vCPU thread,
the guest's %soft per CPU.
A fourth driver, "vmxnet3 patched" (the in-tree driver with the series of
scripts/vmxnet3-series/, make vmxnet3-patched, or $VX3_VMXNET3_PATCHED_KO),
gets a cell beside every vmxnet3 cell when its module exists (--patched).

Cells are interleaved within each repetition (order reversed every other
repetition); drivers are switched by rmmod/modprobe (insmod for the
patched vmxnet3) in one boot. Costs are measured from the host: QEMU's
vCPU thread CPU time per GB (of tap bytes and of TCP goodput) or per
million packets. Nothing here asserts a number. See README in this
directory.
"""

import argparse
import datetime
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
VX3_TESTS = os.path.dirname(HERE)
ROOT = os.path.abspath(os.path.join(VX3_TESTS, "../../../../../.."))
sys.path.insert(0, VX3_TESTS)
sys.path.insert(0, HERE)

from lib import devside  # noqa: E402
from lib import vm as vmlib  # noqa: E402
import measure  # noqa: E402
import report  # noqa: E402

VX3_KO = os.path.join(ROOT, "drivers/net/ethernet/vmware/vx3/vx3.ko")
# The in-tree vmxnet3 with the series of scripts/vmxnet3-series/ applied
# (make vmxnet3-patched), per guest kernel release; VX3_VMXNET3_PATCHED_KO
# names another file. Optional (--patched): when present it is the driver
# "vmxnet3p" of the fourth row, "vmxnet3 patched". Its module and PCI
# driver are still called vmxnet3: it goes into the initramfs as a plain
# file, outside the module tree, so that `modprobe vmxnet3` still loads
# the kernel's, and use() insmods it by path.
PATCHED_KO = os.path.join(ROOT, "build/vmxnet3-patched/{kver}/vmxnet3.ko")
PATCHED_GUEST = "/usr/lib/vx3/vmxnet3-patched.ko"
PATCHED_LABEL = "vmxnet3 patched"
# Driver key -> the driver name sysfs shows for a bound NIC, and its label
DRV_SYSFS = {"vx3": "vx3", "vmxnet3": "vmxnet3", "vmxnet3p": "vmxnet3"}
DRV_LABELS = {"vx3": "vx3", "vmxnet3": "vmxnet3", "vmxnet3p": PATCHED_LABEL}

# The test variant boots with slub_debug, KFENCE and page poisoning; the
# benchmark boots without any debugging option.
vmlib.VARIANTS.setdefault("bench", {"append": "", "qemu": []})

# Receive paths: name -> (driver, label).
RX_PATHS = {
    "copy": ("vx3", "vx3 copy"),
    "bskb": ("vx3", "vx3 build_skb"),
    "vmxnet3": ("vmxnet3", "vmxnet3"),
    "vmxnet3p": ("vmxnet3p", PATCHED_LABEL),
}
COPYBREAK_MAX = 16383
COPYBREAK_DEFAULT = 256
# Forwarding cells: vx3 with its default rx-copybreak (64-byte frames are
# copied), vx3 with build_skb for every frame, vmxnet3.
FWD_PATHS = {
    "vx3": ("vx3", "vx3 (copybreak 256)"),
    "bskb": ("vx3", "vx3 build_skb"),
    "vmxnet3": ("vmxnet3", "vmxnet3"),
    "vmxnet3p": ("vmxnet3p", PATCHED_LABEL),
}
# Multi-flow receive on the RSS model: drivers and vx3's channel counts
RSS_DRIVERS = ("vx3", "vmxnet3")
RSS_QUEUES = (1, 2, 4, 8)
TX_PATHS = {"vx3": ("vx3", "vx3"), "vmxnet3": ("vmxnet3", "vmxnet3"),
            "vmxnet3p": ("vmxnet3p", PATCHED_LABEL)}
FWD_DST = "198.18.2.3"	# behind peer 2; peer 2 does not forward: dropped
# XDP cells: driver x action; action -> (program of vx3_xdp.bpf.c, label).
XDP_DRIVERS = ("vx3", "vmxnet3")
XDP_ACTS = {
    "drop": ("xdp_drop_all", "XDP_DROP"),
    "tx": ("xdp_tx_all", "XDP_TX"),
    "redirect": ("xdp_redirect_all", "XDP_REDIRECT"),
}
# Source address of the XDP cells' frames: not peer 1's own, so that the
# frames xdp_tx_all reflects (addresses swapped: to XDP_SRC) are dropped
# by peer 1's IP input as not local, as peer 2 drops the forwarded and
# redirected ones (to FWD_DST), instead of going up to its UDP layer.
XDP_SRC = "198.18.1.3"
XDP_OBJ = "/usr/lib/vx3/vx3_xdp.bpf.o"
XDP_PROGS = "/sys/fs/bpf/vx3"
XDP_MAPS = "/sys/fs/bpf/vx3m"
# vx3_cnt: the programs' own counters (key 0 packets, 1 bytes), read in
# the guest's snapshot `cat` (a pinned map with BTF reads as "key: value")
XDP_CNT = XDP_MAPS + "/vx3_cnt"
# AF_XDP cells: cell -> (driver, bind mode of vx3-xsk, label); actions of
# vx3-xsk's bench mode. The socket counts what it handled into vx3_cnt's
# key 3 (read as xsk_packets).
XSK_CELLS = {
    "vx3-zc": ("vx3", "zc", "vx3 zero-copy"),
    "vx3-copy": ("vx3", "copy", "vx3 copy"),
    "vmxnet3-copy": ("vmxnet3", "copy", "vmxnet3 copy"),
    "vmxnet3p-copy": ("vmxnet3p", "copy", PATCHED_LABEL + " copy"),
}
XSK_ACTS = ("rxdrop", "txonly", "l2fwd")
IPERF_PORT = 5001


def log(msg):
    print(f"# {msg}", flush=True)


def trafgen_cfg(dst_mac, src_mac, src_ip, dst_ip, size=64):
    """trafgen packet: Ethernet/IPv4/UDP frame of size bytes with the FCS
    (size - 4 without it)."""
    def b(mac):
        return ", ".join(f"0x{x}" for x in mac.split(":"))

    def ip(a):
        return ", ".join(a.split("."))
    return ("{\n"
            f"  {b(dst_mac)},\n  {b(src_mac)},\n  c16(0x0800),\n"
            f"  0x45, 0x00, c16({size - 18}), c16(0), c16(0x4000), 64, 17,"
            " csumip(14, 33),\n"
            f"  {ip(src_ip)},\n  {ip(dst_ip)},\n"
            f"  c16(9), c16(9), c16({size - 38}), c16(0),\n"
            f"  fill(0x00, {size - 46}),\n}}\n")


def drv_deltas(row, d0, d1):
    """The drivers' own counters (xdp_drv_stats()) over a whole cell, ramp
    included, as row keys drv_<name>."""
    for k, v in d1.items():
        row["drv_" + k] = v - d0.get(k, 0)


class GuestCmd(threading.Thread):
    """A guest command run in the background through vm.run()."""

    def __init__(self, vm, cmd, timeout):
        super().__init__(daemon=True)
        self.vm, self.cmd, self.timeout = vm, cmd, timeout
        self.rc, self.out, self.err = None, "", None

    def run(self):
        try:
            self.rc, self.out = self.vm.run(self.cmd, timeout=self.timeout)
        except vmlib.VMError as e:
            self.err = e

    def result(self):
        self.join(self.timeout + 30)
        if self.err is not None:
            raise self.err
        return self.out


class Bench:
    """One guest, the current driver binding and the windows measured."""

    def __init__(self, args, outdir):
        self.args = args
        self.outdir = outdir
        self.vm = None
        self.drv = None
        self.ifn = {}
        self.rows = []
        self.notes = []
        self.pin_gen = []
        self.fwd_ready = False
        # XDP: programs loaded (once per boot), the program attached to
        # NIC 1, the devmap and MACs set for this driver load
        self.xdp_loaded = False
        self.xdp_prog = None
        self.xdp_redir_ready = False
        # vx3's name for the device's aggregation: "lro" (NETIF_F_LRO);
        # older vx3 builds offered it as "rx-gro-hw" (found in use())
        self.vx3_agg = "lro"
        self.ncpu = os.cpu_count()
        # The fourth row: the patched vmxnet3 (--patched, main())
        self.patched = bool(args.patched_ko)
        # Rows of --count (count_xdp())
        self.counts = []

    # --- VM and driver ---------------------------------------------------
    def boot(self, initrd, kv):
        a = self.args
        self.vm = vmlib.VM(kv, initrd, nics=2, variant="bench",
                           logdir=os.path.join(self.outdir, "vm"),
                           smp=a.smp, mem=a.mem, accel=vmlib.TCG_BENCH,
                           qemu=(vmlib.qemu_patched() if "rss" in a.exp
                                 else None))
        self.vm.start()
        log(f"guest up in {self.vm.boot_time:.1f}s (runid {self.vm.runid})")
        self.pin()
        # Forwarding stays off outside the forwarding experiment: turning
        # it on makes the stack disable NETIF_F_LRO (the device's
        # aggregation in both drivers).
        self.fwd_off()
        # One receive server for the whole run; it outlives driver reloads.
        # The guest's iperf runs at nice 19 (here and for transmit): the
        # agent's commands, mpstat and the snapshots must not queue behind
        # 32 busy iperf threads. Softirq work is not affected by nice.
        self.vm.bg(f"renice -n 19 -p $$ >/dev/null; "
                   f"exec iperf -s -p {IPERF_PORT}")
        self.wait_listen("guest")

    def pin(self):
        """Apply --pin to QEMU's threads; remember the generator's CPUs."""
        mode, vm, last = self.args.pin, self.vm, self.ncpu - 1
        if mode == "none":
            return
        for task in os.listdir(f"/proc/{vm.proc.pid}/task"):
            try:
                with open(f"/proc/{vm.proc.pid}/task/{task}/comm") as f:
                    name = f.read().strip()
            except OSError:
                continue
            if measure.is_vcpu(name):
                n = int(name.split()[1].split("/")[0])
                cpu = last if mode == "split" else n % self.ncpu
            elif mode == "split":
                cpu = 0
            else:
                continue
            os.sched_setaffinity(int(task), {cpu})
        if mode == "split":
            self.pin_gen = ["taskset", "-c", "0"]

    def affinity(self):
        """Thread name -> allowed host CPUs, for the record."""
        res = {}
        pid = self.vm.proc.pid
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/comm") as f:
                    name = f.read().strip()
                cpus = os.sched_getaffinity(int(task))
            except OSError:
                continue
            res[name] = ",".join(map(str, sorted(cpus)))
        return res

    def use(self, drv):
        """Bind both NICs to drv (rmmod/modprobe), configure, wait for link.

        One guest command (each takes long on a busy TCG guest): load the
        driver, find the interfaces by MAC, check their driver, add the
        addresses, bring them up and ping both peers. drv "vmxnet3p" is
        the patched vmxnet3, insmod from PATCHED_GUEST; sysfs calls its
        driver "vmxnet3".
        """
        if self.drv == drv:
            return self.ifn
        vm = self.vm
        t0 = time.monotonic()
        self.drv = None
        self.fwd_ready = False
        # rmmod takes the program and the devmap's device with it
        self.xdp_prog = None
        self.xdp_redir_ready = False
        load = (f"insmod {PATCHED_GUEST}" if drv == "vmxnet3p" else
                f"modprobe {drv}")
        script = ("rmmod vx3 2>/dev/null; rmmod vmxnet3 2>/dev/null; "
                  f"{load} || exit 1\n")
        for n in (1, 2):
            script += (
                "i=; for t in $(seq 100); do "
                "for a in /sys/class/net/*/address; do "
                f"grep -q {vm.mac(n)} $a && i=${{a%/address}} && "
                "i=${i##*/}; done; [ -n \"$i\" ] && break; sleep 0.1; done\n"
                f"[ -n \"$i\" ] || {{ echo no NIC {n}; exit 1; }}\n"
                f"echo if{n} $i "
                "$(basename $(readlink /sys/class/net/$i/device/driver))\n"
                # LRO [fixed] (not offered): an older vx3 with rx-gro-hw
                f"echo lrofixed{n} $(ethtool -k $i | "
                "grep -c '^large-receive-offload: .*fixed')\n"
                + (f"ethtool -G $i rx {self.args.rx_ring} || exit 1\n"
                   if self.args.rx_ring else "") +
                f"ip addr add {vm.guest_ip4(n)}/24 dev $i && "
                f"ip -6 addr add {vm.guest_ip6(n)}/64 dev $i nodad && "
                "ip link set $i up || exit 1\n")
        for n in (1, 2):
            script += (f"for t in $(seq 60); do ping -c1 -W1 {vm.peer_ip4(n)}"
                       f" >/dev/null && break; done\n"
                       f"ping -c1 -W1 {vm.peer_ip4(n)} >/dev/null || "
                       f"{{ echo no ping to {vm.peer_ip4(n)}; exit 1; }}\n")
        out = vm.check(script, timeout=180)
        ifn = {}
        for line in out.splitlines():
            f = line.split()
            if drv == "vx3" and f[:2] == ["lrofixed1", "1"]:
                self.vx3_agg = "rx-gro-hw"
            elif drv == "vx3" and f[:2] == ["lrofixed1", "0"]:
                self.vx3_agg = "lro"
            if len(f) == 3 and f[0] in ("if1", "if2"):
                if f[2] != DRV_SYSFS[drv]:
                    raise vmlib.VMError(f"{f[1]} is bound to {f[2]}, "
                                        f"not {DRV_SYSFS[drv]}")
                ifn[int(f[0][2])] = f[1]
        if len(ifn) != 2:
            raise vmlib.VMError(f"{drv}: interfaces not found:\n{out}")
        self.ifn = ifn
        self.drv = drv
        log(f"{drv} loaded, {ifn[1]}/{ifn[2]} up in "
            f"{time.monotonic() - t0:.1f}s")
        return ifn

    def setup(self, settings):
        """Apply ethtool settings and check that they took.

        settings: [(ethtool arguments, ethtool arguments that show the
        result, line expected in what they show)]. One guest command: on a
        busy TCG guest every command takes a while.
        """
        sets = " && ".join(f"ethtool {a}" for a, _, _ in settings)
        show = "; ".join(f"ethtool {v}" for _, v, _ in settings)
        out = self.vm.check(f"{sets} && {{ {show}; }}")
        lines = [x.strip() for x in out.splitlines()]
        for args, _, want in settings:
            if want not in lines:
                raise vmlib.VMError(f"`ethtool {args}` did not take, no "
                                    f"`{want}`:\n{out}")

    def gro(self, ifn, drv, on):
        """Setting of the device's aggregation: `ethtool -K DEV lro` for
        both drivers (rx-gro-hw for a vx3 that offers it under that
        name)."""
        feat, name = (("rx-gro-hw", "rx-gro-hw")
                      if drv == "vx3" and self.vx3_agg == "rx-gro-hw" else
                      ("lro", "large-receive-offload"))
        val = "on" if on else "off"
        return (f"-K {ifn} {feat} {val}", f"-k {ifn}", f"{name}: {val}")

    @staticmethod
    def copybreak(ifn, value):
        return (f"--set-tunable {ifn} rx-copybreak {value}",
                f"--get-tunable {ifn} rx-copybreak", f"rx-copybreak: {value}")

    # --- helpers -------------------------------------------------------------
    def host_bg(self, n, cmd):
        """Start cmd (list) in peer namespace n; returns the Popen."""
        full = ["ip", "netns", "exec", self.vm.netns(n)] + self.pin_gen + cmd
        logf = open(os.path.join(self.outdir, "vm", "host-bg.log"), "ab")
        logf.write(f"$ {shlex.join(full)}\n".encode())
        logf.flush()
        p = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=logf,
                             stdin=subprocess.DEVNULL,
                             start_new_session=True)
        logf.close()
        return p

    @staticmethod
    def host_stop(p, sig=signal.SIGKILL, timeout=30):
        """Signal p's process group (if still running); return its stdout."""
        if p.poll() is None:
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
        return out.decode(errors="replace")

    def host_perf(self, name):
        """Start perf record on QEMU's threads (--host-profile)."""
        path = os.path.join(self.outdir, f"host-profile-{name}")
        p = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock",
                              "-F", "999", "-p", str(self.vm.proc.pid),
                              "-o", path + ".data"],
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL,
                             start_new_session=True)
        return p, path

    def host_perf_report(self, perf):
        """Stop perf record; write the shares per QEMU thread, per thread
        and object, and per symbol."""
        p, path = perf
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        with open(path + ".txt", "w") as f:
            # Guest code translated by TCG shows as the object "[JIT]"
            for sort in ("comm", "comm,dso", "comm,dso,sym"):
                rep = subprocess.run(["perf", "report", "-i",
                                      path + ".data", "--stdio", "-q",
                                      "--sort", sort, "--percent-limit",
                                      "0.5"],
                                     capture_output=True, text=True)
                f.write(f"# --sort {sort}\n{rep.stdout}\n")
        os.unlink(path + ".data")

    def wait_listen(self, where, port=IPERF_PORT):
        """Wait until a TCP listener on port exists (guest or peer 1)."""
        hexport = f":{port:04X} "
        cmd = f"grep -q '{hexport}00000000:0000 0A' /proc/net/tcp"
        for _ in range(100):
            if where == "guest":
                rc, _out = self.vm.run(cmd, timeout=10)
            else:
                rc, _out = self.vm.peer(1, cmd, timeout=10)
            if rc == 0:
                return
            time.sleep(0.1)
        raise vmlib.VMError(f"no iperf listener in {where}")

    def wait_flow(self, d, proc, timeout=60):
        """Wait until peer 1's tap carries traffic in direction d ("tx":
        towards the guest, "rx": from it), then for the ramp-up time."""
        def count():
            st = measure.tap_stats(self.vm, 1)[d]
            return st["packets"] + st["dropped"]
        c0 = count()
        deadline = time.monotonic() + timeout
        while count() - c0 < 1000:
            if time.monotonic() > deadline:
                raise vmlib.VMError(f"no traffic on the tap after {timeout}s")
            if isinstance(proc, subprocess.Popen) and proc.poll() is not None:
                raise vmlib.VMError(f"load generator exited early "
                                    f"(rc={proc.returncode}), see "
                                    "vm/host-bg.log")
            time.sleep(0.2)
        time.sleep(self.args.ramp)

    def measure(self, sampler, secs, guest_cmd=None):
        """Snapshots a and b secs apart; guest_cmd runs in between."""
        a = sampler.snap()
        half = time.monotonic() - a["t"]
        job = None
        if guest_cmd:
            job = GuestCmd(self.vm, guest_cmd, secs + 60)
            job.start()
        # b's host midpoint should come secs after a's.
        left = a["t"] + secs - half - time.monotonic()
        if left > 0:
            time.sleep(left)
        b = sampler.snap()
        out = job.result() if job else ""
        return a, b, out

    def base_row(self, exp, cell, label, rep, **kw):
        row = {"exp": exp, "cell": cell, "label": label, "rep": rep,
               "driver": self.drv,
               "time": datetime.datetime.now().strftime("%H:%M:%S")}
        row.update(kw)
        return row

    def add_mpstat(self, row, out):
        line, cols = measure.parse_mpstat(out)
        row["mpstat"] = line or ""
        for k in report.MPSTAT_COLS:
            row["mp_" + k] = cols.get("%" + k)
        busy = 100.0 - cols["%idle"] if cols else 0.0
        row["soft_share"] = cols["%soft"] / busy if busy > 0 else None

    def finish(self, row, t0):
        """Flag a busy host, note the cell's total time, keep the row."""
        row["busy"] = int(row["other_cores"] > self.args.busy_threshold)
        row["cell_s"] = time.monotonic() - t0
        self.rows.append(row)

    def rx_config(self, path, gro):
        """Load the driver of receive path `path`, set LRO; guest ifname."""
        drv = RX_PATHS[path][0]
        ifn = self.use(drv)[1]
        self.xdp_attach(ifn, None)
        sets = [self.gro(ifn, drv, gro)]
        if drv == "vx3":
            sets.append(self.copybreak(ifn, COPYBREAK_MAX if path == "copy"
                                       else 0))
        self.setup(sets)
        return ifn

    def fwd_config(self, path):
        """Load the driver of forwarding cell `path`, enable forwarding.

        Forwarding on, and a permanent neighbour for FWD_DST via NIC 2 (it
        goes when the driver is reloaded).
        """
        drv, vm = FWD_PATHS[path][0], self.vm
        ifn = self.use(drv)
        self.xdp_attach(ifn[1], None)
        if not self.fwd_ready:
            tap2 = measure.tap_info(vm, 2)["address"]
            vm.check("echo 1 > /proc/sys/net/ipv4/ip_forward && "
                     f"ip neigh replace {FWD_DST} lladdr {tap2} "
                     f"dev {ifn[2]} nud permanent")
            self.fwd_ready = True
        if drv == "vx3":
            self.setup([self.copybreak(
                ifn[1], 0 if path == "bskb" else COPYBREAK_DEFAULT)])
        return ifn

    def fwd_off(self):
        self.vm.check("echo 0 > /proc/sys/net/ipv4/ip_forward")
        self.fwd_ready = False

    def trafgen(self, secs, src_ip=None, name="fwd64", size=64):
        """Start trafgen in peer 1: frames of size bytes (64 by default)
        to FWD_DST via the guest, from src_ip (default: peer 1's address);
        config vm/<name>.trafgen.

        Bounded: at most 5 Mpps over the whole run, and stopped after the
        window anyway.
        """
        a_, vm = self.args, self.vm
        cfg = os.path.join(self.outdir, "vm", f"{name}.trafgen")
        src_mac = measure.tap_info(vm, 1)["address"]
        with open(cfg, "w") as f:
            f.write(trafgen_cfg(vm.mac(1), src_mac, src_ip or vm.peer_ip4(1),
                                FWD_DST, size))
        count = int(5e6 * (a_.ramp + secs + 2))
        rate = ["-b", f"{a_.fwd_rate}pps"] if a_.fwd_rate else []
        return self.host_bg(1, ["trafgen", "-o", vm.tap(1), "-i", cfg,
                                "-P", "1", "-n", str(count),
                                "--no-sock-mem", "--notouch-irq"] + rate)

    # --- XDP -------------------------------------------------------------------
    def xdp_load(self):
        """Load vx3_xdp.bpf.o (built into the initramfs) and pin its programs
        and maps in the guest's bpffs, once per boot: they outlive driver
        reloads, and every program counts into the one map vx3_cnt."""
        if self.xdp_loaded:
            return
        self.vm.check("grep -q ' /sys/fs/bpf bpf ' /proc/mounts || "
                      "mount -t bpf bpf /sys/fs/bpf; "
                      f"[ -e {XDP_PROGS}/xdp_drop_all ] || bpftool prog "
                      f"loadall {XDP_OBJ} {XDP_PROGS} pinmaps {XDP_MAPS} && "
                      f"cat {XDP_CNT} >/dev/null", timeout=120)
        self.xdp_loaded = True

    def xdp_attach(self, ifn, prog):
        """Attach pinned program prog to guest interface ifn in driver mode
        (replacing one attached), or detach with prog None; nothing to do
        if that program is attached already."""
        if prog == self.xdp_prog:
            return
        if prog is None:
            self.vm.check(f"ip link set dev {ifn} xdpdrv off")
            self.xdp_prog = None
            return
        self.xdp_load()
        out = self.vm.check(f"ip -force link set dev {ifn} xdpdrv pinned "
                            f"{XDP_PROGS}/{prog} && ip link show dev {ifn}",
                            timeout=120)
        # "N: IF: <...> mtu M xdp ...", after any warning of the driver's
        if not re.search(rf"^\d+: {re.escape(ifn)}:.* xdp ", out, re.M):
            raise vmlib.VMError(f"{prog} not attached in driver mode to "
                                f"{ifn}:\n{out}")
        self.xdp_prog = prog

    def xdp_redirect_cfg(self, ifn):
        """xdp_redirect_all's target: devmap vx3_ports key 0 = NIC 2 (its
        ifindex changes with every driver load), vx3_cfg key 0 = the MAC
        of peer 2's tap (destination), key 1 = NIC 2's (source)."""
        if self.xdp_redir_ready:
            return
        vm = self.vm
        self.xdp_load()

        def mac8(m):
            return "hex " + " ".join(m.split(":")) + " 00 00"
        tap2 = measure.tap_info(vm, 2)["address"]
        m = XDP_MAPS
        vm.check(f"i=$(cat /sys/class/net/{ifn[2]}/ifindex) && "
                 f"bpftool map update pinned {m}/vx3_ports key 0 0 0 0 "
                 "value $((i & 255)) $((i >> 8 & 255)) $((i >> 16 & 255)) "
                 "$((i >> 24 & 255)) && "
                 f"bpftool map update pinned {m}/vx3_cfg key 0 0 0 0 value "
                 f"{mac8(tap2)} && "
                 f"bpftool map update pinned {m}/vx3_cfg key 1 0 0 0 value "
                 f"{mac8(vm.mac(2))}")
        self.xdp_redir_ready = True

    def xdp_config(self, drv, act):
        """Load drv, attach the program of XDP action act to NIC 1."""
        ifn = self.use(drv)
        if act == "redirect":
            self.xdp_redirect_cfg(ifn)
        self.xdp_attach(ifn[1], XDP_ACTS[act][0])
        return ifn

    def xdp_drv_stats(self, ifn):
        """The drivers' own XDP counters of both NICs (diagnostics only:
        the two drivers count differently), summed over their queues."""
        out = self.vm.check(f"ethtool -S {ifn[1]}; echo ===; "
                            f"ethtool -S {ifn[2]}")
        res = {}
        for n, part in enumerate(out.split("===\n"), 1):
            for k, v in measure.xdp_driver_stats(part).items():
                res[f"nic{n}_{k}"] = v
        return res

    # --- experiment 4: XDP ---------------------------------------------------
    def xdp_cell(self, drv, act, secs, rep):
        """One window of 64-byte frames from trafgen in peer 1 with the
        action's program on NIC 1. What it did: drop, the program's own
        count (vx3_cnt, read in the guest's snapshot); tx, the frames back
        at peer 1's tap; redirect, the frames at peer 2's tap."""
        a_, vm = self.args, self.vm
        t0 = time.monotonic()
        label = f"{DRV_LABELS[drv]} {XDP_ACTS[act][1]}"
        ifn = self.xdp_config(drv, act)
        d0 = self.xdp_drv_stats(ifn)
        gen = self.trafgen(secs, XDP_SRC, "xdp64")
        sampler = measure.Sampler(vm, [ifn[1], ifn[2]], taps=(1, 2),
                                  files=[XDP_CNT])
        sampler.gen_pids = [gen.pid]
        perf = None
        try:
            self.wait_flow("tx", gen)
            if a_.host_profile:
                perf = self.host_perf(f"{drv}-{act}-r{rep}")
            a, b, mp = self.measure(sampler, secs, f"mpstat 1 {secs}")
        finally:
            if perf:
                self.host_perf_report(perf)
            gout = self.host_stop(gen, signal.SIGINT)
        d1 = self.xdp_drv_stats(ifn)
        row = self.base_row("xdp", drv, label, rep, par=1, xdp_act=act,
                            prog=XDP_ACTS[act][0])
        row.update(measure.window(a, b, a_.smp, [ifn[1], ifn[2]]))
        self.add_mpstat(row, mp)
        w, gw = row["wall_s"], row["guest_wall_s"]
        offered = row["tap1_tx_packets"] + row["tap1_tx_dropped"]
        prog = row.get("prog_packets", 0)
        row["offered_pps"] = offered / w
        row["to_qemu_pps"] = row["tap1_tx_packets"] / w
        row["prog_pps"] = prog / gw if gw > 0 else None
        row["guest_rx_pps"] = row["g_rx_packets"] / gw if gw > 0 else None
        if act == "drop":
            # The program's count is over the guest's clock: scaled to the
            # host window the vCPU times are measured over
            done = prog * w / gw if gw > 0 else 0
        elif act == "tx":
            done = row["tap1_rx_packets"]
        else:
            done = row["tap2_rx_packets"]
        row["xdp_packets"] = done
        row["xdp_pps"] = done / w
        row["xdp_pct"] = 100.0 * done / offered if offered else None
        self.per_unit(row, done / 1e6, "mpkt")
        # Per frame the program ran on (done or not: a full TX ring drops
        # frames after the verdict), its count scaled to the host window
        mprog = prog * w / gw / 1e6 if gw > 0 else 0
        row["vcpu_s_per_mprog"] = row["vcpu_s"] / mprog if mprog else None
        row["trafgen_ok"] = int("packets outgoing" in gout)
        drv_deltas(row, d0, d1)
        self.finish(row, t0)
        if not prog:
            self.notes.append(f"xdp {label} rep {rep}: the program counted "
                              "no packet in the window")
        drvc = ", ".join(f"{k[4:]} +{v}" for k, v in sorted(row.items())
                         if k.startswith("drv_") and v and
                         not k.endswith("bytes"))
        log(f"xdp {label:20} rep {rep}: offered {row['offered_pps']:.0f} pps,"
            f" program {fmt(row['prog_pps'], 0)} pps, done "
            f"{row['xdp_pps']:.0f} pps ({fmt(row['xdp_pct'])} %), "
            f"{fmt(row.get('vcpu_s_per_mpkt'))} vCPU-s/Mpkt"
            f"{' (host busy)' if row['busy'] else ''}; cell: {drvc}")

    # --- experiment 6: AF_XDP ------------------------------------------------
    def xsk_cell(self, cell, act, size, secs, rep):
        """One window of an AF_XDP socket on NIC 1's queue 0 (vx3-xsk
        bench), frames of size bytes (with the FCS), started before the
        traffic and stopped (SIGINT) after the window. Done: rxdrop, the
        frames the socket received (its count, read in the guest's
        snapshot); txonly and l2fwd, the frames at peer 1's tap."""
        a_, vm = self.args, self.vm
        t0 = time.monotonic()
        drv, mode, label = XSK_CELLS[cell]
        label = f"{label} {act} {size} B"
        ifn = self.use(drv)
        self.xdp_attach(ifn[1], None)
        # A zero-copy bind needs LRO off (vx3 refuses it otherwise); off
        # in every cell, as a program turns it off in both drivers anyway
        self.setup([self.gro(ifn[1], drv, False)])
        # The socket counts into the pinned vx3_cnt
        self.xdp_load()
        d0 = self.xdp_drv_stats(ifn)
        dur = int(a_.ramp + secs + 120)
        cmd = f"vx3-xsk bench {ifn[1]} 0 {mode} {act} {dur}"
        if act == "txonly":
            tap1 = measure.tap_info(vm, 1)["address"]
            cmd += f" {size - 4} {tap1} {vm.guest_ip4(1)} {FWD_DST}"
        vm.check("rm -f /tmp/xsk.out /tmp/xsk.pid")
        job = GuestCmd(vm, f"VX3_XSK_CNT={XDP_CNT} {cmd} >/tmp/xsk.out "
                       "2>&1 & echo $! >/tmp/xsk.pid; wait $!; rc=$?; "
                       "cat /tmp/xsk.out; exit $rc", dur + 60)
        job.start()
        gen, gout = None, ""
        try:
            vm.check("for i in $(seq 600); do grep -qx ready /tmp/xsk.out "
                     "2>/dev/null && exit 0; [ -s /tmp/xsk.pid ] && ! kill "
                     "-0 $(cat /tmp/xsk.pid) 2>/dev/null && break; sleep "
                     "0.1; done; cat /tmp/xsk.out; exit 1", timeout=120)
            if act != "txonly":
                gen = self.trafgen(secs, XDP_SRC, f"xsk{size}", size)
            sampler = measure.Sampler(vm, [ifn[1], ifn[2]], taps=(1, 2),
                                      files=[XDP_CNT])
            sampler.gen_pids = [gen.pid] if gen else []
            self.wait_flow("rx" if act == "txonly" else "tx", gen)
            a, b, mp = self.measure(sampler, secs, f"mpstat 1 {secs}")
        finally:
            if gen:
                gout = self.host_stop(gen, signal.SIGINT)
            vm.run("kill -INT $(cat /tmp/xsk.pid)", timeout=30)
            out = job.result()
        res = measure.last_json(out)
        if res is None or res.get("act") != act:
            raise vmlib.VMError(f"vx3-xsk {act} ended without its "
                                f"result:\n{out}")
        if res["zc"] != (mode == "zc"):
            raise vmlib.VMError(f"{label}: the socket bound with zc "
                                f"{res['zc']}")
        d1 = self.xdp_drv_stats(ifn)
        row = self.base_row("xsk", cell, label, rep, par=1, xsk_act=act,
                            xsk_mode=mode, size=size)
        row.update(measure.window(a, b, a_.smp, [ifn[1], ifn[2]]))
        self.add_mpstat(row, mp)
        w, gw = row["wall_s"], row["guest_wall_s"]
        if act != "txonly":
            offered = row["tap1_tx_packets"] + row["tap1_tx_dropped"]
            row["offered_pps"] = offered / w
            row["to_qemu_pps"] = row["tap1_tx_packets"] / w
            prog = row.get("prog_packets", 0)
            row["prog_pps"] = prog / gw if gw > 0 else None
        if act == "rxdrop":
            # The socket's count is over the guest's clock
            sock = row.get("xsk_packets", 0)
            done = sock * w / gw if gw > 0 else 0
        else:
            done = row["tap1_rx_packets"]
        row["xsk_packets_done"] = done
        row["xsk_pps"] = done / w
        self.per_unit(row, done / 1e6, "mpkt")
        # The socket's own statistics over the whole cell
        for k, v in res.items():
            if k not in ("act", "zc"):
                row["sock_" + k] = v
        row["trafgen_ok"] = int(gen is None or "packets outgoing" in gout)
        drv_deltas(row, d0, d1)
        self.finish(row, t0)
        if not done:
            self.notes.append(f"xsk {label} rep {rep}: no frame done in "
                              "the window")
        sockc = ", ".join(f"{k[5:]} {v}" for k, v in sorted(row.items())
                          if k.startswith("sock_") and v and k != "sock_done")
        log(f"xsk {label:26} rep {rep}: "
            + (f"offered {row['offered_pps']:.0f} pps, "
               if "offered_pps" in row else "")
            + f"done {row['xsk_pps']:.0f} pps, "
            f"{fmt(row.get('vcpu_s_per_mpkt'))} vCPU-s/Mpkt"
            f"{' (host busy)' if row['busy'] else ''}"
            + (f"; socket: {sockc}" if sockc else ""))

    # --- experiment 1: receive -----------------------------------------------
    def rx_cell(self, path, gro, par, secs, rep):
        a_, vm = self.args, self.vm
        label = RX_PATHS[path][1]
        t0 = time.monotonic()
        ifn = self.rx_config(path, gro)
        # iperf runs until interrupted after the window (-t is a bound).
        cli = self.host_bg(1, ["iperf", "-c", vm.guest_ip4(1), "-p",
                               str(IPERF_PORT), "-t", str(secs + 120),
                               "-P", str(par), "-y", "C"])
        sampler = measure.Sampler(vm, [ifn, self.ifn[2]], taps=(1,),
                                  ethtool=ifn, tcp_port=IPERF_PORT)
        sampler.gen_pids = [cli.pid]
        try:
            self.wait_flow("tx", cli)
            a, b, mp = self.measure(sampler, secs, f"mpstat 1 {secs}")
        finally:
            iout = self.host_stop(cli, signal.SIGINT, timeout=10)
        row = self.base_row("rx", path, label, rep, lro=int(gro), par=par)
        row.update(measure.window(a, b, a_.smp, [ifn, self.ifn[2]]))
        self.add_mpstat(row, mp)
        _, row["iperf_gbps"] = measure.iperf_rate(iout)
        self.rates(row, "tap1_tx_bytes", "g_rx_bytes")
        # The sender is peer 1; what the guest's TCP received in order is
        # what the sender saw acknowledged.
        self.tcp(row, "peer", "p_tcp_", "p_bytes_acked")
        # vx3's path counters over the window show the path taken (LRO
        # counters under their older name rx0_hw_gro_* too).
        es0, es1 = a["ethtool"], b["ethtool"]
        for k, alt in (("rx0_build_skb", None), ("rx0_copied", None),
                       ("rx0_lro_packets", "rx0_hw_gro_packets"),
                       ("rx0_lro_segs", "rx0_hw_gro_segs"),
                       ("rx0_drop_err", None)):
            src = k if k in es1 else alt
            if src in es1:
                row[k] = es1[src] - es0.get(src, 0)
        self.finish(row, t0)
        log(f"rx P{par} lro-{'on' if gro else 'off'} {label:14} rep {rep}: "
            f"{row['gbps']:.3f} Gbit/s tap, {fmt(row.get('good_gbps'), 3)} "
            f"goodput, {fmt(row.get('vcpu_s_per_gb'))} vCPU-s/GB tap, "
            f"{fmt(row.get('vcpu_s_per_gb_good'))} goodput, retrans "
            f"{fmt(row.get('retrans_pct'))} %, rwnd-limited "
            f"{fmt(row.get('rwnd_limited_pct'), 0)} %, "
            f"%soft {fmt(row['mp_soft'])}"
            f"{' (host busy)' if row['busy'] else ''}")

    def rates(self, row, tap_key, guest_key):
        """Gbit/s and cost per GB from the tap's byte counter, which is
        read on the host at the same moments as QEMU's thread CPU times;
        g_gbps from the guest's counter over the guest's clock."""
        nbytes = row[tap_key]
        row["gbps"] = nbytes * 8 / row["wall_s"] / 1e9
        row["g_gbps"] = row[guest_key] * 8 / row["guest_wall_s"] / 1e9
        self.per_unit(row, nbytes / 1e9, "gb")

    def tcp(self, row, sender, snd_pre, good_key):
        """The sender's retransmissions and the goodput over the window.

        snd_pre: prefix of the sender's /proc/net/snmp deltas (p_tcp_ for
        peer 1's namespace, g_tcp_ for the guest); good_key: the window's
        TCP payload bytes received in order (bytes_acked at the sender or
        bytes_received at the receiver, from ss in peer 1's namespace).
        Costs per GB of goodput never count a retransmitted byte twice.
        """
        row["tcp_sender"] = sender
        out = row.get(snd_pre + "out_segs")
        ret = row.get(snd_pre + "retrans_segs")
        row["snd_out_segs"] = out
        row["snd_retrans_segs"] = ret
        row["retrans_pct"] = (100.0 * ret / out if out else None) \
            if ret is not None else None
        # Retransmitted bytes: ss of the sender, only when it is peer 1
        row["snd_retrans_bytes"] = (row.get("p_bytes_retrans")
                                    if sender == "peer" else None)
        # Share of the sender's busy time the guest's receive window held
        # it back (peer 1 only): a receiver that advertises less than the
        # path holds keeps the sender from overrunning the ring.
        busy = row.get("p_busy_ms") if sender == "peer" else None
        row["rwnd_limited_pct"] = (100.0 * row["p_rwnd_limited_ms"] / busy
                                   if busy else None)
        good = row.get(good_key)
        row["good_bytes"] = good
        if good is None:
            row["good_gbps"] = None
            for k in ("vcpu_s", "io_s", "soft_s"):
                row[f"{k}_per_gb_good"] = None
            return
        row["good_gbps"] = good * 8 / row["wall_s"] / 1e9
        self.per_unit(row, good / 1e9, "gb_good")

    def per_unit(self, row, units, unit):
        for k in ("vcpu_s", "io_s"):
            row[f"{k}_per_{unit}"] = row[k] / units if units > 0 else None
        share = row.get("soft_share")
        row[f"soft_s_per_{unit}"] = (row["vcpu_s"] * share / units
                                     if units > 0 and share is not None
                                     else None)

    # --- experiment 5: multi-flow receive over RSS queues ----------------------
    def rss_queues(self):
        """vx3's channel counts to measure: RSS_QUEUES up to its maximum."""
        ifn = self.use("vx3")[1]
        out = self.vm.check(f"ethtool -l {ifn}")
        most = int(re.search(r"Combined:\s+(\d+)", out).group(1))
        return [q for q in RSS_QUEUES if q <= most]

    def nic_irqs(self, ifn):
        """Interrupts per vector of guest NIC ifn: {vector name: count}."""
        out = self.vm.check(f"grep -E ' {ifn}-' /proc/interrupts || true")
        res = {}
        for line in out.splitlines():
            f = line.split()
            res[f[-1]] = sum(int(x) for x in f[1:] if x.isdigit())
        return res

    def rss_cell(self, drv, queues, secs, rep):
        a_, vm = self.args, self.vm
        t0 = time.monotonic()
        ifn = self.use(drv)[1]
        self.xdp_attach(ifn, None)
        sets = [self.gro(ifn, drv, True)]
        if drv == "vx3":
            sets.append((f"-L {ifn} combined {queues} tx 0", f"-l {ifn}",
                         f"Combined:\t{queues}"))
        self.setup(sets)
        nq = len(vm.check(f"ls -d /sys/class/net/{ifn}/queues/rx-*")
                 .split())
        if queues and nq != queues:
            raise vmlib.VMError(f"{drv}: {nq} RX queues, not {queues}")
        label = f"{DRV_LABELS[drv]} {nq}q"
        cli = self.host_bg(1, ["iperf", "-c", vm.guest_ip4(1), "-p",
                               str(IPERF_PORT), "-t", str(secs + 120),
                               "-P", str(a_.parallel), "-y", "C"])
        sampler = measure.Sampler(vm, [ifn, self.ifn[2]], taps=(1,),
                                  tcp_port=IPERF_PORT)
        sampler.gen_pids = [cli.pid]
        try:
            self.wait_flow("tx", cli)
            irq0 = self.nic_irqs(ifn)
            a, b, mp = self.measure(sampler, secs, f"mpstat -P ALL 1 {secs}")
            irq1 = self.nic_irqs(ifn)
        finally:
            iout = self.host_stop(cli, signal.SIGINT, timeout=10)
        row = self.base_row("rss", drv, label, rep, lro=1, par=a_.parallel,
                            queues=nq)
        row.update(measure.window(a, b, a_.smp, [ifn, self.ifn[2]]))
        self.add_mpstat(row, mp)
        _, row["iperf_gbps"] = measure.iperf_rate(iout)
        self.rates(row, "tap1_tx_bytes", "g_rx_bytes")
        self.tcp(row, "peer", "p_tcp_", "p_bytes_acked")
        # How the load split: interrupts per queue vector (share of the
        # NIC's), CPU-s per vCPU thread, the guest's %soft per CPU
        irqs = {n: irq1[n] - irq0.get(n, 0) for n in irq1}
        tot = sum(irqs.values())
        row["irq_split"] = " ".join(
            f"{n.rsplit('-', 1)[-1]}:{100.0 * v / tot:.0f}%"
            for n, v in sorted(irqs.items(), key=lambda x: x[0])
            if "rx" in n) if tot else ""
        row["vcpu_split"] = " ".join(
            f"{n.split()[1].split('/')[0]}:{b['thr'][n] - a['thr'].get(n, 0):.1f}"
            for n in sorted(b["thr"]) if measure.is_vcpu(n))
        row["soft_split"] = " ".join(
            f"{c}:{v:.0f}" for c, v in measure.parse_mpstat_cpus(mp, "%soft"))
        self.finish(row, t0)
        log(f"rss {label:12} rep {rep}: {fmt(row.get('good_gbps'), 3)} "
            f"Gbit/s goodput, {fmt(row.get('vcpu_s_per_gb_good'))} "
            f"vCPU-s/GB, retrans {fmt(row.get('retrans_pct'))} %, IRQs "
            f"{row['irq_split']}, vCPU-s {row['vcpu_split']}, %soft "
            f"{row['soft_split']}{' (host busy)' if row['busy'] else ''}")

    # --- experiment 3: transmit ----------------------------------------------
    def tx_cell(self, path, par, secs, rep):
        a_, vm = self.args, self.vm
        t0 = time.monotonic()
        drv, label = TX_PATHS[path]
        ifn = self.use(drv)[1]
        self.xdp_attach(ifn, None)
        # The drivers' defaults (the receive cells changed them).
        sets = [self.gro(ifn, drv, True)]
        if drv == "vx3":
            sets.append(self.copybreak(ifn, COPYBREAK_DEFAULT))
        self.setup(sets)
        srv = self.host_bg(1, ["iperf", "-s", "-p", str(IPERF_PORT)])
        sampler = measure.Sampler(vm, [ifn, self.ifn[2]], taps=(1,),
                                  tcp_port=IPERF_PORT)
        sampler.gen_pids = [srv.pid]
        try:
            self.wait_listen("peer")
            # Runs until interrupted after the window (-t is a bound).
            cli = GuestCmd(vm, "renice -n 19 -p $$ >/dev/null; "
                           f"iperf -c {vm.peer_ip4(1)} -p {IPERF_PORT} "
                           f"-t {secs + 120} -P {par} -y C & "
                           "echo $! > /tmp/iperf-tx.pid; wait $!", secs + 180)
            cli.start()
            self.wait_flow("rx", srv)
            a, b, mp = self.measure(sampler, secs, f"mpstat 1 {secs}")
            vm.run("kill -INT $(cat /tmp/iperf-tx.pid)", timeout=30)
            iout = cli.result()
        finally:
            self.host_stop(srv)
        row = self.base_row("tx", path, label, rep, par=par)
        row.update(measure.window(a, b, a_.smp, [ifn, self.ifn[2]]))
        self.add_mpstat(row, mp)
        _, row["iperf_gbps"] = measure.iperf_rate(iout)
        self.rates(row, "tap1_rx_bytes", "g_tx_bytes")
        # The sender is the guest; peer 1's iperf server is the receiver.
        self.tcp(row, "guest", "g_tcp_", "p_bytes_received")
        self.finish(row, t0)
        log(f"tx P{par} {label:14} rep {rep}: {row['gbps']:.3f} Gbit/s tap, "
            f"{fmt(row.get('good_gbps'), 3)} goodput, "
            f"{fmt(row.get('vcpu_s_per_gb'))} vCPU-s/GB tap, "
            f"{fmt(row.get('vcpu_s_per_gb_good'))} goodput, retrans "
            f"{fmt(row.get('retrans_pct'))} %"
            f"{' (host busy)' if row['busy'] else ''}")

    # --- experiment 2: forwarding --------------------------------------------
    def fwd_cell(self, path, secs, rep):
        a_, vm = self.args, self.vm
        t0 = time.monotonic()
        label = FWD_PATHS[path][1]
        ifn = self.fwd_config(path)
        gen = self.trafgen(secs)
        sampler = measure.Sampler(vm, [ifn[1], ifn[2]], taps=(1, 2))
        sampler.gen_pids = [gen.pid]
        try:
            self.wait_flow("tx", gen)
            a, b, mp = self.measure(sampler, secs, f"mpstat 1 {secs}")
        finally:
            gout = self.host_stop(gen, signal.SIGINT)
        row = self.base_row("fwd", path, label, rep, par=1)
        row.update(measure.window(a, b, a_.smp, [ifn[1], ifn[2]]))
        self.add_mpstat(row, mp)
        w = row["wall_s"]
        offered = row["tap1_tx_packets"] + row["tap1_tx_dropped"]
        fwd = row["tap2_rx_packets"]
        row["offered_pps"] = offered / w
        row["to_qemu_pps"] = row["tap1_tx_packets"] / w
        row["guest_rx_pps"] = row["g_rx_packets"] / row["guest_wall_s"]
        row["fwd_pps"] = fwd / w
        row["fwd_pct"] = 100.0 * fwd / offered if offered else None
        self.per_unit(row, fwd / 1e6, "mpkt")
        row["trafgen_ok"] = int("packets outgoing" in gout)
        self.finish(row, t0)
        log(f"fwd {label:20} rep {rep}: offered {row['offered_pps']:.0f} pps, "
            f"forwarded {row['fwd_pps']:.0f} pps "
            f"({fmt(row['fwd_pct'])} %), "
            f"{fmt(row.get('vcpu_s_per_mpkt'))} vCPU-s/Mpkt"
            f"{' (host busy)' if row['busy'] else ''}")

    # --- profiling -----------------------------------------------------------
    def profile(self, kind, path, gro=False):
        """One extra window with guest `perf record -e cpu-clock -a`.

        Writes profile-<kind>-<path>.txt: the symbols' shares of the
        non-idle samples, then perf's own report.
        """
        a_, vm = self.args, self.vm
        secs = a_.profile_seconds
        if kind == "rx":
            label = RX_PATHS[path][1]
            self.rx_config(path, gro)
            # Stopped after the recording; -t only bounds it.
            gen = self.host_bg(1, ["iperf", "-c", vm.guest_ip4(1), "-p",
                                   str(IPERF_PORT), "-t", str(secs + 300),
                                   "-P", str(a_.parallel)])
        elif kind == "xdp":
            drv, act = path.split("-")
            label = f"{DRV_LABELS[drv]} {XDP_ACTS[act][1]}"
            self.xdp_config(drv, act)
            gen = self.trafgen(secs, XDP_SRC, "xdp64")
        else:
            label = FWD_PATHS[path][1]
            self.fwd_config(path)
            gen = self.trafgen(secs)
        try:
            self.wait_flow("tx", gen)
            vm.check(f"perf record -q -e cpu-clock -a -o /tmp/perf.data "
                     f"-- sleep {secs} >/dev/null 2>&1", timeout=secs + 240)
        finally:
            self.host_stop(gen)
        rep = vm.check("perf report -i /tmp/perf.data --stdio --no-children "
                       "--sort dso,sym 2>/dev/null; rm -f /tmp/perf.data",
                       timeout=600)
        name = f"profile-{kind}-{path}{'-lro' if gro else ''}.txt"
        with open(os.path.join(self.outdir, name), "w") as f:
            f.write(f"# guest perf record -e cpu-clock -a, {kind} {label}, "
                    f"lro {'on' if gro else 'off'}, {secs} s\n"
                    + "\n".join(profile_busy(rep)) + "\n\n# perf report:\n"
                    + "\n".join(rep.splitlines()[:100]) + "\n")
        log(f"profile written: {name}")

    # --- the whole run -------------------------------------------------------
    def run(self):
        a_ = self.args
        # The patched vmxnet3 (if any) always next to the stock one
        pv = ["vmxnet3p"] if self.patched else []
        # --vmxnet3-only: the two vmxnet3 rows, for the series' A/B
        vx = not a_.vmxnet3_only
        order = (["copy", "bskb"] if vx else []) + ["vmxnet3"] + pv
        pars = [a_.parallel] + ([1] if a_.p1_seconds > 0 else [])
        for rep in range(a_.reps):
            if "rx" in a_.exp:
                seq = []
                for i, par in enumerate(pars):
                    # vx3 copy/build_skb with the same LRO setting next to
                    # each other, then vmxnet3, then the patched vmxnet3:
                    # one load of each driver per -P pass.
                    cells = [("copy", False), ("bskb", False),
                             ("copy", True), ("bskb", True)] if vx else []
                    cells += [("vmxnet3", True), ("vmxnet3", False)]
                    cells += [(p, g) for p in pv for g in (False, True)]
                    if i % 2:
                        cells.reverse()
                    seq += [(p, g, par) for p, g in cells]
                if rep % 2:
                    seq.reverse()
                for path, gro, par in seq:
                    secs = a_.seconds if par == a_.parallel else a_.p1_seconds
                    self.rx_cell(path, gro, par, secs, rep)
        if "rss" in a_.exp:
            seq = [("vx3", q) for q in self.rss_queues()]
            seq += [(d, None) for d in RSS_DRIVERS if d != "vx3"]
            for rep in range(a_.reps):
                for drv, q in (seq[::-1] if rep % 2 else seq):
                    self.rss_cell(drv, q, a_.seconds, rep)
        # Each experiment starts with the driver that is loaded.
        if "tx" in a_.exp:
            seq = (["vx3"] if vx else []) + ["vmxnet3"] + pv
            if self.drv == seq[-1]:
                seq.reverse()
            for rep in range(a_.reps):
                for path in (seq if rep % 2 == 0 else seq[::-1]):
                    self.tx_cell(path, a_.parallel, a_.tx_seconds, rep)
        # Forwarding and XDP: when both run, their cells are interleaved
        # in one sequence per repetition, grouped by driver (one driver
        # switch per repetition), so that XDP_REDIRECT and stack
        # forwarding are measured next to each other.
        seq = []
        if "fwd" in a_.exp and vx:
            seq += [("fwd", "vx3"), ("fwd", "bskb")]
        if "xdp" in a_.exp:
            if vx:
                seq += [("xdp", ("vx3", act)) for act in XDP_ACTS]
            seq += [("xdp", ("vmxnet3", act)) for act in
                    reversed(list(XDP_ACTS))]
        if "fwd" in a_.exp:
            seq += [("fwd", "vmxnet3")]
        # Then the patched vmxnet3: fwd next to vmxnet3's, then XDP_DROP,
        # XDP_TX, XDP_REDIRECT
        if "fwd" in a_.exp:
            seq += [("fwd", p) for p in pv]
        if "xdp" in a_.exp:
            seq += [("xdp", (p, act)) for p in pv for act in XDP_ACTS]
        if seq:
            exp, cell = seq[-1]
            if self.drv == (FWD_PATHS[cell][0] if exp == "fwd" else cell[0]):
                seq.reverse()
            for rep in range(a_.reps):
                for exp, cell in (seq if rep % 2 == 0 else seq[::-1]):
                    if exp == "fwd":
                        self.fwd_cell(cell, a_.fwd_seconds, rep)
                    else:
                        self.xdp_cell(*cell, a_.xdp_seconds, rep)
            self.xdp_attach(self.ifn[1], None)
            if "fwd" in a_.exp:
                self.fwd_off()
        # AF_XDP: per repetition vx3 zero-copy, vx3 copy, vmxnet3 (and the
        # patched one), each with rxdrop, txonly, l2fwd; reversed every
        # other repetition
        if "xsk" in a_.exp:
            cells = ((["vx3-zc", "vx3-copy"] if vx else []) +
                     ["vmxnet3-copy"] + (["vmxnet3p-copy"] if pv else []))
            seq = [(c, act, size) for c in cells for act in XSK_ACTS
                   for size in a_.xsk_sizes]
            if self.drv == XSK_CELLS[seq[-1][0]][0]:
                seq.reverse()
            for rep in range(a_.reps):
                for cell, act, size in (seq if rep % 2 == 0 else seq[::-1]):
                    self.xsk_cell(cell, act, size, a_.xsk_seconds, rep)
        if a_.profile:
            if "rx" in a_.exp:
                for path in order:
                    self.profile("rx", path)
                # The aggregated flow: vx3's build_skb path against vmxnet3
                for path in (["bskb"] if vx else []) + ["vmxnet3"] + pv:
                    self.profile("rx", path, gro=True)
            if "fwd" in a_.exp:
                for path in (["vx3", "bskb"] if vx else []) + \
                        ["vmxnet3"] + pv:
                    self.profile("fwd", path)
            if "xdp" in a_.exp:
                for drv in list(XDP_DRIVERS[not vx:]) + pv:
                    for act in XDP_ACTS:
                        self.profile("xdp", f"{drv}-{act}")
                self.xdp_attach(self.ifn[1], None)
            if "fwd" in a_.exp:
                self.fwd_off()
        if a_.count:
            for drv in list(XDP_DRIVERS[not vx:]) + pv:
                for act in XDP_ACTS:
                    self.count_xdp(drv, act)
            self.xdp_attach(self.ifn[1], None)
            self.write_counts()

    # --- per-frame counts ----------------------------------------------------
    def count_xdp(self, drv, act):
        """What one XDP frame costs in device and kernel events: a window
        of --count-seconds with the action's program on NIC 1 and 64-byte
        frames from trafgen. QEMU's trace of MMIO writes (lib/devside.py)
        counts the BAR0 writes of both NICs by register, over a host
        window; guest `perf stat -a` on tracepoints counts hard IRQs, NAPI
        polls and page_pool pages taken from and given back to the page
        allocator (a pool that recycles takes and gives none), over a
        guest window. Both become rates, divided by the rate of frames
        the program ran on (its map, in the sampler's window around
        both)."""
        a_, vm = self.args, self.vm
        secs = a_.count_seconds
        label = f"{DRV_LABELS[drv]} {XDP_ACTS[act][1]}"
        ifn = self.xdp_config(drv, act)
        bars = {}
        for n in (1, 2):
            r = devside.DeviceSide(vm, n).bar_region(0)
            bars[n] = (r["address"], r["size"])
        gen = self.trafgen(2 * secs + 60, XDP_SRC, "xdp64")
        sampler = measure.Sampler(vm, [ifn[1], ifn[2]], taps=(1, 2),
                                  files=[XDP_CNT])
        sampler.gen_pids = [gen.pid]
        log_path = vm.guest_errors_log
        events = ("irq:irq_handler_entry", "napi:napi_poll",
                  "page_pool:page_pool_state_hold",
                  "page_pool:page_pool_state_release")
        try:
            self.wait_flow("tx", gen)
            a = sampler.snap()
            off = os.path.getsize(log_path)
            t0 = time.monotonic()
            vm.qmp("trace-event-set-state", name=devside.TRACE_EVENT,
                   enable=True)
            time.sleep(secs)
            vm.qmp("trace-event-set-state", name=devside.TRACE_EVENT,
                   enable=False)
            t_trace = time.monotonic() - t0
            out = vm.check(
                "mountpoint -q /sys/kernel/tracing || mount -t tracefs "
                "nodev /sys/kernel/tracing; read u0 x </proc/uptime; "
                f"perf stat -a -x, -e {','.join(events)} -- sleep {secs} "
                "2>&1 >/dev/null; read u1 x </proc/uptime; "
                'echo "elapsed $u0 $u1"', timeout=secs + 240)
            b = sampler.snap()
        finally:
            self.host_stop(gen, signal.SIGINT)
        w = measure.window(a, b, a_.smp, [ifn[1], ifn[2]])
        prog = w.get("prog_packets", 0)
        if not prog or w["guest_wall_s"] <= 0:
            raise RuntimeError(f"count {label}: the program saw no frames")
        host_fps, guest_fps = prog / w["wall_s"], prog / w["guest_wall_s"]
        row = {"drv": drv, "act": act, "label": label,
               "prog_pps": guest_fps, "trace_s": t_trace}
        for name, n in count_bar0_writes(log_path, off, bars).items():
            row[name] = n / t_trace / host_fps
        m = re.search(r"elapsed ([\d.]+) ([\d.]+)", out)
        gsecs = float(m.group(2)) - float(m.group(1)) if m else secs
        for line in out.splitlines():
            f = line.split(",")
            if len(f) > 2 and f[2] in events and f[0].strip().isdigit():
                row[f[2].split(":")[1]] = int(f[0]) / gsecs / guest_fps
        self.counts.append(row)
        log(f"count {label:24}: "
            + ", ".join(f"{k} {v:.3f}" for k, v in row.items()
                        if isinstance(v, float) and k not in
                        ("prog_pps", "trace_s")) + " per frame")

    def write_counts(self):
        """counts-xdp.txt: the table of count_xdp()'s rows."""
        cols = ["IMR", "TXPROD", "RXPROD", "RXPROD2", "other",
                "irq_handler_entry", "napi_poll", "page_pool_state_hold",
                "page_pool_state_release"]
        lines = [["per 1000 frames the program saw", "kpps", "IMR writes",
                  "TXPROD", "RXPROD", "RXPROD2", "other BAR0", "hard IRQs",
                  "NAPI polls", "pp pages taken", "pp pages given back"]]
        for r in self.counts:
            lines.append([r["label"], f"{r['prog_pps'] / 1e3:.1f}"] +
                         [f"{1e3 * r[c]:.2f}" if c in r else "-"
                          for c in cols])
        text = [f"# bench.py --count: {self.args.count_seconds} s windows, "
                "64-byte frames from trafgen; BAR0 writes of both NICs "
                "(QEMU trace, host window),",
                "# hard IRQs, NAPI polls and page_pool pages (guest perf "
                "stat -a on tracepoints, guest window)"]
        text += report.columns(lines, indent="")
        with open(os.path.join(self.outdir, "counts-xdp.txt"), "w") as f:
            f.write("\n".join(text) + "\n")
        log("counts written: counts-xdp.txt")

    def dmesg_problems(self):
        text = self.vm.dmesg()
        return [ln for ln in text.splitlines()
                if vmlib.BAD_DMESG_RE.search(ln)]


# BAR0 registers of the VMXNET3 interface (lib/devside.py): 8 bytes per
# queue
BAR0_REGS = (("IMR", devside.REG_IMR, 0xC8), ("TXPROD", devside.REG_TXPROD,
                                             0x200),
             ("RXPROD", devside.REG_RXPROD, 0x200),
             ("RXPROD2", devside.REG_RXPROD2, 0x200))


def count_bar0_writes(path, off, bars):
    """{register: writes} in QEMU's trace log from offset off, over the
    BAR0 regions {nic: (address, size)}; writes elsewhere in BAR0 count as
    "other"."""
    res = {name: 0 for name, _, _ in BAR0_REGS}
    res["other"] = 0
    with open(path, "rb") as f:
        f.seek(off)
        data = f.read()
    for raw in data.split(b"\n"):
        if b"vmxnet3-b0" not in raw:
            continue
        m = devside.TRACE_RE.match(raw.decode(errors="replace"))
        if not m:
            continue
        addr = int(m.group(3), 16)
        for base, size in bars.values():
            if base <= addr < base + size:
                reg = addr - base
                for name, start, span in BAR0_REGS:
                    if start <= reg < start + span:
                        res[name] += 1
                        break
                else:
                    res["other"] += 1
                break
    return res


IDLE_SYMS = ("pv_native_safe_halt", "default_idle", "cpu_idle_poll",
             "acpi_idle_do_entry", "intel_idle", "mwait_idle")


def profile_busy(report_text, top=40):
    """Top symbols of a `perf report --sort dso,sym` as shares of the
    non-idle samples (a guest that waits for packets is mostly idle)."""
    syms = []
    for line in report_text.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.+?)\s*$", line)
        if m:
            syms.append((float(m.group(1)), m.group(2), m.group(4)))
    idle = sum(p for p, _, sym in syms if sym in IDLE_SYMS)
    busy = 100.0 - idle
    out = [f"# idle: {idle:.1f} % of the samples; shares below are of the "
           f"other {busy:.1f} %"]
    for p, dso, sym in [x for x in syms if x[2] not in IDLE_SYMS][:top]:
        out.append(f"{100.0 * p / busy if busy > 0 else 0.0:7.2f}%  "
                   f"{dso:18} {sym}")
    return out


def fmt(v, nd=2):
    return "-" if v is None else f"{v:.{nd}f}"


def environment(bench, kv, args, t_start):
    vm = bench.vm
    ko = os.path.join(bench.outdir, "vm", "vx3.ko")

    def cmd(c):
        try:
            return subprocess.run(c, shell=True, capture_output=True,
                                  text=True, timeout=30).stdout.strip()
        except subprocess.SubprocessError:
            return ""
    git = cmd(f"git -C {ROOT} rev-parse --short HEAD")
    if cmd(f"git -C {ROOT} status --porcelain --untracked-files=no"):
        git += "+dirty"
    iperf_v = cmd("iperf -v 2>&1")
    # The fourth row's module: where it came from, what it was, and the
    # series' last commit (if the tree has it)
    patched = {}
    if args.patched_ko:
        pko = shlex.quote(args.patched_ko)
        patched["vmxnet3_patched_ko"] = (
            f"{args.patched_src}, sha256 "
            + cmd(f"sha256sum {pko} | cut -d' ' -f1")
            + ", vermagic " + cmd(f"modinfo -F vermagic {pko}"))
        series = cmd(f"git -C {ROOT} log -1 --format=%h -- "
                     "scripts/vmxnet3-series")
        if series and cmd(f"git -C {ROOT} status --porcelain -- "
                          "scripts/vmxnet3-series"):
            series += "+dirty"
        if series:
            patched["vmxnet3_series"] = series
    env = {
        "date": t_start.strftime("%Y-%m-%d %H:%M:%S %Z").strip(),
        "git": git,
        "qemu": cmd(f"{vm.qemu if vm else vmlib.QEMU} --version | head "
                    f"-n1"),
        "accel": f"{vmlib.TCG_BENCH} (no KVM)",
        "machine": f"q35, -cpu max, -smp {args.smp}, -m {args.mem}",
        "nic": "2 x vmxnet3 on tap (vnet_hdr) in peer namespaces",
        "guest_kernel": kv,
        "host_kernel": cmd("uname -r"),
        "host_cpu": cmd("lscpu | sed -n 's/^Model name: *//p'") +
        f", {os.cpu_count()} CPUs",
        "iperf": iperf_v,
        "trafgen": cmd("trafgen -v 2>&1 | head -n1"),
        "vx3_ko": "sha256 " + cmd(f"sha256sum {ko} | cut -c1-16") +
        ", vermagic " + cmd(f"modinfo -F vermagic {ko}"),
        **patched,
        "pin": args.pin,
        "command": ("bench.py " + shlex.join(sys.argv[1:])).strip(),
    }
    if vm and vm.proc and vm.proc.poll() is None:
        env["qemu_affinity"] = ", ".join(f"{k}: {v}" for k, v in
                                         sorted(bench.affinity().items()))
    return env


def private_ko(src, outdir, name, kv, make):
    """Copy module src to outdir/vm/name and check that it is built for
    kv: the tree's module may be rebuilt (for another kernel, too) while
    the benchmark runs. Returns (the copy, None) or (None, error)."""
    ko = os.path.join(outdir, "vm", name)
    shutil.copyfile(src, ko)
    vermagic = subprocess.run(["modinfo", "-F", "vermagic", ko],
                              capture_output=True, text=True).stdout.split()
    if not vermagic or vermagic[0] != kv:
        return None, (f"bench: {src} is built for "
                      f"{vermagic[0] if vermagic else '?'}, not {kv} "
                      f"(run {make})")
    return ko, None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--reps", type=int, default=3,
                    help="repetitions of every cell (default 3)")
    ap.add_argument("--seconds", type=int, default=20,
                    help="receive window with -P PARALLEL (default 20)")
    ap.add_argument("--parallel", "-P", type=int, default=32,
                    help="iperf streams (default 32)")
    ap.add_argument("--p1-seconds", type=int, default=10,
                    help="receive window with -P 1 (default 10, 0 = skip)")
    ap.add_argument("--tx-seconds", type=int, default=20)
    ap.add_argument("--fwd-seconds", type=int, default=10)
    ap.add_argument("--xdp-seconds", type=int, default=None,
                    help="XDP window (default: --fwd-seconds)")
    ap.add_argument("--xsk-seconds", type=int, default=None,
                    help="AF_XDP window (default: --fwd-seconds)")
    ap.add_argument("--xsk-sizes", default="64,1518",
                    help="AF_XDP frame sizes in bytes with the FCS, 64 to "
                    "1518 (default 64,1518)")
    ap.add_argument("--fwd-rate", type=int, default=0,
                    help="trafgen rate in pps, forwarding and XDP (default "
                    "0: as fast as it can)")
    ap.add_argument("--ramp", type=float, default=3.0,
                    help="seconds of traffic before a window starts")
    ap.add_argument("--exp", default="rx,tx,fwd,xdp,xsk",
                    help="experiments: rx, tx, fwd, xdp, xsk, rss (comma "
                    "separated)")
    ap.add_argument("--pin", default="none", choices=("none", "vcpu", "split"),
                    help="QEMU/generator CPU pinning (see README)")
    ap.add_argument("--smp", type=int, default=2)
    ap.add_argument("--mem", type=int, default=1024)
    ap.add_argument("--busy-threshold", type=float, default=0.25,
                    help="flag windows with more other host load (cores)")
    ap.add_argument("--patched", default="auto",
                    choices=("auto", "yes", "no"),
                    help="the fourth row, vmxnet3 patched: the module of "
                    "make vmxnet3-patched\n(build/vmxnet3-patched/KVER/"
                    "vmxnet3.ko, or $VX3_VMXNET3_PATCHED_KO);\nauto: if "
                    "it exists (default), yes: required, no: left out")
    ap.add_argument("--vmxnet3-only", action="store_true",
                    help="only the vmxnet3 and vmxnet3 patched rows (the "
                    "patched one required): the series' A/B")
    ap.add_argument("--profile", action="store_true",
                    help="add guest perf profiles (rx, fwd, xdp)")
    ap.add_argument("--profile-seconds", type=int, default=10)
    ap.add_argument("--host-profile", action="store_true",
                    help="host perf profiles of QEMU's threads in XDP "
                    "windows (host-profile-*.txt; symbols need a QEMU "
                    "that has them: VX3_QEMU, scripts/vx3-qemu.sh)")
    ap.add_argument("--rx-ring", type=int, default=0,
                    help="every driver's RX ring 0 size (ethtool -G rx), "
                    "for an A/B of the default")
    ap.add_argument("--count", action="store_true",
                    help="add per-frame counts of XDP windows: MMIO "
                    "writes by register, IRQs, NAPI polls, page_pool "
                    "(counts-xdp.txt)")
    ap.add_argument("--count-seconds", type=int, default=5)
    ap.add_argument("--smoke", action="store_true",
                    help="tooling check: 1 rep, 1 s windows, -P 8, no -P 1")
    ap.add_argument("--outdir", help="results folder (default "
                    "build/bench/<timestamp>)")
    args = ap.parse_args()
    if args.smoke:
        args.reps, args.seconds, args.p1_seconds = 1, 1, 0
        args.tx_seconds, args.fwd_seconds, args.ramp = 1, 1, 0.0
        args.parallel, args.profile_seconds = 8, 2
    if args.xdp_seconds is None:
        args.xdp_seconds = args.fwd_seconds
    if args.xsk_seconds is None:
        args.xsk_seconds = args.fwd_seconds
    try:
        args.xsk_sizes = [int(x) for x in args.xsk_sizes.split(",") if x]
    except ValueError:
        args.xsk_sizes = []
    if not args.xsk_sizes or not all(64 <= x <= 1518
                                     for x in args.xsk_sizes):
        ap.error("--xsk-sizes: sizes from 64 to 1518, comma separated")
    args.exp = [e.strip() for e in args.exp.split(",") if e.strip()]
    bad = set(args.exp) - {"rx", "tx", "fwd", "xdp", "xsk", "rss"}
    if bad:
        ap.error(f"unknown experiment(s): {', '.join(sorted(bad))}")
    if args.host_profile and not shutil.which("perf"):
        ap.error("--host-profile needs perf (Debian's linux-perf)")
    if os.geteuid() != 0:
        print("bench: needs root (taps, namespaces)", file=sys.stderr)
        return 2
    if not os.path.isfile(VX3_KO):
        print(f"bench: {VX3_KO} not built (run make)", file=sys.stderr)
        return 2

    t_start = datetime.datetime.now().astimezone()
    outdir = os.path.abspath(args.outdir or os.path.join(
        ROOT, "build", "bench" + ("-smoke" if args.smoke else ""),
        t_start.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(os.path.join(outdir, "vm"), exist_ok=True)
    vmlib._install_handlers()
    vmlib.reap_dead_runs()
    kv = vmlib.kver()
    ko, err = private_ko(VX3_KO, outdir, "vx3.ko", kv, "make")
    if err:
        print(err, file=sys.stderr)
        return 2
    # The fourth row (--patched): the patched vmxnet3, if built
    args.patched_src = os.path.abspath(
        os.environ.get("VX3_VMXNET3_PATCHED_KO") or
        PATCHED_KO.format(kver=kv))
    args.patched_ko = None
    if args.patched != "no" and os.path.isfile(args.patched_src):
        args.patched_ko, err = private_ko(args.patched_src, outdir,
                                          "vmxnet3-patched.ko", kv,
                                          "make vmxnet3-patched")
        if err:
            print(err, file=sys.stderr)
            return 2
    elif args.patched == "yes" or args.vmxnet3_only:
        print(f"bench: no {args.patched_src} (run make vmxnet3-patched)",
              file=sys.stderr)
        return 2
    elif args.patched == "auto":
        log(f"no {args.patched_src}: no \"{PATCHED_LABEL}\" row (make "
            "vmxnet3-patched)")
    initrd = os.path.join(outdir, "vm", f"initramfs-{kv}.cpio")
    env = dict(os.environ)
    # The "vmxnet3" cells are the kernel's driver: no patched vmxnet3.ko in
    # place of its (run.py --driver vmxnet3-patched's way)
    env.pop("VX3_VMXNET3_KO", None)
    if args.profile or args.count:
        # perf record (--profile) and perf stat on tracepoints (--count)
        env["VX3_EXTRA_BINS"] = "/usr/bin/perf"
    if args.patched_ko:
        # A plain file, outside the module tree (see PATCHED_KO)
        env["VX3_EXTRA_FILES"] = (env.get("VX3_EXTRA_FILES", "") +
                                  f" {args.patched_ko}={PATCHED_GUEST}"
                                  ).strip()
    subprocess.check_call([os.path.join(VX3_TESTS, "mkinitramfs.sh"), kv,
                           initrd, ko], env=env)

    bench = Bench(args, outdir)
    t0 = time.monotonic()
    status = 0
    renv = {}
    try:
        bench.boot(initrd, kv)
        renv = environment(bench, kv, args, t_start)
        bench.run()
        problems = bench.dmesg_problems()
        if problems:
            bench.notes.append("guest dmesg has bad lines (see vm/dmesg.txt)"
                               ": " + problems[0])
        with open(os.path.join(outdir, "vm", "dmesg.txt"), "w") as f:
            f.write(bench.vm.dmesg())
    except (vmlib.VMError, KeyboardInterrupt) as e:
        log(f"bench aborted: {e}")
        status = 1
    except Exception:  # noqa: BLE001 - keep the windows measured so far
        log(f"bench aborted:\n{traceback.format_exc()}")
        status = 1
    finally:
        if not renv:
            renv = environment(bench, kv, args, t_start)
        if bench.vm:
            bench.vm.close()
    renv["duration"] = f"{time.monotonic() - t0:.0f} s"
    if bench.rows:
        missing = report.write_all(outdir, bench.rows, renv, args,
                                   bench.notes)
        if missing:
            log("cells without numbers: " + ", ".join(missing))
            status = 1
    else:
        status = 1
    log(f"results in {os.path.relpath(outdir, os.getcwd())} "
        f"({renv['duration']})")
    return status


if __name__ == "__main__":
    sys.exit(main())
