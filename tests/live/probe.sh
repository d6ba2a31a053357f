#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Live test of `stockade probe` (issue 15, section 2), on the host
# (degraded: no BPF-LSM) and in the test VM (BPF-LSM on both kernels):
#   - a workload (sleep) in /stockade-pr/job-1, in a private network
#     namespace, under policy pr-enforce (selector /stockade-pr/job-*,
#     memory and pids limits where the machine has those controllers); the probe runs every attempt in probe cgroups the
#     glob selects, in the workload's namespaces. Afterwards the workload
#     still runs with the same pid, its cgroup is untouched, and every
#     probe cgroup is gone.
#   - what each attempt must give: the network ones (metadata endpoints
#     in every form, TCP and UDP outside the allow list) pass everywhere
#     (cgroup programs); the file and kernel ones pass with BPF-LSM and
#     fail without (nothing refuses them: the probe says "not refused");
#     memory and pids pass where set;
#   - pr-rt (a 3 s run time, no process inside: each attempt in a network
#     namespace of its own): killed with its limit record; with --timeout
#     shorter than the run time, skipped and said;
#     another sandbox's write folder is refused with BPF-LSM.
#   - a literal selector (pr-literal): the limit attempts are skipped,
#     with the fix named.
#   - mode: audit (pr-audit): every attempt fails, "nothing was
#     enforced", audit records found.
#   - exit 3 when any attempt fails, 0 when all pass; 2 without --log;
#     1 for an unknown target.
# POSIX sh (busybox ash in the VM); no jq.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

need_cgroup2 probe
need_bpffs probe

work=$(mktemp -d /tmp/stockade-probe.XXXXXX)
bpffs=/sys/fs/bpf/stockade-probe-$$
base=$CGROUP_ROOT/stockade-pr
log=$work/agent.log
agent_pid=
pids=

cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	agent_end
	for d in job-1 lit audit-1 other-1 rt-1; do cg_empty "$base/$d"; done
	for d in "$base"/*/; do [ -d "$d" ] && cg_empty "${d%/}"; done
	rmdir "$base" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

limits=
have_mem=
if grep -qw memory "$CGROUP_ROOT/cgroup.controllers" &&
   grep -qw pids "$CGROUP_ROOT/cgroup.controllers"; then
	have_mem=1
	limits="limits:
  memory: 32Mi
  pids: 16"
fi

mkdir -p "$work/pol" "$work/other-w" "$base"
if [ -n "$have_mem" ]; then
	echo "+memory +pids" > "$CGROUP_ROOT/cgroup.subtree_control" 2>/dev/null
	echo "+memory +pids" > "$base/cgroup.subtree_control" 2>/dev/null
fi
cat > "$work/pol/enforce.yaml" <<EOF
name: pr-enforce
cgroups: ['/stockade-pr/job-*']
network:
  default: deny
$limits
EOF
cat > "$work/pol/runtime.yaml" <<EOF
name: pr-rt
cgroups: ['/stockade-pr/rt-*']
network:
  default: deny
limits:
  runtime: 3s
EOF
cat > "$work/pol/literal.yaml" <<EOF
name: pr-literal
cgroups: [/stockade-pr/lit]
network:
  default: deny
limits:
  runtime: 1h
EOF
cat > "$work/pol/audit.yaml" <<EOF
name: pr-audit
mode: audit
cgroups: ['/stockade-pr/audit-*']
network:
  default: deny
EOF
cat > "$work/pol/other.yaml" <<EOF
name: pr-other
cgroups: [/stockade-pr/other-1]
files:
  write: [$work/other-w]
EOF
for d in job-1 lit audit-1 other-1 rt-1; do mkdir -p "$base/$d"; done

# workload CGDIR: a sleep in its own network namespace, in CGDIR.
workload() {
	unshare -n sh -c "echo \$\$ > '$1/cgroup.procs'; exec sleep 600" &
	pids="$pids $!"
	wl=$!
}
workload "$base/job-1"
job_pid=$wl
workload "$base/lit"
workload "$base/audit-1"
audit_pid=$wl

# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --bpffs "$bpffs" --detach-on-exit \
	--state "$work/run/state.json" --policy "$work/pol" --log "$log" \
	> "$work/agent.out" 2> "$work/agent.err" &
agent_pid=$!
if ! wait_ready "$log"; then
	not_ok "agent starts" "$(tr '\n' ' ' < "$work/agent.err" | tail -c 400)"
	summary
	exit
fi
ok "agent starts"
lsm=1
grep '"event":"agent_ready"' "$log" | grep -q '"file_scope"' && lsm=

probe() {
	"$STOCKADE" probe --bpffs "$bpffs" --cgroup-root "$CGROUP_ROOT" \
		--state "$work/run/state.json" --log "$log" "$@"
}

# ---- enforce: against the running workload ----
probe --format json /stockade-pr/job-1 > "$work/p.json" 2> "$work/p.err"
rc=$?
att() { grep "\"attempt\":\"$1\"" "$work/p.json"; }
# want ATTEMPT RESULT: the attempt's line says result RESULT.
want() {
	_l=$(att "$1")
	case $_l in
	*"\"result\":\"$2\""*) ok "enforce: $1 $2" ;;
	*) not_ok "enforce: $1" "want $2: ${_l:-no such attempt} $(tail -c 300 "$work/p.err")" ;;
	esac
}
for a in metadata-ipv4 metadata-ipv4-mapped metadata-nat64 metadata-6to4 \
	 metadata-aws-ipv6 metadata-ecs metadata-alibaba; do
	want "credentials/$a" pass
done
want egress/tcp-not-allowed pass
want egress/udp-not-allowed pass
if [ -n "$lsm" ]; then
	want credentials/etc-shadow pass
	for a in filesystem/write-outside-scope kernel/load-module kernel/bpf kernel/mount kernel/ptrace-outside; do
		want "$a" pass
	done
	att filesystem/other-sandbox-write/pr-other/0 | grep -q '"result":"pass"' &&
		ok "enforce: another sandbox's write folder refused" ||
		not_ok "enforce: another sandbox's write folder" "$(att filesystem/other-sandbox-write/pr-other/0)"
else
	# No BPF-LSM: nothing refuses a file or a kernel door.
	for a in filesystem/write-outside-scope kernel/bpf kernel/mount; do
		_l=$(att "$a")
		case $_l in
		*'"result":"fail"'*'"why":"not refused'*) ok "enforce (no BPF-LSM): $a fails: not refused" ;;
		*) not_ok "enforce (no BPF-LSM): $a" "want fail, not refused: $_l" ;;
		esac
	done
	echo "probe: without BPF-LSM the file, credential-file and kernel attempts cannot be refused here; the test VM shows them"
fi
if [ -n "$have_mem" ]; then
	want limits/memory pass
	want limits/pids pass
else
	att limits/memory | grep -q . && not_ok "enforce: limits/memory" "attempted without a memory limit" ||
		ok "enforce: no memory or pids attempt without those controllers"
fi
# Every passing attempt names its record's seq.
grep '"attempt":' "$work/p.json" | grep '"result":"pass"' | grep -v '"record_seq":[0-9]' | head -n 1 > "$work/noseq"
[ -s "$work/noseq" ] && not_ok "enforce: passing attempts name their record" "$(cat "$work/noseq")" ||
	ok "enforce: every passing attempt names its record's seq"
if [ -n "$lsm" ] && [ -n "$have_mem" ]; then
	[ "$rc" = 0 ] && ok "enforce: exit 0, all refused and recorded" ||
		not_ok "enforce: exit" "want 0, got $rc: $(grep '"fail"' "$work/p.json" | head -n 3)"
else
	[ "$rc" = 3 ] && ok "enforce: exit 3 (attempts this machine cannot refuse)" ||
		not_ok "enforce: exit" "want 3, got $rc"
fi
# The workload: still running, same pid, same cgroup; no probe cgroup left.
if kill -0 "$job_pid" 2>/dev/null && grep -qx "$job_pid" "$base/job-1/cgroup.procs"; then
	ok "the workload still runs, pid $job_pid, in its own cgroup"
else
	not_ok "the workload" "pid $job_pid gone or moved"
fi
left=$(ls -d "$base"/job-stockade-probe-* 2>/dev/null)
[ -z "$left" ] && ok "every probe cgroup removed" || not_ok "probe cgroups left" "$left"

# ---- run time: a sandbox with no process (a network namespace each) ----
probe --format json --timeout 20 pr-rt > "$work/rt.json" 2> "$work/rt.err"
_l=$(grep '"attempt":"limits/runtime"' "$work/rt.json")
case $_l in
*'"actual":"SIGKILL"'*'"record_event":"limit"'*'"result":"pass"'*) ok "run time: killed, with its limit record" ;;
*) not_ok "run time" "${_l:-no attempt} $(tail -c 300 "$work/rt.err")" ;;
esac
grep -q '"attempt":"egress/tcp-not-allowed".*"result":"pass"' "$work/rt.json" &&
	ok "run time: no process inside, attempts in a namespace of their own, still refused" ||
	not_ok "run time: egress" "$(grep egress/tcp "$work/rt.json")"
probe --timeout 2 pr-rt > "$work/rt2.txt" 2>&1
grep -q 'skipped.*limits/runtime.*longer than --timeout 2 s' "$work/rt2.txt" &&
	ok "run time longer than --timeout: skipped, said" ||
	not_ok "run time --timeout" "$(grep runtime "$work/rt2.txt")"

# ---- a literal selector: no limit attempt ----
probe /stockade-pr/lit > "$work/lit.txt" 2> "$work/lit.err"
rc=$?
if grep -q 'skipped.*limits/runtime.*add a glob selector' "$work/lit.txt" && [ "$rc" = 3 ]; then
	ok "literal selector: limit attempts skipped, with the fix"
else
	not_ok "literal selector" "exit $rc: $(grep runtime "$work/lit.txt")"
fi

# ---- audit: nothing enforced ----
probe --format json pr-audit > "$work/a.json" 2> "$work/a.err"
rc=$?
_l=$(grep '"attempt":"egress/tcp-not-allowed"' "$work/a.json")
case $_l in
*'"record_event":"audit"'*'"result":"fail"'*'nothing was enforced'*) ok "audit: allowed, its audit record found, nothing enforced" ;;
*) not_ok "audit" "$_l" ;;
esac
grep -q '"mode":"audit"' "$work/a.json" && [ "$rc" = 3 ] && ok "audit: exit 3" ||
	not_ok "audit: exit" "want 3, got $rc"
kill -0 "$audit_pid" 2>/dev/null && ok "audit: the workload still runs" ||
	not_ok "audit: the workload" "pid $audit_pid gone"

# ---- usage and errors ----
"$STOCKADE" probe /stockade-pr/job-1 > /dev/null 2>&1
[ $? = 2 ] && ok "no --log: exit 2" || not_ok "no --log" "exit $?"
probe /stockade-pr/none > /dev/null 2> "$work/none.err"
[ $? = 1 ] && grep -q 'not a confined cgroup' "$work/none.err" && ok "unknown target: exit 1, said" ||
	not_ok "unknown target" "$(cat "$work/none.err")"

summary
