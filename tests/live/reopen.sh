#!/bin/sh
# Log rotation under a denial storm, live on this host (root): while
# tools/storm sends refused datagrams from a sandbox, the agent's --log
# file is rotated seven times: moved away then `stockade reopen-logs`, moved
# away then SIGUSR1 (twice each), twice by logrotate itself with
# deploy/logrotate/stockade (its paths pointed here: the second run
# compresses the first's file, which delaycompress kept until then), and
# once with the log's directory moved away, which the agent must survive
# keeping its old file (an error, a `log_reopen` record with
# `result: failed` there) until the directory is back. Then, over the
# union of every file (gzipped ones included):
#   - every line a whole record, and each new file starting with its
#     `log_reopen` record;
#   - every seq once, and the gaps between the first and the last exactly
#     the records counted lost;
#   - produced (the kernel's counter over the storm) = deny records logged
#     + lost, and the lost records = the kernel's loss counter;
#   - the agent still running until SIGTERM, then agent_stop, exit 0;
#     then `stockade reopen-logs` fails, naming the missing agent.
#
# Holds /tmp/stockade-live.lock. Env: STOCKADE, TOOLS, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS, REOPEN_RATE (40000/s), REOPEN_SECONDS (6).
set -u

if [ -z "${STOCKADE_LIVE_LOCKED:-}" ]; then
	export STOCKADE_LIVE_LOCKED=1
	exec flock /tmp/stockade-live.lock sh "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_cgroup2 reopen
need_bpffs reopen
RATE=${REOPEN_RATE:-40000}
SECS=${REOPEN_SECONDS:-6}

work=$(mktemp -d /tmp/stockade-reopen.XXXXXX)
bpffs=/sys/fs/bpf/stockade-reopen-$$
cg=$CGROUP_ROOT/stockade-reopen-$$
logs=$work/logs
log=$logs/events.jsonl
agent_pid=
storm_pid=

cleanup() {
	[ -n "$storm_pid" ] && kill "$storm_pid" 2>/dev/null
	agent_end
	cg_empty "$cg"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$work/pol" "$logs" "$cg"
cat > "$work/pol/reopen.yaml" <<YAML
name: reopen
cgroups: [/stockade-reopen-$$]
network:
  default: deny
YAML
# deploy/logrotate/stockade, pointed at this log and this agent.
sed -e "s|^/var/log/stockade/events.jsonl {|$log {|" \
    -e "s|^\(\t*\)\[ ! -d /run/stockade \] .*|\1\"$STOCKADE\" reopen-logs --bpffs \"$bpffs\" > /dev/null|" \
    "$here/../../deploy/logrotate/stockade" > "$work/logrotate.conf"
if ! grep -q "reopen-logs --bpffs" "$work/logrotate.conf" || ! grep -q "^$log {" "$work/logrotate.conf"; then
	not_ok "logrotate config" "deploy/logrotate/stockade no longer has the lines this test rewrites"
fi

# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/pol" --bpffs "$bpffs" \
	--cgroup-root "$CGROUP_ROOT" --detach-on-exit --log "$log" \
	--state "$work/state.json" --metrics "$work/metrics.prom" \
	> /dev/null 2> "$work/agent.err" &
agent_pid=$!
if ! wait_ready "$log"; then
	not_ok "agent_ready" "$(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
	summary
	exit 1
fi

# The storm, in a private network namespace (only lo), in the sandbox.
unshare -n sh -c 'ip link set lo up && echo $$ > "$1/cgroup.procs" && shift && exec "$@"' \
	sh "$cg" "$TOOLS/storm" --bpffs "$bpffs" --dst 127.0.0.1 9 --seconds "$SECS" \
	--rate "$RATE" --agent-pid "$agent_pid" > "$work/storm.out" 2> "$work/storm.err" &
storm_pid=$!
wait_for '"event":"deny"' "$log" 50 || not_ok "storm" "no deny record: $(cat "$work/storm.err")"

# reopened FILE: until FILE holds a successful log_reopen record.
reopened() { wait_for '"event":"log_reopen".*"result":"reopened"' "$1" 50; }
n_ok=0
# rotate HOW N: move the log to rot.N, make the agent reopen it by HOW.
rotate() {
	mv "$log" "$logs/rot.$2"
	case $1 in
	ctl) "$STOCKADE" reopen-logs --bpffs "$bpffs" > "$work/ctl.out" 2>&1 ||
		not_ok "stockade reopen-logs" "$(cat "$work/ctl.out")" ;;
	usr1) kill -USR1 "$agent_pid" ;;
	esac
	if reopened "$log"; then
		n_ok=$((n_ok + 1))
		ok "rotation $2 by $1 during the storm: a new file, log_reopen in it"
	else
		not_ok "rotation $2 by $1" "no log_reopen in the new $log: $(tail -n 2 "$work/agent.err" | tr '\n' ' ')"
	fi
	sleep 0.4
}
sleep 0.5
rotate ctl 1
rotate usr1 2
for k in 1 2; do
	logrotate -f -s "$work/logrotate.state" "$work/logrotate.conf" > "$work/lr.out" 2>&1 ||
		not_ok "logrotate run $k" "$(head -c 300 "$work/lr.out")"
	if reopened "$log" && [ -e "$log.1" ]; then
		n_ok=$((n_ok + 1))
		ok "logrotate run $k during the storm: $(cd "$logs" && ls events.jsonl.* | tr '\n' ' ')"
	else
		not_ok "logrotate run $k" "no log_reopen in the new $log ($(ls "$logs" | tr '\n' ' '))"
	fi
	sleep 0.4
