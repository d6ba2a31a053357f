#!/bin/sh
# Live test: an `attach` record's setup_pass (README, record table) is what
# the kernel's grant map holds for that cgroup when the record is written.
# At the first scan the grant goes in before the record; on a reload that
# moves a cgroup to another policy, the record must show the new policy's
# grant, not the one from before the reload (the reload's regrant of every
# cgroup runs after its walk). A cgroup made by this script before the
# agent starts is not fresh: `setup.pass: on` gives it `children`, never
# `self`. Grants are written on every kernel; the host's, which refuses
# BPF-LSM, just has no program that reads them.
# Holds /tmp/stockade-live.lock. Env: STOCKADE, CGROUP_ROOT.
set -u

if [ -z "${STOCKADE_LIVE_LOCKED:-}" ]; then
	STOCKADE_LIVE_LOCKED=1 exec flock /tmp/stockade-live.lock sh "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

need_cgroup2 setuppass
need_bpffs setuppass

work=$(mktemp -d /tmp/stockade-setuppass.XXXXXX)
bpffs=/sys/fs/bpf/stockade-setuppass-$$
log=$work/agent.log
cg=$CGROUP_ROOT/stockade-setuppass
agent_pid=

cleanup() {
	agent_end
	cg_empty "$cg"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# policy NAME PASS: the one policy file, selecting the test's cgroup.
policy() {
	printf 'name: %s\ncgroups: [/stockade-setuppass]\nnetwork:\n  default: allow\nsetup:\n  pass: %s\n' \
		"$1" "$2" > "$work/pol/p.yaml"
}

# attach_of POLICY: the attach record of the test's cgroup under POLICY.
attach_of() {
	grep '"event":"attach"' "$log" | grep '"cgroup":"/stockade-setuppass"' |
		grep "\"policy\":\"$1\""
}

[ -d "$cg" ] && rmdir "$cg" 2>/dev/null
mkdir "$cg" "$work/pol" || { echo "setuppass: cannot create $cg" >&2; exit 1; }
policy live-sp-on on
agent_start

r=$(attach_of live-sp-on)
case $r in
*'"setup_pass":["children"]'*) ok "first scan: pass on, setup_pass children" ;;
*) not_ok "first scan: pass on, setup_pass children" "${r:-no attach record}" ;;
esac

# reload NAME PASS: the policy renamed (so the cgroup moves to another
# policy and gets a new attach record), with setup.pass PASS.
reload() {
	policy "$1" "$2"
	if ! "$STOCKADE" reload --bpffs "$bpffs" > "$work/reload.out" 2>&1; then
		not_ok "reload to $1" "$(cat "$work/reload.out")"
		return 1
	fi
	if ! wait_for "\"event\":\"attach\",\"policy\":\"$1\",\"cgroup\":\"/stockade-setuppass\"" "$log"; then
		not_ok "reload to $1" "no attach record of /stockade-setuppass under $1: $(grep '"event":"attach"' "$log" | tail -n 2)"
		return 1
	fi
}

if reload live-sp-off off; then
	r=$(attach_of live-sp-off)
	case $r in
	'') not_ok "reload to pass off: no setup_pass" "no attach record: $(grep '"event":"attach"' "$log" | tail -n 2)" ;;
	*'"setup_pass"'*) not_ok "reload to pass off: no setup_pass" "the grant from before the reload: $r" ;;
	*) ok "reload to pass off: no setup_pass" ;;
	esac
fi
if reload live-sp-on2 on; then
	r=$(attach_of live-sp-on2)
	case $r in
	*'"setup_pass":["children"]'*) ok "reload to pass on: setup_pass children" ;;
	*) not_ok "reload to pass on: setup_pass children" "${r:-no attach record: $(grep '"event":"attach"' "$log" | tail -n 2)}" ;;
	esac
fi

agent_end
summary
