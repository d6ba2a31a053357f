#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Real runc containers in the test VM: Debian's runc, the busybox bundle
# of tests/vm/mkinitramfs.sh (/opt/oci), `runc run -d --no-pivot` (the
# initramfs's root is rootfs, which pivot_root refuses). Every payload
# (tests/vm/runc-payload.sh) reads /etc/shadow with cat and connects to
# 169.254.169.254:80 with nc, in rounds, one line of stdout per attempt.
#   plain    no agent yet: runc works here at all, the payload reads the
#            (fake) hash, and its connect fails with ENETUNREACH (the
#            container's network namespace has only lo, down), so an
#            EPERM later is stockade's;
#   early    started before the agent, cgroupsPath /docker/stk-early,
#            policy runc-docker (cgroups: [/docker/*]): it reads the hash
#            before the agent; once agent_ready is out, every attempt is
#            refused with one deny record each, and its init keeps its
#            pid (no restart);
#   created  `runc create` before the agent, `runc start` once it is
#            ready: runc's setup unconfined, the payload confined from its
#            first exec on (what a container started while the agent runs
#            should see): it starts, its first read and connect refused
#            and logged;
#   d1..d5   started at once while the agent runs, /docker/stk-dN: each
#            starts, and its payload's first read and first connect are
#            already refused and logged;
#   nested   started while the agent runs under a confined parent
#            (policy runc-parent, cgroups: [/runc-parent], the container
#            in /runc-parent/stk-nested): the same;
#   exec     `runc exec` into a container started while the agent runs:
#            runc's own steps go through (`true` exits 0), the command
#            is judged (`head /etc/shadow` refused, one record).
# The payloads' pids are their pid namespace's, so records are matched
# by the container's cgroup id (and the parent's for nested: whichever
# the record names), and counted against the refused attempts: one each.
#
# Env (from tests/vm/suite.sh): STOCKADE, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS (optional, unquoted on purpose: several flags).

. tests/vm/lib.sh

T=runc
RUNC=/usr/sbin/runc
tmpl=/opt/oci/config.json
work=/tmp/runc
log=$work/agent.log
bpffs=/sys/fs/bpf/runc
docker=$CGROUP_ROOT/docker
parent=$CGROUP_ROOT/runc-parent
plain=$CGROUP_ROOT/runc-plain
LATE="stk-d1 stk-d2 stk-d3 stk-d4 stk-d5"
agent=
ids=

EPERM_TXT='Operation not permitted'
SHADOW='"event":"deny" "kind":"file" "op":"open_read" "path":"/etc/shadow" "reason":"protected" "comm":"cat"'
META='"event":"deny" "kind":"connect" "daddr":"169.254.169.254" "dport":80, "reason":"metadata_endpoint" "comm":"nc"'

if [ "$(hostname)" != stockade-vm ] || [ ! -f /init ]; then
	t_fail $T/guest "refusing to run outside the test VM: it starts containers and confines /docker/*"
	exit 0
fi
rm -rf "$work"
mkdir -p "$work"
: > "$log"
set -f	# record fields are case patterns, never file globs

# rm_cg DIR: DIR and every cgroup below it, deepest first (lib.sh's
# cg_remove on each).
rm_cg() {
	[ -d "$1" ] || return 0
	# shellcheck disable=SC2046
	cg_remove $(find "$1" -depth -type d)
}

cleanup() {
	for _id in $ids; do
		"$RUNC" delete -f "$_id" > /dev/null 2>&1
	done
	if [ -n "$agent" ]; then
		kill -9 "$agent" 2>/dev/null
		wait "$agent" 2>/dev/null
	fi
	[ -d "$bpffs" ] && "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
	rm_cg "$docker"
	rm_cg "$parent"
	rm_cg "$plain"
}
trap cleanup EXIT

short() { printf '%s' "$1" | tr '\n' ' ' | cut -c 1-300; }

