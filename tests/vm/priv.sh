#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Issue 11 in the test VM: root inside a sandbox keeps only its policy's
# capabilities, and no capability buys it kernel code, host state, the
# kernel log, perf beyond the sandbox, notify marks beyond its read scope
# or userfaultfd (bpf/priv.bpf.c). One real syscall per probe
# (tools/privprobe.c), harmless when it succeeds, checked for its errno
# and its records. One agent, three policies; every case runs in four
# phases:
#   default  /priv-sbx (tests/vm/priv.yaml: no `capabilities:` key): most
#            attempts fail at the kernel's own capability check, so the
#            one "deny" record is kind capability, naming it;
#   caps     /priv-caps (priv-caps.yaml: the dangerous capabilities
#            listed, perf: allow): the kernel-kind (perf, notify) record;
#   outside  the root cgroup: what the kernel says without stockade, and
#            no record at all;
#   audit    /priv-audit (priv-caps.yaml in mode audit): the outside
#            result, and exactly one "audit" record with the caps fields
#            (plus, for a few cases, a second hook's: see EXTRA in kase()).
# Also: an ordinary busybox workload in /priv-wl (the default policy)
# leaves no record; syslog(READ_ALL), which asks SYSLOG then SYS_ADMIN,
# leaves exactly one capability record.
#
# Env (from tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS (optional, unquoted on purpose: several flags).

. tests/vm/lib.sh

T=priv
probe=$TOOLS/privprobe
work=/tmp/priv-test
log=$work/agent.log
bpffs=/sys/fs/bpf/priv
cases=$work/cases
sbx=$CGROUP_ROOT/priv-sbx
caps=$CGROUP_ROOT/priv-caps
aud=$CGROUP_ROOT/priv-audit
wl=$CGROUP_ROOT/priv-wl
agent=

if [ "$(hostname)" != stockade-vm ] || [ ! -f /init ]; then
	t_fail $T/guest "refusing to run outside the test VM: it sets the clock, the hostname and sysctls"
	exit 0
fi
rm -rf "$work" /tmp/priv /srv/priv-out
mkdir -p "$work" /tmp/priv /srv/priv-out "$sbx" "$caps" "$aud" "$wl"
: > /tmp/priv/xattr-file
: > "$log"
set -f	# record fields are case patterns, never file globs

# Fixtures: garbage "images" and a file only the fanotify case opens.
head -c 4096 /dev/urandom > /tmp/priv/garbage.ko
cp /tmp/priv/garbage.ko /tmp/priv/garbage.img
: > /tmp/priv/permfile
: > /tmp/priv/acct
# syslog(READ_ALL) then needs SYSLOG (and falls back to SYS_ADMIN); perf
# at 2, Debian's 3 would refuse every unprivileged event before the LSM.
old_dmesg=$(cat /proc/sys/kernel/dmesg_restrict)
old_perf=$(cat /proc/sys/kernel/perf_event_paranoid)
echo 1 > /proc/sys/kernel/dmesg_restrict
echo 2 > /proc/sys/kernel/perf_event_paranoid

# ---- the case machinery (tests/vm/lib.sh: kase_run, judge_cases) ----
probe_timeout=30
probe_tail=3
skip_ok=1	# the probe prints SKIP when the VM lacks what a case needs

set_phase() {
	phase=$1
	_c="\"uid\":0, \"comm\":\"privprobe\""
	case $phase in
	default) phase_in "$sbx" deny priv "$_c" ;;
	caps) phase_in "$caps" deny priv-caps "$_c" ;;
	audit) phase_in "$aud" audit priv-audit "$_c" ;;
	outside) cgarg='' base='' ;;
	esac
}

