#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Live test of `stockade manifest` (issue 15, section 1): an agent confines
# three sandboxes, and the manifest read back from the pins, /proc and the
# cgroup files says what is in force, judged against the five points.
#   - /stockade-mf/shared-1 and shared-2 (one policy, a glob, one literal
#     write path): each lists the other in writable_shared_with and fails
#     point 3; shared-1 runs a process with a secret-looking variable,
#     whose NAME is listed (never its value) and which fails point 1.
#   - /stockade-mf/clean (its own policy and write folder, every allow
#     rule with a reason, a named boundary): passes every point this
#     machine can show. On a kernel without BPF-LSM (the host) point 3
#     cannot be shown (the file scope is not enforced), and on a host
#     whose cgroup2 has no cpu or memory controller (a hybrid host) point
#     4 cannot either: the test expects those to fail, with the reason,
#     and says so.
#   - /stockade-mf/open: default: allow, a metadata override, no memory
#     limit: points 2, 1 and 4 fail, each with its reason.
#   - --format md, --out FILE, a filter, a missing boundary file, an
#     unknown target (exit 1) and a bad option (exit 2).
# POSIX sh (busybox ash in the VM); no jq: the JSON is grepped.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

need_cgroup2 manifest
need_bpffs manifest

work=$(mktemp -d /tmp/stockade-manifest.XXXXXX)
bpffs=/sys/fs/bpf/stockade-manifest-$$
base=$CGROUP_ROOT/stockade-mf
agent_pid=
pids=
secret_value=not-for-the-manifest-$$

cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	agent_end
	for d in shared-1 shared-2 clean open; do cg_empty "$base/$d"; done
	rmdir "$base" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# What this machine can show: cpu and memory limits need those
# controllers in the cgroup2 hierarchy.
limits=
if grep -qw cpu "$CGROUP_ROOT/cgroup.controllers" &&
   grep -qw memory "$CGROUP_ROOT/cgroup.controllers"; then
	limits="  cpu: 0.5
  memory: 64Mi"
fi

# policy FILE NAME CATEGORY SELECTOR WRITE: one allow rule with its
# reason, one write path, the limits this machine can take.
policy() {
	cat > "$1" <<EOF
name: $2
category: $3
cgroups: [$4]
network:
  allow:
    - cidr: 127.0.0.1/32
      ports: [9]
      proto: tcp
      reason: "the local discard service"
files:
  write: [$5]
limits:
$limits
  runtime: 1h
EOF
}
policy "$work/shared.yaml" mf-shared customer-transforms '/stockade-mf/shared-*' /tmp/stockade-mf-shared
policy "$work/clean.yaml" mf-clean model-generated-code /stockade-mf/clean /tmp/stockade-mf-clean/job
# open: default allow, a metadata override, no memory limit (points 2,
# 1 and 4 fail, each for its own reason).
cat > "$work/open.yaml" <<EOF
name: mf-open
category: customer-transforms
cgroups: [/stockade-mf/open]
network:
  default: allow
  overrides:
    - endpoint: 169.254.169.254
      reason: "reads the instance region"
files:
  write: [/tmp/stockade-mf-open]
limits:
  runtime: 1h
EOF
cat > "$work/boundary.yaml" <<'EOF'
name: code-execution-sandbox
architecture_record: "ARCH-12 section 3, execution tier"
EOF

# stockade check warns of the shared write path (an error with --strict).
"$STOCKADE" check "$work/shared.yaml" "$work/clean.yaml" > /dev/null 2> "$work/check.err"
rc=$?
[ "$rc" = 0 ] && grep -q 'shared.yaml:[0-9]*:[0-9]*: files.write\[0\]: warning: /tmp/stockade-mf-shared is writable by every cgroup the glob selector /stockade-mf/shared-\* selects' "$work/check.err" &&
	[ "$(wc -l < "$work/check.err")" = 1 ] &&
	ok "check: warns once, of the shared policy's write path (exit 0)" ||
	not_ok "check warning" "exit $rc: $(cat "$work/check.err")"
"$STOCKADE" check --strict "$work/shared.yaml" "$work/clean.yaml" > /dev/null 2>&1
rc=$?
[ "$rc" = 1 ] && ok "check --strict: the shared write path is an error (exit 1)" ||
	not_ok "check --strict" "exit $rc"

