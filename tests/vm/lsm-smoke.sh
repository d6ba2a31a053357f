#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# BPF-LSM smoke test, in the test VM (the build host's kernel refuses
# BPF-LSM programs). Does what an attacker would: a real process in a
# sandbox cgroup calls socket(AF_PACKET, SOCK_RAW, 0), which no cgroup
# socket hook sees; only the agent's lsm/socket_create program can refuse
# it. Checks the denial, its one log record, and that the same call outside
# the sandbox still works.
#
# Env (from tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS (optional, unquoted on purpose: several flags).

. tests/vm/lib.sh

# The policy directory, outside the sandbox's write scope: stale-outside
# adds a policy to it and reloads.
pol=/tmp/lsm-smoke-pol
# Private pins, removed when the agent stops (--detach-on-exit).
bpffs=/sys/fs/bpf/lsm-smoke
cg=$CGROUP_ROOT/lsm-smoke
work=/tmp/lsm-smoke
probe=$TOOLS/netprobe
rm -rf "$work" "$pol"
mkdir -p "$work" "$pol"
cp tests/live/lsm-smoke.yaml "$pol/lsm-smoke.yaml"

# Lines of the agent's stdout that record this probe pid's AF_PACKET deny.
deny_lines() {
	grep '"kind": *"socket"' "$work/agent.out" |
		grep '"reason": *"packet_socket"' |
		grep "\"pid\": *$1[^0-9]"
}
agent_ready() {
	grep -q '"event": *"agent_ready"' "$work/agent.out"
}
agent_alive() {
	alive "$agent"
}
agent_gone() {
	! alive "$agent"
}
ready_or_dead() {
	agent_ready || ! agent_alive
}
# Everything after the agent depends on it; say so instead of going quiet.
not_run() {
	for t in packet-denied-in-sandbox deny-logged-once packet-allowed-outside stale-outside \
		stale-inside-confined stale-inside-moved stale-inside-moved-back stale-inside-detached \
		stale-inside-records agent-stops; do
		t_fail "lsm-smoke/$t" "not run: $1"
	done
}

if [ ! -x "$probe" ]; then
	t_fail lsm-smoke/agent-ready "no probe at $probe (tools/netprobe.c, built static)"
	not_run "no netprobe"
	exit 0
fi
mkdir -p "$cg" || { t_fail lsm-smoke/agent-ready "cannot create $cg"; not_run "no cgroup"; exit 0; }

# shellcheck disable=SC2086
# STOCKADE_VERIFIER_STATS: each program's verifier work, on the console
# (agent.err's verifier: lines, below).
STOCKADE_VERIFIER_STATS=1 "$STOCKADE" agent --policy "$pol" --bpffs "$bpffs" --detach-on-exit \
	${STOCKADE_AGENT_FLAGS:-} \
	> "$work/agent.out" 2> "$work/agent.err" &
agent=$!
# Loading and verifying the programs is slow under TCG emulation.
wait_for 60 ready_or_dead
if ! agent_ready; then
	if agent_alive; then
		t_fail lsm-smoke/agent-ready "no agent_ready event within 60 s"
		kill -9 "$agent" 2>/dev/null
		"$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
	else
		wait "$agent"
		t_fail lsm-smoke/agent-ready "agent exited with status $? before agent_ready: $(tail -n 2 "$work/agent.err")"
	fi
	t_show "$work/agent.err"
	t_show "$work/agent.out"
	not_run "agent not ready"
	rmdir "$cg" 2>/dev/null
	exit 0
fi
ready=$(grep '"event": *"agent_ready"' "$work/agent.out" | head -n 1)
# Without BPF-LSM the agent would only start with --allow-degraded, and
# would list the lost guarantees here.
case $ready in
*'"degraded":[]'* | *'"degraded": []'*)
	t_ok lsm-smoke/agent-ready ;;
*)
	t_fail lsm-smoke/agent-ready "agent is degraded: $ready" ;;
esac
# Where an agent's start goes under TCG (how much of the suite's time
# goes to agents starting): on the console, for the VM's budget.
grep '^verifier: ' "$work/agent.err" | sed 's/^/lsm-smoke: /'
# STOCKADE_VERIFIER_STATS said something of every program: a line for
# stk_file_open (a BPF-LSM program) with its instructions, and the total.
if grep -Eq '^verifier: stk_file_open +[1-9][0-9]* insns' "$work/agent.err" &&
   grep -Eq '^verifier: total [1-9][0-9]* insns' "$work/agent.err"; then
	t_ok lsm-smoke/verifier-stats
