#!/bin/sh
# tests/bench/net.sh ROWS_FILE: the network section of `make bench`
# (issue 7, part 1), native on this host: the cgroup socket programs.
#
# build/tools/benchnet times, in tight loops, TCP connect+close to a
# loopback listener (SO_LINGER 0), UDP socket+connect+close, and UDP
# sendto to an allowed destination, always to 127.0.0.1 inside a private
# network namespace (only lo up), under six conditions:
#   none   no agent: no agent process, nothing attached, no pins;
#   null   no agent, and a program with no body (tools/lsmnull --cgroup)
#          on each of the eight cgroup hooks stockade attaches to a
#          sandbox, on the caller's own cgroup ($CG_PREFIX-null): what
#          the mechanism itself costs (the kernel's dispatch, which any
#          attached program turns on for every socket, and a program run
#          per hook). A sandbox's figure over null's is stockade's own
#          code plus the agent's presence (out vs none), since null has
#          no agent;
#   out    the agent running, confining the three sandboxes below, with
#          the caller in a cgroup outside every sandbox ($CG_PREFIX-out);
#   r1, r1k, r10k
#          the caller inside a sandbox whose allow list has 1, 1,000 or
#          10,000 rules (tests/bench/gen-policy.sh: distinct destinations,
#          the measured one among them).
#
# How the conditions are interleaved, and why this is honest:
# - One agent confines all three sandboxes at once (three policies, one
#   cgroup each), so moving between r1, r1k, r10k and out is only a
#   matter of which cgroup the measuring process joins: the kernel, the
#   maps and the agent are the same for all four.
# - "none" cannot share a phase with them: an agent that merely idles
#   still wakes up, scans cgroups and holds memory, and that is part of
#   what "outside" must be compared against. So each round has a phase
#   without the agent (stopped, `stockade detach --all`, which removes
#   every program and pin; bpfquery proves nothing is attached to any of
#   our cgroups or the root) and a phase with it (started afresh, its maps
#   rebuilt: each round samples a new map layout too). Odd rounds run the
#   agent phase first, even rounds the no-agent phase, and the four agent
#   conditions rotate their order from round to round, so no condition
#   always runs first, or right after the agent started.
# - "none" runs in the same cgroup as "out", so the two differ only by
#   the agent. "null" shares the no-agent phase, its empty programs
#   attached only while it is measured (attached anywhere, they would
#   turn on the kernel's dispatch for none's sockets too), the order of
#   the two alternating from round to round.
# - On this host (no BPF-LSM) a caller outside every sandbox runs none of
#   stockade's programs: cgroup programs run only below their attach
#   point. "out" therefore measures the agent's indirect cost (its
#   process, its wakeups), and is expected at 1.00x here; with BPF-LSM,
#   outsiders pass through the global LSM programs, which the files
#   section measures in the VM.
#
# Validity (any failure: exit 1, the run is invalid): every timed call
# must succeed and reach the other end (benchnet), a port no rule allows
# must give EPERM inside each sandbox and work outside and without the
# agent, before and after each measurement (benchnet --check-port), and
# the sandbox's pinned counters must show that its programs allowed every
# measured connect and sendto (stockade status --json).
#
# The profile phase after the rounds gives each program's own cost
# (bpf_stats), as value rows: the median of 5 rounds (rotated order), and
# connect4's and sendmsg4's 10k-rules-vs-1 ratio over those rounds; and
# the same for the empty programs, whose run_time_ns is the floor that
# bpf_stats itself puts under any program (two clock reads a run: on
# this host, a virtual machine, more than the lookups they frame).
# Samples: build/bench/raw/net/{tcp,udpconn,sendto}.samples, "ROUND COND
# NS_PER_OP" (each the median of benchnet's batches). BENCH_TINY=1: two
# rounds of tiny batches, goals not judged. BENCH_NET_ROUNDS overrides the
# rounds (default 15), BENCH_CPU pins benchnet to one CPU.
set -u

. tests/bench/lib.sh
bench_init net "${1:-}"

if bench_tiny; then
	rounds=2 prof_rounds=1
	nb=3 tcpb=20 udpb=50 sendb=100
else
	rounds=${BENCH_NET_ROUNDS:-15} prof_rounds=5
	nb=30 tcpb=200 udpb=1000 sendb=2000