done
[ -e "$log.2.gz" ] && ok "the second run compressed the first run's file (delaycompress)" ||
	not_ok "delaycompress" "no $log.2.gz: $(ls "$logs" | tr '\n' ' ')"

# The directory gone: the old file stays in use, and says so.
mv "$logs" "$work/logs.gone"
kill -USR1 "$agent_pid"
if wait_for '"event":"log_reopen".*"result":"failed"' "$work/logs.gone/events.jsonl" 50 &&
   grep -q 'reopening --log .* failed' "$work/agent.err"; then
	ok "reopen with the directory gone: the old file kept, a failed log_reopen in it, an error naming the fix"
else
	not_ok "reopen with the directory gone" "$(tail -n 2 "$work/agent.err" | tr '\n' ' ')"
fi
sleep 0.3
mv "$work/logs.gone" "$logs"
rotate usr1 3
rotate ctl 4

wait "$storm_pid"
src=$?
storm_pid=
[ "$src" = 0 ] || not_ok "storm" "exit $src: $(cat "$work/storm.err")"
if kill -0 "$agent_pid" 2>/dev/null; then
	ok "the agent ran through every rotation"
else
	not_ok "agent alive" "$(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
fi
kill -TERM "$agent_pid"
wait "$agent_pid"
rc=$?
agent_pid=
[ "$rc" = 0 ] || not_ok "agent exit" "exit $rc"
# No agent now: reopen-logs says so and fails, never signals a stranger.
if "$STOCKADE" reopen-logs --bpffs "$bpffs" > "$work/ctl.out" 2>&1; then
	not_ok "reopen-logs without an agent" "exit 0: $(cat "$work/ctl.out")"
else
	ok "reopen-logs without an agent fails: $(head -n 1 "$work/ctl.out")"
fi

# The union of every file.
: > "$work/all.jsonl"
for f in "$logs"/*; do
	case $f in
	*.gz) zcat "$f" ;;
	*) cat "$f" ;;
	esac >> "$work/all.jsonl"
done
files=$(ls "$logs" | wc -l)
bad=$(grep -v -c '^{"ts":".*}$' "$work/all.jsonl")
[ "$bad" = 0 ] && ok "every line of the $files files is a whole record" ||
	not_ok "whole records" "$bad lines are not: $(grep -v '^{"ts":".*}$' "$work/all.jsonl" | head -c 200)"
starts=0
for f in "$logs"/*; do
	case $f in *.gz) first=$(zcat "$f" | head -n 1) ;; *) first=$(head -n 1 "$f") ;; esac
	case $first in *'"event":"log_reopen"'*'"result":"reopened"'*) starts=$((starts + 1)) ;; esac
done
# Every file but the first one the agent opened starts with log_reopen.
[ "$starts" = $((files - 1)) ] && [ "$n_ok" = 6 ] &&
	ok "each of the $n_ok reopened files starts with its log_reopen record" ||
	not_ok "log_reopen first" "$starts of $((files - 1)) files start with one; $n_ok rotations succeeded"

seq_of < "$work/all.jsonl" | sort -n > "$work/seqs"
dups=$(uniq -d "$work/seqs" | wc -l)
first=$(head -n 1 "$work/seqs")
last=$(tail -n 1 "$work/seqs")
count=$(wc -l < "$work/seqs")
lost=$(lost_sum "$work/all.jsonl")
if [ "$dups" = 0 ] && [ $((last - first + 1 - count)) = "$lost" ]; then
	ok "seq $first..$last: $count records, none twice, gaps = lost ($lost)"
else
	not_ok "seq across the rotations" "$count records span $first..$last, $dups twice, lost $lost"
fi
produced=$(sed -n 's/^produced=//p' "$work/storm.out")
klost=$(sed -n 's/^lost=//p' "$work/storm.out")
denied=$(grep -c '"event":"deny","kind":"sendmsg"' "$work/all.jsonl")
if [ -n "$produced" ] && [ "$produced" -gt 0 ] && [ "$produced" = $((denied + lost)) ] &&
   [ "$lost" = "$klost" ]; then
	ok "produced $produced = logged $denied + lost $lost (kernel counted $klost lost)"
else
	not_ok "produced = logged + lost" "produced ${produced:-?}, logged $denied, lost $lost (kernel ${klost:-?}): $(cat "$work/storm.err")"
fi
grep -q '"event":"agent_stop"' "$work/all.jsonl" && ok "agent_stop after the rotations" ||
	not_ok "agent_stop" "none in the union"
others=$(grep ': error: ' "$work/agent.err" | grep -v -c 'reopening --log')
[ "$others" = 0 ] && ok "no error but the expected reopen failure" ||
	not_ok "errors" "$(grep ': error: ' "$work/agent.err" | grep -v 'reopening --log' | head -n 3 | tr '\n' ' ')"

summary