else
	t_fail lsm-smoke/verifier-stats "no verifier: lines for stk_file_open and the total in the agent's stderr: $(grep -c '^verifier: ' "$work/agent.err") lines"
fi
echo "lsm-smoke: agent_ready after $(echo "$ready" | sed -n 's/.*"startup_ms": *\([0-9]*\).*/\1/p') ms, $(echo "$ready" | sed -n 's/.*"bpf_load_ms": *\([0-9]*\).*/\1/p') ms of them loading the BPF object, $(echo "$ready" | sed -n 's/.*"lsm_attach_ms": *\([0-9]*\).*/\1/p') ms linking its BPF-LSM programs"

# Inside: the shell joins the sandbox, then exec keeps its pid for the probe.
timeout 20 sh -c 'echo $$ > "$1/cgroup.procs" && echo $$ > "$2" && exec "$3" socket packet' \
	sh "$cg" "$work/in.pid" "$probe" > "$work/in.out" 2>&1
in_rc=$?
in_pid=$(head -n 1 "$work/in.out" | sed -n 's/.*pid=\([0-9][0-9]*\).*/\1/p')
if [ -z "$in_pid" ]; then
	t_fail lsm-smoke/packet-denied-in-sandbox "probe printed no pid=N first line (exit $in_rc): $(head -n 3 "$work/in.out")"
elif [ "$in_pid" != "$(cat "$work/in.pid" 2>/dev/null)" ]; then
	t_fail lsm-smoke/packet-denied-in-sandbox "probe pid $in_pid is not the process moved into $cg ($(cat "$work/in.pid" 2>/dev/null))"
elif [ "$(tail -n 1 "$work/in.out")" = EPERM ]; then
	t_ok lsm-smoke/packet-denied-in-sandbox
else
	t_fail lsm-smoke/packet-denied-in-sandbox "expected EPERM (exit $in_rc), probe said: $(tail -n +2 "$work/in.out" | head -n 3)"
fi

# Outside (the suite runs in the root cgroup, no sandbox).
timeout 20 "$probe" socket packet > "$work/out.out" 2>&1
out_rc=$?
out_pid=$(head -n 1 "$work/out.out" | sed -n 's/.*pid=\([0-9][0-9]*\).*/\1/p')
if [ "$(tail -n 1 "$work/out.out")" = OK ]; then
	t_ok lsm-smoke/packet-allowed-outside
else
	t_fail lsm-smoke/packet-allowed-outside "expected OK outside the sandbox (exit $out_rc): $(head -n 3 "$work/out.out")"
fi

# The record: exactly one per denied call, none for the outsider. Records
# arrive asynchronously through the ring buffer; wait for the first, then
# give a duplicate time to show up.
if [ -n "$in_pid" ]; then
	wait_for 10 deny_lines "$in_pid" > /dev/null
	sleep 1
	n=$(deny_lines "$in_pid" | wc -l)
	n_out=0
	[ -z "$out_pid" ] || n_out=$(deny_lines "$out_pid" | wc -l)
	if [ "$n" = 1 ] && [ "$n_out" = 0 ]; then
		t_ok lsm-smoke/deny-logged-once
	else
		t_fail lsm-smoke/deny-logged-once "want 1 socket/packet_socket record for pid $in_pid and 0 for outsider pid ${out_pid:-?}; got $n and $n_out"
		t_show "$work/agent.out"
	fi
else
	t_fail lsm-smoke/deny-logged-once "no probe pid to look for"
fi

