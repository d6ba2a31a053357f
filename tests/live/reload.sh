#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Reload atomically (issue 6) on a real kernel: runs on the host (make
# live-test) and in the test VM (reload/* through tests/vm/lifecycle.sh).
#   1. RELOADS (100) reloads alternating two policies that differ in one
#      allowed port (A: 8080, B: 8081; 8082 in neither), while three
#      clients in the sandbox hammer the three ports, each attempt timed.
#      Outside the switch windows the agent reports (`reload` records:
#      switch_start_ns..switch_end_ns), every result must be the verdict of
#      the policy in force: no allow it denies, none missing that it allows;
#      inside them, the old or the new one's; 8082 is never allowed.
#   2. A broken file dropped into the policy folder changes nothing that
#      is enforced, and is reported (policy_error record; reload exits 1).
#   3. enforce -> audit -> enforce is just a reload.
#   4. A changed file is applied without asking (inotify).
#   5. Slots: a policy's cgroups share one slot, which a content change
#      flips to the new id (entries untouched, one switch time); a cgroup
#      that another policy selects moves to that policy's slot; a removed
#      policy's slot is freed and given out again.
#   6. SIGHUP_STARTS (3) starts under a stream of SIGHUPs: each survives,
#      reaches agent_ready, then reloads once.
#
# Environment: STOCKADE, TOOLS (netprobe), CGROUP_ROOT (detected when
# unset), STOCKADE_AGENT_FLAGS (default --allow-degraded), RELOADS,
# SIGHUP_STARTS.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
RELOADS=${RELOADS:-100}
SIGHUP_STARTS=${SIGHUP_STARTS:-3}
probe=$TOOLS/netprobe

need_cgroup2 reload
need_bpffs reload

tag=stockade-rl-$$
bpffs=/sys/fs/bpf/$tag
cg=$CGROUP_ROOT/$tag
cg2=$CGROUP_ROOT/$tag-2
work=$(mktemp -d /tmp/stockade-reload.XXXXXX)
log=$work/agent.log
agent_pid=
loops=

cleanup() {
	touch "$work/stop" "$work/stop2"
	for p in $loops; do wait "$p" 2>/dev/null; done
	agent_end -9
	cg_empty "$cg" "$cg2"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# policy PORT [MODE [SELECTORS [NAME [FILE]]]]: the policy file allows only
# PORT; written whole by a rename, as editors and deploy tools do (dot
# files are not policies).
policy() {
	cat > "$work/${STAGE:-pol}/.p.tmp" <<EOF
name: ${4:-rl}
mode: ${2:-enforce}
cgroups: [${3:-/$tag}]
network:
  default: deny
  allow:
    - cidr: 127.0.0.1/32
      ports: [$1]
      proto: tcp
EOF
	mv "$work/${STAGE:-pol}/.p.tmp" "$work/${STAGE:-pol}/${5:-p}.yaml"
}

# publish [RM...]: move every staged policy file into the policy
# directory and remove the named ones there, all from one process, so
# that the agent's 200 ms settle sees one change however loaded the
# machine is (two shell commands can be further apart than that).
publish() {
	perl -e 'my ($from, $to) = (shift, shift);
		 opendir(my $d, $from) or die "$from: $!";
		 for (grep { /\.yaml$/ } readdir($d)) {
			rename("$from/$_", "$to/$_") or die "$_: $!";
		 }
		 for (@ARGV) { unlink("$to/$_"); }' "$work/stage" "$work/pol" "$@"
}

# try PORT [CGROUP]: one connect from the sandbox; prints OK or the errno.
try() {
	"$probe" --netns --cgroup "${2:-$cg}" connect tcp 127.0.0.1 "$1" --listen 2>&1 | tail -n 1
}

# snap: take `stockade status --json`; st CGROUP FIELD: a field of
# CGROUP's object in the last one taken.
snap() {
	"$STOCKADE" status --json --bpffs "$bpffs" --cgroup-root "$CGROUP_ROOT" \
		> "$work/status.json" 2>/dev/null
}
st() {
	grep -o "{\"cgroup\":\"$1\",[^{}]*" "$work/status.json" | head -n 1 |
		sed -n "s/.*\"$2\":\"\{0,1\}\([^,\"}]*\).*/\1/p"
}

# reload_ok: stockade reload, which must apply (or find applied what
# inotify, quicker, already applied); then snap.
reload_ok() {
	out=$("$STOCKADE" reload --bpffs "$bpffs" 2>&1)
	snap
	case $out in "reload: applied"* | "reload: unchanged"*) return 0 ;; esac
	echo "reload: $out"
	return 1
}

