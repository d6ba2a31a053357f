#!/bin/sh
# Live test: an idle agent does no periodic work over its cgroups (issue
# 18, "no periodic scans"), and still sees every change, each from its
# own notice:
#   - idle, with $N cgroups confined, it neither walks the cgroup tree
#     nor re-reads their *.events files: strace counts both over IDLE_S
#     seconds, from 2 s after agent_ready (the full walk that is the
#     safety net comes every 5 minutes, after that);
#   - a confined cgroup removed: its detach record (cgroup_removed)
#     within the next walk interval (5 s), from inotify on its parent;
#   - a cgroup made: its attach record at once;
#   - `stockade detach` of one: the agent lets go of it within the
#     interval (it reads the `detached` marks at each interval);
#   - a cgroup made where no selector looks: a walk within the interval
#     (how a container in a layout no glob names is found);
#   - the watches that finds them with go when they are removed;
#   - the same interval then idles again: no walk once they are done.
# Holds /tmp/stockade-live.lock. Env: STOCKADE, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS; N (100), IDLE_S (12).
set -u

if [ -z "${STOCKADE_LIVE_LOCKED:-}" ]; then
	STOCKADE_LIVE_LOCKED=1 exec flock /tmp/stockade-live.lock sh "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
N=${N:-100}
IDLE_S=${IDLE_S:-12}

need_cgroup2 idle
need_bpffs idle
command -v strace > /dev/null || { echo "idle: strace is needed (make deps installs it)" >&2; exit 1; }

work=$(mktemp -d /tmp/stockade-idle.XXXXXX)
bpffs=/sys/fs/bpf/stockade-idle-$$
log=$work/agent.log
top=$CGROUP_ROOT/stockade-idle
agent_pid=

cleanup() {
	agent_end
	for _c in "$top"/c*; do cg_empty "$_c"; done
	[ -d "$CGROUP_ROOT/stockade-idle-churn" ] && rmcg "$CGROUP_ROOT/stockade-idle-churn"
	cg_empty "$top" "$CGROUP_ROOT/stockade-idle-other"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$top" || { echo "idle: cannot create $top" >&2; exit 1; }
i=1
while [ "$i" -le "$N" ]; do
	mkdir -p "$top/c$i" || { echo "idle: cannot create $top/c$i" >&2; exit 1; }
	i=$((i + 1))
done
printf 'name: live-idle\ncgroups: ["/stockade-idle/*"]\nnetwork:\n  default: deny\n  allow:\n    - {cidr: 127.0.0.1/32, ports: [9], proto: udp}\n' \
	> "$work/p.yaml"
agent_start --policy "$work/p.yaml"
if grep -q "\"event\":\"agent_ready\".*\"cgroups\":$N," "$log"; then
	ok "agent_ready with $N cgroups"
else
	not_ok "agent_ready with $N cgroups" "$(grep agent_ready "$log")"
fi

# idle_calls NAME: strace the agent IDLE_S seconds; count its walks of
# the tree (each opens the cgroup2 mount's directory once) and its
# *.events reads. A walk is allowed once: another test's cgroup made
# anywhere in the tree asks for one, legitimately; the periodic scan this
# replaced made one every 5 s.
idle_calls() {
	timeout "$IDLE_S" strace -f -qq -e trace=openat -p "$agent_pid" \
		-o "$work/strace.$1" 2> /dev/null
	walks=$(grep -c "openat(AT_FDCWD, \"$CGROUP_ROOT\", " "$work/strace.$1")
	reads=$(grep -c 'openat(.*\.events"' "$work/strace.$1")
	if [ "$walks" -le 1 ] && [ "$reads" = 0 ]; then
		ok "$1: $walks walk(s) of the tree (at most 1), no *.events read in $IDLE_S s"
	else
		not_ok "$1: at most 1 walk of the tree, no *.events read in $IDLE_S s" \
			"$walks walks, $reads *.events opens: $(grep -m 3 "\"$CGROUP_ROOT\"\\|events\"" "$work/strace.$1" | tr '\n' ' ')"
	fi
}
sleep 2
idle_calls "idle after start"

