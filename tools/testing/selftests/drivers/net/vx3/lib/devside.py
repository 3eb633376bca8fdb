# SPDX-License-Identifier: GPL-2.0
"""The device's point of view: doorbell trace and guest-physical memory.

QEMU ignores several values of the VMXNET3 interface that a VMware host
uses (TXPROD/RXPROD values, txNumDeferred/txThreshold, updateRxProd). This
module observes and pokes them from outside the guest, without any driver
internals:

* QEMU's trace event memory_region_ops_write (log backend) records every
  MMIO write with its region name, offset and value. It is switched on at
  run time over QMP; the log backend writes into QEMU's one log file (-D,
  qemu-guest-errors.log), and lib.vm.LogScanner ignores trace lines there.
  BAR1 DSAL/DSAH/CMD writes give the DriverShared address of the latest
  ACTIVATE; BAR0 writes are the doorbells (TXPROD, RXPROD, RXPROD2, IMR).
* QEMU's gdbstub (started with the HMP command gdbserver on a unix
  socket) reads and writes guest-physical memory (Qqemu.PhyMemMode:1) with
  the GDB remote serial protocol. QEMU handles a packet only while the VM
  is stopped: halt() sends ^C (the VM stops, QEMU answers with a stop
  reply), resume() sends 'c'. Use `with dev.halted(): ...` and keep the
  stop short; the guest's clock and timers go on afterwards.

    dev = DeviceSide(vm)          # before the driver activates the device
    dev.start_trace()
    ...load the driver, link up...
    dev.attach()                  # gdbstub
    lay = dev.layout()            # DriverShared + queue descriptors
    with dev.halted():
        ring = dev.tx_ring(lay.tx[0])
    dev.close()

Layouts and bit positions: the VMXNET3 revision-1 interface (vmxnet3_defs.h).
"""

import contextlib
import os
import re
import socket
import struct
import time

from lib.vm import VMError

TRACE_EVENT = "memory_region_ops_write"
BAR0_NAME = "vmxnet3-b0"
BAR1_NAME = "vmxnet3-b1"

# BAR0
REG_IMR = 0x000
REG_TXPROD = 0x600
REG_RXPROD = 0x800
REG_RXPROD2 = 0xA00
# BAR1
REG_DSAL = 0x10
REG_DSAH = 0x18
REG_CMD = 0x20
CMD_ACTIVATE = 0xCAFE0000

QDESC_SIZE = 256
DESC_SIZE = 16

# TX descriptor: w2 gen bit 14; w3 eop bit 12
TXD_GEN = 1 << 14
TXD_EOP = 1 << 12
# RX descriptor: w2 len 13:0, btype bit 14, gen bit 31
RXD_LEN = 0x3FFF
RXD_BTYPE = 1 << 14
RXD_GEN = 1 << 31
# Completions: gen is w3 bit 31; RX w0: idx 11:0, eop 14, sop 15, rqID 25:16
COMP_GEN = 1 << 31
RXC_IDX = 0xFFF
RXC_EOP = 1 << 14
RXC_SOP = 1 << 15
RXC_RQID_SHIFT = 16
RXC_RQID = 0x3FF << RXC_RQID_SHIFT

TRACE_RE = re.compile(
    r"^(?:\d+@\d+\.\d+:)?memory_region_ops_write cpu (-?\d+) mr (0x[0-9a-f]+) "
    r"addr (0x[0-9a-f]+) value (0x[0-9a-f]+) size (\d+) name '([^']*)'")


class Write:
    """One traced MMIO write to the vmxnet3 BARs."""

    __slots__ = ("seq", "bar", "off", "val")

    def __init__(self, seq, bar, off, val):
        self.seq, self.bar, self.off, self.val = seq, bar, off, val

    def __repr__(self):
        return f"<bar{self.bar} {self.off:#x}={self.val:#x} #{self.seq}>"


