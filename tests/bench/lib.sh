# Shared helpers of the benchmark sections (tests/bench/*.sh), sourced:
#   . tests/bench/lib.sh; bench_init SECTION ROWS_FILE
# The section scripts run as root from the repo top (tests/bench/run.sh),
# with ./stockade and build/tools/* built. Every host-level object a
# section makes is named after it, so sections (and the live tests, under
# /tmp/stockade-host.lock) never share a pin dir or a cgroup:
#   pins     /sys/fs/bpf/stockade-bench-SECTION
#   cgroups  CGROUP_ROOT/stockade-bench-SECTION-*
#   samples  build/bench/raw/SECTION/
# POSIX sh (the VM's busybox sh too).

STOCKADE=${STOCKADE:-./stockade}
TOOLS=${TOOLS:-build/tools}
BENCHSTAT=${BENCHSTAT:-$TOOLS/benchstat}
BENCH_TINY=${BENCH_TINY:-0}
AGENT_PID=

bench_fs_at() { awk -v d="$1" '$2 == d { t = $3 } END { print t }' /proc/mounts; }

bench_die() {
	echo "bench $SECTION: $*" >&2
	exit 1
}

# bench_init SECTION ROWS: the variables above, bpffs mounted, a fresh
# raw directory. Sets SECTION, ROWS, CGROUP_ROOT, BPFFS, RAW, CG_PREFIX.
bench_init() {
	SECTION=$1
	ROWS=$2
	[ -n "$ROWS" ] || bench_die "usage: tests/bench/$SECTION.sh ROWS_FILE"
	[ "$(id -u)" = 0 ] || bench_die "needs root (BPF, cgroups, network namespaces)"
	[ -x "$STOCKADE" ] && [ -x "$BENCHSTAT" ] ||
		bench_die "$STOCKADE or $BENCHSTAT missing: run make first"
	if [ -z "${CGROUP_ROOT:-}" ]; then
		for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
			if [ "$(bench_fs_at "$d")" = cgroup2 ]; then
				CGROUP_ROOT=$d
				break
			fi
		done
	fi
	[ -n "${CGROUP_ROOT:-}" ] || bench_die "no cgroup2 mount found"
	if [ "$(bench_fs_at /sys/fs/bpf)" != bpf ]; then
		mount -t bpf bpf /sys/fs/bpf || bench_die "cannot mount bpffs at /sys/fs/bpf"
	fi
	BPFFS=/sys/fs/bpf/stockade-bench-$SECTION
	CG_PREFIX=stockade-bench-$SECTION
	RAW=build/bench/raw/$SECTION
	rm -rf "$RAW"
	mkdir -p "$RAW" || bench_die "cannot create $RAW"
}

bench_tiny() { [ "$BENCH_TINY" = 1 ]; }

# bench_wait_for PATTERN FILE [TENTHS [PID]]: until a line of FILE
# matches; fails after TENTHS tenths of a second, or as soon as process
# PID (the one that writes FILE) is gone without writing it.
bench_wait_for() {
	_n=0
	while ! grep -q "$1" "$2" 2>/dev/null; do
		_n=$((_n + 1))
		[ "$_n" -gt "${3:-300}" ] && return 1
		# Gone or a zombie (not reaped yet: kill -0 still succeeds).
		_st=
		[ -z "${4:-}" ] || _st=$(sed 's/.*) //; s/ .*//' "/proc/$4/stat" 2>/dev/null)
		if [ -n "${4:-}" ] && { [ -z "$_st" ] || [ "$_st" = Z ]; }; then
			grep -q "$1" "$2" 2>/dev/null
			return
		fi
		sleep 0.1
	done
	return 0
}