fi
[ "$rounds" -ge 2 ] || bench_die "BENCH_NET_ROUNDS must be at least 2"
check_port=5999
out=$CGROUP_ROOT/$CG_PREFIX-out
nullcg=$CGROUP_ROOT/$CG_PREFIX-null
# The hooks agent/cgattach.c attaches to each sandbox cgroup.
NULL_HOOKS="connect4 connect6 sendmsg4 sendmsg6 sock_create egress bind4 bind6"
NULL_PID=
conds_agent="out r1 r1k r10k"
pols=$RAW/policies
log=$RAW/agent.log

cleanup() {
	null_stop
	bench_agent_stop
	bench_cgroup_rm "$out" "$CGROUP_ROOT/$CG_PREFIX-r1" "$CGROUP_ROOT/$CG_PREFIX-r1k" \
		"$CGROUP_ROOT/$CG_PREFIX-r10k" "$nullcg"
}

# null_start / null_stop: the empty programs on $nullcg (tools/lsmnull);
# their links go with the process.
null_start() {
	: > "$RAW/null.out"
	# shellcheck disable=SC2086
	"$TOOLS/lsmnull" --cgroup "$nullcg" $NULL_HOOKS > "$RAW/null.out" 2> "$RAW/null.err" &
	NULL_PID=$!
	bench_wait_for '^ready$' "$RAW/null.out" 100 "$NULL_PID" && return 0
	cat "$RAW/null.err" >&2
	null_stop
	return 1
}
null_stop() {
	[ -n "$NULL_PID" ] || return 0
	kill -TERM "$NULL_PID" 2>/dev/null
	wait "$NULL_PID" 2>/dev/null
	NULL_PID=
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A previous run that died without cleaning up.
AGENT_PID=
bench_agent_stop || bench_die "cannot remove the pins a previous run left at $BPFFS"
mkdir -p "$pols"
for c in out r1 r1k r10k null; do
	d=$CGROUP_ROOT/$CG_PREFIX-$c
	bench_cgroup_rm "$d"
	mkdir "$d" || bench_die "cannot create the cgroup $d"
done
for c in r1:1 r1k:1000 r10k:10000; do
	sh tests/bench/gen-policy.sh "bench-net-${c%%:*}" "/$CG_PREFIX-${c%%:*}" "${c#*:}" \
		> "$pols/${c%%:*}.yaml" || bench_die "generating the ${c#*:}-rule policy failed"
done
"$STOCKADE" check "$pols" > /dev/null || bench_die "the generated policies do not pass stockade check"

# attached DIR: the programs the kernel has attached to DIR itself.
attached() { "$TOOLS/bpfquery" cgroup "$1" | wc -l; }

# connects CGROUP: connect_allowed and sendmsg_allowed of that sandbox.
counts() {
	"$STOCKADE" status --json --bpffs "$BPFFS" | tr '{' '\n' |
		grep "\"cgroup\":\"/$1\"," |
		sed -n 's/.*"connect_allowed":\([0-9]*\),.*"sendmsg_allowed":\([0-9]*\),.*/\1 \2/p'
}

# measure ROUND COND: one benchnet run, its figures appended to the samples.
measure() {
	if [ "$2" = none ] || [ "$2" = out ]; then
		cg=$out expect=open
	elif [ "$2" = null ]; then
		cg=$nullcg expect=open
	else
		cg=$CGROUP_ROOT/$CG_PREFIX-$2 expect=denied
		before=$(counts "$CG_PREFIX-$2")
	fi
	# shellcheck disable=SC2086
	if ! "$TOOLS/benchnet" --netns --cgroup "$cg" ${BENCH_CPU:+--cpu $BENCH_CPU} \
		--batches $nb --tcp-batch $tcpb --udp-batch $udpb --sendto-batch $sendb \
		--check-port $check_port --expect $expect > "$RAW/last.out" 2> "$RAW/last.err"; then
		cat "$RAW/last.err" >&2
		bench_die "round $1, condition $2: benchnet failed (see above)"
	fi
	while read -r op ns; do
		echo "$1 $2 $ns" >> "$RAW/$op.samples"
	done < "$RAW/last.out"
	if [ "$expect" = open ]; then
		valid=$((valid + 1))
		return 0
	fi
	# Every timed and warm-up call went through the sandbox's programs.
	after=$(counts "$CG_PREFIX-$2")
	want_c=$(( (nb + 1) * (tcpb + udpb) )) want_s=$(( (nb + 1) * sendb ))
	set -- "$1" "$2" $before $after
	[ $# = 6 ] || bench_die "round $1, $2: no counters for the sandbox in stockade status"
	[ $(($5 - $3)) = "$want_c" ] && [ $(($6 - $4)) = "$want_s" ] ||
		bench_die "round $1, $2: the sandbox allowed $(($5 - $3)) connects and $(($6 - $4)) sendtos, benchnet made $want_c and $want_s"
	valid=$((valid + 1))
}

agent_phase() {
	: > "$log"
	bench_agent_start "$log" --policy "$pols"
	grep -q '"event":"agent_ready".*"cgroups":3,' "$log" ||
		bench_die "round $1: agent_ready does not report the 3 sandboxes: $(grep agent_ready "$log")"
	[ "$(attached "$out")" = 0 ] || bench_die "round $1: programs attached to $out"
	# Rotate the four conditions: round r starts at the (r mod 4)th.
	k=$(($1 % 4))
	for c in $(echo $conds_agent $conds_agent | cut -d' ' -f$((k + 1))-$((k + 4))); do
		measure "$1" "$c"
	done
	bench_agent_stop || bench_die "round $1: stopping the agent failed"
}

# null_measure ROUND: null, its empty programs attached for it alone.
null_measure() {
	null_start || bench_die "round $1: lsmnull did not attach the empty programs (above)"
	[ "$(attached "$nullcg")" = 8 ] || bench_die "round $1: not the 8 empty programs on $nullcg for null: $("$TOOLS/bpfquery" cgroup "$nullcg" | tr '\n' ' ')"
	measure "$1" null
	null_stop
	[ "$(attached "$nullcg")" = 0 ] || bench_die "round $1: the empty programs are still attached to $nullcg"
}

none_phase() {
	[ ! -e "$BPFFS" ] || bench_die "round $1: $BPFFS still exists without an agent"
	for d in "$CGROUP_ROOT" "$out" "$CGROUP_ROOT/$CG_PREFIX-r1" "$nullcg"; do
		[ "$(attached "$d")" = 0 ] ||
			bench_die "round $1: programs attached to $d in the no-agent phase"
	done
	# none first in rounds 1, 4, 5, 8, ...: the other order in the others,
	# and each order both before and after the agent's phase.
	case $(($1 % 4)) in
	0 | 1) measure "$1" none; null_measure "$1" ;;
	*) null_measure "$1"; measure "$1" none ;;
	esac
}

