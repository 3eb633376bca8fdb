# SPDX-License-Identifier: GPL-2.0
"""Tables, CSV, Markdown and the gnuplot chart of a benchmark run.

Every number is a median over the repetitions with [min-max]; ratios are
computed per repetition (cells of one repetition ran back to back) and
then summarised the same way.
"""

import csv
import os
import subprocess

from measure import summarize

RX_CELLS = (("copy", "vx3 copy"), ("bskb", "vx3 build_skb"),
            ("vmxnet3", "vmxnet3"))
TX_CELLS = (("vx3", "vx3"), ("vmxnet3", "vmxnet3"))
RSS_CELLS = (("vx3", "vx3"), ("vmxnet3", "vmxnet3"))
FWD_CELLS = (("vx3", "vx3 (copybreak 256)"), ("bskb", "vx3 build_skb"),
             ("vmxnet3", "vmxnet3"))
# XDP cells: driver x action (row key xdp_act)
XDP_CELLS = (("vx3", "vx3"), ("vmxnet3", "vmxnet3"))
XDP_ACTS = (("drop", "XDP_DROP"), ("tx", "XDP_TX"),
            ("redirect", "XDP_REDIRECT"))
# AF_XDP cells (row key xsk_act): socket on queue 0 of NIC 1
XSK_CELLS = (("vx3-zc", "vx3 zero-copy"), ("vx3-copy", "vx3 copy"),
             ("vmxnet3-copy", "vmxnet3 copy"))
XSK_PATCHED = ("vmxnet3p-copy", "vmxnet3 patched copy")
XSK_ACTS = ("rxdrop", "txonly", "l2fwd")
# The fourth row, when the run has it (args.patched_ko): the in-tree
# vmxnet3 with scripts/vmxnet3-series/, one cell "vmxnet3p" in every
# experiment (and in each XDP action)
PATCHED = ("vmxnet3p", "vmxnet3 patched")
# The stack forwarding cell each driver's XDP cells are compared with:
# vx3 as shipped (rx-copybreak 0, build_skb), vmxnet3, vmxnet3 patched
XDP_FWD_REF = {"vx3": "bskb", "vmxnet3": "vmxnet3", "vmxnet3p": "vmxnet3p"}
MPSTAT_COLS = ("usr", "nice", "sys", "iowait", "irq", "soft", "steal",
               "guest", "gnice", "idle")
# Bar colours: vx3 copy orange, build_skb blue, vx3 defaults green, the
# in-tree reference grey, the patched in-tree driver pink.
COLOURS = {"copy": "#e69f00", "bskb": "#0072b2", "vx3": "#009e73",
           "vmxnet3": "#999999", "vmxnet3p": "#cc79a7",
           "vx3-zc": "#009e73", "vx3-copy": "#e69f00",
           "vmxnet3-copy": "#999999", "vmxnet3p-copy": "#cc79a7"}


def patched(args):
    """Whether the run has the fourth row (bench.py --patched)."""
    return bool(getattr(args, "patched_ko", None))


def cells_of(cells, args):
    """An experiment's cells, with the patched vmxnet3's if the run has
    it; only the two vmxnet3 cells with bench.py --vmxnet3-only."""
    out = cells + ((PATCHED,) if patched(args) else ())
    if getattr(args, "vmxnet3_only", False):
        out = tuple(c for c in out if c[0] in ("vmxnet3", PATCHED[0]))
    return out


def rows_of(rows, **kw):
    return [r for r in rows if all(r.get(k) == v for k, v in kw.items())]


def stat(rows, key):
    return summarize([r.get(key) for r in rows])


def fmt(s, nd=2, width=0):
    """'med [min-max]' (or just 'med' for one value)."""
    if s is None:
        txt = "-"
    elif s[1] == s[2]:
        txt = f"{s[0]:.{nd}f}"
    else:
        txt = f"{s[0]:.{nd}f} [{s[1]:.{nd}f}-{s[2]:.{nd}f}]"
    return txt.ljust(width) if width else txt


def ratio_stat(rows, key, num, den, **sel):
    """Per-repetition ratio key(num cell) / key(den cell), summarised."""
    return ratio_sel(rows, key, dict(sel, cell=num), key, dict(sel, cell=den))


def ratio_sel(rows, key_num, sel_num, key_den, sel_den):
    """Per-repetition ratio key_num of the row selected by sel_num over
    key_den of the one selected by sel_den (cells of two experiments run
    in the same repetition), summarised."""
    vals = []
    for rep in sorted({r["rep"] for r in rows}):
        a = rows_of(rows, rep=rep, **sel_num)
        b = rows_of(rows, rep=rep, **sel_den)
        if a and b and a[0].get(key_num) and b[0].get(key_den):
            vals.append(a[0][key_num] / b[0][key_den])
    return summarize(vals)


def busy_mark(rows):
    n = sum(r.get("busy", 0) for r in rows)
    return f" *{n}" if n else ""


def mpstat_line(rows):
    cols = []
    for c in MPSTAT_COLS:
        s = stat(rows, "mp_" + c)
        cols.append(f"{s[0]:8.2f}" if s else "       -")
    return "Average:     all" + "".join(cols)


MPSTAT_HDR = ("Average:     CPU" +
              "".join(f"{'%' + c:>8}" for c in MPSTAT_COLS))


def columns(lines, indent="  ", gap=2):
    """Align a table: lines are lists of cells; the first cell is the row
    label. Every column is as wide as its widest cell."""
    width = [0] * max(len(x) for x in lines)
    for x in lines:
        for i, c in enumerate(x):
            width[i] = max(width[i], len(c))
    return [(indent + "".join(c.ljust(width[i] + gap)
                              for i, c in enumerate(x))).rstrip()
            for x in lines]


def mb(s):
    return None if s is None else tuple(x / 1e6 for x in s)


# The TCP cells' columns: (header, key, decimals, scale). The first table
# is what a cell is judged by: throughput and cost on the tap and of the
# goodput side by side, and the sender's retransmissions; the second the
# other costs and the retransmissions in absolute numbers.
TCP_MAIN = (("Gbit/s tap", "gbps", 3, None),
            ("goodput Gbit/s", "good_gbps", 3, None),
            ("iperf Gbit/s", "iperf_gbps", 3, None),
            ("vCPU-s/GB tap", "vcpu_s_per_gb", 2, None),
            ("vCPU-s/GB goodput", "vcpu_s_per_gb_good", 2, None),
            ("retrans %", "retrans_pct", 3, None))
