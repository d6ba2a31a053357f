#!/bin/sh
# The systemd unit (deploy/systemd/stockade.service) and the notify
# protocol, live on this host (root):
#   1. `systemd-analyze verify` passes on the unit, ExecStart pointed at
#      the built binary (verify checks that it exists), and prints
#      nothing; the same check fails a copy with a misspelt key (verify
#      only warns of it and exits 0: the check reads its output too), one
#      with a bad value, and one whose binary is missing;
#   2. the unit's paths agree with the agent's defaults (the state file in
#      RuntimeDirectory) and with deploy/logrotate/stockade, and the unit
#      has what the agent's lifecycle needs (Type=notify, KillMode=process,
#      ExecReload by SIGHUP);
#   3. the agent run with exactly the unit's CapabilityBoundingSet and
#      no_new_privs (setpriv), NOTIFY_SOCKET at a path, then at an
#      abstract '@' name, a python3 listener standing in for systemd:
#      READY=1 arrives only once agent_ready is in the log, a connect from
#      the sandbox is refused and logged, SIGHUP brings RELOADING=1 then
#      READY=1 (after the reload record), SIGTERM STOPPING=1 and a clean
#      exit with agent_stop; the agent wrote no error.
#
# Holds /tmp/stockade-live.lock while it runs (other live tests start
# agents too). Env: STOCKADE, TOOLS, CGROUP_ROOT, STOCKADE_AGENT_FLAGS.
set -u

if [ -z "${STOCKADE_LIVE_LOCKED:-}" ]; then
	export STOCKADE_LIVE_LOCKED=1
	exec flock /tmp/stockade-live.lock sh "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_cgroup2 systemd
need_bpffs systemd
unit=$here/../../deploy/systemd/stockade.service
lr=$here/../../deploy/logrotate/stockade
py=/usr/bin/python3

work=$(mktemp -d /tmp/stockade-sysd.XXXXXX)
bpffs=/sys/fs/bpf/stockade-sysd-$$
cg=$CGROUP_ROOT/stockade-sysd-$$
agent_pid=
lis_pid=

