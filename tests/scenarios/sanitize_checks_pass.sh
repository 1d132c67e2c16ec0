#!/usr/bin/env bash
# Every lesson's sanitize check (the one named in tests/expected/LESSON.checks) graded on the
# solution's sanitizer build: prints each "PASS sanitize" line. Exit 0 when every lesson
# passes, 1 at the first that does not.
#
#   tests/scenarios/sanitize_checks_pass.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
source scripts/check_name.sh
for checks in tests/expected/*.checks; do
    lesson=$(basename "$checks" .checks)
    read -r -a words < <(grep '^sanitize' "$checks")
    CHECK=$(check_name "${words[@]}") scripts/grade.sh "${lesson%%_*}" "build/solutions/$lesson" |
        grep '^PASS sanitize' || exit 1
done
