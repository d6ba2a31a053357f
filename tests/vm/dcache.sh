#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# The file decision cache (include/file.h, `file_dcache`; issue 18) in the
# test VM: every case first makes the cache hold an allow (the same file
# opened eight times from the sandbox: an entry is made at the eighth), then
# changes what that file's path or its verdict is, from outside the
# sandbox the way a host or a reload would, or from a second sandbox,
# and opens it again by its new name: that open
# must be refused, with exactly one deny record naming the new path, as
# it would be with no cache at all. A case the cache answered from a
# stale entry would get OK and no record.
#
#   rename-dir     the file's directory moved out of the read scope
#                  (rename_lock's sequence)
#   rename-file    the file itself moved out of it
#   bind-mount     the file's directory bind-mounted outside the scope:
#                  the same dentry under another mount
#   move-mount     a mount moved out of the scope: the same dentry and
#                  the same mount, only mount_lock's sequence tells
#   hard-link      a second name outside the scope for the same inode
#   chroot         a task whose root is not its namespace's: the same
#                  dentry and mount, judged as "/in/..." from there
#   other-ns       a task in a new mount namespace reaching the cached
#                  file through the mount of the namespace it came from
#                  (/proc/PID/root): a detached mount, refused
#   other-sandbox  the same file from a sandbox whose policy may not
#                  read it (the policy id and the selected cgroup)
#   inode-reuse    the cached file deleted, its dentry and inode freed
#                  (drop_caches), and a file made outside the scope on
#                  the same ext4 mount, which gives it the freed inode's
#                  number (and so its count of opens in dcache_seen) and
#                  may give it the freed inode's and dentry's memory,
#                  eight times
#   reload         the policy no longer reads the file (a fresh policy
#                  id, file_gen)
#   write-after-read  a write open of a file whose read allow is cached:
#                  refused, the read still allowed
# Each case also checks that the cached file still opens where it should
# (the allow stays an allow), and the last that the sandbox's records
# lost none. Then `answered`: the test build of the agent (make variant),
# which counts the cache's hits, must count some for a file read ten
# times; without it, a cache switched off would pass every case. And
# `answered-off`: started without a hook that ends entries, it must
# count none; `answered-again`: started whole again over its pins, some.
#
# Env (tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT.

. tests/vm/lib.sh

T=dcache
probe=$TOOLS/fileprobe
sbx=$CGROUP_ROOT/dcache-sbx
sbx_b=$CGROUP_ROOT/dcache-b
work=/tmp/dcache
log=$work/agent.log
bpffs=/sys/fs/bpf/dcache
cases=$work/cases
pol=$work/policies/dcache.yaml
FP='"comm":"fileprobe"'
agent=
helper_pid=
loopdev=

if [ "$(hostname)" != stockade-vm ] || [ ! -f /init ]; then
	t_fail $T/guest "refusing to run outside the test VM: this script mounts over /dc"
	exit 0
fi

cleanup() {
	[ -n "$helper_pid" ] && kill -9 "$helper_pid" 2>/dev/null
	if [ -n "$agent" ]; then
		kill -TERM "$agent" 2>/dev/null
		wait_for 20 eval '! alive "$agent"' || kill -9 "$agent" 2>/dev/null
		wait "$agent" 2>/dev/null
	fi
	[ ! -d "$bpffs" ] || "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
	for m in /dc/secret/b /dc/secret/t /dc/in/t /dc/cg /dc/e; do
		umount "$m" 2>/dev/null
	done
	[ -z "$loopdev" ] || losetup -d "$loopdev" 2>/dev/null
	cg_remove "$sbx" "$sbx_b"
	rm -rf /dc
}
trap cleanup EXIT

rm -rf "$work" /dc
mkdir -p "$work/policies" /dc/in /dc/secret /dc/in2
: > "$log"
set -f

