#!/bin/sh
# Live test: MPTCP subflows that the kernel connects (bpf/net.bpf.c,
# sock_sandbox()). Once an MPTCP connection is up, the path manager opens
# further subflows from a kernel worker, to each address the peer
# announces (ADD_ADDR): connect4 runs for them, in the connection's
# cgroup, with a kworker as the current task, outside every sandbox.
# Judged by that task, a subflow went to whatever address the peer named
# and no rule was asked. Now a kernel thread's connect is judged by the
# socket's cgroup. Each case (tools/mptcp.py) runs in a private network
# namespace: lo up with 10.9.9.8 and 10.9.9.9 on it, ADD_ADDR accepted,
# the case's address announced by a `signal` endpoint, an MPTCP listener
# on 0.0.0.0:8080 outside, and a client that connects to 127.0.0.1:8080
# (allowed) from the case's cgroup. The policy allows 127.0.0.1:8080 and
# 10.9.9.8:8080, never 10.9.9.9:
#   outside      a client outside every sandbox: the subflow to 10.9.9.9
#                is made, no record (the control for the setup)
#   allowed      in the sandbox, 10.9.9.8 announced: the subflow is made,
#                no record
#   refused      10.9.9.9 announced: no subflow, exactly one deny record
#                (connect, not_allowed, 10.9.9.9:8080, the sandbox's
#                cgroup, a kworker named)
#   walk         the same from a child cgroup whose entry is deleted (one
#                the agent has not seen yet): judged by its nearest
#                ancestor's entry, one record naming the child
#   pending      the same from a cgroup below a watched directory, its
#                entry deleted (nearest entry: the WATCHED directory):
#                judged once, by the watch programs, "pending": true
# Host only (python3, iproute2's `ip mptcp`); skipped where the kernel
# has no MPTCP. Holds /tmp/stockade-live.lock. Env: STOCKADE, CGROUP_ROOT.
set -u

if [ -z "${STOCKADE_LIVE_LOCKED:-}" ]; then
	STOCKADE_LIVE_LOCKED=1 exec flock /tmp/stockade-live.lock sh "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
mp=$here/../../tools/mptcp.py

need_cgroup2 mptcp
need_bpffs mptcp

if ! unshare -n ip mptcp limits show > /dev/null 2>&1 ||
   [ "$(unshare -n cat /proc/sys/net/mptcp/enabled 2>/dev/null)" != 1 ]; then
	skip "mptcp" "no MPTCP in this kernel, or no \`ip mptcp\`"
	summary
	exit 0
fi

work=$(mktemp -d /tmp/stockade-mptcp.XXXXXX)
bpffs=/sys/fs/bpf/stockade-mptcp-$$
log=$work/agent.log
cg=$CGROUP_ROOT/stockade-mptcp
kid=$cg/kid
wd=$CGROUP_ROOT/stockade-mptcp-w
wkid=$wd/one
agent_pid=

cleanup() {
	agent_end
	cg_empty "$kid" "$cg" "$wkid" "$wd"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$cg" "$wd" "$work/pol"
for n in mptcp mptcp-w; do
	[ "$n" = mptcp ] && c=/stockade-mptcp || c='/stockade-mptcp-w/*'
	cat > "$work/pol/$n.yaml" <<YAML
name: $n
cgroups: ['$c']
network:
  default: deny
  allow:
    - cidr: 127.0.0.1/32
      ports: [8080]
      proto: tcp
    - cidr: 10.9.9.8/32
      ports: [8080]
      proto: tcp
YAML
done
agent_start

# del_entry DIR: delete the sandboxes entry of cgroup DIR (its id,
# little-endian), as if the agent had not seen it yet.
del_entry() {
	_k=$(printf '%016x' "$(stat -c %i "$1")" | sed 's/../& /g' |
		awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
	# shellcheck disable=SC2086
	bpftool map delete pinned "$bpffs/maps/sandboxes" key hex $_k
}

# kase NAME CGROUP ANNOUNCED EXPECT RECORDS [FIELD...]: the case's client
# in CGROUP ("" for none: outside), ANNOUNCED announced; its result
# EXPECT, and exactly RECORDS records since it began, of that cgroup
# (a kworker's records name no pid of the client's), each with FIELDs.
kase() {
	name=$1 dir=$2 addr=$3 expect=$4 want=$5
	shift 5
	log_settle "$log"
	n0=$(wc -l < "$log")
	out=$(unshare -n sh -c '
		ip link set lo up && ip addr add 10.9.9.8/32 dev lo &&
		ip addr add 10.9.9.9/32 dev lo &&
		ip mptcp limits set add_addr_accepted 4 subflows 4 &&
		ip mptcp endpoint add "$3" signal && exec python3 "$@"' \
		sh "$mp" "$dir" "$addr" 2>&1)
	got=$(echo "$out" | tail -n 1)
	if [ "$got" != "$expect" ]; then
		not_ok "$name" "expected $expect, got '$out'"
		return
	fi
	log_settle "$log"
	recs=
	if [ -n "$dir" ]; then
		recs=$(tail -n +$((n0 + 1)) "$log" | grep "\"cgroup\":\"${dir#"$CGROUP_ROOT"}\"" |
			grep -v '"event":"\(attach\|preexisting_fd\|exec\|exit\)"')
	fi
	n=$(printf '%s' "$recs" | grep -c .)
	if [ "$n" != "$want" ]; then
		not_ok "$name" "$expect; $n records, want $want: $recs"
		return
	fi
	for f in "$@"; do
		if ! printf '%s\n' "$recs" | grep -q -- "$f"; then
			not_ok "$name" "no $f in: $recs"
			return
		fi
	done
	ok "$name: $expect, $n record(s)"
}

D='"event":"deny","kind":"connect"'
R='"daddr":"10.9.9.9","dport":8080,"proto":"tcp","proto_nr":6,"reason":"not_allowed"'
kase outside "" 10.9.9.9 SUBFLOW 0
kase allowed "$cg" 10.9.9.8 SUBFLOW 0
kase refused "$cg" 10.9.9.9 NONE 1 "$D" '"policy":"mptcp"' "$R" '"comm":"kworker/'

mkdir -p "$kid"
wait_for "\"cgroup\":\"${kid#"$CGROUP_ROOT"}\"" "$log" || not_ok "walk" "no attach record for $kid"
if del_entry "$kid"; then
	kase walk "$kid" 10.9.9.9 NONE 1 "$D" '"policy":"mptcp"' "$R"
else
	not_ok "walk" "bpftool map delete failed"
fi

mkdir -p "$wkid"
wait_for "\"cgroup\":\"${wkid#"$CGROUP_ROOT"}\"" "$log" || not_ok "pending" "no attach record for $wkid"
if del_entry "$wkid"; then
	kase pending "$wkid" 10.9.9.9 NONE 1 "$D" '"policy":"mptcp-w"' '"pending":true' "$R"
else
	not_ok "pending" "bpftool map delete failed"
fi

summary
