# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Sourced by the live tests (tests/live/*.sh: `. "$here/lib.sh"`), on the
# host and in the test VM (busybox ash, from /opt/stockade: POSIX sh only).
# What each of them needs before its first case, and how it counts:
#   need_cgroup2 NAME  sets CGROUP_ROOT (kept when already set) to the
#                      cgroup2 mount; exits 1 naming NAME if there is none
#   need_bpffs NAME    mounts bpffs on /sys/fs/bpf unless it is there
#   ok NAME / not_ok NAME DETAIL / skip NAME REASON
#                      one result line each: `ok NAME`, `not ok NAME:
#                      DETAIL`, `ok NAME # skip: REASON` (TAP's form; a
#                      skip is counted apart, never as passed)
#   summary            the closing `N passed, N failed, N skipped` line;
#                      returns 1 if any failed, so a script ends with it
#   wait_for PATTERN FILE [TENTHS]
#                      until a line of FILE matches (grep), 10 s by default
#   wait_ready FILE    until the agent's agent_ready is in FILE, at most
#                      READY_TENTHS (60 s: loading every program takes
#                      seconds on the host, many more under TCG in the VM;
#                      a hang guard, never a timing)
#   cg_empty DIR...    move what still runs in each cgroup DIR to the root
#                      cgroup, then remove DIR (one level)
#   rmcg DIR           remove a cgroup tree, children first
#   agent_end [SIGNAL] signal the agent $agent_pid (SIGTERM, or SIGNAL:
#                      -9), wait for it, detach what $bpffs still pins
#   agent_start [--policy P] [FLAG...]
#                      start the agent on P ($work/pol by default) with
#                      the FLAGs, pinned under $bpffs, logging to $log
#                      (sets agent_pid, $work/agent.stderr), and wait for
#                      agent_ready: one ok, or not_ok and exit
#   log_settle FILE    until FILE stops growing (the agent has written
#                      what the ring held)
#   lost_sum FILE      the records the agent counted lost in its log FILE
#   seq_of             the seq of each record on stdin, one a line
# A script may still define any of these itself after sourcing: its own
# definition wins. It sets `here` (its own directory) before sourcing.

# The binaries, unless the environment names others (the VM suite does).
STOCKADE=${STOCKADE:-$here/../../stockade}
TOOLS=${TOOLS:-$here/../../build/tools}
# The host kernel refuses BPF-LSM, so the agents run degraded there; the
# VM suite passes flags of its own.
STOCKADE_AGENT_FLAGS=${STOCKADE_AGENT_FLAGS---allow-degraded}

passed=0
failed=0
skipped=0

ok() { passed=$((passed + 1)); echo "ok $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok $1: $2"; }
skip() { skipped=$((skipped + 1)); echo "ok $1 # skip: $2"; }

summary() {
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" = 0 ]
}

# /proc/mounts, not stat -f: busybox's stat does not name cgroup2 or bpf.
fs_at() { awk -v d="$1" '$2 == d { t = $3 } END { print t }' /proc/mounts; }

# /sys/fs/cgroup on a pure cgroup2 host (and in the VM), .../unified on a
# hybrid one.
need_cgroup2() {
	if [ -z "${CGROUP_ROOT:-}" ]; then
		for _d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
			if [ "$(fs_at "$_d")" = cgroup2 ]; then
				CGROUP_ROOT=$_d
				break
			fi
		done
	fi
	[ -n "${CGROUP_ROOT:-}" ] || { echo "$1: no cgroup2 mount found" >&2; exit 1; }
}

need_bpffs() {
	if [ "$(fs_at /sys/fs/bpf)" != bpf ]; then
		mount -t bpf bpf /sys/fs/bpf || { echo "$1: cannot mount bpffs" >&2; exit 1; }
	fi
}

wait_for() {
	n=0
	while ! grep -q "$1" "$2" 2>/dev/null; do
		n=$((n + 1))
		[ "$n" -gt "${3:-100}" ] && return 1
		sleep 0.1
	done
	return 0
}

