#!/bin/sh
# tests/bench/scale.sh ROWS_FILE: the scale and footprint section of
# `make bench` (issue 7, part 4), on this host (--allow-degraded). Value
# rows, each next to the baseline it should be read against:
#
# - confine N existing cgroups: from the agent's launch to its agent_ready
#   record (the record's own ts, so no polling delay counts), N = 100 and
#   1,000 cgroups that one glob selects; the baseline is the same agent
#   and policy with no cgroup to confine. Each the median of REPS starts
#   (after one uncounted round), each from nothing (the previous agent
#   stopped, `detach --all`), the three taken in turn.
# - reload a 10k-rule policy: `stockade reload` from its launch to the
#   agent's reload record (ts), the policy alternating between two
#   versions that differ in one port (so every reload writes 10,000 rules
#   under a fresh id and switches the sandbox); also the switch window
#   the record reports (switch_end_ns - switch_start_ns). Baseline: the
#   same for a 1-rule policy. Median of REPS reloads.
# - agent idle RSS (VmRSS, 2 s after agent_ready), goal <= 16 MiB, with the
#   footprint sandbox below; also with 1,000 cgroups, and VmHWM (the peak
#   of its start).
# - agent idle CPU with 1,000 cgroups confined: utime+stime of the agent
#   (/proc/PID/stat) over 60 s, from 2 s after agent_ready, in percent of
#   one core; goal <= 0.1% (no periodic scans: new cgroups arrive by
#   inotify, records by the ring buffer's epoll fd).
# - kernel memory of all the agent's maps (bytes_memlock of every pinned
#   map, which on 6.4+ kernels is what each map really holds, LPM trie
#   nodes included) with one sandbox of 1,000 file rules and 1,000 CIDRs,
#   against a sandbox of 1 CIDR and no file rules: the difference is what
#   those rules cost. The ring buffer (--ring-size, 4 MiB by default) is
#   shown apart, since it does not depend on the sandboxes.
#
# - zero window: the classification latency of a new cgroup, pending_us
#   of its attach record (its mkdir, timed by the cgroup_mkdir tracepoint,
#   to the agent's classification), median and p99 over N creations (1,000) below
#   a watched directory, one every 5 ms, as a runtime starts containers.
#
# BENCH_TINY=1: 10 and 50 cgroups, 1,000-rule reloads, one repetition,
# 20 creations, 3 s of idle CPU; goals not judged.
set -u

. tests/bench/lib.sh
bench_init scale "${1:-}"

if bench_tiny; then
	reps=1 small=10 large=50 reload_rules=1000 settle=1 creations=20 idle_s=3
else
	reps=${BENCH_SCALE_REPS:-5} small=100 large=1000 reload_rules=10000 settle=2
	creations=1000 idle_s=60
fi
one=$CGROUP_ROOT/$CG_PREFIX-one
pols=$RAW/policies
log=$RAW/agent.log

