#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# A real container on this host, selected as docker's: Debian's runc runs
# a busybox rootfs (made here, in build/live-oci/) under cgroupsPath
# /docker/<64hex>, docker's cgroupfs form, and the agent confines it by
#   containers: [{runtime: docker}]
# with a network allow-list (127.0.0.1:8080 only). On a hybrid host
# (cgroup v1 controllers, cgroup2 at /sys/fs/cgroup/unified) runc's v1
# driver also puts the container into the cgroup2 hierarchy at the same
# path: checked first, since the agent sees only cgroup2.
#
# The container joins a private network namespace (held by a process of
# this test, lo up, a listener on 127.0.0.1:8080 started outside the
# sandbox): nothing leaves it. Its payload connects to 127.0.0.1:8080
# (allowed: it reads the listener's line) and to 127.0.0.1:9999 (no rule:
# EPERM), and the refusal has exactly one deny record, whose container
# object names runtime docker and the id. BPF-LSM is refused on this
# host's kernel (the agent runs --allow-degraded): files are the VM's
# part (tests/vm/containers.sh).
#
# Then names that never come: a second policy selects podman containers
# named web-*; a podman-form cgroup (/machine.slice/libpod-<64hex>.scope,
# made by this test) whose names no source has is pending for the
# 10 s wait, then confined deny-all (its allowed connect is refused),
# with one container_unresolved record (reason names_unknown). A hook
# record naming it web-1 then lands in --containers-dir: the agent judges
# it again, moves it to that policy, and the allowed connect passes.
#
# Environment: as tests/live/run.sh (STOCKADE, CGROUP_ROOT,
# STOCKADE_AGENT_FLAGS); RUNC (default /usr/sbin/runc), BUSYBOX (a static
# busybox, default /bin/busybox).
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
RUNC=${RUNC:-/usr/sbin/runc}
BUSYBOX=${BUSYBOX:-/bin/busybox}
T=containers

need_cgroup2 containers
need_bpffs containers

work=$(mktemp -d /tmp/stockade-ctr.XXXXXX)
# Without ".." in it: runc would mount the container's /proc elsewhere.
oci=$(cd "$here/../.." && pwd)/build/live-oci
bundle=$work/bundle
log=$work/agent.log
bpffs=/sys/fs/bpf/stockade-ctr-$$
agent_pid=
holder=
listener=
id=$(printf 'stockade-live-containers-%s' "$$" | sha256sum | cut -c 1-64)
cgpath=/docker/$id
id2=$(printf 'stockade-live-containers-named-%s' "$$" | sha256sum | cut -c 1-64)
cg2path=/machine.slice/libpod-$id2.scope
hooks=$work/hooks
# The /docker directories this test made (one per hierarchy, v1 and
# cgroup2), to remove at the end; one that was there before stays.
made=