TCP_MORE = (("IO-s/GB tap", "io_s_per_gb", 2, None),
            ("IO-s/GB goodput", "io_s_per_gb_good", 2, None),
            ("soft-s/GB tap", "soft_s_per_gb", 2, None),
            ("%soft", "mp_soft", 2, None),
            ("retrans segs", "snd_retrans_segs", 0, None),
            ("guest NIC lost", "g_rx_lost", 0, None),
            ("tap dropped", "tap1_tx_dropped", 0, None),
            ("retrans MB", "snd_retrans_bytes", 2, mb))


def tcp_tables(rows, cells, sel, by="cell"):
    """The two tables of a TCP experiment for the cells [(cell, label)]
    (cell: the rows' value of by)."""
    out = []
    for cols, extra in ((TCP_MAIN, True), (TCP_MORE, False)):
        lines = [[""] + [h for h, _, _, _ in cols]]
        for cell, label in cells:
            rs = rows_of(rows, **{by: cell}, **sel)
            line = [label]
            for _, key, nd, scale in cols:
                s = stat(rs, key)
                line.append(fmt(scale(s) if scale else s, nd))
            if extra:
                line[-1] += busy_mark(rs)
            lines.append(line)
        out += columns(lines)
    return out


def ratio_lines(rows, pairs, **sel):
    """Per-repetition ratios of cost and throughput, tap and goodput."""
    lines = []
    for num, den, what in pairs:
        if not (rows_of(rows, cell=num, **sel) and
                rows_of(rows, cell=den, **sel)):
            continue
        line = [what]
        for key, name in (("vcpu_s_per_gb", "vCPU-s/GB tap"),
                          ("vcpu_s_per_gb_good", "goodput"),
                          ("gbps", "Gbit/s tap"),
                          ("good_gbps", "goodput")):
            r = ratio_stat(rows, key, num, den, **sel)
            line.append(f"{name} {fmt(r, 2)}")
        lines.append(line)
    return columns(lines)


# Ratio lines of the patched vmxnet3: against the stock driver, and vx3's
# default path (the cell vx3 is compared with vmxnet3 by) against it
def patched_pairs(vx3, what):
    return (("vmxnet3p", "vmxnet3", "vmxnet3 patched / vmxnet3"),
            (vx3, "vmxnet3p", f"{what} / vmxnet3 patched"))


def rx_section(rows, par, secs, reps, args):
    cells = cells_of(RX_CELLS, args)
    out = [f"Experiment 1: receive, peer -> guest: iperf -c <guest> -t {secs}"
           f" -P {par} ({secs} s windows, {reps} reps); TCP sender: peer 1"]
    for lro in (0, 1):
        out.append(f" lro {'on' if lro else 'off'} (ethtool -K DEV lro "
                   f"{'on' if lro else 'off'}: the device's aggregation)")
        sel = {"exp": "rx", "par": par, "lro": lro}
        out += tcp_tables(rows, cells, sel)
        mp = [f"  {label:19}"
              f"{mpstat_line(rows_of(rows, cell=cell, **sel))}"
              for cell, label in cells]
        out.append(f"  guest mpstat, median per column:\n  {'':19}"
                   f"{MPSTAT_HDR}")
        out += mp
        pairs = (("bskb", "copy", "build_skb / copy"),
                 ("bskb", "vmxnet3", "vx3 build_skb / vmxnet3"),
                 ("copy", "vmxnet3", "vx3 copy / vmxnet3"))
        if patched(args):
            pairs += patched_pairs("bskb", "vx3 build_skb")
        out += ratio_lines(rows, pairs, **sel)
    return out


def tx_section(rows, par, secs, reps, args):
    out = [f"Experiment 3: transmit, guest -> peer: iperf -c <peer> -t {secs}"
           f" -P {par} ({secs} s windows, {reps} reps); TCP sender: the "
           "guest"]
    out += tcp_tables(rows, cells_of(TX_CELLS, args), {"exp": "tx"})
    pairs = (("vx3", "vmxnet3", "vx3 / vmxnet3"),)
    if patched(args):
        pairs += patched_pairs("vx3", "vx3")
    out += ratio_lines(rows, pairs, exp="tx")
    return out


def rss_cells(rows):
    """The multi-flow cells run: [((driver, queues), label)], vx3 first,
    by queue count."""
    cells = {(r["cell"], r["queues"]): r["label"]
             for r in rows_of(rows, exp="rss")}
    return sorted(cells.items(),
                  key=lambda c: (c[0][0] != "vx3", c[0][0], c[0][1]))


def rss_section(rows, par, secs, reps, args):
    out = [f"Experiment 5: multi-flow receive over RSS queues, peer -> "
           f"guest: iperf -c <guest> -t {secs} -P {par}, LRO on, on the rig "
           f"QEMU's RSS model ({secs} s windows, {reps} reps, -smp "
           f"{args.smp}); vx3: ethtool -L combined N"]
    rs = rows_of(rows, exp="rss")
    for r in rs:
        r["rss_cell"] = f"{r['cell']}:{r['queues']}"
    cells = [(f"{d}:{q}", label) for (d, q), label in rss_cells(rows)]
    out += tcp_tables(rows, cells, {"exp": "rss"}, by="rss_cell")
    out.append("  load split per repetition: IRQs per queue vector (share "
               "of the NIC's RX vectors), CPU-s per vCPU thread, guest "
               "%soft per CPU")
    for cell, label in cells:
        for r in sorted(rows_of(rs, rss_cell=cell), key=lambda r: r["rep"]):
            out.append(f"  {label:14} rep {r['rep']}: IRQs {r['irq_split']}"
                       f"; vCPU-s {r['vcpu_split']}; %soft "
                       f"{r['soft_split']}")
    return out


def kpps(s):
    return None if s is None else tuple(x / 1e3 for x in s)


