# SPDX-License-Identifier: GPL-2.0
"""7.3's RSS selftests (drivers/net/hw/rss_*.py, toeplitz.py) on the rig's
QEMU, whose vmxnet3 model does RSS (QEMU_PATCHED; test_rss.py says how),
through test_upstream.py's harness: the extracted selftests, the host's /
in the guest over virtio-9p, NIC 2 in the remote namespace vx3rem, one
case per script, judged as there. On Debian's QEMU every frame lands on
RX queue 0, so the scripts that check where a flow arrives cannot pass
there: they run here, where the device hashes and spreads.

A script that needs RSS skips with the device's answer if ethtool -x is
refused (a driver without RSS). The scripts read the RSS configuration
with ethtool --json -x [context N] and set flow hash fields with
ethtool -N rx-flow-hash (the IPv6 flow label too) and
--disable-netlink, which upstream-bin/ethtool answers where Debian 12's
ethtool 6.1 cannot.

The scripts assume more than the interface offers in places. A failed
subcase that died of exactly one such limit (_limit(): one exception, no
failed check besides, or rss_ctx's one timing check) is a skip with the
reason; any other failure fails the case:
- one RSS context: creating another is refused (EOPNOTSUPP);
- the hash types: TCP over addresses and optionally ports, every other
  IP packet over its addresses; the driver refuses another field set
  (vx3 with an extack saying so);
- channels: vx3 has at most 4 combined channels (one XDP TX queue each
  beside the stack's, 8 TX queues in all); rss_ctx's
  test_rss_queue_reconfigure sets 5;
- a key change: the device reads the key at activation only, so vx3
  re-activates it (same queues, from its device work, just after the
  request returns); under TCG that can take longer than
  test_hitless_key_update's 0.15 s (its other checks, no drops and no
  carrier change, must pass).

toeplitz
    hw/toeplitz.py: TCP and UDP over IPv4 and IPv6 from the remote to
    NETIF; its receiver (the YNL C program hw/toeplitz, which
    test_upstream.py's BUILD makes) computes every packet's Toeplitz hash
    from the device's key (ethtool netlink RSS_GET) and compares it with
    the hash the packet came with (the device's, through the driver's
    skb hash). The "rss" variants also check that the packet came in on
    the CPU of the IRQ of the RX queue the indirection table names for
    that hash; the "rps" variants need CPUs that no RX queue's IRQ uses,
    which a 2-vCPU guest with 2 RX queues does not have: they skip (the
    script's own reason). The script sets the hash function to Toeplitz
    without input transformation first, and puts it back after.

    Two of the script's assumptions do not hold here, and the case
    judges those subcases from the receiver's verbose output (every
    frame's addresses, ports, hash and CPU):
    - It expects every UDP frame's hash over the 4-tuple. The interface's
      hash types (IPv4, TCP/IPv4, IPv6, TCP/IPv6) have no UDP: a UDP
      datagram hashes over its addresses, an L3 hash (PKT_HASH_TYPE_L3),
      as the driver reports (ethtool -n rx-flow-hash udp4/udp6: IP SA,
      IP DA). The receiver reads the hash as AF_PACKET reports it,
      skb_get_hash(), which replaces an L3 hash with the kernel's own flow
      hash over the 4-tuple: the device's UDP hash cannot reach it. Where
      the driver reports no ports for UDP, a failed UDP subcase is a skip
      if frames arrived and none carries the Toeplitz hash of its
      addresses under the device's key (a driver that set that hash as
      an L4 hash would show it there, and fails); test_rss.py checks the
      UDP address hashes from skb->hash. Where the driver reports the
      ports, the receiver's verdict stands.
    - It wants 10 frames within its 4 s window, from a sender that
      starts one socat per datagram or connection in the remote
      namespace, about one a second under TCG. A subcase that failed only
      with "too few frames for verification", every frame it did see
      verified (fail=0, at least one), is the rig's rate; it is
      reported, not failed.
    Any other failure, a wrong hash or queue, or no frame at all, fails
    the case.
rss_ctx
    hw/rss_ctx.py, at the most combined channels the device has (its
    test_rss_key_indir wants 3 queues or more; put back after): the key
    and the indirection table (set, read back, equal weights over part
    of the queues with traffic spread as the table says, refused channel
    counts below what the table uses), a key update under traffic, and
    additional RSS contexts (skip: one context, no ntuple filters).
rss_drv
    hw/rss_drv.py: the indirection table's size across channel count
    changes (vx3's is 128 entries whatever the count: the dynamic-size
    subcases skip, the script's own reason).
rss_api
    hw/rss_api.py: RSS through ethtool netlink against the ioctl view:
    get/set of the table and key, notifications, the flow hash fields
    and the input transformation, additional contexts.
rss_flow_label
    hw/rss_flow_label.py: hashing on the IPv6 flow label, which the
    device's hash types do not offer (its subcases skip), and that an
    IPv4 flow type refuses the field.
rss_input_xfrm
    hw/rss_input_xfrm.py: symmetric hashing (input transformation), which
    the device does not offer (skip).
"""

