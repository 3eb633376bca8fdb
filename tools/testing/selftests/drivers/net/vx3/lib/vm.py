# SPDX-License-Identifier: GPL-2.0
"""QEMU/TCG guest with vmxnet3 NICs on taps in per-run network namespaces.

Host API (see ../README):
    vm = VM(kver, initrd, nics=1, variant="default", logdir=...)
    vm.start()
    rc, out = vm.run("ip link", timeout=30)   # guest, via virtio-serial
    out = vm.check("modprobe vmxnet3")        # raises CmdFailed on rc != 0
    rc, out = vm.peer(1, "ping -c1 198.18.1.2")  # in peer namespace 1
    job = vm.bg("iperf -s"); ...; out = job.stop()      # guest background
    job = vm.peer_bg(1, "iperf -s"); ...; out = job.stop()
    vm.monitor("set_link nic1 off")           # HMP through QMP
    vm.dmesg(); vm.thread_cpu(); vm.close()

Every resource (QEMU, namespaces, taps, background jobs) is released by
close(), which also runs from atexit and on SIGINT/SIGTERM/SIGHUP.
"""

import atexit
import base64
import ctypes
import glob
import json
import os
import re
import secrets
import shlex
import signal
import socket
import subprocess
import threading
import time

# Boot variants: extra kernel command line and extra QEMU arguments.
# slub_debug=FZP: sanity checks, red zones and poisoning catch a driver's
# overruns and uses after free; the allocation/free stack traces (U) are
# left out: they cost 15-17 % of a guest's TCP receive throughput under
# TCG (iperf -P 4 into the guest, 7.3: 1.76/1.96 Gbit/s with U, 2.09/2.29
# without), and the debug kernel's KASAN records them where it matters.
# On the debug kernel (VM(kasan=True)) neither slub_debug nor page_poison
# is given: KASAN finds what they find, and more, at the access (slab
# and page out-of-bounds and use-after-free, double and invalid frees),
# and without them its guests took a fifth less CPU time (datapath: 201
# CPU-s against 245).
KASAN_DUPLICATES = re.compile(r"\s*\b(slub_debug|page_poison)=\S+")

# The tests' guests run their two vCPUs on one host thread (TCG round
# robin). Multi-threaded TCG gave about the same test time for a tenth to a
# third more host CPU time (reconfig and lifecycle under traffic, Debian's
# 7.3, alone on the host: 178 s and 203 CPU-s single-threaded, 175 s and
# 275 CPU-s multi-threaded; the debug kernel's datapath 186 s and 183 CPU-s
# against 167 s and 201), and make check, two guests on two cores, is bound
# by CPU time. It also leaves out the multi-threaded emulator's races that
# the harness otherwise has to recognise and retry: stale translations of
# live-patched kernel code ("Oops: int3", at boot and in the JIT's XDP
# dispatcher), SeaBIOS dying in S3 resume right after it woke the second
# vCPU (firmware_resume_death()), and boots that hang in the stop_machine()
# of the first clocksource switch, spinning both host cores until the 240 s
# watchdog. The benchmarks keep multi-threaded TCG (bench/bench.py), whose
# guest uses both host cores.
TCG_TESTS = "tcg,thread=single"
TCG_BENCH = "tcg,thread=multi"
VARIANTS = {
    "default": {
        "append": "slub_debug=FZP kfence.sample_interval=100 page_poison=1",
        "qemu": [],
    },
    # Every DMA through bounce buffers: a missing dma_sync shows as data
    # corruption.
    "swiotlb": {
        "append": "slub_debug=FZP page_poison=1 swiotlb=force",
        "qemu": [],
    },
    # Every DMA through an emulated IOMMU with strict invalidation: a use
    # after unmap or an unmapped address faults.
    "iommu": {
        "append": "slub_debug=FZP page_poison=1 intel_iommu=on "
                  "iommu.strict=1",
        "qemu": ["-device", "intel-iommu,caching-mode=off"],
    },
    # ACPI S3 enabled (QEMU's q35 default has it off): test_pm.py
    "s3": {
        "append": "slub_debug=FZP page_poison=1",
        "qemu": ["-global", "ICH9-LPC.disable_s3=0"],
    },
    # S3 as above, and the rig's vmxnet3 with wake-on-LAN (x-wol=on: a
    # PCI PM capability with PME, and a magic packet wakes a suspended
    # machine from an active device armed through UPDATE_PMCFG) in strict
    # mode (x-strict=on: every breach of the interface is a guest error;
    # scripts/qemu/patches/0003-*): test_wake.py, on the rig's QEMU only
    "s3-wol": {
        "append": "slub_debug=FZP page_poison=1",
        "qemu": ["-global", "ICH9-LPC.disable_s3=0",
                 "-global", "vmxnet3.x-wol=on",
                 "-global", "vmxnet3.x-strict=on"],
    },
    # A tiny bounce pool (swiotlb=force): DMA mappings fail under load,
    # test_dmaerr.py
    "swiotlb-tiny": {
        "append": "slub_debug=FZP page_poison=1 swiotlb=512,force",
        "qemu": [],
    },
}