def fwd_section(rows, secs, reps, args):
    out = [f"Experiment 2: forwarding 64-byte UDP frames peer 1 -> guest -> "
           f"peer 2, trafgen ({secs} s windows, {reps} reps)",
           f"  {'':21}{'offered kpps':22}{'to QEMU kpps':20}"
           f"{'guest rx kpps':20}{'forwarded kpps':20}{'% fwd':20}"
           f"{'vCPU-s/Mpkt':22}{'IO-s/Mpkt':16}gen cores"]
    for cell, label in cells_of(FWD_CELLS, args):
        rs = rows_of(rows, exp="fwd", cell=cell)
        out.append(f"  {label:21}{fmt(kpps(stat(rs, 'offered_pps')), 1, 22)}"
                   f"{fmt(kpps(stat(rs, 'to_qemu_pps')), 1, 20)}"
                   f"{fmt(kpps(stat(rs, 'guest_rx_pps')), 1, 20)}"
                   f"{fmt(kpps(stat(rs, 'fwd_pps')), 2, 20)}"
                   f"{fmt(stat(rs, 'fwd_pct'), 2, 20)}"
                   f"{fmt(stat(rs, 'vcpu_s_per_mpkt'), 1, 22)}"
                   f"{fmt(stat(rs, 'io_s_per_mpkt'), 1, 16)}"
                   f"{fmt(stat(rs, 'gen_cores'), 2)}{busy_mark(rs)}")
    pairs = (("vx3", "vmxnet3", "vx3 (256) / vmxnet3"),
             ("bskb", "vmxnet3", "vx3 build_skb / vmxnet3"))
    if patched(args):
        pairs += patched_pairs("bskb", "vx3 build_skb")
    pairs = [(n, d, w) for n, d, w in pairs
             if rows_of(rows, exp="fwd", cell=n) and
             rows_of(rows, exp="fwd", cell=d)]
    width = max([26] + [len(what) for _, _, what in pairs])
    for num, den, what in pairs:
        rate = ratio_stat(rows, "fwd_pps", num, den, exp="fwd")
        cost = ratio_stat(rows, "vcpu_s_per_mpkt", num, den, exp="fwd")
        out.append(f"  {what:{width}} forwarded pps {fmt(rate, 2, 18)} "
                   f"vCPU-s/Mpkt {fmt(cost, 2)}")
    return out


def xdp_section(rows, secs, reps, args):
    """Experiment 4: XDP_DROP, XDP_TX, XDP_REDIRECT per driver, with the
    stack forwarding cells of experiment 2 (same run) beside them."""
    xdp_cells = cells_of(XDP_CELLS, args)
    out = [f"Experiment 4: XDP on guest NIC 1, 64-byte UDP frames from peer "
           f"1 (trafgen) ({secs} s windows, {reps} reps)",
           "  done: XDP_DROP the program's count (its map, read in the "
           "guest), XDP_TX frames back at peer 1's tap, XDP_REDIRECT",
           "  (NIC 1 -> devmap -> NIC 2) and stack forwarding (experiment "
           "2) frames at peer 2's tap; vCPU-s/Mpkt per frame done,",
           "  vCPU-s/Mprog per frame the program ran on (XDP_TX and "
           "XDP_REDIRECT frames can still be dropped after the verdict)"]
    lines = [["", "offered kpps", "to QEMU kpps", "program kpps",
              "done kpps", "% offered", "vCPU-s/Mpkt", "IO-s/Mpkt",
              "vCPU-s/Mprog", "gen cores"]]
    for act, name in XDP_ACTS:
        for cell, label in xdp_cells:
            rs = rows_of(rows, exp="xdp", cell=cell, xdp_act=act)
            lines.append([f"{name} {label}",
                          fmt(kpps(stat(rs, "offered_pps")), 1),
                          fmt(kpps(stat(rs, "to_qemu_pps")), 1),
                          fmt(kpps(stat(rs, "prog_pps")), 1),
                          fmt(kpps(stat(rs, "xdp_pps")), 2),
                          fmt(stat(rs, "xdp_pct"), 2),
                          fmt(stat(rs, "vcpu_s_per_mpkt"), 1),
                          fmt(stat(rs, "io_s_per_mpkt"), 1),
                          fmt(stat(rs, "vcpu_s_per_mprog"), 1),
                          fmt(stat(rs, "gen_cores"), 2) + busy_mark(rs)])
    fwd = rows_of(rows, exp="fwd")
    for cell, label in cells_of(FWD_CELLS, args) if fwd else ():
        rs = rows_of(fwd, cell=cell)
        lines.append([f"stack fwd {label}",
                      fmt(kpps(stat(rs, "offered_pps")), 1),
                      fmt(kpps(stat(rs, "to_qemu_pps")), 1), "-",
                      fmt(kpps(stat(rs, "fwd_pps")), 2),
                      fmt(stat(rs, "fwd_pct"), 2),
                      fmt(stat(rs, "vcpu_s_per_mpkt"), 1),
                      fmt(stat(rs, "io_s_per_mpkt"), 1), "-",
                      fmt(stat(rs, "gen_cores"), 2) + busy_mark(rs)])
    out += columns(lines)
    labels = dict(xdp_cells)
    pairs = [("vx3", "vmxnet3")]
    if patched(args):
        pairs += [("vmxnet3p", "vmxnet3"), ("vx3", "vmxnet3p")]
    pairs = [(n, d) for n, d in pairs if n in labels and d in labels]
    for num, den in pairs:
        out.append(f"  {labels[num]} / {labels[den]} (per repetition):")
        lines = []
        for act, name in XDP_ACTS:
            sel = {"exp": "xdp", "xdp_act": act}
            lines.append([name, "done pps " + fmt(ratio_stat(
                rows, "xdp_pps", num, den, **sel), 2),
                "vCPU-s/Mpkt " + fmt(ratio_stat(
                    rows, "vcpu_s_per_mpkt", num, den, **sel), 2)])
        if fwd:
            # vx3's stack forwarding cell: build_skb, its default
            fnum, fden = XDP_FWD_REF[num], XDP_FWD_REF[den]
            lines.append(["stack fwd (build_skb)" if fnum == "bskb" else
                          "stack fwd", "done pps " + fmt(ratio_stat(
                              rows, "fwd_pps", fnum, fden, exp="fwd"), 2),
                          "vCPU-s/Mpkt " + fmt(ratio_stat(
                              rows, "vcpu_s_per_mpkt", fnum, fden,
                              exp="fwd"), 2)])
        out += columns(lines, indent="    ")
    if fwd:
        out.append("  XDP_REDIRECT / stack forwarding of the same driver "
                   "(per repetition; vx3: build_skb, its default):")
        lines = []
        for cell, label in xdp_cells:
            sel_x = {"exp": "xdp", "xdp_act": "redirect", "cell": cell}
            sel_f = {"exp": "fwd", "cell": XDP_FWD_REF[cell]}
            lines.append([label, "pps " + fmt(ratio_sel(
                rows, "xdp_pps", sel_x, "fwd_pps", sel_f), 2),
                "vCPU-s/Mpkt " + fmt(ratio_sel(
                    rows, "vcpu_s_per_mpkt", sel_x, "vcpu_s_per_mpkt",
                    sel_f), 2)])
        out += columns(lines, indent="    ")
    return out