mkdir -p "$base"
if [ -n "$limits" ]; then
	echo "+cpu +memory" > "$CGROUP_ROOT/cgroup.subtree_control" 2>/dev/null
	echo "+cpu +memory" > "$base/cgroup.subtree_control" 2>/dev/null
fi
for d in shared-1 shared-2 clean open; do mkdir -p "$base/$d"; done

# The workloads, each in its cgroup before the agent starts.
env -i PATH=/usr/bin:/bin MY_API_TOKEN="$secret_value" sleep 600 &
p=$!
pids="$pids $p"
echo "$p" > "$base/shared-1/cgroup.procs"
env -i PATH=/usr/bin:/bin sleep 600 &
p=$!
pids="$pids $p"
echo "$p" > "$base/shared-2/cgroup.procs"
env -i PATH=/usr/bin:/bin sleep 600 &
p=$!
pids="$pids $p"
echo "$p" > "$base/clean/cgroup.procs"

# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --bpffs "$bpffs" --detach-on-exit \
	--state "$work/run/state.json" --policy "$work/shared.yaml" \
	--policy "$work/clean.yaml" --policy "$work/open.yaml" --log "$work/agent.log" \
	> "$work/agent.out" 2> "$work/agent.err" &
agent_pid=$!
if ! wait_ready "$work/agent.log"; then
	not_ok "agent starts" "$(tr '\n' ' ' < "$work/agent.err" | tail -c 400)"
	summary
	exit
fi
ok "agent starts with the two policies"
# The run-time clocks come from the running agent's state file.
wait_for '/stockade-mf/clean' "$work/run/state.json" 50

ready=$(grep '"event":"agent_ready"' "$work/agent.log" | head -n 1)
lsm=yes
case $ready in *'"degraded":[]'*) ;; *) lsm=no ;; esac

ls "$work/run/policies/"*.policy > /dev/null 2>&1 &&
	ok "the agent wrote its policy records beside its state file" ||
	not_ok "policy records" "none in $work/run/policies"

mf() {
	"$STOCKADE" manifest --bpffs "$bpffs" --state "$work/run/state.json" \
		--boundary "$work/boundary.yaml" "$@"
}

# point N pass|fail FILE: that sandbox's summary entry for point N.
point() { grep -q "{\"point\":$1,\"verdict\":\"$2\",\"title\"" "$3"; }
why() { sed -n "s/.*{\"point\":$1,\"verdict\":\"[a-z]*\",\"title\":\"[^\"]*\",\"why\":\"\([^\"]*\)\".*/\1/p" "$2" | head -n 1; }

# ---- everything ----
mf > "$work/all.json" 2> "$work/all.err"
rc=$?
[ "$rc" = 3 ] && ok "manifest: exit 3 (a point fails)" ||
	not_ok "manifest exit" "$rc, want 3: $(head -c 300 "$work/all.err")"
n=$(grep -o '"cgroup":"/stockade-mf/[a-z0-9-]*","cgroup_id"' "$work/all.json" | wc -l)
[ "$n" = 4 ] && ok "manifest: four sandboxes" || not_ok "sandboxes" "$n, want 4"
grep -q "\"hostname\":\"$(hostname)\"" "$work/all.json" &&
grep -q "\"kernel\":\"$(uname -r)\"" "$work/all.json" &&
	ok "manifest: host name and kernel release" ||
	not_ok "identity" "$(head -c 300 "$work/all.json")"
grep -q '"name":"code-execution-sandbox","architecture_record":"ARCH-12 section 3, execution tier"' "$work/all.json" &&
	ok "manifest: the boundary's name and architecture record" ||
	not_ok "boundary" "$(grep -o '"boundary":{[^}]*}' "$work/all.json")"

# ---- the shared sandbox with a secret ----
mf /stockade-mf/shared-1 > "$work/s1.json" 2> "$work/s1.err"
rc=$?
[ "$rc" = 3 ] && ok "shared-1: exit 3" || not_ok "shared-1 exit" "$rc"
grep -q '"name":"MY_API_TOKEN","blocked":false,"point":1,"verdict":"fail"' "$work/s1.json" &&
	ok "shared-1: lists MY_API_TOKEN by name, point 1 fail" ||
	not_ok "secret name" "$(grep -o '"environment":\[[^]]*\]' "$work/s1.json")"
