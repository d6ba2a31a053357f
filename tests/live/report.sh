#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Live test of `stockade report` and `stockade register check` (issue 15,
# sections 3 and 4), on the host (degraded) and in the test VM:
#   - an agent confines /stockade-rp/job-1 (a workload in a private network
#     namespace) under policy rp-job, category model-generated-code, and
#     a register that approves it: `stockade register check` over the
#     agent's log passes; a register without the category, one whose entry
#     expired, one naming another policy hash: each fails (exit 3), with
#     the reason; a log with a seq gap no lost record explains fails.
#   - `stockade report --probe /stockade-rp/job-1 --register R --log L
#     --out DIR`: report.json, report.md, oscal-assessment-results.json,
#     manifest.json, manifest.md, probe-1.jsonl, register.jsonl,
#     log-slice.jsonl and SHA256SUMS; the workload still runs; --verify
#     passes, and fails once a file is changed; where python3's jsonschema
#     is (the host), the OSCAL document is valid against
#     tests/oscal/assessment-results.schema.json, and its UUIDs are version
#     5, the same for the same node and run.
# POSIX sh (busybox ash in the VM); no jq.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

need_cgroup2 report
need_bpffs report

work=$(mktemp -d /tmp/stockade-report.XXXXXX)
bpffs=/sys/fs/bpf/stockade-report-$$
base=$CGROUP_ROOT/stockade-rp
log=$work/agent.log
agent_pid=
pids=

cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	agent_end
	for d in "$base"/*/; do [ -d "$d" ] && cg_empty "${d%/}"; done
	rmdir "$base" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$work/pol" "$base/job-1"
cat > "$work/pol/job.yaml" <<'EOF'
name: rp-job
category: model-generated-code
cgroups: ['/stockade-rp/job-*']
network:
  default: deny
limits:
  runtime: 1h
EOF
unshare -n sh -c "echo \$\$ > '$base/job-1/cgroup.procs'; exec sleep 600" &
pids="$pids $!"
wl=$!

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
hash=$(grep '"event":"policy"' "$log" | sed -n 's/.*"hash":"\([0-9a-f]*\)".*/\1/p' | head -n 1)

# register FILE CATEGORY POLICIES EXPIRES
register() {
	cat > "$1" <<EOF
entries:
  - category: $2
    description: "code the assistant writes for a task"
    conditions:
      policies: [$3]
      limits: [runtime]
    environment: /stockade-rp/job-*
    approver: "J. Doe, platform security"
    approved: 2026-01-01
    expires: $4
EOF
}
register "$work/ok.yaml" model-generated-code rp-job 2099-01-01
register "$work/other.yaml" customer-scripts rp-job 2099-01-01
register "$work/expired.yaml" model-generated-code rp-job 2026-01-02
register "$work/hash.yaml" model-generated-code 00000000000000aa 2099-01-01

"$STOCKADE" check "$work/ok.yaml" > "$work/check.out" 2>&1 &&
	grep -q 'register ok: 1 category' "$work/check.out" &&
	ok "stockade check validates a register" ||
	not_ok "check register" "$(cat "$work/check.out")"

rc_of() { "$STOCKADE" register check "$1" --log "${2:-$log}" > "$work/rc.out" 2>&1; echo $?; }
[ "$(rc_of "$work/ok.yaml")" = 0 ] && grep -q 'category model-generated-code: 0 exec(s), 1 sandbox(es)' "$work/rc.out" &&
	ok "register check: the approved category passes, with its coverage" ||
	not_ok "register check ok" "$(cat "$work/rc.out")"
[ "$(rc_of "$work/other.yaml")" = 3 ] && grep -q "category 'model-generated-code' (policy rp-job) is not in the register" "$work/rc.out" &&
	ok "register check: a category missing from the register fails" ||
	not_ok "register check unlisted" "$(cat "$work/rc.out")"
[ "$(rc_of "$work/expired.yaml")" = 3 ] && grep -q "ran after its entry expired" "$work/rc.out" &&
	ok "register check: an expired entry fails" ||
	not_ok "register check expired" "$(cat "$work/rc.out")"
[ "$(rc_of "$work/hash.yaml")" = 3 ] && grep -q "ran under policy rp-job (hash $hash), which its entry does not name" "$work/rc.out" &&
	ok "register check: a policy or hash the entry does not name fails" ||
	not_ok "register check hash" "$(cat "$work/rc.out")"