def xsk_cells(args):
    """The AF_XDP cells of the run (the patched vmxnet3's if it has it;
    only the vmxnet3 ones with --vmxnet3-only)."""
    out = XSK_CELLS + ((XSK_PATCHED,) if patched(args) else ())
    if getattr(args, "vmxnet3_only", False):
        out = tuple(c for c in out if c[0].startswith("vmxnet3"))
    return out


def xsk_sizes(rows):
    """The AF_XDP cells' frame sizes in the run, smallest first."""
    return sorted({r["size"] for r in rows_of(rows, exp="xsk")})


def xsk_section(rows, secs, reps, args):
    """Experiment 6: AF_XDP rxdrop, txonly, l2fwd per driver and mode,
    with XDP_DROP of experiment 4 (same run) as the floor of rxdrop."""
    out = [f"Experiment 6: AF_XDP socket on queue 0 of guest NIC 1 "
           f"({secs} s windows, {reps} reps)",
           "  rxdrop: trafgen's frames into the socket, straight back to its "
           "fill ring; done: the socket's count (read in the guest);",
           "  txonly: the socket sends to peer 1; l2fwd: trafgen's frames "
           "back out to peer 1, MACs swapped; done: frames at peer 1's tap.",
           "  The socket (vx3-xsk bench) sleeps in poll() when it has "
           "nothing to do; vCPU-s/Mpkt per frame done"]
    lines = [["", "offered kpps", "to QEMU kpps", "program kpps",
              "done kpps", "vCPU-s/Mpkt", "IO-s/Mpkt", "%soft", "%usr",
              "gen cores"]]
    def line(name, rs, done):
        return [name, fmt(kpps(stat(rs, "offered_pps")), 1),
                fmt(kpps(stat(rs, "to_qemu_pps")), 1),
                fmt(kpps(stat(rs, "prog_pps")), 1),
                fmt(kpps(stat(rs, done)), 2),
                fmt(stat(rs, "vcpu_s_per_mpkt"), 1),
                fmt(stat(rs, "io_s_per_mpkt"), 1),
                fmt(stat(rs, "mp_soft"), 1), fmt(stat(rs, "mp_usr"), 1),
                fmt(stat(rs, "gen_cores"), 2) + busy_mark(rs)]
    cells = xsk_cells(args)
    sizes = xsk_sizes(rows)
    for act, size in ((a, z) for z in sizes for a in XSK_ACTS):
        for cell, label in cells:
            lines.append(line(f"{act} {size} B {label}", rows_of(
                rows, exp="xsk", cell=cell, xsk_act=act, size=size),
                "xsk_pps"))
    for cell, label in cells_of(XDP_CELLS, args):
        rs = rows_of(rows, exp="xdp", cell=cell, xdp_act="drop")
        if rs:
            lines.append(line(f"XDP_DROP 64 B {label}", rs, "xdp_pps"))
    out += columns(lines)
    labels = dict(cells)
    pairs = [(n, d) for n, d in (("vx3-zc", "vmxnet3-copy"),
                                 ("vx3-zc", "vx3-copy"),
                                 ("vx3-copy", "vmxnet3-copy"))
             if n in labels and d in labels]
    if pairs:
        out.append("  Per repetition (done pps, vCPU-s/Mpkt):")
    lines = []
    for num, den in pairs:
        for act, size in ((a, z) for z in sizes for a in XSK_ACTS):
            sel = {"exp": "xsk", "xsk_act": act, "size": size}
            lines.append([f"{act} {size} B {labels[num]} / {labels[den]}",
                          "done pps " + fmt(ratio_stat(
                              rows, "xsk_pps", num, den, **sel), 2),
                          "vCPU-s/Mpkt " + fmt(ratio_stat(
                              rows, "vcpu_s_per_mpkt", num, den, **sel),
                              2)])
    out += columns(lines, indent="    ")
    return out


def busy_of(rows, sels):
    """(busy windows, windows) among the rows of the selections."""
    sel_rows = [r for sel in sels for r in rows_of(rows, **sel)]
    return sum(r.get("busy", 0) for r in sel_rows), len(sel_rows)