if grep -q "$secret_value" "$work/s1.json" "$work/all.json"; then
	not_ok "secret value" "the variable's value is in the manifest"
else
	ok "shared-1: the variable's value appears nowhere"
fi
grep -q '"writable_shared_with":\[{"cgroup":"/stockade-mf/shared-2","policy":"mf-shared","path":"/tmp/stockade-mf-shared","point":3,"verdict":"fail"}' "$work/s1.json" &&
	ok "shared-1: writable_shared_with names shared-2 (same policy, same write path)" ||
	not_ok "writable_shared_with" "$(grep -o '"writable_shared_with":\[[^]]*\]' "$work/s1.json")"
point 1 fail "$work/s1.json" && ok "shared-1: point 1 fails: $(why 1 "$work/s1.json")" ||
	not_ok "shared-1 point 1" "$(why 1 "$work/s1.json")"
point 3 fail "$work/s1.json" && why 3 "$work/s1.json" | grep -q 'shared with /stockade-mf/shared-2' && ok "shared-1: point 3 fails: $(why 3 "$work/s1.json")" ||
	not_ok "shared-1 point 3" "$(why 3 "$work/s1.json")"
grep -q '"reason":"the local discard service","point":2,"verdict":"pass"' "$work/s1.json" &&
	ok "shared-1: the allow rule with its reason" ||
	not_ok "allow reason" "$(grep -o '"allow":\[[^]]*\]' "$work/s1.json")"
grep -q '"endpoint":"169.254.0.0/16","state":"denied","forms":\["169.254.0.0/16","::ffff:169.254.0.0/112",' "$work/s1.json" &&
	ok "shared-1: metadata endpoints denied, with their address forms" ||
	not_ok "metadata" "$(grep -o '"metadata_endpoints":\[{[^}]*}' "$work/s1.json")"
grep -q '"processes":\[{"pid":[0-9]*,"name":"sleep","uid":\[0,0,0,0\]' "$work/s1.json" &&
grep -q '"cap_bnd":"[0-9a-f]\{16\}","cap_amb":"0000000000000000","no_new_privs":[a-z]*,"seccomp":"[a-z]*"' "$work/s1.json" &&
	ok "shared-1: the process's uid/gid, capability sets, NoNewPrivs, seccomp" ||
	not_ok "privileges" "$(grep -o '"processes":\[[^]]*\]' "$work/s1.json" | head -c 400)"
grep -q '"mount_point":"/","fstype":"[^"]*","source":"[^"]*","mode":"r[ow]"' "$work/s1.json" &&
	ok "shared-1: the mounts its process sees, with ro/rw" ||
	not_ok "mounts" "$(grep -o '"mounts":\[[^]]*' "$work/s1.json" | head -c 200)"

mf --format md /stockade-mf/shared-1 > "$work/s1.md" 2>&1
rc=$?
if [ "$rc" = 3 ] && grep -q 'env MY_API_TOKEN (name only)' "$work/s1.md" &&
   grep -q '`/stockade-mf/shared-2` (mf-shared, /tmp/stockade-mf-shared) \*\*fail\*\*' "$work/s1.md" &&
   ! grep -q "$secret_value" "$work/s1.md"; then
	ok "--format md: the same findings, exit 3"
else
	not_ok "--format md" "exit $rc: $(head -c 400 "$work/s1.md")"
fi

# ---- the clean sandbox ----
mf --out "$work/clean.json" mf-clean > "$work/clean.out" 2> "$work/clean.err"
rc=$?
[ -s "$work/clean.json" ] && [ ! -s "$work/clean.out" ] &&
	ok "--out FILE: the manifest goes to FILE" || not_ok "--out" "$(head -c 200 "$work/clean.err")"
grep -q '"writable_shared_with":\[\]' "$work/clean.json" &&
	ok "clean: no writable path shared" ||
	not_ok "clean shares" "$(grep -o '"writable_shared_with":\[[^]]*\]' "$work/clean.json")"
grep -q '"environment":\[\]' "$work/clean.json" && ok "clean: no secret-looking variable" ||
	not_ok "clean env" "$(grep -o '"environment":\[[^]]*\]' "$work/clean.json")"
