#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# The file part of `make demo`: confine the cgroup stockade-demo with
# policy/examples/model-code.yaml (its file scope, protected paths and
# always-denied moves need BPF-LSM), then run an "untrusted workload" in it
# one move at a time (tools/fileprobe, tools/netprobe: one real syscall
# each), print `workload: WHAT -> RESULT` per move with the JSON record of
# every denial, and summarise. tools/demo.sh runs it on the host when the
# host kernel has working BPF-LSM; otherwise the test VM runs it
# (tests/vm/demo.sh, booted with stockade.demo=1).
#
# Env (all optional):
#   STOCKADE     the agent binary (default: REPO/stockade)
#   TOOLS        directory of fileprobe and netprobe (default: REPO/build/tools)
#   CGROUP_ROOT  the cgroup2 mount (default /sys/fs/cgroup)
#   TASK         the directory the policy's /task stands for (default /task);
#                another path gets a copy of the policy with /task rewritten
#   WORK         scratch directory (default: a new one under /tmp, removed)
#   DEMO_MARK    prefix of every output line ("@@DEMO " in the VM, where
#                the host keeps only marked lines of the console)
#   DEMO_FAKE_SECRETS=1  create a fake /etc/shadow and /root/.ssh/id_ed25519
#                (honoured in the test VM only, never on a real machine)
#   DEMO_AGENT_FLAGS  extra agent flags (unquoted); --allow-degraded is only
#                for trying this script on a kernel without BPF-LSM: moves
#                that would do harm unenforced are then skipped
# Exit status: 0 when every move ended as expected, 1 otherwise.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
STOCKADE=${STOCKADE:-$here/stockade}
TOOLS=${TOOLS:-$here/build/tools}
CGROUP_ROOT=${CGROUP_ROOT:-/sys/fs/cgroup}
TASK=${TASK:-/task}
MARK=${DEMO_MARK:-}
fprobe=$TOOLS/fileprobe
nprobe=$TOOLS/netprobe
policy=$here/policy/examples/model-code.yaml
cg=$CGROUP_ROOT/stockade-demo

say() { printf '%s%s\n' "$MARK" "$*"; }
die() { say "demo: $*"; exit 1; }

[ -x "$fprobe" ] && [ -x "$nprobe" ] || die "no fileprobe/netprobe in $TOOLS (make tools)"
[ -x "$STOCKADE" ] || die "no agent at $STOCKADE (make)"
[ -r "$policy" ] || die "no policy at $policy"
case $TASK in
/*) ;;
*) die "TASK must be an absolute path, not '$TASK'" ;;
esac

own_work=0
if [ -z "${WORK:-}" ]; then
	WORK=$(mktemp -d /tmp/stockade-demo-files.XXXXXX) || exit 1
	own_work=1
else
	mkdir -p "$WORK" || exit 1
fi
log=$WORK/events.jsonl
agent=
made_task=0
cron_dir=/etc/cron.d
cron_file=$cron_dir/stockade-demo
cron_existed=1
mnt=$TASK/out/mnt

cleanup() {
	trap - EXIT INT TERM HUP
	if [ -n "$agent" ]; then
		kill -TERM "$agent" 2>/dev/null
		wait "$agent" 2>/dev/null
	fi
	# Only if a move that should have been refused went through.
	grep -q " $mnt " /proc/mounts 2>/dev/null && umount "$mnt" 2>/dev/null
	[ "$cron_existed" = 1 ] || rm -f "$cron_file"
	if [ -d "$cg" ]; then
		while read -r p; do
			echo "$p" > "$CGROUP_ROOT/cgroup.procs"
		done < "$cg/cgroup.procs" 2>/dev/null
		rmdir "$cg" 2>/dev/null
	fi
	[ "$made_task" = 1 ] && rm -rf "$TASK"
	[ "$own_work" = 1 ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'say; say "demo: interrupted, cleaning up"; exit 130' INT TERM HUP

# ---- the sandbox's world ----

if [ "${DEMO_FAKE_SECRETS:-0}" = 1 ]; then
	[ "$(hostname)" = stockade-vm ] && [ -f /init ] ||
		die "DEMO_FAKE_SECRETS=1 outside the test VM: refusing to write /etc/shadow"
	mkdir -p /etc /root/.ssh "$cron_dir"
	[ -f /etc/passwd ] || echo 'root:x:0:0:root:/root:/bin/sh' > /etc/passwd
	echo 'root:$6$stockade$notarealhash:19000:0:99999:7:::' > /etc/shadow
	chmod 640 /etc/shadow
	echo 'PRIVATE KEY (fake, for the demo)' > /root/.ssh/id_ed25519
	chmod 600 /root/.ssh/id_ed25519
fi
# The persistence target: a cron job, or a binary where cron is absent.
[ -d "$cron_dir" ] || { cron_dir=/usr/bin; cron_file=/usr/bin/stockade-demo; }
[ -e "$cron_file" ] || cron_existed=0

if [ "$TASK" = /task ]; then
	pol=$policy
else
	# /task in the rules, not /tmp/task: only a /task right after '[' or
	# ' ' and before '/', ',' or ']'.
	pol=$WORK/model-code.yaml
	sed "s#\([[ ]\)/task\([],/]\)#\1$TASK\2#g" "$policy" > "$pol" || exit 1
	"$STOCKADE" check "$pol" > "$WORK/check.out" 2>&1 ||
		die "the policy rewritten for $TASK does not load: $(cat "$WORK/check.out")"
fi
# Its own directory, never someone's real /task.
[ -e "$TASK" ] && die "$TASK exists: the demo needs a directory of its own (set TASK=)"
made_task=1
mkdir -p "$TASK/in" "$TASK/out" "$mnt" || exit 1
printf 'the job input\n' > "$TASK/in/data.txt"

[ -d "$cg" ] && rmdir "$cg" 2>/dev/null
mkdir "$cg" || die "cannot create $cg"
: > "$log"
say "== sandbox cgroup $cg, policy $pol"
say "   files.read: $(sed -n 's/^  read: *//p' "$pol")   files.write: $(sed -n 's/^  write: *//p' "$pol")"

