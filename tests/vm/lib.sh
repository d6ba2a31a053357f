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
# The agent and probe-case functions below read and set the sourcing
# script's variables (log, agent, phase, ready...), named where they are.
# shellcheck disable=SC2034,SC2154

RESULTS=${RESULTS:-/tmp/stockade-results}

t_ok() {
	echo "@@STOCKADE ok $1"
	echo "ok $1" >> "$RESULTS"
	t_time "$1"
}

# t_time NAME: when a result came, in $RESULTS.time (uptime, name), for
# t_slowest at the end. read is a builtin: no process per result.
t_time() {
	read -r _tl_up _tl_x < /proc/uptime
	echo "$_tl_up $1" >> "$RESULTS.time"
}

# t_at: "N s (idle M s)", the guest's uptime and, from /proc/uptime's
# second field, how much of it its one vCPU spent idle. Under TCG an idle
# guest costs the host nothing: a section's busy time (its time less its
# idle) is what it takes from the two cores that make test shares, its
# idle time only waits (sleeps, timeouts).
t_at() {
	read -r _tl_up _tl_idle < /proc/uptime
	echo "$_tl_up s (idle $_tl_idle s)"
}

# t_slowest N: the N results that took longest since the one before them
# (an agent start or a probe's wait shows up on the result after it), to
# say where the suite's time goes.
t_slowest() {
	awk 'NR > 1 { printf "%8.1f s  %s\n", $1 - prev, substr($0, index($0, " ") + 1) }
	     { prev = $1 }' "$RESULTS.time" 2>/dev/null | sort -rn | head -n "$1"
}

# t_fail NAME DETAIL...: the detail is squeezed onto the marker's line.
# (sh has no locals: the helpers' names start _tl_, so that a caller's
# own _d or _n survives the call.)
t_fail() {
	_tl_n=$1
	shift
	_tl_d=$(printf '%s' "$*" | tr '\n\r\t' '   ')
	echo "@@STOCKADE fail $_tl_n | ${_tl_d:-failed}"
	echo "fail $_tl_n" >> "$RESULTS"
	t_time "$_tl_n"
}

# t_skip NAME REASON...: a case this kernel cannot run (a hook it lacks):
# counted apart, neither passed nor failed, and the reason printed.
t_skip() {
	_tl_n=$1
	shift
	_tl_d=$(printf '%s' "$*" | tr '\n\r\t' '   ')
	echo "@@STOCKADE skip $_tl_n | ${_tl_d:-skipped}"
	echo "skip $_tl_n" >> "$RESULTS"
	t_time "$_tl_n"
}