# kase NAME DEF_WANT DEF_FIELDS CAPS_WANT CAPS_FIELDS OUT_WANT EXTRA ARGS...
# (over lib.sh's kase: a column for each phase)
#   *_WANT  what the probe prints: an errno name, OK, or !EPERM (anything
#           but EPERM: the kernel's own answer to a harmless garbage call)
#   *_FIELDS the one record's fields (case patterns, a number ends in
#           [,}]); empty: no record
#   OUT_WANT outside and in audit mode, which lets the call go on
#   EXTRA   audit only: KIND:OP of records a later hook may add once the
#           first one let the call go on; enforce stops at the first
kase() {
	case $phase in
	default) _w=$2 _fl=$3 ;;
	caps) _w=$4 _fl=$5 ;;
	outside) _w=$6 _fl= ;;
	audit) _w=$6 _fl=$5 ;;
	esac
	_nm=$1 _xt=$7
	shift 7
	kase_run "$_nm" "$_w" "$_fl" "$_xt" "$@"
}

# Record fields.
cap() { echo "\"kind\":\"capability\" \"capability\":\"$1\" \"cap_nr\":$2[,}] \"reason\":\"capability_not_allowed\""; }
kern() { echo "\"kind\":\"kernel\" \"op\":\"$1\" \"reason\":\"always_denied\""; }
perfr() { echo "\"kind\":\"perf\" \"op\":\"perf_open\" \"perf_type\":$1[,}] \"reason\":\"$2\""; }
MODULE=$(cap SYS_MODULE 16)
BOOT=$(cap SYS_BOOT 22)
RAWIO=$(cap SYS_RAWIO 17)
ADMIN=$(cap SYS_ADMIN 21)
TIME=$(cap SYS_TIME 25)
PACCT=$(cap SYS_PACCT 20)
SYSLOG=$(cap SYSLOG 34)
LOCKDOWN="$(kern lockdown) \"lockdown_reason\":7[,}]"
RTC='"kind":"file" "op":"ioctl" "ioctl_cmd":1076129802[,}] "reason":"always_denied"'

cases() {
	# Kernel code
	kase init-module EPERM "$MODULE" EPERM "$(kern load_module) \"load_id\":2[,}]" '!EPERM' kernel:lockdown init-module
	kase finit-module EPERM "$MODULE" EPERM "$(kern load_module) \"load_id\":2[,}] \"path\":\"/tmp/priv/garbage.ko\"" '!EPERM' kernel:lockdown finit-module /tmp/priv/garbage.ko
	kase delete-module EPERM "$MODULE" EPERM "$(kern delete_module)" ENOENT '' delete-module
	kase kexec-load EPERM "$BOOT" EPERM "$(kern load_kexec) \"load_id\":3[,}]" EINVAL kernel:lockdown kexec-load
	kase kexec-file-load EPERM "$BOOT" EPERM "$(kern load_kexec) \"load_id\":3[,}] \"path\":\"/tmp/priv/garbage.img\"" '!EPERM' '' kexec-file-load /tmp/priv/garbage.img
	kase module-request EPROTONOSUPPORT "$(kern module_request) \"path\":\"net-pf-16-proto-30\"" \
		EPROTONOSUPPORT "$(kern module_request) \"path\":\"net-pf-16-proto-30\"" EPROTONOSUPPORT '' module-request
	kase iopl EPERM "$RAWIO" EPERM "$LOCKDOWN" OK '' iopl
	kase ioperm EPERM "$RAWIO" EPERM "$LOCKDOWN" OK '' ioperm
	# Host state. sethostname has no LSM hook: SYS_ADMIN is its only
	# guard, so a policy that lists SYS_ADMIN may set it (README).
	kase sethostname EPERM "$ADMIN" OK '' OK '' sethostname
	kase settimeofday EPERM "$TIME" EPERM "$(kern settime)" OK '' settimeofday
	kase clock-settime EPERM "$TIME" EPERM "$(kern settime)" OK '' clock-settime
	kase rtc-set EPERM "$RTC" EPERM "$RTC" OK '' rtc-set
	kase swapon EPERM "$ADMIN" ENOENT '' ENOENT '' swapon /tmp/priv/no-such-swap
	kase acct EPERM "$PACCT" EPERM "$(kern acct) \"path\":\"/tmp/priv/acct\"" OK kernel:acct acct /tmp/priv/acct
	# Kernel logs and tracing. syslog asks SYSLOG, then SYS_ADMIN: one
	# record, not two.
	kase syslog EPERM "$SYSLOG" EPERM "$(kern syslog) \"syslog_action\":3[,}]" OK '' syslog
	kase kmsg EPERM "$SYSLOG" EPERM "$(kern syslog) \"syslog_action\":3[,}]" OK '' kmsg
	kase perf-self EPERM "$(perfr 1 perf_not_allowed)" OK '' OK '' perf-self
	kase perf-cpu EPERM "$(perfr 1 perf_not_allowed)" EPERM "$(perfr 1 system_wide)" OK '' perf-cpu
	kase perf-bp EPERM "$(perfr 5 perf_not_allowed)" EPERM "$(perfr 5 kernel_pmu)" OK '' perf-bp
	kase perf-kernel EPERM "$(perfr 1 perf_not_allowed)" EPERM "$(perfr 1 kernel_pmu)" OK '' perf-kernel
	# Watching outsiders
	kase inotify-outside EPERM '"kind":"notify" "op":"inotify" "path":"/srv/priv-out" "reason":"outside_scope"' \
		EPERM '"kind":"notify" "op":"inotify" "path":"/srv/priv-out" "reason":"outside_scope"' OK '' inotify /srv/priv-out
	kase inotify-inside OK '' OK '' OK '' inotify /tmp/priv
	kase fanotify-perm EPERM "$ADMIN" EPERM '"kind":"notify" "op":"fanotify_perm" "mask":65536[,}] "reason":"always_denied"' OK '' fanotify-perm /tmp/priv/permfile
	kase userfaultfd EPERM "$(kern userfaultfd)" EPERM "$(kern userfaultfd)" OK '' userfaultfd
	# Credentials that are not the task's own: a file's (pagemap's frame
	# numbers need SYS_ADMIN in its opener's, kept across a setuid), an
	# io_uring personality's from before a setuid (a NOP under it runs;
	# a trusted.* xattr set under it is the sandbox asking SYS_ADMIN).
	kase pagemap-setuid EPERM "$ADMIN" OK '' OK '' pagemap-setuid
	kase uring-personality-changed OK '' OK '' OK '' uring-personality changed
	kase uring-personality-same OK '' OK '' OK '' uring-personality same

}

