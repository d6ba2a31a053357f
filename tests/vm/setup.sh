#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# The setup pass (include/setup.h) in the test VM, with BPF-LSM: a task a
# runtime moves into a new cgroup under a selector is let through until
# the payload's exec, and cannot be used to escape. tools/setupprobe.c
# plays the runtime: outside every sandbox, it forks a child and moves it
# into the new cgroup from the parent, as runc moves its init.
#
# Policy /setup-zw/* (a wildcard: setup.pass auto gives the pass, deadline
# 2 s) and /setup-lit (a literal: auto gives none). Cases, each in a new
# cgroup:
#   open        before exec the child reads /etc/shadow: OK (setup), no
#               deny; the payload (exec in its own mount namespace) reads
#               it: EPERM with one deny record; setup records begin and
#               exec, naming the payload's file
#   memfd       a re-exec from a memfd copy in the mover's namespace (runc)
#               keeps the pass: OK; the payload after it: EPERM
#   memfd-fail  an exec of a memfd that is no program (opened as a
#               runtime's clone, then ENOEXEC), then the payload's exec at
#               the same self_exec_id: the failed exec's clone mark does
#               not carry over, the payload's exec ends the pass: EPERM,
#               and a setup record exec naming fileprobe
#   hybrid      the child moved into a cgroup v1 hierarchy too, after
#               the sandbox's cgroup (runc on a hybrid host): the pass goes
#               on (OK, no deny; its setup records a begin in the sandbox's
#               cgroup and the payload's exec, no more); the payload: EPERM
#   same-ns     an exec of a real file in the mover's namespace ends it
#   fork        the child's child inherits the pass, and ends its own by
#               its exec: OK, then EPERM
#   deadline    no exec: after the deadline the read is EPERM, with a setup
#               record "deadline"
#   self        a process that joins the new cgroup itself (no runtime) is
#               judged from its first syscall: EPERM
#   thread      the moved child had a second thread before the move: the
#               leader is in setup (OK), the other thread is not (EPERM,
#               one deny record)
#   literal     a plain-path selector: no pass (EPERM)
#   ptrace/kill a sandboxed task of the same sandbox attaches to (and
#               signals) a task in setup: EPERM, reason in_setup
#   sandboxed   a task judged in a sandbox, then moved by an outsider into
#               a new cgroup: no pass (EPERM), a setup record "refused"
#
# Env (from tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS (optional).

. tests/vm/lib.sh

T=setup
work=/tmp/setup-test
log=$work/agent.log
bpffs=/sys/fs/bpf/setup
top=$CGROUP_ROOT/setup-zw
lit=$CGROUP_ROOT/setup-lit
rt=$TOOLS/setupprobe
agent=
n=0

if [ "$(hostname)" != stockade-vm ] || [ ! -f /init ]; then
	t_fail $T/guest "refusing to run outside the test VM: it writes /etc/shadow"
	exit 0