# on_kernel NAME SERIES: run NAME on this guest? The sections that are the
# agent's own work over programs both kernels run alike (lifecycle and
# reloads, containers, the host's live and evidence scripts, exec and exit
# records, the cache's hit counts) run on one kernel each, SERIES, so
# that make test, whose two guests run at once, fits its 20 minutes
# (README "Testing"); the sections whose verdicts come from the
# BPF-LSM programs run on both. Elsewhere NAME is a skip that says where
# it runs. VM_APPEND=stockade.live=all (the suite's ALL_KERNELS) runs
# every section on every kernel.
on_kernel() {
	[ -n "${ALL_KERNELS:-}" ] && return 0
	[ "${KERNEL_SERIES:-$(uname -r | cut -d. -f1,2)}" = "$2" ] && return 0
	t_skip "$1" "runs on $2 only, where make test's guests balance; VM_APPEND=stockade.live=all runs it on $(uname -r) too"
	return 1
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

# two_cpus T: the guest has two CPUs or more, else a failed case T/cpus
# (a race needs a second CPU: tests/vm/run.sh boots the two-CPU guests
# with VM_RACE=1) and false.
two_cpus() {
	_cpus=$(grep -c '^processor' /proc/cpuinfo)
	[ "$_cpus" -ge 2 ] && return 0
	t_fail "$1/cpus" "the guest has $_cpus CPU; the race needs 2 (tests/vm/run.sh boots the two-CPU guests with VM_RACE=1)"
	return 1
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
# to the first that fails.
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

short() { printf '%s' "$1" | cut -c 1-400; }

# ---- an agent under test ----
# The script sets agent (its pid), log (its --log) and bpffs (its pins).

_ready_or_dead() {
	grep -q '"event":"agent_ready"' "$log" || ! alive "$agent"
}

# agent_wait_ready: until agent_ready is in the log or the agent is gone
# (at most 60 s: loading the programs is slow under TCG); ready gets the
# record, empty if none came.
agent_wait_ready() {
	wait_for 60 _ready_or_dead
	ready=$(grep '"event":"agent_ready"' "$log" | head -n 1)
}

# agent_kill: SIGKILL the agent, then detach its pins (a killed agent
# leaves them, and so its enforcement, behind).
agent_kill() {
	if [ -n "$agent" ]; then
		kill -9 "$agent" 2>/dev/null
		wait "$agent" 2>/dev/null
	fi
	[ -d "$bpffs" ] && "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
}

# cg_remove DIR...: move each cgroup's processes to the root, remove it.
cg_remove() {
	for _tl_c in "$@"; do
		[ -d "$_tl_c" ] || continue
		while read -r _tl_p; do
			echo "$_tl_p" > "$CGROUP_ROOT/cgroup.procs"
		done < "$_tl_c/cgroup.procs" 2>/dev/null
		rmdir "$_tl_c" 2>/dev/null
	done
}

# t_no_lost: the result $T/no-lost-records (no "lost" record in the log).
t_no_lost() {
	if grep -q '"event":"lost"' "$log"; then
		t_fail "$T/no-lost-records" "$(grep '"event":"lost"' "$log" | head -n 1)"
	else
		t_ok "$T/no-lost-records"
	fi
}

# ---- the race scripts (dcache-race.sh, cgfast-race.sh) ----

# race_verdicts CASE PATH RRC W1RC W2RC: their two writers allowed
# ($work/w1.out, w2.out: $T/writers-allowed), and every one of the
# reader's opens of PATH refused ($work/r.out, benchfile's line
# "r.w NS_PER_OP OPENS DENIED"; RRC its exit status: benchfile exits 1 at
# the first open that does not fail as expected): $T/CASE. Sets opens and
# denied.
race_verdicts() {
	_rc_case=$1 _rc_path=$2 _rc_r=$3
	if [ "$4" = 0 ] && [ "$5" = 0 ]; then
		t_ok "$T/writers-allowed"
	else
		t_fail "$T/writers-allowed" "writer 1 exit $4: $(short "$(cat "$work/w1.out")"); writer 2 exit $5: $(short "$(cat "$work/w2.out")")"
	fi
	# shellcheck disable=SC2046	# split on purpose: the line's fields
	set -- $(grep '^r\.w ' "$work/r.out")
	opens=${3:-0} denied=${4:-0}
	if [ "$_rc_r" = 0 ] && [ "$opens" -gt 0 ] && [ "$opens" = "$denied" ]; then
		t_ok "$T/$_rc_case"
	else
		t_fail "$T/$_rc_case" "the reader's opens of $_rc_path: exit $_rc_r, $(short "$(cat "$work/r.out")")"
	fi
}

# race_records PATH: each refusal has its record, one deny record of PATH
# per denied open ($denied), none lost ($T/records, $T/no-lost-records).
race_records() {
	log_settle "$log"
	_rr_n=$(grep '"event":"deny"' "$log" | grep -c "\"path\":\"$1\"")
	if [ "$_rr_n" = "$denied" ]; then
		t_ok "$T/records"
	else
		t_fail "$T/records" "$_rr_n deny records for $1, $denied opens refused"
	fi
	t_no_lost
}

# ---- helpers outside the sandbox ----

helpers=

# helper VAR NAME ARGS...: start `$probe ARGS` in the background, wait for
# its "ready" line; VAR gets its pid (empty if it did not come up).
helper() {
	_var=$1 _hn=$2
	shift 2
	"$probe" "$@" > "$work/$_hn.out" 2>&1 &
	_hp=$!
	helpers="$helpers $_hp"
	if ! wait_for 5 grep -q '^ready$' "$work/$_hn.out"; then
		echo "$T: helper $_hn did not come up: $(cat "$work/$_hn.out")"
		_hp=
	fi
	eval "$_var=\$_hp"
}

stop_helpers() {
	for _p in $helpers; do
		kill -9 "$_p" 2>/dev/null
		wait "$_p" 2>/dev/null
	done
	helpers=
}

# ---- probe cases: one syscall a case, judged by its result and records ----
# The scripts of the BPF-LSM guarantees (file-scope.sh, ipc.sh, priv.sh,
# netctl.sh) run every case in several phases (enforce in one sandbox,
# outside every sandbox, audit in another...). A phase runs all its probes
# first (kase), then judges every case once the log has settled
# (judge_cases): a missing record costs one settle, never a timeout a case.
#
# The script sets T, probe, work, log and cases (the phase's queue file);
# per phase: phase, cgarg (the probe's --cgroup, empty outside) and base
# (fields every record of the phase has; phase_in sets both). Optional:
#   probe_flags    before cgarg on every probe's line (netctl: --netns)
#   probe_timeout  seconds a probe may take (40)
#   probe_tail     lines of the probe's output kept for a failure (4)
#   enforcing      the phases that want the enforce result ("enforce")
#   skip_ok        a probe that prints SKIP (the VM lacks what the case
#                  needs) passes, and says so
# With notrun set, every case fails at once, saying $why: the count of
# results stays the same whatever broke.

notrun=
why=

# phase_in DIR EVENT POLICY FIELDS: the phase runs in cgroup DIR, and its
# records are EVENT records of POLICY for that cgroup, with FIELDS.
phase_in() {
	cgarg="--cgroup $1"
	base="\"event\":\"$2\" \"policy\":\"$3\" \"cgroup\":\"${1#"$CGROUP_ROOT"}\" $4"
}

# kase_run NAME WANT FIELDS EXTRA PROBE-ARGS...: run the probe now and
# queue the case for judge_cases; WANT is this phase's result.
kase_run() {
	_n=$1 _want=$2 _f=$3 _x=$4
	shift 4
	# shellcheck disable=SC2086
	_out=$(timeout "${probe_timeout:-40}" "$probe" $probe_flags $cgarg "$@" 2>&1)
	_rc=$?
	probe_parse "$_out" "${probe_tail:-4}"
	_det="exit $_rc: $_tail"
	echo "$_n|${_pid:-none}|$_want|$_got|$_f|$_x|$_det" >> "$cases"
}

# probe_parse OUT [N]: from a probe's output, _pid (its first line that
# is exactly pid=DIGITS, else empty), _got (its last line) and _tail (its
# last N lines, 4 by default, on one line: each newline a space, each |
# a /). One awk, where echo | sed | head, echo | tail and echo | tail | tr
# were ten processes: a tenth of a second per case under TCG, over
# hundreds of cases in each guest.
_nl='
'
probe_parse() {
	_pp=$(awk -v n="${2:-4}" '
		!seen && /^pid=[0-9]+$/ { pid = substr($0, 5); seen = 1 }
		{ line[NR] = $0 }
		END {
			for (i = (NR > n ? NR - n + 1 : 1); i <= NR; i++) {
				l = line[i]
				gsub(/\|/, "/", l)
				t = t l " "
			}
			# The | after the tail keeps an empty one from
			# losing its newline to $(...).
			printf "%s\n%s\n%s|", pid, line[NR], t
		}' <<EOF
$1
EOF
)
	_pid=${_pp%%"$_nl"*}
	_pp=${_pp#*"$_nl"}
	_got=${_pp%%"$_nl"*}
	_tail=${_pp#*"$_nl"}
	_tail=${_tail%|}
}

# kase NAME WANT FIELDS EXTRA PROBE-ARGS...
#   WANT    what the probe prints in an enforcing phase (elsewhere OK), or
#           ENFORCE/OTHER when the allowed call still fails further on
#           (e.g. EPERM/ENXIO: a device node with no driver behind it).
#           ANY: not checked; !EPERM: anything but EPERM
#   FIELDS  what the one record must contain, space-separated case
#           patterns (a number ends in [,}] so 12 never matches 123);
#           empty for allowed work: no record in any phase
#   EXTRA   audit only: records a later hook may add once audit mode let
#           the first one pass, as KIND:OP or KIND (enforce stops at the
#           first); or "twice": the kernel asks the same question twice
kase() {
	if [ -n "$notrun" ]; then
		t_fail "$T/$phase/$1" "not run: $why"
		return
	fi
	case " ${enforcing:-enforce} " in
	*" $phase "*) _enf=1 ;;
	*) _enf= ;;
	esac
	_want=$2
	case $_want in
	*/*) [ -n "$_enf" ] && _want=${_want%/*} || _want=${_want#*/} ;;
	*) [ -n "$_enf" ] || _want=OK ;;
	esac
	_n=$1 _f=$3 _x=$4
	shift 4
	kase_run "$_n" "$_want" "$_f" "$_x" "$@"
}

