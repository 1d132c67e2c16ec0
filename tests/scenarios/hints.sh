#!/usr/bin/env bash
# make hint on lesson 04, as a student asks for hints, with the record of what was seen in a
# folder of its own: prints what each call said, then "STATUS" after it.
#
#   tests/scenarios/hints.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
DTC_HINT_STATE=$(mktemp -d)
export DTC_HINT_STATE
trap 'rm -rf "$DTC_HINT_STATE"' EXIT
ask() { # WHAT ARGS...
    local what=$1
    shift
    echo "== $what"
    scripts/hint.sh "$@" 2>&1
    echo "status $?"
}
ask "first" 04
ask "second" 04
ask "the first again" 04 --tier 1
ask "seen after that" 04 --seen
ask "the fourth, which is not there" 04 --tier 4
ask "third" 04
ask "past the last" 04
ask "reset" 04 --reset
ask "seen after reset" 04 --seen
ask "hint 3 before 1 and 2" 04 --tier 3
ask "no lesson" ""
ask "lesson 99" 99
echo banana >"$DTC_HINT_STATE/04_overlap_ddp"
ask "the damaged record read" 04 --seen