def targets(rows, par, args):
    """The project's targets, as information (never asserted). A line
    says how many of the windows it compares were flagged busy."""
    out = ["Targets (informational; medians of per-repetition ratios; "
           "busy: windows with foreign host load):"]

    def line(what, s, op, lim, sels):
        if s is None:
            # --vmxnet3-only: no vx3 cell, no line
            if not getattr(args, "vmxnet3_only", False):
                out.append(f"  {what:62} -")
            return
        ok = s[0] <= lim if op == "<=" else s[0] >= lim
        nb, n = busy_of(rows, sels)
        out.append(f"  {what:62} {s[0]:5.2f} (target {op} {lim}) "
                   f"{'met' if ok else 'MISSED'}"
                   f"{f', {nb}/{n} windows busy' if nb else ''}")

    def ratio(what, key, num, den, op, lim, **sel):
        line(what, ratio_stat(rows, key, num, den, **sel), op, lim,
             [dict(sel, cell=num), dict(sel, cell=den)])
    # Receive targets on goodput: a retransmitted byte counts once
    sel = {"exp": "rx", "par": par}
    ratio("rx lro off: vx3 build_skb / copy, vCPU-s/GB goodput",
          "vcpu_s_per_gb_good", "bskb", "copy", "<=", 0.75, lro=0, **sel)
    for lro in (0, 1):
        g = "on" if lro else "off"
        ratio(f"rx lro {g}: vx3 build_skb / vmxnet3, vCPU-s/GB goodput",
              "vcpu_s_per_gb_good", "bskb", "vmxnet3", "<=", 0.8, lro=lro,
              **sel)
        ratio(f"rx lro {g}: vx3 build_skb / vmxnet3, goodput Gbit/s",
              "good_gbps", "bskb", "vmxnet3", ">=", 1.0, lro=lro, **sel)
    # One bulk flow (issue #28): vx3's sender retransmissions no more than
    # vmxnet3's (0.1 percentage points of noise allowed)
    p1 = {"exp": "rx", "par": 1, "lro": 0}
    r_v, r_m = (stat(rows_of(rows, cell=c, **p1), "retrans_pct")
                for c in ("bskb", "vmxnet3"))
    if r_v is not None and r_m is not None:
        line("rx -P 1 lro off: retrans %, vx3 build_skb - vmxnet3",
             (r_v[0] - r_m[0],), "<=", 0.1,
             [dict(p1, cell="bskb"), dict(p1, cell="vmxnet3")])
    # vx3 as shipped (rx-copybreak 0); the copybreak 256 cell is an A/B
    ratio("fwd 64 B: vx3 build_skb (default) / vmxnet3, forwarded pps",
          "fwd_pps", "bskb", "vmxnet3", ">=", 1.2, exp="fwd")
    # XDP (issue #28): vx3's cost per frame done against vmxnet3's, at no
    # lower rate, and XDP_REDIRECT against vx3's own stack forwarding
    for act, name, lim in (("drop", "XDP_DROP", 0.8), ("tx", "XDP_TX", 0.7),
                           ("redirect", "XDP_REDIRECT", 1.0)):
        ratio(f"xdp 64 B: {name} vx3 / vmxnet3, vCPU-s/Mpkt",
              "vcpu_s_per_mpkt", "vx3", "vmxnet3", "<=", lim, exp="xdp",
              xdp_act=act)
        ratio(f"xdp 64 B: {name} vx3 / vmxnet3, done pps",
              "xdp_pps", "vx3", "vmxnet3", ">=", 1.0, exp="xdp",
              xdp_act=act)
        if patched(args):
            ratio(f"xdp 64 B: {name} vx3 / vmxnet3 patched, vCPU-s/Mpkt",
                  "vcpu_s_per_mpkt", "vx3", "vmxnet3p", "<=", 1.0,
                  exp="xdp", xdp_act=act)
    # AF_XDP (issue #27): zero-copy rxdrop against vmxnet3's copy mode
    for size in xsk_sizes(rows):
        ratio(f"xsk rxdrop {size} B: vx3 zero-copy / vmxnet3 copy, "
              "vCPU-s/Mpkt", "vcpu_s_per_mpkt", "vx3-zc", "vmxnet3-copy",
              "<=", 0.6, exp="xsk", xsk_act="rxdrop", size=size)
        ratio(f"xsk rxdrop {size} B: vx3 zero-copy / vmxnet3 copy, done "
              "pps", "xsk_pps", "vx3-zc", "vmxnet3-copy", ">=", 1.0,
              exp="xsk", xsk_act="rxdrop", size=size)
    xsel = {"exp": "xdp", "xdp_act": "redirect", "cell": "vx3"}
    fsel = {"exp": "fwd", "cell": "bskb"}
    line("xdp 64 B: vx3 XDP_REDIRECT / vx3 stack fwd (build_skb), pps",
         ratio_sel(rows, "xdp_pps", xsel, "fwd_pps", fsel), ">=", 2.0,
         [xsel, fsel])
    if not patched(args):
        return out
    # The vmxnet3 series (issue #13): the patched driver against the stock
    # one, cost on goodput at the same or higher goodput
    for lro, lim in ((0, 0.75), (1, 0.9)):
        g = "on" if lro else "off"
        ratio(f"rx lro {g}: vmxnet3 patched / vmxnet3, vCPU-s/GB goodput",
              "vcpu_s_per_gb_good", "vmxnet3p", "vmxnet3", "<=", lim,
              lro=lro, **sel)
        ratio(f"rx lro {g}: vmxnet3 patched / vmxnet3, goodput Gbit/s",
              "good_gbps", "vmxnet3p", "vmxnet3", ">=", 1.0, lro=lro, **sel)
    ratio("fwd 64 B: vmxnet3 patched / vmxnet3, forwarded pps",
          "fwd_pps", "vmxnet3p", "vmxnet3", ">=", 1.2, exp="fwd")
    return out


def ticks_section(rows):
    s = stat(rows, "guest_tick_ratio")
    b = stat(rows, "guest_busy_vs_vcpu")
    if s is None:
        return []
    quiet = [r for r in rows if not r.get("busy")]
    busy = [r for r in rows if r.get("busy")]
    out = ["Guest tick accounting under TCG (all windows):",
           f"  guest /proc/stat ticks / (wall x vCPUs)        {fmt(s, 2)}",
           f"  guest busy ticks / host vCPU thread CPU time   {fmt(b, 2)}"]
    if busy and quiet:
        out.append(f"  ticks / (wall x vCPUs): quiet host "
                   f"{fmt(stat(quiet, 'guest_tick_ratio'), 2)}, busy host "
                   f"{fmt(stat(busy, 'guest_tick_ratio'), 2)}")
    return out


def _share(rows, key, keys):
    vals = []
    for r in rows:
        tot = sum(r.get(k, 0) for k in keys)
        if tot:
            vals.append(100.0 * r.get(key, 0) / tot)
    return summarize(vals)


def threads_section(rows):
    """Which QEMU thread moves the tap's bytes (from /proc/PID/task/*/io)."""
    out = []
    keys_r = ("io_rchar", "vcpu_rchar", "other_rchar")
    keys_w = ("io_wchar", "vcpu_wchar", "other_wchar")
    rx = rows_of(rows, exp="rx")
    if rx:
        out.append("QEMU threads: receive: main loop/iothreads did "
                   f"{fmt(_share(rx, 'io_rchar', keys_r), 1)} % of the tap "
                   "reads (device model RX runs there), "
                   f"{fmt(_share(rx, 'io_s', ('io_s', 'vcpu_s')), 1)} % of "
                   "QEMU's CPU time")
    tx = rows_of(rows, exp="tx")
    if tx:
        out.append("QEMU threads: transmit: vCPU threads did "
                   f"{fmt(_share(tx, 'vcpu_wchar', keys_w), 1)} % of the "
                   "tap writes (device model TX runs in the doorbell write)")
    return out


