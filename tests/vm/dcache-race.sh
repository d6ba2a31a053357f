#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# The file decision cache's lockless read (include/file.h, Concurrency)
# against writers on another CPU, in the test VM's two-CPU guests (make
# test boots one per kernel for this alone: tests/vm/run.sh, VM_RACE). A reader
# takes a way only if the entry's sequence count was the same even
# number before and after it read the key; a reader that took a key half
# written could allow a name no policy allows it. Here it would:
#
#   /rc/a1 ... /rc/a5 and /rc/deny are bind mounts of one directory, so
#   /rc/aN/f and /rc/deny/f are one file (one inode, one entry of four
#   ways), one dentry, six mounts. Sandbox rc-1 may read /rc/a1..a5, not
#   /rc/deny; sandbox rc-2 may read /rc/deny.
#   writer 1, in rc-1, opens the file through a1..a5 in turn: five keys
#     for four ways, so each of its opens misses and writes a way;
#   writer 2, in rc-2, opens /rc/deny/f, and writes its key over one of
#     writer 1's;
#   the reader, in rc-1, opens /rc/deny/f, which rc-1 may not read: every
#     open must be refused, with its record.
#   A way that writer 2 is writing over one of writer 1's holds, half
#   way, /rc/deny's mount and dentry with rc-1's sandbox and policy: the
#   reader's own key, with an allow in it.
#
# The test build (make variant) writes a key in two steps with a spin
# between them (dcache_widen(), bpf/file.bpf.c), and spins between a
# reader's first read of the sequence and its reads of the ways
# (dcache_read_widen()), so that half-written ways, and writers that
# start mid-read, are common rather than once in a long while; and it
# counts the reads the sequence turned away (dcache_hits key 1), which
# must be some: reads met writers mid-write. With either of the
# sequence's checks taken out of dcache_get(), the reader's opens were
# allowed (this case broken on purpose; README, Testing).
#
# Env (tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT.

. tests/vm/lib.sh

T=dcache-race
bf=$TOOLS/benchfile
work=/tmp/dcache-race
log=$work/agent.log
bpffs=/sys/fs/bpf/dcache-race
cg1=$CGROUP_ROOT/rc-1
cg2=$CGROUP_ROOT/rc-2
agent=
mounts="deny a1 a2 a3 a4 a5"

if [ "$(hostname)" != stockade-vm ] || [ ! -f /init ]; then
	t_fail $T/guest "refusing to run outside the test VM: this script mounts over /rc"
	exit 0
fi
two_cpus $T || exit 0
t_ok $T/cpus

cleanup() {
	if [ -n "$agent" ]; then
		kill -TERM "$agent" 2>/dev/null
		wait_for 20 eval '! alive "$agent"' || kill -9 "$agent" 2>/dev/null
		wait "$agent" 2>/dev/null
	fi
	[ ! -d "$bpffs" ] || "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
	for m in $mounts; do
		umount "/rc/$m" 2>/dev/null
	done
	cg_remove "$cg1" "$cg2"
	rm -rf /rc
}
trap cleanup EXIT

rm -rf "$work" /rc
mkdir -p "$work/policies" /rc/in "$cg1" "$cg2"
echo data > /rc/in/f
for m in $mounts; do
	mkdir -p "/rc/$m"
	mount --bind /rc/in "/rc/$m"
done
# policy NAME READ-LIST
policy() {
	cat > "$work/policies/$1.yaml" <<EOF
name: $1
mode: enforce
cgroups: [/$1]
network:
  default: deny
files:
  read: [$2, /opt/stockade]
EOF
}
policy rc-1 "/rc/a1, /rc/a2, /rc/a3, /rc/a4, /rc/a5"
policy rc-2 /rc/deny

: > "$log"
"$TOOLS/stockade-variant" agent --policy "$work/policies" --bpffs "$bpffs" \
	--ring-size 32M --log "$log" > /dev/null 2> "$work/agent.err" &
agent=$!
agent_ready_or_fail $T/agent-ready "$log" "$agent" "$work/agent.err" || exit 0

h0=$("$TOOLS/bpfquery" u64 "$bpffs/maps/dcache_hits" 0 2>&1)
t0=$("$TOOLS/bpfquery" u64 "$bpffs/maps/dcache_hits" 1 2>&1)
# benchfile: one call per block, so that writer 1's five names take
# turns at every open; the reader's blocks are long, it only has to
# outlast the writers.
"$bf" open --iters 1 --blocks 4000 --cond "w=$cg1" \
	w/a1:ok:/rc/a1/f w/a2:ok:/rc/a2/f w/a3:ok:/rc/a3/f w/a4:ok:/rc/a4/f \
	w/a5:ok:/rc/a5/f > "$work/w1.out" 2>&1 &
w1=$!
"$bf" open --iters 1 --blocks 10000 --cond "w=$cg2" w/d1:ok:/rc/deny/f \
	w/d2:ok:/rc/deny/f > "$work/w2.out" 2>&1 &
w2=$!
"$bf" open --iters 500 --blocks 80 --cond "w=$cg1" w/r:denied:/rc/deny/f \
	> "$work/r.out" 2>&1
rrc=$?
wait "$w1"
w1rc=$?
wait "$w2"
w2rc=$?
h1=$("$TOOLS/bpfquery" u64 "$bpffs/maps/dcache_hits" 0 2>&1)
t1=$("$TOOLS/bpfquery" u64 "$bpffs/maps/dcache_hits" 1 2>&1)

race_verdicts no-torn-allow /rc/deny/f "$rrc" "$w1rc" "$w2rc"
hits=$((h1 - h0)) turned=$((t1 - t0))
if [ "$hits" -gt 0 ] 2> /dev/null && [ "$turned" -gt 0 ] 2> /dev/null; then
	t_ok $T/race-run
else
	t_fail $T/race-run "dcache_hits: $h0 then $h1 hits, $t0 then $t1 reads turned away (want both to grow: the cache answered, and readers met writers)"
fi
echo "$T: the reader made $opens opens, $denied refused; $hits hits, $turned reads turned away by the sequence"

# Each refusal has its record: one per denied open, none lost.
race_records /rc/deny/f
exit 0
