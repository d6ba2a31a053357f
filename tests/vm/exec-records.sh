#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Exec and exit records (include/exec.h, bpf/exec.bpf.c) in the test VM,
# and the fds a process held from before its confinement
# (agent/preexist.c). Cases:
#   chain       a shell joins /execrec and execs run.sh; run.sh runs a
#               busybox `#!` script (hello.sh) with quotes and a newline
#               in its argv, which runs /bin/busybox: three exec records,
#               each naming the one before as parent_exec_id, the first
#               with parent_exec_seen false (its parent exec'd outside);
#               the script's with binary (the script), interpreter (the
#               resolved /bin/sh) and interpreter_line; argv escaped
#   sha256      exec.hash: sha256: busybox's exec record carries its digest,
#               the script's its own and its interpreter's (sha256sum's)
#   long-argv   an argv over 1 KiB: argv_truncated
#   exit        hello.sh exits 7: an exit record with its exec_id and
#               status 7; a sleep killed by SIGKILL: signal 9
#   storm       $EXEC_STORM vfork+exec of tools/nop (execprobe's storm) in
#               /execrec-storm: every exec and exit record logged or
#               counted lost, and produced == logged + lost exactly
#               (tools/evcount); a deny in the middle of it is logged
#   preexist    a process holding /etc/shadow, a write fd outside the
#               write scope and a TCP socket connected to a loopback
#               address the policy denies, moved into a confined cgroup
#               by an outsider: one preexisting_fd record each, once;
#               with files.preexisting: kill, the holder ends; a child
#               clone3(CLONE_INTO_CGROUP)'d in holding /etc/shadow: one
#   starve      the agent stopped, a 16 KiB ring: 200 fork+exec fill it
#               to the exec records' limit, and the 3 denials after them
#               are all logged; produced == logged + lost, losses > 0
#
# Env (from tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS (optional), EXEC_STORM (default 5000, so 10,000
# records; 10,000 execs took 90 s of 6.12's guest under TCG).

. tests/vm/lib.sh

T=exec-records
work=/tmp/exec-records
log=$work/agent.log
bpffs=/sys/fs/bpf/execrec
cg=$CGROUP_ROOT/execrec
scg=$CGROUP_ROOT/execrec-storm
storm=${EXEC_STORM:-5000}
agent=

if [ "$(hostname)" != stockade-vm ] || [ ! -f /init ]; then
	t_fail $T/guest "refusing to run outside the test VM: it writes /etc/shadow"
	exit 0
fi
rm -rf "$work"
mkdir -p "$work/pol" "$work/w" "$cg" "$scg"
[ -e /etc/shadow ] || echo 'root:*:19000:0:99999:7:::' > /etc/shadow
cat > "$work/pol/execrec.yaml" <<EOF
name: execrec
category: model-generated-code
cgroups: [/execrec]
network:
  default: deny
files:
  write: [$work/w]
exec:
  hash: sha256
EOF
cat > "$work/pol/execstorm.yaml" <<EOF
name: execstorm
category: model-generated-code
cgroups: [/execrec-storm]
network:
  default: deny
files:
  write: [$work/w]
EOF

cat > "$work/pol/execkill.yaml" <<EOF
name: execkill
cgroups: [/execrec-kill]
network:
  default: deny
files:
  write: [$work/w]
  preexisting: kill
EOF
kcg=$CGROUP_ROOT/execrec-kill
mkdir -p "$kcg"

cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	[ -d "$bpffs" ] && "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
	[ -n "$holders" ] && kill -9 $holders 2>/dev/null
	rmdir "$cg" "$scg" "$kcg" 2>/dev/null
}
holders=
trap cleanup EXIT

start_agent() {
	# shellcheck disable=SC2086
	"$STOCKADE" agent $STOCKADE_AGENT_FLAGS ${RING:+--ring-size $RING} \
		--policy "$work/pol" --bpffs "$bpffs" \
		--cgroup-root "$CGROUP_ROOT" --detach-on-exit --log "$log" \
		> "$work/agent.out" 2> "$work/agent.err" &
	agent=$!
	wait_for 120 ready
	grep -q '"agent_ready"' "$log"
}
ready() { grep -q '"agent_ready"' "$log" 2>/dev/null || ! alive "$agent"; }
stop_agent() {
	kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	agent=
}

if ! start_agent; then
	t_fail $T/agent-ready "no agent_ready: $(tail -n 3 "$work/agent.err")"
	exit 0
