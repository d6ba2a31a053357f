#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# The verdict cache cg_fast's lockless read (include/sandbox.h) against
# writers on another CPU, in the test VM's two-CPU guests (tests/vm/run.sh,
# VM_RACE). A reader takes a slot only if its sequence count was the same
# even number before and after it read the slot; a reader that took a
# slot half written could take a sandbox cgroup's id with an outsider's
# "outside", and let the sandbox open anything. Here it would:
#
#   the layout test build (make variant-layout) has one slot, which
#   every cgroup's verdict takes in turn, writes a slot's cgroup id first
#   and its verdict after a spin, and spins between a reader's first
#   read of the sequence and its reads of the slot;
#   writer 1, in sandbox cf-x, forks and execs again and again: a new
#     task has no verdict in its storage, so its first hook finds the
#     slot holding the outsider's verdict, goes the long way and writes
#     its own ("inside");
#   writer 2, in cf-out, a cgroup no policy selects, does the same, and
#     writes "outside" over writer 1's;
#   the reader, in cf-x, opens /cf/deny/f, which cf-x may not read: every
#     open must be refused, with its record.
#   While writer 1 writes, the slot holds cf-x's id with writer 2's
#   "outside": the reader's own cgroup, outside every sandbox.
#
# The test build counts the reads the sequence turned away
# (cg_fast_turned key 0), which must be some: reads met writers
# mid-write. With either of the sequence's two checks taken out of
# cg_fast_get() (odd before the read; changed after it), some of the
# reader's opens were allowed (this case broken on purpose; README,
# Testing).
#
# Writers that only opened files would write once each: a task's own
# storage answers its later hooks, and is never copied into the slot
# (bpf/common.bpf.h says why).
#
# Env (tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT.

. tests/vm/lib.sh

T=cgfast-race
bf=$TOOLS/benchfile
work=/tmp/cgfast-race
log=$work/agent.log
bpffs=/sys/fs/bpf/cgfast-race
cgx=$CGROUP_ROOT/cf-x
cgo=$CGROUP_ROOT/cf-out
agent=

if [ "$(hostname)" != stockade-vm ] || [ ! -f /init ]; then
	t_fail $T/guest "refusing to run outside the test VM: this script writes /cf"
	exit 0
fi
two_cpus $T || exit 0
t_ok $T/cpus

cleanup() {
	agent_kill
	cg_remove "$cgx" "$cgo"
	rm -rf /cf
}
trap cleanup EXIT

rm -rf "$work" /cf
mkdir -p "$work/policies" /cf/deny "$cgx" "$cgo"
echo data > /cf/deny/f
cat > "$work/policies/cf-x.yaml" <<EOF
name: cf-x
mode: enforce
cgroups: [/cf-x]
network:
  default: deny
files:
  read: [/opt/stockade]
EOF

: > "$log"
"$TOOLS/stockade-variant-layout" agent --policy "$work/policies" --bpffs "$bpffs" \
	--ring-size 32M --log "$log" > /dev/null 2> "$work/agent.err" &
agent=$!
agent_ready_or_fail $T/agent-ready "$log" "$agent" "$work/agent.err" || exit 0

t0=$("$TOOLS/bpfquery" u64 "$bpffs/maps/cg_fast_turned" 0 2>&1)
# benchfile @exec: a fork and an exec of benchfile each block; the
# reader's blocks are long, it only has to outlast the writers.
"$bf" open --iters 1 --blocks 1500 --cond "w=$cgx" w/x:ok:@exec \
	> "$work/w1.out" 2>&1 &
w1=$!
"$bf" open --iters 1 --blocks 1500 --cond "w=$cgo" w/o:ok:@exec \
	> "$work/w2.out" 2>&1 &
w2=$!
"$bf" open --iters 500 --blocks 40 --cond "w=$cgx" w/r:denied:/cf/deny/f \
	> "$work/r.out" 2>&1
rrc=$?
wait "$w1"
w1rc=$?
wait "$w2"
w2rc=$?
t1=$("$TOOLS/bpfquery" u64 "$bpffs/maps/cg_fast_turned" 0 2>&1)

race_verdicts no-torn-outside /cf/deny/f "$rrc" "$w1rc" "$w2rc"
turned=$((t1 - t0))
if [ "$turned" -gt 0 ] 2> /dev/null; then
	t_ok $T/race-run
else
	t_fail $T/race-run "cg_fast_turned: $t0 then $t1 (want it to grow: readers met writers mid-write)"
fi
echo "$T: the reader made $opens opens, $denied refused; $turned reads turned away by the sequence"

# Each refusal has its record: one per denied open, none lost.
race_records /cf/deny/f
exit 0
