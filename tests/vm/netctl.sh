#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Issue 11 in the test VM: the network control plane (netlink), ingress
# (bind, listen) and socket options, with BPF-LSM. One real syscall per
# probe (tools/netprobe.c), each in a private network namespace with only
# lo up, so that what gets through changes nothing of the guest's.
#
# Three policies: tests/vm/netctl.yaml (enforce, /netctl-sbx),
# tests/vm/netctl-audit.yaml (its audit twin, /netctl-audit) and
# tests/vm/netctl-nl.yaml (network.netlink: [sock_diag, generic],
# /netctl-nl). Every case runs in three phases, like file-scope.sh:
#   enforce  the errno, and exactly one "deny" record with the fields;
#   outside  from the root cgroup: unaffected, no record;
#   audit    allowed (the kernel's own result), one "audit" record, and
#            for a bind that audit let through, the listen record after.
#
# Env (from tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS.

. tests/vm/lib.sh

T=netctl
probe=$TOOLS/netprobe
sbx=$CGROUP_ROOT/netctl-sbx
aud=$CGROUP_ROOT/netctl-audit
nlc=$CGROUP_ROOT/netctl-nl
work=/tmp/netctl
log=$work/agent.log
bpffs=/sys/fs/bpf/netctl
cases=$work/cases
agent=

rm -rf "$work"
mkdir -p "$work"
: > "$log"
set -f	# record fields are case patterns, never file globs

cleanup() {
	agent_kill
	cg_remove "$sbx" "$aud" "$nlc"
}
trap cleanup EXIT

# ---- the case machinery (tests/vm/lib.sh: kase, judge_cases) ----
# Each probe in a private network namespace with only lo up. WANT as in
# lib.sh's kase, with nl (netctl-nl.yaml) an enforcing phase too; EXTRA:
# in audit mode, a kind whose record may follow (a bind let through
# reaches the listen hook).
probe_flags=--netns
probe_timeout=20
probe_tail=3
enforcing="enforce nl"

set_phase() {
	phase=$1
	case $phase in
	enforce) phase_in "$sbx" deny netctl '"comm":"netprobe"' ;;
	audit) phase_in "$aud" audit netctl-audit '"comm":"netprobe"' ;;
	nl) phase_in "$nlc" deny netctl-nl '"comm":"netprobe"' ;;
	outside) cgarg='' base='' ;;
	esac
}

NL='"kind":"netlink" "op":"netlink_send"'
ROUTE_W="$NL \"netlink_family\":\"route\" \"netlink_protocol\":0, \"reason\":\"netlink_write\""
SO='"kind":"sockopt" "op":"setsockopt" "reason":"always_denied"'

