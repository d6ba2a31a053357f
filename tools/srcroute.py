#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""srcroute: one send of a source-routed packet, for tests/live/srcroute.sh.

    srcroute.py CGROUP_DIR CASE

Joins CGROUP_DIR (it runs in a private network namespace, only lo up),
prints pid=N, makes the CASE's one call and prints its result: OK, the
errno's name (EPERM), or TIMEOUT (a TCP connect whose SYNs never left).
  udp-plain    sendto 127.0.0.1:5353 (allowed): the control
  udp-lsrr     the same with IP_OPTIONS: a loose source route via
               127.0.0.3 (the packet is sent to 127.0.0.3 first)
  udp-retopts  the same route as an IP_RETOPTS control message of the send
  udp-ssrr     IP_OPTIONS with a strict source route
  tcp-lsrr     connect 127.0.0.1:8080 (allowed, listening) with the
               loose source route set: 2 s for the handshake
  udp6-srh     sendto [::1]:5353 (allowed) with IPV6_RTHDR: a segment
               routing header (type 4; no capability needed)
Python, not C: the standard library's socket module makes each of these
one call, and the test VM's tools are not needed for this host-only test.
"""
import errno
import os
import select
import socket
import struct
import sys

IP_OPTIONS = 4
IP_RETOPTS = 7
IPV6_RTHDR = 57


def route(kind):
    # NOP, then the option: type, length 7, pointer 4, one hop.
    return bytes([1, kind, 7, 4]) + socket.inet_aton("127.0.0.3")


def srh():
    # struct ipv6_sr_hdr: nexthdr, hdrlen (8-octet units after the first
    # 8), type 4, segments_left 1, first_segment 1, flags, tag; then two
    # segments, both ::1 (a route lo has).
    seg = socket.inet_pton(socket.AF_INET6, "::1")
    return struct.pack("!BBBBBBH", 0, 4, 4, 1, 1, 0, 0) + seg + seg


def run(case):
    if case.startswith("udp6"):
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IPV6, IPV6_RTHDR, srh())
        s.sendto(b"x", ("::1", 5353))
        return "OK"
    if case.startswith("tcp"):
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", 8080))
        srv.listen(1)
        s = socket.socket()
        s.setsockopt(socket.IPPROTO_IP, IP_OPTIONS, route(0x83))
        s.setblocking(False)
        err = s.connect_ex(("127.0.0.1", 8080))
        if err not in (0, errno.EINPROGRESS):
            return errno.errorcode.get(err, str(err))
        _, w, _ = select.select([], [s], [], 2.0)
        if not w:
            return "TIMEOUT"
        err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        return "OK" if err == 0 else errno.errorcode.get(err, str(err))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if case == "udp-lsrr":
        s.setsockopt(socket.IPPROTO_IP, IP_OPTIONS, route(0x83))
    elif case == "udp-ssrr":
        s.setsockopt(socket.IPPROTO_IP, IP_OPTIONS, route(0x89))
    if case == "udp-retopts":
        s.sendmsg([b"x"], [(socket.IPPROTO_IP, IP_RETOPTS, route(0x83))],
                  0, ("127.0.0.1", 5353))
    else:
        s.sendto(b"x", ("127.0.0.1", 5353))
    return "OK"


def main():
    if len(sys.argv) != 3:
        print("usage: srcroute.py CGROUP_DIR CASE", file=sys.stderr)
        return 2
    with open(os.path.join(sys.argv[1], "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
    print("pid=%d" % os.getpid(), flush=True)
    try:
        print(run(sys.argv[2]))
    except OSError as e:
        print(errno.errorcode.get(e.errno, str(e.errno)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
