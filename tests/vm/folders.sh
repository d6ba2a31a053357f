#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Per-execution folders in the test VM (issue 15, point 3): a policy whose
# read and write paths hold {cgroup} and {cgroup_path} gives each cgroup
# its glob selects a folder of its own (include/file.h, file_cg_rules).
# One real syscall per probe (tools/fileprobe.c) from a real process in a
# sandbox cgroup, with both results checked: the errno, and exactly one
# deny record for a refusal, none for an allowed call.
#   - /folders/job-1 and job-2 exist before the agent: each writes and
#     reads its own folders, and neither reaches the other's, nor the
#     folders' parent;
#   - /folders/job-3, made while the agent runs, gets its folder too;
#   - /folders-b/job-1, of a second policy with the same {cgroup} folder,
#     made while the agent runs: its folder would be /folders/job-1's, so
#     it keeps the base scope (refused, with an error naming both);
#   - after a reload (a new policy id), the same holds;
#   - the manifest reports each sandbox's folders expanded, nothing
#     shared, point 3 passing, and status says each scope is the
#     cgroup's own;
#   - a cgroup removed takes its scope with it (status file_scopes).
#
# Env (from tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS (optional, unquoted on purpose: several flags).

. tests/vm/lib.sh

T=folders
probe=$TOOLS/fileprobe
top=$CGROUP_ROOT/folders
topb=$CGROUP_ROOT/folders-b
work=/run/folders-test		# the agent's log: outside every scope
log=$work/agent.log
cases=$work/cases
bpffs=/sys/fs/bpf/folders
FP='"comm":"fileprobe"'
agent=

rm -rf "$work" /srv/jobs /srv/in /srv/deep
mkdir -p "$work/pol"
: > "$log"
set -f	# record fields are case patterns, never file globs

cleanup() {
	agent_kill
	cg_remove "$top/job-1" "$top/job-2" "$top/job-3" "$top" "$topb/job-1" "$topb"
	rm -rf /srv/jobs /srv/in /srv/deep
}
trap cleanup EXIT

