#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# deploy/kubernetes/ validated offline (make k8s-test, part of make test):
#   1. every manifest there is valid against the Kubernetes API schemas,
#      unknown fields refused (tests/k8s/validate.mjs);
#   2. the policy ConfigMap's files pass `stockade check`;
#   3. the check can fail: each manifest under tests/k8s/bad/ is refused
#      with the message its `# expect:` lines name, and so is the real
#      DaemonSet with one field misspelt (mountPropagation).
#
# Environment: STOCKADE (binary), K8S_MODULES (where `make k8s-test`
# installed tests/k8s/package.json: build/k8s).
set -u

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
STOCKADE=${STOCKADE:-$src/stockade}
K8S_MODULES=${K8S_MODULES:-$src/build/k8s}
validate() { node "$here/validate.mjs" "$K8S_MODULES" "$@"; }

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok $1: $2"; }

work=$(mktemp -d /tmp/stockade-k8s.XXXXXX)
trap 'rm -rf "$work"' EXIT

# ---- 1. the manifests ----
mkdir "$work/policy"
for f in "$src"/deploy/kubernetes/*.yaml; do
	if validate --configmap-out "$work/policy" "$f" > "$work/out" 2>&1; then
		ok "$(sed 's/^ok *//' "$work/out" | tr '\n' ' ')"
	else
		not_ok "${f#"$src"/}" "$(tr '\n' ' ' < "$work/out")"
	fi
done

# ---- 2. the ConfigMap's policy ----
if [ -n "$(ls "$work/policy")" ] &&
   "$STOCKADE" check "$work/policy" > "$work/check" 2>&1; then
	ok "policy ConfigMap: stockade check accepts $(ls "$work/policy" | tr '\n' ' ')"
else
	not_ok "policy ConfigMap: stockade check" "$(ls "$work/policy" | tr '\n' ' '): $(tr '\n' ' ' < "$work/check" 2>/dev/null)"
fi

# ---- 3. bad manifests are refused, for the expected reason ----
# refused NAME FILE EXPECT...: validate exits 1 and prints each EXPECT.
refused() {
	name=$1
	file=$2
	shift 2
	if validate "$file" > "$work/out" 2>&1; then
		not_ok "$name refused" "accepted: $(tr '\n' ' ' < "$work/out")"
		return
	fi
	for e in "$@"; do
		if ! grep -qF -- "$e" "$work/out"; then
			not_ok "$name refused" "without '$e': $(tr '\n' ' ' < "$work/out")"
			return
		fi
	done
	ok "$name refused: $*"
}
for f in "$here"/bad/*.yaml; do
	# One argument per `# expect:` line.
	set --
	while IFS= read -r e; do set -- "$@" "$e"; done <<EOT
$(sed -n 's/^# expect: //p' "$f")
EOT
	refused "bad/${f##*/}" "$f" "$@"
done
sed 's/mountPropagation: Bidirectional/mountPropagaton: Bidirectional/' \
	"$src/deploy/kubernetes/daemonset.yaml" > "$work/typo.yaml"
refused "daemonset.yaml with mountPropagaton" "$work/typo.yaml" \
	".spec.template.spec.containers[0].volumeMounts[4].mountPropagaton: unknown field"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
