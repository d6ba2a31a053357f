#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Issue 14 in the test VM: what may execute. W^X for files (nothing the
# sandbox can write may run or be mapped PROT_EXEC), memfd and deleted
# files, `exec:` lists, #! scripts, anonymous executable memory. Does what
# an attacker would: one real exec or mapping per probe (tools/execprobe.c)
# from a real process in a sandbox cgroup, and checks both results, the
# errno and the log record.
#
# One agent, five policies (tests/vm/exec*.yaml):
#   exec          enforce, /exec-sbx: no `exec:` key (read minus write)
#   exec-audit    its audit twin, /exec-audit
#   exec-written  /exec-written: exec.allow_written
#   exec-paths    /exec-paths: an exec list, anon_exec: deny
#   exec-paths-audit  its audit twin, /exec-paths-audit
# The default and the exec-paths policies' cases run in three phases:
# enforce (the errno and exactly one deny record), outside (from the root
# cgroup: OK, no record at all), audit (OK and exactly one audit record).
# exec-written's run in its own sandbox. Every allowed case (a normal
# static busybox, a dynamically linked python3 through ld.so, #! scripts
# in allowed places) must leave no record.
#
# Env (from tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS (optional, unquoted on purpose: several flags).

. tests/vm/lib.sh

T=exec
probe=$TOOLS/execprobe
d=/tmp/exec			# the policies' read scope
w=$d/w				# their write folder
work=/run/exec-test		# the agent's log: outside every scope
log=$work/agent.log
cases=$work/cases
bpffs=/sys/fs/bpf/exec
bb=/bin/busybox
py=/usr/bin/python3
ldso=/lib64/ld-linux-x86-64.so.2	# python3's PT_INTERP (mkinitramfs.sh)
libz=/lib/x86_64-linux-gnu/libz.so.1	# one of python3's libraries
agent=

rm -rf "$work" "$d"
mkdir -p "$work"
: > "$log"
set -f	# record fields are case patterns, never file globs

cleanup() {
	agent_kill
	for _c in exec-sbx exec-audit exec-written exec-paths exec-paths-audit; do
		rmdir "$CGROUP_ROOT/$_c" 2>/dev/null
	done
	rm -rf "$d"
}
trap cleanup EXIT

