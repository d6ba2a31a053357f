#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Fetch qemu 10 from bookworm-backports once, for the 6.12 test kernel.
#
#   tests/vm/qemu.sh [CACHE_DIR]        (default build/vm/qemu)
#
# Why: Debian 12's qemu 7.2 double-faults the 6.12 kernel under TCG before
# init runs; qemu 10 from backports boots it. The 6.1 kernel keeps the
# system's qemu 7.2 (README "Testing"): it is known good there, and
# `make vm-shell`, `vm-demo` and the file benchmark, which boot 6.1, then
# need nothing from backports.
#
# qemu-system-x86 (the binary) and qemu-system-data (its option ROMs and
# qboot) are downloaded through the private backports apt
# (tests/vm/backports.sh, lists under CACHE_DIR/../apt) and unpacked with
# dpkg-deb -x under CACHE_DIR/root, never installed. qemu-system-common
# (display and audio modules, helpers) is not needed: the guest runs
# -nographic with no network. The binary's shared libraries come from the
# machine: ldd must find them all, else this fails and names them (they
# would then have to come from backports too, through LD_LIBRARY_PATH).
# Once CACHE_DIR/stamp exists nothing is downloaded again.
#
# Leaves CACHE_DIR/qemu-system-x86_64 (a link to the binary) and
# CACHE_DIR/share (its data directory, for qemu -L).
set -eu

cache=${1:-build/vm/qemu}
mkdir -p "$cache"

die() { echo "vm-qemu: $*" >&2; exit 1; }

. "$(dirname "$0")/backports.sh"
bp_init "$cache/../apt"

if [ ! -f "$cache/stamp" ]; then
	rm -rf "$cache/root" "$cache"/*.deb
	echo "vm-qemu: downloading qemu-system-x86 qemu-system-data (bookworm-backports)" >&2
	bp_download "$cache" qemu-system-x86 qemu-system-data ||
		die "apt-get download of qemu-system-x86 qemu-system-data from backports failed"
	for deb in "$cache"/*.deb; do
		dpkg-deb -x "$deb" "$cache/root" || die "cannot unpack $deb"
	done
	bin=$cache/root/usr/bin/qemu-system-x86_64
	[ -x "$bin" ] || die "qemu-system-x86 ships no /usr/bin/qemu-system-x86_64"
	[ -r "$cache/root/usr/share/qemu/qboot.rom" ] || die "qemu-system-data ships no qboot.rom"
	ln -sf root/usr/bin/qemu-system-x86_64 "$cache/qemu-system-x86_64"
	ln -sfn root/usr/share/qemu "$cache/share"
	missing=$(ldd "$bin" 2>&1 | awk '/not found/ { print $1 }' | tr '\n' ' ')
	[ -z "$missing" ] || die "$bin needs libraries this machine lacks: $missing(bring them from backports with dpkg-deb -x and LD_LIBRARY_PATH)"
	"$bin" --version | head -n 1 > "$cache/stamp" || die "$bin --version failed"
	rm -f "$cache"/*.deb
fi
echo "vm-qemu: using $(cat "$cache/stamp")"
