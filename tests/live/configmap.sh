#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# A policy directory written the way the kubelet writes a ConfigMap volume
# (pkg/volume/util/atomic_writer.go): the files live in a hidden
# directory ..<UTC timestamp>.<random>/, ..data is a symlink to it, and
# each visible file is a symlink x.yaml -> ..data/x.yaml. An update writes
# a new hidden directory, points ..data_tmp at it, renames ..data_tmp over
# ..data (the one atomic step), then adds the symlinks of new keys, removes
# those of dropped keys, and removes the old hidden directory. A visible
# file of an unchanged key is never touched: only the rename of ..data
# says that its content changed. Runs on the host (make live-test).
#   1. The agent loads the directory: the dot entries are no policies, the
#      visible symlinks are followed; the policy decides (port 8080).
#   2. An edit (8081) delivered by the swap is applied by itself: a
#      reload record (inotify, applied), the new rules decide.
#   3. A swap to an invalid policy keeps the one in force: a policy_error
#      record naming the file, the reload rejected, no new policy record,
#      8081 still allowed.
#   4. The next valid swap (8082) is applied again.
#   5. A key added, then dropped, by swaps: its policy comes, then goes.
#   6. `stockade status --require-agent` (the DaemonSet's liveness probe):
#      0 while the agent runs, 3 once it stopped.
#
# Environment: STOCKADE, TOOLS (netprobe), CGROUP_ROOT (detected when
# unset), STOCKADE_AGENT_FLAGS (default --allow-degraded).
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
probe=$TOOLS/netprobe

need_cgroup2 configmap
need_bpffs configmap

tag=stockade-cm-$$
bpffs=/sys/fs/bpf/$tag
cg=$CGROUP_ROOT/$tag
cg2=$CGROUP_ROOT/$tag-2
work=$(mktemp -d /tmp/stockade-configmap.XXXXXX)
vol=$work/vol
log=$work/agent.log
agent_pid=

cleanup() {
	agent_end -9
	cg_empty "$cg" "$cg2"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# policy NAME PORT CGROUP: a policy allowing only PORT, on stdout.
policy() {
	cat <<EOF
name: $1
mode: enforce
cgroups: [$3]
network:
  default: deny
  allow:
    - cidr: 127.0.0.1/32
      ports: [$2]
      proto: tcp
      reason: the test's listener
EOF
}

# kubelet_write KEY... : project $work/payload/KEY (each file there) into
# $vol, step by step as AtomicWriter.Write does; keys not named go.
kubelet_write() {
	old=$(readlink "$vol/..data" 2>/dev/null)
	ts=$(mktemp -d "$vol/..$(date -u +%Y_%m_%d_%H_%M_%S).XXXXXXXXX")
	chmod 0755 "$ts"
	for k in "$@"; do
		cp "$work/payload/$k" "$ts/$k"
		chmod 0644 "$ts/$k"
	done
	ln -s "${ts##*/}" "$vol/..data_tmp"
	mv -T "$vol/..data_tmp" "$vol/..data"	# rename(2): the switch
	for k in "$@"; do
		[ -L "$vol/$k" ] || ln -s "..data/$k" "$vol/$k"
	done
	for f in "$vol"/*; do
		k=${f##*/}
		case " $* " in *" $k "*) ;; *) rm -f "$f" ;; esac
	done
	[ -n "$old" ] && rm -rf "${vol:?}/$old"
	return 0
}

# try PORT [CGROUP]: one connect from the sandbox; prints OK or the errno.
try() {
	"$probe" --netns --cgroup "${2:-$cg}" connect tcp 127.0.0.1 "$1" --listen 2>&1 | tail -n 1
}

# count PATTERN: how many records of the log match.
count() { grep -c "$1" "$log" 2>/dev/null; }

# wait_count PATTERN N: until more than N records match (5 s).
wait_count() {
	n=0
	while [ "$(count "$1")" -le "$2" ]; do
		n=$((n + 1))
		[ "$n" -gt 50 ] && return 1
		sleep 0.1
	done
	return 0
}

APPLIED='"event":"reload","trigger":"inotify","result":"applied"'
REJECTED='"event":"reload","trigger":"inotify","result":"rejected"'

mkdir "$vol" "$work/payload" "$cg" "$cg2" || { echo "configmap: cannot create $cg" >&2; exit 1; }

# ---- 1. the first projection, loaded ----
policy cm 8080 "/$tag" > "$work/payload/stockade.yaml"
kubelet_write stockade.yaml
# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --bpffs "$bpffs" --detach-on-exit \
	-p "$vol" --log "$log" > /dev/null 2> "$work/agent.err" &
agent_pid=$!
if wait_ready "$log"; then
	ok "agent_ready on a ConfigMap-style directory"
else
	not_ok "agent_ready" "$(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
	summary
	exit 1
fi
if grep '"event":"policy"' "$log" | grep -q '"policy":"cm"' &&
   [ "$(grep -c '"event":"policy"' "$log")" = 1 ] &&
   [ "$(try 8080)" = OK ] && [ "$(try 8081)" = EPERM ]; then
	ok "one policy, through the symlink (dot entries ignored): 8080 allowed, 8081 denied"
else
	not_ok "first load" "8080: $(try 8080), 8081: $(try 8081); $(grep '"event":"policy"' "$log" | tr '\n' ' ')"
fi

