#!/bin/sh
# `stockade watch` and the agent's events socket, live on this host
# (root). Two sandboxes (policies wa and wb) each under a denial storm
# (tools/storm, in a private network namespace), while:
#   - two watchers with different filters (--policy wa --kind connect:
#     300 refused connects among wa's storm of sendmsg; --cgroup '*-b'
#     --event deny,audit) each get exactly their subset of the
#     --log file, by seq, lost records included, and nothing else;
#   - a stalled watcher (tests/live/watch-stall.py: it reads nothing for
#     a while) gets watch_lost, its last line a watch_lost with
#     "dropped": true, and is dropped; what it did get is in the log;
#   - the log stays complete (every seq once, the gaps the lost records)
#     and the denials logged + lost = the datagrams the storms had refused.
# Then: the socket is 0600 root's; a non-root user is refused, both by the
# socket's mode and, with CAP_DAC_OVERRIDE, by the agent's SO_PEERCRED
# check (exit 1, "run stockade watch as root"); --since N gives exactly
# the last N matching records; a watcher follows the agent across a
# restart (it says so, and gets the new agent's records, those written
# before it reconnected included, none twice); --no-reconnect without an
# agent exits 1 naming the fix; and the compact output in a real terminal
# (tmux, capture-pane): the line format, colour by kind, none with
# NO_COLOR, the summary on the key s, Ctrl-C exits.
#
# Holds /tmp/stockade-live.lock. Env: STOCKADE, TOOLS, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS, WATCH_RATE (15000/s per storm), WATCH_SECONDS (6).
set -u

if [ -z "${STOCKADE_LIVE_LOCKED:-}" ]; then
	export STOCKADE_LIVE_LOCKED=1
	exec flock /tmp/stockade-live.lock sh "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_cgroup2 watch
need_bpffs watch
RATE=${WATCH_RATE:-15000}
SECS=${WATCH_SECONDS:-6}
for t in jq tmux python3 setpriv; do
	command -v $t > /dev/null || { echo "watch: $t not found; run make deps" >&2; exit 1; }
done

work=$(mktemp -d /tmp/stockade-watch.XXXXXX)
bpffs=/sys/fs/bpf/stockade-watch-$$
cga=$CGROUP_ROOT/stockade-watch-$$-a
cgb=$CGROUP_ROOT/stockade-watch-$$-b
sock=$work/run/events.sock
log=$work/events.jsonl
tm="tmux -L stockade-watch-$$"
agent_pid=
pids=

cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	$tm kill-server 2>/dev/null
	agent_end
	cg_empty "$cga" "$cgb"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$work/pol" "$cga" "$cgb"
for p in a b; do
	cat > "$work/pol/w$p.yaml" <<YAML
name: w$p
cgroups: [/stockade-watch-$$-$p]
network:
  default: deny
YAML
done

start_agent() {
	# shellcheck disable=SC2086
	"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/pol" --bpffs "$bpffs" \
		--cgroup-root "$CGROUP_ROOT" --log "$log" --state "$work/state.json" \
		--events-socket "$sock" > /dev/null 2>> "$work/agent.err" &
	agent_pid=$!
}
# n_ready: agent_ready records in the log so far.
n_ready() { grep -c '"event":"agent_ready"' "$log" 2>/dev/null || echo 0; }
wait_ready_n() {
	n=0
	while [ "$(n_ready)" -lt "$1" ]; do
		n=$((n + 1))
		[ "$n" -gt 600 ] && return 1
		sleep 0.1
	done
}
# storm CGROUP OUT SECONDS RATE: refused datagrams from the sandbox.
storm() {
	unshare -n sh -c 'ip link set lo up && echo $$ > "$1/cgroup.procs" && shift && exec "$@"' \
		sh "$1" "$TOOLS/storm" --bpffs "$bpffs" --dst 127.0.0.1 9 --seconds "$3" \
		--rate "$4" > "$2" 2> "$2.err"
}
# seqs FILE JQ-FILTER: the seq of every record of FILE the filter selects.
seqs() { jq -r "select(has(\"seq\")) | select($2) | .seq" "$1" | sort -n; }

start_agent
if ! wait_ready_n 1; then
	not_ok "agent_ready" "$(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
	summary
	exit 1
