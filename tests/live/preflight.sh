#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# `stockade agent --preflight` on the host (make live-test): one line per
# check, ok or missing with its fix, exit 0 all present, 1 otherwise, and
# nothing loaded, pinned or mounted on the host.
#   1. Defaults: each line's verdict is the one this script finds by
#      itself (/sys/kernel/security/lsm, BTF, cgroup2, bpffs, CapEff);
#      the exit code follows them.
#   2. --bpffs on a directory that is not bpffs: missing, naming the
#      directory and `mount -t bpf`; --cgroup-root on one that is not
#      cgroup2: missing, naming --cgroup-root; the other lines stay ok.
#   3. securityfs unmounted (in a mount namespace of the test's own): the
#      LSM list is still read (a private mount), and a note says
#      securityfs is not mounted and how to mount it; the host's mount is
#      untouched.
#   4. BTF hidden (/dev/null bound over it, in a namespace of the test's
#      own): missing, naming CONFIG_DEBUG_INFO_BTF.
#   5. No capabilities (setpriv, empty bounding set): missing privilege.
# No agent is started, so no lock is taken.
#
# Environment: STOCKADE (binary).
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

need_bpffs preflight
work=$(mktemp -d /tmp/stockade-preflight.XXXXXX)
pindir=/sys/fs/bpf/stockade-pf-$$
trap 'rm -rf "$work"; rmdir "$pindir" 2>/dev/null' EXIT

# line OUT CHECK: the line of CHECK in OUT ("ok ..." or "missing ...").
line() { awk -v c="$2" '$2 == c { print; exit }' "$1"; }
verdict() { line "$1" "$2" | cut -d' ' -f1; }

# ---- 1. defaults, judged against what the script finds ----
"$STOCKADE" agent --preflight --bpffs "$pindir" > "$work/out" 2> "$work/err"
rc=$?
lsm=$(cat /sys/kernel/security/lsm 2>/dev/null)
case ",$lsm," in *,bpf,*) want_lsm=ok ;; *) want_lsm=missing ;; esac
[ -r /sys/kernel/btf/vmlinux ] && want_btf=ok || want_btf=missing
need_cgroup2 preflight
want_cg=ok
[ "$(fs_at /sys/fs/bpf)" = bpf ] && want_bpf=ok || want_bpf=missing
eff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
# CAP_SYS_ADMIN (21), or CAP_BPF (39) + CAP_PERFMON (38) + CAP_NET_ADMIN (12).
want_priv=$(awk -v h="$eff" 'BEGIN {
	v = 0; for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(tolower(h), i, 1)) - 1
	sa = int(v / 2^21) % 2; bpf = int(v / 2^39) % 2; pm = int(v / 2^38) % 2; na = int(v / 2^12) % 2
	print (sa || (bpf && pm && na)) ? "ok" : "missing" }')
bad=
for pair in lsm:$want_lsm btf:$want_btf cgroup2:$want_cg bpffs:$want_bpf privilege:$want_priv; do
	c=${pair%%:*}
	w=${pair#*:}
	got=$(verdict "$work/out" "$c")
	[ "$got" = "$w" ] || bad="$bad $c: $got (expected $w);"
done
want_rc=0
case "$want_lsm$want_btf$want_cg$want_bpf$want_priv" in *missing*) want_rc=1 ;; esac
if [ -z "$bad" ] && [ "$rc" = "$want_rc" ] && [ "$(grep -c . "$work/out")" -ge 6 ]; then
	ok "defaults: five lines as this host is (lsm $want_lsm, btf $want_btf, cgroup2 $want_cg, bpffs $want_bpf, privilege $want_priv), exit $rc"
else
	not_ok "defaults" "exit $rc (want $want_rc);$bad $(tr '\n' '|' < "$work/out") $(tr '\n' ' ' < "$work/err")"
fi
if [ ! -e "$pindir" ]; then
	ok "defaults: nothing pinned (no $pindir)"
