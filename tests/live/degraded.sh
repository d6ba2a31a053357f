#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Live test of the agent on a kernel that refuses BPF-LSM (issue 4,
# "Degraded kernels"): runs on the host (make live-test), whose kernel
# does refuse it.
#   - Without --allow-degraded the agent refuses to start, and its message
#     names the cause (BPF-LSM, or lsm=) and the fix (--allow-degraded).
#   - With --allow-degraded it starts, prints every lost guarantee on
#     stderr ("guarantee lost: NAME"), and lists the same names in
#     agent_ready's "degraded":[...]. It never degrades silently.
# On a kernel where BPF-LSM works the agent starts with "degraded":[]; then
# both checks are skipped, and say so.
#
# Environment: STOCKADE (binary), CGROUP_ROOT (unused: the agent finds the
# cgroup2 mount itself), SRC (the source tree, for agent/daemon.c).
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
SRC=${SRC:-$here/../..}

# Every guarantee that needs BPF-LSM, by the name agent_ready gives it: a
# contract, so a name dropped from the agent fails here. Guarantees added
# to the table in agent/lsm_table.c (its rows' third field) are picked up
# from the source too.
GUARANTEES="file_scope protected_paths fd_receive bpf ptrace signals mount"
GUARANTEES="$GUARANTEES cgroup_escape unix_sockets user_namespaces packet_sockets"
if [ -f "$SRC/agent/lsm_table.c" ]; then
	from_src=$(sed -n 's/^[[:space:]]*{ "stk_[a-z0-9_]*", "[a-z0-9_]*", "\([a-z0-9_]*\)".*/\1/p' \
		"$SRC/agent/lsm_table.c")
	for g in $from_src; do
		case " $GUARANTEES " in
		*" $g "*) ;;
		*) GUARANTEES="$GUARANTEES $g" ;;
		esac
	done
fi

need_bpffs degraded

work=$(mktemp -d /tmp/stockade-degraded.XXXXXX)
# Private pins, removed on exit (--detach-on-exit): nothing of this test
# outlives it.
bpffs=/sys/fs/bpf/stockade-degraded-$$
agent_pid=

cleanup() {
	agent_end -9
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A policy whose selector matches no cgroup: nothing is confined, and the
# agent still loads and attaches every program it can.
cat > "$work/degraded.yaml" <<'EOF'
name: degraded-test
cgroups: [/stockade-degraded-test-none]
network:
  default: deny
EOF

# start NAME [FLAGS...]: run the agent in the background; waits (10 s)
# until it wrote agent_ready or exited. Sets agent_pid (empty once it
# exited, with its status in $rc).
start() {
	name=$1
	shift
	: > "$work/$name.log"
	"$STOCKADE" agent "$@" --bpffs "$bpffs" --detach-on-exit \
		--policy "$work/degraded.yaml" \
		--log "$work/$name.log" > "$work/$name.out" 2> "$work/$name.err" &
	agent_pid=$!
	n=0
	while [ $n -lt 100 ]; do
		grep -q '"event":"agent_ready"' "$work/$name.log" && return 0
		if ! kill -0 "$agent_pid" 2>/dev/null; then
			break
		fi
		n=$((n + 1))
		sleep 0.1
	done
	if grep -q '"event":"agent_ready"' "$work/$name.log"; then
		return 0
	fi
	timed_out=0
	if kill -0 "$agent_pid" 2>/dev/null; then
		timed_out=1
		kill -9 "$agent_pid" 2>/dev/null
	fi
	wait "$agent_pid"
	rc=$?
	[ "$timed_out" = 0 ] || rc=timeout
	agent_pid=
	return 1
}

# stop NAME: SIGTERM, which must end the agent with status 0.
stop() {
	kill -TERM "$agent_pid"
	wait "$agent_pid"
	rc=$?
	agent_pid=
	if [ "$rc" = 0 ]; then
		ok "$1: SIGTERM: exit 0"
	else
		not_ok "$1: SIGTERM" "exit $rc"
	fi
}

one_line() { tr '\n' ' ' < "$1" | cut -c 1-400; }

# ---- (a) refuse without --allow-degraded ----
t="without --allow-degraded"
rc=
if start strict; then
	ready=$(grep '"event":"agent_ready"' "$work/strict.log" | head -n 1)
	case $ready in
	*'"degraded":[]'*)
		stop "$t"
		skip "$t: refuses to start" "this kernel has BPF-LSM ($(cat /sys/kernel/security/lsm 2>/dev/null)): agent_ready has no degraded guarantee"
		skip "$t: names cause and fix" "BPF-LSM works here"
		skip "with --allow-degraded" "BPF-LSM works here, nothing to degrade"
		summary
		exit
		;;
	esac
	not_ok "$t: refuses to start" "it started degraded on its own: $ready"
	stop "$t"
