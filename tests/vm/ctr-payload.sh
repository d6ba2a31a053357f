#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# The payload of tests/vm/containers.sh (and tests/live/containers.sh on
# the host): /ctr-payload.sh in the busybox rootfs, run by busybox sh as
# the container's init. One round is what a compromised workload tries
# first, one attempt each, one line of stdout per attempt:
#   try=N op=shadow  up=UPTIME rc=RC out=...  cat /etc/shadow
#   try=N op=connect up=UPTIME rc=RC out=...  nc to ADDR:PORT
#   try=N op=forks   up=UPTIME started=K refused=0|1 out=...
#                                             (FORKS only) FORKS sleeps
#                                             started at once, until the
#                                             first fork is refused
# OUTPUT is the tool's stdout and stderr on one line: the (fake) hash, or
# busybox's error with strerror's text ("Operation not permitted" for
# EPERM, "Network is unreachable" when the connect reached routing in a
# network namespace with only lo). UPTIME is the guest's clock, read just
# before the attempt.
#
#   /ctr-payload.sh once ADDR PORT [FORKS]
#       one round at once, then `payload: done` and exit: a container
#       started while the agent runs, judged from its first syscall on;
#   /ctr-payload.sh wait ADDR PORT [FORKS]
#       one round at once (before the agent), `payload: ready`, then one
#       more round per SIGUSR1 (`runc kill ID USR1`) until SIGTERM: a
#       container the agent confines while it runs, the same process,
#       one attempt each to count records against.
# Each round ends with `round N: done`.

mode=$1 addr=$2 port=$3 forks=${4:-0}
nl='
'
n=0
go=
stop=

# line OP OUT: OUT (sh -c's pid, then the tool's output) on one line.
line() {
	_rest=
	case $2 in *"$nl"*) _rest=${2#*"$nl"} ;; esac
	echo "try=$n op=$1 up=$up rc=$rc out=$(printf '%s' "$_rest" | tr '\n' ' ')"
}

round() {
	n=$((n + 1))
	read -r up _ < /proc/uptime
	out=$(sh -c 'echo $$; exec cat /etc/shadow' 2>&1)
	rc=$?
	line shadow "$out"
	read -r up _ < /proc/uptime
	out=$(sh -c 'echo $$; exec nc -w 2 "$1" "$2" < /dev/null' sh "$addr" "$port" 2>&1)
	rc=$?
	line connect "$out"
	if [ "$forks" -gt 0 ]; then
		read -r up _ < /proc/uptime
		# A refused fork ends ash's subshell with "can't fork" (an
		# exception in a non-interactive shell): the sleeps started
		# until then each printed their pid, killed below.
		out=$( (
			i=0
			while [ "$i" -lt "$forks" ]; do
				i=$((i + 1))
				sleep 30 > /dev/null 2>&1 &
				echo "pid $!"
			done
		) 2>&1)
		kids=$(printf '%s\n' "$out" | sed -n 's/^pid //p')
		started=$(printf '%s\n' "$out" | grep -c '^pid ')
		refused=0
		case $out in *"can't fork"*) refused=1 ;; esac
		# shellcheck disable=SC2086
		[ -z "$kids" ] || kill $kids 2>/dev/null
		echo "try=$n op=forks up=$up started=$started refused=$refused out=$(printf '%s\n' "$out" | grep -v '^pid ' | tr '\n' ' ')"
	fi
	echo "round $n: done"
}

trap 'stop=1' TERM
trap 'go=1' USR1
echo "payload: started pid=$$ mode=$mode"
round
if [ "$mode" = once ]; then
	echo "payload: done"
	exit 0
fi
echo "payload: ready"
# As the pid namespace's init, sh ignores a signal it has no trap for.
# A trapped signal ends `wait` at once (POSIX), so the round starts
# without delay, and nothing runs while the payload waits: no exec for
# the agent to record while it starts.
while [ -z "$stop" ]; do
	if [ -n "$go" ]; then
		go=
		round
		continue
	fi
	sleep 60 &
	w=$!
	wait "$w"
	kill "$w" 2>/dev/null
done
echo "payload: done"
