#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Lifecycle without gaps (issue 6) on a real kernel: runs on the host
# (make live-test, where the agent runs --allow-degraded: cgroup programs
# and pins only) and in the test VM (tests/vm/lifecycle.sh adds the BPF-LSM
# link checks). What an operator and an attacker would do:
#   1. a probe loop keeps trying a denied connect() (and, with BPF-LSM, a
#      denied open()) from a sandbox while the agent is SIGKILLed and
#      restarted: no attempt gets through; the new agent adopts the pins
#      (each cgroup program attached exactly once, by the kernel's own
#      BPF_PROG_QUERY; each BPF-LSM program once in the kernel's link list),
#      the denials of the downtime arrive or are counted lost, and `seq`
#      has no unexplained gap;
#   2. an upgrade to a build with one program changed (STOCKADE_VARIANT),
#      and back, while the loop runs: the program is replaced in place, no
#      attempt gets through;
#   2b. a build whose pinned maps do not fit (STOCKADE_VARIANT_LAYOUT) and
#      back (STOCKADE_REPLACE_QUICK=1: there only), another --ring-size, and
#      agents killed half way through a replacement, while the loop runs: every attempt denied, each cgroup
#      with exactly one set of programs after each, no old or staging pin
#      left, the old rings drained, `seq` gaps explained (pin_replace);
#   3. `stockade status` agrees with BPF_PROG_QUERY, agent up or down;
#   4. `stockade detach CGROUP|POLICY` removes exactly what it names, and
#      the running agent does not attach it again; SIGTERM keeps the rest
#      confined; `detach --all` removes everything.
#
# Environment: STOCKADE, TOOLS (netprobe, bpfquery), CGROUP_ROOT (detected
# when unset), STOCKADE_AGENT_FLAGS (default --allow-degraded),
# STOCKADE_VARIANT (the variant build; its checks are skipped without it),
# STOCKADE_VARIANT_LAYOUT (make variant-layout; likewise),
# STOCKADE_REPLACE_QUICK=1 (2b: one replacement only, for the VM's budget),
# LOOP_US (the probe loops' pause after each attempt, default 2000 us).
# Prints `ok NAME` / `not ok NAME: DETAIL` and `N passed, N failed`.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
STOCKADE_VARIANT=${STOCKADE_VARIANT:-}
STOCKADE_VARIANT_LAYOUT=${STOCKADE_VARIANT_LAYOUT:-}
STOCKADE_REPLACE_QUICK=${STOCKADE_REPLACE_QUICK:-0}
LOOP_US=${LOOP_US:-2000}
# read -t takes seconds: 2000 -> 0.002.
loop_s=$(awk -v u="$LOOP_US" 'BEGIN { printf "%.6f", u / 1000000 }')
probe=$TOOLS/netprobe
query=$TOOLS/bpfquery

need_cgroup2 lifecycle
need_bpffs lifecycle

# Names of our own, so that a concurrent run of another test cannot clash.
tag=stockade-lc-$$
bpffs=/sys/fs/bpf/$tag
cga=$CGROUP_ROOT/$tag-a
cgb=$CGROUP_ROOT/$tag-b
cgc=$CGROUP_ROOT/$tag-c
work=$(mktemp -d /tmp/stockade-lifecycle.XXXXXX)
agent_pid=
loop_pid=

