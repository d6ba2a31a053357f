#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""A watcher that stalls (tests/live/watch.sh): it connects to the
agent's events socket, sends a request, reads only the watch_start line,
then reads nothing for STALL seconds (its socket's receive buffer kept
small), then reads everything until the agent closes the connection and
writes what it got to OUT.

    watch-stall.py SOCKET STALL OUT [REQUEST]
"""
import socket
import sys
import time

path, stall, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
req = sys.argv[4] if len(sys.argv) > 4 else "{}"

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(path)
s.sendall(req.encode() + b"\n")
got = b""
while b"\n" not in got:
    chunk = s.recv(1)
    if not chunk:
        break
    got += chunk
with open(out + ".started", "w") as f:
    f.write(got.decode())
time.sleep(stall)
s.settimeout(30)
try:
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        got += chunk
except socket.timeout:
    got += b"TIMEOUT\n"
with open(out, "wb") as f:
    f.write(got)
