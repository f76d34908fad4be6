#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Runs a Boost.Test binary with its whole log on standard output, then, if it failed, repeats
# each failure under the name of the test case it happened in. A CI log that keeps only its head
# and tail would otherwise cut out a failure in the middle of a long run.
#
#   failures_last.sh <test binary> [its arguments...]
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT

"$@" --color_output=no 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if ((status != 0)); then
    echo
    echo "=== $(basename "$1") failed (exit $status); the failures, repeated from above: ==="
    awk '
        /Entering test case/ { test_case = $0; shown = 0; next }
        /Leaving test |Entering test suite/ { next }
        # The largest leaks (LeakSanitizer lists them by size), each with the innermost of our
        # frames that allocated it: the runtime'"'"'s and the standard library'"'"'s say nothing.
        /leak of [0-9]+ byte/ { if (++leaks <= 5) { print "    " $0; ours = 1 } next }
        /^ *#[0-9]+ / {
            if (ours && $0 ~ /\/(src|test|examples|tools)\// && $0 !~ /libsanitizer|\/usr\//) {
                print "        " $0
                ours = 0
            }
            next
        }
        /error: in |fatal error|critical error|exception|[Tt]imeout|aborted|[Ss]anitizer|Segmentation|signal/ {
            if (!shown && test_case != "") { print test_case; shown = 1 }
            print "    " $0
        }' "$log" | tail -n 120
fi
exit "$status"