# kase_extra LINE EXTRA: in the audit phase, LINE is a record EXTRA allows.
kase_extra() {
	[ "$phase" = audit ] || return 1
	for _k in $2; do
		case $_k in
		twice) ;;
		*:*) has_all "$1" "\"event\":\"audit\" \"kind\":\"${_k%%:*}\" \"op\":\"${_k#*:}\"" && return 0 ;;
		*) has_all "$1" "\"event\":\"audit\" \"kind\":\"$_k\"" && return 0 ;;
		esac
	done
	return 1
}

# own_records_to FILE PID: the records of a probe's own calls in $log,
# written to FILE, and how many there are (printed). Not its exec and exit
# records, nor the agent's report of fds it held from before confinement
# (agent/preexist.c): every probe has those. One awk, where grep | grep
# and a wc were three processes per case.
own_records_to() {
	: > "$1"
	awk -v p="\"pid\":$2," -v f="$1" 'index($0, p) &&
		!/"event":"(exec|exit|preexisting_fd)"/ { print > f; n++ }
		END { print n + 0 }' "$log"
}

# judge_cases: every queued case of the phase, one result each: the
# probe's result, and its records (outside, or with no FIELDS: none; else
# exactly one with base and FIELDS, besides what EXTRA allows).
judge_cases() {
	[ -f "$cases" ] || return 0
	log_settle "$log"
	while IFS='|' read -r _n _pid _want _got _f _x _det; do
		_name="$T/$phase/$_n"
		_err=
		if [ -n "$skip_ok" ] && [ "$_got" = SKIP ]; then
			echo "$T: $_name skipped: the VM lacks what it needs ($_det)"
			t_ok "$_name"
			continue
		fi
		case $_want in
		ANY) ;;
		'!EPERM') [ "$_got" != EPERM ] && [ -n "$_got" ] ||
			_err="expected anything but EPERM, got '$_got' ($_det)" ;;
		*) [ "$_got" = "$_want" ] || _err="expected $_want, got '$_got' ($_det)" ;;
		esac
		if [ "$_pid" = none ]; then
			t_fail "$_name" "probe printed no pid=N line ($_det)"
			continue
		fi
		_cnt=$(own_records_to "$work/recs" "$_pid")
		if [ "$phase" = outside ] || [ -z "$_f" ]; then
			[ "$_cnt" = 0 ] ||
				_err="${_err:+$_err; }$_cnt record(s) for pid $_pid, want none: $(short "$(head -n 1 "$work/recs")")"
		else
			_want_f="$base \"pid\":$_pid, $_f"
			_hit=0 _odd='' _miss=''
			while IFS= read -r _line; do
				if has_all "$_line" "$_want_f"; then
					_hit=$((_hit + 1))
					continue
				fi
				_why="no $_miss in $(short "$_line")"
				kase_extra "$_line" "$_x" || _odd=${_odd:-$_why}
			done < "$work/recs"
			if [ "$_cnt" = 0 ]; then
				_err="${_err:+$_err; }no record for pid $_pid (want $_f)"
			elif { [ $_hit != 1 ] &&
			       ! { [ "$phase" = audit ] && [ "$_x" = twice ] && [ $_hit = 2 ]; }; } ||
			     [ -n "$_odd" ]; then
				_err="${_err:+$_err; }$_cnt record(s) for pid $_pid, $_hit with every field${_odd:+; $_odd}"
			fi
		fi
		if [ -z "$_err" ]; then
			t_ok "$_name"
		else
			t_fail "$_name" "$_err"
		fi
	done < "$cases"
	rm -f "$cases"
}