cleanup() {
	[ -n "$loop_pid" ] && touch "$work/stop" && wait "$loop_pid" 2>/dev/null
	agent_end -9
	cg_empty "$cga/kid" "$cga" "$cgb" "$cgc"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

alive() {
	_st=$(sed 's/.*) //; s/ .*//' "/proc/$1/stat" 2>/dev/null)
	[ -n "$_st" ] && [ "$_st" != Z ]
}

# Two policies: p1 selects a and b, p2 selects c.
mkdir "$work/pol"
cat > "$work/pol/p1.yaml" <<EOF
name: lc-one
cgroups: [/$tag-a, /$tag-b]
network:
  default: deny
  allow:
    - cidr: 127.0.0.1/32
      ports: [8080]
      proto: tcp
EOF
cat > "$work/pol/p2.yaml" <<EOF
name: lc-two
cgroups: [/$tag-c]
network:
  default: deny
EOF
mkdir "$cga" "$cgb" "$cgc" || { echo "lifecycle: cannot create cgroups" >&2; exit 1; }
ida=$(stat -c %i "$cga")
idb=$(stat -c %i "$cgb")
idc=$(stat -c %i "$cgc")

# start N [BINARY [FLAGS...]]: an agent logging to $work/agentN.log; ok
# when ready, within 60 s: a replacement across builds swaps ~70 BPF-LSM
# links one at a time, which under TCG with two guests on two cores took
# over 15 s (a bound, not a timing).
start() {
	num=$1
	bin=${2:-$STOCKADE}
	[ $# -ge 2 ] && shift 2 || shift $#
	: > "$work/agent$num.log"
	# shellcheck disable=SC2086
	"$bin" agent $STOCKADE_AGENT_FLAGS --bpffs "$bpffs" --policy "$work/pol" \
		--log "$work/agent$num.log" "$@" > /dev/null 2> "$work/agent$num.err" &
	agent_pid=$!
	if wait_ready "$work/agent$num.log"; then
		ok "agent $num: agent_ready"
		return 0
	fi
	not_ok "agent $num: agent_ready" "$(tail -n 3 "$work/agent$num.err" | tr '\n' ' ')"
	return 1
}

# progs DIR: "hook id" lines the kernel reports for DIR, sorted.
progs() { "$query" cgroup "$1" | sort; }

# once NAME DIR: each of the eight hooks (five network, bind4/6 for
# ingress, one egress counter) attached exactly once.
once() {
	p=$(progs "$2")
	hooks=$(echo "$p" | awk 'NF { print $1 }' | sort | uniq -c | awk '{ print $1 }' | sort -u)
	if [ "$(echo "$p" | grep -c .)" = 8 ] && [ "$hooks" = 1 ]; then
		ok "$1: each program attached exactly once"
	else
		not_ok "$1: each program attached exactly once" "BPF_PROG_QUERY says: $(echo "$p" | tr '\n' ' ')"
	fi
}

# none NAME DIR: nothing attached.
none() {
	p=$(progs "$2")
	if [ -z "$p" ]; then
		ok "$1: no program attached"
	else
		not_ok "$1: no program attached" "BPF_PROG_QUERY says: $(echo "$p" | tr '\n' ' ')"
	fi
}

# status_ids ID: the prog ids `stockade status --json` gives cgroup ID,
# one per line, sorted.
status_ids() {
	"$STOCKADE" status --json --bpffs "$bpffs" > "$work/status.json" 2>&1
	sed 's/},{/}\n{/g' "$work/status.json" | grep "\"cgroup_id\":$1," |
		sed -n 's/.*"prog_ids":\[\([0-9,]*\)\].*/\1/p' | tr ',' '\n' | grep . | sort -n
}

# agrees NAME DIR ID: status and BPF_PROG_QUERY name the same programs.
agrees() {
	s=$(status_ids "$3" | tr '\n' ' ')
	k=$(progs "$2" | awk '{ print $2 }' | sort -n | tr '\n' ' ')
	if [ -n "$k" ] && [ "$s" = "$k" ]; then
		ok "$1: status agrees with BPF_PROG_QUERY ($k)"
	elif [ -z "$k" ] && [ -z "$s" ]; then
		ok "$1: status and BPF_PROG_QUERY both show nothing"
	else
		not_ok "$1: status agrees with BPF_PROG_QUERY" "status: '$s', kernel: '$k'"
	fi
}

# loop_start / loop_stop NAME: the probe loops in a; every attempt denied.
# The open loop is a shell in the sandbox opening a protected file with a
# builtin (no fork per attempt); it runs only where BPF-LSM confines opens.
# It waits LOOP_US after each attempt, as netprobe's loop does, with `read
# -t` on a pipe that no one writes to (a builtin: no process, no exec
# record; a pipe has no path, so it is no preexisting_fd either); the
# pipe's writer ends within a second of the stop file. Under TCG an
# unpaced loop, with a busybox `sleep` forked every 20 attempts, took
# most of the guest's one CPU from the agent starts it runs across. (A
# shell whose `read` has no fractional -t, dash, fails it at once: the
# loop then runs unpaced, its results the same. It runs only where
# BPF-LSM does: in the VM, busybox ash, which has it.)
loop_start() {
	rm -f "$work/stop"
	"$probe" --netns --cgroup "$cga" connect tcp 127.0.0.1 9999 --listen \
		--until "$work/stop" --every-us "$LOOP_US" > "$work/loop.out" 2>&1 &
	loop_pid=$!
	if [ "$lsm" = 1 ]; then
		# shellcheck disable=SC2016
		sh -c 'until [ -e "$1" ]; do sleep 1; done' sh "$work/stop" |
		sh -c 'echo $$ > "$1/cgroup.procs" || exit 2
			echo "pid=$$"
			a=0 o=0 d=0
			while [ ! -e "$2" ]; do
				a=$((a + 1))
				# true, not ":": a failed redirection of a
				# special builtin ends the shell.
				if true 2>/dev/null < /etc/shadow; then
					o=$((o + 1))
				else
					d=$((d + 1))
				fi
				read -t "$3" _ 2>/dev/null
			done
			echo "attempts=$a ok=$o failed=$d"' sh "$cga" "$work/stop" "$loop_s" \
			> "$work/oloop.out" 2>&1 &
		oloop_pid=$!
	fi
	sleep 0.3
}
loop_stop() {
	touch "$work/stop"
	wait "$loop_pid"
	loop_pid=
	res=$(grep '^attempts=' "$work/loop.out")
	loop_proc=$(sed -n 's/^pid=//p' "$work/loop.out")
	attempts=$(echo "$res" | sed -n 's/.*attempts=\([0-9]*\).*/\1/p')
	case $res in
	*" ok=0 "*)
		ok "$1: all $attempts connect attempts denied" ;;
	*)
		not_ok "$1: all connect attempts denied" "${res:-no result: $(cat "$work/loop.out")}" ;;
	esac
	oattempts=0
	[ "$lsm" = 1 ] || return 0
	wait "$oloop_pid"
	res=$(grep '^attempts=' "$work/oloop.out")
	oloop_proc=$(sed -n 's/^pid=//p' "$work/oloop.out")
	oattempts=$(echo "$res" | sed -n 's/.*attempts=\([0-9]*\).*/\1/p')
	case $res in
	*" ok=0 "*)
		ok "$1: all $oattempts open attempts denied" ;;
	*)
		not_ok "$1: all open attempts denied" "${res:-no result: $(cat "$work/oloop.out")}" ;;
	esac
}

