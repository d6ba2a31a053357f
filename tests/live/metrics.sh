#!/bin/sh
# The /metrics endpoint (--metrics-listen), live on this host (root):
#   1. bad input fails the start, naming the problem: no port, a port out
#      of range, a name instead of an address, a non-loopback address
#      without --metrics-allow-remote, a port in use (checked after 2,
#      with the first agent's port);
#   2. an agent with --metrics-listen 127.0.0.1:<free port> and --metrics
#      FILE; denied connect()s and sendto()s from a confined cgroup, and an
#      allowed connect();
#   3. GET /metrics: 200, the exposition content type, and every line valid
#      Prometheus text (tools/promcheck.py: HELP/TYPE, names, labels and
#      their escaping, values, _total on counters only); the families of
#      README "Metrics" present with their types;
#   4. stockade_decisions_total{action="deny",kind=...,policy=...} equals
#      the deny records of that kind in the log, the allow count the
#      allowed calls; no record lost, and the events counters agree;
#   5. 404 for another path, 405 (Allow: GET) for another method;
#   6. the --metrics file and the endpoint serve the same text;
#   7. an idle client holds no one up: with connections open and silent,
#      a scrape still answers and a denial is still logged at once; the
#      server closes the idle ones after its timeout;
#   8. the same endpoint on [::1].
# Probes run in a private network namespace (netprobe --netns).
#
# Env: STOCKADE, TOOLS, CGROUP_ROOT (detected), STOCKADE_AGENT_FLAGS
# (default --allow-degraded).
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
probe=$TOOLS/netprobe
check=$here/../../tools/promcheck.py
py=/usr/bin/python3
need_cgroup2 metrics
need_bpffs metrics

work=$(mktemp -d /tmp/stockade-metrics.XXXXXX)
bpffs=/sys/fs/bpf/stockade-metrics-$$
log=$work/agent.log
prom=$work/metrics.prom
cg=$CGROUP_ROOT/stockade-metrics
agent_pid=
idle_pid=

