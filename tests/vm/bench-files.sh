#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# The file section of the benchmarks (issue 7), in the test VM: BPF-LSM
# only works here. Times open+close (tools/benchfile.c) of an allowed and
# of a denied path, each at depth 3 and 8:
#   allow3 /task/in/data.txt        allow8 /task/in/a/b/c/d/e/data.txt
#   deny3  /secret/in/data.txt      deny8  /secret/in/a/b/c/d/e/data.txt
# and a miss-heavy mix, allowed, at depth 5:
#   many   /task/in/m/N/data.txt, N = 0 .. 999: 1000 files, a directory
#          each, opened in turn (benchfile's "%u" PATH), so that no open
#          meets the file, directory or decision of the one before
# under these conditions:
#   none     no agent, and no BPF program attached at all (checked with
#            bpfquery links each round). The BPF-LSM programs are global:
#            once loaded, every open on the machine pays for the "is this
#            task in a sandbox?" question, so the honest baseline is a
#            kernel without them, not a caller that happens to be outside.
#            It is measured for each condition below by the same worker
#            process layout in the same cgroup (none-outside,
#            none-in1k, ...), so that each condition is held against
#            itself without the agent;
#   null     no agent, and a program with no body (tools/lsmnull) on
#            each BPF-LSM hook that these calls reach among stockade's
#            (file_open and file_free_security for an open and close;
#            capable, cred_prepare and cred_free for a setuid, which
#            prepares new credentials and frees the old: the bpf_stats
#            pass shows no other runs per call), the caller where
#            outside's is: what the
#            mechanism itself costs (trampoline, emulator), so that
#            outside / null is what stockade's own outsider path adds;
#            and the allowed paths again in the middle sandbox's cgroup
#            (null-in1k), the base of what its programs add inside;
#   outside  the agent running, the caller outside every sandbox (the
#            programs run and find no sandbox);
#   inN      the caller in a sandbox whose policy has N file rules
#            (benchfile policy; 10, 1000, 10000; tiny: 10 and 100).
# Outside a sandbox the deny paths are plain readable files.
#
# Each round: the "pre" half of none (conditions pre-outside, pre-in10,
# ...), lsmnull's phase (null-outside, null-in1k), the agent starts, one benchfile run times every path of every
# agent condition (outside, in10, in1k, in10k: a worker process per
# condition, since a sandboxed process may not leave its cgroup), their
# blocks taking turns ABCD ABCD ... so that a slow spell of the
# emulator's host falls on all of them alike; then the agent stops and
# removes everything (--detach-on-exit) and the "post" half of none runs
# (post-outside, ...). The host side takes the mean of the two halves as
# the round's none-X, which cancels a drift of the host's speed across
# the round (an ABA design). TCG timing is bimodal (runs cluster
# at about 30 or 60 us), hence rounds, and min and median with a
# bootstrap interval (benchstat, tests/bench/files.sh).
#
# One guest CPU runs everything, the agent included, and whatever the
# agent does lands in the time of whichever block runs then: above all
# its logging of the records that earlier denied opens produced. So the
# agent is paused (SIGSTOP) while the agent conditions are timed, and
# writes out their records afterwards: each figure is the kernel's work
# for that open, a denied one's including producing its record into the
# ring buffer (32 MiB here, so that none is lost while the agent is
# paused; a round with a record lost fails, since a lost record is
# cheaper than a produced one). What the agent's logging adds on that one
# CPU is shown apart: `denylive` is the denied paths in the mid sandbox
# with the agent running; the logger's own cost is the events section's.
# In the last round, after the timed part, kernel.bpf_stats_enabled is set
# for a separate pass that reads each program's own run_time_ns / run_cnt
# (bpfquery stats) over these workloads: null (lsmnull's empty program:
# the stats' own cost), outside, allowed paths inside
# (opened again and again: the file decision cache's hits after the
# first), denied paths inside, and FRESH inside (first opens only: its
# misses); and, outside, setuid(0) (null-setuid too) and fork+exec+exit,
# which every process of the host pays: each program they run.
#
#   sh tests/vm/bench-files.sh [--suite]
# Env: ROUNDS (15), ITERS (200 opens a block), BLOCKS (8 timed blocks),
# RULES ("10 1000 10000"), BENCH_TINY=1 (1 round, 1 block of 40 opens,
# RULES "10 100": only proves that it works), STOCKADE, TOOLS, CGROUP_ROOT
# (tests/vm/suite.sh's defaults).
# Prints on the console, for tests/bench/files.sh:
#   @@BENCH info KEY VALUE...
#   @@BENCH sample ROUND PATH.COND NS_PER_OP
#   @@BENCH stat WORKLOAD PROG RUN_CNT RUN_TIME_NS OPENS
#   @@BENCH check NAME ok|fail DETAIL
# and exits 1 if a check failed or a measurement broke. --suite (from
# tests/vm/suite.sh, tiny) also reports each check as a `@@STOCKADE`
# result.

