#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Issue 11: a modest, real workload still works inside a default policy
# (tests/vm/workload.yaml: no `capabilities:` key, default-deny egress with
# one loopback service, a loopback port to listen on, a write folder). A
# busybox shell script does ordinary work; python3 (brought into the guest
# by tests/vm/mkinitramfs.sh) reads and writes files, runs a child, starts
# threads, resolves a name with getaddrinfo(AI_ADDRCONFIG) (a NETLINK_ROUTE
# dump), connects to the allowed service and serves on the allowed
# loopback port. Python runs with -B: bytecode caches would be written
# next to the read-only library, which the policy rightly refuses (and
# logs: set PYTHONDONTWRITEBYTECODE=1 for python workloads). Every step must succeed, and the agent must write no
# deny record at all for the sandbox.
#
# Env (from tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT.

. tests/vm/lib.sh

T=workload
cg=$CGROUP_ROOT/workload-sbx
work=/tmp/wl
bpffs=/sys/fs/bpf/workload
log=$work/agent.log
cport=18089 lport=18090
agent= srv=

rm -rf "$work"
mkdir -p "$work/out" "$cg"
echo "some input" > "$work/in.txt"
: > "$log"

cleanup() {
	[ -z "$srv" ] || kill "$srv" 2>/dev/null
	if [ -n "$agent" ]; then
		kill -TERM "$agent" 2>/dev/null
		wait_for 20 sh -c "! kill -0 $agent 2>/dev/null"
		kill -9 "$agent" 2>/dev/null
	fi
	[ ! -d "$bpffs" ] || "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
	rmdir "$cg" 2>/dev/null
}

"$STOCKADE" agent --policy tests/vm/workload.yaml --bpffs "$bpffs" \
	--detach-on-exit --log "$log" > "$work/agent.out" 2> "$work/agent.err" &
agent=$!
if ! wait_for 60 grep -q '"event":"agent_ready"' "$log"; then
	t_fail $T/agent-ready "no agent_ready: $(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
	cleanup
	exit 0
fi
t_ok $T/agent-ready

# The allowed service, outside the sandbox: answers "pong" to each client.
if [ -x /usr/bin/python3 ]; then
	/usr/bin/python3 -S -I -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", '$cport')); s.listen(8)
while True:
    c, _ = s.accept(); c.recv(16); c.sendall(b"pong\n"); c.close()
' > "$work/srv.out" 2>&1 &
	srv=$!
fi

# In the sandbox: the shell joins it, then execs the workload.
in_sbx() {
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"
}

# The shell part: ordinary commands a script would run.
cat > "$work/job.sh" <<'JOB'
set -e
cd /tmp/wl
mkdir -p out/sub
echo one > out/sub/a; echo two >> out/sub/a
sort < out/sub/a | uniq | wc -l > out/count
cat out/count | grep -q 2
( cd out && tar cf all.tar sub && tar tf all.tar > list )
grep -q sub/a out/list
id -u > out/id; date > out/date; ps > out/ps
sleep 30 & kid=$!
kill "$kid"; wait "$kid" 2>/dev/null || true
find /tmp/wl -name a | grep -q sub/a
ln -s a out/sub/b; readlink out/sub/b > /dev/null
chmod 600 out/sub/a; touch out/sub/a
mv out/sub/a out/sub/c; rm out/sub/c out/sub/b
head -c 100 /dev/urandom | md5sum > out/sum
echo done
JOB
if in_sbx sh "$work/job.sh" > "$work/job.out" 2>&1 && [ "$(tail -n 1 "$work/job.out")" = done ]; then
	t_ok $T/shell-script
else
	t_fail $T/shell-script "$(tail -n 3 "$work/job.out" | tr '\n' ' ')"
fi

if [ -x /usr/bin/python3 ]; then
	wait_for 10 grep -q . /proc/net/tcp   # the service is listening by now
	timeout -s KILL 30 sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' \
		sh "$cg" /usr/bin/python3 -B -S -I tests/vm/workload.py "$work" $cport $lport \
		> "$work/py.out" 2>&1
	py_rc=$?
	[ "$py_rc" = 0 ] || { t_show "$work/py.out"; t_show "$work/srv.out"; t_show "$log" 10; }
	while IFS= read -r line; do
		case $line in
		"ok "*) t_ok "$T/${line#ok }" ;;
		"fail "*": "*) rest=${line#fail }; t_fail "$T/${rest%%: *}" "${rest#*: }" ;;
		esac
	done < "$work/py.out"
	if [ "$py_rc" != 0 ] && ! grep -q '^fail ' "$work/py.out"; then
		t_fail $T/python "exit $py_rc: $(tail -n 3 "$work/py.out" | tr '\n' ' ')"
	fi
else
	t_fail $T/python "no /usr/bin/python3 in the guest (tests/vm/mkinitramfs.sh brings it from the host: apt-get install python3-minimal)"
fi

# Nothing above may have been refused: not one deny record.
sleep 1
n=$(grep -c '"event":"deny"' "$log")
if [ "$n" = 0 ]; then
	t_ok $T/no-denials
else
	t_fail $T/no-denials "$n deny records: $(grep '"event":"deny"' "$log" | head -n 3 | tr '\n' ' ')"
fi
cleanup
exit 0