# Made from outside every sandbox: busybox copies in the write folder, in
# a read-only folder and in the exec-paths list, and #! scripts.
fixtures() {
	rm -rf "$d"
	mkdir -p "$w" "$d/ro" "$d/allowed"
	cp "$bb" "$w/busybox"
	cp "$bb" "$d/ro/busybox"
	cp "$bb" "$d/allowed/busybox"
	for _s in "$d/ro/script.sh:$bb" "$d/allowed/script.sh:$bb" \
		  "$w/script.sh:$bb" "$d/ro/wint.sh:$w/busybox" \
		  "$d/allowed/bad.sh:$d/ro/busybox"; do
		printf '#!%s sh\necho OK\n' "${_s#*:}" > "${_s%%:*}"
	done
	echo 'print("OK")' > "$w/script.py"
	# A dynamic program and a library the sandbox could have written.
	[ ! -x "$py" ] || cp "$py" "$w/python3"
	[ ! -f "$libz" ] || cp "$libz" "$w/libpre.so"
	set +f
	chmod 755 "$w"/* "$d"/ro/* "$d"/allowed/*
	set -f
}

# ---- the case machinery (as tests/vm/file-scope.sh's) ----

# set_phase PHASE CGROUP POLICY [LABEL]: enforce, audit or outside; the
# sandbox's cgroup (below $CGROUP_ROOT) and policy name for its records;
# LABEL names the cases (default: PHASE).
set_phase() {
	phase=$1 label=${4:-$1} cgarg= base=
	[ "$phase" = outside ] || cgarg="--cgroup $CGROUP_ROOT/$2"
	case $phase in
	enforce) base="\"event\":\"deny\" \"policy\":\"$3\" \"cgroup\":\"/$2\"" ;;
	audit) base="\"event\":\"audit\" \"policy\":\"$3\" \"cgroup\":\"/$2\"" ;;
	esac
}

# kase NAME WANT FIELDS PROBE-ARGS...: run the probe now, judge later.
# WANT is what it prints in enforce mode (outside and audit: OK); FIELDS
# the one record's case patterns, empty for allowed work (no record).
kase() {
	_n=$1 _want=$2 _f=$3
	shift 3
	[ "$phase" = enforce ] || _want=OK
	# shellcheck disable=SC2086
	_out=$(timeout 40 "$probe" $cgarg "$@" 2>&1)
	_rc=$?
	probe_parse "$_out"
	_det="exit $_rc: $_tail"
	echo "$_n|${_pid:-none}|$_want|$_got|$_f|$_det" >> "$cases"
}

# verdict NAME PID FIELDS: what is wrong with PID's records (echoed; empty
# when nothing is): FIELDS empty or outside, none at all; else exactly
# one, holding every field.
verdict() {
	_cnt=$(own_records_to "$work/recs" "$2")
	if [ "$phase" = outside ] || [ -z "$3" ]; then
		[ "$_cnt" = 0 ] || echo "$_cnt record(s) for pid $2, want none: $(recs_shown)"
	elif [ "$_cnt" != 1 ]; then
		echo "$_cnt record(s) for pid $2, want exactly one with $3: $(recs_shown)"
	else
		IFS= read -r _rec < "$work/recs"
		has_all "$_rec" "$base \"pid\":$2, $3" || echo "no $_miss in $(recs_shown)"
	fi
}
# recs_shown: the first two of them, for a message.
recs_shown() { head -n 2 "$work/recs" | cut -c 1-400 | tr '\n' ' '; }

# Judge every case of the phase, once the log has settled.
judge() {
	[ -f "$cases" ] || return 0
	log_settle "$log"
	while IFS='|' read -r _n _pid _want _got _f _det; do
		if [ "$_pid" = none ]; then
			t_fail "$T/$label/$_n" "probe printed no pid=N line ($_det)"
			continue
		fi
		_err=$(verdict "$_n" "$_pid" "$_f")
		[ "$_got" = "$_want" ] ||
			_err="expected $_want, got '$_got' ($_det)${_err:+; $_err}"
		if [ -z "$_err" ]; then
			t_ok "$T/$label/$_n"
		else
			t_fail "$T/$label/$_n" "$_err"
		fi
	done < "$cases"
	rm -f "$cases"
}

# Record fields: a file refusal of OP for REASON on PATH.
rec() { echo "\"kind\":\"file\" \"op\":\"$1\" \"path\":\"$3\" \"reason\":\"$2\""; }

# ---- the cases ----

# The default policy (no `exec:` key): W^X, memfd, deleted files; what
# must keep working. Run in each of its three phases.
default_cases() {
	kase copy-then-exec EPERM "$(rec exec not_executable "$w/bb-$phase")" \
		copy-exec "$bb" "$w/bb-$phase" echo OK
	kase exec-written EPERM "$(rec exec not_executable "$w/busybox")" \
		exec "$w/busybox" echo OK
	kase mmap-written EPERM "$(rec mmap_exec not_executable "$w/busybox")" \
		mmap-exec "$w/busybox"
	kase mprotect-written EPERM "$(rec mprotect_exec not_executable "$w/busybox")" \
		mprotect-exec "$w/busybox"
	# A memfd's path reads "/memfd:NAME (deleted)".
	kase memfd-execveat EPERM "$(rec exec memory_file '/memfd:execprobe*')" \
		memfd-exec "$probe"
	kase memfd-fexecve EPERM "$(rec exec memory_file '/memfd:execprobe*')" \
		memfd-fexecve "$bb" echo OK
	kase memfd-mmap-exec EPERM "$(rec mmap_exec memory_file '/memfd:execprobe*')" \
		memfd-mmap
	cp "$bb" "$w/del-$phase"
	kase deleted-exec EPERM "$(rec exec deleted_file "$w/del-$phase*")" \
		deleted-exec "$w/del-$phase" echo OK
	# A #! script the sandbox can write, and a script whose interpreter
	# it can write: each judged by its own path.
	kase script-written EPERM "$(rec exec not_executable "$w/script.sh")" \
		exec "$w/script.sh"
	kase interpreter-written EPERM "$(rec exec not_executable "$w/busybox")" \
		exec "$d/ro/wint.sh"
	# Allowed: no record in any phase.
	kase busybox-runs OK '' exec "$bb" echo OK
	kase script-runs OK '' exec "$d/ro/script.sh"
	kase readonly-copy-runs OK '' exec "$d/ro/busybox" echo OK
	kase mmap-readable OK '' mmap-exec "$bb"
	kase mprotect-readable OK '' mprotect-exec "$bb"
	kase anon-mprotect OK '' anon-mprotect
	kase anon-mmap-exec OK '' anon-mmap-exec
	kase shared-anon-mprotect OK '' shared-anon-mprotect
	# The other ways in (they pass the same hooks):
	kase opath-execveat EPERM "$(rec exec not_executable "$w/busybox")" \
		opath-exec "$w/busybox" echo OK
	kase procfd-memfd EPERM "$(rec exec memory_file '/memfd:execprobe*')" \
		procfd-memfd "$bb" echo OK
	# O_TMPFILE: d_path names it "#INO (deleted)".
	kase tmpfile-exec EPERM "$(rec exec deleted_file "$w/#*")" \
		tmpfile-exec "$w" "$bb" echo OK
	# SysV shm: shmem's "SYSV<key>" file on its internal mount.
	kase shmat-exec EPERM "$(rec mmap_exec memory_file '/SYSV*')" shmat-exec
	kase shared-file-mprotect EPERM "$(rec mprotect_exec not_executable "$w/busybox")" \
		shared-file-mprotect "$w/busybox"
	# /dev/zero and remap_file_pages() of shared anonymous memory are
	# anonymous memory: allowed here (anon_exec is).
	kase devzero-exec OK '' devzero-exec
	kase remap-shared-anon OK '' remap-shared-anon
	# Without anon_exec: deny, writable+executable memory, the
	# personality flag and ptrace within the sandbox stay as they were.
	kase file-rwx OK '' file-rwx "$d/ro/busybox"
	kase text-rwx OK '' text-rwx
	kase data-rwx OK '' data-rwx
	kase cow-mprotect OK '' cow-mprotect "$d/ro/busybox"
	kase brk-exec OK '' brk-exec
	kase ptrace-poke OK '' ptrace-poke
	kase ptrace-attach OK '' ptrace-attach-child
	if [ -x "$py" ] && [ -x "$ldso" ]; then
		# ld.so run directly maps the program itself, PROT_EXEC.
		kase ldso-direct FAILED "$(rec mmap_exec not_executable "$w/python3")" \
			spawn "$ldso" ld.so "$w/python3" -B -c 'print("OK")'
	else
		t_skip "$T/$label/ldso-direct" "no $py or $ldso in this guest"
	fi
	if [ -x "$py" ] && [ -f "$libz" ]; then
		# ld.so says the preload cannot be mapped and goes on without
		# it (python3 then maps the real libz): OK, and one record.
		kase preload OK "$(rec mmap_exec not_executable "$w/libpre.so")" \
			exec-env "LD_PRELOAD=$w/libpre.so" "$py" python3 -B -c 'print("OK")'
	else
		t_skip "$T/$label/preload" "no $py or $libz in this guest"
	fi
	if [ -x "$py" ]; then
		# Dynamically linked: ld.so maps libc and the rest PROT_EXEC.
		# -B: no __pycache__ writes (refused outside the write folder,
		# with records of their own).
		kase dynamic-binary-runs OK '' exec "$py" python3 -B -c 'print("OK")'
		# An interpreter reading a written script: a read, which exec
		# cannot stop (README, "Execution").
		kase interpreter-reads-written OK '' exec "$py" python3 -B "$w/script.py"
	fi
}

written_cases() {
	kase written-runs OK '' exec "$w/busybox" echo OK
	kase copy-then-exec OK '' copy-exec "$bb" "$w/bb-written" echo OK
	kase mmap-written OK '' mmap-exec "$w/busybox"
	kase script-written OK '' exec "$w/script.sh"
	kase memfd-execveat EPERM "$(rec exec memory_file '/memfd:execprobe*')" \
		memfd-exec "$probe"
	cp "$bb" "$w/del-written"
	kase deleted-exec EPERM "$(rec exec deleted_file "$w/del-written*")" \
		deleted-exec "$w/del-written" echo OK
}

paths_cases() {
	kase listed-runs OK '' exec "$d/allowed/busybox" echo OK
	kase unlisted-refused EPERM "$(rec exec not_executable "$d/ro/busybox")" \
		exec "$d/ro/busybox" echo OK
	kase unlisted-mmap EPERM "$(rec mmap_exec not_executable "$d/ro/busybox")" \
		mmap-exec "$d/ro/busybox"
	kase written-refused EPERM "$(rec exec not_executable "$w/busybox")" \
		exec "$w/busybox" echo OK
	# #!: the script and its interpreter are both judged.
	kase listed-script-runs OK '' exec "$d/allowed/script.sh"
	kase unlisted-interpreter EPERM "$(rec exec not_executable "$d/ro/busybox")" \
		exec "$d/allowed/bad.sh"
	kase unlisted-script EPERM "$(rec exec not_executable "$d/ro/script.sh")" \
		exec "$d/ro/script.sh"
	kase busybox-runs OK '' exec "$bb" echo OK
	kase mmap-listed OK '' mmap-exec "$bb"
	# anon_exec: deny.
	kase anon-mprotect EPERM "$(rec mprotect_exec anon_exec '')" anon-mprotect
	kase anon-mmap-exec EPERM "$(rec mmap_exec anon_exec '')" anon-mmap-exec
	kase shared-anon-mprotect EPERM "$(rec mprotect_exec anon_exec '')" \
		shared-anon-mprotect
	kase devzero-exec EPERM "$(rec mmap_exec anon_exec '')" devzero-exec
	# Writable and executable file-backed private memory is anonymous
	# memory in all but name; so is a private page written, then made
	# executable.
	kase file-rwx EPERM "$(rec mmap_exec anon_exec '')" file-rwx "$d/allowed/busybox"
	kase text-rwx EPERM "$(rec mprotect_exec anon_exec '')" text-rwx
	kase data-rwx EPERM "$(rec mprotect_exec anon_exec '')" data-rwx
	kase cow-mprotect EPERM "$(rec mprotect_exec anon_exec '')" \
		cow-mprotect "$d/allowed/busybox"
	# personality(READ_IMPLIES_EXEC) would make brk's heap executable
	# with no hook on the way: the caller is killed, one record.
	kase brk-exec KILLED "$(rec personality anon_exec '')" brk-exec
	# Writing code through ptrace within the sandbox.
	kase ptrace-poke EPERM '"kind":"ptrace" "op":"traceme" "target_pid": "reason":"anon_exec"' \
		ptrace-poke
	kase ptrace-attach EPERM '"kind":"ptrace" "target_pid": "reason":"anon_exec"' \
		ptrace-attach-child
	# CPython has no JIT, ld.so only makes RELRO read-only: dynamic
	# programs run with anonymous exec refused, with no record.
	[ ! -x "$py" ] ||
		kase dynamic-binary-runs OK '' exec "$py" python3 -B -c 'print("OK")'
	kase busybox-sh-runs OK '' exec "$bb" sh -c 'echo OK'
}

# ---- the run ----

if [ ! -x "$probe" ]; then
	t_fail $T/agent-ready "no probe at $probe (tools/execprobe.c, built static)"
	exit 0
fi
for _c in exec-sbx exec-audit exec-written exec-paths exec-paths-audit; do
	mkdir -p "$CGROUP_ROOT/$_c" || { t_fail $T/setup "cannot create $CGROUP_ROOT/$_c"; exit 0; }
done
fixtures

# `check` says what may execute, and warns about allow_written.
"$STOCKADE" check tests/vm/exec.yaml tests/vm/exec-written.yaml > "$work/check.out" 2> "$work/check.err"
if grep -q 'policy exec may execute from: the read scope, minus the write scope$' "$work/check.out" &&
   grep -q 'exec-written.yaml:[0-9]*:[0-9]*: exec.allow_written: warning: ' "$work/check.err"; then
	t_ok $T/check-output
else
	t_fail $T/check-output "$(cat "$work/check.out" "$work/check.err")"
fi

# shellcheck disable=SC2086
"$STOCKADE" agent --policy tests/vm/exec.yaml --policy tests/vm/exec-audit.yaml \
	--policy tests/vm/exec-written.yaml --policy tests/vm/exec-paths.yaml \
	--policy tests/vm/exec-paths-audit.yaml \
	--log "$log" --bpffs "$bpffs" --detach-on-exit ${STOCKADE_AGENT_FLAGS:-} \
	> "$work/agent.out" 2> "$work/agent.err" &
agent=$!
agent_ready_or_fail $T/agent-ready "$log" "$agent" "$work/agent.err" || exit 0
# What is in force says whether written files may run.
if grep -q '"event":"policy".*"policy":"exec-written".*"exec_allow_written":true' "$log" &&
   grep -q '"event":"policy".*"policy":"exec".*"exec_allow_written":false' "$log"; then
	t_ok $T/policy-record
else
	t_fail $T/policy-record "$(grep '"event":"policy"' "$log" | tr '\n' ' ')"
fi

# ... and so does `status`, from the pinned policy settings.
"$STOCKADE" status --json --bpffs "$bpffs" > "$work/status.json" 2>&1
if grep -q '"policy":"exec-written"[^}]*"exec_allow_written":true' "$work/status.json" &&
   grep -q '"policy":"exec-paths"[^}]*"exec_allow_written":false,"anon_exec":"deny"' "$work/status.json"; then
	t_ok $T/status
else
	t_fail $T/status "$(cut -c 1-600 "$work/status.json")"
fi

set_phase enforce exec-sbx exec
default_cases
judge
fixtures
set_phase outside
default_cases
judge
fixtures
set_phase audit exec-audit exec-audit
default_cases
judge
fixtures
set_phase enforce exec-written exec-written written
written_cases
judge
fixtures
set_phase enforce exec-paths exec-paths paths
paths_cases
judge
fixtures
set_phase outside '' '' paths-outside
paths_cases
judge
fixtures
set_phase audit exec-paths-audit exec-paths-audit paths-audit
paths_cases
judge

kill -TERM "$agent"
if wait_for 10 eval '! alive "$agent"'; then
	wait "$agent"
	agent=
fi
if grep -q '"event":"lost"' "$log"; then
	t_fail $T/no-lost-records "$(grep '"event":"lost"' "$log" | head -n 1)"
else
	t_ok $T/no-lost-records
fi
exit 0
