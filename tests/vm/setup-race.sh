#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# The setup pass (include/setup.h) when the runtime's move lands during
# its init's re-exec of its own clone, in the test VM's two-CPU guests
# (tests/vm/run.sh, VM_RACE): runc moves its init into the container's
# cgroup while the init re-executes itself from a memfd or a detached
# mount. Wherever in that exec the move lands, the pass must go on until
# the payload's exec. A move after the exec's bprm_check and before it
# opens its ELF interpreter once ended it at the interpreter's open (a CI
# run of tests/vm/runc.sh on 6.12: runc's next step was refused); the
# exec is now noted at bprm_check (struct setup_clone).
#
# tools/setupprobe-ld plays runc (setupprobe's memfd-race mode): a
# dynamic build whose ELF interpreter's path is a chain of 36 symlinks of
# 2,000 "./" each, made here (the Makefile, SLOWLD_DIR), so that the
# exec spends most of its time in the kernel between its bprm_check and
# its interpreter's open, and the parent, on the other CPU, moves the
# child a swept number of microseconds after the child said it was about
# to exec. Every trial, in a new cgroup: the new image's read of
# /etc/shadow is allowed (memfd-open=OK: still in setup), the payload's
# is refused with one record, the pass's exec record names the payload
# (fileprobe), not the interpreter, and no other deny names the child.
# Trials whose move landed while the exec was still under way (the
# child's comm unchanged after the move: in-exec=yes) are counted; there
# must be some, or the run proved nothing. With the bprm_check note taken
# out (setup_exec(), bpf/setup.bpf.h), trials failed here (README,
# Testing).
#
# Env (tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT.

. tests/vm/lib.sh

T=setup-race
work=/tmp/setup-race
log=$work/agent.log
bpffs=/sys/fs/bpf/setup-race
top=$CGROUP_ROOT/setup-race
slowld=/tmp/slowld
rt=$TOOLS/setupprobe-ld
ld=/lib64/ld-linux-x86-64.so.2
agent=

if [ "$(hostname)" != stockade-vm ] || [ ! -f /init ]; then
	t_fail $T/guest "refusing to run outside the test VM: it writes /etc/shadow"
	exit 0
fi
two_cpus $T || exit 0
for f in "$rt" "$ld"; do
	[ -x "$f" ] || { t_fail $T/setup "no $f (make tools; tests/vm/mkinitramfs.sh bundles its libraries)"; exit 0; }
done
rm -rf "$work" "$slowld"
mkdir -p "$work/pol" "$top" "$slowld"
[ -e /etc/shadow ] || echo 'root:*:19000:0:99999:7:::' > /etc/shadow
# The interpreter's path: s1 -> ./././.../s2 -> ... -> s36 -> ld.so (the
# kernel follows at most 40 links in one lookup).
dots=$(printf './%.0s' $(seq 2000))
i=1
while [ $i -lt 36 ]; do
	ln -s "${dots}s$((i + 1))" "$slowld/s$i"
	i=$((i + 1))
done
ln -s "$ld" "$slowld/s36"
if ! "$rt" 2>&1 | grep -q usage; then
	t_fail $T/setup "$rt does not run through its slow interpreter: $("$rt" 2>&1 | head -n 2)"
	exit 0
fi
# A move's write to cgroup.procs waits for an RCU grace period (the
# threadgroup rwsem's writer side), 12 to 42 ms here, longer than the
# exec's 11 ms in the kernel: where in the exec the move lands would be
# anyone's guess. favordynmods (6.0+) keeps that lock ready for writers.
if ! mount -o remount,favordynmods "$CGROUP_ROOT"; then
	t_fail $T/setup "remounting $CGROUP_ROOT with favordynmods failed: the moves could not be placed"
	exit 0
fi
cat > "$work/pol/race.yaml" <<'EOF'
name: race
cgroups: [/setup-race/*]
network:
  default: deny
setup:
  deadline: 10s
EOF

cleanup() {
	agent_kill
	for d in "$top"/* "$top"; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	rm -rf "$slowld"
	mount -o remount,nofavordynmods "$CGROUP_ROOT" 2>/dev/null
}
trap cleanup EXIT

: > "$log"
# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/pol" --bpffs "$bpffs" \
	--cgroup-root "$CGROUP_ROOT" --detach-on-exit --log "$log" \
	> "$work/agent.out" 2> "$work/agent.err" &
agent=$!
agent_ready_or_fail $T/agent-ready "$log" "$agent" "$work/agent.err" || exit 0

# 41 trials, the move 0 to 15 ms after the child's word, 375 us apart
# (the exec spends 8 to 11 ms in the kernel in these guests).
us=0
n=0
while [ $us -le 15000 ]; do
	n=$((n + 1))
	mkdir "$top/c-$n"
	timeout 60 "$rt" "$top/c-$n" memfd-race /etc/shadow $us > "$work/t$n.out" 2>&1
	echo "$us" > "$work/t$n.us"
	us=$((us + 375))
done
sleep 1	# the records reach the log

bad=0
inexec=0
i=1
while [ $i -le $n ]; do
	out=$work/t$i.out
	pid=$(sed -n 's/^moved=//p' "$out")
	grep -qx 'in-exec=yes' "$out" && inexec=$((inexec + 1))
	d=$(grep '"event":"deny"' "$log" | grep "\"pid\":${pid:-none},")
	why=
	if ! grep -qx 'memfd-open=OK' "$out"; then
		why="the new image's read was not in setup"
	elif [ "$(tail -n 1 "$out")" != EPERM ]; then
		why="the payload's read: want EPERM"
	elif [ "$(echo "$d" | grep -c .)" != 1 ] ||
	     ! echo "$d" | grep -q '"path":"/etc/shadow"'; then
		why="want exactly one deny record, the payload's: $(echo "$d" | head -n 2)"
	elif ! grep '"event":"setup"' "$log" | grep '"op":"exec"' |
		grep "\"pid\":$pid," | grep -q '"path":"fileprobe"'; then
		why="the pass did not end at the payload's exec: $(grep '"event":"setup"' "$log" | grep "\"pid\":$pid," | tail -n 2)"
	fi
	if [ -n "$why" ]; then
		bad=$((bad + 1))
		[ $bad -le 3 ] &&
			echo "setup-race: trial $i (move at $(cat "$work/t$i.us") us): $why: $(tr '\n' ' ' < "$out")" &&
			echo "setup-race: its records: $(grep -E '"event":"(setup|deny)"' "$log" | grep -E "\"(pid|target_pid)\":$pid," | sed 's/^.*"cgroup_id"/"cgroup_id"/' | head -n 6 | tr '\n' ' ')"
	fi
	i=$((i + 1))
done
if [ $bad != 0 ]; then
	t_fail $T/pass-kept "$bad of $n trials lost the pass or judged wrong (the first above)"
else
	t_ok $T/pass-kept
fi
echo "setup-race: $inexec of $n moves landed while the exec was under way"
if [ $inexec = 0 ]; then
	t_fail $T/in-exec "no move of $n landed while the exec was under way: the trials proved nothing"
else
	t_ok $T/in-exec
fi