import json
import os
import re
import socket

from lib.test import Skip
from test_rss import toeplitz

# test_upstream.py's harness; its cases stay there
import test_upstream as upstream

NICS, HOST_ROOT, BRIDGE_NICS = (upstream.NICS, upstream.HOST_ROOT,
                                upstream.BRIDGE_NICS)
host_setup, setup, teardown = (upstream.host_setup, upstream.setup,
                               upstream.teardown)
# the RSS model (run.py boots scripts/vx3-qemu.sh's QEMU)
QEMU_PATCHED = True


# The receiver's verbose lines (hw/toeplitz.c log_rxhash(), process_rings())
FRAME_RE = re.compile(r"cpu (\d+): rx_hash 0x([0-9a-f]+) \[saddr (\S+) "
                      r"daddr (\S+) sport \d+ dport \d+\]")
COUNT_RE = re.compile(r"count: pass=(\d+) nohash=\d+ fail=(\d+)")
FEW = "too few frames for verification"


def _subcase_outputs(out):
    """{subcase name: the output lines before its KTAP result line}"""
    blocks, cur = {}, []
    for line in out.splitlines():
        m = re.match(r"(?:not ok|ok) \d+ (\S+)", line)
        if m:
            blocks[m.group(1)] = "\n".join(cur)
            cur = []
        else:
            cur.append(line)
    return blocks


def _udp_l3_hash(text, key):
    """None if a failed UDP subcase's frames are what an L3 (address)
    hash from the device gives AF_PACKET: frames, none with the
    Toeplitz hash of its addresses; else what is wrong."""
    frames = FRAME_RE.findall(text)
    if not frames:
        return "no frame received"
    for _, h, sa, da in frames:
        fam = socket.AF_INET6 if ":" in sa else socket.AF_INET
        if int(h, 16) == toeplitz(key, socket.inet_pton(fam, sa) +
                                  socket.inet_pton(fam, da)):
            return (f"{sa} -> {da}: AF_PACKET saw the address hash "
                    f"0x{h}: the driver set an L3 hash as an L4 hash")
    return None


def _toeplitz_verdicts(res, blocks, key, udp_ports):
    """hw/toeplitz.py's KTAP results res [(ok, name, directive)] with the
    failed subcases the module docstring explains passed (the rig's
    rate) or skipped (UDP's L3 hash), from each subcase's output
    (blocks), the device's key (None: not reported) and whether the
    driver hashes the ports of udp4 and udp6 (udp_ports). Raises
    AssertionError for a UDP subcase whose frames carry the address
    hash."""
    out = []
    for ok, name, dr in res:
        text = blocks.get(name, "")
        fl = "udp6" if "ipv6" in name else "udp4"
        m = COUNT_RE.search(text)
        if ok:
            pass
        elif ("udp" in name.rsplit(".", 1)[-1] and key and
              not udp_ports[fl]):
            why = _udp_l3_hash(text, key)
            if why:
                raise AssertionError(f"hw/toeplitz.py {name}: {why}")
            ok, dr = True, (f"SKIP the device hashes UDP over its addresses "
                            f"(L3; the driver reports the {fl} fields so), "
                            f"AF_PACKET's tp_rxhash is then the kernel's "
                            f"own 4-tuple hash")
        elif FEW in text and m and int(m.group(1)) > 0 and m.group(2) == "0":
            print(f"# {name}: only {m.group(1)} frames in the receiver's "
                  f"4 s window (the script wants 10), every one verified: "
                  f"the rig's sender rate", flush=True)
            ok = True
        out.append((ok, name, dr))
    return out


def test_toeplitz(ctx):
    script = "hw/toeplitz.py"
    binary = os.path.join(ctx.host.state["ksft"],
                          "tools/testing/selftests/drivers/net/hw/toeplitz")
    if not os.path.exists(binary):
        raise AssertionError(f"no {binary}: test_upstream.py's BUILD did "
                             "not make it")
    rc, out = upstream._probe(ctx, "ethtool --json -x $IF 2>&1")
    if rc != 0:
        raise Skip(f"{script}: no RSS on the device (ethtool -x: "
                   f"{' '.join(out.split()) or rc})")
    # None where the driver reports no key (the in-tree vmxnet3): the
    # receiver then fails on its own, and so does the case
    key = json.loads(out)[0].get("rss-hash-key")
    key = bytes(key) if key else None
    udp_ports = {}
    for fl in ("udp4", "udp6"):
        rc, out = upstream._probe(ctx, f"ethtool -n $IF rx-flow-hash {fl}")
        udp_ports[fl] = rc == 0 and "L4 bytes" in out
        print(f"# {fl} hash fields: {' '.join(out.split())}")
    rc, out, res = upstream._run_script(ctx, script)
    res = _toeplitz_verdicts(res, _subcase_outputs(out), key, udp_ports)
    if rc == 1 and all(ok for ok, _, _ in res):
        rc = 0
    upstream._judge(ctx, script, rc, out, res)


