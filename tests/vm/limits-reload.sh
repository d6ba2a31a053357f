#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# A reload re-applies resource limits (issue 6), in the test VM (the build
# host's hybrid cgroups have no controllers). One sandbox, /lim-rl, whose
# pids.max the agent finds at 1000 and memory.max at max:
#   start       pids 16, memory 64Mi    written at start
#   reload 1    pids 32, memory 48Mi    written over the old values
#   reload 2    pids 32, no memory      memory.max, memory.swap.max put
#                                       back to what was found (max)
#   reload 3    no limits at all        pids.max put back to 1000
#   reload 4    memory the cgroup cannot take (its controller is not
#               passed down to /lim-rl/x): rejected, limits untouched
#
# Env (from tests/vm/suite.sh): STOCKADE, CGROUP_ROOT, STOCKADE_AGENT_FLAGS.

. tests/vm/lib.sh

R=$CGROUP_ROOT
cg=$R/lim-rl
work=/tmp/limits-reload
bpffs=/sys/fs/bpf/limits-reload
out=$work/agent.out
rm -rf "$work"
mkdir -p "$work/pol"
[ ! -d "$bpffs" ] || "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1

# policy LIMITS-YAML: the policy file, replaced whole.
policy() {
	printf 'name: lim-rl\ncgroups: [/lim-rl]\n%s\n' "$1" > "$work/pol/.p.tmp"
	mv "$work/pol/.p.tmp" "$work/pol/p.yaml"
}
# files: pids.max memory.max memory.swap.max of the sandbox, one line.
files() {
	echo "$(cat "$cg/pids.max") $(cat "$cg/memory.max") $(cat "$cg/memory.swap.max")"
}
# step NAME WANT: stockade reload must apply, then the files must be WANT.
step() {
	"$STOCKADE" reload --bpffs "$bpffs" > "$work/reload.out" 2>&1
	rc=$?
	got=$(files)
	if [ "$rc" = 0 ] && [ "$got" = "$2" ]; then
		t_ok "limits-reload/$1 ($got)"
	else
		t_fail "limits-reload/$1" "reload exit $rc ($(head -n 2 "$work/reload.out")); files '$got', want '$2'"
	fi
}

rmdir "$cg/x" "$cg" 2>/dev/null
if ! mkdir "$cg"; then
	t_fail limits-reload/run "cannot create $cg"
	exit 0
fi
echo 1000 > "$cg/pids.max"
policy 'limits: {pids: 16, memory: 64Mi}'
# shellcheck disable=SC2086
"$STOCKADE" agent ${STOCKADE_AGENT_FLAGS:-} --bpffs "$bpffs" --detach-on-exit \
	--state "$work/state.json" --policy "$work/pol" > "$out" 2> "$work/agent.err" &
agent=$!
ready() { grep -qs '"event":"agent_ready"' "$out" || ! alive "$agent"; }
wait_for 30 ready
got=$(files)
if grep -q '"event":"agent_ready"' "$out" && [ "$got" = "16 67108864 0" ]; then
	t_ok "limits-reload/start ($got)"
else
	t_fail limits-reload/start "files '$got', want '16 67108864 0'; $(tail -n 2 "$work/agent.err")"
fi

policy 'limits: {pids: 32, memory: 48Mi}'
step changed "32 50331648 0"
policy 'limits: {pids: 32}'
step memory-put-back "32 max max"
policy ''
step pids-put-back "1000 max max"

# A limit the cgroup cannot take: rejected, with the fix, nothing changes.
policy 'limits: {pids: 16}'
step again "16 max max"
mkdir "$cg/x"
printf 'name: lim-rl-x\ncgroups: [/lim-rl/x]\nlimits: {memory: 32Mi}\n' > "$work/pol/x.yaml"
"$STOCKADE" reload --bpffs "$bpffs" > "$work/reload.out" 2>&1
rc=$?
got=$(files)
if [ "$rc" = 1 ] && [ "$got" = "16 max max" ] &&
   grep -q "x.yaml:3:.*limits.memory: cannot be applied to cgroup /lim-rl/x.*echo +memory > $cg/cgroup.subtree_control" "$work/reload.out" &&
   grep -q '"event":"reload".*"result":"rejected"' "$out"; then
	t_ok limits-reload/rejected-cannot-apply
else
	t_fail limits-reload/rejected-cannot-apply "reload exit $rc, files '$got'; $(head -n 3 "$work/reload.out")"
fi
rm -f "$work/pol/x.yaml"

kill -TERM "$agent"
wait "$agent"
rc=$?
got=$(files)
if [ "$rc" = 0 ] && [ "$got" = "1000 max max" ]; then
	t_ok limits-reload/detach-on-exit-puts-back
else
	t_fail limits-reload/detach-on-exit-puts-back "exit $rc, files '$got', want '1000 max max'"
fi
rmdir "$cg/x" "$cg" 2>/dev/null
exit 0