# stale-outside: the outsider caches (cg_fast, task storage
# `task_verdict`, and cg_cache) never outlive a write of the sandboxes
# map. One long-lived shell, in a cgroup no policy selects, opens
# /etc/shadow itself (the redirection of a builtin: no child, the same
# task every time) ten times a second: allowed, and its "outside"
# verdict cached. A reload of the
# agent above then selects that cgroup, the task not moving (same cgroup
# id, so only the generation can end its cached verdict): from then on
# every open is refused, each with one record.
so=$CGROUP_ROOT/lsm-smoke-late
mkdir -p "$so"
made_shadow=
[ -e /etc/shadow ] || { echo 'root:*:19000:0:99999:7:::' > /etc/shadow && made_shadow=1; }
# Stopped by a file, between two opens, never by a signal: a kill
# landing after a refused open but before its "refused" line would
# leave a record with no line to match.
rm -f "$work/so.stop"
sh -c 'echo $$ > "$1/cgroup.procs" || exit 1
	while [ ! -e "$2" ]; do
		if read -r l < /etc/shadow; then echo open; else echo refused; fi
		sleep 0.1
	done' sh "$so" "$work/so.stop" > "$work/so.out" 2> /dev/null &
loop=$!
sleep 3
before=$(grep -c open "$work/so.out")
printf 'name: so-b\ncgroups: [/lsm-smoke-late]\nnetwork:\n  default: deny\n' > "$pol/b.yaml"
if ! "$STOCKADE" reload --bpffs "$bpffs" > "$work/so-reload.out" 2>&1; then
	t_fail lsm-smoke/stale-outside "stockade reload failed: $(cat "$work/so-reload.out")"
else
	n0=$(wc -l < "$work/so.out")
	sleep 3
	: > "$work/so.stop"
	wait "$loop"	# within one turn of the loop
	sleep 0.5
	after=$(tail -n +"$((n0 + 2))" "$work/so.out")
	n_after=$(echo "$after" | grep -c .)
	n_open=$(echo "$after" | grep -c open)
	n_ref=$(grep -c refused "$work/so.out")
	n_rec=$(grep '"event": *"deny"' "$work/agent.out" | grep -c "\"pid\": *$loop[^0-9]")
	if [ "$before" -lt 10 ]; then
		t_fail lsm-smoke/stale-outside "only $before allowed opens outside before the reload (the loop did not run?)"
	elif [ "$n_after" -lt 10 ] || [ "$n_open" != 0 ]; then
		t_fail lsm-smoke/stale-outside "after the reload selected its cgroup, $n_open of $n_after opens by the same task were allowed (a stale outside verdict)"
	elif [ "$n_rec" != "$n_ref" ]; then
		t_fail lsm-smoke/stale-outside "$n_ref refused opens, $n_rec deny records for pid $loop"
	else
		t_ok lsm-smoke/stale-outside
	fi
fi
kill "$loop" 2> /dev/null
wait "$loop" 2> /dev/null
[ -z "$made_shadow" ] || rm -f /etc/shadow

# stale-inside: a confined task's copy of its cgroup's entry (task storage
# `task_verdict`) never outlives a write of that entry. One long-lived
# shell in /lsm-smoke-in appends to a file in $w1 itself (a builtin's
# redirection: the same task every time) ten times a second. Policy so-c
# lets it write only in $w2, so-d only in $w1; the cgroup moves between
# them by reloads that swap their selectors (its entry is rewritten with
# another slot), and at last `stockade detach` releases it while the agent
# runs (the entry deleted by the command, not the agent). The task never
# moves, so only the generation can end its copy: after each step, every
# write but the one in flight must follow the new state, each refused one
# with one record.
si=$CGROUP_ROOT/lsm-smoke-in
sidle=$CGROUP_ROOT/lsm-smoke-idle
w1=/tmp/lsm-smoke-w1
w2=/tmp/lsm-smoke-w2
mkdir -p "$si" "$sidle" "$w1" "$w2"
swap() {	# swap CGROUP_OF_C CGROUP_OF_D
	printf 'name: so-c\ncgroups: [%s]\nnetwork:\n  default: deny\nfiles:\n  write: [%s]\n' "$1" "$w2" > "$pol/c.yaml"
	printf 'name: so-d\ncgroups: [%s]\nnetwork:\n  default: deny\nfiles:\n  write: [%s]\n' "$2" "$w1" > "$pol/d.yaml"
}
# stale_step NAME WANT CMD...: run CMD, then watch the loop's lines
# written after CMD returned (the first of them may have begun before):
# all WANT. Lines written while CMD ran are not judged: the step is done
# when CMD returns, and a reload under TCG takes longer than the loop's
# 0.1 s between writes. A failure says where the first wrong line came.
stale_step() {
	_t=$1 _want=$2
	shift 2
	if ! "$@" > "$work/si-step.out" 2>&1; then
		t_fail "lsm-smoke/$_t" "$* failed: $(tail -n 3 "$work/si-step.out")"
		return
	fi
	_n0=$(wc -l < "$work/si.out")
	sleep 3
	_after=$(tail -n +"$((_n0 + 2))" "$work/si.out")
	_n=$(echo "$_after" | grep -c .)
	_bad=$(echo "$_after" | grep -vc "^$_want\$")
	if [ "$_n" -lt 10 ]; then
		t_fail "lsm-smoke/$_t" "only $_n writes in 3 s after '$*' (the loop stopped?)"
	elif [ "$_bad" != 0 ]; then
		t_fail "lsm-smoke/$_t" "after '$*', $_bad of $_n writes by the same task were not $_want (a stale copy of its entry; the first at line $(echo "$_after" | grep -vn "^$_want\$" | head -n 1 | cut -d: -f1) of them)"
	else
		t_ok "lsm-smoke/$_t"
	fi
}
swap /lsm-smoke-in /lsm-smoke-idle
if ! "$STOCKADE" reload --bpffs "$bpffs" > "$work/si-reload.out" 2>&1; then
	for t in stale-inside-confined stale-inside-moved stale-inside-moved-back \
		stale-inside-detached stale-inside-records; do
		t_fail "lsm-smoke/$t" "stockade reload failed: $(cat "$work/si-reload.out")"
	done