# A cgroup made where no selector looks (a container in a layout no glob
# names would be one): the walk it asks for comes within the interval.
other=$CGROUP_ROOT/stockade-idle-other
( sleep 1; mkdir "$other" ) &
maker=$!
timeout 8 strace -f -qq -e trace=openat -p "$agent_pid" -o "$work/strace.other" 2> /dev/null
wait "$maker"
walks=$(grep -c "openat(AT_FDCWD, \"$CGROUP_ROOT\", " "$work/strace.other")
if [ "$walks" -ge 1 ]; then
	ok "a cgroup made elsewhere in the tree: a walk within 7 s ($walks)"
else
	not_ok "a cgroup made elsewhere in the tree: a walk within 7 s" "no walk"
fi
rmdir "$other"
sleep 6	# the walk its removal asks for

# The discovery watches of removed directories go (cgroupfs keeps a
# removed directory's watch): 50 cgroups made and removed elsewhere in
# the tree leave the agent's inotify watches as they were.
watches() {
	cat /proc/"$agent_pid"/fdinfo/* 2>/dev/null | grep -c '^inotify wd:'
}
churn=$CGROUP_ROOT/stockade-idle-churn
w0=$(watches)
mkdir "$churn"
i=1
while [ "$i" -le 50 ]; do mkdir "$churn/x$i"; i=$((i + 1)); done
sleep 7	# the walk that mkdir asks for watches them
w1=$(watches)
i=1
while [ "$i" -le 50 ]; do rmdir "$churn/x$i"; i=$((i + 1)); done
rmdir "$churn"
sleep 7	# the walk that removal asks for
w2=$(watches)
if [ "$w1" -ge $((w0 + 50)) ] && [ "$w2" -le $((w0 + 2)) ]; then
	ok "discovery watches: $w0, $w1 with 50 more cgroups, $w2 once they are gone"
else
	not_ok "discovery watches of removed cgroups go" "$w0 before, $w1 with 50 more cgroups (want >= $((w0 + 50))), $w2 after their removal (want <= $((w0 + 2)))"
fi

# A removal, told by inotify on the parent: within the 5 s interval.
id=$(stat -c %i "$top/c$N")
rmdir "$top/c$N"
if wait_for "\"event\":\"detach\".*\"cgroup_id\":$id,.*\"cgroup_removed\"" "$log" 80; then
	ok "removed cgroup: detach record (cgroup_removed) within 8 s"
else
	not_ok "removed cgroup: detach record (cgroup_removed) within 8 s" \
		"$(grep '"event":"detach"' "$log" | tail -n 2)"
fi

# A new one: attached at once.
mkdir "$top/c$((N + 1))"
if wait_for "\"event\":\"attach\".*\"cgroup\":\"/stockade-idle/c$((N + 1))\"" "$log" 30; then
	ok "new cgroup: attach record within 3 s"
else
	not_ok "new cgroup: attach record within 3 s" "$(grep '"event":"attach"' "$log" | tail -n 1)"
fi

# `stockade detach` while the agent runs: it lets go within the interval.
if "$STOCKADE" detach --bpffs "$bpffs" "/stockade-idle/c1" > "$work/detach.out" 2>&1; then
	ok "stockade detach /stockade-idle/c1"
else
	not_ok "stockade detach /stockade-idle/c1" "$(cat "$work/detach.out")"
fi
if wait_for "/stockade-idle/c1 was detached by" "$work/agent.stderr" 80; then
	ok "detach honoured by the agent within 8 s"
else
	not_ok "detach honoured by the agent within 8 s" "$(tail -n 3 "$work/agent.stderr")"
fi

# Done with them: idle again (the walk they asked for is over).
sleep 11	# the walks the changes ask for (detach: a second one, for the
		# watch it let go of, IN_IGNORED)
idle_calls "idle after the changes"
summary