# ---- 2. an edit delivered by the swap ----
n_app=$(count "$APPLIED")
n_pol=$(count '"event":"policy"')
policy cm 8081 "/$tag" > "$work/payload/stockade.yaml"
kubelet_write stockade.yaml
if wait_count "$APPLIED" "$n_app" && [ "$(count '"event":"policy"')" -gt "$n_pol" ] &&
   [ "$(try 8081)" = OK ] && [ "$(try 8080)" = EPERM ]; then
	ok "..data swapped: reloaded by itself (inotify, applied), 8081 allowed, 8080 denied"
else
	not_ok "..data swap reload" "8081: $(try 8081), 8080: $(try 8080); $(grep '"event":"reload"' "$log" | tail -n 1)"
fi
if [ "$(ls -A "$vol" | grep -c '^\.\.20')" = 1 ]; then
	ok "the old hidden directory is gone (one ..<timestamp> left)"
else
	not_ok "old hidden directory removed" "$(ls -A "$vol" | tr '\n' ' ')"
fi

# ---- 3. a swap to an invalid policy ----
n_err=$(count '"event":"policy_error"')
n_rej=$(count "$REJECTED")
n_pol=$(count '"event":"policy"')
printf 'name: cm\ncgroups: [/%s\nnetwork: {default: allow}\n' "$tag" > "$work/payload/stockade.yaml"
kubelet_write stockade.yaml
if wait_count "$REJECTED" "$n_rej" && [ "$(count '"event":"policy_error"')" -gt "$n_err" ] &&
   grep '"event":"policy_error"' "$log" | tail -n 1 | grep -q "$vol/stockade.yaml"; then
	ok "invalid swap: rejected, a policy_error record names $vol/stockade.yaml"
else
	not_ok "invalid swap rejected" "$(grep -E '"event":"(reload|policy_error)"' "$log" | tail -n 2 | tr '\n' ' ')"
fi
if [ "$(count '"event":"policy"')" = "$n_pol" ] && [ "$(try 8081)" = OK ] &&
   [ "$(try 8080)" = EPERM ]; then
	ok "invalid swap: the policy in force stays (8081 allowed, 8080 denied, no new policy record)"
else
	not_ok "invalid swap keeps the old policy" "8081: $(try 8081), 8080: $(try 8080)"
fi
if "$STOCKADE" reload --bpffs "$bpffs" > "$work/reload.out" 2>&1; then
	not_ok "invalid swap: stockade reload exits non-zero" "exit 0: $(cat "$work/reload.out")"
else
	grep -q 'stockade\.yaml' "$work/reload.out" &&
		ok "invalid swap: stockade reload exits non-zero, naming the file" ||
		not_ok "invalid swap: stockade reload names the file" "$(cat "$work/reload.out")"
fi

# ---- 4. valid again ----
n_app=$(count "$APPLIED")
policy cm 8082 "/$tag" > "$work/payload/stockade.yaml"
kubelet_write stockade.yaml
if wait_count "$APPLIED" "$n_app" && [ "$(try 8082)" = OK ] && [ "$(try 8081)" = EPERM ]; then
	ok "valid swap after an invalid one: applied (8082 allowed, 8081 denied)"
else
	not_ok "valid swap after an invalid one" "8082: $(try 8082), 8081: $(try 8081)"
fi

# ---- 5. a key added, then dropped ----
n_app=$(count "$APPLIED")
policy cm2 8083 "/$tag-2" > "$work/payload/second.yaml"
kubelet_write stockade.yaml second.yaml
if wait_count "$APPLIED" "$n_app" && [ "$(try 8083 "$cg2")" = OK ] &&
   [ "$(try 8082 "$cg2")" = EPERM ] && [ "$(try 8082)" = OK ]; then
	ok "a key added by a swap: its policy confines /$tag-2 (8083 allowed, 8082 denied)"
else
	not_ok "key added" "8083: $(try 8083 "$cg2"), 8082: $(try 8082 "$cg2"); $(grep '"event":"reload"' "$log" | tail -n 1)"
fi
n_app=$(count "$APPLIED")
kubelet_write stockade.yaml
if wait_count "$APPLIED" "$n_app" && [ ! -e "$vol/second.yaml" ] &&
   grep '"event":"reload"' "$log" | tail -n 1 | grep -q '"policies":\["cm"\]' &&
   [ "$(try 8082 "$cg2")" = OK ]; then
	ok "a key dropped by a swap: its policy goes, /$tag-2 released"
else
	not_ok "key dropped" "8082 in /$tag-2: $(try 8082 "$cg2"); $(grep '"event":"reload"' "$log" | tail -n 1)"
fi

# The DaemonSet's liveness probe: 0 while the agent holds the pins, 3 after.
"$STOCKADE" status --require-agent --bpffs "$bpffs" > "$work/live.out" 2>&1
live_rc=$?
kill -TERM "$agent_pid"
wait "$agent_pid"
rc=$?
agent_pid=
[ "$rc" = 0 ] && ok "SIGTERM: exit 0" || not_ok "SIGTERM" "exit $rc"
"$STOCKADE" status --require-agent --bpffs "$bpffs" > "$work/dead.out" 2>&1
dead_rc=$?
if [ "$live_rc" = 0 ] && grep -q "^agent: running (pid [0-9]*)" "$work/live.out" &&
   [ "$dead_rc" = 3 ] && grep -q '^agent: not running' "$work/dead.out"; then
	ok "status --require-agent: 0 while the agent runs, 3 once it stopped"
else
	not_ok "status --require-agent" "running: $live_rc $(cat "$work/live.out"); stopped: $dead_rc $(cat "$work/dead.out")"
fi

summary
