#!/bin/sh
# make demo: confine a throwaway cgroup with the bundled example policy,
# run an "untrusted" workload in it that tries what confined code must not
# do, stream the live denials, and summarise. Cleans up, even on Ctrl-C.
# The workload runs in a private network namespace: nothing it tries can
# leave this machine, even if a block failed.
# Then the file rules and the sandbox's edges (BPF-LSM), the same way,
# with tools/demo-files.sh: on this host if its kernel runs BPF-LSM
# programs, else inside the test VM (tests/vm/run.sh demo, the same build
# as make vm-test).
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
STOCKADE=${STOCKADE:-$here/stockade}
probe=${TOOLS:-$here/build/tools}/netprobe
policy=$here/policy/examples/model-code.yaml

fs_at() { awk -v d="$1" '$2 == d { t = $3 } END { print t }' /proc/mounts; }
for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	[ "$(fs_at "$d")" = cgroup2 ] && root=$d && break
done
[ -n "${root:-}" ] || { echo "demo: no cgroup2 mount found" >&2; exit 1; }
if [ "$(fs_at /sys/fs/bpf)" != bpf ]; then
	mount -t bpf bpf /sys/fs/bpf || exit 1
fi

cg=$root/stockade-demo
work=$(mktemp -d /tmp/stockade-demo.XXXXXX)
log=$work/events.jsonl
agent=
tailer=
part2=

cleanup() {
	trap - EXIT INT TERM HUP
	# Its own trap stops the agent, or qemu, and cleans up.
	[ -n "$part2" ] && kill -TERM "$part2" 2>/dev/null && wait "$part2"
	[ -n "$tailer" ] && kill "$tailer" 2>/dev/null
	[ -n "${workload:-}" ] && kill "$workload" 2>/dev/null
	[ -n "$agent" ] && kill -TERM "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	if [ -d "$cg" ]; then
		while read -r p; do echo "$p" > "$root/cgroup.procs"; done < "$cg/cgroup.procs" 2>/dev/null
		rmdir "$cg" 2>/dev/null
	fi
	rm -rf "$work"
}
# The agent on the demo policy, until its agent_ready record (15 s).
start_agent() {
	"$STOCKADE" agent --allow-degraded --detach-on-exit --policy "$policy" --log "$log" \
		> /dev/null 2> "$work/agent.err" &
	agent=$!
	n=0
	until grep -q '"event":"agent_ready"' "$log"; do
		n=$((n + 1))
		if [ $n -gt 150 ] || ! kill -0 "$agent" 2>/dev/null; then
			echo "demo: the agent did not start:"; sed 's/^/   /' "$work/agent.err"; exit 1
		fi
		sleep 0.1
	done
}

trap cleanup EXIT
trap 'echo; echo "demo: interrupted, cleaning up"; exit 130' INT TERM HUP

[ -d "$cg" ] && rmdir "$cg" 2>/dev/null
mkdir "$cg" || exit 1
touch "$log"
echo "== stockade demo: sandbox cgroup $cg, policy $policy"

