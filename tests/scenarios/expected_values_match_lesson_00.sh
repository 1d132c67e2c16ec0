#!/usr/bin/env bash
# The graded references of lessons 02-06 (tests/expected/0[2-6]_*/dp_reference_*.csv) say
# the same as lesson 00's within the course's tolerance: loss, grad norm and validation
# loss, step by step. The runs of the reference config's global batch against lesson 00's
# expected values (train_reference.csv); the 3-rank runs of --batch 6 against lesson 00's
# reference trained here on the same batch. Exit 0 when every one does.
#
#   tests/scenarios/expected_values_match_lesson_00.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build/solutions/00_single_device train --config reference --batch 6 --csv "$work/batch_6.csv" >/dev/null || exit 2
status=0
for expected in tests/expected/0[2-6]_*/dp_reference_*.csv; do
    single=tests/expected/00_single_device/train_reference.csv
    case $expected in *_batch_6*) single=$work/batch_6.csv ;; esac
    tests/scenarios/within_tolerance.sh "$single" "$expected" "$expected" || status=1
done
exit $status