fi
mode=$(stat -c '%a %U %F' "$sock" 2>&1)
[ "$mode" = "600 root socket" ] && ok "the events socket: $sock, mode 600, root's" ||
	not_ok "socket mode" "$mode"

# The watchers, each up (its watch_start) before the storms.
"$STOCKADE" watch --socket "$sock" --no-reconnect --policy wa --kind connect -o json \
	> "$work/w1.out" 2> "$work/w1.err" &
w1=$!
"$STOCKADE" watch --socket "$sock" --no-reconnect --cgroup '*-b' --event deny,audit \
	> "$work/w2.out" 2> "$work/w2.err" &
w2=$!
python3 "$here/watch-stall.py" "$sock" $((SECS + 6)) "$work/stall.out" &
ws=$!
pids="$w1 $w2 $ws"
wait_for watch_start "$work/w1.out" 50 && wait_for watch_start "$work/w2.out" 50 &&
	wait_for watch_start "$work/stall.out.started" 50 ||
	not_ok "watchers started" "$(cat "$work/w1.err" "$work/w2.err")"

storm "$cga" "$work/storm-a.out" "$SECS" "$RATE" &
sa=$!
storm "$cgb" "$work/storm-b.out" "$SECS" "$RATE" &
sb=$!
# Among wa's sendmsg storm, a few refused TCP connects (kind connect).
unshare -n sh -c 'ip link set lo up && echo $$ > "$1/cgroup.procs" && shift && exec "$@"' \
	sh "$cga" python3 -c '
import socket, sys, time
n = 0
for i in range(300):
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", 9))
    except PermissionError:
        n += 1
    s.close()
    time.sleep(0.005)
print(n)' > "$work/connects.out" 2>&1
wait "$sa"; ra=$?
wait "$sb"; rb=$?
[ "$ra" = 0 ] && [ "$rb" = 0 ] || not_ok "storms" "exit $ra/$rb: $(cat "$work"/storm-*.err)"
wait "$ws"
if grep -q TIMEOUT "$work/stall.out"; then
	not_ok "stalled watcher closed" "the agent never closed its connection"
fi
sleep 0.5

# --since N, while the agent runs: the last 5 of wa's denials, then the
# live stream (nothing new: stopped by SIGINT, exit 0).
"$STOCKADE" watch --socket "$sock" --policy wa --since 5 -o json > "$work/since.out" 2> "$work/since.err" &
wsn=$!
pids="$pids $wsn"
sleep 1
kill -INT "$wsn"
wait "$wsn"
rc=$?
got=$(seqs "$work/since.out" 'true' | tr '\n' ' ')
want=$(seqs "$log" '.policy == "wa"' | tail -n 5 | tr '\n' ' ')
[ -n "$want" ] && [ "$got" = "$want" ] && [ "$rc" = 0 ] &&
	ok "--since 5: exactly the last 5 matching records ($got), exit 0 on SIGINT" ||
	not_ok "--since 5" "got '$got' (exit $rc), want '$want': $(cat "$work/since.err")"