# lsm_links: "name link_id" of every tracing (BPF-LSM) link of stockade's,
# and of its setup pass's and exec records' raw tracepoints (pinned with
# them, as lsm-stk_setup_attach and lsm-stk_exec*; the kernel keeps 15 characters of a name; not the
# agent's own unpinned cgroup_mkdir one), from the kernel's link list,
# sorted; without the
# links listed in the file $ANCHOR_LINKS (the VM suite's anchor agent,
# tests/vm/suite.sh).
lsm_links() {
	"$query" links | sed -n \
		-e 's/^link=\([0-9]*\) type=tracing prog=[0-9]* name=\(stk_[^ ]*\).*/\2 \1/p' \
		-e 's/^link=\([0-9]*\) type=raw_tracepoint prog=[0-9]* name=\(stk_setup_attac\).*/\2 \1/p' \
		-e 's/^link=\([0-9]*\) type=raw_tracepoint prog=[0-9]* name=\(stk_exec[a-z_]*\).*/\2 \1/p' |
		awk -v f="${ANCHOR_LINKS:-}" '
			BEGIN { if (f != "") while ((getline l < f) > 0) skip[l] = 1 }
			!($2 in skip)' | sort
}

# lsm_once NAME: each BPF-LSM program of the agent's exactly once.
lsm_once() {
	l=$(lsm_links)
	dup=$(echo "$l" | awk '{ print $1 }' | sort | uniq -d)
	if [ "$(echo "$l" | grep -c .)" = "$n_lsm" ] && [ -z "$dup" ]; then
		ok "$1: each of the $n_lsm BPF-LSM programs linked exactly once"
	else
		not_ok "$1: each BPF-LSM program linked exactly once" "want $n_lsm, the link list has: $(echo "$l" | tr '\n' ' ')"
	fi
}

# loop_logged: logged and ologged, the two loops' deny records in
# $work/all.log, each seq once (no open loop without BPF-LSM: 0).
loop_logged() {
	set -- $(deny_logged "$work/all.log" "$loop_proc" "${oloop_proc:-}")
	logged=$1 ologged=$2
}

# numbered_before FILE PID SEQ: how many of PID's records in FILE are numbered
# below SEQ (the downtime's, drained by the agent that wrote FILE).
numbered_before() {
	awk -v p="\"pid\":$2," -v f="$3" 'index($0, p) &&
		(i = index($0, "\"seq\":")) { split(substr($0, i + 6), a, ","); if (a[1] + 0 < f + 0) n++ }
		END { print n + 0 }' "$1"
}

# ---- 1. SIGKILL and restart under a probe loop ----
t_start=$(date +%s)
lsm=0
start 1 || { summary; exit 1; }
once "agent 1: /$tag-a" "$cga"
before=$(progs "$cga")
if grep -q '"event":"agent_ready".*"degraded":\[\]' "$work/agent1.log"; then
	lsm=1
	# The open loop's file must exist: a missing one fails with ENOENT
	# before any hook runs (no record), which this test would count as
	# a denial without its record. The VM's root has none of its own;
	# other sections make one, and this one must not depend on them.
	[ -e /etc/shadow ] || echo 'root:*:19000:0:99999:7:::' > /etc/shadow
	n_lsm=$(ls "$bpffs/links" | grep -c '^lsm-')
	lsm_before=$(lsm_links)
	lsm_once "agent 1"
fi
loop_start
sleep 0.5
kill -9 "$agent_pid"
wait "$agent_pid" 2>/dev/null
agent_pid=
sleep 1		# the downtime: the loop keeps trying
if [ -d "$bpffs/links" ] && [ "$(progs "$cga")" = "$before" ]; then
	ok "after SIGKILL: the same programs stay attached"
else
	not_ok "after SIGKILL: the same programs stay attached" "before: $(echo "$before" | tr '\n' ' '), now: $(progs "$cga" | tr '\n' ' ')"
fi
"$STOCKADE" status --bpffs "$bpffs" > "$work/status.txt" 2>&1
if grep -q '^agent: *NOT running' "$work/status.txt" &&
   grep -q "^/$tag-a .* lc-one " "$work/status.txt"; then
	ok "status while down: agent not running, /$tag-a confined"
else
	not_ok "status while down" "$(tr '\n' '|' < "$work/status.txt")"
fi
agrees "status while down: /$tag-a" "$cga" "$ida"

start 2
if grep -q '"event":"agent_ready".*"pins":"adopted"' "$work/agent2.log" &&
   grep -q "\"event\":\"attach\".*\"cgroup_id\":$ida,.*\"links\":\"adopted\"" "$work/agent2.log"; then
	ok "agent 2 adopted the pins"
else
	not_ok "agent 2 adopted the pins" "$(grep -E '"(attach|agent_ready)"' "$work/agent2.log" | tr '\n' ' ')"
fi
if [ "$(progs "$cga")" = "$before" ]; then
	ok "agent 2: attached nothing twice (same program ids)"
else
	not_ok "agent 2: attached nothing twice" "before: $(echo "$before" | tr '\n' ' '), now: $(progs "$cga" | tr '\n' ' ')"
