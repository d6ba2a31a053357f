#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Assemble the test VM's initramfs (an uncompressed newc cpio).
#
#   tests/vm/mkinitramfs.sh OUT.cpio STOCKADE TOOLS_DIR KERNEL_CACHE
#
# Layout in the guest, repo-relative below /opt/stockade so policy paths
# in tests read the same as on the host:
#   /init                         tests/vm/init
#   /bin/busybox (+ /bin/sh)      busybox-static; init installs the applets
#   /opt/stockade/stockade        STOCKADE (must be static)
#   /opt/stockade/tools/*         every executable in TOOLS_DIR (static),
#                                 and tools/demo-files.sh (make demo)
#   /opt/stockade/tests/live/     the host live tests and their policies
#   /opt/stockade/tests/vm/       this suite
#   /opt/stockade/agent/lsm_table.c  the BPF-LSM table (tests/vm/lsm-probe.sh)
#   /lib/modules/NN-name.ko       tests/vm/modules, from KERNEL_CACHE
#   /usr/bin/python3              Debian's, with its libraries and the
#                                 modules tests/vm/workload.py imports
#   /usr/sbin/runc                Debian's runc, with its libraries
#   /opt/oci/config.json          runc's OCI template (tests/vm/runc.sh):
#                                 `runc spec`, adjusted (see below)
#   /opt/oci/config-ctr.json      the same for tests/vm/containers.sh, with
#                                 placeholders for annotations and hooks
#   /opt/oci/rootfs/              its rootfs: busybox-static and its applets
#                                 in /bin, /etc/{passwd,group,shadow} (a fake
#                                 hash), /payload.sh (tests/vm/runc-payload.sh),
#                                 /ctr-payload.sh (tests/vm/ctr-payload.sh)
# Uncompressed because the kernel unpacks it under TCG emulation, where
# gunzip costs more than qemu copying a few extra megabytes.
set -eu

[ $# -eq 4 ] || { echo "usage: $0 OUT.cpio STOCKADE TOOLS_DIR KERNEL_CACHE" >&2; exit 2; }
out=$1 stockade=$2 tools=$3 kcache=$4
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
busybox=${BUSYBOX:-/bin/busybox}

die() { echo "vm-initramfs: $*" >&2; exit 1; }

# The guest has no libc: a dynamic binary would fail there with a bare
# "not found" from the shell, so refuse it here with a clear reason.
need_static() {
	[ -x "$1" ] || die "$1: missing or not executable"
	if readelf -l "$1" 2>/dev/null | grep -q 'program interpreter'; then
		die "$1 is dynamically linked; the VM needs static binaries (build with STATIC=1)"
	fi
}

need_static "$busybox"
need_static "$stockade"
[ -d "$tools" ] || die "$tools: no such directory (tools are built with STATIC=1 into it)"

# A private staging directory, so two runs at once cannot mix their trees.
stage=$(mktemp -d "$out.XXXXXX")
trap 'rm -rf "$stage" "$out.tmp.$$"' EXIT
mkdir -p "$stage"/bin "$stage"/dev "$stage"/proc "$stage"/sys "$stage"/tmp \
	 "$stage"/run "$stage"/root "$stage"/lib/modules \
	 "$stage"/opt/stockade/tools "$stage"/opt/stockade/tests
cp "$busybox" "$stage"/bin/busybox
ln -s busybox "$stage"/bin/sh
cp "$here"/init "$stage"/init
chmod 755 "$stage"/init
# The kernel opens /dev/console for init before init can mount devtmpfs.
mknod "$stage"/dev/console c 5 1 2>/dev/null ||
	echo "vm-initramfs: warning: cannot mknod dev/console (not root?)" >&2

cp "$stockade" "$stage"/opt/stockade/stockade
# Static, but for tools/setupprobe-ld, which is dynamic on purpose (the
# Makefile says why): its libraries are bundled below.
for t in "$tools"/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	case $t in */setupprobe-ld) ;; *) need_static "$t" ;; esac
	cp "$t" "$stage"/opt/stockade/tools/