mkdir "$work/pol" "$work/stage" "$cg" || { echo "reload: cannot create $cg" >&2; exit 1; }
policy 8080
# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --bpffs "$bpffs" --detach-on-exit \
	--policy "$work/pol" --log "$log" > /dev/null 2> "$work/agent.err" &
agent_pid=$!
if wait_ready "$log"; then
	ok "agent_ready"
else
	not_ok "agent_ready" "$(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
	summary
	exit 1
fi

# ---- 1. reloads under load ----
for port in 8080 8081 8082; do
	# The attempts go to stdout, which the sandbox inherits: with
	# BPF-LSM it may not open a file for writing itself.
	"$probe" --netns --cgroup "$cg" connect tcp 127.0.0.1 $port --listen \
		--until "$work/stop" --every-us "${HAMMER_US:-300}" --log - \
		> "$work/att.$port" 2> "$work/loop.$port" &
	loops="$loops $!"
done
sleep 0.3
bad=0
i=1
while [ "$i" -le "$RELOADS" ]; do
	if [ $((i % 2)) = 1 ]; then policy 8081; else policy 8080; fi
	out=$("$STOCKADE" reload --bpffs "$bpffs" 2>&1)
	case $out in
	"reload: applied"* | "reload: unchanged"*) ;;	# inotify may be first
	*) bad=$((bad + 1)); echo "reload $i: $out" ;;
	esac
	sleep 0.02
	i=$((i + 1))
done
sleep 0.3
touch "$work/stop"
for p in $loops; do wait "$p"; done
loops=
[ "$bad" = 0 ] && ok "$RELOADS reloads: each applied" ||
	not_ok "$RELOADS reloads" "$bad did not apply"

# The timeline: each applied reload's switch window and the port its
# policy allows (by the hash in the policy record just before it).
hash_a=$(grep '"event":"policy"' "$log" | head -n 1 | sed -n 's/.*"hash":"\([0-9a-f]*\)".*/\1/p')
awk -v ha="$hash_a" '
	/"event":"policy"/ { match($0, /"hash":"[0-9a-f]*"/); h = substr($0, RSTART + 8, 16) }
	/"event":"reload".*"result":"applied"/ {
		match($0, /"switch_start_ns":[0-9]*/); s = substr($0, RSTART + 18, RLENGTH - 18)
		match($0, /"switch_end_ns":[0-9]*/); e = substr($0, RSTART + 16, RLENGTH - 16)
		print s, e, (h == ha ? 8080 : 8081)
	}' "$log" > "$work/timeline"
n_applied=$(wc -l < "$work/timeline")
if [ "$n_applied" -ge "$RELOADS" ]; then
	ok "$n_applied switches recorded"
else
	not_ok "switches recorded" "$n_applied applied reload records for $RELOADS reloads"