valid=0
prog_ids=
r=1
while [ "$r" -le "$rounds" ]; do
	if [ $((r % 2)) = 1 ]; then
		agent_phase "$r"
		none_phase "$r"
	else
		none_phase "$r"
		agent_phase "$r"
	fi
	echo "bench net: round $r of $rounds done" >&2
	r=$((r + 1))
done

for op in tcp udpconn sendto; do
	case $op in
	tcp) what="tcp connect+close" g1k='<=1.03' ;;
	udpconn) what="udp socket+connect+close" g1k='<=1.05' ;;
	sendto) what="udp sendto" g1k='<=1.10' ;;
	esac
	s=$RAW/$op.samples
	bench_ratio "$what: outside sandboxes vs no agent" "$s" none out '<=1.01' &&
	bench_ratio "$what: empty programs vs no agent" "$s" none null &&
	bench_ratio "$what: sandbox 1 rule vs no agent" "$s" none r1 &&
	bench_ratio "$what: sandbox 1k rules vs no agent" "$s" none r1k "$g1k" &&
	bench_ratio "$what: sandbox 10k rules vs no agent" "$s" none r10k &&
	bench_ratio "$what: sandbox 10k rules vs 1 rule" "$s" r1 r10k '<=1.02' &&
	bench_ratio "$what: 1k rules vs empty programs" "$s" null r1k ||
		bench_die "benchstat failed on $s"