. tests/vm/lib.sh

T=bench-files
suite=0
[ "${1:-}" = --suite ] && suite=1
STOCKADE=${STOCKADE:-/opt/stockade/stockade}
TOOLS=${TOOLS:-/opt/stockade/tools}
CGROUP_ROOT=${CGROUP_ROOT:-/sys/fs/cgroup}
if [ "${BENCH_TINY:-0}" = 1 ]; then
	ROUNDS=${ROUNDS:-1} ITERS=${ITERS:-40} BLOCKS=${BLOCKS:-1} RULES=${RULES:-10 100}
else
	ROUNDS=${ROUNDS:-15} ITERS=${ITERS:-200} BLOCKS=${BLOCKS:-8} RULES=${RULES:-10 1000 10000}
fi
bf=$TOOLS/benchfile
work=/tmp/bench-files
bpffs=/sys/fs/bpf/bench-files
log=$work/agent.log
stats=/proc/sys/kernel/bpf_stats_enabled
agent=
null=
null_failed=0
failed=0
# The hooks lsmnull takes (see null above).
NULL_HOOKS="file_open file_free_security capable cred_prepare cred_free"

A3=/task/in/data.txt
A8=/task/in/a/b/c/d/e/data.txt
D3=/secret/in/data.txt
D8=/secret/in/a/b/c/d/e/data.txt
ALLOWED="allow3:ok:$A3 allow8:ok:$A8"
MANY_DIR=/task/in/m
MANY_N=1000	# benchfile's SPREAD_FILES
MANY="many:ok:$MANY_DIR/%u/data.txt"
# FRESH: 1000 more such files, opened only by the bpf_stats pass, once
# each: every open is a first one, which the file decision cache
# (include/file.h) cannot answer: its miss path, resolve, look up, store.
FRESH_DIR=/task/in/f
FRESH="fresh:ok:$FRESH_DIR/%u/data.txt"
DENIED="deny3:denied:$D3 deny8:denied:$D8"
DENY_OPEN="deny3:ok:$D3 deny8:ok:$D8"	# the same files, where nothing denies
LIVE="denylive3:denied:$D3 denylive8:denied:$D8"

spec() {	# spec COND NAME:EXPECT:PATH...: each as COND/NAME:EXPECT:PATH
	_c=$1
	shift
	for _s in "$@"; do
		printf '%s/%s ' "$_c" "$_s"
	done
}

check() {	# check NAME ok|fail DETAIL...
	_n=$1 _r=$2
	shift 2
	echo "@@BENCH check $_n $_r $*"
	if [ "$_r" != ok ]; then
		failed=1
		[ "$suite" = 1 ] && t_fail "$T/$_n" "$*"
	elif [ "$suite" = 1 ]; then
		t_ok "$T/$_n"
	fi
}

# Progress on the console (not a marker), with the guest's clock.
progress() {
	echo "bench-files: $* at $(cut -d' ' -f1 /proc/uptime) s"
}

