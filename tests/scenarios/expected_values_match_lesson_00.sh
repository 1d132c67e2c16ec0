#!/usr/bin/env bash
# The graded references of lessons 02-06 (tests/expected/0[2-6]_*/dp_reference_*.csv) say
# the same as lesson 00's (train_reference.csv) within the course's tolerance: loss, grad
# norm and validation loss, step by step. Exit 0 when every one does.
#
#   tests/scenarios/expected_values_match_lesson_00.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
status=0
for expected in tests/expected/0[2-6]_*/dp_reference_*.csv; do
    tests/scenarios/within_tolerance.sh tests/expected/00_single_device/train_reference.csv "$expected" \
        "$expected" || status=1
done
exit $status