done
cp "$repo"/tools/demo-files.sh "$stage"/opt/stockade/tools/
cp -R "$repo"/tests/vm "$stage"/opt/stockade/tests/vm
# tests/vm/dcache.sh's inode-reuse cases: a 4 MiB image with a
# journal, mounted as ext4 (busybox's mke2fs makes none). Without one, ext4 skips an inode
# number freed less than a minute ago while its inode table block is
# cached (recently_deleted()), and whether the number came back depended
# on the guest's clock crossing a second between the delete and the next
# create. Gzipped: 5 KiB in the initramfs.
mkdir -p "$stage"/opt/stockade/data
rm -f "$stage"/opt/stockade/data/ext4.img
truncate -s 4M "$stage"/opt/stockade/data/ext4.img
# ext3's features (a journal and nothing newer), which any kernel's ext4
# mounts, whatever the host's mke2fs.conf adds to ext4's.
mke2fs -q -F -t ext3 -j -b 1024 "$stage"/opt/stockade/data/ext4.img ||
	die "mke2fs (e2fsprogs) failed making the ext4 image for tests/vm/dcache.sh"
gzip -9f "$stage"/opt/stockade/data/ext4.img
# The BPF-LSM table, read by tests/vm/lsm-probe.sh.
mkdir -p "$stage"/opt/stockade/agent
cp "$repo"/agent/lsm_table.c "$stage"/opt/stockade/agent/
if [ -d "$repo"/tests/live ]; then
	cp -R "$repo"/tests/live "$stage"/opt/stockade/tests/live
fi
if [ -d "$repo"/policy/examples ]; then
	mkdir -p "$stage"/opt/stockade/policy
	cp -R "$repo"/policy/examples "$stage"/opt/stockade/policy/examples
fi

# bundle_libs BINARY: the shared libraries ldd names for BINARY (and the
# dynamic loader), at the same paths in the guest, which has no libc of its
# own. Copied over (not linked): two binaries sharing libc just copy it
# twice onto the same file.
bundle_libs() {
	ldd "$1" | awk '/=>/ { print $3 } /^[[:space:]]*\/lib64\// { print $1 }' |
	while read -r lib; do
		[ -f "$lib" ] || continue
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done
}

[ ! -x "$tools/setupprobe-ld" ] || bundle_libs "$tools/setupprobe-ld"

# Python, for the real-workload test (tests/vm/workload.sh): the Debian
# interpreter, the shared libraries ldd names (the guest has no libc
# otherwise) and exactly the standard-library modules tests/vm/workload.py
# imports, as the interpreter itself lists them (-S -I: the same set in
# the guest). A few megabytes, not the whole library.
python=${PYTHON:-/usr/bin/python3}
if [ -x "$python" ]; then
	py=$(readlink -f "$python")
	mkdir -p "$stage/usr/bin"
	cp "$py" "$stage/usr/bin/python3"
	bundle_libs "$py"
	(cd /tmp && "$py" -S -I "$here/workload.py" --modules) | grep -v '/workload\.py$' |
	while read -r mod; do
		mkdir -p "$stage$(dirname "$mod")"
		cp "$mod" "$stage$mod"
	done
	# Its platform library directory, empty: python warns without it.
	mkdir -p "$stage$("$py" -S -I -c 'import sys; print(sys.path[-1])')"
	# Name lookups from files only: without nsswitch.conf glibc asks DNS
	# first, a connect the workload's policy (rightly) refuses.
	mkdir -p "$stage/etc"
	printf '127.0.0.1 localhost\n::1 localhost\n' > "$stage/etc/hosts"
	printf 'hosts: files\n' > "$stage/etc/nsswitch.conf"
else
	echo "vm-initramfs: no $python: the workload test runs without python (apt-get install python3-minimal)" >&2
fi

