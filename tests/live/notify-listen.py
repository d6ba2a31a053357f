# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A stand-in for systemd's notify socket (tests/live/systemd.sh): bind a
# datagram socket at ADDR ('@name': abstract, as systemd's own notify
# socket can be; else a path), print "ready" once bound, then write one
# line to OUT per datagram: its lines joined by '|', and whether LOG held
# an agent_ready record when it arrived ("log_ready=1" or "=0"). Ends at
# STOPPING=1 or after 120 s without a datagram. Modules of
# python3-minimal only (no json).
import os
import socket
import sys

addr, log, out = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
s.settimeout(120)
print("ready", flush=True)
with open(out, "w") as f:
    while True:
        try:
            msg = s.recv(4096).decode("utf-8", "replace")
        except socket.timeout:
            f.write("TIMEOUT\n")
            break
        try:
            with open(log, "rb") as lf:
                ready = b'"event":"agent_ready"' in lf.read()
        except OSError:
            ready = False
        f.write("%s\tlog_ready=%d\n" % (msg.replace("\n", "|"), ready))
        f.flush()
        if "STOPPING=1" in msg.split("\n"):
            break
if not addr.startswith("@"):
    os.unlink(addr)
