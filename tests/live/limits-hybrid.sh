#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Live test of limits on a hybrid cgroup host (issue 5, test 7): runs on
# the host (make live-test), whose cgroup2 hierarchy (/sys/fs/cgroup/unified)
# has no cpu, memory or pids controller: those belong to cgroup v1.
#   - A policy with limits.cpu/memory/pids: the agent refuses to start,
#     with one error per limit, at its position, that names the cause (a
#     hybrid host, where v1 holds the controller) and the fix; it applies
#     nothing (no record, no confinement, no state left behind).
#   - The same policy without those limits starts and confines; a reload
#     back to the limits is rejected, `stockade reload` printing why.
#   - limits.runtime needs no controller (cgroup.kill is core cgroup2):
#     it works here too, and `stockade status` sees the sandbox.
# On a host whose cgroup2 has the memory controller, the first check is
# skipped, and says so. The VM suite covers the rest (tests/vm/limits.sh).
#
# Environment: STOCKADE, TOOLS (netprobe, hog), CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS (default --allow-degraded, as in run.sh).
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
policy=$here/limits-hybrid.yaml

need_cgroup2 limits-hybrid
need_bpffs limits-hybrid

work=$(mktemp -d /tmp/stockade-limits.XXXXXX)
cg=$CGROUP_ROOT/stockade-limits
state=$work/state.json
# Private pins, removed on exit (--detach-on-exit): nothing of this test
# outlives it.
bpffs=/sys/fs/bpf/stockade-limits-$$
agent_pid=