# A subcase's output that says it needs what the device does not have
# (the subcase died of this one exception, no failed check besides).
# The device has one RSS context (the interface has one table):
ONE_CONTEXT_RE = re.compile(
    r"CMD: ethtool -X \S+ context new\n.*\n.*STDERR: .*Operation not "
    r"supported|rss_create_act\((?:.*\n)*?.*NlError: Netlink error: "
    r"Operation not supported$", re.M)
# It hashes TCP over the addresses and optionally the ports, anything
# else over the addresses: other field sets are refused, with the
# driver's extack (vx3) or as unsupported (a driver that sets none).
FIELDS_RE = re.compile(
    r"in (?:test_rxfh_fields_set\w*|set_rss)\n(?:.*\n)*?.*rss_set\((?:.*\n)*?"
    r".*NlError: Netlink error: (?:.+: Invalid argument|Operation not "
    r"supported)$", re.M)
# A new key takes effect at the next activation (the interface has no
# command for it): the driver re-activates the device with the same
# queues, from its device work, which under TCG can take longer than rss_ctx's 0.15 s for a "hitless"
# update (the script's other checks, no drops and no carrier change,
# must hold)
HITLESS_RE = re.compile(r"in test_hitless_key_update:\n.*\n"
                        r"# Check failed ([\d.]+) >= 0\.15 *$", re.M)
# ethtool -L refused for a count above the device's maximum
CHANNELS_MAX_RE = re.compile(r"CMD: ethtool -L \S+ combined (\d+)\n.*\n"
                             r".*requested channel count exceeds maximum")


def _limit(block, top):
    """Why a failed subcase's output (block) is a device limit, or None."""
    m = HITLESS_RE.search(block)
    if m and block.count("Check failed") == 1 and "Traceback" not in block:
        return (f"a new key takes effect at an activation (the interface "
                f"has no other way): the update took {m.group(1)} s under "
                f"TCG, over the script's 0.15 s; no drops, no carrier "
                f"change")
    if block.count("# Exception| Traceback") != 1 or "Check failed" in block:
        return None
    if ONE_CONTEXT_RE.search(block):
        return "the device has one RSS context"
    if FIELDS_RE.search(block):
        return ("the device hashes TCP over addresses and optionally "
                "ports, other IP packets over addresses: the driver "
                "refused another field set")
    m = CHANNELS_MAX_RE.search(block)
    if m and int(m.group(1)) > top:
        return (f"it sets {m.group(1)} combined channels, the device has at "
                f"most {top}")
    return None


def _channels(ctx):
    """(current, maximum) combined channels (ethtool -l)."""
    rc, out = upstream._probe(ctx, "ethtool --json -l $IF")
    if rc != 0:
        return 0, 0
    ch = json.loads(out)[0]
    return ch.get("combined", 0), ch.get("combined-max", 0)


def _set_channels(ctx, n):
    rc, out = upstream._probe(ctx, f"ethtool -L $IF combined {n} 2>&1")
    if rc != 0:
        raise AssertionError(f"ethtool -L combined {n}: {out.strip()}")


def _rss_script(ctx, script, max_channels=False):
    """Run script if the device has RSS (ethtool -x works), else skip
    with the device's answer; with max_channels at the most combined
    channels the device has. A failed subcase that died only of a device
    limit (_limit()) is a skip with that reason."""
    rc, out = upstream._probe(ctx, "ethtool -x $IF 2>&1")
    if rc != 0:
        raise Skip(f"{script}: no RSS on the device (ethtool -x: "
                   f"{' '.join(out.split()) or rc})")
    cur, top = _channels(ctx)
    grow = max_channels and top > cur
    if grow:
        _set_channels(ctx, top)
    try:
        rc, out, res = upstream._run_script(ctx, script)
    finally:
        if grow:
            _set_channels(ctx, cur)
    blocks = _subcase_outputs(out)
    skips = {}
    for ok, name, _ in res:
        why = None if ok else _limit(blocks.get(name, ""), top)
        if why:
            skips[name] = f"SKIP {why}"
    res = [(ok or n in skips, n, skips.get(n, dr)) for ok, n, dr in res]
    if rc == 1 and all(ok for ok, _, _ in res):
        rc = 0
    upstream._judge(ctx, script, rc, out, res)


def test_rss_ctx(ctx):
    # test_rss_key_indir wants 3 queues or more: the most the device has
    _rss_script(ctx, "hw/rss_ctx.py", max_channels=True)


def test_rss_drv(ctx):
    _rss_script(ctx, "hw/rss_drv.py")


def test_rss_api(ctx):
    _rss_script(ctx, "hw/rss_api.py")


def test_rss_flow_label(ctx):
    _rss_script(ctx, "hw/rss_flow_label.py")


def test_rss_input_xfrm(ctx):
    _rss_script(ctx, "hw/rss_input_xfrm.py")