cleanup() {
	[ -n "$idle_pid" ] && kill "$idle_pid" 2>/dev/null
	agent_end
	cg_empty "$cg"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for t in curl "$py"; do
	command -v "$t" > /dev/null || { echo "metrics: $t missing; run make deps" >&2; exit 1; }
done

mkdir -p "$work/pol" "$cg"
cat > "$work/pol/m.yaml" <<'YAML'
name: live-metrics
cgroups: [/stockade-metrics]
network:
  default: deny
  allow:
    - cidr: 127.0.0.1/32
      ports: [8080]
      proto: tcp
YAML

# A port nothing listens on now (the kernel's pick, then released).
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port

# ---- 1. bad input ----
# bad NAME EXPECT ARGS...: the agent exits 1 at once, stderr naming EXPECT.
bad() {
	name=$1 want=$2
	shift 2
	# shellcheck disable=SC2086
	"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/pol" \
		--bpffs "$bpffs-bad" --cgroup-root "$CGROUP_ROOT" "$@" \
		> /dev/null 2> "$work/bad.err"
	rc=$?
	if [ "$rc" = 1 ] && grep -q -- "$want" "$work/bad.err" && [ ! -e "$bpffs-bad" ]; then
		ok "refused: $name"
	else
		not_ok "refused: $name" "exit $rc, stderr: $(head -c 300 "$work/bad.err")"
	fi
}
bad "no port" "no port: expected ADDR:PORT" --metrics-listen 127.0.0.1
bad "port 99999" "port '99999' is not a number from 1 to 65535" --metrics-listen 127.0.0.1:99999
bad "a name" "'localhost' is not a numeric IPv4 address" --metrics-listen "localhost:$port"
bad "IPv6 without brackets" "not a numeric IPv4 address" --metrics-listen "::1:$port"
bad "0.0.0.0 without --metrics-allow-remote" "not a loopback address" --metrics-listen "0.0.0.0:$port"

# ---- 2. the agent, and decisions ----
# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/pol" --bpffs "$bpffs" \
	--cgroup-root "$CGROUP_ROOT" --detach-on-exit --log "$log" \
	--metrics "$prom" --metrics-listen "127.0.0.1:$port" \
	> /dev/null 2> "$work/agent.err" &
agent_pid=$!
if ! wait_ready "$log"; then
	not_ok "agent ready" "$(tail -n 5 "$work/agent.err" | tr '\n' ' ')"
	summary
	exit 1
fi
ok "agent ready with --metrics-listen 127.0.0.1:$port"
grep -q "serving GET /metrics on 127.0.0.1:$port" "$work/agent.err" &&
	ok "start-up says where it serves" ||
	not_ok "start-up says where it serves" "$(cat "$work/agent.err")"

bad "port in use" "bind failed: Address already in use" --metrics-listen "127.0.0.1:$port"

N_CONNECT=5
N_SENDTO=3
i=0
while [ $i -lt $N_CONNECT ]; do
	"$probe" --netns --cgroup "$cg" connect tcp 127.0.0.1 9999 --listen > /dev/null 2>&1
	i=$((i + 1))
done
"$probe" --netns --cgroup "$cg" sendto udp 127.0.0.1 5353 --count $N_SENDTO > /dev/null 2>&1
out=$("$probe" --netns --cgroup "$cg" connect tcp 127.0.0.1 8080 --listen 2>&1 | tail -n 1)
[ "$out" = OK ] && ok "allowed connect: OK" || not_ok "allowed connect" "got $out"

# denies KIND: deny records of KIND for the policy in the log.
denies() {
	grep '"event":"deny"' "$log" | grep '"policy":"live-metrics"' |
		grep -c "\"kind\":\"$1\""
}
# sample TEXT NAME LABELS: the value of NAME{LABELS} in TEXT (a file).
sample() { awk -v k="$2{$3}" '$1 == k { print $2 }' "$1"; }
scrape() { curl -sS --max-time 5 -o "$1" -D "$1.hdr" -w '%{http_code}' "$url/metrics"; }
dec() { sample "$work/scrape" stockade_decisions_total "action=\"$1\",kind=\"$2\",policy=\"live-metrics\""; }

# The counters refresh once a second: wait until both sides are in.
n=0
while :; do
	code=$(scrape "$work/scrape")
	if [ "$code" = 200 ] && [ "$(denies connect)" = $N_CONNECT ] &&
	   [ "$(denies sendmsg)" = $N_SENDTO ] &&
	   [ "$(dec deny connect)" = $N_CONNECT ] && [ "$(dec deny sendmsg)" = $N_SENDTO ]; then
		break
	fi
	n=$((n + 1))
	[ $n -gt 50 ] && break
	sleep 0.2
done

# ---- 3. the text ----
[ "$code" = 200 ] && ok "GET /metrics: 200" || not_ok "GET /metrics" "HTTP $code"
grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$work/scrape.hdr" &&
	ok "content type text/plain; version=0.0.4" ||
	not_ok "content type" "$(grep -i content-type "$work/scrape.hdr")"
if res=$("$py" "$check" "$work/scrape" 2>&1); then
	ok "promcheck (HTTP): $res"
else
	not_ok "promcheck (HTTP)" "$(echo "$res" | head -n 5 | tr '\n' ' ')"
fi
if res=$("$py" "$check" "$prom" 2>&1); then
	ok "promcheck (--metrics file): $res"
else
	not_ok "promcheck (--metrics file)" "$(echo "$res" | head -n 5 | tr '\n' ' ')"
fi
missing=
for ft in stockade_sandboxes:gauge stockade_containers:gauge stockade_decisions_total:counter \
	  stockade_limit_breaches_total:counter stockade_events_produced_total:counter \
	  stockade_events_logged_total:counter stockade_events_lost_total:counter \
	  stockade_agent_resident_memory_bytes:gauge stockade_agent_cpu_seconds_total:counter \
	  stockade_connect_denied_total:counter stockade_egress_packets_total:counter; do
	grep -q "^# TYPE ${ft%%:*} ${ft#*:}\$" "$work/scrape" || missing="$missing $ft"
done
[ -z "$missing" ] && ok "every family of README Metrics, with its type" ||
	not_ok "families" "missing:$missing"
[ "$(awk '$1 == "stockade_sandboxes" { print $2 }' "$work/scrape")" = 1 ] &&
	ok "stockade_sandboxes 1" ||
	not_ok "stockade_sandboxes" "$(grep '^stockade_sandboxes' "$work/scrape")"
rss=$(awk '$1 == "stockade_agent_resident_memory_bytes" { print $2 }' "$work/scrape")
cpu=$(awk '$1 == "stockade_agent_cpu_seconds_total" { print $2 }' "$work/scrape")
agent_rss=$(awk '{ print $2 * 4096 }' "/proc/$agent_pid/statm")
if [ "${rss:-0}" -gt 1000000 ] 2>/dev/null && awk -v c="${cpu:-x}" 'BEGIN { exit !(c + 0 > 0) }'; then
	ok "agent RSS $rss bytes (statm now: $agent_rss), CPU $cpu s"
else
	not_ok "agent RSS and CPU" "rss=$rss cpu=$cpu"
fi
# One breach family sample per policy and limit, none breached.
[ "$(grep -c '^stockade_limit_breaches_total{policy="live-metrics",limit="[a-z]*"} 0$' "$work/scrape")" = 4 ] &&
	ok "stockade_limit_breaches_total: 4 limits at 0" ||
	not_ok "limit breaches" "$(grep '^stockade_limit_breaches_total' "$work/scrape")"

# ---- 4. counters against the log ----
c=$(dec deny connect) s=$(dec deny sendmsg) a=$(dec allow connect)
[ "$c" = "$(denies connect)" ] && [ "$c" = $N_CONNECT ] &&
	ok "decisions deny/connect = $c = deny connect records" ||
	not_ok "decisions deny/connect" "metric $c, records $(denies connect), made $N_CONNECT"
[ "$s" = "$(denies sendmsg)" ] && [ "$s" = $N_SENDTO ] &&
	ok "decisions deny/sendmsg = $s = deny sendmsg records" ||
	not_ok "decisions deny/sendmsg" "metric $s, records $(denies sendmsg), made $N_SENDTO"
# The one allowed connect() (--listen binds its listener outside the
# sandbox's rules: no decision).
[ "$a" = 1 ] && ok "decisions allow/connect = 1" ||
	not_ok "decisions allow/connect" "metric '$a'"
all=$(grep '^stockade_decisions_total{action="deny"' "$work/scrape" |
	awk '{ s += $2 } END { print s + 0 }')
recs=$(grep -c '"event":"deny"' "$log")
[ "$all" = "$recs" ] && ok "all deny decisions ($all) = all deny records" ||
	not_ok "all deny decisions" "metrics $all, records $recs"
lost=$(awk '$1 == "stockade_events_lost_total" { print $2 }' "$work/scrape")
produced=$(awk '$1 == "stockade_events_produced_total" { print $2 }' "$work/scrape")
logged=$(awk '$1 == "stockade_events_logged_total" { print $2 }' "$work/scrape")
if [ "$lost" = 0 ] && [ "$(lost_sum "$log")" = 0 ] &&
   [ "$logged" -ge "$recs" ] && [ "$produced" -ge "$recs" ] &&
   [ "$logged" -le "$(grep -c . "$log")" ]; then
	ok "events: produced $produced, logged $logged (log lines $(grep -c . "$log")), lost 0"
else
	not_ok "events counters" "produced=$produced logged=$logged lost=$lost deny records=$recs log lines=$(grep -c . "$log")"
fi

# ---- 5. other paths and methods ----
code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "$url/")
[ "$code" = 404 ] && ok "GET /: 404" || not_ok "GET /" "HTTP $code"
code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "$url/metrics/x")
[ "$code" = 404 ] && ok "GET /metrics/x: 404" || not_ok "GET /metrics/x" "HTTP $code"
code=$(curl -sS --max-time 5 -o /dev/null -D "$work/post.hdr" -w '%{http_code}' -X POST -d x=1 "$url/metrics")
if [ "$code" = 405 ] && grep -qi '^allow: GET' "$work/post.hdr"; then
	ok "POST /metrics: 405, Allow: GET"