fi
once "agent 2: /$tag-a" "$cga"
once "agent 2: /$tag-b" "$cgb"
if [ "$lsm" = 1 ]; then
	lsm_once "agent 2"
	if [ "$(lsm_links)" = "$lsm_before" ]; then
		ok "agent 2: the same BPF-LSM links (adopted)"
	else
		not_ok "agent 2: the same BPF-LSM links" "before: $(echo "$lsm_before" | tr '\n' ' '); now: $(lsm_links | tr '\n' ' ')"
	fi
else
	skip "BPF-LSM links across the restart" "this kernel refuses BPF-LSM (the VM suite runs them)"
fi
sleep 0.3
loop_stop "SIGKILL and restart"

# Records of the loop: every denial logged (once per seq) or counted lost.
# Only its deny records: each agent also reports the loops' stdout and
# stderr, write fds held from before they joined (preexisting_fd).
sleep 0.3
cat "$work/agent1.log" "$work/agent2.log" > "$work/all.log"
lost=$(lost_sum "$work/all.log")
# With BPF-LSM the open loop's denials are records too; both loops
# share the lost count, so they are judged together.
loop_logged
# Nothing execs in the sandboxes meanwhile (the open loop waits with
# `read -t`, no fork), so the ring's losses are the loops' denials: every
# denial logged or lost, exactly. (xall: exec and exit records logged,
# for the message; any would be a process this test did not start.)
if [ "$((logged + ologged + lost))" = "$((attempts + oattempts))" ]; then
	ok "SIGKILL and restart: $attempts + $oattempts denials = $logged + $ologged logged + $lost lost"
else
	xall=$(grep -c '"event":"\(exec\|exit\)"' "$work/all.log")
	not_ok "SIGKILL and restart: denials accounted for" "$attempts connect + $oattempts open attempts, $logged + $ologged logged, $lost lost, $xall exec and exit records logged"
fi
# The downtime's denials came out of the pinned ring through agent 2,
# before anything agent 2 numbered itself.
first2=$(grep '"event":"policy"' "$work/agent2.log" | head -n 1 | seq_of)
down=$(numbered_before "$work/agent2.log" "$loop_proc" "$first2")
if [ "$down" -gt 0 ]; then
	ok "the downtime's denials arrive after the restart ($down)"
else
	not_ok "the downtime's denials arrive after the restart" "no record of pid $loop_proc numbered before $first2 in agent 2's log"
fi
# One sequence across both agents: every gap explained by lost records.
read -r first last count _ <<EOF
$(seq_span "$work/all.log")
EOF
if [ $((last - first + 1 - count)) -eq "$lost" ]; then
	ok "seq $first..$last across the restart: gaps ($((last - first + 1 - count))) = lost ($lost)"
else
	not_ok "seq across the restart" "$count records span $first..$last, lost $lost"
fi

# ---- 2. upgrade to a build with one program changed, and back ----
if [ -n "$STOCKADE_VARIANT" ] && [ -x "$STOCKADE_VARIANT" ]; then
	old4=$(progs "$cga" | awk '$1 == "connect4" { print $2 }')
	lsm_up=$(lsm_links)
	lsm_before_up() { echo "$lsm_up"; }
	rest=$(progs "$cga" | grep -v '^connect4 ')
	loop_start
	kill -TERM "$agent_pid"
	wait "$agent_pid"
	agent_pid=
	start 3 "$STOCKADE_VARIANT"
	new4=$(progs "$cga" | awk '$1 == "connect4" { print $2 }')
	if grep -q "\"event\":\"attach\".*\"cgroup_id\":$ida,.*\"links\":\"replaced\"" "$work/agent3.log" &&
	   [ -n "$new4" ] && [ "$new4" != "$old4" ] &&
	   [ "$(progs "$cga" | grep -v '^connect4 ')" = "$rest" ]; then
		ok "upgrade: connect4 replaced in place ($old4 -> $new4), the rest adopted"
	else
		not_ok "upgrade: connect4 replaced in place" "connect4 $old4 -> $new4; $(grep '"event":"attach"' "$work/agent3.log" | tr '\n' ' ')"
	fi
	once "upgrade: /$tag-a" "$cga"
	if [ "$lsm" = 1 ]; then
		lsm_once "upgrade"
		changed=$(lsm_links | grep -vxF "$(lsm_before_up)" | awk '{ print $1 }' | tr '\n' ' ')
		# The variant's changed BPF-LSM programs (bpf/common.bpf.h's
		# TEST_VARIANT_MARK, and stk_file_open's count of cache hits),
		# sorted by name as lsm_links gives them.
		if [ "$changed" = "stk_bpf stk_file_open " ]; then
			ok "upgrade: stk_bpf and stk_file_open replaced by new links, the others adopted"
		else
			not_ok "upgrade: only stk_bpf and stk_file_open replaced" "new links: '$changed'"
		fi
	fi
	kill -TERM "$agent_pid"
	wait "$agent_pid"
	agent_pid=
	start 4
	back4=$(progs "$cga" | awk '$1 == "connect4" { print $2 }')
	if grep -q "\"event\":\"attach\".*\"cgroup_id\":$ida,.*\"links\":\"replaced\"" "$work/agent4.log" &&
	   [ -n "$back4" ] && [ "$back4" != "$new4" ]; then
		ok "downgrade: connect4 replaced in place ($new4 -> $back4)"
	else
		not_ok "downgrade: connect4 replaced in place" "connect4 $new4 -> $back4"
	fi
	once "downgrade: /$tag-a" "$cga"
	[ "$lsm" = 1 ] && lsm_once "downgrade"
	loop_stop "upgrade and downgrade"