def text_report(rows, env, args, notes):
    par = args.parallel
    out = [f"vx3 bench {env.get('date', '')}, git {env.get('git', '?')}",
           f"{env.get('qemu', '')}, {env.get('accel', '')}, "
           f"{env.get('machine', '')}",
           f"guest kernel {env.get('guest_kernel', '?')}, "
           f"{env.get('iperf', '')}, pinning: {env.get('pin', '?')}",
           "Medians over repetitions [min-max]. Gbit/s tap: bytes through "
           "the peer's tap (retransmissions included);",
           "goodput: TCP payload the receiver got in order in the window "
           "(ss on the host: bytes_acked of peer 1's senders,",
           "bytes_received of its receivers); vCPU-s/GB: CPU time of QEMU's "
           "vCPU threads (host-measured) per GB on the tap or",
           "of goodput; retrans %: the sender's TCP RetransSegs / OutSegs "
           "over the window (/proc/net/snmp of peer 1's namespace",
           "or of the guest); IO-s/GB: QEMU main loop + iothreads; "
           "soft-s/GB: vCPU-s/GB x guest %soft/(100-%idle).",
           f"*N: N windows measured while foreign host load (neither "
           f"QEMU nor the traffic generator) exceeded "
           f"{args.busy_threshold} cores; gen cores: the generator's.",
           ""]
    if env.get("vmxnet3_patched_ko"):
        series = env.get("vmxnet3_series")
        out[3:3] = [f"vmxnet3 patched: {env['vmxnet3_patched_ko']}"
                    + (f", scripts/vmxnet3-series {series}" if series
                       else "")]
    exps = {r["exp"] for r in rows}
    if "rx" in exps:
        out += rx_section(rows, par, args.seconds, args.reps, args) + [""]
        if rows_of(rows, exp="rx", par=1) and par != 1:
            out += rx_section(rows, 1, args.p1_seconds, args.reps,
                              args) + [""]
    if "tx" in exps:
        out += tx_section(rows, par, args.tx_seconds, args.reps,
                          args) + [""]
    if "fwd" in exps:
        out += fwd_section(rows, args.fwd_seconds, args.reps, args) + [""]
    if "xdp" in exps:
        out += xdp_section(rows, args.xdp_seconds, args.reps, args) + [""]
    if "xsk" in exps:
        out += xsk_section(rows, args.xsk_seconds, args.reps, args) + [""]
    if "rss" in exps:
        out += rss_section(rows, par, args.seconds, args.reps, args) + [""]
    out += targets(rows, par, args) + [""]
    out += ticks_section(rows)
    out += threads_section(rows)
    load = stat(rows, "other_cores")
    if load:
        out.append(f"Other host load during windows (cores): {fmt(load, 2)}"
                   f"; windows flagged busy: "
                   f"{sum(r.get('busy', 0) for r in rows)}/{len(rows)}")
    out += [f"Note: {n}" for n in notes]
    return out


def missing_cells(rows, args):
    """Expected cells that produced no numbers."""
    want = []
    pars = [args.parallel] + ([1] if args.p1_seconds > 0 else [])
    # TCP cells: tap and goodput bytes, cost, the sender's segments
    tcp = ("gbps", "vcpu_s_per_gb", "good_bytes", "vcpu_s_per_gb_good",
           "snd_out_segs")
    if "rx" in args.exp:
        want += [(("rx", c, g, p), tcp) for c, _ in
                 cells_of(RX_CELLS, args) for g in (0, 1) for p in pars]
    if "tx" in args.exp:
        want += [(("tx", c, None, args.parallel), tcp)
                 for c, _ in cells_of(TX_CELLS, args)]
    if "fwd" in args.exp:
        want += [(("fwd", c, None, 1), ("fwd_pps", "vcpu_s_per_mpkt"))
                 for c, _ in cells_of(FWD_CELLS, args)]
    # XDP cells: frames done and the program's own count
    if "xdp" in args.exp:
        want += [(("xdp", c, ("xdp_act", a), 1),
                  ("xdp_pps", "vcpu_s_per_mpkt", "prog_packets"))
                 for a, _ in XDP_ACTS for c, _ in cells_of(XDP_CELLS, args)]
    # AF_XDP cells: frames done, the cost
    if "xsk" in args.exp:
        want += [(("xsk", c, ("xsk_act", a, z), 1),
                  ("xsk_pps", "vcpu_s_per_mpkt"))
                 for a in XSK_ACTS for c, _ in xsk_cells(args)
                 for z in args.xsk_sizes]
    miss = []
    # Multi-flow cells: every driver measured, with its goodput and cost
    if "rss" in args.exp:
        for drv, _ in RSS_CELLS:
            if not [r for r in rows_of(rows, exp="rss", cell=drv)
                    if all(r.get(k) for k in tcp) and r.get("mpstat")]:
                miss.append(f"rss {drv}")
    for (exp, cell, lro, par), keys in want:
        sel = {"exp": exp, "cell": cell, "par": par}
        what = ""
        if isinstance(lro, tuple):
            # (row key, value) instead of an LRO setting: the XDP action;
            # (row key, value, frame size): the AF_XDP action and size
            sel[lro[0]] = lro[1]
            what = f" {lro[1]}"
            if len(lro) > 2:
                sel["size"] = lro[2]
                what += f" {lro[2]} B"
        elif lro is not None:
            sel["lro"] = lro
            what = f" lro {lro}"
        ok = [r for r in rows_of(rows, **sel)
              if all(r.get(k) for k in keys) and r.get("mpstat")]
        if not ok:
            miss.append(f"{exp} {cell}{what} P{par}")
    return miss


def write_csv(path, rows):
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                        for k, v in r.items()})


