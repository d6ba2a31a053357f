#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""mptcp: an MPTCP connection whose peer announces another address, for
tests/live/mptcp.sh.

    mptcp.py CGROUP_DIR ANNOUNCED

Runs in a private network namespace (only lo up, ANNOUNCED one of lo's
addresses, announced by an MPTCP `signal` endpoint, ADD_ADDR accepted).
Listens on 0.0.0.0:8080 (MPTCP) in the cgroup it started in, then a
child joins CGROUP_DIR (empty: stays where it is), prints pid=N, connects
to 127.0.0.1:8080 over MPTCP and keeps sending for up to 3 s. On the
peer's ADD_ADDR the kernel opens a second subflow to ANNOUNCED:8080 from
a worker thread of its own, not from this process. Prints SUBFLOW once
an established TCP connection to ANNOUNCED:8080 shows in /proc/net/tcp,
NONE if none did in those 3 s, or the connect's errno name.
Python: the standard library's socket module speaks MPTCP (protocol
262), and this is a host-only test.
"""
import errno
import os
import socket
import sys
import time

IPPROTO_MPTCP = 262
PORT = 8080


def established_to(addr):
    """Is there an established TCP connection to addr:PORT?"""
    want = "%08X:%04X" % (int.from_bytes(socket.inet_aton(addr), "little"), PORT)
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            cols = line.split()
            if cols[2] == want and cols[3] == "01":
                return True
    return False


def client(cgroup, announced):
    if cgroup:
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    print("pid=%d" % os.getpid(), flush=True)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    try:
        s.connect(("127.0.0.1", PORT))
    except OSError as e:
        print(errno.errorcode.get(e.errno, str(e.errno)), flush=True)
        return
    end = time.monotonic() + 3
    while time.monotonic() < end:
        s.send(b"x" * 64)
        if established_to(announced):
            print("SUBFLOW", flush=True)
            return
        time.sleep(0.05)
    print("NONE", flush=True)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: mptcp.py CGROUP_DIR ANNOUNCED\n")
        sys.exit(2)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", PORT))
    srv.listen(8)
    pid = os.fork()
    if pid == 0:
        srv.close()
        try:
            client(sys.argv[1], sys.argv[2])
        finally:
            os._exit(0)
    srv.settimeout(5)
    try:
        conn, _ = srv.accept()
        conn.settimeout(0.1)
        while True:
            try:
                if not conn.recv(4096):
                    break
            except socket.timeout:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    return
    except OSError:
        pass
    os.waitpid(pid, 0)


main()
