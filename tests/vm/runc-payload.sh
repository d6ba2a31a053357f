#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# The payload of tests/vm/runc.sh's containers: /payload.sh in the busybox
# rootfs (tests/vm/mkinitramfs.sh), run by busybox sh as the container's
# init. What a compromised workload tries first: read /etc/shadow, reach
# the cloud metadata endpoint. TRIES rounds, 0.3 s apart, so that an agent
# started later still sees attempts; each attempt on one line of stdout
# (runc -d passes its stdout through to the file the test gave it):
#   try=N op=shadow|metadata up=UPTIME pid=PID rc=RC out=OUTPUT
# UPTIME is read just before the attempt, from /proc/uptime (no time
# namespace: the guest's clock), so the test can tell the attempts made
# after the agent was ready from the earlier ones. PID is the process that
# made the syscall (sh -c prints its own pid, then execs the tool), as the
# container's pid namespace numbers it: only for reading the console, the
# test matches log records by the container's cgroup. OUTPUT is the tool's
# stdout and stderr on one line: the hash, or busybox's error with
# strerror's text ("Operation not permitted" for EPERM).

tries=${1:-1}
nl='
'
# SIGTERM (runc kill ID TERM) ends the loop after the attempt under way,
# so that every attempt made has its line: the test counts them against
# the log records. (As the pid namespace's init, sh would ignore a TERM
# it has no trap for.)
stop=
trap 'stop=1' TERM
echo "payload: started pid=$$ tries=$tries"
n=0
while [ "$n" -lt "$tries" ] && [ -z "$stop" ]; do
	n=$((n + 1))
	for op in shadow metadata; do
		read -r up _ < /proc/uptime
		if [ "$op" = shadow ]; then
			out=$(sh -c 'echo $$; exec cat /etc/shadow' 2>&1)
		else
			out=$(sh -c 'echo $$; exec nc -w 2 169.254.169.254 80 < /dev/null' 2>&1)
		fi
		rc=$?
		pid=${out%%"$nl"*}
		rest=
		case $out in *"$nl"*) rest=${out#*"$nl"} ;; esac
		echo "try=$n op=$op up=$up pid=$pid rc=$rc out=$(printf '%s' "$rest" | tr '\n' ' ')"
	done
	[ "$n" -ge "$tries" ] || [ -n "$stop" ] || sleep 0.3
done
echo "payload: done"