done
# ---- profile: each program's own cost (kernel.bpf_stats_enabled) ----
# A separate phase, since the statistics cost time themselves: one agent,
# one benchnet run per sandbox, and the programs' run_time_ns/run_cnt
# deltas around it (the programs are shared by the three sandboxes, so
# one sandbox at a time). The sysctl is global; it is put back on exit.
# prog_snap ID...: "NAME RUN_TIME_NS RUN_CNT" of each program.
prog_snap() {
	for id in "$@"; do
		bpftool -j prog show id "$id" | awk '{
			n = t = c = 0
			if (match($0, /"name":"[^"]*"/)) n = substr($0, RSTART + 8, RLENGTH - 9)
			if (match($0, /"run_time_ns":[0-9]+/)) t = substr($0, RSTART + 14, RLENGTH - 14)
			if (match($0, /"run_cnt":[0-9]+/)) c = substr($0, RSTART + 10, RLENGTH - 10)
			print n, t, c }'
	done
}
stats_old=$(sysctl -n kernel.bpf_stats_enabled) || bench_die "cannot read kernel.bpf_stats_enabled"
trap 'sysctl -qw kernel.bpf_stats_enabled=$stats_old; cleanup' EXIT
: > "$log"
bench_agent_start "$log" --policy "$pols"
prog_ids=$("$STOCKADE" status --json --bpffs "$BPFFS" | grep -o '"prog_ids":\[[0-9,]*\]' |
	head -n 1 | sed 's/.*\[\(.*\)\]/\1/' | tr ',' ' ')
[ -n "$prog_ids" ] || bench_die "no program ids in stockade status"
sysctl -qw kernel.bpf_stats_enabled=1 || bench_die "cannot enable kernel.bpf_stats_enabled"
# Several profile rounds, the three sandboxes in a rotated order each
# time (one run alone is at the mercy of whatever else ran then); each
# program's cost per condition is the median over the rounds, and the
# rule count's effect is a same-run ratio of those samples.
: > "$RAW/prof.samples"
# prof_run ROUND COND ID...: one benchnet run in COND, the deltas of
# programs ID... appended to the profile's samples.
prof_run() {
	_r=$1 _c=$2
	shift 2
	prog_snap "$@" > "$RAW/stats-$_c.before"
	measure 0 "$_c"
	prog_snap "$@" > "$RAW/stats-$_c.after"
	paste -d' ' "$RAW/stats-$_c.before" "$RAW/stats-$_c.after" | awk -v c="$_c" -v r="$_r" '
		$1 != $4 { exit 1 }
		$6 > $3 { printf "%s %s %s %.1f %d\n", r, c, $1, ($5 - $2) / ($6 - $3), $6 - $3 }' \
		>> "$RAW/prof.samples" || bench_die "bpftool listed the programs in another order"
}
pr=1
while [ "$pr" -le "$prof_rounds" ]; do
	k=$((pr % 3))
	for c in $(echo r1 r1k r10k r1 r1k r10k | cut -d' ' -f$((k + 1))-$((k + 3))); do
		# shellcheck disable=SC2086
		prof_run "$pr" "$c" $prog_ids
	done
	# The empty programs (null), last in each round: what bpf_stats
	# counts for a program that does nothing, on the same hooks.
	null_start || bench_die "profile round $pr: lsmnull did not attach the empty programs (above)"
	null_ids=$("$TOOLS/bpfquery" cgroup "$nullcg" | awk '{ print $2 }')
	[ -n "$null_ids" ] || bench_die "profile round $pr: bpfquery found no program on $nullcg"
	# shellcheck disable=SC2086
	prof_run "$pr" null $null_ids
	null_stop
	pr=$((pr + 1))