# ---- the agent ----

# shellcheck disable=SC2086
"$STOCKADE" agent --detach-on-exit --policy "$pol" --log "$log" ${DEMO_AGENT_FLAGS:-} \
	> /dev/null 2> "$WORK/agent.err" &
agent=$!
n=0
until grep -q '"event":"agent_ready"' "$log"; do
	n=$((n + 1))
	# Loading and verifying the programs is slow under emulation (TCG).
	if [ $n -gt 900 ] || ! kill -0 "$agent" 2>/dev/null; then
		say "demo: the agent did not start:"
		while IFS= read -r l; do say "   $l"; done < "$WORK/agent.err"
		exit 1
	fi
	sleep 0.1
done
say "$(grep '"event":"agent_ready"' "$log")"
degraded=1
grep -q '"event":"agent_ready".*"degraded":\[\]' "$log" && degraded=0
if [ $degraded = 1 ]; then
	say "== NOTE: the agent runs degraded (no BPF-LSM): nothing below is enforced,"
	say "   and the moves that would do harm unenforced are skipped"
else
	say "== BPF-LSM works here: the agent runs with every guarantee (degraded: [])"
fi

# ---- the workload ----

shown=$(wc -l < "$log")
bad=0
steps=0

# records WAIT: print the records logged since the last call; with WAIT=1
# (a move was refused) wait up to 3 s for the first of them.
records() {
	_n=0
	if [ "$1" = 1 ]; then
		while [ "$(wc -l < "$log")" -le "$shown" ] && [ $_n -lt 30 ]; do
			sleep 0.1
			_n=$((_n + 1))
		done
	fi
	sleep 0.2	# a second hook's record, an io-wq worker's
	_now=$(wc -l < "$log")
	tail -n +$((shown + 1)) "$log" | head -n $((_now - shown)) |
		grep -E '"event":"(deny|audit|lost)"' | while IFS= read -r _l; do
			say "$_l"
		done
	shown=$_now
}