fi
t_ok $T/agent-ready

# field LINE KEY: a string member's value (no escapes in it).
field() {
	echo "$1" | sed -n "s/.*\"$2\":\"\([^\"]*\)\".*/\1/p"
}
# exec_rec FILENAME: the exec records whose filename is FILENAME.
exec_rec() {
	grep '"event":"exec"' "$log" | grep -F "\"filename\":\"$1\""
}

# ---- chain ----
cat > "$work/hello.sh" <<'EOF'
#!/bin/sh
/bin/busybox true "$@"
exit 7
EOF
cat > "$work/run.sh" <<EOF
cd $work
$work/hello.sh plain 'a "quoted" arg' "\$(printf 'line1\nline2')"
echo \$? > $work/w/hello.rc
/bin/busybox true \$(/bin/busybox seq 1 400)
/bin/busybox sleep 30 &
sp=\$!
echo \$sp > $work/w/sleep.pid
/bin/busybox sleep 0.5
kill -9 \$sp
wait \$sp
EOF
chmod +x "$work/hello.sh"
sh -c "echo \$\$ > $cg/cgroup.procs && exec /bin/sh $work/run.sh" > "$work/run.out" 2>&1
log_settle "$log"
a=$(exec_rec /bin/sh | grep -F "$work/run.sh" | head -n 1)
b=$(exec_rec "$work/hello.sh" | head -n 1)
c=$(exec_rec /bin/busybox | grep -F '"plain"' | head -n 1)
sh_real=$(readlink -f /bin/sh)
if [ -z "$a" ] || [ -z "$b" ] || [ -z "$c" ]; then
	t_fail $T/chain/records "want exec records of run.sh, hello.sh and busybox: $(grep '"event":"exec"' "$log" | head -n 4)"
else
	t_ok $T/chain/records
	if has_all "$a" '"parent_exec_seen":false "policy":"execrec" "category":"model-generated-code" "cgroup":"/execrec" "policy_hash":"' &&
	   [ "$(field "$b" parent_exec_id)" = "$(field "$a" exec_id)" ] &&
	   [ "$(field "$c" parent_exec_id)" = "$(field "$b" exec_id)" ] &&
	   ! echo "$b$c" | grep -q parent_exec_seen; then
		t_ok $T/chain/parent-exec-id
	else
		t_fail $T/chain/parent-exec-id "${_miss:-ids}: $a // $b // $c"
	fi
	if [ "$(field "$b" binary)" = "$work/hello.sh" ] &&
	   [ "$(field "$b" interpreter)" = "$sh_real" ] &&
	   [ "$(field "$b" interpreter_line)" = /bin/sh ] &&
	   [ "$(field "$c" binary)" = "$(readlink -f /bin/busybox)" ] &&
	   ! echo "$c" | grep -q '"interpreter'; then
		t_ok $T/chain/binary-interpreter
	else
		t_fail $T/chain/binary-interpreter "want binary $work/hello.sh, interpreter $sh_real: $b // $c"
	fi
	if echo "$c" | grep -qF '"argv":["/bin/busybox","true","plain","a \"quoted\" arg","line1\nline2"]' &&
	   echo "$b" | grep -qF "\"argv\":[\"/bin/sh\",\"$work/hello.sh\",\"plain\"" &&
	   [ "$(field "$c" cwd)" = "$work" ] &&
	   has_all "$c" '"dev":"[0-9]*:[0-9]*" "ino":[1-9] "nlink":[1-9] "uid":0, "euid":0, "ppid":[1-9]'; then
		t_ok $T/chain/argv-escaped
	else
		t_fail $T/chain/argv-escaped "${_miss:-argv or cwd}: $c"
	fi
	# exec.hash: sha256: the program's digest; a script's, and its
	# interpreter's.
	bb_sum=$(sha256sum "$(readlink -f /bin/busybox)" | cut -d' ' -f1)
	sh_sum=$(sha256sum "$sh_real" | cut -d' ' -f1)
	hello_sum=$(sha256sum "$work/hello.sh" | cut -d' ' -f1)
	if [ "$(field "$c" sha256)" = "$bb_sum" ] &&
	   [ "$(field "$b" sha256)" = "$hello_sum" ] &&
	   [ "$(field "$b" interpreter_sha256)" = "$sh_sum" ] &&
	   [ -n "$bb_sum" ] && ! echo "$b$c" | grep -q sha256_error; then
		t_ok $T/chain/sha256
	else
		t_fail $T/chain/sha256 "want sha256 $bb_sum for busybox, $hello_sum and interpreter $sh_sum for hello.sh: $c // $b"
	fi
	case $a in *'"exec_id":"'[0-9a-f]*-[0-9]*-[0-9]*'"'*) t_ok $T/chain/exec-id-format ;;
	*) t_fail $T/chain/exec-id-format "want BOOTID-NS-PID: $a" ;; esac