# ctr_start ID CGROUPS_PATH TRIES [create]: `runc run -d` one container
# of the bundle (or only `runc create` it: the payload starts at
# ctr_go). $work/ID holds its config.json (the template, placeholders
# filled), out (the payload's stdout, passed through by runc), err
# (runc's stderr) and rc (runc's exit status).
ctr_start() {
	_cd=$work/$1 _verb="run -d"
	mkdir -p "$_cd"
	sed -e "s|@CGROUPS_PATH@|$2|" -e "s|@TRIES@|$3|" "$tmpl" > "$_cd/config.json"
	[ "${4:-}" != create ] || _verb=create
	# shellcheck disable=SC2086
	timeout 60 "$RUNC" $_verb --no-pivot -b "$_cd" "$1" \
		< /dev/null > "$_cd/out" 2> "$_cd/err"
	echo $? > "$_cd/rc"
}

# ctr_go ID: `runc start` a created container (rc: create's, else start's).
ctr_go() {
	[ "$(cat "$work/$1/rc")" = 0 ] || return 0
	timeout 60 "$RUNC" start "$1" 2>> "$work/$1/err"
	echo $? > "$work/$1/rc"
}

# ctr_field ID FIELD: pid or status from `runc state`.
ctr_field() {
	"$RUNC" state "$1" 2>/dev/null |
		sed -n "s/^[[:space:]]*\"$2\": *\"*\([a-z0-9]*\)\"*,*\$/\1/p"
}

# The deny records naming container ID (its cgroup, or its /run/runc
# state) since log line $mark, for a start that failed: why it failed,
# when the agent is the cause. Short: kind, then comm and the fields
# after the common ones.
runc_recs() {
	tail -n "+$mark" "$log" | grep '"event":"deny"' | grep -F "$1" > "$work/$1.recs"
	[ -s "$work/$1.recs" ] || return 0
	echo "; $(wc -l < "$work/$1.recs") deny record(s) for $1: $(head -n 3 "$work/$1.recs" |
		sed 's/^.*"kind":"\([a-z_]*\)".*"uid":[0-9]*,/kind=\1 /; s/}$//' | tr '\n' ' ')"
	echo "; its setup records: $(grep '"event":"setup"' "$log" | grep -F "/$1\"" | tail -n 4 |
		sed 's/^.*"cgroup_id"/"cgroup_id"/' | tr '\n' ' ')"
	# Its attach record: when it was classified, and its setup_pass.
	echo "; attach: $(grep '"event":"attach"' "$log" | grep -F "/$1\"" | tail -n 1 |
		sed 's/^.*"cgroup"/"cgroup"/')"
}

# started NAME ID: runc exited 0 and the payload's first line came.
started() {
	_cd=$work/$2
	_rc=$(cat "$_cd/rc" 2>/dev/null)
	if [ "$_rc" = 0 ] && wait_for 20 grep -q '^payload: started' "$_cd/out"; then
		t_ok "$1/starts"
		return 0
	fi
	# runc's messages without their time and level: the detail fits.
	t_fail "$1/starts" "runc exited ${_rc:-?}, payload output '$(short "$(head -n 2 "$_cd/out")")'$(runc_recs "$2"); runc: $(sed 's/^time="[^"]*" level=[a-z]* msg="\(.*\)"$/\1/' "$_cd/err" | tail -n 4 | tr '\n' '/' | cut -c 1-400)"
	t_show "$_cd/err" 8
	return 1
}

# finished ID: the payload wrote its last line (every attempt is in out).
finished() {
	wait_for "${2:-30}" grep -q '^payload: done' "$work/$1/out"
}

# judge NAME ID OP FIELDS CGIDS AFTER: the payload's OP attempts that
# began after uptime AFTER (0: every one; then the first must be try=1)
# were all refused, and the records of the cgroup ids CGIDS with FIELDS
# number exactly the refused attempts (every refused attempt, AFTER or
# not: an attempt that began before agent_ready was seen may still be
# refused, and logged).
judge() {
	_nm=$1 _cd=$work/$2 _op=$3 _f=$4 _cg=$5 _after=$6
	awk -v op="op=$_op" -v after="$_after" \
		'$2 == op { split($3, u, "="); if (u[2] + 0 > after + 0) print }' \
		"$_cd/out" > "$_cd/$_op.after"
	_first=$(head -n 1 "$_cd/$_op.after")
	_tried=$(wc -l < "$_cd/$_op.after")
	_refused=$(grep -c "$EPERM_TXT" "$_cd/$_op.after")
	_all=$(grep "^try=[0-9]* op=$_op " "$_cd/out" | grep -c "$EPERM_TXT")
	: > "$_cd/$_op.recs"
	for _c in $_cg; do
		grep "\"cgroup_id\":$_c," "$log" >> "$_cd/$_op.recs"
	done
	_hit=0
	while IFS= read -r _line; do
		has_all "$_line" "$_f" && _hit=$((_hit + 1))
	done < "$_cd/$_op.recs"
	_err=
	if [ -z "$_first" ]; then
		_err="no $_op attempt after uptime $_after: $(short "$(tail -n 2 "$_cd/out")")"
	else
		case $_first in
		*"$EPERM_TXT"*) ;;
		*) _err="the first $_op attempt was not refused: $(short "$_first")" ;;
		esac
		[ "$_after" != 0 ] || case $_first in
			"try=1 "*) ;;
			*) _err="${_err:+$_err; }its first $_op line is not try=1: $(short "$_first")" ;;
			esac
		[ "$_refused" = "$_tried" ] ||
			_err="${_err:+$_err; }$((_tried - _refused)) of $_tried attempts not refused, first: $(short "$(grep -v "$EPERM_TXT" "$_cd/$_op.after" | head -n 1)")"
		[ "$_hit" = "$_all" ] ||
			_err="${_err:+$_err; }$_hit record(s) with $_f for $_all refused attempt(s); the cgroup's records: $(wc -l < "$_cd/$_op.recs"), first: $(short "$(head -n 1 "$_cd/$_op.recs")")"
	fi
	if [ -z "$_err" ]; then
		t_ok "$_nm"
	else
		t_fail "$_nm" "$_err"
	fi
}

