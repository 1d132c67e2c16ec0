#!/usr/bin/env bash
# How long grading a class takes, and what the sandbox costs:
#
#   scripts/bench_grade_class.sh [N] [--jobs J]      (N synthetic submissions, default 50)
#
# Makes N submissions of every lesson, in turn: correct (the reference solutions), one
# lesson replaced by one of the known mutants (tests/mutants/, built by make test), lesson
# 02 with one of the dishonest or broken snippets of tests/class/, and one lesson left as
# its skeleton. Times scripts/grade_class.sh on all of them (J at a time, default the
# cores), then the reference graded by scripts/grade.sh as make grade runs it (no sandbox,
# no build) against one correct submission through scripts/grade_class.sh: the
# per-submission cost of copying, building and sandboxing. Prints the figures; writes
# nothing outside a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh # header_help
count=50 jobs=$(nproc)
while [ $# -gt 0 ]; do
    case $1 in
    --jobs) jobs=${2:?bench_grade_class: --jobs needs a number}; shift 2 ;;
    -h | --help) header_help "$0"; exit 0 ;;
    *) count=$1; shift ;;
    esac
done
[[ $count =~ ^[1-9][0-9]*$ ]] || { echo "bench_grade_class: N must be a positive number" >&2; exit 2; }
ls build/mutants/*/*.src/*.c >/dev/null 2>&1 || { echo "bench_grade_class: no mutants built (make test builds them)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every lesson's reference exercise files, into submission folder $1.
correct() {
    local d
    for d in solutions/*/; do
        mkdir -p "$1/lessons/$(basename "$d")"
        cp "$d"* "$1/lessons/$(basename "$d")/"
    done
}
mapfile -t mutants < <(ls -d build/mutants/*/*.src | sort)
snippets=(copy_answers_at_exit.c link_csv_to_answers.c write_everywhere.c exit_before_training.c crash.c)
mapfile -t lessons < <(ls solutions)
for i in $(seq 0 $((count - 1))); do
    s=$work/class/student_$(printf '%03d' "$i")
    correct "$s"
    case $((i % 4)) in
    1) m=${mutants[$((i / 4 % ${#mutants[@]}))]} lesson=$(basename "$(dirname "$m")")
       cp "$m"/*.c "$s/lessons/$lesson/" ;;
    2) sed "s|@COURSE@|$(pwd)|g; s|@SUBMISSIONS@|$work/class|g" "tests/class/${snippets[$((i / 4 % 5))]}" \
           >>"$s/lessons/02_naive_ddp/naive_ddp.c" ;;
    3) lesson=${lessons[$((i / 4 % ${#lessons[@]}))]}
       rm "$s/lessons/$lesson/"* ;;
    esac
done

seconds() { local start=$SECONDS; "$@" >/dev/null 2>&1; echo $((SECONDS - start)); }
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)
echo "bench_grade_class: $count submissions, lessons 00-10, $jobs at a time, $(nproc) cores ($cpu)"
total=$(seconds scripts/grade_class.sh "$work/class" --out "$work/grades" --jobs "$jobs")
echo "  the class: $total s ($(awk -v t="$total" -v n="$count" 'BEGIN { printf "%.1f", t / n }') s a submission)"
awk -F, 'NR > 1 { n++; total += $(NF - 1) } END { printf "  mean total score %.1f\n", total / n }' "$work/grades/gradebook.csv"

mkdir -p "$work/one"
correct "$work/one/reference"
bare=$(seconds bash -c 'for f in tests/expected/[0-9][0-9]_*.checks; do l=$(basename "$f" .checks)
    scripts/grade.sh "${l%%_*}" "build/solutions/$l"; done')
sandboxed=$(seconds scripts/grade_class.sh "$work/one" --out "$work/one_grades" --jobs 1)
echo "  one correct submission: $bare s graded as make grade does, $sandboxed s through grade_class" \
    "(copy, build and sandbox: $((sandboxed - bare)) s more)"