cleanup() {
	bench_agent_stop
	for k in none small large zw; do
		d=$CGROUP_ROOT/$CG_PREFIX-$k
		[ -d "$d" ] || continue
		for c in "$d"/c*; do
			bench_cgroup_rm "$c"
		done
		bench_cgroup_rm "$d"
	done
	bench_cgroup_rm "$one"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

AGENT_PID=
bench_agent_stop || bench_die "cannot remove the pins a previous run left at $BPFFS"
[ -d "$one" ] || mkdir "$one" || bench_die "cannot create the cgroup $one"
mkdir -p "$pols"

# ts_ns RECORD: its ts field as ns since the epoch.
ts_ns() {
	date -d "$(echo "$1" | sed -n 's/.*"ts":"\([^"]*\)".*/\1/p')" +%s%N
}

# median: of the numbers on stdin.
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (!NR) exit 1
		print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# policy_dir NAME: a fresh directory holding only the policies given after.
policy_dir() {
	rm -rf "$pols/$1"
	mkdir -p "$pols/$1"
	echo "$pols/$1"
}

# start_timed DIR: start the agent on DIR's policies (not in a subshell:
# AGENT_PID must reach bench_agent_stop); START_MS: ms from the launch to
# agent_ready.
start_timed() {
	: > "$log"
	t0=$(date +%s%N)
	bench_agent_start "$log" --policy "$1"
	ready=$(grep '"event":"agent_ready"' "$log")
	START_MS=$(echo $(( ($(ts_ns "$ready") - t0) / 1000 )) | awk '{ printf "%.1f", $1 / 1000 }')
}

# rss KEY: the agent's VmRSS or VmHWM in MiB.
rss() {
	awk -v k="$1:" '$1 == k { printf "%.2f\n", $2 / 1024 }' "/proc/$AGENT_PID/status"
}

# rss_profile: where the agent's resident memory is, from its smaps: the
# heap, BPF map mappings (the ring buffer: its data pages are mapped
# twice, and are the kernel's memory, shared, not the agent's own), the
# rest (binaries, libraries, stack).
rss_profile() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { n = $6 == "" ? "anon" : $6 }
		$1 == "Rss:" { if (n == "[heap]") h += $2; else if (n ~ /bpf-map/) m += $2; else o += $2 }
		END { printf "heap %.1f MiB, BPF map mappings (ring buffer) %.1f MiB, other %.1f MiB", h / 1024, m / 1024, o / 1024 }' \
		"/proc/$AGENT_PID/smaps"
}

# ---- confine N existing cgroups ----
# Three parents, each selected by its own glob policy: none has no child,
# the others $small and $large. The three starts of a repetition run in
# turn (ABC ABC ...), after one start that is not counted (cold caches).
pol_dir=$(policy_dir many)
for c in none:0 small:$small large:$large; do
	k=${c%%:*} n=${c#*:}
	d=$CGROUP_ROOT/$CG_PREFIX-$k
	[ -d "$d" ] || mkdir "$d" || bench_die "cannot create $d"
	i=0
	while [ "$i" -lt "$n" ]; do
		i=$((i + 1))
		[ -d "$d/c$i" ] || mkdir "$d/c$i" || bench_die "cannot create $d/c$i"
	done
	: > "$RAW/confine-$n.samples"
done
rss_large=
rep=0
while [ "$rep" -le "$reps" ]; do
	for c in none:0 small:$small large:$large; do
		k=${c%%:*} n=${c#*:}
		rm -f "$pol_dir"/*.yaml
		sh tests/bench/gen-policy.sh "bench-scale-$k" "/$CG_PREFIX-$k/*" 10 \
			> "$pol_dir/$k.yaml" || bench_die "generating the policy failed"
		start_timed "$pol_dir"
		grep -q "\"event\":\"agent_ready\".*\"cgroups\":$n," "$log" ||
			bench_die "agent_ready does not report $n cgroups: $(grep agent_ready "$log")"
		got=$(grep -c '"event":"attach".*"via":"selector"' "$log")
		[ "$got" = "$n" ] || bench_die "$got attach records for $n cgroups"
		[ "$rep" = 0 ] || echo "$rep $n $START_MS" >> "$RAW/confine-$n.samples"
		if [ "$n" = "$large" ] && [ -z "$rss_large" ]; then
			sleep "$settle"
			rss_large=$(rss VmRSS)
		fi
		bench_agent_stop || bench_die "stopping the agent failed"
	done
	rep=$((rep + 1))
done
for n in 0 "$small" "$large"; do
	ms=$(awk '{ print $3 }' "$RAW/confine-$n.samples" | median)
	if [ "$n" = 0 ]; then
		bench_value "agent start with no cgroup to confine (baseline)" "$ms" ms "" \
			"median of $reps; launch to agent_ready"
	else
		bench_value "confine $n existing cgroups (start to agent_ready)" "$ms" ms "" \
			"median of $reps; 8 programs attached per cgroup"
	fi
done

# ---- idle CPU with $large cgroups confined ----
# cpu_ticks: the agent's utime + stime, in clock ticks (fields 14 and 15
# of /proc/PID/stat, counted after the ")" that ends the command name).
cpu_ticks() {
	sed 's/.*) //' "/proc/$AGENT_PID/stat" | awk '{ print $12 + $13 }'
}
rm -f "$pol_dir"/*.yaml
sh tests/bench/gen-policy.sh bench-scale-large "/$CG_PREFIX-large/*" 10 \
	> "$pol_dir/large.yaml" || bench_die "generating the policy failed"
start_timed "$pol_dir"
grep -q "\"event\":\"agent_ready\".*\"cgroups\":$large," "$log" ||
	bench_die "agent_ready does not report $large cgroups: $(grep agent_ready "$log")"
sleep "$settle"
hz=$(getconf CLK_TCK) || bench_die "getconf CLK_TCK failed"
c0=$(cpu_ticks) && t0=$(date +%s%N) || bench_die "cannot read /proc/$AGENT_PID/stat"
sleep "$idle_s"
c1=$(cpu_ticks) && t1=$(date +%s%N) || bench_die "cannot read /proc/$AGENT_PID/stat"
lines=$(wc -l < "$log")
bench_agent_stop || bench_die "stopping the agent failed"
idle=$(awk -v c=$((c1 - c0)) -v hz="$hz" -v ns=$((t1 - t0)) \
	'BEGIN { printf "%.3f", 100 * (c / hz) / (ns / 1e9) }')
bench_value "agent idle CPU, $large cgroups confined, $idle_s s" "$idle" "% of a core" '<=0.1' \
	"utime+stime $((c1 - c0)) ticks at $hz Hz over $(( (t1 - t0) / 1000000 )) ms, from $settle s after agent_ready; $lines log lines in all" ||
	bench_die "benchstat failed"

# ---- reload latency ----
for n in 1 "$reload_rules"; do
	dir=$(policy_dir "reload-$n")
	sh tests/bench/gen-policy.sh "bench-scale-reload" "/$CG_PREFIX-one" "$n" 0 5201 5202 \
		> "$dir/p.yaml" || bench_die "generating the policy failed"
	start_timed "$dir"
	: > "$RAW/reload-$n.samples"
	rep=-1
	while [ "$rep" -lt "$reps" ]; do
		rep=$((rep + 1))
		# Alternate the measured rule's TCP port: a changed policy, so
		# each reload writes every rule under a fresh id.
		port=$((5201 + 2 * ((rep + 1) % 2)))
		sh tests/bench/gen-policy.sh "bench-scale-reload" "/$CG_PREFIX-one" "$n" 0 \
			"$port" 5202 > "$RAW/p.yaml.tmp" && mv "$RAW/p.yaml.tmp" "$dir/p.yaml" ||
			bench_die "generating the policy failed"
		before=$(grep -c '"event":"reload"' "$log")
		t0=$(date +%s%N)
		"$STOCKADE" reload --bpffs "$BPFFS" > /dev/null ||
			bench_die "stockade reload failed: $(tail -n 3 "$log")"
		t1=$(date +%s%N)
		rec=$(grep '"event":"reload"' "$log" | sed -n "$((before + 1))p")
		case $rec in
		*'"trigger":"signal","result":"applied"'*) ;;
		*) bench_die "reload $rep: expected an applied signal reload, got: $rec" ;;
		esac
		s=$(echo "$rec" | sed -n 's/.*"switch_start_ns":\([0-9]*\).*/\1/p')
		e=$(echo "$rec" | sed -n 's/.*"switch_end_ns":\([0-9]*\).*/\1/p')
		# Reload 0 is not counted: the first one warms the caches.
		[ "$rep" = 0 ] ||
			echo "$rep $n $(( ($(ts_ns "$rec") - t0) / 1000 )) $(( (e - s) / 1000 )) $(( (t1 - t0) / 1000 ))" \
				>> "$RAW/reload-$n.samples"
		# Let the inotify reload of the same change (200 ms after the
		# write) find it applied, so that it does not overlap the next.
		sleep 0.5
	done
	bench_agent_stop || bench_die "stopping the agent failed"
	ms=$(awk '{ print $3 / 1000 }' "$RAW/reload-$n.samples" | median)
	sw=$(awk '{ print $4 / 1000 }' "$RAW/reload-$n.samples" | median)
	if [ "$n" = 1 ]; then
		bench_value "reload a 1-rule policy (baseline): to the reload record" "$ms" ms "" \
			"median of $reps; switch window $sw ms"
	else
		bench_value "reload a $n-rule policy: stockade reload to the record" "$ms" ms "" \
			"median of $reps; all rules rewritten under a fresh id"
		bench_value "reload a $n-rule policy: switch window" "$sw" ms "" \
			"switch_end_ns - switch_start_ns of the reload record (a cgroup scan and an RCU grace period included), median of $reps"
	fi
done

# ---- idle RSS and the maps' kernel memory ----
# maps_kib: bytes_memlock of every pinned map, in KiB; "rb" apart.
maps_kib() {
	total=0 rb=0
	for m in "$BPFFS"/maps/*; do
		b=$(bpftool -j map show pinned "$m" | sed -n 's/.*"bytes_memlock":\([0-9]*\).*/\1/p')
		[ -n "$b" ] || bench_die "bpftool shows no bytes_memlock for $m"
		echo "$(basename "$m") $b" >> "$RAW/maps-$1.txt"
		total=$((total + b))
		[ "$(basename "$m")" = rb ] && rb=$b
	done
	echo "$total $rb"
}

base=$(policy_dir footprint-base)
sh tests/bench/gen-policy.sh bench-scale-fp "/$CG_PREFIX-one" 1 \
	> "$base/p.yaml" || bench_die "generating the policy failed"
fp=$(policy_dir footprint)
sh tests/bench/gen-policy.sh bench-scale-fp "/$CG_PREFIX-one" 1000 1000 \
	> "$fp/p.yaml" || bench_die "generating the policy failed"
for which in base fp; do
	eval "dir=\$$which"
	start_timed "$dir"
	grep -q '"event":"agent_ready".*"cgroups":1,' "$log" ||
		bench_die "agent_ready does not report the footprint sandbox"
	sleep "$settle"
	eval "rss_$which=\$(rss VmRSS) hwm_$which=\$(rss VmHWM)"
	eval "prof_$which=\$(rss_profile)"
	: > "$RAW/maps-$which.txt"
	set -- $(maps_kib "$which")
	[ $# = 2 ] || bench_die "reading the maps' memory failed"
	eval "maps_$which=$1 rb_$which=$2"
	bench_agent_stop || bench_die "stopping the agent failed"
done
# shellcheck disable=SC2154
{
	bench_value "agent idle RSS, sandbox of 1k file rules + 1k CIDRs" "$rss_fp" MiB '<=16' \
		"VmRSS $settle s after agent_ready (VmHWM $hwm_fp MiB): $prof_fp"
	bench_value "agent idle RSS, sandbox of 1 CIDR (baseline)" "$rss_base" MiB "" \
		"VmHWM $hwm_base MiB"
	bench_value "agent idle RSS, $large cgroups confined" "$rss_large" MiB '<=16'
	kib=$(( (maps_fp - rb_fp) / 1024 ))
	bench_value "maps' kernel memory, 1k file rules + 1k CIDRs, w/o ring" \
		"$(echo "$kib" | awk '{ printf "%.2f", $1 / 1024 }')" MiB "" \
		"ring buffer $((rb_fp / 1024)) KiB more; per map: build/bench/raw/scale/maps-fp.txt"
	kib=$(( (maps_base - rb_base) / 1024 ))
	bench_value "maps' kernel memory, 1 CIDR (baseline), w/o ring" \
		"$(echo "$kib" | awk '{ printf "%.2f", $1 / 1024 }')" MiB ""
	bench_value "maps' kernel memory of the 1k+1k rules (difference)" \
		"$(( (maps_fp - maps_base) / 1024 ))" KiB ""
} || bench_die "benchstat failed"

# ---- zero window: classification latency ----
zw=$CGROUP_ROOT/$CG_PREFIX-zw
[ -d "$zw" ] || mkdir "$zw" || bench_die "cannot create $zw"
dir=$(policy_dir zw)
printf 'name: bench-zw\ncgroups: [/%s-zw/c*]\nnetwork:\n  default: deny\n' \
	"$CG_PREFIX" > "$dir/zw.yaml"
start_timed "$dir"
i=0
while [ "$i" -lt "$creations" ]; do
	i=$((i + 1))
	mkdir "$zw/c$i" || bench_die "cannot create $zw/c$i"
	sleep 0.005
done
bench_wait_for "\"cgroup\":\"/$CG_PREFIX-zw/c$creations\"" "$log" 600 "$AGENT_PID" ||
	bench_die "the last new cgroup was never classified"
sleep 1
grep '"event":"attach"' "$log" | sed -n 's/.*"pending_us":\([0-9]*\).*/\1/p' |
	awk '{ printf "%.3f\n", $1 / 1000 }' | sort -n > "$RAW/pending.ms"
got=$(wc -l < "$RAW/pending.ms")
bench_agent_stop || bench_die "stopping the agent failed"
{
	bench_check "zero window: new cgroups classified, with pending_ms" "$got" "$creations" \
		"attach records with pending_ms of $creations creations"
	bench_value "zero window: creation to classification, median" \
		"$(median < "$RAW/pending.ms")" ms "" \
		"pending_us of $got attach records (from the cgroup_mkdir tracepoint); one mkdir every 5 ms below a watched directory"
	bench_value "zero window: creation to classification, p99" \
		"$(sed -n "$(( (got * 99 + 99) / 100 ))p" "$RAW/pending.ms")" ms "" \
		"confined all along (pending: judged by its candidate policy); until its own links and entry"
} || bench_die "benchstat failed"