else
	skip "upgrade: connect4 replaced in place" "no STOCKADE_VARIANT build (make variant)"
fi

# ---- 2b. replacement across map layouts, under the probe loop ----
# ids DIR: the program ids attached to DIR, on one line.
ids() { progs "$1" | awk '{ print $2 }' | sort -n | tr '\n' ' '; }

# replaced N NAME: agent N replaced the pinned state and switched every
# confined cgroup (a, b, c).
replaced() {
	rec=$(grep '"event":"pin_replace"' "$work/agent$1.log")
	if grep -q '"event":"agent_ready".*"pins":"replaced"' "$work/agent$1.log" &&
	   echo "$rec" | grep -q '"cgroups":3,'; then
		ok "$2: the pinned state replaced, 3 cgroups switched"
	else
		not_ok "$2: the pinned state replaced" "$(tr '\n' ' ' < "$work/agent$1.err" | tail -c 300) $rec"
	fi
}

# pins_clean NAME: only maps/ and links/ under the pin directory, and 24
# cgroup link pins, those of a, b and c.
pins_clean() {
	extra=$(ls "$bpffs" | grep -vx 'maps\|links' | tr '\n' ' ')
	bad=$(ls "$bpffs/links" | grep -v "^cg-\($ida\|$idb\|$idc\)-stk_[a-z0-9_]*$" |
		grep -v '^lsm-stk_[a-z0-9_]*$' | tr '\n' ' ')
	n=$(ls "$bpffs/links" | grep -c '^cg-')
	if [ -z "$extra" ] && [ -z "$bad" ] && [ "$n" = 24 ]; then
		ok "$1: no old or staging pin left"
	else
		not_ok "$1: no old or staging pin left" "extra: '$extra', links: '$bad', $n cgroup link pins"
	fi
}

# all_new NAME BEFORE_A BEFORE_B BEFORE_C: a, b and c each hold exactly one
# set of programs, none of them from before.
all_new() {
	once "$1: /$tag-a" "$cga"
	once "$1: /$tag-b" "$cgb"
	once "$1: /$tag-c" "$cgc"
	# Programs are shared by the cgroups: compare the two sets.
	was=$(echo "$2 $3 $4" | tr ' ' '\n' | grep . | sort -u)
	now=$(echo "$(ids "$cga") $(ids "$cgb") $(ids "$cgc")" | tr ' ' '\n' | grep . | sort -u)
	same=$(printf '%s\n%s\n' "$was" "$now" | sort | uniq -d | tr '\n' ' ')
	if [ -z "$same" ]; then
		ok "$1: every program is new"
	else
		not_ok "$1: every program is new" "still attached: $same"
	fi
	if [ "$lsm" = 1 ]; then
		lsm_once "$1"
		if [ -z "$(lsm_links | awk '{ print $2 }' | grep -xF "$(echo "$5" | awk '{ print $2 }')")" ]; then
			ok "$1: every BPF-LSM link is new (overlapped, then the old ones dropped)"
		else
			not_ok "$1: every BPF-LSM link is new" "before: $(echo "$5" | tr '\n' ' '); now: $(lsm_links | tr '\n' ' ')"
		fi
	fi
}

# killed N BINARY STEP: an agent told to die by SIGKILL at STEP of the
# replacement (agent/replace.c); ok when it did.
killed() {
	: > "$work/agent$1.log"
	# shellcheck disable=SC2086
	# Bounded: an agent that never reaches STEP would run on.
	STOCKADE_TEST_KILL_AT=$3 timeout -s KILL 60 "$2" agent $STOCKADE_AGENT_FLAGS \
		--bpffs "$bpffs" --policy "$work/pol" --log "$work/agent$1.log" \
		> /dev/null 2> "$work/agent$1.err"
	rc=$?
	if [ "$rc" = 137 ] && grep -q "STOCKADE_TEST_KILL_AT=$3" "$work/agent$1.err"; then
		ok "agent $1: killed at '$3' of the replacement"
	else
		not_ok "agent $1: killed at '$3' of the replacement" "exit $rc: $(tail -n 2 "$work/agent$1.err" | tr '\n' ' ')"
	fi
}

# stop_agent: SIGTERM the running agent.
stop_agent() {
	kill -TERM "$agent_pid"
	wait "$agent_pid"
	agent_pid=
}