fi

# ---- long argv ----
l=$(grep '"event":"exec"' "$log" | grep -F '"argv":["/bin/busybox","true","1","2",' | head -n 1)
if echo "$l" | grep -q '"argv_truncated":true'; then
	t_ok $T/long-argv
else
	t_fail $T/long-argv "want argv_truncated: $(echo "$l" | cut -c1-300)"
fi

# ---- exit: a status and a signal ----
x=$(grep '"event":"exit"' "$log" | grep -F "\"exec_id\":\"$(field "$b" exec_id)\"")
if [ "$(cat "$work/w/hello.rc")" = 7 ] && has_all "$x" '"status":7, "run_ms":[0-9] "maxrss_kb":[1-9] "policy":"execrec"'; then
	t_ok $T/exit/status
else
	t_fail $T/exit/status "${_miss:-no record}: rc $(cat "$work/w/hello.rc"), $x"
fi
sp=$(cat "$work/w/sleep.pid")
se=$(grep '"event":"exec"' "$log" | grep "\"pid\":$sp," | head -n 1)
x=$(grep '"event":"exit"' "$log" | grep "\"pid\":$sp,")
if [ -n "$se" ] && [ "$(echo "$x" | grep -c .)" = 1 ] &&
   has_all "$x" '"signal":9,' && [ "$(field "$x" exec_id)" = "$(field "$se" exec_id)" ]; then
	t_ok $T/exit/signal
else
	t_fail $T/exit/signal "want one exit record with signal 9 for pid $sp: exec $se // exit $x"
fi

# ---- preexist: fds held from before confinement ----
# The listener outside every sandbox; each holder connects to it, opens
# /etc/shadow for reading and a file outside the write scope for
# writing, then an outsider (this shell) moves it into a confined cgroup.
py=/usr/bin/python3
port=7710
# pre_for PID: the preexisting_fd records of PID.
pre_for() { grep '"event":"preexisting_fd"' "$log" | grep "\"pid\":$1,"; }
pre_n() { [ "$(pre_for "$1" | grep -c .)" -ge "$2" ]; }
gone() { ! alive "$1"; }
# holder NAME: start one; its pid in $hp once it holds everything.
holder() {
	$py -S -I -c '
import socket, time
a = open("/etc/shadow")
b = open("/tmp/execrec-outside", "w")
s = socket.create_connection(("127.0.0.1", '$port'))
print("held", flush=True)
time.sleep(60)
' < /dev/null > "$work/w/$1.out" 2>&1 &
	hp=$!
	holders="$holders $hp"
	wait_for 20 grep -qs held "$work/w/$1.out"
}
if [ ! -x $py ]; then
	t_skip $T/preexist "no python3 in this guest"
else
	$py -S -I -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", '$port')); s.listen(8)
c = []
while True:
    c.append(s.accept()[0])
