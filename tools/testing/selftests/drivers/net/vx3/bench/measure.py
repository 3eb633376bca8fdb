# SPDX-License-Identifier: GPL-2.0
"""Sampling of host and guest counters around a measurement window.

A window is two snapshots, A and B, each taken on the host (QEMU thread CPU
times, host /proc/stat, load generator CPU, tap counters) and in the guest
(/proc/uptime, /proc/stat, interface counters, driver counters, an XDP
program's map of counters).
window() turns a pair into the derived numbers one CSV row holds.
"""

import json
import os
import re
import statistics
import subprocess
import time

# /proc/stat cpu line fields (USER_HZ units).
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq",
               "steal")
BUSY_FIELDS = ("user", "nice", "system", "irq", "softirq", "steal")
USER_HZ = os.sysconf("SC_CLK_TCK")
IF_FIELDS = ("rx_bytes", "rx_packets", "tx_bytes", "tx_packets",
             "rx_dropped", "tx_dropped", "rx_missed_errors")


def parse_stat_cpu(line):
    """Dict of the first eight fields of a /proc/stat "cpu" line."""
    vals = [int(x) for x in line.split()[1:9]]
    vals += [0] * (len(STAT_FIELDS) - len(vals))
    return dict(zip(STAT_FIELDS, vals))


def host_stat():
    with open("/proc/stat") as f:
        return parse_stat_cpu(f.readline())


def proc_cpu(pid):
    """CPU seconds (user+system, all threads) of a host process; 0 if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / USER_HZ


def proc_tree_cpu(pid):
    """CPU seconds of a host process and of its live descendants: trafgen
    does its work in forked children, its first process only waits."""
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(d))
    todo, total = [pid], 0.0
    while todo:
        p = todo.pop()
        total += proc_cpu(p)
        todo += children.get(p, [])
    return total


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def thread_io(pid):
    """{thread name: {"rchar": n, "wchar": n}} of a host process, summed
    over threads of the same name (like vm.thread_cpu()). Shows which QEMU
    thread reads and writes the tap."""
    res = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{task}/io") as f:
                io = dict(line.split(": ") for line in f.read().splitlines())
        except (OSError, ValueError):
            continue
        d = res.setdefault(name, {"rchar": 0, "wchar": 0})
        for k in d:
            d[k] += int(io.get(k, 0))
    return res


def tap_info(vm, n):
    """`ip -s -j link show` of NIC n's tap, in its peer namespace."""
    out = subprocess.run(["ip", "-n", vm.netns(n), "-s", "-j", "link", "show",
                          "dev", vm.tap(n)], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)[0]