cleanup() {
	"$RUNC" delete -f "$id" > /dev/null 2>&1
	agent_end
	[ -z "$listener" ] || kill "$listener" 2>/dev/null
	[ -z "$holder" ] || kill "$holder" 2>/dev/null
	rmcg "$CGROUP_ROOT$cg2path"
	for _d in $made; do
		rmcg "$_d"
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Whatever else the host is, these are needed; say which is missing.
why=
[ "$(id -u)" = 0 ] || why="not root"
[ -x "$RUNC" ] || why="${why:+$why; }no $RUNC (apt-get install runc, or make deps)"
if [ ! -x "$BUSYBOX" ] || readelf -l "$BUSYBOX" 2>/dev/null | grep -q 'program interpreter'; then
	why="${why:+$why; }no static busybox at $BUSYBOX (apt-get install busybox-static)"
fi
command -v python3 > /dev/null || why="${why:+$why; }no python3 to write config.json (apt-get install python3-minimal)"
command -v nsenter > /dev/null && command -v unshare > /dev/null ||
	why="${why:+$why; }no nsenter/unshare (apt-get install util-linux)"
if [ -n "$why" ]; then
	skip "$T: runc container" "$why"
	summary
	exit 0
fi

# ---- the bundle: a busybox rootfs in build/, config.json from runc spec ----
rm -rf "$oci"
mkdir -p "$oci/rootfs/bin" "$oci/rootfs/etc" "$oci/rootfs/proc" "$oci/rootfs/sys" \
	 "$oci/rootfs/dev" "$oci/rootfs/tmp" "$bundle"
cp "$BUSYBOX" "$oci/rootfs/bin/busybox"
for a in sh cat nc sleep echo; do
	ln -s busybox "$oci/rootfs/bin/$a"
done
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$oci/rootfs/etc/passwd"
cat > "$oci/rootfs/payload.sh" <<'EOF'
#!/bin/sh
# One attempt each, one line each: op=NAME rc=RC out=OUTPUT.
echo "payload: started"
out=$(nc -w 2 127.0.0.1 8080 < /dev/null 2>&1)
echo "op=allowed rc=$? out=$(echo "$out" | tr '\n' ' ')"
out=$(nc -w 2 127.0.0.1 9999 < /dev/null 2>&1)
echo "op=denied rc=$? out=$(echo "$out" | tr '\n' ' ')"
echo "payload: done"
EOF
chmod 755 "$oci/rootfs/payload.sh"

# The network namespace: lo up, held by a sleep of this test's; the
# container joins it by path, as a CNI-prepared one is joined.
unshare -n sh -c 'ip link set lo up && exec sleep 300' &
holder=$!
n=0
while [ "$(readlink "/proc/$holder/ns/net" 2>/dev/null)" = "$(readlink /proc/self/ns/net)" ]; do
	n=$((n + 1))
	[ "$n" -lt 50 ] || break
	sleep 0.1
done
netns=/proc/$holder/ns/net

(cd "$bundle" && "$RUNC" spec) > "$work/spec.err" 2>&1
if ! python3 -S -I - "$bundle/config.json" "$oci/rootfs" "$cgpath" "$netns" <<'PY' > "$work/py.err" 2>&1
import json, sys
path, rootfs, cg, netns = sys.argv[1:5]
with open(path) as f:
    spec = json.load(f)
spec["process"]["terminal"] = False
spec["process"]["args"] = ["/bin/sh", "/payload.sh"]
spec["root"] = {"path": rootfs, "readonly": True}
spec["linux"]["cgroupsPath"] = cg
nss = spec["linux"]["namespaces"]
if not any(ns["type"] == "network" for ns in nss):
    sys.exit("runc spec made no network namespace")
for ns in nss:
    if ns["type"] == "network":
        ns["path"] = netns
with open(path, "w") as f:
    json.dump(spec, f, indent="\t")
PY
then
	not_ok "$T: bundle" "config.json: $(cat "$work/spec.err" "$work/py.err" | tr '\n' ' ')"
	summary
	exit 1
fi
ok "$T: bundle"

for d in $(awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/mounts); do
	[ -e "$d/docker" ] || made="$made $d/docker"
done
[ -e "$CGROUP_ROOT/machine.slice" ] || made="$made $CGROUP_ROOT/machine.slice"

# ---- the agent ----
cat > "$work/policy.yaml" <<'EOF'
name: live-ctr
mode: enforce
containers:
  - runtime: docker
network:
  default: deny
  allow:
    - cidr: 127.0.0.1/32
      ports: [8080]
      proto: tcp
EOF
mkdir -p "$work/policies" "$hooks"
mv "$work/policy.yaml" "$work/policies/"
cat > "$work/policies/named.yaml" <<'EOF'
name: live-ctr-named
mode: enforce
containers:
  - runtime: podman
    name: "web-*"
network:
  default: deny
  allow:
    - cidr: 127.0.0.1/32
      ports: [8080]
      proto: tcp
EOF
# A plain sandbox, selected by its path; whoever runs inside must not
# leave it by making a directory that looks like a runtime's container.
cat > "$work/policies/outer.yaml" <<'EOF'
name: live-outer
mode: enforce
cgroups: ["/stockade-ctr-outer-*"]
network:
  default: deny
EOF
# shellcheck disable=SC2086
"$STOCKADE" agent $STOCKADE_AGENT_FLAGS --policy "$work/policies" --bpffs "$bpffs" \
	--containers-dir "$hooks" \
	--detach-on-exit --log "$log" > "$work/agent.stdout" 2> "$work/agent.stderr" &
agent_pid=$!
if wait_ready "$log"; then
	ok "$T: agent_ready"
else
	not_ok "$T: agent_ready" "agent did not become ready: $(tail -n 3 "$work/agent.stderr" | tr '\n' ' ')"
	summary
	exit 1
fi

# ---- the container, while the agent runs ----
echo hello-from-8080 | nsenter -t "$holder" -n "$BUSYBOX" nc -l -p 8080 > /dev/null 2>&1 &
listener=$!
sleep 0.3
# create, then start: between the two, runc's init waits in the
# container's cgroups, where /proc names them.
timeout 60 "$RUNC" create --no-pivot -b "$bundle" "$id" < /dev/null > "$work/out" 2> "$work/runc.err"
rc=$?
pid=$("$RUNC" state "$id" 2>/dev/null | sed -n 's/^[[:space:]]*"pid": *\([0-9]*\),*$/\1/p')
# Hybrid or not, the container's cgroup2 cgroup is its cgroupsPath: what
# the path forms (and the agent) see.
cg2=$(sed -n 's/^0:://p' "/proc/${pid:-0}/cgroup" 2>/dev/null)
if [ "$rc" = 0 ] && [ -n "$pid" ] && [ "$cg2" = "$cgpath" ] && [ -d "$CGROUP_ROOT$cgpath" ]; then
	ok "$T: the container's cgroup2 path is its cgroupsPath"
else
	not_ok "$T: the container's cgroup2 path is its cgroupsPath" "runc create exited $rc ($(tail -n 2 "$work/runc.err" | tr '\n' ' ')), init pid ${pid:-none}, cgroup2 '${cg2:-none}', want $cgpath"
fi
if [ "$rc" = 0 ]; then
	timeout 60 "$RUNC" start "$id" 2>> "$work/runc.err"
	rc=$?
fi
if [ "$rc" = 0 ] && wait_for '^payload: started' "$work/out" 100; then
	ok "$T: runc runs the container under $cgpath"
else
	not_ok "$T: runc runs the container under $cgpath" "runc exited $rc: $(tail -n 3 "$work/runc.err" | tr '\n' ' ')"
fi
cgid=$(stat -c %i "$CGROUP_ROOT$cgpath" 2>/dev/null)
wait_for '^payload: done' "$work/out" 100
sleep 0.3	# the ring buffer's records

a=$(grep '^op=allowed ' "$work/out")
case $a in
*"rc=0 out=hello-from-8080"*) ok "$T: allowed connect 127.0.0.1:8080" ;;
*) not_ok "$T: allowed connect 127.0.0.1:8080" "got '${a:-no line: $(tail -n 2 "$work/out" | tr '\n' ' ')}'" ;;
esac
d=$(grep '^op=denied ' "$work/out")
case $d in
*"Operation not permitted"*) ok "$T: denied connect 127.0.0.1:9999: EPERM" ;;
*) not_ok "$T: denied connect 127.0.0.1:9999: EPERM" "got '${d:-no line: $(tail -n 2 "$work/out" | tr '\n' ' ')}'" ;;
esac

