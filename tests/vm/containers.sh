#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Containers as the runtimes lay them out, selected by what they are
# (containers:, pods:), not by a cgroup glob. Debian's runc with the
# busybox bundle of tests/vm/mkinitramfs.sh (/opt/oci/config-ctr.json),
# `runc run -d --no-pivot`, runc's cgroupfs driver (no systemd in the
# guest: it makes every directory of cgroupsPath as named, slices too),
# one agent with the four policies of tests/vm/containers/ for all of it:
#   docker   /docker/<64hex>, names from the config.v2.json dockerd would
#            have written (/var/lib/docker/containers/<id>/), no hook:
#            policy ctr-docker, containers: [{runtime: docker, name: web-*}]
#   cri      containerd CRI under a systemd kubelet: /kubepods.slice/
#            kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice/
#            cri-containerd-<id>.scope (cri-g: a guaranteed pod's,
#            /kubepods.slice/kubepods-pod<uid_>.slice/...), the
#            io.kubernetes.cri.* annotations in config.json and
#            `stockade oci-hook` as its createRuntime hook: policy ctr-cri,
#            pods: [default/web-*]
#   podman   /machine.slice/libpod-<id>.scope (podman-crun: crun's
#            "container" child below the scope), the hook: policy
#            ctr-podman, containers: [{runtime: podman, id: c0de*}]
#   control  /ctl/<name>, policy ctr-control, cgroups: [/ctl/*]: the same
#            rules by a glob; its records carry no container object.
# The payload (tests/vm/ctr-payload.sh) reads /etc/shadow, connects to
# $ADDR:$PORT (no rule allows it; the container's network namespace has
# only lo, down, so a connect stockade let through fails ENETUNREACH) and,
# in the early containers, forks 12 sleeps against `pids: 8`.
#   early    one of each form (docker, cri, podman, control) started before
#            the agent, one round before it (read works, connect
#            ENETUNREACH, 12 forks); the agent starts; one more round
#            (SIGUSR1) in the same process, which keeps its pid: the read,
#            the connect and a fork refused, one deny record each and one
#            limit record, each naming the container;
#   late     docker web-2, cri-g, podman-crun, control started while the
#            agent runs: their payloads' first read and first connect
#            refused, one record each naming the container;
#   outside  /docker/not-hex (a directory of docker's no form resolves:
#            one container_unresolved record says so) and docker's db-1
#            (a container the name glob does not select): unconfined, no
#            deny record.
# Records are matched by the container's cgroup id (the payloads' pids
# are their pid namespace's).
#
# Env (from tests/vm/suite.sh): STOCKADE, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS (optional, unquoted on purpose: several flags).

# _miss (has_all) and ready (agent_wait_ready) are lib.sh's.
# shellcheck disable=SC2154,SC2317
. tests/vm/lib.sh

T=containers
RUNC=/usr/sbin/runc
tmpl=/opt/oci/config-ctr.json
work=/tmp/containers
log=$work/agent.log
bpffs=/sys/fs/bpf/containers
hookdir=/run/stockade/containers
dockerdir=/var/lib/docker/containers
ADDR=10.9.9.9 PORT=80
EARLY="docker cri podman control"
LATE="docker2 cri-g podman-crun control2"
OUTSIDE="nothex dockerdb"
TREES="docker kubepods.slice machine.slice ctl"
agent=
ids=

EPERM_TXT='Operation not permitted'
UNREACH_TXT='Network is unreachable'
SHADOW='"event":"deny" "kind":"file" "op":"open_read" "path":"/etc/shadow" "reason":"protected" "comm":"cat"'
CONNECT="\"event\":\"deny\" \"kind\":\"connect\" \"daddr\":\"$ADDR\" \"dport\":$PORT, \"reason\":\"not_allowed\" \"comm\":\"nc\""
PIDS='"event":"limit" "kind":"pids" "limit":8,'

if [ "$(hostname)" != stockade-vm ] || [ ! -f /init ]; then
	t_fail $T/guest "refusing to run outside the test VM: it starts containers under /docker, /kubepods.slice, /machine.slice"
	exit 0
fi
read -r t0 _ < /proc/uptime
rm -rf "$work"
mkdir -p "$work"
: > "$log"
set -f	# record fields are case patterns, never file globs