# A gap: drop one record from a copy of the log.
awk 'NR == 2 { next } { print }' "$log" > "$work/gap.log"
[ "$(rc_of "$work/ok.yaml" "$work/gap.log")" = 3 ] && grep -q "are missing and only 0 are accounted for" "$work/rc.out" &&
	ok "register check: a seq gap no lost record explains fails" ||
	not_ok "register check gap" "$(cat "$work/rc.out")"

# ---- the bundle ----
out=$work/bundle
"$STOCKADE" report --bpffs "$bpffs" --cgroup-root "$CGROUP_ROOT" --state "$work/run/state.json" \
	--probe /stockade-rp/job-1 --register "$work/ok.yaml" --log "$log" --out "$out" \
	> "$work/report.out" 2> "$work/report.err"
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] && grep -q "the bundle is in $out" "$work/report.out" &&
	ok "report: written (exit $rc: $(sed 's/ (.*//' "$work/report.out" | head -n 1))" ||
	not_ok "report" "exit $rc: $(cat "$work/report.out" "$work/report.err" | tail -c 400)"
missing=
for f in report.json report.md oscal-assessment-results.json manifest.json manifest.md \
	 probe-1.jsonl register.jsonl log-slice.jsonl SHA256SUMS; do
	[ -s "$out/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && ok "report: every file of the bundle" || not_ok "report files" "missing:$missing"
grep -q '"code-register":{"result":"pass"' "$out/report.json" &&
	grep -q '"runtime-configuration":{"result":' "$out/report.json" &&
	grep -q '"live-test":{"result":' "$out/report.json" &&
	ok "report.json: the three pieces with their verdicts" ||
	not_ok "report.json" "$(head -c 400 "$out/report.json")"
grep -q '^## 2. Live test of the confinement' "$out/report.md" &&
	grep -Eq '^\| 1 an attempt to read the host credential endpoint fails \| (pass|fail) \|' "$out/report.md" &&
	grep -q '^| 2 a request to a destination outside the allow list is refused | pass |' "$out/report.md" &&
	ok "report.md: the evidence items and their points" ||
	not_ok "report.md" "$(grep -n '^|' "$out/report.md" | head -n 8)"
kill -0 "$wl" 2>/dev/null && grep -qx "$wl" "$base/job-1/cgroup.procs" &&
	ok "report: the workload still runs, same pid and cgroup" ||
	not_ok "report: workload" "pid $wl"

"$STOCKADE" report --verify "$out" > "$work/v.out" 2>&1 &&
	ok "report --verify: the bundle is as written" ||
	not_ok "verify" "$(cat "$work/v.out")"
echo tampered >> "$out/log-slice.jsonl"
"$STOCKADE" report --verify "$out" > "$work/v.out" 2>&1
[ $? = 3 ] && grep -q 'FAIL log-slice.jsonl' "$work/v.out" &&
	ok "report --verify: a changed file fails" ||
	not_ok "verify tampered" "$(cat "$work/v.out")"

py=/usr/bin/python3
if [ -x $py ] && $py -c 'import jsonschema' 2>/dev/null; then
	if $py "$here/../oscal/validate.py" "$here/../oscal/assessment-results.schema.json" \
		"$out/oscal-assessment-results.json" > "$work/schema.out" 2>&1; then
		ok "OSCAL: valid against the assessment-results schema"
	else
		not_ok "OSCAL schema" "$(head -n 5 "$work/schema.out")"
	fi
	# A document with an empty array and a v1 UUID must fail the schema.
	sed 's/"methods":\["TEST"\]/"methods":[]/; s/"uuid":"\(........-....-\)5/"uuid":"\11/' \
		"$out/oscal-assessment-results.json" > "$work/bad.json"
	$py "$here/../oscal/validate.py" "$here/../oscal/assessment-results.schema.json" "$work/bad.json" > /dev/null 2>&1
	[ $? = 1 ] && ok "OSCAL: the schema refuses an empty array and a version-1 UUID" ||
		not_ok "OSCAL schema strictness" "the altered document passed"
else
	skip "OSCAL schema" "no python3 jsonschema here (the host's make deps installs python3-jsonschema)"
fi
grep -o '"uuid":"[^"]*"' "$out/oscal-assessment-results.json" | grep -v '"uuid":"........-....-5...-[89ab]' > "$work/notv5"
[ ! -s "$work/notv5" ] && ok "OSCAL: every UUID is version 5" || not_ok "OSCAL uuids" "$(head -n 3 "$work/notv5")"

summary