# The QEMU binary: VX3_QEMU for every VM if set; otherwise Debian's, or
# with VM(qemu=...) the rig's own build with the patches of
# scripts/qemu/patches/ (qemu_patched(); Debian's QEMU 7.2 loses a
# vmxnet3's receive path across S3, test_pm.py)
QEMU_OVERRIDE = os.environ.get("VX3_QEMU")
QEMU = QEMU_OVERRIDE or "qemu-system-x86_64"
# VX3_QEMU_STRICT=1: every vmxnet3 in strict mode (x-strict=on: each breach
# of the VMXNET3 interface is a QEMU guest error, which fails the case;
# scripts/qemu/patches/0003-*), on the rig's QEMU (or VX3_QEMU's) for every
# test file
STRICT = os.environ.get("VX3_QEMU_STRICT", "") not in ("", "0")
# The repository root, seven levels above this file
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__),
                                    "../../../../../../.."))
RUN_DIR = "/run/vx3"		# run id -> owner pid, for reaping dead runs
HOST_ROOT_TAG = "hostroot"	# virtio-9p mount tag of VM(host_root=True)


def mount_host_root_script(where):
    """A guest shell script that mounts the host's / (VM(host_root=True))
    read-only at where, with the guest's /proc, /sys, /dev and a writable
    /run and /tmp bound over the host's: a chroot there runs the host's
    programs on the guest's kernel."""
    return ("modprobe 9pnet_virtio 2>/dev/null; modprobe 9p 2>/dev/null; "
            f"mkdir -p {where} && mount -t 9p -o trans=virtio,"
            f"version=9p2000.L,ro,cache=loose,msize=262144 "
            f"{HOST_ROOT_TAG} {where} && "
            f"for d in proc sys dev run tmp; do "
            f"mount -o rbind /$d {where}/$d || exit 1; done")
# A booting guest that prints nothing for this long has hung: a whole
# debug-kernel boot takes about 40 s of TCG, its longest silence a few.
BOOT_STALL_S = 240
AGENT_STARTED = "vx3-init: starting agent"	# guest/init, before the agent


class VMError(Exception):
    """Base class of harness errors."""


class VMCrash(VMError):
    """QEMU exited or the guest panicked."""


class FirmwareArtefact(VMCrash):
    """The guest's firmware died in an S3 resume, before the OS got the
    CPU back (lib/test.py firmware_resume_death()): run.py runs the case
    once more on a new VM."""


class BootStall(VMError):
    """The guest's console stayed silent for BOOT_STALL_S seconds before
    the guest agent answered."""


class CmdTimeout(VMError):
    """A command did not finish in time."""


class CmdFailed(VMError):
    """A command exited non-zero (vm.check / vm.peer_check)."""


_live = set()
_handlers_installed = False


def _cleanup_all():
    for obj in list(_live):
        try:
            obj.close()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


def _on_signal(signum, _frame):
    # Turn the signal into an exception so that try/finally blocks run;
    # atexit covers whatever is left.
    signal.signal(signum, signal.SIG_IGN)
    raise KeyboardInterrupt(f"signal {signum}")


def _install_handlers():
    global _handlers_installed
    if _handlers_installed:
        return
    _handlers_installed = True
    atexit.register(_cleanup_all)
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, _on_signal)


def _pdeathsig():
    # QEMU dies with the harness even if the harness is SIGKILLed.
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)		# PR_SET_PDEATHSIG
    except OSError:
        pass
    os.setpgrp()


def sh(cmd, timeout=60, check=True):
    """Run a host command (list or string). Returns (rc, output)."""
    if isinstance(cmd, str):
        cmd = ["sh", "-c", cmd]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _killpg(p)
        out, _ = p.communicate()
        raise CmdTimeout(f"host command timed out after {timeout}s: "
                         f"{shlex.join(cmd)}\n{out.decode(errors='replace')}")
    out = out.decode(errors="replace")
    if check and p.returncode != 0:
        raise CmdFailed(f"host command failed (rc={p.returncode}): "
                        f"{shlex.join(cmd)}\n{out}")
    return p.returncode, out


def _killpg(p, sig=signal.SIGKILL):
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_dead_runs():
    """Remove namespaces and taps of earlier runs whose harness is gone."""
    for f in glob.glob(os.path.join(RUN_DIR, "*.pid")):
        runid = os.path.basename(f)[:-4]
        try:
            pid = int(open(f).read().split()[0])
        except (OSError, ValueError, IndexError):
            pid = 0
        if pid and _pid_alive(pid):
            continue
        _remove_net(runid, range(1, 10))
        try:
            os.unlink(f)
        except OSError:
            pass


def _names(runid, n):
    # Interface names must stay <= 15 characters: "vx3" + 6 + "t" + n.
    return f"vx3-{runid}-p{n}", f"vx3{runid}t{n}"