if [ -n "$STOCKADE_VARIANT_LAYOUT" ] && [ -x "$STOCKADE_VARIANT_LAYOUT" ]; then
	t0=$(date +%s)
	b_a=$(ids "$cga") b_b=$(ids "$cgb") b_c=$(ids "$cgc") b_l=$(lsm_links)
	loop_start
	stop_agent
	sleep 0.3	# the loop's denials wait in the old ring
	start 5 "$STOCKADE_VARIANT_LAYOUT"
	# The VM's one vCPU: its checks run faster without the loop, which
	# has done its part (every attempt across the replacement).
	[ "$STOCKADE_REPLACE_QUICK" = 1 ] && loop_stop "replacement across map layouts"
	replaced 5 "layout variant"
	all_new "layout variant" "$b_a" "$b_b" "$b_c" "$b_l"
	pins_clean "layout variant"
	if [ -e "$bpffs/maps/layout_test" ]; then
		ok "layout variant: its own maps pinned (layout_test)"
	else
		not_ok "layout variant: its own maps pinned" "$(ls "$bpffs/maps" | tr '\n' ' ')"
	fi
	n=$(sed -n '/"event":"pin_replace"/s/.*"records_drained":\([0-9]*\),.*/\1/p' "$work/agent5.log")
	lp=$(sed -n 's/^pid=//p' "$work/loop.out")
	first5=$(grep '"event":"policy"' "$work/agent5.log" | head -n 1 | seq_of)
	if [ "${n:-0}" -gt 0 ] && [ -n "$lp" ] &&
	   [ "$(numbered_before "$work/agent5.log" "$lp" "$first5")" -gt 0 ]; then
		ok "layout variant: the downtime's denials drained from the old ring ($n)"
	else
		not_ok "layout variant: the old ring drained" "records_drained '$n'"
	fi
	agrees "layout variant: status /$tag-a" "$cga" "$ida"

	next=6
	# The VM stops here, for time: the rest runs on the variant, whose
	# code is this build's. The host goes back, and on.
	if [ "$STOCKADE_REPLACE_QUICK" != 1 ]; then
		# Back to this build, with another ring size.
		b_a=$(ids "$cga") b_b=$(ids "$cgb") b_c=$(ids "$cgc") b_l=$(lsm_links)
		stop_agent
		start 6 "$STOCKADE" --ring-size 2M
		replaced 6 "back from the layout variant"
		all_new "back from the layout variant" "$b_a" "$b_b" "$b_c" "$b_l"
		pins_clean "back from the layout variant"
		[ ! -e "$bpffs/maps/layout_test" ] && ok "back: the variant's own map is gone" ||
			not_ok "back: the variant's own map is gone" "maps/layout_test still pinned"
		# Killed right after the first cgroup's switch: every cgroup
		# stays confined, each by one set (new or old); the next agent
		# replaces both states.
		b_a=$(ids "$cga") b_b=$(ids "$cgb") b_c=$(ids "$cgc") b_l=$(lsm_links)
		stop_agent
		killed 7 "$STOCKADE_VARIANT_LAYOUT" cgroup
		once "killed mid-replacement: /$tag-a" "$cga"
		once "killed mid-replacement: /$tag-b" "$cgb"
		once "killed mid-replacement: /$tag-c" "$cgc"
		ls -d "$bpffs"/staging-* > /dev/null 2>&1 &&
			ok "killed mid-replacement: its staging directory stays" ||
			not_ok "killed mid-replacement: its staging directory stays" "$(ls "$bpffs" | tr '\n' ' ')"
		start 8 "$STOCKADE_VARIANT_LAYOUT"
		if grep -q '"event":"pin_replace".*"cause":"a replacement was interrupted".*"states":2,' "$work/agent8.log"; then
			ok "agent 8: finished the interrupted replacement (2 states replaced)"
		else
			not_ok "agent 8: finished the interrupted replacement" "$(grep pin_replace "$work/agent8.log")"
		fi
		all_new "after the interrupted replacement" "$b_a" "$b_b" "$b_c" "$b_l"
		pins_clean "after the interrupted replacement"
		# Killed once the old pins are gone, before its own move in.
		b_a=$(ids "$cga") b_b=$(ids "$cgb") b_c=$(ids "$cgc") b_l=$(lsm_links)
		stop_agent
		killed 9 "$STOCKADE" publish
		once "killed while publishing: /$tag-a" "$cga"
		once "killed while publishing: /$tag-c" "$cgc"
		start 10 "$STOCKADE"
		replaced 10 "after the interrupted publish"
		all_new "after the interrupted publish" "$b_a" "$b_b" "$b_c" "$b_l"
		pins_clean "after the interrupted publish"
		# The same build, another --ring-size: a ring cannot be resized.
		stop_agent
		start 11 "$STOCKADE" --ring-size 1M
		if grep -q '"event":"pin_replace".*"cause":"ring buffer of 2097152 bytes, --ring-size 1048576"' "$work/agent11.log"; then
			ok "--ring-size changed: the state replaced, naming the cause"
		else
			not_ok "--ring-size changed: the state replaced" "$(grep pin_replace "$work/agent11.log")"
		fi
		once "--ring-size changed: /$tag-a" "$cga"
		pins_clean "--ring-size changed"
		next=12
	fi
	"$STOCKADE" status --bpffs "$bpffs" > "$work/status.txt" 2>&1 &&
		grep -q "^/$tag-a .* lc-one " "$work/status.txt" &&
		ok "after the replacements: status works" ||
		not_ok "after the replacements: status works" "$(tr '\n' '|' < "$work/status.txt")"
	[ "$STOCKADE_REPLACE_QUICK" = 1 ] || loop_stop "replacement across map layouts"
	echo "# replacement across map layouts: $(($(date +%s) - t0)) s"
	# Every denial of the loop logged or counted lost; during an overlap
	# both builds' programs judge, and both log.
	cat "$work"/agent*.log > "$work/all.log"
	loop_logged
	lost=$(lost_sum "$work/all.log")
	if [ "$((logged + ologged + lost))" -ge "$((attempts + oattempts))" ]; then
		ok "replacements: $attempts + $oattempts denials, $logged + $ologged logged, $lost lost"
	else
		not_ok "replacements: every denial logged or lost" "$attempts + $oattempts attempts, $logged + $ologged logged, $lost lost"
	fi