# ---- the agent ----
# shellcheck disable=SC2086
"$STOCKADE" agent --policy tests/vm/priv.yaml --policy tests/vm/priv-caps.yaml \
	--policy tests/vm/priv-audit.yaml --log "$log" --bpffs "$bpffs" \
	--detach-on-exit ${STOCKADE_AGENT_FLAGS:-} > "$work/agent.out" 2> "$work/agent.err" &
agent=$!
agent_wait_ready
if [ -z "$ready" ]; then
	t_fail $T/agent-ready "no agent_ready: $(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
	t_show "$work/agent.err"
	# shellcheck disable=SC2086
	"$STOCKADE" agent -v --policy tests/vm/priv.yaml --bpffs "$bpffs-v" \
		--detach-on-exit > "$work/agent-v.out" 2>&1 &
	sleep 20
	grep -v "skipped loading" "$work/agent-v.out" | grep -iE "fail|error|find|-3|ESRCH|No such" | head -n 30
	kill -9 "$agent" 2>/dev/null
	"$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
	exit 0
fi
case $ready in
*'"degraded":[]'*) t_ok $T/agent-ready ;;
*) t_fail $T/agent-ready "want no degraded guarantee: $ready" ;;
esac

# `status` names each policy's capability set.
"$STOCKADE" status --json --bpffs "$bpffs" > "$work/status.json" 2>&1
"$STOCKADE" status --bpffs "$bpffs" > "$work/status.txt" 2>&1
if grep -qF '"capabilities":["CHOWN","DAC_OVERRIDE","FOWNER","FSETID","KILL","SETGID","SETUID","SETPCAP","NET_BIND_SERVICE","AUDIT_WRITE","SETFCAP"]' "$work/status.json" &&
   grep -q '"policy":"priv-caps",.*"capabilities":\[[^]]*"SYS_MODULE"' "$work/status.json" &&
   grep -q '^  priv-caps .*SYS_MODULE' "$work/status.txt"; then
	t_ok $T/status-capabilities
