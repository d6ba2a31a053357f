#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Live test of `stockade oci-hook` (README "Container names"), the real
# binary, on the host:
#   state     a state JSON on stdin, as a runtime hands it, with the pid
#             of a real process (a sleep started here) and containerd's
#             CRI annotations: exit 0, DIR/<id>.json written 0644 with the
#             id, names, pod, that process's cgroup2 path (its 0:: line),
#             bundle, pid and created; no temporary file left;
#   bundle    a state without annotations: the names come from the
#             bundle's config.json;
#   remove    --remove (poststop) deletes the record; again: still exit 0;
#   bad       stdin that is not a state, and a traversal id: non-zero,
#             one line on stderr, nothing written;
#   runc      where runc and busybox are (root), a real container whose
#             config names the hook in createRuntime and poststop: the
#             record appears while it runs, with its init's pid and
#             cgroup, and goes with `runc delete`.
# POSIX sh; no jq.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

STOCKADE_ABS=$(cd "$(dirname "$STOCKADE")" && pwd)/$(basename "$STOCKADE")
work=$(mktemp -d /tmp/stockade-ocihook.XXXXXX)
dir=$work/run/stockade/containers
rroot=$work/runc-root
cid=stk-ocihook-$$
sleeper=

cleanup() {
	[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null
	if command -v runc > /dev/null 2>&1 && [ -d "$rroot" ]; then
		runc --root "$rroot" delete --force "$cid" > /dev/null 2>&1
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

cg0() { sed -n 's/^0:://p' "/proc/$1/cgroup"; }

# --- state: a real process, CRI annotations ---
sleep 60 &
sleeper=$!
state='{"ociVersion":"1.2.0","id":"live1","status":"creating","pid":'$sleeper',"bundle":"'$work'/b1","annotations":{"io.kubernetes.cri.container-name":"app","io.kubernetes.cri.image-name":"docker.io/library/nginx:1.25","io.kubernetes.cri.sandbox-name":"web-0","io.kubernetes.cri.sandbox-namespace":"prod","io.kubernetes.cri.sandbox-uid":"0b9c5e5a-8d1f-4b8e-9f6e-1d2c3b4a5f60"}}'
if printf '%s' "$state" | "$STOCKADE" oci-hook --dir "$dir" 2> "$work/err"; then
	rec=$dir/live1.json
	want_cg=$(cg0 "$sleeper")
	bad=
	for w in '"id":"live1"' '"name":"app"' '"image":"docker.io/library/nginx:1.25"' \
		'"pod":{"namespace":"prod","name":"web-0","uid":"0b9c5e5a-8d1f-4b8e-9f6e-1d2c3b4a5f60"}' \
		"\"cgroup\":\"$want_cg\"" "\"bundle\":\"$work/b1\"" "\"pid\":$sleeper," '"created":"20'; do
		grep -qF "$w" "$rec" 2>/dev/null || bad="$bad $w"
	done
	mode=$(stat -c %a "$rec" 2>/dev/null)
	left=$(ls -A "$dir" | wc -l)
	if [ -z "$bad" ] && [ "$mode" = 644 ] && [ "$left" = 1 ] && [ -n "$want_cg" ]; then
		ok state
	else
		not_ok state "record $(cat "$rec" 2>/dev/null) lacks:$bad; mode $mode; $left files in $dir; cgroup '$want_cg'"
	fi
else
	not_ok state "exit non-zero: $(cat "$work/err")"
fi

# --- bundle: no annotations in the state ---
mkdir -p "$work/b2"
echo '{"ociVersion":"1.2.0","annotations":{"nerdctl/name":"from-bundle"}}' > "$work/b2/config.json"
state='{"ociVersion":"1.2.0","id":"live2","status":"created","pid":'$sleeper',"bundle":"'$work'/b2"}'
if printf '%s' "$state" | "$STOCKADE" oci-hook --dir "$dir" 2> "$work/err" &&
	grep -qF '"name":"from-bundle"' "$dir/live2.json"; then
	ok bundle
else
	not_ok bundle "$(cat "$dir/live2.json" "$work/err" 2>/dev/null)"
fi

# --- remove ---
stop='{"ociVersion":"1.2.0","id":"live2","status":"stopped","bundle":"'$work'/b2"}'
if printf '%s' "$stop" | "$STOCKADE" oci-hook --dir "$dir" --remove &&
	[ ! -e "$dir/live2.json" ] && printf '%s' "$stop" | "$STOCKADE" oci-hook --dir "$dir" --remove; then
	ok remove
else
	not_ok remove "record left, or a second --remove failed"
fi

# --- bad input ---
bad=
for s in 'not json' '{"ociVersion":"1.2.0","id":"../../etc/x","pid":1}' '{"id":"x","pid":1}'; do
	if printf '%s' "$s" | "$STOCKADE" oci-hook --dir "$dir" 2> "$work/err"; then
		bad="$bad [$s: exit 0]"
	elif [ "$(wc -l < "$work/err")" != 1 ] || ! grep -q '^stockade: oci-hook: error: ' "$work/err"; then
		bad="$bad [$s: stderr $(cat "$work/err")]"
	fi
done
[ -e "$work/run/etc/x.json" ] && bad="$bad [a file outside DIR]"
if [ -z "$bad" ]; then ok bad; else not_ok bad "$bad"; fi
kill "$sleeper" 2>/dev/null
sleeper=

# --- runc: the hook in a real container's config ---
if ! command -v runc > /dev/null 2>&1 || ! command -v busybox > /dev/null 2>&1; then
	skip runc "runc or busybox not installed (make deps)"
elif [ "$(id -u)" != 0 ]; then
	skip runc "not root: runc needs it to make a container"
else
	b=$work/bundle
	mkdir -p "$b/rootfs/bin" "$b/rootfs/proc" "$rroot"
	cp "$(command -v busybox)" "$b/rootfs/bin/busybox"
	cat > "$b/config.json" <<EOF
{"ociVersion":"1.0.2",
 "process":{"terminal":false,"user":{"uid":0,"gid":0},"args":["/bin/busybox","sleep","60"],
            "cwd":"/","env":["PATH=/bin"],"noNewPrivileges":true},
 "root":{"path":"rootfs","readonly":true},
 "hostname":"ocihook",
 "mounts":[{"destination":"/proc","type":"proc","source":"proc"}],
 "annotations":{"io.kubernetes.cri.container-name":"runc-app","io.kubernetes.cri.sandbox-name":"runc-pod"},
 "hooks":{"createRuntime":[{"path":"$STOCKADE_ABS","args":["stockade","oci-hook","--dir","$dir"]}],
          "poststop":[{"path":"$STOCKADE_ABS","args":["stockade","oci-hook","--dir","$dir","--remove"]}]},
 "linux":{"cgroupsPath":"/$cid",
          "namespaces":[{"type":"pid"},{"type":"mount"},{"type":"ipc"},{"type":"uts"},{"type":"network"}]}}
EOF
	if ! runc --root "$rroot" run -d -b "$b" "$cid" < /dev/null > "$work/runc.out" 2>&1; then
		skip runc "runc cannot start a container here: $(tail -1 "$work/runc.out")"
	else
		pid=$(runc --root "$rroot" state "$cid" | sed -n 's/^ *"pid": *\([0-9]*\).*/\1/p')
		rec=$dir/$cid.json
		want_cg=$(cg0 "$pid")
		if grep -qF '"name":"runc-app"' "$rec" 2>/dev/null && grep -qF "\"pid\":$pid," "$rec" &&
			grep -qF "\"cgroup\":\"$want_cg\"" "$rec" && grep -qF '"name":"runc-pod"' "$rec"; then
			runc --root "$rroot" kill "$cid" KILL > /dev/null 2>&1
			n=0
			while [ "$(runc --root "$rroot" state "$cid" 2>/dev/null | sed -n 's/^ *"status": *"\([a-z]*\)".*/\1/p')" = running ] &&
				[ "$n" -lt 50 ]; do
				n=$((n + 1))
				sleep 0.1
			done
			runc --root "$rroot" delete "$cid" > "$work/runc.out" 2>&1
			if [ ! -e "$rec" ]; then
				ok runc
			else
				not_ok runc "the record is still there after runc delete (poststop): $(cat "$work/runc.out")"
			fi
		else
			not_ok runc "record $(cat "$rec" 2>/dev/null) for pid $pid, cgroup '$want_cg'"
		fi
	fi
fi

summary