else
	skip "replacement across map layouts" "no STOCKADE_VARIANT_LAYOUT build (make variant-layout)"
	next=5
fi

# ---- 3. status agrees with the kernel ----
if [ "$lsm" = 1 ]; then
	"$STOCKADE" status --json --bpffs "$bpffs" > "$work/status.json" 2>&1
	s=$(sed -n 's/.*"lsm":\[\([^]]*\)\].*/\1/p' "$work/status.json" | sed 's/},{/}\n{/g' |
		sed -n 's/.*"link_id":\([0-9]*\).*/\1/p' | sort -n | tr '\n' ' ')
	k=$(lsm_links | awk '{ print $2 }' | sort -n | tr '\n' ' ')
	if [ -n "$k" ] && [ "$s" = "$k" ]; then
		ok "status: BPF-LSM links agree with the kernel's link list"
	else
		not_ok "status: BPF-LSM links agree with the kernel's link list" "status: '$s', kernel: '$k'"
	fi
fi
agrees "status: /$tag-a" "$cga" "$ida"
agrees "status: /$tag-b" "$cgb" "$idb"
agrees "status: /$tag-c" "$cgc" "$idc"
"$STOCKADE" status --bpffs "$bpffs" > "$work/status.txt" 2>&1
if grep -q "^agent: *running (pid $agent_pid)" "$work/status.txt"; then
	ok "status: agent running, pid $agent_pid"
else
	not_ok "status: agent running" "$(head -n 1 "$work/status.txt")"
fi
# Denials since attach: the loops' attempts, and nothing else happened in a.
d=$(sed 's/},{/}\n{/g' "$work/status.json" | grep "\"cgroup_id\":$ida," |
	sed -n 's/.*"denials":\([0-9]*\).*/\1/p')
want=$(sed -n 's/^attempts=\([0-9]*\).*/\1/p' "$work/loop.out")
if [ -n "$d" ] && [ "$d" -ge "$want" ]; then
	ok "status: /$tag-a counts $d denials since attach"
else
	not_ok "status: denials" "status says '$d', the last loop alone made $want"
fi

# ---- 4. detach removes exactly what it names ----
mkdir "$cga/kid"
wait_for "\"event\":\"attach\".*\"cgroup\":\"/$tag-a/kid\"" "$(ls -t "$work"/agent*.log | head -n 1)" 20
live_log=$(ls -t "$work"/agent*.log | head -n 1)
"$STOCKADE" detach --bpffs "$bpffs" "/$tag-a" > "$work/detach-a.out" 2> "$work/detach-a.err"
rc=$?
n=$(grep -c '"event":"detach"' "$work/detach-a.out")
if [ "$rc" = 0 ] && [ "$n" = 2 ] &&
   grep -q "\"cgroup\":\"/$tag-a\",\"cgroup_id\":$ida,\"reason\":\"detach_command\"" "$work/detach-a.out" &&
   grep -q "\"cgroup\":\"/$tag-a/kid\"" "$work/detach-a.out"; then
	ok "detach /$tag-a: one record each for it and its child"
else
	not_ok "detach /$tag-a: records" "exit $rc, $n records: $(cat "$work/detach-a.out" "$work/detach-a.err" | tr '\n' ' ')"
fi
none "detach /$tag-a: /$tag-a" "$cga"
once "detach /$tag-a: /$tag-b untouched" "$cgb"
once "detach /$tag-a: /$tag-c untouched" "$cgc"
out=$("$probe" --netns --cgroup "$cga" connect tcp 127.0.0.1 9999 --listen 2>&1 | tail -n 1)
[ "$out" = OK ] && ok "detach /$tag-a: connect from it now OK" ||
	not_ok "detach /$tag-a: connect from it" "got $out"
out=$("$probe" --netns --cgroup "$cgb" connect tcp 127.0.0.1 9999 --listen 2>&1 | tail -n 1)
[ "$out" = EPERM ] && ok "detach /$tag-a: /$tag-b still denies" ||
	not_ok "detach /$tag-a: /$tag-b still denies" "got $out"
sleep 1		# four scans of the running agent
none "detach /$tag-a: the agent does not attach it again" "$cga"
agrees "after detach: /$tag-a" "$cga" "$ida"
if sed 's/},{/}\n{/g' "$work/status.json" | grep -q "\"cgroup_id\":$ida}"; then
	ok "status lists /$tag-a as detached on purpose"
else
	not_ok "status lists /$tag-a as detached" "$(cat "$work/status.json")"
fi
"$STOCKADE" detach --bpffs "$bpffs" lc-two > "$work/detach-p.out" 2>&1
if [ "$(grep -c '"event":"detach"' "$work/detach-p.out")" = 1 ] &&
   grep -q "\"policy\":\"lc-two\",\"cgroup\":\"/$tag-c\"" "$work/detach-p.out"; then
	ok "detach lc-two: one record, for /$tag-c"
else
	not_ok "detach lc-two" "$(tr '\n' ' ' < "$work/detach-p.out")"
fi
none "detach lc-two: /$tag-c" "$cgc"
once "detach lc-two: /$tag-b untouched" "$cgb"
"$STOCKADE" detach --bpffs "$bpffs" "/$tag-a/kid" > /dev/null 2>&1 &&
	not_ok "detach of an unconfined cgroup" "exit 0" ||
	ok "detach of a cgroup no longer confined: refused"
if "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2> "$work/all.err"; then
	not_ok "detach --all while the agent runs" "exit 0"