else
	rm -f "$work/si.stop"
	sh -c 'echo $$ > "$1/cgroup.procs" || exit 1
		while [ ! -e "$2" ]; do
			if echo x >> "$3/f"; then echo written; else echo refused; fi
			sleep 0.1
		done' sh "$si" "$work/si.stop" "$w1" > "$work/si.out" 2> /dev/null &
	loop=$!
	sleep 2
	if [ "$(grep -c refused "$work/si.out")" -lt 10 ] || grep -q written "$work/si.out"; then
		t_fail lsm-smoke/stale-inside-confined "under so-c its writes in $w1 were not all refused: $(sort "$work/si.out" | uniq -c | tr '\n' ' ')"
	else
		t_ok lsm-smoke/stale-inside-confined
	fi
	swap /lsm-smoke-idle /lsm-smoke-in
	stale_step stale-inside-moved written "$STOCKADE" reload --bpffs "$bpffs"
	swap /lsm-smoke-in /lsm-smoke-idle
	stale_step stale-inside-moved-back refused "$STOCKADE" reload --bpffs "$bpffs"
	stale_step stale-inside-detached written "$STOCKADE" detach /lsm-smoke-in --bpffs "$bpffs"
	: > "$work/si.stop"
	wait "$loop"
	sleep 0.5
	n_ref=$(grep -c refused "$work/si.out")
	n_rec=$(grep '"event": *"deny"' "$work/agent.out" | grep -c "\"pid\": *$loop[^0-9]")
	if [ "$n_rec" != "$n_ref" ]; then
		t_fail lsm-smoke/stale-inside-records "$n_ref refused writes, $n_rec deny records for pid $loop"
	else
		t_ok lsm-smoke/stale-inside-records
	fi
fi
kill "$loop" 2> /dev/null
wait "$loop" 2> /dev/null
rm -rf "$w1" "$w2"

kill -TERM "$agent"
if wait_for 10 agent_gone; then
	wait "$agent"
	rc=$?
	if [ "$rc" = 0 ]; then
		t_ok lsm-smoke/agent-stops
	else
		t_fail lsm-smoke/agent-stops "agent exited with status $rc on SIGTERM: $(tail -n 2 "$work/agent.err")"
	fi
else
	t_fail lsm-smoke/agent-stops "agent still running 10 s after SIGTERM"
	kill -9 "$agent" 2>/dev/null
	wait "$agent"
fi
# --detach-on-exit: nothing of this test stays pinned.
if [ -d "$bpffs" ]; then
	t_fail lsm-smoke/unpinned "$bpffs still exists after SIGTERM with --detach-on-exit"
	"$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
fi
rmdir "$cg" "$so" "$si" "$sidle" 2>/dev/null
rm -rf "$pol"
exit 0

