#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# A sandbox whose files are on overlayfs, as every docker, containerd and
# podman container's root is, in the test VM (BPF-LSM). overlayfs opens
# files of its own within the caller's syscall, on its layers' private
# mounts (clone_private_mount: in no namespace) and with its mounter's
# credentials (override_creds): the real file behind each open (a
# "backing file" on 6.8 and later, whose path is the layer's; on 6.1 a
# file with the overlay's path and the layer's inode), the lower file and
# the new upper one of a copy-up, a directory's layers for readdir. Those
# are the kernel's, on behalf of a call already judged by its overlay
# path: each must neither be refused (a detached mount, as the layer's
# mount is in no namespace) nor judged a second time (two records for one
# refusal in audit mode, two for one exec). As in a container, the layers'
# file system is mounted nowhere in the sandbox's mount namespace: each
# probe runs in a namespace of its own whose /ovl-layers is unmounted
# (the overlay at /ovm keeps its layers). Cases, from the sandbox:
#   read          an allowed lower file: OK, no record
#   read-denied   a lower file outside the scope: EPERM, one record
#                 naming its overlay path
#   write-copyup  an allowed, writable lower file opened for write (a
#                 copy-up: its data, attributes, times, xattrs): OK, no
#                 record, and the upper layer has it
#   chmod-copyup  chmod of another (a metadata copy-up): OK, no record
#   xattr-copyup  a write open of a lower file with a trusted.* xattr
#                 (6.1's tmpfs has no user.*), which the copy-up sets on
#                 the upper file: OK, no record
#   exec          a lower copy of fileprobe in the read scope: runs
#   exec-denied   one outside it: EPERM, one record
#   readdir       `ls` of an allowed lower directory lists its files
#   mprotect      a read-only mapping of the allowed lower fileprobe made
#                 executable (execprobe mprotect-exec): OK, no record. On
#                 6.8 and later the mapping holds overlayfs's backing file,
#                 on the layer's private mount: it was refused as a
#                 detached mount (mapped_path() in bpf/file.bpf.c)
#   mprotect-denied  the same of a lower file the sandbox may read and
#                 write, so not execute: EPERM, one record naming its
#                 overlay path
# then in an audit-mode sandbox: read-denied, exec-denied and
# mprotect-denied run, with exactly one audit record each. And the
# sandbox's own writes stay judged: a write open and a setxattr outside
# the write scope, refused.
#
# Env (tests/vm/suite.sh): STOCKADE, TOOLS, CGROUP_ROOT.

. tests/vm/lib.sh

T=overlay
probe=$TOOLS/fileprobe
sbx=$CGROUP_ROOT/ovl-sbx
aud=$CGROUP_ROOT/ovl-audit
work=/tmp/overlay
log=$work/agent.log
bpffs=/sys/fs/bpf/overlay
cases=$work/cases
FP='"comm":"fileprobe"'
L=/ovl-layers
agent=

if [ "$(hostname)" != stockade-vm ] || [ ! -f /init ]; then
	t_fail $T/guest "refusing to run outside the test VM: this script mounts over $L and /ovm"
	exit 0
fi

cleanup() {
	if [ -n "$agent" ]; then
		kill -TERM "$agent" 2>/dev/null
		wait_for 20 eval '! alive "$agent"' || kill -9 "$agent" 2>/dev/null
		wait "$agent" 2>/dev/null
	fi
	[ ! -d "$bpffs" ] || "$STOCKADE" detach --all --bpffs "$bpffs" > /dev/null 2>&1
	umount /ovm 2>/dev/null
	umount "$L" 2>/dev/null
	cg_remove "$sbx" "$aud"
	rm -rf /ovm "$L"
}
trap cleanup EXIT

rm -rf "$work" /ovm "$L"
mkdir -p "$work/policies" /ovm "$L"
: > "$log"
set -f

# The layers on a tmpfs of their own (overlayfs needs trusted.* xattrs on
# its upper layer), the overlay at /ovm.
mount -t tmpfs ovl-layers "$L"
mkdir -p "$L/lower/in/d" "$L/lower/secret" "$L/lower/bin" "$L/lower/sbin" \
	"$L/upper" "$L/work"
for f in f w c x; do
	echo data > "$L/lower/in/$f"
done
echo data > "$L/lower/secret/s"
echo a > "$L/lower/in/d/one"
echo b > "$L/lower/in/d/two"
cp "$probe" "$L/lower/bin/fileprobe"
cp "$probe" "$L/lower/sbin/fileprobe"
# An xattr for the copy-up to copy (trusted.*: 6.1's tmpfs has no user.*).
"$probe" setxattr "$L/lower/in/x" > "$work/xattr.out" 2>&1
if ! grep -qx OK "$work/xattr.out"; then
	t_fail $T/xattr-fixture "$(tail -n 1 "$work/xattr.out")"