# bench_agent_start LOG ARGS...: start the agent on this section's pin dir
# (--allow-degraded unless BENCH_AGENT_FLAGS says otherwise: this host
# refuses BPF-LSM) and wait for its agent_ready record in LOG (appended
# to). Sets AGENT_PID. Fails, with the agent's stderr, if it is not ready
# within 60 s, or at once if it exits first.
bench_agent_start() {
	_log=$1
	shift
	# shellcheck disable=SC2086
	"$STOCKADE" agent ${BENCH_AGENT_FLAGS---allow-degraded} --bpffs "$BPFFS" \
		--state "$RAW/agent.state" --log "$_log" "$@" \
		> /dev/null 2> "$RAW/agent.stderr" &
	AGENT_PID=$!
	if ! bench_wait_for '"event":"agent_ready"' "$_log" 600 "$AGENT_PID"; then
		cat "$RAW/agent.stderr" >&2
		bench_die "the agent did not become ready"
	fi
}

# bench_agent_stop: SIGTERM (the agent keeps its pins), then remove all
# enforcement and the pins, so that what follows truly runs without it.
bench_agent_stop() {
	if [ -n "$AGENT_PID" ]; then
		kill -TERM "$AGENT_PID" 2>/dev/null
		wait "$AGENT_PID" 2>/dev/null
		AGENT_PID=
	fi
	if [ -d "$BPFFS" ]; then
		"$STOCKADE" detach --all --bpffs "$BPFFS" > /dev/null 2>> "$RAW/agent.stderr" ||
			{ echo "bench $SECTION: stockade detach --all failed" >&2; return 1; }
	fi
	return 0
}

# bench_cgroup_rm DIR...: move stragglers to the root, remove (deepest
# first: give children before parents).
bench_cgroup_rm() {
	for _d in "$@"; do
		[ -d "$_d" ] || continue
		while read -r _p; do echo "$_p" > "$CGROUP_ROOT/cgroup.procs"; done \
			< "$_d/cgroup.procs" 2>/dev/null
		rmdir "$_d" 2>/dev/null
	done
}

# bench_ratio NAME SAMPLES BASE TEST [GOAL]: a ratio row. In tiny mode
# the goal is not judged (a note says so): tiny counts prove that the
# section works, not what it costs.
bench_ratio() {
	if [ -n "${5:-}" ] && ! bench_tiny; then
		"$BENCHSTAT" ratio --out "$ROWS" --section "$SECTION" --name "$1" \
			--samples "$2" --base "$3" --test "$4" --goal "$5"
	elif [ -n "${5:-}" ]; then
		"$BENCHSTAT" ratio --out "$ROWS" --section "$SECTION" --name "$1" \
			--samples "$2" --base "$3" --test "$4" \
			--note "tiny run: goal $5 not judged"
	else
		"$BENCHSTAT" ratio --out "$ROWS" --section "$SECTION" --name "$1" \
			--samples "$2" --base "$3" --test "$4"
	fi
}

# bench_value NAME VALUE UNIT [GOAL [NOTE]]: a value row, the goal as above.
bench_value() {
	if [ -n "${4:-}" ] && ! bench_tiny; then
		"$BENCHSTAT" value --out "$ROWS" --section "$SECTION" --name "$1" \
			--value "$2" --unit "$3" --goal "$4" ${5:+--note "$5"}
	elif [ -n "${4:-}" ]; then
		"$BENCHSTAT" value --out "$ROWS" --section "$SECTION" --name "$1" \
			--value "$2" --unit "$3" --note "tiny run: goal $4 not judged${5:+; $5}"
	else
		"$BENCHSTAT" value --out "$ROWS" --section "$SECTION" --name "$1" \
			--value "$2" --unit "$3" ${5:+--note "$5"}
	fi
}

# bench_check NAME VALUE WANT NOTE: a required validity row, VALUE must
# be at least WANT (e.g. valid measurements of those made): a run where it
# is not is invalid, and `benchstat report` exits 1.
bench_check() {
	"$BENCHSTAT" value --out "$ROWS" --section "$SECTION" --name "$1" \
		--value "$2" --unit count --goal ">=$3" --required --note "$4"
}
