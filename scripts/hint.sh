#!/usr/bin/env bash
# A lesson's hints, one at a time, for when you are stuck (make hint LESSON=NN).
#
#   scripts/hint.sh NN             the next hint you have not seen yet, and how many remain
#   scripts/hint.sh NN --tier K    hint K again (one you have seen, or the next one; make: TIER=K)
#   scripts/hint.sh NN --reset     forget which hints you have seen (make: RESET=1)
#   scripts/hint.sh NN --seen      how many you have seen: "K of 3" (make grade prints it)
#
# Each lesson has three, each giving away more than the one before: a nudge, the approach,
# the calls. They live in docs/hints/NN_name.md, out of the lesson's doc, so that reading the
# doc never shows one by accident. Which ones you have seen is kept in build/hints/NN_name
# (make clean forgets it too); make grade prints "hints seen: K of 3" beside the result,
# which is never part of the score.
# Exit status: 0, or 2 on bad input.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh # help_if_asked

[ $# -ge 1 ] && [ -n "$1" ] || { echo "hint: which lesson? (make hint LESSON=NN)" >&2; exit 2; }
help_if_asked "$@"
number=$1
shift
action=next tier=0
while [ $# -gt 0 ]; do
    case $1 in
        --reset) action=reset; shift ;;
        --seen) action=seen; shift ;;
        --tier) action=tier tier=${2:-}; shift $(( $# >= 2 ? 2 : 1 )) ;;
        *) echo "hint: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
lesson=$(scripts/lesson_binary.sh "$number") || exit 2
hints=docs/hints/$lesson.md
[ -f "$hints" ] || { echo "hint: lesson $number has no hints ($hints is missing)" >&2; exit 2; }
total=$(grep -c '^## [0-9]\. ' "$hints")
state_dir=${DTC_HINT_STATE:-build/hints} # the tests keep theirs elsewhere
state=$state_dir/$lesson
seen=0
[ -f "$state" ] && read -r seen <"$state"
[[ $seen =~ ^[0-9]+$ ]] && [ "$seen" -le "$total" ] || seen=0 # a damaged record counts as none seen

# Hint K of the file: its heading, then its text up to the next heading (blank lines at its
# end left out).
show() {
    awk -v k="$1" '/^## [0-9]\. / { inside = ($2 == k ".") }
        inside && /^$/ { blank++; next }
        inside { while (blank > 0) { print ""; blank-- } print }' "$hints"
}

remember() {
    mkdir -p "$state_dir"
    echo "$1" >"$state"
}

case $action in
    seen) echo "$seen of $total"; exit 0 ;;
    reset) rm -f "$state"; echo "hint: lesson $number: no hints seen now (of $total)"; exit 0 ;;
    tier)
        [[ $tier =~ ^[1-9]$ ]] && [ "$tier" -le "$total" ] ||
            { echo "hint: --tier '$tier' is not a hint of lesson $number (1 to $total)" >&2; exit 2; }
        [ "$tier" -le $((seen + 1)) ] ||
            { echo "hint: lesson $number: hint $tier opens after hint $((tier - 1)); you have seen $seen" >&2; exit 2; } ;;
    next)
        if [ "$seen" -ge "$total" ]; then
            echo "hint: lesson $number: you have seen all $total hints (make hint LESSON=$number TIER=K shows hint K" \
                 "again, RESET=1 starts over)"
            exit 0
        fi
        tier=$((seen + 1)) ;;
esac
[ "$tier" -le "$seen" ] || remember "$tier"
echo "lesson $number, hint $tier of $total:"
echo
show "$tier"
echo
left=$((total - (tier > seen ? tier : seen)))
if [ $left -gt 0 ]; then
    echo "($left more: make hint LESSON=$number, after you have tried this one)"
else
    echo "(that was the last one)"
fi