' < /dev/null > /dev/null 2>&1 &
	holders=$!
	sleep 1
	holder report
	echo "$hp" > "$cg/cgroup.procs"
	wait_for 10 pre_n "$hp" 3
	sleep 1.5	# a second walk would have written by now
	r=$(pre_for "$hp")
	if [ "$(echo "$r" | grep -c .)" = 3 ] &&
	   echo "$r" | grep -q '"path":"/etc/shadow","access":"read","reason":"protected","action":"report"' &&
	   echo "$r" | grep -q '"path":"/tmp/execrec-outside","access":"write","reason":"outside_scope"' &&
	   echo "$r" | grep -q '"family":"ipv4","daddr":"127.0.0.1","dport":'$port',"proto":"tcp",.*"reason":"not_allowed"' &&
	   echo "$r" | grep -q '"policy":"execrec","cgroup":"/execrec","cgroup_id":[0-9]*,"pid":'"$hp"',"comm":"python3","fd":[0-9]'; then
		t_ok $T/preexist/report-once
	else
		t_fail $T/preexist/report-once "want 3 preexisting_fd records for pid $hp: $r"
	fi
	if alive "$hp"; then
		t_ok $T/preexist/report-keeps-holder
	else
		t_fail $T/preexist/report-keeps-holder "files.preexisting: report killed pid $hp"
	fi
	# clone3(CLONE_INTO_CGROUP) from outside: the child brings the fd.
	"$TOOLS/fileprobe" clone-hold "$cg" /etc/shadow < /dev/null > "$work/w/clone.out" 2>&1 &
	holders="$holders $!"
	wait_for 20 grep -qs '^ready$' "$work/w/clone.out"
	cp=$(sed -n 's/^child=\([0-9]*\)$/\1/p' "$work/w/clone.out")
	holders="$holders $cp"
	if [ -n "$cp" ] && wait_for 10 pre_n "$cp" 1 && sleep 1 &&
	   [ "$(pre_for "$cp" | grep -c .)" = 1 ] &&
	   pre_for "$cp" | grep -q '"path":"/etc/shadow","access":"read","reason":"protected","action":"report"'; then
		t_ok $T/preexist/clone-into-cgroup
	else
		t_fail $T/preexist/clone-into-cgroup "want 1 preexisting_fd record of /etc/shadow for the clone3 child ${cp:-?}: $(pre_for "${cp:-x}") $(tr '\n' ' ' < "$work/w/clone.out")"
	fi
	holder kill
	echo "$hp" > "$kcg/cgroup.procs"
	wait_for 10 gone "$hp"
	sleep 0.5
	lim=$(grep '"event":"limit"' "$log" | grep "\"pid\":$hp,")
	if [ "$(pre_for "$hp" | grep -c '"action":"kill"')" = 3 ] &&
	   has_all "$lim" '"kind":"preexisting_fd" "policy":"execkill" "fds":3, "killed":true' &&
	   gone "$hp"; then
		t_ok $T/preexist/kill
	else
		t_fail $T/preexist/kill "want 3 records with action kill, a limit record and pid $hp gone: $(pre_for "$hp" | head -n 3) // $lim"
	fi
	# shellcheck disable=SC2086
	kill -9 $holders 2>/dev/null
	# shellcheck disable=SC2086
	wait $holders 2>/dev/null
	holders=
fi

# ---- storm: every record logged or counted lost ----
# execprobe's storm: vfork + exec of tools/nop + wait, storm times, from
# inside the storm cgroup; a denial from the sandbox while it runs. nop
# has no C library: a static glibc binary's start-up under TCG doubled
# the storm's time, and the records, not the program, are under test.
# The agent's CPU time (utime + stime, in USER_HZ = 100) across the storm,
# on the console: how much of the storm's time is the agent's.
agent_cpu() { awk '{ print $14 + $15 }' "/proc/$agent/stat" 2>/dev/null; }
c0=$(agent_cpu)
t0=$(cut -d' ' -f1 /proc/uptime)
"$TOOLS/execprobe" --cgroup "$scg" storm "$storm" "$TOOLS/nop" nop \
	> "$work/storm.out" 2>&1 &