class TxQueue:
    """A TX queue descriptor as the device reads it."""

    def __init__(self, q, pa, raw):
        self.q, self.pa = q, pa
        (self.num_deferred, self.threshold) = struct.unpack_from("<II", raw, 0)
        (self.ring_pa, self.data_pa, self.comp_pa) = \
            struct.unpack_from("<QQQ", raw, 0x10)
        self.ring_size = struct.unpack_from("<I", raw, 0x38)[0]
        self.comp_size = struct.unpack_from("<I", raw, 0x40)[0]
        self.intr_idx = raw[0x48]

    def __repr__(self):
        return (f"<txq{self.q} ring {self.ring_pa:#x}/{self.ring_size} "
                f"comp {self.comp_pa:#x}/{self.comp_size} "
                f"deferred {self.num_deferred} thr {self.threshold}>")


class RxQueue:
    """An RX queue descriptor as the device reads it."""

    def __init__(self, q, pa, raw):
        self.q, self.pa = q, pa
        self.update_prod = raw[0]
        self.ring_pa = list(struct.unpack_from("<QQ", raw, 0x10))
        self.comp_pa = struct.unpack_from("<Q", raw, 0x20)[0]
        self.ring_size = list(struct.unpack_from("<II", raw, 0x38))
        self.comp_size = struct.unpack_from("<I", raw, 0x40)[0]
        self.intr_idx = raw[0x48]

    def __repr__(self):
        return (f"<rxq{self.q} rings {self.ring_pa[0]:#x}/{self.ring_size[0]} "
                f"{self.ring_pa[1]:#x}/{self.ring_size[1]} comp "
                f"{self.comp_pa:#x}/{self.comp_size} upd {self.update_prod}>")


class Layout:
    """DriverShared and the queue descriptor table of one activation."""

    def __init__(self, shared_pa, num_tx, num_rx, qdesc_pa, tx, rx):
        self.shared_pa, self.num_tx, self.num_rx = shared_pa, num_tx, num_rx
        self.qdesc_pa, self.tx, self.rx = qdesc_pa, tx, rx

    def __repr__(self):
        return (f"<DriverShared {self.shared_pa:#x}: {self.num_tx} tx "
                f"{self.num_rx} rx, queues at {self.qdesc_pa:#x}>")


def gen_boundary(gens):
    """Index of the first entry of a ring not written in the current lap.

    A producer writes entries 0, 1, ... with generation g and, after the
    wrap, with !g. Entries [0, b) carry the current lap's generation and
    [b, size) the previous one's: b is the first i >= 1 with
    gens[i] != gens[i - 1], or 0 if there is none (nothing written yet, or
    exactly whole laps). Returns (b, gen the producer writes at b).
    """
    for i in range(1, len(gens)):
        if gens[i] != gens[i - 1]:
            return i, gens[0]
    return 0, 1 - gens[0]


def teardown(ctx):
    """A test file's teardown: close the gdbstub connection of the
    DeviceSide in ctx.state["dev"] (the VM runs on) and stop its trace.
    Files that keep one there take it as theirs: teardown = ds.teardown.
    """
    dev = ctx.state.get("dev")
    if dev is not None:
        dev.close()
        dev.stop_trace()