rm_cg() {
	[ -d "$1" ] || return 0
	# shellcheck disable=SC2046
	cg_remove $(find "$1" -depth -type d)
}

cleanup() {
	for _id in $ids; do
		"$RUNC" delete -f "$_id" > /dev/null 2>&1
		rm -f "$hookdir/$_id.json"
		rm -rf "${dockerdir:?}/$_id"
	done
	if [ -n "$agent" ]; then
		kill -9 "$agent" 2>/dev/null
		wait "$agent" 2>/dev/null
	fi
	[ -d "$bpffs" ] && "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
	for _t in $TREES; do
		rm_cg "$CGROUP_ROOT/$_t"
	done
}
trap cleanup EXIT

short() { printf '%s' "$1" | tr '\n' ' ' | cut -c 1-300; }

# hexid SEED: a 64-hex-digit id, the same for the same seed.
hexid() { printf '%s' "$1" | sha256sum | cut -c 1-64; }
# A pod UID, 8-4-4-4-12, from 32 hex digits.
uuid() { printf '%s' "$1" | sed 's/^\(.\{8\}\)\(.\{4\}\)\(.\{4\}\)\(.\{4\}\)\(.\{12\}\).*/\1-\2-\3-\4-\5/'; }

# The createRuntime hook: runc runs it in the runtime's namespaces once
# the container's exist, with the OCI state (annotations included) on
# stdin; it writes $hookdir/<id>.json, where the agent reads the names.
# Without the command (a build before `stockade oci-hook`), the containers
# start without it, and the checks that need its names fail saying why.
if "$STOCKADE" oci-hook < /dev/null 2>&1 | grep -q "unknown command 'oci-hook'"; then
	hook_json='"createRuntime": []'
	no_hook="this stockade has no oci-hook command"
else
	hook_json="\"createRuntime\": [{\"path\": \"$STOCKADE\", \"args\": [\"stockade\", \"oci-hook\"], \"timeout\": 10}]"
	no_hook=
fi

# def KEY FORM SEED POLICY MODE: one container: $work/KEY/ holds its id,
# cg (cgroupsPath), sel (the cgroup its policy selects, the cgroup itself
# but for crun's child), policy, fields (what each of its records must
# name: its container object, case patterns) and config.json.
def() {
	_k=$1 _form=$2 _seed=$3 _pol=$4 _mode=$5
	_d=$work/$_k
	mkdir -p "$_d"
	_id=$(hexid "$_k/$_seed")
	_ann='"stockade.test": "plain"'
	_hook='"createRuntime": []'
	_f=
	case $_form in
	docker|dockerdb)
		_name=web-${_seed##*-}
		[ "$_form" = docker ] || _name=db-1
		_cg=/docker/$_id
		# What dockerd writes before it asks containerd for the task.
		mkdir -p "$dockerdir/$_id"
		printf '{"ID":"%s","Name":"/%s","Config":{"Image":"busybox","Labels":{}}}\n' \
			"$_id" "$_name" > "$dockerdir/$_id/config.v2.json"
		_f="\"container\":{\"runtime\":\"docker\" \"id\":\"$_id\" \"name\":\"$_name\" \"image\":\"busybox\""
		;;
	cri|cri-g)
		_h=$(hexid "pod/$_k/$_seed")
		_uid=$(uuid "$_h")
		_u=$(printf '%s' "$_uid" | tr - _)
		_pod=web-${_seed##*-}
		if [ "$_form" = cri ]; then
			_cg=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$_u.slice/cri-containerd-$_id.scope
		else
			_cg=/kubepods.slice/kubepods-pod$_u.slice/cri-containerd-$_id.scope
		fi
		# What containerd's CRI plugin writes into every container's spec.
		_ann="\"io.kubernetes.cri.container-type\": \"container\", \"io.kubernetes.cri.container-name\": \"web\", \"io.kubernetes.cri.sandbox-id\": \"$_h$_h\", \"io.kubernetes.cri.sandbox-name\": \"$_pod\", \"io.kubernetes.cri.sandbox-namespace\": \"default\", \"io.kubernetes.cri.sandbox-uid\": \"$_uid\", \"io.kubernetes.cri.image-name\": \"docker.io/library/busybox:latest\""
		_hook=$hook_json
		_f="\"container\":{\"runtime\":\"containerd\" \"id\":\"$_id\" \"name\":\"web\" \"image\":\"docker.io/library/busybox:latest\" \"pod\":{\"namespace\":\"default\",\"name\":\"$_pod\",\"uid\":\"$_uid\"}"
		;;
	podman|podman-crun)
		_id=c0de$(printf '%s' "$_id" | cut -c 5-64)
		_cg=/machine.slice/libpod-$_id.scope
		[ "$_form" = podman ] || _cg=$_cg/container
		_ann='"io.container.manager": "libpod"'
		_hook=$hook_json
		_f="\"container\":{\"runtime\":\"podman\" \"id\":\"$_id\""
		;;
	control)
		_cg=/ctl/$_k
		;;
	nothex)
		_id=not-hex
		_cg=/docker/not-hex
		;;
	esac
	_sel=$_cg
	[ "$_form" != podman-crun ] || _sel=${_cg%/container}
	echo "$_id" > "$_d/id"
	echo "$_cg" > "$_d/cg"
	echo "$_sel" > "$_d/sel"
	echo "$_pol" > "$_d/policy"
	echo "$_form" > "$_d/form"
	printf '%s\n' "$_f" > "$_d/fields"
	_forks=0
	[ "$_mode" = once ] || _forks=12
	sed -e "s|@CGROUPS_PATH@|$_cg|" -e "s|@MODE@|$_mode|" -e "s|@ADDR@|$ADDR|" \
	    -e "s|@PORT@|$PORT|" -e "s|@FORKS@|$_forks|" \
	    -e "s|\"@ANNOTATIONS@\": \"\"|$_ann|" -e "s|\"@HOOKS@\": \[\]|$_hook|" \
	    "$tmpl" > "$_d/config.json"
	ids="$ids $_id"
}