else
	t_fail $T/status-capabilities "no capability set in status: $(grep -o '"capabilities":[^]]*]' "$work/status.json" | head -n 2 | tr '\n' ' ') / $(grep -A3 'capabilities by policy' "$work/status.txt" | tr '\n' ' ')"
fi

# A trusted.* attribute set through io_uring under a personality from
# before a setuid(0): the request runs in an io_uring worker (comm
# iou-wrk-PID, pid the probe's), and its SYS_ADMIN check is the
# sandbox's: refused, one capability record. With SYS_ADMIN listed
# (caps), the setxattr hook after the check judges the path through its
# mount from the worker too: /tmp/priv is writable, OK and no record.
uring_setxattr_case() {
	_name="$T/$p/uring-setxattr-changed"
	_cg=$sbx
	[ "$p" = default ] || _cg=$caps
	_out=$("$TOOLS/privprobe" --cgroup "$_cg" uring-setxattr /tmp/priv/xattr-file 2>&1)
	_pid=$(echo "$_out" | sed -n 's/^pid=\([0-9][0-9]*\)$/\1/p')
	log_settle "$log"
	_err=
	_want=EPERM _want_n=1
	[ "$p" = default ] || _want=OK _want_n=0
	[ "$(echo "$_out" | tail -n 1)" = "$_want" ] || _err="expected $_want, got: $_out"
	_cnt=$(own_records_to "$work/recs" "$_pid")
	_f="\"event\":\"deny\" \"policy\":\"priv\" \"pid\":$_pid, \"comm\":\"iou-wrk- $ADMIN"
	if [ "$_cnt" != "$_want_n" ]; then
		_err="${_err:+$_err; }$_cnt records for pid $_pid, want $_want_n: $(short "$(head -n 1 "$work/recs")")"
	elif [ "$_want_n" = 1 ]; then
		_miss=
		has_all "$(head -n 1 "$work/recs")" "$_f" ||
			_err="${_err:+$_err; }no $_miss in $(short "$(head -n 1 "$work/recs")")"
	fi
	if [ -z "$_err" ]; then
		t_ok "$_name"
	else
		t_fail "$_name" "$_err"
	fi
}

for p in default caps outside audit; do
	set_phase $p
	cases
	judge_cases
	case $p in default | caps) uring_setxattr_case ;; esac
done

# ---- an ordinary workload in the default policy: no record at all ----
cat > /tmp/priv/job.sh <<'EOF'
#!/bin/sh
set -e
d=/tmp/priv/job
mkdir -p $d
echo hello > $d/a
cat $d/a | tr a-z A-Z > $d/b
( cd $d && cp b c && mv c e && rm e && ln -s b l && cat l > /dev/null )
chmod 600 $d/a
chown 0:0 $d/a
id > $d/id
date > $d/date
ps > $d/ps
ls /proc > /dev/null
x=$(echo sub | sed s/sub/shell/)
[ "$x" = shell ]
sleep 30 &
kid=$!
kill $kid
wait $kid 2>/dev/null || true
sleep 0.1
echo done
EOF
# shellcheck disable=SC2016
sh -c 'echo $$ > "$1/cgroup.procs" && exec sh /tmp/priv/job.sh' sh "$wl" > "$work/job.out" 2>&1
rc=$?
log_settle "$log"
n=$(grep '"cgroup":"/priv-wl"' "$log" | grep -c '"event":"\(deny\|audit\)"')
if [ "$rc" = 0 ] && [ "$(tail -n 1 "$work/job.out")" = done ] && [ "$n" = 0 ]; then
	t_ok $T/workload
else
	t_fail $T/workload "exit $rc, $n record(s): $(tail -n 2 "$work/job.out" | tr '\n' ' ')"
	grep '"cgroup":"/priv-wl"' "$log" | grep '"event":"\(deny\|audit\)"' | head -n 8
fi

# ---- the end ----
echo "$old_dmesg" > /proc/sys/kernel/dmesg_restrict
echo "$old_perf" > /proc/sys/kernel/perf_event_paranoid
kill "$agent"
wait_for 30 sh -c "! kill -0 $agent 2>/dev/null"
kill -9 "$agent" 2>/dev/null
t_no_lost
[ -d "$bpffs" ] && "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
exit 0