def last_json(out):
    """The last line of out that is a JSON object, parsed; None if none."""
    for line in reversed(out.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def tap_stats(vm, n):
    """stats64 of NIC n's tap: {"rx": {...}, "tx": {...}}."""
    return tap_info(vm, n)["stats64"]


def guest_cmd(ifnames, files=()):
    """Guest command printing what guest_parse() reads: one `cat`, as every
    process the guest starts takes long on a busy TCG guest. files: pinned
    BPF array maps (bpffs, with BTF) read last, "key: value" per line."""
    cat = ["/proc/uptime"]
    for ifn in ifnames:
        cat += [f"/sys/class/net/{ifn}/statistics/{f}" for f in IF_FIELDS]
    return "exec cat " + " ".join(cat + ["/proc/stat", "/proc/net/snmp"] +
                                  list(files))


def parse_snmp_tcp(text):
    """The "Tcp:" counters of /proc/net/snmp (header line, value line) as
    a dict: InSegs, OutSegs, RetransSegs, ..."""
    tcp = [x.split()[1:] for x in text.splitlines() if x.startswith("Tcp:")]
    if len(tcp) < 2:
        return {}
    return {k: int(v) for k, v in zip(tcp[0], tcp[1])
            if re.fullmatch(r"-?\d+", v)}


def guest_parse(out, ifnames):
    lines = out.splitlines()
    res = {"uptime": float(lines[0].split()[0]), "if": {}}
    vals = iter(lines[1:1 + len(ifnames) * len(IF_FIELDS)])
    for ifn in ifnames:
        res["if"][ifn] = {f: int(next(vals)) for f in IF_FIELDS}
    res["stat"] = parse_stat_cpu(next(x for x in lines if
                                      x.startswith("cpu ")))
    res["snmp"] = parse_snmp_tcp(out)
    res["bpf"] = parse_bpf_map(out)
    return res


# What a pinned BPF map prints, before its "key: value" lines
BPF_MAP_HDR = "# WARNING!! The output format will change"


def parse_bpf_map(out):
    """{key: value} of the first pinned BPF array map in out (keys and
    values integers), or None if out has none."""
    lines = out.splitlines()
    if BPF_MAP_HDR not in lines:
        return None
    res = {}
    for line in lines[lines.index(BPF_MAP_HDR) + 1:]:
        m = re.fullmatch(r"(\d+): (\d+)", line.strip())
        if not m:
            break
        res[int(m.group(1))] = int(m.group(2))
    return res


# Per-connection counters of `ss -ti` that window() uses; the *_ms ones
# are tcp_info's busy, rwnd_limited and sndbuf_limited times: how long the
# sender had data in flight, and of that how long the receiver's window
# or the send buffer held it back.
SS_KEYS = ("bytes_acked", "bytes_received", "bytes_retrans", "bytes_sent",
           "busy_ms", "rwnd_limited_ms", "sndbuf_limited_ms")


def parse_ss(out):
    """`ss -tinH` output -> {"local peer": {bytes_acked: n, ...}}; counters
    the kernel reports as 0 are not printed by ss and read as 0."""
    conns, cur = {}, None
    for line in out.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            f = line.split()
            # Recv-Q Send-Q Local Peer (no State column with a state filter)
            cur = conns.setdefault(" ".join(f[2:4]) if len(f) >= 4 else
                                   line.strip(), dict.fromkeys(SS_KEYS, 0))
        elif cur is not None:
            for k, v in re.findall(r"\b(bytes_\w+):(\d+)", line):
                if k in cur:
                    cur[k] = int(v)
            for k, v in re.findall(r"\b(busy|\w+_limited):(\d+)ms", line):
                if k + "_ms" in cur:
                    cur[k + "_ms"] = int(v)
    return conns


def ns_tcp(vm, n, port):
    """TCP counters of peer namespace n: its /proc/net/snmp "Tcp:" line and
    `ss -ti` of its connections from or to port. One process, on the host:
    these are read at the same moments as the tap counters."""
    flt = f"( sport = :{port} or dport = :{port} )"
    out = subprocess.run(
        ["ip", "netns", "exec", vm.netns(n), "sh", "-c",
         "cat /proc/net/snmp; echo ===; "
         f"exec ss -tinH state established '{flt}'"],
        capture_output=True, text=True, check=True).stdout
    snmp, _, ss = out.partition("===\n")
    return {"snmp": parse_snmp_tcp(snmp), "conns": parse_ss(ss)}


def xdp_driver_stats(out):
    """The XDP counters in `ethtool -S` output of either driver, summed
    over queues: vx3's rx<q>_xdp_* and xdp<q>_* (its XDP ring) become
    rx_xdp_* and xdp_*; vmxnet3's per-queue "xdp drops" etc. xdp_drops."""
    res = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\w ]*xdp[\w ]*):\s+(\d+)\s*$", line)
        if not m:
            continue
        name = re.sub(r"^(rx|xdp)\d+_", r"\1_", m.group(1).strip())
        name = re.sub(r"\s+", "_", name)
        res[name] = res.get(name, 0) + int(m.group(2))
    return res


def parse_ethtool_stats(out):
    """`ethtool -S` output as a dict of counters; a name that occurs more
    than once (vmxnet3 repeats its per-queue names) is summed."""
    res = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\w\[\]:. -]+):\s+(\d+)\s*$", line)
        if m:
            k = m.group(1).strip()
            res[k] = res.get(k, 0) + int(m.group(2))
    return res