cleanup() {
	agent_end
	[ -n "$lis_pid" ] && kill "$lis_pid" 2>/dev/null
	cg_empty "$cg"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. verify: a clean unit passes with no output; the check fails broken ones.
bin=$(cd "$here/../.." && pwd)/stockade
# verify_unit FILE: 0 when systemd-analyze verify exits 0 and says nothing.
verify_unit() {
	systemd-analyze verify "$1" > "$work/verify.out" 2>&1 &&
		! grep -q . "$work/verify.out"
}
if ! command -v systemd-analyze > /dev/null; then
	not_ok "systemd-analyze verify" "no systemd-analyze (package systemd, in the Makefile's DEB_PKGS: run make deps)"
else
	sed "s|/usr/local/sbin/stockade|$bin|g" "$unit" > "$work/stockade.service"
	if verify_unit "$work/stockade.service"; then
		ok "systemd-analyze verify: the unit passes, nothing said"
	else
		not_ok "systemd-analyze verify" "$(head -c 600 "$work/verify.out" | tr '\n' ' ')"
	fi
	for brk in 's/^KillMode=/KilMode=/' 's/^ProtectSystem=strict/ProtectSystem=strictly/' \
		   "s|^ExecStart=$bin|ExecStart=/nonexistent/stockade|"; do
		sed "$brk" "$work/stockade.service" > "$work/broken.service"
		if cmp -s "$work/stockade.service" "$work/broken.service"; then
			not_ok "verify fails a broken unit ($brk)" "the edit changed nothing: the unit no longer has that line"
		elif verify_unit "$work/broken.service"; then
			not_ok "verify fails a broken unit ($brk)" "it passed"
		else
			ok "verify fails a broken unit ($brk): $(head -n 1 "$work/verify.out" | sed 's/^[^:]*: //')"
		fi
	done
fi

# 2. The unit against the agent's defaults and the logrotate snippet.
key() { sed -n "s/^$1=//p" "$unit" | tail -n 1; }
exec_start=$(key ExecStart)
log_path=$(echo "$exec_start" | sed -n 's/.*--log \([^ ]*\).*/\1/p')
metrics_path=$(echo "$exec_start" | sed -n 's/.*--metrics \([^ ]*\).*/\1/p')
state_default=$(sed -n 's/^#define LIMITS_STATE_DEFAULT[^"]*"\(.*\)"/\1/p' "$here/../../agent/limits_agent.h")
bad=
[ "$(key Type)" = notify ] || bad="$bad Type=$(key Type)"
[ "$(key KillMode)" = process ] || bad="$bad KillMode=$(key KillMode)"
[ "$(key ExecReload)" = '/bin/kill -HUP $MAINPID' ] || bad="$bad ExecReload=$(key ExecReload)"
[ "$(dirname "$log_path")" = "/var/log/$(key LogsDirectory)" ] ||
	bad="$bad --log $log_path outside LogsDirectory=$(key LogsDirectory)"
[ "$(dirname "$metrics_path")" = "/run/$(key RuntimeDirectory)" ] ||
	bad="$bad --metrics $metrics_path outside RuntimeDirectory=$(key RuntimeDirectory)"
echo "$exec_start" | grep -q -- '--state' ||
	[ "$(dirname "$state_default")" = "/run/$(key RuntimeDirectory)" ] ||
	bad="$bad the default state file $state_default outside RuntimeDirectory"
grep -q "^$log_path {" "$lr" || bad="$bad logrotate does not rotate $log_path"
grep -q 'delaycompress' "$lr" || bad="$bad logrotate compresses the file the agent may still write"
if [ -z "$bad" ]; then
	ok "the unit's paths match the agent's defaults and logrotate ($log_path, $metrics_path, $state_default)"
else
	not_ok "the unit's settings" "$bad"
fi

# 3. The agent under the unit's capabilities, told to notify.
bset=-all
for c in $(key CapabilityBoundingSet); do
	bset="$bset,+$(echo "$c" | sed 's/^CAP_//' | tr 'A-Z' 'a-z')"
done
mkdir -p "$work/pol" "$cg"
cat > "$work/pol/sysd.yaml" <<YAML
name: sysd
cgroups: [/stockade-sysd-$$]
network:
  default: deny
YAML

# wait_lines FILE N TENTHS: until FILE has N lines.
wait_lines() {
	_k=0
	while [ "$(wc -l < "$1")" -lt "$2" ]; do
		_k=$((_k + 1))
		[ "$_k" -gt "$3" ] && return 1
		sleep 0.1
	done
}

# run_notify NAME ADDR: one agent's life, NOTIFY_SOCKET=ADDR.
run_notify() {
	name=$1 addr=$2 log=$work/$1.log out=$work/$1.notify
	: > "$log"
	"$py" "$here/notify-listen.py" "$addr" "$log" "$out" > "$work/$name.lis" 2>&1 &
	lis_pid=$!
	if ! wait_for '^ready' "$work/$name.lis" 50; then
		not_ok "$name: listener" "$(cat "$work/$name.lis")"
		return 1
	fi
	# shellcheck disable=SC2086
	NOTIFY_SOCKET=$addr setpriv --bounding-set "$bset" --no-new-privs \
		"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/pol" --bpffs "$bpffs" \
		--cgroup-root "$CGROUP_ROOT" --detach-on-exit --log "$log" \
		--state "$work/state.json" --metrics "$work/metrics.prom" \
		> /dev/null 2> "$work/$name.err" &
	agent_pid=$!
	if ! wait_ready "$log" || ! wait_for '^READY=1' "$out" 50; then
		not_ok "$name: agent_ready and READY=1" "$(tail -n 3 "$work/$name.err" | tr '\n' ' ') notify: $(cat "$out")"
		return 1
	fi
	first=$(head -n 1 "$out")
	case $first in
	READY=1\|STATUS=confining\ 1\ cgroups*log_ready=1)
		ok "$name: READY=1 with STATUS= arrives after agent_ready is logged ($(echo "$first" | cut -f 1))" ;;
	*)	not_ok "$name: READY=1 first, after agent_ready" "first datagram: $first" ;;
	esac
	got=$("$TOOLS/netprobe" --netns --cgroup "$cg" connect tcp 127.0.0.1 9 2>&1 | tail -n 1)
	if [ "$got" = EPERM ] && wait_for '"event":"deny","kind":"connect"' "$log" 50; then
		ok "$name: under the unit's capabilities a connect is refused and logged"
	else
		not_ok "$name: a denial under the unit's capabilities" "netprobe: $got; $(grep -c '"event":"deny"' "$log") deny records"
	fi
	kill -HUP "$agent_pid"
	# The reload record, then READY=1: three datagrams in all.
	if wait_for '"event":"reload"' "$log" 50 && wait_lines "$out" 3 50 &&
	   sed -n 2p "$out" | grep -q '^RELOADING=1|MONOTONIC_USEC=[0-9]*|STATUS=' &&
	   sed -n 3p "$out" | grep -q '^READY=1|STATUS='; then
		ok "$name: SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1"
	else
		not_ok "$name: reload notifications" "$(cut -f 1 "$out" | tr '\n' ' ')"
	fi
	kill -TERM "$agent_pid"
	wait "$agent_pid"
	rc=$?
	agent_pid=
	wait "$lis_pid" 2>/dev/null
	lis_pid=
	if [ "$rc" = 0 ] && tail -n 1 "$out" | grep -q '^STOPPING=1' &&
	   grep -q '"event":"agent_stop"' "$log"; then
		ok "$name: SIGTERM: STOPPING=1, agent_stop, exit 0"
	else
		not_ok "$name: stop" "exit $rc; notify: $(cut -f 1 "$out" | tr '\n' ' ')"
	fi
	if grep -q ': error: \|: warning: telling systemd' "$work/$name.err"; then
		not_ok "$name: no error" "$(grep ': error: \|telling systemd' "$work/$name.err" | head -n 3 | tr '\n' ' ')"
	else
		ok "$name: the agent wrote no error"
	fi
}

if [ ! -x "$py" ]; then
	not_ok "notify" "no $py (python3-minimal, in DEB_PKGS: run make deps)"
elif ! command -v setpriv > /dev/null; then
	not_ok "notify" "no setpriv (util-linux, in DEB_PKGS: run make deps)"
else
	run_notify path "$work/notify.sock"
	run_notify abstract "@stockade-sysd-$$"
fi

summary