# policy READ-LIST: written in place, not renamed into place: a rename
# would move rename_lock's sequence, and the reload case must be caught
# by the rules' generation and the policy id alone.
policy() {
	cat > "$pol" <<EOF
name: dcache
mode: enforce
cgroups: [/dcache-sbx]
network:
  default: deny
files:
  read: [$1]
EOF
}
policy "/dc/in, /dc/e/in, /opt/stockade"
mkdir -p "$sbx" "$sbx_b"
# A second sandbox, which may not read /dc/in: the cache's entries are
# per file, shared by every sandbox that opens it.
cat > "$work/policies/dcache-b.yaml" <<EOF
name: dcache-b
mode: enforce
cgroups: [/dcache-b]
network:
  default: deny
files:
  read: [/dc/in2, /opt/stockade]
EOF

# Fixtures, each case its own file (tmpfs: the initramfs's rootfs).
mkdir -p /dc/in/r /dc/in/b /dc/in/t
for f in r/f f2 b/f h f3 f4 f5; do
	echo data > "/dc/in/$f"
done

"$STOCKADE" agent --policy "$work/policies" --bpffs "$bpffs" --detach-on-exit \
	--log "$log" > /dev/null 2> "$work/agent.err" &
agent=$!
agent_ready_or_fail $T/agent-ready "$log" "$agent" "$work/agent.err" || exit 0

phase=enforce
phase_in "$sbx" deny dcache "$FP"
OUT='"reason":"outside_scope"'

# warm NAME PATH: allowed opens from the sandbox, no record, until the
# file has its entry (include/file.h: made at its FILE_DCACHE_OPENS-th
# open, 8); the case's own open is then the cache's to answer.
warm() {
	for _w in 1 2 3 4 5 6 7 8; do
		kase "$1-warm-$_w" OK '' '' open-read "$2"
	done
}

warm other-sandbox /dc/in/f4
phase_in "$sbx_b" deny dcache-b "$FP"
kase other-sandbox EPERM "\"path\":\"/dc/in/f4\" $OUT" '' open-read /dc/in/f4
judge_cases	# by this phase's fields: the other policy, the other cgroup
phase_in "$sbx" deny dcache "$FP"

# A read allow cached, then a write open of the same file (no write
# scope here): the entry's flags answer only the access they allow.
warm write-after-read /dc/in/f5
kase write-after-read EPERM "\"op\":\"open_write\" \"path\":\"/dc/in/f5\" $OUT" '' open-write /dc/in/f5
kase write-after-read-read OK '' '' open-read /dc/in/f5

warm rename-dir /dc/in/r/f
mv /dc/in/r /dc/secret/r
kase rename-dir EPERM "\"op\":\"open_read\" \"path\":\"/dc/secret/r/f\" $OUT" '' open-read /dc/secret/r/f

warm rename-file /dc/in/f2
mv /dc/in/f2 /dc/secret/f2
kase rename-file EPERM "\"path\":\"/dc/secret/f2\" $OUT" '' open-read /dc/secret/f2

# Mounted before the allow is cached: only the mount in the key tells
# the two names apart.
mkdir -p /dc/secret/b
mount --bind /dc/in/b /dc/secret/b
warm bind-mount /dc/in/b/f
kase bind-mount EPERM "\"path\":\"/dc/secret/b/f\" $OUT" '' open-read /dc/secret/b/f
kase bind-mount-origin OK '' '' open-read /dc/in/b/f

mount -t tmpfs dc-t /dc/in/t
echo data > /dc/in/t/f
warm move-mount /dc/in/t/f
mkdir -p /dc/secret/t
mount --move /dc/in/t /dc/secret/t
kase move-mount EPERM "\"path\":\"/dc/secret/t/f\" $OUT" '' open-read /dc/secret/t/f

warm hard-link /dc/in/h
ln /dc/in/h /dc/secret/h2
kase hard-link EPERM "\"path\":\"/dc/secret/h2\" $OUT" '' open-read /dc/secret/h2
kase hard-link-origin OK '' '' open-read /dc/in/h