# t_start NAME RECORD: where an agent's start went (its agent_ready
# RECORD's startup_ms and bpf_load_ms), on the console (tests/vm/run.sh).
t_start() {
	echo "$2" | awk -v n="$1" '{
		s = $0; sub(/.*"startup_ms": */, "", s); sub(/[^0-9].*/, "", s)
		l = $0; sub(/.*"bpf_load_ms": */, "", l); sub(/[^0-9].*/, "", l)
		if (s != "" && l != "") print "suite: start " n ": " s " ms, " l " ms loading"
	}'
}

# agent_ready_or_fail NAME LOG PID ERRFILE: wait (60 s: loading is slow
# under TCG) for the agent's agent_ready in LOG; ok NAME when it names no
# degraded guarantee, else fail NAME with the agent's last words and
# return 1. Sets ready to the record.
agent_ready_or_fail() {
	_an=$1 _al=$2 _ap=$3 _ae=$4
	wait_for 60 eval 'grep -q "\"event\":\"agent_ready\"" "$_al" || ! alive "$_ap"'
	ready=$(grep '"event":"agent_ready"' "$_al" | head -n 1)
	t_start "$_an" "$ready"
	case $ready in
	*'"degraded":[]'*) t_ok "$_an"; return 0 ;;
	esac
	t_fail "$_an" "want agent_ready with nothing degraded: ${ready:-none}; $(tail -n 3 "$_ae" | tr '\n' ' ')"
	t_show "$_ae"
	return 1
}
