#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# One owner per BPF map (README, "Layout"): each map of the skeleton is
# named, as skel->maps.NAME, only in the file of agent/ that writes it.
# Two files handle every map as a whole and are allowed to name any:
# agent/pin.c (pins each map, by name) and agent/replace.c (replacing the
# pinned state of another build: each map's layout compared, its contents
# carried over). Exits 1, naming each breach, when a map is named outside
# its owner, or a map has no owner in the table below.
#
#   tools/map-owners.sh [SKELETON]   (default build/stockade.skel.h)
set -u

skel=${1:-build/stockade.skel.h}
[ -r "$skel" ] || { echo "map-owners: no $skel (run make first)" >&2; exit 2; }

# map owner-file; "-": written by the BPF programs alone (the agent and
# the control commands read them through the pins, never the skeleton).
owners='
cg_cache -
cg_fast -
cg_fast_turned -
task_verdict -
judge_handoff -
cg_born watch.c
lsm_count -
setup_tasks -
setup_clones -
exec_tasks -
mq_owner -
key_owner -
ipc_owner -
fowner -
cap_last -
sandbox_creds -
file_dcache -
dcache_seen -
dcache_hits -
rodata_str1_1 -
agent_meta events.c
rb events.c
join_rb preexist.c
bss pin.c
data pin.c
rodata pin.c
lsm_scratch pin.c
exec_scratch pin.c
detached confine.c
file_rules policy_maps.c
file_cg_rules file_scope.c
net_allow policy_maps.c
net_exact policy_maps.c
net_meta policy_maps.c
policies policy_maps.c
policy_names policy_maps.c
policy_slots policy_maps.c
reload_msgs reload.c
sandboxes confine.c
unix_allow policy_maps.c
rcu_sync policy_maps.c
rcu_inner policy_maps.c
lim_saved limits.c
sb_count limits.c
setup_grants setup.c
'

rc=0
# The skeleton's maps: "struct bpf_map *NAME;" inside its maps struct.
maps=$(sed -n '/^	struct {$/,/^	} maps;$/s/^		struct bpf_map \*\([a-z_0-9]*\);$/\1/p' "$skel")
[ -n "$maps" ] || { echo "map-owners: no maps found in $skel" >&2; exit 2; }
for m in $maps; do
	own=$(echo "$owners" | awk -v m="$m" '$1 == m { print $2 }')
	if [ -z "$own" ]; then
		echo "map-owners: map $m has no owner: add it to tools/map-owners.sh"
		rc=1
		continue
	fi
	for f in agent/*.c; do
		case ${f#agent/} in
		"$own"|pin.c|replace.c) continue ;;
		esac
		if grep -n "maps\.$m\b" "$f" > /dev/null; then
			echo "map-owners: $m (owner agent/$own) is named in $f: $(grep -n "maps\.$m\b" "$f" | head -n 3 | tr '\n' ' ')"
			rc=1
		fi
	done
done
[ "$rc" = 0 ] && echo "map-owners: every map is named only by its owner ($(echo "$maps" | wc -w) maps)"
exit $rc