fi
for port in 8080 8081 8082; do
	# Nanoseconds since the epoch do not fit awk's doubles: split each
	# into seconds and nanoseconds, and count from a base second (with no
	# leading zeros: busybox awk reads 012 as octal).
	split_ns() { sed 's/\([0-9]\{10\}\)\([0-9]\{9\}\)/\1 \2/g' "$1"; }
	split_ns "$work/timeline" > "$work/timeline.s"
	split_ns "$work/att.$port" > "$work/att.$port.s"
	res=$(awk -v port=$port '
		function ns(sec, nsec) { sub(/^0+/, "", nsec); return (sec - base) * 1000000000 + nsec }
		NF != 5 || $1 !~ /^[0-9]+$/ { next }
		!base { base = $1 - 100 }
		NR == FNR { n++; s[n] = ns($1, $2); e[n] = ns($3, $4); p[n] = $5; next }
		{
			tb = ns($1, $2); ta = ns($3, $4); got = $5
			# k: the last switch that ended before the attempt began.
			lo = 0; hi = n
			while (lo < hi) { m = int((lo + hi + 1) / 2); if (e[m] < tb) lo = m; else hi = m - 1 }
			k = lo
			if (k == n || ta < s[k + 1]) {
				excl++
				want = ((k == 0 ? 8080 : p[k]) == port)
				if (got != want) { bad++; if (!ex) ex = $0 " under policy " k " (switch " k ": " s[k] ".." e[k] " ns, port " p[k] "; the next starts " s[k + 1] "; the attempt " tb ".." ta ")" }
			} else if (got && port == 8082) {
				bad++; if (!ex) ex = $0 " during switch " k + 1
			}
			total++
		}
		END { printf "%d %d %d %s\n", total, excl, bad, ex }' "$work/timeline.s" "$work/att.$port.s")
	set -- $res
	if [ "${1:-0}" -gt 0 ] && [ "$3" = 0 ]; then
		ok "port $port: all $1 attempts had the verdict of a policy in force ($2 outside switch windows, judged exactly)"
	else
		not_ok "port $port: verdicts" "of ${1:-0} attempts (${2:-0} outside switch windows), ${3:-?} wrong; first: $(echo "$res" | cut -d' ' -f4-)"
	fi
done
a8082=$(awk 'NF == 5 && $5 == 1' "$work/att.8082.s" | wc -l)
[ "$a8082" = 0 ] && ok "port 8082 (in no policy): never allowed" ||
	not_ok "port 8082 never allowed" "$a8082 attempts got through"

# ---- 2. a broken file changes nothing, and is reported ----
# After an even number of reloads policy A (8080) is in force; make sure.
policy 8080
"$STOCKADE" reload --bpffs "$bpffs" > /dev/null 2>&1
n_pol=$(grep -c '"event":"policy"' "$log")
printf 'name: broken\ncgroups: [/%s\nnetwork: {default: allow}\n' "$tag" > "$work/pol/broken.yaml"
if wait_for '"event":"policy_error"' "$log" 30 &&
   grep '"event":"policy_error"' "$log" | grep -q 'broken.yaml'; then
	ok "broken file: a policy_error record names it (inotify)"
else
	not_ok "broken file: policy_error record" "$(grep -E '"(reload|policy_error)"' "$log" | tail -n 2 | tr '\n' ' ')"
fi
if "$STOCKADE" reload --bpffs "$bpffs" > "$work/reload.out" 2>&1; then
	not_ok "broken file: stockade reload exits non-zero" "exit 0: $(cat "$work/reload.out")"
else
	ok "broken file: stockade reload exits non-zero"
fi
# ... and prints each problem as `stockade check` words it.
"$STOCKADE" check "$work/pol" 2>&1 | grep 'broken\.yaml:' > "$work/check.out"
grep 'broken\.yaml:' "$work/reload.out" > "$work/reload.problems"
if [ -s "$work/check.out" ] && cmp -s "$work/check.out" "$work/reload.problems"; then
	ok "broken file: stockade reload prints the problems, as check does"
else
	not_ok "broken file: stockade reload prints the problems" "reload: $(tr '\n' ' ' < "$work/reload.out"); check: $(tr '\n' ' ' < "$work/check.out")"
fi
[ "$(try 8080)" = OK ] && [ "$(try 8081)" = EPERM ] &&
	ok "broken file: the policy in force still decides" ||
	not_ok "broken file: the policy in force still decides" "8080: $(try 8080), 8081: $(try 8081)"
[ "$(grep -c '"event":"policy"' "$log")" = "$n_pol" ] &&
	ok "broken file: nothing new applied" ||
	not_ok "broken file: nothing new applied" "$(grep '"event":"policy"' "$log" | tail -n 1)"
rm -f "$work/pol/broken.yaml"

# ---- 3. enforce -> audit -> enforce ----
policy 8080 audit
out=$("$STOCKADE" reload --bpffs "$bpffs" 2>&1)
case $out in "reload: applied"* | "reload: unchanged"*) ;; *) not_ok "audit reload" "$out" ;; esac
o=$("$probe" --netns --cgroup "$cg" connect tcp 127.0.0.1 8081 --listen 2>&1)
pid=$(echo "$o" | sed -n 's/^pid=//p')
if [ "$(echo "$o" | tail -n 1)" = OK ] && wait_for "\"event\":\"audit\".*\"pid\":$pid," "$log" 30; then
	ok "mode audit by reload: 8081 allowed, with an audit record"
