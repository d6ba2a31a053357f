#!/bin/sh
# Confining many cgroups at once (issue 12), live on this host (root):
#   1. 1,000 existing cgroups under /stockade-burst/c-*: the agent confines
#      every one at start (1,000 attach records, agent_ready, no error);
#   2. a denial storm from one of them (20,000 refused datagrams): the
#      kernel's BPF allocator caches are drained, as `make bench`'s events
#      section drained them before the scale section once failed;
#   3. right after, 1,000 more created in a burst while the agent runs:
#      every one confined (an attach record each, with pending_ms), none
#      failed, the agent still running; a transient ENOMEM is retried and
#      said in a map_retry record, never a refusal to confine.
# Probes run in a private network namespace (netprobe --netns).
#
# Env: STOCKADE, TOOLS, CGROUP_ROOT (detected), STOCKADE_AGENT_FLAGS
# (default --allow-degraded), BURST_N (1000; the VM uses fewer).
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
N=${BURST_N:-1000}
STORM=${BURST_STORM:-20000}
need_cgroup2 burst
need_bpffs burst

work=$(mktemp -d /tmp/stockade-burst.XXXXXX)
bpffs=/sys/fs/bpf/stockade-burst-$$
log=$work/agent.log
top=$CGROUP_ROOT/stockade-burst
agent_pid=

cleanup() {
	agent_end
	rmcg "$top"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# attaches: attach records of cgroups under $top so far.
attaches() { grep '"event":"attach"' "$log" 2>/dev/null | grep -c '"cgroup":"/stockade-burst/c-'; }

# wait_count WANT SECONDS: until attaches() reaches WANT.
wait_count() {
	k=0
	while [ "$(attaches)" -lt "$1" ]; do
		k=$((k + 1))
		[ "$k" -gt $(($2 * 10)) ] && return 1
		sleep 0.1
	done
	return 0
}

mkdir -p "$work/pol" "$top"
cat > "$work/pol/burst.yaml" <<'YAML'
name: burst
cgroups: [/stockade-burst/c-*]
network:
  default: deny
YAML
i=1
while [ "$i" -le "$N" ]; do
	mkdir "$top/c-$i"
	i=$((i + 1))
done

# 1. Confine N existing cgroups at start.
# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/pol" --bpffs "$bpffs" \
	--cgroup-root "$CGROUP_ROOT" --detach-on-exit --log "$log" \
	> /dev/null 2> "$work/agent.err" &
agent_pid=$!
k=0
while ! grep -q '"event":"agent_ready"' "$log" 2>/dev/null; do
	k=$((k + 1))
	if [ "$k" -gt 1200 ] || ! kill -0 "$agent_pid" 2>/dev/null; then
		not_ok "confine $N existing" "no agent_ready: $(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
		echo "$passed passed, $failed failed"
		exit 1
	fi
	sleep 0.1
done
if [ "$(attaches)" = "$N" ]; then
	ok "confine $N existing cgroups at start: $N attach records, agent_ready"
else
	not_ok "confine $N existing" "$(attaches) attach records of $N"
fi

# 2. A denial storm from one of them.
out=$("$TOOLS/netprobe" --netns --cgroup "$top/c-1" sendto udp 127.0.0.2 5353 \
	--count "$STORM" 2>&1)
denied=$(echo "$out" | sed -n 's/^failed=\([0-9]*\) .*/\1/p')
if [ "${denied:-0}" = "$STORM" ]; then
	ok "storm: $STORM datagrams refused"
else
	not_ok "storm" "want $STORM refused: $out"
fi

# 3. N more, created in a burst right after.
i=$((N + 1))
while [ "$i" -le $((2 * N)) ]; do
	mkdir "$top/c-$i"
	i=$((i + 1))
done
if wait_count $((2 * N)) 120; then
	ok "burst of $N new cgroups after the storm: every one confined"
else
	not_ok "burst" "$(($(attaches) - N)) of $N new cgroups confined after 120 s"
fi
if kill -0 "$agent_pid" 2>/dev/null; then
	ok "the agent is still running"
else
	not_ok "agent alive" "it exited: $(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
fi
if grep -q ': error: ' "$work/agent.err"; then
	not_ok "no failure" "$(grep ': error: ' "$work/agent.err" | head -n 3 | tr '\n' ' ')"
else
	ok "no confinement failed"
fi
np=$(grep '"event":"attach"' "$log" | grep '"cgroup":"/stockade-burst/c-' |
	grep -c '"pending_ms"')
if [ "$np" -ge "$N" ]; then
	ok "the burst's attach records carry pending_ms ($np)"
else
	not_ok "pending_ms" "$np of $N new cgroups' attach records carry pending_ms"
fi
grep '"event":"attach"' "$log" | sed -n 's/.*"pending_us":\([0-9]*\).*/\1/p' |
	awk '{ printf "%.2f\n", $1 / 1000 }' | sort -n > "$work/pending.ms"
c=$(wc -l < "$work/pending.ms")
if [ "$c" -gt 0 ]; then
	echo "# burst: pending_ms median $(sed -n "$(( (c + 1) / 2 ))p" "$work/pending.ms") ms, p99 $(sed -n "$(( (c * 99 + 99) / 100 ))p" "$work/pending.ms") ms over $c"
fi
r=$(sed -n '/"event":"map_retry"/s/.*"retries_total":\([0-9]*\).*/\1/p' "$log" | tail -n 1)
echo "# burst: ${r:-0} map inserts retried after a transient ENOMEM (map_retry)"

summary