label() {	# 10 -> 10, 1000 -> 1k, 10000 -> 10k
	case $1 in
	*000) echo "${1%000}k" ;;
	*) echo "$1" ;;
	esac
}

agent_ready() { grep -q '"event":"agent_ready"' "$log"; }
ready_or_dead() { agent_ready || ! alive "$agent"; }
agent_gone() { ! alive "$agent"; }

agent_start() {
	: > "$log"
	"$STOCKADE" agent --policy "$work/policies" --bpffs "$bpffs" --detach-on-exit \
		--ring-size 32M --log "$log" > /dev/null 2> "$work/agent.err" &
	agent=$!
	# Loading and verifying the programs is slow under TCG emulation.
	wait_for 60 ready_or_dead
	agent_ready && return 0
	echo "bench-files: the agent did not come up: $(tail -n 3 "$work/agent.err")"
	agent_stop
	return 1
}

agent_stop() {
	[ -n "$agent" ] || return 0
	kill -CONT "$agent" 2>/dev/null
	kill -TERM "$agent" 2>/dev/null
	wait_for 20 agent_gone || kill -KILL "$agent" 2>/dev/null
	wait "$agent" 2>/dev/null
	agent=
	# After a SIGKILL the pins (and so the programs) would stay.
	[ ! -d "$bpffs" ] || "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
}

null_ready() { grep -q '^ready$' "$work/null.out"; }
null_ready_or_dead() { null_ready || ! alive "$null"; }
no_links() { [ -z "$("$TOOLS/bpfquery" links)" ]; }

null_start() {
	: > "$work/null.out"
	# shellcheck disable=SC2086
	"$TOOLS/lsmnull" $NULL_HOOKS > "$work/null.out" 2> "$work/null.err" &
	null=$!
	wait_for 30 null_ready_or_dead
	null_ready && return 0
	echo "bench-files: lsmnull did not attach: $(cat "$work/null.err")"
	null_stop
	return 1
}

# Its links go with it; the next condition needs a kernel without them.
null_stop() {
	[ -n "$null" ] || return 0
	kill -TERM "$null" 2>/dev/null
	wait "$null" 2>/dev/null
	null=
	wait_for 60 no_links
}

cleanup() {
	null_stop
	agent_stop
	[ -w "$stats" ] && echo 0 > "$stats"
	for n in $RULES; do
		rmdir "$CGROUP_ROOT/bench-files-$(label "$n")" 2>/dev/null
	done
	rm -rf /secret /task/in/a "$MANY_DIR" "$FRESH_DIR" "$work"
}

# Deny records from benchfile, and records counted lost, against the
# denials benchfile saw this round.
count_records() {
	_want=$(awk '{ s += $1 } END { print s + 0 }' "$work/denied")
	_deny=$(grep '"event":"deny"' "$log" | grep -c '"comm":"benchfile"')
	_lost=$(grep '"event":"lost"' "$log" | sed 's/.*"count":\([0-9]*\).*/\1/' |
		awk '{ s += $1 } END { print s + 0 }')
}
drained() {
	count_records
	[ $((_deny + _lost)) = "$_want" ]
}

# measure ROUND PAUSE ARGS...: one benchfile run (`benchfile open ARGS`),
# the agent paused for it when PAUSE is 1. Its lines become samples; its
# denials add up in $work/denied. Starts once the agent has written out
# every record so far.
measure() {
	_round=$1 _pause=$2
	shift 2
	if [ -n "$agent" ] && ! wait_for 60 drained; then
		check denials-logged fail "round $_round: $_deny deny records + $_lost lost != $_want denials, 60 s on"
		return 1
	fi
	[ "$_pause" = 1 ] && [ -n "$agent" ] && kill -STOP "$agent"
	"$bf" open --iters "$ITERS" --blocks "$BLOCKS" "$@" > "$work/m.out" 2> "$work/m.err"
	_rc=$?
	[ -n "$agent" ] && kill -CONT "$agent"
	if [ "$_rc" != 0 ]; then
		check measure fail "round $_round: $(tr '\n' ' ' < "$work/m.err")"
		return 1
	fi
	while read -r _name _ns _opens _denied; do
		echo "@@BENCH sample $_round $_name $_ns" | tee -a "$work/samples"
		echo "$_denied" >> "$work/denied"
	done < "$work/m.out"
}