# judge_ctr NAME ID POLICY CGIDS AFTER: both of its payload's attempts.
judge_ctr() {
	judge "$1/shadow-refused" "$2" shadow "$SHADOW \"policy\":\"$3\"" "$4" "$5"
	judge "$1/metadata-refused" "$2" metadata "$META \"policy\":\"$3\"" "$4" "$5"
}

# Everything judged after the agent started, as not run (the count of
# results stays the same whatever broke).
not_run() {
	t_fail $T/early/shadow-refused "not run: $1"
	t_fail $T/early/metadata-refused "not run: $1"
	t_fail $T/early/pid-unchanged "not run: $1"
	for _id in created $LATE nested; do
		_nm=$T/${_id#stk-}
		t_fail "$_nm/starts" "not run: $1"
		t_fail "$_nm/shadow-refused" "not run: $1"
		t_fail "$_nm/metadata-refused" "not run: $1"
	done
	t_fail $T/no-lost-records "not run: $1"
	t_fail $T/cleanup "not run: $1"
}

if [ ! -x "$RUNC" ] || [ ! -r "$tmpl" ]; then
	why="no $RUNC or $tmpl in the initramfs: install runc and python3-minimal (make deps) and rebuild it (make vm-initramfs)"
	t_fail $T/plain/starts "$why"
	t_fail $T/plain/payload "not run: $why"
	t_fail $T/early/starts "not run: $why"
	t_fail $T/early/reads-before-agent "not run: $why"
	t_fail $T/agent-ready "not run: $why"
	not_run "$why"
	exit 0
fi
mkdir -p "$parent"
mark=1

# ---- plain: runc alone ----
ids="$ids stk-plain"
ctr_start stk-plain /runc-plain/stk-plain 1
if started $T/plain stk-plain; then
	finished stk-plain 20
	s=$(grep '^try=1 op=shadow ' "$work/stk-plain/out")
	m=$(grep '^try=1 op=metadata ' "$work/stk-plain/out")
	case $s in
	*notarealhash*) _bad= ;;
	*) _bad="want the rootfs's /etc/shadow read, got '$(short "$s")'" ;;
	esac
	case $m in
	*'Network is unreachable'*) ;;
	*) _bad="${_bad:+$_bad; }want ENETUNREACH from the connect (a network namespace with lo only), got '$(short "$m")'" ;;
	esac
	if [ -z "$_bad" ]; then
		t_ok $T/plain/payload
	else
		t_fail $T/plain/payload "$_bad"
		t_show "$work/stk-plain/out" 6
	fi
else
	t_fail $T/plain/payload "not run: the container did not start"