class DeviceSide:
    """Trace parser plus gdbstub client for one VM (NIC 1)."""

    def __init__(self, vm, nic=1):
        self.vm = vm
        self.nic = nic
        self.log = vm.guest_errors_log
        self._off = 0
        self._partial = b""
        self._seq = 0
        self.writes = []	# every traced write to BAR0/BAR1 of the NIC
        self._mr = {}		# region name -> mr pointer of our NIC
        self._bar_size = {0: 0x1000, 1: 0x1000}
        self.sock = None
        self._buf = b""
        self._noack = False
        self.running = True

    # --- trace -----------------------------------------------------------
    def start_trace(self):
        """Switch memory_region_ops_write on (QMP) and skip older lines."""
        self._bar_size = {b: self.bar_region(b)["size"] for b in (0, 1)}
        try:
            self._off = os.path.getsize(self.log)
        except OSError:
            self._off = 0
        self.vm.qmp("trace-event-set-state", name=TRACE_EVENT, enable=True)

    def stop_trace(self):
        self.vm.qmp("trace-event-set-state", name=TRACE_EVENT, enable=False)

    def poll(self):
        """Parse the trace lines written since the last call; returns the
        new BAR writes. QEMU flushes the log after each line, so once the
        VM is halted everything it did is in the file."""
        try:
            with open(self.log, "rb") as f:
                f.seek(self._off)
                data = f.read()
                self._off = f.tell()
        except OSError:
            return []
        data = self._partial + data
        lines = data.split(b"\n")
        self._partial = lines.pop()
        new = []
        for raw in lines:
            if b"vmxnet3-b" not in raw:
                continue
            m = TRACE_RE.match(raw.decode(errors="replace"))
            if not m:
                continue
            name, mr = m.group(6), m.group(2)
            if name not in (BAR0_NAME, BAR1_NAME):
                continue
            # With several NICs the regions share a name: the NIC's regions
            # are the first ones seen (NIC 1 only is supported).
            if self._mr.setdefault(name, mr) != mr:
                continue
            self._seq += 1
            bar = 0 if name == BAR0_NAME else 1
            # QEMU 7.2 traces the guest-physical address: the BARs are
            # naturally aligned, the offset is the address modulo the size
            off = int(m.group(3), 16) & (self._bar_size[bar] - 1)
            new.append(Write(self._seq, bar, off, int(m.group(4), 16)))
        self.writes.extend(new)
        return new

    def mark(self):
        """A position in the write history (for since=)."""
        self.poll()
        return self._seq

    def bar0(self, base, q=None, since=0):
        """Values written to BAR0 register base + 8*q (all q if None) after
        mark `since`, as a list of (q, value) in order."""
        self.poll()
        res = []
        for w in self.writes:
            if w.bar != 0 or w.seq <= since:
                continue
            if base <= w.off < base + 0x200 or (base == REG_IMR and
                                                w.off < 0xC8):
                wq = (w.off - base) // 8
                if q is None or wq == q:
                    res.append((wq, w.val))
        return res

    def activations(self):
        """Seq numbers of the ACTIVATE commands seen."""
        self.poll()
        return [w.seq for w in self.writes
                if w.bar == 1 and w.off == REG_CMD and w.val == CMD_ACTIVATE]

    def shared_pa(self):
        """DriverShared PA of the latest ACTIVATE: the last DSAL/DSAH pair
        written before it."""
        acts = self.activations()
        if not acts:
            raise AssertionError("no ACTIVATE command in the trace (was the "
                                 "trace on before the link came up?)")
        lo = hi = None
        for w in self.writes:
            if w.seq > acts[-1]:
                break
            if w.bar == 1 and w.off == REG_DSAL:
                lo, hi = w.val, None
            elif w.bar == 1 and w.off == REG_DSAH and lo is not None:
                hi = w.val
        if lo is None or hi is None:
            raise AssertionError("no DSAL/DSAH pair before the last ACTIVATE")
        return lo | hi << 32

    # --- gdbstub -----------------------------------------------------------
    def attach(self):
        """Start QEMU's gdbstub on a unix socket, connect (QEMU stops the
        VM on connect), switch to physical addresses and no-ack mode,
        then let the VM run again."""
        path = os.path.join(self.vm.sockdir, f"gdb{self.nic}.sock")
        out = self.vm.monitor(f"gdbserver unix:{path},server=on,wait=off")
        deadline = time.monotonic() + 10
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise VMError(f"gdbserver did not start: {out}")
            time.sleep(0.05)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(path)
        self.running = False
        self._wait_stopped()
        r = self._cmd("QStartNoAckMode")
        if r == "OK":
            self._noack = True
        r = self._cmd("Qqemu.PhyMemMode:1")
        if r != "OK":
            raise VMError(f"gdbstub refused Qqemu.PhyMemMode:1: {r!r}")
        self.resume()

    def close(self):
        """Detach (the VM runs on) and close the socket."""
        if self.sock is None:
            return
        try:
            if self.running:
                self.halt()
            self._send_packet("D")
            self._recv_packet(stop_ok=True)
        except (OSError, VMError):
            pass
        try:
            self.sock.close()
        except OSError:
            pass
        self.sock = None
        self._ensure_running()

    def _ensure_running(self):
        st = self.vm.qmp("query-status")
        if not st.get("running"):
            self.vm.qmp("cont")
        self.running = True

    def _wait_stopped(self):
        deadline = time.monotonic() + 30
        while self.vm.qmp("query-status").get("running"):
            if time.monotonic() > deadline:
                raise VMError("VM did not stop for the gdbstub")
            time.sleep(0.01)

    def halt(self):
        """Stop all vCPUs (^C); returns when the VM is stopped."""
        if not self.running:
            return
        self.sock.sendall(b"\x03")
        self.running = False
        self._wait_stopped()

    def resume(self):
        """Continue all vCPUs ('c'; QEMU sends no answer until it stops)."""
        if self.running:
            return
        self._send_packet("c")
        self.running = True
        # A stop reply may still be queued from the halt: drop it lazily
        # (_recv_packet skips stop replies).
        deadline = time.monotonic() + 10
        while not self.vm.qmp("query-status").get("running"):
            if time.monotonic() > deadline:
                self.vm.qmp("cont")
                break
            time.sleep(0.01)

    @contextlib.contextmanager
    def halted(self):
        """The vCPUs are stopped inside the block (memory is stable)."""
        was = self.running
        self.halt()
        try:
            yield self
        finally:
            if was:
                self.resume()

    @staticmethod
    def _frame(body):
        data = body.encode() if isinstance(body, str) else body
        return b"$" + data + b"#" + f"{sum(data) & 0xFF:02x}".encode()

    def _send_packet(self, body):
        self.sock.sendall(self._frame(body))

    def _read_more(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise VMError("gdbstub connection closed")
        self._buf += chunk

    def _recv_packet(self, stop_ok=False):
        """Next packet from the stub; stop replies (T../S..) are skipped
        unless stop_ok. Acks ('+') are skipped."""
        while True:
            while True:
                i = self._buf.find(b"$")
                if i >= 0:
                    j = self._buf.find(b"#", i)
                    if j >= 0 and len(self._buf) >= j + 3:
                        break
                elif self._buf:
                    self._buf = b""	# acks and noise
                self._read_more()
            body = self._buf[i + 1:j]
            self._buf = self._buf[j + 3:]
            if not self._noack:
                self.sock.sendall(b"+")
            text = body.decode(errors="replace")
            if text[:1] in ("T", "S") and not stop_ok:
                continue
            return text

    def _cmd(self, body):
        if self.running:
            raise VMError("gdbstub command while the VM runs: halt() first")
        self._send_packet(body)
        return self._recv_packet()

    def read(self, pa, n):
        """n bytes of guest-physical memory at pa (VM must be halted)."""
        out = b""
        while len(out) < n:
            k = min(1024, n - len(out))
            r = self._cmd(f"m{pa + len(out):x},{k:x}")
            if r.startswith("E") or len(r) != 2 * k:
                raise VMError(f"gdbstub read {pa + len(out):#x}+{k}: {r!r}")
            out += bytes.fromhex(r)
        return out

    def write(self, pa, data):
        """Write bytes to guest-physical memory (VM must be halted)."""
        done = 0
        while done < len(data):
            k = min(1024, len(data) - done)
            r = self._cmd(f"M{pa + done:x},{k:x}:"
                          f"{data[done:done + k].hex()}")
            if r != "OK":
                raise VMError(f"gdbstub write {pa + done:#x}+{k}: {r!r}")
            done += k

    def read32(self, pa):
        return struct.unpack("<I", self.read(pa, 4))[0]

    def write32(self, pa, val):
        self.write(pa, struct.pack("<I", val))

    # --- device structures ------------------------------------------------
    def layout(self):
        """DriverShared of the latest ACTIVATE and its queue descriptors
        (the VM is halted for the reads)."""
        spa = self.shared_pa()
        with self.halted():
            sh = self.read(spa, 0x40)
            magic = struct.unpack_from("<I", sh, 0)[0]
            if magic != 0xBABEFEE1:
                raise AssertionError(f"DriverShared at {spa:#x} has magic "
                                     f"{magic:#x}")
            qpa = struct.unpack_from("<Q", sh, 0x28)[0]
            ntx, nrx = sh[0x3E], sh[0x3F]
            raw = self.read(qpa, QDESC_SIZE * (ntx + nrx))
        tx = [TxQueue(i, qpa + QDESC_SIZE * i,
                      raw[QDESC_SIZE * i:QDESC_SIZE * (i + 1)])
              for i in range(ntx)]
        rx = [RxQueue(i, qpa + QDESC_SIZE * (ntx + i),
                      raw[QDESC_SIZE * (ntx + i):QDESC_SIZE * (ntx + i + 1)])
              for i in range(nrx)]
        return Layout(spa, ntx, nrx, qpa, tx, rx)

    def ring(self, pa, size):
        """A ring of 16-byte entries as a list of 4-tuples of u32."""
        raw = self.read(pa, size * DESC_SIZE)
        return [struct.unpack_from("<IIII", raw, DESC_SIZE * i)
                for i in range(size)]

    def tx_ring(self, txq):
        return self.ring(txq.ring_pa, txq.ring_size)

    def tx_comp(self, txq):
        return self.ring(txq.comp_pa, txq.comp_size)

    def rx_ring(self, rxq, r):
        return self.ring(rxq.ring_pa[r], rxq.ring_size[r])

    def rx_comp(self, rxq):
        return self.ring(rxq.comp_pa, rxq.comp_size)

    def write_entry(self, pa, words):
        self.write(pa, struct.pack("<IIII", *words))

    def mask_queue_irqs(self, lay, masked):
        """Mask (or unmask) through BAR0 IMR every interrupt index of the
        queues of layout `lay`, as the driver does: while masked, no NAPI
        poll runs, so no completion is reclaimed. Masking is done twice,
        0.3 s apart: a poll running at the first write unmasks at its
        end."""
        base = self.bar_address(0) + REG_IMR
        imrs = sorted({q.intr_idx for q in lay.tx} |
                      {q.intr_idx for q in lay.rx})
        for _ in range(2 if masked else 1):
            with self.halted():
                for i in imrs:
                    self.write32(base + 8 * i, 1 if masked else 0)
            if masked:
                time.sleep(0.3)

    def bar_region(self, bar):
        """QMP query-pci region (address, size) of BAR `bar` of the NIC."""
        for bus in self.vm.qmp("query-pci"):
            for d in bus.get("devices", []):
                if d.get("qdev_id") != f"nic{self.nic}":
                    continue
                for r in d.get("regions", []):
                    if r.get("bar") == bar:
                        return r
        raise AssertionError(f"nic{self.nic} BAR{bar} not found in query-pci")

    def bar_address(self, bar):
        """Guest-physical address of BAR `bar` of the NIC."""
        return self.bar_region(bar)["address"]


# --- ring analysis ---------------------------------------------------------


def tx_gens(ring):
    return [1 if d[2] & TXD_GEN else 0 for d in ring]


def rx_gens(ring):
    return [1 if d[2] & RXD_GEN else 0 for d in ring]


def comp_gens(ring):
    return [1 if d[3] & COMP_GEN else 0 for d in ring]


def tx_published_after(ring, pos):
    """TX descriptors published at and after pos (the device owns them by
    the gen bit protocol): walks from pos while each descriptor carries
    the lap generation of its position. The lap generation at pos is that
    of descriptor pos-1 (published before pos), flipped at the wrap.
    Returns (number of descriptors, number of packets = EOP descriptors)."""
    size = len(ring)
    gens = tx_gens(ring)
    g = gens[pos - 1] if pos else 1 - gens[size - 1]
    n = pkts = 0
    i = pos
    while n < size and gens[i] == g:
        n += 1
        if ring[i][3] & TXD_EOP:
            pkts += 1
        i += 1
        if i == size:
            i, g = 0, 1 - g
    return n, pkts


def last_comp(comp):
    """(index, entry) of the newest entry of a completion ring written by
    the device, or (None, None) if it wrote none."""
    e = comp_entries_newest_first(comp)
    return e[0] if e else (None, None)


def comp_entries_newest_first(comp):
    """Device-written entries of a completion ring, newest first (at most
    one lap), as (index, entry). All-zero entries (zeroed at ACTIVATE,
    never written) end the list."""
    gens = comp_gens(comp)
    b, _ = gen_boundary(gens)
    size = len(comp)
    res = []
    for k in range(size):
        i = (b - 1 - k) % size
        if not any(comp[i]):
            break
        res.append((i, comp[i]))
    return res
