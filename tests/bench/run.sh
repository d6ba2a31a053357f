#!/bin/sh
# tests/bench/run.sh: `make bench` (README "Performance"). Runs every
# section script of issue 7 that exists, in this order, each appending its
# rows to one file, then prints the table and writes
# build/bench/results.json with `benchstat report`:
#   net     the cgroup socket programs' cost, on this host
#   events  the event pipeline (ring buffer to log), on this host
#   hash    exec.hash: sha256, the agent's cost per exec record, on this host
#   files   the BPF-LSM file programs' cost, in the test VM
#   scale   confinement time, reload latency, memory
# Each section is tests/bench/SECTION.sh ROWS_FILE (sh or bash), run as
# root from the repo top, with the binaries built; it keeps its raw
# samples under build/bench/raw/SECTION/ and exits non-zero when its run
# is invalid or broke. Every section runs even when an earlier one failed
# (the table shows what there is), and this script fails if any failed,
# or if `benchstat report` finds a required check not met.
# BENCH_ONLY="files" (or any of the sections, space-separated) runs only
# those, in the order given: `make bench BENCH_ONLY=files`.
# BENCH_TINY=1 (make bench BENCH_TINY=1, and make test): tiny counts that
# only prove each section still works; no performance goal is judged.
set -u

out=build/bench
rows=$out/rows.jsonl
mkdir -p "$out" || exit 1
rm -f "$rows" "$out/results.json"
: > "$rows"
rc=0
ran=0
for s in ${BENCH_ONLY:-net events hash files scale}; do
	f=tests/bench/$s.sh
	if [ ! -f "$f" ]; then
		# Asked for by name: a typo must not pass as an empty run.
		[ -z "${BENCH_ONLY:-}" ] || { echo "bench: BENCH_ONLY names $s: no $f" >&2; rc=1; }
		continue
	fi
	case $(head -n 1 "$f") in
	*bash*) sh=bash ;;
	*) sh="sh" ;;
	esac
	if [ "${BENCH_TINY:-0}" = 1 ]; then
		echo "== bench $s (tiny)"
	else
		echo "== bench $s"
	fi
	start=$(date +%s)
	if $sh "$f" "$rows"; then
		echo "== bench $s: done in $(($(date +%s) - start)) s"
	else
		echo "== bench $s: FAILED (exit $?): its rows are incomplete, the run is invalid" >&2
		rc=1
	fi
	ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || { echo "bench: no section script in tests/bench" >&2; exit 1; }
echo
build/tools/benchstat report --json "$out/results.json" "$rows" || rc=1
echo "results: $out/results.json; raw samples: $out/raw/"
[ "$rc" = 0 ] || echo "bench: FAILED (see above)" >&2
exit $rc