def _remove_net(runid, nics):
    for n in nics:
        ns, tap = _names(runid, n)
        subprocess.run(["ip", "-n", ns, "link", "del", tap],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "netns", "del", ns],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "link", "del", tap],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class BgJob:
    """A background command in the guest or a peer namespace."""

    def __init__(self, stop_fn, desc):
        self._stop_fn = stop_fn
        self.desc = desc
        self.output = None

    def stop(self):
        """Kill the job (if still running) and return its output."""
        if self.output is None:
            self.output = self._stop_fn()
        return self.output


class VM:
    """One guest, its NICs, their peer namespaces and the control channel."""

    def __init__(self, kver, initrd, nics=1, variant="default", logdir=None,
                 runid=None, mem=1024, smp=2, boot_timeout=300, append="",
                 kernel=None, timeout_scale=1.0, root_ports=False,
                 host_root=False, bridge_nics=False, qemu=None,
                 kasan=False, accel=TCG_TESTS):
        self.kver = kver
        self.accel = accel
        # A KASAN kernel: the variant's slub_debug and page_poison are left
        # out (KASAN_DUPLICATES)
        self.kasan = kasan
        self.strict = STRICT
        if STRICT and not (QEMU_OVERRIDE or qemu):
            qemu = qemu_patched()
        self.qemu = QEMU_OVERRIDE or qemu or QEMU
        # The host's / shared read-only with the guest over virtio-9p,
        # mount tag HOST_ROOT_TAG (test_upstream.py runs the kernel's own
        # selftests chrooted into it).
        self.host_root = host_root
        # All taps on one bridge "br0" in netns(1) instead of one
        # addressed tap per namespace: the guest's NICs share one wire
        # and the host takes no part (no peer addresses).
        self.bridge_nics = bridge_nics
        # Every NIC on its own pcie-root-port "rp<n>" (PCIe hotplug)
        self.root_ports = root_ports
        # The guest kernel image: Debian's image of KVER unless given (the
        # debug kernel, scripts/vx3-debug-kernel.sh): guest_image().
        self.kernel = kernel or guest_image(kver)
        # Guest command timeouts (run(), check()) are multiplied by this:
        # a KASAN/lockdep kernel under TCG is several times slower.
        self.timeout_scale = timeout_scale
        self.initrd = initrd
        self.nics = nics
        self.variant = variant
        self.runid = runid or secrets.token_hex(3)
        self.logdir = os.path.abspath(logdir or f"build/vmtest/{self.runid}")
        # Unix socket paths are limited to 108 bytes: keep them short.
        self.sockdir = f"/tmp/vx3-{self.runid}"
        self.mem = mem
        self.smp = smp
        self.boot_timeout = boot_timeout
        self.extra_append = append
        self.proc = None
        self.ctl = None
        self.qmp_sock = None
        self._qmp_file = None
        self._qmp_lock = threading.Lock()
        self.qmp_events = []		# QMP events seen, oldest first
        self._send_lock = threading.Lock()
        self._pending = {}
        self._cond = threading.Condition()
        self._ctl_dead = False
        self._hello = None
        self._next_id = 0
        self._bg = []
        self._net_made = []
        self._closed = False
        self._reader = None

    # --- names ------------------------------------------------------------
    def netns(self, n):
        return _names(self.runid, n)[0]

    def tap(self, n):
        return _names(self.runid, n)[1]

    def mac(self, n):
        r = bytes.fromhex(self.runid)
        return f"52:54:{r[0]:02x}:{r[1]:02x}:{r[2]:02x}:{n:02x}"

    @staticmethod
    def guest_ip4(n):
        return f"198.18.{n}.2"

    @staticmethod
    def peer_ip4(n):
        return f"198.18.{n}.1"

    @staticmethod
    def guest_ip6(n):
        return f"2001:db8:{n}::2"

    @staticmethod
    def peer_ip6(n):
        return f"2001:db8:{n}::1"

    @property
    def console_log(self):
        return os.path.join(self.logdir, "console.log")

    @property
    def guest_errors_log(self):
        return os.path.join(self.logdir, "qemu-guest-errors.log")

    # --- lifecycle ----------------------------------------------------------
    def start(self):
        _install_handlers()
        _live.add(self)
        os.makedirs(self.logdir, exist_ok=True)
        os.makedirs(self.sockdir, exist_ok=True)
        os.makedirs(RUN_DIR, exist_ok=True)
        with open(os.path.join(RUN_DIR, f"{self.runid}.pid"), "w") as f:
            f.write(f"{os.getpid()}\n")
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def kernel_append(self):
        """The guest kernel's command line: the rig's options, the boot
        variant's (on a KASAN kernel without KASAN_DUPLICATES) and the
        file's APPEND."""
        var_append = VARIANTS[self.variant]["append"]
        if self.kasan:
            var_append = KASAN_DUPLICATES.sub("", var_append).strip()
        # log_buf_len: the dmesg scan after a case must find every line
        # since the last one (a fail-nth sweep prints megabytes of
        # traces); LogScanner reports an overflow all the same.
        # no_timer_check: on a loaded host a TCG guest's check that the
        # IO-APIC delivers the timer interrupt can run out of time, and
        # 7.3 then panics ("IO-APIC + timer doesn't work!"); the kernel
        # skips that check on KVM for the same reason.
        return " ".join(x for x in ("console=ttyS0 panic=-1 "
                                    "printk.devkmsg=on log_buf_len=16M "
                                    "no_timer_check",
                                    var_append,
                                    self.extra_append) if x)

    def _start(self):
        for n in range(1, self.nics + 1):
            self._net_made.append(n)
            sh(["ip", "tuntap", "add", "dev", self.tap(n), "mode", "tap",
                "vnet_hdr"])
            sh(["ip", "netns", "add", self.netns(n)])

        var = VARIANTS[self.variant]
        append = self.kernel_append()
        qmp = os.path.join(self.sockdir, "qmp.sock")
        ctl = os.path.join(self.sockdir, "ctl.sock")
        cmd = [self.qemu,
               "-name", f"vx3-{self.runid},debug-threads=on",
               "-accel", self.accel, "-M", "q35", "-cpu", "max",
               "-smp", str(self.smp), "-m", str(self.mem),
               "-nodefaults", "-nographic", "-no-reboot",
               "-kernel", self.kernel,
               "-initrd", self.initrd, "-append", append,
               "-serial", f"file:{self.console_log}",
               "-d", "guest_errors", "-D", self.guest_errors_log,
               "-qmp", f"unix:{qmp},server=on,wait=off"]
        # Variant devices (an IOMMU) come before the PCI devices they serve.
        cmd += var["qemu"]
        cmd += ["-device", "virtio-serial-pci,id=vser",
               "-chardev", f"socket,path={ctl},server=on,wait=off,id=ctl",
               "-device", "virtserialport,chardev=ctl,name=ctl"]
        for n in range(1, self.nics + 1):
            bus = ""
            if self.root_ports:
                cmd += ["-device", f"pcie-root-port,id=rp{n},chassis={n},"
                        f"slot={n}"]
                bus = f",bus=rp{n}"
            cmd += ["-netdev", f"tap,id=n{n},ifname={self.tap(n)},"
                    "script=no,downscript=no,vnet_hdr=on",
                    "-device", f"vmxnet3,netdev=n{n},id=nic{n},"
                    f"mac={self.mac(n)}{bus}" +
                    (",x-strict=on" if self.strict else "")]
        if self.host_root:
            cmd += ["-virtfs", "local,path=/,mount_tag=" + HOST_ROOT_TAG +
                    ",security_model=none,readonly=on,multidevs=remap"]
        with open(os.path.join(self.logdir, "qemu-cmdline"), "w") as f:
            f.write(shlex.join(cmd) + "\n")
        self._qemu_out = open(os.path.join(self.logdir, "qemu.log"), "wb")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=self._qemu_out,
                                     stderr=subprocess.STDOUT,
                                     preexec_fn=_pdeathsig)
        self.t_start = time.monotonic()
        self._qmp_connect(qmp)
        # QMP answers only after all devices (and the taps) are set up: now
        # move each tap into its peer namespace and configure it there.
        if self.bridge_nics:
            self._bridge_taps()
        for n in range(1, self.nics + 1) if not self.bridge_nics else ():
            ns, tap = self.netns(n), self.tap(n)
            sh(["ip", "link", "set", tap, "netns", ns])
            sh(["ip", "-n", ns, "link", "set", "lo", "up"])
            sh(["ip", "netns", "exec", ns, "sysctl", "-qw",
                f"net.ipv6.conf.{tap}.accept_ra=0"])
            sh(["ip", "-n", ns, "addr", "add", f"{self.peer_ip4(n)}/24",
                "dev", tap])
            sh(["ip", "-n", ns, "-6", "addr", "add",
                f"{self.peer_ip6(n)}/64", "dev", tap, "nodad"])
            sh(["ip", "-n", ns, "link", "set", tap, "up"])
        self._ctl_connect(ctl)
        self.boot_time = time.monotonic() - self.t_start

    def _bridge_taps(self):
        """bridge_nics: every tap into netns(1), on bridge br0, no
        addresses and no IPv6 there (nothing but the guest's frames on
        the wire). vnet_hdr offload metadata (GSO, partial checksums)
        crosses the bridge from one NIC to the other, as between two VMs
        on one host. The taps (and so br0) take MTU 9000, the device's
        largest: the bridge drops a frame longer than its egress port's
        MTU, and the upstream scripts set both NICs' MTU to 9000 (ping.py
        and xdp.py's multi-buffer cases)."""
        ns = self.netns(1)
        sh(["ip", "-n", ns, "link", "set", "lo", "up"])
        sh(["ip", "netns", "exec", ns, "sysctl", "-qw",
            "net.ipv6.conf.default.disable_ipv6=1",
            "net.ipv6.conf.all.disable_ipv6=1"])
        sh(["ip", "-n", ns, "link", "add", "br0", "type", "bridge",
            "forward_delay", "0", "mcast_snooping", "0"])
        for n in range(1, self.nics + 1):
            sh(["ip", "link", "set", self.tap(n), "netns", ns])
            sh(["ip", "-n", ns, "link", "set", self.tap(n), "mtu", "9000",
                "master", "br0", "up"])
        sh(["ip", "-n", ns, "link", "set", "br0", "up"])

    def _connect_unix(self, path, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            self.check_alive()
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
                return s
            except OSError:
                s.close()
                if time.monotonic() > deadline:
                    raise VMError(f"cannot connect to {path}")
                time.sleep(0.1)

    def _qmp_connect(self, path):
        self.qmp_sock = self._connect_unix(path)
        self.qmp_sock.settimeout(120)
        self._qmp_file = self.qmp_sock.makefile("rwb", buffering=0)
        greeting = self._qmp_read()
        if "QMP" not in greeting:
            raise VMError(f"bad QMP greeting: {greeting}")
        self.qmp("qmp_capabilities")

    def _qmp_read(self):
        while True:
            line = self._qmp_file.readline()
            if not line:
                self.check_alive()
                raise VMCrash("QMP connection closed")
            msg = json.loads(line)
            if "event" in msg:
                # Kept for tests (e.g. SUSPEND/WAKEUP in test_pm.py)
                self.qmp_events.append(msg)
                del self.qmp_events[:-200]
                continue
            return msg

    def qmp(self, execute, **arguments):
        """Run a QMP command; returns its "return" value."""
        with self._qmp_lock:
            req = {"execute": execute}
            if arguments:
                req["arguments"] = arguments
            self._qmp_file.write(json.dumps(req).encode() + b"\n")
            resp = self._qmp_read()
        if "error" in resp:
            raise VMError(f"QMP {execute}: {resp['error']}")
        return resp.get("return")

    def monitor(self, cmd):
        """Run an HMP command (e.g. "set_link nic1 off"); returns its text."""
        return self.qmp("human-monitor-command", **{"command-line": cmd})

    def _ctl_connect(self, path):
        self.ctl = self._connect_unix(path)
        self._reader = threading.Thread(target=self._ctl_reader, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + self.boot_timeout
        console_size, console_moved = -1, time.monotonic()
        with self._cond:
            while self._hello is None:
                now = time.monotonic()
                left = deadline - now
                if left <= 0:
                    raise VMError(f"guest agent did not answer within "
                                  f"{self.boot_timeout}s\n{self.console_tail()}")
                size = self._console_size()
                if size != console_size:
                    console_size, console_moved = size, now
                elif now - console_moved >= BOOT_STALL_S:
                    raise BootStall(f"guest console silent for "
                                    f"{BOOT_STALL_S}s during boot\n"
                                    f"{self.console_tail()}")
                if self._ctl_dead:
                    break
                self._cond.wait(min(left, 0.5))
                if self._hello is None:
                    self.check_alive()
        if self._hello is None:
            self.check_alive()
            raise VMError("control channel closed during boot")

    def agent_hello(self, wait=5.0):
        """Ask the guest agent for its hello ("C <id> 0 -") on the current
        connection; True if it answered within wait seconds, False also
        when QEMU has closed that connection (reconnect_ctl() then)."""
        self.check_qemu()
        if self._ctl_dead:
            return False
        with self._cond:
            self._hello = None
            self._next_id += 1
            cid = self._next_id
        try:
            with self._send_lock:
                self.ctl.sendall(f"C {cid} 0 -\n".encode())
        except OSError:
            return False
        deadline = time.monotonic() + wait
        with self._cond:
            while self._hello is None and not self._ctl_dead:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(min(left, 0.5))
            return self._hello is not None

    def reconnect_ctl(self):
        """Close the host side of the control channel and connect anew.

        QEMU resets the virtio-serial device on an S3 wakeup and the guest
        (Linux 7.3's virtio_console) opens its ports again on resume; the
        host connection made before the suspend then carries nothing either
        way until it is closed and made again (QEMU's socket chardev
        accepts the new one). Answers still owed on the old connection are
        lost: call this with no guest command in flight. It also serves
        when QEMU itself closed the connection across the suspend (seen
        once in CI: the reader got EOF instead of silence).
        """
        self.check_qemu()
        with self._send_lock:
            try:
                self.ctl.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.ctl.close()
            self._reader.join(10)
            with self._cond:
                self._ctl_dead = False
                self._hello = None
            self.ctl = self._connect_unix(os.path.join(self.sockdir,
                                                       "ctl.sock"))
            self._reader = threading.Thread(target=self._ctl_reader,
                                            daemon=True)
            self._reader.start()

    def _ctl_reader(self):
        f = self.ctl.makefile("rb")
        try:
            for line in f:
                parts = line.decode(errors="replace").split()
                if not parts:
                    continue
                with self._cond:
                    if parts[0] == "H" and len(parts) >= 2:
                        self._hello = parts[1]
                    elif parts[0] == "R" and len(parts) >= 3:
                        data = parts[3] if len(parts) > 3 else ""
                        out = base64.b64decode(data).decode(errors="replace")
                        self._pending[parts[1]] = (int(parts[2]), out)
                    self._cond.notify_all()
        except (OSError, ValueError):
            pass
        with self._cond:
            self._ctl_dead = True
            self._cond.notify_all()

    def check_qemu(self):
        """Raise VMCrash if QEMU exited."""
        if self.proc is None:
            return
        rc = self.proc.poll()
        if rc is not None:
            why = self.shutdown_reason()
            raise VMCrash(f"QEMU exited (rc={rc}"
                          f"{f', SHUTDOWN {why}' if why else ''})"
                          f"\n{self.console_tail()}")

    def shutdown_reason(self):
        """The reason of QEMU's last SHUTDOWN event (left unread on the
        QMP socket when QEMU exited), None if there was none: "guest-reset"
        is a reset the guest asked for or a triple fault, which -no-reboot
        turns into an exit."""
        if self.qmp_sock is None or self._qmp_lock.locked():
            return None
        with self._qmp_lock:
            try:
                self.qmp_sock.settimeout(1)
                while True:
                    line = self._qmp_file.readline()
                    if not line:
                        break
                    msg = json.loads(line)
                    if "event" in msg:
                        self.qmp_events.append(msg)
            except (OSError, ValueError):
                pass
        for e in reversed(self.qmp_events):
            if e["event"] == "SHUTDOWN":
                return e.get("data", {}).get("reason")
        return None

    def check_alive(self):
        """Raise VMCrash if QEMU exited or the guest panicked."""
        if self.proc is None:
            return
        self.check_qemu()
        if self._ctl_dead:
            raise VMCrash(f"control channel closed\n{self.console_tail()}")

    def _console_size(self):
        try:
            return os.path.getsize(self.console_log)
        except OSError:
            return -1

    def console_tail(self, lines=40):
        try:
            with open(self.console_log, errors="replace") as f:
                tail = f.readlines()[-lines:]
        except OSError:
            return "(no console log)"
        return "--- console tail ---\n" + "".join(tail).rstrip()

    def close(self):
        """Stop everything this VM created. Idempotent."""
        if self._closed:
            return
        self._closed = True
        for job in self._bg:
            try:
                job.stop()
            except Exception:  # noqa: BLE001
                pass
        if self.proc is not None and self.proc.poll() is None:
            try:
                if self._qmp_file is not None:
                    self.qmp_sock.settimeout(5)
                    self._qmp_file.write(b'{"execute": "quit"}\n')
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for s in (self.ctl, self.qmp_sock):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
        _remove_net(self.runid, self._net_made)
        for p in glob.glob(os.path.join(self.sockdir, "*")):
            try:
                os.unlink(p)
            except OSError:
                pass
        try:
            os.rmdir(self.sockdir)
        except OSError:
            pass
        try:
            os.unlink(os.path.join(RUN_DIR, f"{self.runid}.pid"))
        except OSError:
            pass
        _live.discard(self)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    # --- guest commands -------------------------------------------------------
    def run(self, cmd, timeout=60):
        """Run a shell command in the guest; returns (rc, output).

        Raises CmdTimeout when it does not finish within timeout seconds
        (the guest kills it; the agent stays usable) and VMCrash if the
        guest or QEMU dies meanwhile.
        """
        self.check_alive()
        timeout = timeout * self.timeout_scale
        with self._cond:
            self._next_id += 1
            cid = str(self._next_id)
        b64 = base64.b64encode(cmd.encode()).decode()
        line = f"C {cid} {int(timeout)} {b64}\n".encode()
        t0 = time.monotonic()
        with self._send_lock:
            self.ctl.sendall(line)
        deadline = t0 + timeout + 15
        with self._cond:
            while cid not in self._pending:
                if time.monotonic() > deadline:
                    raise CmdTimeout(f"guest command gave no answer in "
                                     f"{timeout}s: {cmd}")
                self._cond.wait(0.5)
                if cid not in self._pending:
                    self.check_alive()
            rc, out = self._pending.pop(cid)
        if rc == 137 and time.monotonic() - t0 >= timeout - 0.5:
            raise CmdTimeout(f"guest command timed out after {timeout}s: "
                             f"{cmd}\n{out}")
        return rc, out

    def check(self, cmd, timeout=60):
        """Like run(), but raise CmdFailed on non-zero exit; returns output."""
        rc, out = self.run(cmd, timeout)
        if rc != 0:
            raise CmdFailed(f"guest: `{cmd}` exited {rc}:\n{out.rstrip()}")
        return out

    def bg(self, cmd, nice=False):
        """Start cmd in the guest in the background; returns a BgJob.
        nice: run it at nice 19 (traffic generators, so that they do not
        starve the agent and the commands a test runs beside them)."""
        if nice:
            cmd = f"renice -n 19 -p $$ >/dev/null || exit 1; {cmd}"
        self._next_id += 1
        base = f"/tmp/bg.{self._next_id}"
        pid = self.check(f"(setsid sh -c {shlex.quote(cmd)} >{base}.out 2>&1 "
                         f"</dev/null & echo $! >{base}.pid); cat {base}.pid"
                         ).strip()

        def stop():
            if self.proc.poll() is not None or self._ctl_dead:
                return ""
            _, out = self.run(f"kill -9 -{pid} {pid} 2>/dev/null; sleep 0.2; "
                              f"cat {base}.out; rm -f {base}.*", timeout=30)
            return out
        job = BgJob(stop, cmd)
        self._bg.append(job)
        return job

    def dmesg(self):
        return self.check("dmesg", timeout=60)

    def ifname(self, n):
        """Guest interface name of NIC n (found by MAC)."""
        mac = self.mac(n)
        out = self.check(f"grep -l {mac} /sys/class/net/*/address || true")
        m = re.search(r"/sys/class/net/([^/]+)/address", out)
        return m.group(1) if m else None

    # --- peers -------------------------------------------------------------------
    def peer(self, n, cmd, timeout=60):
        """Run a shell command in peer namespace n; returns (rc, output)."""
        return sh(["ip", "netns", "exec", self.netns(n), "sh", "-c", cmd],
                  timeout=timeout, check=False)

    def peer_check(self, n, cmd, timeout=60):
        rc, out = self.peer(n, cmd, timeout)
        if rc != 0:
            raise CmdFailed(f"peer{n}: `{cmd}` exited {rc}:\n{out.rstrip()}")
        return out

    def peer_bg(self, n, cmd):
        """Start cmd in peer namespace n in the background; returns a BgJob."""
        logf = open(os.path.join(self.logdir, f"peer{n}-bg-{len(self._bg)}.log"),
                    "w+b")
        p = subprocess.Popen(["ip", "netns", "exec", self.netns(n),
                              "sh", "-c", cmd], stdout=logf,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)

        def stop():
            _killpg(p)
            p.wait()
            logf.seek(0)
            out = logf.read().decode(errors="replace")
            logf.close()
            return out
        job = BgJob(stop, cmd)
        self._bg.append(job)
        return job

    # --- measurement ---------------------------------------------------------------
    def thread_cpu(self):
        """CPU seconds (user+system) per QEMU thread name, e.g.

        {"CPU 0/TCG": 12.3, "CPU 1/TCG": 4.5, "qemu-system-x86": 1.2, ...}
        Threads sharing a name are summed.
        """
        hz = os.sysconf("SC_CLK_TCK")
        res = {}
        for task in glob.glob(f"/proc/{self.proc.pid}/task/*"):
            try:
                with open(f"{task}/stat") as f:
                    stat = f.read()
                with open(f"{task}/comm") as f:
                    name = f.read().strip()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            cpu = (int(fields[11]) + int(fields[12])) / hz  # utime, stime
            res[name] = res.get(name, 0.0) + cpu
        return res


# --- dmesg / log scanning -------------------------------------------------------------
def _deps(*args):
    return subprocess.check_output([os.path.join(ROOT, "scripts/vx3-deps.sh"),
                                    *args], text=True).strip()


def kver():
    """The guest kernel version: $KVER, else the target kernel that
    vx3-deps.sh sets up (Debian's newest, 7.3)."""
    return os.environ.get("KVER") or _deps("--kver")


def lts_kver():
    """The LTS kernel version (Debian's 6.12, installed in /boot)."""
    return _deps("--lts-kver")


def guest_image(kver):
    """Debian's kernel image of kver: /boot/vmlinuz-KVER for the installed
    6.12, the unpacked image for the target kernel (vx3-deps.sh)."""
    return _deps("--image", kver)


def qemu_patched():
    """The rig's QEMU with scripts/qemu/patches/, built on first use
    (scripts/vx3-qemu.sh, several minutes, then cached)."""
    return subprocess.check_output(
        [os.path.join(ROOT, "scripts/vx3-qemu.sh")], text=True).strip()


def guest_modroot(kver):
    """The root of kver's lib/modules/ ("" for the host's /)."""
    return _deps("--modroot", kver)


def boot_stall_artefact(error, console_text):
    """True if error is a BootStall of a guest that never reached its
    /init's agent start: nothing of the test (no driver, no agent) had
    run, so the hang is the emulator's and a test may boot once more."""
    return isinstance(error, BootStall) and AGENT_STARTED not in console_text


def tcg_boot_artefact(console_text):
    """True if the guest died at boot of QEMU's stale-TB int3 artefact.

    Under multi-threaded TCG a vCPU can execute the int3 of a kernel
    text_poke_bp() (static keys, alternatives) after the patch finished:
    "Oops: int3". At boot, before any network driver is loaded, that can
    only be the emulator; a test may boot such a guest once more. A crash
    with vx3 or vmxnet3 loaded never qualifies.
    """
    if "Oops: int3" not in console_text:
        return False
    mods = re.findall(r"Modules linked in:(.*)", console_text)
    return not any(re.search(r"\b(vx3|vmxnet3)\b", m) for m in mods)


BAD_DMESG = [
    r"BUG:", r"WARNING:", r"Oops", r"Call Trace", r"KFENCE",
    r"BUG \S+ \(", r"Redzone", r"Object padding", r"Padding overwritten",
    r"Poison overwritten", r"Freepointer corrupt", r"Object already free",
    r"pagealloc: memory corruption", r"general protection fault",
    r"Kernel panic", r"UBSAN:", r"INFO: task .* blocked",
    r"rcu: INFO: .*stall", r"stalled pool shutdown",
    r"page_pool_release_retry", r"\binflight\b",
    r"unregister_netdevice: waiting", r"NETDEV WATCHDOG",
    r"exceeded budget in poll", r"hw csum failure", r"refcount_t:",
    # skb_warn_if_lro() and skb_warn_bad_offload() (GSO of a bad skb)
    r"cannot be forwarded while LRO", r"skb_warn_bad_offload",
    # tcp_gro_dev_warn(): an skb longer than the MTU without GSO metadata
    # (once per boot)
    r"Driver has suspect GRO implementation",
    # Debug kernel (config.debug): lockdep and RCU lockdep (their reports
    # start with WARNING: too), KASAN, DMA-API debugging (not its boot-time
    # info lines), debugobjects, kmemleak with kmemleak.verbose=1. DEBUG_NET
    # reports are WARN()s.
    r"possible circular locking dependency", r"inconsistent lock state",
    r"possible recursive locking detected", r"suspicious RCU usage",
    r"KASAN:", r"DMA-API: (?!preallocated|debugging enabled)",
    r"ODEBUG:", r"unreferenced object 0x",
]
BAD_DMESG_RE = re.compile("|".join(f"(?:{p})" for p in BAD_DMESG))
_TS_RE = re.compile(r"^\[\s*(\d+\.\d+)\]")
# A line of QEMU's "log" trace backend ("[PID@SEC.USEC:]EVENT args"), for
# the trace events tests may enable at run time (lib/devside.py); QEMU
# writes them into the -D log file next to the guest_errors messages.
TRACE_EVENTS = ("memory_region_ops_write",)
TRACE_LINE_RE = re.compile(rb"^(?:\d+@\d+\.\d+:)?(?:" +
                           "|".join(TRACE_EVENTS).encode() + rb") ")


class LogScanner:
    """Incremental checks after each test: dmesg, guest_errors, QEMU."""

    def __init__(self, vm):
        self.vm = vm
        self.last_ts = -1.0
        self.gerr_off = 0

    def scan(self):
        """Return a list of problems found since the last scan."""
        problems = []
        if self.vm.proc.poll() is not None:
            problems.append(f"QEMU exited (rc={self.vm.proc.returncode})")
            problems.append(self.vm.console_tail())
            return problems
        try:
            text = self.vm.dmesg()
        except VMError as e:
            return [f"cannot read guest dmesg: {e}"]
        bad = []
        ts = self.last_ts
        # The oldest line still in the ring after the last scanned one:
        # the lines in between were overwritten, unseen
        first = next((float(m.group(1)) for m in
                      map(_TS_RE.match, text.splitlines()) if m), None)
        if self.last_ts > 0 and first is not None and first > self.last_ts:
            bad.append(f"guest dmesg overflowed: its oldest line is at "
                       f"{first:.3f} s, the last scan read up to "
                       f"{self.last_ts:.3f} s: lines were lost unseen")
        # A test may declare reports it provokes on purpose
        # (vm.dmesg_reports_ok, a compiled regex matched against each
        # line), e.g. test_faultinject.py: fault injection's own report and
        # the allocation failure warnings it causes. Only the "Call Trace"
        # line of such a report, up to its "</TASK>", is accepted; any
        # other bad line still counts.
        ok_re = getattr(self.vm, "dmesg_reports_ok", None)
        in_ok = False
        for line in text.splitlines():
            m = _TS_RE.match(line)
            if m:
                ts = float(m.group(1))
            if ts <= self.last_ts:
                continue
            if ok_re is not None and ok_re.search(line):
                in_ok = True
            elif "</TASK>" in line:
                in_ok = False
            if BAD_DMESG_RE.search(line) and \
               not (in_ok and "Call Trace" in line):
                bad.append(line)
        self.last_ts = ts
        if bad:
            problems.append(f"guest dmesg has {len(bad)} bad line(s): "
                            f"{bad[0].strip()}\n" + "\n".join(bad[1:30]))
        try:
            with open(self.vm.guest_errors_log, "rb") as f:
                f.seek(self.gerr_off)
                new = f.read()
        except OSError:
            new = b""
        # Whole lines only: QEMU may be writing a trace line right now
        # (a trace stays on across a test file's cases), and its tail,
        # read alone at the next scan, would match no trace event. A
        # line still without its newline is read again next time.
        new = new[:new.rfind(b"\n") + 1]
        self.gerr_off += len(new)
        # A test may declare QEMU messages it expects (vm.guest_errors_ok,
        # a compiled regex matched against each line), e.g. test_pm.py
        ok_re = getattr(self.vm, "guest_errors_ok", None)
        if ok_re is not None:
            new = b"".join(ln for ln in new.splitlines(keepends=True)
                           if not ok_re.search(ln.decode(errors="replace")))
        # Trace events switched on at run time (lib/devside.py) share
        # QEMU's one log file with guest_errors: they are not errors.
        new = b"\n".join(ln for ln in new.split(b"\n")
                         if not TRACE_LINE_RE.match(ln))
        if new.strip():
            problems.append("QEMU guest_errors log is not empty:\n" +
                            new.decode(errors="replace")[:3000])
        return problems