class Sampler:
    """Takes the A/B snapshots of one window.

    ifnames: guest interfaces whose counters are read; taps: peer NICs
    whose tap counters are read; ethtool: guest interface whose `ethtool
    -S` counters are read too (after the timed `cat`); files: pinned BPF
    maps read in the `cat` (an XDP program's counters).
    """

    def __init__(self, vm, ifnames, taps=(1,), ethtool=None, tcp_port=None,
                 files=()):
        self.vm = vm
        self.ifnames = ifnames
        self.taps = taps
        # TCP counters of peer namespace 1 (iperf's end there) on this port
        self.tcp_port = tcp_port
        self.gen_pids = []
        self._gcmd = guest_cmd(ifnames, files)
        if ethtool:
            self._gcmd = (self._gcmd[len("exec "):] +
                          f"; echo ===; ethtool -S {ethtool}")

    def _host(self):
        vm = self.vm
        return {"t": time.monotonic(), "thr": vm.thread_cpu(),
                "tio": thread_io(vm.proc.pid),
                "hstat": host_stat(),
                "gen": sum(proc_tree_cpu(p) for p in self.gen_pids),
                "self": proc_cpu(os.getpid()), "load": loadavg(),
                "taps": {n: tap_stats(vm, n) for n in self.taps},
                "tcp": ns_tcp(vm, 1, self.tcp_port) if self.tcp_port
                else None}

    def snap(self):
        """One snapshot: host counters are read before and after the guest
        command (which takes a while on a busy TCG guest) and averaged."""
        h0 = self._host()
        out = self.vm.check(self._gcmd, timeout=120)
        s = _mid(h0, self._host())
        out, _, eth = out.partition("===\n")
        s["guest"] = guest_parse(out, self.ifnames)
        s["ethtool"] = parse_ethtool_stats(eth)
        return s


def _mid(a, b):
    """Element-wise mean of two equally shaped dicts of numbers."""
    if isinstance(a, dict):
        return {k: _mid(v, b.get(k, v)) for k, v in a.items()}
    if isinstance(a, (int, float)):
        return (a + b) / 2
    return a


def _thr_delta(a, b, pred):
    return sum(v - a.get(k, 0.0) for k, v in b.items() if pred(k))


def is_vcpu(name):
    return name.startswith("CPU ")


def is_io(name):
    # The main loop thread (named after the binary, truncated to 15
    # characters) and any iothreads ("IO <id>").
    return name.startswith("qemu-system") or name.startswith("IO ")


def window(a, b, smp, ifns):
    """Numbers of the window between snapshots a and b.

    Counters of guest interface ifns[0] are g_<name>, of ifns[1] g2_<name>.
    """
    wall = b["t"] - a["t"]
    ga, gb = a["guest"], b["guest"]
    gwall = gb["uptime"] - ga["uptime"]
    gst = {k: gb["stat"][k] - ga["stat"][k] for k in STAT_FIELDS}
    gjif = sum(gst.values()) / USER_HZ
    gbusy = sum(gst[k] for k in BUSY_FIELDS) / USER_HZ
    hst = {k: b["hstat"][k] - a["hstat"][k] for k in STAT_FIELDS}
    hbusy = sum(hst[k] for k in BUSY_FIELDS) / USER_HZ
    vcpu = _thr_delta(a["thr"], b["thr"], is_vcpu)
    io = _thr_delta(a["thr"], b["thr"], is_io)
    qemu = _thr_delta(a["thr"], b["thr"], lambda k: True)
    gen = b["gen"] - a["gen"]
    tio = {}
    for name, chars in b["tio"].items():
        kind = "vcpu" if is_vcpu(name) else "io" if is_io(name) else "other"
        for k, v in chars.items():
            key = f"{kind}_{k}"
            tio[key] = tio.get(key, 0) + v - a["tio"].get(name, {}).get(k, 0)
    own = qemu + gen + (b["self"] - a["self"])
    w = {"wall_s": wall, "guest_wall_s": gwall,
         "vcpu_s": vcpu, "io_s": io, "qemu_other_s": qemu - vcpu - io,
         "gen_s": gen, "gen_cores": gen / wall,
         "host_busy_cores": hbusy / wall,
         "other_cores": max(0.0, hbusy - own) / wall,
         "load1": max(a["load"], b["load"]),
         "guest_ticks_s": gjif, "guest_busy_s": gbusy,
         "guest_tick_ratio": gjif / (gwall * smp) if gwall > 0 else 0.0,
         "guest_busy_vs_vcpu": gbusy / vcpu if vcpu > 0 else 0.0}
    for kind in ("io", "vcpu", "other"):
        for k in ("rchar", "wchar"):
            w[f"{kind}_{k}"] = tio.get(f"{kind}_{k}", 0)
    for i, ifn in enumerate(ifns):
        pre = "g_" if i == 0 else f"g{i + 1}_"
        for k in IF_FIELDS:
            w[pre + k] = gb["if"][ifn][k] - ga["if"][ifn][k]
        # Frames the NIC lost: vx3 counts the device's "no RX buffer
        # posted" drops as rx_missed_errors, and its own in rx_dropped
        w[pre + "rx_lost"] = w[pre + "rx_dropped"] + \
            w[pre + "rx_missed_errors"]
    # vmxnet3 keeps them out of its netdev stats: its `ethtool -S` "pkts rx
    # OOB" (per RX queue) of the interface the sampler reads it for
    ea, eb = a.get("ethtool") or {}, b.get("ethtool") or {}
    if "pkts rx OOB" in eb:
        w["g_rx_lost"] += eb["pkts rx OOB"] - ea.get("pkts rx OOB", 0)
    # The XDP programs' map vx3_cnt: key 0 packets, 1 bytes; key 3 the
    # frames an AF_XDP socket of vx3-xsk's bench mode handled
    if ga.get("bpf") is not None and gb.get("bpf") is not None:
        for key, name in ((0, "prog_packets"), (1, "prog_bytes"),
                          (3, "xsk_packets")):
            w[name] = gb["bpf"].get(key, 0) - ga["bpf"].get(key, 0)
    for n, ta in a["taps"].items():
        tb = b["taps"][n]
        for d in ("rx", "tx"):
            for k in ("packets", "bytes", "dropped"):
                w[f"tap{n}_{d}_{k}"] = tb[d][k] - ta[d][k]
    # TCP: guest /proc/net/snmp (g_tcp_*) and, if sampled, peer 1's
    # namespace (p_tcp_*) and its connections' byte counters (p_*): a
    # connection that appeared during the window counts from 0.
    sa, sb = ga.get("snmp", {}), gb.get("snmp", {})
    for k in ("InSegs", "OutSegs", "RetransSegs"):
        if k in sa and k in sb:
            w[f"g_tcp_{_snake(k)}"] = sb[k] - sa[k]
    if a.get("tcp") and b.get("tcp"):
        pa, pb = a["tcp"]["snmp"], b["tcp"]["snmp"]
        for k in ("InSegs", "OutSegs", "RetransSegs"):
            if k in pa and k in pb:
                w[f"p_tcp_{_snake(k)}"] = pb[k] - pa[k]
        ca, cb = a["tcp"]["conns"], b["tcp"]["conns"]
        w["p_conns"] = len(cb)
        for k in SS_KEYS:
            w[f"p_{k}"] = sum(v[k] - ca.get(c, {}).get(k, 0)
                              for c, v in cb.items())
    return w