# The terminal, while the agent runs: tmux, 200x50.
ws=w0
tmux_run() {
	_old=$ws
	ws=w$((${ws#w} + 1))
	# A session of its own each time, made before the last one is
	# killed: the tmux server ends with its last session, and a new one
	# asked for while it ended failed ("server exited unexpectedly", in
	# CI under load), which left NO_COLOR's check no server at all.
	$tm new-session -d -s "$ws" -x 200 -y 50 "$1; echo EXIT=\$?; sleep 30"
	$tm kill-session -t "$_old" 2>/dev/null
	# Until its 3 lines are there (a hang guard, 10 s), then a moment.
	n=0
	while [ "$($tm capture-pane -p -t "$ws" 2>/dev/null | grep -c 'policy=wa')" -lt 3 ] &&
	      [ "$n" -lt 100 ]; do
		n=$((n + 1))
		sleep 0.1
	done
	sleep 0.3
}
tmux_run "'$STOCKADE' watch --socket '$sock' --policy wa --since 3"
$tm capture-pane -p -t "$ws" > "$work/tty.txt"
$tm capture-pane -p -e -t "$ws" > "$work/tty-e.txt"
re='^[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\.[0-9]{3}  deny   /stockade-watch-[0-9]+-a +sendmsg +127\.0\.0\.1:9  not_allowed  policy=wa$'
n=$(grep -c -E "$re" "$work/tty.txt")
[ "$n" = 3 ] && ok "compact output in a terminal: 3 lines of time, sandbox, kind, target, reason, policy" ||
	not_ok "compact lines" "$n of 3 match: $(head -c 600 "$work/tty.txt")"
printf '\033[31m' > "$work/red"
grep -q -F "$(cat "$work/red")" "$work/tty-e.txt" && ok "a deny is red on a terminal" ||
	not_ok "colour" "no red (ESC[31m) in capture-pane -e: $(head -c 300 "$work/tty-e.txt" | od -c | head -n 3)"
$tm send-keys -t "$ws" s
sleep 1.5
$tm capture-pane -p -t "$ws" > "$work/tty-s.txt"
grep -q 'top sandboxes' "$work/tty-s.txt" && grep -q 'denials: ' "$work/tty-s.txt" &&
	grep -q 'stockade-watch-[0-9]*-a' "$work/tty-s.txt" &&
	ok "the key s shows the summary: top sandboxes, reasons, the denial rate" ||
	not_ok "summary key" "$(head -c 400 "$work/tty-s.txt")"
$tm send-keys -t "$ws" C-c
sleep 1
$tm capture-pane -p -t "$ws" > "$work/tty-c.txt"
grep -q '^EXIT=0$' "$work/tty-c.txt" && ok "Ctrl-C in the terminal: exit 0" ||
	not_ok "Ctrl-C" "$(tail -n 5 "$work/tty-c.txt")"
tmux_run "NO_COLOR=1 '$STOCKADE' watch --socket '$sock' --policy wa --since 3"
$tm capture-pane -p -e -t "$ws" > "$work/tty-nc.txt"
n=$(grep -c 'not_allowed  policy=wa' "$work/tty-nc.txt")
if [ "$n" = 3 ] && ! grep -q "$(printf '\033')\[3" "$work/tty-nc.txt"; then
	ok "NO_COLOR: the same lines, no colour"
else
	not_ok "NO_COLOR" "$n lines; $(head -c 300 "$work/tty-nc.txt" | od -c | head -n 3)"
fi
$tm kill-session -t "$ws" 2>/dev/null

# Not root.
setpriv --reuid=65534 --regid=65534 --clear-groups "$STOCKADE" watch --socket "$sock" \
	--no-reconnect > "$work/nr.out" 2> "$work/nr.err"
rc=$?
[ "$rc" = 1 ] && grep -q 'run stockade watch as root' "$work/nr.err" &&
	ok "uid 65534 refused by the socket's mode: exit 1, $(head -n 1 "$work/nr.err")" ||
	not_ok "non-root" "exit $rc: $(cat "$work/nr.err")"
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+dac_override \
	--ambient-caps=+dac_override "$STOCKADE" watch --socket "$sock" --no-reconnect \
	> "$work/nr2.out" 2> "$work/nr2.err"
rc=$?
[ "$rc" = 1 ] && grep -q 'refused: permission denied: uid 65534' "$work/nr2.err" &&
	grep -q 'refused a watcher: pid [0-9]*, uid 65534' "$work/agent.err" &&
	ok "uid 65534 with CAP_DAC_OVERRIDE refused by SO_PEERCRED: exit 1, $(head -n 1 "$work/nr2.err")" ||
	not_ok "SO_PEERCRED" "exit $rc: $(cat "$work/nr2.err")"

# A watcher across a restart (reconnects by default).
"$STOCKADE" watch --socket "$sock" --policy wa -o json > "$work/w4.out" 2> "$work/w4.err" &
w4=$!
pids="$pids $w4"
wait_for watch_start "$work/w4.out" 50
kill -TERM "$agent_pid"
wait "$agent_pid"
rc=$?
[ "$rc" = 0 ] || not_ok "agent exit" "exit $rc"
old_pid=$agent_pid
agent_pid=

# The agents are gone: the watchers with --no-reconnect ended (exit 0).
wait "$w1"; r1=$?
wait "$w2"; r2=$?
[ "$r1" = 0 ] && [ "$r2" = 0 ] && grep -q 'end of input' "$work/w1.err" &&
	ok "--no-reconnect watchers: exit 0 when the agent stops (end of input)" ||
	not_ok "watchers' exit" "w1 $r1, w2 $r2: $(cat "$work/w1.err" "$work/w2.err")"

wait_for 'no agent at' "$work/w4.err" 50
start_agent
wait_ready_n 2 || not_ok "second agent_ready" "$(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
wait_for 'the agent restarted' "$work/w4.err" 50
storm "$cga" "$work/storm-c.out" 1 200
sleep 1
if grep -q "the agent closed the stream" "$work/w4.err" &&
   grep -q "no agent at $sock (connect: .*); retrying" "$work/w4.err" &&
   grep -q "the agent restarted (pid $agent_pid, started .*; was pid $old_pid); resuming after seq" "$work/w4.err"; then
	ok "across a restart: $(grep -c . "$work/w4.err") lines: $(sed -n 2,4p "$work/w4.err" | cut -c 1-70 | tr '\n' '|')"
else
	not_ok "restart messages" "$(cat "$work/w4.err")"
fi
# Everything of wa's after it connected, the new agent's start records
# (written before it reconnected) and the new storm's denials included.
s0=$(jq -r 'select(.event == "watch_start") | .newest_seq' "$work/w4.out" | head -n 1)
got=$(seqs "$work/w4.out" 'true' | tr '\n' ' ')
want=$(seqs "$log" "(.policy == \"wa\" or .event == \"lost\") and .seq > $s0" | tr '\n' ' ')
dups=$(seqs "$work/w4.out" 'true' | uniq -d | wc -l)
new_policy=$(jq -r "select(.event == \"policy\" and .policy == \"wa\" and .seq > $s0) | .seq" "$log" | tail -n 1)
c_denied=$(sed -n 's/^eperm=//p' "$work/storm-c.out")
if [ -n "$new_policy" ] && [ "$got" = "$want" ] && [ "$dups" = 0 ] &&
   [ "$(seqs "$work/w4.out" '.event == "deny"' | wc -l)" = "$c_denied" ]; then
	ok "after the restart: every wa record since seq $s0 ($(echo "$got" | wc -w)), the new agent's policy record (seq $new_policy) and all $c_denied new denials, none twice"
else
	not_ok "records across the restart" "got $(echo "$got" | wc -w), want $(echo "$want" | wc -w) ($dups twice; policy ${new_policy:-none}, c eperm ${c_denied:-?}): $(cat "$work/w4.err")"
fi
kill -TERM "$w4"
wait "$w4"
rc=$?
[ "$rc" = 0 ] && ok "SIGTERM: exit 0" || not_ok "watch SIGTERM" "exit $rc"
pids=

# The two watchers: exactly their subsets, by seq, with the lost records.
check_subset() { # NAME OUT FILTER SINCE
	seqs "$2" 'true' > "$work/got"
	seqs "$log" "($3 or .event == \"lost\") and .seq > $4" > "$work/want"
	wl=$(jq -r 'select(.event == "watch_lost") | .count' "$2" | awk '{ s += $1 } END { print s + 0 }')
	sort "$work/got" > "$work/got.s"
	sort "$work/want" > "$work/want.s"
	extra=$(comm -23 "$work/got.s" "$work/want.s" | wc -l)
	ng=$(wc -l < "$work/got")
	nw=$(wc -l < "$work/want")
	dups=$(uniq -d "$work/got" | wc -l)
	if [ "$nw" -ge 300 ] && [ "$extra" = 0 ] && [ "$dups" = 0 ] && [ $((ng + wl)) = "$nw" ]; then
		ok "$1: exactly its $nw records of the log ($ng received + $wl in watch_lost), nothing else"
	else
		not_ok "$1" "received $ng + watch_lost $wl, want $nw; $extra not in the subset, $dups twice"
	fi
}
s1=$(jq -r 'select(.event == "watch_start") | .newest_seq' "$work/w1.out")
s2=$(jq -r 'select(.event == "watch_start") | .newest_seq' "$work/w2.out")
# Up to the first agent's stop: the second's records came after.
stop1=$(jq -r 'select(.event == "agent_stop") | .seq' "$log" | head -n 1)
check_subset "watcher --policy wa --kind connect" "$work/w1.out" \
	".policy == \"wa\" and .kind == \"connect\" and .seq < $stop1" "$s1"
[ "$(cat "$work/connects.out")" = 300 ] || not_ok "connects" "$(cat "$work/connects.out")"
check_subset "watcher --cgroup '*-b' --event deny,audit" "$work/w2.out" \
	"((.cgroup // \"\") | test(\"-b\$\")) and (.event == \"deny\" or .event == \"audit\") and .seq < $stop1" "$s2"
other=$(jq -r 'select(has("seq")) | select(.policy != "wa" and .event != "lost") | .seq' "$work/w1.out" | wc -l)
[ "$other" = 0 ] || not_ok "watcher 1" "$other records of other policies"

# The stalled watcher: watch_lost, dropped, what it got is in the log.
last=$(tail -n 1 "$work/stall.out")
nlost=$(grep -c '"event":"watch_lost"' "$work/stall.out")
case $last in
*'"event":"watch_lost"'*'"dropped":true'*)
	ok "the stalled watcher: $nlost watch_lost lines, the last one \"dropped\": $(echo "$last" | jq -c '{count, first_seq, last_seq}')" ;;
*)
	not_ok "stalled watcher" "its last line: $(echo "$last" | head -c 300)" ;;
esac
grep -q 'dropping a watcher (fd [0-9]*): ' "$work/agent.err" &&
	ok "the agent says why it dropped it: $(grep -o 'dropping a watcher.*' "$work/agent.err" | head -n 1 | cut -c 1-90)" ||
	not_ok "drop message" "$(grep watch "$work/agent.err" | head -n 3)"
seqs "$work/stall.out" 'true' | sort > "$work/sgot"
seqs "$log" 'true' | sort > "$work/sall"
sbad=$(comm -23 "$work/sgot" "$work/sall" | wc -l)
[ "$sbad" = 0 ] && [ -s "$work/sgot" ] &&
	ok "the stalled watcher's $(wc -l < "$work/sgot") records are all in the log" ||
	not_ok "stalled records" "$sbad not in the log"

# The log: complete, and the denials = the datagrams refused.
jq -r 'select(has("seq")) | .seq' "$log" | sort -n > "$work/seqs"
dups=$(uniq -d "$work/seqs" | wc -l)
first=$(head -n 1 "$work/seqs")
last=$(tail -n 1 "$work/seqs")
count=$(wc -l < "$work/seqs")
lost=$(lost_sum "$log")
[ "$dups" = 0 ] && [ $((last - first + 1 - count)) = "$lost" ] &&
	ok "the log: seq $first..$last, $count records, none twice, gaps = lost ($lost)" ||
	not_ok "the log's seq" "$count records span $first..$last, $dups twice, lost $lost"
eperm=$(cat "$work"/storm-[abc].out | sed -n 's/^eperm=//p' | awk '{ s += $1 } END { print s + 0 }')
eperm=$((eperm + $(cat "$work/connects.out")))
denied=$(grep -c '"event":"deny","kind":"\(sendmsg\|connect\)"' "$log")
[ "$eperm" -gt 0 ] && [ "$eperm" = $((denied + lost)) ] &&
	ok "refused $eperm = logged $denied + lost $lost" ||
	not_ok "refused = logged + lost" "refused $eperm, logged $denied, lost $lost"

# No agent, --no-reconnect: exit 1, the fix named.
agent_end
agent_pid=
"$STOCKADE" watch --socket "$sock" --no-reconnect > /dev/null 2> "$work/na.err"
rc=$?
[ "$rc" = 1 ] && grep -q "no agent at $sock (connect: .*); start stockade agent" "$work/na.err" &&
	ok "no agent, --no-reconnect: exit 1, $(head -n 1 "$work/na.err" | cut -c 1-100)" ||
	not_ok "no agent" "exit $rc: $(cat "$work/na.err")"
[ ! -e "$sock" ] && ok "the agent removed its socket on exit" || not_ok "socket left" "$(ls -l "$sock")"
others=$(grep -c ': error: ' "$work/agent.err")
[ "$others" = 0 ] && ok "no error from the agents" ||
	not_ok "errors" "$(grep ': error: ' "$work/agent.err" | head -n 3 | tr '\n' ' ')"

summary
