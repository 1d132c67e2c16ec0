#!/usr/bin/env bash
# Grades a lesson build against the expected values in tests/expected/NN_name/.
#
#   scripts/grade.sh NN [BINARY]     (make grade LESSON=NN)
#
# BINARY defaults to the student build, build/lessons/NN_name. Each expected file names
# its check: MODE_PRESET.csv is compared with the output of `BINARY MODE --config PRESET`:
#   train_*.csv     loss, grad norm and validation loss per step, within the tolerance
#   estimate_*.csv  the memory estimator's byte counts, exactly
# Prints PASS/FAIL per check; exits non-zero if any check fails.
set -uo pipefail
cd "$(dirname "$0")/.."
source tests/tolerance.sh

number=${1:-}
if [ -z "$number" ]; then
    echo "grade: which lesson? usage: make grade LESSON=NN" >&2
    exit 2
fi
lesson=$(scripts/lesson_binary.sh "$number") || exit 2
binary=${2:-build/lessons/$lesson}
expected_dir=tests/expected/$lesson
[ -x "$binary" ] || { echo "grade: $binary is not built (run make)" >&2; exit 2; }
[ -d "$expected_dir" ] || { echo "grade: no expected values in $expected_dir" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
checks=0

run_check() {
    local expected=$1 name mode preset actual
    name=$(basename "$expected" .csv)
    mode=${name%%_*}
    preset=${name#*_}
    actual=$work/$name.csv
    checks=$((checks + 1))
    case $mode in
    train)
        if ! "$binary" train --config "$preset" --csv "$actual" >"$work/$name.log" 2>&1; then
            echo "FAIL $name: the lesson exited with an error:"; tail -n 3 "$work/$name.log"
            return 1
        fi
        build/tools/compare_runs "$expected" "$actual" --label "$name" \
            --columns loss,grad_norm,val_loss --rtol "$LOSS_RTOL" --atol "$LOSS_ATOL" ;;
    estimate)
        "$binary" estimate --config "$preset" >"$actual" 2>"$work/$name.log" ||
            { echo "FAIL $name: the lesson exited with an error"; return 1; }
        build/tools/compare_runs "$expected" "$actual" --label "$name" --columns bytes --rtol 0 --atol 0 ;;
    *)
        echo "grade: don't know how to check $expected" >&2; return 1 ;;
    esac
}

echo "grading $binary (BLAS core type: ${OPENBLAS_CORETYPE:-auto})"
for expected in "$expected_dir"/*.csv; do
    run_check "$expected" || failures=$((failures + 1))
done
if [ "$failures" -eq 0 ]; then
    echo "lesson $number: PASS ($checks checks)"
else
    echo "lesson $number: FAIL ($failures of $checks checks failed)"
    exit 1
fi