# Every deny record of the container's cgroup: exactly the one refusal.
grep '"event":"deny"' "$log" | grep "\"cgroup_id\":${cgid:-none}[,}]" > "$work/recs"
n=$(grep -c . "$work/recs")
line=$(head -n 1 "$work/recs")
want="\"policy\":\"live-ctr\" \"kind\":\"connect\" \"daddr\":\"127.0.0.1\" \"dport\":9999, \"reason\":\"not_allowed\" \"container\":{\"runtime\":\"docker\" \"id\":\"$id\""
miss=
set -f
for f in $want; do
	case $line in *"$f"*) ;; *) miss=${miss:-$f} ;; esac
done
set +f
if [ "$n" = 1 ] && [ -z "$miss" ]; then
	ok "$T: one deny record naming the container"
elif [ "$n" != 1 ]; then
	not_ok "$T: one deny record naming the container" "$n deny records for cgroup id ${cgid:-none}: $(head -n 2 "$work/recs" | tr '\n' ' ' | cut -c 1-400)"
else
	not_ok "$T: one deny record naming the container" "missing $miss in $line"
fi

if grep -q '"event":"lost"' "$log"; then
	not_ok "$T: no lost records" "$(grep '"event":"lost"' "$log" | head -n 1)"
else
	ok "$T: no lost records"