done
# The outsider's calls: every program of the agent's (any stk_ name,
# whatever its type: on a BPF-LSM kernel the global lsm/ programs too),
# run counts around one benchnet run outside every sandbox, per round.
# The per-call programs (all but the process and cgroup lifecycle
# tracepoints, which see the measuring process fork and join its cgroup:
# chosen by name, as the personality fentry programs share their type)
# must not have run at all for the "outside" ratio to be the agent's
# presence alone, not its programs. C locale: join needs sort's order.
all_snap() {
	bpftool -j prog show | tr '{' '\n' | awk '/"name":"stk_/ {
		i = n = ""; t = "-"; c = 0
		if (match($0, /"id":[0-9]+/)) i = substr($0, RSTART + 5, RLENGTH - 5)
		if (match($0, /"type":"[^"]*"/)) t = substr($0, RSTART + 8, RLENGTH - 9)
		if (match($0, /"name":"[^"]*"/)) n = substr($0, RSTART + 8, RLENGTH - 9)
		if (match($0, /"run_cnt":[0-9]+/)) c = substr($0, RSTART + 10, RLENGTH - 10)
		print i, t, n, c }' | LC_ALL=C sort -k1,1
}
: > "$RAW/prof-out.deltas"
pr=1
while [ "$pr" -le "$prof_rounds" ]; do
	all_snap > "$RAW/stats-out.before"
	measure 0 out
	all_snap > "$RAW/stats-out.after"
	LC_ALL=C join "$RAW/stats-out.before" "$RAW/stats-out.after" |
		awk '$7 > $4 { print $2, $3, $7 - $4 }' >> "$RAW/prof-out.deltas"
	pr=$((pr + 1))
done
sysctl -qw kernel.bpf_stats_enabled="$stats_old"
bench_agent_stop || bench_die "stopping the agent failed"
[ -s "$RAW/stats-out.after" ] || bench_die "bpftool listed none of the agent's programs"
out_calls=$((prof_rounds * (nb + 1) * (tcpb + udpb + sendb)))
set -- $(awk '
	{ if ($2 ~ /^stk_(cg_mkdir|exec|join_attach|join_fork|setup_atta)/) ev[$2] += $3
	  else { run += $3; per[$2] += $3 } }
	END {
		o = ""
		for (p in per) o = o (o == "" ? "" : ", ") p " " per[p]
		e = ""
		for (p in ev) e = e (e == "" ? "" : ", ") p " " ev[p]
		printf "%d %s|%s\n", run, (o == "" ? "none" : o), (e == "" ? "none" : e) }' "$RAW/prof-out.deltas")
out_runs=$1
shift
out_note="$*"
bench_value "bpf_stats: stockade's programs run for an outsider's calls" "$out_runs" count '<=0' \
	"$out_calls calls outside every sandbox over $prof_rounds rounds; per-call programs that ran: ${out_note%%|*}; cgroup-event programs (its cgroup join): ${out_note#*|}" ||
	bench_die "benchstat failed"
# Round 0 was the profile's: not a sample.
for op in tcp udpconn sendto; do
	grep -v '^0 ' "$RAW/$op.samples" > "$RAW/$op.tmp" && mv "$RAW/$op.tmp" "$RAW/$op.samples"
done
# "ROUND COND NS" of one program, from the profile rounds.
prof_of() {
	awk -v p="$1" '$3 == p { print $1, $2, $4 }' "$RAW/prof.samples" > "$RAW/prof-$1.samples"
}
median_of() {
	awk -v c="$2" '$2 == c { print $3 }' "$RAW/prof-$1.samples" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) printf "%.0f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
all_progs=$(awk '{ print $3 }' "$RAW/prof.samples" | sort -u)
for p in $all_progs; do
	prof_of "$p"
done
progs=$(echo "$all_progs" | grep '^stk_')
for c in r1 r1k r10k; do
	case $c in r1) rules="1 rule" ;; r1k) rules="1k rules" ;; r10k) rules="10k rules" ;; esac
	for p in stk_connect4 stk_sendmsg4 stk_sock_create; do
		ns=$(median_of "$p" "$c")
		[ -n "$ns" ] || bench_die "bpf_stats: $p did not run in sandbox $c"
		note=
		for o in $progs; do
			[ "$o" = "$p" ] && continue
			note="$note${note:+, }${o#stk_} $(median_of "$o" "$c")"
		done
		bench_value "bpf_stats: ${p#stk_} in sandbox $rules" "$ns" ns/run "" \
			"median of $prof_rounds profile rounds; the others: $note ns/run; an empty program on the same hook: $(median_of "$(printf %.15s "null_${p#stk_}")" null) ns/run" ||
			bench_die "benchstat failed"
	done
done
# Names as the kernel keeps them: 15 characters.
for p in null_connect4 null_sendmsg4 null_sock_creat null_egress; do
	ns=$(median_of "$p" null)
	[ -n "$ns" ] || bench_die "bpf_stats: the empty program $p did not run"
	case $p in *creat) p=${p}e ;; esac
	bench_value "bpf_stats: an empty ${p#null_} program (lsmnull)" "$ns" ns/run "" \
		"median of $prof_rounds profile rounds: the floor bpf_stats puts under any program on this host; a sandbox's program over it is its own work" ||
		bench_die "benchstat failed"
done
bench_ratio "bpf_stats: connect4, 10k rules vs 1 rule" "$RAW/prof-stk_connect4.samples" r1 r10k '<=1.10' &&
bench_ratio "bpf_stats: sendmsg4, 10k rules vs 1 rule" "$RAW/prof-stk_sendmsg4.samples" r1 r10k ||
	bench_die "benchstat failed on the profile samples"

bench_check "net: valid measurements (calls allowed, counted, checked)" "$valid" \
	$((rounds * 6 + prof_rounds * 5)) "each call succeeded; inside: EPERM on port $check_port, sb_count = calls made; outside: port open"
