#!/bin/sh
# Fds held from before confinement (issue 14), live on this host (root).
# Without BPF-LSM only sockets are judged (agent/preexist.c), so every
# holder keeps a TCP connection to 127.0.0.1:7721, which the policies deny,
# open in a private network namespace (the whole script runs in one):
#   start     a holder inside a selected cgroup before the agent starts:
#             one preexisting_fd record once it runs;
#   moved     a holder outside, moved in by this shell: one record; one
#             holding only a connection the policy allows: none; one
#             holding a UDP-Lite socket connected to the denied port:
#             one record (proto udp, as UDP-Lite is recorded);
#   cloned    clone3(CLONE_INTO_CGROUP) of a child holding the socket,
#             from a parent outside: one record, for the child;
#   forked    a holder that moves itself in: one record; the child it
#             forks then, holding the same fd: no join, no record;
#   reload    a holder in a cgroup no policy selects, then a policy file
#             that selects it: one record after the reload;
#   kill      files.preexisting: kill: the holder moved in ends, with a
#             record whose action is kill and a limit record;
#   once      after all that, no pid has two records of the same fd.
#
# Env: STOCKADE, TOOLS, CGROUP_ROOT (detected), STOCKADE_AGENT_FLAGS.
set -u

here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${PREEXIST_NETNS:-}" ]; then
	PREEXIST_NETNS=1 exec unshare -n sh "$here/preexist.sh" "$@"
fi
. "$here/lib.sh"
need_cgroup2 preexist
need_bpffs preexist
ip link set lo up

work=$(mktemp -d /tmp/stockade-preexist.XXXXXX)
bpffs=/sys/fs/bpf/stockade-preexist-$$
log=$work/agent.log
top=$CGROUP_ROOT/stockade-preexist
agent_pid=
helpers=
DENIED=tcp:127.0.0.1:7721
ALLOWED=tcp:127.0.0.1:7722

cleanup() {
	agent_end
	# shellcheck disable=SC2086
	[ -z "$helpers" ] || kill -9 $helpers 2>/dev/null
	wait 2>/dev/null
	rmcg "$top"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# helper NAME ARGS...: a fileprobe helper in the background; its pid in
# $hp (for clone-hold: the child's) once it printed ready.
helper() {
	_name=$1
	shift
	"$TOOLS/fileprobe" "$@" > "$work/$_name.out" 2>&1 &
	helpers="$helpers $!"
	hp=$!
	if ! wait_for '^ready$' "$work/$_name.out" 100; then
		not_ok "$_name/helper" "fileprobe $*: $(tr '\n' ' ' < "$work/$_name.out")"
		return 1
	fi
	_c=$(sed -n 's/^child=\([0-9]*\)$/\1/p' "$work/$_name.out")
	[ -z "$_c" ] || { hp=$_c; helpers="$helpers $_c"; }
	return 0
}

# alive PID: running (a killed child of ours stays a zombie until reaped).
alive() {
	_s=$(sed -n 's/^[0-9]* (.*) \([A-Z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$_s" ] && [ "$_s" != Z ]
}

# recs PID: the preexisting_fd records of PID.
recs() { grep '"event":"preexisting_fd"' "$log" | grep "\"pid\":$1,"; }
nrecs() { recs "$1" | grep -c .; }
# until_recs PID N: until PID has N records (5 s).
until_recs() {
	_k=0
	while [ "$(nrecs "$1")" -lt "$2" ] && [ $_k -lt 50 ]; do
		sleep 0.1
		_k=$((_k + 1))
	done
}

# one NAME PID POLICY ACTION [PROTO]: exactly one record for PID, of the
# denied connection (PROTO: tcp), with every field.
one() {
	until_recs "$2" 1
	sleep 0.5	# a second walk would have written by now
	_r=$(recs "$2")
	case $_r in
	*"\"policy\":\"$3\",\"cgroup\":"*"\"pid\":$2,"*'"fd":'[0-9]*'"family":"ipv4","daddr":"127.0.0.1","dport":7721,"proto":"'"${5:-tcp}"'","access":"read_write","reason":"not_allowed","action":"'"$4"'"'*)
		if [ "$(nrecs "$2")" = 1 ]; then
			ok "$1"
		else
			not_ok "$1" "$(nrecs "$2") records for pid $2, want 1: $_r"
		fi ;;
	*) not_ok "$1" "want one preexisting_fd record of 127.0.0.1:7721 for pid $2, got: ${_r:-none}" ;;
	esac
}

none() {
	sleep 1
	if [ "$(nrecs "$2")" = 0 ]; then
		ok "$1"
	else
		not_ok "$1" "want no preexisting_fd record for pid $2: $(recs "$2")"
	fi
}