else
	not_ok "defaults: nothing pinned" "$pindir exists"
fi

# ---- 2. not bpffs, not cgroup2 ----
mkdir "$work/notbpf"
"$STOCKADE" agent --preflight --bpffs "$work/notbpf/stockade" --cgroup-root "$work" \
	> "$work/out2" 2>&1
rc=$?
b=$(line "$work/out2" bpffs)
c=$(line "$work/out2" cgroup2)
case $b in
"missing bpffs "*"bpffs is not mounted at $work/notbpf"*"mount -t bpf bpf $work/notbpf"*)
	ok "--bpffs on a plain directory: missing, with the mount command" ;;
*) not_ok "--bpffs on a plain directory" "'$b'" ;;
esac
case $c in
"missing cgroup2 "*"$work is not a cgroup2 mount"*"--cgroup-root"*)
	ok "--cgroup-root on a plain directory: missing, naming --cgroup-root" ;;
*) not_ok "--cgroup-root on a plain directory" "'$c'" ;;
esac
if [ "$rc" = 1 ] && [ "$(verdict "$work/out2" btf)" = "$want_btf" ] &&
   [ "$(verdict "$work/out2" lsm)" = "$want_lsm" ] &&
   grep -q '^preflight: [0-9]* missing' "$work/out2"; then
	ok "two missing: exit 1, the other checks as before, a closing count"
else
	not_ok "two missing" "exit $rc: $(tr '\n' '|' < "$work/out2")"
fi

# ---- 3. securityfs not mounted ----
if [ "$(fs_at /sys/kernel/security)" = securityfs ] && [ "$want_lsm" = ok ]; then
	unshare -m sh -c 'umount /sys/kernel/security && exec "$0" agent --preflight --bpffs "$1"' \
		"$STOCKADE" "$pindir" > "$work/out3" 2>&1
	rc=$?
	if [ "$(verdict "$work/out3" lsm)" = ok ] &&
	   grep -q 'securityfs is not mounted at /sys/kernel/security.*mount -t securityfs securityfs /sys/kernel/security' "$work/out3" &&
	   [ "$(fs_at /sys/kernel/security)" = securityfs ]; then
		ok "securityfs unmounted: the list still read (private mount), a note with the mount command, exit $rc; the host's mount untouched"
	else
		not_ok "securityfs unmounted" "exit $rc: $(tr '\n' '|' < "$work/out3")"
	fi
else
	skip "securityfs unmounted" "needs securityfs mounted and 'bpf' in the LSM list here, to take it away in a namespace"
fi

# ---- 4. no BTF ----
if [ "$want_btf" = ok ]; then
	unshare -m sh -c 'mount --bind /dev/null /sys/kernel/btf/vmlinux && exec "$0" agent --preflight --bpffs "$1"' \
		"$STOCKADE" "$pindir" > "$work/out4" 2>&1
	rc=$?
	case $(line "$work/out4" btf) in
	"missing btf "*CONFIG_DEBUG_INFO_BTF*)
		[ "$rc" = 1 ] && ok "BTF hidden: missing, naming CONFIG_DEBUG_INFO_BTF, exit 1" ||
			not_ok "BTF hidden" "exit $rc" ;;
	*) not_ok "BTF hidden" "$(tr '\n' '|' < "$work/out4")" ;;
	esac
else
	skip "BTF hidden" "this host has no BTF to hide"
fi

# ---- 5. no privilege ----
setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- \
	"$STOCKADE" agent --preflight --bpffs "$pindir" > "$work/out5" 2>&1
rc=$?
case $(line "$work/out5" privilege) in
"missing privilege "*CAP_BPF*)
	[ "$rc" = 1 ] && ok "no capabilities: missing privilege, exit 1" ||
		not_ok "no capabilities" "exit $rc" ;;
*) not_ok "no capabilities" "$(tr '\n' '|' < "$work/out5")" ;;
esac

summary