all_cases() {
	# netlink: what getaddrinfo/getifaddrs send passes, the rest not
	kase nl-route-getaddr OK '' '' netlink route-getaddr
	kase nl-route-getlink OK '' '' netlink route-getlink
	kase nl-route-newaddr EPERM "$ROUTE_W \"msg_type\":20," '' netlink route-newaddr
	kase nl-route-multi EPERM "$ROUTE_W \"msg_type\":20," '' netlink route-multi
	kase nl-route-many EPERM "$ROUTE_W \"msg_type\":0," '' netlink route-many
	kase nl-route-short EPERM "$ROUTE_W \"msg_type\":18," '' netlink route-short
	# In audit mode nfnetlink then asks the kernel to load nf_tables
	# (module_request, always refused: a kernel record may follow).
	kase nl-nft-deltable EPERM "$NL \"netlink_family\":\"netfilter\" \"netlink_protocol\":12, \"msg_type\":2562, \"reason\":\"netlink_family\"" kernel \
		netlink nft-deltable
	kase nl-audit-get EPERM "$NL \"netlink_family\":\"audit\" \"netlink_protocol\":9, \"msg_type\":1000, \"reason\":\"netlink_family\"" '' \
		netlink audit-get
	kase nl-diag-dump EPERM "$NL \"netlink_family\":\"sock_diag\" \"netlink_protocol\":4, \"msg_type\":20, \"reason\":\"netlink_family\"" '' \
		netlink diag-dump
	kase nl-sock-destroy EPERM "$NL \"netlink_family\":\"sock_diag\" \"msg_type\":21, \"reason\":\"netlink_family\"" '' \
		netlink sock-destroy
	kase nl-generic EPERM "$NL \"netlink_family\":\"generic\" \"netlink_protocol\":16, \"msg_type\":16, \"reason\":\"netlink_family\"" '' \
		netlink generic-getfamily
	# ingress
	kase listen-7070 EPERM '"kind":"bind" "family":"ipv4" "laddr":"127.0.0.1" "lport":7070, "proto":"tcp" "reason":"not_allowed"' listen \
		listen tcp 127.0.0.1 7070
	kase listen-after-port0 EPERM '"kind":"listen" "family":"ipv4" "laddr":"127.0.0.1" "proto":"tcp" "reason":"not_allowed"' '' \
		listen tcp 127.0.0.1 0
	kase listen-no-bind EPERM '"kind":"listen" "laddr":"0.0.0.0" "lport":0, "reason":"not_allowed"' '' \
		listen tcp - 4
	kase listen-v6-no-bind EPERM '"kind":"listen" "family":"ipv6" "laddr":"::" "lport":0, "reason":"not_allowed"' '' \
		listen tcp - 6
	kase listen-8081 OK '' '' listen tcp 127.0.0.1 8081
	kase serve-8081 OK '' '' serve tcp 127.0.0.1 8081
	kase bind-metadata EPERM/EADDRNOTAVAIL '"kind":"bind" "laddr":"169.254.169.254" "lport":0, "reason":"metadata_endpoint"' '' \
		bind tcp 169.254.169.254 0
	kase bind-metadata-mapped EPERM/EADDRNOTAVAIL '"kind":"bind" "family":"ipv6" "laddr":"::ffff:169.254.169.254" "reason":"metadata_endpoint"' '' \
		bind tcp ::ffff:169.254.169.254 0
	# socket options
	kase so-ip-transparent EPERM "$SO \"level\":0, \"optname\":19," '' setsockopt tcp transparent
	kase so-ipv6-transparent EPERM "$SO \"level\":41, \"optname\":75," '' setsockopt tcp6 transparent
	kase so-ip-freebind EPERM "$SO \"level\":0, \"optname\":15," '' setsockopt udp freebind
	kase so-ipv6-freebind EPERM "$SO \"level\":41, \"optname\":78," '' setsockopt udp6 freebind
	kase so-mark EPERM "$SO \"level\":1, \"optname\":36," '' setsockopt tcp mark
	kase so-bindtodevice EPERM "$SO \"level\":1, \"optname\":25," '' setsockopt udp bindtodevice
	kase so-bindtoifindex EPERM "$SO \"level\":1, \"optname\":62," '' setsockopt udp bindtoifindex
	kase so-ipt-replace EPERM/ANY "$SO \"level\":0, \"optname\":64," '' setsockopt tcp ipt_replace
	kase so-ip6t-replace EPERM/ANY "$SO \"level\":41, \"optname\":64," '' setsockopt tcp6 ipt_replace
	kase so-ipsec-policy EPERM/ANY "$SO \"level\":0, \"optname\":16," '' setsockopt udp ipsec_policy
	kase so-reuseport-cbpf EPERM/ANY "$SO \"level\":1, \"optname\":51," '' setsockopt tcp reuseport_cbpf
	kase so-tcp-repair EPERM/ANY "$SO \"level\":6, \"optname\":19," '' setsockopt tcp tcp_repair
	# Sends no cgroup program sees: a ping socket's (icmp: true), a
	# TCP Fast Open connect within a send on a socket made before
	# joining, an AF_PACKET socket made before joining.
	kase ping-sendto EPERM '"kind":"sendmsg" "daddr":"127.0.0.9" "proto":"icmp" "reason":"not_allowed"' '' \
		sendto icmp 127.0.0.9 0
	kase ping-connected-before EPERM '"kind":"sendmsg" "daddr":"127.0.0.9" "proto":"icmp" "reason":"not_allowed"' '' \
		--join-late sendto icmp-connected 127.0.0.9 0
	kase tfo-made-before EPERM/ANY '"kind":"sendmsg" "daddr":"127.0.0.9" "dport":9, "proto":"tcp" "reason":"not_allowed"' '' \
		--join-late sendto tcp 127.0.0.9 9
	kase packet-made-before EPERM '"kind":"sendmsg" "reason":"packet_socket"' '' \
		--join-late sendto packet lo 0
	# A UDP-Lite socket made before joining: its connect meets no cgroup
	# program (no pre_connect), so BPF-LSM's socket_connect judges it.
	kase udplite-made-before EPERM '"kind":"connect" "family":"ipv4" "daddr":"127.0.0.9" "dport":9, "proto":"udp" "reason":"not_allowed"' '' \
		--join-late connect udplite 127.0.0.9 9
	# Socket ioctls that change the host's network (refused before the
	# kernel's own NET_ADMIN check; the audit twin lists NET_ADMIN).
	kase ioctl-addrt EPERM/ANY '"kind":"file" "op":"ioctl" "ioctl_cmd":35083[,}] "reason":"always_denied"' '' ioctl addrt
	kase ioctl-sifflags EPERM '"kind":"file" "op":"ioctl" "ioctl_cmd":35092[,}] "reason":"always_denied"' '' ioctl sifflags
	kase so-ip-options EPERM "$SO \"level\":0, \"optname\":4," '' setsockopt tcp srcroute
	kase so-ipv6-rthdr EPERM/ANY "$SO \"level\":41, \"optname\":57," '' setsockopt udp6 srcroute
	kase so-ipv6-pktoptions EPERM/ANY "$SO \"level\":41, \"optname\":6," '' setsockopt udp6 pktoptions
	kase so-ip-unicast-if EPERM/ANY "$SO \"level\":0, \"optname\":50," '' setsockopt udp unicast_if
	kase so-ipv6-unicast-if EPERM/ANY "$SO \"level\":41, \"optname\":76," '' setsockopt udp6 unicast_if
}

