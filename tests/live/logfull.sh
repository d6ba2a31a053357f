#!/bin/sh
# The --log file's file system fills up during a denial storm, live on this
# host (root). The agent writes every record to stdout and to --log; a
# failed write of one stream must not stop the other, nor the agent, and
# must be said:
#   - --log on a 512 KiB tmpfs, stdout to a file of its own; a storm of
#     refused datagrams fills the tmpfs (an 8 KiB ring: the kernel drops
#     records too, and their lost records miss the log as well);
#   - the agent says once on stderr that writing to --log failed (no
#     space), and keeps running;
#   - the full log holds whole records only (a record the failed write
#     cut in two is taken off again);
#   - stdout holds every record: deny records + lost = produced (the
#     kernel's counter), every seq once;
#   - the log, once space is given back, gets records again, and the
#     agent says that writing to it works again (a second after the last
#     failure: not for a small write into a full block's free tail); a
#     log_lost record in it tells how many records it missed, so that
#     its sequence's gap is explained;
#   - an agent started with stdout closed gets /dev/null there: each
#     record once in its log, and no failed write to stdout;
#   - an agent whose stdout is a non-blocking pipe (O_NONBLOCK set on its
#     end, as a supervisor or a shell sharing the pipe may do) that its
#     reader leaves full for a while: the agent waits for the reader, as
#     on a blocking pipe, and stdout gets every record (or its lost
#     count), with no failed write said.
#
# Holds /tmp/stockade-live.lock. Env: STOCKADE, TOOLS, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS.
set -u

if [ -z "${STOCKADE_LIVE_LOCKED:-}" ]; then
	export STOCKADE_LIVE_LOCKED=1
	exec flock /tmp/stockade-live.lock sh "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_cgroup2 logfull
need_bpffs logfull

work=$(mktemp -d /tmp/stockade-logfull.XXXXXX)
bpffs=/sys/fs/bpf/stockade-logfull-$$
cg=$CGROUP_ROOT/stockade-logfull-$$
full=$work/full
log=$full/events.jsonl
out=$work/stdout.jsonl
agent_pid=

