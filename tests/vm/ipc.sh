#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Issue 11 in the test VM: keys, SysV IPC, POSIX message queues and SIGIO
# across the sandbox's edge (bpf/ipc.bpf.c, bpf/lsm.bpf.c), and
# inode_setattr (utimensat) against the write scope (bpf/file.bpf.c). One real
# syscall per probe (tools/ipcprobe.c) from a real process, and both
# results checked: the errno and the log record. The model and most of the
# machinery is tests/vm/file-scope.sh.
#
# One agent, two policies (tests/vm/ipc.yaml, enforce, /ipc-sbx;
# tests/vm/ipc-audit.yaml, audit, /ipc-audit). Every case runs in three
# phases:
#   enforce  inside /ipc-sbx: the errno, and exactly one "deny" record
#            with the case's fields;
#   outside  from the root cgroup: OK, and no record at all;
#   audit    inside /ipc-audit: OK, and exactly one "audit" record (plus,
#            for a few cases, the record of a second check the kernel makes
#            once the first one let the call go on: EXTRA in kase(),
#            tests/vm/lib.sh).
# The host's objects (tools/ipcprobe.c `setup`: a key in the user keyring,
# a shm segment with data, a semaphore set, a message queue, a POSIX queue
# with a message) are made fresh outside every sandbox before each phase;
# "another tenant's" segment is made by the other sandbox.
#
# Env (from tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS (optional, unquoted on purpose: several flags).

. tests/vm/lib.sh

T=ipc
probe=$TOOLS/ipcprobe
sbx=$CGROUP_ROOT/ipc-sbx
aud=$CGROUP_ROOT/ipc-audit
work=/tmp/ipc-test
log=$work/agent.log
bpffs=/sys/fs/bpf/ipc
cases=$work/cases
FP='"comm":"ipcprobe"'
agent=
key='' shm='' shmkey='' sem='' msg='' hold='' tenant_shm=''

if [ "$(hostname)" != stockade-vm ] || [ ! -f /init ]; then
	t_fail $T/guest "refusing to run outside the test VM: it makes and removes host IPC objects"
	exit 0
fi
rm -rf "$work"
mkdir -p "$work" /tmp/ipc/task
: > "$log"

set -f	# record fields are case patterns, never file globs

teardown() {
	[ -z "$key" ] || "$probe" teardown "$key" "$shm" "$sem" "$msg" > /dev/null 2>&1
	[ -z "$tenant_shm" ] || "$probe" teardown 0 "$tenant_shm" -1 -1 > /dev/null 2>&1
	key='' tenant_shm=''
	"$probe" mq-unlink /stk-victim > /dev/null 2>&1
}

cleanup() {
	stop_helpers
	teardown
	agent_kill
	cg_remove "$sbx" "$aud"
}
trap cleanup EXIT

# The host's objects, fresh for each phase; "another tenant's" segment is
# made by the other sandbox (no record: its own).
fixtures() {
	teardown
	"$probe" setup > "$work/setup.out" 2>&1
	key=$(sed -n 's/^key=//p' "$work/setup.out")
	shm=$(sed -n 's/^shm=//p' "$work/setup.out")
	shmkey=$(sed -n 's/^shmkey=//p' "$work/setup.out")
	sem=$(sed -n 's/^sem=//p' "$work/setup.out")
	msg=$(sed -n 's/^msg=//p' "$work/setup.out")
	[ -n "$msg" ] || echo "ipc: setup failed: $(cat "$work/setup.out")"
	"$probe" mq-create /stk-victim > /dev/null 2>&1
	case $phase in
	audit) _other=$sbx ;;
	*) _other=$aud ;;
	esac
	"$probe" --cgroup "$_other" shm-create 0x53544b32 > "$work/tenant.out" 2>&1
	tenant_shm=$(sed -n 's/^shm=//p' "$work/tenant.out")
	rm -f /tmp/ipc/task/fifo
	mkfifo /tmp/ipc/task/fifo
	echo data > /tmp/ipc/task/file
	mkdir -p /etc	# the initramfs may have none
	echo data > /etc/ipc-setattr
	chmod 0644 /etc/ipc-setattr
	helper hold hold hold
}

# ---- the case machinery (tests/vm/lib.sh: kase, judge_cases) ----

set_phase() {
	phase=$1
	_common="\"uid\":0, \"ts\":\" \"seq\": \"tid\": \"comm\":\""
	case $phase in
	enforce) phase_in "$sbx" deny ipc "\"cgroup_id\":$sbx_id, $_common" ;;
	audit) phase_in "$aud" audit ipc-audit "\"cgroup_id\":$aud_id, $_common" ;;
	outside) cgarg='' base='' ;;
	esac
}

# ---- the cases ----