# The example sets resource limits. A cgroup2 mount whose root offers no
# cpu/memory/pids controller (a hybrid cgroup-v1 host) cannot take them, and
# the agent rightly refuses such a policy; show the rest of it, and say so.
need_ctl=$(awk '/^limits:/ { l = 1; next } l && /^[^ #]/ { l = 0 }
	l && /^ +cpu:/ { print "cpu" } l && /^ +memory:/ { print "memory" }
	l && /^ +pids:/ { print "pids" }' "$policy" | sort -u)
missing=
for c in $need_ctl; do
	grep -qw "$c" "$root/cgroup.controllers" 2>/dev/null || missing="$missing $c"
done
if [ -n "$missing" ]; then
	echo "== NOTE: this host's cgroup2 ($root) has no controller for:$missing"
	echo "   (a hybrid cgroup-v1 host), so the example's limits cannot be enforced"
	echo "   here; the agent would refuse the policy. Running it without its"
	echo "   limits section; make vm-test shows the limits enforced in the VM."
	awk '/^limits:/ { l = 1; next } l && /^[^ #]/ { l = 0 } !l' "$policy" \
		> "$work/policy.yaml"
	policy=$work/policy.yaml
	"$STOCKADE" check "$policy" > /dev/null || exit 1
fi

start_agent
grep '"event":"agent_ready"' "$log"
degraded=1
grep -q '"degraded":\[\]' "$log" && degraded=0
if [ $degraded = 1 ]; then
	echo "== NOTE: this kernel refuses BPF-LSM programs, so the agent runs degraded:"
	sed -n 's/stockade: agent: warning: //p' "$work/agent.err" | sed 's/^/   /'
	echo "   (AF_PACKET and the file rules are shown inside the test VM, after this part)"
fi

echo "== live denials (JSON, one per line):"
tail -n 0 -f "$log" | grep --line-buffered -E '"event":"(deny|audit|lost)"' &
tailer=$!

step() {
	desc=$1
	shift
	got=$("$probe" --netns --cgroup "$cg" "$@" 2>&1 | tail -n 1)
	sleep 0.2	# let the record (if any) print first
	printf '   workload: %-52s -> %s\n' "$desc" "$got" >&2
}
echo "== untrusted workload inside $cg:" >&2
step "connect 127.0.0.1:8080 (allowed service)" connect tcp 127.0.0.1 8080 --listen
step "connect 127.0.0.1:22 (not in the allow list)" connect tcp 127.0.0.1 22 --listen
step "connect 169.254.169.254:80 (cloud metadata)" connect tcp 169.254.169.254 80
step "connect [::ffff:169.254.169.254]:80 (mapped form)" connect tcp ::ffff:169.254.169.254 80
step "connect [fd00:ec2::254]:80 (AWS IPv6 metadata)" connect tcp fd00:ec2::254 80
step "sendto 127.0.0.53:53 over UDP (exfiltration by DNS)" sendto udp 127.0.0.53 53
step "socket(AF_INET, SOCK_RAW) (bypasses connect hooks)" socket raw4
step "socket(AF_INET, SOCK_DGRAM, ICMP) (ping sweep)" socket icmp
step "socket(AF_PACKET) (needs BPF-LSM)" socket packet
sleep 0.5
kill "$tailer" 2>/dev/null
tailer=

kill -TERM "$agent"
wait "$agent"
agent=
echo "== summary"
printf '   denials logged: %s\n' "$(grep -c '"event":"deny"' "$log")"
for r in not_allowed metadata_endpoint raw_socket icmp packet_socket; do
	printf '     %-18s %s\n' "$r" "$(grep '"event":"deny"' "$log" | grep -c "\"reason\":\"$r\"")"
done
printf '   lost records:   %s\n' "$(grep -c '"event":"lost"' "$log")"
printf '   detached:       %s cgroup(s); the agent exited cleanly\n' "$(grep -c '"event":"detach"' "$log")"
if [ $degraded = 1 ]; then
	echo "   NOT enforced on this kernel (no BPF-LSM): AF_PACKET sockets; the VM below shows them denied"
fi

# ---- the file rules and the sandbox's edges (BPF-LSM) ----
# In the background, so that a signal reaches cleanup() at once.
echo
if [ $degraded = 1 ]; then
	echo "== this kernel refuses BPF-LSM; showing file confinement inside the test VM (Debian 6.1 cloud kernel under qemu)"
	echo "   building the VM (static binaries, initramfs; the first run downloads Debian's cloud kernel) ..."
	make -s --no-print-directory -C "$here" vm-initramfs > "$work/vm-build.log" 2>&1 &
	part2=$!
	wait "$part2" || {
		part2=
		echo "demo: cannot build the test VM:"
		tail -n 20 "$work/vm-build.log" | sed 's/^/   /'
		exit 1
	}
	(cd "$here" && VM_DIR=build/vm exec sh tests/vm/run.sh demo) &
else
	echo "== BPF-LSM works on this kernel: the file rules, on this host (no VM needed)"
	STOCKADE=$STOCKADE TOOLS=${TOOLS:-$here/build/tools} CGROUP_ROOT=$root \
		TASK=$work/task WORK=$work/files sh "$here/tools/demo-files.sh" &
fi
part2=$!
wait "$part2"
rc=$?
part2=

# ---- the evidence bundle (README, "Evidence for assessors") ----
echo
echo "== evidence: stockade report on the demo sandbox (manifest, probe, register check)"
out=$here/build/demo-report
rm -rf "$out"
: > "$log"
start_agent
# A workload: a sleep in a private network namespace, in the sandbox.
unshare -n sh -c "echo \$\$ > '$cg/cgroup.procs'; exec sleep 300" &
workload=$!
sleep 0.3
cat > "$work/register.yaml" <<EOF
entries:
  - category: model-generated-code
    description: "the demo's model-generated code"
    conditions:
      policies: [model-code]
    environment: /stockade-demo
    approver: "the demo"
    approved: 2026-01-01
EOF
printf 'name: stockade demo sandbox\narchitecture_record: "the README, Evidence for assessors"\n' \
	> "$work/boundary.yaml"
"$STOCKADE" report --probe /stockade-demo --register "$work/register.yaml" --log "$log" \
	--boundary "$work/boundary.yaml" --out "$out" | sed 's/^/   /'
kill "$workload" 2>/dev/null
wait "$workload" 2>/dev/null
workload=
kill -TERM "$agent"
wait "$agent"
agent=
echo "   the bundle: $out (report.md for people, report.json, oscal-assessment-results.json;"
echo "   stockade report --verify $out checks it)"
exit $rc
