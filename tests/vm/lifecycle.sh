#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Issue 6 in the test VM, with BPF-LSM working:
#   lifecycle/*  tests/live/lifecycle.sh: also a denied open() across a
#                SIGKILL, an upgrade and a replacement across map layouts,
#                and the BPF-LSM links in the kernel's link list (adopted,
#                each once, the changed one replaced; all new, overlapped,
#                after a layout replacement);
#   reload/*     tests/live/reload.sh: 40 reloads under load (the host's
#                make live-test runs 100), a broken
#                file, audit by reload, inotify, slots, SIGHUP at start.
# Each `ok`/`not ok` line of theirs becomes a marker.
#
# Env (from tests/vm/suite.sh): STOCKADE, TOOLS (with stockade-variant,
# the build with one program changed, and stockade-variant-layout, the
# build whose pinned maps do not fit), CGROUP_ROOT, STOCKADE_AGENT_FLAGS.

. tests/vm/lib.sh

# run PREFIX SCRIPT: run it, turn its lines into markers.
run() {
	_out=/tmp/$1.out
	# One layout replacement only: the VM's time is short, and the host
	# runs the rest (back again, interrupted replacements, ring size).
	# The probe loops pause 10 ms after each attempt, not 2: under TCG
	# each denied attempt, and its record through the agent, costs
	# milliseconds of the guest's one CPU, which the loops took from the
	# agent starts they run across (each start under them took half as
	# long again as one alone). Still thousands of attempts, across
	# every restart, upgrade and replacement.
	STOCKADE_VARIANT=$TOOLS/stockade-variant \
	STOCKADE_VARIANT_LAYOUT=$TOOLS/stockade-variant-layout \
	STOCKADE_REPLACE_QUICK=1 LOOP_US=${LOOP_US:-10000} sh "$2" > "$_out" 2>&1
	_rc=$?
	tr -d '\r' < "$_out" > "$_out.lines"
	while IFS= read -r line; do
		case $line in
		"ok "*" # skip: "*)
			rest=${line#ok }
			t_skip "$1/${rest%% # skip: *}" "${rest#* # skip: }" ;;
		"ok "*)
			t_ok "$1/${line#ok }" ;;
		"not ok "*": "*)
			rest=${line#not ok }
			t_fail "$1/${rest%%: *}" "${rest#*: }" ;;
		"not ok "*)
			t_fail "$1/${line#not ok }" "failed" ;;
		esac
	done < "$_out.lines"
	if ! grep -q '^\(not \)\{0,1\}ok ' "$_out.lines"; then
		t_fail "$1/run" "no results (exit status $_rc): $(tail -n 3 "$_out.lines" | tr '\n' ' ')"
	elif ! grep -qE '^[0-9]+ passed, [0-9]+ failed' "$_out.lines"; then
		t_fail "$1/run" "no closing 'N passed, N failed' line (exit status $_rc)"
	elif [ "$_rc" != 0 ] && ! grep -q '^not ok ' "$_out.lines"; then
		t_fail "$1/run" "exit status $_rc with no failing test"
	fi
	# Timings the script reports ("# ... N s"), for the VM's budget.
	grep '^# ' "$_out.lines"
	[ "$_rc" = 0 ] || t_show "$_out.lines" 15
}

run lifecycle tests/live/lifecycle.sh
# One start under SIGHUPs is enough here: each start verifies BPF-LSM
# under TCG, and the suite's budget is tight.
# The hammering clients at 2 ms, not 0.3: under TCG on one vCPU the
# faster loops starve the reloads they are meant to race. Six moves
# (three that flip the policy a cgroup leaves) instead of 20.
# 40 reloads under that load, not 100: each is a process start and a
# policy load in the guest, and the host's make live-test runs the 100.
# On the kernel that runs lifecycle (tests/vm/suite.sh, on_kernel).
HAMMER_US=2000 MOVES=6 SIGHUP_STARTS=1 RELOADS=40 run reload tests/live/reload.sh
exit 0
