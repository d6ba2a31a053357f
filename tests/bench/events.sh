#!/bin/sh
# Benchmark, section `events` (issue 7, part 3): the event pipeline, native
# on this host. Run as root from the repository top, after `make`:
#
#   tests/bench/events.sh ROWS_FILE        (BENCH_TINY=1: a few seconds)
#
# A sandbox whose policy denies every destination, and in it build/tools/
# storm sending UDP datagrams with sendto(): each call fails with EPERM and
# makes exactly one `deny` record through the ring buffer. For each ring
# size (--ring-size 1M, 4M, 16M: a fresh agent and pin directory each, as
# the agent refuses a pinned ring of another size), from 1 and then 2
# threads:
#   max    an unthrottled storm for 10 s;
#   100k   a storm paced to 100,000 denials/s in all for 10 s;
# and once per ring
#   drain  the logger alone: the agent is stopped (SIGSTOP) while one
#          thread fills the ring to 90% (no loss), then resumed; the rate
#          is records / time from SIGCONT until the ring is empty. The
#          storms above share the host's 2 cores with the agent, and on
#          this host they cannot produce 1M denials/s at all; this row
#          gives the logger's own capacity, with a core to itself.
# After each storm the agent drains (ring empty, every loss reported), and
# the run is valid only if
#   produced (the kernel's ev_produced, grown over the storm)
#     == denied sendto()s the storm counted
#     == logged + lost, exactly,
# where logged is the number of `deny` lines in the agent's --log FILE and
# lost the sum of `count` over its `lost` lines: what the agent actually
# wrote, not one of its own counters (its `logged` counter is bumped once a
# record is formatted, before the write, so it would not prove the write).
#
# Where the records go: --log FILE on the root file system (ext4 on the
# machine's disk, here build/bench/raw/events/agent.log), as a deployment
# writes /var/log/stockade.jsonl, not tmpfs or /dev/null. The agent writes
# every record to stdout as well; stdout goes to /dev/null here (under
# systemd it would go to the journal, which costs far more at these rates:
# a deployment that keeps --log should send stdout elsewhere). The log is
# truncated (the agent appends with O_APPEND) before each storm so the disk
# holds one storm's records at a time.
#
# Figures (rows in section `events`):
#   events/s logged      records the agent had written to the log when the
#                        storm ended, per second of storm: log bytes at the
#                        end (sampled by storm) / mean line length
#                        (log bytes / lines after the drain) / storm time.
#   logged/s before the first loss
#                        the same, up to the first loss: storm samples the
#                        kernel's ev_lost every 250 us in the storm's first
#                        second (every 5 ms after); at the first sample that
#                        sees it grow (time t_loss from the storm's start),
#                        it records the log's size, and the rate is
#                        (log bytes then / mean line length) / t_loss. A
#                        storm with no loss at all reports its whole logged
#                        rate, which is then only a lower bound: the storm,
#                        not the logger, set the pace (the note says so).
#   agent CPU            utime+stime of the agent (/proc/PID/stat) from the
#                        storm's start until it has drained, divided by the
#                        storm's wall time: the cores its logging took.
#   peak RSS             VmHWM of the agent, reset (clear_refs 5) at each
#                        storm's start; the row gives the largest per ring.
# Goals: zero loss at 100k/s (the achieved rate is in the note); >= 1M
# events/s logged before the first loss; agent CPU <= 0.1 core at 100k/s.
# With BENCH_TINY=1 every storm lasts 0.25 s and no goal is judged; the
# produced == logged + lost checks still are (--required), and a broken
# step still fails the run.
#
# The host has 2 cores: with 2 storm threads (and storm's own sampling
# thread) the agent competes for CPU with the storm it logs.
set -u

rows=${1:?usage: tests/bench/events.sh ROWS_FILE}
STOCKADE=${STOCKADE:-./stockade}
TOOLS=${TOOLS:-build/tools}
raw=build/bench/raw/events
bpffs=/sys/fs/bpf/stockade-bench-events
name=stockade-bench-events
tiny=${BENCH_TINY:-0}
[ "$tiny" = 1 ] && secs=0.25 || secs=10
rate=100000
# A port the policy does not allow (it allows none): each sendto is denied.
port=9

fs_at() { awk -v d="$1" '$2 == d { t = $3 } END { print t }' /proc/mounts; }
die() { echo "bench/events: $*" >&2; exit 1; }

for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	if [ "$(fs_at "$d")" = cgroup2 ]; then
		cgroot=$d
		break
	fi
done
[ -n "${cgroot:-}" ] || die "no cgroup2 mount found; mount one (mount -t cgroup2 none /sys/fs/cgroup)"
if [ "$(fs_at /sys/fs/bpf)" != bpf ]; then
	mount -t bpf bpf /sys/fs/bpf || die "cannot mount bpffs at /sys/fs/bpf"
fi
[ -x "$STOCKADE" ] && [ -x "$TOOLS/storm" ] && [ -x "$TOOLS/benchstat" ] ||
	die "$STOCKADE or $TOOLS/storm, benchstat missing: run make first"

