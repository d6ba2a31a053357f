#!/bin/sh
# Live test: a cgroup the programs are attached to, with no entry at all
# in `sandboxes` (an entry lost: a bug, a map that was full), fails
# closed (bpf/net.bpf.c, sock_create()). cgroup/sock_create answers TCP
# and UDP sockets from the task's own entry (its fast path); without one
# they must still take the full path and be refused, with exactly one
# no_policy record each, as raw sockets are. The entry is deleted by hand
# from the pinned map while the agent runs, and the generation bumped
# after it as the agent does; the selector is an exact path,
# so no watched directory makes the cgroup pending instead.
# Holds /tmp/stockade-live.lock. Env: STOCKADE, TOOLS, CGROUP_ROOT.
set -u

if [ -z "${STOCKADE_LIVE_LOCKED:-}" ]; then
	STOCKADE_LIVE_LOCKED=1 exec flock /tmp/stockade-live.lock sh "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
probe=$TOOLS/netprobe

need_cgroup2 noentry
need_bpffs noentry

work=$(mktemp -d /tmp/stockade-noentry.XXXXXX)
bpffs=/sys/fs/bpf/stockade-noentry-$$
log=$work/agent.log
cg=$CGROUP_ROOT/stockade-noentry
agent_pid=

cleanup() {
	agent_end
	cg_empty "$cg"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -d "$cg" ] && rmdir "$cg" 2>/dev/null
mkdir "$cg" || { echo "noentry: cannot create $cg" >&2; exit 1; }
printf 'name: live-noentry\ncgroups: [/stockade-noentry]\nnetwork:\n  default: allow\n' \
	> "$work/p.yaml"
agent_start --policy "$work/p.yaml"

# probe NAME EXPECT ARGS...: netprobe in $cg; sets $pid.
probe() {
	name=$1 expect=$2
	shift 2
	out=$("$probe" --netns --cgroup "$cg" "$@" 2>&1)
	pid=$(echo "$out" | sed -n 's/^pid=//p' | head -n 1)
	got=$(echo "$out" | tail -n 1)
	[ "$got" = "$expect" ] && { ok "$name: $expect"; return 0; }
	not_ok "$name" "expected $expect, got '$got'"
	return 1
}

# records NAME WANT FIELD...: WANT records of $pid's calls, each with FIELDs.
records() {
	name=$1 want=$2
	shift 2
	[ "$want" = 0 ] || wait_for "\"pid\":$pid," "$log" 30
	sleep 0.2
	recs=$(grep "\"pid\":$pid," "$log" | grep -v '"event":"\(preexisting_fd\|exec\|exit\)"')
	n=$(printf '%s' "$recs" | grep -c .)
	if [ "$n" != "$want" ]; then
		not_ok "$name: records" "$n records for pid $pid, want $want: $recs"
		return
	fi
	for f in "$@"; do
		case $recs in
		*"$f"*) ;;
		*) not_ok "$name: records" "missing $f in $recs"; return ;;
		esac
	done
	ok "$name: $want record(s) $*"
}

# With its entry: the fast path allows TCP and UDP sockets, no record.
probe "with entry: udp sendto" OK sendto udp 127.0.0.1 9 &&
	records "with entry: udp sendto" 0
probe "with entry: tcp connect" OK connect tcp 127.0.0.1 8080 --listen &&
	records "with entry: tcp connect" 0

# Its entry gone (the key: the cgroup id, little-endian).
id=$(stat -c %i "$cg")
key=$(printf '%016x' "$id" | sed 's/../& /g' |
	awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
# shellcheck disable=SC2086
if bpftool map delete pinned "$bpffs/maps/sandboxes" key hex $key; then
	ok "entry of $cg deleted"
else
	not_ok "entry deleted" "bpftool map delete failed"
fi
# Then the generation, as every writer of the map does after its write
# (include/sandbox.h): the verdicts the programs cached for this cgroup
# (cg_fast holds its entry, which the probes above put there) end with it.
off=$(bpftool btf dump map pinned "$bpffs/maps/data" value 2>&1 |
	sed -n "s/.* offset=\([0-9]*\) size=8 (VAR 'sandbox_gen')\$/\1/p")
if [ -n "$off" ] && gen=$("$TOOLS/bpfquery" add "$bpffs/maps/data" "$off" 1 2>&1); then
	ok "sandbox_gen bumped to $gen"
else
	not_ok "sandbox_gen bumped" "no sandbox_gen in the pinned .data's BTF ('$off'), or: $gen"
fi
for p in "tcp 127.0.0.1 8080" "udp 127.0.0.1 8080"; do
	# netprobe says which step failed: the socket itself.
	# shellcheck disable=SC2086
	probe "no entry: ${p%% *} socket" "netprobe: socket: Operation not permitted" \
		connect $p &&
		records "no entry: ${p%% *} socket" 1 '"kind":"socket"' \
			'"reason":"no_policy"' "\"cgroup_id\":$id,"
done
probe "no entry: raw socket" EPERM socket raw4 &&
	records "no entry: raw socket" 1 '"kind":"socket"' '"reason":"raw_socket"'

summary