fi

# ---- names that never come: deny-all, then judged again when they do ----
# try PORT: one connect from a process in cg2path, in the test's network
# namespace, to 127.0.0.1:PORT, with a one-shot listener on 8080; prints
# "rc=RC out=OUTPUT".
try() {
	echo hello-from-8080 | nsenter -t "$holder" -n "$BUSYBOX" nc -l -p 8080 > /dev/null 2>&1 &
	_l=$!
	sleep 0.2
	_o=$(sh -c 'echo $$ > "$1/cgroup.procs" && exec nsenter -t "$2" -n "$3" nc -w 2 127.0.0.1 "$4" < /dev/null' \
		sh "$CGROUP_ROOT$cg2path" "$holder" "$BUSYBOX" "$1" 2>&1)
	_rc=$?
	kill "$_l" 2>/dev/null
	wait "$_l" 2>/dev/null
	echo "rc=$_rc out=$(echo "$_o" | tr '\n' ' ')"
}
mkdir -p "$CGROUP_ROOT$cg2path"
cg2id=$(stat -c %i "$CGROUP_ROOT$cg2path" 2>/dev/null)
# The 10 s wait, then the next scan (at most 5 s).
if wait_for "\"container_unresolved\".*\"cgroup_id\":${cg2id:-none},.*\"reason\":\"names_unknown\"" "$log" 300; then
	ok "$T: names never written: a container_unresolved record (names_unknown)"
else
	not_ok "$T: names never written: a container_unresolved record (names_unknown)" "none within 30 s: $(grep container_unresolved "$log" | head -n 2 | tr '\n' ' ')"
fi
n=$(grep '"event":"container_unresolved"' "$log" | grep -c "\"cgroup_id\":${cg2id:-none},")
if [ "$n" = 1 ]; then
	ok "$T: exactly one container_unresolved record"
else
	not_ok "$T: exactly one container_unresolved record" "$n records"
fi
r=$(try 8080)
case $r in
*"Operation not permitted"*) ok "$T: names unknown: confined deny-all (the allowed port refused)" ;;
*) not_ok "$T: names unknown: confined deny-all (the allowed port refused)" "got '$r'" ;;
esac
# The hook's record lands (written aside, renamed in, as the hook does).
printf '{"id":"%s","name":"web-1","image":"","pod":{"namespace":"","name":"","uid":""},"cgroup":"%s","bundle":"","pid":1,"created":"2026-12-02T00:00:00Z"}\n' \
	"$id2" "$cg2path" > "$hooks/.$id2.tmp"
