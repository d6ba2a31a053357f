# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Sourced by the in-guest suite scripts (busybox sh). Result markers for
# tests/vm/run.sh, one line each on the console:
#   @@STOCKADE ok NAME
#   @@STOCKADE fail NAME | DETAIL
#   @@STOCKADE skip NAME | REASON
#   @@STOCKADE done passed=N failed=N skipped=N
# NAME may contain spaces (the live tests' names do) but not " | ".
# Each result is also appended to $RESULTS, so scripts run as separate
# processes add up to one count for the final `done` line.

RESULTS=${RESULTS:-/tmp/stockade-results}

t_ok() {
	echo "@@STOCKADE ok $1"
	echo "ok $1" >> "$RESULTS"
}

# t_fail NAME DETAIL...: the detail is squeezed onto the marker's line.
t_fail() {
	_n=$1
	shift
	_d=$(printf '%s' "$*" | tr '\n\r\t' '   ')
	echo "@@STOCKADE fail $_n | ${_d:-failed}"
	echo "fail $_n" >> "$RESULTS"
}

# t_skip NAME REASON...: a case this kernel cannot run (a hook it lacks):
# counted apart, neither passed nor failed, and the reason printed.
t_skip() {
	_n=$1
	shift
	_d=$(printf '%s' "$*" | tr '\n\r\t' '   ')
	echo "@@STOCKADE skip $_n | ${_d:-skipped}"
	echo "skip $_n" >> "$RESULTS"
}

t_done() {
	_p=$(grep -c '^ok ' "$RESULTS" 2>/dev/null)
	_f=$(grep -c '^fail ' "$RESULTS" 2>/dev/null)
	_s=$(grep -c '^skip ' "$RESULTS" 2>/dev/null)
	echo "@@STOCKADE done passed=${_p:-0} failed=${_f:-0} skipped=${_s:-0}"
}

# Show a file on the console for whoever reads the log after a failure.
t_show() {
	echo "---- $1 (last ${2:-40} lines)"
	tail -n "${2:-40}" "$1" 2>/dev/null | sed 's/^/    /'
	echo "----"
}

# alive PID: running, not a zombie (kill -0 succeeds on an unreaped
# child, and the shell reaps background jobs only when it waits for them).
alive() {
	_st=$(sed 's/.*) //; s/ .*//' "/proc/$1/stat" 2>/dev/null)
	[ -n "$_st" ] && [ "$_st" != Z ]
}

# wait_for SECONDS CMD...: poll CMD every 0.2 s until it succeeds.
wait_for() {
	_left=$(($1 * 5))
	shift
	while [ "$_left" -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		_left=$((_left - 1))
	done
	return 1
}

# has_all LINE FIELDS: LINE matches every space-separated case pattern of
# FIELDS (a number ends in [,}] so 12 never matches 123); else sets _miss
# to the first that fails. (file-scope.sh and netctl.sh keep copies of
# their own.)
has_all() {
	for _p in $2; do
		case $1 in
		*$_p*) ;;
		*) _miss=$_p; return 1 ;;
		esac
	done
	return 0
}

# log_settle LOG: until LOG has not grown for 0.6 s (at most 5 s). Records
# come through a ring buffer: judge them once the agent has written all.
log_settle() {
	_last=-1 _same=0 _left=25
	while [ $_left -gt 0 ]; do
		_now=$(wc -l < "$1")
		if [ "$_now" = "$_last" ]; then
			_same=$((_same + 1))
			[ $_same -ge 3 ] && return 0
		else
			_same=0
			_last=$_now
		fi
		sleep 0.2
		_left=$((_left - 1))
	done
}

# agent_ready_or_fail NAME LOG PID ERRFILE: wait (60 s: loading is slow
# under TCG) for the agent's agent_ready in LOG; ok NAME when it names no
# degraded guarantee, else fail NAME with the agent's last words and
# return 1. Sets ready to the record.
agent_ready_or_fail() {
	_an=$1 _al=$2 _ap=$3 _ae=$4
	wait_for 60 eval 'grep -q "\"event\":\"agent_ready\"" "$_al" || ! alive "$_ap"'
	ready=$(grep '"event":"agent_ready"' "$_al" | head -n 1)
	case $ready in
	*'"degraded":[]'*) t_ok "$_an"; return 0 ;;
	esac
	t_fail "$_an" "want agent_ready with nothing degraded: ${ready:-none}; $(tail -n 3 "$_ae" | tr '\n' ' ')"
	t_show "$_ae"
	return 1
}

# agent_gone PID BPFFS: SIGKILL the agent (when PID is set) and detach
# what its pins in BPFFS still enforce: a test's cleanup.
agent_gone() {
	if [ -n "$1" ]; then
		kill -9 "$1" 2>/dev/null
		wait "$1" 2>/dev/null
	fi
	[ ! -d "$2" ] || "$STOCKADE" detach --all --bpffs "$2" > /dev/null 2>&1
}
