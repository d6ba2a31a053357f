#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# The agent probes every BPF-LSM hook in the kernel's BTF before loading
# (agent/lsm.c): a hook the kernel lacks is not loaded, its guarantee is
# named in agent_ready's `degraded`, and the rest still load. Both test
# kernels have every hook stockade needs, so STOCKADE_TEST_HIDE_HOOKS
# makes the agent treat one as missing: socket_create, whose program alone
# refuses AF_PACKET (guarantee packet_sockets).
#   refuses       without --allow-degraded the agent does not start, and
#                 says which hook and guarantee, and the fix;
#   degraded      with it, agent_ready names packet_sockets, and only it;
#   not-loaded    AF_PACKET from the sandbox now works (nothing judges it);
#   rest-loaded   bpf() from the sandbox is still refused, with its record;
#   status        `stockade status` (text and --json) names packet_sockets;
#   links         one pinned link per table row (agent/lsm_table.c, copied
#                 into the guest) whose hook this kernel has, none for
#                 socket_create: on 6.1 the rows for 6.2's hooks load
#                 nothing, and yet nothing is degraded (lsm-smoke and
#                 file-scope check agent_ready's "degraded":[]).
#
# Env (from tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT.

. tests/vm/lib.sh

T=lsm-probe
policy=tests/vm/lsm-probe.yaml
bpffs=/sys/fs/bpf/lsm-probe
cg=$CGROUP_ROOT/lsm-smoke
work=/tmp/lsm-smoke	# the policy's write scope
rm -rf "$work"
mkdir -p "$work" "$cg"

# ---- refuses: no --allow-degraded ----
STOCKADE_TEST_HIDE_HOOKS=socket_create timeout 60 "$STOCKADE" agent \
	--policy "$policy" --bpffs "$bpffs" --detach-on-exit \
	> "$work/strict.out" 2> "$work/strict.err"
rc=$?
err=$(tr '\n' ' ' < "$work/strict.err")
if grep -q '"agent_ready"' "$work/strict.out"; then
	t_fail $T/refuses "the agent started without --allow-degraded though socket_create was missing"
elif [ "$rc" = 0 ] || [ "$rc" = 124 ]; then
	t_fail $T/refuses "want a failing exit status, got $rc: $err"
else
	case $err in
	*socket_create*packet_sockets*--allow-degraded*) t_ok $T/refuses ;;
	*) t_fail $T/refuses "the message does not name the hook, the guarantee and --allow-degraded: $err" ;;
	esac
fi
[ ! -d "$bpffs" ] || "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1

# ---- degraded: --allow-degraded ----
STOCKADE_TEST_HIDE_HOOKS=socket_create "$STOCKADE" agent \
	--policy "$policy" --bpffs "$bpffs" --detach-on-exit --allow-degraded \
	> "$work/agent.out" 2> "$work/agent.err" &
agent=$!
ready() { grep -q '"agent_ready"' "$work/agent.out" || ! alive "$agent"; }
wait_for 60 ready
line=$(grep '"agent_ready"' "$work/agent.out" | head -n 1)
case $line in
*'"degraded":["packet_sockets"]'*)
	if grep -q 'guarantee lost: packet_sockets' "$work/agent.err"; then
		t_ok $T/degraded
	else
		t_fail $T/degraded "stderr lacks 'guarantee lost: packet_sockets': $(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
	fi ;;
'')
	t_fail $T/degraded "no agent_ready: $(tail -n 3 "$work/agent.err" | tr '\n' ' ')" ;;
*)
	t_fail $T/degraded "want \"degraded\":[\"packet_sockets\"]: $line" ;;
esac

# In the sandbox: the shell joins, exec keeps its pid for the probe.
inside() {
	timeout 20 sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@" 2>&1
}
got=$(inside "$TOOLS/netprobe" socket packet | tail -n 1)
if [ "$got" = OK ]; then
	t_ok $T/not-loaded
else
	t_fail $T/not-loaded "AF_PACKET in the sandbox: want OK (socket_create not loaded), got $got"
