#!/usr/bin/env bash
# Grades a lesson build against the expected values in tests/expected/NN_name/.
#
#   scripts/grade.sh NN [BINARY]     (make grade LESSON=NN)
#
# BINARY defaults to the student build, build/lessons/NN_name. The checks of a lesson are
# listed in tests/expected/NN_name.checks, one per line:
#   train PRESET     `BINARY train --config PRESET`: loss, grad norm and validation loss
#                    per step against expected/NN_name/train_PRESET.csv, within the tolerance
#   estimate PRESET  `BINARY estimate --config PRESET` against estimate_PRESET.csv, exactly
#   ring N           `mpiexec -n N BINARY --verify-ring`: the ring all-reduce, exact sums
#   dp PRESET N [FLAGS...]
#                    `mpiexec -n N BINARY train --config PRESET FLAGS`: the run must end with
#                    identical parameters on every rank; loss, grad norm and validation loss
#                    per step within the tolerance, and the bytes communicated per step
#                    exactly, against expected/NN_name/dp_PRESET_nN[_FLAGS].csv
# Prints PASS/FAIL per check; exits non-zero if any check fails.
set -uo pipefail
cd "$(dirname "$0")/.."
source tests/tolerance.sh
source scripts/check_name.sh

number=${1:-}
if [ -z "$number" ]; then
    echo "grade: which lesson? usage: make grade LESSON=NN" >&2
    exit 2
fi
lesson=$(scripts/lesson_binary.sh "$number") || exit 2
binary=${2:-build/lessons/$lesson}
expected_dir=tests/expected/$lesson
checks_file=tests/expected/$lesson.checks
[ -x "$binary" ] || { echo "grade: $binary is not built (run make)" >&2; exit 2; }
[ -f "$checks_file" ] || { echo "grade: no checks listed in $checks_file" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
checks=0

run_check() {
    local mode=$1 preset=$2 name expected actual
    name=$(check_name "$@")
    expected=$expected_dir/$name.csv
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
    ring)
        timeout 300 mpiexec -n "$preset" "$binary" --verify-ring ;;
    dp)
        local ranks=$3
        shift 3
        local status=0
        if ! timeout "${GRADE_TIMEOUT:-300}" mpiexec -n "$ranks" "$binary" train --config "$preset" "$@" \
            --step-timeout "${GRADE_STEP_TIMEOUT:-60}" --csv "$actual" >"$work/$name.log" 2>&1; then
            echo "FAIL $name: the lesson exited with an error:"; tail -n 3 "$work/$name.log"
            # the figures of a run that got to the end still say where it went wrong
            [ -s "$actual" ] || return 1
            status=1
        fi
        build/tools/compare_runs "$expected" "$actual" --label "$name" \
            --columns loss,grad_norm,val_loss --rtol "$LOSS_RTOL" --atol "$LOSS_ATOL" || status=1
        build/tools/compare_runs "$expected" "$actual" --label "$name" --columns comm_bytes --rtol 0 --atol 0 ||
            status=1
        return $status ;;
    *)
        echo "grade: don't know how to check '$mode' ($checks_file)" >&2; return 1 ;;
    esac
}

echo "grading $binary (BLAS core type: ${OPENBLAS_CORETYPE:-auto})"
while read -r -a words; do
    [ "${#words[@]}" -eq 0 ] && continue
    run_check "${words[@]}" </dev/null || failures=$((failures + 1))
done <"$checks_file"
if [ "$failures" -eq 0 ]; then
    echo "lesson $number: PASS ($checks checks)"
else
    echo "lesson $number: FAIL ($failures of $checks checks failed)"
    exit 1
fi