else
	not_ok "POST /metrics" "HTTP $code, $(tr '\r\n' '  ' < "$work/post.hdr")"
fi
code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' -X DELETE "$url/metrics")
[ "$code" = 405 ] && ok "DELETE /metrics: 405" || not_ok "DELETE /metrics" "HTTP $code"

# ---- 6. file and endpoint agree ----
# A refresh may fall between two reads: the file the same before and
# after the scrape means the scrape saw that same second's text.
same=no
n=0
while [ $n -lt 10 ]; do
	cp "$prom" "$work/f1"
	scrape "$work/h" > /dev/null
	cp "$prom" "$work/f2"
	if cmp -s "$work/f1" "$work/f2"; then
		cmp -s "$work/f1" "$work/h" && same=yes || same=differ
		break
	fi
	n=$((n + 1))
done
case $same in
yes) ok "the --metrics file and GET /metrics: the same text" ;;
differ) not_ok "file and endpoint" "$(diff "$work/f1" "$work/h" | head -n 6 | tr '\n' ' ')" ;;
*) not_ok "file and endpoint" "the file changed during every one of 10 scrapes" ;;
esac

# ---- 7. idle clients ----
# Four connections that send nothing, and one that sends half a request;
# each reports how long the server took to close it.
"$py" - "$port" > "$work/idle.out" 2>&1 <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
socks = []
for i in range(5):
    s = socket.create_connection(("127.0.0.1", port))
    if i == 4:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    socks.append(s)