# policy EXTRA: the policy file, with EXTRA read paths (a reload).
policy() {
	cat > "$work/pol/.p.tmp" <<EOF
name: folders
mode: enforce
cgroups: [/folders/*]
files:
  read: [/usr, /lib, /lib64, /bin, /sbin, /etc, /opt/stockade, /proc, /dev$1,
         "/srv/in/{cgroup}"]
  write:
    - /srv/jobs/{cgroup}/out
    - /srv/deep/{cgroup_path}
EOF
	mv "$work/pol/.p.tmp" "$work/pol/p.yaml"
}
cat > "$work/pol/b.yaml" <<EOF
name: folders-b
mode: enforce
cgroups: [/folders-b/*]
files:
  read: [/usr, /lib, /lib64, /bin, /sbin, /etc, /opt/stockade, /proc, /dev]
  write: ["/srv/jobs/{cgroup}/out"]
EOF

# Made from outside every sandbox.
for j in job-1 job-2 job-3; do
	mkdir -p "/srv/jobs/$j/out" "/srv/in/$j" "/srv/deep/folders/$j"
	echo "input of $j" > "/srv/in/$j/data"
done
cg_remove "$top/job-1" "$top/job-2" "$top/job-3" "$top" "$topb/job-1" "$topb"
mkdir -p "$top/job-1" "$top/job-2" "$topb"
policy ''
# shellcheck disable=SC2086
"$STOCKADE" agent ${STOCKADE_AGENT_FLAGS:-} --policy "$work/pol" --log "$log" \
	--bpffs "$bpffs" --detach-on-exit > "$work/agent.out" 2> "$work/agent.err" &
agent=$!
agent_ready_or_fail $T/agent-ready "$log" "$agent" "$work/agent.err" || exit 0

W="\"kind\":\"file\" \"reason\":\"outside_scope\" $FP"
enforcing="job-1 job-2 job-3 b-job-1"	# every phase enforces (kase, tests/vm/lib.sh)
# cases JOB OTHER: JOB's own folders open, OTHER's and the parent shut.
cases() {
	phase=$1
	phase_in "$top/$1" deny folders ''
	kase own-write OK '' '' open-creat "/srv/jobs/$1/out/f-$phase-$round"
	kase own-deep OK '' '' open-creat "/srv/deep/folders/$1/f-$phase-$round"
	kase own-read OK '' '' open-read "/srv/in/$1/data"
	kase other-write EPERM "$W \"path\":\"/srv/jobs/$2/out/f-$phase-$round\"" '' \
		open-creat "/srv/jobs/$2/out/f-$phase-$round"
	kase other-deep EPERM "$W \"path\":\"/srv/deep/folders/$2/x\"" '' \
		open-creat "/srv/deep/folders/$2/x"
	kase other-read EPERM "$W \"op\":\"open_read\" \"path\":\"/srv/in/$2/data\"" '' \
		open-read "/srv/in/$2/data"
	kase parent-write EPERM "$W \"path\":\"/srv/jobs/$1/x\"" '' \
		open-creat "/srv/jobs/$1/x"
	judge_cases
}

# attached NAME: the agent's attach record for $top/NAME is in.
attached() {
	grep -q "\"event\":\"attach\".*\"cgroup\":\"/folders/$1\"" "$log"
}

round=start
cases job-1 job-2
cases job-2 job-1

# A cgroup made while the agent runs: its own scope before it is judged
# by it (until then the base scope refuses every folder).
mkdir "$top/job-3"
if wait_for 10 attached job-3; then
	t_ok $T/job-3-attached
else
	t_fail $T/job-3-attached "no attach record for /folders/job-3 in 10 s"
fi
round=new
cases job-3 job-1

# Another policy's cgroup whose {cgroup} folder is job-1's: refused.
mkdir "$topb/job-1"
attached_b() { grep -q '"event":"attach".*"cgroup":"/folders-b/job-1"' "$log"; }
wait_for 10 attached_b
phase=b-job-1
phase_in "$topb/job-1" deny folders-b ''
kase own-folder-shared EPERM "$W \"path\":\"/srv/jobs/job-1/out/fb\"" '' \
	open-creat /srv/jobs/job-1/out/fb
judge_cases
if grep -q 'the per-execution folder /srv/jobs/job-1/out of /folders-b/job-1 meets /srv/jobs/job-1/out, the folder of /folders/job-1' "$work/agent.err"; then
	t_ok $T/collision-named
else
	t_fail $T/collision-named "no error naming both folders: $(grep -i 'folder' "$work/agent.err" | tail -n 2 | tr '\n' ' ')"
fi

# Status and manifest: read back from the pins.
"$STOCKADE" status --json --bpffs "$bpffs" > "$work/status.json" 2> "$work/status.err"
n=$(grep -o '"file_scope":"own"' "$work/status.json" | wc -l)
if [ "$n" = 3 ] && grep -q '"file_scopes":3[,}]' "$work/status.json"; then
	t_ok $T/status-own-scopes
else
	t_fail $T/status-own-scopes "want 3 cgroups with file_scope own and file_scopes 3, got $n: $(short "$(cat "$work/status.json" "$work/status.err")")"
fi
"$STOCKADE" manifest "$top/job-1" --format json --bpffs "$bpffs" > "$work/mf.json" 2> "$work/mf.err"
mrc=$?
if grep -q '"write":\["/srv/jobs/job-1/out","/srv/deep/folders/job-1"\]' "$work/mf.json" &&
   grep -q '"writable_shared_with":\[\]' "$work/mf.json" &&
   grep -q '"points":\[.*{"point":3,"verdict":"pass","title":"filesystem' "$work/mf.json"; then
	t_ok $T/manifest-point-3
else
	t_fail $T/manifest-point-3 "manifest exit $mrc: $(short "$(cat "$work/mf.err") $(cat "$work/mf.json")")"
fi

# A reload: a fresh policy id, each cgroup's scope written under it
# before its slot flips.
policy ', /srv/extra'
"$STOCKADE" reload --bpffs "$bpffs" > "$work/reload.out" 2>&1
rrc=$?
if [ $rrc = 0 ]; then
	t_ok $T/reload
else
	t_fail $T/reload "exit $rrc: $(head -n 3 "$work/reload.out")"
fi
round=reload
cases job-1 job-3

# Removed: its scope goes with it (at the next scan, at most 5 s).
cg_remove "$top/job-2"
scopes2() {
	"$STOCKADE" status --json --bpffs "$bpffs" 2>/dev/null | grep -q '"file_scopes":2[,}]'
}
if wait_for 15 scopes2; then
	t_ok $T/removed-scope-gone
else
	t_fail $T/removed-scope-gone "file_scopes is not 2 15 s after /folders/job-2 went: $(short "$("$STOCKADE" status --json --bpffs "$bpffs" 2>&1)")"
fi
t_no_lost