def write_summary_csv(path, rows):
    metrics = ("gbps", "g_gbps", "iperf_gbps", "good_gbps", "vcpu_s_per_gb",
               "vcpu_s_per_gb_good", "io_s_per_gb", "io_s_per_gb_good",
               "soft_s_per_gb", "soft_s_per_gb_good", "retrans_pct",
               "snd_retrans_segs", "snd_retrans_bytes", "mp_soft", "mp_idle",
               "offered_pps", "to_qemu_pps", "prog_pps",
               "fwd_pps", "fwd_pct", "xdp_pps", "xdp_pct", "xsk_pps",
               "vcpu_s_per_mpkt", "io_s_per_mpkt", "vcpu_s_per_mprog",
               "guest_tick_ratio", "other_cores")
    keys = []
    for r in rows:
        k = (r["exp"], r.get("par"), r.get("lro", ""), r["cell"],
             r["label"])
        if k not in keys:
            keys.append(k)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["exp", "par", "lro", "cell", "label", "metric", "n",
                    "median", "min", "max"])
        for exp, par, lro, cell, label in keys:
            # label: the XDP cells of one driver share the cell name
            sel = {"exp": exp, "par": par, "cell": cell, "label": label}
            if lro != "":
                sel["lro"] = lro
            rs = rows_of(rows, **sel)
            for m in metrics:
                s = stat(rs, m)
                if s:
                    w.writerow([exp, par, lro, cell, label, m, len(rs)] +
                               [f"{x:.6g}" for x in s])


# --- chart -------------------------------------------------------------------
def _panel(path, clusters, series, title, ylabel, nd, log=False):
    """gnuplot commands for one clustered histogram with min-max bars and
    the median printed on each bar; its data goes to path.

    clusters: [(label, {cell: (med, min, max) or None})]. Cells without
    any value are left out (gnuplot refuses a series with no points);
    returns None if no cell has one. log: a logarithmic y axis, for
    clusters whose values differ by an order of magnitude.
    """
    series = [(c, lab) for c, lab in series
              if any(v.get(c) for _, v in clusters)]
    if not series:
        return None
    with open(path, "w") as f:
        for label, vals in clusters:
            cols = [f'"{label}"']
            for cell, _ in series:
                s = vals.get(cell)
                cols += ([f"{x:.6g}" for x in s] if s else ["NaN"] * 3)
            f.write(" ".join(cols) + "\n")
    n = len(series)
    gap = 1
    plots, labels = [], []
    for j, (cell, label) in enumerate(series):
        c = 2 + 3 * j
        plots.append(f"'{path}' using {c}:{c + 1}:{c + 2}"
                     + (":xtic(1)" if j == 0 else "")
                     + f" title '{label}' lc rgb '{COLOURS[cell]}'")
        off = (j - (n - 1) / 2) / (n + gap)
        labels.append(f"'{path}' using ($0+{off:.4f}):{c + 2}:"
                      f"(sprintf('%.{nd}f', ${c})) with labels offset 0,0.8 "
                      "font ',11' notitle")
    axis = ("set logscale y\nset yrange [*:*]\n" if log else
            "unset logscale y\nset yrange [0:*]\n")
    return (f"set title '{title}'\nset ylabel '{ylabel}'\n" + axis +
            "plot " + ", \\\n  ".join(plots + labels) + "\n")