bp=$!
sleep 5
sh -c "echo \$\$ > $scg/cgroup.procs && exec /bin/busybox cat /etc/shadow" > /dev/null 2>&1
wait $bp
brc=$?
t1=$(cut -d' ' -f1 /proc/uptime)
[ "$brc" = 0 ] || t_fail $T/storm/run "execprobe storm: $(tr '\n' ' ' < "$work/storm.out")"
log_settle "$log"
c1=$(agent_cpu)
# Before the stop: --detach-on-exit removes the pins.
counts=$("$TOOLS/evcount" "$bpffs" 2>&1)
stop_agent
produced=$(echo "$counts" | sed -n 's/.*produced=\([0-9]*\).*/\1/p')
klost=$(echo "$counts" | sed -n 's/.* lost=\([0-9]*\).*/\1/p')
# The counts below from one awk pass over the log (20,000 records, 8 MB):
# a grep or sed per count, several with regular expressions, took 20 s
# of the storm's step under TCG. Substrings (index), in the order the
# records hold them, as the greps they replace matched them.
set -- $(awk -v cg='"cgroup":"/execrec-storm"' '
	function has(s) { return index($0, s) > 0 }
	function after(a, b) { return index($0, a) && index(substr($0, index($0, a)), b) }
	{ ev = "" }
	has("\"event\":\"deny\"") { ev = "deny" }
	has("\"event\":\"audit\"") { ev = "audit" }
	has("\"event\":\"setup\"") { ev = "setup" }
	has("\"event\":\"exec\"") { ev = "exec" }
	has("\"event\":\"exit\"") { ev = "exit" }
	ev != "" { kern++ }
	ev == "exec" && after(cg, "\"argv\":[\"nop\"]") { sx++ }
	ev == "exit" && has(cg) && has("\"comm\":\"nop\"") { sxx++ }
	ev == "deny" && has(cg) && has("\"path\":\"/etc/shadow\"") { d++ }
	has("\"event\":\"lost\"") && match($0, /"count":[0-9]+,/) {
		lost += substr($0, RSTART + 8, RLENGTH - 9)
	}
	END { print kern + 0, lost + 0, sx + 0, sxx + 0, d + 0 }' "$log")
kern=$1 lost=$2 sx=$3 sxx=$4 d=$5
echo "exec-records: storm of $storm in $(echo "$t0 $t1" | awk '{ print $2 - $1 }') s (the agent's CPU: $(( (${c1:-0} - ${c0:-0}) / 100 )) s): $sx exec, $sxx exit records of nop, $lost lost; kernel: $counts; $kern kernel records logged"
if [ -z "$produced" ]; then
	t_fail $T/storm/counters "evcount: $counts"
elif [ "$produced" -eq $((kern + lost)) ] && [ "$klost" = "$lost" ]; then
	t_ok $T/storm/produced-logged-lost
else
	t_fail $T/storm/produced-logged-lost "produced $produced != logged $kern + lost $lost (kernel lost $klost)"
fi
# Each fork+exec makes one exec and one exit record.
if [ $((sx + sxx + lost)) -ge $((2 * storm)) ] && [ "$sx" -le "$storm" ] &&
   [ "$sxx" -le "$storm" ]; then
	t_ok $T/storm/all-present-or-lost
else
	t_fail $T/storm/all-present-or-lost "$sx exec + $sxx exit + $lost lost < $((2 * storm))"
fi
if [ "$d" = 1 ]; then
	t_ok $T/storm/deny-logged
else
	t_fail $T/storm/deny-logged "want the one deny of /etc/shadow in the storm logged, have $d (lost $lost)"
fi

# ---- starve: the agent stopped (SIGSTOP), a 16 KiB ring: 200 fork+exec
# fill it to the exec records' limit (3/4, include/exec.h) and the rest
# of theirs are counted lost; the 3 denials after them still fit in the
# quarter kept for refusals. Resumed: all 3 logged, produced = logged +
# lost. Without the reserve the exec records would have filled the ring
# and the denials been lost. ----
log=$work/agent-small.log
RING=16384
if ! start_agent; then
	t_fail $T/starve/agent-ready "no agent_ready: $(tail -n 3 "$work/agent.err")"
	exit 0
fi
cat > "$work/starve.sh" <<EOF
i=0
while [ \$i -lt 200 ]; do
	/bin/busybox true
	i=\$((i + 1))
done
for i in 1 2 3; do
	/bin/busybox cat /etc/shadow > /dev/null 2>&1
done
EOF
kill -STOP "$agent"
sh -c "echo \$\$ > $scg/cgroup.procs && exec /bin/sh $work/starve.sh" > /dev/null 2>&1
kill -CONT "$agent"
log_settle "$log"
counts=$("$TOOLS/evcount" "$bpffs" 2>&1)
stop_agent
produced=$(echo "$counts" | sed -n 's/.*produced=\([0-9]*\).*/\1/p')
kern=$(grep -c '"event":"\(deny\|audit\|setup\|exec\|exit\)"' "$log")
lost=$(sed -n '/"event":"lost"/s/.*"count":\([0-9]*\),.*/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')
d=$(grep '"event":"deny"' "$log" | grep -c '"path":"/etc/shadow"')
echo "exec-records: starve: agent stopped, ring 16 KiB, 200 fork+exec then 3 denials: $kern kernel records logged ($d denials), $lost lost; kernel: $counts"
if [ -n "$produced" ] && [ "$produced" -eq $((kern + lost)) ] && [ "$lost" -gt 0 ]; then
	t_ok $T/starve/produced-logged-lost
else
	t_fail $T/starve/produced-logged-lost "want losses, and produced ${produced:-?} = logged $kern + lost $lost ($counts)"
fi
if [ "$d" = 3 ]; then
	t_ok $T/starve/every-denial-logged
else
	t_fail $T/starve/every-denial-logged "$d of the 3 denials logged ($lost records lost)"
fi
