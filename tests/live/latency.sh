#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# The main loop's latency (agent/loop.c) on a real kernel, host only (make
# live-test): the agent wakes on a ready fd or a timer, never on a fixed
# tick, so what it is told is handled at once, even while it writes a
# denial storm's records.
#
# A storm runs from the sandbox the whole time (netprobe sendto, 200,000
# refused datagrams a round, round after round). Meanwhile, SAMPLES (15)
# times each:
#   a. SIGHUP (unchanged files): from kill() to the `reload` record's ts
#      (trigger signal), the end of that reload: reading and comparing the
#      policy files included;
#   b. a policy file replaced by a rename (another allowed port): from
#      rename() to the `reload` record's switch_start_ns (trigger inotify),
#      less the reload's settling delay (RELOAD_SETTLE_MS, 200: an
#      editor's save is several writes), so what is left is inotify's
#      handling and the new set's parse and compile;
#   c. a new cgroup below a watched selector (/T-w/job-*): from mkdir() to
#      its `attach` record's ts (classified_by inotify), its programs
#      attached.
# The time is taken by the process that makes the call, just before it
# (build/tools/stamp), on the clock of the records' ts (CLOCK_REALTIME).
# Each kind passes if its median is <= LIMIT_MS (10); every sample is
# printed (min, median, p90, max). Why this is not a flaky timing test: a
# median of 15 tolerates 7 samples lost to a host hiccup (the other
# engineer's VM, a page-cache flush), while the fault it is for, a loop
# that looks at signals and inotify only between ticks or behind a
# sleep, moves every sample, and the median with them, by the tick (the
# old loop: up to 100 ms, 50 on average).
#
# Then, with the storm over, the agent idles IDLE_SECONDS (10): its
# voluntary context switches (/proc/PID/status; each sleep in epoll_wait
# that ends is one) must stay <= IDLE_MAX (30). Its real timers here are
# the 5 s interval that checks whether a walk of the tree is due, and
# the limits' retry, every 30 s, of *.events files missing on this
# host's controller-less cgroup2 (a watched one is read only when it
# changes): 2 or 3 in 10 s. A 100 ms tick is 100.
#
# Environment: STOCKADE, TOOLS (netprobe, stamp), CGROUP_ROOT (detected
# when unset), STOCKADE_AGENT_FLAGS (default --allow-degraded), SAMPLES,
# LIMIT_MS, IDLE_SECONDS, IDLE_MAX; STORM=0 measures without the storm.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
SAMPLES=${SAMPLES:-15}
LIMIT_MS=${LIMIT_MS:-10}
IDLE_SECONDS=${IDLE_SECONDS:-10}
IDLE_MAX=${IDLE_MAX:-30}
RELOAD_SETTLE_MS=200	# agent/reload.c check_inotify()
probe=$TOOLS/netprobe
stamp=$TOOLS/stamp
need_cgroup2 latency
need_bpffs latency
[ -x "$stamp" ] || { echo "latency: $stamp missing: make tools" >&2; exit 1; }

tag=stockade-lat-$$
bpffs=/sys/fs/bpf/$tag
cg=$CGROUP_ROOT/$tag		# the storm's sandbox, selected by name
top=$CGROUP_ROOT/$tag-w		# watched: its job-* are selected as they appear
work=$(mktemp -d /tmp/stockade-latency.XXXXXX)
log=$work/agent.log
agent_pid=
storm_pid=
filter_pid=