else
	not_ok "mode audit by reload" "got $(echo "$o" | tail -n 1); $(grep "\"pid\":$pid," "$log")"
fi
policy 8080
"$STOCKADE" reload --bpffs "$bpffs" > /dev/null 2>&1
[ "$(try 8081)" = EPERM ] && ok "mode enforce again: 8081 denied" ||
	not_ok "mode enforce again" "8081: $(try 8081)"

# ---- 4. a changed file is applied without asking ----
policy 8081
n=0
while [ "$(try 8081)" != OK ] && [ "$n" -lt 30 ]; do
	sleep 0.1
	n=$((n + 1))
done
if [ "$n" -lt 30 ] && [ "$(try 8080)" = EPERM ] &&
   grep -q '"event":"reload","trigger":"inotify","result":"applied"' "$log"; then
	ok "a changed file is applied by itself (inotify)"
else
	not_ok "inotify reload" "8081: $(try 8081), 8080: $(try 8080)"
fi

# ---- 5. slots ----
mkdir "$cg2"
policy 8080 enforce "/$tag, /$tag-2"
reload_ok
s1=$(st "/$tag" slot)
s2=$(st "/$tag-2" slot)
id_old=$(st "/$tag-2" policy_id)
n_rec=$(grep -c '"event":"reload".*"result":"applied"' "$log")
policy 8081 enforce "/$tag, /$tag-2"
reload_ok
rec=$(grep '"event":"reload".*"result":"applied"' "$log" | tail -n 1)
gen=$(echo "$rec" | grep -o '{"policy":"rl",[^}]*}')
sw=$(echo "$gen" | sed -n 's/.*"switch_ns":\([0-9]*\).*/\1/p')
t0=$(echo "$rec" | sed -n 's/.*"switch_start_ns":\([0-9]*\).*/\1/p')
t1=$(echo "$rec" | sed -n 's/.*"switch_end_ns":\([0-9]*\).*/\1/p')
id_new=$(st "/$tag" policy_id)
if [ -n "$s1" ] && [ "$s1" != 0 ] && [ "$s1" = "$s2" ] &&
   [ "$(st "/$tag" slot)" = "$s1" ] && [ "$(st "/$tag-2" slot)" = "$s1" ] &&
   [ -n "$id_new" ] && [ "$id_new" != "$id_old" ] &&
   [ "$(st "/$tag-2" policy_id)" = "$id_new" ]; then
	ok "content change: both cgroups keep slot $s1, which now names id $id_new (was $id_old)"
else
	not_ok "content change flips the slot" "slots $s1/$s2 -> $(st "/$tag" slot)/$(st "/$tag-2" slot), ids $id_old -> $id_new/$(st "/$tag-2" policy_id)"
