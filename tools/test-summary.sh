#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# tools/test-summary.sh STEPS LOG...: the last lines of a failed make test.
# CI keeps only the end of the output, and the host's failures are printed
# first, before the VM suite's many lines: without this, a failed host
# test leaves nothing in that end but "FAILED (see above)". STEPS names
# the steps that failed; each LOG is searched for the lines that say what
# failed (cmocka, the live and VM tests' own words, sanitizers, the
# compilers' errors, make), at
# most 30 of them, each cut to 300 characters.
steps=$1
shift
echo "make test: FAILED in:$steps; what failed:"
grep -h -E '^not ok |^  FAIL  |\[  FAILED  \]|\[  ERROR   \]|^==[0-9]+== ?ERROR|runtime error: |^SUMMARY: |FAILED|^[^ :]+:[0-9]+(:[0-9]+)?: (fatal )?error: |undefined reference to |^make(\[[0-9]+\])?: \*\*\*' "$@" 2>/dev/null |
	grep -v '^make test: ' | head -n 30 | cut -c 1-300 | sed 's/^/make test:   /'
echo "make test: FAILED in:$steps"