if [ "$(hostname)" != stockade-vm ]; then
	t_fail $T/guest "refusing to run outside the test VM"
	exit 0
fi
mkdir -p "$sbx" "$aud" "$nlc"
# shellcheck disable=SC2086
"$STOCKADE" agent --policy tests/vm/netctl.yaml --policy tests/vm/netctl-audit.yaml \
	--policy tests/vm/netctl-nl.yaml --log "$log" --bpffs "$bpffs" \
	--detach-on-exit ${STOCKADE_AGENT_FLAGS:-} > "$work/agent.out" 2> "$work/agent.err" &
agent=$!
agent_wait_ready
case $ready in
*'"degraded":[]'*) t_ok $T/agent-ready ;;
*)
	t_fail $T/agent-ready "want agent_ready with nothing degraded: ${ready:-none}; $(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
	t_show "$work/agent.err"
	exit 0 ;;
esac

for p in enforce outside audit; do
	set_phase $p
	all_cases
	judge_cases
done

# A policy naming sock_diag and generic: those pass whole; audit and
# writes over route stay refused.
set_phase nl
# inet_diag asks NET_ADMIN (an audited check) only to decide whether to
# show the sockets' marks, and dumps either way: the default set refuses
# it, with its record (README, "Known limits" of Capabilities).
kase nl-diag-dump OK '"kind":"capability" "capability":"NET_ADMIN"' '' netlink diag-dump
kase nl-generic OK '' '' netlink generic-getfamily
kase nl-audit-get EPERM "$NL \"netlink_family\":\"audit\" \"reason\":\"netlink_family\"" '' netlink audit-get
kase nl-route-newaddr EPERM "$ROUTE_W \"msg_type\":20," '' netlink route-newaddr
judge_cases

# Pins of an earlier build that had no bind programs: SIGKILL the agent
# (its pins keep confining), drop the bind4/bind6 links of /netctl-sbx,
# start again: the new agent adopts the rest and attaches the missing two.
# The agent's own work (a restart's adoption), on one kernel
# (tests/vm/lib.sh, on_kernel).
if on_kernel $T/adopt 6.1; then
	kill -9 "$agent"
	wait "$agent" 2>/dev/null
	sbx_id=$(stat -c %i "$sbx")
	rm -f "$bpffs/links/cg-$sbx_id-stk_bind4" "$bpffs/links/cg-$sbx_id-stk_bind6"
	sleep 0.5
	n_bind=$("$TOOLS/bpfquery" cgroup "$sbx" | grep -c '^bind[46] ')
	: > "$work/agent2.log"
	# shellcheck disable=SC2086
	"$STOCKADE" agent --policy tests/vm/netctl.yaml --policy tests/vm/netctl-audit.yaml \
		--policy tests/vm/netctl-nl.yaml --log "$work/agent2.log" --bpffs "$bpffs" \
		--detach-on-exit ${STOCKADE_AGENT_FLAGS:-} > "$work/agent2.out" 2> "$work/agent2.err" &
	agent=$!
	wait_for 60 grep -q '"event":"agent_ready"' "$work/agent2.log"
	q=$("$TOOLS/bpfquery" cgroup "$sbx" | awk '{ print $1 }' | sort | tr '\n' ' ')
	if [ "$n_bind" = 0 ] &&
	   grep -q '"event":"attach".*"cgroup":"/netctl-sbx".*"links":"attached"' "$work/agent2.log" &&
	   [ "$q" = "bind4 bind6 connect4 connect6 egress sendmsg4 sendmsg6 sock_create " ]; then
		t_ok $T/adopt-attaches-missing-bind-links
	else
		t_fail $T/adopt-attaches-missing-bind-links "bind links before: $n_bind (want 0); after: '$q'; $(grep '"event":"attach".*netctl-sbx' "$work/agent2.log")"
	fi
	out=$("$probe" --netns --cgroup "$sbx" bind tcp 127.0.0.1 7070 2>&1 | tail -n 1)
	[ "$out" = EPERM ] && t_ok $T/adopt-bind-refused-again ||
		t_fail $T/adopt-bind-refused-again "bind 127.0.0.1:7070 after the restart: $out"
	cat "$work/agent2.log" >> "$log"
fi

t_no_lost
kill -TERM "$agent"
wait "$agent"
rc=$?
agent=
[ "$rc" = 0 ] && t_ok $T/agent-stops || t_fail $T/agent-stops "exit status $rc"
exit 0