# chroot: with /dc as its root, the probe opens the cached file through
# the very mount and dentry the cache holds, as "/in/f3". The cgroup tree
# it joins through is mounted before the allow is cached: no sequence
# moves between the two, only the task's root differs.
mkdir -p /dc/cg /dc/bin
cp "$probe" /dc/bin/fileprobe
mount -t cgroup2 none /dc/cg 2> /dev/null || mount --bind "$CGROUP_ROOT" /dc/cg
warm chroot /dc/in/f3
_probe=$probe _flags=$probe_flags _cgarg=$cgarg
probe=chroot probe_flags="/dc /bin/fileprobe" cgarg="--cgroup /cg/dcache-sbx"
kase chroot EPERM "\"path\":\"/in/f3\" $OUT" '' open-read /in/f3
probe=$_probe probe_flags=$_flags cgarg=$_cgarg
umount /dc/cg 2> /dev/null

# other-ns: a sandboxed helper in this namespace, whose root a sandboxed
# probe in a new one (made by unshare outside the sandbox) opens the
# cached file through: that is a mount of another namespace.
warm other-ns /dc/in/f3
"$probe" --cgroup "$sbx" --wait "$work/never" open-read /dc/in/f3 > "$work/helper.out" 2>&1 &
helper_pid=$!
if wait_for 5 grep -q '^pid=' "$work/helper.out"; then
	probe_flags="-m -- $probe" probe=unshare
	kase other-ns EPERM '"reason":"detached_mount"' '' \
		open-read "/proc/$helper_pid/root/dc/in/f3"
	kase other-ns-own OK '' '' open-read /dc/in/f3
	probe=$_probe probe_flags=$_flags
else
	t_fail $T/enforce/other-ns "the helper did not start: $(cat "$work/helper.out")"
fi
kill -9 "$helper_pid" 2>/dev/null
wait "$helper_pid" 2>/dev/null
helper_pid=

# inode-reuse: ext4 (a loop-mounted image) hands a new file the lowest
# free inode number, the deleted file's; drop_caches frees the deleted
# file's negative dentry and its inode, whose memory the next file may
# get. The image has a journal (tests/vm/mkinitramfs.sh): without one,
# ext4 skips a number deleted less than a minute ago while its inode
# table's block is cached (recently_deleted()), unless the delete and the
# create fall in the same second, and the number came back only on a fast
# enough guest. Each file made outside the scope must be refused.
mkdir -p /dc/e
if gunzip -c data/ext4.img.gz > "$work/e.img" 2> "$work/mke2fs.out" &&
   loopdev=$(losetup -f 2>> "$work/mke2fs.out") &&
   losetup "$loopdev" "$work/e.img" >> "$work/mke2fs.out" 2>&1 &&
   mount -t ext4 "$loopdev" /dc/e > "$work/mount-e.out" 2>&1; then
	mkdir -p /dc/e/in /dc/e/secret
	same=0
	for _i in 1 2 3 4; do
		echo data > /dc/e/in/u
		_ino=$(stat -c %i /dc/e/in/u)
		warm "inode-reuse-$_i" /dc/e/in/u
		rm /dc/e/in/u
		sync
		echo 3 > /proc/sys/vm/drop_caches
		sleep 0.2
		echo data > "/dc/e/secret/u$_i"
		[ "$(stat -c %i "/dc/e/secret/u$_i")" = "$_ino" ] && same=$((same + 1))
		# Twice: a cache design that looks a file up only from its
		# second open would still be met.
		for _o in 1 2; do
			kase "inode-reuse-$_i-$_o" EPERM "\"path\":\"/dc/e/secret/u$_i\" $OUT" '' \
				open-read "/dc/e/secret/u$_i"
		done
	done
	# Without the number back, the case tests nothing: on the
	# journalled image it comes back each time.
	echo "dcache: inode-reuse: the inode number came back $same times of 4"
	if [ "$same" -ge 3 ]; then
		t_ok $T/enforce/inode-reuse-number
	else
		t_fail $T/enforce/inode-reuse-number "the inode number came back $same times of 4"
	fi