cleanup() {
	agent_end
	cg_empty "$cg"
	umount "$full" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$work/pol" "$full" "$cg"
mount -t tmpfs -o size=512k tmpfs "$full" || { echo "logfull: cannot mount a tmpfs" >&2; exit 1; }
# Half the space, given back later: the log itself is never cut.
head -c 262144 /dev/zero > "$full/filler"
cat > "$work/pol/logfull.yaml" <<YAML
name: logfull
cgroups: [/stockade-logfull-$$]
network:
  default: deny
YAML

# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/pol" --bpffs "$bpffs" \
	--cgroup-root "$CGROUP_ROOT" --detach-on-exit --log "$log" \
	--ring-size 8K --state "$work/state.json" > "$out" 2> "$work/agent.err" &
agent_pid=$!
if ! wait_ready "$out"; then
	not_ok "agent_ready" "$(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
	summary
	exit 1
fi

# storm N SECONDS RATE: refused datagrams from the sandbox, in a private
# network namespace (only lo); its output in storm.N.
storm() {
	unshare -n sh -c 'ip link set lo up && echo $$ > "$1/cgroup.procs" && shift && exec "$@"' \
		sh "$cg" "$TOOLS/storm" --bpffs "$bpffs" --dst 127.0.0.1 9 --seconds "$2" \
		--rate "$3" --agent-pid "$agent_pid" > "$work/storm.$1" 2> "$work/storm.$1.err" ||
		not_ok "storm $1" "$(cat "$work/storm.$1.err")"
}
key() { sed -n "s/^$2=//p" "$work/storm.$1"; }

# 50,000 records of about 300 bytes: 30 times the tmpfs.
storm 1 1 50000
used=$(df -k "$full" | awk 'NR == 2 { print $3 }')
[ "$(df -k "$full" | awk 'NR == 2 { print $4 }')" -lt 8 ] &&
	ok "the storm filled --log's file system (${used} KiB used)" ||
	not_ok "filled" "$(df -k "$full" | tail -n 1)"
n=$(grep -c 'writing records to --log failed: No space left on device' "$work/agent.err")
[ "$n" = 1 ] && ok "the failed --log write said once on stderr" ||
	not_ok "said once" "$n messages: $(grep 'writing records' "$work/agent.err" | head -n 3 | tr '\n' ' ')"
grep -q 'writing records to stdout' "$work/agent.err" &&
	not_ok "stdout" "$(grep 'writing records to stdout' "$work/agent.err" | head -n 1)"
kill -0 "$agent_pid" 2>/dev/null && ok "the agent keeps running" ||
	not_ok "agent alive" "$(tail -n 3 "$work/agent.err" | tr '\n' ' ')"

# Only whole records in it: the part of one that the failed write left
# was cut off again.
# One record per line: one "seq" in it (a log_lost note has none), nothing
# glued onto it.
bad=$(awk '!/^\{"ts":.*\}$/ || gsub(/"seq":/, "&") != (index($0, "\"event\":\"log_lost\"") ? 0 : 1) { n++ }
	END { print n + 0 }' "$log")
[ "$bad" = 0 ] && [ -s "$log" ] && ok "the full log holds whole records only ($(wc -l < "$log") lines)" ||
	not_ok "whole records" "$bad lines not a whole record: $(tail -c 200 "$log")"

# Space again (the filler removed): the next records reach the log, and
# once they have for a second since the last failure, the agent says so:
# 750 records, most of the space given back.
before=$(grep -c '"event":"deny"' "$log")
rm "$full/filler"
storm 2 1.5 500
more() { [ "$(grep -c '"event":"deny"' "$log")" -gt "$before" ]; }
n=0
while ! more && [ "$n" -lt 50 ]; do n=$((n + 1)); sleep 0.1; done
if wait_for 'writing records to --log works again' "$work/agent.err" 50 && more; then
	ok "--log written again once it has space, and said"
else
	not_ok "written again" "$(grep -c '"event":"deny"' "$log") deny records in the log, $before before; $(tail -n 2 "$work/agent.err" | tr '\n' ' ')"
fi

kill -TERM "$agent_pid"
wait "$agent_pid"
rc=$?
agent_pid=
[ "$rc" = 0 ] || not_ok "agent exit" "exit $rc: $(tail -n 3 "$work/agent.err" | tr '\n' ' ')"

# The log explains its own gap: storm 2's records follow a log_lost record
# whose count is every record the full file system kept from it (the
# seqs missing between its first record and its last).
# shellcheck disable=SC2046
set -- $(seq_span "$log")
told=$(awk 'index($0, "\"event\":\"log_lost\"") && match($0, /"count":[0-9]+,/) {
	s += substr($0, RSTART + 8, RLENGTH - 9) } END { print s + 0 }' "$log")
missing=$(($2 - $1 + 1 - $3))
if grep -q '"event":"log_lost".*"reason":"write_failed"' "$log" && [ "$missing" -gt 0 ] &&
   [ "$missing" = $((told + $(lost_sum "$log"))) ]; then
	ok "the log's gap told in it: $missing missing = log_lost $told + lost"
else
	not_ok "gap told" "seqs $*: $missing missing, log_lost counts $told, lost $(lost_sum "$log"): $(grep '"event":"log_lost"' "$log" | head -n 2)"
fi

# stdout lost nothing: every storm's denials there, or counted lost.
produced=$(($(key 1 produced) + $(key 2 produced)))
denied=$(($(key 1 eperm) + $(key 2 eperm)))
logged=$(grep -c '"event":"deny","kind":"sendmsg","policy":"logfull"' "$out")
lost=$(lost_sum "$out")
# shellcheck disable=SC2046
set -- $(grep '"event":"deny"' "$out" | seq_span)
if [ "$produced" -gt 0 ] && [ "$produced" = "$denied" ] &&
   [ "$produced" = $((logged + lost)) ] && [ "$3" = "$4" ]; then
	ok "stdout complete: produced $produced = logged $logged + lost $lost, every seq once"
else
	not_ok "stdout complete" "produced $produced, denied $denied, logged $logged, lost $lost, seqs $*"
fi
grep -q '"event":"agent_stop"' "$out" && ok "agent_stop on stdout" ||
	not_ok "agent_stop" "$(tail -n 1 "$out")"

# An agent started with stdout closed: /dev/null takes its place, so the
# log (the first file it opens after) gets each record once, and no write
# to stdout fails.
log2=$work/closed.jsonl
# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/pol" --bpffs "$bpffs" \
	--cgroup-root "$CGROUP_ROOT" --detach-on-exit --log "$log2" \
	--state "$work/state.json" >&- 2> "$work/closed.err" &
agent_pid=$!
wait_ready "$log2" || not_ok "agent_ready, stdout closed" "$(tail -n 3 "$work/closed.err" | tr '\n' ' ')"
kill -TERM "$agent_pid"
wait "$agent_pid"
agent_pid=
n=$(grep -c '"event":"agent_ready"' "$log2")
if [ "$n" = 1 ] && ! grep -q 'writing records to stdout' "$work/closed.err"; then
	ok "stdout closed at start: each record once in the log, no failed write"
else
	not_ok "stdout closed" "$n agent_ready lines; $(grep 'writing records' "$work/closed.err" | head -n 1)"
fi

# stdout a non-blocking FIFO whose reader begins 2 s after a storm of
# 20,000 records (6 MB; the pipe holds 64 KiB) began: each write past
# the pipe's room gets EAGAIN until then.
fifo=$work/nb.fifo
nbout=$work/nb.jsonl
mkfifo "$fifo"
{ while [ ! -e "$work/go" ]; do sleep 0.1; done; cat; } < "$fifo" > "$nbout" &
reader=$!
# shellcheck disable=SC2086
python3 -c 'import os, sys; os.set_blocking(1, False); os.execvp(sys.argv[1], sys.argv[1:])' \
	"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/pol" --bpffs "$bpffs" \
	--cgroup-root "$CGROUP_ROOT" --detach-on-exit --log "$work/nb.log" \
	--state "$work/state.json" > "$fifo" 2> "$work/nb.err" &
agent_pid=$!
wait_ready "$work/nb.log" || not_ok "agent_ready, stdout non-blocking" "$(tail -n 3 "$work/nb.err" | tr '\n' ' ')"
(sleep 2; touch "$work/go") &
storm 3 1 20000
kill -TERM "$agent_pid"
wait "$agent_pid"
agent_pid=
wait "$reader"
produced=$(key 3 produced)
logged=$(grep -c '"event":"deny","kind":"sendmsg","policy":"logfull"' "$nbout")
lost=$(lost_sum "$nbout")
# shellcheck disable=SC2046
set -- $(grep '"event":"deny"' "$nbout" | seq_span)
if [ "${produced:-0}" -gt 0 ] && [ "$produced" = $((logged + lost)) ] && [ "$3" = "$4" ] &&
   grep -q '"event":"agent_stop"' "$nbout" && ! grep -q 'writing records to stdout' "$work/nb.err"; then
	ok "stdout a non-blocking pipe, full for 2 s: produced $produced = written $logged + lost $lost, no failed write"
else
	not_ok "stdout non-blocking" "produced $produced, written $logged, lost $lost, seqs $*; $(grep 'writing records' "$work/nb.err" | head -n 1)"
fi

summary