cleanup() {
	agent_end -9
	if [ -d "$cg" ]; then
		echo 1 > "$cg/cgroup.kill" 2>/dev/null
		sleep 0.2
		rmdir "$cg" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_agent() {	# POLICY: sets agent_pid; 0 once agent_ready
	: > "$work/agent.out"
	# shellcheck disable=SC2086
	"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --state "$state" --policy "$1" \
		--bpffs "$bpffs" --detach-on-exit \
		> "$work/agent.out" 2> "$work/agent.err" &
	agent_pid=$!
	wait_ready "$work/agent.out"
}
stop_agent() {
	kill -TERM "$agent_pid"
	wait "$agent_pid"
	rc=$?
	agent_pid=
	return $rc
}
# Running, not a zombie (its parent is whoever adopted it).
alive() {
	st=$(sed 's/.*) //; s/ .*//' "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ]
}
# Line and column of KEY's value in the policy: "L:C".
pos_of() {
	awk -v k="$1:" '$1 == k { print NR ":" index($0, $2); exit }' "$policy"
}

[ -d "$cg" ] && rmdir "$cg" 2>/dev/null
mkdir "$cg" || { echo "limits-hybrid: cannot create $cg" >&2; exit 1; }

# ---- a policy with limits this host cannot take ----
if grep -qw memory "$CGROUP_ROOT/cgroup.controllers"; then
	skip "policy with limits refused on a hybrid host" "cgroup2 at $CGROUP_ROOT has the memory controller: not a hybrid host"
else
	# shellcheck disable=SC2086
	timeout 30 "$STOCKADE" agent $STOCKADE_AGENT_FLAGS --state "$state" \
		--bpffs "$bpffs" --policy "$policy" > "$work/bad.out" 2> "$work/bad.err"
	rc=$?
	why=""
	[ "$rc" = 1 ] || why="exit status $rc, want 1"
	for key in cpu memory pids; do
		mnt=$(awk -v c="$key" '$3 == "cgroup" { n = split($4, o, ","); for (i = 1; i <= n; i++) if (o[i] == c) print $2 }' /proc/mounts | head -n 1)
		want="limits: error: $policy:$(pos_of "$key"): limits.$key: policy 'live-limits' cannot be applied on this host: it is a hybrid cgroup host, where the $key controller belongs to cgroup v1 (mounted at $mnt), so the cgroup2 hierarchy at $CGROUP_ROOT has no $key controller"
		grep -qF "$want" "$work/bad.err" || why="$why; no line '$want'"
		grep -F "limits.$key: " "$work/bad.err" |
			grep -qF "Fix: boot with systemd.unified_cgroup_hierarchy=1 (or cgroup_no_v1=$key)" ||
			why="$why; limits.$key: no fix named"
	done
	# runtime needs no controller: no error for it.
	grep -q 'limits.runtime' "$work/bad.err" && why="$why; limits.runtime refused too"
	grep -q 'nothing was applied' "$work/bad.err" || why="$why; no 'nothing was applied'"
	if [ -z "$why" ]; then
		ok "policy with limits refused on a hybrid host, cause and fix named"
	else
		not_ok "policy with limits refused on a hybrid host" "${why#; }; stderr: $(head -c 600 "$work/bad.err")"
	fi
	# Nothing applied: no record, the cgroup is not confined, no state.
	out=$("$TOOLS/netprobe" --netns --cgroup "$cg" connect tcp 127.0.0.1 9999 --listen 2>&1 | tail -n 1)
	if [ -s "$work/bad.out" ]; then
		not_ok "nothing applied" "records written: $(head -n 2 "$work/bad.out")"
	elif [ "$out" != OK ]; then
		not_ok "nothing applied" "a connect the policy would deny got $out: the cgroup is confined"
	elif [ -e "$state" ]; then
		not_ok "nothing applied" "state file $state written"
	elif [ -e "$bpffs/maps" ]; then
		not_ok "nothing applied" "pins left under $bpffs: $(ls "$bpffs/maps" | tr '\n' ' ')"
	else
		ok "nothing applied: no record, no confinement, no state, no pins"
	fi
	# `stockade check --cgroup-root` runs the agent's limits check too,
	# with the same words; plain `check` (no tree named) does not.
	"$STOCKADE" check --cgroup-root "$CGROUP_ROOT" "$policy" > "$work/check.out" 2> "$work/check.err"
	rc=$?
	"$STOCKADE" check "$policy" > /dev/null 2>&1
	rc_plain=$?
	want="limits.memory: policy 'live-limits' cannot be applied on this host: it is a hybrid cgroup host"
	if [ "$rc" = 1 ] && [ "$rc_plain" = 0 ] && grep -qF "$want" "$work/check.err" &&
	   grep -qF "$policy:$(pos_of memory): " "$work/check.err"; then
		ok "check --cgroup-root refuses the same limits at their positions (exit 1); plain check passes"
	else
		not_ok "check --cgroup-root" "exit $rc (plain $rc_plain), want 1 (0); stderr: $(head -c 600 "$work/check.err")"
	fi
fi

# ---- the same policy without the limits the host cannot take ----
sed '/^limits:/,$d' "$policy" > "$work/nolimits.yaml"
if start_agent "$work/nolimits.yaml"; then
	out=$("$TOOLS/netprobe" --netns --cgroup "$cg" connect tcp 127.0.0.1 9999 --listen 2>&1 | tail -n 1)
	if [ "$out" = EPERM ]; then
		ok "same policy without limits: starts and confines"
	else
		not_ok "same policy without limits" "connect to 127.0.0.1:9999 got $out, want EPERM"
	fi
	# A reload to the limits this host cannot take is rejected like the
	# start: `stockade reload` prints each cause, the set in force stays.
	if ! grep -qw memory "$CGROUP_ROOT/cgroup.controllers"; then
		cp "$policy" "$work/nolimits.yaml.tmp"
		mv "$work/nolimits.yaml.tmp" "$work/nolimits.yaml"
		"$STOCKADE" reload --bpffs "$bpffs" > "$work/reload.out" 2>&1
		rrc=$?
		out=$("$TOOLS/netprobe" --netns --cgroup "$cg" connect tcp 127.0.0.1 9999 --listen 2>&1 | tail -n 1)
		if [ "$rrc" = 1 ] && [ "$out" = EPERM ] &&
		   grep -q "^$work/nolimits.yaml:$(pos_of memory): limits.memory: policy '.*' cannot be applied on this host: it is a hybrid cgroup host" "$work/reload.out"; then
			ok "reload to limits this host cannot take: rejected, stockade reload names cause and fix"
		else
			not_ok "reload to limits rejected" "exit $rrc, connect $out; $(head -c 400 "$work/reload.out")"
		fi
	fi
	stop_agent || not_ok "same policy without limits: SIGTERM" "exit $rc"
else
	not_ok "same policy without limits" "no agent_ready: $(tail -n 3 "$work/agent.err")"
	kill -9 "$agent_pid" 2>/dev/null
	agent_pid=
fi

# ---- limits.runtime works here: cgroup.kill is core cgroup2 ----
{ sed '/^limits:/,$d' "$policy"; printf 'limits:\n  runtime: 2s\n'; } > "$work/runtime.yaml"
"$TOOLS/hog" --cgroup "$cg" sleeper "$work/sleeper.pid" > /dev/null 2>&1
sleeper=$(cut -d' ' -f1 "$work/sleeper.pid" 2>/dev/null)
if start_agent "$work/runtime.yaml"; then
	"$STOCKADE" status --bpffs "$bpffs" --state "$state" > "$work/status.txt" 2>&1
	if grep -q '^live-limits  */stockade-limits .* left$' "$work/status.txt"; then
		ok "stockade status lists the sandbox and its run time"
	else
		not_ok "stockade status" "$(cat "$work/status.txt")"
	fi
	if wait_for '"kind":"runtime"' "$work/agent.out" 40 && sleep 0.2 &&
	   ! alive "$sleeper"; then
		ok "runtime 2s: the setsid'd sleeper is killed and logged"
	else
		not_ok "runtime 2s" "sleeper ${sleeper:-?} alive or no record: $(grep '"event":"limit"' "$work/agent.out")"
	fi
	stop_agent || not_ok "runtime: SIGTERM" "exit $rc"
else
	not_ok "runtime on a hybrid host" "no agent_ready: $(tail -n 3 "$work/agent.err")"
	kill -9 "$agent_pid" 2>/dev/null
	agent_pid=
fi

summary
