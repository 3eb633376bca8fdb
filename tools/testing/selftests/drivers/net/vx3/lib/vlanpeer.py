#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""802.1Q peer on a tap, for hosts without VLAN devices (no 8021q).

Runs in the peer namespace with raw packet sockets:

  vlanpeer.py ping DEV VID DST_MAC SRC_IP DST_IP COUNT SIZE
      Send COUNT ICMP echo requests with SIZE bytes of payload in frames
      tagged with VID from DEV's MAC to DST_MAC, and check the replies:
      tagged with VID (in the frame or, once the kernel took the tag off,
      in the packet's auxiliary data), addressed to DEV's MAC, from
      DST_IP, with the request's id, sequence number and payload. Prints
      "sent=N replies=N bad=N"; exits 1 unless every request got one
      correct reply.
  vlanpeer.py flood DEV VID DST_MAC SRC_IP DST_IP COUNT
      Send COUNT tagged UDP datagrams (port 9) and nothing else.

The guest must know SRC_IP's MAC (a static neighbour entry): this peer
does not answer ARP.
"""

import os
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_8021Q = 0x8100
ETH_P_IP = 0x0800
SOL_PACKET = 263
PACKET_AUXDATA = 8
PACKET_OUTGOING = 4
TP_STATUS_VLAN_VALID = 0x10
AUXDATA = struct.Struct("IIIHHHH")


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ipv4(src, dst, proto, payload, ident):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident,
                      0x4000, 64, proto, 0, socket.inet_aton(src),
                      socket.inet_aton(dst))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def frame(dst_mac, src_mac, vid, ip):
    return (dst_mac + src_mac + struct.pack("!HHH", ETH_P_8021Q, vid,
                                            ETH_P_IP) + ip)


def mac_bytes(text):
    return bytes.fromhex(text.replace(":", ""))


def open_sock(dev):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    s.bind((dev, 0))
    with open(f"/sys/class/net/{dev}/address") as f:
        return s, mac_bytes(f.read().strip())


def payload_of(seq, size):
    return bytes((seq + i) & 0xff for i in range(size))


def parse_reply(data, anc, my_mac, vid, src_ip):
    """(id, seq, payload) of a correct tagged echo reply, else None."""
    tci = None
    for level, ctype, cdata in anc:
        if level == SOL_PACKET and ctype == PACKET_AUXDATA:
            aux = AUXDATA.unpack(cdata[:AUXDATA.size])
            if aux[0] & TP_STATUS_VLAN_VALID:
                tci = aux[5]
    if data[:6] != my_mac:
        return None
    etype = struct.unpack("!H", data[12:14])[0]
    off = 14
    if etype == ETH_P_8021Q:
        tci = struct.unpack("!H", data[14:16])[0]
        etype = struct.unpack("!H", data[16:18])[0]
        off = 18
    if tci is None or tci & 0xfff != vid or etype != ETH_P_IP:
        return None
    ip = data[off:]
    ihl = (ip[0] & 0xf) * 4
    if ip[9] != 1 or ip[12:16] != socket.inet_aton(src_ip):
        return None
    icmp = ip[ihl:struct.unpack("!H", ip[2:4])[0]]
    if len(icmp) < 8 or icmp[0] != 0:
        return None
    ident, seq = struct.unpack("!HH", icmp[4:8])
    return ident, seq, icmp[8:]


def do_ping(dev, vid, dst_mac, src_ip, dst_ip, count, size):
    s, my_mac = open_sock(dev)
    ident = os.getpid() & 0xffff
    replies = bad = 0
    got = set()
    for seq in range(count):
        data = payload_of(seq, size)
        icmp = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + data
        icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
        s.send(frame(dst_mac, my_mac, vid,
                     ipv4(src_ip, dst_ip, 1, icmp, seq)))
        deadline = time.monotonic() + 3
        while seq not in got:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([s], [], [], left)[0]:
                break
            pkt, anc, _, addr = s.recvmsg(65536, socket.CMSG_SPACE(64))
            if addr[2] == PACKET_OUTGOING:
                continue
            r = parse_reply(pkt, anc, my_mac, vid, dst_ip)
            if r is None or r[0] != ident:
                continue
            if r[1] in got or r[1] > seq or r[2] != payload_of(r[1], size):
                bad += 1
                continue
            got.add(r[1])
            replies += 1
    print(f"sent={count} replies={replies} bad={bad}")
    return 0 if replies == count and not bad else 1


def do_flood(dev, vid, dst_mac, src_ip, dst_ip, count):
    s, my_mac = open_sock(dev)
    for seq in range(count):
        udp = struct.pack("!HHHH", 9, 9, 8 + 32, 0) + bytes(32)
        s.send(frame(dst_mac, my_mac, vid, ipv4(src_ip, dst_ip, 17, udp,
                                                 seq)))
        time.sleep(0.01)
    print(f"sent={count}")
    return 0


def main(argv):
    if len(argv) < 8 or argv[1] not in ("ping", "flood"):
        print(__doc__, file=sys.stderr)
        return 2
    dev, vid, dst_mac = argv[2], int(argv[3]), mac_bytes(argv[4])
    src_ip, dst_ip, count = argv[5], argv[6], int(argv[7])
    if argv[1] == "ping":
        return do_ping(dev, vid, dst_mac, src_ip, dst_ip, count,
                       int(argv[8]))
    return do_flood(dev, vid, dst_mac, src_ip, dst_ip, count)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