def _snake(name):
    """InSegs -> in_segs."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def summarize(vals):
    """(median, min, max) of the finite values, or None if there are none."""
    v = [x for x in vals if x is not None and x == x]
    if not v:
        return None
    return statistics.median(v), min(v), max(v)


def parse_mpstat(out):
    """The "Average: all" line of `mpstat 1 N` output as (line, {col: val}).

    The column names come from the first header line ("<time> CPU %usr
    ... %idle").
    """
    header = None
    for line in out.splitlines():
        f = line.split()
        if header is None and "CPU" in f and "%idle" in f:
            header = f[f.index("CPU") + 1:]
        elif header and len(f) == len(header) + 2 and f[:2] == ["Average:",
                                                                 "all"]:
            return line.strip(), dict(zip(header, map(float, f[2:])))
    return None, {}


def parse_mpstat_cpus(out, col):
    """Column col of the per-CPU "Average:" lines of `mpstat -P ALL`
    output: [(cpu, value)]."""
    header, res = None, []
    for line in out.splitlines():
        f = line.split()
        if header is None and "CPU" in f and col in f:
            header = f[f.index("CPU") + 1:]
        elif (header and len(f) == len(header) + 2 and f[0] == "Average:"
              and f[1].isdigit()):
            res.append((int(f[1]), float(f[2 + header.index(col)])))
    return res


def iperf_rate(out):
    """iperf 2 `-y C` client output -> (bytes, Gbit/s) summed over streams.

    iperf 2.1.8 prints no sum line in CSV mode; each stream reports its
    bytes and interval, so the rate is total bytes over the longest
    stream interval, which is how iperf computes its [SUM] line.
    """
    total, end = 0, 0.0
    per_id = {}
    for line in out.splitlines():
        f = line.strip().split(",")
        if len(f) < 9 or not f[7].isdigit():
            continue
        per_id[f[5]] = (int(f[7]), float(f[6].split("-")[1]))
    for nbytes, t in per_id.values():
        total += nbytes
        end = max(end, t)
    return total, (total * 8 / end / 1e9 if end > 0 else 0.0)
