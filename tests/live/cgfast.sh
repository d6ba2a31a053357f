#!/bin/sh
# Live test: a cgroup program never takes another sandbox's verdict from
# cg_fast (include/sandbox.h). The layout test build (make variant-layout,
# STOCKADE_VARIANT_LAYOUT) has one slot, so every cgroup's verdict takes
# it in turn: two sandboxes with different policies send in turn, and
# each must be judged by its own policy every time, its own port
# allowed, the other's refused with exactly one record naming its own
# policy. A slot read that did not check the cgroup's id would hand the
# second sender the first one's entry (tests/vm/cgfast-race.sh tries the
# seqlock; this, the key).
# Holds /tmp/stockade-live.lock. Env: STOCKADE_VARIANT_LAYOUT, TOOLS,
# CGROUP_ROOT.
set -u

if [ -z "${STOCKADE_LIVE_LOCKED:-}" ]; then
	STOCKADE_LIVE_LOCKED=1 exec flock /tmp/stockade-live.lock sh "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
probe=$TOOLS/netprobe

if [ -z "${STOCKADE_VARIANT_LAYOUT:-}" ] || [ ! -x "$STOCKADE_VARIANT_LAYOUT" ]; then
	skip "cgfast" "no one-slot build (make variant-layout; STOCKADE_VARIANT_LAYOUT)"
	summary
	exit
fi
STOCKADE=$STOCKADE_VARIANT_LAYOUT

need_cgroup2 cgfast
need_bpffs cgfast

work=$(mktemp -d /tmp/stockade-cgfast.XXXXXX)
bpffs=/sys/fs/bpf/stockade-cgfast-$$
log=$work/agent.log
agent_pid=

cleanup() {
	agent_end
	cg_empty "$CGROUP_ROOT/stockade-cgfast-a" "$CGROUP_ROOT/stockade-cgfast-b"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# policy NAME PORT: sandbox stockade-cgfast-NAME may send UDP to PORT only.
mkdir "$work/pol"
policy() {
	cg=$CGROUP_ROOT/stockade-cgfast-$1
	[ -d "$cg" ] && rmdir "$cg" 2>/dev/null
	mkdir "$cg" || { echo "cgfast: cannot create $cg" >&2; exit 1; }
	cat > "$work/pol/$1.yaml" <<EOF
name: live-cgfast-$1
cgroups: [/stockade-cgfast-$1]
network:
  default: deny
  allow:
    - cidr: 127.0.0.1/32
      ports: [$2]
      proto: udp
EOF
}
policy a 9001
policy b 9002
agent_start --policy "$work/pol"

# send WHO PORT EXPECT: one sendto from sandbox WHO; with EPERM, exactly
# one deny record for its pid, under WHO's own policy.
send() {
	name="$1 to $2"
	out=$("$probe" --netns --cgroup "$CGROUP_ROOT/stockade-cgfast-$1" \
		sendto udp 127.0.0.1 "$2" 2>&1)
	pid=$(echo "$out" | sed -n 's/^pid=//p' | head -n 1)
	got=$(echo "$out" | tail -n 1)
	if [ "$got" != "$3" ]; then
		not_ok "$name" "expected $3, got '$got'"
		return
	fi
	if [ "$3" = OK ]; then
		ok "$name: OK"
		return
	fi
	wait_for "\"pid\":$pid," "$log" 30
	sleep 0.2
	recs=$(grep "\"pid\":$pid," "$log" | grep '"event":"deny"')
	n=$(printf '%s' "$recs" | grep -c .)
	case $n:$recs in
	1:*'"policy":"live-cgfast-'"$1"'"'*) ok "$name: $3, one record under its own policy" ;;
	*) not_ok "$name" "$n deny records for pid $pid, want 1 under live-cgfast-$1: $recs" ;;
	esac
}

# slot_holds WHO: the one slot holds sandbox WHO's cgroup id, so the
# other sandbox's next send finds WHO's verdict there first. Only where
# BPF-LSM is off (the host): with it, every new task's first hook (the
# stat and bpftool below) writes its own cgroup's verdict in the slot.
slot_holds() {
	if grep -q '"event":"agent_ready".*"degraded":\[\]' "$log"; then
		skip "round $round: the slot holds $1's verdict" \
			"BPF-LSM is on: this test's own processes take the slot"
		return
	fi
	want=$(stat -c %i "$CGROUP_ROOT/stockade-cgfast-$1")
	got=$(bpftool -j map lookup pinned "$bpffs/maps/cg_fast" key 0 0 0 0 2>&1 |
		sed -n 's/.*"cgid":\([0-9]*\).*/\1/p')
	if [ "$got" = "$want" ]; then
		ok "round $round: the slot holds $1's verdict"
	else
		not_ok "round $round: the slot holds $1's verdict" "cgid '$got', want $want"
	fi
}

# Each send's programs leave their verdict in the one slot; the next
# sandbox's send finds it there first.
for round in 1 2 3; do
	send b 9002 OK
	slot_holds b
	send a 9002 EPERM
	send a 9001 OK
	slot_holds a
	send b 9001 EPERM
done

summary