for pt in 1 2 5; do
	point $pt pass "$work/clean.json" && ok "clean: point $pt passes: $(why $pt "$work/clean.json")" ||
		not_ok "clean point $pt" "$(why $pt "$work/clean.json")"
done
if [ $lsm = yes ]; then
	point 3 pass "$work/clean.json" && ok "clean: point 3 passes: $(why 3 "$work/clean.json")" ||
		not_ok "clean point 3" "$(why 3 "$work/clean.json")"
else
	point 3 fail "$work/clean.json" && why 3 "$work/clean.json" | grep -q 'BPF-LSM is off' &&
		ok "clean: point 3 CANNOT BE SHOWN on this kernel (no BPF-LSM: the file scope is not enforced), and the manifest says so" ||
		not_ok "clean point 3 (degraded)" "$(why 3 "$work/clean.json")"
fi
if [ -n "$limits" ]; then
	point 4 pass "$work/clean.json" && ok "clean: point 4 passes: $(why 4 "$work/clean.json")" ||
		not_ok "clean point 4" "$(why 4 "$work/clean.json") $(grep -o '"limits":{[^}]*}' "$work/clean.json")"
else
	point 4 fail "$work/clean.json" && why 4 "$work/clean.json" | grep -q 'cpu.max is absent' &&
		ok "clean: point 4 CANNOT BE SHOWN on this host (its cgroup2 has no cpu or memory controller: a hybrid host), and the manifest says so" ||
		not_ok "clean point 4 (no controllers)" "$(why 4 "$work/clean.json")"
fi
grep -q '"runtime_ms":3600000,"runtime_from":"agent"' "$work/clean.json" &&
	ok "clean: the run time in force, from the running agent" ||
	not_ok "clean runtime" "$(grep -o '"limits":{[^}]*}' "$work/clean.json")"
want=0
[ $lsm = yes ] && [ -n "$limits" ] || want=3
[ "$rc" = $want ] && ok "clean: exit $want" || not_ok "clean exit" "$rc, want $want"

# ---- open: default allow, a metadata override, no memory limit ----
mf /stockade-mf/open > "$work/open.json" 2> "$work/open.err"
rc=$?
[ "$rc" = 3 ] && ok "open: exit 3" || not_ok "open exit" "$rc"
point 2 fail "$work/open.json" && why 2 "$work/open.json" | grep -q 'default is allow' &&
	ok "open: point 2 fails: $(why 2 "$work/open.json")" ||
	not_ok "open point 2" "$(why 2 "$work/open.json")"
point 1 fail "$work/open.json" && why 1 "$work/open.json" | grep -q '169.254.169.254' &&
	ok "open: point 1 fails (the metadata override): $(why 1 "$work/open.json")" ||
	not_ok "open point 1" "$(why 1 "$work/open.json")"
point 4 fail "$work/open.json" && why 4 "$work/open.json" | grep -q 'memory\|cpu' &&
	ok "open: point 4 fails (no memory limit): $(why 4 "$work/open.json")" ||
	not_ok "open point 4" "$(why 4 "$work/open.json")"

# ---- no boundary, errors ----
"$STOCKADE" manifest --bpffs "$bpffs" --state "$work/run/state.json" \
	--boundary "$work/none.yaml" mf-clean > "$work/nob.json" 2>&1
point 5 fail "$work/nob.json" && why 5 "$work/nob.json" | grep -q 'none.yaml' &&
	ok "no boundary file: point 5 fails, naming the file" ||
	not_ok "no boundary" "$(why 5 "$work/nob.json")"
mf /stockade-mf/none > /dev/null 2> "$work/none.err"
rc=$?
[ "$rc" = 1 ] && grep -q 'stockade status' "$work/none.err" &&
	ok "unknown target: exit 1, and where to look" || not_ok "unknown target" "exit $rc: $(cat "$work/none.err")"
mf --format xml > /dev/null 2>&1
rc=$?
[ "$rc" = 2 ] && ok "bad --format: exit 2" || not_ok "usage" "exit $rc"

if [ $lsm = no ]; then
	echo "# this kernel runs the agent degraded (no BPF-LSM): point 3 cannot be shown here$( [ -z "$limits" ] && echo ", nor point 4 (no cpu/memory controller in cgroup2)"); the VM suite shows them"
fi
summary