else
	grep -q "kill -TERM $agent_pid" "$work/all.err" &&
		ok "detach --all while the agent runs: refused, naming the fix" ||
		not_ok "detach --all while the agent runs" "$(cat "$work/all.err")"
fi

# SIGTERM keeps what is left confined.
kill -TERM "$agent_pid"
wait "$agent_pid"
rc=$?
agent_pid=
if [ "$rc" = 0 ] && grep -q '"event":"agent_stop".*"enforcement":"kept"' "$live_log"; then
	ok "SIGTERM: exit 0, enforcement kept"
else
	not_ok "SIGTERM: exit 0, enforcement kept" "exit $rc: $(tail -n 1 "$live_log")"
fi
once "after SIGTERM: /$tag-b" "$cgb"
out=$("$probe" --netns --cgroup "$cgb" connect tcp 127.0.0.1 9999 --listen 2>&1 | tail -n 1)
[ "$out" = EPERM ] && ok "after SIGTERM: /$tag-b still denies" ||
	not_ok "after SIGTERM: /$tag-b still denies" "got $out"
agrees "after SIGTERM: /$tag-b" "$cgb" "$idb"

# A pinned map this build cannot read at all (bpftool-made, no BTF, other
# sizes): the state is replaced all the same; the counters restart. Needs
# bpftool (not in the test VM).
if command -v bpftool > /dev/null 2>&1; then
	mv_ok=0
	if bpftool map create "$bpffs/maps/sb_count_x" type hash \
		key 8 value 8 entries 16 name sb_count 2> /dev/null; then
		mv "$bpffs/maps/sb_count" "$bpffs/maps/sb_count_real" &&
			mv "$bpffs/maps/sb_count_x" "$bpffs/maps/sb_count" && mv_ok=1
	fi
	if [ "$mv_ok" = 1 ]; then
		rm -f "$bpffs/maps/sb_count_real"
		start $next
		if grep -q '"event":"pin_replace".*"cause":"map sb_count: .*"counters":"restarted"' "$work/agent$next.log"; then
			ok "foreign pinned map: the state replaced, the counters restart, said so"
		else
			not_ok "foreign pinned map: the state replaced" "$(grep pin_replace "$work/agent$next.log") $(tail -n 2 "$work/agent$next.err")"
		fi
		once "foreign pinned map: /$tag-b" "$cgb"
		none "foreign pinned map: /$tag-a stays detached" "$cga"
		none "foreign pinned map: /$tag-c stays detached" "$cgc"
		kill -TERM "$agent_pid"
		wait "$agent_pid"
		agent_pid=
	else
		skip "foreign pinned map" "bpftool could not create a map in $bpffs"
	fi
else
	skip "foreign pinned map" "no bpftool here"
fi

# The whole stream, agents and detach commands: gaps are losses, or
# numbers a replacement reserved and says it left unused.
cat "$work"/agent*.log "$work"/detach-*.out > "$work/all.log"
read -r first last count _ <<EOF
$(seq_span "$work/all.log")
EOF
lost=$(lost_sum "$work/all.log")
unused=$(awk 'index($0, "\"event\":\"pin_replace\"") && match($0, /"seq_unused":[0-9]+/) {
	s += substr($0, RSTART + 13, RLENGTH - 13) } END { print s + 0 }' "$work/all.log")
if [ $((last - first + 1 - count)) -eq "$((lost + unused))" ]; then
	ok "seq $first..$last over every agent and command: gaps = lost ($lost) + unused by replacements ($unused)"
else
	# The first numbers missing, and the records next to the first one.
	# Each gap (first-last), and the records around the small ones.
	seqs=$(seq_of < "$work/all.log" | sort -un)
	gaps=$(echo "$seqs" | awk 'NR > 1 && $1 != p + 1 { printf "%d-%d ", p + 1, $1 - 1 } { p = $1 }' | cut -c 1-600)
	near=
	for g in $(echo "$seqs" | awk 'NR > 1 && $1 == p + 2 { print p + 1 } { p = $1 }' | head -n 3); do
		near="$near [$g: $(grep "\"seq\":$((g - 1))[,}]\|\"seq\":$((g + 1))[,}]" "$work/all.log" | cut -c 1-200 | tr '\n' ' ')]"
	done
	not_ok "seq over every agent and command" "$count records span $first..$last, lost $lost, unused by replacements $unused; gaps: $gaps; single gaps:$near"
fi

"$STOCKADE" detach --all --bpffs "$bpffs" > "$work/detach-all.out" 2>&1
rc=$?
if [ "$rc" = 0 ] && [ ! -e "$bpffs" ] &&
   grep -q "\"cgroup_id\":$idb,\"reason\":\"detach_command\"" "$work/detach-all.out"; then
	ok "detach --all: /$tag-b released, $bpffs removed"
else
	not_ok "detach --all" "exit $rc: $(tr '\n' ' ' < "$work/detach-all.out")"
fi
none "detach --all: /$tag-b" "$cgb"
out=$("$probe" --netns --cgroup "$cgb" connect tcp 127.0.0.1 9999 --listen 2>&1 | tail -n 1)
[ "$out" = OK ] && ok "detach --all: connect from /$tag-b now OK" ||
	not_ok "detach --all: connect from /$tag-b" "got $out"

echo "# lifecycle: $(($(date +%s) - t_start)) s"
summary