mv "$hooks/.$id2.tmp" "$hooks/$id2.json"
if wait_for "\"event\":\"attach\".*\"cgroup_id\":${cg2id:-none}[,}].*live-ctr-named\|\"event\":\"attach\".*live-ctr-named.*\"cgroup_id\":${cg2id:-none}[,}]" "$log" 100; then
	ok "$T: names arrive: judged again, now in live-ctr-named"
else
	not_ok "$T: names arrive: judged again, now in live-ctr-named" "no attach record: $(grep "${cg2id:-none}" "$log" | tail -n 3 | tr '\n' ' ' | cut -c 1-600)"
fi
r=$(try 8080)
case $r in
*"rc=0 out=hello-from-8080"*) ok "$T: named web-1: the allowed connect passes" ;;
*) not_ok "$T: named web-1: the allowed connect passes" "got '$r'" ;;
esac
r=$(try 9999)
case $r in
*"Operation not permitted"*) ok "$T: named web-1: 127.0.0.1:9999 still refused" ;;
*) not_ok "$T: named web-1: 127.0.0.1:9999 still refused" "got '$r'" ;;
esac
sleep 0.3
# One deny record per refusal in that cgroup: the deny-all one and 9999.
n=$(grep '"event":"deny"' "$log" | grep -c "\"cgroup_id\":${cg2id:-none}[,}]")
if [ "$n" = 2 ]; then
	ok "$T: one deny record per refusal of the named container"
else
	not_ok "$T: one deny record per refusal of the named container" "$n deny records: $(grep '"event":"deny"' "$log" | grep "\"cgroup_id\":${cg2id:-none}[,}]" | cut -c 1-300 | tr '\n' ' ')"
fi

# ---- a container look-alike inside a sandbox stays in that sandbox ----
# docker-<64hex>.scope resolves as docker's at any depth (rootless docker,
# --cgroup-parent): made inside live-outer's sandbox by its own root, it
# must stay there (inherited), not be taken by live-ctr's docker
# selector, whose allow-list would let 127.0.0.1:8080 through.
outer=/stockade-ctr-outer-$$
mkdir -p "$CGROUP_ROOT$outer"
wait_for "\"event\":\"attach\".*\"policy\":\"live-outer\".*\"cgroup\":\"$outer\"" "$log" 100
rmcg "$CGROUP_ROOT$cg2path"
cg2path=$outer/docker-$id2.scope
mkdir -p "$CGROUP_ROOT$cg2path"
cg3id=$(stat -c %i "$CGROUP_ROOT$cg2path" 2>/dev/null)
wait_for "\"event\":\"attach\".*\"cgroup_id\":${cg3id:-none}[,}]" "$log" 100
a=$(grep '"event":"attach"' "$log" | grep "\"cgroup_id\":${cg3id:-none}[,}]" | head -n 1)
case $a in
*'"policy":"live-outer"'*) ok "$T: a docker-<id>.scope made inside a sandbox stays in it" ;;
*) not_ok "$T: a docker-<id>.scope made inside a sandbox stays in it" "attach record: '${a:-none}'" ;;
esac
r=$(try 8080)
case $r in
*"Operation not permitted"*) ok "$T: the look-alike keeps the sandbox's rules (8080 refused)" ;;
*) not_ok "$T: the look-alike keeps the sandbox's rules (8080 refused)" "got '$r'" ;;
esac
rmcg "$CGROUP_ROOT$outer"

# ---- nothing left ----
"$RUNC" delete -f "$id" > /dev/null 2>&1
agent_end
left=
rmcg "$CGROUP_ROOT$cg2path"
[ ! -e "$CGROUP_ROOT$cgpath" ] || left="$CGROUP_ROOT$cgpath"
[ ! -e "$bpffs" ] || left="${left:+$left, }$bpffs"
"$RUNC" state "$id" > /dev/null 2>&1 && left="${left:+$left, }container $id"
if [ -z "$left" ]; then
	ok "$T: cleanup"
else
	not_ok "$T: cleanup" "left behind: $left"
fi
summary