cleanup() {
	touch "$work/stop"
	[ -n "$storm_pid" ] && wait "$storm_pid" 2>/dev/null
	if [ -n "$agent_pid" ]; then
		kill -9 "$agent_pid" 2>/dev/null
		wait "$agent_pid" 2>/dev/null
	fi
	[ -n "$filter_pid" ] && wait "$filter_pid" 2>/dev/null
	[ -d "$bpffs" ] && "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
	for c in "$top"/job-* "$top" "$cg"; do
		[ -d "$c" ] || continue
		while read -r p; do echo "$p" > "$CGROUP_ROOT/cgroup.procs"; done \
			< "$c/cgroup.procs" 2>/dev/null
		rmdir "$c" 2>/dev/null
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# count PATTERN: lines of the log that match.
count() {
	n=$(grep -c "$1" "$log" 2>/dev/null)
	echo "${n:-0}"
}

# wait_more PATTERN N: until more than N lines match (5 s at most).
wait_more() {
	w=0
	while [ "$(count "$1")" -le "$2" ]; do
		w=$((w + 1))
		[ "$w" -gt 500 ] && return 1
		sleep 0.01
	done
	return 0
}

# nth PATTERN N: the Nth line that matches.
nth() { grep "$1" "$log" | sed -n "${2}p"; }

# ts_ns LINE: the record's ts, in ns since the epoch.
ts_ns() {
	date -d "$(echo "$1" | sed -n 's/.*"ts":"\([^"]*\)".*/\1/p')" +%s%N
}

# us A B: B - A, ns in, microseconds out.
us() { echo $((($2 - $1) / 1000)); }

# judge NAME FILE: FILE holds one latency (us) per line, or "timeout".
judge() {
	if grep -q timeout "$2"; then
		not_ok "$1" "$(grep -c timeout "$2") of $SAMPLES not handled within 5 s"
		return
	fi
	sort -n "$2" > "$2.sorted"
	n=$(wc -l < "$2.sorted")
	med=$(sed -n "$(((n + 1) / 2))p" "$2.sorted")
	p90=$(sed -n "$(((n * 9 + 9) / 10))p" "$2.sorted")
	min=$(head -n 1 "$2.sorted")
	max=$(tail -n 1 "$2.sorted")
	ms() { awk -v u="$1" 'BEGIN { printf "%.1f", u / 1000 }'; }
	dist="min $(ms "$min") median $(ms "$med") p90 $(ms "$p90") max $(ms "$max") ms"
	echo "# $1 (ms): $(awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $1 / 1000 }' "$2.sorted")"
	if [ "$n" -eq "$SAMPLES" ] && [ "$med" -le $((LIMIT_MS * 1000)) ]; then
		ok "$1: $n samples, $dist"
	else
		not_ok "$1" "$n samples, $dist (median limit $LIMIT_MS ms)"
	fi
}

# policy PORT: one policy over the storm's sandbox and the watched jobs,
# written whole to a dot file (not a policy), which policy_mv renames in.
policy() {
	cat > "$work/pol/.p.tmp" <<EOF
name: lat
mode: enforce
cgroups: [/$tag, /$tag-w/job-*]
network:
  default: deny
  allow:
    - cidr: 127.0.0.1/32
      ports: [$1]
      proto: tcp
EOF
}

mkdir "$work/pol" "$cg" "$top" || { echo "latency: cannot create $cg, $top" >&2; exit 1; }
policy 8080
mv "$work/pol/.p.tmp" "$work/pol/p.yaml"
# Denials go to the pipe, and only the rest to the log: a storm writes
# ~100 MB of records a minute, which grep would read again and again.
: > "$work/storm.out"
mkfifo "$work/out"
grep --line-buffered -v '"event":"deny"' < "$work/out" > "$log" &
filter_pid=$!
# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --bpffs "$bpffs" --detach-on-exit \
	--policy "$work/pol" > "$work/out" 2> "$work/agent.err" &
agent_pid=$!
if wait_more '"event":"agent_ready"' 0; then
	ok "agent_ready"
else
	not_ok "agent_ready" "$(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
	echo "$passed passed, $failed failed"
	exit 1
fi

# The storm, until $work/stop (STORM=0: none, to compare).
(
	while [ "${STORM:-1}" != 0 ] && [ ! -e "$work/stop" ]; do
		"$probe" --netns --cgroup "$cg" sendto udp 127.0.0.2 5353 --count 200000 \
			>> "$work/storm.out" 2>&1
	done
) &
storm_pid=$!
sleep 1
cpu0=$(awk '{ print $14 + $15 }' "/proc/$agent_pid/stat")
t_cpu0=$(date +%s%N)

# a. SIGHUP
: > "$work/a"
i=0
while [ "$i" -lt "$SAMPLES" ]; do
	i=$((i + 1))
	c=$(count '"event":"reload"')
	t0=$("$stamp" kill "$agent_pid" 1)
	if wait_more '"event":"reload"' "$c"; then
		line=$(nth '"event":"reload"' $((c + 1)))
		case $line in *'"trigger":"signal"'*) ;; *) echo "# a: not a signal reload: $line" ;; esac
		us "$t0" "$(ts_ns "$line")" >> "$work/a"
	else
		echo timeout >> "$work/a"
	fi
	sleep 0.05
done

# b. a policy file changed (inotify): alternating ports, so each reload
# applies (an unchanged one is not logged for inotify).
: > "$work/b"
i=0
while [ "$i" -lt "$SAMPLES" ]; do
	i=$((i + 1))
	policy $((8080 + i % 2))
	c=$(count '"event":"reload"')
	t0=$("$stamp" rename "$work/pol/.p.tmp" "$work/pol/p.yaml")
	if wait_more '"event":"reload"' "$c"; then
		line=$(nth '"event":"reload"' $((c + 1)))
		case $line in *'"trigger":"inotify"'*) ;; *) echo "# b: not an inotify reload: $line" ;; esac
		sw=$(echo "$line" | sed -n 's/.*"switch_start_ns":\([0-9]*\).*/\1/p')
		if [ -n "$sw" ]; then
			echo $(((sw - t0) / 1000 - RELOAD_SETTLE_MS * 1000)) >> "$work/b"
		else
			echo "# b: no switch_start_ns: $line"
			echo timeout >> "$work/b"
		fi
	else
		echo timeout >> "$work/b"
	fi
	sleep 0.05