# ctr_start KEY: `runc run -d` it; out is the payload's stdout, err runc's
# stderr, rc runc's exit status.
ctr_start() {
	_d=$work/$1
	timeout 60 "$RUNC" run -d --no-pivot -b "$_d" "$(cat "$_d/id")" \
		< /dev/null > "$_d/out" 2> "$_d/err"
	echo $? > "$_d/rc"
}

# ctr_pid KEY: its init's pid (host's numbering), from `runc state`.
ctr_pid() {
	"$RUNC" state "$(cat "$work/$1/id")" 2>/dev/null |
		sed -n 's/^[[:space:]]*"pid": *\([0-9]*\),*$/\1/p'
}

# started KEY LINE: runc exited 0 and the payload printed LINE.
started() {
	_d=$work/$1
	_rc=$(cat "$_d/rc" 2>/dev/null)
	if [ "$_rc" = 0 ] && wait_for 20 grep -q "^$2" "$_d/out"; then
		t_ok "$T/$1/starts"
		return 0
	fi
	t_fail "$T/$1/starts" "runc exited ${_rc:-?} ($(cat "$_d/cg")), payload output '$(short "$(head -n 3 "$_d/out")")'; runc: $(sed 's/^time="[^"]*" level=[a-z]* msg="\(.*\)"$/\1/' "$_d/err" | tail -n 4 | tr '\n' '/' | cut -c 1-400)"
	# What the agent said about its cgroup (gone once runc gave up: by
	# path), for whoever reads the console.
	grep -F "\"cgroup\":\"$(cat "$_d/cg")" "$log" > "$_d/why" 2>/dev/null
	[ ! -s "$_d/why" ] || t_show "$_d/why" 20
	return 1
}

# cgids KEY: the cgroup ids its records may name (its own; and the
# scope for crun's child).
cgids() {
	_d=$work/$1
	_c=$(stat -c %i "$CGROUP_ROOT$(cat "$_d/cg")" 2>/dev/null)
	_s=$(stat -c %i "$CGROUP_ROOT$(cat "$_d/sel")" 2>/dev/null)
	echo "${_c:-none}"
	[ "$_s" = "$_c" ] || echo "${_s:-none}"
}

# recs KEY EVENT: its records of EVENT (any cgroup id of cgids).
recs() {
	for _c in $(cgids "$1"); do
		grep "\"event\":\"$2\"" "$log" | grep "\"cgroup_id\":${_c}[,}]"
	done
}

# attempt KEY TRY OP: the payload's line for attempt TRY of OP.
attempt() { grep "^try=$2 op=$3 " "$work/$1/out" | head -n 1; }

# one_record NAME KEY EVENT FIELDS: exactly one of KEY's EVENT records has
# FIELDS, and it names the container (its fields file).
one_record() {
	_nm=$1 _k=$2 _ev=$3 _want=$4
	_cf=$(cat "$work/$_k/fields")
	recs "$_k" "$_ev" > "$work/$_k/$_ev.recs"
	_hit=0 _named=0 _bad=
	while IFS= read -r _line; do
		has_all "$_line" "$_want \"policy\":\"$(cat "$work/$_k/policy")\"" || continue
		_hit=$((_hit + 1))
		if [ -z "$_cf" ]; then
			# A cgroup no form names: no container object at all.
			case $_line in
			*'"container":'*) _bad="a container object where none is known: $(short "$_line")" ;;
			*) _named=$((_named + 1)) ;;
			esac
		elif has_all "$_line" "$_cf"; then
			_named=$((_named + 1))
		else
			_bad="lacks $_miss: $(short "$_line")"
		fi
	done < "$work/$_k/$_ev.recs"
	if [ "$_hit" = 1 ] && [ "$_named" = 1 ]; then
		t_ok "$_nm"
	elif [ "$_hit" != 1 ]; then
		t_fail "$_nm" "$_hit records with $_want (want 1); the cgroup's $_ev records: $(wc -l < "$work/$_k/$_ev.recs"), first: $(short "$(head -n 1 "$work/$_k/$_ev.recs")")"
	else
		t_fail "$_nm" "the record ${_bad:-does not name the container}"
	fi
}