READY_TENTHS=${READY_TENTHS:-600}
wait_ready() { wait_for '"event":"agent_ready"' "$1" "$READY_TENTHS"; }

cg_empty() {
	for _d in "$@"; do
		[ -d "$_d" ] || continue
		# Stragglers out first, or the directory cannot go.
		while read -r _p; do echo "$_p" > "$CGROUP_ROOT/cgroup.procs"; done \
			< "$_d/cgroup.procs" 2>/dev/null
		rmdir "$_d" 2>/dev/null
	done
}

rmcg() {
	[ -d "$1" ] || return 0
	find "$1" -depth -type d -exec rmdir {} \; 2>/dev/null
}

# A killed agent leaves its pins, and so its enforcement, behind. The
# script sets agent_pid and bpffs.
# shellcheck disable=SC2154
agent_end() {
	[ -n "$agent_pid" ] && kill ${1:+"$1"} "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	[ -d "$bpffs" ] && "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
}

# shellcheck disable=SC2154
agent_start() {
	_pol=$work/pol
	if [ "${1-}" = --policy ]; then
		_pol=$2
		shift 2
	fi
	# shellcheck disable=SC2086
	"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$_pol" --bpffs "$bpffs" \
		--detach-on-exit --log "$log" "$@" > /dev/null 2> "$work/agent.stderr" &
	agent_pid=$!
	if ! wait_ready "$log"; then
		not_ok "agent_ready" "$(cat "$work/agent.stderr")"
		summary
		exit 1
	fi
	ok "agent_ready"
}

log_settle() {
	_a=-1
	_b=$(wc -c < "$1")
	while [ "$_a" != "$_b" ]; do
		sleep 0.2
		_a=$_b
		_b=$(wc -c < "$1")
	done
}

seq_of() { awk -F'"seq":' 'NF > 1 { split($2, a, ","); print a[1] }'; }

# The counts below each take one awk pass over the logs, with substrings
# (index) where a regular expression is not needed: the pipelines of
# grep, sed, sort and wc they replace took a minute of lifecycle.sh
# under TCG, over logs of tens of thousands of records.

# lost_sum FILE...: the records lost, from the "lost" records' counts.
lost_sum() {
	awk 'index($0, "\"event\":\"lost\"") && match($0, /"count":[0-9]+,/) {
		s += substr($0, RSTART + 8, RLENGTH - 9) }
	     END { print s + 0 }' "$@"
}

# seq_span FILE...: "FIRST LAST DISTINCT TOTAL" of the records' seqs: the
# lowest and highest, how many different ones, how many records carry
# one. Gaps in FIRST..LAST are LAST - FIRST + 1 - DISTINCT.
seq_span() {
	awk '(i = index($0, "\"seq\":")) {
		split(substr($0, i + 6), a, ","); v = a[1] + 0; t++
		if (!(v in seen)) {
			seen[v] = 1
			if (!n++ || v < lo) lo = v
			if (n == 1 || v > hi) hi = v
		}
	}
	END { print lo + 0, hi + 0, n + 0, t + 0 }' "$@"
}

# deny_logged FILE PID...: for each PID, in order, how many deny records
# of it FILE holds, each seq counted once. An empty PID counts 0, in its
# place (split at each space, not at runs of them: "$*" joins by one).
deny_logged() {
	_dl_f=$1
	shift
	awk -v pids="$*" 'BEGIN { n = split(pids, p, / /) }
	index($0, "\"event\":\"deny\"") && (i = index($0, "\"seq\":")) {
		split(substr($0, i + 6), a, ","); v = a[1] + 0
		for (k = 1; k <= n; k++)
			if (p[k] != "" && index($0, "\"pid\":" p[k] ",") &&
			    !((k, v) in seen)) {
				seen[k, v] = 1
				c[k]++
			}
	}
	END { for (k = 1; k <= n; k++) printf "%d%s", c[k], (k < n ? " " : "\n") }' "$_dl_f"
}