fi
if ! mount -t overlay ovm -o "lowerdir=$L/lower,upperdir=$L/upper,workdir=$L/work" \
	/ovm 2> "$work/mount.err"; then
	t_fail $T/mount "no overlay mount: $(cat "$work/mount.err")"
	exit 0
fi
t_ok $T/mount

# The probe in a mount namespace of its own where the layers' file system
# is mounted nowhere, a container's view: only /ovm shows them.
cat > "$work/inns.sh" <<'SH'
exec unshare -m --propagation private sh -c 'umount -l /ovl-layers && exec "$0" "$@"' "$@"
SH
probe="sh"
probe_flags="$work/inns.sh $TOOLS/fileprobe"

for p in ovl:enforce:/ovl-sbx ovl-audit:audit:/ovl-audit; do
	cat > "$work/policies/${p%%:*}.yaml" <<YAML
name: ${p%%:*}
mode: $(echo "$p" | cut -d: -f2)
cgroups: [${p##*:}]
network:
  default: deny
files:
  read: [/ovm/in, /ovm/bin, /opt/stockade, /proc, /lib, /usr, /bin]
  write: [/ovm/in]
capabilities: [CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID,
  SYS_ADMIN]
YAML
done
mkdir -p "$sbx" "$aud"

"$STOCKADE" agent --policy "$work/policies" --bpffs "$bpffs" --detach-on-exit \
	--log "$log" > /dev/null 2> "$work/agent.err" &
agent=$!
agent_ready_or_fail $T/agent-ready "$log" "$agent" "$work/agent.err" || exit 0

DEN='"reason":"outside_scope"'

phase=enforce
phase_in "$sbx" deny ovl "$FP"
kase read OK '' '' open-read /ovm/in/f
kase read-denied EPERM "\"op\":\"open_read\" \"path\":\"/ovm/secret/s\" $DEN" '' open-read /ovm/secret/s
kase write-copyup OK '' '' open-write /ovm/in/w
kase chmod-copyup OK '' '' chmod /ovm/in/c 0600
kase xattr-copyup OK '' '' open-write /ovm/in/x
kase exec OK '' '' exec /ovm/bin/fileprobe
kase exec-denied EPERM "\"op\":\"exec\" \"path\":\"/ovm/sbin/fileprobe\" $DEN" '' exec /ovm/sbin/fileprobe
kase write-denied EPERM "\"op\":\"open_write\" \"path\":\"/ovm/secret/s\" $DEN" '' open-write /ovm/secret/s
kase setxattr-denied EPERM '"op":"setxattr"' '' setxattr /ovm/bin/fileprobe
judge_cases
if [ -f "$L/upper/in/w" ] && [ -f "$L/upper/in/c" ] && [ -f "$L/upper/in/x" ]; then
	t_ok $T/enforce/copied-up
else
	t_fail $T/enforce/copied-up "the upper layer lacks in/w, in/c or in/x: $(ls "$L/upper/in" 2>&1 | tr '\n' ' ')"
fi
out=$(timeout 30 sh "$work/inns.sh" sh -c 'echo $$ > "$1/cgroup.procs" && exec ls /ovm/in/d' sh "$sbx" 2>&1 | tr '\n' ' ')
if [ "$out" = "one two " ]; then
	t_ok $T/enforce/readdir
else
	t_fail $T/enforce/readdir "ls /ovm/in/d from the sandbox: '$out'"
fi

# mprotect_cases: a read-only mapping of a lower file made executable.
mprotect_cases() {
	probe_flags="$work/inns.sh $TOOLS/execprobe"
	kase mprotect OK '' '' mprotect-exec /ovm/bin/fileprobe
	kase mprotect-denied EPERM "\"op\":\"mprotect_exec\" \"path\":\"/ovm/in/f\" \"reason\":\"not_executable\"" '' \
		mprotect-exec /ovm/in/f
	judge_cases
	probe_flags="$work/inns.sh $TOOLS/fileprobe"
}
phase_in "$sbx" deny ovl '"comm":"execprobe"'
mprotect_cases

phase=audit
phase_in "$aud" audit ovl-audit "$FP"
kase read-denied OK "\"op\":\"open_read\" \"path\":\"/ovm/secret/s\" $DEN" '' open-read /ovm/secret/s
kase exec-denied OK "\"op\":\"exec\" \"path\":\"/ovm/sbin/fileprobe\" $DEN" '' exec /ovm/sbin/fileprobe
judge_cases
phase_in "$aud" audit ovl-audit '"comm":"execprobe"'
mprotect_cases

t_no_lost
