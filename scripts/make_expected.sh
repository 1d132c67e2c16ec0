#!/usr/bin/env bash
# Regenerates a lesson's expected values from its reference solution build. The only way
# files under tests/expected/ are made; review the diff and say in the commit why they moved.
#
#   scripts/make_expected.sh NN
set -euo pipefail
cd "$(dirname "$0")/.."
lesson=$(scripts/lesson_binary.sh "${1:?usage: make_expected.sh NN}")
binary=build/solutions/$lesson
out=tests/expected/$lesson
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Which checks a lesson has is listed in its grading spec; the presets come from common/.
while read -r mode preset; do
    [ -z "$mode" ] && continue
    case $mode in
    train)
        mkdir -p "$out"
        "$binary" train --config "$preset" --csv "$work/run.csv" >/dev/null
        # timings differ run to run; keep only what is graded
        cut -d, -f1,2,3,4,7 "$work/run.csv" >"$out/train_$preset.csv" ;;
    estimate)
        mkdir -p "$out"
        "$binary" estimate --config "$preset" >"$out/estimate_$preset.csv" ;;
    *)
        continue ;; # checks without stored values (e.g. ring) compare against exact sums
    esac
    echo "wrote $out/${mode}_$preset.csv"
done <"tests/expected/$lesson.checks"
