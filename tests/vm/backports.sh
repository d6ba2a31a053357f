# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# Sourced by tests/vm/kernel.sh and tests/vm/qemu.sh: a private apt for
# bookworm-backports, which holds the 6.12 cloud kernel and qemu 10.
#
# The machine's apt sources name only the release and its updates. The
# backports suite lives on the same mirror, signed with the same keyring,
# so it is reached through the SAME URI and Signed-By as the machine's own
# entry for the release (read from /etc/apt/sources.list and
# /etc/apt/sources.list.d/*: deb822 .sources or one-line .list), with
# "-backports" after the codename. Everything apt writes for it stays under
# BP_DIR (build/vm/apt): a one-line sources list, its package lists and its
# cache, passed with -o Dir::Etc::SourceList / SourceParts=/nonexistent /
# Dir::State::Lists / Dir::Cache. The machine's apt configuration, lists
# and cache are never touched, and nothing is installed: packages are only
# downloaded, then unpacked with dpkg-deb -x by the callers.
#
# bp_init BP_DIR     write the sources list (once), set BP_OPTS
# bp_update          apt-get update of the private lists
# bp_resolve PKG     the first package PKG depends on, from backports
# bp_has PKG         backports has PKG
# bp_download DIR PKG...  download into DIR (as root: see kernel.sh)

bp_die() { echo "vm-backports: $*" >&2; exit 1; }

# Prints "URI KEYRING" of the machine's entry for suite $1 (the release's
# codename), deb822 or one-line; nothing if there is none.
bp_mirror() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		# deb822: paragraphs split by blank lines; a field's value is
		# the rest of its line (continuation lines are not used by the
		# fields read here). Type deb only, not deb-src.
		awk -v want="$1" '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " want " ") && uri != "" && enabled != "no")
					{ print uri, (key == "" ? "-" : key); found = 1; exit }
				types = suites = uri = key = enabled = ""
			}
			/^[[:space:]]*#/ { next }
			/^[[:space:]]*$/ { flush(); next }
			{
				f = $1; sub(/:$/, "", f); f = tolower(f)
				v = $0; sub(/^[^:]*:[[:space:]]*/, "", v)
				if (f == "types") types = v
				else if (f == "suites") suites = v
				else if (f == "uris") { uri = v; sub(/ .*/, "", uri) }
				else if (f == "signed-by") key = v
				else if (f == "enabled") enabled = tolower(v)
			}
			END { if (!found) flush() }' "$f"
	done | head -n 1 | grep . && return 0
	# One-line: deb [opts] URI SUITE COMPONENTS...
	cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk -v want="$1" '
			$1 != "deb" { next }
			{
				key = "-"; i = 2
				if ($2 ~ /^\[/) {
					while (i <= NF) {
						if ($i ~ /^\[?signed-by=/) { key = $i; sub(/^\[?signed-by=/, "", key); sub(/\]$/, "", key) }
						if ($i ~ /\]$/) { i++; break }
						i++
					}
				}
				if ($(i + 1) == want) { print $i, key; exit }
			}'
}

bp_init() {
	mkdir -p "$1/lists/partial" "$1/cache/archives/partial"
	BP_DIR=$(cd "$1" && pwd)	# absolute: bp_download runs in another directory
	if [ ! -s "$BP_DIR/sources.list" ]; then
		codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
		[ -n "$codename" ] || bp_die "/etc/os-release names no VERSION_CODENAME: cannot name the backports suite"
		m=$(bp_mirror "$codename")
		[ -n "$m" ] || bp_die "no apt source for '$codename' in /etc/apt/sources.list{,.d/*}: cannot derive the backports mirror; add one, or write $BP_DIR/sources.list by hand"
		uri=${m% *} key=${m#* }
		opt=
		[ "$key" = - ] || opt="[signed-by=$key] "
		echo "deb $opt$uri $codename-backports main" > "$BP_DIR/sources.list"
		echo "vm-backports: using $(cat "$BP_DIR/sources.list") (from the machine's apt source for $codename)" >&2
	fi
	BP_OPTS="-o Dir::Etc::SourceList=$BP_DIR/sources.list -o Dir::Etc::SourceParts=/nonexistent \
-o Dir::State::Lists=$BP_DIR/lists -o Dir::Cache=$BP_DIR/cache -o APT::Sandbox::User=root"
}

# The kernel's and qemu's downloads run at once (mk/vm.mk): apt would
# refuse the second update on its lists lock, so updates queue on a lock
# of ours, and a queued "fetch the lists if missing" finds them there.
bp_update() {
	# shellcheck disable=SC2086 # BP_OPTS is a list of words
	flock "$BP_DIR/update.lock" apt-get -q $BP_OPTS update >&2 ||
		bp_die "apt-get update of $BP_DIR/sources.list failed"
}

# Lists are fetched the first time they are needed (a fresh machine has
# none); a failed download refreshes them once (bp_download).
bp_ready() {
	# shellcheck disable=SC2086
	flock "$BP_DIR/update.lock" sh -c 'd=$1; shift; ls "$d"/lists/*_Packages >/dev/null 2>&1 ||
		apt-get -q "$@" update >&2' sh "$BP_DIR" $BP_OPTS ||
		bp_die "apt-get update of $BP_DIR/sources.list failed"
}

bp_resolve() {
	bp_ready
	# shellcheck disable=SC2086
	apt-cache $BP_OPTS depends "$1" 2>/dev/null | awk '/Depends:/ { print $2; exit }'
}

bp_has() {
	bp_ready
	# shellcheck disable=SC2086
	apt-cache $BP_OPTS show "$1" >/dev/null 2>&1
}

bp_download() {
	_d=$1
	shift
	bp_ready
	# shellcheck disable=SC2086
	(cd "$_d" && apt-get download -q $BP_OPTS "$@") >&2 && return 0
	echo "vm-backports: download failed; refreshing the backports lists and retrying" >&2
	bp_update
	# shellcheck disable=SC2086
	(cd "$_d" && apt-get download -q $BP_OPTS "$@") >&2
}