# stat_pass WORKLOAD CGROUP PATHSPEC...: one benchfile run with bpf_stats
# on; prints each linked program's run_cnt and run_time_ns accrued for
# it. Reading the stats runs programs too (bpfquery's own bpf() calls,
# the agent's idle work), so what two reads back to back accrue is taken
# off.
stat_pass() {
	_wl=$1 _cg=$2
	shift 2
	"$TOOLS/bpfquery" stats > "$work/stats.0" &&
		"$TOOLS/bpfquery" stats > "$work/stats.1" || return 1
	"$bf" open --iters "$ITERS" --blocks 1 --cond "w=$_cg" $(spec w "$@") \
		> /dev/null 2> "$work/m.err" ||
		{ echo "bench-files: $(cat "$work/m.err")"; return 1; }
	"$TOOLS/bpfquery" stats > "$work/stats.2" || return 1
	# benchfile's untimed block and its one timed block, per path; a
	# fork+exec per EXEC_DIV (tools/benchfile.c: 20) of them for @exec.
	case "$*" in
	*@exec*) _opens=$((ITERS * 2 / 20)) ;;
	*) _opens=$((ITERS * 2 * $#)) ;;
	esac
	awk -v wl="$_wl" -v opens="$_opens" '
		{
			for (i = 1; i <= NF; i++) {
				split($i, kv, "=")
				f[kv[1]] = kv[2]
			}
			p = f["prog"]
			name[p] = f["name"]
			cnt[FILENAME, p] = f["run_cnt"]
			ns[FILENAME, p] = f["run_time_ns"]
		}
		END {
			for (p in name) {
				d = cnt[ARGV[3], p] - 2 * cnt[ARGV[2], p] + cnt[ARGV[1], p]
				t = ns[ARGV[3], p] - 2 * ns[ARGV[2], p] + ns[ARGV[1], p]
				if (d > 0 && t > 0)
					printf "@@BENCH stat %s %s %d %d %d\n", wl, name[p], d, t, opens
			}
		}' "$work/stats.0" "$work/stats.1" "$work/stats.2" > "$work/stats.lines"
	[ -s "$work/stats.lines" ] || { echo "bench-files: no program ran during $_wl"; return 1; }
	cat "$work/stats.lines"
}

trap cleanup EXIT
trap 'exit 130' INT TERM
rm -rf "$work"
mkdir -p "$work/policies"
: > "$work/samples"

if [ ! -x "$bf" ] || [ ! -x "$TOOLS/bpfquery" ] || [ ! -x "$TOOLS/lsmnull" ]; then
	check run fail "no $bf, $TOOLS/bpfquery or $TOOLS/lsmnull (tools/*.c, built static)"
	exit 1
fi
if [ -n "$(pidof stockade)" ] || [ -n "$("$TOOLS/bpfquery" links)" ]; then
	check run fail "an agent or BPF links are already there; the no-agent baseline needs a kernel without them"
	exit 1
fi

# ---- fixtures: the measured files and the sandboxes ----
for f in $A3 $A8 $D3 $D8; do
	mkdir -p "${f%/*}" && echo data > "$f" || { check run fail "cannot create $f"; exit 1; }
done
i=0
dirs=
while [ "$i" -lt "$MANY_N" ]; do
	dirs="$dirs $MANY_DIR/$i $FRESH_DIR/$i"
	i=$((i + 1))
done
# shellcheck disable=SC2086
mkdir -p $dirs || { check run fail "cannot create the directories under $MANY_DIR"; exit 1; }
for d in $dirs; do
	echo data > "$d/data.txt" || { check run fail "cannot create $d/data.txt"; exit 1; }
done
# benchfile arguments: the agent conditions, and the none halves.
# The none halves run the very same workers, in the same cgroups, as the
# agent conditions (pre-outside, pre-in10, ...): each condition is held
# against itself without the agent, not against another layout.
# CAPABLE: setuid(0) outside, the cost of lsm/capable to the host's
# processes (bpf/priv.bpf.c), against the same calls without the agent.
CAPABLE="capable:ok:@setuid"
# EXEC: fork + exec + exit (benchfile true), outside (the exec
# tracepoints' lookup) and in the first sandbox (an exec and an exit
# record each, bpf/exec.bpf.c), against the same without the agent.
EXEC="exec:ok:@exec"
agent_args="--cond outside= $(spec outside $ALLOWED $MANY $DENY_OPEN $CAPABLE $EXEC)"
null_args="--cond null-outside= $(spec null-outside $ALLOWED $MANY $DENY_OPEN $CAPABLE)"
pre_args="--cond pre-outside= $(spec pre-outside $ALLOWED $MANY $DENY_OPEN $CAPABLE $EXEC)"
post_args="--cond post-outside= $(spec post-outside $ALLOWED $MANY $DENY_OPEN $CAPABLE $EXEC)"
ncond=1
first=1
for n in $RULES; do
	l=$(label "$n")
	x=
	[ "$first" = 1 ] && x=$EXEC
	first=0
	mkdir -p "$CGROUP_ROOT/bench-files-$l" &&
		"$bf" policy --name "bench-files-$l" --cgroup "/bench-files-$l" --rules "$n" \
			> "$work/policies/bench-files-$l.yaml" ||
		{ check run fail "cannot set up the sandbox with $n rules"; exit 1; }
	cg=$CGROUP_ROOT/bench-files-$l
	# shellcheck disable=SC2086
	agent_args="$agent_args --cond in$l=$cg $(spec "in$l" $ALLOWED $MANY $DENIED $x)"
	# shellcheck disable=SC2086
	pre_args="$pre_args --cond pre-in$l=$cg $(spec "pre-in$l" $ALLOWED $MANY $DENY_OPEN $x)"
	# shellcheck disable=SC2086
	post_args="$post_args --cond post-in$l=$cg $(spec "post-in$l" $ALLOWED $MANY $DENY_OPEN $x)"
	ncond=$((ncond + 1))
done
mid=$(echo "$RULES" | awk '{ print (NF > 1 ? $2 : $1) }')
mid=$(label "$mid")
# The allowed paths once more with the empty programs, in the middle
# sandbox's cgroup: the base of its "over empty programs" rows, the same
# worker in the same cgroup as in$mid (a file's memory is charged to a
# non-root cgroup, not to the root's: outside and inside differ by that
# with no BPF at all).
# shellcheck disable=SC2086
null_args="$null_args --cond null-in$mid=$CGROUP_ROOT/bench-files-$mid $(spec "null-in$mid" $ALLOWED $MANY)"
echo "@@BENCH info rounds $ROUNDS"
echo "@@BENCH info iters $ITERS blocks $BLOCKS"
echo "@@BENCH info rules $RULES"
echo "@@BENCH info kernel $(uname -r)"
echo "@@BENCH info cpus $(grep -c ^processor /proc/cpuinfo)"

# ---- timed rounds ----
r=1
while [ "$r" -le "$ROUNDS" ]; do
	: > "$work/denied"
	if [ -n "$("$TOOLS/bpfquery" links)" ]; then
		check no-programs-at-baseline fail "round $r: links left: $("$TOOLS/bpfquery" links | tr '\n' ' ')"
		exit 1
	fi
	progress "round $r: no agent"
	measure "$r" 0 $pre_args || exit 1
	progress "round $r: empty BPF-LSM programs (lsmnull)"
	null_start || { check null-programs fail "round $r: lsmnull did not attach (see the console)"; exit 1; }
	# An attach leaves the kernel work behind it (the trampoline's
	# update waits on Tasks RCU, slow under TCG): the first rounds'
	# null blocks ran a half slower without this. The agent's start
	# gives its conditions longer than this anyway.
	sleep 3
	measure "$r" 0 $null_args || exit 1
	if [ "$r" = "$ROUNDS" ]; then
		if echo 1 > "$stats" && stat_pass null "" $ALLOWED > "$work/stat.null" &&
			stat_pass null-setuid "" $CAPABLE >> "$work/stat.null"; then
			cat "$work/stat.null"
		else
			check null-programs fail "round $r: the bpf_stats pass with lsmnull failed"
			null_failed=1
		fi
		echo 0 > "$stats"
	fi
	if ! null_stop; then
		check null-programs fail "round $r: lsmnull's links still there 60 s after it ended: $("$TOOLS/bpfquery" links | tr '\n' ' ')"
		exit 1
	fi
	progress "round $r: starting the agent"
	agent_start || { check agent-ready fail "round $r: no agent_ready within 60 s"; exit 1; }
	progress "round $r: agent ready"
	measure "$r" 1 $agent_args || exit 1
	progress "round $r: timed; the denials with the agent logging"
	measure "$r" 0 --cond "in$mid=$CGROUP_ROOT/bench-files-$mid" $(spec "in$mid" $LIVE) || exit 1
	if ! wait_for 60 drained; then
		check denials-logged fail "round $r: $_deny deny records + $_lost lost != $_want denials, 60 s on"
		exit 1
	fi
	if [ "$_lost" != 0 ]; then
		check denials-logged fail "round $r: $_lost records lost: the paused agent's ring was too small, and a lost record is cheaper than a produced one"
		exit 1
	fi
	if [ "$r" = "$ROUNDS" ]; then
		progress "round $r: bpf_stats pass"
		if ! echo 1 > "$stats"; then
			check bpf-stats fail "cannot write $stats"
		elif stat_pass outside "" $ALLOWED > "$work/stat.out" &&
			stat_pass "in$mid-allowed" "$CGROUP_ROOT/bench-files-$mid" $ALLOWED >> "$work/stat.out" &&
			stat_pass "in$mid-denied" "$CGROUP_ROOT/bench-files-$mid" $DENIED >> "$work/stat.out" &&
			stat_pass "in$mid-fresh" "$CGROUP_ROOT/bench-files-$mid" $FRESH >> "$work/stat.out" &&
			stat_pass outside-setuid "" $CAPABLE >> "$work/stat.out" &&
			stat_pass outside-exec "" $EXEC >> "$work/stat.out"; then
			cat "$work/stat.out"
			check bpf-stats ok
		else
			cat "$work/stat.out"
			check bpf-stats fail "a stats pass failed (see the console)"
		fi
		echo 0 > "$stats"
	fi
	progress "round $r: stopping the agent"
	agent_stop
	progress "round $r: no agent again"
	measure "$r" 0 $post_args || exit 1
	r=$((r + 1))
done
check denials-logged ok
[ "$null_failed" = 1 ] || check null-programs ok
# Every round: 5 paths in each condition (4 and the miss-heavy mix), with
# the agent and in both none halves, the capable and exec rows outside (3
# more each), the exec row in the first sandbox (3 more), the 2 denylive
# paths, and the null conditions' 9 (the outside paths but exec, and the
# 3 allowed ones in the middle sandbox's cgroup); each a positive number.
want=$((ROUNDS * (15 * ncond + 3 + 3 + 3 + 2 + 9)))
got=$(awk '$5 + 0 > 0 && NF == 5' "$work/samples" | wc -l)
if [ "$got" = "$want" ]; then
	check samples ok
else
	check samples fail "$got well-formed samples, expected $want"
fi
[ "$failed" = 0 ]