done

# c. a new cgroup below the watched directory (inotify on cgroupfs).
: > "$work/c"
: > "$work/c.pending"
i=0
while [ "$i" -lt "$SAMPLES" ]; do
	i=$((i + 1))
	pat="\"event\":\"attach\",.*\"cgroup\":\"/$tag-w/job-$i\""
	t0=$("$stamp" mkdir "$top/job-$i")
	if wait_more "$pat" 0; then
		line=$(nth "$pat" 1)
		case $line in *'"classified_by":"inotify"'*) ;; *) echo "# c: not classified by inotify: $line" ;; esac
		us "$t0" "$(ts_ns "$line")" >> "$work/c"
		echo "$line" | sed -n 's/.*"pending_ms":\([0-9]*\).*/\1/p' >> "$work/c.pending"
	else
		echo timeout >> "$work/c"
	fi
	sleep 0.05
done

cpu1=$(awk '{ print $14 + $15 }' "/proc/$agent_pid/stat")
t_cpu1=$(date +%s%N)
touch "$work/stop"
wait "$storm_pid"
storm_pid=
denied=$(sed -n 's/^failed=\([0-9]*\) .*/\1/p' "$work/storm.out" | awk '{ s += $1 } END { print s + 0 }')
lost=$(lost_sum "$log")
hz=$(getconf CLK_TCK)
echo "# storm: $denied datagrams refused, $lost records lost; the agent used $(awk -v c=$((cpu1 - cpu0)) -v hz="$hz" -v t=$((t_cpu1 - t_cpu0)) 'BEGIN { printf "%.0f", 100 * c / hz / (t / 1e9) }')% of a core meanwhile"
if [ "$denied" -gt 0 ] || [ "${STORM:-1}" = 0 ]; then
	ok "storm ran throughout ($denied refused)"
else
	not_ok "storm" "no datagram refused: $(tail -n 2 "$work/storm.out" | tr '\n' ' ')"
fi

judge "a. SIGHUP to its reload record" "$work/a"
judge "b. policy file renamed to its reload's switch, less ${RELOAD_SETTLE_MS} ms settling" "$work/b"
judge "c. mkdir below a watched selector to its attach record" "$work/c"
# Printed, not judged: pending_ms counts from the directory's ctime, which
# cgroupfs (kernfs) sets when the inode is first looked up, here by the
# agent itself after the inotify event, not at mkdir(); on a coarse clock.
echo "# c: the attach records' pending_ms (from the first lookup, not mkdir): $(sort -n "$work/c.pending" | tr '\n' ' ')"

# Idle: no fixed tick.
sleep 1
v0=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "/proc/$agent_pid/status")
sleep "$IDLE_SECONDS"
v1=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "/proc/$agent_pid/status")
if [ $((v1 - v0)) -le "$IDLE_MAX" ]; then
	ok "idle: $((v1 - v0)) wakeups in ${IDLE_SECONDS} s (at most $IDLE_MAX; a 100 ms tick makes $((IDLE_SECONDS * 10)))"
else
	not_ok "idle" "$((v1 - v0)) wakeups in ${IDLE_SECONDS} s (at most $IDLE_MAX)"
fi

# Shutdown is unchanged: SIGTERM, agent_stop, exit 0.
kill -TERM "$agent_pid"
wait "$agent_pid"
rc=$?
agent_pid=
wait "$filter_pid"
filter_pid=
if [ "$rc" = 0 ] && grep -q '"event":"agent_stop","signal":15' "$log"; then
	ok "SIGTERM: agent_stop, exit 0"
else
	not_ok "SIGTERM" "exit $rc; $(tail -n 1 "$log")"
fi

summary
