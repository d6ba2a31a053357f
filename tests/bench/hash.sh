#!/bin/sh
# tests/bench/hash.sh ROWS_FILE: what `exec.hash: sha256` costs the agent
# per exec record (agent/exec_hash.c), on this host: build/tools/benchhash
# times, interleaved in each round, exec records of /bin/busybox (about
# 2 MB) whose process has exited:
#   format    the record's formatting alone (agent/exec.c), what every
#             exec record costs the agent already: the baseline;
#   cached    the same with the digest from the cache (the program ran
#             before and has not changed: open, fstat, lookup);
#   uncached  the same with the file read and hashed (its first run, or
#             a file that keeps changing).
# Rows: cached vs format and uncached vs format (ratios, same run), and
# the hashing rate (MiB/s) from the uncached records. No goal: the digest
# is opt-in, and the kernel's exec path pays none of it (the agent hashes
# after the record, off the exec). BENCH_TINY=1: 3 rounds, 500 records.
set -u

. tests/bench/lib.sh
bench_init hash "${1:-}"

if bench_tiny; then
	rounds=3 iters=500
else
	rounds=15 iters=20000
fi
[ -x "$TOOLS/benchhash" ] || bench_die "no $TOOLS/benchhash: run make tools"
s=$RAW/samples.txt
"$TOOLS/benchhash" --file /bin/busybox --rounds $rounds --iters $iters > "$s" ||
	bench_die "benchhash failed"
size=$(sed -n 's/^# size \([0-9]*\)$/\1/p' "$s")
[ -n "$size" ] || bench_die "benchhash printed no file size"
bench_ratio "exec record + sha256 (cached) vs record alone" "$s" format cached &&
bench_ratio "exec record + sha256 (file read) vs record alone" "$s" format uncached ||
	bench_die "benchstat ratio failed"
med=$(awk '$2 == "uncached" { print $3 }' "$s" | sort -n |
	awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
mibs=$(awk -v sz="$size" -v m="$med" 'BEGIN { printf "%.0f", sz / 1048576 / (m / 1e9) }')
bench_value "sha256 of an uncached program (busybox, $size bytes)" "$mibs" "MiB/s" ||
	bench_die "benchstat value failed"