fi
out=$(inside "$TOOLS/fileprobe" bpf)
pid=$(echo "$out" | sed -n 's/^pid=//p')
if [ "$(echo "$out" | tail -n 1)" != EPERM ]; then
	t_fail $T/rest-loaded "bpf() in the sandbox: want EPERM, got $(echo "$out" | tail -n 1)"
elif ! wait_for 10 grep -q "\"kind\":\"bpf\".*\"pid\":$pid," "$work/agent.out"; then
	t_fail $T/rest-loaded "no bpf record for pid $pid"
else
	t_ok $T/rest-loaded
fi
# Every loaded program holds one link, pinned as lsm-<program>: none for
# socket_create, one for each other hook the kernel has (a hook with twin
# programs, one per prototype, loads one of them), and the setup pass's
# tracepoint (lsm-stk_setup_attach, bpf/setup.bpf.c), and the exec
# records' tracepoints (lsm-stk_exec*, bpf/exec.bpf.c: their rows name a
# sched_process_* tracepoint, not an LSM hook).
want=$((1 + $(grep -c '{ "stk_exec[a-z_]*", "sched_process_' /opt/stockade/agent/lsm_table.c 2>/dev/null)))
# Each hook this kernel has (bpf_lsm_HOOK among its symbols), less
# socket_create, and each fentry row (LSM_FENTRY "func") whose func it has:
# one awk pass over /proc/kallsyms for all of them. (A grep of it per
# hook, even of a copy of its names, took 15 s on 6.1 and 45 s on 6.12
# under TCG.)
table=/opt/stockade/agent/lsm_table.c
{
	sed -n 's/^[[:space:]]*{ "stk_[a-z0-9_]*", "\([a-z0-9_]*\)".*/bpf_lsm_\1/p' "$table" 2>/dev/null |
		sort -u | grep -vx bpf_lsm_socket_create
	sed -n 's/^[[:space:]]*{ "stk_[a-z0-9_]*", LSM_FENTRY "\([a-z0-9_]*\)".*/\1/p' "$table" 2>/dev/null
} > "$work/wanted"
# A name listed twice (two fentry rows of one func) counts twice; a
# symbol listed twice in kallsyms (two static functions of one name)
# counts once.
want=$((want + $(awk 'NR == FNR { n[$1]++; next }
	($3 in n) { c += n[$3]; delete n[$3] }
	END { print c + 0 }' "$work/wanted" /proc/kallsyms)))
have=$(ls "$bpffs/links" | grep -c '^lsm-')
if [ -e "$bpffs/links/lsm-stk_socket_create" ]; then
	t_fail $T/links "lsm-stk_socket_create is pinned: the hidden hook's program was attached"
elif [ "$have" = "$want" ]; then
	t_ok $T/links
else
	t_fail $T/links "want $want LSM links (agent/lsm_table.c's hooks this kernel has, less socket_create; a program without a row there?), have $have: $(ls "$bpffs/links" | grep '^lsm-' | tr '\n' ' ')"
fi

# status: the same loss, read back from the pins and the kernel's BTF.
json=$("$STOCKADE" status --bpffs "$bpffs" --json 2>&1)
text=$("$STOCKADE" status --bpffs "$bpffs" 2>&1)
case $json in
*'"degraded":["packet_sockets"]'*)
	case $text in
	*"degraded: packet_sockets "*) t_ok $T/status ;;
	*) t_fail $T/status "no 'degraded: packet_sockets' line in: $(echo "$text" | head -n 6 | tr '\n' ' ')" ;;
	esac ;;
*) t_fail $T/status "want \"degraded\":[\"packet_sockets\"] in status --json: $(echo "$json" | cut -c 1-300)" ;;
esac

kill -TERM "$agent" 2>/dev/null
wait_for 10 sh -c '! kill -0 '"$agent"
kill -9 "$agent" 2>/dev/null
wait "$agent" 2>/dev/null
[ ! -d "$bpffs" ] || "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
rmdir "$cg" 2>/dev/null
exit 0