elif [ "$rc" = timeout ]; then
	not_ok "$t: refuses to start" "neither agent_ready nor an exit within 10 s: $(one_line "$work/strict.err")"
elif [ "$rc" = 0 ]; then
	not_ok "$t: refuses to start" "exit status 0 without agent_ready: $(one_line "$work/strict.err")"
else
	ok "$t: refuses to start (exit $rc)"
	err=$(cat "$work/strict.err")
	case $err in
	*BPF-LSM* | *"BPF LSM"* | *lsm=*)
		ok "$t: the message names the cause" ;;
	*)
		not_ok "$t: the message names the cause" "no 'BPF-LSM' or 'lsm=' in: $(one_line "$work/strict.err")" ;;
	esac
	case $err in
	*--allow-degraded*)
		ok "$t: the message names the fix" ;;
	*)
		not_ok "$t: the message names the fix" "no '--allow-degraded' in: $(one_line "$work/strict.err")" ;;
	esac
	if [ -s "$work/strict.log" ] || [ -s "$work/strict.out" ]; then
		not_ok "$t: no record" "it wrote: $(one_line "$work/strict.log") $(one_line "$work/strict.out")"
	else
		ok "$t: no record"
	fi
fi

# ---- (b) --allow-degraded: every lost guarantee said twice ----
t="with --allow-degraded"
rc=
if start loose --allow-degraded; then
	ok "$t: agent_ready"
	ready=$(grep '"event":"agent_ready"' "$work/loose.log" | head -n 1)
	listed=$(echo "$ready" | sed -n 's/.*"degraded":\[\([^]]*\)\].*/\1/p' | tr -d '"' | tr ',' ' ')
	printed=$(sed -n 's/.*guarantee lost: \([a-z0-9_]*\).*/\1/p' "$work/loose.err" | tr '\n' ' ')
	if [ -z "$listed" ]; then
		not_ok "$t: agent_ready lists the lost guarantees" "no or empty \"degraded\":[...] in $ready"
	else
		missing=
		for g in $GUARANTEES; do
			case " $listed " in *" $g "*) ;; *) missing="$missing $g" ;; esac
		done
		if [ -z "$missing" ]; then
			ok "$t: agent_ready lists the lost guarantees: $listed"
		else
			not_ok "$t: agent_ready lists the lost guarantees" "missing$missing in $ready"
		fi
	fi
	missing=
	for g in $GUARANTEES; do
		case " $printed " in *" $g "*) ;; *) missing="$missing $g" ;; esac
	done
	if [ -z "$missing" ]; then
		ok "$t: stderr prints each lost guarantee"
	else
		not_ok "$t: stderr prints each lost guarantee" "no 'guarantee lost:' line for$missing; stderr: $(one_line "$work/loose.err")"
	fi
	# The two lists agree: nothing lost that one of them hides.
	a=$(echo "$listed" | tr ' ' '\n' | grep . | sort | tr '\n' ' ')
	b=$(echo "$printed" | tr ' ' '\n' | grep . | sort | tr '\n' ' ')
	if [ "$a" = "$b" ]; then
		ok "$t: stderr and agent_ready name the same guarantees"
	else
		not_ok "$t: stderr and agent_ready name the same guarantees" "agent_ready: $a; stderr: $b"
	fi
	stop "$t"
else
	why="exit status $rc"
	[ "$rc" = timeout ] && why="no exit within 10 s either"
	[ "$rc" != timeout ] && [ "$rc" -gt 128 ] && why="killed by signal $((rc - 128))"
	not_ok "$t: agent_ready" "no agent_ready ($why): $(tail -n 3 "$work/loose.err" | tr '\n' ' ')"
fi

summary