else
	t_fail $T/enforce/inode-reuse "no ext4 image mounted: $(cat "$work/mke2fs.out" "$work/mount-e.out" 2> /dev/null | head -n 3)"
fi

warm reload /dc/in/f3
policy "/dc/in2, /opt/stockade"
if "$STOCKADE" reload --bpffs "$bpffs" > "$work/reload.out" 2>&1; then
	t_ok $T/reload-applied
else
	t_fail $T/reload-applied "$(head -n 3 "$work/reload.out")"
fi
kase reload EPERM "\"path\":\"/dc/in/f3\" $OUT" '' open-read /dc/in/f3

judge_cases
t_no_lost

# answered: every case above would pass with the cache switched off too.
# The test build (make variant: STOCKADE_TEST_VARIANT) counts the
# cache's hits (dcache_hits, bpf/file.bpf.c), and differs from this one
# in nothing else the cache does: a file read ten times from the sandbox
# gets its entry at the eighth open, and hits from the ninth.
# answered-off: started without a hook that ends entries (path_link,
# hidden: --allow-degraded), it must cache nothing (agent/lsm.c,
# dcache_sound()): the same ten reads of a fresh file, no hit.
# answered-again: started as in answered once more. Each agent stops
# without detaching, so the next one finds the last one's pinned links,
# of the same tags: it must replace them, not adopt them, when the
# switch it set before load differs (agent/pin.c, same_rodata()).

# variant_reads NAME FILE WANT_HITS [ENV]: stop the running agent, start
# the test build (with ENV, degraded allowed), read FILE ten times from
# the sandbox; each must be allowed, and dcache_hits must have grown by
# WANT_HITS ("2+": at least 2).
variant_reads() {
	kill -TERM "$agent"
	wait_for 20 eval '! alive "$agent"' || kill -9 "$agent" 2>/dev/null
	wait "$agent" 2>/dev/null
	echo data > "$2"
	log=$work/variant.log
	: > "$log"
	env $4 "$TOOLS/stockade-variant" agent --policy "$work/policies" --bpffs "$bpffs" \
		--allow-degraded --log "$log" > /dev/null 2> "$work/variant.err" &
	agent=$!
	agent_wait_ready
	if [ -z "$ready" ]; then
		t_fail "$T/$1" "the test build did not start: $(tail -n 3 "$work/variant.err" | tr '\n' ' ')"
		return
	fi
	_h0=$("$TOOLS/bpfquery" u64 "$bpffs/maps/dcache_hits" 2>&1)
	_ok=0
	for _w in 1 2 3 4 5 6 7 8 9 10; do
		"$probe" --cgroup "$sbx" open-read "$2" 2>&1 | tail -n 1 | grep -qx OK &&
			_ok=$((_ok + 1))
	done
	_h1=$("$TOOLS/bpfquery" u64 "$bpffs/maps/dcache_hits" 2>&1)
	_hits=$((_h1 - _h0)) 2> /dev/null || _hits="$_h0 then $_h1"
	case $3 in
	2+) [ "$_hits" -ge 2 ] 2> /dev/null ;;
	*) [ "$_hits" = "$3" ] ;;
	esac && _hit_ok=1 || _hit_ok=
	if [ "$_ok" = 10 ] && [ -n "$_hit_ok" ]; then
		t_ok "$T/$1"
	else
		t_fail "$T/$1" "$_ok of 10 opens allowed, dcache_hits grew by $_hits (want 10, and $3)"
	fi
}
# Three more starts under TCG: on one kernel (tests/vm/lib.sh, on_kernel).
if on_kernel "$T/answered" 6.1; then
	bpffs=/sys/fs/bpf/dcache-v	# cleanup's detach --all: the variant's now
	variant_reads answered /dc/in2/v 2+
	variant_reads answered-off /dc/in2/w 0 STOCKADE_TEST_HIDE_HOOKS=path_link
	variant_reads answered-again /dc/in2/x 2+
fi
exit 0