all_cases() {
	K='"kind":"key" "reason":"outside_sandbox"'
	# Reading the host's key; viewing it; linking it into our keyring.
	kase key-read-host EPERM "$K \"op\":\"key_read\" \"key_serial\":${key}[,}] \"path\":\"stk-host\" $FP" '' \
		key-read "$key"
	kase key-describe-host EPERM "$K \"op\":\"key_view\" \"key_serial\":${key}[,}] $FP" '' \
		key-describe "$key"
	kase key-link-host EPERM "$K \"op\":\"key_link\" \"key_serial\":${key}[,}] $FP" '' \
		key-link "$key"
	# add_key into @u, the uid's keyring the host reads: WRITE on it.
	# Audit: __key_create_or_update() asks WRITE on it once more (the
	# same record twice: "twice"). A fresh name per phase, or audit
	# would update the outside phase's key (one more WRITE, on it).
	kase key-add-user-keyring EPERM "$K \"op\":\"key_write\" \"path\":\"_uid.0\" $FP" twice \
		key-add-user "stk-from-$phase"
	kase key-own OK '' '' key-own
	# A key to construct: the kernel's upcall (/sbin/request-key, run
	# outside every sandbox) would do what its configuration says for
	# it, a DNS query for a dns_resolver key. Outside, the guest has no
	# /sbin/request-key: the kernel's own error.
	kase key-request-upcall EPERM/ANY "\"kind\":\"key\" \"op\":\"key_alloc\" \"path\":\"stk-req-$phase\" \"reason\":\"always_denied\" $FP" '' \
		key-request "stk-req-$phase"

	I='"kind":"ipc" "reason":"outside_sandbox"'
	# ipcperms() turns any refusal into EACCES; the ctl commands that
	# skip it (IPC_SET, IPC_RMID...) return the hook's EPERM.
	kase shmget-host EACCES "$I \"op\":\"shm\" \"ipc_id\":${shm}[,}] $FP" '' shmget "$shmkey"
	kase shm-read-host EACCES "$I \"op\":\"shm\" \"ipc_id\":${shm}[,}] $FP" '' shm-read "$shm"
	kase shm-write-host EACCES "$I \"op\":\"shm\" \"ipc_id\":${shm}[,}] $FP" '' shm-write "$shm"
	kase shm-stat-host EACCES "$I \"op\":\"shm\" \"ipc_id\":${shm}[,}] $FP" '' shm-stat "$shm"
	kase shm-set-host EPERM "$I \"op\":\"shm\" \"ipc_id\":${shm}[,}] $FP" '' shm-set "$shm"
	kase shm-read-tenant EACCES "$I \"op\":\"shm\" \"ipc_id\":${tenant_shm}[,}] $FP" '' \
		shm-read "$tenant_shm"
	kase sem-op-host EACCES "$I \"op\":\"sem\" \"ipc_id\":${sem}[,}] $FP" '' sem-op "$sem"
	kase msg-send-host EACCES "$I \"op\":\"msg\" \"ipc_id\":${msg}[,}] $FP" '' msg-send "$msg"
	kase shm-own OK '' '' shm-own
	kase sem-own OK '' '' sem-own
	kase msg-own OK '' '' msg-own

	# POSIX queues: judged as IPC, not let through as an internal mount.
	kase mq-read-host EPERM "$I \"op\":\"mqueue\" \"path\":\"stk-host\" $FP" '' mq-read /stk-host
	kase mq-unlink-host EPERM "$I \"op\":\"mqueue\" \"path\":\"stk-victim\" $FP" '' \
		mq-unlink /stk-victim
	# Creating a queue asks CAP_SYS_RESOURCE (an audited check, only to
	# pick the limits its size is held to: mqueue_get_inode()): the
	# default set refuses it with its record, and the queue is made.
	kase mq-own OK '"kind":"capability" "capability":"SYS_RESOURCE"' '' mq-own

	# inode_setattr: times only inside the write scope, judged by the
	# path in the task's view (/tmp is its own tmpfs in the guest); chmod
	# is path_chmod's alone: one record, not two.
	kase utime-outside-scope EPERM "\"kind\":\"file\" \"op\":\"setattr\" \"path\":\"/etc/ipc-setattr\" \"reason\":\"outside_scope\" $FP" '' \
		utime /etc/ipc-setattr
	kase utime-in-scope-tmpfs OK '' '' utime /tmp/ipc/task/file
	kase chmod-in-scope OK '' '' chmod /tmp/ipc/task/file 0640
	kase chmod-outside-scope EPERM "\"kind\":\"file\" \"op\":\"chmod\" \"path\":\"/etc/ipc-setattr\" \"reason\":\"outside_scope\" $FP" '' \
		chmod /etc/ipc-setattr 0644
}