# step WANT HARM WHAT CMD...: one move of the workload; HARM=1 if the
# move would do harm where nothing enforces the policy.
step() {
	_want=$1 _harm=$2 _what=$3
	shift 3
	steps=$((steps + 1))
	if [ $degraded = 1 ] && [ "$_harm" = 1 ]; then
		say "$(printf '   workload: %-56s -> skipped (not enforced here)' "$_what")"
		return
	fi
	_got=$("$@" 2>&1 | tail -n 1)
	_w=0
	[ "$_got" = OK ] || _w=1
	records $_w
	_note=
	if [ "$_got" = "$_want" ]; then
		:
	elif [ $degraded = 1 ]; then
		_note="   (not enforced here)"
	else
		_note="   (UNEXPECTED: want $_want)"
		bad=$((bad + 1))
	fi
	say "$(printf '   workload: %-56s -> %s%s' "$_what" "$_got" "$_note")"
}

in_sbx() { "$fprobe" --cgroup "$cg" "$@"; }

say "== live denials (JSON, one per line) and the untrusted workload inside $cg:"
step OK 0 "read its input $TASK/in/data.txt" in_sbx open-read "$TASK/in/data.txt"
step OK 0 "write its result $TASK/out/result" in_sbx open-creat "$TASK/out/result"
step EPERM 0 "read /etc/shadow (protected)" in_sbx open-read /etc/shadow
if [ -e /root/.ssh/id_ed25519 ]; then
	step EPERM 0 "read /root/.ssh/id_ed25519 (protected)" in_sbx open-read /root/.ssh/id_ed25519
else
	say "$(printf '   workload: %-56s -> skipped (no such file here)' "read /root/.ssh/id_ed25519 (protected)")"
fi
step EPERM 1 "create $cron_file (outside write scope)" in_sbx open-creat "$cron_file"
step EPERM 0 "read /proc/self/root/etc/shadow (another name)" in_sbx open-read /proc/self/root/etc/shadow
step OK 0 "symlink $TASK/out/link -> /etc/shadow (in scope)" in_sbx symlink /etc/shadow "$TASK/out/link"
step EPERM 0 "read $TASK/out/link (the symlink)" in_sbx open-read "$TASK/out/link"
step EPERM 0 "io_uring openat /etc/shadow (no syscall to hook)" in_sbx io-uring-openat /etc/shadow
step EPERM 0 "bpf(BPF_MAP_CREATE) (could blind the agent)" in_sbx bpf
step EPERM 1 "mount a tmpfs on $mnt" in_sbx mount "$mnt"
step EPERM 0 "unshare(CLONE_NEWUSER) (root in a user namespace)" in_sbx unshare-user
step EPERM 0 "move itself to the root cgroup (escape)" in_sbx cgroup-move "$CGROUP_ROOT"
step EPERM 1 "kill -9 pid 1" in_sbx kill 1 9
step EPERM 1 "kill -9 the agent (pid $agent)" in_sbx kill "$agent" 9
step EPERM 0 "socket(AF_PACKET) (sniff, forge frames)" "$nprobe" --netns --cgroup "$cg" socket packet
sleep 0.3
records 0

# ---- the summary ----

alive=1
kill -0 "$agent" 2>/dev/null || alive=0
if [ $alive = 1 ]; then
	kill -TERM "$agent"
	wait "$agent"
	rc=$?
else
	wait "$agent"
	rc="killed ($?)"
fi
agent=
say "== summary"
say "   denials logged: $(grep -c '"event":"deny"' "$log")"
grep '"event":"deny"' "$log" |
	sed -n 's/.*"kind":"\([a-z_]*\)".*"reason":"\([a-z_]*\)".*/\1 \2/p' |
	sort | uniq -c | sort -k1,1nr -k2,2 -k3,3 | while read -r cnt kind reason; do
		say "$(printf '     %-8s %-16s %s' "$kind" "$reason" "$cnt")"
	done
say "   lost records:   $(grep -c '"event":"lost"' "$log")"
if [ $alive = 1 ] && [ "$rc" = 0 ]; then
	say "   detached:       $(grep -c '"event":"detach"' "$log") cgroup(s); the agent exited cleanly"
else
	say "   the agent did not exit cleanly: $rc"
	bad=$((bad + 1))
fi
if [ $degraded = 1 ]; then
	say "   NOT enforced: the agent ran degraded (no BPF-LSM)"
elif [ $bad = 0 ]; then
	say "   all $steps moves ended as the policy says"
else
	say "   $bad of $steps moves did NOT end as the policy says"
fi
[ $bad = 0 ]