# runc, for real containers (tests/vm/runc.sh): Debian's binary, its
# libraries (libseccomp, libc), and one OCI bundle whose rootfs is
# busybox-static with its applets, a fake /etc/shadow for the payload to
# try, and the payload itself (tests/vm/runc-payload.sh). config.json is
# `runc spec`'s own, so it stays what this runc version expects, with only
# what a detached test container needs changed (python's json, not sed:
# a changed layout of `runc spec` cannot then go unnoticed):
#   process.terminal false   -d with pass-through stdio: the payload's
#                            lines land in the file the test gives runc;
#   process.args             /bin/sh /payload.sh @TRIES@;
#   root.path                the shared rootfs (read-only in every
#                            container), so a container's own bundle holds
#                            only its config.json;
#   linux.cgroupsPath        @CGROUPS_PATH@, set per container;
#   namespaces               as `runc spec` makes them, a private network
#                            namespace included (what Docker gives a
#                            container): only a loopback, down, so a
#                            metadata connect stockade let through fails
#                            with ENETUNREACH, never EPERM, and the test can
#                            tell them apart.
# The guest writes each container's config.json from this template with
# the two placeholders replaced.
runc=${RUNC:-/usr/sbin/runc}
if [ -x "$runc" ] && [ -x "$python" ]; then
	mkdir -p "$stage/usr/sbin" "$stage/opt/oci/rootfs"
	cp "$runc" "$stage/usr/sbin/runc"
	bundle_libs "$runc"
	rootfs=$stage/opt/oci/rootfs
	mkdir -p "$rootfs"/bin "$rootfs"/etc "$rootfs"/proc "$rootfs"/sys \
		 "$rootfs"/dev "$rootfs"/tmp "$rootfs"/root
	cp "$busybox" "$rootfs/bin/busybox"
	for applet in $("$busybox" --list); do
		[ "$applet" = busybox ] || ln -s busybox "$rootfs/bin/$applet"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\n' > "$rootfs/etc/passwd"
	printf 'root:x:0:\n' > "$rootfs/etc/group"
	echo 'root:$6$container$notarealhash:19000:0:99999:7:::' > "$rootfs/etc/shadow"
	chmod 640 "$rootfs/etc/shadow"
	cp "$here/runc-payload.sh" "$rootfs/payload.sh"
	cp "$here/ctr-payload.sh" "$rootfs/ctr-payload.sh"
	chmod 755 "$rootfs/payload.sh" "$rootfs/ctr-payload.sh"
	(cd "$stage/opt/oci" && "$runc" spec) ||
		die "runc spec failed in $stage/opt/oci"
	"$python" -S -I - "$stage/opt/oci/config.json" <<'PY' ||
import json, os, sys
path = sys.argv[1]
with open(path) as f:
    spec = json.load(f)
spec["process"]["terminal"] = False
spec["process"]["args"] = ["/bin/sh", "/payload.sh", "@TRIES@"]
spec["root"] = {"path": "/opt/oci/rootfs", "readonly": True}
spec["linux"]["cgroupsPath"] = "@CGROUPS_PATH@"
types = [ns["type"] for ns in spec["linux"]["namespaces"]]
if "network" not in types:
    sys.exit("runc spec made no network namespace: " + ", ".join(types))
with open(path, "w") as f:
    json.dump(spec, f, indent="\t")
    f.write("\n")
# tests/vm/containers.sh's template: the same, with the payload of
# tests/vm/ctr-payload.sh and two more placeholders, each alone on its
# line, which the guest replaces with JSON members: the runtime's
# annotations, and the createRuntime hook (stockade oci-hook) or none.
spec["process"]["args"] = ["/bin/sh", "/ctr-payload.sh", "@MODE@", "@ADDR@", "@PORT@", "@FORKS@"]
spec["annotations"] = {"@ANNOTATIONS@": ""}
spec["hooks"] = {"@HOOKS@": []}
with open(os.path.join(os.path.dirname(path), "config-ctr.json"), "w") as f:
    json.dump(spec, f, indent="\t")
    f.write("\n")
PY
		die "adjusting $stage/opt/oci/config.json failed (see above)"
elif [ ! -x "$runc" ]; then
	echo "vm-initramfs: no $runc: the runc tests will fail (apt-get install runc, or make deps)" >&2
else
	echo "vm-initramfs: no $python to write runc's config.json: the runc tests will fail (apt-get install python3-minimal)" >&2
fi

# Modules, numbered to keep the listed load order (init loads them by glob).
n=10
grep -v '^[[:space:]]*\(#\|$\)' "$here"/modules | while read -r mod; do
	# 6.12's package compresses its modules (.ko.xz), and busybox's
	# insmod takes only plain ones: unpacked here.
	ko=$(find "$kcache"/root/lib/modules -name "$mod.ko" -o -name "$mod.ko.xz" | head -n 1)
	[ -n "$ko" ] || die "module $mod (tests/vm/modules) is not in $kcache"
	case $ko in
	*.xz) xz -dc "$ko" > "$stage/lib/modules/$n-$mod.ko" ||
		die "unpacking $ko failed (is xz-utils installed?)" ;;
	*) cp "$ko" "$stage/lib/modules/$n-$mod.ko" ;;
	esac
	n=$((n + 1))
done

(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) > "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
echo "vm-initramfs: $out ($(($(wc -c < "$out") / 1024)) KiB)"