# SIGIO: the sandbox sets the owner of a fifo to an outside process; a
# process outside does the I/O. The refusal is logged under the setter's
# sandbox, with the firing task's pid (exactly one record for it).
# sigio_case flood: the same, after the armer set itself as the owner of
# 17,000 more files, held open: more than the owner table holds (16,384),
# so some of those are refused (table_full), and the fifo's entry, the
# first, stays: an LRU table would have dropped it, and the signal gone
# through. sigio_case again: the plain case once the flood's files are
# closed, whose entries went with them (file_free_security): a table
# still full would refuse this arming.
sigio_case() {
	_name="$T/$phase/sigio-fired-outside${1:+-$1}"
	[ -z "$notrun" ] || { t_fail "$_name" "not run: $why"; return; }
	_flood=
	[ "${1:-}" != flood ] || _flood=17000
	[ "${1:-}" != again ] || sleep 2	# the flood's children close
	# shellcheck disable=SC2086
	"$probe" $cgarg sigio-arm /tmp/ipc/task/fifo "$hold" $_flood > "$work/arm.out" 2>&1 &
	_arm=$!
	helpers="$helpers $_arm"
	_wait=5
	[ -z "$_flood" ] || _wait=30
	if ! wait_for "$_wait" grep -q '^ready$' "$work/arm.out"; then
		_apid=$(sed -n 's/^pid=//p' "$work/arm.out")
		t_fail "$_name" "sigio-arm did not come up: $(cat "$work/arm.out") $(short "$(grep "\"pid\":$_apid," "$log" | tail -n 2)")"
		return
	fi
	if [ -n "$_flood" ] && ! grep -q '^flood armed=[0-9]* refused=[1-9]' "$work/arm.out"; then
		kill -9 "$_arm" 2>/dev/null
		t_fail "$_name" "the flood filled no table: $(grep '^flood' "$work/arm.out")"
		return
	fi
	_out=$("$probe" fifo-write /tmp/ipc/task/fifo 2>&1)
	_pid=$(echo "$_out" | sed -n 's/^pid=\([0-9][0-9]*\)$/\1/p')
	log_settle "$log"
	_cnt=$(own_records_to "$work/recs" "$_pid")
	_err=
	[ "$(echo "$_out" | tail -n 1)" = OK ] ||
		_err="the write failed: $_out (armer: $(tr '\n' ' ' < "$work/arm.out"), $(alive "$_arm" && echo alive || echo gone))"
	if [ "$phase" = outside ]; then
		[ "$_cnt" = 0 ] || _err="${_err:+$_err; }$_cnt record(s), want none: $(short "$(head -n 1 "$work/recs")")"
	else
		_f="$base \"pid\":$_pid, \"kind\":\"task\" \"op\":\"sigio\" \"target_pid\":${hold}[,}] \"signal\":28[,}] \"reason\":\"outside_sandbox\""
		# pipe_write() may fire the signal twice for one write (once
		# when the pipe was empty, once at the end): one record each,
		# every one with all the fields.
		[ "$_cnt" != 0 ] || _err="${_err:+$_err; }no record for the writer $_pid"
		while IFS= read -r _line; do
			_miss=
			has_all "$_line" "$_f" ||
				_err="${_err:+$_err; }no $_miss in $(short "$_line")"
		done < "$work/recs"
	fi
	kill -9 "$_arm" 2>/dev/null
	if [ -z "$_err" ]; then
		t_ok "$_name"
	else
		t_fail "$_name" "$_err"
	fi
}

run_phase() {
	set_phase "$1"
	[ -n "$notrun" ] || fixtures
	all_cases
	[ -n "$notrun" ] || judge_cases
	sigio_case
	if [ "$1" = enforce ]; then
		sigio_case flood
		sigio_case again
	fi
	stop_helpers
}

run_nothing() {
	notrun=1
	for p in enforce outside audit; do
		run_phase $p
	done
}

# ---- the run ----

for d in "$sbx" "$aud"; do
	mkdir -p "$d" || { t_fail $T/setup "cannot create $d"; exit 0; }
done
sbx_id=$(stat -c %i "$sbx")
aud_id=$(stat -c %i "$aud")
if [ ! -x "$probe" ]; then
	why="no probe at $probe (tools/ipcprobe.c, built static)"
	t_fail $T/agent-ready "$why"
	run_nothing
	exit 0
fi

# shellcheck disable=SC2086
"$STOCKADE" agent --policy tests/vm/ipc.yaml --policy tests/vm/ipc-audit.yaml \
	--log "$log" --bpffs "$bpffs" --detach-on-exit ${STOCKADE_AGENT_FLAGS:-} \
	> "$work/agent.out" 2> "$work/agent.err" &
agent=$!
agent_wait_ready
case $ready in
*'"degraded":[]'*) t_ok $T/agent-ready ;;
*)
	why="no agent_ready without degraded guarantees: ${ready:-$(tail -n 3 "$work/agent.err" | tr '\n' ' ')}"
	t_fail $T/agent-ready "$why"
	t_show "$work/agent.err"
	run_nothing
	exit 0
	;;
esac

run_phase enforce
run_phase outside
run_phase audit

teardown
t_no_lost
exit 0
