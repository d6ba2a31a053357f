#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Issue 6 in the test VM: tests/live/lifecycle.sh with BPF-LSM working, so
# that it also checks a denied open() across a SIGKILL and an upgrade, and
# the BPF-LSM links in the kernel's link list (adopted, each once, the
# changed one replaced). Each of its `ok`/`not ok` lines becomes a
# lifecycle/* marker.
#
# Env (from tests/vm/suite.sh): STOCKADE, TOOLS (with stockade-variant,
# the build with one program changed), CGROUP_ROOT, STOCKADE_AGENT_FLAGS.

. tests/vm/lib.sh

out=/tmp/lifecycle.out
STOCKADE_VARIANT=$TOOLS/stockade-variant sh tests/live/lifecycle.sh > "$out" 2>&1
rc=$?
tr -d '\r' < "$out" > "$out.lines"
while IFS= read -r line; do
	case $line in
	"ok "*)
		t_ok "lifecycle/${line#ok }" ;;
	"not ok "*": "*)
		rest=${line#not ok }
		t_fail "lifecycle/${rest%%: *}" "${rest#*: }" ;;
	"not ok "*)
		t_fail "lifecycle/${line#not ok }" "failed" ;;
	esac
done < "$out.lines"
n=$(grep -c '^\(not \)\{0,1\}ok ' "$out.lines")
if [ "$n" = 0 ]; then
	t_fail lifecycle/run "no results (exit status $rc): $(tail -n 3 "$out.lines" | tr '\n' ' ')"
elif ! grep -qE '^[0-9]+ passed, [0-9]+ failed' "$out.lines"; then
	t_fail lifecycle/run "no closing 'N passed, N failed' line (exit status $rc)"
elif [ "$rc" != 0 ] && ! grep -q '^not ok ' "$out.lines"; then
	t_fail lifecycle/run "exit status $rc with no failing test"
fi
exit 0