fi
if [ "$(grep -c '"event":"reload".*"result":"applied"' "$log")" -gt "$n_rec" ] &&
   echo "$gen" | grep -q "\"slot\":$s1,.*\"changed\":true" &&
   [ -n "$sw" ] && [ "$t0" -le "$sw" ] && [ "$sw" -le "$t1" ]; then
	ok "reload record: rl's generation, slot and switch time (in its window)"
else
	not_ok "reload record generations" "$rec"
fi
[ "$(try 8081 "$cg2")" = OK ] && [ "$(try 8080 "$cg2")" = EPERM ] &&
	ok "both cgroups decide by the new rules" ||
	not_ok "new rules in the second cgroup" "8081: $(try 8081 "$cg2"), 8080: $(try 8080 "$cg2")"

# Another policy selects the second cgroup: it moves to that one's slot.
policy 8082 enforce "/$tag-2" rl2 q
policy 8081 enforce "/$tag"
reload_ok
s3=$(st "/$tag-2" slot)
if [ "$(st "/$tag-2" policy)" = rl2 ] && [ -n "$s3" ] && [ "$s3" != "$s1" ] &&
   [ "$(st "/$tag" slot)" = "$s1" ] &&
   [ "$(try 8082 "$cg2")" = OK ] && [ "$(try 8081 "$cg2")" = EPERM ] &&
   [ "$(try 8081)" = OK ]; then
	ok "a cgroup selected by another policy moves to its slot $s3"
else
	not_ok "moving a cgroup between policies" "policy $(st "/$tag-2" policy) slot $s3 (rl: $s1); 8082: $(try 8082 "$cg2"), 8081: $(try 8081 "$cg2")"
fi

# The policy goes: its cgroup is released, its slot freed and reused.
rm "$work/pol/q.yaml"
reload_ok
released=$(st "/$tag-2" policy)
policy 8082 enforce "/$tag-2" rl3 q
reload_ok
if [ -z "$released" ] && [ "$(st "/$tag-2" policy)" = rl3 ] &&
   [ "$(st "/$tag-2" slot)" = "$s3" ] && [ "$(try 8082 "$cg2")" = OK ]; then
	ok "a removed policy's slot is freed: the next new policy gets slot $s3"
else
	not_ok "slot freed" "after removal: '$released'; rl3 at slot $(st "/$tag-2" slot) (freed: $s3)"
fi
rm "$work/pol/q.yaml"
reload_ok

# A cgroup that moves to another policy in the reload that also changes
# its old policy decides by its old policy or its new one, never by the
# old policy's new version (the reload holds it on its old rules across
# the flip, agent/reload.c hold_movers(), agent/policy_table.c policy_plan__holds()). Here /$tag-2 is allowed 8081 by
# both, and 8083 by neither; rl's new version allows 8083. Both files are
# written within the agent's 200 ms inotify settle time: one reload.
policy 8081 enforce "/$tag, /$tag-2"
reload_ok
mvloops=
for port in 8081 8083; do
	"$probe" --netns --cgroup "$cg2" connect tcp 127.0.0.1 $port --listen \
		--until "$work/stop2" --every-us "${HAMMER_US:-300}" --log - \
		> "$work/mv.$port" 2> "$work/mvloop.$port" &
	mvloops="$mvloops $!"
done
sleep 0.3
i=1
mv_bad=0
while [ "$i" -le "${MOVES:-20}" ]; do
	if [ $((i % 2)) = 1 ]; then
		STAGE=stage
		policy 8083 enforce "/$tag"
		policy 8081 enforce "/$tag-2" rlq q
		STAGE=
		publish
	else
		STAGE=stage
		policy 8081 enforce "/$tag, /$tag-2"
		STAGE=
		publish q.yaml
	fi
	reload_ok > /dev/null || mv_bad=$((mv_bad + 1))
	sleep 0.02
	i=$((i + 1))
