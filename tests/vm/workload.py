# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""A modest, real workload for a sandbox under a default policy (issue 11):
what an untrusted script commonly does, none of which may be refused.

    python3 -S -I workload.py WORKDIR CONNECT_PORT LISTEN_PORT
    python3 -S -I workload.py --modules     the files of the modules it
                                            imports (tests/vm/mkinitramfs.sh
                                            copies exactly those)

Prints one "ok STEP" or "fail STEP: why" line per step and exits 1 on any
failure. Run with -S -I in the guest and on the host alike, so the module
list is the same.
"""
import encodings.idna  # noqa: F401 (getaddrinfo imports it lazily)
import os
import socket
import subprocess
import sys
import threading


def modules():
    seen = set()
    for m in list(sys.modules.values()):
        f = getattr(m, "__file__", None)
        if f and f not in seen:
            seen.add(f)
            print(f)


def main(work, cport, lport):
    results = []

    def step(name, fn):
        try:
            fn()
            results.append(True)
            print("ok " + name, flush=True)
        except Exception as e:  # every failure is one line
            results.append(False)
            print("fail %s: %s: %s" % (name, type(e).__name__, e), flush=True)

    def files():
        with open(os.path.join(work, "in.txt")) as f:
            data = f.read()
        out = os.path.join(work, "out", "py.txt")
        with open(out, "w") as f:
            f.write(data.upper())
        os.rename(out, out + ".done")
        os.listdir(os.path.join(work, "out"))

    def child():
        r = subprocess.run(["/bin/echo", "hello"], capture_output=True,
                           check=True)
        assert r.stdout == b"hello\n", r.stdout

    def threads():
        got = []
        t = [threading.Thread(target=got.append, args=(i,)) for i in range(4)]
        for x in t:
            x.start()
        for x in t:
            x.join()
        assert sorted(got) == [0, 1, 2, 3]

    def names():
        # AI_ADDRCONFIG makes glibc dump the interfaces' addresses over
        # NETLINK_ROUTE first: the read requests a sandbox may make. The
        # guest has only lo, which AI_ADDRCONFIG does not count, so that
        # lookup may find nothing; the plain one must find localhost.
        try:
            socket.getaddrinfo("localhost", cport, socket.AF_INET,
                               socket.SOCK_STREAM, 0, socket.AI_ADDRCONFIG)
        except socket.gaierror as e:
            if e.errno != socket.EAI_NONAME:
                raise
        ai = socket.getaddrinfo("localhost", cport, socket.AF_INET,
                                socket.SOCK_STREAM)
        assert ai and ai[0][4][0] == "127.0.0.1", ai
        socket.if_nameindex()   # RTM_GETLINK dump

    def connect():
        with socket.create_connection(("127.0.0.1", cport), timeout=5) as s:
            s.sendall(b"ping\n")
            assert s.recv(16).startswith(b"pong"), "no pong"

    def serve():
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", lport))
        srv.listen(1)

        def peer():
            with socket.create_connection(("127.0.0.1", lport), timeout=5) as c:
                c.sendall(b"hi")

        t = threading.Thread(target=peer)
        t.start()
        conn, _ = srv.accept()
        assert conn.recv(2) == b"hi"
        conn.close()
        t.join()
        srv.close()

    step("python/files", files)
    step("python/subprocess", child)
    step("python/threads", threads)
    step("python/getaddrinfo", names)
    step("python/connect", connect)
    step("python/listen-loopback", serve)
    return 0 if all(results) else 1


if __name__ == "__main__":
    if sys.argv[1:] == ["--modules"]:
        modules()
        sys.exit(0)
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
