#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""UDP test traffic for test_xdp.py, run in a peer namespace.

  xdppeer.py send DST COUNT SIZE[,SIZE...] [--start N] [--rate PPS]
                  [--reflect [--tail T]]
      Send COUNT datagrams from port 9998 to DST:9999, sizes in turn,
      paced (at most PPS a second if given), with sequence numbers from N
      (0) on; with --reflect also receive the reflected ones on port 9998
      and check each payload (plus the tail T the program appended).
  xdppeer.py recv COUNT TIMEOUT
      Receive datagrams on port 9999 until COUNT arrived or TIMEOUT
      seconds passed without one; check each payload.

Prints one line of JSON: sent, received, bad (payload mismatches).
A payload is a 4-byte sequence number followed by bytes derived from it.
"""

import json
import socket
import struct
import sys
import time

SPORT, DPORT = 9998, 9999


def payload(seq, size):
    body = bytes((seq + i) & 0xFF for i in range(max(size - 4, 0)))
    return struct.pack("!I", seq) + body


def check(data, tail=b""):
    if len(data) < 4 + len(tail):
        return None
    if tail and not data.endswith(tail):
        return None
    data = data[:len(data) - len(tail)] if tail else data
    seq = struct.unpack("!I", data[:4])[0]
    return seq if data == payload(seq, len(data)) else None


def receive(sock, count, timeout, tail=b""):
    got, bad, seen = 0, 0, set()
    sock.settimeout(timeout)
    while got < count:
        try:
            data = sock.recv(65536)
        except socket.timeout:
            break
        seq = check(data, tail)
        if seq is None or seq in seen:
            bad += 1
        else:
            seen.add(seq)
            got += 1
    return got, bad


def main():
    mode = sys.argv[1]
    if mode == "recv":
        count, timeout = int(sys.argv[2]), float(sys.argv[3])
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        s.bind(("0.0.0.0", DPORT))
        print("listening", flush=True)
        got, bad = receive(s, count, timeout)
        print(json.dumps({"received": got, "bad": bad}))
        return

    dst, count = sys.argv[2], int(sys.argv[3])
    sizes = [int(x) for x in sys.argv[4].split(",")]
    reflect = "--reflect" in sys.argv
    start = 0
    if "--start" in sys.argv:
        start = int(sys.argv[sys.argv.index("--start") + 1])
    tail = b""
    if "--tail" in sys.argv:
        tail = sys.argv[sys.argv.index("--tail") + 1].encode()
    rate = 0
    if "--rate" in sys.argv:
        rate = int(sys.argv[sys.argv.index("--rate") + 1])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind(("0.0.0.0", SPORT))
    t0 = time.monotonic()
    for seq in range(start, start + count):
        s.sendto(payload(seq, sizes[seq % len(sizes)]), (dst, DPORT))
        # TCG guests are slow: a burst would overrun the RX ring
        if seq % 8 == 7:
            time.sleep(0.002)
            if rate:
                ahead = (seq + 1 - start) / rate - (time.monotonic() - t0)
                if ahead > 0:
                    time.sleep(ahead)
    res = {"sent": count}
    if reflect:
        res["received"], res["bad"] = receive(s, count, 5.0, tail)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