t0 = time.monotonic()
print("open", flush=True)
for s in socks:
    s.settimeout(max(0.1, 20 - (time.monotonic() - t0)))
    try:
        closed = s.recv(1) == b""
    except OSError:
        closed = False
    print("closed" if closed else "still-open", "%.1f" % (time.monotonic() - t0), flush=True)
PY
idle_pid=$!
wait_for '^open' "$work/idle.out" 50
t0=$(date +%s%N)
code=$(scrape "$work/busy")
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
[ "$code" = 200 ] && [ $ms -lt 1000 ] &&
	ok "a scrape beside 5 idle connections: 200 in $ms ms" ||
	not_ok "a scrape beside idle connections" "HTTP $code in $ms ms"
before=$(denies connect)
"$probe" --netns --cgroup "$cg" connect tcp 127.0.0.1 9998 --listen > /dev/null 2>&1
if wait_for '"dport":9998' "$log" 20; then
	ok "a denial is logged while the idle connections hang"
else
	not_ok "denial during idle connections" "no record for port 9998 within 2 s ($before before)"
fi
wait "$idle_pid"
idle_pid=
closed=$(grep -c '^closed' "$work/idle.out")
late=$(awk '$1 == "closed" && $2 + 0 > 12 { n++ } END { print n + 0 }' "$work/idle.out")
if [ "$closed" = 5 ] && [ "$late" = 0 ]; then
	ok "the server closed all 5 idle connections ($(awk '$1 == "closed" { print $2 "s" }' "$work/idle.out" | tr '\n' ' '))"
else
	not_ok "idle connections closed" "$(tr '\n' ' ' < "$work/idle.out")"
fi

kill -0 "$agent_pid" 2>/dev/null && ok "the agent still runs" ||
	not_ok "the agent still runs" "$(tail -n 3 "$work/agent.err")"
agent_end
agent_pid=
[ ! -e "$prom" ] && ok "the --metrics file is removed at exit" ||
	not_ok "metrics file at exit" "$prom still there"
code=$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$url/metrics")
[ "$code" = 000 ] && ok "nothing listens on $port after exit" ||
	not_ok "listener after exit" "HTTP $code"

# ---- 8. IPv6: [::1]:PORT ----
if ! grep -q ' lo$' /proc/net/if_inet6 2>/dev/null; then
	skip "IPv6 [::1]" "no IPv6 on lo here"
else
	port6=$("$py" -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0)); print(s.getsockname()[1])')
	: > "$log"
	# shellcheck disable=SC2086
	"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/pol" --bpffs "$bpffs" \
		--cgroup-root "$CGROUP_ROOT" --detach-on-exit --log "$log" \
		--metrics-listen "[::1]:$port6" > /dev/null 2> "$work/agent.err" &
	agent_pid=$!
	if wait_ready "$log"; then
		code=$(curl -sS -g --max-time 5 -o "$work/scrape6" -w '%{http_code}' "http://[::1]:$port6/metrics")
		if [ "$code" = 200 ] && res=$("$py" "$check" "$work/scrape6" 2>&1); then
			ok "GET http://[::1]:$port6/metrics: 200, $res"
		else
			not_ok "IPv6 [::1]" "HTTP $code: $(head -c 200 "$work/scrape6")"
		fi
	else
		not_ok "IPv6 [::1]" "no agent_ready: $(tail -n 3 "$work/agent.err" | tr '\n' ' ')"
	fi
	agent_end
	agent_pid=
fi

summary
