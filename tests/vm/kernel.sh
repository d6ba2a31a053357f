#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Fetch one test VM kernel once and check it can run our tests.
#
#   tests/vm/kernel.sh [CACHE_DIR [SERIES]]   (default build/vm/kernel-6.1 6.1)
#
# The suite runs on two kernels (README "Testing"), both Debian cloud
# kernels, built with CONFIG_BPF_LSM=y and with `bpf` in their default LSM
# list, which the build host's kernel refuses:
#   6.1   Debian 12's own: linux-image-cloud-amd64's current dependency,
#         through the machine's apt configuration as it is.
#   6.12  bookworm-backports' newest linux-image-6.12.*-cloud-amd64
#         (the -unsigned build where there is one: the same kernel, without
#         the signed wrapper package), through a private apt for backports
#         under CACHE_DIR/../apt (tests/vm/backports.sh says how it reaches
#         the mirror without changing the machine's apt configuration).
# The package is unpacked with dpkg -x, never installed. Once
# CACHE_DIR/stamp exists nothing is downloaded again, not even apt's lists:
# delete the directory to pick up a newer kernel.
#
# Leaves CACHE_DIR/vmlinuz, CACHE_DIR/config and CACHE_DIR/release (the
# `uname -r` string) and prints the version used.
# Env: VM_KERNEL_PKG=linux-image-... picks a package instead of the
# metapackage's dependency.
set -eu

cache=${1:-build/vm/kernel-6.1}
series=${2:-6.1}
mkdir -p "$cache"

die() { echo "vm-kernel: $*" >&2; exit 1; }

case $series in
6.1)
	resolve() {
		apt-cache depends linux-image-cloud-amd64 2>/dev/null |
			awk '/Depends: linux-image/ { print $2; exit }'
	}
	download() {
		rm -rf "$cache/root" "$cache"/*.deb
		echo "vm-kernel: downloading $1" >&2
		# Run the download as root: apt's _apt sandbox user cannot write
		# into a root-owned build tree and would only print a warning.
		(cd "$cache" && apt-get download -q -o APT::Sandbox::User=root "$1") >&2
	}
	update() { apt-get update -q >&2; }
	;;
6.12)
	. "$(dirname "$0")/backports.sh"
	bp_init "$cache/../apt"
	# Backports' metapackage names the signed image; its -unsigned twin
	# holds the same vmlinuz in a package of its own.
	resolve() {
		_p=$(bp_resolve linux-image-cloud-amd64)
		case $_p in
		linux-image-6.12.*) ;;
		*) return 0 ;;	# backports moved on: say so below
		esac
		if bp_has "$_p-unsigned"; then echo "$_p-unsigned"; else echo "$_p"; fi
	}
	download() {
		rm -rf "$cache/root" "$cache"/*.deb
		echo "vm-kernel: downloading $1 (bookworm-backports)" >&2
		bp_download "$cache" "$1"
	}
	update() { bp_update; }
	;;
*) die "unknown kernel series '$series' (6.1 or 6.12)" ;;
esac

if [ ! -f "$cache/stamp" ]; then
	pkg=${VM_KERNEL_PKG:-}
	updated=0
	if [ -z "$pkg" ]; then
		pkg=$(resolve)
		if [ -z "$pkg" ]; then
			# A fresh machine has no package lists yet.
			echo "vm-kernel: no apt lists for linux-image-cloud-amd64; running apt-get update" >&2
			update || die "apt-get update failed"
			updated=1
			pkg=$(resolve)
		fi
		[ -n "$pkg" ] || die "cannot resolve linux-image-cloud-amd64's $series kernel package (apt-cache depends found none); set VM_KERNEL_PKG=linux-image-..."
	fi
	if ! download "$pkg"; then
		# Stale lists name a kernel ABI the mirror has since replaced.
		[ "$updated" = 0 ] || die "apt-get download $pkg failed"
		echo "vm-kernel: download failed; refreshing apt lists and retrying" >&2
		update || die "apt-get update failed"
		[ -n "${VM_KERNEL_PKG:-}" ] || pkg=$(resolve)
		download "$pkg" || die "apt-get download $pkg failed"
	fi
	deb=$(ls "$cache"/*.deb)
	dpkg-deb -x "$deb" "$cache/root" || die "cannot unpack $deb"
	vmlinuz=$(ls "$cache"/root/boot/vmlinuz-* 2>/dev/null | head -n 1)
	config=$(ls "$cache"/root/boot/config-* 2>/dev/null | head -n 1)
	[ -n "$vmlinuz" ] && [ -n "$config" ] || die "$deb ships no /boot/vmlinuz-* or /boot/config-*"
	ln -sf "${vmlinuz#"$cache"/}" "$cache/vmlinuz"
	ln -sf "${config#"$cache"/}" "$cache/config"
	basename "$vmlinuz" | sed 's/^vmlinuz-//' > "$cache/release"
	printf '%s %s\n' "$(dpkg-deb -f "$deb" Package)" "$(dpkg-deb -f "$deb" Version)" > "$cache/stamp"
	rm -f "$deb"	# the unpacked tree is all we use
fi

# The BPF LSM must be built in: nothing else in the suite means anything
# without it. The LSM list check happens in the guest (tests/vm/suite.sh),
# because lsm= on the command line can still override CONFIG_LSM.
grep -q '^CONFIG_BPF_LSM=y$' "$cache/config" ||
	die "kernel $(cat "$cache/release") lacks CONFIG_BPF_LSM=y ($cache/config): pick another kernel with VM_KERNEL_PKG=, then rm -rf $cache"

# Everything the guest uses must be there. Built-in (=y) is what we expect:
# the initramfs carries only the modules listed in tests/vm/modules, so an
# option that is (or becomes) =m needs its .ko listed there.
missing=""
for opt in CGROUPS CGROUP_BPF BPF_SYSCALL BPF_JIT DEBUG_INFO_BTF SECURITY \
	   SECURITYFS TMPFS DEVTMPFS PROC_FS SYSFS BLK_DEV_INITRD \
	   SERIAL_8250_CONSOLE NET INET IPV6 UNIX PACKET; do
	if grep -q "^CONFIG_$opt=m\$" "$cache/config"; then
		echo "vm-kernel: warning: CONFIG_$opt is a module: list its .ko in tests/vm/modules" >&2
	elif ! grep -q "^CONFIG_$opt=y\$" "$cache/config"; then
		missing="$missing CONFIG_$opt"
	fi
done
[ -z "$missing" ] || die "kernel $(cat "$cache/release") lacks$missing ($cache/config)"

echo "vm-kernel: using $(cat "$cache/stamp") ($(cat "$cache/release"))"