# refused NAME KEY TRY OP FIELDS: the attempt was refused with EPERM, and
# exactly one record has FIELDS (NAME-refused, NAME-record: both reported
# whatever happens, so the count of results stays the same).
refused() {
	_l=$(attempt "$2" "$3" "$4")
	case $_l in
	*"$EPERM_TXT"*)
		t_ok "$1-refused"
		one_record "$1-record" "$2" deny "$5" ;;
	*)
		t_fail "$1-refused" "want EPERM, got '$(short "${_l:-no try=$3 op=$4 line: $(tail -n 2 "$work/$2/out")}")'"
		t_fail "$1-record" "not run: the attempt was not refused" ;;
	esac
}

# judge_round KEY TRY: its payload's round TRY, the read and the connect
# refused, one record each naming the container.
judge_round() {
	refused "$T/$1/shadow" "$1" "$2" shadow "$SHADOW"
	refused "$T/$1/connect" "$1" "$2" connect "$CONNECT"
}

# only_records KEY N: KEY's cgroups have N deny records, no more (every
# refusal one record, and nothing else refused there: runc's own steps).
only_records() {
	recs "$1" deny > "$work/$1/all.recs"
	_n=$(wc -l < "$work/$1/all.recs")
	if [ "$_n" = "$2" ]; then
		t_ok "$T/$1/no-other-denials"
	else
		t_fail "$T/$1/no-other-denials" "$_n deny records for its cgroup, want $2: $(sed 's/^.*"kind":"\([a-z_]*\)".*"comm":"\([^"]*\)".*$/\1 by \2/' "$work/$1/all.recs" | sort | uniq -c | tr '\n' ' ')"
	fi
}

# attach_named KEY: the agent's attach record for the cgroup its policy
# selects names the container (or, for the control, none).
attach_named() {
	_s=$(stat -c %i "$CGROUP_ROOT$(cat "$work/$1/sel")" 2>/dev/null)
	_a=$(grep '"event":"attach"' "$log" | grep "\"cgroup_id\":${_s:-none}[,}]" | head -n 1)
	_cf=$(cat "$work/$1/fields")
	if [ -z "$_a" ]; then
		t_fail "$T/$1/attach-record" "no attach record for $(cat "$work/$1/sel") (cgroup id ${_s:-none})"
	elif [ -z "$_cf" ]; then
		case $_a in
		*'"container":'*) t_fail "$T/$1/attach-record" "a container object where none is known: $(short "$_a")" ;;
		*) t_ok "$T/$1/attach-record" ;;
		esac
	elif has_all "$_a" "$_cf \"policy\":\"$(cat "$work/$1/policy")\""; then
		t_ok "$T/$1/attach-record"
	else
		t_fail "$T/$1/attach-record" "lacks $_miss: $(short "$_a")"
	fi
}