cg=$cgroot/$name
log=$raw/agent.log
agent_pid=
invalid=0

stop_agent() {
	if [ -n "$agent_pid" ]; then
		# A storm --fill-stopped that broke may have left it stopped.
		kill -CONT "$agent_pid" 2>/dev/null
		kill -TERM "$agent_pid" 2>/dev/null
		wait "$agent_pid" 2>/dev/null
		agent_pid=
	fi
	if [ -d "$bpffs" ]; then
		"$STOCKADE" detach --all --bpffs "$bpffs" --cgroup-root "$cgroot" \
			> /dev/null 2>> "$raw/detach.err" ||
			{ echo "bench/events: detach --all --bpffs $bpffs failed: $(cat "$raw/detach.err")" >&2; return 1; }
	fi
	return 0
}

cleanup() {
	stop_agent
	if [ -d "$cg" ]; then
		while read -r p; do echo "$p" > "$cgroot/cgroup.procs"; done \
			< "$cg/cgroup.procs" 2>/dev/null
		rmdir "$cg" 2>/dev/null
	fi
	# The last storm's records: up to gigabytes, and summarised already.
	[ -f "$log" ] && : > "$log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rm -rf "$raw"
mkdir -p "$raw/policy" || die "cannot create $raw"
cat > "$raw/policy/bench-events.yaml" <<EOF
# tests/bench/events.sh: every destination denied, so that each sendto()
# of the storm makes one deny record.
name: bench-events
mode: enforce
cgroups:
  - /$name
network:
  default: deny
EOF
# Left over from a broken run.
[ -d "$bpffs" ] && "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
mkdir -p "$cg" || die "cannot create the sandbox cgroup $cg"

# value NAME VALUE UNIT [GOAL] [NOTE]: one row; goals only on full runs.
value() {
	set -- "$@" "" ""
	if [ -n "$4" ] && [ "$tiny" != 1 ]; then
		"$TOOLS/benchstat" value --out "$rows" --section events --name "$1" \
			--value "$2" --unit "$3" --goal "$4" ${5:+--note "$5"}
	else
		"$TOOLS/benchstat" value --out "$rows" --section events --name "$1" \
			--value "$2" --unit "$3" ${5:+--note "$5"}
	fi || die "benchstat value failed for '$1'"
}

# key FILE K: the value of "K=..." in storm's output.
key() { sed -n "s/^$2=//p" "$1"; }

start_agent() {
	: > "$log"
	"$STOCKADE" agent --allow-degraded --policy "$raw/policy" --bpffs "$bpffs" \
		--cgroup-root "$cgroot" --ring-size "$1" --log "$log" \
		--state "$raw/state.json" > /dev/null 2> "$raw/agent-$1.err" &
	agent_pid=$!
	n=0
	while ! grep -q '"event":"agent_ready"' "$log" 2>/dev/null; do
		n=$((n + 1))
		kill -0 "$agent_pid" 2>/dev/null && [ "$n" -le 100 ] ||
			die "the agent (--ring-size $1) did not become ready: $(cat "$raw/agent-$1.err")"
		sleep 0.1
	done
}

# storm RING THREADS MODE: one storm, checked, its rows appended.
storm() {
	ring=$1 thr=$2 mode=$3
	tag=$ring-${thr}t-$mode
	out=$raw/$tag.out
	case $mode in
	max) pace= ;;
	drain) pace=--fill-stopped ;;
	*) pace="--rate $rate" ;;
	esac
	# Idle and drained before it (agent_ready, or the previous storm).
	: > "$log"
	# Inside a private network namespace with only lo up, joined to the
	# sandbox only after `ip` ran (its netlink socket is not judged).
	unshare -n sh -c 'ip link set lo up && echo $$ > "$1/cgroup.procs" && shift && exec "$@"' \
		sh "$cg" "$TOOLS/storm" --bpffs "$bpffs" --dst 127.0.0.1 "$port" \
		--threads "$thr" --seconds "$secs" $pace --agent-pid "$agent_pid" \
		--log "$log" --samples "$raw/$tag.samples" > "$out" 2> "$raw/$tag.err"
	rc=$?
	[ "$rc" = 0 ] || die "storm $tag failed (exit $rc): $(cat "$raw/$tag.err")"
	kill -0 "$agent_pid" 2>/dev/null || die "the agent died during storm $tag: $(tail -n 5 "$raw/agent-$ring.err")"

	sent=$(key "$out" sent) eperm=$(key "$out" eperm) produced=$(key "$out" produced)
	lost_k=$(key "$out" lost) storm_ns=$(key "$out" storm_ns) achieved=$(key "$out" rate)
	# What the agent wrote.
	lines=$(wc -l < "$log")
	bytes=$(wc -c < "$log")
	logged=$(grep -c -F '"event":"deny","kind":"sendmsg","policy":"bench-events"' "$log")
	lost_l=$(grep -F '"event":"lost"' "$log" | tee "$raw/$tag.lost" |
		sed -n 's/.*"count":\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
	head -n 2 "$log" > "$raw/$tag.head"
	others=$((lines - logged - $(wc -l < "$raw/$tag.lost")))
	echo "logged=$logged lost_logged=$lost_l log_lines=$lines log_bytes=$bytes other_lines=$others" >> "$out"
	[ "$others" = 0 ] || grep -v -F '"event":"deny","kind":"sendmsg"' "$log" | grep -v -F '"event":"lost"' |
		head -n 20 > "$raw/$tag.other"

	case $mode in
	max) label="ring $ring, $thr thread$([ "$thr" = 1 ] || echo s), unthrottled" ;;
	drain) label="ring $ring, backlog drain" ;;
	*) label="ring $ring, $thr thread$([ "$thr" = 1 ] || echo s), 100k/s" ;;
	esac
	# Every mismatch counts: produced vs the storm's denials, produced vs
	# logged + lost, the lost records vs the kernel's loss counter.
	diff=$(awk -v p="$produced" -v e="$eperm" -v g="$logged" -v l="$lost_l" -v k="$lost_k" '
		function abs(x) { return x < 0 ? -x : x }
		BEGIN { print abs(p - e) + abs(p - g - l) + abs(l - k) }')
	[ "$diff" = 0 ] || { invalid=1; echo "bench/events: $tag: produced $produced, denied $eperm, logged $logged, lost $lost_l (kernel $lost_k): not equal" >&2; }
	"$TOOLS/benchstat" value --out "$rows" --section events --required --goal "<=0" \
		--name "$label: produced == logged + lost" --value "$diff" --unit mismatches \
		--note "produced $produced (denied sendto $eperm), logged $logged, lost $lost_l (kernel counted $lost_k)" ||
		die "benchstat value failed"
	# Figures from the samples and the log.
	cpu=$(awk -v t="$(key "$out" agent_cpu_ticks)" -v hz="$(key "$out" clk_tck)" -v ns="$storm_ns" \
		'BEGIN { printf "%.4f", t / hz / (ns / 1e9) }')
	hwm=$(key "$out" agent_hwm_kb)
	echo "$ring $hwm" >> "$raw/hwm"
	first=$(key "$out" first_loss_ns)
	if [ "$mode" = drain ]; then
		value "$label: logger alone, events/s" "$(key "$out" drain_rate)" "events/s" "" \
			"$produced records written in $(awk -v ns="$(key "$out" drain_ns)" 'BEGIN { printf "%.1f", ns / 1e6 }') ms after SIGCONT"
	elif [ "$mode" = max ]; then
		eval "$(awk -v b="$bytes" -v l="$lines" -v eb="$(key "$out" storm_end_log_bytes)" \
			-v lb="$(key "$out" at_loss_log_bytes)" -v ns="$storm_ns" -v fl="$first" '
			BEGIN {
				m = b / l
				printf "logged_rate=%.0f\n", eb / m / (ns / 1e9)
				if (fl > 0) printf "loss_rate=%.0f\n", lb / m / (fl / 1e9)
				else printf "loss_rate=%.0f\n", eb / m / (ns / 1e9)
			}')"
		value "$label: events/s logged" "$logged_rate" "events/s" "" \
			"produced $(awk -v p="$produced" -v ns="$storm_ns" 'BEGIN { printf "%.0f", p / (ns / 1e9) }')/s, lost $lost_k of $produced; agent CPU $cpu cores"
		if [ "$first" -gt 0 ]; then
			value "$label: logged/s before the first loss" "$loss_rate" "events/s" ">=1000000" \
				"first loss $(awk -v f="$first" 'BEGIN { printf "%.1f", f / 1e6 }') ms into the storm"
		else
			value "$label: logged/s before the first loss" "$loss_rate" "events/s" ">=1000000" \
				"no loss: a lower bound, the storm set the pace"
		fi
	else
		value "$label: events lost" "$lost_k" events "<=0" \
			"achieved $achieved/s over $(awk -v ns="$storm_ns" 'BEGIN { printf "%.2f", ns / 1e9 }') s, $produced denials"
		value "$label: agent CPU" "$cpu" cores "<=0.1" "utime+stime from the storm's start to drained / storm time"
	fi
}

for ring in 1M 4M 16M; do
	start_agent "$ring"
	for thr in 1 2; do
		storm "$ring" "$thr" max
		storm "$ring" "$thr" 100k
	done
	storm "$ring" 1 drain
	"$STOCKADE" status --json --bpffs "$bpffs" --cgroup-root "$cgroot" \
		--state "$raw/state.json" > "$raw/status-$ring.json" 2>&1
	stop_agent || exit 1
	hwm=$(awk -v r="$ring" '$1 == r && $2 > m { m = $2 } END { print m + 0 }' "$raw/hwm")
	value "ring $ring: agent peak RSS (VmHWM) over its storms" \
		"$(awk -v k="$hwm" 'BEGIN { printf "%.1f", k / 1024 }')" MiB
done
[ "$invalid" = 0 ] || die "produced != logged + lost in some storm: the run is invalid (see $raw/*.out)"
exit 0