fi
"$RUNC" delete -f stk-plain > /dev/null 2>&1
rm_cg "$plain"

# ---- early: running before the agent ----
ids="$ids stk-early"
ctr_start stk-early /docker/stk-early 1000
early_ok=0
if started $T/early stk-early; then
	early_ok=1
	early_pid=$(ctr_field stk-early pid)
	# One whole round before the agent: the read that works now is
	# refused later in the same process, with no restart in between.
	if wait_for 20 grep -q '^try=[0-9]* op=metadata ' "$work/stk-early/out" &&
	   grep -q '^try=1 op=shadow .*notarealhash' "$work/stk-early/out"; then
		t_ok $T/early/reads-before-agent
	else
		t_fail $T/early/reads-before-agent "want a first round with the hash read: $(short "$(head -n 3 "$work/stk-early/out")")"
	fi
else
	t_fail $T/early/reads-before-agent "not run: the container did not start"
fi

# ---- created: set up before the agent, its payload started after ----
# What the agent's setup pass is to give a container started while it
# runs: runc's own setup unjudged, the payload's first exec confined.
ids="$ids stk-created"
ctr_start stk-created /docker/stk-created 3 create

# shellcheck disable=SC2086
"$STOCKADE" agent --policy tests/vm/runc-docker.yaml --policy tests/vm/runc-parent.yaml \
	--log "$log" --bpffs "$bpffs" --detach-on-exit ${STOCKADE_AGENT_FLAGS:-} \
	> "$work/agent.out" 2> "$work/agent.err" &
agent=$!
gone_agent() {
	! alive "$agent"
}
ready_or_dead() {
	grep -q '"event":"agent_ready"' "$log" || ! alive "$agent"
}
wait_for 60 ready_or_dead
read -r up_ready _ < /proc/uptime
ready=$(grep '"event":"agent_ready"' "$log" | head -n 1)
_deg=1 _pol=1
case $ready in *'"degraded":[]'*) _deg=0 ;; esac
case $ready in *'"policies":["runc-docker","runc-parent"]'*) _pol=0 ;; esac
if [ "$_deg$_pol" = 00 ]; then
	t_ok $T/agent-ready
else
	t_fail $T/agent-ready "want agent_ready with both policies and nothing degraded: ${ready:-none}; $(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
	t_show "$work/agent.err"
	not_run "no agent"
	exit 0
fi
mark=$(($(wc -l < "$log") + 1))

# ---- early, judged: refused from agent_ready on, never restarted ----
has_after() {
	awk -v after="$up_ready" '$2 == "op=metadata" { split($3, u, "="); if (u[2] + 0 > after + 0) f = 1 }
		END { exit !f }' "$work/stk-early/out"
}
if [ "$early_ok" = 1 ]; then
	wait_for 30 has_after
	pid_now=$(ctr_field stk-early pid)
	status=$(ctr_field stk-early status)
	if [ -n "$early_pid" ] && [ "$pid_now" = "$early_pid" ] && [ "$status" = running ]; then
		t_ok $T/early/pid-unchanged
	else
		t_fail $T/early/pid-unchanged "init pid ${early_pid:-?} before the agent, ${pid_now:-none} now, status '${status:-none}'"
	fi
	# A TERM ends the loop after the attempt under way: every attempt
	# made then has its line, to count against the records.
	"$RUNC" kill stk-early TERM 2>/dev/null
	finished stk-early 20
	log_settle "$log"
	cg=$(stat -c %i "$docker/stk-early" 2>/dev/null)
	judge_ctr $T/early stk-early runc-docker "${cg:-none}" "$up_ready"
else
	t_fail $T/early/pid-unchanged "not run: the container did not start"
	t_fail $T/early/shadow-refused "not run: the container did not start"
	t_fail $T/early/metadata-refused "not run: the container did not start"
fi

ctr_go stk-created

# ---- d1..d5 at once, and nested, while the agent runs ----
pids=
for id in $LATE; do
	ids="$ids $id"
	ctr_start "$id" "/docker/$id" 3 &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p"