# hook_record KEY: the oci-hook wrote the container's names.
hook_record() {
	_id=$(cat "$work/$1/id")
	if [ -n "$no_hook" ]; then
		t_fail "$T/$1/hook-record" "not run: $no_hook"
	elif [ -s "$hookdir/$_id.json" ]; then
		t_ok "$T/$1/hook-record"
	else
		t_fail "$T/$1/hook-record" "no $hookdir/$_id.json after runc's createRuntime hook; runc: $(tail -n 2 "$work/$1/err" | tr '\n' ' ' | cut -c 1-300)"
	fi
}

if [ ! -x "$RUNC" ] || [ ! -r "$tmpl" ]; then
	t_fail $T/setup "no $RUNC or $tmpl in the initramfs: install runc and python3-minimal (make deps) and rebuild it (make vm-initramfs)"
	exit 0
fi
[ -z "$no_hook" ] || t_fail $T/oci-hook "$no_hook: the cri and podman containers start without their createRuntime hook, and nothing names their pods"

# ---- early: one of each form, before the agent ----
def docker docker early-1 ctr-docker wait
def cri cri early-1 ctr-cri wait
def podman podman early-1 ctr-podman wait
def control control early-1 ctr-control wait
pids=
for k in $EARLY; do
	ctr_start "$k" &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p"
done
up_early=
for k in $EARLY; do
	if ! started "$k" 'payload: ready'; then
		t_fail "$T/$k/before-agent" "not run: the container did not start"
		continue
	fi
	up_early="$up_early $k"
	ctr_pid "$k" > "$work/$k/pid0"
	s=$(attempt "$k" 1 shadow) c=$(attempt "$k" 1 connect) f=$(attempt "$k" 1 forks)
	_bad=
	case $s in *notarealhash*) ;; *) _bad="want the hash read, got '$(short "$s")'" ;; esac
	case $c in *"$UNREACH_TXT"*) ;; *) _bad="${_bad:+$_bad; }want ENETUNREACH, got '$(short "$c")'" ;; esac
	case $f in *"started=12 refused=0"*) ;; *) _bad="${_bad:+$_bad; }want 12 forks, got '$(short "$f")'" ;; esac
	if [ -z "$_bad" ]; then
		t_ok "$T/$k/before-agent"
	else
		t_fail "$T/$k/before-agent" "$_bad"
	fi
done
for k in cri podman; do
	case " $up_early " in *" $k "*) hook_record "$k" ;; esac
done

# ---- the agent, once for everything below ----
echo "containers: agent at $(cut -d' ' -f1 /proc/uptime) s"
# shellcheck disable=SC2086
"$STOCKADE" agent --policy tests/vm/containers --log "$log" --bpffs "$bpffs" \
	--detach-on-exit ${STOCKADE_AGENT_FLAGS:-} > "$work/agent.out" 2> "$work/agent.err" &
agent=$!
gone_agent() { ! alive "$agent"; }
agent_wait_ready
_bad=
case $ready in *'"degraded":[]'*) ;; *) _bad="degraded or none" ;; esac
for p in ctr-control ctr-cri ctr-docker ctr-podman; do
	case $ready in *"\"$p\""*) ;; *) _bad="${_bad:+$_bad, }no policy $p" ;; esac
done
if [ -z "$_bad" ]; then
	t_ok $T/agent-ready
else
	t_fail $T/agent-ready "want agent_ready with the four policies, nothing degraded ($_bad): ${ready:-none}; $(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
	t_show "$work/agent.err"
	exit 0
fi

# ---- early, confined: one more round in the same process ----
echo "containers: early round at $(cut -d' ' -f1 /proc/uptime) s"
for k in $up_early; do
	"$RUNC" kill "$(cat "$work/$k/id")" USR1
done
for k in $up_early; do
	wait_for 30 grep -q '^round 2: done' "$work/$k/out"