done
sleep 0.3
touch "$work/stop2"
for p in $mvloops; do wait "$p"; done
mv_ok=$(awk 'NF == 3 && $3 == 1' "$work/mv.8081" | wc -l)
mv_no=$(awk 'NF == 3 && $3 == 0' "$work/mv.8081" | wc -l)
mv_83=$(awk 'NF == 3 && $3 == 1' "$work/mv.8083" | wc -l)
mv_83n=$(awk 'NF == 3' "$work/mv.8083" | wc -l)
if [ "$mv_bad" = 0 ] && [ "$mv_ok" -gt 0 ] && [ "$mv_no" = 0 ] &&
   [ "$mv_83n" -gt 0 ] && [ "$mv_83" = 0 ]; then
	ok "a cgroup moving while its old policy changes: 8081 allowed $mv_ok times of $mv_ok, 8083 denied $mv_83n of $mv_83n"
else
	not_ok "moving while the old policy changes" "reloads failed: $mv_bad; 8081 allowed $mv_ok, denied $mv_no; 8083 allowed $mv_83 of $mv_83n"
fi
rm -f "$work/pol/q.yaml"
policy 8081 enforce "/$tag"
reload_ok

# The stream: no record lost, seq without a gap.
kill -TERM "$agent_pid"
wait "$agent_pid"
rc=$?
agent_pid=
[ "$rc" = 0 ] && ok "SIGTERM: exit 0" || not_ok "SIGTERM" "exit $rc"
lost=$(lost_sum "$log")
read -r first last count _ <<EOF
$(seq_span "$log")
EOF
if [ $((last - first + 1 - count)) -eq "$lost" ]; then
	ok "seq $first..$last: gaps = lost ($lost)"
else
	not_ok "seq" "$count records span $first..$last, lost $lost"
fi

# ---- 6. SIGHUP while the agent starts ----
# From the moment exec is done (comm), a SIGHUP every 20 ms until
# agent_ready: each start must survive them and reach agent_ready, and the
# SIGHUPs taken during start-up make one reload once it is ready. 50 ms
# after exec first: the dynamic loader runs before main() can catch
# anything (no program can close that window; the static VM build has no
# loader), while loading the BPF object takes far longer.
i=1
while [ "$i" -le "$SIGHUP_STARTS" ]; do
	slog=$work/start.$i.log
	# shellcheck disable=SC2086
	"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --bpffs "$bpffs" --detach-on-exit \
		--policy "$work/pol" --log "$slog" > /dev/null 2> "$work/start.$i.err" &
	agent_pid=$!
	n=0
	while [ "$(cat "/proc/$agent_pid/comm" 2>/dev/null)" != stockade ] && [ "$n" -lt 1000 ]; do
		n=$((n + 1))
	done
	sleep 0.05
	sent=0
	while kill -0 "$agent_pid" 2>/dev/null && ! grep -q '"event":"agent_ready"' "$slog" 2>/dev/null &&
	      [ "$sent" -lt 1500 ]; do
		kill -HUP "$agent_pid" 2>/dev/null && sent=$((sent + 1))
		sleep 0.02
	done
	if grep -q '"event":"agent_ready"' "$slog" 2>/dev/null && [ "$sent" -gt 0 ] &&
	   wait_for '"event":"reload","trigger":"signal"' "$slog" 50 &&
	   kill -0 "$agent_pid" 2>/dev/null; then
		ok "start $i: $sent SIGHUPs during start-up, agent_ready, then a reload"
	else
		not_ok "start $i under SIGHUP" "$sent sent; $(kill -0 "$agent_pid" 2>/dev/null && echo alive || echo dead); $(tail -n 2 "$slog" 2>/dev/null | tr '\n' ' '); $(tail -n 2 "$work/start.$i.err" | tr '\n' ' ')"
	fi
	kill -TERM "$agent_pid" 2>/dev/null
	wait "$agent_pid"
	agent_pid=
	i=$((i + 1))
done

summary