done
ids="$ids stk-nested"
ctr_start stk-nested /runc-parent/stk-nested 3
pcg=$(stat -c %i "$parent")
up=
for id in stk-created $LATE stk-nested; do
	n=$T/${id#stk-}
	if ! started "$n" "$id"; then
		t_fail "$n/shadow-refused" "not run: the container did not start"
		t_fail "$n/metadata-refused" "not run: the container did not start"
		continue
	fi
	up="$up $id"
	finished "$id" 30
done
log_settle "$log"
for id in $up; do
	n=$T/${id#stk-}
	if [ "$id" = stk-nested ]; then
		cg=$(stat -c %i "$parent/stk-nested" 2>/dev/null)
		judge_ctr "$n" "$id" runc-parent "${cg:-none} $pcg" 0
	else
		cg=$(stat -c %i "$docker/$id" 2>/dev/null)
		judge_ctr "$n" "$id" runc-docker "${cg:-none}" 0
	fi
done

# ---- exec: `runc exec` into a container started while the agent runs ----
# runc's setns process is moved into the container's cgroup by its
# parent once it has joined the container's namespaces; its Go runtime
# has threads by then, and only the leader gets a setup pass. runc's own
# steps go through, the command it runs is judged: `true` exits 0, `head
# /etc/shadow` is refused with one record (comm head: the payload's
# reads are cat's).
ids="$ids stk-exec"
ctr_start stk-exec /docker/stk-exec 1000
if started $T/exec stk-exec; then
	timeout 60 "$RUNC" exec stk-exec true > "$work/exec-true.out" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		t_ok $T/exec/true
	else
		t_fail $T/exec/true "runc exec true: exit $rc: $(short "$(cat "$work/exec-true.out")")$(runc_recs stk-exec)"
	fi
	timeout 60 "$RUNC" exec stk-exec head -n 1 /etc/shadow > "$work/exec-head.out" 2>&1
	log_settle "$log"
	cg=$(stat -c %i "$docker/stk-exec" 2>/dev/null)
	nrec=$(grep '"event":"deny"' "$log" | grep '"comm":"head"' |
		grep -c "\"cgroup_id\":${cg:-none},.*\"path\":\"/etc/shadow\"")
	if ! grep -q "$EPERM_TXT" "$work/exec-head.out"; then
		t_fail $T/exec/shadow-refused "runc exec head /etc/shadow: $(short "$(cat "$work/exec-head.out")")$(runc_recs stk-exec)"
	elif [ "$nrec" != 1 ]; then
		t_fail $T/exec/shadow-refused "refused with $nrec records (want 1): $(grep '"comm":"head"' "$log" | head -n 2)"
	else
		t_ok $T/exec/shadow-refused
	fi
else
	t_fail $T/exec/true "not run: the container did not start"
	t_fail $T/exec/shadow-refused "not run: the container did not start"
fi

# For whoever reads the console after a failed start: every refusal but
# the payloads' own attempts (runc's processes, before the payload's exec).
grep '"event":"deny"' "$log" | grep -v -e '"comm":"cat"' -e '"comm":"nc"' > "$work/others"
[ ! -s "$work/others" ] || t_show "$work/others" 30

if grep -q '"event":"lost"' "$log"; then
	t_fail $T/no-lost-records "$(grep '"event":"lost"' "$log" | head -n 1)"
else
	t_ok $T/no-lost-records
fi

# Nothing left behind: the agent stops on SIGTERM (--detach-on-exit takes
# its pins), every container is deleted with its cgroup.
kill -TERM "$agent"
wait_for 10 gone_agent
left=
if alive "$agent"; then
	left="the agent, 10 s after SIGTERM"
else
	wait "$agent"
	rc=$?
	[ "$rc" = 0 ] || left="the agent's exit status $rc"
	agent=
fi
for id in $ids; do
	"$RUNC" delete -f "$id" > /dev/null 2>&1
done
rm_cg "$docker"
rm_cg "$parent"
[ -z "$("$RUNC" list -q 2>/dev/null)" ] || left="${left:+$left, }containers $("$RUNC" list -q | tr '\n' ' ')"
for d in "$docker" "$parent" "$plain" "$bpffs"; do
	[ ! -e "$d" ] || left="${left:+$left, }$d"
done
if [ -z "$left" ]; then
	t_ok $T/cleanup
else
	t_fail $T/cleanup "left behind: $left"
fi
exit 0