done
# A fork burst is logged 300 ms after it goes quiet (at most 700 ms after
# it began).
has_limits() {
	for _k in $up_early; do
		[ -n "$(recs "$_k" limit)" ] || return 1
	done
}
wait_for 5 has_limits
log_settle "$log"
for k in $up_early; do
	pid_now=$(ctr_pid "$k")
	if [ -n "$pid_now" ] && [ "$pid_now" = "$(cat "$work/$k/pid0")" ]; then
		t_ok "$T/$k/pid-unchanged"
	else
		t_fail "$T/$k/pid-unchanged" "init pid $(cat "$work/$k/pid0") before the agent, ${pid_now:-none} now"
	fi
	judge_round "$k" 2
	f=$(attempt "$k" 2 forks)
	case $f in
	*"refused=1"*)
		t_ok "$T/$k/fork-refused"
		one_record "$T/$k/limit-record" "$k" limit "$PIDS" ;;
	*)
		t_fail "$T/$k/fork-refused" "want a fork refused under pids: 8, got '$(short "${f:-no round 2: $(tail -n 2 "$work/$k/out")}")'"
		t_fail "$T/$k/limit-record" "not run: no fork was refused" ;;
	esac
	only_records "$k" 2
	attach_named "$k"
done

# ---- late and outside: started while the agent runs ----
echo "containers: late at $(cut -d' ' -f1 /proc/uptime) s"
def docker2 docker late-2 ctr-docker once
def cri-g cri-g late-2 ctr-cri once
def podman-crun podman-crun late-2 ctr-podman once
def control2 control late-2 ctr-control once
def nothex nothex x - once
def dockerdb dockerdb db-1 - once
pids=
for k in $LATE $OUTSIDE; do
	ctr_start "$k" &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p"
done
up_late=
for k in $LATE $OUTSIDE; do
	started "$k" 'payload: started' || continue
	wait_for 30 grep -q '^payload: done' "$work/$k/out"
	up_late="$up_late $k"
done
log_settle "$log"
echo "containers: judging the late ones at $(cut -d' ' -f1 /proc/uptime) s"
for k in $up_late; do
	case " $OUTSIDE " in
	*" $k "*)
		s=$(attempt "$k" 1 shadow) c=$(attempt "$k" 1 connect)
		_bad=
		case $s in *notarealhash*) ;; *) _bad="want the hash read, got '$(short "$s")'" ;; esac
		case $c in *"$UNREACH_TXT"*) ;; *) _bad="${_bad:+$_bad; }want ENETUNREACH, got '$(short "$c")'" ;; esac
		recs "$k" deny > "$work/$k/all.recs"
		[ ! -s "$work/$k/all.recs" ] ||
			_bad="${_bad:+$_bad; }$(wc -l < "$work/$k/all.recs") deny record(s): $(short "$(head -n 1 "$work/$k/all.recs")")"
		if [ -z "$_bad" ]; then
			t_ok "$T/$k/not-selected"
		else
			t_fail "$T/$k/not-selected" "$(cat "$work/$k/cg"): $_bad"
		fi
		# A directory of docker's that no path form resolves is said
		# so, once: a policy's container selector watched it.
		if [ "$k" = nothex ]; then
			_u=$(recs "$k" container_unresolved)
			if [ "$(printf '%s' "$_u" | grep -c .)" = 1 ] &&
			   printf '%s' "$_u" | grep -qF '"policies":["ctr-docker"]' &&
			   has_all "$_u" '"reason":"no_path_form"'; then
				t_ok "$T/$k/unresolved-record"
			else
				t_fail "$T/$k/unresolved-record" "want one container_unresolved record, reason no_path_form, policies [ctr-docker]: $(short "${_u:-none}")"
			fi
		fi
		continue ;;
	esac
	case $k in cri-g|podman-crun) hook_record "$k" ;; esac
	judge_round "$k" 1
	only_records "$k" 2
	attach_named "$k"
done

t_no_lost

# ---- nothing left: the agent stops on SIGTERM, the containers go ----
echo "containers: cleanup at $(cut -d' ' -f1 /proc/uptime) s"
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
cleanup
trap - EXIT
[ -z "$("$RUNC" list -q 2>/dev/null)" ] || left="${left:+$left, }containers $("$RUNC" list -q | tr '\n' ' ')"
for t in $TREES; do
	[ ! -e "$CGROUP_ROOT/$t" ] || left="${left:+$left, }$CGROUP_ROOT/$t"
done
[ ! -e "$bpffs" ] || left="${left:+$left, }$bpffs"
if [ -z "$left" ]; then
	t_ok $T/cleanup
else
	t_fail $T/cleanup "left behind: $left"
fi
read -r t1 _ < /proc/uptime
echo "containers: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
exit 0