mkdir -p "$work/pol" "$top/rep" "$top/kill" "$top/late"
cat > "$work/pol/rep.yaml" <<'YAML'
name: pre-rep
cgroups: [/stockade-preexist/rep]
network:
  default: deny
  allow:
    - cidr: 127.0.0.1
      ports: [7722]
      proto: tcp
YAML
cat > "$work/pol/kill.yaml" <<'YAML'
name: pre-kill
cgroups: [/stockade-preexist/kill]
network:
  default: deny
files:
  preexisting: kill
YAML

helper listen-denied hold listen:127.0.0.1:7721 || exit 1
helper listen-allowed hold listen:127.0.0.1:7722 || exit 1
# start: inside before the agent runs.
helper start --cgroup "$top/rep" hold "$DENIED" || exit 1
start_pid=$hp
# reload: inside a cgroup nothing selects yet.
helper late --cgroup "$top/late" hold "$DENIED" || exit 1
late_pid=$hp

# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/pol" --bpffs "$bpffs" \
	--cgroup-root "$CGROUP_ROOT" --detach-on-exit --log "$log" \
	> /dev/null 2> "$work/agent.err" &
agent_pid=$!
if ! wait_ready "$log"; then
	not_ok agent "no agent_ready: $(tail -n 5 "$work/agent.err" | tr '\n' ' ')"
	summary
	exit 1
fi

one start "$start_pid" pre-rep report

helper moved hold "$DENIED" || exit 1
moved_pid=$hp
echo "$moved_pid" > "$top/rep/cgroup.procs"
one moved "$moved_pid" pre-rep report
alive "$moved_pid" && ok moved/report-keeps-holder ||
	not_ok moved/report-keeps-holder "files.preexisting: report ended pid $moved_pid"

helper allowed hold "$ALLOWED" || exit 1
echo "$hp" > "$top/rep/cgroup.procs"
none moved/allowed "$hp"

# A UDP-Lite socket connected before: the kernel lists it in its own
# tables (/proc/PID/net/udplite), judged by the udp rules and recorded
# as udp.
helper moved-udplite hold udplite:127.0.0.1:7721 || exit 1
echo "$hp" > "$top/rep/cgroup.procs"
one moved/udplite "$hp" pre-rep report udp

helper cloned clone-hold "$top/rep" "$DENIED" || exit 1
one cloned "$hp" pre-rep report

# forked: bash holds the denied connection, moves itself in (a join: one
# record), then forks a child that inherits it (no join: none).
bash -c "exec 3<>/dev/tcp/127.0.0.1/7721; echo \$\$ > '$top/rep/cgroup.procs'; '$TOOLS/fileprobe' hold; :" \
	> "$work/forked.out" 2>&1 &
fparent=$!
helpers="$helpers $fparent"
wait_for '^ready$' "$work/forked.out" 100
fchild=$(sed -n 's/^pid=\([0-9]*\)$/\1/p' "$work/forked.out")
helpers="$helpers $fchild"
one forked/parent "$fparent" pre-rep report
none forked/child "$fchild"

cat > "$work/pol/late.yaml.tmp" <<'YAML'
name: pre-late
cgroups: [/stockade-preexist/late]
network:
  default: deny
YAML
mv "$work/pol/late.yaml.tmp" "$work/pol/late.yaml"
if wait_for '"event":"reload".*"result":"applied"' "$log" 100; then
	one reload "$late_pid" pre-late report
else
	not_ok reload "no applied reload: $(grep '"event":"reload\|policy_error' "$log" | tail -n 2)"
fi

helper kill hold "$DENIED" || exit 1
kill_pid=$hp
echo "$kill_pid" > "$top/kill/cgroup.procs"
k=0
while alive "$kill_pid" && [ $k -lt 50 ]; do
	sleep 0.1
	k=$((k + 1))
done
one kill/record "$kill_pid" pre-kill kill
lim=$(grep '"event":"limit"' "$log" | grep "\"pid\":$kill_pid,")
case $lim in
*'"kind":"preexisting_fd","policy":"pre-kill",'*'"fds":1,"killed":true'*) ok kill/limit ;;
*) not_ok kill/limit "want a limit record of kind preexisting_fd for pid $kill_pid: ${lim:-none}" ;;
esac
if alive "$kill_pid"; then
	not_ok kill/holder-ended "pid $kill_pid still runs"
else
	ok kill/holder-ended
fi

# once: no (pid, fd) twice over the whole run.
dups=$(grep '"event":"preexisting_fd"' "$log" | sed 's/.*"pid":\([0-9]*\),.*"fd":\([0-9]*\),.*/\1:\2/' |
	sort | uniq -d)
[ -z "$dups" ] && ok once || not_ok once "reported twice: $dups"

agent_end
grep -q '"event":"agent_stop"' "$log" && ok agent-stop || not_ok agent-stop "no agent_stop record"
summary