def write_chart(outdir, rows, args):
    """bench.png: receive (cost, throughput), transmit, forwarding."""
    par = args.parallel
    d = os.path.join(outdir, "chart")
    os.makedirs(d, exist_ok=True)
    panels = []
    exps = {r["exp"] for r in rows}
    ref = " (grey: in-tree vmxnet3)"
    rx_cells, tx_cells, fwd_cells, xdp_cells = (
        cells_of(c, args) for c in (RX_CELLS, TX_CELLS, FWD_CELLS,
                                    XDP_CELLS))
    if patched(args):
        ref = " (grey: vmxnet3, pink: patched)"
    # TCP panels show goodput: a retransmitted byte counts once (the tap
    # based numbers are in the tables)
    if "rx" in exps:
        for key, ylabel, nd, title in (
                ("vcpu_s_per_gb_good", "guest vCPU CPU-s per GB of goodput",
                 1, f"Receive -P {par}: guest CPU per GB of TCP goodput "
                 "(lower is better)"),
                ("good_gbps", "goodput Gbit/s", 2,
                 f"Receive -P {par}: TCP goodput (higher is better)")):
            clusters = [(f"lro {'on' if g else 'off'}",
                         {c: stat(rows_of(rows, exp="rx", par=par, lro=g,
                                          cell=c), key)
                          for c, _ in rx_cells}) for g in (0, 1)]
            f = os.path.join(d, f"rx-{key}.dat")
            panels.append(_panel(f, clusters, rx_cells, title + ref, ylabel,
                                 nd))
    if "tx" in exps:
        for key, ylabel, nd, title in (
                ("vcpu_s_per_gb_good", "guest vCPU CPU-s per GB of goodput",
                 1, f"Transmit -P {par}: guest CPU per GB of TCP goodput"),
                ("good_gbps", "goodput Gbit/s", 2,
                 f"Transmit -P {par}: TCP goodput")):
            clusters = [("guest -> peer",
                         {c: stat(rows_of(rows, exp="tx", cell=c), key)
                          for c, _ in tx_cells})]
            f = os.path.join(d, f"tx-{key}.dat")
            panels.append(_panel(f, clusters, tx_cells, title, ylabel,
                                 nd))
    if "fwd" in exps:
        for key, ylabel, nd, title in (
                ("vcpu_s_per_mpkt", "guest vCPU CPU-s per Mpkt", 1,
                 "Forwarding 64 B: guest CPU per million forwarded"),
                ("fwd_pct", "% of offered frames forwarded", 1,
                 "Forwarding 64 B: % forwarded (higher is better)")):
            clusters = [("64-byte UDP",
                         {c: stat(rows_of(rows, exp="fwd", cell=c), key)
                          for c, _ in fwd_cells})]
            f = os.path.join(d, f"fwd-{key}.dat")
            panels.append(_panel(f, clusters, fwd_cells, title, ylabel,
                                 nd))
    if "rss" in exps:
        for key, ylabel, nd, title in (
                ("vcpu_s_per_gb_good", "guest vCPU CPU-s per GB of goodput",
                 1, f"Multi-flow receive -P {par} over RSS queues: guest "
                 "CPU per GB of TCP goodput"),
                ("good_gbps", "goodput Gbit/s", 2,
                 f"Multi-flow receive -P {par} over RSS queues: TCP "
                 "goodput")):
            qs = sorted({q for (_, q), _ in rss_cells(rows)})
            clusters = [(f"{q} RX queue{'s' if q > 1 else ''}",
                         {c: stat(rows_of(rows, exp="rss", cell=c,
                                          queues=q), key)
                          for c, _ in RSS_CELLS}) for q in qs]
            f = os.path.join(d, f"rss-{key}.dat")
            panels.append(_panel(f, clusters, RSS_CELLS, title + ref,
                                 ylabel, nd))
    if "xdp" in exps:
        # The XDP actions only (stack forwarding has its own panels, at
        # ten times the cost per frame); cost on a log axis: XDP_DROP
        # costs a tenth of XDP_REDIRECT
        for key, ylabel, nd, scale, log, title in (
                ("vcpu_s_per_mpkt", "guest vCPU CPU-s per Mpkt (log)", 1,
                 None, True, "XDP 64 B: guest CPU per million frames done "
                 "(lower is better)"),
                ("xdp_pps", "kpps done", 1, kpps, False,
                 "XDP 64 B: frames done per second (higher is better)")):
            def sc(v):
                return scale(v) if scale else v
            clusters = [(name, {c: sc(stat(rows_of(rows, exp="xdp", cell=c,
                                                   xdp_act=act), key))
                                for c, _ in xdp_cells})
                        for act, name in XDP_ACTS]
            f = os.path.join(d, f"xdp-{key}.dat")
            panels.append(_panel(f, clusters, xdp_cells, title + ref,
                                 ylabel, nd, log=log))
    if "xsk" in exps:
        cells = xsk_cells(args)
        for key, ylabel, nd, scale, title in (
                ("vcpu_s_per_mpkt", "guest vCPU CPU-s per Mpkt", 1, None,
                 "AF_XDP: guest CPU per million frames done (lower is "
                 "better)"),
                ("xsk_pps", "kpps done", 1, kpps,
                 "AF_XDP: frames done per second (higher is better)")):
            # "rxdrop 64": the size in bytes (with "B" the labels collide)
            clusters = [(f"{act} {z}", {c: (scale or (lambda v: v))(
                stat(rows_of(rows, exp="xsk", cell=c, xsk_act=act, size=z),
                     key)) for c, _ in cells})
                for z in xsk_sizes(rows) for act in XSK_ACTS]
            f = os.path.join(d, f"xsk-{key}.dat")
            panels.append(_panel(f, clusters, cells, title, ylabel, nd))
    panels = [p for p in panels if p]
    if not panels:
        return None
    ncol = 2
    nrow = (len(panels) + ncol - 1) // ncol
    png = os.path.join(outdir, "bench.png")
    gp = os.path.join(d, "bench.gp")
    with open(gp, "w") as f:
        f.write(f"set terminal pngcairo size 1600,{520 * nrow} "
                "font 'DejaVu Sans,12' noenhanced\n"
                f"set output '{png}'\n"
                "set style data histogram\n"
                "set style histogram errorbars gap 1 lw 1.5\n"
                "set style fill solid 0.85 border -1\n"
                "set boxwidth 0.9\nset grid ytics\n"
                "set key outside below center horizontal\n"
                "set offsets 0,0,graph 0.15,0\n"
                f"set multiplot layout {nrow},{ncol} title "
                f"'vx3 vs in-tree vmxnet3"
                f"{' and vmxnet3 patched' if patched(args) else ''}"
                ", QEMU TCG (medians, bars: "
                f"min-max of {args.reps} reps)'\n")
        for p in panels:
            f.write(p)
        f.write("unset multiplot\n")
    if os.path.exists(png):
        os.unlink(png)
    subprocess.run(["gnuplot", gp], check=True, capture_output=True)
    return png if os.path.getsize(png) > 0 else None


def markdown(text, env, args):
    cmd = "make bench"
    extra = []
    for opt, make_var, default in (("reps", "REPS", 3),
                                   ("seconds", "SECONDS", 20),
                                   ("parallel", "PAR", 32)):
        v = getattr(args, opt)
        if v != default:
            extra.append(f"{make_var}={v}")
    if extra and not args.smoke:
        cmd += " " + " ".join(extra)
    md = ["# vx3 performance", "",
          "Produced by `make bench` (tools/testing/selftests/drivers/net/vx3/"
          "bench/bench.py). Reproduce with:", "",
          "```", f"{cmd}", f"# runs {env.get('command', 'bench.py')}",
          "```", "",
          "Environment:", ""]
    md += [f"- {k}: {v}" for k, v in env.items() if k != "command"]
    md += ["", "```"] + text + ["```", "",
                                "![chart](bench.png)", "",
                                "Method: see the README next to bench.py "
                                "(cost = QEMU vCPU thread CPU time measured "
                                "on the host per GB on the tap or of TCP "
                                "goodput, or per million packets;"
                                " guest tick accounting under TCG loses "
                                "ticks when the host is busy, so guest "
                                "mpstat shares are only indicative)."]
    return md


def write_all(outdir, rows, env, args, notes):
    """Write everything; print the text report. Returns missing cells."""
    text = text_report(rows, env, args, notes)
    print("\n".join(text), flush=True)
    write_csv(os.path.join(outdir, "results.csv"), rows)
    write_summary_csv(os.path.join(outdir, "summary.csv"), rows)
    with open(os.path.join(outdir, "env.txt"), "w") as f:
        f.writelines(f"{k}: {v}\n" for k, v in env.items())
    with open(os.path.join(outdir, "results.txt"), "w") as f:
        f.write("\n".join(text) + "\n")
    missing = missing_cells(rows, args)
    try:
        png = write_chart(outdir, rows, args)
    except (OSError, subprocess.CalledProcessError) as e:
        png = None
        print(f"# chart failed: {e}")
    if png is None:
        missing.append("chart bench.png not written")
    with open(os.path.join(outdir, "performance.md"), "w") as f:
        f.write("\n".join(markdown(text, env, args)) + "\n")
    return missing