fi
rm -rf "$work"
mkdir -p "$work/pol" "$top"
[ -e /etc/shadow ] || echo 'root:*:19000:0:99999:7:::' > /etc/shadow
cat > "$work/pol/setup.yaml" <<'EOF'
name: setup
cgroups: [/setup-zw/*, /setup-lit]
network:
  default: deny
setup:
  deadline: 2s
EOF

cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	[ -d "$bpffs" ] && "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
	for d in "$top"/* "$top" "$lit"; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
}
trap cleanup EXIT

# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/pol" --bpffs "$bpffs" \
	--cgroup-root "$CGROUP_ROOT" --detach-on-exit --log "$log" \
	> "$work/agent.out" 2> "$work/agent.err" &
agent=$!
ready() { grep -q '"agent_ready"' "$log" 2>/dev/null || ! alive "$agent"; }
wait_for 120 ready
if ! grep -q '"agent_ready"' "$log"; then
	t_fail $T/agent-ready "no agent_ready: $(tail -n 3 "$work/agent.err")"
	exit 0
fi
t_ok $T/agent-ready

# newcg: a fresh cgroup under the selector, in $cg.
newcg() {
	n=$((n + 1))
	cg=$top/c-$n
	mkdir "$cg"
}

# has_line NAME WANT FILE: the probe printed NAME=WANT.
has_line() {
	grep -qx "$2=$3" "$1"
}

# deny_for PID: the deny records naming pid PID (one line each).
deny_for() {
	grep '"event":"deny"' "$log" | grep "\"pid\":$1,"
}

# setup_rec OP PID: a setup record of op OP whose task (or, for begin and
# refused, target) is PID.
setup_rec() {
	grep '"event":"setup"' "$log" | grep "\"op\":\"$1\"" |
		grep -E "\"(pid|target_pid)\":$2,"
}

# runtime NAME MODE ARGS...: setupprobe in a new cgroup; output in
# $work/NAME.out, the moved child's pid in $child.
runtime() {
	_name=$1
	shift
	newcg
	timeout 30 "$rt" "$cg" "$@" > "$work/$_name.out" 2>&1
	child=$(sed -n 's/^moved=//p' "$work/$_name.out")
	sleep 0.3	# the records reach the log
}

# expect NAME KEY WANT: one step's result.
expect() {
	if grep -qx "$2=$3" "$work/$1.out"; then
		t_ok "$T/$1/$2"
	else
		t_fail "$T/$1/$2" "want $2=$3: $(tr '\n' ' ' < "$work/$1.out")"
	fi
}

# payload NAME: the payload's (fileprobe's) read was refused, one record.
payload() {
	_pp=$(sed -n 's/^pid=//p' "$work/$1.out" | tail -n 1)
	if [ "$(tail -n 1 "$work/$1.out")" != EPERM ]; then
		t_fail "$T/$1/payload" "the payload's /etc/shadow read: want EPERM: $(tr '\n' ' ' < "$work/$1.out")"
	elif [ "$(deny_for "$_pp" | grep -c '"path":"/etc/shadow"')" != 1 ]; then
		t_fail "$T/$1/payload" "want one deny record for pid $_pp: $(deny_for "$_pp" | head -n 3)"
	else
		t_ok "$T/$1/payload"
	fi
}

# no_deny NAME PID: nothing refused to PID before its exec (its setup
# steps, comm setupprobe; the payload has the same pid, comm fileprobe).
no_deny() {
	if deny_for "$2" | grep -q '"comm":"setupprobe"'; then
		t_fail "$T/$1/no-deny" "a task in setup was refused: $(deny_for "$2" | head -n 2)"
	else
		t_ok "$T/$1/no-deny"
	fi
}

# rec NAME OP PID [FIELD]: one setup record OP for PID (with FIELD).
rec() {
	_r=$(setup_rec "$2" "$3")
	if [ "$(echo "$_r" | grep -c .)" != 1 ]; then
		t_fail "$T/$1/record-$2" "want one setup record op $2 for pid $3: $(grep '"event":"setup"' "$log" | tail -n 3)"
	elif [ -n "${4:-}" ] && ! echo "$_r" | grep -q "$4"; then
		t_fail "$T/$1/record-$2" "want $4 in: $_r"
	else
		t_ok "$T/$1/record-$2"
	fi
}

runtime open open /etc/shadow
expect open setup-open OK
no_deny open "$child"
payload open
rec open begin "$child" '"deadline_ms":2000'
rec open exec "$child" '"path":"fileprobe"'

runtime memfd memfd /etc/shadow
expect memfd memfd-open OK
no_deny memfd "$child"
payload memfd

runtime memfd-fail memfd-fail /etc/shadow
expect memfd-fail failed-exec ENOEXEC
payload memfd-fail
rec memfd-fail exec "$child" '"path":"fileprobe"'

runtime thread thread /etc/shadow
expect thread leader-open OK
expect thread thread-open EPERM
if [ "$(deny_for "$child" | grep -c '"path":"/etc/shadow"')" = 1 ]; then
	t_ok $T/thread/record
else
	t_fail $T/thread/record "want one deny record for pid $child: $(deny_for "$child" | head -n 3)"
fi

# hybrid: the child is moved into a cgroup v1 hierarchy too, right after
# the sandbox's cgroup (runc on a hybrid host joins each hierarchy): that
# move is not one out of the sandbox, the pass goes on.
v1=$work/v1
mkdir -p "$v1"
if mount -t cgroup -o none,name=stkv1 cgroup "$v1" 2> "$work/v1.err" &&
   mkdir -p "$v1/c"; then
	SETUPPROBE_V1=$v1/c runtime hybrid open /etc/shadow
	expect hybrid setup-open OK
	no_deny hybrid "$child"
	payload hybrid
	# Its setup records: the sandbox's begin and the payload's exec, no
	# more (the v1 move, taken for one between sandboxes, made a second
	# begin named by the v1 cgroup's id, or a "moved" that ended it).
	_cgid=$(stat -c %i "$cg")
	if [ "$(setup_rec '[a-z]*' "$child" | grep -c .)" != 2 ] ||
	   [ "$(setup_rec begin "$child" | grep -c "\"cgroup_id\":$_cgid,")" != 1 ]; then
		t_fail $T/hybrid/records "want a begin in cgroup $_cgid and an exec: $(setup_rec '[a-z]*' "$child" | cut -c 1-300)"
	else
		t_ok $T/hybrid/records
	fi
	rmdir "$v1/c"
	umount "$v1"
else
	t_fail $T/hybrid "cannot mount a named cgroup v1 hierarchy: $(cat "$work/v1.err")"
fi

runtime same-ns same-ns /etc/shadow
expect same-ns setup-open OK
payload same-ns

runtime fork fork /etc/shadow
expect fork child-open OK
payload fork

runtime deadline deadline /etc/shadow 2500
expect deadline late-open EPERM
rec deadline deadline "$child"

# self: a process joining the new cgroup on its own.
newcg
out=$(timeout 20 "$TOOLS/fileprobe" --cgroup "$cg" open-read /etc/shadow 2>&1)
if [ "$(echo "$out" | tail -n 1)" = EPERM ]; then
	t_ok $T/self
else
	t_fail $T/self "a process that joined on its own read /etc/shadow: $out"
fi

# literal: /setup-lit, created now, selected by a plain path.
mkdir "$lit"
timeout 30 "$rt" "$lit" deadline /etc/shadow 0 > "$work/literal.out" 2>&1
expect literal late-open EPERM

# ptrace and kill from the sandbox at a task in setup (same cgroup).
newcg
timeout 30 "$rt" "$cg" hold 6 > "$work/hold.out" 2>&1 &
hp=$!
wait_for 10 grep -q '^held=' "$work/hold.out"
held=$(sed -n 's/^held=//p' "$work/hold.out")
for op in ptrace-attach kill; do
	case $op in
	kill) args="$held 18" ;;
	*) args=$held ;;
	esac
	# shellcheck disable=SC2086
	out=$(timeout 10 "$TOOLS/fileprobe" --cgroup "$cg" $op $args 2>&1)
	ap=$(echo "$out" | sed -n 's/^pid=//p')
	if [ "$(echo "$out" | tail -n 1)" != EPERM ]; then
		t_fail "$T/$op" "a sandboxed $op of a task in setup: want EPERM: $out"
	elif [ "$(deny_for "$ap" | grep -c '"reason":"in_setup"')" != 1 ] ||
	     [ "$(deny_for "$ap" | grep -c .)" != 1 ]; then
		t_fail "$T/$op" "want exactly one deny record, in_setup, for pid $ap: $(deny_for "$ap" | head -n 2)"
	else
		t_ok "$T/$op"
	fi
done
wait "$hp"

# sandboxed: a task judged in one sandbox, moved by an outsider into a new
# cgroup, gets no pass.
newcg
first=$cg
"$TOOLS/fileprobe" --cgroup "$first" --wait "$work/go" open-read /etc/shadow \
	> "$work/sbx.out" 2>&1 &
sp=$!
wait_for 10 grep -q '^pid=' "$work/sbx.out"
newcg
echo "$sp" > "$cg/cgroup.procs"
sleep 0.3
: > "$work/go"
wait "$sp"
if [ "$(tail -n 1 "$work/sbx.out")" != EPERM ]; then
	t_fail $T/sandboxed "a task moved from a sandbox got a pass: $(tr '\n' ' ' < "$work/sbx.out")"
elif ! setup_rec refused "$sp" | grep -q .; then
	t_fail $T/sandboxed "no setup record \"refused\" for pid $sp: $(grep '"event":"setup"' "$log" | tail -n 2)"
else
	t_ok $T/sandboxed
fi
